"""sandbox/procs.py: a subprocess in its own process group, a wall-clock limit, nothing left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import procs
from pytest_homefield.sandbox.procs import kill_tree, run_process


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_process's kill on timeout with a 0.2 s SIGTERM grace instead of 2 s (the reaper's grace
    between SIGTERM and SIGKILL of the tree)."""
    monkeypatch.setattr(procs, "KILL_GRACE_S", 0.2)


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


# --- the reaper: nothing outlives its command or the process that started it (issue 21) ---

#: A command that leaves a child, a grandchild and a setsid-escaped great-grandchild behind; each
#: writes its pid to PIDS, and the escaped one keeps appending to TICK every 20 ms.
SPAWNER = textwrap.dedent("""
    import os, sys, time
    pids, tick = sys.argv[1], sys.argv[2]
    def note():
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\\n")
    if os.fork() == 0:                      # child
        note()
        if os.fork() == 0:                  # grandchild
            note()
            if os.fork() == 0:              # escapes into its own session
                os.setsid()
                note()
                while True:
                    with open(tick, "a") as f:
                        f.write("x")
                    time.sleep(0.02)
            time.sleep(60)
        time.sleep(60)
    time.sleep(float(sys.argv[3]))
""")


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _pids_of(path: Path, n: int = 3, wait_s: float = 10.0) -> list[int]:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if path.exists():
            pids = [int(x) for x in path.read_text().split()]
            if len(pids) >= n:
                return pids
        time.sleep(0.02)
    raise AssertionError(f"spawner wrote {path.read_text() if path.exists() else 'nothing'}")


@pytest.fixture
def spawner(tmp_path: Path) -> Path:
    script = tmp_path / "spawner.py"
    script.write_text(SPAWNER)
    return script


def test_descendants_die_when_the_command_exits(tmp_path: Path, spawner: Path) -> None:
    pids, tick = tmp_path / "pids", tmp_path / "tick"
    # the leader waits until its descendants exist, then exits 3
    cmd = f"{sys.executable} {spawner} {pids} {tick} 0.5; exit 3"
    res = run_process(cmd, cwd=tmp_path, env=os.environ, timeout_s=30, shell=True)
    assert res.exit_code == 3 and not res.timed_out
    found = _pids_of(pids)
    assert not [p for p in found if _running(p)]
    size = tick.stat().st_size
    time.sleep(0.2)
    assert tick.stat().st_size == size, "an escaped process still writes after run_process returned"


#: atk16 F3: a "hopper" in a session of its own forks and lets its parent exit in a loop for ``argv[2]``
#: seconds, then settles: writes its pid to ``argv[1]`` and lives on. A ``/proc`` walk almost never lists it
#: (its child is newer than the listing, its own entry gone when read), so the tree looked empty.
HOPPER = """
import os, sys, time
os.setsid()
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    if os.fork():
        os._exit(0)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(60)
"""


#: atk16 F3c: a process whose main thread leaves with ``SYS_exit`` (not ``exit_group``) while another thread
#: runs: its ``/proc/<pid>/stat`` says ``Z``, which the ``/proc`` walk took for dead. The thread writes the
#: process's pid to ``argv[1]`` after ``argv[2]`` seconds.
ZOMBIE_LEADER = """
import ctypes, os, platform, sys, threading, time
def work():
    time.sleep(float(sys.argv[2]))
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)
threading.Thread(target=work).start()
time.sleep(0.1)
ctypes.CDLL(None).syscall({"x86_64": 60, "aarch64": 93}[platform.machine()], 0)
"""


@pytest.mark.parametrize("program", [HOPPER, ZOMBIE_LEADER], ids=["hopper", "zombie-leader"])
def test_a_process_that_hides_from_proc_does_not_outlive_the_command(tmp_path: Path, program: str) -> None:
    """On main each outlived the command (its reaper's ``/proc`` walk came back empty: "nothing left") and
    ran on with PPID 1: under Landlock and without a sandbox a grading's process then ran into the next
    agent's phase. The reaper now asks ``waitpid`` and keeps killing its children."""
    script, pidfile = tmp_path / "escape.py", tmp_path / "escape.pid"
    script.write_text(program)
    res = run_process(f"{sys.executable} -S {script} {pidfile} 0.9 & sleep 0.3; exit 0", cwd=tmp_path,
                      env=os.environ, timeout_s=30, shell=True)
    assert res.exit_code == 0
    time.sleep(1.3)  # had it lived past the command (0.3 s), it has written its pid by now (0.9 s)
    if pidfile.exists():
        pid = int(pidfile.read_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"it outlived its command as pid {pid}")


def test_timeout_kills_the_whole_tree(tmp_path: Path, spawner: Path) -> None:
    pids, tick = tmp_path / "pids", tmp_path / "tick"
    res = run_process([sys.executable, str(spawner), str(pids), str(tick), "60"], cwd=tmp_path,
                      env=os.environ, timeout_s=1.0)
    assert res.timed_out and res.exit_code is None
    assert res.wall_s < 1.0 + 2.0 + 3
    assert not [p for p in _pids_of(pids) if _running(p)]


def test_exit_status_and_signal(tmp_path: Path) -> None:
    assert run_process("exit 7", cwd=tmp_path, env=os.environ, timeout_s=10, shell=True).exit_code == 7
    res = run_process("kill -TERM $$", cwd=tmp_path, env=os.environ, timeout_s=10, shell=True)
    assert res.exit_code == -signal.SIGTERM


def test_output_and_stdin(tmp_path: Path) -> None:
    out, err = tmp_path / "out", tmp_path / "err"
    res = run_process(["sh", "-c", "cat; echo e >&2"], cwd=tmp_path, env=os.environ, timeout_s=10,
                      stdout_path=out, stderr_path=err, stdin_text="hello\n")
    assert res.exit_code == 0
    assert out.read_text() == "hello\n" and err.read_text() == "e\n"


def test_missing_program_raises_like_popen(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_process(["no-such-program-hf"], cwd=tmp_path, env=os.environ, timeout_s=10)
    with pytest.raises(OSError):
        run_process(["/etc/passwd"], cwd=tmp_path, env=os.environ, timeout_s=10)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_tree_dies_with_the_process_that_started_it(tmp_path: Path, spawner: Path, sig: int) -> None:
    """The caller (standing for a homefield worker) is killed while the command runs: within one
    second no process of the command is left, whatever the signal."""
    pids, tick = tmp_path / "pids", tmp_path / "tick"
    caller = tmp_path / "caller.py"
    caller.write_text(textwrap.dedent(f"""
        import os, signal, sys
        from pytest_homefield.sandbox.procs import run_process
        # a worker's own Ctrl-C handler, also when this suite was started with SIGINT ignored (``cmd &``)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        run_process([sys.executable, {str(spawner)!r}, {str(pids)!r}, {str(tick)!r}, "60"],
                    cwd={str(tmp_path)!r}, env=os.environ, timeout_s=60)
    """))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, str(caller)], env=env)
    try:
        found = _pids_of(pids)
        proc.send_signal(sig)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 1.0  # within one second: polled, not slept out
        while [p for p in found if _running(p)] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not [p for p in found if _running(p)]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_wait_exit_returns_the_status_and_raises_at_the_timeout() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert procs.wait_exit(proc, 30) == 3
    sleeper = subprocess.Popen(["sleep", "30"])
    with pytest.raises(subprocess.TimeoutExpired):
        procs.wait_exit(sleeper, 0.1)
    sleeper.kill()
    assert procs.wait_exit(sleeper, None) == -signal.SIGKILL
    assert procs.wait_exit(sleeper, 5) == -signal.SIGKILL  # already reaped: Popen's own answer


def test_the_command_gets_only_its_descriptors_and_default_signal_actions(tmp_path: Path) -> None:
    """The reaper starts the command as ``Popen(pass_fds=…)`` would: descriptors 0–2 and ``pass_fds`` only
    (another open descriptor of the caller, inheritable or not, is closed), and ``SIGPIPE``/``SIGXFSZ``
    at their default action, which Python ignores and ``exec`` would otherwise keep ignored (a write
    past ``file_cap`` then kills the command with ``SIGXFSZ``, contracts §7)."""
    keep_r, keep_w = os.pipe()
    stray = os.open(os.devnull, os.O_RDONLY)
    os.set_inheritable(stray, True)
    out = tmp_path / "out"
    try:
        res = run_process(["sh", "-c", "ls /proc/self/fd; grep -E '^Sig(Ign|Cgt)' /proc/self/status"], cwd=tmp_path,
                          env=os.environ, timeout_s=10, stdout_path=out, pass_fds=(keep_w,))
    finally:
        for fd in (keep_r, keep_w, stray):
            os.close(fd)
    assert res.exit_code == 0, out.read_text()
    lines = out.read_text().split()
    fds = {int(x) for x in lines if x.isdigit()}
    assert keep_w in fds and stray not in fds and keep_r not in fds, lines
    ignored = int(lines[lines.index("SigIgn:") + 1], 16)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert not ignored & (1 << (sig - 1)), f"{sig!r} ignored in the command: {lines}"


def test_the_reaper_imports_no_enum() -> None:
    """The reaper is started for every test run and agent: it imports the C ``_signal`` module, not
    ``signal.py``, whose enums import ``enum`` and ``functools`` (7.6 ms of CPU of each launch, a
    fifth of it with its command; benchmarks/reaper.py). It still runs its command and passes on its status."""
    r, w = os.pipe()
    try:
        proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", str(procs.REAPER), str(w),
                               str(os.getpid()), "2.0", "--", "sh", "-c", "exit 3"],
                              pass_fds=[w], capture_output=True, text=True, timeout=30)
    finally:
        os.close(w)
        os.close(r)
    assert proc.returncode == 3, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert {"ctypes", "resource", "_signal"} <= imported, sorted(imported)
    assert not imported & {"enum", "signal", "functools", "typing"}, sorted(imported)
