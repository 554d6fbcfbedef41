"""The machine's memory budget: the memory caps of the sandboxes running at once never sum past it (contracts §9).

Each sandbox with a memory cgroup is capped (a test run ``max_test_memory_mb``, an agent
``--max-agent-memory-mb``, a service instance ``max_test_memory_mb``), not their sum: ``-n 3`` let sandboxes
hold 24 GiB on a machine of 23 GB, and past the machine's memory the kernel's OOM killer picks by resident
memory. Memory held in a ``memfd`` or a tmpfs is nobody's resident memory, so the victim was an honest test
process beside it, whose cgroup counted the kill: homefield blamed the honest run's own cap (atk25). So a
sandbox *reserves* its cap from a machine-wide budget (:func:`budget_mb`, ``--max-total-memory-mb``) before it
starts, and gives it back when its last process is gone.

The budget is the file ``memory`` of the phase lock's folder (:func:`~.phases.phase_folder`: per user, per
machine, shared by every homefield process of the user: xdist workers, other sessions): byte ``i`` of it is
MiB ``i`` of the budget, and a reservation of ``k`` MiB is an open file description of it holding write locks
on ``k`` of its first ``budget`` bytes (open file description locks, ``F_OFD_SETLK``: owned by the
description, not the process, so they pass to a child with the descriptor, and the kernel drops them when the
last descriptor of the description is closed, also when its processes are killed). Nothing is counted in a
file: a process killed at any step holds nothing any more. A reserver takes ``memory-gate`` exclusively
(``flock``: one reserver at a time), waits there until enough bytes are free (polling every
:data:`POLL_S`), locks them all at once, and lets go of the gate: nobody holds a part of the budget while
waiting for the rest, so two reservers never deadlock on halves, and a large reservation is not kept out for
ever by a stream of small ones (newcomers queue at the gate behind it).

The reservation's descriptor is close-on-exec; the reaper of each command run while it is held inherits it
(:func:`held_fds`, beside the phase lock's, passed by :func:`~.procs.run_process`), never the command, so the
budget is given back only when the reaper has reaped every process of the command, even when homefield dies
first. A reservation made while this process already holds one draws from it (:func:`reserve`): a grading's
twin runs are one reservation of both caps (:func:`reserve` around them), and each run's own
:func:`~.procs.run_process` draws its part.

Order against the phase lock: a phase first, then memory, never the reverse; a process holding memory never
waits for a phase or for more memory, only for its own commands (bounded by their timeouts). So every
process waiting for memory waits for holders that are only running commands, and a phase waiter waits for
phase holders that are either running or waiting for memory: no cycle.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pytest_homefield.sandbox.phases import _NOTICE, PhaseLock, phase_folder, session_key
from pytest_homefield.sandbox.proccap import memory_root
from pytest_homefield.spelling import spell

__all__ = ["MIB", "BudgetWaitExpired", "MemoryBudget", "Reservation", "BudgetTooSmall", "budget_mb", "configure",
           "default_budget_mb", "held_fds", "machine_mb", "reserve", "waited_s", "margin_mb", "POLL_S", "largest_mb"]

MIB = 1 << 20
#: Seconds between two looks at the budget (or the gate) while waiting for memory.
POLL_S = 0.05
#: Seconds waited for the gate before that is said (a reserver holds it for some 40 µs).
SAY_AFTER_S = 1.0
#: Seconds waited for memory held by sandboxes before that is said: a sandbox set ends every few seconds on a busy
#: machine, and a wait said at once was two lines however short (nu36 on itsdangerous, h11, more-itertools and
#: simonw/llm: 20 waits said in 4 sessions, 16 of them of 0-4 s, the longest 11 s).
SAY_MEMORY_AFTER_S = 5.0
#: The budget file and the gate, in the phase lock's folder.
BUDGET_FILE = "memory"
GATE_FILE = "memory-gate"
#: ``struct flock`` of Linux on 64-bit machines: l_type, l_whence, l_start, l_len, l_pid (and padding).
_FLOCK = struct.Struct("@hhqqi4x")

#: MiB of the budget set for this process (``--max-total-memory-mb``); ``None``: :func:`default_budget_mb`.
_BUDGET: list[int | None] = [None]
#: MiB the default budget is at least (:func:`configure`'s ``largest_mb``).
_FLOOR: list[int] = [0]
#: Seconds this process waited for memory in all (an attempt's ``wait_s`` takes its share).
_WAITED: list[float] = [0.0]
_LOCK = threading.Lock()
#: ``inside``: how deep this thread is in :func:`reserve` (a nested one reserves nothing more); ``fd``: the
#: descriptor of the reservation it holds or draws from.
_THREAD = threading.local()


class BudgetTooSmall(ValueError):
    """A reservation larger than the whole budget: it could never be had, so it is refused, never waited for."""


def _meminfo_mb(key: str = "MemTotal") -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def machine_mb() -> int | None:
    """MiB of memory the sandboxes' cgroups draw from: the machine's ``MemTotal``, or the limit of the cgroup
    they are made under (:func:`~.proccap.memory_root`) when that is smaller; ``None`` when unknown."""
    total = _meminfo_mb()
    root = memory_root()
    for name in ("memory.limit_in_bytes", "memory.max"):
        if root is None:
            break
        try:
            text = (root / name).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            limit = int(text) // MIB
            total = limit if total is None else min(total, limit)
    return total


def margin_mb(total_mb: int) -> int:
    """MiB of ``total_mb`` left out of the default budget for homefield and the system: an eighth, at least
    2 GiB (each homefield process ~100-200 MiB resident, the kernel's own memory and the page cache the test
    runs read their files through)."""
    return max(2048, total_mb // 8)


def default_budget_mb(total_mb: int | None = None) -> int | None:
    """``total_mb`` (default :func:`machine_mb`) less :func:`margin_mb`; ``None`` when the machine's memory is
    unknown (then no budget holds)."""
    total = machine_mb() if total_mb is None else total_mb
    return None if total is None else max(total - margin_mb(total), 1)


def configure(total_mb: float | None, largest_mb: float = 0) -> None:
    """Set this process's budget (``--max-total-memory-mb``; ``None``: :func:`default_budget_mb`, raised to
    ``largest_mb``, the largest single reservation, on a machine smaller than that: one at a time). Raises
    :class:`BudgetTooSmall` (one line) when a ``total_mb`` given is smaller than ``largest_mb``: that
    reservation could never be had."""
    largest = int(-(-largest_mb // 1))
    if total_mb is not None and int(total_mb) < largest:
        raise BudgetTooSmall(f"{spell('max-total-memory-mb')} {total_mb:g} is smaller than the largest set of "
                             f"sandboxes that run at once, {largest} MiB (a grading's twin test runs and their "
                             "services: its task's memory cap each, or max_test_memory_mb; a test run of "
                             "max_test_memory_mb; or an agent's sandbox and its services): raise it, or lower the caps")
    _BUDGET[0] = max(int(total_mb), 1) if total_mb is not None else None
    _FLOOR[0] = largest


def budget_mb() -> int | None:
    """The budget of this process's reservations (MiB): the configured one, else :func:`default_budget_mb`
    (at least the largest single reservation :func:`configure` was told of)."""
    if _BUDGET[0] is not None:
        return _BUDGET[0]
    found = default_budget_mb()
    return None if found is None else max(found, _FLOOR[0])


def largest_mb(test_mb: float, agent_mb: float, services: int, runs: int, task_mb: float | None = None) -> float:
    """The largest single reservation: ``runs`` twin test runs of ``task_mb`` each (the largest task's memory
    cap, :func:`~.limits.task_memory_mb`; default ``test_mb``) with ``services`` instances of ``test_mb`` each,
    one test run of ``test_mb`` (``max_test_memory_mb``: mining's, a grading's control run) with as many, or an
    agent's sandbox of ``agent_mb`` with as many of its own."""
    task = test_mb if task_mb is None else task_mb
    return max(runs * (task + services * test_mb), test_mb * (1 + services), agent_mb + services * test_mb)


def held_fds() -> tuple[int, ...]:
    """The descriptor of the reservation this thread holds or draws from now (none: ``()``): a command's reaper
    inherits it (never the command), so the memory is given back only when the reaper has reaped every process
    of the command."""
    fd = getattr(_THREAD, "fd", None)
    return (fd,) if fd is not None else ()


def waited_s() -> float:
    """Seconds this process has waited for memory in all (an attempt counts the difference in its ``wait_s``)."""
    return _WAITED[0]


def _lock(fd: int, cmd: int, kind: int, start: int, length: int) -> tuple[int, int, int]:
    """``fcntl(fd, cmd, struct flock)`` of ``kind`` over ``[start, start + length)``; returns the struct's
    ``(l_type, l_start, l_len)`` as the kernel left it."""
    out = fcntl.fcntl(fd, cmd, _FLOCK.pack(kind, os.SEEK_SET, start, length, 0))
    kind_, _, start_, len_, _ = _FLOCK.unpack(out)
    return kind_, start_, len_


def free_ranges(fd: int, lo: int, hi: int) -> list[tuple[int, int]]:
    """The ranges ``(start, end)`` of ``[lo, hi)`` no other open file description locks (``F_OFD_GETLK`` on
    ``fd``: its own locks are not in the way)."""
    if lo >= hi:
        return []
    kind, start, length = _lock(fd, fcntl.F_OFD_GETLK, fcntl.F_WRLCK, lo, hi - lo)
    if kind == fcntl.F_UNLCK:
        return [(lo, hi)]
    end = hi if length == 0 else min(start + length, hi)
    return free_ranges(fd, lo, max(start, lo)) + free_ranges(fd, max(end, lo), hi)


@dataclass(frozen=True)
class Reservation:
    """A reservation held: ``mb`` MiB, after waiting ``wait_s`` seconds for it (0 when drawn from one held)."""

    mb: int
    wait_s: float


@dataclass(eq=False)
class _Shared:
    """A reservation of ``mb`` MiB held by descriptor ``fd``, of which ``drawn`` MiB are drawn."""

    mb: int
    fd: int
    drawn: int = 0


#: The shared reservation this process holds (:func:`reserve`), drawn from by its other threads.
_SHARED: list[_Shared] = []


class BudgetWaitExpired(TimeoutError):
    """A wait for memory reached its ``until`` (a mine's ``--time-budget`` deadline) before the memory was free:
    nothing is held."""


class MemoryBudget:
    """The machine's budget of ``total_mb`` MiB (default :func:`budget_mb`) kept in ``folder`` (default the
    phase lock's, :func:`~.phases.phase_folder`)."""

    def __init__(self, folder: Path | None = None, total_mb: int | None = None) -> None:
        self.folder = folder if folder is not None else phase_folder()
        total = total_mb if total_mb is not None else budget_mb()
        self.total_mb = int(total) if total is not None else None

    def _open(self, name: str) -> int:
        return os.open(self.folder / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)

    def held_mb(self) -> int:
        """MiB of the budget held now by every reservation on the machine (none of this process's
        descriptions count: a fresh one looks)."""
        if self.total_mb is None:
            return 0
        fd = self._open(BUDGET_FILE)
        try:
            return self.total_mb - sum(b - a for a, b in free_ranges(fd, 0, self.total_mb))
        finally:
            os.close(fd)

    def take(self, mb: int, *, say: Callable[[str], bool] | None = None,
             until: float | None = None) -> tuple[int, float]:
        """Wait until ``mb`` MiB of the budget are free, lock them; returns ``(descriptor holding them, seconds
        waited)``. ``until``: a wall-clock time (``time.time()``, s) past which it waits no more and raises
        :class:`BudgetWaitExpired` (nothing held): a mine's deadline, which the other sessions' sandboxes holding
        the memory would otherwise push back by their whole runs (nu48). ``say`` is called with a line when it
        has waited for memory over :data:`SAY_MEMORY_AFTER_S`, or for the gate over :data:`SAY_AFTER_S` (once; it
        returns whether the line was shown), and once more when it got the memory after a line shown. Raises
        :class:`BudgetTooSmall` when ``mb`` is more than the whole budget, :class:`OSError` when the files cannot
        be used; an interrupt while waiting leaves nothing held."""
        assert self.total_mb is not None
        if mb > self.total_mb:
            raise BudgetTooSmall(f"a sandbox set needs {mb} MiB of memory, more than the machine's budget of "
                                 f"{self.total_mb} MiB ({spell('max-total-memory-mb')})")
        t0 = time.monotonic()
        gate = self._open(GATE_FILE)
        fd = -1
        said = asked = False
        try:
            while True:  # every reserver holds the gate for some 40 µs: only a wait of a second is said
                try:
                    fcntl.flock(gate, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    pass
                _check_until(until, mb)
                if not asked and time.monotonic() - t0 >= SAY_AFTER_S:
                    asked = True
                    if say is not None:
                        said = say(f"homefield: waiting for the machine's memory budget: {mb} MiB asked, another "
                                   f"reservation waits before it (budget {self.total_mb} MiB, "
                                   f"{spell('max-total-memory-mb')})")
                time.sleep(POLL_S)
            fd = self._open(BUDGET_FILE)
            while True:
                free = free_ranges(fd, 0, self.total_mb)
                if sum(b - a for a, b in free) >= mb:
                    break
                _check_until(until, mb)
                if say is not None and not asked and time.monotonic() - t0 >= SAY_MEMORY_AFTER_S:
                    asked = True
                    held = self.total_mb - sum(b - a for a, b in free)
                    said = said or say(f"homefield: waiting for the machine's memory budget: {mb} MiB asked, "
                                       f"{held} of {self.total_mb} MiB held by sandboxes running now "
                                       f"({spell('max-total-memory-mb')})")
                time.sleep(POLL_S)
            need = mb
            for a, b in free:  # the gate is held: nobody else locks bytes now, holders only give back
                n = min(b - a, need)
                _lock(fd, fcntl.F_OFD_SETLK, fcntl.F_WRLCK, a, n)
                need -= n
                if not need:
                    break
        except BaseException:
            if fd >= 0:
                os.close(fd)
            os.close(gate)
            raise
        os.close(gate)
        waited = time.monotonic() - t0
        if said and say is not None:
            say(f"homefield: got {mb} MiB of the machine's memory budget after {waited:.0f} s")
        return fd, waited


def _check_until(until: float | None, mb: int) -> None:
    """Raise :class:`BudgetWaitExpired` once the wall clock is past ``until`` (``None``: never)."""
    if until is not None and time.time() >= until:
        raise BudgetWaitExpired(f"{mb} MiB of the machine's memory budget were not free before the deadline")


def _say(line: str) -> bool:
    """Say ``line`` through the session's notice of the phase lock (:func:`~.phases.set_notice`: a line on the
    terminal) unless a process of this session said that it waits for memory less than a minute ago
    (:meth:`~.phases.PhaseLock._first_to_say`); whether it was said."""
    if not _NOTICE:
        return False
    try:
        # a key of its own: the phase lock's lines of the same session would take turns with it in the file
        first = PhaseLock()._first_to_say(session_key() + " (memory)", ["memory budget"])
    except OSError:
        first = True
    if first or line.startswith("homefield: got"):
        _NOTICE[0](line)
    return first


@contextlib.contextmanager
def reserve(mb: float, *, shared: bool = False, until: float | None = None) -> Iterator[Reservation]:
    """Hold ``mb`` MiB of the machine's budget (:class:`MemoryBudget`) for the ``with`` block: the reapers of
    the commands this thread runs meanwhile inherit it (:func:`held_fds`). Inside a reservation of the same
    thread (a test run's, around its sandbox's command) it reserves nothing more: the outer one counted it.
    ``shared``: the other threads of this process draw their reservations from it while it is held (a
    grading's twin runs: one reservation of every run's memory, each run's thread its part; never a second
    reservation, so a holder never waits for memory); a draw past it raises :class:`RuntimeError` (homefield
    sized it wrong). Nothing is held when ``mb`` is 0 or there is no budget. ``until``: a wall-clock time past
    which it waits no more (:meth:`MemoryBudget.take`). Raises :class:`BudgetTooSmall`, :class:`BudgetWaitExpired`
    and :class:`OSError` as :meth:`MemoryBudget.take` does."""
    need = int(-(-mb // 1))  # whole MiB, rounded up
    if getattr(_THREAD, "inside", 0):  # this thread holds or drew its part already: a command of that part
        _THREAD.inside += 1
        try:
            yield Reservation(0, 0.0)
        finally:
            _THREAD.inside -= 1
        return
    _THREAD.inside = 1
    try:
        with _reserve(need, shared, until) as got:
            yield got
    finally:
        _THREAD.inside = 0
        _THREAD.fd = None


@contextlib.contextmanager
def _reserve(need: int, shared: bool, until: float | None = None) -> Iterator[Reservation]:
    """:func:`reserve` of ``need`` MiB for a thread that holds none."""
    with _LOCK:
        outer = _SHARED[0] if _SHARED else None
        if outer is not None and need > 0:
            if outer.drawn + need > outer.mb:
                raise RuntimeError(f"homefield reserved {outer.mb} MiB of memory and drew {outer.drawn} MiB; "
                                   f"{need} MiB more do not fit")
            outer.drawn += need
    if outer is not None or need <= 0:
        _THREAD.fd = outer.fd if outer is not None else None
        try:
            yield Reservation(need if outer is not None else 0, 0.0)
        finally:
            if outer is not None and need > 0:
                with _LOCK:
                    outer.drawn -= need
        return
    budget = MemoryBudget()
    if budget.total_mb is None:
        yield Reservation(0, 0.0)
        return
    fd, waited = budget.take(need, say=_say, until=until)
    _THREAD.fd = fd
    mine = _Shared(need, fd)
    with _LOCK:
        if shared:
            _SHARED.append(mine)
        _WAITED[0] += waited
    try:
        yield Reservation(need, waited)
    finally:
        with _LOCK:
            if mine in _SHARED:
                _SHARED.remove(mine)
        os.close(fd)
