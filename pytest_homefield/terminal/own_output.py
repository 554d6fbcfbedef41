"""homefield's session prints its own lines only (exc35, a new user's simonw/llm run).

A homefield session (``mine``, ``run``, ``verify``, ``probe``, ``ablate``) is a pytest session in the repository's
root, in the Python homefield runs in: pytest loads the plugins that environment installed (entry points: llm's
venv has pytest-asyncio, pytest-recording, syrupy, …) and the repository's initial ``conftest.py`` files (the root's
and those of its ``test*`` folders), which may implement homefield's own hooks. They printed into homefield's output:
llm's ``tests/conftest.py`` header (``SQLite: 3.40.1``, ``sqlite-utils: 4.2.1``), pytest-asyncio's (``asyncio:
mode=Mode.STRICT, …``), syrupy's snapshot report summary. The session runs none of the repository's tests (its
test runs are processes of their own, whose output goes to their logs, never to this terminal), so none of that
says anything about it.

:func:`own_output` makes the hooks that write to the session's terminal (:data:`TERMINAL_HOOKS`) call only the
implementations of pytest itself, homefield and xdist: every other plugin's (an entry point's, a conftest's) is left
out at each call, whenever it was registered. Their other hooks are untouched (a conftest's homefield hooks still
run). Restored when the session's config is cleaned up.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import pytest

__all__ = ["TERMINAL_HOOKS", "OWN_PREFIXES", "own_output", "is_own"]

#: The hooks whose implementations write to the session's terminal (a header line, a line after collection, a
#: section of the summary).
TERMINAL_HOOKS = ("pytest_report_header", "pytest_report_collectionfinish", "pytest_terminal_summary")
#: The modules whose plugins keep those hooks: pytest's own, homefield's and xdist's (its workers' lines).
OWN_PREFIXES = ("_pytest.", "pytest_homefield", "xdist")


def is_own(plugin: object) -> bool:
    """Whether ``plugin`` (a module or an object registered with pytest) is pytest's, homefield's or xdist's: its
    module's name (an object's class's) is one of :data:`OWN_PREFIXES` or starts with it. A conftest module
    (``conftest``, ``tests.conftest``) and any other entry point's plugin is not."""
    name = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
    return any(name == p.rstrip(".") or name.startswith(p) for p in OWN_PREFIXES)


class _OwnOnly:
    """A hook caller standing for ``orig`` (a pluggy ``HookCaller``): a call runs only the implementations of
    :func:`is_own` plugins registered at that moment; everything else (registering an implementation, its spec) is
    ``orig``'s."""

    def __init__(self, name: str, orig: Any, pm: pytest.PytestPluginManager) -> None:
        self._name, self._orig, self._pm = name, orig, pm

    def __call__(self, **kwargs: Any) -> Any:
        foreign = [impl.plugin for impl in self._orig.get_hookimpls() if not is_own(impl.plugin)]
        relay = self._pm.hook
        setattr(relay, self._name, self._orig)  # the subset stands on the real caller, not on this one
        try:
            caller = self._pm.subset_hook_caller(self._name, foreign)
        finally:
            setattr(relay, self._name, self)
        return caller(**kwargs)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._orig, attr)


def own_output(config: pytest.Config) -> None:
    """Make :data:`TERMINAL_HOOKS` of ``config``'s session call only pytest's, homefield's and xdist's
    implementations (:func:`is_own`), until the config is cleaned up."""
    relay = config.pluginmanager.hook
    for name in TERMINAL_HOOKS:
        orig = getattr(relay, name, None)
        if orig is None or isinstance(orig, _OwnOnly):
            continue
        setattr(relay, name, _OwnOnly(name, orig, config.pluginmanager))
        config.add_cleanup(functools.partial(setattr, relay, name, orig))
