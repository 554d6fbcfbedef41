"""The README's install line for your own repository works as written (the package is not on an index)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def quick_start_block() -> str:
    section = README.split("## Quick start on your own repository", 1)[1]
    return section.split("```bash", 1)[1].split("```", 1)[0]


def test_no_install_from_an_index_that_does_not_have_it() -> None:
    assert not re.search(r"pip install pytest-homefield\b", README)
    block = quick_start_block()
    assert "pip install -e '.[test]'" in block and "--group dev" in block  # the repository's own test deps


@pytest.mark.slow
def test_the_install_line_installs_this_package(tmp_path: Path) -> None:
    line = next(ln for ln in quick_start_block().splitlines() if ln.startswith("pip install "))
    args = shlex.split(line.split("#", 1)[0])
    assert args[:2] == ["pip", "install"] and args[2:] == ["/path/to/pytest-homefield"], line
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet",
                           "--report", str(report), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    installed = [i["metadata"]["name"] for i in json.loads(report.read_text())["install"]]
    assert installed == ["pytest-homefield"]
