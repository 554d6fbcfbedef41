"""Collection helpers shared by the modes: never collect the repository's own tests, the marks every
homefield item carries, and what an attempt item that was not solved reports."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

__all__ = ["redirect_collection", "is_worker", "xfail_reason", "mark_item", "collected_index", "attempt_key",
           "variant_key"]

#: The order a homefield item was collected in (:func:`mark_item`), which other plugins may not change.
_INDEX = pytest.StashKey[int]()
_COUNTER = itertools.count()


def mark_item(item: pytest.Item) -> None:
    """Add the marks of a homefield item (a candidate, attempt or probe call): ``homefield``, and two
    that keep the repository's pytest configuration, which is for its own tests, off homefield's work:

    * ``timeout(0)`` when pytest-timeout is loaded: a repository's ``timeout`` ini (tox-dev/filelock
      sets 20 s) would otherwise kill every verification or attempt that takes longer; homefield
      times the agent (``--timeout``) and the test runs (``run_timeout``) itself.
    * ``filterwarnings("default")``: a repository's ``filterwarnings = error`` would turn a warning
      raised inside homefield's work (gitpython, numpy, an in-process agent) into a failed item.
      The ``homefield`` command also clears the ini (``-o filterwarnings=``); this covers
      ``pytest --homefield``.

    It also numbers the item in collection order (:func:`collected_index`)."""
    item.stash[_INDEX] = next(_COUNTER)
    item.add_marker("homefield")
    item.add_marker(pytest.mark.filterwarnings("default"))
    if item.config.pluginmanager.hasplugin("timeout"):
        item.add_marker(pytest.mark.timeout(0))


def xfail_reason(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """The reason of an ``UNSOLVED`` attempt (a raised ``pytest.xfail.Exception``), else ``None``.

    An attempt item's ``repr_failure`` returns it as the report's ``longrepr``: pytest shows nothing of an
    xfail but its reason (``rep.wasxfail``), yet by default formats the whole traceback first (about 0.1 s
    of CPU per unsolved attempt, and a larger report to send from an xdist worker)."""
    return str(excinfo.value) if isinstance(excinfo.value, pytest.xfail.Exception) else None


def collected_index(item: pytest.Item) -> int | None:
    """Where ``item`` was collected among homefield's items (:func:`mark_item`), ``None`` for another item."""
    return item.stash.get(_INDEX, None)


def is_worker(config: pytest.Config) -> bool:
    """True inside an xdist worker process."""
    return hasattr(config, "workerinput")


def redirect_collection(config: pytest.Config, target: Path) -> None:
    """Make pytest collect only ``target`` (a ``.jsonl`` file our collector understands).

    When the user passed their own arguments, each must be ``target`` or a node id inside it
    (``.homefield/tasks.jsonl::<task>``); anything else (``tests/``) raises ``pytest.UsageError``.
    """
    target = target.resolve()
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        kept: list[str] = []
        for arg in config.args:
            file_part = arg.split("::", 1)[0]
            path = (config.invocation_params.dir / file_part).resolve()
            if path != target:
                raise pytest.UsageError(
                    f"pytest-homefield: {arg!r} is not a homefield node id; select items with -k or "
                    f"with node ids under {target.name}"
                )
            kept.append(str(target) + (arg[len(file_part):] if "::" in arg else ""))
        config.args[:] = kept
    else:
        config.args[:] = [str(target)]


def _name_key(name: str) -> tuple[str, int] | None:
    """``"<agent>[<n>]"`` → ``(agent, n)``; else ``None``."""
    if not name.endswith("]"):
        return None
    agent, _, n = name[:-1].rpartition("[")
    if not agent or not n.isdigit() or n != str(int(n)):
        return None
    return agent, int(n)


def attempt_key(nodeid: str) -> tuple[str, str, int] | None:
    """A run item's node id ``<file>::<task>::<agent>[<n>]`` (docs/contracts.md §5) → ``(task, agent, n)``;
    any other node id → ``None``."""
    parts = nodeid.split("::")
    named = _name_key(parts[-1]) if len(parts) == 3 else None
    return None if named is None else (parts[1], named[0], named[1])


def variant_key(nodeid: str) -> tuple[str, str, str, int] | None:
    """An ablation item's node id ``<file>::<variant>::<task>::<agent>[<n>]`` → ``(variant, task, agent, n)``;
    any other node id → ``None``."""
    parts = nodeid.split("::")
    named = _name_key(parts[-1]) if len(parts) == 4 else None
    return None if named is None else (parts[1], parts[2], named[0], named[1])
