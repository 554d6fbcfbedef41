"""sandbox/procs.py: a subprocess in its own process group, a wall-clock limit, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import procs
from pytest_homefield.sandbox.procs import kill_tree, run_process


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_process's kill on timeout with a 0.2 s SIGTERM grace instead of 2 s (a zombie re-parented to
    a PID 1 that reaps slowly counts as alive until the grace ends)."""
    monkeypatch.setattr(procs, "kill_tree", lambda pid: kill_tree(pid, grace_s=0.2))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: /proc state Z
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize(("code", "expected"), [("0", 0), ("3", 3), ("77", 77)])
def test_exit_codes(tmp_path: Path, code: str, expected: int) -> None:
    r = run_process(["sh", "-c", f"exit {code}"], cwd=tmp_path, env=os.environ, timeout_s=10)
    assert (r.exit_code, r.timed_out) == (expected, False)
    assert r.wall_s >= 0


def test_killed_by_a_signal_is_negative(tmp_path: Path) -> None:
    r = run_process(["sh", "-c", "kill -9 $$"], cwd=tmp_path, env=os.environ, timeout_s=10)
    assert (r.exit_code, r.timed_out) == (-signal.SIGKILL, False)


def test_output_files_stdin_cwd_env_and_shell(tmp_path: Path) -> None:
    out, err = tmp_path / "o.txt", tmp_path / "e.txt"
    r = run_process("read x; echo \"$x $HF_T $(basename $PWD)\"; echo oops >&2", cwd=tmp_path,
                    env={"PATH": os.environ["PATH"], "HF_T": "v"}, timeout_s=10, stdout_path=out,
                    stderr_path=err, stdin_text="hello\n", shell=True)
    assert r.exit_code == 0
    assert out.read_text() == f"hello v {tmp_path.name}\n"
    assert err.read_text() == "oops\n"


def test_missing_program_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_process(["/nonexistent/program"], cwd=tmp_path, env=os.environ, timeout_s=5)


def test_timeout_kills_the_whole_group(tmp_path: Path, short_grace: None) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    t0 = time.monotonic()
    r = run_process(["sh", "-c", script], cwd=tmp_path, env=os.environ, timeout_s=0.5)
    assert (r.exit_code, r.timed_out) == (None, True)
    assert r.wall_s >= 0.5 and time.monotonic() - t0 < 5
    assert _wait_dead(int(pidfile.read_text()))  # the background child went with its group


def test_a_finished_leader_leaves_no_process_in_its_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    r = run_process(["sh", "-c", f"sleep 60 & echo $! > {pidfile}"], cwd=tmp_path, env=os.environ, timeout_s=10)
    assert (r.exit_code, r.timed_out) == (0, False)
    assert _wait_dead(int(pidfile.read_text()))


def test_timeout_kills_a_descendant_that_left_the_group(tmp_path: Path, short_grace: None) -> None:
    pidfile = tmp_path / "escaped.pid"
    # setsid puts the grandchild in a session (and process group) of its own
    escape = f"import os, time; os.setsid(); open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    script = f"{sys.executable} -c \"{escape}\" & while [ ! -s {pidfile} ]; do sleep 0.05; done; sleep 60"
    r = run_process(["sh", "-c", script], cwd=tmp_path, env=os.environ, timeout_s=2.0)
    assert r.timed_out
    assert _wait_dead(int(pidfile.read_text()))


def test_kill_tree_escalates_to_sigkill(tmp_path: Path) -> None:
    code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    t0 = time.monotonic()
    kill_tree(proc.pid, grace_s=0.3)
    assert proc.wait(5) == -signal.SIGKILL
    assert time.monotonic() - t0 >= 0.3


def test_kill_tree_of_a_gone_process_does_not_raise() -> None:
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    kill_tree(proc.pid, grace_s=0.1)
