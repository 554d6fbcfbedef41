"""What an unsolved attempt item reports (``RunItem`` in run/run_plugin.py, ``AblateItem`` in ablate/ablate_plugin.py,
through ``collect.xfail_reason``), without a pytest session."""

from __future__ import annotations

import pytest

from pytest_homefield.ablate.ablate_plugin import AblateItem
from pytest_homefield.collect import xfail_reason
from pytest_homefield.records import UNSOLVED_PREFIX, Result
from pytest_homefield.run.run_plugin import RunItem


def _raised(exc: BaseException) -> pytest.ExceptionInfo[BaseException]:
    with pytest.raises(type(exc)) as excinfo:
        raise exc
    return excinfo


@pytest.mark.parametrize("item_class", [RunItem, AblateItem])
def test_an_unsolved_attempt_reports_its_reason_without_formatting_a_traceback(item_class: type) -> None:
    reason = f"{UNSOLVED_PREFIX}tests_failed (1/1 FAIL_TO_PASS did not pass)"
    item = object.__new__(item_class)  # repr_failure of an xfail reads nothing of the item
    assert item_class.repr_failure(item, _raised(pytest.xfail.Exception(reason))) == reason


def test_only_an_xfail_has_a_reason() -> None:
    assert xfail_reason(_raised(pytest.xfail.Exception("unsolved: empty_patch"))) == "unsolved: empty_patch"
    assert xfail_reason(_raised(pytest.fail.Exception("homefield infra error: x", pytrace=False))) is None
    assert xfail_reason(_raised(ValueError("boom"))) is None


@pytest.mark.parametrize("item_class", [RunItem, AblateItem])
def test_a_flagged_solve_is_not_a_passed_test(item_class: type) -> None:
    """ratk48: a solve flagged ``suspicious`` passed its item: ``PASSED`` in the terminal, ``solved`` on the
    progress line, a passed test case in the JUnit XML a CI dashboard counts. The report counts it solved since
    sus60 and withholds every verdict resting on it; a pass/fail line cannot withhold itself, so it is unsolved
    there, with the flag's reason, as in the gate (contracts §10); a clean solve still passes."""
    item = object.__new__(item_class)
    item.result = Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="solved", suspicious=True,
                         suspicious_reason="pytest hooks")
    with pytest.raises(pytest.xfail.Exception) as excinfo:
        item_class.runtest(item)
    assert xfail_reason(excinfo) == f"{UNSOLVED_PREFIX}suspicious (solved, flagged: pytest hooks)"
    item.result = Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="solved")
    item_class.runtest(item)
