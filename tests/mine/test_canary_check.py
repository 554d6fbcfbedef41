"""The mining check of the canaries (issue 30, verification version 6): the reference must fail every
canary twin, the twins run apart (sandbox/twin_runs.py); a function that breaks gets a sentinel and a
second round; what still breaks drops the candidate."""

from __future__ import annotations

from pathlib import Path

from pytest_homefield.mine.canary_check import CanaryCheck, check_twins
from pytest_homefield.sandbox.canaries import Canary, CanaryPlan, Group
from pytest_homefield.sandbox.testrun import TestRun

F2P = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b"]


def _run(outcomes: dict[str, str], wall_s: float = 1.0) -> TestRun:
    return TestRun(outcomes=outcomes, exit_code=1, timed_out=False, collection_error=False, collected=len(outcomes),
                   wall_s=wall_s, log_path=Path("/dev/null"), finished=True)


def _plan(forced: set[str]) -> CanaryPlan:
    kind = {f: ("sentinel" if f in forced else "contradiction") for f in ("t.py::test_a", "t.py::test_b")}
    return CanaryPlan(seed=1, canaries=[Canary("t.py::test_a@twin1", "t.py::test_a", kind["t.py::test_a"], "k"),
                                        Canary("t.py::test_b@twin1", "t.py::test_b", kind["t.py::test_b"], "k"),
                                        Canary("t.py::test_z", "t.py::test_c", "sentinel", "appended")],
                      groups=[Group("t.py::test_a", ("t.py::test_a@twin1",), 0),
                              Group("t.py::test_b", ("t.py::test_b@twin1",), 0)])


REAL = dict.fromkeys(F2P, "passed")
TWINS_FAIL = {"t.py::test_a@twin1[1]": "failed", "t.py::test_a@twin1[2]": "failed", "t.py::test_b@twin1": "error"}


def _checked(outcomes: dict[str, str], fail_to_pass: list[str] = F2P) -> CanaryCheck:
    """:func:`check_twins` where every round's twin run gives ``outcomes`` (a check, never a stop)."""
    check = check_twins(fail_to_pass, lambda forced, k: (_run(outcomes), _plan(forced)))
    assert not isinstance(check, str)
    return check


def test_every_twin_failing_holds_in_one_round() -> None:
    """One round; the sentinel appended for a test that could not be found runs in no targeted run."""
    calls: list[tuple[set[str], int]] = []

    def run(forced: set[str], k: int) -> tuple[TestRun, CanaryPlan]:
        calls.append((set(forced), k))
        return _run({**REAL, **TWINS_FAIL}, wall_s=4.0), _plan(forced)

    check = check_twins(F2P, run)
    assert not isinstance(check, str)
    assert (check.reason, check.canaries, check.sentinels, check.order, check.seconds) == (None, 3, [], {}, 4.0)
    assert calls == [(set(), 1)]


def test_a_twin_the_reference_passes_becomes_a_sentinel() -> None:
    def run(forced: set[str], k: int) -> tuple[TestRun, CanaryPlan]:
        b = "failed" if "t.py::test_b" in forced else "passed"  # the rewrite of test_b was wrong
        return _run({**REAL, **TWINS_FAIL, "t.py::test_b@twin1": b}), _plan(forced)

    check = check_twins(F2P, run)
    assert not isinstance(check, str)
    assert (check.reason, check.sentinels, check.runs) == (None, ["t.py::test_b"], 2)


def test_what_still_does_not_hold_drops_the_candidate() -> None:
    check = _checked({**REAL, **TWINS_FAIL, "t.py::test_b@twin1": "passed"})
    assert check.reason == "reference_passes_canary"
    assert check.detail == ("canary t.py::test_b@twin1 (sentinel of t.py::test_b: k) passed with the "
                            "reference fix")


def test_broken_real_tests_a_timeout_or_a_stop_are_reported() -> None:
    check = _checked({**TWINS_FAIL, "t.py::test_a[1]": "error"})
    assert check.reason == "reference_passes_canary"
    assert check.detail.startswith("3 FAIL_TO_PASS id(s) did not pass with the canaries planted")
    assert check_twins(F2P, lambda forced, k: ("setup failed", _plan(forced))) == "setup failed"
    slow = _run(REAL)
    slow.timed_out = True
    check = check_twins(F2P, lambda forced, k: (slow, _plan(forced)))
    assert not isinstance(check, str) and check.reason == "timeout"


def test_an_instance_this_environment_skips_counts_for_nothing() -> None:
    """markupsafe: a fixture parametrized over the C extension, skipped where it is not built, makes
    ``test_x[None]`` skipped at the parent and at the commit (excluded, no FAIL_TO_PASS id) and its
    twin's ``[None]`` instance skipped too; the twin still fails in the instance that runs."""
    skipped = {"t.py::test_a[3]": "skipped", "t.py::test_a@twin1[3]": "skipped"}
    check = _checked({**REAL, **TWINS_FAIL, **skipped})
    assert (check.reason, check.sentinels, check.runs) == (None, [], 1)


def test_a_twin_skipped_where_its_original_is_fail_to_pass_does_not_hold() -> None:
    """Only a skip the original shares is excused: a twin instance skipped where its original's instance
    passes as FAIL_TO_PASS guards nothing, and neither does a twin every instance of which is skipped."""
    check = _checked({**REAL, **TWINS_FAIL, "t.py::test_a@twin1[1]": "skipped"})
    assert check.reason == "reference_passes_canary"
    assert check.detail == ("canary t.py::test_a@twin1 (sentinel of t.py::test_a) did not fail: "
                            "t.py::test_a@twin1[1] was skipped")

    check = _checked({**REAL, "t.py::test_a[3]": "skipped", "t.py::test_a@twin1[3]": "skipped",
                      "t.py::test_b@twin1": "failed"}, ["t.py::test_b"])
    assert check.reason == "reference_passes_canary"
