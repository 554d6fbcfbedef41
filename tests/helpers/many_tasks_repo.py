"""A tiny real git repository with one task per commit (``N`` of them), enough tasks for a paired
test to reach p < 0.05 (McNemar needs 6 discordant tasks at alpha 0.05)."""

from __future__ import annotations

import sys
from pathlib import Path

from helpers.e2e_repo import git


def build_many(dest: Path, n: int = 6) -> Path:
    """Create the repository in ``dest`` (must not exist): a base commit, then ``n`` commits each adding
    ``f<i>()`` and its test. Returns ``dest``."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    src = "def base():\n    return 0\n"
    (dest / "pkg").mkdir()
    (dest / "tests").mkdir()
    (dest / "pkg" / "__init__.py").write_text(src)
    (dest / "tests" / "test_base.py").write_text("from pkg import base\n\n\ndef test_base():\n    assert base() == 0\n")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "Start the package with base()", date="2026-01-01T12:00:00+00:00")
    for i in range(1, n + 1):
        src += f"\n\ndef f{i}():\n    return {i}\n"
        (dest / "pkg" / "__init__.py").write_text(src)
        (dest / "tests" / f"test_f{i}.py").write_text(f"from pkg import f{i}\n\n\ndef test_f{i}():\n"
                                                       f"    assert f{i}() == {i}\n")
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", f"Add f{i}() that returns the number {i}",
            date=f"2026-01-{i + 1:02d}T12:00:00+00:00")
    (dest / ".homefield.yml").write_text(f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n')
    return dest
