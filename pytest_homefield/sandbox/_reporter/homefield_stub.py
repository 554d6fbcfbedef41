"""The stub of mining's stubbed parent run (docs/contracts.md §7 "Red only for a missing name"; ms35), shipped
beside the reporter and loaded with ``-p homefield_stub`` in that run alone.

On import it puts a finder first on ``sys.meta_path`` that gives every module of the working copy (a file under the
folder the test process starts in; never a test module: a file named ``test_*.py``, ``*_test.py`` or
``conftest.py``) a module ``__getattr__`` (PEP 562; wrapping the module's own one, whose ``AttributeError`` it
answers) after the module's own code ran, and a submodule such a package lacks is an empty module given the same:
every name the module lacks (but a dunder or a
``pytest…`` name) is then a :class:`Dummy`, as ``from pkg import missing`` is. A test of the
commit that passes at the parent with it checked nothing the parent's code lacks but names: any code answering
those names (a module ``__getattr__`` returning a dummy: markupsafe dcb170b12713, whose session fixture read
``_native._escape_inner`` and whose assertions the parent's own ``escape`` passed) passes it as the commit does.

Standalone on purpose, as the reporter: it imports only the standard library.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["Dummy", "StubFinder", "stubbed", "install"]


def _asked_by_tools(name: str) -> bool:
    """Whether ``name`` is one Python or pytest looks up on any object (a dunder, ``pytest_plugins``, a hook or
    mark name, ``setup_module``, ``teardown_function``, ``setUpModule``, …): never answered, so pytest treats a
    stubbed module or a dummy as it treats the module alone."""
    return ((name.startswith("__") and name.endswith("__")) or name.startswith(("pytest", "_pytest"))
            or name.lower().startswith(("setup", "teardown")))


class Dummy:
    """What every missing name of a module of the copy is: calling it or reading any attribute of it (but a
    dunder) gives another; iterating it gives nothing."""

    def __call__(self, *args: Any, **kwargs: Any) -> Dummy:
        return Dummy()

    def __getattr__(self, name: str) -> Dummy:
        if _asked_by_tools(name):
            raise AttributeError(name)
        return Dummy()

    def __iter__(self) -> Any:
        return iter(())


def _missing(module: ModuleType, own: Any = None) -> Any:
    """The module's ``__getattr__``: its own one's answer (``own``, when it defined one) unless that raises
    ``AttributeError``, then a :class:`Dummy` (a dunder: ``AttributeError``)."""
    def __getattr__(name: str) -> Any:
        if own is not None:
            try:
                return own(name)
            except AttributeError:
                pass
        if _asked_by_tools(name):
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        return Dummy()
    return __getattr__


def stubbed(origin: str | None, root: str) -> bool:
    """Whether the module loaded from ``origin`` (a file path, ``None`` for a namespace or built-in one) gets the
    stub: a file under ``root`` that is no test module (``test_*.py``, ``*_test.py``, ``conftest.py``)."""
    if not origin or not os.path.isabs(origin):
        return False
    name = os.path.basename(origin)
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return False
    return os.path.commonpath([os.path.realpath(origin), root]) == root


#: The names of the modules given the stub (a missing submodule of one is a module of dummies).
STUBBED: set[str] = set()


class _Loader(importlib.abc.Loader):
    """The module's own loader (``None``: a missing submodule, an empty module), then the stub."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self.inner, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        if self.inner is not None:
            self.inner.exec_module(module)
        STUBBED.add(module.__name__)
        try:
            module.__getattr__ = _missing(module, module.__dict__.get("__getattr__"))  # type: ignore[method-assign]
        except (AttributeError, TypeError):  # pragma: no cover - a module that takes no attribute
            pass

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_filename, …: the module's own
        return getattr(self.inner, name)


class StubFinder(importlib.abc.MetaPathFinder):
    """Finds each module with the finders after it; one of the copy (:func:`stubbed`) gets :class:`_Loader`."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, StubFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module") and stubbed(spec.origin, self.root):
                spec.loader = _Loader(spec.loader)
            return spec  # type: ignore[no-any-return]
        package = fullname.rpartition(".")[0]
        if package and package in STUBBED and not _asked_by_tools(fullname.rpartition(".")[2]):
            return importlib.machinery.ModuleSpec(fullname, _Loader(None))  # a submodule the package lacks
        return None


def install(root: str | None = None) -> None:
    """Puts a :class:`StubFinder` for ``root`` (default: the working folder) first on ``sys.meta_path``, once."""
    if not any(isinstance(f, StubFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, StubFinder(root or os.getcwd()))


install()
