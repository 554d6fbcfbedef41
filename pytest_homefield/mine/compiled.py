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
import sys
from collections.abc import Iterable
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["COMPILED_SUFFIXES", "compiled_sources", "own_compiled_module", "BUILD_IN_PLACE", "BUILT_BEFORE",
           "WHEEL_BACKENDS", "build_backend", "build_recipe"]

#: The ``.homefield.yml`` line that builds a setuptools project's extensions in place in each copy (measured on a
#: C extension of ``ext_modules``: built in every copy, its Python-only commits kept as tasks).
BUILD_IN_PLACE = 'setup_cmd: "python setup.py -q build_ext --inplace"'

#: The backends whose build puts no extension in the tree (no in-place build: meson-python's and scikit-build-core's
#: go to a build folder), by ``[build-system] build-backend``, with the packages the wheel recipe
#: (:func:`build_recipe`) needs where the tests run (it builds without build isolation: a copy has no network).
WHEEL_BACKENDS = {"mesonpy": "meson-python, meson and ninja", "scikit_build_core.build": "scikit-build-core and cmake"}

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


def build_backend(root: Path) -> str | None:
    """``[build-system] build-backend`` of ``root``'s ``pyproject.toml`` (``mesonpy``, ``scikit_build_core.build``,
    ``setuptools.build_meta``); ``None`` without one, or when the file is no TOML, a link, or not there."""
    path = root / "pyproject.toml"
    if not path.is_file() or path.is_symlink():
        return None
    try:
        backend = tomllib.loads(path.read_text(encoding="utf-8")).get("build-system", {}).get("build-backend")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return None
    return backend if isinstance(backend, str) else None


def build_recipe(root: Path, module: str, source: str) -> str:
    """The ``.homefield.yml`` line that builds the repository's own compiled ``module`` (dotted) whose ``source``
    (relative to ``root``, as :func:`own_compiled_module` gives it) is under ``src/`` or at the top, for the build
    backend of ``root`` (:func:`build_backend`), followed by what it needs, e.g. `` (setuptools``. setuptools (or
    no backend named): :data:`BUILD_IN_PLACE`. A backend of :data:`WHEEL_BACKENDS` builds no extension in place
    (bld62: the hint gave setuptools' ``build_ext --inplace`` to a meson-python project, where it builds nothing):
    the project's wheel is built without isolation and the module's extension files copied from it next to the
    module's package in the copy (measured, meson-python 0.18 C extension: the copy's tests pass)."""
    backend = build_backend(root)
    if backend not in WHEEL_BACKENDS:
        return f"{BUILD_IN_PLACE} (setuptools"
    package, _, name = module.rpartition(".")
    inner = package.replace(".", "/")
    base = "src/" if source.startswith("src/") else ""
    dest = f"{base}{inner}".rstrip("/") or "."
    wheel_dir = f".hf-wheel/x/{inner}/" if inner else ".hf-wheel/x/"
    return (f'setup_cmd: "python -m pip wheel -q --no-build-isolation --no-deps -w .hf-wheel . && python -m zipfile '
            f'-e .hf-wheel/*.whl .hf-wheel/x && cp {wheel_dir}{name}.*.so {dest}/" ({backend}: no in-place build; '
            f"{WHEEL_BACKENDS[backend]} and pip installed where the tests run")
