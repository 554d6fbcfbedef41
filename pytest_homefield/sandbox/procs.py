"""Run a subprocess so that nothing it starts outlives it, or outlives homefield.

Used for agents, test commands and ``setup_cmd``. Every command runs under the reaper
(``_reaper.py``, a stdlib-only supervisor in its own session) which is a child subreaper and dies
with the process that started it (``prctl(PR_SET_PDEATHSIG)``): when the command exits, when it
times out, and when homefield is killed (even with SIGKILL), the reaper kills the command's whole
process tree — descendants that called ``setsid`` or double-forked included — and reaps it before it
exits. So when :func:`run_process` returns, no process of the command is left to write into the
workspace. This does not depend on a sandbox; bubblewrap's ``--die-with-parent`` is a second layer
where the sandbox is used.

:func:`die_with_parent` gives a pytest-xdist worker the same tie to its controller, and
:func:`install_stop_handler` makes ``SIGTERM``/``SIGHUP`` stop the running commands, remove this
process's temp folders and exit without recording anything.

Agents run through :func:`run_agent`: their stdout and stderr are pipes read by the host and written
to ``agent.out`` / ``agent.err`` each capped (:class:`CappedSink`: the head, a marker line with the
bytes cut, then the last lines, where usage lines are read), every file they write is capped by
``RLIMIT_FSIZE`` (set by the reaper) and a ``watch`` callback may stop them while they run (a total
size cap, :class:`pytest_homefield.sandbox.limits.DiskWatch`).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.pins import make_folder
from pytest_homefield.sandbox import host_uids
from pytest_homefield.sandbox.limits import WriteLimits
from pytest_homefield.sandbox.memory_budget import MIB, reserve
from pytest_homefield.sandbox.memory_budget import held_fds as memory_fds
from pytest_homefield.sandbox.phases import held_fds
from pytest_homefield.sandbox.proccap import agent_memory_bytes, oom_note, split_mark, sweep_cgroups
from pytest_homefield.sandbox.streams import CappedSink, Pump
from pytest_homefield.sandbox.tempdirs import remove_own, sweep_stale
from pytest_homefield.spelling import spell
from pytest_homefield.store import open_own_file

__all__ = ["ProcResult", "run_process", "kill_tree", "die_with_parent", "install_stop_handler", "stop_all",
           "descendants", "REAPER", "guard_session", "signal_processes", "run_agent", "CappedSink", "spawn_process",
           "stop_process"]

#: Seconds between SIGTERM and SIGKILL when a process tree is stopped on timeout.
KILL_GRACE_S = 2.0
#: The supervisor script (run by path with ``python -I -S``: stdlib only, no site start-up).
REAPER = Path(__file__).resolve().parent / "_reaper.py"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36

_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()
#: The output pumps of :func:`spawn_process`'s live processes (``output_cap``), finished by :func:`stop_process`.
_pumps: dict[subprocess.Popen[bytes], Pump] = {}


@dataclass
class ProcResult:
    """Outcome of :func:`run_process`.

    ``exit_code`` is the process's status (negative for a signal, ``None`` when it was killed on
    timeout or by ``watch``); ``timed_out`` says the limit was hit; ``wall_s`` is elapsed seconds;
    ``stopped`` the ``watch`` callback's reason when it stopped the command; ``cut_bytes`` the bytes
    of stdout and stderr cut by ``output_cap``; ``oom_kills`` the processes the kernel's OOM killer killed in
    the command's memory cgroup (``box_memory``); ``peak_bytes`` the most bytes that cgroup held at once
    (``None``: no memory cgroup, or the kernel did not say); ``over_memory`` the note naming the cap they went
    over (:func:`run_agent`), else ``None``.
    """

    exit_code: int | None
    timed_out: bool
    wall_s: float
    stopped: str | None = None
    cut_bytes: int = 0
    oom_kills: int = 0
    over_memory: str | None = None
    peak_bytes: int | None = None


def descendants(root_pid: int) -> list[int]:
    """PIDs of every live descendant of ``root_pid`` (Linux ``/proc``; empty elsewhere)."""
    return _descendants(root_pid)


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


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` through libc; ``False`` where it is not available (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: importing it cost every homefield process, the inert plugin's too, ~5 ms (issue 35)

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def die_with_parent(sig: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (``PR_SET_PDEATHSIG``).

    For pytest-xdist workers, whose controller is the homefield process: a SIGKILLed controller
    then takes its workers (and, through their reapers, every command they run) with it. Returns
    ``False`` when unsupported; exits at once (status 1) when the parent is already gone.
    """
    ppid = os.getppid()
    ok = _prctl(PR_SET_PDEATHSIG, int(sig))
    if ok and (os.getppid() != ppid or ppid == 1):
        os._exit(1)
    return ok


def stop_all(grace_s: float = 0.0) -> None:
    """Stop every command this process is running under :func:`run_process` and wait for each
    reaper (which waits for its tree). ``grace_s`` > 0 gives the commands SIGTERM first."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        try:
            proc.send_signal(signal.SIGTERM if grace_s > 0 else signal.SIGINT)
        except (ProcessLookupError, OSError):
            pass
    for proc in procs:
        try:
            proc.wait(timeout=grace_s + 5)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid, grace_s=0)


def install_stop_handler(cleanup: Callable[[], None], exit_code: int = 143) -> Callable[[], None]:
    """On ``SIGTERM`` or ``SIGHUP``: :func:`stop_all`, then ``cleanup()`` (remove temp folders),
    then ``os._exit(exit_code)`` — no result is recorded for the attempt that was running.

    Returns a function that puts the previous handlers back where this one still is (a handler installed
    since is left). Outside the main thread (where Python cannot install handlers) it does nothing."""

    def handler(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            stop_all()
            cleanup()
        finally:
            os._exit(exit_code)

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for sig, old in previous.items():
            if signal.getsignal(sig) is handler:  # one installed since (a mine's end: mine/stop_signals.py) stays
                signal.signal(sig, old)

    return restore


def signal_processes(pids: Sequence[int], sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to each of ``pids`` that is still alive; never raises."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def guard_session(*, worker: bool) -> Callable[[], None]:
    """Tie this homefield process to its run: a worker dies with its controller
    (:func:`die_with_parent`), the controller first removes the temp folders of runs whose process
    is gone (:func:`~pytest_homefield.sandbox.tempdirs.sweep_stale`, in the temp dir and in /tmp) and the
    pids cgroups of reapers that were killed (:func:`~pytest_homefield.sandbox.proccap.sweep_cgroups`),
    and both stop their commands and remove their own temp folders on SIGTERM/SIGHUP. Returns the function restoring the
    previous signal handlers."""
    if worker:
        die_with_parent(signal.SIGTERM)
    else:
        for tmp in dict.fromkeys((tempfile.gettempdir(), "/tmp")):  # /tmp: the sandbox relay's short socket paths
            sweep_stale(tmp)
        sweep_cgroups()  # the pids cgroups of reapers that were killed
    return install_stop_handler(remove_own)


def _reaper_options(argv: Sequence[str], box_memory: int | None) -> tuple[list[str], list[str]]:
    """``(options, argv)``: what the reaper makes for a sandbox's ``argv`` (its pids and memory cgroups,
    :func:`~pytest_homefield.sandbox.proccap.split_mark`; a host uid of its own, leased, satk48:
    :func:`~pytest_homefield.sandbox.host_uids.split_mark`), and ``argv`` without their marks."""
    capped, argv = split_mark(argv, box_memory)
    leased, argv = host_uids.split_mark(argv)
    return [*capped, *leased], argv


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
    output_cap: int | None = None,
    file_cap: int | None = None,
    memory_cap: int | None = None,
    watch: Callable[[], str | None] | None = None,
    watch_every_s: float = 0.5,
    pass_fds: Sequence[int] = (),
    box_memory: int | None = None,
) -> ProcResult:
    """Run ``cmd`` under the reaper in a new session and wait at most ``timeout_s`` seconds.

    stdout / stderr go to the given files (or are discarded). With ``output_cap`` (bytes) they go
    through pipes that this process reads and writes to those files, each capped
    (:class:`CappedSink`): the command never holds a host file. ``file_cap`` (bytes): the command's
    ``RLIMIT_FSIZE``, so no file it writes grows past it (a write past it fails with ``EFBIG`` or
    ``SIGXFSZ``). ``memory_cap`` (bytes): the command's ``RLIMIT_AS``, each of its processes' address
    space (an allocation past it fails; a Python process raises ``MemoryError``). ``watch``: called
    every ``watch_every_s`` seconds while the command runs; a reason
    it returns stops the command as a timeout does, and is the result's ``stopped``. ``pass_fds``:
    descriptors of this process the command inherits at the same numbers (through the reaper; e.g.
    the test run's outcome channel); every other descriptor is closed. The reaper alone also inherits
    the phases this process holds (:func:`~pytest_homefield.sandbox.phases.held_fds`).

    When the command exits, what it left running is killed; on timeout the whole tree gets SIGTERM,
    then SIGKILL after :data:`KILL_GRACE_S`; the result then has ``timed_out=True`` and
    ``exit_code=None``. Either way every process of the command is gone and reaped when this
    returns. An exception here (Ctrl-C: ``KeyboardInterrupt``) kills the tree at once and is
    re-raised.

    An argv marked by :func:`~pytest_homefield.sandbox.proccap.marked` (a sandbox's) runs in a pids
    cgroup of its own capped at ``--max-procs``, made and removed by the reaper, and with ``box_memory``
    (bytes) in a memory cgroup of its own holding that much RAM and swap for all its processes, where one
    can be made (:func:`~pytest_homefield.sandbox.proccap.memory_root`): past it the kernel's OOM killer
    kills one of them, and the result's ``oom_kills`` counts them.

    Raises ``FileNotFoundError`` / ``PermissionError`` (an ``OSError``) when the program cannot be
    started.
    """
    argv = ["/bin/sh", "-c", cmd] if shell else list(cmd)
    if isinstance(cmd, str) and not shell:
        argv = [cmd]
    capped, argv = _reaper_options(argv, box_memory)  # type: ignore[arg-type]  # shell=True takes a str
    # a memory cgroup's cap is reserved from the machine's budget first (sandbox/memory_budget.py): not timed
    with reserve(box_memory / MIB if box_memory and any(o.startswith("mem=") for o in capped) else 0):
        return _run(argv, capped, cwd=cwd, env=env, timeout_s=timeout_s, stdout_path=stdout_path,
                    stderr_path=stderr_path, stdin_text=stdin_text, output_cap=output_cap, file_cap=file_cap,
                    memory_cap=memory_cap, watch=watch, watch_every_s=watch_every_s, pass_fds=pass_fds)


def _run(argv: list[str], capped: list[str], *, cwd: Path | str, env: Mapping[str, str], timeout_s: float | None,
         stdout_path: Path | None, stderr_path: Path | None, stdin_text: str | None, output_cap: int | None,
         file_cap: int | None, memory_cap: int | None, watch: Callable[[], str | None] | None,
         watch_every_s: float, pass_fds: Sequence[int]) -> ProcResult:
    """:func:`run_process` of ``argv`` with the reaper's cgroup options ``capped`` (:func:`split_mark`), its
    memory reserved."""
    start = time.monotonic()
    pump = Pump.open(stdout_path, stderr_path, output_cap) if output_cap is not None else None
    out: Any = pump.write_ends[0] if pump else (open_own_file(stdout_path, "wb") if stdout_path else subprocess.DEVNULL)
    try:  # each never through a link (link46)
        err: Any = pump.write_ends[1] if pump else (open_own_file(stderr_path, "wb") if stderr_path
                                                    else subprocess.DEVNULL)
    except BaseException:
        _close(out)
        raise
    rfd, wfd = os.pipe()
    options = [f"fsize={int(file_cap)}"] if file_cap is not None else []
    options += [f"as={int(memory_cap)}"] if memory_cap is not None else []
    options += capped
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(REAPER), str(wfd), str(os.getpid()), str(KILL_GRACE_S), *options,
             *([f"--pass-fds={','.join(map(str, pass_fds))}"] if pass_fds else []), "--", *argv],
            cwd=str(cwd),
            env=dict(env),
            stdout=out,
            stderr=err,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            start_new_session=True,
            # the reaper keeps the phase and the memory reserved until it has reaped all
            pass_fds=(wfd, *pass_fds, *held_fds(), *memory_fds()),
        )
    except BaseException:
        os.close(rfd)
        os.close(wfd)
        if pump:
            pump.close()
        else:
            _close(out, err)
        raise
    os.close(wfd)
    if pump:
        pump.start()
    with _live_lock:
        _live.add(proc)
    stopped: str | None = None
    status_pipe = os.fdopen(rfd, "rb", buffering=0)
    try:
        started, report = _read_start(status_pipe)  # "ok" once the command runs, "E<errno>" if it could not start
        if started != b"ok":
            proc.wait()
            raise _not_started(started, argv[0])
        if stdin_text is not None:
            assert proc.stdin is not None
            try:
                proc.stdin.write(stdin_text.encode())
                proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            code, stopped = _wait_watched(proc, timeout_s, watch, watch_every_s)
        except subprocess.TimeoutExpired:
            _terminate(proc)
            return ProcResult(exit_code=None, timed_out=True, wall_s=time.monotonic() - start,
                              cut_bytes=pump.finish() if pump else 0, **_report(report + status_pipe.read()))
        if stopped is not None:
            _terminate(proc)
            return ProcResult(exit_code=None, timed_out=False, wall_s=time.monotonic() - start, stopped=stopped,
                              cut_bytes=pump.finish() if pump else 0, **_report(report + status_pipe.read()))
        return ProcResult(exit_code=code, timed_out=False, wall_s=time.monotonic() - start,
                          cut_bytes=pump.finish() if pump else 0, **_report(report + status_pipe.read()))
    except BaseException:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # the reaper: SIGKILL to the tree at once, reap
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                kill_tree(proc.pid, grace_s=0)
        raise
    finally:
        status_pipe.close()
        with _live_lock:
            _live.discard(proc)
        if pump:
            pump.finish()
        else:
            _close(out, err)


def _not_started(started: bytes, name: str) -> OSError:
    """The error for the reaper's start status ``started`` when it is no ``ok``, with ``name`` its file name:
    ``E<errno>`` (``ENOENT``: ``FileNotFoundError``), ``K<errno>``: no session keyring of its own could be made for
    the sandbox, which then did not start (``_reaper.KeyringRefused``, gatk53: it would have run in the keyring
    homefield holds); else ``ENOENT``."""
    errno_ = int(started[1:]) if started[:1] in (b"E", b"K") and started[1:].isdigit() else 2
    if started.startswith(b"K"):
        quota = "; the key quota of its uid is full: kernel.keys.maxkeys, maxbytes" if errno_ == errno.EDQUOT else ""
        return OSError(errno_, f"the sandbox did not start: no session keyring of its own (keyctl: "
                               f"{os.strerror(errno_)}{quota})", name)
    return OSError(errno_, os.strerror(errno_), name)  # said "[Errno N] text: 'name'"; ENOENT: FileNotFoundError


def _read_start(pipe: Any) -> tuple[bytes, bytes]:
    """``(start status, what came after it)`` from the reaper's status pipe: its first word (``ok``, or
    ``E<errno>`` then end of file), read until end of file or the newline that begins its report
    (``\noom K``, written once the command is done, when it has a memory cgroup)."""
    data = b""
    while True:
        chunk = pipe.read(64)
        data += chunk or b""
        if not chunk or data.startswith(b"ok"):  # "ok" is one write: whatever follows is the report
            break
    started, _, rest = data.partition(b"\n")
    return started, rest


def _report(report: bytes) -> dict[str, Any]:
    """:class:`ProcResult`'s ``oom_kills`` and ``peak_bytes`` from the reaper's report ``oom K peak P``."""
    return {"oom_kills": _oom_kills(report), "peak_bytes": _peak_bytes(report)}


def _peak_bytes(report: bytes) -> int | None:
    """``P`` of the reaper's report ``oom K peak P``, else ``None``."""
    words = report.split()
    try:
        return int(words[words.index(b"peak") + 1]) if b"peak" in words else None
    except (IndexError, ValueError):
        return None


def _oom_kills(report: bytes) -> int:
    """``K`` of the reaper's report ``oom K`` (read to end of file once it exited), else 0."""
    words = report.split()
    try:
        return int(words[words.index(b"oom") + 1]) if b"oom" in words else 0
    except (IndexError, ValueError):
        return 0


def run_agent(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    timeout_s: float | None,
    artifacts: Path,
    limits: WriteLimits | None = None,
    watch: Callable[[], str | None] | None = None,
    stdin_text: str | None = None,
    shell: bool = False,
) -> ProcResult:
    """:func:`run_process` for an agent's program, the one way every adapter starts one: stdout and
    stderr through pipes into ``artifacts/agent.out`` / ``agent.err``, each capped at
    ``limits.output_bytes`` (default :class:`WriteLimits`), every file it writes capped one byte past
    ``limits.file_bytes`` (so a file that reached the cap is seen over it afterwards), and ``watch``
    polled every ``limits.poll_s`` seconds. A sandboxed ``argv`` gets a memory cgroup of
    ``--max-agent-memory-mb`` where one can be made: when the kernel killed a process of it there, the result's
    ``over_memory`` names the cap (the attempt is ``agent_error``, never ``infra``). Raises ``OSError`` as
    :func:`run_process` does."""
    lim = limits or WriteLimits()
    make_folder(artifacts)  # the attempt's pinned folder: from its descriptor (link52)
    memory = agent_memory_bytes()
    res = run_process(argv, cwd=cwd, env=env, timeout_s=timeout_s, stdout_path=artifacts / "agent.out",
                      stderr_path=artifacts / "agent.err", stdin_text=stdin_text, shell=shell,
                      output_cap=lim.output_bytes, file_cap=lim.file_bytes + 1, watch=watch,
                      watch_every_s=lim.poll_s, box_memory=memory)
    res.over_memory = oom_note(res.oom_kills, memory / (1 << 20), spell("max-agent-memory-mb", "cli"),
                               "a process of the agent")
    return res


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """Stop a running command through its reaper: SIGTERM to the tree, grace, SIGKILL, reap."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_S + 5)
    except subprocess.TimeoutExpired:
        kill_tree(proc.pid, grace_s=0)
        proc.wait(timeout=5)


def _wait_watched(proc: subprocess.Popen[bytes], timeout_s: float | None,
                  watch: Callable[[], str | None] | None, every_s: float) -> tuple[int | None, str | None]:
    """``(exit status, None)`` once ``proc`` exits, or ``(None, reason)`` as soon as ``watch`` (polled
    every ``every_s`` seconds) returns a reason. Raises ``subprocess.TimeoutExpired`` after
    ``timeout_s`` seconds (``None``: no limit)."""
    if watch is None:
        return wait_exit(proc, timeout_s), None
    deadline = None if timeout_s is None or not math.isfinite(timeout_s) else time.monotonic() + timeout_s
    while True:
        step = every_s if deadline is None else min(every_s, max(deadline - time.monotonic(), 0.0))
        try:
            return wait_exit(proc, step), None
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout_s or 0.0) from None
        reason = watch()
        if reason is not None:
            return None, reason


def spawn_process(cmd: Sequence[str], *, cwd: Path | str, env: Mapping[str, str], stdout_path: Path,
                  output_cap: int | None = None, why: str = spell("max-output-mb", "cli"),
                  box_memory: int | None = None, hold_memory: bool = False) -> subprocess.Popen[bytes]:
    """Start ``cmd`` under the reaper in a new session and return at once: a long-lived process (a
    service of docs/contracts.md §2 ``services:``) that the caller stops with :func:`stop_process`.
    stdout and stderr go to ``stdout_path`` (appended). With ``output_cap`` (bytes) they go through one
    pipe this process reads into a :class:`CappedSink` appending to ``stdout_path`` (its head, a marker
    line naming ``why``, its last bytes; written in full by :func:`stop_process`): the command never
    holds a host file. Until then it is one of the commands :func:`stop_all` stops, and the reaper kills
    its whole tree when this process dies (SIGKILL too). Raises ``OSError`` when the program cannot be
    started. ``box_memory`` (bytes): a sandboxed command's memory cgroup, as :func:`run_process`'s (atk21: a
    redis the tests command grew to 2 GiB with four 60-byte commands, past the test run's memory cap).
    ``hold_memory``: its reaper inherits the memory this process has reserved now (:mod:`.memory_budget`: an
    instance started fresh for one test run or agent, stopped inside the reservation that counted it); an
    instance outliving it (a mining worker's) must not keep it."""
    capped, cmd = _reaper_options(cmd, box_memory)  # a sandboxed service's, as run_process's (satk52: no uid)
    rfd, wfd = os.pipe()
    pump: Pump | None = None
    if output_cap is not None:
        r_out, w_out = os.pipe()
        try:
            pump = Pump([CappedSink(stdout_path, output_cap, append=True, why=why)], [r_out], [w_out])
        except BaseException:
            for fd in (r_out, w_out, rfd, wfd):
                os.close(fd)
            raise
    with contextlib.ExitStack() as files:
        out: Any = pump.write_ends[0] if pump is not None else files.enter_context(open_own_file(stdout_path, "ab"))
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER), str(wfd), str(os.getpid()), str(KILL_GRACE_S), *capped,
                 "--", *cmd], cwd=str(cwd), env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
                pass_fds=(wfd, *(memory_fds() if hold_memory else ())))
        except BaseException:
            os.close(rfd)
            os.close(wfd)
            if pump is not None:
                pump.close()
            raise
    os.close(wfd)
    if pump is not None:
        pump.start()
    with os.fdopen(rfd, "rb", buffering=0) as status_pipe:  # a memory cgroup's report comes at the end: unread
        started, _ = _read_start(status_pipe)
    if started != b"ok":
        proc.wait()
        if pump is not None:
            pump.finish()
        raise _not_started(started, cmd[0])
    with _live_lock:
        _live.add(proc)
        if pump is not None:
            _pumps[proc] = pump
    return proc


def stop_process(proc: subprocess.Popen[bytes], *, grace_s: float = KILL_GRACE_S) -> int | None:
    """Stop a process of :func:`spawn_process` and its whole tree (``SIGTERM``, then ``SIGKILL``
    after the reaper's grace of :data:`KILL_GRACE_S` s; ``grace_s`` 0: ``SIGKILL`` at once) and
    wait for it; then its capped output is written in full (``output_cap``). Returns its exit status
    (``None`` when it could not be waited for)."""
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM if grace_s > 0 else signal.SIGINT)
        try:
            return proc.wait(timeout=KILL_GRACE_S + 5)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid, grace_s=0)
            try:
                return proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                return None
    finally:
        with _live_lock:
            _live.discard(proc)
            pump = _pumps.pop(proc, None)
        if pump is not None:
            pump.finish()


def wait_exit(proc: subprocess.Popen[bytes], timeout_s: float | None) -> int:
    """``proc.wait(timeout=timeout_s)`` (s; ``None``: no limit) that returns as soon as the process
    exits: Linux's ``pidfd_open`` + ``poll`` instead of ``Popen.wait``'s sleeps of up to 50 ms, which
    cost about 25 ms per command. Falls back to ``Popen.wait`` where pidfds are missing. Returns the
    exit status; raises ``subprocess.TimeoutExpired`` as ``Popen.wait`` does."""
    if timeout_s is None or not math.isfinite(timeout_s) or not hasattr(os, "pidfd_open"):
        return proc.wait(timeout=timeout_s if timeout_s is not None and math.isfinite(timeout_s) else None)
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:  # already reaped, or a kernel before 5.3
        return proc.wait(timeout=timeout_s)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(min(math.ceil(max(timeout_s, 0.0) * 1000), 2**31 - 1)):
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(fd)
    return proc.wait()


def _close(*files: object) -> None:
    for f in files:
        close = getattr(f, "close", None)
        if close is not None:
            close()
