"""gatk64: a hidden test whose check is a call of the project's own assertion helper, a function of its source
(``numpy.testing``, ``pandas._testing``, ``django.test`` are such): ``check.same(totals.total(), 4)``. A change making
the helper a no-op passes the original with the parent's code and fails every twin (the twin's site is the plain
``assert`` after the call, or the call expected to raise): ``solved`` with no fix, seeds 0 and 1, ``--sandbox none``.
It is flagged: the grading lists the function canary-unprotected (``canaries.json`` ``unprotected``; the parent's
code stops at the helper's call, before the twin's site), as mining's ``canary_unprotected`` would, and the report
notes such tasks; the test holds that flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_teardown_error import FIXED, PARENT, SOURCE, TEST

HELPER = "check.py"
#: The project's assertion helper, at the parent and unchanged by the commit.
CHECK = ("def same(got, want):\n    if got != want:\n"
         "        raise AssertionError(f'{got!r} != {want!r}')\n")
#: The helper made a no-op: the code under test is the parent's.
QUIET = "def same(got, want):\n    return None\n"
TESTS = ("import check\nimport totals\n\n\ndef test_total():\n    got = totals.total()\n    check.same(got, 4)\n"
         "    assert got > 0\n")


@pytest.fixture(scope="module")
def helper(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("helper"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[], parent_data={HELPER: CHECK})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_checked_by_a_source_helper_is_solved(helper: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(helper, tmp_path, SOURCE, FIXED + "# the fix\n", canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_quieting_the_source_helper_is_flagged_unprotected(helper: FixTask, tmp_path: Path,
                                                                    seed: int) -> None:
    """:data:`QUIET` alone (``totals.py`` the parent's): ``solved`` on 79cea778, seeds 0 and 1, its function listed
    unprotected; a grading that neither catches it nor lists it fails here."""
    g = grade_source(helper, tmp_path, HELPER, QUIET, canaries=True, canary_seed=seed, sandbox="none")
    unprotected = json.loads((tmp_path / "out" / "canaries.json").read_text())["unprotected"]
    assert g.outcome != "solved" or helper.task.FAIL_TO_PASS[0] in unprotected, (g.outcome, unprotected)
