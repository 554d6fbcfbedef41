"""The Landlock sandbox (docs/contracts.md §7, §9): where bubblewrap does not work (no user namespaces:
Docker's default profile, hardened kernels, many CI runners), Linux's Landlock LSM confines a process
and its children to an allow-list of paths and TCP ports, with no namespace and no privilege.

:func:`landlock_argv` puts the launcher (:mod:`._landlock`, ``python -I -S _landlock.py POLICY --
COMMAND…``) in front of a command: it restricts itself to a :class:`LandlockPolicy` and ``exec``\\ s the
command. What a policy allows:

* read and execute: :func:`system_paths` (the :data:`~.bwrap.SYSTEM_DIRS`, the
  :data:`~.bwrap.ETC_ENTRIES` at their real paths, ``/proc``, ``/sys/devices/system/cpu``) and its
  ``ro`` paths; read and write: its ``rw`` paths and :data:`DEV_FILES`; nothing else of the file
  system can be opened, listed, written or executed. Never the host's ``/dev/shm``: its names are flat
  and shared with every process of the machine, so a test run could leave the hidden tests there for
  the next attempt's agent (atk12 F1) and an agent could reach another session's temp folders in it
  (F3); POSIX semaphores (``multiprocessing``'s locks) cannot be made, a suite that needs them needs
  bubblewrap. An installed copy of the repository under benchmark in a site folder it allows
  (:mod:`.project_copies`, found by content and by name: a non-editable ``pip install .``, an egg, a
  second clone leave HEAD, every task's fix, there; never in the run's ``own`` folders) cannot
  be read: Landlock cannot deny a subfolder of an allowed one, so :func:`carve` allows the folders on the
  way to it listable only and every other entry of them read-only. A path that is, or holds, a protected folder
  (:mod:`.protected`: the repository under benchmark) is never allowed: Landlock adds, it cannot deny
  a subfolder. ``/proc/<pid>/cwd`` and ``/proc/<pid>/root`` of another process resolve to the real
  file, which is outside the allowed set, and Landlock forbids ptrace (and so ``/proc/<pid>/environ``,
  ``mem``, ``fd``, and those links themselves) of any process outside the domain;
* metadata: ``chmod``, ``utime`` and extended attributes change only what lies beneath its ``rw`` paths
  (Landlock has no right for them: the launcher's supervisor, :mod:`._landlock_supervisor`, makes each
  change itself);
* TCP: ``connect`` only to ``connect``'s ports on ``hosts`` (``127.0.0.1``: not ``127.0.0.2``, not
  ``::1``; its v4-mapped form ``::ffff:127.0.0.1`` alike) and to the exact pairs of ``peers`` (``::1``
  and a port: a local server on IPv6 loopback), ``bind`` only to an ephemeral port (port 0; a
  service instance: any port, ``bind=None``) of a loopback address (never ``0.0.0.0``/``::``, which a
  LAN host reaches), ``listen`` only on a socket so bound, and ``connect`` to a loopback address and
  port where such a socket of the same launch listens (a test's own server; never a host service);
  ``connect=None``: the network not confined. Landlock knows ports, not addresses, so the launcher's
  supervisor checks each ``connect``, ``bind`` and ``listen`` and makes it itself (any ABI); Landlock
  does not know UDP, which the launcher's seccomp filter refuses when the network is confined (no
  ``AF_INET``/``AF_INET6`` socket but a stream);
* scope (ABI ≥ 6): no signal to, no abstract Unix socket of, a process outside the domain;
* Unix sockets (``unix=False``, test runs and agents): none can be made (a seccomp filter of the
  launcher), since Landlock does not confine ``connect`` to a named one.

:func:`probe` checks once per process that the launcher confines a command here and returns the
kernel's Landlock ABI; :func:`tests_policy` is the policy of a test run (the path plan of
:func:`~.bwrap.sandboxed_argv`). Source: Documentation/userspace-api/landlock.rst, linux/landlock.h.
"""

from __future__ import annotations

import atexit
import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.sandbox import _landlock, tempdirs
from pytest_homefield.sandbox.bwrap import ETC_ENTRIES, SYSTEM_DIRS, BwrapUnavailable, inside_path, tests_ro_paths
from pytest_homefield.sandbox.project_copies import copies_of_protected
from pytest_homefield.sandbox.protected import holds_home, holds_protected, homes
from pytest_homefield.sandbox.tempdirs import owner_tag

__all__ = ["LandlockPolicy", "LandlockUnavailable", "carve", "landlock_argv", "probe", "system_paths", "tests_policy",
           "LAUNCHER", "DEV_FILES", "SCOPED_ABI", "NET_ABI"]

#: The launcher, run by path with ``-I -S``.
LAUNCHER = Path(__file__).resolve().parent / "_landlock.py"
#: Device files every confined process may read and write; the rest of ``/dev`` (``/dev/shm`` too) cannot
#: be opened.
DEV_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
#: The ABI from which TCP ``bind``/``connect`` are confined (Linux 6.7).
NET_ABI = 4
#: The ABI from which signals and abstract Unix sockets are scoped to the domain (Linux 6.12): an agent
#: that runs commands is admitted under Landlock from it on (docs/contracts.md §9).
SCOPED_ABI = 6


class LandlockUnavailable(BwrapUnavailable):
    """Landlock does not work here; the message is one line. A :class:`~.bwrap.BwrapUnavailable`, so
    every place that refuses for want of a sandbox refuses for it too."""


@dataclass(frozen=True)
class LandlockPolicy:
    """What one confined command may do (module docstring): ``ro`` read and execute, ``rw`` every
    file-system right, TCP ``connect`` to these ports of ``hosts`` and to the exact ``(address, port)``
    pairs of ``peers`` only (``None``: TCP not confined, ``peers`` and ``bind`` ignored; ``hosts``: IPv4 or IPv6
    addresses, the host's ``127.0.0.1`` by default; ``peers``: e.g. ``("::1", 8080)``, a local model
    server on IPv6 loopback), ``bind`` only to a loopback address and these ports (``0``: an ephemeral
    one, bound by number; ``None``: any port, a service instance's), ``listen`` only on a socket so bound,
    ``unix``: make Unix sockets (``False``: ``socket(AF_UNIX)`` refused, so no named socket can be reached;
    ``socketpair`` stays; with ``connect`` not ``None`` no Unix socket is ever connected, whatever
    ``unix`` says: the supervisor that makes each ``connect`` would resolve its path outside the
    domain), ``setenv`` / ``unsetenv`` applied to its environment (nothing secret: the
    policy file is readable by the user's unconfined processes); ``own``: read-only folders that are the
    run's own (the copy under test), never searched for copies of the project (:func:`carve`)."""

    ro: Sequence[Path | str] = ()
    rw: Sequence[Path | str] = ()
    connect: Sequence[int] | None = ()
    unix: bool = True
    setenv: Mapping[str, str] = field(default_factory=dict)
    unsetenv: Sequence[str] = ()
    own: Sequence[Path | str] = ()
    hosts: Sequence[str] = ("127.0.0.1",)
    peers: Sequence[tuple[str, int]] = ()
    bind: Sequence[int] | None = (0,)

    def as_json(self) -> str:
        """The launcher's ``POLICY`` word: the paths made absolute, deduplicated, those that are or hold a
        protected folder left out, and the read-only ones that are or hold the user's home
        (:func:`~.protected.holds_home`, satk58); the system paths added."""
        rw = _allowed(self.rw)
        home = homes()  # once for the policy's paths (not kept: HOME may change between calls)
        ro = [p for p in _allowed([*system_paths(), *self.ro]) if p not in rw and not holds_home(p, home)]  # satk58
        ro, listable = carve(ro, copies_of_protected(ro, skip=[*rw, *map(str, self.own)]))
        net = None if self.connect is None else {"connect": sorted(set(self.connect)), "hosts": list(self.hosts),
                                                 "peers": [[h, int(p)] for h, p in dict.fromkeys(self.peers)],
                                                 "bind": sorted({int(p) for p in self.bind or ()}),
                                                 "bind_any": self.bind is None}
        return json.dumps({"ro": ro, "list": listable, "rw": rw, "dev": list(DEV_FILES), "net": net, "scope": True,
                           "unix": self.unix, "setenv": dict(self.setenv), "unsetenv": list(self.unsetenv)},
                          separators=(",", ":"))




def carve(roots: Sequence[str], hidden: Sequence[str]) -> tuple[list[str], list[str]]:
    """``roots`` (read-only paths) less the ``hidden`` ones (resolved paths: the installed copies of the
    repository under benchmark, :func:`~.project_copies.copies_of_protected`), as ``(ro, listable)``. Landlock
    only adds rights, so a root that holds a hidden path is replaced, on the way down to it, by its
    folders listable only (names, never contents) and every other entry of them read-only: the copy is
    listed but none of its files can be read. A root that is or lies in a hidden path is left out."""
    ro: list[str] = []
    listable: list[str] = []
    for root in roots:
        _carve_root(root, hidden, ro, listable)
    return ro, listable


def _carve_root(path: str, hidden: Sequence[str], ro: list[str], listable: list[str]) -> None:
    """``path`` into ``ro``, or carved (:func:`carve`) when its real path holds a hidden one. Landlock
    follows a symlink to its target, so an entry ``lib64 -> lib`` is judged by where it leads (atk15 F1
    under Landlock: a venv's ``lib64`` showed the copy its ``lib`` hid)."""
    real = os.path.realpath(path)
    inside = [h for h in hidden if h == real or h.startswith(real.rstrip("/") + "/")]
    if not inside:
        if not any(real.startswith(h + "/") for h in hidden):
            ro.append(path)
        return
    _carve(real, inside, hidden, ro, listable)


def _carve(folder: str, inside: Sequence[str], hidden: Sequence[str], ro: list[str], listable: list[str]) -> None:
    if folder in inside or folder in listable:
        return
    listable.append(folder)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        child = os.path.join(folder, name)
        if os.path.islink(child):
            _carve_root(child, hidden, ro, listable)
            continue
        below = [h for h in inside if h == child or h.startswith(child + "/")]
        if not below:
            ro.append(child)
        elif child not in inside:
            _carve(child, below, hidden, ro, listable)


def _allowed(paths: Iterable[Path | str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        s = os.path.abspath(str(p))
        if s not in out and not holds_protected(s):
            out.append(s)
    return out


@functools.lru_cache(maxsize=1)
def system_paths() -> tuple[str, ...]:
    """The system's read-only paths (module docstring): each :data:`~.bwrap.ETC_ENTRIES` entry at its
    real path (``resolv.conf -> /run/systemd/…`` allows that file, not ``/run``)."""
    out = [d for d in SYSTEM_DIRS if os.path.exists(d)]
    for pattern in ETC_ENTRIES:  # (``mtab -> /proc/self/mounts``: under ``/proc`` anyway)
        real = [os.path.realpath(p) for p in sorted(glob.glob(os.path.join("/etc", pattern)))]
        out += [p for p in real if not p.startswith("/proc/")]
    return (*out, "/proc", "/sys/devices/system/cpu")


def landlock_argv(command: Sequence[str], policy: LandlockPolicy) -> list[str]:
    """``command`` behind the launcher: ``[python, -I, -S, LAUNCHER, @POLICY_FILE, --, *command]``. The
    policy is written to a new file of this process's private temp folder (:func:`_policy_folder`), never
    put on the command line: ``/proc/<pid>/cmdline`` of the reaper and the launcher is readable by every
    process, and the policy names the attempt's workspace, its grading copy, its ``HOME`` (atk12 F4b)."""
    fd, path = tempfile.mkstemp(prefix="policy-", suffix=".json", dir=_policy_folder())
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(policy.as_json())
    return [sys.executable, "-I", "-S", str(LAUNCHER), "@" + path, "--", *command]


_POLICY_FOLDERS: dict[int, Path] = {}


def _policy_folder() -> Path:
    """This process's folder of policy files (``hf-<pid>.<start>-…``, 0700: no confined process can open
    it, a killed run's is swept, removed at exit)."""
    folder = _POLICY_FOLDERS.get(os.getpid())
    if folder is None or not folder.is_dir():
        folder = _POLICY_FOLDERS[os.getpid()] = tempdirs.mkdtemp()
        atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.cache
def probe() -> int:
    """The kernel's Landlock ABI version (1…), after checking once per process that the launcher confines
    a command here: it writes its allowed folder and cannot write the folder above. Raises
    :class:`LandlockUnavailable` with a one-line reason, also when ``$HOMEFIELD_LANDLOCK`` is ``off``
    (as ``$HOMEFIELD_BWRAP`` names the bubblewrap to use: ``auto`` then behaves as where neither works)."""
    if os.environ.get("HOMEFIELD_LANDLOCK", "").lower() == "off":
        raise LandlockUnavailable("Landlock is turned off (HOMEFIELD_LANDLOCK=off)")
    with tempfile.TemporaryDirectory(prefix=f"hf-{owner_tag()}-") as tmp:
        inner = Path(tmp) / "rw"
        inner.mkdir()
        script = "echo ok > rw/out; echo no > out 2>/dev/null; exit 0"
        argv = landlock_argv(["/bin/sh", "-c", script], LandlockPolicy(rw=[inner], connect=[], unix=False))
        try:
            proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise LandlockUnavailable(f"the Landlock launcher cannot run ({exc})") from None
        if proc.returncode != 0 or not (inner / "out").exists() or (Path(tmp) / "out").exists():
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            why = lines[-1].removeprefix("homefield landlock: ")[:200] if lines else f"exit status {proc.returncode}"
            raise LandlockUnavailable(f"Landlock does not confine here ({why}; it needs Linux 5.13 with "
                                      "lsm=landlock)")
    return _landlock.abi()


def tests_policy(argv: Sequence[str], *, workdir: Path, out_dir: Path, env: Mapping[str, str],
                 python: str | None = None, ports: Sequence[int] = ()) -> LandlockPolicy:
    """The policy of a test run (the plan of :func:`~.bwrap.sandboxed_argv`): ``workdir`` (the grading
    or mining copy) and :func:`~.bwrap.tests_ro_paths` read-only, ``out_dir`` (its log, outcomes, pytest
    cache, ``HOME`` and ``TMPDIR``) read-write, TCP only to ``ports`` (its services' and
    ``--test-network``'s, on the host's ``127.0.0.1``); ``PATH`` cut to the entries it can run, the
    interpreter of ``python`` first. There is no private ``/tmp``: the run's ``TMPDIR`` is its own."""
    ro = [Path(workdir), *tests_ro_paths(argv, env=env, python=python)]
    exe = shutil.which(python, path=env.get("PATH")) if python else None
    first = [Path(exe).parent] if exe and "python" in Path(exe).name else []
    path = inside_path(env.get("PATH", ""), [Path(p) for p in ro], first=first)
    return LandlockPolicy(ro=ro, rw=[Path(out_dir)], connect=tuple(ports), unix=False, setenv={"PATH": path},
                          own=[Path(workdir)])
