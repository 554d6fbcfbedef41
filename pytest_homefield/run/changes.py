"""The agent's change, read from its workspace without following its links (docs/contracts.md §7; issue 30).

After the agent stopped, its workspace is compared with the pristine tree, the change is rendered as
a diff, and the carried entries are copied into the grading copy. All of it goes through
:mod:`pytest_homefield.sandbox.nofollow`: the trees are walked by folder descriptor, a symlink is an
entry compared by its target and never entered, and every read or write reaches its entry one
component at a time without following a link. So a folder the agent replaced by a link to a host
folder (before grading, or while it runs) brings nothing from outside the workspace into the diff
or the grading copy, and nothing is written outside the grading copy.

The diff of each path is taken from private copies of its two sides (:func:`render_diff`), never from
the workspace itself: ``git diff --no-index`` follows a link given as an argument. Git runs with
:func:`~pytest_homefield.sandbox.snapshot.inert_git_env`: no configuration or attributes file the agent
wrote (its ``.gitattributes`` is among the copies) makes it run a program or hide a change.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.snapshot import inert_git_env
from pytest_homefield.sandbox.tempdirs import owner_tag
from pytest_homefield.settings_table import option

__all__ = ["IGNORED_DIRS", "IGNORED_SUFFIXES", "walk_tree", "tree_changes", "render_diff", "capped_diff", "Diff",
           "CUT_LINE", "apply_change",
           "is_link", "link_target", "read_text", "resolves_inside", "MAX_LINKS"]

#: Links followed at most while resolving one (Linux's own limit, ``MAXSYMLINKS``: 40).
MAX_LINKS = 40

#: Folders and files that are never part of a change (caches the agent or tests may create).
IGNORED_DIRS = {".git", ".homefield", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
                ".tox", ".nox", ".venv-homefield"}
IGNORED_SUFFIXES = (".pyc", ".pyo")


def _skip_dir(name: str) -> bool:
    return name in IGNORED_DIRS or name.lower().endswith(".egg-info")  # as importlib.metadata matches it


def _skip(name: str) -> bool:
    # a ".git" file (gitdir pointer) is git's too
    return name == ".git" or name.endswith(IGNORED_SUFFIXES)


def walk_tree(root: Path) -> dict[str, nofollow.Entry]:
    """Every entry of the tree at ``root`` by relative POSIX path (:func:`nofollow.walk`): files,
    symlinks (a link to a folder is one entry, never entered) and special files, without
    :data:`IGNORED_DIRS`, ``*.egg-info`` folders, ``*.pyc``/``*.pyo`` and ``.git`` entries."""
    return nofollow.walk(root, skip_dir=_skip_dir, skip=_skip)


def tree_changes(pristine: Path, workspace: Path) -> dict[str, str]:
    """``{relative path: "added" | "modified" | "deleted"}`` between two trees, sorted, ignoring ``.git``
    and caches (:func:`walk_tree`). Symlinks compare by target, files by owner-execute bit and content
    (:func:`nofollow.same_entry`); a special file is always a change."""
    before = walk_tree(pristine)
    after = walk_tree(workspace)
    changes: dict[str, str] = {}
    for rel in after:
        if rel not in before:
            changes[rel] = "added"
        elif not nofollow.same_entry(pristine, workspace, rel):
            changes[rel] = "modified"
    for rel in before:
        if rel not in after:
            changes[rel] = "deleted"
    return dict(sorted(changes.items()))


def _stage(copier: nofollow.EntryCopier, rel: str) -> None:
    """Copy the entry ``rel`` with ``copier`` when it is a file or symlink reachable without following a
    link; otherwise leave that side empty."""
    try:
        copier.copy(rel)
    except (OSError, ValueError):
        pass


#: The last line of a diff cut at its cap (:func:`capped_diff`); ``{limit}`` is the cap in bytes.
CUT_LINE = (f"[homefield: the diff is cut at {{limit}} bytes ({option('max-output-mb', 'cli')}); the rest of the "
            "change is not kept]")


class Diff(NamedTuple):
    """A rendered diff: its ``text`` and whether it was ``cut`` at the cap (then its last line is
    :data:`CUT_LINE`)."""

    text: str
    cut: bool


def render_diff(pristine: Path, workspace: Path, paths: Iterable[str], changes: dict[str, str]) -> str:
    """The whole diff of ``paths`` (:func:`capped_diff` without a cap)."""
    return capped_diff(pristine, workspace, paths, changes, None).text


def capped_diff(pristine: Path, workspace: Path, paths: Iterable[str], changes: dict[str, str],
                limit: int | None) -> Diff:
    """A unified, binary-safe diff (``git diff --no-index --no-renames --binary``) of ``paths`` from the pristine
    tree to the workspace, with ``a/<path>`` / ``b/<path>`` headers, in git's order of the paths (a moved file
    is a deletion and an addition, as in a task's gold patch); with
    ``limit`` (bytes) at most that many bytes of git's output are read, and a longer diff is cut after
    its last whole line within them, with :data:`CUT_LINE` as its last line (git is stopped there).

    The cap bounds what an agent's change costs the host: within the workspace caps (500 MiB), files
    of short lines made a diff up to twice their size, and the host process held about 47 bytes per byte
    of it (atk19: 96 MB of three-byte lines took 4.6 GB of memory; 98 MB of empty ones, a 196 MB ``diff.patch``).

    Both sides of every path are first copied (:func:`nofollow.copy_entry`) into a private folder pair,
    and one git process compares those folders (one per path took 10 minutes for an agent that left
    20,000 empty files, attacker8's F6): a symlink is shown as a link (its target), never followed, and
    a side that is not a file or symlink reachable without following a link counts as absent."""
    todo = list(paths)
    if not todo:
        return Diff("", False)
    with tempfile.TemporaryDirectory(prefix=f"hf-{owner_tag()}-") as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        a.mkdir()
        b.mkdir()
        with nofollow.EntryCopier(pristine, a) as old, nofollow.EntryCopier(workspace, b) as new:
            for rel in todo:  # each side's folder reached once for the entries in it, not once per entry
                if changes[rel] != "added":
                    _stage(old, rel)
                if changes[rel] != "deleted":
                    _stage(new, rel)
        with inert_git_env() as env:  # the copies' .gitattributes and any .git above tmp are nothing to git
            # --no-renames: a moved file is a deletion and an addition, as in the gold patch (the scan reads
            # history so); a rename's "rename from/to" lines named the temporary folders (nu39, jsonschema)
            proc = subprocess.Popen(["git", "diff", "--no-index", "--no-renames", "--binary", "--no-color", "--",
                                     str(a), str(b)],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                    cwd=tmp, env=env)
            assert proc.stdout is not None
            with proc.stdout:
                data = proc.stdout.read() if limit is None else proc.stdout.read(limit + 1)
                cut = limit is not None and len(data) > limit
                if cut:  # the rest is never read: git is stopped
                    proc.kill()
            proc.wait()
        if cut:
            assert limit is not None
            data = data[: data.rfind(b"\n", 0, limit) + 1]
        text = data.decode("utf-8", errors="replace")
        for prefix in (str(a).lstrip("/"), str(b).lstrip("/")):
            text = text.replace(f"a/{prefix}/", "a/").replace(f"b/{prefix}/", "b/")
    return Diff(text + CUT_LINE.format(limit=limit) + "\n" if cut else text, cut)


def apply_change(workspace: Path, gdir: Path, rel: str, change: str,
                 copier: nofollow.EntryCopier | None = None) -> bool:
    """Carry one change into the grading copy ``gdir``: remove ``gdir/rel`` for ``"deleted"``, else copy
    the workspace's file or symlink there (replacing what was there). Neither tree is followed through
    a link (:mod:`pytest_homefield.sandbox.nofollow`). Returns ``False`` when the entry was not carried:
    a symlink on the way in either tree (an earlier carried entry made it a link, or the agent swapped
    one in), or a workspace entry that is gone or is no longer a file or symlink (a folder swapped in
    after the walk, a fifo). Raises ``OSError`` when writing the grading copy fails. ``copier``: a
    :class:`~pytest_homefield.sandbox.nofollow.EntryCopier` from ``workspace`` to ``gdir`` to copy with, for
    many changes in a row (forgotten before a removal; it forgets its folders itself after a failure)."""
    if change == "deleted":
        if copier is not None:
            copier.forget()
        return nofollow.remove(gdir, rel)
    try:
        if copier is not None:
            copier.copy(rel)
        else:
            nofollow.copy_entry(workspace, rel, gdir)
    except (nofollow.LinkInTheWay, FileNotFoundError):
        return False
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        return False
    return True


def is_link(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` is a symlink, reached without following one."""
    try:
        st = nofollow.lstat(root, rel)
    except ValueError:  # not a path inside the tree
        return False
    return st is not None and stat.S_ISLNK(st.st_mode)


def link_target(root: Path, rel: str) -> str | None:
    """The target of the symlink ``root/rel`` (reached without following one), else ``None``."""
    try:
        return nofollow.read_link(root, rel) if is_link(root, rel) else None
    except (OSError, ValueError):
        return None


def read_text(root: Path, rel: str) -> str | None:
    """The text of the regular file ``root/rel`` (UTF-8, errors replaced), ``None`` when it is absent,
    a symlink, behind one, or not a regular file."""
    try:
        return nofollow.read_bytes(root, rel).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def resolves_inside(root: Path, rel: str) -> bool:
    """Whether the symlink ``root/rel`` resolves inside ``root``: its target, followed through the
    tree's own links (each read with :func:`nofollow.read_link`, never followed by the system), never
    climbs above ``root`` and is never absolute. A lexical check alone misses a chain: with ``q -> .``,
    the link ``p -> q/..`` reads as ``.`` but leads to the folder above. A missing component is taken as a
    folder; more than :data:`MAX_LINKS` links (a loop) counts as outside."""
    target = link_target(root, rel)
    if target is None:
        return True
    current = list(rel_parts_or_empty(rel)[:-1])
    pending = [target]
    hops = 0
    while pending:
        text = pending.pop()
        if os.path.isabs(text):
            return False
        parts = text.split("/")
        for i, comp in enumerate(parts):
            if comp in ("", "."):
                continue
            if comp == "..":
                if not current:
                    return False
                current.pop()
                continue
            candidate = "/".join([*current, comp])
            nxt = link_target(root, candidate)
            if nxt is None:
                current.append(comp)
                continue
            hops += 1
            if hops > MAX_LINKS:
                return False
            rest = "/".join(parts[i + 1:])
            if rest:
                pending.append(rest)
            pending.append(nxt)
            break
    return True


def rel_parts_or_empty(rel: str) -> tuple[str, ...]:
    """The components of ``rel`` (:func:`nofollow.rel_parts`), ``()`` for a path that leaves its tree."""
    try:
        return nofollow.rel_parts(rel)
    except ValueError:
        return ()
