"""Run a subprocess in its own process group with a wall-clock limit.

Used for agents and for test commands. On timeout the whole process group is sent SIGTERM, then
SIGKILL after a grace period, and any descendant that escaped into a new session is found through
``/proc`` and killed too, so no process outlives its attempt.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcResult", "run_process", "kill_tree"]

#: Seconds between SIGTERM and SIGKILL when a process group is stopped.
KILL_GRACE_S = 2.0


@dataclass
class ProcResult:
    """Outcome of :func:`run_process`.

    ``exit_code`` is the process's status (negative for a signal, ``None`` when it was killed on
    timeout); ``timed_out`` says the limit was hit; ``wall_s`` is elapsed seconds.
    """

    exit_code: int | None
    timed_out: bool
    wall_s: float


def _descendants(root_pid: int) -> list[int]:
    """PIDs of every live descendant of ``root_pid`` (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: the ppid follows the last ')'
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 2:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out: list[int] = []
    stack = [root_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def kill_tree(pid: int, grace_s: float = KILL_GRACE_S) -> None:
    """Stop process ``pid``, its process group and all its descendants.

    SIGTERM first, SIGKILL after ``grace_s`` seconds for whatever is still alive. Never raises for
    processes that are already gone.
    """
    pids = set(_descendants(pid)) | {pid}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        for p in list(pids):
            try:
                os.kill(p, sig)
            except (ProcessLookupError, PermissionError):
                pids.discard(p)
        if sig == signal.SIGTERM:
            deadline = time.monotonic() + grace_s
            while time.monotonic() < deadline:
                alive = set()
                for p in pids:
                    try:
                        os.kill(p, 0)
                        alive.add(p)
                    except (ProcessLookupError, PermissionError):
                        pass
                    # reap zombies of our own children
                    try:
                        os.waitpid(p, os.WNOHANG)
                    except ChildProcessError:
                        pass
                pids = alive
                if not pids:
                    return
                time.sleep(0.05)


def run_process(
    cmd: Sequence[str] | str,
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    timeout_s: float | None,
    stdout_path: Path | None = None,
    stderr_path: Path | None = None,
    stdin_text: str | None = None,
    shell: bool = False,
) -> ProcResult:
    """Run ``cmd`` in a new session (its own process group) and wait at most ``timeout_s`` seconds.

    stdout / stderr go to the given files (or are discarded). On timeout the process tree is killed
    with :func:`kill_tree`; the result then has ``timed_out=True`` and ``exit_code=None``.

    Raises ``FileNotFoundError`` / ``PermissionError`` when the program cannot be started.
    """
    start = time.monotonic()
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=str(cwd),
            env=dict(env),
            stdout=out,
            stderr=err,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            start_new_session=True,
            shell=shell,
        )
        try:
            if stdin_text is not None:
                assert proc.stdin is not None
                try:
                    proc.stdin.write(stdin_text.encode())
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            code = proc.wait(timeout=timeout_s)
            # the leader is gone; nothing it left behind in its process group may live on
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return ProcResult(exit_code=code, timed_out=False, wall_s=time.monotonic() - start)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            return ProcResult(exit_code=None, timed_out=True, wall_s=time.monotonic() - start)
    finally:
        for f in (out, err):
            if hasattr(f, "close"):
                f.close()
