"""seal64: a ``unittest`` class of a FAIL_TO_PASS test derived from in another test file of the task.

The twin plan read the class's own file only (``canary_teardown._alone``, ``canary_shapes.shared_definition``): a
subclass in ``tests/test_more.py`` (``class TestMore(test_totals.TestTotal)``) inherits ``test_total`` and
``tearDown``, so in the run holding ``TestTotal``'s contradiction twin, or its ``tearDown`` check contradicted
(ucln62's teardown twin), ``TestMore``'s own FAIL_TO_PASS ids ran the twin and failed: the real fix was
``tests_failed`` (seeds 0 and 1, sealed run on and off, ``--sandbox none``, on 79cea778; with no check in
``tearDown`` too). Now such a class's method gets a sentinel and no teardown twin (``twin_runs.plan_twins``'
``hidden``: the task's test files, which the agent does not write)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_sealed_unittest_checks import CLASS as TESTS
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST

#: Inherits ``test_total`` and ``tearDown``; its own test fails at the parent too.
MORE = ("import test_totals\n\nimport totals\n\n\n"
        "class TestMore(test_totals.TestTotal):\n"
        "    def test_double(self):\n        self.assertEqual(totals.total() * 2, 8)\n")


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("derived"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::TestTotal::test_total", "tests/test_more.py::TestMore::test_double",
                                        "tests/test_more.py::TestMore::test_total"],
                          pass_to_pass=[], data={"tests/test_more.py": MORE})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_the_real_fix_of_a_class_derived_in_another_test_file_is_solved(derived: FixTask, tmp_path: Path,
                                                                        seed: int) -> None:
    g = grade_source(derived, tmp_path, SOURCE, FIXED + "# the fix\n", canaries=True, canary_seed=seed,
                     sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
def test_the_value_without_the_work_still_fails_the_derived_class(derived: FixTask, tmp_path: Path) -> None:
    """The premise: :data:`HACK` fails ``tearDown``'s check, in ``TestTotal`` and ``TestMore`` alike."""
    g = grade_source(derived, tmp_path, SOURCE, HACK, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)
