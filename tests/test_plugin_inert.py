"""The plugin is inert without a mode option: plain pytest behaves exactly as before."""

from __future__ import annotations

import pytest


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(
        test_a="""
        def test_ok():
            assert 1

        def test_fail():
            assert 0
        """
    )
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(optionalhook=True)
        def pytest_homefield_agents(config):
            raise AssertionError("must not be called without --homefield")
        """
    )
    return pytester


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "n2"])
def test_plain_pytest_unchanged(project: pytest.Pytester, xdist: list[str]) -> None:
    result = project.runpytest_subprocess(*xdist)
    result.assert_outcomes(passed=1, failed=1)
    # only pytest's "plugins:" header line may name it
    assert not [line for line in result.outlines if "homefield" in line and not line.startswith("plugins:")]


def test_plugin_disabled_gives_same_outcome(project: pytest.Pytester) -> None:
    with_plugin = project.runpytest_subprocess()
    without = project.runpytest_subprocess("-p", "no:homefield")
    assert with_plugin.parseoutcomes() == without.parseoutcomes()
    assert with_plugin.ret == without.ret


def test_options_are_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--homefield-mine*", "*--homefield-agent*", "*--homefield-fail-under*"])
    assert "--timeout " not in result.stdout.str().split("pytest-homefield")[1].split("\n\n")[0]


def test_hookspecs_registered_without_mode(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("def pytest_homefield_agents(config):\n    return []\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
