"""The reaper: a tiny supervisor that runs one command and outlives nothing (stdlib only).

Started by :func:`pytest_homefield.sandbox.procs.run_process` as ``python -I -S _reaper.py FD PPID
GRACE [fsize=BYTES] [as=BYTES] [pids=N:ROOT] [mem=BYTES:ROOT] [cpu=ROOT] [uid=BASE:COUNT:DIR journals=JDIR own=HEX,…]
[--pass-fds=N,M] -- ARGV...`` in a new session. It

* makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every descendant of the
  command — including one that called ``setsid`` or double-forked — stays below it;
* asks for ``SIGHUP`` when its parent (the homefield process that started it) dies
  (``prctl(PR_SET_PDEATHSIG)``), and checks that the parent is still ``PPID`` afterwards;
* starts ``ARGV`` (the command inherits cwd, environment, stdin/stdout/stderr and the descriptors of
  ``--pass-fds``, which the reaper then closes in itself) and writes ``ok`` or ``E<errno>`` (``K<errno>``: no
  session keyring of its own, :class:`KeyringRefused`) to the
  pipe ``FD`` so the caller can raise ``OSError`` as ``Popen`` would; with ``fsize=BYTES`` the
  command's ``RLIMIT_FSIZE`` is ``BYTES`` (and ``SIGXFSZ`` its default action); with ``as=BYTES`` its
  ``RLIMIT_AS`` (address space, per process; an allocation past it fails: ``MemoryError`` in Python); its
  ``RLIMIT_CORE`` is always 0, soft and hard (no core file; a piped core handler stores nothing), and so is
  its ``RLIMIT_MSGQUEUE`` (no POSIX message queue: their bytes count against the host user's, across namespaces);
  with ``pids=N:ROOT`` it makes the cgroup ``ROOT/homefield-<its pid>-<ns>`` with ``pids.max`` ``N``, puts
  the command in it before the ``exec`` (the reaper stays out) and removes it once every process of the
  command is reaped (the process cap, :mod:`pytest_homefield.sandbox.proccap`); a cgroup it cannot make
  is a command that cannot start (``E<errno>``), never one that runs uncapped; with ``mem=BYTES:ROOT`` the
  same with a memory cgroup holding ``BYTES`` of RAM and swap (the sandbox's memory, every process of it in
  all: the kernel's OOM killer picks its victim inside), and once the command is done it writes
  ``\noom K peak P`` to ``FD`` (``K``: the OOM kills in that cgroup; ``P``: the most bytes it held at once,
  :func:`peak_bytes`, left out where the kernel does not say) before it removes the cgroup; with ``cpu=ROOT``
  the same with a cpu cgroup at the default weight (one share of the CPU for the whole sandbox, however many
  processes or sessions it starts);
* runs ``ARGV`` of the form ``BWRAP --args @homefield-args:N OPT1 … OPTN REST…`` as
  ``BWRAP --args FD REST…`` with the ``N`` options NUL-separated in a memfd ``FD`` (bubblewrap reads
  and closes it), each ``--ro-bind-data @homefield-empty`` among them given an empty memfd of its own
  (a mask's source is then bubblewrap's own temp file, no host path in the sandbox's mountinfo), and with an
  empty environment: the sandbox's PID 1 inherits bubblewrap's command line
  and environment, which then name no bound host path and hold none of the user's variables (bubblewrap
  gives the command the environment its ``--setenv`` options set);
* with ``uid=BASE:COUNT:DIR`` (a sandbox under a host uid of its own, ``host_uids``): leases the first uid of the
  pool whose lock file in ``DIR`` it can ``flock`` (held until it exits; none: ``E11``, the command does not
  start), puts it in place of each ``@homefield-uid`` of ``ARGV`` (``setpriv``'s), hands the folders of ``own``
  (their paths' bytes in hex) to it before the start and back to each folder's owner once every process is
  reaped (:func:`hand_over`: ``lchown`` by descriptor, no link followed), with a journal of them meanwhile in
  ``<uid>.journal`` of ``journals=JDIR`` (on a disk a reboot keeps; :func:`journal`; left by a reaper killed outright,
  the next lease takes them back: :func:`take_back`; a uid a running process holds is never leased), and moves the
  inner bubblewrap's
  ``--args`` behind ``setpriv`` into memfds too;
* starts a bubblewrap argv (one with ``--args``) in a fresh session keyring of its own (:func:`_own_keyring`:
  the reaper's own, inherited, would be every sandbox's);
* when the command exits: kills whatever it left behind, reaps it, and exits with the command's
  status (or re-raises the command's terminating signal);
* on ``SIGTERM`` (a timeout): ``SIGTERM`` to the whole tree, ``GRACE`` seconds, then ``SIGKILL``;
  on ``SIGHUP``/``SIGINT`` (homefield died or is stopping): ``SIGKILL`` to the whole tree at once.
  In both cases it waits until every descendant is reaped before it exits.

It is run with ``-I -S`` by path so that nothing from the command's environment (``PYTHONPATH``, a
``sitecustomize`` in the workspace) is imported into it. Linux only; elsewhere the prctl calls are
skipped and the process-group kill is what remains.
"""

from __future__ import annotations

import _signal as signal  # the C module: signal.py's enums import enum and functools, 5 ms of every launch
import ctypes
import os
import resource
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs this short-lived process; mypy reads it
    from collections.abc import Callable
    from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Whether this process is a child subreaper (set in :func:`main`): then "no child left" means "no
#: descendant left".
SUBREAPER = False


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """PIDs of every live descendant of ``root`` (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) < 2 or fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    out: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def reap() -> bool:
    """Reap every exited child; whether a child is left (none: as a child subreaper, every living
    descendant would be a child or below one, so there is none, and no ``/proc`` walk is needed)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def children() -> list[int]:
    """PIDs of this process's children (``/proc/self/task/*/children``, one small read a thread: a
    child subreaper's orphaned descendants are its children); ``[]`` where the kernel has no such file."""
    out: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def kill_all(sig: int, walk: bool = True) -> None:
    """Send ``sig`` to this process's children and, with ``walk``, to every descendant ``/proc`` lists."""
    for pid in {*children(), *(descendants(os.getpid()) if walk else ())}:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def left(me: int) -> bool:
    """Whether a descendant of ``me`` (this process) is alive. A child subreaper asks ``waitpid``: every
    living descendant is its child or below one, so "no child" is exact and atomic. A ``/proc`` walk is
    not: a process that forks and exits in a loop (a "hopper") is missing from nearly every listing (its
    child's pid is newer than the listing, its own entry gone by the time it is read), and the tree looked
    empty while it lived on past its phase (atk16 F3)."""
    return reap() if SUBREAPER else bool(descendants(me))


#: Seconds :func:`stop_tree` keeps killing before it gives up on a process it cannot kill (one stuck in
#: an uninterruptible wait).
KILL_FOR_S = 30.0


def stop_tree(grace: float) -> None:
    """SIGTERM (when ``grace`` > 0) then SIGKILL every descendant, until none is left (:func:`left`).
    The SIGKILL rounds take the children at once (a hopper's next generation is this process's child
    the moment its parent exits) and walk ``/proc`` for deeper ones every 64th round; they sleep only
    after the first thousand, so a process that forks and exits cannot outrun them."""
    me = os.getpid()
    if not left(me):
        return
    if grace > 0:
        kill_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not left(me):
                return
            time.sleep(0.02)
    deadline = time.monotonic() + KILL_FOR_S
    rounds = 0
    while time.monotonic() < deadline:
        kill_all(signal.SIGKILL, walk=rounds % 64 == 0 or not SUBREAPER)
        if not left(me):
            return
        rounds += 1
        if rounds > 1000:
            time.sleep(0.005)


#: The placeholder of ``--args`` (see the module docstring; ``pytest_homefield.sandbox.bwrap.ARGS_MARK``).
ARGS_MARK = "@homefield-args:"


#: The placeholder of an empty file's descriptor after ``--ro-bind-data`` (``bwrap.EMPTY_MARK``).
EMPTY_MARK = "@homefield-empty"


def args_via_fd(cmd: list[str]) -> tuple[list[str], list[int]]:
    """``cmd`` with its ``--args`` options moved into a memfd, each ``--ro-bind-data`` :data:`EMPTY_MARK`
    among them given an empty memfd of its own (bubblewrap reads and closes each), and those fds, the
    options' first (none when ``cmd`` has no placeholder or memfds are missing: then the placeholder stays
    and bubblewrap refuses)."""
    if len(cmd) < 3 or cmd[1] != "--args" or not cmd[2].startswith(ARGS_MARK) or not hasattr(os, "memfd_create"):
        return cmd, []
    n = int(cmd[2][len(ARGS_MARK):])
    options, rest = cmd[3:3 + n], cmd[3 + n:]
    # a two-bubblewrap sandbox (host_uids): root's bubblewrap runs setpriv, which runs the inner one with --args
    tail = rest[2:2 + len(SETPRIV_TAIL)]
    two = len(rest) > len(SETPRIV_TAIL) + 2 and rest[0] == "--" and len(tail) == len(SETPRIV_TAIL) and \
        all(w == t or (t == UID_MARK and w.isdigit()) for w, t in zip(tail, SETPRIV_TAIL, strict=True))
    fds = [os.memfd_create("homefield-args", 0)]  # not inheritable: passed to the command alone
    for i, word in enumerate(options):
        if word == EMPTY_MARK and i and options[i - 1] == "--ro-bind-data":
            fds.append(os.memfd_create("homefield-empty", 0))
            options[i] = str(fds[-1])
    data = b"".join(os.fsencode(a) + b"\0" for a in options)
    view = memoryview(data)
    while view:
        view = view[os.write(fds[0], view):]
    os.lseek(fds[0], 0, os.SEEK_SET)
    if two:
        at = 2 + len(SETPRIV_TAIL)
        if rest[at + 1:at + 2] == ["-i"] and os.path.basename(rest[at]) == "env":  # env -i: no PWD of the outer's
            at += 2
        inner, inner_fds = args_via_fd(rest[at:])
        rest = [*rest[:at], *inner]
        fds += inner_fds
    return [cmd[0], "--args", str(fds[0]), *rest], fds


#: The words of ``setpriv`` after its path in a two-bubblewrap sandbox (``host_uids.setpriv_argv``), the leased
#: uid's place marked by :data:`UID_MARK`; ``env -i`` may follow them.
UID_MARK = "@homefield-uid"
SETPRIV_TAIL = ["--reuid", UID_MARK, "--regid", UID_MARK, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                "--"]


def lease(base: int, count: int, folder: str, journals: str | None = None) -> tuple[int, int, int] | None:
    """``(uid, lock, journal)``: the first uid of ``base`` … ``base+count-1`` that no running process holds
    (:func:`running_uids`) and whose lock file in ``folder`` and journal file ``<uid>.journal`` in ``journals``
    (``None``: ``folder``) this process could both lock (``flock``, held while the descriptors ``lock`` and
    ``journal`` are open: until this process exits; the journal's too, satk56: a homefield whose lock folder is
    another, its ``/run`` a private one, leased the same uid before its sandbox ran and took the other's folders
    back as a killed reaper's) and, when a killed reaper left a journal for it, take back (:func:`take_back`);
    ``journal`` open; else ``None``. Every other uid of the pool with a journal left (there, or in its lock file: an
    earlier version's) whose lock file and journal are not locked is taken back on the way (locked for that moment
    only)."""
    import fcntl
    journals = journals or folder
    left: set[int] = set()  # the uids of the pool with a journal written
    for where, suffix in ((folder, ""), (journals, ".journal")):
        try:
            with os.scandir(where) as entries:
                for e in entries:
                    name = e.name.removesuffix(suffix)
                    if e.name.endswith(suffix) and name.isdigit() and base <= int(name) < base + count \
                            and e.stat(follow_symlinks=False).st_size:
                        left.add(int(name))
        except OSError:
            pass
    busy = running_uids(base, base + count)
    leased: tuple[int, int, int] | None = None
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    for uid in range(base, base + count):
        if uid in busy or (leased is not None and uid not in left):
            continue
        try:
            fd = os.open(os.path.join(folder, str(uid)), flags, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            written = os.open(os.path.join(journals, f"{uid}.journal"), flags, 0o600)
        except OSError:
            os.close(fd)
            continue
        try:  # locked too: a homefield of another lock folder (its own ``/run``) sharing the journals' (satk56)
            fcntl.flock(written, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(written)
            os.close(fd)
            continue
        if not take_back(written, uid, fd) or leased is not None:
            os.close(written)
            os.close(fd)
        else:
            leased = (uid, fd, written)
    return leased


def running_uids(low: int, high: int, *, every_id: bool = False) -> set[int]:
    """The uids from ``low`` to ``high - 1`` a running process holds: the owner of its ``/proc`` folder (its
    effective uid; a process that may not be dumped shows its user namespace's root's, or 0), or with
    ``every_id`` its real, effective, saved and file system uids (``/proc/PID/status``, ten times the cost)."""
    found: set[int] = set()
    try:
        pids = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            if not every_id:
                ids = [os.stat(f"/proc/{pid}").st_uid]
            else:
                with open(f"/proc/{pid}/status", "rb") as f:
                    ids = [int(u) for line in f if line.startswith(b"Uid:") for u in line.split()[1:]]
        except (OSError, ValueError):
            continue
        found.update(u for u in ids if low <= u < high)
    return found


def journal(fd: int, paths: list[str], owners: list[tuple[int, int, int, int] | None]) -> None:
    """Write into the lease's journal file ``fd`` what is handed to its uid, and onto the disk (``fsync``: a reboot
    keeps it): a line a folder of ``paths`` whose ``owners`` (:func:`owner`) is known, ``HEX UID GID DEV INO FSID``
    (the path's bytes in hex; the folder's owner, group, device and inode, and its file system's id, :func:`fsid`);
    :func:`take_back` reads it should this process be killed before it wipes it."""
    lines = [f"{os.fsencode(p).hex()} {' '.join(map(str, was))} {fsid(p)}\n"
             for p, was in zip(paths, owners, strict=True) if was is not None]
    os.ftruncate(fd, 0)
    os.pwrite(fd, "".join(lines).encode(), 0)
    if lines:
        os.fsync(fd)


def take_back(fd: int, uid: int, old: int | None = None) -> bool:
    """What a killed reaper left handed to ``uid`` (the journal file ``fd``; ``old``: the uid's lock file, locked by
    this process, where an earlier version wrote it): each folder of it that is still ``uid``'s and the same inode
    of the same device or file system (a reboot may number an anonymous device anew: btrfs, overlayfs), and every
    entry in it, back to its owner and group (:func:`hand_over`, no link followed), then the journals wiped;
    ``True``. ``False`` (nothing done) when a process of ``uid`` still runs (:func:`running_uids` with every id).
    ``True`` for no journal."""
    data = b"\n".join(_read_all(each) for each in (fd, old) if each is not None)
    if not data.strip():
        return True
    if running_uids(uid, uid + 1, every_id=True):
        return False
    for line in data.split(b"\n"):
        parts = line.split()
        if len(parts) in (5, 6):  # 5: no file system id (an earlier version's)
            try:
                path, ids = os.fsdecode(bytes.fromhex(parts[0].decode())), [int(x) for x in parts[1:]]
            except ValueError:
                continue
            hand_over([path], ids[0], ids[1], expect=(ids[2], ids[3], uid), fs=ids[4] if len(ids) == 5 else 0)
    for each in (fd, old):
        if each is not None:
            os.ftruncate(each, 0)
    return True


def _read_all(fd: int) -> bytes:
    """The whole content of the file ``fd``, read from its start (``pread``: its offset is left as it is)."""
    got = b""
    while chunk := os.pread(fd, 65536, len(got)):
        got += chunk
    return got


def fsid(path: str) -> int:
    """The id of the file system holding the folder ``path`` (``statfs``' ``f_fsid``: from the file system's UUID on
    ext4 and btrfs, where the device number may change across a reboot), 0 when unknown; no link followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        return os.fstatvfs(fd).f_fsid
    except OSError:
        return 0
    finally:
        os.close(fd)


def owner(path: str) -> tuple[int, int, int, int] | None:
    """``(uid, gid, device, inode)`` of ``path`` (no link followed), ``None`` when it cannot be read."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_uid, st.st_gid, st.st_dev, st.st_ino


#: Descriptors :func:`hand_over` holds open at most while it walks (levels above those are left by ``..``).
HAND_OVER_FDS = 16


def hand_over(paths: list[str], uid: int, gid: int, *, expect: tuple[int, int, int] | None = None,
              fs: int = 0) -> None:
    """Every entry of the folders ``paths`` and the folders themselves owned by ``uid`` and ``gid``: ``lchown``
    (no link followed) while walking by descriptor, depth first (``O_NOFOLLOW`` opens, ``dir_fd``), so a link or a
    folder swapped for one leads nowhere outside; a folder of ``paths`` itself last (a walk cut short leaves it as it
    was); an entry that vanishes or cannot be changed is left as it is. At most :data:`HAND_OVER_FDS` descriptors
    are open at once, at any depth: a level whose descriptor was closed is opened again as ``..`` of the one below
    it, and only when that is the same folder (device and inode) as before; else the walk of that path ends there
    (satk54: one descriptor a level, a chain of folders deeper than this process's ``RLIMIT_NOFILE`` was handed
    back only down to that depth, and what lay below stayed the leased uid's, a set-user-ID program's bit too).
    With ``expect`` (``(device, inode, owner)``) a folder of ``paths`` that is another is left alone: its owner or
    inode another, or its device another and its file system's id not ``fs`` (:func:`fsid`; 0: unknown, the device
    decides)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    for path in paths:
        try:
            top = os.open(path, flags)
        except OSError:
            continue
        if expect is not None:
            st = os.fstat(top)
            same_fs = st.st_dev == expect[0] or bool(fs and os.fstatvfs(top).f_fsid == fs)
            if (st.st_ino, st.st_uid) != expect[1:] or not same_fs:
                os.close(top)
                continue
        _hand_tree(top, uid, gid)
        try:
            os.chown(top, uid, gid)
        except OSError:
            pass
        os.close(top)


def _hand_tree(top: int, uid: int, gid: int) -> None:
    """:func:`hand_over`'s walk below the folder ``top`` (left open)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    # a level: [its descriptor (None: closed), the names left in it, its (device, inode) once its descriptor is
    # closed (the top's never is)]
    levels: list[list[Any]] = [[top, _entries(top), None]]
    opened = 1
    try:
        while levels:
            level = levels[-1]
            fd, names = level[0], level[1]
            if not names:
                levels.pop()
                if not levels:
                    return
                up = levels[-1]
                again = None
                if up[0] is None:  # its descriptor was closed on the way down: ``..`` of this one, if still it
                    try:
                        again = os.open("..", flags, dir_fd=fd)
                    except OSError:
                        pass
                    if again is not None and _ident(again) != up[2]:
                        os.close(again)
                        again = None
                os.close(fd)
                opened -= 1
                if up[0] is None:
                    if again is None:
                        return
                    up[0] = again
                    opened += 1
                continue
            name, is_dir = names.pop()
            try:
                os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)
            except OSError:
                pass
            if not is_dir:
                continue
            try:
                child = os.open(name, flags, dir_fd=fd)
            except OSError:
                continue
            levels.append([child, _entries(child), None])
            opened += 1
            if opened > HAND_OVER_FDS:  # the shallowest open level but the top's: closed, opened again by ``..``
                for shallow in levels[1:-1]:
                    if shallow[0] is not None:
                        shallow[2] = _ident(shallow[0])  # to know it again when it is opened as ``..``
                        os.close(shallow[0])
                        shallow[0] = None
                        opened -= 1
                        break
    finally:
        for level in levels[1:]:
            if level[0] is not None:
                os.close(level[0])


def _ident(fd: int) -> tuple[int, int]:
    """``(device, inode)`` of the open file ``fd``."""
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _entries(fd: int) -> list[tuple[str, bool]]:
    """The names in the folder ``fd`` and whether each is a folder (not through a link); ``[]`` when unreadable."""
    try:
        with os.scandir(fd) as entries:
            return [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    except OSError:
        return []


def spawn(cmd: list[str], pass_fds: list[int], setup: Callable[[], None],
          env: dict[str, str] | None = None) -> int:
    """Start ``cmd`` (``PATH`` searched) as ``subprocess.Popen(cmd, pass_fds=…, preexec_fn=setup, env=env)``
    would: stdin/stdout/stderr and ``pass_fds`` inherited, every other descriptor closed, ``SIGPIPE``
    and ``SIGXFSZ`` back to their default action (Python ignores both, and an ignored signal stays
    ignored across ``exec``), then ``setup()`` in the child; ``env``: its whole environment (``None``: this
    process's); returns its pid. Raises ``OSError`` (with the ``errno`` of the failed ``exec``) when it cannot
    start, told through a close-on-exec pipe (:class:`KeyringRefused` when ``setup`` raised it). (``subprocess``
    itself would cost this short-lived process a third of its start-up CPU.)"""
    path = cmd[0] if env is None else _which(cmd[0])
    errors_r, errors_w = os.pipe2(os.O_CLOEXEC)
    top = _top_fd()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            low = 3
            for n in sorted({errors_w, *pass_fds}):
                if n >= low:
                    os.closerange(low, n)
                    low = n + 1
            os.closerange(low, top + 1)
            for n in pass_fds:
                os.set_inheritable(n, True)
            for name in ("SIGPIPE", "SIGXFSZ"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), signal.SIG_DFL)
            setup()
            if env is None:
                os.execvp(path, cmd)
            os.execve(path, cmd, env)
        except KeyringRefused as exc:
            os.write(errors_w, f"K{exc.errno or 2}".encode())
        except OSError as exc:
            os.write(errors_w, str(exc.errno or 2).encode())
        except BaseException:
            os.write(errors_w, b"2")
        os._exit(127)
    os.close(errors_w)
    with os.fdopen(errors_r, "rb") as errors:
        failed = errors.read()
    if failed:
        os.waitpid(pid, 0)
        errno = int(failed.lstrip(b"K"))
        raise (KeyringRefused if failed.startswith(b"K") else OSError)(errno, os.strerror(errno))
    return pid


def _which(name: str) -> str:
    """``name`` found on this process's ``PATH`` as ``execvp`` would (a name with a ``/`` as it is); the
    name itself when found nowhere (the ``exec`` then fails with ``ENOENT``)."""
    if "/" in name:
        return name
    for folder in (os.environ.get("PATH") or os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return name


def _top_fd() -> int:
    """The highest open descriptor (``/proc/self/fd``), else the descriptor limit: where closing ends
    (a loop up to a limit of a million costs where ``close_range`` is missing)."""
    try:
        return max(int(n) for n in os.listdir("/proc/self/fd"))
    except (OSError, ValueError):
        return int(os.sysconf("SC_OPEN_MAX"))


def make_cgroup(root: str, limits: list[tuple[str, str]], name: str) -> str:
    """Make the cgroup ``root/name`` holding ``limits`` (``(file, value)``, written in that order; a file the
    kernel lacks is skipped when its name ends with ``?``); returns its path. Raises ``OSError``."""
    path = os.path.join(root, name)
    os.mkdir(path)
    try:
        for file, value in limits:
            optional = file.endswith("?")
            file = file.rstrip("?")
            if optional and not os.path.exists(os.path.join(path, file)):
                continue
            with open(os.path.join(path, file), "w") as f:
                f.write(value)
    except BaseException:
        os.rmdir(path)
        raise
    return path


#: The part of the machine's TCP pool (``tcp_mem``'s pressure threshold) one sandbox's sockets may hold.
SOCKET_POOL_SHARE = 8


def socket_limit(size: int) -> int:
    """Bytes a v1 memory cgroup of ``size`` lets its sockets' buffers hold (``memory.kmem.tcp.limit_in_bytes``):
    ``size``, and no more than an eighth of the pressure threshold of the pool of socket memory that every
    cgroup and network namespace of the machine shares (``net.ipv4.tcp_mem``, pages), so that no sandbox
    brings the machine under pressure alone, nor a handful of them together (atk25: without a limit, v1 charges
    sockets to no cgroup; one test process held 2.3 GB over its own loopback, past this machine's 2.2 GB pool,
    and the kernel then reset other transfers on the host)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_mem") as f:
            pressure = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return size
    return max(1 << 20, min(size, pressure // SOCKET_POOL_SHARE))


def make_cgroups(options: dict[str, str]) -> tuple[list[str], str | None]:
    """The cgroups of ``pids=N:ROOT`` (``pids.max`` ``N``), ``mem=BYTES:ROOT`` (cgroup v1:
    ``memory.limit_in_bytes`` then ``memory.memsw.limit_in_bytes``, RAM and swap, where the kernel accounts
    swap, and ``memory.kmem.tcp.limit_in_bytes`` :func:`socket_limit`: v1 charges sockets' buffers to a cgroup
    only once that is set; v2: ``memory.max``, which counts them, and ``memory.swap.max`` 0) and ``cpu=ROOT``
    (the default weight) in ``options``, each ``ROOT/homefield-<this pid>-<ns>``
    (``<ns>``: the time, so that one a killed reaper of the same pid left is no clash; one folder where both
    roots are the same, cgroup v2): ``(their paths, the memory one or None)``. Raises ``OSError``
    (``ValueError`` for a malformed option), having removed what it made."""
    name = f"homefield-{os.getpid()}-{time.time_ns()}"
    by_root: dict[str, list[tuple[str, str]]] = {}
    mem_root: str | None = None
    if "pids" in options:
        n, root = options["pids"].split(":", 1)
        by_root.setdefault(root, []).append(("pids.max", str(int(n))))
    if "mem" in options:
        size, mem_root = options["mem"].split(":", 1)
        v2 = not os.path.exists(os.path.join(mem_root, "memory.limit_in_bytes")) and \
            os.path.exists(os.path.join(mem_root, "cgroup.subtree_control"))
        by_root.setdefault(mem_root, []).extend(
            [("memory.max", str(int(size))), ("memory.swap.max?", "0")] if v2 else
            [("memory.limit_in_bytes", str(int(size))), ("memory.memsw.limit_in_bytes?", str(int(size))),
             ("memory.kmem.tcp.limit_in_bytes?", str(socket_limit(int(size))))])
    if "cpu" in options:  # the default weight: a share equal to every other sandbox's
        by_root.setdefault(options["cpu"], [])
    made: list[str] = []
    try:
        for root, limits in by_root.items():
            made.append(make_cgroup(root, limits, name))
    except BaseException:
        for path in made:
            remove_cgroup(path)
        raise
    return made, (os.path.join(mem_root, name) if mem_root is not None else None)


def oom_kills(path: str) -> int:
    """How many processes the kernel's OOM killer killed in the memory cgroup ``path``: ``oom_kill`` of
    ``memory.events`` (cgroup v2) or of ``memory.oom_control`` (v1, Linux 4.13+); 0 when neither says."""
    for file in ("memory.events", "memory.oom_control"):
        try:
            with open(os.path.join(path, file)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def peak_bytes(path: str) -> int | None:
    """The most bytes the memory cgroup ``path`` held at once since it was made: ``memory.peak`` (cgroup v2,
    Linux 5.19+) or ``memory.max_usage_in_bytes`` (v1); both count what its processes hold and the page cache
    and tmpfs pages charged to it. ``None`` when neither can be read."""
    for file in ("memory.peak", "memory.max_usage_in_bytes"):
        try:
            with open(os.path.join(path, file)) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            continue
    return None


def remove_cgroup(path: str) -> None:
    """Remove the (empty) cgroup ``path``: every process of the command is reaped, yet the kernel may
    take a moment to let its last ones go; tried for up to 2 s, then left to the sweep."""
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


class _Stop(Exception):
    """Raised by the signal handler to leave the wait for the command."""


def main(argv: list[str]) -> int:
    fd, ppid, grace = int(argv[1]), int(argv[2]), float(argv[3])
    sep = argv.index("--", 4)
    options = dict(o.split("=", 1) for o in argv[4:sep])
    cmd = argv[sep + 1:]
    fsize = int(options["fsize"]) if "fsize" in options else None
    address_space = int(options["as"]) if "as" in options else None
    keep = [int(n) for n in options.get("--pass-fds", "").split(",") if n]
    cgroups: list[str] = []
    pending: list[int] = []
    armed: list[bool] = []

    def on_signal(signum: int, frame: object) -> None:
        pending.append(signum)
        if armed:
            armed.clear()
            raise _Stop()

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    global SUBREAPER
    SUBREAPER = _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGHUP)
    if os.getppid() != ppid:  # the parent died before prctl took effect
        os.write(fd, b"E3")
        return 1

    def child_setup() -> None:
        # the command itself dies with the reaper, should the reaper be killed outright
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for cgroup in cgroups:  # into its capped cgroups before the exec: every process it starts is counted
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        # no core dump, soft and hard (satk43): a crash in the sandbox ran the host's core handler, which the
        # kernel starts outside every namespace and cgroup of the sandbox (systemd-coredump, apport: as root, its
        # memory image stored under /var, a backtrace computed and logged per crash), or wrote a core where its
        # own process raised the limit to the hard one; with 0 they store nothing
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # no POSIX message queue, soft and hard (satk46): the kernel charges a queue's bytes to the host uid at
        # every user namespace level up to the host's, whatever IPC namespace holds it, against the limit its
        # creator held (819,200 bytes): a sandbox that made 9 queues and kept them took them all, and every
        # other sandbox of the uid, and the user's own processes, got EMFILE from mq_open while it ran
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
        if address_space is not None:
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            cap = address_space if hard == resource.RLIM_INFINITY else min(address_space, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    owned: list[str] = []
    owners: list[tuple[int, int, int, int] | None] = []
    leased: tuple[int, int, int] | None = None
    if "uid" in options:  # a sandbox under a host uid of its own (host_uids): leased for this process's life
        base, count, folder = options["uid"].split(":", 2)
        leased = lease(int(base), int(count), folder, options.get("journals"))
        if leased is None:
            os.write(fd, b"E11")  # EAGAIN: every uid of the pool is in use
            return 127
        uid = leased[0]
        cmd = [str(uid) if word == UID_MARK else word for word in cmd]
        owned = [os.fsdecode(bytes.fromhex(h)) for h in options.get("own", "").split(",") if h]
        owners = [owner(p) for p in owned]
        journal(leased[2], owned, owners)  # a SIGKILL from here on: the next lease takes them back (take_back)
        hand_over(owned, uid, uid)
    try:
        status = _main(cmd, options, fd, keep, child_setup, pending, armed, grace, cgroups)
    finally:
        # every process of the sandbox is reaped: each folder, and all it holds now, back to the folder's owner
        for path, was in zip(owned, owners, strict=True):
            if was is not None:
                hand_over([path], was[0], was[1])
        if leased is not None:
            os.ftruncate(leased[2], 0)
    return exit_like(status)


def _main(cmd: list[str], options: dict[str, str], fd: int, keep: list[int], child_setup: Callable[[], None],
          pending: list[int], armed: list[bool], grace: float, cgroups: list[str]) -> int:
    """:func:`main` once the uid is leased: the cgroups (made into ``cgroups``, which ``child_setup`` reads),
    :func:`supervise`, the report; the command's status (``os.waitstatus_to_exitcode``), 127 when it could not
    start."""
    memory: str | None = None
    if "pids" in options or "mem" in options or "cpu" in options:
        try:
            made, memory = make_cgroups(options)
            cgroups.extend(made)
        except (OSError, ValueError) as exc:
            os.write(fd, f"E{getattr(exc, 'errno', None) or 1}".encode())
            return 127
    try:
        status = supervise(cmd, fd, keep, child_setup, pending, armed, grace, keep_fd=memory is not None)
        if memory is not None:  # what the caller reads once the command is done: the OOM kills in its cgroup
            try:  # a caller that wants no report (a service's, spawn_process) has closed its end
                with open(fd, "wb", closefd=True) as report:
                    peak = peak_bytes(memory)
                    report.write(f"\noom {oom_kills(memory)}{f' peak {peak}' if peak is not None else ''}".encode())
            except OSError:
                pass
    finally:
        for cgroup in cgroups:
            remove_cgroup(cgroup)
    return status


#: ``keyctl(2)``'s system call number per machine (``os.uname().machine``); elsewhere :func:`_own_keyring` joins none.
KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "loongarch64": 219, "i686": 288, "ppc64le": 271,
                  "s390x": 280}
#: ``keyctl``'s operations: the id of a special keyring; join (here: make, with no name) a session keyring.
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING = 0, 1
#: ``keyctl``'s name for the caller's session keyring (``@s``).
KEY_SPEC_SESSION_KEYRING = -3


class KeyringRefused(OSError):
    """No session keyring of its own could be made for a sandbox while the one it would inherit is in its reach
    (:func:`_own_keyring`): it does not start (the caller is told ``K<errno>``)."""


def _own_keyring(setup: Callable[[], None]) -> Callable[[], None]:
    """``setup`` then, in the child, a fresh anonymous session keyring of its own (gatk53): a process inherits its
    parent's session keyring across ``fork``, ``exec``, ``setpriv`` and every namespace bubblewrap makes, and
    possesses it (it may add keys there and read them); a homefield with a session keyring of its own (a systemd
    service's, ``KeyringMode=private``; a ``pam_keyinit`` login) handed it to every sandbox, and a key one sandbox
    added was read by the next, and by one running beside it. Only a sandbox's (a bubblewrap argv with ``--args``):
    a command the user runs unsandboxed keeps the user's keyring. A kernel or filter refusing ``keyctl`` altogether
    (the session keyring's id not given either) refuses it to the sandbox too (a seccomp filter is inherited):
    nothing to do then. A join refused while the inherited keyring is in reach (the key quota of the uid full,
    ``kernel.keys.maxkeys``, ``maxbytes``; no memory) raises :class:`KeyringRefused` (sand54: the sandbox ran in
    the inherited keyring and read a key put there before it); so does a ``libc`` without ``syscall``."""
    number = KEYCTL_SYSCALL.get(os.uname().machine)

    def run() -> None:
        setup()
        if number is None:
            return
        try:
            syscall = ctypes.CDLL(None, use_errno=True).syscall
        except (OSError, AttributeError) as exc:
            raise KeyringRefused(38, "no syscall() in this libc") from exc  # ENOSYS
        if syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
            err = ctypes.get_errno()
            if syscall(number, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) >= 0:
                raise KeyringRefused(err, os.strerror(err))
    return run


def supervise(cmd: list[str], fd: int, keep: list[int], child_setup: Callable[[], None], pending: list[int],
              armed: list[bool], grace: float, *, keep_fd: bool = False) -> int:
    """Start ``cmd`` (:func:`spawn`), tell the caller on ``fd`` (closed then, unless ``keep_fd``), wait for it
    and stop its tree (see the module docstring); its status (``os.waitstatus_to_exitcode``: negative for a
    signal), 127 when it could not start (``fd`` then closed)."""
    cmd, args_fds = args_via_fd(cmd)
    try:
        # bubblewrap (a command with --args) runs with no environment: it sets the sandbox's own from
        # scratch (--clearenv), and its process is the sandbox's PID 1, whose /proc/1/environ every process
        # inside can read (the user's whole environment, secrets and the repository's path: atk30)
        child_pid = spawn(cmd, [*keep, *args_fds], _own_keyring(child_setup) if args_fds else child_setup,
                          env={} if args_fds else None)
    except OSError as exc:  # K<errno>: the sandbox's own session keyring (KeyringRefused)
        os.write(fd, f"{'K' if isinstance(exc, KeyringRefused) else 'E'}{exc.errno or 2}".encode())
        return 127
    for args_fd in args_fds:
        os.close(args_fd)
    for kept in keep:  # the command holds them now; the reaper must not keep a pipe open
        os.close(kept)
    os.write(fd, b"ok")
    if not keep_fd:
        os.close(fd)
    status = 1
    try:
        armed.append(True)
        if pending:
            raise _Stop()
        while True:
            try:
                pid, st = os.waitpid(-1, 0)  # reaps orphaned descendants as they exit, too
            except ChildProcessError:
                status = 1
                break
            if pid == child_pid:
                armed.clear()
                status = os.waitstatus_to_exitcode(st)
                stop_tree(0.0)  # the command is done: nothing it left behind may live on
                break
    except _Stop:
        armed.clear()
        got = pending[0]
        stop_tree(grace if got == signal.SIGTERM else 0.0)
        status = -got
    reap()
    return status


def exit_like(status: int) -> int:
    """Exit as the command did: ``status`` (``os.waitstatus_to_exitcode``) when it exited, else die of its
    signal here, so the caller sees it (``128 + signal`` returned should that fail)."""
    if status < 0:
        try:
            signal.signal(-status, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            pass
        os.kill(os.getpid(), -status)
        time.sleep(1)
        return 128 - status
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
