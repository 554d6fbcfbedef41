"""The process cap of every sandbox (docs/contracts.md §9 "Process cap", ``--max-procs``, default 512).

Code under test or an agent that forks without end would exhaust the host's pids (and memory) and make
the concurrent attempts of other agents fail as ``infra``: a verdict bought by a side effect on the
host (issue 30). Each sandbox (an agent's, every test run's: mining, grading, verify) gets a cap on
its number of tasks (processes and threads) by construction, in one or both of two ways:

* **RLIMIT_NPROC inside bubblewrap's user namespace** (:func:`inside_argv`): since Linux 5.14 the
  kernel counts processes per (user namespace, uid), so a limit set *inside* the sandbox's new user
  namespace counts the sandbox's processes only (:func:`counts_per_namespace`; before 5.14 it counted
  every task of the uid on the host: the cap would refuse an honest sandbox's forks whenever the user
  ran 512 tasks elsewhere, so there it is not used). ``prlimit --nproc=N:N --`` (util-linux, bound
  read-only with ``/usr``) is the sandbox's first command and ``exec``\\ s the real one: no process
  more (not for root, whom it would not cap). The hard limit cannot be raised from inside (that takes
  ``CAP_SYS_RESOURCE`` in the host's user namespace). Set on bubblewrap itself it would be wrong: the new
  namespace's creator's limit also bounds every process of the user on the host. The kernel exempts the host's root from
  ``RLIMIT_NPROC`` (a sandbox of homefield run as root is uid 0 of the host), and a setuid
  bubblewrap makes no user namespace of its own: then this way caps nothing (:func:`by_rlimit`).
* **a pids cgroup** (:func:`pids_root`): where this process may make a cgroup with the ``pids``
  controller (root with cgroup v1's ``pids`` hierarchy, or a cgroup v2 subtree with ``pids`` in its
  ``cgroup.subtree_control``), the reaper (:mod:`._reaper`) makes ``homefield-<its pid>-<ns>`` there with
  ``pids.max`` = the cap, puts the command in it before it ``exec``\\ s, and removes it once every
  process of the command is reaped. :func:`sweep_cgroups` removes those of reapers that were killed.
  This is the only way for Landlock (no user namespace: ``RLIMIT_NPROC`` would count every process
  of the user on the host).

Going over the cap, ``fork``/``clone`` fails with ``EAGAIN`` inside the sandbox ("Resource temporarily
unavailable"): the test run's tests fail, or the agent fails, and the attempt is scored; concurrent
attempts never see it. :func:`cap_by` names the way a backend gets (``None``: no cap here), which the
run's header and ``meta.json`` ``sandbox.max_procs`` show.

An argv run by :func:`~pytest_homefield.sandbox.procs.run_process` whose first word is
:data:`PIDS_MARK` (:func:`marked`) gets the cgroup; :func:`split_mark` turns the mark into the reaper's
``pids=N:ROOT`` option.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path
from pytest_homefield.spelling import spell

__all__ = ["DEFAULT_MAX_PROCS", "PIDS_MARK", "configure", "max_procs", "pids_root", "prlimit_path", "by_rlimit",
           "inside_argv", "marked", "split_mark", "cap_by", "sweep_cgroups", "CGROUP_PREFIX", "over_cap_note",
           "no_cap_note", "memory_root", "agent_memory_bytes", "DEFAULT_AGENT_MEMORY_MB", "memory_capped",
           "no_memory_cap_note", "oom_note", "SIGPENDING", "counts_per_namespace", "cpu_root", "cpu_shared",
           "no_cpu_share_note", "cgroup_folders", "machine_load", "load_per_cpu", "slowdown", "eased"]

#: Processes and threads a sandbox may have at once (``--max-procs``).
DEFAULT_MAX_PROCS = 512
#: The first word of an argv whose sandbox gets a pids cgroup (``@homefield-pids:N``; see :func:`marked`).
PIDS_MARK = "@homefield-pids:"
#: The name of a sandbox's cgroup: this prefix, the pid of its reaper, ``-`` and the time (ns) it was made.
CGROUP_PREFIX = "homefield-"

#: MiB of memory (RAM and swap) an agent's sandbox may hold in all (``--max-agent-memory-mb``).
DEFAULT_AGENT_MEMORY_MB = 4096.0

_CAP: list[int] = [DEFAULT_MAX_PROCS]
_AGENT_MEMORY: list[float] = [DEFAULT_AGENT_MEMORY_MB]


def configure(n: int, agent_memory_mb: float | None = None) -> None:
    """Set this process's cap (``--max-procs``; every sandbox it wraps from now on gets it) and, when given,
    the memory cap of its agents' sandboxes (``--max-agent-memory-mb``, MiB)."""
    _CAP[0] = int(n)
    if agent_memory_mb is not None:
        _AGENT_MEMORY[0] = float(agent_memory_mb)


def agent_memory_bytes() -> int:
    """Bytes of memory an agent's sandbox may hold in all (``--max-agent-memory-mb``, default 4096 MiB)."""
    return int(_AGENT_MEMORY[0] * (1 << 20))


def max_procs() -> int:
    """The cap of this process's sandboxes (default :data:`DEFAULT_MAX_PROCS`)."""
    return _CAP[0]


def _own_cgroups(proc: Path = Path("/proc")) -> dict[str, str]:
    """``{controller or "": path}`` of this process (``<proc>/self/cgroup``; ``""`` is cgroup v2)."""
    out: dict[str, str] = {}
    try:
        text = (proc / "self" / "cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _mounts(proc: Path = Path("/proc")) -> list[tuple[str, str, str, str]]:
    """``(root, mount point, fs type, super options)`` of every mount (``<proc>/self/mountinfo``)."""
    out: list[tuple[str, str, str, str]] = []
    try:
        text = (proc / "self" / "mountinfo").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if sep and len(fields) >= 5 and len(rest) >= 3:
            out.append((fields[3], fields[4], rest[0], rest[2]))
    return out


def cgroup_folders(controller: str, proc: Path = Path("/proc")) -> list[tuple[Path, Path]]:
    """``(mount point, folder)`` of this process's cgroup in each mounted hierarchy that has ``controller``
    (``pids``, ``memory``, ``cpu``): a cgroup v1 hierarchy of that controller, then the cgroup v2 hierarchy, in
    ``<proc>/self/mountinfo``'s order. Read from ``<proc>/self/cgroup`` and ``<proc>/self/mountinfo``, so right
    in a cgroup namespace (where the path is relative to the namespace's root) and wherever the hierarchy is
    mounted; a mount whose root this process's cgroup is not under is skipped. ``[]`` where neither file reads."""
    own = _own_cgroups(proc)
    found: list[tuple[Path, Path]] = []
    for root, point, fstype, options in _mounts(proc):
        if fstype == "cgroup" and controller in options.split(",") and controller in own:
            path = own[controller]
        elif fstype == "cgroup2" and "" in own:
            path = own[""]
        else:
            continue
        if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
            continue  # this process's cgroup is not under what is mounted there
        rel = path[len(root):] if root != "/" else path
        found.append((Path(point), Path(point) / rel.lstrip("/")))
    return found


def _candidates(controller: str = "pids") -> list[Path]:
    """Folders where a cgroup with ``controller`` (``pids``, ``memory``) could be made: this process's cgroup of
    a cgroup v1 hierarchy of that controller, then of the cgroup v2 hierarchy (:func:`cgroup_folders`)."""
    return [folder for _, folder in cgroup_folders(controller)]


def _quota(folder: Path) -> float | None:
    """CPUs of ``folder``'s CPU quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``;
    ``150000 100000`` is 1.5), ``None`` for no quota or none readable there."""
    try:
        if (folder / "cpu.max").is_file():
            quota, period = ((folder / "cpu.max").read_text().split() + ["100000"])[:2]
        elif (folder / "cpu.cfs_quota_us").is_file():
            quota = (folder / "cpu.cfs_quota_us").read_text().strip()
            period = (folder / "cpu.cfs_period_us").read_text().strip()
        else:
            return None
        return float(quota) / float(period) if quota not in ("max", "-1") and float(period) > 0 else None
    except (OSError, ValueError):
        return None


def machine_load(proc: Path = Path("/proc")) -> tuple[float, float]:
    """``(load, cpus)``: the machine's 1-minute load average (``os.getloadavg``: the tasks running or waiting to
    run, every session's, ``0.0`` where it cannot be read) and the CPUs this process may run on: its affinity
    (``os.sched_getaffinity``), at most the least CPU quota of its ``cpu`` cgroup and the cgroups above it up to
    where the hierarchy is mounted (:func:`cgroup_folders`; a quota of 1.5 CPUs is 1.5), at least 1. ``proc``:
    where ``self/cgroup`` and ``self/mountinfo`` are read."""
    try:
        load = float(os.getloadavg()[0])
    except OSError:
        load = 0.0
    cpus = float(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    for point, folder in cgroup_folders("cpu", proc):
        for d in (folder, *folder.parents):
            quota = _quota(d)
            if quota is not None:
                cpus = min(cpus, quota)
            if d == point or point not in d.parents:
                break
    return max(0.0, load), max(1.0, cpus)


def load_per_cpu(proc: Path = Path("/proc")) -> float:
    """:func:`machine_load`'s load over its CPUs (``1.5``: each process wanting a CPU gets about 2/3 of one)."""
    load, cpus = machine_load(proc)
    return load / cpus


def slowdown(now: float, then: float | None) -> float:
    """How many times longer a test run takes at the load per CPU ``now`` (:func:`load_per_cpu`) than it took at
    ``then`` (``None``: not recorded, taken as an idle machine): ``max(1, now) / max(1, then)``, since each of ``L``
    processes wanting a CPU gets about ``1/L`` of one (ops43: gradings timed at a load of 7.3 per CPU)."""
    return max(1.0, now) / max(1.0, then or 0.0)


def eased(now: float, then: float | None) -> float:
    """What seconds measured at the load per CPU ``then`` are scaled by at the load ``now``: :func:`slowdown` when
    the machine is less loaded now (under 1), else 1.0: a busier machine now is no reason to raise a measured figure
    (a range's high end says it). ops64 on more-itertools: gradings timed under load said "about 2m12s" of a verify
    that took 45 s; ux65: ``homefield plan`` took earlier gradings' ``test_s`` as measured likewise."""
    return min(1.0, slowdown(now, then))


def _root(controller: str, limit_files: tuple[str, ...]) -> Path | None:
    """The first of :func:`_candidates` where a child ``homefield-probe-<pid>`` can be made that holds one of
    ``limit_files``; the probe is removed. Under cgroup v2 ``+controller`` is written to the folder's
    ``cgroup.subtree_control`` when it is missing there."""
    for folder in _candidates(controller):
        controls = folder / "cgroup.subtree_control"
        if controls.exists():  # cgroup v2: children get the controller only when it is enabled here
            try:
                if controller not in controls.read_text().split():
                    controls.write_text(f"+{controller}")
            except OSError:
                continue
        probe = folder / f"{CGROUP_PREFIX}probe-{os.getpid()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            if any((probe / name).exists() for name in limit_files):
                return folder
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return None


@functools.lru_cache(maxsize=1)
def pids_root() -> Path | None:
    """A folder of a cgroup file system where this process makes a sandbox's cgroup with the ``pids``
    controller, or ``None``. Probed once per process: a child ``homefield-probe-<pid>`` is made,
    holds ``pids.max``, and is removed. Under cgroup v2 the folder's ``cgroup.subtree_control`` must
    list ``pids`` (a delegated subtree, or the root of a container's namespace, where ``+pids`` is
    written when the controller is available)."""
    return _root("pids", ("pids.max",))


@functools.lru_cache(maxsize=1)
def memory_root() -> Path | None:
    """A folder where this process makes a sandbox's cgroup with the ``memory`` controller, or ``None``: its
    own cgroup of a cgroup v1 ``memory`` hierarchy (a child holds ``memory.limit_in_bytes``), or of cgroup v2
    with ``memory`` in ``cgroup.subtree_control`` (``memory.max``). A child of this process's own cgroup, so
    the limits the host set on homefield still hold above it. Probed once per process, as :func:`pids_root`."""
    return _root("memory", ("memory.limit_in_bytes", "memory.max"))


@functools.lru_cache(maxsize=1)
def cpu_root() -> Path | None:
    """A folder where this process makes a sandbox's cgroup with the ``cpu`` controller, or ``None``: its own
    cgroup of a cgroup v1 ``cpu`` hierarchy (a child holds ``cpu.shares``), or of cgroup v2 with ``cpu`` in
    ``cgroup.subtree_control`` (``cpu.weight``). Each sandbox's cgroup keeps the default weight, so the kernel
    shares the CPU between sandboxes, not between their processes or sessions: an agent that ran 300 spinning
    processes, each in a session of its own (an autogroup each), left another agent's sandbox running beside it
    1/150 of a core (atk24: an honest agent's 3 s attempts took 28 s; now it gets its own share whatever the
    other runs). Probed once per process, as :func:`pids_root`."""
    return _root("cpu", ("cpu.shares", "cpu.weight"))


@functools.lru_cache(maxsize=1)
def prlimit_path() -> str | None:
    """util-linux's ``prlimit`` when it lies in a system folder bound into every bubblewrap sandbox
    (``/usr``, ``/bin``, ``/sbin``), else ``None``."""
    found = shutil.which("prlimit", path="/usr/bin:/bin:/usr/sbin:/sbin")
    return found if found and os.path.realpath(found).startswith(("/usr/", "/bin/", "/sbin/")) else None


@functools.lru_cache(maxsize=8)
def _setuid(exe: str) -> bool:
    found = shutil.which(exe) or exe
    try:
        return bool(os.stat(found).st_mode & stat.S_ISUID)
    except OSError:
        return False


def counts_per_namespace(release: str | None = None) -> bool:
    """Whether the kernel of ``release`` (``os.uname().release`` by default, e.g. ``"6.8.0-45-generic"``)
    counts ``RLIMIT_NPROC`` per (user namespace, uid): Linux 5.14 on. Before it, the count is of every
    task of the uid on the host (a user's browser alone can hold 512 threads); ``False`` for a release
    that does not start with ``MAJOR.MINOR``."""
    found = re.match(r"(\d+)\.(\d+)", release if release is not None else os.uname().release)
    return found is not None and (int(found[1]), int(found[2])) >= (5, 14)


def by_rlimit(bwrap: str = "bwrap") -> bool:
    """Whether ``RLIMIT_NPROC`` set inside bubblewrap ``bwrap``'s sandbox caps it, and it alone: not run as
    root (the host's root is exempt), bubblewrap not setuid (then it has its own user namespace), a
    kernel that counts per user namespace (:func:`counts_per_namespace`), ``prlimit`` there."""
    return os.geteuid() != 0 and not _setuid(bwrap) and counts_per_namespace() and prlimit_path() is not None


#: The signals a bubblewrap sandbox's processes may have queued at once, and its POSIX timers (each sets one
#: aside): its ``RLIMIT_SIGPENDING``, soft and hard, set inside its user namespace by :func:`inside_argv`.
SIGPENDING = 256


def inside_argv(command: Sequence[str], bwrap: str = "bwrap") -> list[str]:
    """``command`` as a bubblewrap sandbox's command: ``[prlimit, --nproc=N:N, --sigpending=S:S, --, *command]``,
    ``--nproc`` where it caps (:func:`by_rlimit`: not root, bubblewrap ``bwrap`` not setuid; root is exempt),
    ``--sigpending`` :data:`SIGPENDING` always; ``command`` when ``prlimit`` is not there.

    ``RLIMIT_SIGPENDING`` (satk46): the kernel charges a queued signal, and each POSIX timer, to the host uid at
    every user namespace level, and checks each level against the limit the child namespace's creator held (the
    host's, 96,367 here, ``threads-max`` / 2): a sandbox that queued real-time signals to itself held them all,
    and every ``timer_create`` and ``sigqueue`` of its host uid (root: every process of the machine's root) and of
    a concurrent sandbox was ``EAGAIN`` while it ran. Set inside, after bubblewrap made the namespaces, the limit
    bounds the sandbox's own count only, and the namespaces keep the host's limit for the levels above: a sandbox
    holds :data:`SIGPENDING` at most, and leaves the rest to the others (set on bubblewrap, the host uid's whole
    count would be checked against it: one sandbox's 256 would leave another none)."""
    tool = prlimit_path()
    if tool is None:
        return list(command)
    n = max_procs()
    nproc = [f"--nproc={n}:{n}"] if by_rlimit(bwrap) else []
    return [tool, *nproc, f"--sigpending={SIGPENDING}:{SIGPENDING}", "--", *command]


def marked(argv: Sequence[str]) -> list[str]:
    """``argv`` with :data:`PIDS_MARK` in front when this process makes pids, memory or cpu cgroups
    (:func:`pids_root`, :func:`memory_root`, :func:`cpu_root`), else ``argv``:
    :func:`~pytest_homefield.sandbox.procs.run_process` then starts it in a cgroup of its own capped at
    :func:`max_procs` and at the memory it is given, and with one share of the CPU."""
    return [f"{PIDS_MARK}{max_procs()}", *argv] \
        if pids_root() is not None or memory_root() is not None or cpu_root() is not None else list(argv)


def split_mark(argv: Sequence[str], memory_bytes: int | None = None) -> tuple[list[str], list[str]]:
    """``(reaper options, argv)`` for a :func:`marked` argv: ``pids=N:ROOT`` where a pids cgroup can be made,
    ``mem=BYTES:ROOT`` with ``memory_bytes`` where a memory cgroup can be (:func:`memory_root`) and
    ``cpu=ROOT`` where a cpu cgroup can be (:func:`cpu_root`), then the rest; ``([], argv)`` for any other
    argv."""
    if not argv or not argv[0].startswith(PIDS_MARK):
        return [], list(argv)
    root, mem_root, cpu = pids_root(), memory_root(), cpu_root()
    options = [f"pids={int(argv[0][len(PIDS_MARK):])}:{root}"] if root is not None else []
    if memory_bytes and mem_root is not None:
        options.append(f"mem={int(memory_bytes)}:{mem_root}")
    if cpu is not None:
        options.append(f"cpu={cpu}")
    return options, list(argv[1:])


def cap_by(backend: str, bwrap: str = "bwrap") -> str | None:
    """How a sandbox of ``backend`` (``bwrap``, ``landlock``, ``none``, ``hook``) is capped here: ``"pids
    cgroup"``, ``"RLIMIT_NPROC"`` (in bubblewrap's user namespace), or ``None`` (no cap)."""
    if backend not in ("bwrap", "landlock"):
        return None
    if pids_root() is not None:
        return "pids cgroup"
    if backend == "bwrap" and by_rlimit(bwrap):
        return "RLIMIT_NPROC"
    return None


def no_cap_note(backends: dict[str, str]) -> str | None:
    """The one header line when a sandboxed process of ``backends`` (``{who: backend}``) has no process
    cap here (:func:`cap_by`), else ``None``."""
    loose = [who for who, b in backends.items() if b in ("bwrap", "landlock") and cap_by(b) is None]
    if not loose:
        return None
    why = "no writable pids cgroup, and root is exempt from RLIMIT_NPROC" if os.geteuid() == 0 else \
        "no writable pids cgroup, and no RLIMIT_NPROC in a user namespace of its own: Landlock has none, a " \
        "setuid bubblewrap makes none, a kernel before 5.14 counts the user's every process, or prlimit is missing"
    return (f"homefield: no process cap for {', '.join(loose)} ({why}): a fork bomb there can exhaust this "
            "machine's processes")


#: What a fork the cap refused leaves in a log: ``strerror(EAGAIN)`` (Python's ``BlockingIOError``, libc's
#: ``perror``), dash's and bash's words.
_REFUSED = (b"Resource temporarily unavailable", b"Cannot fork", b"fork: retry")


def over_cap_note(log_tail: bytes, cap: int | None) -> str | None:
    """``'a test process could not start a process: its sandbox holds at most 512 (--max-procs)'`` when a
    capped run left a refused fork in the end of its log (``log_tail``), else ``None``."""
    if not cap or not any(marker in log_tail for marker in _REFUSED):
        return None
    return f"a test process could not start a process: its sandbox holds at most {cap} ({spell('max-procs', 'cli')})"


def memory_capped(backend: str) -> bool:
    """Whether a sandbox of ``backend`` gets a memory cgroup here (bubblewrap or Landlock, :func:`memory_root`)."""
    return backend in ("bwrap", "landlock") and memory_root() is not None


def no_memory_cap_note(backends: dict[str, str]) -> str | None:
    """The one header line when a sandboxed process of ``backends`` (``{who: backend}``) gets no memory cgroup
    here (:func:`memory_capped`), else ``None``."""
    loose = [who for who, b in backends.items() if b in ("bwrap", "landlock") and not memory_capped(b)]
    if not loose:
        return None
    return (f"homefield: no memory cap for {', '.join(loose)} (no writable memory cgroup: cgroup v1 memory as "
            "root, or cgroup v2 with memory delegated): only RLIMIT_AS per test process holds, and the kernel's "
            "OOM killer may pick a process outside the sandbox")


def cpu_shared(backend: str) -> bool:
    """Whether a sandbox of ``backend`` gets a cpu cgroup of its own here (bubblewrap or Landlock, :func:`cpu_root`)."""
    return backend in ("bwrap", "landlock") and cpu_root() is not None


def no_cpu_share_note(backends: dict[str, str]) -> str | None:
    """The one header line when a sandboxed process of ``backends`` (``{who: backend}``) gets no cpu cgroup here
    (:func:`cpu_shared`), else ``None``: then the kernel shares the CPU between sessions, not sandboxes, and an
    agent that starts many processes slows the attempts beside it (atk24: an equally able agent timed out on 20
    of 21 attempts); one xdist worker (``-n 1``) runs one attempt at a time."""
    loose = [who for who, b in backends.items() if b in ("bwrap", "landlock") and not cpu_shared(b)]
    if not loose:
        return None
    return (f"homefield: no CPU share for {', '.join(loose)} (no writable cpu cgroup: cgroup v1 cpu as root, or "
            "cgroup v2 with cpu delegated): an agent that starts many processes can slow the attempts running "
            "beside it into timeouts; -n 1 runs one attempt at a time")


def oom_note(kills: int, memory_mb: float, option: str, who: str = "a test process") -> str | None:
    """``'the kernel killed a test process 1 time(s): its sandbox went over its memory cap of 4096 MiB
    (max_test_memory_mb)'`` when its memory cgroup reported ``kills`` OOM kills (> 0), else ``None``."""
    if kills <= 0:
        return None
    return (f"the kernel killed {who} ({kills} OOM kill{'s' if kills != 1 else ''}): its sandbox went over its "
            f"memory cap of {memory_mb:g} MiB ({option})")


def sweep_cgroups() -> list[Path]:
    """Remove the empty ``homefield-<pid>-<ns>`` cgroups under :func:`pids_root`, :func:`memory_root` and
    :func:`cpu_root` whose reaper is gone (it was killed before it removed its own); returns those removed.
    Never raises."""
    removed: list[Path] = []
    entries: list[Path] = []
    for root in dict.fromkeys(r for r in (pids_root(), memory_root(), cpu_root()) if r is not None):
        with contextlib.suppress(OSError):
            entries += list(root.iterdir())
    for entry in entries:
        pid = entry.name[len(CGROUP_PREFIX):].split("-")[0]
        if not entry.name.startswith(CGROUP_PREFIX) or not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        with contextlib.suppress(OSError):
            entry.rmdir()
            removed.append(entry)
    return removed
