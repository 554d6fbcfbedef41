"""Nothing outlives a run: SIGINT or SIGKILL of ``homefield run -n 2`` whose ``cmd:`` agents leave
children, grandchildren and a setsid-escaped process behind (issue 21 acceptance). One run is stopped
both ways in a chain (SIGINT, then SIGKILL of its resume), then resumed to the end."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env

from pytest_homefield.report.runs import cut_short_by_key
from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow

SPAWN = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    def note():
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\\n")
    note()
    if os.fork() == 0:
        note()
        if os.fork() == 0:
            os.setsid()
            note()
            if os.fork() == 0:
                note(); time.sleep(120); os._exit(0)
            time.sleep(120); os._exit(0)
        time.sleep(120); os._exit(0)
    with open(sys.argv[2]) as f:
        time.sleep(float(f.read()))
    print('{"cost_usd": 0.01}')
""")


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def _still_alive(pids: set[int], within_s: float) -> list[int]:
    """The ``pids`` still alive after up to ``within_s`` seconds (polled: returns once all are gone)."""
    deadline = time.monotonic() + within_s
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _tree(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for e in os.listdir("/proc"):
        if e.isdigit() and (st := _stat(int(e))) is not None:
            children.setdefault(int(st[1]), []).append(int(e))
    out, stack = set(), [root]
    while stack:
        for c in children.get(stack.pop(), []):
            out.add(c)
            stack.append(c)
    return out


def test_killed_run_leaves_no_process_no_temp_folder_and_resumes(mined: Path, tmp_path: Path) -> None:
    """A fresh run stopped by SIGINT, then its resume stopped by SIGKILL (each while both workers run
    an attempt whose agent left 3 processes behind it), then a resume to the end."""
    repo = tmp_path / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
    spawn, pids, tmp = tmp_path / "spawn.py", tmp_path / "pids", tmp_path / "tmp"
    spawn.write_text(SPAWN)
    delay = tmp_path / "delay"
    delay.write_text("30")
    tmp.mkdir()
    env = cli_env()
    env["TMPDIR"] = str(tmp)  # every temp folder of the run lands here
    agent = f"spawn=cmd:{sys.executable} {spawn} {pids} {delay}"
    # the agent records its pids outside the workspace, so it runs unsandboxed: this tests the reaper
    args = ["run", "--agent", agent, "--attempts", "1", "--run-id", "k", "--sandbox", "none", "-n", "2"]
    for sig in (signal.SIGINT, signal.SIGKILL):
        pids.unlink(missing_ok=True)
        resume = ["--resume"] if sig == signal.SIGKILL else []
        # SIGINT as at a terminal even when this suite runs as a background job (which inherits SIGINT
        # ignored, and a Python started with it ignored never raises KeyboardInterrupt)
        proc = subprocess.Popen([sys.executable, "-m", "pytest_homefield.cli", *args, *resume], cwd=repo, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and len(pids.read_text().split() if pids.exists() else []) < 8:
                time.sleep(0.05)  # both workers run an attempt whose agent left 3 processes behind it
            agent_pids = {int(p) for p in pids.read_text().split()}
            assert len(agent_pids) >= 8
            run_pids = _tree(proc.pid) | agent_pids
            assert agent_pids <= run_pids  # the escaped ones too: they stay below their reaper
            proc.send_signal(sig)
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert not _still_alive(run_pids, 1.0), f"{sig!r}: processes of the run outlived it"
        assert not list(read_jsonl(repo / ".homefield" / "runs" / "k" / "results.jsonl"))  # nothing recorded
        if sig == signal.SIGINT:
            assert "Continue the run with: homefield run --resume --run-id k" in out, out
    # the next start (its controller, at any -n) removes what a SIGKILLed run could not; then --resume
    # does every key once
    delay.write_text("0")
    done = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args[:-2], "-n", "0", "--resume"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = [(r["task_id"], r["agent"], r["attempt"]) for r in read_jsonl(repo / ".homefield" / "runs" / "k" /
                                                                          "results.jsonl")]
    n_tasks = sum(1 for _ in read_jsonl(repo / ".homefield" / "tasks.jsonl"))
    assert len(keys) == len(set(keys)) == n_tasks
    # atk23 F3: the tries the two stops cut short left no result line, but tries.jsonl kept their starts: the
    # report counts each such key as it counts a claimed retry (2 in flight at each stop, at -n 2)
    cut = cut_short_by_key([repo / ".homefield" / "runs" / "k"])
    assert sum(cut.values()) >= 4 and {k[:3] for k in cut} <= set(keys), cut
    tries = list(read_jsonl(repo / ".homefield" / "runs" / "k" / "tries.jsonl"))
    assert sum(t["event"] == "end" for t in tries) == n_tasks  # the resume's tries, each ended once
    assert not [p for p in tmp.iterdir() if p.name.startswith("hf-")], sorted(p.name for p in tmp.iterdir())
    spawned = {p for p in _tree(os.getpid()) if _stat(p) and "spawn.py" in Path(f"/proc/{p}/cmdline").read_text()}
    assert not _still_alive(spawned, 0.5)
