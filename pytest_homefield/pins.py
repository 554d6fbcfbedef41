"""Folders pinned by descriptor while the host works in them (issue 30, link48; docs/contracts.md §9).

An attempt's folder (``runs/<run>/attempts/<task>/<agent>/<n>/``) is one an agent or graded code can reach under
``--sandbox none``: while the attempt runs it can move ``<agent>/`` away and put a symlink in its place, and a path
spelled from the run's folder then leads the host into the folder the link names, whatever ``O_NOFOLLOW`` does for
the path's last component. :func:`pinned` binds the folder's absolute path (as spelled, no link resolved) to a
descriptor opened once, reached without following a link; :func:`folder_fd` opens any folder at or below it from
that descriptor, one component at a time with ``O_DIRECTORY | O_NOFOLLOW``. The openers of homefield's own files
(:func:`pytest_homefield.store.open_own`, :mod:`pytest_homefield.sandbox.nofollow`) go through it, so every file
of the folder is reached through the descriptor, never through a link swapped in above it or below it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["pinned", "folder_fd", "folder_below", "make_folder", "open_in_pinned", "descend"]

#: absolute path (``os.path.abspath``: no link resolved) → the folder's descriptor, while pinned
_PINS: dict[str, int] = {}
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def pinned(path: Path | str, fd: int) -> Iterator[None]:
    """Pin the folder ``path`` to ``fd`` (its descriptor, ``O_DIRECTORY | O_NOFOLLOW``, opened by the caller without
    following a link) for the block; ``fd`` is closed after it (also when this raises). Process-wide (every
    thread); pins of distinct paths may nest. Raises ``ValueError`` when ``path`` is pinned already."""
    key = os.path.abspath(path)
    if key in _PINS:
        os.close(fd)
        raise ValueError(f"folder pinned already: {key}")
    _PINS[key] = fd
    try:
        yield
    finally:
        del _PINS[key]
        os.close(fd)


def folder_fd(path: Path | str) -> int | None:
    """A new descriptor (``O_DIRECTORY``, close-on-exec, for the caller to close) of the folder ``path`` when it is a
    pinned folder or below one, reached from the pin's descriptor one component at a time without following a link;
    ``None`` when no pinned folder holds it (the caller opens the path as it would). Costs one dictionary look-up per
    component of ``path`` while anything is pinned, none otherwise. Raises ``OSError``: ``ELOOP`` (a component below
    the pin is a symlink), ``ENOTDIR`` (not a folder), ``ENOENT``."""
    if not _PINS:
        return None
    found = _pin_above(path)
    if found is None:
        return None
    pin, below = found
    return _from_pin(pin, below)


def _pin_above(path: Path | str) -> tuple[int, list[str]] | None:
    """The descriptor of the pinned folder at or above ``path`` and the names from it down to ``path``; ``None`` when
    no pinned folder holds ``path``. One dictionary look-up per component of ``path``."""
    head = os.path.abspath(path)
    below: list[str] = []
    while (pin := _PINS.get(head)) is None:
        up, name = os.path.split(head)
        if up == head:
            return None
        below.append(name)
        head = up
    below.reverse()
    return pin, below


def _from_pin(pin: int, names: Iterable[str], *, create: bool = False) -> int:
    """:func:`descend` from a new descriptor of the pinned folder ``pin`` (the pin's own stays open)."""
    return descend(os.open(".", _DIR_FLAGS, dir_fd=pin), names, create=create)


def folder_below(root: Path | str, path: Path | str, *, create: bool = False) -> int:
    """A new descriptor (``O_DIRECTORY``, close-on-exec, for the caller to close) of the folder ``path``, at or below
    ``root``: ``root`` opened as given (a link in its own path is followed: the user's linked ``.homefield/``, as
    :func:`pytest_homefield.store.open_own`'s folders above), or from its pin (:func:`folder_fd`); every folder below
    it reached one component at a time without following a link, made first (mode 0o777 & ~umask) with
    ``create`` (link52: a worker's artifacts read and the controller's written by path went through a link
    swapped in below ``.homefield/``). Raises ``ValueError`` when ``path`` is not at or below ``root``;
    ``OSError``: ``ELOOP`` (a symlink below ``root``), ``ENOTDIR``, ``ENOENT``."""
    top, there = os.path.abspath(root), os.path.abspath(path)
    rel = os.path.relpath(there, top)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        raise ValueError(f"{there} is not below {top}")
    fd = folder_fd(top)
    if fd is None:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return descend(fd, () if rel == os.curdir else rel.split(os.sep), create=create)


def descend(fd: int, names: Iterable[str], *, create: bool = False, made: list[str] | None = None,
             enter: Callable[[int, str, str], int] | None = None) -> int:
    """The folder reached from folder ``fd`` through ``names``, one at a time without following a link (each made
    first with ``create``, its path from ``fd`` (``a/b``) appended to ``made``; one there already is kept): its new
    descriptor. ``fd`` is consumed (closed, also when this raises). ``enter(fd, name, path from fd)``: opens one
    folder (default :func:`_open_sub`; :mod:`~pytest_homefield.sandbox.nofollow` names the path in its own error).
    Raises ``OSError`` as ``enter`` and ``os.mkdir``."""
    done: list[str] = []
    try:
        for name in names:
            done.append(name)
            if create:
                try:
                    os.mkdir(name, dir_fd=fd)
                    if made is not None:
                        made.append("/".join(done))
                except FileExistsError:
                    pass
            sub = _open_sub(fd, name) if enter is None else enter(fd, name, "/".join(done))
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_folder(path: Path | str, *, fresh: bool = False) -> None:
    """Make the folder ``path`` and its missing parents (mode 0o777 & ~umask; one there already is kept): at or below
    a pinned folder, from the pin's descriptor, each folder made with ``os.mkdir(name, dir_fd=…)`` and entered
    without following a link (link52: ``mkdir`` by path under an attempt's folder, its ``home/`` and ``tmp/`` for a
    test run, ``scratch/``, went through a folder swapped for a link above it and made the folder where the link
    pointed); elsewhere by path (``Path.mkdir(parents=True, exist_ok=True)``). ``fresh``: ``path`` itself must be
    new (``FileExistsError`` otherwise); by path its parents are not made either (``Path.mkdir()``). Raises
    ``OSError``: ``ELOOP`` (a symlink below the pin), ``ENOTDIR``, ``FileExistsError``."""
    found = _pin_above(path)
    if found is None:
        if fresh:
            Path(path).mkdir()
        else:
            Path(path).mkdir(parents=True, exist_ok=True)
        return
    pin, below = found
    if not fresh:
        os.close(_from_pin(pin, below, create=True))
        return
    if not below:
        raise FileExistsError(errno.EEXIST, "the pinned folder itself", str(path))
    *up, name = below
    fd = _from_pin(pin, up, create=True)
    try:
        os.mkdir(name, dir_fd=fd)
    finally:
        os.close(fd)


def _open_sub(fd: int, name: str) -> int:
    """The folder ``name`` of folder ``fd``; a symlink there raises ``OSError`` ``ELOOP`` (Linux says ``ENOTDIR``
    for ``O_DIRECTORY | O_NOFOLLOW`` on a link)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, "a symlink, never followed", name) from None
        raise


def open_in_pinned(path: Path | str, flags: int, mode: int = 0o644) -> int | None:
    """``os.open(path, flags, mode)`` of an entry at or below a pinned folder, its folder reached by
    :func:`folder_fd` (``flags`` should hold ``O_NOFOLLOW`` for the entry itself); ``None`` when no pinned folder
    holds ``path`` (nothing opened). Raises ``OSError`` as :func:`folder_fd` and ``os.open`` do."""
    if not _PINS:
        return None
    folder, name = os.path.split(os.path.abspath(path))
    fd = folder_fd(folder)
    if fd is None:
        return None
    try:
        return os.open(name, flags, mode, dir_fd=fd)
    finally:
        os.close(fd)
