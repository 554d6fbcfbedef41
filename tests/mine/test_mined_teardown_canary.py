"""Mining's check of the teardown canary (tcan50, sandbox/twin_runs.py ``plant_teardown``): its targeted runs select
it beside the group functions, and the reference fix must fail it as it fails every canary. A reference fix that
meets pytest's teardown error keeps its task (two canaries more: can52 plants two); one whose code swallows teardown
errors in the test process passes it, and the candidate is dropped (``reference_passes_canary``, the canary named),
as it would be ``forged`` at grading. A kept task records that its teardown canaries were judged
(``canary_teardown``, tcan52)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import build_fix_task
from helpers.quiet_teardown import QUIET

from pytest_homefield.mine.redgreen import verify_candidate

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n"


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [False, True], ids=["honest", "quiet"])
def test_the_reference_fix_must_fail_the_teardown_canary(tmp_path: Path, quiet: bool) -> None:
    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=PARENT, fixed=(QUIET if quiet else "") + FIXED,
                       test=TEST, tests=TESTS, first="totals", message="Count both",
                       fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[])
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[TEST], runnable_tests=[TEST],
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=1, log_dir=tmp_path / "logs")
    if not quiet:
        assert (v.reason, v.FAIL_TO_PASS, v.canaries) == (None, [f"{TEST}::test_total"], 3), (v.reason, v.detail)
        assert v.canary_teardown  # the task record's canary_teardown (tcan52): grading trusts mining's check
        assert v.twin_runs == 2  # verify.twin_runs (rev58): RUNS, no teardown twin in reach
    else:
        assert v.reason == "reference_passes_canary", (v.reason, v.detail)
        assert "(teardown of tests/test_totals.py::test_total" in (v.detail or ""), v.detail


@pytest.mark.slow
def test_mining_makes_the_teardown_twins_run_and_leaves_the_twin_to_grading(tmp_path: Path) -> None:
    """tdtwin56: a FAIL_TO_PASS function whose own fixture's check is in reach gets a teardown twin, one run more in
    the plan, and its teardown decoy, one more (deco60: the function itself, its body ``pass``); mining's check makes
    every run of the plan (it made ``RUNS`` before: the original's run could be the one left out, its id missing) and
    holds for the reference fix, which fails the twin's check there; the twin itself is left to grading's reference
    check (it is not judged here, so a check a real fix passes only now and then costs the function no body twin).
    The task record counts 5 canaries: the body twin, the teardown twin, its teardown decoy (pol58: left to grading's
    reference check as the twin is) and the two teardown canaries. Four runs (three before deco60, whose decoy was
    one test more in each run)."""
    from run.test_teardown_error import FIXED as SPY_FIXED  # the spy's fixture
    from run.test_teardown_error import PARENT as SPY_PARENT
    from run.test_teardown_error import TESTS as SPIED

    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=SPY_PARENT, fixed=SPY_FIXED, test=TEST,
                       tests=SPIED, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[])
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[TEST], runnable_tests=[TEST],
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=1, log_dir=tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS, v.canaries) == (None, [f"{TEST}::test_total"], 5), (v.reason, v.detail)
    assert v.canary_sentinels == [] and v.canary_teardown
    assert v.twin_runs == 4  # verify.twin_runs (rev58): what cost and the memory budget count for its gradings
    made = sorted(p.name for p in (tmp_path / "logs").rglob("canaries-1-*") if not p.name.endswith("-full"))
    assert len({n.split(".")[0] for n in made}) == 4, made
