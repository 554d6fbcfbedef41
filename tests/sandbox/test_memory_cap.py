"""A test run's memory cap (``max_test_memory_mb``, ``RLIMIT_AS`` through the reaper): a parent hang that
grows a list without limit (boltons 3e9983db7b59) used to take the machine's memory until the run
timeout. Each process of a capped command gets the cap (a test run's: tests/run/test_grading.py, in
bubblewrap); a run over it is a failed run that says why (``TestRun.over_memory``)."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_homefield.sandbox.limits import MIB, memory_cap_note
from pytest_homefield.sandbox.procs import run_process

GROW = "import sys; b = bytearray(400 * 2**20); print('held', len(b)); sys.exit(0)"
#: The same address space mapped but never touched: cheap without a cap (zero-filling 400 MiB takes ~1 s here).
MAP = "import mmap; m = mmap.mmap(-1, 400 * 2**20); print('mapped', len(m))"


def test_each_process_of_a_capped_command_gets_the_address_space_cap(tmp_path: Path) -> None:
    out = tmp_path / "out"
    capped = run_process([sys.executable, "-c", GROW], cwd=tmp_path, env={}, timeout_s=30, stdout_path=out,
                         stderr_path=out, memory_cap=256 * MIB)
    assert capped.exit_code == 1 and b"MemoryError" in out.read_bytes()
    child = f"import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', {GROW!r}]).returncode)"
    assert run_process([sys.executable, "-c", child], cwd=tmp_path, env={}, timeout_s=30,
                       memory_cap=256 * MIB).exit_code == 1  # a child process of the command too
    assert run_process([sys.executable, "-c", MAP], cwd=tmp_path, env={}, timeout_s=30).exit_code == 0
    assert run_process([sys.executable, "-c", MAP], cwd=tmp_path, env={}, timeout_s=30,
                       memory_cap=256 * MIB).exit_code == 1  # mapped counts too: RLIMIT_AS


def test_the_note_names_the_cap_only_for_a_capped_run_that_ran_out() -> None:
    assert memory_cap_note(b"E   MemoryError\n", 4096) == (
        "a test process went over the memory cap of 4096 MiB (max_test_memory_mb)")
    assert memory_cap_note(b"E   MemoryError\n", None) is None
    assert memory_cap_note(b"1 failed\n", 4096) is None
