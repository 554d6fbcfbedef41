"""gatk36: the confirmation run ran a test body twice in one process (contracts §7, "confirmed").

The confirmation run lays every member of a disagreeing group side by side in one file (its original and its twin,
in an order drawn from the seed), so the process runs the same body twice. A body with an effect once per process
(a metric, table or plugin registered by name in a registry refusing a name twice) fails the second time whatever
the code computes (tests/helpers/metrics_task.py). So a real fix was ``tests_failed`` on every seed laying the twin
first ("passed apart but not in the confirmation run"), and honest wrong code whose value met its twin was
``forged`` on every seed laying the original first ("the twin failed there"): an honest agent flagged for the run.
Now a member that had to pass there (the original that passed apart, an excused twin) and did not, laid after
another member of its group, is judged by a second confirmation run in which it is laid out first (every other
draw the same): both are what honest code gives.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask
from helpers.metrics_task import METRICS_FIXED, METRICS_PARENT, METRICS_SOURCE, build_metrics

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.run.twin_grading import CONFIRM_FIRST_LOG
from pytest_homefield.sandbox.snapshot import copy_tree

#: Seed 1 lays the twin (``expected 5 -> 9``) first in the confirmation run; seed 0 lays the original first (its
#: twin ``expected 5 -> -1``).
TWIN_FIRST, ORIGINAL_FIRST = 1, 0
#: Honest wrong code meeting seed 0's twin: ``inc`` counting down (a sign error), ``-1`` for ``inc(5)``.
COUNTS_DOWN = METRICS_PARENT.replace("        self.value += 1\n", "        self.value -= 1\n")


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The metrics task, built once for the module: every grading copies its parent's snapshot (read only), and the
    reference fix's sealed run, the same for every grading of the task, is made once per process, as in a run
    (``sealed_grading._SEALED_SEEN``, keyed by that snapshot's folder)."""
    return build_metrics(tmp_path_factory.mktemp("metrics") / "metrics")


def _graded(b: FixTask, tmp_path: Path, source: str, seed: int) -> Grade:
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / METRICS_SOURCE).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120)


@pytest.mark.slow
def test_a_real_fix_whose_body_registers_once_is_solved(metrics: FixTask, tmp_path: Path) -> None:
    """The commit's fix with a comment added (not the reference's bytes: canaries are planted), on the seed laying
    its twin first: ``solved`` (was ``tests_failed``: the original failed at the registration in the confirmation
    run); the second confirmation run, the original laid first, is kept as ``confirm-first.log``."""
    fix = METRICS_FIXED.replace("    def inc", "    # by n, not by one\n    def inc")
    g = _graded(metrics, tmp_path, fix, TWIN_FIRST)
    assert g.outcome == "solved", g
    assert (tmp_path / "out" / CONFIRM_FIRST_LOG).is_file()


@pytest.mark.slow
def test_honest_wrong_code_whose_body_registers_once_is_never_forged(metrics: FixTask, tmp_path: Path) -> None:
    """``inc`` counting down gives ``-1``, seed 0's twin: the twin passed apart beside its failing original; laid
    after its original in the confirmation run it failed at the registration, and the grade was ``forged`` (its
    agent flagged for the run). Now it is confirmed in the run laying it first: ``tests_failed``, one twin hit."""
    g = _graded(metrics, tmp_path, COUNTS_DOWN, ORIGINAL_FIRST)
    assert (g.outcome, g.canary, g.twin_hits) == ("tests_failed", None, 1), g
