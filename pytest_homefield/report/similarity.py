"""Secondary score: how close an attempt's diff is to the task's gold patch.

The test-based outcome is the result; this is a diagnostic beside it. Both diffs are reduced to a
multiset of changed lines, ``("+", stripped text)`` for an added line and ``("-", stripped text)``
for a removed one, over **non-test files only** (the agent's edits to test files are thrown away by
grading, and the gold patch has none). What is a test file is decided by
:func:`pytest_homefield.mine.classify.classify_path`, the rule mining and grading use. Blank lines
(after stripping) are ignored, as are diff headers, hunk headers and ``GIT binary patch`` blocks.

* ``exact``: the two multisets are equal and non-empty.
* ``f1``: edit-F1 of the overlap, ``2·|A ∩ G| / (|A| + |G|)`` with multiset intersection
  (precision = overlap / agent lines, recall = overlap / gold lines). 0.0 when either side is empty.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_homefield.mine.classify import TEST, classify_path

__all__ = ["Similarity", "changed_lines", "is_test_path", "similarity"]

_DIFF_GIT = re.compile(r"^diff --git a/(.*?) b/(.*)$")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


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


def is_test_path(path: str, test_files: Iterable[str] = (), test_globs: Sequence[str] = ()) -> bool:
    """True for a path that grading treats as a test file: one of the task's ``test_files``, or a
    path of class ``test`` for :func:`~pytest_homefield.mine.classify.classify_path` with the extra
    ``test_globs`` (test modules, ``conftest.py`` and other support files, anything under a test
    folder such as ``tests/``, ``__tests__/``, ``testdata/`` or a top-level ``testing/``/``spec/``)."""
    return path in set(test_files) or classify_path(path, test_globs) == TEST


def changed_lines(patch: str, *, test_files: Iterable[str] = (),
                  test_globs: Sequence[str] = ()) -> Counter[tuple[str, str]]:
    """Multiset of ``(sign, stripped line)`` changed by a unified diff, over non-test files
    (:func:`is_test_path` with ``test_files`` and ``test_globs``).

    ``sign`` is ``"+"`` or ``"-"``. Accepts ``git diff`` output (with ``diff --git`` headers) and plain
    unified diffs (``---``/``+++`` headers only).
    """
    tests = set(test_files)
    globs = tuple(test_globs)
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
            skip = is_test_path(m.group(2), tests, globs) or is_test_path(m.group(1), tests, globs)
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
            skip = is_test_path(path, tests, globs) or (old != "/dev/null" and is_test_path(old, tests, globs))
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


def similarity(agent_patch: str, gold_patch: str, *, test_files: Iterable[str] = (),
               test_globs: Sequence[str] = ()) -> Similarity:
    """Compare an attempt's ``diff.patch`` with the task's ``gold_patch`` (see the module docstring);
    ``test_files`` and ``test_globs`` as for :func:`is_test_path`."""
    tests = list(test_files)
    a = changed_lines(agent_patch, test_files=tests, test_globs=test_globs)
    g = changed_lines(gold_patch, test_files=tests, test_globs=test_globs)
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
