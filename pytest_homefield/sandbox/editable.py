"""Editable installs of the project under benchmark, seen from a test run (docs/contracts.md §7).

An editable install (``pip install -e .`` with flit, hatchling, setuptools' src layout, ``uv pip install -e``)
leaves a ``.pth`` file in the environment's site folder naming a folder of the repository (``/repo/src``).
The sandbox never shows the repository (:mod:`.protected`), so a child process a test starts with its own
``PYTHONPATH`` (werkzeug's dev server: ``PYTHONPATH=<tmp>``) could not import the project at all and a test
waiting for it hangs until the run's timeout (wz51). :func:`editable_binds` names, for each such entry, the
same folder of the copy under test, bound read-only at the entry's path: the child imports the graded copy,
never HEAD's files nor the user's checkout (nothing of the repository itself is bound).

setuptools' editable install of a flat layout writes no path line but an ``import`` line
(``import __editable___<name>_finder; …install()``) whose module's ``MAPPING`` names each top-level package's
folder (and each module's path less its suffix) in the repository (ops52): each such folder, or module file,
of the copy is bound there the same way. The finder module is parsed, never imported (:func:`finder_mapping`).

Under Landlock and without a sandbox nothing can be bound: a test run gets an environment of its own whose site
hooks name the copy instead (:mod:`.editable_env`, ops54).
"""

from __future__ import annotations

import ast
import functools
import glob
import os
import re
from collections.abc import Iterable
from importlib.machinery import all_suffixes
from pathlib import Path

from pytest_homefield.sandbox.protected import in_copy, touches_protected
from pytest_homefield.store import open_own

__all__ = ["editable_binds", "editable_entries", "finder_mapping", "finder_paths", "finder_literals",
           "read_own", "redirector_map", "PTH_MAX_BYTES", "FINDER_MAX_BYTES", "FINDER_IMPORT", "MODULE_IMPORT"]

#: The most of one ``.pth`` file read (a path file is a few lines; a larger one is read only this far).
PTH_MAX_BYTES = 64 * 1024
#: The most of one setuptools finder module read (its template is ~4 KB, plus one mapping line per top-level
#: name); a larger one is not parsed (maps nothing).
FINDER_MAX_BYTES = 1024 * 1024
#: The ``import`` line setuptools' editable install writes in its ``.pth`` (the finder module's name).
FINDER_IMPORT = re.compile(r"import[ \t]+(__editable___\w+_finder)\b")
#: Any ``import`` line of a ``.pth`` file: the module it imports first (hatchling's ``import _editable_impl_<name>``,
#: whose module maps each package through the ``editables`` redirector: :func:`redirector_map`).
MODULE_IMPORT = re.compile(r"import[ \t]+(\w+)[ \t]*(?:;|$)")


def _site_dirs(prefix: Path) -> list[str]:
    """The site-packages folders of the environment at ``prefix`` (``lib*/python*/site-packages``), each once
    (a venv's ``lib64`` is a link to its ``lib``)."""
    found = sorted(glob.glob(os.path.join(glob.escape(str(prefix)), "lib*", "python*", "site-packages")))
    out: dict[str, str] = {}
    for d in found:
        out.setdefault(os.path.realpath(d), d)
    return list(out.values())


def read_own(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of the regular file ``path``, never through a link, never blocking
    (:func:`~pytest_homefield.store.open_own`). Raises ``OSError`` (a link, fifo or device: ``NotOwnFile``)."""
    fd = open_own(path, os.O_RDONLY, blocking=False)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)


def redirector_map(path: str) -> list[tuple[str, str]] | None:
    """The ``(module name, file)`` pairs the ``editables`` redirector module at ``path`` maps (hatchling's editable
    install with ``dev-mode-exact``: ``_editable_impl_<name>.py`` holding ``from editables.redirector import
    RedirectingFinder as F``, ``F.install()`` and ``F.map_module('pkg', '/repo/src/pkg/__init__.py')``), parsed
    (:func:`ast.parse`), never imported: each call of a ``map_module`` attribute with two string literals; ``None``
    for a module that imports nothing of ``editables`` (another module, a link, not a regular file, larger than
    :data:`FINDER_MAX_BYTES`, not Python). Raises nothing."""
    data = _module_text(path)
    found = _redirects_of(data) if data is not None else None
    return list(found) if found is not None else None


def _module_text(path: str) -> bytes | None:
    """The bytes of the module at ``path`` (a finder or redirector a ``.pth`` file names), never through a link
    (:func:`read_own`); ``None`` for one that cannot be read so or is larger than :data:`FINDER_MAX_BYTES`."""
    try:
        data = read_own(path, FINDER_MAX_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= FINDER_MAX_BYTES else None


@functools.lru_cache(maxsize=32)
def _tree_of(data: bytes) -> ast.Module | None:
    """A module's text ``data`` parsed (one parse per text, for :func:`_literals_of` and :func:`_redirects_of`
    alike; the tree is only read); ``None`` when it is not Python."""
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


@functools.lru_cache(maxsize=32)
def _redirects_of(data: bytes) -> tuple[tuple[str, str], ...] | None:
    """:func:`redirector_map` of a module's text ``data`` (one parse per text, :func:`_tree_of`)."""
    tree = _tree_of(data)
    if tree is None:
        return None
    if not any(isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "editables" for n in tree.body):
        return None
    out: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "map_module" \
                and len(node.args) == 2 and not node.keywords \
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            name, file = (str(a.value) for a in node.args)  # type: ignore[attr-defined]
            out.append((name, file))
    return tuple(out)


def _redirected_paths(data: bytes) -> list[str]:
    """The paths the ``editables`` redirector module of text ``data`` imports from (:func:`redirector_map`), each less
    its suffix as a setuptools finder's ``MAPPING`` names it (:func:`editable_binds` binds the copy's folder there, or
    its files with an import suffix): a package's ``__init__.py`` its folder, a module's file its path less ``.py``;
    absolute paths only, once each; ``[]`` for no such module."""
    out: list[str] = []
    for _, file in _redirects_of(data) or ():
        if os.path.isabs(file):
            stem = os.path.dirname(file) if os.path.basename(file).startswith("__init__.") else \
                os.path.splitext(file)[0]
            out.append(os.path.normpath(stem))
    return list(dict.fromkeys(out))


def _pth_entries(site: str) -> tuple[list[str], list[str]]:
    """``(paths, finders)`` of the ``.pth`` files of folder ``site``: the absolute paths they add to
    ``sys.path`` (as :mod:`site` reads them: a line that is neither empty, a comment nor an ``import`` line,
    joined to ``site``) and the files of the setuptools finder modules their ``import`` lines name
    (``<site>/__editable___<name>_finder.py``). A file that is not a regular file (a symlink, a fifo) is
    skipped (:func:`~pytest_homefield.store.open_own`), each read only to :data:`PTH_MAX_BYTES`."""
    out: list[str] = []
    finders: list[str] = []
    for name in sorted(os.listdir(site)):
        if not name.endswith(".pth"):
            continue
        try:  # a link, fifo or device: NotOwnFile, an OSError
            text = read_own(os.path.join(site, name), PTH_MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.rstrip()
            if line.startswith(("import ", "import\t")):
                hook = FINDER_IMPORT.match(line) or MODULE_IMPORT.match(line)
                if hook:  # a setuptools finder, or any other module (an editables redirector: ops56)
                    finders.append(os.path.join(site, hook.group(1) + ".py"))
                continue
            if not line or line.startswith("#"):
                continue
            out.append(os.path.normpath(os.path.join(site, line)))
    return out, finders


def finder_literals(path: str) -> dict[str, object]:
    """The values of the last top-level assignments (plain or annotated) to ``MAPPING`` and ``NAMESPACES`` in the
    setuptools finder module at ``path``, parsed (:func:`ast.parse`) and read with :func:`ast.literal_eval`:
    the module is never imported. A file that is a link, not a regular file, larger than
    :data:`FINDER_MAX_BYTES` or not Python gives ``{}``; a name whose value is no literal is left out. The
    values are shared between calls on the same text (read only)."""
    data = _module_text(path)
    return dict(_literals_of(data)) if data is not None else {}


@functools.lru_cache(maxsize=32)
def _literals_of(data: bytes) -> tuple[tuple[str, object], ...]:
    """:func:`finder_literals` of a finder module's text ``data`` (one parse per text, :func:`_tree_of`: every test
    run of a session reads the same finders)."""
    tree = _tree_of(data)
    if tree is None:
        return ()
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("MAPPING", "NAMESPACES"):
                    values[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id in ("MAPPING", "NAMESPACES") and node.value is not None:
            values[node.target.id] = node.value
    out: list[tuple[str, object]] = []
    for name, value in values.items():
        try:
            out.append((name, ast.literal_eval(value)))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return tuple(out)


def _paths_of(mapping: object) -> dict[str, str]:
    """The items of ``mapping`` (a ``MAPPING`` read) naming an absolute path by a string; ``{}`` for no dict."""
    if not isinstance(mapping, dict):
        return {}
    return {k: v for k, v in mapping.items() if isinstance(k, str) and isinstance(v, str) and os.path.isabs(v)}


def finder_mapping(path: str) -> dict[str, str]:
    """The ``MAPPING`` of the setuptools editable finder module at ``path`` (``{"pkg": "/repo/pkg"}``: a
    top-level name to its folder, or to a module's path less its suffix), parsed as data, never imported
    (:func:`finder_literals`): only its items naming an absolute path by a string are kept; a ``MAPPING``
    that is no literal dict maps nothing (``{}``); raises nothing."""
    return _paths_of(finder_literals(path).get("MAPPING"))


def finder_paths(path: str) -> list[str]:
    """The paths the setuptools editable finder module at ``path`` imports from: its ``MAPPING``'s
    (:func:`finder_mapping`), then each absolute path its ``NAMESPACES`` lists for a namespace package
    (``{"ns": ["/repo/ns"]}``), in order, once each; raises nothing."""
    data = _module_text(path)
    return _finder_paths(data) if data is not None else []


def _finder_paths(data: bytes) -> list[str]:
    """:func:`finder_paths` of a finder module's text ``data``."""
    found = dict(_literals_of(data))
    out = list(_paths_of(found.get("MAPPING")).values())
    spaces = found.get("NAMESPACES")
    for paths in spaces.values() if isinstance(spaces, dict) else ():
        out += [p for p in paths if isinstance(p, str) and os.path.isabs(p)] if isinstance(paths, list) else []
    return list(dict.fromkeys(out))


def _in_copy_at(target: Path | None, base: Path, *, folder: bool) -> Path | None:
    """``target`` (the copy's counterpart of a path inside a protected folder, :func:`in_copy` with ``base``, the
    copy resolved) resolved, only when it lies inside ``base``, touches no protected folder and is a folder
    (``folder``) or a regular file; else ``None`` (a link in the copy back into the repository, a folder holding
    it; ``target`` ``None``)."""
    if target is None:
        return None
    source = Path(os.path.realpath(target))
    if not source.is_relative_to(base) or touches_protected(source):
        return None
    return source if (source.is_dir() if folder else source.is_file()) else None


def editable_entries(prefixes: Iterable[Path]) -> list[tuple[str, bool]]:
    """``(path, by_finder)`` for each path inside a protected folder that the editable installs of the
    environments at ``prefixes`` (a venv's folder, an interpreter's prefix) import from, in order, once each: a
    ``.pth`` path line's (``by_finder`` false) or a path a setuptools finder those ``.pth`` files import maps
    (:func:`finder_paths`; ``by_finder`` true: a module's path has no suffix). Reads only the site folders,
    their ``.pth`` files and the finder modules they name; raises nothing (an unreadable folder adds nothing)."""
    out: dict[str, bool] = {}
    for prefix in prefixes:
        for site in _site_dirs(Path(prefix)):
            try:
                entries, finders = _pth_entries(site)
            except OSError:
                continue
            for entry in entries:
                if touches_protected(entry):
                    out.setdefault(entry, False)
            for finder in finders:
                data = _module_text(finder)  # read once, parsed once, as a finder and as a redirector (rev58)
                for mapped in (_finder_paths(data) + _redirected_paths(data)) if data is not None else []:
                    entry = os.path.normpath(mapped)
                    if touches_protected(entry):
                        out.setdefault(entry, True)
    return list(out.items())


def editable_binds(prefixes: Iterable[Path], copy: Path) -> list[tuple[Path, Path]]:
    """``(source, destination)`` read-only binds for a test run of ``copy`` (the copy under test of the
    protected repository): for each path a ``.pth`` file of the environments at ``prefixes`` names inside a
    protected folder (:func:`editable_entries`), the same folder of ``copy`` at that path; for each path a
    setuptools editable finder those ``.pth`` files import maps there, the same folder of ``copy``, or, for a
    module, each file of ``copy`` at that path plus an import suffix (``.py``, ``.so``, … as the finder tries
    them). A source is resolved and bound only when it lies inside ``copy`` and touches no protected folder (a
    symlink in the copy pointing back into the repository binds nothing); raises nothing."""
    base = Path(os.path.realpath(copy))
    out: list[tuple[Path, Path]] = []

    def add(source: Path | None, entry: str) -> None:
        if source is not None and (source, Path(entry)) not in out:
            out.append((source, Path(entry)))

    for entry, by_finder in editable_entries(prefixes):
        mirror = in_copy(entry, base)
        folder = _in_copy_at(mirror, base, folder=True)
        add(folder, entry)
        if by_finder and folder is None and mirror is not None:  # a module: the finder tries each import suffix
            for suffix in all_suffixes():
                if os.path.lexists(mirror.with_suffix(suffix)):
                    at = str(Path(entry).with_suffix(suffix))
                    add(_in_copy_at(in_copy(at, base), base, folder=False), at)
    return out
