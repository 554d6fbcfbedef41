"""rev60: ``verify.twin_runs`` (mining's canary check, :func:`~pytest_homefield.mine.canary_check.check_twins`) is
what the memory budget's check at start and ``homefield plan``'s estimate take for the test runs a grading makes at
once. Mining's plan has no ``stops``; grading's parent check moves a twin's site to the statement its original
stopped at on the parent, here the ``raises`` the parent does not meet: its exception-swap twin is drawn, with a plain
form, one run more than mining counted (2 recorded, 3 made, every seed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.mine.canary_check import check_twins
from pytest_homefield.sandbox.testrun import TestRun
from pytest_homefield.sandbox.twin_runs import at_once, most_at_once, plan_twins

TEST = "tests/test_s.py"
F2P = f"{TEST}::test_unseekable"
#: the parent's seek never raises: its run stops at the ``with`` (line 2 of the function)
TESTS = ("import pytest\n\nfrom streams import Reader\n\n\n"
         "def test_unseekable():\n"
         "    r = Reader(b'abc', seekable=False)\n"
         "    with pytest.raises(ValueError):\n"
         "        r.seek(1)\n"
         "    assert r.pos == 0\n")


def _run(outcomes: dict[str, str]) -> TestRun:
    return TestRun(outcomes=outcomes, exit_code=1, timed_out=False, collection_error=False, collected=len(outcomes),
                   wall_s=1.0, log_path=Path("/dev/null"), finished=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mining_records_the_runs_a_gradings_exception_swap_makes(tmp_path: Path, seed: int) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(TESTS, encoding="utf-8")
    mined = plan_twins(tmp_path, [F2P], seed=seed, teardown=True)
    graded = plan_twins(tmp_path, [F2P], seed=seed, teardown=True, stops={F2P: 2})
    assert not mined.plain and graded.plain  # the fixture's point: the swap is grading's alone
    outcomes = {F2P: "passed", **{c.node: "failed" for c in mined.canaries}}
    check = check_twins([F2P], lambda forced, k: (_run(outcomes), mined))
    assert not isinstance(check, str) and check.reason is None, check
    assert check.at_once >= at_once(graded) == 3, (check.at_once, at_once(graded))  # before: 2 recorded
    assert most_at_once(graded) == 3  # a plan with its plain run counts it once


def test_a_plan_with_no_raises_counts_its_runs(tmp_path: Path) -> None:
    """No ``raises`` in any original: no plain run can be drawn, nothing more is counted."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(TESTS.replace("    with pytest.raises(ValueError):\n        r.seek(1)\n", ""),
                                 encoding="utf-8")
    plan = plan_twins(tmp_path, [F2P], seed=0, teardown=True)
    assert most_at_once(plan) == at_once(plan) == 2
