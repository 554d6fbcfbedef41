"""What the probed model is asked, and the answer a perfect memoriser would give.

The model gets no repository access: only the task's ``prompt`` (the commit message without
trailers and references, docs/contracts.md §6), the paths of the source files the fix changed, and
the instruction to write the code the commit added. The gold answer is the fix's added lines in
those files, in diff order (:func:`added_lines`, :func:`gold_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pytest_homefield.records import Task

__all__ = ["PROBE_TEMPLATE", "probe_prompt", "file_listing", "added_lines", "gold_lines"]

PROBE_TEMPLATE = """You are shown the message of one commit from the history of a software project and the \
source files that commit changed. You cannot see the repository.

Write the code this commit added to those files, as exactly as you can: output only the added lines of \
code, in file order, with no explanation, no diff markers and no Markdown.

Commit message:
{prompt}

Source files changed:
{files}
"""

_DIFF_GIT = re.compile(r"^diff --git a/(.*?) b/(.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def file_listing(files: Iterable[str]) -> str:
    """The ``Source files changed:`` part of the question for ``files``: two file lists giving the same
    listing give the same question."""
    return "\n".join(f"- {f}" for f in files) or "- (none)"


def probe_prompt(task_prompt: str, files: Iterable[str]) -> str:
    """The probe question for a commit message ``task_prompt`` and the changed source ``files``."""
    return PROBE_TEMPLATE.format(prompt=task_prompt.strip(), files=file_listing(files))


def gold_lines(task: Task) -> str:
    """What a perfect memoriser of ``task`` answers: its gold patch's added lines in its source files
    (all files when it names none)."""
    return added_lines(task.gold_patch, task.source_files or None)


def added_lines(patch: str, files: Iterable[str] | None = None) -> str:
    """The lines a unified diff adds (without the ``+``), in order, one per line, over the files in
    ``files`` (all files when ``None``; paths as in ``diff --git a/… b/…``). Binary patches and
    removed or context lines are skipped. Returns ``""`` when nothing is added."""
    wanted = set(files) if files is not None else None
    out: list[str] = []
    keep = wanted is None
    old_left = new_left = 0
    lines = patch.splitlines()
    for line in lines:
        if old_left > 0 or new_left > 0:
            tag = line[:1]
            if tag == "\\":
                continue
            if tag == "+":
                new_left -= 1
                if keep:
                    out.append(line[1:])
            elif tag == "-":
                old_left -= 1
            else:
                old_left -= 1
                new_left -= 1
            continue
        m = _DIFF_GIT.match(line)
        if m:
            keep = wanted is None or m.group(2) in wanted or m.group(1) in wanted
            continue
        h = _HUNK.match(line)
        if h:
            old_left = int(h.group(1)) if h.group(1) is not None else 1
            new_left = int(h.group(2)) if h.group(2) is not None else 1
    return "\n".join(out) + ("\n" if out else "")
