"""A real, tiny tmpfs for the full-disk tests (root only): the test is skipped, with the reason, where
one cannot be mounted."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["mounted_tmpfs"]


@contextmanager
def mounted_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """``path`` (created) with a tmpfs of ``size`` (``"64k"``) mounted on it; unmounted afterwards.
    Skips the test without root, ``mount`` or permission to mount."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)
