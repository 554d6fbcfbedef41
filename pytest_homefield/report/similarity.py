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

Each attempt's similarity is computed once and kept in ``runs/<run_id>/similarity.json``
(:class:`SimilarityCache`, docs/contracts.md §4), keyed by the attempt and stamped with its
``diff.patch``'s size and modification time and a digest of the gold patch and test files, so a
report of a large run reads it back instead of diffing thousands of patches again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.layout import read_own_file
from pytest_homefield.paths import TEST, classify_path
from pytest_homefield.store import write_atomic

__all__ = ["Similarity", "SimilarityCache", "changed_lines", "gold_digest", "is_test_path", "similarity",
           "similarity_of_lines"]

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
    return similarity_of_lines(a, g)


def similarity_of_lines(a: Counter[tuple[str, str]], g: Counter[tuple[str, str]]) -> Similarity:
    """:func:`similarity` from the agent's and the gold patch's :func:`changed_lines` (so that a report
    reduces each gold patch once, not once per attempt)."""
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


def gold_digest(gold_patch: str, test_files: Iterable[str]) -> str:
    """16 hex digits of the sha256 of the gold patch and the task's test files: what a cached
    similarity was computed against."""
    h = hashlib.sha256(gold_patch.encode("utf-8", "surrogateescape"))
    for path in sorted(test_files):
        h.update(b"\0" + path.encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


_FIELDS = [f.name for f in dataclasses.fields(Similarity)]


class SimilarityCache:
    """``runs/<run_id>/similarity.json``: ``{"version": 1, "attempts": {"<task>/<agent>/<attempt>":
    [size, mtime_ns, gold_digest, exact, f1, precision, recall, agent_lines, gold_lines, overlap]}}``.

    :meth:`get` returns the kept :class:`Similarity` only when the ``diff.patch`` stamp (size,
    modification time in ns) and the gold digest are unchanged; :meth:`save` rewrites the file
    atomically when something was added. An unreadable or foreign file is treated as empty."""

    VERSION = 1

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        try:
            data = json.loads(read_own_file(path))  # never a link, a fifo or a huge file (hatk41)
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == self.VERSION and isinstance(data.get("attempts"), dict):
            self._entries = {k: v for k, v in data["attempts"].items() if isinstance(v, list) and len(v) == 10}

    @staticmethod
    def stamp(patch_path: Path | str) -> tuple[int, int] | None:
        """``(size, mtime_ns)`` of ``patch_path``; ``None`` when it cannot be read."""
        try:
            st = os.stat(patch_path)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def get(self, key: str, stamp: tuple[int, int], digest: str) -> Similarity | None:
        """The kept similarity of attempt ``key`` if it was computed from the same file and gold."""
        e = self._entries.get(key)
        if e is None or e[0] != stamp[0] or e[1] != stamp[1] or e[2] != digest:
            return None
        return Similarity(*e[3:])  # the fields in _FIELDS order

    def put(self, key: str, stamp: tuple[int, int], digest: str, sim: Similarity) -> None:
        """Keep ``sim`` for attempt ``key``."""
        self._entries[key] = [stamp[0], stamp[1], digest, *(getattr(sim, f) for f in _FIELDS)]
        self._dirty = True

    def save(self) -> None:
        """Write the file (atomically) when :meth:`put` added something; never raises for a folder
        that cannot be written (the next report computes again)."""
        if not self._dirty:
            return
        try:
            write_atomic(self.path, json.dumps({"version": self.VERSION, "attempts": self._entries},
                                               separators=(",", ":")) + "\n")
        except OSError:
            return
        self._dirty = False
