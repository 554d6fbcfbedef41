"""Each conftest template in ``conftest_templates/``, copied into a tiny repository as its root
``conftest.py`` and used by a real ``homefield run`` (one subprocess per session).

The repository (``calc``, built with ``examples/sample-project/build_history.py``) has two tasks:
``Add sub() …`` (well specified) and ``Support more operations`` (vague). Its test file is
``unittest``-style, so pytest and the JUnit template's runner both run it, and it holds one test
that passes only where the package was installed (the venv template), which mining therefore
excludes as failing with the reference.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers.e2e_repo import UNUSED_PLUGINS
from helpers.shared_repo import built_once
from helpers.templates import load_template

from pytest_homefield.commands.demo import load_build_history
from pytest_homefield.sandbox.phases import PHASE_DIR_VAR
from pytest_homefield.sandbox.testrun import read_junit, read_outcomes

TEMPLATES = Path(__file__).resolve().parent.parent / "conftest_templates"

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1.0"

[tool.setuptools]
packages = ["calc"]
"""
_CALC_1 = "def add(a, b):\n    return a + b\n"
_CALC_2 = _CALC_1 + "\n\ndef sub(a, b):\n    return a - b\n"
_CALC_3 = _CALC_2 + "\n\ndef mul(a, b):\n    return a * b\n"
_TEST_2 = """\
import importlib.metadata
import unittest

from calc import add, sub


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)


class TestInstalled(unittest.TestCase):
    def test_distribution_is_installed(self):
        # passes only where calc was installed (the venv template), never in plain mining
        self.assertEqual(importlib.metadata.version("calc"), "0.1.0")
"""
_TEST_3 = _TEST_2.replace("import add, sub", "import add, mul, sub").replace(
    "        self.assertEqual(sub(5, 3), 2)\n",
    "        self.assertEqual(sub(5, 3), 2)\n\n    def test_mul(self):\n        self.assertEqual(mul(4, 3), 12)\n",
)
SUB_SUBJECT = "Add sub() to subtract the second number from the first"
VAGUE_SUBJECT = "Support more operations"


def _commits(sample: ModuleType) -> list[Any]:
    commit = sample.Commit
    return [
        commit("Start calc: a tiny arithmetic package",
               {"pyproject.toml": _PYPROJECT, "setup.py": "from setuptools import setup\n\nsetup()\n",
                "calc/__init__.py": _CALC_1}, expect="no_test_change"),
        commit(SUB_SUBJECT, {"calc/__init__.py": _CALC_2, "tests/test_calc.py": _TEST_2}, expect="task"),
        commit(VAGUE_SUBJECT, {"calc/__init__.py": _CALC_3, "tests/test_calc.py": _TEST_3}, expect="task"),
    ]


def clean_env() -> dict[str, str]:
    """The environment for a child homefield session: none of the outer pytest/xdist variables (but the
    test's own phase lock: on the machine's, its run waited for any other homefield session grading on
    this machine and timed out), and none of this machine's unused pytest plugins (helpers/e2e_repo.py)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HOMEFIELD_", "COV_CORE_")) or k == PHASE_DIR_VAR}
    env["PYTEST_ADDOPTS"] = UNUSED_PLUGINS
    return env


def homefield(repo: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=clean_env(),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"homefield {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def mined_calc(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The ``calc`` repository, built and mined once per test session, shared by xdist workers (stability
    1: it is not under test)."""

    def make(repo: Path) -> None:
        sample = load_build_history()
        sample.build(repo, commits=_commits(sample))
        homefield(repo, "mine", "--stability-runs", "1", "-n", "0")

    return built_once(tmp_path_factory, testrun_uid, "templates-calc", make)


@pytest.fixture
def calc(mined_calc: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "calc"
    shutil.copytree(mined_calc, repo, symlinks=True)
    return repo


def tasks_by_subject(repo: Path) -> dict[str, dict[str, Any]]:
    return {t["subject"]: t for t in _jsonl(repo / ".homefield" / "tasks.jsonl")}


def install_template(repo: Path, name: str, extra: str = "") -> Path:
    target = repo / "conftest.py"
    target.write_text((TEMPLATES / name).read_text() + textwrap.dedent(extra))
    return target


def the_run(repo: Path) -> tuple[Path, list[dict[str, Any]]]:
    runs = [d for d in (repo / ".homefield" / "runs").iterdir() if d.is_dir()]
    assert len(runs) == 1, runs
    return runs[0], _jsonl(runs[0] / "results.jsonl")


@pytest.mark.slow
def test_calc_repository_has_two_tasks(mined_calc: Path) -> None:
    tasks = tasks_by_subject(mined_calc)
    assert set(tasks) == {SUB_SUBJECT, VAGUE_SUBJECT}
    sub = tasks[SUB_SUBJECT]
    # test_add is red at the parent only through the import of sub(): a stub of the missing name passes it there
    # (ms35, contracts §7): excluded, not FAIL_TO_PASS
    assert sub["FAIL_TO_PASS"] == ["tests/test_calc.py::TestCalc::test_sub"]
    assert sub["excluded"] == {"tests/test_calc.py::TestInstalled::test_distribution_is_installed":
                               "fails_with_reference", "tests/test_calc.py::TestCalc::test_add": "passes_with_stub"}
    assert sub["well_specified"] and not tasks[VAGUE_SUBJECT]["well_specified"]


# --- (a) an agent written in Python ----------------------------------------------------------

_FAKE_SDK = '''

# --- test double (tests/test_templates.py): no network, no SDK ---
def call_model(system, user, *, model, timeout_s, max_tokens):
    assert "=== FILE: calc/__init__.py" in user, "the repository's files are not in the prompt"
    assert "=== FILE:" in system
    if "Add sub() to subtract" in user:
        text = "Adding sub.\\n=== FILE: calc/__init__.py\\n" + FIXED + "=== END\\n"
        return Reply(text=text, input_tokens=1000, output_tokens=200, model="claude-haiku-4-5")
    if "Support more operations" in user:
        return Reply(text="Which operations?", input_tokens=900, output_tokens=10, model="claude-haiku-4-5")
    raise RateLimited("429: slow down")


def sdk_version():
    return "fake-sdk 1.0"


FIXED = %r
'''


@pytest.mark.slow
def test_custom_agent_template(calc: Path) -> None:
    install_template(calc, "custom_agent.py", _FAKE_SDK % _CALC_2)
    homefield(calc, "run", "--agent", "sdk-agent", "--attempts", "1", "-n", "0")
    run_dir, results = the_run(calc)
    tasks = tasks_by_subject(calc)
    by_task = {r["task_id"]: r for r in results}
    solved = by_task[tasks[SUB_SUBJECT]["id"]]
    assert solved["agent"] == "sdk-agent"
    assert solved["outcome"] == "solved", solved
    assert solved["cost_usd"] == pytest.approx((1000 * 1.0 + 200 * 5.0) / 1e6)
    assert (solved["input_tokens"], solved["output_tokens"], solved["model"]) == (1000, 200, "claude-haiku-4-5")
    assert by_task[tasks[VAGUE_SUBJECT]["id"]]["outcome"] == "empty_patch"
    art = run_dir / "attempts" / tasks[SUB_SUBJECT]["id"] / "sdk-agent" / "1"
    assert "=== FILE: calc/__init__.py" in (art / "agent.out").read_text()
    assert "+def sub(a, b):" in (art / "diff.patch").read_text()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert "fake-sdk 1.0" in json.dumps(meta)


@pytest.mark.slow
def test_custom_agent_maps_failures_to_outcomes(calc: Path) -> None:
    # a rate limit is not scored and stops scheduling; an SDK error is the agent's failure
    install_template(calc, "custom_agent.py", _FAKE_SDK % _CALC_2 + '''
def call_model(system, user, *, model, timeout_s, max_tokens):
    if "Support more operations" in user:  # the newest task: run first
        raise ValueError("400: bad request")
    raise RateLimited("429: slow down")
''')
    proc = homefield(calc, "run", "--agent", "sdk-agent", "--attempts", "1", "-n", "0")
    _, results = the_run(calc)
    outcomes = {r["task_id"]: (r["outcome"], r["error"]) for r in results}
    tasks = tasks_by_subject(calc)
    assert outcomes[tasks[VAGUE_SUBJECT]["id"]] == ("agent_error", "ValueError: 400: bad request")
    assert outcomes[tasks[SUB_SUBJECT]["id"]][0] == "rate_limited"
    assert "--resume" in proc.stdout


# --- (b) one venv per snapshot ----------------------------------------------------------------

def _offline_install() -> str:
    """An editable install that needs no network: pip without build isolation where setuptools can
    build editable wheels by itself (>= 70.1, or with ``wheel`` installed), else ``setup.py develop``
    (the same editable install as far as the tests can tell)."""
    import setuptools

    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    if (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None:
        return ("{python} -m pip install --quiet --disable-pip-version-check --no-input --no-deps "
                "--no-build-isolation -e .")
    return "{python} setup.py --quiet develop --no-deps"


@pytest.mark.slow
def test_venv_setup_template(calc: Path) -> None:
    install_template(calc, "venv_setup.py", f"\nINSTALL = {_offline_install()!r}\n")
    sub_id = tasks_by_subject(calc)[SUB_SUBJECT]["id"]
    homefield(calc, "run", "--agent", "oracle", "--attempts", "1", "-n", "0", "-k", sub_id)
    run_dir, results = the_run(calc)
    assert [(r["task_id"], r["outcome"]) for r in results] == [(sub_id, "solved")]
    outcomes = read_outcomes(run_dir / "attempts" / sub_id / "oracle" / "1" / "outcomes.jsonl").outcomes
    # this test passes only inside a venv where calc is installed: the hidden tests ran there
    assert outcomes["tests/test_calc.py::TestInstalled::test_distribution_is_installed"] == "passed"
    assert outcomes["tests/test_calc.py::TestCalc::test_sub"] == "passed"


def test_venv_setup_commands() -> None:
    module = load_template("venv_setup.py")
    cmd = module.setup_command()
    assert "-m venv --system-site-packages --without-pip .venv-homefield && " in cmd
    assert cmd.endswith(".venv-homefield/bin/python -m pip install --quiet --disable-pip-version-check "
                        "--no-input -e .")
    assert module.grading_command("/usr/bin/python3 -m pytest -q") == ".venv-homefield/bin/python -m pytest -q"
    assert module.grading_command("pytest -x") == ".venv-homefield/bin/python -m pytest -x"
    assert module.grading_command(None) == ".venv-homefield/bin/python -m pytest"


def test_venv_setup_sees_the_packages_of_homefields_own_virtualenv(tmp_path: Path) -> None:
    """Issue 28: run from a virtualenv (CI's, and most users'), ``venv --system-site-packages``
    showed only the base interpreter's packages: on a fresh machine, without pytest there, every
    graded attempt failed to start. The venv the template makes imports what homefield's has."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("this suite runs in the base interpreter: --system-site-packages shows its packages")
    module = load_template("venv_setup.py")
    steps = module.setup_command().split(" && ")
    proc = subprocess.run(" && ".join(steps[:-1]), shell=True, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    probe = subprocess.run([str(tmp_path / module.venv_python()), "-c", "import xdist, pytest_homefield"],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr


# --- (c) a test runner that is not pytest -----------------------------------------------------

@pytest.mark.slow
def test_junit_test_command_template(calc: Path) -> None:
    install_template(calc, "junit_test_command.py")
    homefield(calc, "run", "--agent", "oracle", "--attempts", "1", "-n", "0")
    run_dir, results = the_run(calc)
    assert sorted(r["outcome"] for r in results) == ["solved", "solved"]
    sub_id = tasks_by_subject(calc)[SUB_SUBJECT]["id"]
    art = run_dir / "attempts" / sub_id / "oracle" / "1"
    assert not (art / "outcomes.jsonl").exists()  # pytest's reporter did not run
    junit = read_junit(art / "junit.xml").outcomes
    assert junit == {
        "tests/test_calc.py::TestCalc::test_add": "passed",
        "tests/test_calc.py::TestCalc::test_sub": "passed",
        "tests/test_calc.py::TestInstalled::test_distribution_is_installed": "failed",
    }


def test_junit_runner_outcomes(tmp_path: Path) -> None:
    runner = tmp_path / "repo" / "conftest.py"
    runner.parent.mkdir()
    shutil.copy(TEMPLATES / "junit_test_command.py", runner)
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_a.py").write_text(textwrap.dedent("""\
        import unittest

        class TestA(unittest.TestCase):
            def test_ok(self):
                pass

            def test_bad(self):
                self.assertEqual(1, 2)

            def test_boom(self):
                raise RuntimeError("boom")

            @unittest.skip("not today")
            def test_skipped(self):
                pass

            @unittest.expectedFailure
            def test_xfail(self):
                self.assertEqual(1, 2)
    """))
    (work / "tests" / "test_broken.py").write_text("import does_not_exist\n")
    out = tmp_path / "out" / "junit.xml"
    proc = subprocess.run([sys.executable, str(runner), "--junit", str(out), "tests/test_a.py", "tests/test_broken.py"],
                          cwd=work, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    parsed = read_junit(out)
    assert parsed.outcomes == {
        "tests/test_a.py::TestA::test_ok": "passed",
        "tests/test_a.py::TestA::test_bad": "failed",
        "tests/test_a.py::TestA::test_boom": "failed",
        "tests/test_a.py::TestA::test_skipped": "skipped",
        "tests/test_a.py::TestA::test_xfail": "xfailed",
    }
    assert list(parsed.collection_errors) == ["tests/test_broken.py"]
    # one id selects one test; the runner's own folder never shadows the tree under test
    (runner.parent / "tests").mkdir()
    proc = subprocess.run([sys.executable, str(runner), "--junit", str(out), "tests/test_a.py::TestA::test_ok"],
                          cwd=work, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_junit(out).outcomes == {"tests/test_a.py::TestA::test_ok": "passed"}
    printed = subprocess.run([sys.executable, str(runner), "--print-command"], capture_output=True, text=True)
    assert printed.stdout.strip().endswith(f"{runner} --junit {{junit}} {{files}}")


# --- (d) a task filter ------------------------------------------------------------------------

@pytest.mark.slow
def test_task_filter_template(calc: Path) -> None:
    install_template(calc, "task_filter.py")
    # under xdist every worker must compute the same list, or the session fails to collect
    homefield(calc, "run", "--agent", "oracle", "--attempts", "2", "-n", "2")
    run_dir, results = the_run(calc)
    sub_id = tasks_by_subject(calc)[SUB_SUBJECT]["id"]
    assert sorted((r["task_id"], r["attempt"], r["outcome"]) for r in results) == [
        (sub_id, 1, "solved"), (sub_id, 2, "solved")]
    assert json.loads((run_dir / "meta.json").read_text())["task_ids"] == [sub_id]


class _Task:
    def __init__(self, id: str, diff_lines: int, well_specified: bool = True, files: tuple[str, ...] = ("a.py",),
                 authored_at: str = "2024-05-01T00:00:00+00:00") -> None:
        self.id, self.diff_lines, self.well_specified = id, diff_lines, well_specified
        self.source_files, self.authored_at = list(files), authored_at


def test_task_filter_rules() -> None:
    module = load_template("task_filter.py")
    tasks: list[Any] = [_Task("a", 10), _Task("b", 500), _Task("c", 30, well_specified=False),
                        _Task("d", 30, files=("app/migrations/0001.py",)), _Task("e", 30, files=("vendor/x.py",)),
                        _Task("f", 20, authored_at="2023-01-01T00:00:00+00:00"), _Task("g", 30)]
    module.SINCE = "2024-01-01"
    module.pytest_homefield_modify_tasks(tasks, None)
    assert [t.id for t in tasks] == ["g", "a"]  # largest first, ties by id
    module.SAMPLE_PERCENT = 50
    many = [_Task(f"{i:012x}", 1) for i in range(400)]
    module.pytest_homefield_modify_tasks(many, None)
    again = [_Task(f"{i:012x}", 1) for i in range(400)]
    module.pytest_homefield_modify_tasks(again, None)
    assert [t.id for t in many] == [t.id for t in again]
    assert 150 < len(many) < 250
