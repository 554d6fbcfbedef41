"""The plugin is inert without a mode option: plain pytest behaves exactly as before.

The inner pytest processes run with this machine's unused third-party plugins blocked
(``lean_pytester``): what is compared is pytest with and without homefield."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import pytest_homefield
from pytest_homefield import plugin

#: What a plain pytest run must not import (issue lazy29): the pipeline's packages (and the settings
#: resolution, which imports the agents' and the sandbox's parsers), and the heavy third-party ones.
HEAVY_PACKAGES = ("pytest_homefield.agents", "pytest_homefield.sandbox", "pytest_homefield.mine",
                  "pytest_homefield.run", "pytest_homefield.report", "pytest_homefield.probe",
                  "pytest_homefield.ablate", "pytest_homefield.envs", "pytest_homefield.export",
                  "pytest_homefield.view", "pytest_homefield.commands", "pytest_homefield.terminal",
                  "scipy", "numpy", "yaml", "git")
HEAVY_MODULES = ("pytest_homefield.settings", "pytest_homefield.transport")


def heavy(modules: list[str]) -> list[str]:
    """The names of ``modules`` that are (or lie inside) :data:`HEAVY_PACKAGES`, or are :data:`HEAVY_MODULES`."""
    return sorted(m for m in modules
                  if m in HEAVY_MODULES or any(m == p or m.startswith(p + ".") for p in HEAVY_PACKAGES))


def _source_env() -> dict[str, str]:
    """This process's environment with the package under test first on ``PYTHONPATH`` (it, not an
    installed copy, is what the child imports)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(pytest_homefield.__file__).parent.parent),
                                         *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


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


@pytest.mark.slow
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

    hooks = XdistHooks(Mode(), 1536.0)
    local, remote, via = Node("popen"), Node("ssh=example.org//python=python3"), Node("popen//via=gw0")
    for node in (local, remote, via):
        hooks.pytest_configure_node(node)
    assert isinstance(local.workerinput["homefield_copies"], list) and local.workerinput["homefield_x"] == 1
    assert "homefield_copies" not in remote.workerinput and "homefield_copies" not in via.workerinput
    # and the largest set of sandboxes at once it found (mend60A): a local worker reads no task's plan again
    assert local.workerinput["homefield_largest_mb"] == 1536.0
    assert "homefield_largest_mb" not in remote.workerinput and "homefield_largest_mb" not in via.workerinput


#: The child of :func:`test_entry_point_and_option_registration_import_nothing_heavy`: pytest's own config
#: (no plugin autoloading), the ``pytest11: homefield`` entry point loaded the way pytest loads it
#: (``importlib.metadata``) and registered (``pytest_addoption`` being a historic hook, that calls its
#: ``pytest_addoption`` on pytest's parser), its ``pytest_addhooks`` called as pytest does, then an argv
#: with its options parsed.
_REGISTER = """
import json, sys
from importlib.metadata import entry_points
from _pytest.config import get_config

config = get_config()
(ep,) = [e for e in entry_points(group="pytest11") if e.name == "homefield"]
config.pluginmanager.register(ep.load(), "homefield")
config.hook.pytest_addhooks.call_historic(kwargs={"pluginmanager": config.pluginmanager})  # as Config._preparse
ns, _ = config._parser.parse_known_and_unknown_args(["--homefield-attempts", "2", "--homefield-agent", "noop"])
assert ns.homefield_attempts == 2 and ns.homefield_agent == ["noop"], ns
assert hasattr(config.hook, "pytest_homefield_agents")
print(json.dumps(sorted(sys.modules)))
"""


def test_entry_point_and_option_registration_import_nothing_heavy() -> None:
    """What every pytest run of the environment pays for the plugin (issue lazy29): its entry point's import
    and option registration pull in the option table and the hookspecs, never an agent, a sandbox, a stage,
    the report, the settings resolution, scipy, yaml or git."""
    proc = subprocess.run([sys.executable, "-c", _REGISTER], capture_output=True, text=True, timeout=120,
                          env={**_source_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert "pytest_homefield.plugin" in loaded
    assert heavy(loaded) == []
    assert "pytest_homefield.settings_table" in loaded


#: A conftest that writes the names of the modules imported by the end of the session to ``modules.json``.
_DUMP_MODULES = """
import json, sys

def pytest_unconfigure(config):
    (config.rootpath / "modules.json").write_text(json.dumps(sorted(sys.modules)))
"""


def _plain(repo: Path, *args: str) -> tuple[list[str], int, list[str]]:
    """``python -m pytest`` in ``repo`` (pytest-randomly off: the same order every time): its output lines
    without what differs between any two runs (durations, pytest's ``plugins:`` header line), its exit
    code and the modules it imported (``modules.json``, :data:`_DUMP_MODULES`)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", *args], cwd=repo,
                          capture_output=True, text=True, timeout=120, env=_source_env())
    lines = [re.sub(r" in [0-9.]+s( \([0-9:]+\))?", " in Ns", line) for line in proc.stdout.splitlines()
             if not line.startswith("plugins:")]
    return lines, proc.returncode, json.loads((repo / "modules.json").read_text())


@pytest.mark.slow
def test_plain_pytest_in_a_repository_prints_the_same_and_imports_nothing_heavy(tmp_path: Path) -> None:
    """Plain ``pytest`` in a git repository with the plugin installed prints what it prints with
    ``-p no:homefield``, line for line, exits the same, and imports none of :data:`HEAVY_PACKAGES`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "conftest.py").write_text(_DUMP_MODULES)
    (repo / "test_a.py").write_text("def test_ok():\n    assert 1\n\n\ndef test_fail():\n    assert 0\n")
    for args in ((), ("-q",)):
        with_plugin, rc, loaded = _plain(repo, *args)
        without, rc_without, _ = _plain(repo, *args, "-p", "no:homefield")
        assert with_plugin == without and rc == rc_without == 1
        assert any("1 failed, 1 passed in Ns" in line for line in with_plugin)
        assert "pytest_homefield.plugin" in loaded and heavy(loaded) == []
