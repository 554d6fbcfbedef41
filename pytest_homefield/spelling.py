"""How a message names an option for the front end in use (ux65, opt46): a ground module, so that every layer
(the sandbox and the agents too, which may not import the settings table) spells a flag one way.

homefield has two front ends over one plugin: the ``homefield`` script (``homefield run --attempts 1``) and
pytest (``pytest --homefield --homefield-attempts 1``). A message that names an option takes its spelling from
:func:`spell` (or :func:`pytest_homefield.settings_table.option`, which also checks that the flag is a setting's),
never from a bare ``--flag`` in its text: tests/test_spelling.py reads every string literal of the package and
fails on a setting's flag written there, and on a :func:`spell` or ``option`` call whose flag no setting has.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["FRONT_ENDS", "front_end", "spelled_for", "spell"]

#: The front ends a message names options for: ``pytest`` (``--homefield-attempts``) and ``cli``
#: (``--attempts``); the first is the default.
FRONT_ENDS = ("pytest", "cli")
#: The front end of this process: the ``homefield`` script sets ``cli``, and a session its
#: ``--homefield-front-end`` (the script passes it on, so that xdist workers spell as their controller)
#: (:func:`front_end`). Every thread reads it, those homefield starts itself (heartbeat, twin-run pool) included.
_PROCESS = [FRONT_ENDS[0]]
#: A block's front end (:func:`spelled_for`), ``None`` outside any: a context variable (eta46), so a block in one
#: thread leaves another thread's spelling alone (a module-level value was one spelling for every thread).
_BLOCK: contextvars.ContextVar[str | None] = contextvars.ContextVar("homefield_front_end", default=None)


def front_end(name: str | None = None) -> str:
    """The front end in use (one of :data:`FRONT_ENDS`: the innermost :func:`spelled_for` block's in this context,
    else the process's); given ``name``, make it the process's and return the process's before (to restore it
    with). Raises ``ValueError`` for a name not in :data:`FRONT_ENDS`."""
    if name is None:
        return _BLOCK.get() or _PROCESS[0]
    before, _PROCESS[0] = _PROCESS[0], _known(name)
    return before


def _known(name: str) -> str:
    """``name`` when it is one of :data:`FRONT_ENDS`; raises ``ValueError`` otherwise."""
    if name not in FRONT_ENDS:
        raise ValueError(f"front end must be one of {FRONT_ENDS}, got {name!r}")
    return name


@contextlib.contextmanager
def spelled_for(name: str) -> Iterator[None]:
    """Within the block, :func:`spell` spells options for the front end ``name`` in this context (this thread, this
    task); the one before after it, nested blocks included. Raises ``ValueError`` as :func:`front_end` does."""
    token = _BLOCK.set(_known(name))
    try:
        yield
    finally:
        _BLOCK.reset(token)


def spell(flag: str, front: str | None = None) -> str:
    """The option of the setting whose flag is ``flag`` (``attempts``) as front end ``front`` takes it (default:
    the one in use): ``--attempts`` for ``cli``, ``--homefield-attempts`` for ``pytest``. A text kept in a
    record (read later under either front end) passes ``front="cli"``. The flag is not checked here (this module
    knows no table): tests/test_spelling.py checks every call's flag against the settings table. Raises
    ``ValueError`` for a ``front`` not in :data:`FRONT_ENDS`."""
    name = front_end() if front is None else _known(front)
    return f"--{flag}" if name == "cli" else f"--homefield-{flag}"
