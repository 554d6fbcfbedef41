"""A test run's memory cap (``max_test_memory_mb``, ``RLIMIT_AS`` through the reaper): a parent hang that
grows a list without limit (boltons 3e9983db7b59) used to take the machine's memory until the run
timeout. Each process of a capped run gets the cap, under bubblewrap too; a run over it is a failed run
that says why (``TestRun.over_memory``)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.limits import MIB, memory_cap_note
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.testrun import run_tests

PY = shlex.quote(sys.executable)
CMD = f"{PY} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:xdist"
GROW = "import sys; b = bytearray(400 * 2**20); print('held', len(b)); sys.exit(0)"


def _bwrap_works() -> bool:
    try:
        probe()
    except BwrapUnavailable:
        return False
    return True


def test_each_process_of_a_capped_command_gets_the_address_space_cap(tmp_path: Path) -> None:
    out = tmp_path / "out"
    capped = run_process([sys.executable, "-c", GROW], cwd=tmp_path, env={}, timeout_s=30, stdout_path=out,
                         stderr_path=out, memory_cap=256 * MIB)
    assert capped.exit_code == 1 and b"MemoryError" in out.read_bytes()
    child = f"import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', {GROW!r}]).returncode)"
    assert run_process([sys.executable, "-c", child], cwd=tmp_path, env={}, timeout_s=30,
                       memory_cap=256 * MIB).exit_code == 1  # a child process of the command too
    assert run_process([sys.executable, "-c", GROW], cwd=tmp_path, env={}, timeout_s=30).exit_code == 0


def test_the_note_names_the_cap_only_for_a_capped_run_that_ran_out() -> None:
    assert memory_cap_note(b"E   MemoryError\n", 4096) == (
        "a test process went over the memory cap of 4096 MiB (max_test_memory_mb)")
    assert memory_cap_note(b"E   MemoryError\n", None) is None
    assert memory_cap_note(b"1 failed\n", 4096) is None


@pytest.mark.skipif(not _bwrap_works(), reason="no bwrap")
def test_a_test_over_the_cap_fails_in_bubblewrap_and_the_run_says_why(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_m.py").write_text(
        "def test_grows():\n    held = []\n    while True:\n        held.append(bytearray(32 * 2**20))\n\n\n"
        "def test_small():\n    assert len(bytearray(2**20)) == 2**20\n")
    run = run_tests(proj, CMD, ["tests/test_m.py"], out_dir=tmp_path / "out", sandbox="bwrap", timeout_s=60,
                    memory_mb=384)
    assert run.sandbox == "bwrap"
    assert run.outcomes == {"tests/test_m.py::test_grows": "failed", "tests/test_m.py::test_small": "passed"}, \
        run.log_path.read_text()[-2000:]
    assert run.over_memory == "a test process went over the memory cap of 384 MiB (max_test_memory_mb)"
