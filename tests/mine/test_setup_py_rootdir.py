"""Mining's commit runs hold back a ``setup.py`` that moves pytest's rootdir, as grading does (gatk48).

In a repository with no pytest configuration pytest's rootdir is the first folder above the tests' common folder
holding a ``setup.py``. A commit that fixes ``pkg/circles.py``, adds its test ``pkg/tests/test_circles.py`` and makes
``pkg`` a distribution of its own (``pkg/setup.py``) gave ids ``tests/test_circles.py::…`` in the commit runs (the
rootdir ``pkg/``) and ``pkg/tests/test_circles.py::…`` in the parent runs: no id red at the parent was green at the
commit and the candidate was dropped (measured on a141586: ``reference_fails``, "1 red test(s) do not pass at the
commit"). Grading
holds such a file back (``grading.setup_moves``: the task's ids are the parent's rootdir's), so the commit runs do.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.redgreen import verify_candidate

PY = shlex.quote(sys.executable)
CMD = f"{PY} -m pytest -q -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:randomly"
TEST = "pkg/tests/test_circles.py"


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def _commit(repo: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "commit", "-q", "-m", "change")
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.slow
def test_a_commit_adding_a_packages_setup_py_stays_a_task(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    base = _commit(root, {"pkg/__init__.py": "", "pkg/circles.py": "def area(r):\n    return 3 * r * r\n"})
    fix = _commit(root, {
        "pkg/circles.py": "import math\n\n\ndef area(r):\n    return math.pi * r * r\n",
        "pkg/setup.py": "from setuptools import setup\n\nsetup(name='pkg')\n",
        TEST: ("import pytest\n\nfrom pkg.circles import area\n\n\ndef test_unit_circle():\n"
               "    assert area(1) == pytest.approx(3.14159, rel=1e-4)\n")})
    work = tmp_path / "work"
    work.mkdir()
    v = verify_candidate(root, commit=fix, parent=base, test_files=[TEST], runnable_tests=[TEST], test_cmd=CMD,
                         setup_cmd=None, stability_runs=1, run_timeout_s=60, work_root=work)
    assert v.reason is None, (v.reason, v.detail)
    assert v.FAIL_TO_PASS == [f"{TEST}::test_unit_circle"], v.FAIL_TO_PASS
