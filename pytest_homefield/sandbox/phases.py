"""The machine's phase lock: no untrusted agent works while an untrusted attempt is graded (contracts §9).

Concurrent attempts share one kernel whatever the sandbox: advisory file locks and inotify on the
read-only files every sandbox binds, CPU time. A graded test process (the agent's code beside the
hidden tests) can signal through them to another attempt's agent while it works (atk14 A6: a hidden
test file in 5 s through ``flock`` on stdlib files). Nothing can be namespaced there, so the two
*phases* never overlap on one machine: agents may work together, gradings may run together, never
one of each.

:class:`PhaseLock` is a fair two-class lock over three ``flock`` files in a per-user folder of ``/tmp``
(``homefield-phases-<uid>``, mode 0700; not of ``$TMPDIR``, which differs between sessions), shared by
every homefield process of the user on the machine (xdist workers, other sessions). To enter its class a
process takes ``gate`` exclusively (one entrant at a time), then the *other* class's file exclusively
(it waits there until every holder of the other class has left), then its own class's file shared, and
lets go of the first two. A holder keeps only its class's file, shared, until it leaves. So an entrant
waits for the other class's phases running now, and while it waits (holding ``gate``) no newcomer of
either class gets in: a steady stream of agents cannot keep a grading out for ever, nor the reverse.
Nothing is counted in a file: a process killed at any step holds nothing any more (the kernel drops a
dead process's ``flock`` locks). The descriptors are close-on-exec, and no command started during the
phase gets them: only the reaper of each command run in the phase (:func:`held_fds`, passed by
:func:`pytest_homefield.sandbox.procs.run_process`), which shares the lock and keeps it until it has
reaped every process of the command. homefield leaves a phase after its reapers have exited, and should
homefield be killed, the phase still lasts until the last of its processes is gone.

An entrant that has to wait for another session's phases says so once, through its session's notice
(:func:`set_notice`: a line on the terminal), naming those holders by pid, what they are and how long they
have held their phase, never their arguments (``pid 812 (homefield verify) in /repo, for 75 s``; a command
line may carry tokens: ux30; a session's own agents and gradings take turns all the time: that says
nothing), then once more when it gets in; the session's other processes (its
xdist workers) and later entries say nothing more of the same sessions for a minute (the ``said`` file): one
repository's ``run`` waited 507 s behind another's ``verify --attacks`` with no line at all. A holder is
known by a file ``holders/<kind>.<pid>.<start>`` of the folder (``<start>`` the process's start time in clock ticks,
:func:`~pytest_homefield.sandbox.tempdirs.owner_tag`; :func:`session_key` and :func:`session_label`, written on
entering, removed on leaving, its age how long it has been held): one whose process is gone, or whose pid another
process has taken since (a holder SIGKILLed: fix44 saw a waiting line name "pid 28155 (homefield run) …, for 36980 s"
of no homefield process), is ignored and removed (only that process writes that name: removing it never removes a
live holder's file); one without a start (``<kind>.<pid>``, before fix44) is ignored: words for people, never part
of the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pytest_homefield.sandbox.tempdirs import owner_alive, owner_tag

__all__ = ["AGENT", "GRADING", "PHASE_DIR_VAR", "Phase", "PhaseLock", "held_fds", "phase_folder", "session_key",
           "session_label", "set_notice"]

Kind = Literal["agent", "grading"]
#: An untrusted agent working (its program and everything it started).
AGENT: Kind = "agent"
#: An untrusted attempt's grading (its test runs, twin runs and confirmation run).
GRADING: Kind = "grading"
_FILES: dict[str, str] = {AGENT: "agents", GRADING: "gradings"}
#: The descriptors of the phases this process holds now (their reapers inherit them).
_HELD: set[int] = set()


#: What this process's session is, for another session that waits for it, and what makes its processes one
#: session (:func:`set_notice`), and where its notices go (``None``: nowhere).
_SESSION: list[str] = []
_SESSION_ID: list[str] = []
_NOTICE: list[Callable[[str], None]] = []
#: The longest holder description read from a holder file (characters).
_LABEL_MAX = 300
#: A session says that it waits for the same other sessions at most once in this many seconds, whichever of its
#: processes waits (xdist workers each printed the line, for every attempt: :meth:`PhaseLock._first_to_say`).
SAY_AGAIN_S = 60.0
#: The largest ``said`` file read or written (bytes).
_SAID_MAX = 1 << 16


def set_notice(notice: Callable[[str], None] | None, label: str = "", session: str = "") -> None:
    """Where this process says that it waits for the phase lock, and got it (``notice``: called with one
    line; ``None``: nowhere); ``label``, what other sessions read of this one while it holds a phase: what
    it is, never its arguments (``homefield verify``; default the program's name); ``session``, what this
    session's processes share and no other session's (its full command line: never written, only its digest,
    :func:`session_key`; default ``label``)."""
    _NOTICE[:] = [notice] if notice is not None else []
    _SESSION[:] = [label] if label else []
    _SESSION_ID[:] = [session] if session else []


def session_label() -> str:
    """``pid N (LABEL) in CWD``: how a holder of a phase is named to a session that waits for it (LABEL
    :func:`set_notice`'s, at most 120 characters; by default the program's name, never its arguments)."""
    label = _SESSION[0] if _SESSION else os.path.basename(sys.argv[0] or "python")
    return f"pid {os.getpid()} ({label[:120]}) in {os.getcwd()}"


def session_key() -> str:
    """What every process of this session shares and no other session's: 16 hex digits of the SHA-256 of
    :func:`set_notice`'s ``session`` (else its label, else the full command line) and the working folder.
    The session's command line is never written in the lock's folder, only this digest of it."""
    what = _SESSION_ID[0] if _SESSION_ID else _SESSION[0] if _SESSION else "\0".join(sys.argv)
    return hashlib.sha256(f"{what}\0{os.getcwd()}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def held_fds() -> tuple[int, ...]:
    """The descriptors of the phases this process holds now: a command's reaper inherits them (never
    the command), so a phase ends only when the reaper has reaped every process of the command, even
    when homefield dies first."""
    return tuple(sorted(_HELD))


#: The environment variable naming the lock's folder instead of the temp dir's (contracts §9): sessions
#: that must wait for each other need the same folder; a test suite gives each test its own.
PHASE_DIR_VAR = "HOMEFIELD_PHASE_DIR"


def _machine_temp() -> Path:
    """``/tmp``, the machine's temp folder, whatever ``$TMPDIR`` says (two sessions of the user with
    different ``TMPDIR`` must still wait for each other); the temp dir only where there is no ``/tmp``."""
    return Path("/tmp") if os.path.isdir("/tmp") else Path(tempfile.gettempdir())


def phase_folder(temp: Path | None = None) -> Path:
    """``$HOMEFIELD_PHASE_DIR`` when set (and no ``temp`` is given), else ``<temp>/homefield-phases-<uid>``
    (``temp`` by default ``/tmp``, not ``$TMPDIR``: :func:`_machine_temp`); made mode 0700 when missing.
    Raises :class:`OSError` when it exists but is not a folder of this user (a link, another user's) or
    others may write it."""
    named = os.environ.get(PHASE_DIR_VAR) if temp is None else None
    folder = Path(named) if named else Path(temp or _machine_temp()) / f"homefield-phases-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise OSError(f"{folder} is not a private folder of this user: cannot keep the phase lock there")
    return folder


@dataclass(frozen=True)
class Phase:
    """A phase being held: its ``kind`` and how long the entrant waited for it (``wait_s``, seconds)."""

    kind: Kind
    wait_s: float


class PhaseLock:
    """The machine-wide two-class lock (module docstring) over the files of ``folder`` (default
    :func:`phase_folder`). Plain and picklable: only the folder is kept."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else phase_folder()

    def _open(self, name: str) -> int:
        return os.open(self.folder / name, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)

    def _holders_dir(self) -> Path:
        folder = self.folder / "holders"
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        return folder

    def _note_holder(self, kind: Kind) -> Path | None:
        """Write this process's holder file of ``kind`` (``KEY LABEL``: :func:`session_key`,
        :func:`session_label`; its modification time when it entered); ``None`` when it cannot be written
        (the lock does not depend on it). Named ``<kind>.<pid>.<start>`` (:func:`owner_tag`): a later process given
        the same pid writes another file."""
        try:
            path = self._holders_dir() / f"{kind}.{owner_tag()}"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError:
            return None
        try:
            os.write(fd, f"{session_key()} {session_label()}".encode("utf-8", "replace"))
        finally:
            os.close(fd)
        return path

    def holders(self, kind: Kind) -> list[str]:
        """The holders of ``kind`` as a waiting session names them: ``pid N (LABEL) in CWD, for S s``
        (:func:`session_label`; S seconds since it entered), those of live processes only (the pid and start time its
        file is named by: not a process that took the pid of a killed holder since; a stale file is removed), in pid
        order; unreadable ones are left out."""
        return [text for _, text in self._holders(kind)]

    def _holders(self, kind: Kind) -> list[tuple[str, str]]:
        """``[(session key, description)]`` of :meth:`holders`' (:func:`session_key`)."""
        found: list[tuple[int, str, str]] = []
        try:
            names = os.listdir(self.folder / "holders")
        except OSError:
            return []
        for name in names:
            who, _, tag = name.partition(".")
            pid, _, start = tag.partition(".")
            if who != kind or not pid.isdigit() or not start.isdigit() or int(pid) == os.getpid():
                continue
            if not owner_alive(int(pid), start):  # gone, or its pid taken by another process since: stale
                with contextlib.suppress(OSError):
                    os.unlink(self.folder / "holders" / name)  # only <pid> started at <start> writes this name
                continue
            try:
                fd = os.open(self.folder / "holders" / name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                raw = os.read(fd, _LABEL_MAX)
                held_s = max(0.0, time.time() - os.fstat(fd).st_mtime)
            finally:
                os.close(fd)
            key, _, label = _as_read(raw).partition(" ")
            found.append((int(pid), key, f"{label}, for {held_s:.0f} s"))
        return [(key, text) for _, key, text in sorted(found)]

    def _lock_or_say(self, fd: int, mode: int, kind: Kind, other: Kind, said: list[float]) -> None:
        """``flock(fd, mode)``; when it would block, the waiting line first (once per entry: ``said`` holds
        the time it was said)."""
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if _NOTICE and not said:
            # another session's holders only: a session's own agents and gradings take turns all the time
            mine = session_key()
            held = [(key, text) for key, text in self._holders(other) if key != mine]
            who = [text for _, text in held]
            if who and self._first_to_say(mine, sorted({key for key, _ in held})):
                said.append(time.monotonic())
                _NOTICE[0](f"homefield: waiting for the machine's phase lock: {'an' if kind == AGENT else 'a'} "
                           f"{kind} phase waits for the {other} phases of another session: {'; '.join(who)}")
        fcntl.flock(fd, mode)

    def _first_to_say(self, mine: str, others: list[str]) -> bool:
        """Whether this process is the one of its session (``mine``, :func:`_session_of`) to say that it waits
        for the sessions ``others``: not when a process of this session (another xdist worker, or this one for
        an earlier attempt) said it of the same sessions less than :data:`SAY_AGAIN_S` ago. Kept in the
        folder's ``said`` file (``{session: [time, others]}``, entries older than that dropped), under an
        exclusive ``flock`` of it; ``True`` when the file cannot be used (a line too many, never one too few)."""
        try:
            fd = os.open(self.folder / "said", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                seen = json.loads(os.pread(fd, _SAID_MAX, 0) or b"{}")
            except ValueError:
                seen = {}
            now = time.time()
            seen = {k: v for k, v in (seen.items() if isinstance(seen, dict) else ())
                    if isinstance(v, list) and len(v) == 2 and isinstance(v[0], (int, float))
                    and 0 <= now - v[0] < SAY_AGAIN_S}
            if seen.get(mine, [0, None])[1] == others:
                return False
            seen[mine] = [now, others]
            data = json.dumps(seen).encode()
            if len(data) <= _SAID_MAX:
                os.ftruncate(fd, 0)
                os.pwrite(fd, data, 0)
            return True
        except OSError:
            return True
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def hold(self, kind: Kind) -> Iterator[Phase]:
        """Wait until no phase of the other class runs on the machine, then hold a phase of ``kind``
        (``AGENT`` or ``GRADING``) for the ``with`` block; yields the :class:`Phase` with the time
        waited. Raises :class:`ValueError` for another kind, :class:`OSError` when the lock files
        cannot be opened; an interrupt while waiting leaves nothing held."""
        if kind not in _FILES:
            raise ValueError(f"unknown phase {kind!r}; expected {AGENT!r} or {GRADING!r}")
        other: Kind = GRADING if kind == AGENT else AGENT
        t0 = time.monotonic()
        fds: list[int] = []
        said: list[float] = []
        try:
            fds.append(self._open("gate"))
            self._lock_or_say(fds[0], fcntl.LOCK_EX, kind, other, said)  # one entrant at a time, of either class
            fds.append(self._open(_FILES[other]))
            self._lock_or_say(fds[1], fcntl.LOCK_EX, kind, other, said)  # every phase of the other class has ended
            own = self._open(_FILES[kind])
            fds.append(own)
            fcntl.flock(own, fcntl.LOCK_SH)  # with the gate held, only this class's holders have it
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        os.close(fds[1])
        os.close(fds[0])  # newcomers may enter: those of the other class wait on ``own`` now
        _HELD.add(own)
        waited = time.monotonic() - t0
        if said and _NOTICE:
            _NOTICE[0](f"homefield: got the machine's phase lock ({kind}) after {waited:.0f} s")
        note = self._note_holder(kind)
        try:
            yield Phase(kind, waited)
        finally:
            if note is not None:
                with contextlib.suppress(OSError):
                    note.unlink()
            _HELD.discard(own)
            os.close(own)


def _as_read(raw: bytes) -> str:
    """A holder file's bytes as :meth:`PhaseLock.holders` shows them: at most :data:`_LABEL_MAX` bytes, printed
    on a terminal (no control character of whoever wrote the file gets there, each run of white space one
    space)."""
    text = raw[:_LABEL_MAX].decode("utf-8", "replace").strip()
    return " ".join("".join(c if c.isprintable() else "?" for c in text).split())


