"""``homefield tasks``: the mined tasks, one line each, with their spec score and the parts that made it
(docs/contracts.md §6). Runs no test. ``-v`` adds each task's prompt and what the hidden tests need that
the prompt does not name. Exit status 0, 2 for a missing or corrupt ``tasks.jsonl``."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_homefield.errors import ConfigError, RecordError
from pytest_homefield.mine.message_score import is_well_specified, spec_breakdown, unnamed_requirements
from pytest_homefield.records import Task, display_subject, load_tasks, one_line
from pytest_homefield.settings import resolve_settings
from pytest_homefield.terminal.progress import plural

__all__ = ["run_tasks", "task_lines"]


def _parts(task: Task, threshold: float) -> tuple[float, str]:
    """This version's score of ``task`` (clamped sum of the parts, 2 decimals) and its parts as text."""
    parts = spec_breakdown(task.message, test_patch=task.test_patch, gold_patch=task.gold_patch,
                           prompt=task.prompt or None, threshold=threshold)
    score = round(min(1.0, max(0.0, sum(parts.values()))), 2)
    return score, " ".join(f"{k} {v:+.2f}" for k, v in parts.items() if v)


def task_lines(tasks: list[Task], threshold: float, *, verbose: bool = False) -> list[str]:
    """The lines ``homefield tasks`` prints for ``tasks`` (file order, newest first): id, FAIL_TO_PASS
    count, ``spec_score`` and ``vague`` or not at ``threshold``, the subject, and the score's parts
    (:func:`~pytest_homefield.mine.message_score.spec_breakdown`), all as this version scores them;
    ``(mined: X)`` when the record says otherwise (mined by an older version or another threshold:
    ``homefield mine`` again re-scores without running a test); under a task whose commit's tests the
    repository's configuration deselected (``excluded`` ``deselected``), a line naming them. Each line is
    :func:`~pytest_homefield.records.one_line`: a subject's or prompt's control characters are escapes."""
    lines = [f"{'task':12} {'F2P':>4} {'score':>5} {'':5}  subject  [score parts]"]
    n_vague = stale = 0
    for t in tasks:
        score, parts = _parts(t, threshold)
        vague = not is_well_specified(score, threshold)
        n_vague += vague
        mined = ""
        if round(t.spec_score, 2) != score or t.well_specified == vague:
            stale += 1
            mined = f" (mined: {t.spec_score:.2f}{'' if t.well_specified else ' vague'})"
        lines.append(f"{t.id:12} {len(t.FAIL_TO_PASS):>4} {score:>5.2f} {'vague' if vague else '':5}  "
                     f"{display_subject(t)}  [{parts}]{mined}")
        left = sorted(i for i, why in (t.excluded or {}).items() if why == "deselected")
        if left:  # bld62: the commit's tests no mining run ran, in no list of the task
            lines.append(f"{'':30}left out, deselected by the repository's configuration: "
                         f"{plural(len(left), 'test')} of the commit's test files, {', '.join(left[:3])}"
                         f"{' …' if len(left) > 3 else ''}")
        if verbose:
            for line in (t.prompt or t.subject).splitlines():
                lines.append(f"{'':30}| {line}")
            missing = unnamed_requirements(t.message, test_patch=t.test_patch, gold_patch=t.gold_patch,
                                           prompt=t.prompt or None)
            for kind, names in missing.items():
                if names:
                    lines.append(f"{'':30}the hidden tests need {kind} the prompt does not name: {', '.join(names)}")
    tail = (f"{plural(len(tasks), 'task')}, {n_vague} vague (spec_score < {threshold:g}; spec_threshold in "
            ".homefield.yml moves it)")
    if stale:
        tail += f"; {stale} scored otherwise at mining: homefield mine again re-scores them without running a test"
    lines.append(tail)
    return [one_line(line) for line in lines]  # a commit's ESC sequences shown as escapes, never played


def run_tasks(root: Path, *, verbose: bool = False) -> int:
    """Print :func:`task_lines` for ``root``'s ``.homefield/tasks.jsonl``; returns the exit status."""
    try:
        settings = resolve_settings(root, {}, mode="mine")
        if not settings.tasks_path.is_file():
            print(f"homefield tasks: no tasks yet ({settings.tasks_path} is missing): run homefield mine first",
                  file=sys.stderr)
            return 2
        tasks = load_tasks(settings.tasks_path)
    except (ConfigError, RecordError) as exc:
        print(f"homefield tasks: {exc}", file=sys.stderr)
        return 2
    print("\n".join(task_lines(tasks, settings.spec_threshold, verbose=verbose)))
    return 0
