"""Per-test-id outcomes from the reporter plugin (or JUnit XML), cross-checked with the exit code."""

from __future__ import annotations

import ast
import json
import os
import shlex
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from pytest_homefield.sandbox.testrun import (
    REPORTER_DIR,
    build_command,
    last_error_line,
    pytest_python,
    run_tests,
    scrubbed_env,
)

PY = shlex.quote(sys.executable)
#: The test command used here: plugins these tests do not need are left out to save start-up time
#: (test_default_command_loads_everything runs the plain command with all of them).
NO_PLUGINS = "-p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
CMD = f"{PY} -m pytest {NO_PLUGINS}"

MIXED = """
import pytest

def test_ok():
    pass

def test_bad():
    assert 1 == 2

@pytest.mark.parametrize("x", ["with space", "[bracket]", "café ñ", "PASSED", "FAILED", "x::y"])
def test_param(x):
    assert x != "FAILED"

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_setup_error(broken):
    pass

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown broke")

def test_teardown_error(bad_teardown):
    pass

def test_skip():
    pytest.skip("never")

@pytest.mark.skipif(True, reason="marker")
def test_skipif():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0

@pytest.mark.xfail(reason="known")
def test_xpass():
    pass

@pytest.mark.xfail(strict=True)
def test_xpass_strict():
    pass

class TestGroup:
    def test_method(self):
        pass
"""

EXPECTED = {
    "tests/test_mixed.py::test_ok": "passed",
    "tests/test_mixed.py::test_bad": "failed",
    "tests/test_mixed.py::test_param[with space]": "passed",
    "tests/test_mixed.py::test_param[[bracket]]": "passed",
    "tests/test_mixed.py::test_param[caf\\xe9 \\xf1]": "passed",
    "tests/test_mixed.py::test_param[PASSED]": "passed",
    "tests/test_mixed.py::test_param[FAILED]": "failed",
    "tests/test_mixed.py::test_param[x::y]": "passed",
    "tests/test_mixed.py::test_setup_error": "error",
    "tests/test_mixed.py::test_teardown_error": "error",  # the call passed, the teardown failed: pytest's ERROR
    "tests/test_mixed.py::test_skip": "skipped",
    "tests/test_mixed.py::test_skipif": "skipped",
    "tests/test_mixed.py::test_xfail": "xfailed",
    "tests/test_mixed.py::test_xpass": "xpassed",
    "tests/test_mixed.py::test_xpass_strict": "failed",
    "tests/test_mixed.py::TestGroup::test_method": "passed",
}


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return _project(
        tmp_path / "proj",
        {
            "src/mypkg/__init__.py": "VALUE = 42\n",
            "tests/test_mixed.py": MIXED,
            "tests/test_src.py": "from mypkg import VALUE\n\ndef test_value():\n    assert VALUE == 42\n",
        },
    )


def _phases(out_dir: Path) -> Counter:
    events = [json.loads(line) for line in (out_dir / "outcomes.jsonl").read_text().splitlines()]
    return Counter((e["nodeid"], e["when"]) for e in events if e["event"] == "phase")


def test_every_outcome_kind_and_awkward_ids(mixed: Path, tmp_path: Path) -> None:
    run = run_tests(mixed, CMD, ["tests/test_mixed.py", "tests/test_src.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {**EXPECTED, "tests/test_src.py::test_value": "passed"}  # src/ is importable
    assert run.exit_code == 1 and not run.timed_out and not run.collection_error
    assert run.collected == len(EXPECTED) + 1
    assert run.error is None
    assert run.log_path == tmp_path / "out" / "tests.log" and "test_bad" in run.log_path.read_text()
    assert run.passed("tests/test_mixed.py::test_ok") and not run.passed("tests/test_mixed.py::test_xpass")
    assert max(_phases(tmp_path / "out").values()) == 1
    # nothing written into the project by us: no bytecode, no pytest cache, no outcome file
    for name in ("__pycache__", ".pytest_cache", "outcomes.jsonl", "tests.log"):
        assert not list(mixed.rglob(name)), name


def test_ids_as_printed_select_the_same_tests(mixed: Path, tmp_path: Path) -> None:
    first = run_tests(mixed, CMD, ["tests/test_mixed.py"], out_dir=tmp_path / "a")
    wanted = sorted(i for i in first.outcomes if "param" in i or "TestGroup" in i)
    again = run_tests(mixed, CMD, wanted, out_dir=tmp_path / "b")
    assert again.outcomes == {i: first.outcomes[i] for i in wanted}


@pytest.mark.slow
def test_xdist_in_addopts_reports_each_phase_once(mixed: Path, tmp_path: Path) -> None:
    (mixed / "pytest.ini").write_text("[pytest]\naddopts = -n 2 -x\n")
    (mixed / "tests" / "test_broken.py").write_text("import not_a_module\n")
    run = run_tests(mixed, CMD, ["tests/test_mixed.py", "tests/test_broken.py"], out_dir=tmp_path / "out")
    assert run.outcomes == EXPECTED  # -x in addopts does not stop the run either
    phases = _phases(tmp_path / "out")
    assert set(phases.values()) == {1}
    assert {n for n, _ in phases} == set(EXPECTED)
    assert run.collection_error and list(run.collection_errors) == ["tests/test_broken.py"]
    assert "not_a_module" in run.collection_errors["tests/test_broken.py"]
    assert run.collected == len(EXPECTED)


SUBTESTS = """
import unittest

class TestCase(unittest.TestCase):
    def test_unittest_subtest_fails(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_unittest_subtests_pass(self):
        for i in range(3):
            with self.subTest(i=i):
                pass

def test_subtest_fails(subtests):
    for i in range(3):
        with subtests.test(i=i):
            assert i != 1

def test_subtests_pass(subtests):
    for i in range(3):
        with subtests.test(i=i):
            pass
"""


def test_a_failed_subtest_fails_the_test(tmp_path: Path) -> None:
    if int(pytest.__version__.split(".")[0]) < 9:
        pytest.skip("subtests are built into pytest from 9.0")
    proj = _project(tmp_path / "p", {"tests/test_sub.py": SUBTESTS})
    run = run_tests(proj, CMD, ["tests/test_sub.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {
        "tests/test_sub.py::TestCase::test_unittest_subtest_fails": "failed",
        "tests/test_sub.py::TestCase::test_unittest_subtests_pass": "passed",
        "tests/test_sub.py::test_subtest_fails": "failed",
        "tests/test_sub.py::test_subtests_pass": "passed",
    }
    assert run.exit_code == 1 and run.error is None


def test_import_error_in_one_module_keeps_the_others(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "p",
        {
            "tests/test_new.py": "from mypkg import not_yet\n\ndef test_new():\n    assert not_yet()\n",
            "tests/test_old.py": "def test_old():\n    pass\n",
            "mypkg/__init__.py": "",
        },
    )
    run = run_tests(proj, CMD, ["tests/test_new.py", "tests/test_old.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_old.py::test_old": "passed"}
    assert run.collection_error and "ImportError" in run.collection_errors["tests/test_new.py"]
    assert run.exit_code == 1 and run.error is None


def test_conftest_import_error_is_a_collection_error(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "p",
        {
            "conftest.py": "from mypkg import not_yet\n",
            "mypkg/__init__.py": "",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    run = run_tests(proj, CMD, ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 4 and run.outcomes == {}
    assert run.collection_error and "not_yet" in run.collection_errors["conftest.py"]


def test_nothing_collected(tmp_path: Path) -> None:
    proj = _project(tmp_path / "p", {"tests/test_empty.py": "X = 1\n"})
    run = run_tests(proj, CMD, ["tests/test_empty.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 5 and run.collected == 0 and run.outcomes == {} and not run.collection_error


def test_missing_target_is_a_collection_error(tmp_path: Path) -> None:
    proj = _project(tmp_path / "p", {"tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(proj, CMD, ["tests/test_gone.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 4 and run.collection_error
    assert run.error == ("the test command exited with status 4 before any test ran: "
                         "ERROR: file or directory not found: tests/test_gone.py")


def test_an_internal_error_before_any_test_is_named_in_one_line(tmp_path: Path) -> None:
    conftest = "def pytest_sessionstart(session):\n    raise RuntimeError('boom')\n"
    proj = _project(tmp_path / "p", {"conftest.py": conftest, "tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(proj, CMD, ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 3 and run.collection_error and run.outcomes == {}
    assert run.error == "the test command exited with status 3 before any test ran: INTERNALERROR> RuntimeError: boom"


@pytest.mark.parametrize("log, line", [
    # pytest 8.4 and 9.0 (python -m pytest): argparse's prog is the module file
    ("ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\n"
     "__main__.py: error: unrecognized arguments: --x\n  inifile: None\n  rootdir: /r\n",
     "__main__.py: error: unrecognized arguments: --x"),
    # pytest 9.2: the prog is how it was launched, with spaces
    ("ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n"
     "python -m pytest: error: unrecognized arguments: --x\n  inifile: None\n  rootdir: /r\n",
     "python -m pytest: error: unrecognized arguments: --x"),
    ("ERROR: usage: pytest [options]\npytest: error: argument -p: expected one argument\n",
     "pytest: error: argument -p: expected one argument"),
    ("ERROR: file or directory not found: tests/nope.py\n", "ERROR: file or directory not found: tests/nope.py"),
    ("INTERNALERROR> Traceback\nINTERNALERROR> RuntimeError: boom\n", "INTERNALERROR> RuntimeError: boom"),
    # a warning turned error (pallets-eco/blinker with pytest-asyncio 1.x): its message runs on for lines
    ("INTERNALERROR>     warnings.warn(PytestDeprecationWarning(_UNSET))\n"
     "INTERNALERROR> pytest.PytestDeprecationWarning: The option \"asyncio_default_fixture_loop_scope\" is unset.\n"
     "INTERNALERROR> The event loop scope for asynchronous fixtures will default to the fixture scope.\n",
     "INTERNALERROR> pytest.PytestDeprecationWarning: The option \"asyncio_default_fixture_loop_scope\" is unset."),
    ("INTERNALERROR> RuntimeError: " + "x" * 400 + "\n", "INTERNALERROR> RuntimeError: " + "x" * 270 + "…"),
    ("ERROR: usage: pytest [options]\n", None),
    ("tests/test_a.py F\nE   assert 1 == 2\n", None),
])
def test_the_stop_line_is_read_from_its_stable_parts(tmp_path: Path, log: str, line: str | None) -> None:
    """What pytest said when it stopped before any test, whatever its version calls itself."""
    (tmp_path / "tests.log").write_text(log)
    assert last_error_line(tmp_path / "tests.log") == line


def test_a_warning_filter_naming_a_class_this_pytest_lacks_says_which_and_why(tmp_path: Path) -> None:
    """nub58 on dgilland/pydash: 5 commits of 2023-24 filter ``pytest.PytestRemovedIn8Warning``, which pytest 9 has
    not; pytest's error is a heading (``ERROR: while parsing the following warning configuration:``) whose
    filter and cause follow it, and the records said the heading alone, 5 times, naming neither."""
    proj = _project(tmp_path / "p", {
        "setup.cfg": "[tool:pytest]\nfilterwarnings =\n    ignore::pytest.PytestRemovedIn8Warning:pytest_pylint.*\n",
        "tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(proj, CMD, ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 4 and run.outcomes == {}
    assert run.error == (
        "the test command exited with status 4 before any test ran: ERROR: while parsing the following warning "
        "configuration: ignore::pytest.PytestRemovedIn8Warning:pytest_pylint.* (AttributeError: module 'pytest' "
        "has no attribute 'PytestRemovedIn8Warning')"), run.error


def test_a_usage_error_is_named_by_the_installed_pytest(tmp_path: Path) -> None:
    """The installed pytest's own wording of an unknown option, end to end (exit status 4)."""
    proj = _project(tmp_path / "p", {"tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(proj, f"{CMD} --no-such-option", ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 4 and run.outcomes == {}
    assert run.error is not None and run.error.startswith("the test command exited with status 4 before any test ran: ")
    assert run.error.endswith(": error: unrecognized arguments: --no-such-option"), run.error


def test_a_disabled_cache_provider_with_warnings_as_errors_still_runs(tmp_path: Path) -> None:
    """``-p no:cacheprovider`` in the test command and ``filterwarnings = error`` (filelock's setup):
    homefield's ``-o cache_dir`` is not an unknown option that stops pytest before any test."""
    proj = _project(tmp_path / "p", {"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
                                     "tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(proj, f"{CMD} -p no:cacheprovider", ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_a.py::test_a": "passed"} and run.exit_code == 0, run.log_path.read_text()
    assert not (proj / ".pytest_cache").exists()


def test_exit_status_contradicting_outcomes_is_noted(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "p",
        {
            "conftest.py": "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n",
            "tests/test_a.py": "def test_a():\n    assert 0\n",
        },
    )
    run = run_tests(proj, CMD, ["tests/test_a.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 0 and run.outcomes == {"tests/test_a.py::test_a": "failed"}
    assert run.error and "exit status 0" in run.error


def test_timeouts(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "p",
        {"tests/test_slow.py": "import time\n\ndef test_slow():\n    time.sleep(30)\n\ndef test_fast():\n    pass\n"},
    )
    per_test = run_tests(proj, CMD, ["tests/test_slow.py"], out_dir=tmp_path / "t", test_timeout_s=0.5)
    assert per_test.outcomes == {"tests/test_slow.py::test_slow": "failed", "tests/test_slow.py::test_fast": "passed"}
    assert per_test.test_timeouts == ["tests/test_slow.py::test_slow"] and not per_test.timed_out
    whole = run_tests(proj, CMD, ["tests/test_slow.py"], out_dir=tmp_path / "w", timeout_s=1)
    assert whole.timed_out and whole.exit_code is None and whole.wall_s < 15
    assert whole.error and "timed out" in whole.error
    # a test command without plugin autoload (the demo's) still gets the per-test limit
    lean = run_tests(proj, f"{PY} -m pytest --disable-plugin-autoload", ["tests/test_slow.py"],
                     out_dir=tmp_path / "l", test_timeout_s=0.5, timeout_s=20)
    assert lean.test_timeouts == ["tests/test_slow.py::test_slow"] and not lean.timed_out


def test_environment_is_scrubbed(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "p",
        {
            "tests/test_env.py": """
                import os, sys
                def test_env():
                    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_WORKER", "COV_CORE_SOURCE",
                                "PYTHONSTARTUP", "HOMEFIELD_SECRET", "GIT_DIR"):
                        assert key not in os.environ, key
                    assert os.environ["PYTHONHASHSEED"] == "0"
                    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"
                    assert "KEEP_ME" not in os.environ  # hatk39: none of the host's but the allowlist's
                    assert os.environ["LC_KEEP_ME"] == "yes" and os.environ["PYTHONKEEP"] == "yes"
                    assert hash("abc") == hash("abc")
                    assert "pytest_homefield" not in sys.modules  # its entry point is blocked (-p no:homefield)
                """
        },
    )
    env = {
        **os.environ,
        "PYTEST_ADDOPTS": "--this-option-does-not-exist",
        "PYTEST_PLUGINS": "no_such_plugin_module",
        "PYTEST_XDIST_WORKER": "gw9",
        "COV_CORE_SOURCE": "x",
        "PYTHONSTARTUP": "/nonexistent",
        "HOMEFIELD_SECRET": "task id",
        "GIT_DIR": "/elsewhere/.git",
        "KEEP_ME": "yes",
        "LC_KEEP_ME": "yes",
        "PYTHONKEEP": "yes",
        "PYTHONPATH": "/some/where",
        "HOMEFIELD_TEST_ENV": "PYTEST_ADDOPTS,PYTEST_PLUGINS",  # soft41: named there, still never carried
    }
    run = run_tests(proj, CMD, ["tests/test_env.py"], out_dir=tmp_path / "out", env=env)
    assert run.outcomes == {"tests/test_env.py::test_env": "passed"}, run.log_path.read_text()
    scrubbed = scrubbed_env(proj, env, test_timeout_s=7)
    assert scrubbed["PYTHONPATH"].split(os.pathsep) == [str(proj), str(REPORTER_DIR), "/some/where"]
    assert scrubbed["PYTEST_TIMEOUT"] == "7"


def test_default_command_loads_everything(mixed: Path, tmp_path: Path) -> None:
    """The plain default command with every installed plugin (the package's own is blocked: inert there)."""
    run = run_tests(mixed, "python -m pytest", ["tests/test_src.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_src.py::test_value": "passed"}, run.log_path.read_text()[-2000:]


def test_junit_placeholder_with_pytest(mixed: Path, tmp_path: Path) -> None:
    run = run_tests(
        mixed, f"{PY} -m pytest {NO_PLUGINS} --junitxml={{junit}}", ["tests/test_mixed.py"], out_dir=tmp_path / "out"
    )
    assert (tmp_path / "out" / "junit.xml").exists() and not (tmp_path / "out" / "outcomes.jsonl").exists()
    assert run.outcomes["tests.test_mixed::test_ok"] == "passed"
    assert run.outcomes["tests.test_mixed::test_bad"] == "failed"
    assert run.outcomes["tests.test_mixed::test_setup_error"] == "error"
    assert run.outcomes["tests.test_mixed::test_skip"] == "skipped"
    assert run.outcomes["tests.test_mixed::test_xfail"] == "xfailed"
    assert run.outcomes["tests.test_mixed.TestGroup::test_method"] == "passed"
    assert run.exit_code == 1 and not run.collection_error


JUNIT_WRITER = """
import sys
out, files = sys.argv[1], sys.argv[2:]
cases = "".join(f'<testcase classname="suite" name="{f}"/>' for f in files)
cases += '<testcase classname="suite" name="broken"><failure message="no"/></testcase>'
open(out, "w").write(f'<testsuites><testsuite name="s">{cases}</testsuite></testsuites>')
sys.exit(1)
"""


def test_junit_xml_that_raised_on_the_host_is_read() -> None:
    """atk19: ``(text or …).strip().splitlines()[-1]`` raised ``IndexError`` for a blank text; an unknown or
    multi-byte encoding in the XML declaration raised ``LookupError`` / ``ValueError``."""
    from pytest_homefield.sandbox.outcomes import parse_junit

    for error in ('<error message="collection failure"> \n </error>', '<error message="collection failure"/>'):
        parsed = parse_junit(f'<testsuite><testcase name="t.py">{error}</testcase></testsuite>'.encode())
        assert parsed.collection_errors == {"t.py": "collection failure"} and parsed.outcomes == {}
    for encoding in ("bogus", "cp932"):  # LookupError, ValueError
        assert not parse_junit(f'<?xml version="1.0" encoding="{encoding}"?><testsuite/>'.encode()).found


def test_junit_placeholder_with_a_custom_runner(tmp_path: Path) -> None:
    proj = _project(tmp_path / "p", {"runner.py": JUNIT_WRITER})
    run = run_tests(proj, f"{PY} runner.py {{junit}} {{files}}", ["a b", "c"], out_dir=tmp_path / "out")
    assert run.outcomes == {"suite::a b": "passed", "suite::c": "passed", "suite::broken": "failed"}
    assert run.collected == 3 and not run.collection_error and run.error is None
    # a runner that fails before writing any XML: a build/import failure, i.e. a collection error
    broken = run_tests(proj, f"{PY} -c 'raise SystemExit(2)' {{junit}}", [], out_dir=tmp_path / "out2")
    assert broken.collection_error and broken.outcomes == {}


def test_build_command() -> None:
    argv, junit = build_command("python -m pytest -q", ["t/test_a.py::test[x y]"], out_dir=Path("/o"))
    assert junit is None
    assert argv[:4] == ["python", "-m", "pytest", "-q"] and argv[-1] == "t/test_a.py::test[x y]"
    assert argv[argv.index("-p") + 1] == "homefield_reporter" and argv[argv.index("-p") + 3] == "no:homefield"
    assert "--continue-on-collection-errors" in argv and "--maxfail=0" in argv
    argv, junit = build_command("make test OUT={junit}", ["a"], out_dir=Path("/o"))
    assert argv == ["make", "test", "OUT=/o/junit.xml", "a"] and junit == Path("/o/junit.xml")
    with pytest.raises(ValueError):
        build_command("python 'unclosed", [], out_dir=Path("/o"))


def test_reporter_is_standalone() -> None:
    source = (REPORTER_DIR / "homefield_reporter.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "pytest_homefield" not in imported
    # pytest_timeout: imported only when installed (inside try), to load it where autoload is off; unittest: its
    # assertRaises context is watched as pytest.raises is (the caught records, exc35); types: a decorated test's
    # body found through its wrapper's closure (soft39); ast, inspect, textwrap: whether a with's context takes
    # exceptions, read from its code (soft42)
    assert imported <= {"__future__", "ast", "inspect", "json", "os", "sys", "textwrap", "types", "typing", "pytest",
                        "pytest_timeout", "unittest"}


def test_the_private_folder_is_gone_before_anything_is_written_back(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Attacker8's F3: the test process (the agent's code) filled the disk from its private folder after
    pytest finished, and homefield's own write of ``tests.log`` then failed: ``infra``, unscored. The
    private folder is removed before any byte is written back, so what the test process left there is
    freed first."""
    from pytest_homefield.sandbox import nofollow, testrun

    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "test_a.py").write_text("def test_a():\n    pass\n")
    seen: list[bool] = []
    real = nofollow.write_bytes

    def spy(root: Path, name: str, data: bytes) -> None:
        if name == testrun.LOG_FILE:
            # pytest's header names its cache folder, which lives in the private folder
            cache = next(line.split(": ", 1)[1] for line in data.decode().splitlines() if line.startswith("cachedir: "))
            seen.append(Path(cache).parent.exists())
        real(root, name, data)

    monkeypatch.setattr(testrun.nofollow, "write_bytes", spy)
    run = run_tests(tmp_path / "w", CMD, ["test_a.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"test_a.py::test_a": "passed"} and seen == [False], (run, seen)


SPY = '''
import os

def test_no_command_line_names_me_zq81():
    secret = "test_no_command_line_names_" + "me_zq81"
    seen = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                if secret.encode() in fh.read():
                    seen.append(pid)
        except OSError:
            pass
    assert not seen, seen
'''


def test_the_targets_are_on_no_command_line(tmp_path: Path) -> None:
    """atk21: ``/proc/<pid>/cmdline`` is readable by every process of the machine (a Landlock-confined
    agent's too), and a test run's targets name the hidden test files and FAIL_TO_PASS ids: a spy agent
    read another session's grading ids there. They go in a file of the run's private folder; the test
    looks for its own id in every process's command line (the reaper's, the test process's), unsandboxed
    so that it sees them all. On main it found it in both."""
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "tests" / "test_spy.py").write_text(SPY)
    run = run_tests(tmp_path / "repo", CMD, ["tests/test_spy.py::test_no_command_line_names_me_zq81"],
                    out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_spy.py::test_no_command_line_names_me_zq81": "passed"}, \
        run.log_path.read_text()


def test_a_pytest_script_keeps_the_targets_off_the_command_line(tmp_path: Path) -> None:
    """The same spy with ``test_cmd`` the environment's ``pytest`` script (``.venv/bin/pytest -p no:…``): its
    interpreter is read from the script's ``#!`` line and asked as ``python`` is. Before, only a command
    whose first word named a Python got ``@targets.args``, and this one found its id on two command lines."""
    script = Path(PY).parent / "pytest"
    if not script.is_file():
        pytest.skip(f"no pytest script beside {PY}")
    (tmp_path / "repo" / "tests").mkdir(parents=True)
    (tmp_path / "repo" / "tests" / "test_spy.py").write_text(SPY)
    run = run_tests(tmp_path / "repo", f"{script} {NO_PLUGINS}",
                    ["tests/test_spy.py::test_no_command_line_names_me_zq81"], out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_spy.py::test_no_command_line_names_me_zq81": "passed"}, \
        run.log_path.read_text()


def test_pytest_python_reads_the_interpreter_of_a_pytest_script(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, head in (("pytest", "#!/v/bin/python3.12\n"), ("py.test", "#!/usr/bin/env -S python3 -u\n"),
                       ("tox", "#!/v/bin/python\n")):
        (bin_dir / name).write_text(head + "import sys\n")
        (bin_dir / name).chmod(0o755)
    assert pytest_python("python3", None) == "python3" and pytest_python("/v/bin/python", None) == "/v/bin/python"
    assert pytest_python("pytest", str(bin_dir)) == "/v/bin/python3.12"
    assert pytest_python(str(bin_dir / "py.test"), None) == "python3"
    assert pytest_python("tox", str(bin_dir)) is None  # not pytest: @FILE would be its argument
    assert pytest_python("bin/pytest", str(bin_dir)) is None  # relative to which folder? left as it was
    assert pytest_python("uv", str(bin_dir)) is None and pytest_python("pytest", str(tmp_path / "none")) is None
    (bin_dir / "pytest").write_text("echo not python\n")
    assert pytest_python("pytest", str(bin_dir)) is None


def test_build_command_with_an_argsfile() -> None:
    argv, junit = build_command("python -m pytest", ["t/test_a.py::test[x y]", "t/b.py"], out_dir=Path("/o"),
                                argsfile=True)
    assert junit is None and argv[-1] == "@/o/targets.args" and "t/b.py" not in argv


def test_a_program_found_on_path_is_given_by_its_path_but_never_one_of_the_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops56 (``testrun.program_found``, for a sandbox to bind the program as a file the command names): a bare
    program word found on the run's ``PATH`` becomes its path (past an ``env`` prefix); a Python, a path, a name
    not found and a program inside a protected folder (the repository's: never shown to a test run) stay."""
    from pytest_homefield.sandbox import protected
    from pytest_homefield.sandbox.testrun import program_found
    mine, repo = tmp_path / "bin", tmp_path / "repo"
    for folder in (mine, repo / "bin"):
        folder.mkdir(parents=True)
        (folder / "hftool").write_text("#!/bin/sh\n")
        (folder / "hftool").chmod(0o755)
    path = f"{mine}{os.pathsep}/usr/bin"
    assert program_found(["hftool", "run", "-x"], path) == [str(mine / "hftool"), "run", "-x"]
    assert program_found(["env", "A=1", "hftool"], path) == ["env", "A=1", str(mine / "hftool")]
    for argv in (["python3", "-m", "pytest"], ["./hftool"], ["nosuchhftool"]):
        assert program_found(argv, path) == argv
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    assert program_found(["hftool"], f"{repo / 'bin'}{os.pathsep}{mine}") == ["hftool"]
