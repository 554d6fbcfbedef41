"""The test runs a grading of a task makes at once where its record does not say (``verify.twin_runs``, contracts §6:
tasks mined before rev58), read from the twin plan of its hidden test files (rev60): the memory budget's check at
start counted 3 for each such task, refusing a ``--max-total-memory-mb`` that holds the 2 its grading makes (and
passing one smaller than the 4 a teardown twin and a plain run make)."""

from __future__ import annotations

from pathlib import Path

from pytest_homefield.errors import SnapshotError
from pytest_homefield.records import Task
from pytest_homefield.run.twin_grading import twin_options
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.canaries import function_id
from pytest_homefield.sandbox.snapshot import git
from pytest_homefield.sandbox.tempdirs import scratch
from pytest_homefield.sandbox.twin_runs import most_at_once, plan_twins

__all__ = ["planned_runs"]


def planned_runs(repo: Path, task: Task, unknown: int) -> int:
    """:func:`~pytest_homefield.sandbox.twin_runs.most_at_once` of the twin plan of ``task``'s FAIL_TO_PASS functions
    in their test files at ``task.commit`` of ``repo`` (read with git, laid in a scratch folder, with the task's other
    hidden ``.py`` test files that are there: grading's ``hidden``), made as grading makes it (a teardown twin where
    one is in reach, :func:`~pytest_homefield.run.twin_grading.twin_options`; at
    seed 0: the count is every seed's but past the limit of functions); ``unknown`` where it cannot be made: no
    FAIL_TO_PASS file, one that is not Python or not at the commit under its id's path (ids from another rootdir),
    or git failing. Never raises."""
    files = sorted({function_id(i).split("::", 1)[0] for i in task.FAIL_TO_PASS if "::" in i})
    if not files or not all(f.endswith(".py") for f in files):
        return unknown
    # reach46: every hidden test file, as grading passes them (a PASS_TO_PASS file's subclass of a FAIL_TO_PASS
    # class takes its teardown twin away: counted with the FAIL_TO_PASS files alone, 4 runs for grading's 2)
    others = sorted({f for f in task.test_files if f.endswith(".py")} - set(files))
    try:
        with scratch(suffix="runs-") as tmp:
            for rel in [*files, *others]:
                try:
                    text = git("show", f"{task.commit}:{rel}", cwd=repo)
                except SnapshotError:
                    if rel in files:
                        raise
                    continue  # a test file the commit deletes: grading has none either
                nofollow.write_bytes(tmp, rel, text.encode("utf-8", "surrogateescape"), make_parents=True)
            plan = plan_twins(tmp, task.FAIL_TO_PASS, seed=0, pass_to_pass=task.PASS_TO_PASS, teardown=True,
                              hidden=task.test_files, **twin_options(task))
    except (OSError, SnapshotError, ValueError):
        return unknown
    return most_at_once(plan)
