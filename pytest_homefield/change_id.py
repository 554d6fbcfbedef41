"""One change, one id: the rule that tells two commits (or two tasks) apart as changes (link52).

The scan's filter 12 (``duplicate_change``, :func:`pytest_homefield.mine.scan_git.patch_ids`) and a run's header
warning that ``tasks.jsonl`` holds one change as two tasks (:mod:`pytest_homefield.run.one_change`) ask this module,
so that what the scan sets aside is what the header warns about, and nothing else. A change's id is the
``git patch-id --stable`` of its diff (line numbers, ``index`` lines, white space and file order ignored) taken of
the changed lines alone (no context line: a backport makes the same changes beside other lines, nu48: pallets/
werkzeug de546be7144c and d3d3df56c98b) and without the file diffs of its docs files (a backport writes its
changelog entry under another release's heading: 664deb6a58c8 and b913d68db589). The scan reads each commit's diff
with ``-U0``; a task's patches hold three lines of context, which are dropped here, so both give the same id for
the same change (before, the header took the id of the whole stored patches, context and docs files included: the
two backports above were one candidate to the scan and two changes to the header). Ids are compared within a
mode only (a merge and a commit it merges are both offered on purpose, ``merges`` without ``first_parent``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

__all__ = ["ChangeIdError", "diff_paths", "log_ids", "change_ids"]


class ChangeIdError(RuntimeError):
    """``git patch-id`` could not be run or failed (one line)."""


def _diff_path(header: bytes) -> bytes:
    """The path of a ``diff --git a/P b/P`` line (no renames: both sides name one path, so the line is ``a/`` + P +
    `` b/`` + P whatever P holds); a quoted header (a path git escapes) yields the quoted text, which matches no
    repository path."""
    rest = header[len(b"diff --git a/"):].rstrip(b"\r\n")
    return rest[: (len(rest) - 3) // 2]


def diff_paths(patch: str) -> list[str]:
    """The paths of the file diffs of ``patch`` (a unified git diff without renames), in order."""
    return [_diff_path(line.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")
            for line in patch.splitlines() if line.startswith("diff --git a/")]


def _changed_lines(src: Iterable[bytes], dst: BinaryIO, leave_out: Mapping[str, Collection[str]]) -> None:
    """Copy the ``git log -p`` text ``src`` (``commit <id>`` lines, then the commit's file diffs) to ``dst`` without
    the file diffs whose path ``leave_out`` names for their commit and without context lines (a hunk's lines that
    start with a space, and a ``\\ No newline at end of file`` after one): what ``-U0`` shows of the same diff. Line
    by line: a log of hundreds of commits is never held whole."""
    drop: frozenset[bytes] = frozenset()
    skipping = in_hunk = dropped = False
    for line in src:
        if line.startswith(b"commit ") and len(line.split()) == 2:
            drop = frozenset(p.encode("utf-8", "surrogateescape") for p in leave_out.get(line.split()[1].decode(
                "ascii", "replace"), ()))
            skipping = in_hunk = False
        elif line.startswith(b"diff --git a/"):
            skipping, in_hunk = _diff_path(line) in drop, False
        elif line.startswith(b"@@ "):
            in_hunk = True
        elif in_hunk and (line.startswith(b" ") or line in (b"\n", b"\r\n") or (dropped and line.startswith(b"\\"))):
            dropped = True  # a context line (an empty one is a blank context line some tools write), or its marker
            continue
        dropped = False
        if not skipping:
            dst.write(line)


def log_ids(log: Path, leave_out: Mapping[str, Collection[str]] | None = None) -> dict[str, str]:
    """The change id of each commit of the ``git log -p`` text in the file ``log`` (``--format=commit %H`` or any
    ``commit <id>`` line before each commit's diffs), by that id; a commit whose diff is empty (or all left out) has
    none. ``leave_out``: an id → paths whose file diffs are no part of its change (its docs files). One
    ``git patch-id --stable`` process, reading a filtered copy of ``log`` in a temp folder, with no repository's or
    user's git configuration. Raises :class:`ChangeIdError`."""
    with tempfile.TemporaryDirectory(prefix="homefield-change-ids-") as folder:
        kept = Path(folder) / "kept"
        with log.open("rb") as src, kept.open("wb") as dst:
            _changed_lines(src, dst, leave_out or {})
        # no repository's or user's configuration (``patchid.verbatim`` would count white space): outside any
        # repository, system and global configuration ignored
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CEILING_DIRECTORIES": folder}
        with kept.open("rb") as stdin:
            try:
                proc = subprocess.run(["git", "patch-id", "--stable"], stdin=stdin, capture_output=True, cwd=folder,
                                      env=env, timeout=600, check=False)
            except (OSError, subprocess.SubprocessError) as exc:
                raise ChangeIdError(f"git patch-id failed: {exc}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ChangeIdError(f"git patch-id failed: {err[0] if err else f'exit status {proc.returncode}'}")
    ids: dict[str, str] = {}
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        patch, _, name = line.partition(" ")
        ids[name.strip()] = patch
    return ids


def change_ids(changes: Mapping[str, str], leave_out: Mapping[str, Collection[str]] | None = None) -> dict[str, str]:
    """:func:`log_ids` of ``changes`` (a key → its unified diff text, e.g. a task's ``gold_patch`` then
    ``test_patch``): the id of each, by key (a change with no diff has none). Raises :class:`ChangeIdError`."""
    keys = list(changes)
    name = {key: f"{n:040x}" for n, key in enumerate(keys)}  # what git patch-id reads as a commit's name
    with tempfile.TemporaryDirectory(prefix="homefield-changes-") as folder:
        log = Path(folder) / "log"
        with log.open("wb") as f:
            for key in keys:
                patch = changes[key]
                f.write(f"commit {name[key]}\n\n".encode("ascii"))
                f.write(patch.encode("utf-8", "surrogateescape"))
                if patch and not patch.endswith("\n"):
                    f.write(b"\n")
        ids = log_ids(log, {name[k]: v for k, v in (leave_out or {}).items() if k in name})
    return {key: ids[name[key]] for key in keys if name[key] in ids}
