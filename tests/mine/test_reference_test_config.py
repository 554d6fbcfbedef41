"""Mining builds the commit state as grading builds the reference fix's, test configuration included
(docs/contracts.md §7, verification version 16; nu38).

pallets/click 777a89e232d5 registers the marker of its new tests (``stress``) in ``pyproject.toml``'s
``[tool.pytest.ini_options]``, whose ``filterwarnings = ["error"]`` makes an unknown mark a collection error.
Grading carries no change to a pytest section into its copy (an agent's or the reference fix's), so the
oracle failed the task at grading ("24/24 FAIL_TO_PASS did not pass (collection error)") while the commit
runs of mining, which applied the whole reference fix, had kept it. The commit runs now leave out what
grading leaves out, and the drop says why.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.redgreen import Verification, verify_candidate

PY = shlex.quote(sys.executable)
CMD = f"{PY} -m pytest -q -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:randomly"

PYPROJECT = """\
[project]
name = "pkg"
version = "0"

[tool.pytest.ini_options]
filterwarnings = ["error"]
"""


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


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """(repo, base, marker commit, plain commit): the marker commit adds ``mul``, a test of it marked
    ``@pytest.mark.stress`` and that marker's registration in ``pyproject.toml``; the plain commit on top
    adds ``sub`` and its test, with no change of the test configuration."""
    root = tmp_path_factory.mktemp("testconfig")
    _git(root, "init", "-q", "-b", "main")
    base = _commit(root, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                          "pkg/core.py": "def add(a, b):\n    return a + b\n",
                          "tests/test_core.py": ("from pkg.core import add\n\n\ndef test_add():\n"
                                                 "    assert add(1, 2) == 3\n")})
    marked = _commit(root, {
        "pyproject.toml": PYPROJECT + 'markers = ["stress: long runs"]\n',
        "pkg/core.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        "tests/test_mul.py": ("import pytest\n\nfrom pkg.core import mul\n\n\n@pytest.mark.stress\n"
                              "def test_mul():\n    assert mul(2, 3) == 6\n")})
    plain = _commit(root, {
        "pkg/sub.py": "def sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": "from pkg.sub import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"})
    return root, base, marked, plain


def _verify(repo: Path, parent: str, commit: str, test_file: str, work: Path) -> Verification:
    work.mkdir()
    v = verify_candidate(repo, commit=commit, parent=parent, test_files=[test_file], runnable_tests=[test_file],
                         test_cmd=CMD, setup_cmd=None, stability_runs=1, run_timeout_s=60, work_root=work)
    assert list(work.iterdir()) == []  # every snapshot, copy and scratch folder removed
    return v


@pytest.mark.slow
def test_a_fix_whose_tests_need_its_pytest_configuration_is_no_task(repo: tuple[Path, str, str, str],
                                                                    tmp_path: Path) -> None:
    """The marker commit's test cannot be collected without the registration grading never carries: no
    task (it was kept, FAIL_TO_PASS ``tests/test_mul.py::test_mul``, and oracle failed it at grading), and the
    detail names the file the commit runs left out."""
    root, base, marked, _ = repo
    v = _verify(root, base, marked, "tests/test_mul.py", tmp_path / "work")
    assert v.reason is not None and v.FAIL_TO_PASS == [], (v.reason, v.FAIL_TO_PASS)
    assert v.detail.endswith("; the commit runs left out its change to pyproject.toml: test configuration, which "
                             "grading carries from no change, the reference fix's neither"), v.detail


@pytest.mark.slow
def test_a_fix_without_test_configuration_stays_a_task(repo: tuple[Path, str, str, str], tmp_path: Path) -> None:
    """A commit whose change carries whole (its parent has the registration already) is a task as before."""
    root, _, marked, plain = repo
    v = _verify(root, marked, plain, "tests/test_sub.py", tmp_path / "work")
    assert v.reason is None, v.detail
    assert v.FAIL_TO_PASS == ["tests/test_sub.py::test_sub"]
    assert "left out" not in v.detail
