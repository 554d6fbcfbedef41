"""A tiny fixture repository with one bug, shared by the adapter and client tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["BUGGY", "FIXED", "make_calc_repo"]

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def make_calc_repo(path: Path, *, git: bool = True) -> Path:
    """``path`` holding ``calc.py`` (``add`` subtracts) and ``test_calc.py``, committed once in a
    fresh git repository when ``git``. Returns ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "calc.py").write_text(BUGGY)
    (path / "test_calc.py").write_text(TEST)
    if git:
        run = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
        subprocess.run(["git", "init", "-q", str(path)], check=True)
        subprocess.run([*run, "-C", str(path), "add", "-A"], check=True)
        subprocess.run([*run, "-C", str(path), "commit", "-qm", "snapshot"], check=True)
    return path
