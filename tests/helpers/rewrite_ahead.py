"""pytest's assertion rewriting done once, by the controller, before xdist's workers collect.

Every process that collects the suite rewrites the asserts of each test module and of each module of
``pytest_homefield`` it imports (a ``pytest11`` plugin's package is marked for rewriting): about 310
files, 4.7 s of CPU of the 6.3 s a collection takes on this machine. pytest keeps the rewritten code in
``__pycache__/<name>.<tag>-pytest-<version>.pyc`` (a hash-based pyc, valid in a fresh checkout too) and
reads such a file in every process, but writes it only where Python writes bytecode: where
``PYTHONDONTWRITEBYTECODE`` is set (this machine, CI), each of the two workers rewrote all 310 files
again, on every run, and every ``homefield`` session the tests start rewrote xdist's and pytest-timeout's
modules (:func:`plugin_targets`). :func:`rewrite_ahead` writes those files in the controller, split over
two processes, so the other processes only read them (and later runs find them done).

It uses pytest's own functions (``_pytest.assertion.rewrite``: the same code the import hook runs, so the
same bytes); with a pytest whose internals differ it does nothing, and the workers rewrite as before.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

__all__ = ["plugin_targets", "rewrite_ahead", "rewrite_targets"]

#: The installed pytest plugins every ``homefield`` session of the suite loads (``pytest11`` entry points:
#: their modules are rewritten too): the xdist package and pytest-timeout's module.
PLUGINS = ("xdist", "pytest_timeout")


def rewrite_targets(tests: Path, package: Path) -> list[Path]:
    """The files a collection of ``tests`` rewrites: its ``test_*.py`` and ``conftest.py`` files and every
    module of ``package``, sorted."""
    found = [p for p in tests.rglob("*.py") if p.name.startswith("test_") or p.name == "conftest.py"]
    return sorted(found + list(package.rglob("*.py")))


def plugin_targets(names: Sequence[str] = PLUGINS) -> list[Path]:
    """The modules of the installed plugins ``names`` (a package: all its modules), which each pytest
    process the suite starts (a ``homefield`` session, each of its xdist workers) rewrote again: 25 ms of
    CPU a process, 75 ms for a controller at ``-n 2`` (on this machine). A plugin not installed is left out.
    Their pycs go where pytest itself would write them (``__pycache__`` beside the module)."""
    out: list[Path] = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        out += sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
    return out


def rewrite_ahead(config: pytest.Config, files: Sequence[Path]) -> int:
    """Write pytest's rewritten-assert pyc of each of ``files`` whose pyc is missing or stale, half in a
    forked child; returns how many this process wrote (the child's are not counted). Only in a
    controller that rewrites (``--assert=rewrite``, the default) and writes no bytecode; a file whose
    pyc cannot be written (a read-only folder) is left to the import hook."""
    if not sys.dont_write_bytecode or hasattr(config, "workerinput") or config.getoption("assertmode") != "rewrite":
        return 0
    try:
        from _pytest.assertion import rewrite as rw
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, get_cache_dir
        state = config.stash[rw.assertstate_key]
    except (ImportError, AttributeError, KeyError):
        return 0

    def pyc_of(fn: Path) -> Path:
        return get_cache_dir(fn) / (fn.name[:-3] + PYC_TAIL)

    todo = [fn for fn in files if _read_pyc(fn, pyc_of(fn)) is None]

    def write(part: Sequence[Path]) -> int:
        n = 0
        for fn in part:
            try:
                source_hash, co = _rewrite_test(fn, config)
                pyc_of(fn).parent.mkdir(exist_ok=True)
                n += bool(_write_pyc(state, co, source_hash, pyc_of(fn)))
            except (OSError, SyntaxError, ValueError):
                continue  # the import hook rewrites it (and reports a syntax error) as usual
        return n

    if len(todo) < 2:
        return write(todo)
    try:
        child = os.fork()
    except OSError:
        return write(todo)
    if child == 0:  # the child: the second half, then out without running the parent's exit handlers
        code = 0
        try:
            write(todo[1::2])
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    try:
        return write(todo[::2])
    finally:
        os.waitpid(child, 0)
