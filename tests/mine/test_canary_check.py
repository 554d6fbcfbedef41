"""The mining check of the canaries (issue 30): the reference must fail every canary twin with the twins
on either side of the original; one order fixed where only the other breaks, else sentinels."""

from __future__ import annotations

from pathlib import Path

from pytest_homefield.mine.canary_check import check_canaries
from pytest_homefield.sandbox.canaries import Canary, CanaryPlan
from pytest_homefield.sandbox.testrun import TestRun

F2P = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b"]


def _run(outcomes: dict[str, str], wall_s: float = 1.0) -> TestRun:
    return TestRun(outcomes=outcomes, exit_code=1, timed_out=False, collection_error=False, collected=len(outcomes),
                   wall_s=wall_s, log_path=Path("/dev/null"), finished=True)


def _plan(forced: set[str]) -> CanaryPlan:
    kind = {f: ("sentinel" if f in forced else "contradiction") for f in ("t.py::test_a", "t.py::test_b")}
    return CanaryPlan(seed=1, canaries=[Canary("t.py::test_x", "t.py::test_a", kind["t.py::test_a"], "k"),
                                        Canary("t.py::test_y", "t.py::test_b", kind["t.py::test_b"], "k")])


REAL = dict.fromkeys(F2P, "passed")
Call = tuple[set[str], dict[str, str], str]


def test_every_canary_failing_in_both_orders_holds_in_two_runs() -> None:
    calls: list[Call] = []

    def run(forced: set[str], order: dict[str, str], layout: str, k: int) -> tuple[TestRun, CanaryPlan]:
        calls.append((set(forced), dict(order), layout))
        return _run({**REAL, "t.py::test_x[1]": "failed", "t.py::test_x[2]": "failed", "t.py::test_y": "error"}), \
            _plan(forced)

    check = check_canaries(F2P, run)
    assert not isinstance(check, str)
    assert (check.reason, check.canaries, check.sentinels, check.order, check.seconds) == (None, 2, [], {}, 2.0)
    assert calls == [(set(), {}, "after"), (set(), {}, "before")]


def test_a_stateful_test_broken_by_twins_before_it_keeps_its_twins_after() -> None:
    """redis ``incr() == 1``: with its twins run first, the original sees 4 and fails (git log 2303e9f);
    with them after, it passes and every twin fails: ``order`` fixes the original first."""
    def run(forced: set[str], order: dict[str, str], layout: str, k: int) -> tuple[TestRun, CanaryPlan]:
        first = order.get("t.py::test_b", layout) == "after"
        return _run({**REAL, "t.py::test_b": "passed" if first else "failed", "t.py::test_x": "failed",
                     "t.py::test_y": "failed"}), _plan(forced)

    check = check_canaries(F2P, run)
    assert not isinstance(check, str)
    assert (check.reason, check.sentinels, check.order, check.runs) == (None, [], {"t.py::test_b": "after"}, 4)


def test_a_canary_the_reference_passes_in_both_orders_becomes_a_sentinel() -> None:
    def run(forced: set[str], order: dict[str, str], layout: str, k: int) -> tuple[TestRun, CanaryPlan]:
        y = "failed" if "t.py::test_b" in forced else "passed"  # the rewrite of test_b was wrong
        return _run({**REAL, "t.py::test_x": "failed", "t.py::test_y": y}), _plan(forced)

    check = check_canaries(F2P, run)
    assert not isinstance(check, str)
    assert (check.reason, check.canaries, check.sentinels, check.order, check.seconds) == \
        (None, 2, ["t.py::test_b"], {}, 4.0)


def test_what_still_does_not_hold_drops_the_candidate() -> None:
    def run(forced: set[str], order: dict[str, str], layout: str, k: int) -> tuple[TestRun, CanaryPlan]:
        return _run({**REAL, "t.py::test_x": "failed", "t.py::test_y": "passed"}), _plan(forced)

    check = check_canaries(F2P, run)
    assert not isinstance(check, str)
    assert check.reason == "reference_passes_canary"
    assert check.detail == "canary t.py::test_y (sentinel of t.py::test_b: k) passed with the reference fix"


def test_broken_real_tests_or_a_stop_are_reported() -> None:
    def broken(forced: set[str], order: dict[str, str], layout: str, k: int) -> tuple[TestRun, CanaryPlan]:
        return _run({"t.py::test_x": "failed", "t.py::test_y": "failed"}), _plan(forced)

    check = check_canaries(F2P, broken)
    assert not isinstance(check, str) and check.reason == "reference_passes_canary"
    assert check.detail.startswith("3 FAIL_TO_PASS id(s) did not pass with the canaries planted")
    assert check_canaries(F2P, lambda forced, order, layout, k: ("setup failed", _plan(forced))) == "setup failed"
