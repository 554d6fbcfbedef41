"""r26 (nu31/rows31 on python-humanize/humanize, task 1399e049734b): a commit adds an assertion to the body of a
parametrized test, and only some of its rows go red on the parent; the others are PASS_TO_PASS (open, contracts §7).

Every twin of such a function changes what its PASS_TO_PASS rows check (the new assertion runs on every row), so
the planner gives it a sentinel and lists it ``unprotected`` (``canary_rows.NOT_ROWS``); a twin of the red rows
alone would have fewer rows than the original, which a test process can count. With no fix, ``read-expected`` (the
source returns the value the calling test asserts) then passes the red rows and is ``solved``: on humanize's
17 tasks, read-expected, read-expected-aware and twin-name-oracle were solved on this task alone (r26, 455 s).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import FixTask
from helpers.gitrepo import GitRepo

from pytest_homefield.agents.attack_payloads import READ_EXPECTED
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree, make_snapshot

SOURCE = "src/doubles/__init__.py"
TEST = "tests/test_doubles.py"
#: Digits as text are doubled as numbers already; a sign is not: only the ``-1`` row is red on the parent.
PARENT = ("def double(x):\n"
          "    if isinstance(x, str) and x.isdigit():\n"
          "        x = int(x)\n"
          "    return x * 2\n")
FIXED = "def double(x):\n    return int(x) * 2\n"
#: The parent's test; the commit adds the second assertion (humanize: ``naturaldelta(seconds, …) == expected``).
TESTS_BEFORE = ("import pytest\n\nfrom doubles import double\n\n\n"
                "@pytest.mark.parametrize(\"n, expected\", [(1, 2), (2, 4), (3, 6), (-1, -2)])\n"
                "def test_double(n, expected):\n"
                "    assert double(n) == expected\n")
TESTS = TESTS_BEFORE + "    assert double(str(n)) == expected\n"
F2P = ["tests/test_doubles.py::test_double[-1--2]"]
P2P = ["tests/test_doubles.py::test_double[1-2]", "tests/test_doubles.py::test_double[2-4]",
       "tests/test_doubles.py::test_double[3-6]"]


def _build(dest: Path) -> FixTask:
    """Commit 1: the source as :data:`PARENT` and the test with one assertion; commit 2 fixes the source and adds
    the second assertion (as humanize's 1399e049734b). The task and the parent's snapshot."""
    repo = GitRepo.init(dest / "repo")
    project = '[project]\nname = "doubles"\nversion = "0"\n'
    for rel, text in {SOURCE: PARENT, TEST: TESTS_BEFORE, "pyproject.toml": project}.items():
        repo.write(rel, text)
    c1 = repo.commit("doubles", committer_date="2026-01-01T12:00:00+00:00")
    repo.write(SOURCE, FIXED)
    repo.write(TEST, TESTS)
    message = "Double a signed number given as text"
    c2 = repo.commit(message, committer_date="2026-01-02T12:00:00+00:00")
    task = Task(id=c2[:12], commit=c2, parent=c1, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject=message, message=message,
                prompt=clean_prompt(message), source_files=[SOURCE], test_files=[TEST],
                test_patch=make_test_patch(repo.path, c1, c2, [TEST]),
                gold_patch=make_gold_patch(repo.path, c1, c2, [TEST]), FAIL_TO_PASS=F2P, PASS_TO_PASS=P2P,
                test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=1)
    return FixTask(repo.path, task, make_snapshot(repo.path, c1, dest=dest / "pristine", init_git=True))


@pytest.mark.xfail(strict=True, reason=(
    "r26: an assertion added to a parametrized body whose other rows stay PASS_TO_PASS gets a sentinel only (any "
    "twin changes those rows, a twin of the red rows alone is told by its row count): read-expected is solved"))
def test_read_expected_on_an_assertion_added_to_some_rows_is_forged(tmp_path: Path) -> None:
    """With no fix: ``forged`` is what a guarded function gives; a real fix is solved (checked in the same test, so
    the fixture is one a fix solves)."""
    b = _build(tmp_path / "doubles")
    fixed = copy_tree(b.pristine, tmp_path / "fixed")
    (fixed / SOURCE).write_text(FIXED, encoding="utf-8")
    g = grade(b.task, workspace=fixed, pristine=b.pristine, out_dir=tmp_path / "out-fix", canary_seed=0,
              run_timeout_s=120)
    assert g.outcome == "solved", g
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(PARENT + READ_EXPECTED, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
              run_timeout_s=120)
    assert g.outcome == "forged", g
