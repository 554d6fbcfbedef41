"""Secondary score: how close an attempt's diff is to the task's gold patch.

The test-based outcome is the result; this is a diagnostic beside it. Both diffs are reduced to a
multiset of changed lines, ``("+", stripped text)`` for an added line and ``("-", stripped text)``
for a removed one, over **non-test files only** (the agent's edits to test files are thrown away by
grading, and the gold patch has none). Blank lines (after stripping) are ignored, as are diff
headers, hunk headers and ``GIT binary patch`` blocks.

* ``exact``: the two multisets are equal and non-empty.
* ``f1``: edit-F1 of the overlap, ``2·|A ∩ G| / (|A| + |G|)`` with multiset intersection
  (precision = overlap / agent lines, recall = overlap / gold lines). 0.0 when either side is empty.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["Similarity", "changed_lines", "is_test_path", "similarity"]

_DIFF_GIT = re.compile(r"^diff --git a/(.*?) b/(.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_TEST_DIRS = {"test", "tests", "testing", "__tests__", "spec"}


@dataclass(frozen=True)
class Similarity:
    """Similarity of one attempt's diff to the gold patch.

    ``f1`` in [0, 1]; ``precision``/``recall`` in [0, 1]; ``agent_lines``/``gold_lines``/``overlap``
    are counts of changed lines (added + removed, non-blank, non-test files).
    """

    exact: bool
    f1: float
    precision: float
    recall: float
    agent_lines: int
    gold_lines: int
    overlap: int


def is_test_path(path: str, test_files: Iterable[str] = ()) -> bool:
    """True for a path that grading treats as a test file: one of the task's ``test_files``, a
    ``conftest.py``, ``test_*.py`` / ``*_test.py`` / ``*_tests.py`` / ``tests.py``, or any file under a
    ``test``/``tests``/``testing``/``__tests__``/``spec`` folder."""
    if path in set(test_files):
        return True
    p = PurePosixPath(path)
    name = p.name
    if name in {"conftest.py", "tests.py"} or name.startswith("test_"):
        return True
    if p.suffix and p.stem.endswith(("_test", "_tests", ".test", ".spec")):
        return True
    return any(part in _TEST_DIRS for part in p.parts[:-1])


def changed_lines(patch: str, *, test_files: Iterable[str] = ()) -> Counter[tuple[str, str]]:
    """Multiset of ``(sign, stripped line)`` changed by a unified diff, over non-test files.

    ``sign`` is ``"+"`` or ``"-"``. Accepts ``git diff`` output (with ``diff --git`` headers) and plain
    unified diffs (``---``/``+++`` headers only).
    """
    tests = set(test_files)
    out: Counter[tuple[str, str]] = Counter()
    skip = False  # current file is a test file
    in_binary = False
    old_left = new_left = 0  # lines still expected in the current hunk
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if (old_left > 0 or new_left > 0) and line.startswith("diff --git "):
            old_left = new_left = 0  # malformed hunk counts: a new file starts here
        if old_left > 0 or new_left > 0:
            tag = line[:1]
            if tag == "\\":  # "\ No newline at end of file"
                continue
            if tag == "-":
                old_left -= 1
            elif tag == "+":
                new_left -= 1
            else:  # context (" " or an empty line whose space was stripped)
                old_left -= 1
                new_left -= 1
            if tag in {"+", "-"} and not skip:
                text = line[1:].strip()
                if text:
                    out[(tag, text)] += 1
            continue
        m = _DIFF_GIT.match(line)
        if m:
            skip = is_test_path(m.group(2), tests) or is_test_path(m.group(1), tests)
            in_binary = False
            continue
        if line.startswith("GIT binary patch"):
            in_binary = True
            continue
        if in_binary:
            continue
        if line.startswith("--- ") and i < len(lines) and lines[i].startswith("+++ "):
            # File header of a plain unified diff (or the one after ``diff --git``).
            old = _strip_prefix(line[4:])
            new = _strip_prefix(lines[i][4:])
            path = new if new != "/dev/null" else old
            skip = is_test_path(path, tests) or (old != "/dev/null" and is_test_path(old, tests))
            i += 1
            continue
        h = _HUNK.match(line)
        if h:
            old_left = int(h.group(1)) if h.group(1) is not None else 1
            new_left = int(h.group(2)) if h.group(2) is not None else 1
    return out


def _strip_prefix(path: str) -> str:
    """``a/x.py`` → ``x.py``; drops a trailing tab-separated timestamp; keeps ``/dev/null``."""
    path = path.split("\t", 1)[0].strip()
    if path.startswith('"') and path.endswith('"'):
        path = path[1:-1]
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def similarity(agent_patch: str, gold_patch: str, *, test_files: Iterable[str] = ()) -> Similarity:
    """Compare an attempt's ``diff.patch`` with the task's ``gold_patch`` (see the module docstring)."""
    tests = list(test_files)
    a = changed_lines(agent_patch, test_files=tests)
    g = changed_lines(gold_patch, test_files=tests)
    na, ng = sum(a.values()), sum(g.values())
    overlap = sum((a & g).values())
    precision = overlap / na if na else 0.0
    recall = overlap / ng if ng else 0.0
    f1 = 2 * overlap / (na + ng) if na and ng else 0.0
    return Similarity(
        exact=bool(na) and a == g,
        f1=f1,
        precision=precision,
        recall=recall,
        agent_lines=na,
        gold_lines=ng,
        overlap=overlap,
    )
