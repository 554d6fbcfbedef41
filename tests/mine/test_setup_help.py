"""Setup help of a mine (issue 35 item 6): the missing-module line never names the repository's own
modules (one the commit adds is missing at the parent by design), it says how to install the test
dependencies (the extra as the repository spells it; a dependency group needs pip ≥ 25.1), and an empty
--since window names the newest commit's date."""

from __future__ import annotations

import sys
from pathlib import Path

from helpers.gitrepo import GitRepo

from pytest_homefield.mine.pipeline import missing_modules_line
from pytest_homefield.mine.redgreen import _missing_modules, own_top_levels
from pytest_homefield.mine.scan import ScanOptions, format_scan, scan
from pytest_homefield.mine.setup_help import extra_of, group_of, install_hint, pip_version
from pytest_homefield.sandbox.testrun import TestRun


def _repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("src/mypkg/__init__.py", "")
    repo.write("helper.py", "")
    repo.write("tests/test_a.py", "def test_a(): ...\n")
    repo.commit("Start the package and its tests")
    return repo


def test_own_modules_are_never_missing_from_the_environment(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    own = own_top_levels(repo.path, repo.head())
    assert {"src", "mypkg", "helper", "tests"} <= own
    run = TestRun(outcomes={}, exit_code=2, timed_out=False, collection_error=True, collected=0, wall_s=0.1,
                  log_path=tmp_path / "log", collection_errors={
        "tests/test_a.py": "ModuleNotFoundError: No module named 'mypkg.create_table_parser'",
        "tests/test_b.py": "ModuleNotFoundError: No module named 'freezegun'"})
    assert _missing_modules([run], own) == ["freezegun"]
    records = [{"missing_modules": ["mypkg.create_table_parser", "freezegun"]}]  # verified before the filter
    line = missing_modules_line(records, "/py", own=own)
    assert line is not None and "mypkg" not in line and "freezegun (1 candidate)" in line
    assert missing_modules_line([{"missing_modules": ["helper.x"]}], "/py", own=own) is None


def test_install_hint_names_the_extra_as_spelled_and_the_pip_group_needs(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'docs = ["sphinx"]\ntests = ["pytest"]\n')
    assert extra_of(tmp_path) == "tests"
    assert install_hint(tmp_path, "/v/bin/python") == \
        "e.g. /v/bin/python -m pip install -e '.[tests]' (the extra is 'tests')"
    (tmp_path / "pyproject.toml").write_text('[dependency-groups]\ndev = ["pytest"]\n')
    assert (extra_of(tmp_path), group_of(tmp_path)) == (None, "dev")
    hint = install_hint(tmp_path, sys.executable)
    assert hint is not None and hint.startswith(f"e.g. {sys.executable} -m pip install --group dev")
    version = pip_version(sys.executable)
    assert version is not None
    assert ("needs pip ≥ 25.1" in hint) == (version < (25, 1))
    assert install_hint(tmp_path / "none", sys.executable) is None and install_hint(tmp_path, None) is None


def test_an_empty_since_window_names_the_newest_commit_date(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = scan(repo.path, ScanOptions(since="2099-01-01"))
    assert result.examined == 0 and result.newest_authored is not None
    assert result.newest_authored.startswith("2024-01-01")
    assert format_scan(result).endswith("0 candidates from 0 commits; the newest commit was authored on "
                                        "2024-01-01, before --since (give an earlier date)")
    assert scan(repo.path, ScanOptions(since="2020-01-01")).newest_authored is None


def test_a_module_no_test_dependency_names_gets_its_own_install(tmp_path: Path) -> None:
    """pallets/itsdangerous: ``six`` was missing for one candidate of 2015; today's ``tests`` extra does
    not require it, so installing the extra (the only hint before) would not have helped."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'tests = ["pytest>=8", " PyYAML; python_version>\'3\'"]\n')
    extra = "e.g. /v/bin/python -m pip install -e '.[tests]' (the extra is 'tests')"
    assert install_hint(tmp_path, "/v/bin/python", ["yaml"]) == extra  # carried by PyYAML
    hint = install_hint(tmp_path, "/v/bin/python", ["six.moves", "yaml", "zope.interface"])
    assert hint is not None and hint.startswith(extra + "; and /v/bin/python -m pip install six zope (named by no ")
    alone = install_hint(tmp_path / "none", "/v/bin/python", ["six"])
    assert alone is not None and alone.startswith("e.g. /v/bin/python -m pip install six (named by no requirement")
    assert install_hint(tmp_path / "none", "/v/bin/python", []) is None
