"""A repository whose pytest ``addopts`` ask for coverage (``--cov``, the real pytest-cov from the package
index) still gets outcomes from a sandboxed test run, whose tree is read-only (nu52, arrow-py/arrow: every run
ended with ``OSError: [Errno 30] Read-only file system: '.coverage'`` and no outcome, 13 of 13 candidates
``setup_failed``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_works

from pytest_homefield.sandbox.testrun import run_tests

PLAIN = "-p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:randomly"


@pytest.fixture(scope="module")
def pytest_cov(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the real pytest-cov and coverage (with their ``dist-info``, so pytest autoloads the
    plugin from ``PYTHONPATH``), installed from the package index once per module (no dependencies: this
    environment's pytest is the one that runs)."""
    where = tmp_path_factory.mktemp("cov")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--target", str(where), "pytest-cov", "coverage"],
                          capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        pytest.skip(f"pytest-cov could not be installed: {proc.stderr.strip()[-300:]}")
    where.chmod(0o755)  # pytest makes it 0700; root's sandboxes run under a uid of their own (satk52), as a venv is
    return where


def _repo(root: Path) -> Path:
    """A package, its test and arrow's ``addopts``: coverage of the package, a threshold and a report file."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("def double(x):\n    return 2 * x\n\n\ndef unused():\n    return 0\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_pkg.py").write_text("from pkg import double\n\n\ndef test_double():\n"
                                                "    assert double(2) == 4\n")
    (root / "tox.ini").write_text(textwrap.dedent("""\
        [pytest]
        addopts = -v --cov-branch --cov=pkg --cov-fail-under=99 --cov-report=term-missing --cov-report=xml
        testpaths = tests
    """))
    return root


@pytest.mark.skipif(not bwrap_works(), reason="needs a working bubblewrap")
def test_a_sandboxed_run_gives_outcomes_when_addopts_ask_for_coverage(pytest_cov: Path, tmp_path: Path) -> None:
    """Before: no outcome, the log ending in ``OSError: [Errno 30] Read-only file system: '.coverage'``."""
    repo = _repo(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pytest_cov), os.environ.get("PYTHONPATH")]))}
    run = run_tests(repo, f"{sys.executable} -m pytest {PLAIN}", ["tests/test_pkg.py"], out_dir=tmp_path / "out",
                    env=env, sandbox="bwrap")
    log = run.log_path.read_text()
    assert run.outcomes == {"tests/test_pkg.py::test_double": "passed"}, log[-3000:]
    assert "Read-only file system" not in log
    assert not (repo / ".coverage").exists() and not (repo / "coverage.xml").exists()


def test_an_unsandboxed_run_leaves_no_coverage_files_and_the_plugin_is_loaded(pytest_cov: Path,
                                                                              tmp_path: Path) -> None:
    """Without a sandbox the tree is writable, but coverage is off all the same (a run of a few files against the
    whole suite's ``--cov-fail-under``); outside homefield the same command measures coverage, so the plugin was
    loaded and its options read."""
    repo = _repo(tmp_path / "repo")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pytest_cov), os.environ.get("PYTHONPATH")]))}
    run = run_tests(repo, f"{sys.executable} -m pytest {PLAIN}", ["tests/test_pkg.py"], out_dir=tmp_path / "out",
                    env=env)
    assert run.outcomes == {"tests/test_pkg.py::test_double": "passed"}, run.log_path.read_text()[-3000:]
    assert not (repo / ".coverage").exists() and not (repo / "coverage.xml").exists()
    plain = subprocess.run([sys.executable, "-m", "pytest", *PLAIN.split(), "tests/test_pkg.py"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=120)
    assert "Required test coverage of 99% not reached" in plain.stdout, plain.stdout[-2000:]
    assert (repo / ".coverage").exists()


@pytest.mark.skipif(not bwrap_works(), reason="needs a working bubblewrap")
def test_a_sandboxed_run_finishes_when_addopts_ask_for_a_junit_file(tmp_path: Path) -> None:
    """arrow-py/arrow's ``addopts`` hold ``--junitxml=junit.xml`` too: pytest wrote it into the read-only tree when the
    session finished, and the ``OSError`` came before the reporter's finish event (oracle ``tests_failed`` on
    4c8c44aefc0e: "the test process did not finish")."""
    repo = _repo(tmp_path / "repo")
    (repo / "tox.ini").write_text("[pytest]\naddopts = -v --junitxml=junit.xml -o junit_family=legacy\n"
                                  "testpaths = tests\n")
    run = run_tests(repo, f"{sys.executable} -m pytest {PLAIN}", ["tests/test_pkg.py"], out_dir=tmp_path / "out",
                    sandbox="bwrap")
    log = run.log_path.read_text()
    assert run.finished and run.exit_code == 0, log[-3000:]
    assert run.outcomes == {"tests/test_pkg.py::test_double": "passed"}
    assert "Read-only file system" not in log and not (repo / "junit.xml").exists()


@pytest.fixture(scope="module")
def report_plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the real pytest-html and pytest-json-report (with pytest-metadata, jinja2 and markupsafe,
    which they import), installed from the package index once per module, as :func:`pytest_cov` is."""
    where = tmp_path_factory.mktemp("reports")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--target", str(where), "pytest-html", "pytest-json-report", "pytest-metadata",
                           "jinja2", "markupsafe"], capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        pytest.skip(f"pytest-html could not be installed: {proc.stderr.strip()[-300:]}")
    where.chmod(0o755)
    return where


@pytest.mark.skipif(not bwrap_works(), reason="needs a working bubblewrap")
def test_a_sandboxed_run_finishes_when_addopts_ask_for_html_and_json_reports(report_plugins: Path,
                                                                            tmp_path: Path) -> None:
    """pytest-html's ``--html`` and pytest-json-report's ``--json-report`` in ``addopts`` write their files into the
    read-only tree when the session finishes (nu54: a traceback in ``tests.log``, ``run.error`` "exit status 1 but no
    test failed"); outside homefield the same command writes both, so the plugins were loaded and their options
    read."""
    repo = _repo(tmp_path / "repo")
    (repo / "tox.ini").write_text("[pytest]\naddopts = -v --html=report.html --self-contained-html --json-report "
                                  "--json-report-file=report.json\ntestpaths = tests\n")
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(report_plugins), os.environ.get("PYTHONPATH")]))}
    run = run_tests(repo, f"{sys.executable} -m pytest {PLAIN}", ["tests/test_pkg.py"], out_dir=tmp_path / "out",
                    env=env, sandbox="bwrap")
    log = run.log_path.read_text()
    assert run.finished and run.exit_code == 0 and not run.error, log[-3000:]
    assert run.outcomes == {"tests/test_pkg.py::test_double": "passed"}
    assert "Read-only file system" not in log
    assert not (repo / "report.html").exists() and not (repo / "report.json").exists()
    plain = subprocess.run([sys.executable, "-m", "pytest", *PLAIN.split(), "tests/test_pkg.py"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stdout[-2000:]
    assert (repo / "report.html").exists() and (repo / "report.json").exists()
