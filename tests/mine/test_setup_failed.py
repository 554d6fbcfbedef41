"""A candidate dropped ``setup_failed`` says why (r5, pluggy): with the snapshot's ``src/`` first on
``PYTHONPATH``, pytest imports the snapshot's own ``pluggy``, which needs the ``_version.py`` its build
generates; pytest dies before any test and the drop detail used to say only "no outcome was written
(exit status 1)". It now quotes the error line, and the mine's summary says it once with a hint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_homefield.mine.bounds import FAIL_FAST, FailFast
from pytest_homefield.mine.redgreen import classify_runs
from pytest_homefield.mine.summary import setup_failed_line
from pytest_homefield.sandbox.testrun import last_error_line, run_tests


def test_a_snapshot_shadowing_pytests_own_pluggy_names_the_import_error(tmp_path: Path) -> None:
    proj = tmp_path / "pluggy"
    (proj / "src" / "pluggy").mkdir(parents=True)
    (proj / "src" / "pluggy" / "__init__.py").write_text("from ._version import version as __version__\n")
    (proj / "testing").mkdir()
    (proj / "testing" / "test_x.py").write_text("def test_x():\n    pass\n")
    run = run_tests(proj, f"{sys.executable} -m pytest", ["testing/test_x.py"], out_dir=tmp_path / "out",
                    sandbox="none", timeout_s=60)
    assert run.outcomes == {} and run.exit_code == 1
    assert run.error == "no outcome was written (exit status 1): ModuleNotFoundError: No module named 'pluggy._version'"


def test_the_last_error_line_prefers_pytests_own_then_a_traceback(tmp_path: Path) -> None:
    log = tmp_path / "tests.log"
    log.write_text("ImportError while loading conftest '/w/testing/conftest.py'.\ntesting/conftest.py:1: in <module>\n"
                   "    import yaml\nE   ModuleNotFoundError: No module named 'yaml'\n")
    assert last_error_line(log) == "ModuleNotFoundError: No module named 'yaml'"
    log.write_text("Traceback (most recent call last):\n  File \"x\", line 1\nValueError: bad\n"
                   "ERROR: file or directory not found: tests/test_gone.py\n")
    assert last_error_line(log) == "ERROR: file or directory not found: tests/test_gone.py"
    log.write_text("1 passed\nwarnings: DeprecationWarning: old\n")
    assert last_error_line(log) is None


def test_a_message_of_several_lines_reads_whole(tmp_path: Path) -> None:
    """mine29 on mahmoud/boltons: five old commits' conftest declares ``pytest_ignore_collect(path, config)``,
    which pytest 9 refuses; the first line of pluggy's message named the hook, not what is wrong with it."""
    log = tmp_path / "tests.log"
    log.write_text("Traceback (most recent call last):\n  File \"/v/pluggy/_manager.py\", line 448, in _verify_hook\n"
                   "    raise PluginValidationError(\n"
                   "pluggy._manager.PluginValidationError: Plugin 'tests/conftest.py' for hook "
                   "'pytest_ignore_collect'\n"
                   "hookimpl definition: pytest_ignore_collect(path, config)\n"
                   "Argument(s) {'path'} are declared in the hookimpl but can not be found in the hookspec\n\n")
    assert last_error_line(log) == (
        "pluggy._manager.PluginValidationError: Plugin 'tests/conftest.py' for hook 'pytest_ignore_collect' "
        "hookimpl definition: pytest_ignore_collect(path, config) Argument(s) {'path'} are declared in the "
        "hookimpl but can not be found in the hookspec")
    # what follows a message that ended (a blank line, then other output) is not read as its rest
    log.write_text("Traceback (most recent call last):\nValueError: bad\n\n1 error in 0.1s\n")
    assert last_error_line(log) == "ValueError: bad"
    log.write_text("Traceback (most recent call last):\nValueError: bad\n" + "more\n" * 5)
    assert last_error_line(log) == "ValueError: bad"


def test_the_summary_says_the_most_common_setup_failure_once_with_a_hint() -> None:
    why = ("the test command produced no outcomes: parent run 1: no outcome was written (exit status 1): "
           "ModuleNotFoundError: No module named 'pluggy._version'")
    verified = [{"reason": "setup_failed", "detail": why}] * 3 + [
        {"reason": "setup_failed", "detail": "setup_cmd failed at the parent (exit status 2)"},
        {"reason": "setup_failed", "detail": "service 'redis' did not get ready in 10 s"},
        {"reason": "passes_without_change", "detail": "no test failed"}]
    line = setup_failed_line(verified)
    assert line == (f"Setup failed (3 candidates): {why}; a module the build generates is missing: snapshots hold "
                    "the commit's tree only, so generate it with setup_cmd in .homefield.yml; 1 other candidate "
                    "failed otherwise (see the verification records)")
    assert setup_failed_line(verified[3:4]) == (
        "Setup failed (1 candidate): setup_cmd failed at the parent (exit status 2)")
    assert setup_failed_line(verified[4:]) is None


def test_the_same_import_error_in_two_snapshots_reads_alike(tmp_path: Path) -> None:
    """nu25 on pytest-dev/pluggy: 6 old commits failed alike (pytest imports the snapshot's older
    ``pluggy``, which lacks a name it needs), but each error quoted its own snapshot's folder
    (``from 'pluggy' (/tmp/hf-…/tmpab12/src/pluggy/__init__.py)``), so the summary counted 6
    different failures and named a rarer one. The folder is left out: the path reads from the snapshot."""
    errors = []
    for name in ("one", "two"):
        proj = tmp_path / name
        (proj / "src" / "pluggy").mkdir(parents=True)
        (proj / "src" / "pluggy" / "__init__.py").write_text("__version__ = '0'\n")  # no HookimplMarker
        (proj / "testing").mkdir()
        (proj / "testing" / "test_x.py").write_text("def test_x():\n    pass\n")
        run = run_tests(proj, f"{sys.executable} -m pytest", ["testing/test_x.py"], out_dir=tmp_path / f"out-{name}",
                        sandbox="none", timeout_s=60)
        assert run.outcomes == {} and run.error is not None
        errors.append(run.error)
    assert errors[0] == errors[1], errors
    assert str(tmp_path) not in errors[0] and "from 'pluggy' (src/pluggy/__init__.py)" in errors[0], errors[0]
    records = [{"reason": "setup_failed", "detail": f"the test command produced no outcomes: parent run 1: {e}"}
               for e in errors]
    line = setup_failed_line(records)
    assert line is not None and line.startswith("Setup failed (2 candidates): ") and "other" not in line


def test_a_generated_version_module_a_conftest_imports_gets_the_stub_line(tmp_path: Path) -> None:
    """nu43 on urllib3/urllib3 since 2025-06: its ``conftest.py`` imports ``urllib3``, whose ``_version.py``
    hatch-vcs generates, so every candidate failed before any outcome (``setup_failed``, never
    ``reference_fails``): no ``Hint:`` line came and the fail-fast line's "a Hint or Missing modules line below
    says how" pointed at nothing. The ``Setup failed`` line now gives the ``setup_cmd`` line that writes a stub
    at the module's file, and that line, run as ``setup_cmd`` is, makes the package importable."""
    import subprocess

    import yaml

    from pytest_homefield.mine.setup_help import module_file

    proj = tmp_path / "urllib3"
    (proj / "src" / "urllib3").mkdir(parents=True)
    (proj / "src" / "urllib3" / "__init__.py").write_text("from ._version import __version__\n")
    (proj / "test").mkdir()
    (proj / "test" / "test_x.py").write_text("import urllib3\n\ndef test_x():\n    pass\n")
    why = ("the test command produced no outcomes: parent run 1: no outcome was written (exit status 1): "
           "ModuleNotFoundError: No module named 'urllib3._version'")  # the detail urllib3's 11 candidates had
    records = [{"reason": "setup_failed", "detail": why}] * 8
    assert setup_failed_line(records) == (  # without locate, as before
        f"Setup failed (8 candidates): {why}; a module the build generates is missing: snapshots hold the commit's "
        "tree only, so generate it with setup_cmd in .homefield.yml")
    line = setup_failed_line(records, locate=lambda module: module_file(proj, module))
    assert line is not None and "write a stub of it in .homefield.yml, setup_cmd: " in line, line
    yml = line.split("write a stub of it in .homefield.yml, ", 1)[1].rsplit(", then mine again", 1)[0]
    cmd = yaml.safe_load(yml)["setup_cmd"]
    assert "src/urllib3/_version.py" in cmd, cmd
    before = run_tests(proj, f"{sys.executable} -m pytest", ["test/test_x.py"], out_dir=tmp_path / "out1",
                       sandbox="none", timeout_s=60)
    assert before.collection_error and not before.outcomes.get("test/test_x.py::test_x") == "passed"
    subprocess.run(["sh", "-c", cmd], cwd=proj, check=True)
    again = run_tests(proj, f"{sys.executable} -m pytest", ["test/test_x.py"], out_dir=tmp_path / "out2",
                      sandbox="none", timeout_s=60)
    assert again.error is None and set(again.outcomes.values()) == {"passed"}, (again.error, again.outcomes)


def test_one_failure_quoting_each_runs_own_folder_is_counted_once() -> None:
    """nu52, arrow-py/arrow (``--cov`` in its ``addopts``): 13 candidates failed alike, each detail quoting the path
    in its own run's folder; the line said 1 candidate and 12 others failing otherwise."""
    why = ("the test command produced no outcomes: parent run 1: no outcome was written (exit status 1): OSError: "
           "[Errno 30] Read-only file system: '.coverage'; the tests write into the repository's tree ([Errno 30] "
           "Read-only file system: '/dev/shm/hf-7870.1140385-{}/tmp{}/.coverage'), which every sandboxed test run "
           "keeps read-only (mining's and grading's): tests that write there cannot pass in the sandbox")
    records = [{"reason": "setup_failed", "detail": why.format(f"s{n}", f"t{n}")} for n in range(13)]
    records.append({"reason": "setup_failed", "detail": "setup_cmd failed at the parent (exit status 2)"})
    assert setup_failed_line(records) == (
        f"Setup failed (13 candidates): {why.format('s0', 't0')}; 1 other candidate failed otherwise (see the "
        "verification records)")


@pytest.mark.parametrize("where", ["configure", "import"])
def test_fail_fast_stops_on_one_failure_each_snapshot_quotes_its_own_path_of(tmp_path: Path, where: str) -> None:
    """nu54 (nu52's arrow-py/arrow: 13 candidates dropped alike, the mine went on): each candidate's runs have a
    folder of their own, and an error quoting a file of it (``[Errno 30] Read-only file system:
    '/dev/shm/hf-…/tmpab12/.coverage'``) read as a different failure per candidate, so fail-fast's first K never
    agreed. Two snapshots whose ``conftest.py`` fails alike on a file of a fresh temporary folder (in
    ``pytest_configure``: the run ends before any test; at its import: a collection error) now stop it, with the
    path's last part in its line."""
    body = "open(os.path.join(tempfile.mkdtemp(), 'data'), 'rb')\n"
    conftest = "import os, tempfile\n" + (f"def pytest_configure(config):\n    {body}" if where == "configure"
                                          else body)
    details = []
    ff = FailFast(2)
    stops = []
    for name in ("one", "two"):
        proj = tmp_path / name
        (proj / "tests").mkdir(parents=True)
        (proj / "conftest.py").write_text(conftest)
        (proj / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
        run = run_tests(proj, f"{sys.executable} -m pytest", ["tests/test_x.py"], out_dir=tmp_path / f"out-{name}",
                        sandbox="none", timeout_s=60)
        v = classify_runs([run], [run])
        assert v.reason in ("setup_failed", "reference_fails") and "No such file or directory: '/" in v.detail, v
        details.append(v.detail)
        stops.append(ff.add({"reason": v.reason, "detail": v.detail}))
    assert details[0] != details[1]  # each quotes its own folder
    assert stops[0] is None and stops[1] is not None, (stops, details)
    assert stops[1].why == FAIL_FAST and "No such file or directory: '…/data'" in stops[1].detail, stops[1].detail
