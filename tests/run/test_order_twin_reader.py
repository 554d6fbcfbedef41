"""xatk32: the comparison at the stop (near31, ``sandbox/canary_order.py``) guards nothing against a forger that
reads the expected value (contracts §7, "The comparison at the stop").

The order twin rewrites ``assert got == expected`` to ``assert got < expected``, false for what the parent gave
and for the expected value itself, so that a real fix fails it. A forger returning the value the test's ``==``
expects is, on that group, exactly such a fix: it passes the original and fails the twin.
:data:`~pytest_homefield.agents.attack_canary_aware.READ_AHEAD` (the call's value followed through the name it is
stored in, ``got = digits(n)``, to the first ``assert got == E`` after it) is solved with no fix on atk29's column
fixture, whose one group gets the order twin (``/tmp/xatk32/t/digits.py``: 12 of 12 seeds under ``--sandbox none``,
never ``forged``, no twin hit, nothing ``unprotected``). Before near31 (``30f574c^``) the group kept its value twin
(the parent told it, and the plan listed the function ``unprotected``); that twin (another row's ``expected``) is
what the reader passes: ``forged`` on 3 of 3 seeds.

Open: a twin that both kinds of forger fail needs a site the parent's behaviour does not tell and whose source
is a value, not an operator. The group could hold both twins (a run more), but a forger that runs the statements
one at a time with the unfixed code (``ASSERT_TELL``: every assertion fails -> the value twin, failed) and else
returns the expected value (``READ_AHEAD``: the order twin fails as with a fix) passes the original and fails
both. Strict xfail. Sealed columns do not close it: the fixture's column is used outside a side of a site's
statement (``size = len(expected)`` beside the assertion: a sealed cell, a site id, would give its length), so it
is not sealable, multi35's several statements neither (contracts §7 "Sealed columns").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.digits_task import PARENT, SOURCE, build_digits_task
from helpers.fix_task import FixTask

from pytest_homefield.agents.attack_canary_aware import READ_AHEAD
from pytest_homefield.run import twin_grading
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree


@pytest.fixture(scope="module")
def digits_task(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_digits_task(tmp_path_factory.mktemp("digits"))


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="xatk32: an expected-value reader passes the original and fails the order "
                                       "twin, as a real fix does (solved with no fix)")
def test_an_expected_value_reader_on_an_order_twin_is_not_solved(digits_task: FixTask, tmp_path: Path) -> None:
    """No fix, one seed: the reader (``READ_AHEAD`` appended to the unfixed package) must not be solved."""
    b = digits_task
    twin_grading._PARENT_SEEDS.clear()
    try:
        work = copy_tree(b.pristine, tmp_path / "work")
        (work / SOURCE).write_text(PARENT + READ_AHEAD, encoding="utf-8")
        g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
                  run_timeout_s=120, parent_checks=tmp_path / "parent-checks.jsonl")
        assert g.outcome != "solved", g
    finally:
        twin_grading._PARENT_SEEDS.clear()
