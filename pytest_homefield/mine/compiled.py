"""A repository's own compiled modules (ops61): a C, C++, Cython or Rust extension that a build makes
(setuptools ``ext_modules``, meson-python, scikit-build-core, maturin) is in no snapshot, which holds the
commit's tree only. Without a ``setup_cmd`` that builds it in place every candidate fails to collect its tests
(``ModuleNotFoundError: No module named 'pkg._core'``); with one, the build runs in each copy before a commit's
change is applied (mining as grading: an agent's change is never built, nothing of it runs before the tests),
so a change to a compiled source never reaches the tests. This module names such modules and sources for the
summary's hint (:func:`pytest_homefield.mine.summary.setup_hint`) and a dropped candidate's detail
(:func:`pytest_homefield.mine.redgreen.verify_candidate`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["COMPILED_SUFFIXES", "compiled_sources", "own_compiled_module", "BUILD_IN_PLACE", "BUILT_BEFORE"]

#: The ``.homefield.yml`` line that builds a setuptools project's extensions in place in each copy (measured on a
#: C extension of ``ext_modules``: built in every copy, its Python-only commits kept as tasks).
BUILD_IN_PLACE = 'setup_cmd: "python setup.py -q build_ext --inplace"'

#: The endings of source files a build compiles into an extension module (lower-cased): C, C++, Cython, Rust,
#: Fortran.
COMPILED_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".pyx", ".pxd", ".pxi", ".rs",
                     ".f", ".f90")

#: What a dropped candidate's detail says when its change includes compiled sources, the paths after it.
BUILT_BEFORE = ("; the commit changes compiled sources, which setup_cmd builds before a change is applied: its "
                "change to ")


def compiled_sources(paths: Iterable[str]) -> list[str]:
    """The entries of ``paths`` (``/``-separated) ending with one of :data:`COMPILED_SUFFIXES`, in their order."""
    return [p for p in paths if p.lower().endswith(COMPILED_SUFFIXES)]


def own_compiled_module(root: Path, module: str) -> str | None:
    """The source in the repository at ``root`` that a build compiles into the dotted ``module`` (one a test run
    could not import), relative to ``root``: a file at the module's path (at the top or under ``src/``) with one
    of :data:`COMPILED_SUFFIXES` (``pkg/_core.c`` for ``pkg._core``), or a folder there that is no package (no
    ``__init__.py``) holding such files (meson-python's and scikit-build's ``src/_core/``); ``None`` when there
    is neither, or the module's file is there as Python (then a build did not make it). Reads the working tree,
    following no link."""
    rel = module.replace(".", "/")
    for base in ("", "src/"):
        stem = root / f"{base}{rel}"
        if os.path.lexists(f"{stem}.py") or os.path.lexists(stem / "__init__.py"):
            return None
        for suffix in COMPILED_SUFFIXES:
            if os.path.isfile(f"{stem}{suffix}") and not os.path.islink(f"{stem}{suffix}"):
                return f"{base}{rel}{suffix}"
        if stem.is_dir() and not stem.is_symlink():
            inside = sorted(compiled_sources(e.name for e in os.scandir(stem) if e.is_file(follow_symlinks=False)))
            if inside:
                return f"{base}{rel}/{inside[0]}"
    return None
