"""Installed copies of the project under benchmark, which no agent and no test run may read
(docs/contracts.md §9).

A repository installed *non-editable* into an environment a sandbox binds (CI's ``pip install .``,
``uv sync --no-editable``, a Docker image's system Python, a tox environment's sdist) leaves a copy of
its code at HEAD in ``site-packages``, and HEAD holds every task's fix. An agent that copies that code
over its workspace solves tasks it never fixed, with real code, so no canary can tell (atk12 F5:
5 of 8 demo tasks). The copy is found by construction, not by a list: a top-level entry of a bound
site folder whose name is a top-level package or module of a protected repository's HEAD
(:mod:`.protected`) is the project's, wherever it was installed from. An editable install leaves only
a ``.pth`` and a finder naming the checkout, which is protected and never bound, so nothing is masked
for it. The sandboxes then show an empty folder (bubblewrap: ``--tmpfs``) or an empty file in place of
each copy (:func:`project_copies`).

A dependency that happens to share a top-level name with the repository (a fork of it, a package
shipping a top-level ``tests`` folder) is masked as well: the code under test is the copy's, first on
``sys.path``, so a run that needed the other one could not have tested the repository's anyway.
"""

from __future__ import annotations

import functools
import glob
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from pytest_homefield.sandbox.protected import protected

__all__ = ["repository_names", "site_folders", "project_copies", "copies_of_protected"]

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
    ``paths`` (:func:`site_folders`): each entry ``<site>/<name>`` (a package folder) or
    ``<site>/<name><suffix>`` (a module, :data:`MODULE_SUFFIXES`, ``name.cpython-311-x86_64-linux-gnu.so``
    too) whose ``name`` is one of :func:`repository_names`. Symlinks are listed as themselves (masking
    the link's path hides what it points to). Sorted; ``[]`` when no repository is protected."""
    names: set[str] = set()
    for repo in protected() if repos is None else repos:
        names |= repository_names(Path(repo))
    if not names:
        return []
    out: set[Path] = set()
    for site in site_folders(paths):
        try:
            entries = os.listdir(site)
        except OSError:
            continue
        for entry in entries:
            stem = entry.split(".", 1)[0]
            if stem not in names:
                continue
            if entry == stem or entry.endswith(MODULE_SUFFIXES):
                out.add(site / entry)
    return sorted(out)


@functools.lru_cache(maxsize=64)
def _resolved_copies(paths: tuple[str, ...], repos: tuple[Path, ...]) -> tuple[str, ...]:
    return tuple(os.path.realpath(c) for c in project_copies(paths, repos))


def copies_of_protected(paths: Iterable[Path | str]) -> tuple[str, ...]:
    """:func:`project_copies` of the protected repositories in the site folders of ``paths``, resolved,
    looked up once per process and set of paths (a sandbox is made for every agent and test run; an
    uncached lookup costs about 1.3 ms)."""
    return _resolved_copies(tuple(str(p) for p in paths), tuple(protected()))
