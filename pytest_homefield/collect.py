"""Collection helpers shared by the mine and run modes: never collect the repository's own tests; and
what an attempt item that was not solved reports."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["redirect_collection", "is_worker", "xfail_reason"]


def xfail_reason(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """The reason of an ``UNSOLVED`` attempt (a raised ``pytest.xfail.Exception``), else ``None``.

    An attempt item's ``repr_failure`` returns it as the report's ``longrepr``: pytest shows nothing of an
    xfail but its reason (``rep.wasxfail``), yet by default formats the whole traceback first (about 0.1 s
    of CPU per unsolved attempt, and a larger report to send from an xdist worker)."""
    return str(excinfo.value) if isinstance(excinfo.value, pytest.xfail.Exception) else None


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
