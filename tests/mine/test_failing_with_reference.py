"""The mine's summary names a test that fails with the reference fix at several commits (nu27 on
prettytable: its ``test_version`` wants a version with two dots; with a ``setup_cmd`` stub of ``"0"`` it
failed at every commit and was left out of the 9 of 12 tasks whose test files hold it, which only each
record's ``excluded`` field said, and the one commit whose only red test it was read "reference fails")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.summary import failing_with_reference_line

_VERSION_TEST = "import pkg\n\n\ndef test_version():\n    assert pkg.__version__.count('.') >= 2\n"


@pytest.mark.slow
def test_a_test_broken_at_every_commit_is_named_once_in_the_summary(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    code = "__version__ = '0'\n\n\ndef add(a, b):\n    return a + b\n"
    tests = _VERSION_TEST + "\n\ndef test_add():\n    assert pkg.add(1, 2) == 3\n"
    repo.write("pkg/__init__.py", code)
    repo.write("tests/test_pkg.py", tests)
    repo.commit("Initial package with add")
    for name, op in (("mul", "*"), ("sub", "-")):
        code += f"\n\ndef {name}(a, b):\n    return a {op} b\n"
        tests += f"\n\ndef test_{name}():\n    assert pkg.{name}(6, 3) == 6 {op} 3\n"
        repo.write("pkg/__init__.py", code)
        repo.write("tests/test_pkg.py", tests)
        repo.commit(f"Add {name}() for two numbers")
    # untracked, like a user's local config: a test command without third-party plugins keeps each test run lean
    (repo.path / ".homefield.yml").write_text(f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n')
    proc = homefield(repo.path, "mine", "--stability-runs", "1", "--sandbox", "none")
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-2000:]
    assert "Mined 2 tasks from 2 candidates" in out, out[-3000:]
    line = next((ln for ln in out.splitlines() if ln.startswith("Failing with the reference fix: ")), None)
    assert line == ("Failing with the reference fix: tests/test_pkg.py::test_version at 2 commits: a test that fails "
                    "with several commits' own code is broken in this environment (a stub of a generated file, a "
                    "package, a service) and is left out of every task it fails in; if a step would make it pass, "
                    "add it to setup_cmd in .homefield.yml and mine again."), out[-3000:]


def test_one_commit_alone_or_another_exclusion_says_nothing() -> None:
    one = {"excluded": {"t.py::test_a": "fails_with_reference"}}
    assert failing_with_reference_line([one]) is None  # a single commit's failing test may be its own doing
    flaky = {"excluded": {"t.py::test_a": "flaky"}}
    assert failing_with_reference_line([flaky, flaky]) is None
    many = [{"excluded": {f"t.py::test_{c}": "fails_with_reference" for c in "abcde"}}] * 2
    line = failing_with_reference_line([*many, {"excluded": {"t.py::test_e": "fails_with_reference"}}])
    assert line is not None and line.startswith(
        "Failing with the reference fix: t.py::test_e at 3 commits, t.py::test_a at 2 commits, t.py::test_b at 2 "
        "commits and 2 other tests: "), line
