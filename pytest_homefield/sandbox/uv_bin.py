"""The ``uv`` binary homefield runs: the ``uv`` package's (``pip install pytest-homefield[env]``), else ``uv`` on
``PATH``. One lookup for the environment builder (:func:`pytest_homefield.envs.builder.find_uv`, which raises when
there is none) and the test runs' readers of ``uv run`` commands (:mod:`.pytest_config`, :mod:`.testrun`), which
live below ``envs`` (envs imports sandbox, never the other way)."""

from __future__ import annotations

import shutil

__all__ = ["uv_binary"]


def uv_binary() -> str | None:
    """The path of the ``uv`` binary, or ``None`` when neither the ``uv`` package nor ``PATH`` has one."""
    try:
        import uv  # the wheel that ships the binary; optional (the env extra)

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    return shutil.which("uv")
