"""The folders no test run and no agent is given (docs/contracts.md §7, §9): the repository under benchmark,
whose ``.homefield/`` holds every task's gold patch and hidden tests, and whose HEAD holds the fixes.

A session registers its repository once per process (:func:`protect`, from ``pytest_configure``). Then
a ``PYTHONPATH`` entry of the user's that lies inside a protected folder or holds one is neither passed
to a test run (:func:`outside_pythonpath`, used by :func:`~pytest_homefield.sandbox.testrun.scrubbed_env`,
which puts the same folder of the copy under test in place of one inside, :func:`in_copy`) nor bound
into a sandbox, and no read-only bind of bubblewrap holds a protected folder (:func:`holds_protected`,
used by :func:`~pytest_homefield.sandbox.bwrap.bwrap_argv`). Nor does any read-only path of a sandbox hold the
user's home folder (:func:`holds_home`, used there and by Landlock's policy): a client or interpreter whose real
file is ``~/bin/NAME`` has the home as its install prefix, and binding it gave the sandbox ``~/.ssh`` and every
credential of the user's (satk58). Paths are compared resolved (symlinks followed; a relative entry against the
current folder).
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["protect", "protected", "holds_protected", "holds_home", "homes", "touches_protected",
           "outside_pythonpath", "in_copy"]

_PROTECTED: list[Path] = []


def protect(folder: Path | str) -> None:
    """Register ``folder`` (resolved) as protected for the rest of this process."""
    path = Path(folder).resolve()
    if path not in _PROTECTED:
        _PROTECTED.append(path)


def protected() -> list[Path]:
    """The folders registered with :func:`protect`, resolved."""
    return list(_PROTECTED)


def _holds(path: Path | str, folders: Iterable[Path]) -> bool:
    """Whether ``path`` (resolved) is one of ``folders`` (resolved) or an ancestor of one."""
    resolved = Path(os.path.realpath(path))
    return any(p == resolved or p.is_relative_to(resolved) for p in folders)


def holds_protected(path: Path | str) -> bool:
    """Whether ``path`` is a protected folder or one of its ancestors (binding it would show it)."""
    return _holds(path, _PROTECTED)


def homes() -> list[Path]:
    """The user's home folders, resolved: ``$HOME`` of this process and its account's (``pwd``), each when set and
    an absolute path."""
    out: list[Path] = []
    candidates = [os.environ.get("HOME", "")]
    try:
        candidates.append(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:  # a uid with no account
        pass
    for c in candidates:
        if c and os.path.isabs(c) and (home := Path(os.path.realpath(c))) not in out:
            out.append(home)
    return out


def holds_home(path: Path | str, folders: Sequence[Path] | None = None) -> bool:
    """Whether ``path`` is the user's home folder or one of its ancestors (``folders``: :func:`homes`, asked
    here when ``None``; a caller testing many paths asks once): binding it would show the user's dotfiles
    (``~/.ssh``, cloud and forge credentials, other repositories), which no sandbox gets (docs/contracts.md §9)."""
    return _holds(path, homes() if folders is None else folders)


def touches_protected(path: Path | str) -> bool:
    """Whether ``path`` lies inside a protected folder or holds one (:func:`holds_protected`)."""
    resolved = Path(os.path.realpath(path))
    return holds_protected(resolved) or any(resolved.is_relative_to(p) for p in _PROTECTED)


def in_copy(entry: str, copy: Path) -> Path | None:
    """Where the folder ``entry`` (inside a protected folder) lies in ``copy``, a copy of that folder's
    tree (``copy / <entry relative to it>``); ``None`` when ``entry`` is inside no protected folder."""
    resolved = Path(os.path.realpath(entry or "."))
    for p in _PROTECTED:
        if resolved.is_relative_to(p):
            return copy / resolved.relative_to(p)
    return None


def outside_pythonpath(value: str) -> tuple[list[str], list[str]]:
    """The entries of the ``PYTHONPATH`` ``value`` split into ``(kept, dropped)``: an entry is dropped
    when it lies inside a protected folder or holds one (an empty entry means the current folder)."""
    kept: list[str] = []
    dropped: list[str] = []
    for entry in value.split(os.pathsep) if value else []:
        (dropped if touches_protected(entry or ".") else kept).append(entry)
    return kept, dropped
