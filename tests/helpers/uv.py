"""The uv tests use: the one beside this Python (the venv's), else the one on ``PATH``."""

from __future__ import annotations

import os
import shutil
import sys

import pytest


def find_uv() -> str | None:
    """The path of uv beside this Python, else on ``PATH``; ``None`` where there is none."""
    return shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")


def uv_or_skip(reason: str = "no uv beside this Python or on PATH") -> str:
    """:func:`find_uv`; skips the calling test with ``reason`` where there is none."""
    uv = find_uv()
    if uv is None:
        pytest.skip(reason)
    return uv
