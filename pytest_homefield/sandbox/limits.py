"""Caps on what an agent leaves behind (docs/contracts.md §9): its folders are checked before grading.

An agent writes into three host folders of its own: its workspace, its ``TMPDIR`` and its ``HOME``
(:class:`AgentFolders`). :func:`check_folders` walks them with ``os.lstat`` only (never following a
symlink, never opening a file: a sparse 1 GiB file counts by its apparent size ``st_size`` and is
never read) and returns the first :class:`Fault`:

* a special file: a named pipe, a socket, a character or block device (grading would block on a
  pipe, or read a device);
* a file over :attr:`WriteLimits.file_bytes` (``--max-file-mb``, default 50 MiB), unless it was
  there, as it is, when the agent started (a large file of the repository itself);
* folders holding more than :attr:`WriteLimits.total_bytes` (``--max-workspace-mb``, default
  500 MiB; every entry, a folder or a symlink too, counted at least :data:`ENTRY_BYTES`)
  *beyond what they held when the agent started* (the :class:`Baseline` taken before the
  agent runs): the allowance is on top of the snapshot, so a repository of any size gets the same
  room.

Any of them makes the attempt ``agent_error`` (scored) with the fault as its reason, never ``infra``.

:class:`DiskWatch` stops an agent that writes past the total cap while it runs: every call it reads
the file systems' usage with ``statvfs`` (constant time) and walks the folders only when a file
system has grown by more than the room left, so a quiet attempt costs one ``statvfs`` per folder
per poll. When a file system of its folders gets nearly full (under :data:`FREE_FLOOR_BYTES` free)
and the folders grew by at least half of what it lost (:func:`filled_by`), the agent filled the disk:
it is stopped, ``agent_error``; a disk another writer filled stays the host's (``infra``).
It is a bound up to one poll interval of writing, not a quota; bubblewrap's sized
tmpfs for ``/tmp`` and ``/dev/shm`` (:func:`pytest_homefield.sandbox.bwrap.bwrap_argv`) and
``RLIMIT_FSIZE`` per file (:func:`pytest_homefield.sandbox.procs.run_process`) are the hard bounds.

A test run (mining, grading, verify: code the agent wrote runs there) gets the same three bounds from
one number, ``max_test_write_mb`` (:func:`limits_for_tests`, :mod:`pytest_homefield.sandbox.testrun`):
the size of its sandbox's ``/tmp`` and ``/dev/shm``, its ``RLIMIT_FSIZE``, and the total a
:class:`DiskWatch` of its folders (its copy, its private folder holding ``HOME`` and ``TMPDIR``) lets it
add. :func:`write_cap_note` says why a run whose write the kernel refused failed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.sandbox.nofollow import MAX_DEPTH, restore_access
from pytest_homefield.spelling import spell

__all__ = ["MIB", "WriteLimits", "AgentFolders", "Fault", "Baseline", "check_folders", "folder_bytes", "DiskWatch",
           "TEST_MEMORY_MB", "memory_cap_note", "ENTRY_BYTES", "entry_bytes", "FREE_FLOOR_BYTES", "free_bytes",
           "filled_by", "HANG_FACTOR", "HANG_FLOOR_S", "hang_bound_s", "TEST_WRITE_MB", "limits_for_tests",
           "write_cap_note", "watch_test_folders"]

MIB = 1 << 20

#: A run that hangs where a measured one did not is stopped at this many times the measured run's
#: seconds (mining's parent runs after commit run 1, grading's runs of a task whose parent hangs).
HANG_FACTOR = 5.0
#: … and never before this many seconds (s): a fast commit run says little about a slow machine.
HANG_FLOOR_S = 30.0


def hang_bound_s(measured_s: float, timeout_s: float, *, floor_s: float = HANG_FLOOR_S) -> float:
    """``min(timeout_s, max(floor_s, HANG_FACTOR × measured_s))`` (all s): how long a run may take when a
    run of the same tests took ``measured_s`` (mining's parent runs, grading a hanging parent's task)."""
    return min(timeout_s, max(floor_s, HANG_FACTOR * measured_s))


#: MiB of address space per test process (``max_test_memory_mb``; ``RLIMIT_AS`` through the reaper).
TEST_MEMORY_MB = 4096.0

#: A graded change's test run may hold this many times the task's reference peak (``verify.peak_mb``) ...
TASK_MEMORY_FACTOR = 2.0
#: ... and at least this many MiB (a task whose tests hold little still gets room for an honest change).
TASK_MEMORY_FLOOR_MB = 512.0
#: The memory option a run capped by :func:`task_memory_mb` names when the kernel killed a process of it.
TASK_MEMORY_OPTION = "the task's cap: 2x the reference fix's peak, at least 512 MiB, max_test_memory_mb at most"


def task_memory_mb(peak_mb: float | None, ceiling_mb: float | None) -> float | None:
    """MiB of memory (the memory cgroup's cap, and the reservation of the machine's memory budget) a grading's
    test run of a task gets: ``max(TASK_MEMORY_FLOOR_MB, TASK_MEMORY_FACTOR × peak_mb)``, never above
    ``ceiling_mb`` (``max_test_memory_mb``); ``ceiling_mb`` when the task has no measured peak (``peak_mb``
    ``None``: mined before peaks were kept, or where its runs had no memory cgroup) or there is no ceiling."""
    if not isinstance(peak_mb, (int, float)) or isinstance(peak_mb, bool) or peak_mb <= 0 or not ceiling_mb:
        return ceiling_mb  # none measured (or a record not written by homefield): the user's ceiling
    return min(float(ceiling_mb), max(TASK_MEMORY_FLOOR_MB, TASK_MEMORY_FACTOR * float(peak_mb)))


#: What a process that hit its address-space cap leaves in its output (Python, libc, C++, numpy/BLAS).
_OUT_OF_MEMORY = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")


def memory_cap_note(log_tail: bytes, memory_mb: float | None) -> str | None:
    """``'a test process went over the memory cap of 4096 MiB (max_test_memory_mb)'`` when a test run
    capped at ``memory_mb`` MiB left an allocation failure in the end of its log (``log_tail``), else
    ``None``. The run's tests failed (or its process died) for it: a failed run, with this reason."""
    if not memory_mb or not any(marker in log_tail for marker in _OUT_OF_MEMORY):
        return None
    return f"a test process went over the memory cap of {memory_mb:g} MiB (max_test_memory_mb)"

#: MiB a test process may write (``max_test_write_mb``): per file, in its sandbox's ``/tmp`` and
#: ``/dev/shm`` each, and added to its folders in all.
TEST_WRITE_MB = 1024.0

#: What a write the kernel refused leaves in a log (``strerror`` of ``EFBIG``, then of ``ENOSPC``), and
#: what the note on it says.
_WRITE_REFUSED = ((b"File too large", "a test process wrote a file up to the cap of {mb:g} MiB per file"),
                  (b"No space left on device", "a test process ran out of room (its sandbox's /tmp and /dev/shm "
                                               "hold {mb:g} MiB each; or its disk is full)"))


def write_cap_note(log_tail: bytes, write_mb: float | None) -> str | None:
    """``'a test process wrote a file up to the cap of 1024 MiB per file (max_test_write_mb)'`` when a
    test run capped at ``write_mb`` MiB left ``EFBIG`` in the end of its log (``log_tail``), a note on
    running out of room for ``ENOSPC``, else ``None``: its tests failed (or its process died) for it."""
    if not write_mb:
        return None
    for marker, note in _WRITE_REFUSED:
        if marker in log_tail:
            return f"{note.format(mb=write_mb)} (max_test_write_mb)"
    return None


#: ``st_mode`` kinds that are never part of a change, by the word a fault names them with.
SPECIAL_KINDS = ((stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                 (stat.S_ISBLK, "block device"))


@dataclass(frozen=True)
class WriteLimits:
    """What one agent attempt may write, in bytes: ``output_bytes`` per stream of ``agent.out`` /
    ``agent.err`` (``--max-output-mb``, default 5 MiB), ``file_bytes`` per file (``--max-file-mb``,
    default 50 MiB), ``total_bytes`` added to its folders in all (``--max-workspace-mb``, default
    500 MiB). ``poll_s``: seconds between :class:`DiskWatch` checks while the agent runs. ``total_name``:
    the setting a :class:`DiskWatch` stop names."""

    output_bytes: int = 5 * MIB
    file_bytes: int = 50 * MIB
    total_bytes: int = 500 * MIB
    poll_s: float = 0.5
    total_name: str = spell("max-workspace-mb", "cli")  # a fault's reason: a record's text

    @classmethod
    def from_mb(cls, output_mb: float = 5, file_mb: float = 50, workspace_mb: float = 500) -> WriteLimits:
        """Limits from the settings' MiB values (``--max-output-mb`` …)."""
        return cls(output_bytes=int(output_mb * MIB), file_bytes=int(file_mb * MIB),
                   total_bytes=int(workspace_mb * MIB))


def limits_for_tests(write_mb: float) -> WriteLimits:
    """The limits of a test run from ``max_test_write_mb`` (MiB): ``file_bytes`` (its ``RLIMIT_FSIZE``) and
    ``total_bytes`` (what its :class:`DiskWatch` lets it add) both that many bytes."""
    cap = int(write_mb * MIB)
    return WriteLimits(file_bytes=cap, total_bytes=cap, total_name="max_test_write_mb")


@dataclass(frozen=True)
class Fault:
    """Why an agent's folders cannot be graded: ``reason`` is one line naming the entry (its path
    relative to its folder, prefixed by the folder's label when it is not the workspace)."""

    reason: str


@dataclass(frozen=True)
class AgentFolders:
    """The host folders an agent may write: ``workspace``, and its ``tmpdir`` and ``home`` (missing
    ones are skipped), and the working folders of the service instances it commands (``services``: what
    it makes them write is its writing, atk20 F4; counted for their bytes and files, never for their
    sockets). ``labels`` names each in a fault; ``owner`` names the writer in a :class:`DiskWatch` stop (a
    test run's folders: ``"the test process"``)."""

    workspace: Path
    tmpdir: Path | None = None
    home: Path | None = None
    labels: dict[str, str] = field(default_factory=lambda: {"workspace": "", "tmpdir": "TMPDIR", "home": "HOME"})
    owner: str = "the agent"
    services: tuple[Path, ...] = ()

    def roots(self) -> list[tuple[str, Path]]:
        """``(label, folder)`` of each folder, the workspace first, the services' last (``service<i>``)."""
        out = [(self.labels["workspace"], self.workspace)]
        out += [(self.labels[k], p) for k, p in (("tmpdir", self.tmpdir), ("home", self.home)) if p is not None]
        out += [(f"service{i}", p) for i, p in enumerate(self.services, 1)]
        return out


class Unwalkable(Exception):
    """A folder the walk cannot name (:func:`_entries`): ``rel`` its path below the root, ``why`` in words,
    ``shown`` the path as a message quotes it (its first 60 characters, then ``…`` when longer)."""

    def __init__(self, rel: str, why: str) -> None:
        self.rel, self.why = rel, why
        self.shown = f"{rel[:60]}…" if len(rel) > 60 else rel
        super().__init__(f"{why}: {self.shown}")


def _entries(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """``(relative path, lstat)`` of every entry under ``root``, depth first, never following a
    symlink; unreadable folders are skipped: :meth:`DiskWatch._over_total` and, once the agent stopped,
    :func:`~pytest_homefield.run.attempt.run_attempt` give a folder it made unreadable back first
    (:func:`~.nofollow.restore_access`, atk19). A folder whose path is longer than the system can name
    (``ENAMETOOLONG``), or nested deeper than :data:`~.nofollow.MAX_DEPTH` (where ``restore_access`` stops), raises
    :class:`Unwalkable`: skipped, what the agent wrote below it counted for nothing (atk25: 95 MiB under 20
    folders of 250-character names, past a 4 MiB cap, filling the disk, whose filling then looked like
    another writer's)."""
    stack = [""]
    while stack:
        rel = stack.pop()
        if rel.count("/") >= MAX_DEPTH:
            raise Unwalkable(rel, f"folders nested deeper than {MAX_DEPTH}")
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                for entry in it:
                    sub = f"{rel}/{entry.name}" if rel else entry.name
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError as exc:
                        if exc.errno == errno.ENAMETOOLONG:
                            raise Unwalkable(sub, "a path longer than the system can name") from exc
                        continue
                    yield sub, st
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(sub)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise Unwalkable(rel, "a path longer than the system can name") from exc
            continue


def _name(label: str, rel: str) -> str:
    return f"{label}/{rel}" if label else rel


#: What any entry (a file, a folder, a symlink) is counted for at least, in bytes: a block and an
#: inode. An empty folder has no ``st_size`` worth counting, yet 70,000 of them filled a 400 MB file
#: system and made the attempt ``infra`` (attacker8's F2).
ENTRY_BYTES = 4096


def entry_bytes(st: os.stat_result) -> int:
    """What one entry is counted for (bytes): a regular file its apparent size (a sparse 1 GiB file
    counts 1 GiB), any entry at least what it takes on disk (``st_blocks`` × 512) and at least
    :data:`ENTRY_BYTES`."""
    size = st.st_size if stat.S_ISREG(st.st_mode) else 0
    return max(size, st.st_blocks * 512, ENTRY_BYTES)


def folder_bytes(folders: AgentFolders) -> int:
    """Bytes counted (:func:`entry_bytes`) for every entry under every folder of ``folders``."""
    return sum(entry_bytes(st) for _, root in folders.roots() if root.is_dir() for _, st in _entries(root))


@dataclass(frozen=True)
class Baseline:
    """What the agent's folders held before it ran: ``bytes`` (:func:`folder_bytes`) and ``big``, the
    files already over the per-file cap, ``{name: (st_size, st_mtime_ns, st_ino)}``."""

    bytes: int = 0
    big: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @classmethod
    def measure(cls, folders: AgentFolders, limits: WriteLimits) -> Baseline:
        """One ``lstat`` walk of ``folders``."""
        total, big = 0, {}
        for label, root in folders.roots():
            if not root.is_dir():
                continue
            for rel, st in _entries(root):
                total += entry_bytes(st)
                if stat.S_ISREG(st.st_mode) and st.st_size > limits.file_bytes:
                    big[_name(label, rel)] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return cls(total, big)


def check_folders(folders: AgentFolders, limits: WriteLimits, baseline: Baseline | None = None) -> Fault | None:
    """The first fault in ``folders`` (see the module docstring), or ``None``. ``baseline``: what
    they held before the agent ran (default: nothing). Reads only directory entries and ``lstat``."""
    try:
        return _check_folders(folders, limits, baseline or Baseline())
    except Unwalkable as exc:
        return Fault(f"the agent left {exc.why} in its folders, which the host cannot walk ({exc.shown}): "
                     "never graded")


def _check_folders(folders: AgentFolders, limits: WriteLimits, base: Baseline) -> Fault | None:
    total = 0
    cap = base.bytes + limits.total_bytes
    for label, root in folders.roots():
        if not root.is_dir():
            continue
        # a service's folder counts for its bytes only: its sockets are its own (the relay's, a PostgreSQL's), never
        # graded nor copied, removed with it (hatk35: the relay's socket made every attempt with services agent_error)
        special = root not in folders.services
        for rel, st in _entries(root):
            for test, kind in SPECIAL_KINDS if special else ():
                if test(st.st_mode):
                    return Fault(f"the agent left a {kind} at {_name(label, rel)}: special files are never graded")
            name = _name(label, rel)
            if stat.S_ISREG(st.st_mode) and st.st_size > limits.file_bytes \
                    and base.big.get(name) != (st.st_size, st.st_mtime_ns, st.st_ino):
                return Fault(f"{name} holds {st.st_size} bytes, over the {limits.file_bytes / MIB:g} MiB per file "
                             f"({spell('max-file-mb', 'cli')})")
            total += entry_bytes(st)
            if total > cap:
                return Fault(f"the agent's folders hold over {limits.total_bytes / MIB:g} MiB more than the snapshot "
                             f"({spell('max-workspace-mb', 'cli')})")
    return None


def _usage(path: Path) -> tuple[int, int, int]:
    """``(device, used bytes, free bytes for an unprivileged writer)`` of the file system holding
    ``path``, from one ``statvfs``. Used bytes count each inode in use as :data:`ENTRY_BYTES` too, as the walk
    counts each entry (:func:`entry_bytes`): an empty file takes an inode and next to no bytes, so an agent
    making empty files grew no byte the poll saw and was never walked while it ran (atk25: 20,000 of them, 80
    MiB as the walk counts them, ran on past a 4 MiB cap; one process made 100,000 in 15 s on this loaded
    machine, 2 MiB of used bytes, about 6 M of the disk's 16 M free inodes in the default 900 s, the rest of
    the machine's writers failing once they are gone). A file system that says nothing of its inodes
    (``f_files`` 0) adds nothing."""
    st = os.statvfs(path)
    inodes = max(st.f_files - st.f_ffree, 0)
    return (os.stat(path).st_dev, (st.f_blocks - st.f_bfree) * st.f_frsize + inodes * ENTRY_BYTES,
            st.f_bavail * st.f_frsize)


#: Below this many free bytes a file system the agent writes is nearly full (s.a. :func:`filled_by`).
FREE_FLOOR_BYTES = 64 * MIB


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the file system of ``path`` (``None`` when it
    cannot be read)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def filled_by(folders: AgentFolders, baseline: Baseline, free_before: int | None, free_now: int | None) -> str | None:
    """Why the agent is to blame for its file system running out of room, else ``None``: the free bytes
    went from ``free_before`` to ``free_now`` (both of the file system of its folders, bytes), now under
    :data:`FREE_FLOOR_BYTES`, and its folders grew (:func:`folder_bytes` over ``baseline``) by at
    least half of what was lost. Another writer filling the disk is not the agent's doing (``None``:
    the caller's ``infra``)."""
    if free_before is None or free_now is None or free_now >= FREE_FLOOR_BYTES or free_before <= free_now:
        return None
    try:
        added = folder_bytes(folders) - baseline.bytes
    except Unwalkable as exc:  # what it wrote there is hidden from the count: its doing
        return (f"{folders.owner} left {exc.why} in its folders, which the host cannot walk, and left "
                f"{free_now / MIB:.1f} MiB free on their file system: it filled the disk")
    if 2 * added < free_before - free_now:
        return None
    return (f"{folders.owner}'s folders grew by {added / MIB:.0f} MiB and left {free_now / MIB:.1f} MiB free on "
            f"their file system (of {free_before / MIB:.0f} MiB when it started): it filled the disk")


@dataclass
class DiskWatch:
    """Called every :attr:`WriteLimits.poll_s` while the agent runs (``run_process(watch=…)``): the
    reason to stop it when its folders went over the total cap, else ``None``; ``stopped`` keeps
    that reason. See the module docstring for the cost."""

    folders: AgentFolders
    limits: WriteLimits
    baseline: Baseline
    stopped: str | None = None
    _start: dict[int, int] = field(default_factory=dict)
    _free: dict[int, int] = field(default_factory=dict)
    _room: int = 0

    def __post_init__(self) -> None:
        self._room = self.limits.total_bytes
        for _, root in self.folders.roots():
            if root.is_dir():
                dev, used, free = _usage(root)
                self._start.setdefault(dev, used)
                self._free.setdefault(dev, free)

    def __call__(self) -> str | None:
        grown = 0
        for dev, start in self._start.items():
            roots = [r for _, r in self.folders.roots() if r.is_dir() and os.stat(r).st_dev == dev]
            if roots:
                _, used, free = _usage(roots[0])
                grown += max(used - start, 0)
                if free < FREE_FLOOR_BYTES:  # nearly full: stop it if it is the agent's doing
                    why = filled_by(self.folders, self.baseline, self._free.get(dev), free)
                    if why is not None:
                        self.stopped = f"{why}; stopped"
                        return self.stopped
        if grown <= self._room:
            return None
        added = self._over_total()
        if self.stopped is not None:
            return self.stopped
        # other writers share the file system: walk again only once it grows by the room still left
        self._room = grown + (self.limits.total_bytes - max(added, 0))
        return None

    def settle(self) -> str | None:
        """Once the writer has ended: a poll, then one walk of the folders whatever their file systems
        say (another writer freeing room there hides growth from the poll). The reason it went over,
        else ``None``."""
        if self() is None:
            self._over_total()
        return self.stopped

    def _over_total(self) -> int:
        """Bytes added to the folders (one walk); over the total, :attr:`stopped` says so. A folder the writer
        made unreadable is given back first (:func:`~.nofollow.restore_access`, folders only): what it wrote
        into a write-only folder was never counted, past the cap until the disk filled (atk19, as any user
        but root). This runs only when the file systems grew past the room left, seldom while an honest
        writer works."""
        for _, root in self.folders.roots():
            with contextlib.suppress(OSError):
                restore_access(root, files=False)
        try:
            added = folder_bytes(self.folders) - self.baseline.bytes
        except Unwalkable as exc:
            self.stopped = f"{self.folders.owner} made {exc.why} in its folders, which the host cannot walk; stopped"
            return self.limits.total_bytes + 1
        if added > self.limits.total_bytes:
            self.stopped = (f"{self.folders.owner} wrote over {self.limits.total_bytes / MIB:g} MiB into its "
                            f"folders ({self.limits.total_name}); stopped")
        return added


def watch_test_folders(private: Path, copy: Path | None, limits: WriteLimits | None,
                       services: Sequence[Path] = ()) -> DiskWatch | None:
    """The :class:`DiskWatch` of a test run's folders (:func:`limits_for_tests`), its baseline taken now:
    ``private``, its private out folder (its ``HOME``, ``TMPDIR``, pytest cache and log), ``copy``,
    the tree under test when the command may write it (``None`` under bubblewrap: bound read-only), and
    ``services``, the working folders of the run's service instances (a redis ``SAVE`` the tests ask for
    writes there, atk20 F4). ``None`` without ``limits``. Call it while the run goes
    (``run_process(watch=…)``) and :meth:`DiskWatch.settle` once it ended: a run shorter than a poll is
    held to the cap too."""
    if limits is None:
        return None
    folders = AgentFolders(private, tmpdir=copy, owner="the test process", services=tuple(services))
    return DiskWatch(folders, limits, Baseline.measure(folders, limits))
