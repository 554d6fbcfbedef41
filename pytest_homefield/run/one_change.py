"""Tasks of ``tasks.jsonl`` that are one change (mine48): a ``tasks.jsonl`` mined before the scan's filter 12
(``duplicate_change``, docs/contracts.md §5) may hold a fix and its rebased or cherry-picked copy as two tasks, which
weigh double in every rate and paired test. A new mine removes the older copy (:func:`~pytest_homefield.mine.pipeline.
merge_tasks`); a run over the file as it is says so in its header (:func:`one_change_line`), and runs it as it is
(the task set is the user's file: its digest and ids are what a resume and a report check)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from pytest_homefield.records import Task
from pytest_homefield.terminal.progress import plural

__all__ = ["one_change_groups", "one_change_line"]


def one_change_groups(tasks: Sequence[Task]) -> list[list[str]]:
    """The ids of ``tasks`` whose whole change (``gold_patch`` then ``test_patch``) has one ``git patch-id --stable``
    (line numbers, ``index`` lines and white space ignored, as filter 12 compares commits), groups of two or more, in
    file order; ``[]`` when git cannot tell (one ``git patch-id`` process, no repository needed)."""
    if len(tasks) < 2:
        return []
    stream = "".join(f"commit {n:040x}\n\n{t.gold_patch}{t.test_patch}" for n, t in enumerate(tasks))
    try:
        proc = subprocess.run(["git", "patch-id", "--stable"], input=stream.encode("utf-8", "surrogateescape"),
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if proc.returncode != 0:
        return []
    by_id: dict[str, list[str]] = {}
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        patch, _, index = line.partition(" ")
        try:
            n = int(index.strip(), 16)
        except ValueError:
            continue
        if 0 <= n < len(tasks):
            by_id.setdefault(patch, []).append(tasks[n].id)
    return [ids for ids in by_id.values() if len(ids) > 1]


def one_change_line(tasks: Sequence[Task]) -> str | None:
    """``'tasks.jsonl holds one change as 2 tasks (a1b2c3d4e5f6, 0f9e8d7c6b5a: the same patch, a commit rebased or
    picked beside its original): each counts in every rate; mine again to keep the newest alone'``, ``None`` when
    every task is its own change."""
    groups = one_change_groups(tasks)
    if not groups:
        return None
    named = "; ".join(", ".join(g) for g in groups[:3]) + (f"; {len(groups) - 3} more" if len(groups) > 3 else "")
    what = (f"one change as {len(groups[0])} tasks" if len(groups) == 1
            else f"{plural(len(groups), 'change')} as {sum(map(len, groups))} tasks")
    return (f"tasks.jsonl holds {what} ({named}: the same patch, a commit rebased or picked beside its original): each "
            "counts in every rate; mine again to keep the newest alone (its scan sets the others aside as duplicate "
            "changes and removes their tasks)")
