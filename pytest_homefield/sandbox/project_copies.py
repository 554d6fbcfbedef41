"""Installed copies of the project under benchmark, which no agent and no test run may read
(docs/contracts.md §9), found by their content first and by their names as well.

A repository installed into an environment a sandbox shows (CI's ``pip install .``, ``setup.py install``'s
egg, a Docker image's ``/usr/src/app/.venv``, pip's VCS checkout ``<venv>/src/<name>/``, a second clone on
``PYTHONPATH``) leaves a copy of its code at HEAD, and HEAD holds every task's fix. An agent that copies
that code over its workspace solves tasks it never fixed, with real code, so no canary can tell (atk12 F5,
atk14 A3/A7, atk15 F1–F1f). A list of install formats always misses the next one, so the copies are found
**by content** (:mod:`.copies_by_content`): every read-only root a sandbox shows is walked once per process
for ``*.py`` files and zip archives holding a file version the repository wrote after the oldest task's
parent, and for git folders holding its HEAD or root commit; what holds one is masked (a package folder,
a module and its bytecode, an egg, an archive, a whole work tree).

The search **by name** below stays beside it (it also finds bytecode-only copies, which no ``*.py`` blob
matches): a top-level entry of a bound site folder whose name is a top-level package or module of a
protected repository's HEAD (:mod:`.protected`), its bytecode in the site folder's ``__pycache__``
(``SourcelessFileLoader``), and every top-level entry the ``RECORD`` of the project's own distribution
lists (a ``*.dist-info`` named as HEAD's ``pyproject.toml`` ``[project] name`` or ``setup.cfg``'s
``[metadata] name``, or whose ``direct_url.json`` names the repository's folder). The sandboxes then show
an empty folder (bubblewrap: ``--tmpfs``) or an empty file in place of each copy
(:func:`copies_of_protected`).

A dependency that happens to share a top-level name with the repository (a fork of it, a package
shipping a top-level ``tests`` folder) is masked as well: the code under test is the copy's, first on
``sys.path``, so a run that needed the other one could not have tested the repository's anyway. One
that merely ships a file the agent already has (identical to the task's parent) is not.
"""

from __future__ import annotations

import configparser
import functools
import glob
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name

from pytest_homefield.sandbox.copies_by_content import content_copies
from pytest_homefield.sandbox.editable import redirector_map
from pytest_homefield.sandbox.protected import protected

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["repository_names", "project_names", "site_folders", "project_copies", "copies_of_protected"]

#: Where an interpreter keeps its installed distributions, relative to a prefix.
SITE_GLOBS = ("lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages",
              "local/lib/python3*/site-packages", "local/lib/python3*/dist-packages", "lib64/python3*/site-packages")
#: Extensions of a top-level module's file (source, bytecode, extension modules).
MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")
#: The system prefixes an interpreter may install into (always bound read-only by the sandboxes).
SYSTEM_PREFIXES = ("/usr", "/usr/local")


@functools.lru_cache(maxsize=16)
def repository_names(repo: Path) -> frozenset[str]:
    """The top-level import names of ``repo``'s HEAD: the folders and ``*.py`` modules at its root and
    under ``src/`` (``git ls-tree``; a folder counts whether or not it holds ``__init__.py``: namespace
    packages install that way too). Hidden names (``.git``) are left out. Empty when ``repo`` has no
    commit or is no git repository."""
    names: set[str] = set()
    for tree in ("HEAD", "HEAD:src"):
        proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-z", tree], capture_output=True, check=False)
        if proc.returncode != 0:
            continue
        for entry in proc.stdout.split(b"\0"):
            meta, _, raw = entry.partition(b"\t")
            name = os.fsdecode(raw)
            if not name or name.startswith("."):
                continue
            kind = meta.split(b" ")[1] if meta.count(b" ") >= 2 else b""
            if kind == b"tree":
                names.add(name)
            elif kind == b"blob" and name.endswith(".py"):
                names.add(name[:-3])
    return frozenset(n for n in names if n.isidentifier())


def _head_file(repo: Path, path: str) -> str | None:
    proc = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], capture_output=True, check=False)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


@functools.lru_cache(maxsize=16)
def project_names(repo: Path) -> frozenset[str]:
    """The distribution names ``repo``'s HEAD declares, normalized (:func:`_normalized`): ``pyproject.toml``'s
    ``[project] name`` and ``setup.cfg``'s ``[metadata] name`` (a ``setup.py`` name is code: not read).
    Empty when neither names one or they do not parse."""
    names: set[str] = set()
    text = _head_file(repo, "pyproject.toml")
    if text is not None:
        try:
            name = tomllib.loads(text).get("project", {}).get("name")
        except (tomllib.TOMLDecodeError, AttributeError):
            name = None
        if isinstance(name, str):
            names.add(canonicalize_name(name))
    text = _head_file(repo, "setup.cfg")
    if text is not None:
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(text)
            name = cfg.get("metadata", "name", fallback=None)
        except configparser.Error:
            name = None
        if name and "%" not in name and "{" not in name:
            names.add(canonicalize_name(name.strip()))
    return frozenset(names)


def _installed_from(dist_info: str, repos: list[Path]) -> bool:
    """Whether the distribution's ``direct_url.json`` names one of ``repos`` (a ``pip install .``)."""
    try:
        with open(os.path.join(dist_info, "direct_url.json"), encoding="utf-8") as fh:
            url = json.load(fh).get("url", "")
    except (OSError, ValueError, AttributeError):
        return False
    if not isinstance(url, str) or not url.startswith("file://"):
        return False
    return any(os.path.realpath(url[len("file://"):]) == os.path.realpath(r) for r in repos)


def _recorded_names(dist_info: str) -> set[str]:
    """The top-level import names a distribution's ``RECORD`` lists (its first path components, less
    ``__pycache__``, the ``*.dist-info``/``*.data`` folders, entries outside the site folder, ``.pth`` files
    and an editable install's ``__editable__*`` hooks: other editable installs share their stem; and hatchling's
    ``editables`` redirector module, :func:`~.editable.redirector_map`, which holds no code of the project)."""
    names: set[str] = set()
    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.split(",", 1)[0].strip().strip('"')
                top = path.split("/", 1)[0]
                if not top or top in ("..", "__pycache__") or top.endswith((".dist-info", ".data", ".pth")) \
                        or top.startswith("__editable__"):  # an editable install's hooks: the checkout's, never bound
                    continue
                # hatchling's editables redirector (_editable_impl_<name>.py): a hook naming the checkout's files,
                # which editable_binds shows as the copy's (ops56: masked empty, a child imported nothing)
                if top.endswith(".py") and redirector_map(os.path.join(os.path.dirname(dist_info), top)) is not None:
                    continue
                stem = top.split(".", 1)[0]
                if stem.isidentifier():
                    names.add(stem)
    except OSError:
        pass
    return names


def _distribution_names(site: Path, entries: list[str], repos: list[Path], projects: frozenset[str]) -> set[str]:
    """The top-level names the project's own distributions installed in ``site`` (module docstring)."""
    names: set[str] = set()
    for entry in entries:
        if not entry.endswith(".dist-info"):
            continue
        dist_info = os.path.join(site, entry)
        name = canonicalize_name(entry[:-len(".dist-info")].split("-", 1)[0])
        if name in projects or _installed_from(dist_info, repos):
            names |= _recorded_names(dist_info)
    return names


def site_folders(paths: Iterable[Path | str]) -> list[Path]:
    """The site folders a sandbox binding ``paths`` shows: each path that is one (it holds a
    ``*.dist-info`` or is named ``site-packages``/``dist-packages``; a ``PYTHONPATH`` entry may be), the
    :data:`SITE_GLOBS` under each path (a prefix, a virtual environment) and under the
    :data:`SYSTEM_PREFIXES`. Resolved, each once, existing ones only."""
    out: list[Path] = []
    for root in [*paths, *SYSTEM_PREFIXES]:
        base = os.path.realpath(root)
        found = [base] if (os.path.basename(base) in ("site-packages", "dist-packages")
                           or glob.glob(os.path.join(glob.escape(base), "*.dist-info"))) else []
        for pattern in SITE_GLOBS:
            found += glob.glob(os.path.join(glob.escape(base), pattern))
        for f in found:
            p = Path(os.path.realpath(f))
            if p not in out and p.is_dir():
                out.append(p)
    return out


def project_copies(paths: Iterable[Path | str], repos: Iterable[Path] | None = None) -> list[Path]:
    """The installed copies of ``repos`` (default: the protected repositories) in the site folders of
    ``paths`` (:func:`site_folders`): each entry ``<site>/<name>`` (a package folder),
    ``<site>/<name><suffix>`` (a module, :data:`MODULE_SUFFIXES`, ``name.cpython-311-x86_64-linux-gnu.so``
    too) or ``<site>/__pycache__/<name>.*.pyc`` whose ``name`` is one of :func:`repository_names` or listed
    by the project's own distribution (module docstring). Symlinks are listed as themselves (masking
    the link's path hides what it points to). Sorted; ``[]`` when no repository is protected."""
    repo_list = [Path(r) for r in (protected() if repos is None else repos)]
    names: set[str] = set()
    projects: frozenset[str] = frozenset()
    for repo in repo_list:
        names |= repository_names(repo)
        projects |= project_names(repo)
    if not repo_list:
        return []
    out: set[Path] = set()
    for site in site_folders(paths):
        try:
            entries = os.listdir(site)
        except OSError:
            continue
        here = names | _distribution_names(site, entries, repo_list, projects)
        for entry in entries:
            stem = entry.split(".", 1)[0]
            if stem in here and (entry == stem or entry.endswith(MODULE_SUFFIXES)):
                out.add(site / entry)
        if "__pycache__" in entries:  # the copies' bytecode: <name>.cpython-311.pyc (atk14 A7)
            try:
                cached = os.listdir(site / "__pycache__")
            except OSError:
                cached = []
            out.update(site / "__pycache__" / c for c in cached if c.split(".", 1)[0] in here and c.endswith(".pyc"))
    return sorted(out)


@functools.lru_cache(maxsize=64)
def _resolved_copies(paths: tuple[str, ...], repos: tuple[Path, ...], skip: tuple[str, ...]) -> tuple[str, ...]:
    named = {os.path.realpath(c) for c in project_copies(paths, repos)}
    return tuple(sorted(named | set(content_copies(paths, repos, skip=skip))))


def copies_of_protected(paths: Iterable[Path | str], skip: Iterable[Path | str] = ()) -> tuple[str, ...]:
    """The copies of the protected repositories a sandbox showing ``paths`` must mask, resolved and
    sorted: :func:`project_copies` (by name, in the site folders of ``paths``) and
    :func:`~.copies_by_content.content_copies` (by content, under ``paths`` but those in ``skip``: the
    run's own folders, its workspace or the copy under test). Looked up once per process and set of
    paths; the walk by content once per process and root (about 0.5 s of CPU for ``/usr`` here)."""
    return _resolved_copies(tuple(str(p) for p in paths), tuple(protected()), tuple(str(s) for s in skip))
