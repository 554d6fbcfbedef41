"""The order in which a mine under ``--time-budget`` verifies its candidates: cheapest first (mine29).

A candidate's verification costs about as much as its runnable test files take to run twice in full
(parent run 1 and commit run 1; the later runs are targeted), so a budget spent newest first on a
repository with slow test files (simonw/llm: one candidate of three large files took 211–282 s) verifies
a few expensive candidates and leaves the cheap ones unverified. Under a time budget the candidates are
verified in order of :func:`bytes_of_tests` (the bytes of their runnable test files at the commit, read from
git, no test run), ties newest first (scan order); without a budget the order does not change what is
mined, and scan order (newest first) stays. The order is the same in every process (xdist workers collect
the same items in the same order)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.snapshot import git

__all__ = ["bytes_of_tests", "cheapest_first"]


def bytes_of_tests(root: Path, commit: str, paths: Sequence[str]) -> int:
    """The bytes of ``paths`` (repository-relative) at ``commit`` in the repository at ``root``, summed; a
    path that is not a file there (deleted, a submodule) counts 0, and so does everything when git cannot
    read the commit. One ``git ls-tree`` process."""
    if not paths:
        return 0
    out = git("ls-tree", "-l", "-z", "--full-tree", commit, "--", *paths, cwd=root,
              env={"GIT_LITERAL_PATHSPECS": "1"}, check=False)
    total = 0
    for entry in out.split("\0"):
        meta = entry.split("\t", 1)[0].split()
        if len(meta) == 4 and meta[1] == "blob" and meta[3].isdigit():
            total += int(meta[3])
    return total


def cheapest_first(candidates: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``candidates`` (``candidates.jsonl`` records, in scan order: newest first) ordered by their
    ``test_bytes``, smallest first, ties in scan order; a record without ``test_bytes`` (frozen before
    it existed) goes last, in scan order."""
    big = float("inf")
    ranked = sorted(enumerate(candidates), key=lambda kc: (kc[1].get("test_bytes", big), kc[0]))
    return [c for _, c in ranked]
