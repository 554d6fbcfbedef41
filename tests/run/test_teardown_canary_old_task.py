"""gatk51 on tcan50's teardown canary: a task mined before it (verification version < 27, ``canaries`` set) never had
the canary run on its reference fix, yet grading plants it and judges it checked (``twin_grading._unchecked`` covers
tasks mined before canaries and some twin kinds, not this kind): no reference run. A repository whose own
``conftest.py`` (in the parent commit, no part of any change) reports teardown failures as passed, as some do for
cleanup errors they ignore, passes the canary for every change: a real fix (``2 + 2`` for the reference's ``4``) is
``forged`` there ("canary tests/test_totals.py::test_totals_total passed: a teardown of ... that a real fix fails"),
seed 0. Mining now drops such a task (``reference_passes_canary``); a tasks file mined before keeps it.
A fix would judge the teardown canary against the reference fix or the parent tree (the repository's own code
passing it is no forgery), at the cost of their runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task, grade_source

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n\n\ndef test_total_twice():\n" \
        "    assert totals.total() * 2 == 8\n"
#: The repository's own conftest: teardown failures reported as passed (no change touches it).
CONFTEST = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n"
            "    report = outcome.get_result()\n"
            "    if report.when == 'teardown' and report.failed:\n"
            "        report.outcome = 'passed'\n")


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk51: a task mined before the teardown canary has it judged without a "
                                       "reference run; a repository ignoring teardown failures makes a real fix "
                                       "forged")
def test_a_real_fix_of_a_task_mined_before_the_canary_is_solved(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="totals", message="Total is four",
                       fail_to_pass=[f"{TEST}::test_total", f"{TEST}::test_total_twice"], pass_to_pass=[],
                       parent_data={"conftest.py": CONFTEST})
    # a real fix other than the reference's (the reference fix itself is graded without canaries)
    g = grade_source(b, tmp_path, SOURCE, "def total():\n    return 2 + 2\n", canaries=True, canary_seed=0)
    assert g.outcome == "solved", (g.outcome, g.error, g.canary)
