"""Tasks of ``tasks.jsonl`` that are one change (mine48): a ``tasks.jsonl`` mined before the scan's filter 12
(``duplicate_change``, docs/contracts.md §5) may hold a fix and its rebased or cherry-picked copy as two tasks, which
weigh double in every rate and paired test. A new mine removes the older copy (:func:`~pytest_homefield.mine.pipeline.
merge_tasks`); a run over the file as it is says so in its header (:func:`one_change_line`), and runs it as it is
(the task set is the user's file: its digest and ids are what a resume and a report check)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_homefield.change_id import ChangeIdError, change_ids, diff_paths
from pytest_homefield.paths import DOCS, classify_path
from pytest_homefield.records import Task
from pytest_homefield.terminal.progress import plural

__all__ = ["one_change_groups", "one_change_line"]


def one_change_groups(tasks: Sequence[Task], test_globs: Sequence[str] = ()) -> list[list[str]]:
    """The ids of ``tasks`` of one mode whose change (``gold_patch`` then ``test_patch``) has one change id
    (:func:`pytest_homefield.change_id.change_ids`: the rule of the scan's filter 12, its changed lines alone,
    without its docs files, classified as the scan does with ``test_globs``), groups of two or more, in file order;
    ``[]`` when git cannot tell (one ``git patch-id`` process, no repository needed). link52: before, the whole
    stored patches were compared, context and docs files included: two tasks the scan took for one change (a
    backport beside other lines, or with its changelog entry under another release) were two changes here."""
    if len(tasks) < 2:
        return []
    changes = {f"{n:x}": t.gold_patch + t.test_patch for n, t in enumerate(tasks)}
    docs = {f"{n:x}": [p for p in diff_paths(t.gold_patch) if classify_path(p, test_globs) == DOCS]
            for n, t in enumerate(tasks)}
    try:
        ids = change_ids(changes, docs)
    except ChangeIdError:
        return []
    by_id: dict[tuple[str, str], list[str]] = {}
    for n, t in enumerate(tasks):
        cid = ids.get(f"{n:x}")
        if cid is not None:
            by_id.setdefault((t.mode, cid), []).append(t.id)
    return [ids for ids in by_id.values() if len(ids) > 1]


def one_change_line(tasks: Sequence[Task], test_globs: Sequence[str] = ()) -> str | None:
    """``'tasks.jsonl holds one change as 2 tasks (a1b2c3d4e5f6, 0f9e8d7c6b5a: the same patch, a commit rebased or
    picked beside its original): each counts in every rate; mine again to keep the newest alone'``, ``None`` when
    every task is its own change."""
    groups = one_change_groups(tasks, test_globs)
    if not groups:
        return None
    named = "; ".join(", ".join(g) for g in groups[:3]) + (f"; {len(groups) - 3} more" if len(groups) > 3 else "")
    what = (f"one change as {len(groups[0])} tasks" if len(groups) == 1
            else f"{plural(len(groups), 'change')} as {sum(map(len, groups))} tasks")
    return (f"tasks.jsonl holds {what} ({named}: the same patch, a commit rebased or picked beside its original): each "
            "counts in every rate; mine again to keep the newest alone (its scan sets the others aside as duplicate "
            "changes and removes their tasks)")
