"""Tooling configuration (CI, .gitignore, linters) is neither docs nor source in the scan, and the
no-test-change detail says what did change."""

from __future__ import annotations

from pathlib import Path

from helpers.gitrepo import GitRepo

from pytest_homefield.mine.scan import Candidate, ScanOptions, scan


def test_config_files_are_their_own_class(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 1\n")
    repo.commit("Initial import of the package")
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write(".gitignore", "*.pyc\n")
    ci = repo.commit("Run the tests on every push")
    repo.write("mypy.ini", "[mypy]\nstrict = True\n")
    repo.write("README.md", "# pkg\n")
    typing = repo.commit("Check types strictly and say so")
    repo.write("pkg/core.py", "def core():\n    return 2\n")
    repo.write("mypy.ini", "[mypy]\nstrict = False\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 2\n")
    fix = repo.commit("Make core return two instead of one")
    repo.write("tests/conftest.py", "import pytest\n")
    repo.write("pkg/core.py", "def core():\n    return 3\n")
    support = repo.commit("Add a conftest and change core again")
    repo.git("rm", "-q", "tests/test_core.py")
    repo.write("pkg/core.py", "def core():\n    return 4\n")
    deleted = repo.commit("Drop the old test and change core")
    result = scan(repo.path, ScanOptions())
    rejected = {r.commit: (r.reason, r.detail) for r in result.rejected}
    assert rejected[ci] == ("config_only", ".github/workflows/ci.yml, .gitignore")
    assert rejected[typing] == ("config_only", "mypy.ini and 1 docs file")
    assert rejected[support] == ("no_test_change", "only test support changed (tests/conftest.py), "
                                                   "which names no tests")
    assert rejected[deleted] == ("no_test_change", "test modules only deleted (tests/test_core.py)")
    (cand,) = [c for c in result.candidates if c.commit == fix]
    assert isinstance(cand, Candidate)
    # mypy.ini is not source: the task's languages come from pkg/core.py alone
    assert cand.source_files == ["pkg/core.py"] and cand.config_files == ["mypy.ini"]
