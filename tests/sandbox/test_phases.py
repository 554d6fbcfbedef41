"""The machine's phase lock (sandbox/phases.py) with real processes: agents and gradings never
overlap, each class overlaps itself, a killed process releases what it held, and a steady stream
of one class does not keep the other out (contracts §9, atk14 A6)."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.line_log import append_line

from pytest_homefield.sandbox.phases import AGENT, GRADING, PHASE_DIR_VAR, PhaseLock, phase_folder
from pytest_homefield.sandbox.procs import run_process

CTX = multiprocessing.get_context("fork")


def _holder(folder: str, kind: str, log: str, times: int, hold_s: float, pause_s: float) -> None:
    """Hold ``kind`` ``times`` times for ``hold_s`` s each, logging ``kind start end wait`` lines."""
    lock = PhaseLock(Path(folder))
    for _ in range(times):
        with lock.hold(kind) as phase:  # type: ignore[arg-type]
            start = time.monotonic()
            time.sleep(hold_s)
            append_line(log, f"{kind} {start} {time.monotonic()} {phase.wait_s}")
        time.sleep(pause_s)


def _hold_until_killed(folder: str, kind: str, ready: Any) -> None:
    with PhaseLock(Path(folder)).hold(kind):  # type: ignore[arg-type]
        ready.set()
        time.sleep(600)


def _intervals(log: Path) -> list[tuple[str, float, float, float]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(k, float(a), float(b), float(w)) for k, a, b, w in rows]


def _overlap(a: tuple[str, float, float, float], b: tuple[str, float, float, float]) -> bool:
    return a[1] < b[2] and b[1] < a[2]


def _start(target: Any, *args: Any) -> Any:
    proc = CTX.Process(target=target, args=args, daemon=True)
    proc.start()
    return proc


def _ended(proc: Any, timeout_s: float) -> bool:
    proc.join(timeout_s)
    return not proc.is_alive() and proc.exitcode == 0


def test_the_two_classes_never_overlap(tmp_path: Path) -> None:
    log = tmp_path / "log"
    procs = [_start(_holder, str(tmp_path), kind, str(log), 5, 0.05, 0.01)
             for kind in (AGENT, AGENT, AGENT, GRADING, GRADING)]
    assert all(_ended(p, 60) for p in procs)
    rows = _intervals(log)
    assert len(rows) == 25
    agents = [r for r in rows if r[0] == AGENT]
    gradings = [r for r in rows if r[0] == GRADING]
    assert not [(a, g) for a in agents for g in gradings if _overlap(a, g)]


@pytest.mark.parametrize("kind", [AGENT, GRADING])
def test_one_class_runs_together(tmp_path: Path, kind: str) -> None:
    log = tmp_path / "log"
    procs = [_start(_holder, str(tmp_path), kind, str(log), 1, 1.0, 0) for _ in range(2)]
    assert all(_ended(p, 30) for p in procs)
    first, second = _intervals(log)
    assert _overlap(first, second), "two phases of one class must not wait for each other"


def _held_and_waiting(folder: Path, kind: str) -> tuple[Any, Any]:
    """``(holder, waiter)``: a process holding a phase of ``kind`` until killed, and one of the other class
    that asked after it and waits (holding the gate while the holder's class drains)."""
    ready = CTX.Event()
    holder = _start(_hold_until_killed, str(folder), kind, ready)
    assert ready.wait(30)
    waiter = _start(_holder, str(folder), GRADING if kind == AGENT else AGENT, str(folder / "log"), 1, 0.0, 0)
    assert not _ended(waiter, 0.5), "the other class must wait while the phase is held"
    return holder, waiter


@pytest.mark.parametrize("kind", [AGENT, GRADING])
def test_a_killed_holder_releases_its_phase(tmp_path: Path, kind: str) -> None:
    holder, waiter = _held_and_waiting(tmp_path, kind)
    os.kill(holder.pid, signal.SIGKILL)
    assert _ended(waiter, 10), "a killed holder must release its phase"


@pytest.mark.parametrize("kind", [AGENT, GRADING])
def test_an_entrant_killed_while_waiting_at_the_gate_releases_it(tmp_path: Path, kind: str) -> None:
    holder, entrant = _held_and_waiting(tmp_path, kind)
    os.kill(entrant.pid, signal.SIGKILL)
    entrant.join(10)
    newcomer = _start(_holder, str(tmp_path), kind, str(tmp_path / "log"), 1, 0.0, 0)
    assert _ended(newcomer, 10), "a killed entrant must release the gate"
    os.kill(holder.pid, signal.SIGKILL)


def test_a_stream_of_agents_does_not_keep_a_grading_out(tmp_path: Path) -> None:
    """Three agents re-enter for 6 s, staggered so that one is always working: a grading that asks
    after 0.5 s gets in once the agents working then have finished (a plain readers-writer lock,
    agents shared and gradings exclusive, would keep it out until the stream stops)."""
    log = tmp_path / "log"
    agents = []
    for _ in range(3):
        agents.append(_start(_holder, str(tmp_path), AGENT, str(log), 12, 0.3, 0.0))
        time.sleep(0.1)
    time.sleep(0.5)
    asked = time.monotonic()
    grading = _start(_holder, str(tmp_path), GRADING, str(log), 1, 0.1, 0)
    assert _ended(grading, 30)
    row = next(r for r in _intervals(log) if r[0] == GRADING)
    assert row[1] - asked < 2.0, f"the grading waited {row[1] - asked:.1f} s behind a stream of agents"
    assert row[3] < 2.0
    for p in agents:
        assert _ended(p, 60)
    assert max(r[2] for r in _intervals(log) if r[0] == AGENT) > row[2], "the agents went on after it"


def test_the_folder_is_private_to_the_user(tmp_path: Path) -> None:
    folder = phase_folder(tmp_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert folder.name == f"homefield-phases-{os.getuid()}"
    folder.chmod(0o777)
    with pytest.raises(OSError, match="not a private folder"):
        phase_folder(tmp_path)
    folder.chmod(0o700)
    link = tmp_path / "elsewhere"
    link.mkdir()
    folder.rmdir()
    folder.symlink_to(link)
    with pytest.raises(OSError, match="not a private folder"):
        phase_folder(tmp_path)


def test_an_unknown_phase_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown phase"), PhaseLock(tmp_path).hold("mining"):  # type: ignore[arg-type]
        pass


@pytest.mark.parametrize("kind", [AGENT, GRADING])
def test_a_commands_reaper_shares_the_phase_and_the_command_does_not(tmp_path: Path, kind: str) -> None:
    """The phase lasts until the reaper has reaped the command's every process, even should homefield
    die first; the command itself never holds the lock (it could unlock it for homefield too)."""
    listing = tmp_path / "fds"
    show = ('for f in /proc/$$/fd/*; do echo "command $(readlink $f)"; done; '
            'for f in /proc/$PPID/fd/*; do echo "reaper $(readlink $f)"; done')
    lock_file = str(tmp_path / ("agents" if kind == AGENT else "gradings"))
    with PhaseLock(tmp_path).hold(kind):  # type: ignore[arg-type]
        run_process(["sh", "-c", show], cwd=tmp_path, env=os.environ, timeout_s=30, stdout_path=listing)
    rows = [line.split(" ", 1) for line in listing.read_text().splitlines()]
    assert [who for who, target in rows if target == lock_file] == ["reaper"], rows
    other = _start(_holder, str(tmp_path), GRADING if kind == AGENT else AGENT, str(tmp_path / "log"), 1, 0.0, 0)
    assert _ended(other, 10), "the phase ends with the reaper"


def test_the_folder_is_homefield_phase_dir_when_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions that must wait for each other share ``$HOMEFIELD_PHASE_DIR`` (made private when missing);
    an explicit ``temp`` still wins."""
    monkeypatch.setenv(PHASE_DIR_VAR, str(tmp_path / "shared"))
    assert phase_folder() == tmp_path / "shared"
    assert stat.S_IMODE(os.stat(tmp_path / "shared").st_mode) == 0o700
    assert phase_folder(tmp_path) == tmp_path / f"homefield-phases-{os.getuid()}"


def test_the_default_folder_is_the_machines_not_tmpdirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sessions of the user with different ``TMPDIR`` (a test runner's, a shell's) must wait for each
    other: the default folder is under ``/tmp`` whatever ``TMPDIR`` says (on main it followed it)."""
    monkeypatch.delenv(PHASE_DIR_VAR, raising=False)
    folders = set()
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv("TMPDIR", str(tmp_path / name))
        tempfile.tempdir = None  # tempfile caches the temp dir of the first call
        try:
            folders.add(phase_folder())
        finally:
            tempfile.tempdir = None
    assert folders == {Path("/tmp") / f"homefield-phases-{os.getuid()}"}


def _hold_labelled(folder: str, kind: str, label: str, ready: Any, release: Any, session: str = "") -> None:
    from pytest_homefield.sandbox import phases

    phases.set_notice(None, label, session)
    with PhaseLock(Path(folder)).hold(kind):  # type: ignore[arg-type]
        ready.set()
        release.wait(60)


def test_a_session_that_waits_says_for_whom_and_when_it_got_in(tmp_path: Path) -> None:
    """One repository's run waited 507 s behind another repository's ``verify --attacks`` with no line: an
    entrant that has to wait says so once, naming the other class's holders (pid, what it is, folder, how long
    it has held its phase), and once more when it gets in; one that does not wait says nothing."""
    from pytest_homefield.sandbox import phases

    ready, release = CTX.Event(), CTX.Event()
    holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield verify", ready, release)
    assert ready.wait(30)
    lines: list[str] = []

    def notice(line: str) -> None:
        lines.append(line)
        release.set()  # the holder leaves only once the waiting line was said: no race

    lock = PhaseLock(tmp_path)
    phases.set_notice(notice, "homefield run")
    try:
        with lock.hold(AGENT) as phase:
            assert lock.holders(AGENT) == []  # this process's own file is not listed to itself
        assert len(lines) == 2, lines
        assert re.fullmatch(re.escape("homefield: waiting for the machine's phase lock: an agent phase waits for the "
                                      f"grading phases of another session: pid {holder.pid} (homefield verify) in "
                                      f"{os.getcwd()}, for ") + r"\d+ s", lines[0]), lines[0]
        assert lines[1] == f"homefield: got the machine's phase lock (agent) after {phase.wait_s:.0f} s"
        assert _ended(holder, 10)
        assert lock.holders(GRADING) == [] and not list((tmp_path / "holders").iterdir())  # each left its file
        with lock.hold(GRADING):
            pass
        assert len(lines) == 2  # no wait, no line
        # a wait for this session's own phases (another worker of it) says nothing: they take turns all the time
        ready.clear(), release.clear()
        holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield run", ready, release)
        assert ready.wait(30)
        threading.Timer(0.5, release.set).start()
        with lock.hold(AGENT) as phase:
            assert phase.wait_s > 0.2
        assert len(lines) == 2 and _ended(holder, 10)
    finally:
        phases.set_notice(None)
        release.set()


def test_a_session_whose_command_has_runs_of_white_space_knows_its_own_phases(tmp_path: Path) -> None:
    """mem26: a session whose command line held two spaces in a row (a ``cmd:`` agent's indented code) read its
    own holders' labels with one space, compared them with its own as written, and called its own xdist
    workers "another session" at every wait."""
    from pytest_homefield.sandbox import phases

    label = "homefield run --agent 'x=cmd:python -c \"if 1:\n    print(1)\"'  -n\t2"
    ready, release = CTX.Event(), CTX.Event()
    holder = _start(_hold_labelled, str(tmp_path), GRADING, label, ready, release)
    assert ready.wait(30)
    lines: list[str] = []
    phases.set_notice(lines.append, label)
    try:
        threading.Timer(0.5, release.set).start()
        with PhaseLock(tmp_path).hold(AGENT) as phase:
            assert phase.wait_s > 0.2
        assert lines == [] and _ended(holder, 10)
    finally:
        phases.set_notice(None)
        release.set()


def _wait_labelled(folder: str, kind: str, label: str, log: str) -> None:
    """Enter ``kind`` as a process of the session ``label``, its notices and then its wait logged to ``log``."""
    from pytest_homefield.sandbox import phases

    phases.set_notice(lambda line: append_line(log, line), label)
    with PhaseLock(Path(folder)).hold(kind) as phase:  # type: ignore[arg-type]
        append_line(log, f"waited {phase.wait_s}")


def test_the_processes_of_one_session_say_they_wait_once(tmp_path: Path) -> None:
    """nu20: each xdist worker of a run said it waited for the same other session, and again for every attempt:
    of one session's processes waiting for the same sessions, one says so (and that it got in) once a minute."""
    ready, release = CTX.Event(), CTX.Event()
    holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield verify --attacks", ready, release)
    assert ready.wait(30)
    log = tmp_path / "notices.log"
    waiters = [_start(_wait_labelled, str(tmp_path), AGENT, "homefield run -n 2", str(log)) for _ in range(2)]
    time.sleep(1.5)
    release.set()
    assert _ended(holder, 10) and all(_ended(w, 30) for w in waiters)
    lines = log.read_text().splitlines()
    waited = [float(ln.split()[1]) for ln in lines if ln.startswith("waited ")]
    assert len(waited) == 2 and min(waited) > 1.0, lines  # both workers waited
    says = [ln for ln in lines if not ln.startswith("waited ")]
    assert len(says) == 2, lines
    assert says[0].startswith("homefield: waiting for the machine's phase lock: an agent phase waits for the grading "
                              f"phases of another session: pid {holder.pid} (homefield verify --attacks)")
    assert says[1].startswith("homefield: got the machine's phase lock (agent) after ")
    # another session waiting for the same holder says so itself
    ready.clear(), release.clear()
    holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield verify --attacks", ready, release)
    assert ready.wait(30)
    other = tmp_path / "other.log"
    waiter = _start(_wait_labelled, str(tmp_path), AGENT, "homefield mine -n 2", str(other))
    time.sleep(1.0)
    release.set()
    assert _ended(holder, 10) and _ended(waiter, 30)
    said = other.read_text().splitlines()
    assert said[0].startswith("homefield: waiting for the machine's phase lock: ") and \
        said[1].startswith("homefield: got the machine's phase lock (agent) after "), said


def test_a_waiting_session_is_told_what_holds_the_lock_and_for_how_long_never_its_arguments(tmp_path: Path) -> None:
    """ux30: the waiting line showed the other session's whole command line (paths, a ``cmd:`` agent's token);
    it names the holder by pid, what it is and how long it has held its phase, and the lock's folder keeps no
    word of the arguments (only a digest tells a session's own processes apart from another session's)."""
    from pytest_homefield.sandbox import phases

    secret = "s3cret-token-4711"
    ready, release = CTX.Event(), CTX.Event()
    holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield run", ready, release,
                    f"homefield run --agent 'x=cmd:API_KEY={secret} ./agent.sh' /home/u/private")
    assert ready.wait(30)
    time.sleep(1.2)
    lines: list[str] = []

    def notice(line: str) -> None:
        lines.append(line)
        release.set()

    phases.set_notice(notice, "homefield verify", f"homefield verify --attacks {secret}")
    try:
        with PhaseLock(tmp_path).hold(AGENT):
            pass
        assert _ended(holder, 10)
        m = re.fullmatch(re.escape("homefield: waiting for the machine's phase lock: an agent phase waits for the "
                                   f"grading phases of another session: pid {holder.pid} (homefield run) in "
                                   f"{os.getcwd()}, for ") + r"(\d+) s", lines[0])
        assert m is not None, lines
        assert int(m[1]) >= 1  # held 1.2 s before this session asked
        assert secret not in "".join(lines)
        # nothing of either session's arguments is kept in the lock's folder
        with PhaseLock(tmp_path).hold(GRADING):
            files = [p for p in tmp_path.rglob("*") if p.is_file()]
            assert any(p.parent.name == "holders" for p in files)
            assert [p for p in files if secret.encode() in p.read_bytes() or b"private" in p.read_bytes()] == []
    finally:
        phases.set_notice(None)
        release.set()


def test_a_session_without_a_label_is_named_by_its_program_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default label (no :func:`set_notice` label) was the whole ``sys.argv``: now the program's name."""
    from pytest_homefield.sandbox import phases

    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/homefield", "run", "--agent", "x=cmd:API_KEY=s3cret ./a.sh"])
    phases.set_notice(None)
    assert phases.session_label() == f"pid {os.getpid()} (homefield) in {os.getcwd()}"


def test_a_holder_file_whose_pid_another_process_took_is_ignored_and_removed(tmp_path: Path) -> None:
    """fix44: a waiting line named "pid 28155 (homefield run) in …, for 36980 s" of no homefield process: the holder
    was SIGKILLed (its file left) and an unrelated process took its pid; the file was named while that pid lived.
    A holder file names its process's start time too (``<kind>.<pid>.<start>``): one whose pid runs with another
    start is ignored and removed, one without a start (before fix44) ignored; the real holder is named."""
    import subprocess

    from pytest_homefield.sandbox.tempdirs import owner_tag

    unrelated = subprocess.Popen(["sleep", "60"])  # a live process that never held a phase
    try:
        pid, start = owner_tag(unrelated.pid).split(".")
        assert start != "0"  # this machine has /proc
        holders = tmp_path / "holders"
        holders.mkdir(mode=0o700)
        said = f"0123456789abcdef pid {pid} (homefield run) in /gone/test_two_remote_workers0"
        (holders / f"grading.{pid}").write_text(said)  # no start: as written before fix44
        (holders / f"grading.{pid}.{int(start) - 7}").write_text(said)  # the killed holder's start: another process
        lock = PhaseLock(tmp_path)
        assert lock.holders(GRADING) == []
        assert sorted(p.name for p in holders.iterdir()) == [f"grading.{pid}"]  # the stale one removed
        # the same pid with its own start is that process: named
        (holders / f"grading.{pid}.{start}").write_text(said)
        assert [h.rpartition(", for ")[0] for h in lock.holders(GRADING)] == [said.partition(" ")[2]]
        # a real holder in another process is named, whatever stale files lie beside it
        ready, release = CTX.Event(), CTX.Event()
        holder = _start(_hold_labelled, str(tmp_path), GRADING, "homefield verify", ready, release)
        try:
            assert ready.wait(30)
            (holders / f"grading.{holder.pid}").write_text(said)
            (holders / f"grading.{holder.pid}.1").write_text(said)
            assert f"grading.{owner_tag(holder.pid)}" in os.listdir(holders)
            named = lock.holders(GRADING)
            assert [h for h in named if f"pid {holder.pid} " in h] == [
                next(h for h in named if "(homefield verify)" in h)]
            assert len(named) == 2  # the verify holder and the unrelated pid's own-start file
            assert f"grading.{holder.pid}.1" not in os.listdir(holders)
        finally:
            release.set()
            assert _ended(holder, 10)
        assert [h.rpartition(", for ")[0] for h in lock.holders(GRADING)] == [said.partition(" ")[2]]  # it left
    finally:
        unrelated.kill()
        unrelated.wait()
