"""Each sandbox under a host uid of its own (satk48; root's default since satk52: :data:`DEFAULT_POOL`, set or turned
off by ``HOMEFIELD_SANDBOX_UIDS``).

Some of the kernel's per-user quotas have no user namespace level: pipe buffers (``fs.pipe-user-pages-soft``),
epoll watches (``fs.epoll.max_user_watches``) and file descriptors in flight over Unix sockets (checked against
the sender's ``RLIMIT_NOFILE``) are charged to the process's real uid on the host; inotify instances and
fanotify groups are charged, at the host's level, to the uid that made the sandbox's user namespace. A sandbox
that holds them all takes them from every other process of that uid while it runs: as root, from every
concurrent sandbox (and for the last two from the machine's root itself). No limit of a process bounds them; a
host uid per sandbox does: what a sandbox holds is then charged to a uid that no other process has.

With homefield running as root (the pool: :func:`pool`), :func:`~pytest_homefield.sandbox.bwrap.bwrap_argv` builds a
sandbox of two bubblewraps: the outer one, run by root, makes the sandbox's filesystem (it can bind what only
root reaches, an interpreter under ``/root/.pyenv``), and runs ``setpriv`` to the leased uid (no group, no
capability, an empty bounding set), which runs the inner one, unprivileged: the user namespace (owned by the
leased uid, mapping it to 0 inside, closed to further namespaces), the PID, IPC, UTS and network namespaces, a
fresh ``/proc``, ``/dev`` and the tmpfs folders. The reaper (:mod:`._reaper`) leases the uid (a lock file per
uid in :func:`lock_dir` and its journal file in :func:`journal_dir`, both held by ``flock`` for the reaper's life:
race-free across processes and xdist workers and across homefields whose ``/run`` differs but whose ``/var/lib``
is one, satk56; not across homefields that share neither, two containers, whose sandboxes can then share a uid;
given back when the reaper exits, however it exits), hands the sandbox's own folders
(:attr:`~pytest_homefield.sandbox.bwrap.Policy.owned`: its workspace, ``HOME`` and ``TMPDIR``, a test run's
output folder and copy) to it before the start (``lchown``, no link followed) and back to its own uid and gid
once every process of the sandbox is reaped (which clears any set-user-ID bit the sandbox set). What it handed
over is written in the uid's journal first (one line a folder: its path, owner, device and inode; in
:func:`journal_dir`, on a disk a reboot keeps) and wiped once all is back: a reaper killed outright (``SIGKILL``, which
no handler sees) leaves it there, and the next reaper that leases a uid takes every such folder back (its own uid's and
every other unheld one's; by descriptor, no link followed, only a folder still that uid's with the device and inode
written), once no process of that uid runs (a uid with a live process is never leased: a survivor's or a
stranger's). The outer bubblewrap has a PID
namespace of its own, whose init dies with it and takes the sandbox along: a reaper killed outright leaves no
process of the uid running.

Inside, the sandbox is uid 0 as before, and its own folders (a test run's copy, ``HOME``, ``TMPDIR``) are its
own; files of the host's root (the system, the interpreter, read-only binds) show as 65534 (``nobody``), which
a test checking the owner of a system file sees (satk52 measured: see contracts §9). Not for a non-root user:
bubblewrap maps only the caller's uid, and a subordinate uid (``newuidmap``, ``/etc/subuid``) is no real uid of
the caller's: giving a sandbox one needs a user namespace made through ``newuidmap`` around the outer
bubblewrap, which is not built.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ENV", "DEFAULT_POOL", "UID_MARK", "OWN_MARK", "pool", "pool_is_free", "lock_dir", "journal_dir",
           "setpriv_argv", "marked", "split_mark"]

#: The setting: ``BASE:COUNT``, the uids ``BASE`` … ``BASE+COUNT-1`` (no account, no file of the host's may have
#: them: the sandbox can read and write whatever they own). Unset or empty: :data:`DEFAULT_POOL`; ``0`` or
#: ``off``: off (every sandbox of a root homefield root's, as before satk52).
ENV = "HOMEFIELD_SANDBOX_UIDS"
#: ``(BASE, COUNT)`` a root homefield leases from when :data:`ENV` is unset: 1,024 uids in the range systemd
#: leaves unused (above its containers' 524288…1879048191, below its foreign range 0x7FFE0000), taken only when
#: no account or group of the machine, nor a subordinate range (``/etc/subuid``, ``/etc/subgid``), holds one of
#: them and this process's user namespace maps them (:func:`pool_is_free`); a uid a running process holds is
#: skipped at each lease (``_reaper.lease``).
DEFAULT_POOL = (1_950_000_000, 1024)
#: Stands for the leased uid in the argv (``setpriv``'s ``--reuid`` and ``--regid``); the reaper replaces it.
UID_MARK = "@homefield-uid"
#: In front of a sandbox's argv (:func:`marked`): the folders handed to its uid.
OWN_MARK = "@homefield-own:"
#: Where the lock files are, root's alone (made ``0700``; refused when it is anything else).
LOCK_DIR = Path("/run/homefield-uids") if os.path.isdir("/run") else Path("/tmp/.homefield-uids-0")
#: Where each uid's journal is (``<uid>.journal``: the folders its sandbox was handed, ``_reaper.journal``), root's
#: alone like :data:`LOCK_DIR` but on a disk a reboot keeps (sand54: ``/run`` is a tmpfs, and a reaper killed
#: outright, then a reboot, took the journal along: the folders stayed the uid's, the next sandbox leasing it their
#: owner); :func:`journal_dir` falls back to :data:`LOCK_DIR` where it cannot be made (a read-only ``/var/lib``).
JOURNAL_DIR = Path("/var/lib/homefield/uids")


def pool() -> tuple[int, int] | None:
    """``(BASE, COUNT)`` when sandboxes run under a host uid of their own here: this process root, ``setpriv``
    installed, and :data:`ENV` a ``BASE:COUNT`` or unset (then :data:`DEFAULT_POOL`, when :func:`pool_is_free`);
    else ``None`` (``0`` or ``off``: off). Raises ``ValueError`` for a setting that is no ``BASE:COUNT`` of uids
    from 1 to 2**31-1."""
    value = os.environ.get(ENV, "").strip()
    if value in ("0", "off") or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    if not value:
        return DEFAULT_POOL if pool_is_free(*DEFAULT_POOL) else None
    base_s, _, count_s = value.partition(":")
    base, count = int(base_s), int(count_s or "1")
    if not (0 < base and 0 < count and base + count <= 2**31 - 1):
        raise ValueError(f"{ENV}={value!r}: not BASE:COUNT of uids from 1 to 2**31-1")
    return base, count


@functools.lru_cache(maxsize=8)
def pool_is_free(base: int, count: int) -> bool:
    """Whether no account (``pwd``) or group (``grp``) of the machine has an id of ``base`` … ``base+count-1``
    and no subordinate range of ``/etc/subuid`` or ``/etc/subgid`` (``NAME:START:COUNT`` lines) meets them, and
    this process's user namespace maps them all (``/proc/self/uid_map`` and ``gid_map``: root of a container
    that maps 65,536 uids cannot ``setpriv`` to one past them, and no sandbox would start); read once a
    process."""
    ids = range(base, base + count)
    for name in ("/proc/self/uid_map", "/proc/self/gid_map"):
        try:
            with open(name, encoding="ascii") as f:
                spans = [[int(x) for x in line.split()] for line in f if len(line.split()) == 3]
        except (OSError, ValueError):
            return False
        if not any(inside <= base and base + count <= inside + n for inside, _, n in spans):
            return False
    if any(e.pw_uid in ids or e.pw_gid in ids for e in pwd.getpwall()) or any(e.gr_gid in ids for e in grp.getgrall()):
        return False
    for name in ("/etc/subuid", "/etc/subgid"):
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(":")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                start, n = int(parts[1]), int(parts[2])
                if start < base + count and base < start + n:
                    return False
    return True


def lock_dir() -> Path:
    """:data:`LOCK_DIR`, made ``0700`` when missing; raises ``PermissionError`` when it is a link, not a folder,
    not root's or open to anyone else."""
    try:
        os.mkdir(LOCK_DIR, 0o700)
    except FileExistsError:
        pass
    _root_only(LOCK_DIR, 0o077)
    return LOCK_DIR


def _root_only(path: Path, others: int) -> None:
    """Raises ``PermissionError`` unless ``path`` (not followed) is a folder of root's with none of the mode bits
    ``others`` set."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & others:
        raise PermissionError(f"{path} is no folder of root's alone: no sandbox uid is leased there")


def journal_dir() -> Path:
    """:data:`JOURNAL_DIR`, made when missing (it and ``/var/lib/homefield`` ``0700``); :func:`lock_dir` when it
    cannot be made (a read-only or missing ``/var/lib``). Raises ``PermissionError`` when either is a link, not a
    folder or not root's, when ``/var/lib/homefield`` is open to others' writes, or the journal folder to anyone."""
    for path in (JOURNAL_DIR.parent, JOURNAL_DIR):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return lock_dir()
    _root_only(JOURNAL_DIR.parent, 0o022)
    _root_only(JOURNAL_DIR, 0o077)
    return JOURNAL_DIR


def setpriv_argv() -> list[str]:
    """``setpriv`` to the leased uid (:data:`UID_MARK`) with no supplementary group, no inheritable capability
    and an empty bounding set, then ``--`` and ``env -i``: the outer bubblewrap sets ``PWD`` (the host path of
    the folder it starts in) for what it runs, and the inner one's environment is what its sandbox's PID 1 shows
    in ``/proc/1/environ`` (empty, as a one-bubblewrap sandbox's; satk52 found the host path there)."""
    return [shutil.which("setpriv") or "setpriv", "--reuid", UID_MARK, "--regid", UID_MARK, "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--", shutil.which("env") or "/usr/bin/env", "-i"]


def marked(argv: Sequence[str], owned: Sequence[Path | str]) -> list[str]:
    """``argv`` with the folders ``owned`` in front: one word, :data:`OWN_MARK` and their paths' bytes in hex,
    comma-separated."""
    return [OWN_MARK + ",".join(os.fsencode(str(p)).hex() for p in owned), *argv]


def split_mark(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(reaper options, argv)`` for a :func:`marked` argv: ``uid=BASE:COUNT:LOCKDIR`` (:func:`pool`,
    :func:`lock_dir`), ``journals=DIR`` (:func:`journal_dir`) and ``own=HEX,HEX…``; ``([], argv)`` for any other
    argv. Raises ``PermissionError`` from :func:`lock_dir` or :func:`journal_dir`, ``ValueError`` when the pool is
    off (an argv built while it was on)."""
    if not argv or not argv[0].startswith(OWN_MARK):
        return [], list(argv)
    uids = pool()
    if uids is None:
        raise ValueError(f"a sandbox built for a uid of its own, but the pool is off ({ENV})")
    return [f"uid={uids[0]}:{uids[1]}:{lock_dir()}", f"journals={journal_dir()}", f"own={argv[0][len(OWN_MARK):]}"], \
        list(argv[1:])
