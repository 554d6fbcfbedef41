"""Editable installs of the project under benchmark, seen from a test run (docs/contracts.md §7).

An editable install (``pip install -e .`` with flit, hatchling, setuptools' src layout, ``uv pip install -e``)
leaves a ``.pth`` file in the environment's site folder naming a folder of the repository (``/repo/src``).
The sandbox never shows the repository (:mod:`.protected`), so a child process a test starts with its own
``PYTHONPATH`` (werkzeug's dev server: ``PYTHONPATH=<tmp>``) could not import the project at all and a test
waiting for it hangs until the run's timeout (wz51). :func:`editable_binds` names, for each such entry, the
same folder of the copy under test, bound read-only at the entry's path: the child imports the graded copy,
never HEAD's files nor the user's checkout (nothing of the repository itself is bound).

Only plain path lines of ``.pth`` files are followed; setuptools' ``__editable__`` finder hooks (an ``import``
line and a module mapping names to paths) are not (left: a flat-layout setuptools editable install).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path

from pytest_homefield.sandbox.protected import in_copy, touches_protected
from pytest_homefield.store import open_own

__all__ = ["editable_binds", "PTH_MAX_BYTES"]

#: The most of one ``.pth`` file read (a path file is a few lines; a larger one is read only this far).
PTH_MAX_BYTES = 64 * 1024


def _site_dirs(prefix: Path) -> list[str]:
    """The site-packages folders of the environment at ``prefix`` (``lib*/python*/site-packages``)."""
    return sorted(glob.glob(os.path.join(glob.escape(str(prefix)), "lib*", "python*", "site-packages")))


def _pth_entries(site: str) -> list[str]:
    """The absolute paths the ``.pth`` files of folder ``site`` add to ``sys.path`` (as :mod:`site` reads
    them: a line that is neither empty, a comment nor an ``import`` line, joined to ``site``); a file that is
    not a regular file (a symlink, a fifo) is skipped
    (:func:`~pytest_homefield.store.open_own`), each read only to :data:`PTH_MAX_BYTES`."""
    out: list[str] = []
    for name in sorted(os.listdir(site)):
        if not name.endswith(".pth"):
            continue
        try:  # a link, fifo or device: NotOwnFile, an OSError
            fd = open_own(os.path.join(site, name), os.O_RDONLY, blocking=False)
        except OSError:
            continue
        try:
            text = os.read(fd, PTH_MAX_BYTES).decode("utf-8", "replace")
        finally:
            os.close(fd)
        for line in text.splitlines():
            line = line.rstrip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            out.append(os.path.normpath(os.path.join(site, line)))
    return out


def editable_binds(prefixes: Iterable[Path], copy: Path) -> list[tuple[Path, Path]]:
    """``(source, destination)`` read-only binds for a test run of ``copy`` (the copy under test of the
    protected repository): for each path a ``.pth`` file of the environments at ``prefixes`` (a venv's folder,
    an interpreter's prefix) names inside a protected folder, the same folder of ``copy`` (resolved; only when
    it is a folder that lies inside ``copy`` and touches no protected folder: a symlink in the copy pointing
    back into the repository binds nothing) at that path. Reads only the site folders and their ``.pth``
    files; raises nothing (an unreadable folder adds nothing)."""
    base = Path(os.path.realpath(copy))
    out: list[tuple[Path, Path]] = []
    for prefix in prefixes:
        for site in _site_dirs(Path(prefix)):
            try:
                entries = _pth_entries(site)
            except OSError:
                continue
            for entry in entries:
                if not touches_protected(entry):
                    continue
                target = in_copy(entry, base)
                if target is None:
                    continue  # a folder holding the repository: never bound
                source = Path(os.path.realpath(target))
                if not source.is_relative_to(base) or touches_protected(source) or not source.is_dir():
                    continue
                pair = (source, Path(entry))
                if pair not in out:
                    out.append(pair)
    return out
