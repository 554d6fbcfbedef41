"""Issue 30: a lock on each run folder. Measured on main: ``--resume`` of a run still in progress was
accepted, and the two sessions wrote 11 records for 8 keys. A second session on the same run now exits
2 with one line naming the pid and host holding it; the lock goes with the process that held it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined, homefield

from pytest_homefield.store import LOCK_FILE, FolderLock, FolderLocked

HOLD = """
import sys, time
from pathlib import Path
from pytest_homefield.store import FolderLock
lock = FolderLock.take(Path(sys.argv[1]), "run r")
print("held", flush=True)
time.sleep(60)
"""


def _holder(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_folder_held_by_another_process_is_refused_until_it_dies(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "r"
    proc = _holder(folder)
    try:
        with pytest.raises(FolderLocked) as info:
            FolderLock.take(folder, "run r")
        assert str(info.value) == (f"pytest-homefield: run r is in use by pid {proc.pid} on {socket.gethostname()} "
                                   f"since {json.loads((folder / LOCK_FILE).read_text())['since']} "
                                   f"({folder / LOCK_FILE}): wait for that session to end, or stop it")
    finally:
        proc.kill()
        proc.wait()
    lock = FolderLock.take(folder, "run r")  # the kernel let it go with the process: no cleanup needed
    assert json.loads((folder / LOCK_FILE).read_text())["pid"] == os.getpid()
    again = FolderLock.take(folder, "run r")  # this process shares its own lock
    lock.release()
    again.release()
    proc = _holder(folder)  # released: another process takes it
    proc.kill()
    proc.wait()


@pytest.mark.slow
def test_a_second_session_on_a_run_in_progress_exits_2_with_one_line(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    agent = f"cmd:{sys.executable} -c 'import time; time.sleep(30)'"
    base = ["run", "--agent", agent, "--attempts", "1", "--max-tasks", "1", "--run-id", "r", "--timeout", "120"]
    first = subprocess.Popen([sys.executable, "-m", "pytest_homefield.cli", *base, "-n", "2"], cwd=repo,
                             env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    run_dir = repo / ".homefield" / "runs" / "r"
    try:
        deadline = time.monotonic() + 60
        while not (run_dir / "meta.json").exists() or not list(run_dir.glob("attempts/*/*/1")):
            assert first.poll() is None and time.monotonic() < deadline, "the first session did not start"
            time.sleep(0.2)
        second = homefield(repo, *base, "--resume", "-n", "0")
        lines = [ln for ln in (second.stdout + second.stderr).splitlines() if ln.strip()]
        assert second.returncode == 2 and len(lines) == 1, second.stdout + second.stderr
        assert lines[0].startswith(f"Exit: pytest-homefield: run r is in use by pid {first.pid} on "), lines
        assert not (run_dir / "results.jsonl").exists()  # the second session recorded nothing
        assert first.poll() is None  # and left the first one running
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()


@pytest.mark.slow
def test_a_second_session_on_an_ablation_in_progress_exits_2_with_one_line(mined: Path, tmp_path: Path) -> None:
    """The same lock on an ablation's folder (held here by another process, as a running ablation holds it)."""
    repo = copy_mined(mined, tmp_path / "repo")
    (repo / "RULES.md").write_text("# Rules\n\n- KEY RULE: keep functions small.\n")
    folder = repo / ".homefield" / "ablate" / "x"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text("{}")
    holder = _holder(folder)
    try:
        proc = homefield(repo, "ablate", "RULES.md", "--agent", "oracle", "--attempts", "1", "--resume",
                         "--run-id", "x", "--yes", "-n", "0")
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        assert proc.returncode == 2 and len(lines) == 1, proc.stdout + proc.stderr
        assert lines[0].startswith(f"Exit: pytest-homefield: ablation x is in use by pid {holder.pid} on "), lines
        assert (folder / "meta.json").read_text() == "{}"
    finally:
        holder.kill()
        holder.wait()
