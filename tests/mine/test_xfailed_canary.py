"""A canary instance the test body marks ``xfail`` (lbl35; nu35 on hukkin/tomli-w a1ccdb7821de "Name as
Tomli-W"): ``test_valid`` calls ``pytest.xfail`` on two of its rows before any assertion, so those rows are
``xfailed`` at the parent and at the commit (excluded as skipped, no FAIL_TO_PASS id) and in every twin of the
function too. Such an instance counts for nothing, as a skipped one does (docs/contracts.md §7): the candidate
is a task. Before, the twin and then its sentinel were "not failing", and the candidate was dropped as
``reference_passes_canary`` with the untrue detail that the canary "did not run"."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.canary_check import check_twins
from pytest_homefield.mine.redgreen import verify_candidate
from pytest_homefield.sandbox.canaries import Canary, CanaryPlan, Group
from pytest_homefield.sandbox.testrun import TestRun

TEST = '''import pytest

import {pkg}

ROWS = [("a", "A"), ("b", "B"), ("deep", "DEEP")]


@pytest.mark.parametrize("text, expected", ROWS, ids=[r[0] for r in ROWS])
def test_shout(text, expected):
    if text == "deep":
        pytest.xfail("This much recursion is not supported")
    assert {pkg}.shout(text) == expected
'''


@pytest.mark.slow
def test_a_row_the_body_xfails_does_not_drop_a_renamed_package(tmp_path: Path) -> None:
    """The package is renamed (its tests red at the parent only by an import error, as tomli_dumps →
    tomli_w): kept, its two real rows FAIL_TO_PASS, the xfailed row excluded as skipped, canaries checked."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("old_name/__init__.py", "def shout(text):\n    return text.upper()\n")
    repo.write("tests/test_shout.py", TEST.format(pkg="old_name"))
    parent = repo.commit("Start the package with shout")
    repo.rm("old_name/__init__.py")
    repo.write("new_name/__init__.py", "def shout(text):\n    return text.upper()\n")
    repo.write("tests/test_shout.py", TEST.format(pkg="new_name"))
    commit = repo.commit("Name the package new_name")
    tests = ["tests/test_shout.py"]
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=2, log_dir=tmp_path / "logs")
    assert v.reason is None, (v.reason, v.detail)
    assert v.FAIL_TO_PASS == ["tests/test_shout.py::test_shout[a]", "tests/test_shout.py::test_shout[b]"], v
    assert v.excluded == {"tests/test_shout.py::test_shout[deep]": "skipped"}, v
    assert v.canaries, v


def _run(outcomes: dict[str, str]) -> TestRun:
    return TestRun(outcomes=outcomes, exit_code=1, timed_out=False, collection_error=False, collected=len(outcomes),
                   wall_s=1.0, log_path=Path("/dev/null"), finished=True)


def test_an_xfailed_instance_where_the_original_is_fail_to_pass_does_not_hold() -> None:
    """Only an xfail the original shares is excused: a twin instance xfailed where its original's instance is a
    FAIL_TO_PASS id guards nothing, and the detail says so (it ran: it was xfailed, not "did not run")."""
    plan = CanaryPlan(seed=1, canaries=[Canary("t.py::test_a@twin1", "t.py::test_a", "sentinel", "k")],
                      groups=[Group("t.py::test_a", ("t.py::test_a@twin1",), 0)])
    f2p = ["t.py::test_a[1]", "t.py::test_a[2]"]
    outcomes = {**dict.fromkeys(f2p, "passed"), "t.py::test_a@twin1[1]": "failed", "t.py::test_a@twin1[2]": "xfailed"}
    check = check_twins(f2p, lambda forced, k: (_run(outcomes), plan))
    assert not isinstance(check, str)
    assert check.reason == "reference_passes_canary"
    assert check.detail == ("canary t.py::test_a@twin1 (sentinel of t.py::test_a) did not fail: "
                            "t.py::test_a@twin1[2] was xfailed")
