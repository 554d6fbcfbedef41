"""twin43: a canary run read pytest's configuration twice with the same inputs: once for its files (the softener,
``canary_soft.softened_files`` → ``function_patterns`` → ``pytest_config.setup_for``, once per run of the runs
apart) and once for its pin (``testrun.pinned_config`` → ``setup_for``). Now it is read once
(``testrun.pytest_setup``) and passed on to both, so a grading reads it no more often than it starts test processes.

Counted on a real grading (``--sandbox none``): every call of ``setup_for`` (from wherever) and every test process
started (``testrun._run_private``), both delegating to the real functions."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox import canary_soft, pytest_config, testrun
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/circles/__init__.py"
TEST = "tests/test_circles.py"
PARENT = "def area(r):\n    return 3 * r * r\n"
FIXED = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n"
OTHER_FIX = "from math import pi\n\n\ndef area(r):\n    return r * r * pi\n"  # not the reference fix: canary runs
TESTS = ("import pytest\n\nfrom circles import area\n\n\n"
         "def test_unit_circle():\n"
         "    assert area(1) == pytest.approx(3.14159, rel=1e-4)\n")


def _counting(calls: list[str], name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    lock = threading.Lock()

    def counted(*args: Any, **kwargs: Any) -> Any:
        with lock:
            calls.append(name)
        return real(*args, **kwargs)
    return counted


@pytest.mark.slow
def test_a_grading_reads_the_configuration_once_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix graded (the reference fix's runs, the control runs, its runs apart, each softened and pinned): no more
    reads of pytest's configuration than test processes. Before (twin43): every run apart read it twice, and the
    grading's reads outnumbered its runs."""
    b: FixTask = build_fix_task(tmp_path / "t", name="circles", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                                tests=TESTS, first="circles", message="Use pi for the area of a circle",
                                fail_to_pass=[f"{TEST}::test_unit_circle"], pass_to_pass=[])
    calls: list[str] = []
    read = _counting(calls, "read", pytest_config.setup_for)
    monkeypatch.setattr(pytest_config, "setup_for", read)
    monkeypatch.setattr(canary_soft, "setup_for", read)
    monkeypatch.setattr(testrun, "_run_private", _counting(calls, "run", testrun._run_private))
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(OTHER_FIX, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
              run_timeout_s=120)
    assert g.outcome == "solved", g.error
    runs, reads = calls.count("run"), calls.count("read")
    assert runs >= 3 and 1 <= reads <= runs, calls


@pytest.mark.slow
def test_a_run_asks_which_pytest_it_starts_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops46 (r36's "looked at"): a run asked which pytest it starts twice, for its softened files and its
    configuration (``testrun.pytest_setup``) and again for its pin (``_run_private``): the ``PATH`` lookup and the
    script's ``#!`` read, twice. The setup now keeps the command and ``PATH`` it was asked for, and the run takes
    its answer; a run on another ``PATH`` (a venv changed between runs of one process) asks again, on its own."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_one.py").write_text("def test_one():\n    assert True\n")
    asked: list[str | None] = []

    def ask(test_cmd: str, path: str | None) -> str | None:
        asked.append(path)
        return real(test_cmd, path)
    real = testrun.run_python
    monkeypatch.setattr(testrun, "run_python", ask)
    targets = ["tests/test_one.py::test_one"]
    setup = testrun.pytest_setup(tree, "python -m pytest", targets)
    run = testrun.run_tests(tree, "python -m pytest", targets, out_dir=tmp_path / "out1", setup=setup)
    assert run.exit_code == 0, run
    assert len(asked) == 1, asked  # 2 before: the setup's and the run's
    other = tmp_path / "bin"
    other.mkdir()
    moved = {**testrun.host_test_env(None), "PATH": f"{other}{os.pathsep}{os.environ['PATH']}"}
    run = testrun.run_tests(tree, "python -m pytest", targets, out_dir=tmp_path / "out2", setup=setup, env=moved)
    assert run.exit_code == 0, run
    assert len(asked) == 2 and asked[1] is not None and asked[1].startswith(str(other)), asked
