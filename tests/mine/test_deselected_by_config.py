"""ops61: a repository whose configuration selects tests (``addopts = -m 'not slow'``) and a commit whose new test is
marked ``slow``: no run ever sees it, and the drop read only "no test failed in 1 parent run: no test ran" (as if
the tests passed without the change). Its detail now names the configuration's selection. A task keeps only ids a
run saw: a deselected test is never in FAIL_TO_PASS."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.redgreen import (
    DESELECTED,
    LEFT_OUT_DESELECTED,
    Verification,
    deselected_note,
    selecting_words,
    verify_candidate,
)
from pytest_homefield.mine.summary import deselected_line
from pytest_homefield.sandbox.outcomes import parse_events
from pytest_homefield.sandbox.pytest_config import Setup

_PARENT_TEST = "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _verified(tmp_path: Path, new_test: str, *, parent_test: str = _PARENT_TEST, xdist: str = "") -> Verification:
    """:func:`verify_candidate` (real pytest runs, one a side) of a commit adding ``triple`` to ``pkg`` and
    ``tests/test_triple.py`` (``new_test``), in a repository whose configuration says ``addopts = {xdist}-m 'not
    slow'`` (``xdist``: ``""`` or ``"-n 2 "``, xdist then left loaded) and whose parent has ``double`` and
    ``tests/test_pkg.py`` (``parent_test``)."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", f"[tool.pytest.ini_options]\naddopts = \"{xdist}-m 'not slow'\"\n"
                                 "markers = [\"slow: slow\"]\n")
    repo.write("pkg/__init__.py", "def double(x):\n    return x * 2\n")
    repo.write("tests/test_pkg.py", parent_test)
    parent = repo.commit("Start the package with double")
    repo.write("pkg/__init__.py", "def double(x):\n    return x * 2\n\n\ndef triple(x):\n    return x * 3\n")
    repo.write("tests/test_triple.py", new_test)
    commit = repo.commit("Add triple, three times a number")
    tests = ["tests/test_triple.py"]
    plugins = NO_PLUGINS.replace("-p no:xdist -p no:xdist.looponfail ", "") if xdist else NO_PLUGINS
    return verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                            test_cmd=f"{shlex.quote(sys.executable)} -m pytest {plugins}", setup_cmd=None,
                            stability_runs=1, run_timeout_s=120)


def test_selecting_words_reads_addopts_and_the_command() -> None:
    setup = Setup(config="pyproject.toml", rootdir=".", leaves=False, addopts=("-q", "-m", "not slow", "-kfoo"))
    assert selecting_words(setup, "python -m pytest --deselect=tests/a.py::t -x") == [
        "-m", "not slow", "-kfoo", "--deselect=tests/a.py::t"]
    assert selecting_words(Setup(config=None, rootdir=".", leaves=False, addopts=("-q", "--maxfail=1")),
                           "python -m pytest -p no:cacheprovider") == []


@pytest.mark.slow
def test_a_commit_whose_tests_the_configuration_deselects_says_so(tmp_path: Path) -> None:
    """Real pytest runs; about 5 s."""
    v = _verified(tmp_path, "import pytest\n\nimport pkg\n\n\n@pytest.mark.slow\ndef test_triple():\n"
                            "    assert pkg.triple(2) == 6\n")
    assert v.reason == "passes_without_change" and v.FAIL_TO_PASS == [], v
    assert v.detail.endswith(f"{DESELECTED}-m 'not slow'): the commit's tests it deselects never run when mined, "
                             "so they make no task"), v.detail


def test_the_reporters_deselected_lines_are_read_and_not_kept() -> None:
    lines = [{"event": "start", "pid": 7}, {"event": "collected", "count": 1, "pid": 7},
             {"event": "collected_ids", "ids": ["t.py::a"], "pid": 7},
             {"event": "deselected", "ids": ["t.py::b", "t.py::c"], "pid": 7},
             {"event": "deselected", "ids": ["t.py::b", 3], "pid": 7},  # not the reporter's: not counted
             {"event": "finish", "exitstatus": 0, "pid": 7}]
    parsed, kept = parse_events("".join(json.dumps(e) + "\n" for e in lines))
    assert parsed.deselected == ["t.py::b", "t.py::c"] and parsed.ignored == 1
    assert not any("deselected" in line for line in kept)
    assert deselected_note(["a::x", "a::y", "a::z", "a::w"], ["-m", "not slow"]) == (
        f"{LEFT_OUT_DESELECTED} (-m 'not slow'): 4 tests of the commit's test files, a::x, a::y, a::z …")


@pytest.mark.slow
@pytest.mark.parametrize("xdist", ["", "-n 2 "], ids=["plain", "xdist-in-addopts"])
def test_a_commit_whose_tests_the_configuration_deselects_in_part_says_which(tmp_path: Path, xdist: str) -> None:
    """bld62: a commit adding two tests, one marked ``slow`` under ``addopts = -m 'not slow'``: the task kept the
    other, and the slow one was in no list of the task, nor its detail (before: ``excluded`` ``{}``, the detail
    ``FAIL_TO_PASS 1, PASS_TO_PASS 0, excluded 0``). Now it is excluded as ``deselected`` and the detail names it.
    ops64: the same with ``-n 2`` in ``addopts`` (xdist's workers deselect, and the reporter, in the controller,
    heard of none: ``excluded`` ``{}`` again); the workers now send their deselected ids to it.
    Real pytest runs; about 10 s, 20 s with xdist."""
    v = _verified(tmp_path, "import pytest\n\nimport pkg\n\n\ndef test_triple():\n    assert pkg.triple(2) == 6\n\n\n"
                            "@pytest.mark.slow\ndef test_triple_big():\n    assert pkg.triple(10**6) == 3 * 10**6\n",
                  parent_test="import pytest\n\nfrom pkg import double\n\n\ndef test_double():\n"
                              "    assert double(2) == 4\n\n\n@pytest.mark.slow\ndef test_double_big():\n"
                              "    assert double(10**6) == 2 * 10**6\n", xdist=xdist)
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_triple.py::test_triple"], v
    assert v.excluded == {"tests/test_triple.py::test_triple_big": "deselected"}, v.excluded
    assert v.detail.endswith(f"{LEFT_OUT_DESELECTED} (-m 'not slow'): 1 test of the commit's test files, "
                             "tests/test_triple.py::test_triple_big"), v.detail
    assert deselected_line([{"reason": v.reason, "detail": v.detail, "excluded": v.excluded}]) == (
        "Deselected: 1 task leaves out 1 test of its commit's test files that the repository's configuration deselects "
        "(-m/-k/--deselect): such tests never run when mined (homefield tasks names a task's)")


def test_the_summary_counts_the_deselected_tests_of_tasks_and_drops() -> None:
    kept = {"reason": None, "detail": "", "excluded": {"a::x": "deselected", "a::y": "deselected", "a::z": "flaky"}}
    dropped = {"reason": "passes_without_change", "detail": f"no test ran{DESELECTED}-m slow): ..."}
    assert deselected_line([kept, kept, dropped]) == (
        "Deselected: 2 tasks leave out 4 tests of their commits' test files that the repository's configuration "
        "deselects (-m/-k/--deselect); 1 candidate made no task for it: such tests never run when mined (homefield "
        "tasks names a task's)")
    assert deselected_line([dropped]) == (
        "Deselected: 1 candidate made no task: the repository's configuration deselects its commit's tests "
        "(-m/-k/--deselect): such tests never run when mined")
    assert deselected_line([{**kept, "excluded": {"a::z": "flaky"}}]) is None


@pytest.mark.slow
def test_a_deselected_test_beside_a_stubbed_one_keeps_both_notes(tmp_path: Path) -> None:
    """mendc63: a commit's test red only for a missing name (passes in the stubbed parent run: ``passes_with_stub``)
    beside one the configuration deselects: bld62's note rewrote the detail from the counts, and the stubbed test's
    note (``1 red only for a missing name …``) was lost. Both are said now. Real pytest runs; about 10 s."""
    v = _verified(tmp_path, "import pytest\n\nfrom pkg import triple\n\n\ndef test_triple():\n"
                            "    assert triple(2) == 6\n\n\ndef test_triple_named():\n    assert callable(triple)\n\n\n"
                            "@pytest.mark.slow\ndef test_triple_big():\n    assert triple(10**6) == 3 * 10**6\n")
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_triple.py::test_triple"], v
    assert v.excluded == {"tests/test_triple.py::test_triple_named": "passes_with_stub",
                          "tests/test_triple.py::test_triple_big": "deselected"}, v.excluded
    assert v.detail == ("FAIL_TO_PASS 1, PASS_TO_PASS 0, excluded 2 (1 red by import error at the parent); 1 red "
                        "only for a missing name (passed at the parent with every one a dummy)"
                        f"{LEFT_OUT_DESELECTED} (-m 'not slow'): 1 test of the commit's test files, "
                        "tests/test_triple.py::test_triple_big"), v.detail
