"""Landlock hides the installed copy of the project under benchmark (atk12 F5): a non-editable
``pip install .`` leaves HEAD, every task's fix, in a site folder the policy allows with the interpreter.
Landlock cannot deny a subfolder of an allowed one, so the policy lists the folders on the way to the copy
and allows every other entry: the copy's names are listed, none of its files can be read. Real git, real
Landlock; the control (no repository under benchmark) reads the copy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo
from helpers.landlock import landlock_abi

from pytest_homefield.sandbox import bwrap, landlock, protected

FIX = "def top(words):\n    return sorted(words)  # the fix, at HEAD only\n"

READ = '''
import os, sys
site = sys.argv[1]
def read(path):
    try:
        return open(path).read()
    except OSError:
        return "refused"
print(repr(read(os.path.join(site, "textkit", "stats.py"))))
print(repr(read(os.path.join(site, "requests", "__init__.py"))))
print(repr(read(os.path.join(site, "..", "..", "..", "pyvenv.cfg"))))
print(sorted(os.listdir(site)))
'''


def test_landlock_shows_the_installed_copy_by_name_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    landlock_abi()
    repo = GitRepo.init(tmp_path / "proj")
    repo.write("textkit/__init__.py", "")
    repo.write("textkit/stats.py", FIX)
    repo.commit("textkit.top sorts its words")
    venv = tmp_path / "venv"  # the user's environment, the project installed non-editable in it
    site = venv / "lib" / "python3.11" / "site-packages"
    for rel, text in {"textkit/stats.py": FIX, "textkit/__init__.py": "", "requests/__init__.py": "R = 1\n",
                      "../../../pyvenv.cfg": "home = /usr\n"}.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    policy = landlock.LandlockPolicy(ro=[*bwrap.python_paths([sys.executable]), venv], connect=[], unix=False)

    def inside() -> list[str]:
        argv = landlock.landlock_argv([sys.executable, "-c", READ, str(site)], policy)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.splitlines()

    monkeypatch.setattr(protected, "_PROTECTED", [])  # the control: nothing under benchmark
    assert inside()[0] == repr(FIX)
    monkeypatch.setattr(protected, "_PROTECTED", [repo.path.resolve()])
    assert inside() == ["'refused'", repr("R = 1\n"), repr("home = /usr\n"), "['requests', 'textkit']"]


def test_a_symlink_to_the_folder_of_a_copy_is_carved_too(tmp_path: Path) -> None:
    """Landlock follows a symlink to its target: a venv's ``lib64 -> lib`` allowed as an entry of the venv
    showed the copy its ``lib`` was carved around (atk15 F1 under Landlock: 2 of 2 solved)."""
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    (site / "textkit").mkdir(parents=True)
    (site / "textkit" / "stats.py").write_text(FIX)
    (venv / "bin").mkdir()
    (venv / "lib64").symlink_to("lib")
    hidden = str((site / "textkit").resolve())
    ro, listable = landlock.carve([str(venv)], [hidden])
    reach = [os.path.realpath(p) for p in ro]
    assert not any(hidden == r or hidden.startswith(r + "/") for r in reach), ro
    assert str(venv / "bin") in ro and str(site.resolve()) in listable
