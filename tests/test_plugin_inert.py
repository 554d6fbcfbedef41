"""The plugin is inert without a mode option: plain pytest behaves exactly as before.

The inner pytest processes run with this machine's unused third-party plugins blocked
(``lean_pytester``): what is compared is pytest with and without homefield."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_homefield import plugin


@pytest.fixture
def project(lean_pytester: pytest.Pytester) -> pytest.Pytester:
    lean_pytester.makepyfile(
        test_a="""
        def test_ok():
            assert 1

        def test_fail():
            assert 0
        """
    )
    lean_pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(optionalhook=True)
        def pytest_homefield_agents(config):
            raise AssertionError("must not be called without --homefield")
        """
    )
    return lean_pytester


def assert_plain(result: pytest.RunResult) -> None:
    result.assert_outcomes(passed=1, failed=1)
    # only pytest's "plugins:" header line may name it
    assert not [line for line in result.outlines if "homefield" in line and not line.startswith("plugins:")]


def test_plain_pytest_unchanged_and_same_with_plugin_disabled(project: pytest.Pytester) -> None:
    with_plugin = project.runpytest_subprocess()
    assert_plain(with_plugin)
    without = project.runpytest_subprocess("-p", "no:homefield")
    assert with_plugin.parseoutcomes() == without.parseoutcomes()
    assert with_plugin.ret == without.ret


def test_plain_pytest_unchanged_under_xdist(project: pytest.Pytester) -> None:
    assert_plain(project.runpytest_subprocess("-n", "2"))


def test_options_are_registered(lean_pytester: pytest.Pytester) -> None:
    result = lean_pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--homefield-mine*", "*--homefield-agent*", "*--homefield-fail-under*"])
    assert "--timeout " not in result.stdout.str().split("pytest-homefield")[1].split("\n\n")[0]


def test_hookspecs_registered_without_mode(lean_pytester: pytest.Pytester) -> None:
    lean_pytester.makeconftest("def pytest_homefield_agents(config):\n    return []\n")
    lean_pytester.makepyfile("def test_x():\n    pass\n")
    lean_pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_only_a_mode_session_freezes_what_it_imported() -> None:
    """``pytest_sessionfinish`` moves the session's objects out of the collector's reach (``gc.freeze``)
    in a homefield mode only; plain pytest's garbage collection is left as it was."""
    def session(*registered: str) -> Any:
        manager = SimpleNamespace(has_plugin=lambda name: name in registered)
        return SimpleNamespace(config=SimpleNamespace(pluginmanager=manager))

    gc.unfreeze()
    try:
        plugin.pytest_sessionfinish(session())
        assert gc.get_freeze_count() == 0
        plugin.pytest_sessionfinish(session("homefield-mode"))
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_only_local_workers_get_the_controllers_copies() -> None:
    """XdistHooks hands the copies found by content (sandbox.copies_by_content) to a worker on this machine
    (``popen``), never to one elsewhere (ssh: another file system, which its own walk searches)."""
    import execnet

    from pytest_homefield.plugin import XdistHooks

    class Mode:
        def workerinput(self) -> dict[str, object]:
            return {"homefield_x": 1}

    class Node:
        def __init__(self, spec: str) -> None:
            self.gateway = type("Gateway", (), {"spec": execnet.XSpec(spec)})()
            self.workerinput: dict[str, object] = {}

    hooks = XdistHooks(Mode())
    local, remote, via = Node("popen"), Node("ssh=example.org//python=python3"), Node("popen//via=gw0")
    for node in (local, remote, via):
        hooks.pytest_configure_node(node)
    assert isinstance(local.workerinput["homefield_copies"], list) and local.workerinput["homefield_x"] == 1
    assert "homefield_copies" not in remote.workerinput and "homefield_copies" not in via.workerinput
