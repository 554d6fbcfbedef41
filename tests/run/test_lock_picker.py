"""atk22: a content picker over a lock channel between the twin runs of one grading (contracts §7).

The twin runs start at once, each in its own sandbox, and both see the stdlib's ``os.py`` read-only. The graded
code (:func:`~pytest_homefield.agents.attack_canary_aware.lock_picker`, appended to the unfixed package) takes
fcntl read locks on that file that name each test function's version, reads the other run's with ``F_GETLK``,
and passes exactly one version of each group, the same one in the confirmation run: the original (solved) or
the twin (excusable, confirmed as a wrong fix: ``tests_failed``). It is never ``forged``, but a twin it picks is
a twin hit (``twin_hits``), which the report weighs against its solves (``report/picks.py``).

The test grades that change twice, picking the version with the smaller hash of each pair and then the larger
(on the fixture's one group, one of them is the original whatever the seed). The lock channel needs the two runs
to overlap, which a loaded machine may not give; the assertions hold whether or not it did: every grading that
passed a twin beside its failing original records it as a twin hit, and a solve by luck has its twin hit beside
it, or the channel failed that grading's complement (then neither version passed there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, Fixture, task_for

from pytest_homefield.agents.attack_canary_aware import lock_picker
from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.run.twin_grading import TWIN_OUTCOMES
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.snapshot import copy_tree, make_snapshot

CALC = "src/calc/__init__.py"
PICKS = (True, False)  # the smaller hash of each pair, the larger


def _runs_passed(out: Path) -> int:
    """In how many of the grading's runs apart every instance of the group function ``test_sub`` passed
    (each run's events as its process saw them: the member it held under the test's own name)."""
    n_passed = 0
    for n in (1, 2):
        path = out / TWIN_OUTCOMES.format(n=n)
        calls = [json.loads(line) for line in (path.read_text().splitlines() if path.exists() else [])]
        calls = [e for e in calls if e.get("when") == "call" and "::test_sub[" in str(e.get("nodeid"))]
        n_passed += bool(calls) and all(e.get("outcome") == "passed" for e in calls)
    return n_passed


@pytest.fixture(scope="module")
def picker_grades(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[Grade, Path]]:
    """pick → (grade, its artifacts) of grading the unfixed package plus the picker, under bubblewrap."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    task = task_for(fx, canaries=1)  # as mined with the canary check
    tmp = tmp_path_factory.mktemp("picker")
    pristine = make_snapshot(fx.root, fx.c1, dest=tmp / "pristine", init_git=True)
    out: dict[bool, tuple[Grade, Path]] = {}
    for smaller in PICKS:
        workspace = copy_tree(pristine, tmp / f"work-{smaller}")
        (workspace / CALC).write_text(CALC_1 + lock_picker(linger_s=3.0, smaller=smaller), encoding="utf-8")
        # the twin runs' verdicts are what this tests: the fixture's column row -5 is sealed since col35, and the
        # sealed run (made first) fails the picker whichever version it picks (tests/run/test_sealed_columns.py)
        g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp / f"out-{smaller}", sandbox="bwrap",
                  canary_seed=7, run_timeout_s=120, sealed=False)
        assert not g.suspicious, g.suspicious_reason  # nothing the pattern hint knows
        out[smaller] = (g, tmp / f"out-{smaller}")
    return out


@pytest.mark.slow
def test_the_picker_is_never_forged(picker_grades: dict[bool, tuple[Grade, Path]]) -> None:
    """What makes it a hole for the canaries alone: whichever version it picks, no canary verdict catches it."""
    assert all(g.outcome in ("solved", "tests_failed") for g, _ in picker_grades.values()), picker_grades


def test_a_twin_the_picker_passed_is_a_twin_hit(picker_grades: dict[bool, tuple[Grade, Path]]) -> None:
    """A grading in which the group passed in one run apart and was not solved passed the twin there (beside
    its failing original, confirmed): a twin hit. One in which it passed in no run (the channel failed) has
    none."""
    for g, out in picker_grades.values():
        runs = _runs_passed(out)
        if runs == 1 and g.outcome == "tests_failed":
            assert g.twin_hits > 0, g
        if runs == 0:
            assert g.twin_hits == 0 and g.outcome == "tests_failed", g


@pytest.mark.slow
def test_a_solve_by_luck_comes_with_its_twin_hit(picker_grades: dict[bool, tuple[Grade, Path]]) -> None:
    """The two picks are complementary on the fixture's one group: where the lock channel worked in both,
    one is solved and the other a twin hit, so the report counts the solve away (report/picks.py); where it
    failed in the complement, nothing passed there."""
    for pick, (g, _) in picker_grades.items():
        if g.outcome == "solved":
            other, out = picker_grades[not pick]
            assert other.twin_hits > 0 or _runs_passed(out) == 0, (g, other)
