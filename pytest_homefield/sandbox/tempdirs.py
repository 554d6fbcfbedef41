"""Temp folders that name their owner process, so a later run can remove the ones a killed run left.

Every temp folder homefield makes (snapshots, workspaces, grading copies, git dirs) is
``<tmp>/hf-<pid>.<start>-<random>``: ``pid`` and ``start`` (the process start time in clock ticks
from ``/proc/<pid>/stat``, so a reused pid is not mistaken for the owner) identify the process that
made it, and nothing in the name says which task or commit it holds. :func:`sweep_stale` removes
the folders whose owner is gone; :func:`remove_own` removes this process's folders (on a signal,
where ``finally`` blocks do not run). :func:`scratch` is such a folder for a ``with`` block, removed by
descriptor (never ``tempfile.TemporaryDirectory``, whose clean-up follows links: hatk34).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_homefield.sandbox.nofollow import remove_tree

__all__ = ["mkdtemp", "scratch", "sweep_stale", "remove_own", "owner_tag", "owner_alive", "pid_exists"]

_NAME = re.compile(r"^hf-(\d+)\.(\d+)-")


def _start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks), or ``None`` if no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def owner_tag(pid: int | None = None) -> str:
    """``<pid>.<start>`` of ``pid`` (default: this process); start is ``0`` where ``/proc`` is absent."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{_start_time(pid) or 0}"


def mkdtemp(dir: Path | str | None = None) -> Path:
    """A new private temp folder ``hf-<pid>.<start>-XXXXXXXX`` in ``dir`` (default: the temp dir)."""
    return Path(tempfile.mkdtemp(prefix=f"hf-{owner_tag()}-", dir=dir))


@contextmanager
def scratch(dir: Path | str | None = None, suffix: str = "") -> Iterator[Path]:
    """A new private temp folder ``hf-<pid>.<start>-<suffix>XXXXXXXX`` in ``dir`` (default: the temp dir) for
    the ``with`` block, removed on every way out by :func:`~pytest_homefield.sandbox.nofollow.remove_tree`: by
    descriptor, no link followed, at any depth, the owner's access given back to a folder only by descriptor.

    For a folder an agent or graded code wrote (a probe call's cwd, ``TMPDIR`` and ``HOME``; a grading copy).
    ``tempfile.TemporaryDirectory`` removed those with ``shutil.rmtree`` and, on a ``PermissionError`` (an
    entry in a folder the agent made ``chmod 500``), ran ``chmod(entry, 0o700)``, which follows a symlink: a
    link to a file of the user made that file ``0700`` (hatk34); and a chain of 3,000 folders raised
    ``RecursionError`` out of it and was left behind."""
    path = Path(tempfile.mkdtemp(prefix=f"hf-{owner_tag()}-{suffix}", dir=dir))
    try:
        yield path
    finally:
        remove_tree(path)


def owner_alive(pid: int, start: str) -> bool:
    """Whether the process :func:`owner_tag` named ``<pid>.<start>`` still runs: ``pid`` exists and started at
    ``start`` (a pid reused by another process since is not it); ``start`` ``"0"`` (no ``/proc`` when tagged): the
    pid exists."""
    now = _start_time(pid)
    if now is None:
        return not Path("/proc").is_dir() and pid_exists(pid)
    return start == "0" or now == start


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts: it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(tmpdir: Path | str | None = None) -> list[Path]:
    """Remove every ``hf-<pid>.<start>-*`` folder in ``tmpdir`` whose owner process is gone.
    Returns the folders removed. Never raises for folders it cannot read or remove."""
    root = Path(tmpdir or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = _NAME.match(entry.name)
        if not m or owner_alive(int(m.group(1)), m.group(2)):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                remove_tree(entry)
                if not entry.exists():
                    removed.append(entry)
        except OSError:
            continue
    return removed


def remove_own(tmpdir: Path | str | None = None) -> None:
    """Remove every temp folder this process made in ``tmpdir`` (default: the temp dir)."""
    root = Path(tmpdir or tempfile.gettempdir())
    for entry in root.glob(f"hf-{owner_tag()}-*"):
        remove_tree(entry)
