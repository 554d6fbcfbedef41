"""Setup help of a mine (issue 35 item 6): the missing-module line never names the repository's own
modules (one the commit adds is missing at the parent by design), it says how to install the test
dependencies (the extra as the repository spells it; a dependency group needs pip ≥ 25.1), an empty
--since window names the newest commit's date, and a conftest.py that cannot import the package under
test ends a homefield session with one line and the install command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.e2e_repo import cli_env, homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.pipeline import missing_modules_line
from pytest_homefield.mine.redgreen import _missing_modules, own_top_levels
from pytest_homefield.mine.scan import ScanOptions, format_scan, scan
from pytest_homefield.mine.setup_help import conftest_import_line, extra_of, group_of, install_hint, pip_version
from pytest_homefield.sandbox.testrun import TestRun, run_tests
from pytest_homefield.settings_table import spelled_for


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
                                        "2024-01-01, before --homefield-since (give an earlier date)")
    with spelled_for("cli"):  # homefield mine --list-candidates (ux65)
        assert format_scan(result).endswith("2024-01-01, before --since (give an earlier date)")
    assert scan(repo.path, ScanOptions(since="2020-01-01")).newest_authored is None


def test_a_module_no_test_dependency_names_gets_its_own_install(tmp_path: Path) -> None:
    """pallets/itsdangerous: ``six`` was missing for one candidate of 2015; today's ``tests`` extra does
    not require it, so installing the extra (the only hint before) would not have helped."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'tests = ["pytest>=8", " PyYAML; python_version>\'3\'"]\n')
    extra = "e.g. /v/bin/python -m pip install -e '.[tests]' (the extra is 'tests')"
    assert install_hint(tmp_path, "/v/bin/python", ["yaml"]) == extra  # carried by PyYAML
    hint = install_hint(tmp_path, "/v/bin/python", ["six.moves", "yaml", "zope.interface"], installed={})
    assert hint is not None and hint.startswith(extra + "; and /v/bin/python -m pip install six zope (named by no ")
    alone = install_hint(tmp_path / "none", "/v/bin/python", ["six"])
    assert alone is not None and alone.startswith("e.g. /v/bin/python -m pip install six (named by no requirement")
    assert install_hint(tmp_path / "none", "/v/bin/python", []) is None


def test_a_missing_module_is_named_by_its_distribution() -> None:
    """exc35 (a new user's llm run): ``dateutil`` was missing and the hint said ``pip install dateutil``. The
    distribution is the one providing the module where homefield runs, else the table of well-known names, else the
    module's own name; a namespace several distributions provide names none of them."""
    from pytest_homefield.mine.setup_help import distribution_of

    installed = {"yaml": ["PyYAML"], "zope": ["zope.interface", "zope.event"], "attr": ["attrs"]}
    assert [distribution_of(m, installed) for m in ("yaml", "attr", "zope.interface", "dateutil.tz", "PIL", "six")] \
        == ["PyYAML", "attrs", "zope", "python-dateutil", "Pillow", "six"]
    hint = install_hint(Path("/nonexistent"), "/v/bin/python", ["dateutil.parser", "bs4"], installed={})
    assert hint is not None and hint.startswith("e.g. /v/bin/python -m pip install beautifulsoup4 python-dateutil "), \
        hint
    # homefield's own Python: its packages_distributions() (pytest is installed where these tests run)
    assert distribution_of("_pytest") == "pytest"


def _conftest_imports_own_package(tmp_path: Path) -> GitRepo:
    """A src-layout repository whose tests/conftest.py imports its own package, which is not installed."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", '[project]\nname = "tinypkg"\nversion = "0"\n'
                                 '[project.optional-dependencies]\ntest = ["pytest"]\n'
                                 '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    repo.write("src/tinypkg/__init__.py", "def add(a, b):\n    return a - b\n")
    repo.write("tests/conftest.py", "import tinypkg\n")
    repo.write("tests/test_a.py", "import tinypkg\n\ndef test_one():\n    assert tinypkg.add(1, 1) in (0, 2)\n")
    repo.commit("Start tinypkg and its tests")
    return repo


def test_a_conftest_that_imports_the_uninstalled_package_gets_one_line_with_the_install_command(
        tmp_path: Path) -> None:
    """Seen on pypa/packaging's layout: a homefield session loads the repository's conftest.py in its own
    Python, so a conftest importing the package under test, not installed there, ended every command
    (mine, run, verify) with pytest's bare "ImportError while loading conftest" traceback and exit 4."""
    repo = _conftest_imports_own_package(tmp_path)
    proc = homefield(repo.path, "mine", timeout=120)
    assert proc.returncode == 4, proc.stderr
    assert "ImportError while loading conftest" not in proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert errors == [f"ERROR: homefield: tests/conftest.py cannot be loaded: ModuleNotFoundError: No module named "
                      f"'tinypkg' ('tinypkg' is the repository's own package, not installed in {sys.executable}, "
                      f"which loads your conftest.py): install the project there, e.g. {sys.executable} -m pip "
                      f"install -e '.[test]'"]
    # without a homefield mode the plugin is inert: pytest says it as before
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo.path,
                           env=cli_env(), capture_output=True, text=True, timeout=120)
    assert plain.returncode == 4 and "ImportError while loading conftest" in plain.stderr
    assert "homefield" not in plain.stderr


def test_conftest_import_line_names_another_module_s_install_and_leaves_other_errors_to_pytest(
        tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'tests = ["pytest", "freezegun"]\n')
    conftest = tmp_path / "conftest.py"
    missing = ModuleNotFoundError("No module named 'freezegun'", name="freezegun")
    assert conftest_import_line(tmp_path, "/v/bin/python", conftest, missing) == (
        "homefield: conftest.py cannot be loaded: ModuleNotFoundError: No module named 'freezegun' (not installed "
        "in /v/bin/python, which loads your conftest.py): e.g. /v/bin/python -m pip install -e '.[tests]' "
        "(the extra is 'tests')")
    (tmp_path / "x.py").write_text("")  # a module of the repository itself, an older release installed
    old = ImportError("cannot import name 'new' from 'x' (/site-packages/x.py)", name="x")
    line = conftest_import_line(tmp_path, "/v/bin/python", conftest, old)
    assert line is not None and line.endswith("install the project there, e.g. /v/bin/python -m pip install -e "
                                              "'.[tests]'")
    assert conftest_import_line(tmp_path, "/v/bin/python", conftest, SyntaxError("invalid syntax")) is None


def test_a_module_missing_where_pytest_stops_before_any_test_is_named(tmp_path: Path) -> None:
    """carpedm20/emoji: its conftest imports the package in ``pytest_sessionstart``; commits of 2024 import
    ``typing_extensions``, which today's environment lacks on Python ≥ 3.9. pytest ends with
    ``INTERNALERROR>`` (exit 3), so the module is named only in the run's error, not in a collection error
    of a file: the mine's ``Missing modules:`` line (and its install command) was missing for it."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("emojilike/__init__.py", "import no_such_dependency_xyz\n")
    repo.write("tests/conftest.py", "def pytest_sessionstart(session):\n    import emojilike\n")
    repo.write("tests/test_a.py", "def test_a():\n    assert True\n")
    repo.commit("Import a dependency at session start")
    run = run_tests(repo.path, f"{sys.executable} -m pytest -p no:cacheprovider -p no:randomly -p no:xdist",
                    ["tests/test_a.py"], out_dir=tmp_path / "out", env={**cli_env(), "PYTHONPATH": str(repo.path)})
    assert run.exit_code == 3 and run.collection_error and not run.collection_errors
    assert "No module named 'no_such_dependency_xyz'" in str(run.error)
    own = own_top_levels(repo.path, repo.head())
    assert _missing_modules([run], own) == ["no_such_dependency_xyz"]


def test_a_module_of_type_checkers_stubs_only_is_never_named_for_an_install(tmp_path: Path) -> None:
    """usr64 (jazzband/prettytable, 1b8b3eb399b0 imports ``_typeshed`` at run time): the hint said ``pip install
    _typeshed``, a module no distribution provides. It is named as stubs-only, and other modules still get installs."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                             'tests = ["pytest"]\n')
    extra = "e.g. /v/bin/python -m pip install -e '.[tests]' (the extra is 'tests')"
    assert install_hint(tmp_path, "/v/bin/python", ["_typeshed"], installed={}) == extra
    hint = install_hint(tmp_path, "/v/bin/python", ["_typeshed", "six"], installed={})
    assert hint is not None and "_typeshed" not in hint and "pip install six (named by no" in hint
    install = lambda lacked: install_hint(tmp_path, "/v/bin/python", lacked, installed={})  # noqa: E731
    alone = missing_modules_line([{"missing_modules": ["_typeshed"]}], "/v/bin/python", install=install)
    assert alone == ("Missing modules: _typeshed (1 candidate): _typeshed exists in type checkers' stubs only: no "
                     "install provides it; a commit that imports it outside `if TYPE_CHECKING:` cannot run its tests.")
    both = missing_modules_line([{"missing_modules": ["_typeshed", "six"]}], "/v/bin/python", install=install)
    assert both is not None and "stubs only" in both and "install the others there (" in both
    assert "pip install six " in both and "pip install _typeshed" not in both
