"""The bubblewrap sandbox (docs/contracts.md §7, §9): argv builder, the interpreter's read-only paths,
and a once-per-process probe that bubblewrap works here.

:func:`bwrap_argv` turns a :class:`Policy` into ``bwrap … -- COMMAND`` using bubblewrap's own options
only: the system (``/usr``, the ``/bin``-style symlinks, and of ``/etc`` only the entries a toolchain
needs, :data:`ETC_ENTRIES`: never ``shadow`` or ``ssh``; never ``/opt`` as a whole) and every path of
``Policy.ro`` bound read-only (``--ro-bind``), ``Policy.rw`` bound read-write (``--bind``), a fresh
``--proc`` (its ``/proc/locks`` and ``/proc/key-users``, which show other sandboxes' locks and keys, each
behind an empty file:
:data:`PROC_MASKED`; its ``/proc/sys`` read-only, :data:`PROC_READ_ONLY`), ``--dev`` and ``--tmpfs /tmp``,
new PID, IPC and UTS namespaces (``--unshare-pid``,
``--unshare-ipc``, ``--unshare-uts``) and a user namespace where the kernel allows one
(``--unshare-user-try``: its own keyrings, nothing a sandbox adds with ``add_key`` reaches the next;
closed to further user namespaces, ``--disable-userns``, where bubblewrap can: :func:`userns_args`),
every capability dropped when homefield runs as root (``--cap-drop ALL``: bubblewrap started by root
otherwise keeps them all, and a process inside could remount a read-only bind read-write), the
network kept (``--share-net`` is the default of not
unsharing it) or removed (``--unshare-net``), ``--die-with-parent``, ``--new-session``, and the
environment set from scratch (``--clearenv`` then ``--setenv`` per variable). Nothing else of the
host filesystem exists inside: not the user's repository, not ``.homefield/``, not the pristine
copies or other attempts' folders, not the user's home. With its own PID namespace the sandbox has
its own PID 1: when the command ends, every process it left behind (a ``setsid`` daemon too) is
killed by the kernel.

Interpreters here live outside ``/usr`` (pyenv under ``/root/.pyenv``, venvs under ``/tmp`` or
``/work/venvs``, GitHub's runners under ``/opt/hostedtoolcache``): :func:`python_paths` finds the
prefixes to bind read-only from ``sys.prefix``, ``sys.base_prefix`` and the test command's ``python``,
and :func:`program_paths` a client's install. ``/opt`` holds whatever else is installed on the host
(other toolchains, vendors' agents and their credentials): only those paths of it are bound, never the
rest (issue 30). Source: bubblewrap(1), 0.8.
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

from pytest_homefield.sandbox import host_uids
from pytest_homefield.sandbox.copies_by_content import content_copies
from pytest_homefield.sandbox.editable import editable_binds
from pytest_homefield.sandbox.proccap import inside_argv, marked
from pytest_homefield.sandbox.project_copies import copies_of_protected
from pytest_homefield.sandbox.protected import holds_home, holds_protected, homes, protected, touches_protected
from pytest_homefield.sandbox.tempdirs import mkdtemp, owner_tag
from pytest_homefield.spelling import spell

__all__ = ["Policy", "bwrap_argv", "python_paths", "interpreter_paths", "is_prefix", "program_paths",
           "package_paths", "inside_path", "probe", "system_masks", "BwrapUnavailable", "bwrap_executable",
           "sandboxed_argv", "tests_ro_paths", "SYSTEM_DIRS", "install_hint", "REPORTER_DIR", "ARGS_MARK", "EMPTY_MARK",
           "ETC_ENTRIES", "userns_args"]

#: Folders of the system bound read-only when present (symlinks such as ``/bin -> usr/bin`` are
#: recreated as symlinks). Not ``/etc``: only :data:`ETC_ENTRIES` of it. Not ``/opt``: only the
#: interpreters' and clients' paths under it (:func:`python_paths`, :func:`program_paths`).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: The entries of ``/etc`` a Python toolchain, git, node and the agents' clients need, each bound
#: read-only when present (globs allowed): name resolution, certificates (not ``ssl/private``), users
#: and groups (no password hashes there), the dynamic linker, alternatives, time zone, the
#: interpreter's own folder (Debian's ``python3.11/sitecustomize.py``), git's system configuration,
#: MIME and magic data, locale, shells. Never ``shadow``, ``gshadow``, ``ssh`` (host keys),
#: ``sudoers``, ``pip.conf`` or ``npmrc`` (credentials): an agent running as root inside reads none.
ETC_ENTRIES = ("resolv.conf", "hosts", "host.conf", "hostname", "nsswitch.conf", "gai.conf", "services", "protocols",
               "networks", "ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki/tls/certs",
               "pki/ca-trust", "crypto-policies", "passwd", "group", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
               "alternatives", "localtime", "timezone", "python*", "gitconfig", "mime.types", "magic", "magic.mime",
               "locale.alias", "locale.conf", "default/locale", "os-release", "lsb-release", "debian_version",
               "shells", "terminfo", "inputrc", "bash.bashrc", "profile", "fonts", "xml", "mtab")

#: Folder holding the standalone reporter module ``homefield_reporter`` (put on a test run's ``PYTHONPATH``).
REPORTER_DIR = Path(__file__).resolve().parent / "_reporter"

def install_hint() -> str:
    """How to get bubblewrap, for the one-line refusals (the option spelled for the front end in use)."""
    return ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) "
            f"or pass {spell('sandbox')} none to accept the risk")


#: The placeholder after ``--args`` in an argv of :func:`bwrap_argv` with ``args_fd=True``: the reaper
#: (:mod:`pytest_homefield.sandbox._reaper`, which starts every command of
#: :func:`~pytest_homefield.sandbox.procs.run_process`) moves the options into a memfd, so bubblewrap's
#: command line (which the sandbox's PID 1 shows in ``/proc/1/cmdline``) names no bound host path.
ARGS_MARK = "@homefield-args:"
#: The placeholder of an empty file's descriptor after ``--ro-bind-data`` (behind ``--args`` only): the
#: reaper gives each its own empty memfd, so a mask's source is bubblewrap's own deleted temp file
#: (``/bindfileXXXXXX`` on its tmpfs in ``/proc/self/mountinfo``), never a host path (:func:`_empty_args`).
EMPTY_MARK = "@homefield-empty"


class BwrapUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces here; the message is one line."""


@dataclass(frozen=True)
class Policy:
    """What one sandboxed command may see.

    * ``cwd``: the working directory inside (it must be in ``rw`` or ``ro``);
    * ``rw`` / ``ro``: host paths bound at the same path, read-write / read-only (missing ones are
      skipped);
    * ``env``: the whole environment inside (nothing else is inherited);
    * ``network``: keep the host's network (an agent calling its API) or get none;
    * ``tmpfs``: folders that get an empty, private tmpfs (``/tmp`` by default);
    * ``dirs``: empty folders created inside the tmpfs (e.g. a ``HOME``);
    * ``tmpfs_bytes``: when set, each tmpfs holds at most this many bytes, ``/dev/shm`` is a tmpfs
      of that size too and the rest of ``/dev`` is read-only (an agent cannot fill memory there);
    * ``ro_at``: ``(source, destination)`` pairs, a host folder bound read-only at another path (the copy
      under test's folder at the path an editable install names: :mod:`.editable`);
    * ``owned``: folders besides ``rw`` handed to the sandbox's host uid for its run where it has one of its own
      (:mod:`.host_uids`: a test run's copy, a relay's socket folder), and back after.
    """

    cwd: Path
    rw: Sequence[Path] = ()
    ro: Sequence[Path] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    network: bool = False
    tmpfs: Sequence[Path] = (Path("/tmp"),)
    dirs: Sequence[Path] = ()
    tmpfs_bytes: int | None = None
    owned: Sequence[Path] = ()
    ro_at: Sequence[tuple[Path, Path]] = ()


def _system_roots() -> list[str]:
    """The :data:`SYSTEM_DIRS` that are folders here, not links (each bound read-only as itself), in that order."""
    return [d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)]


def _system_args() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return [*args, *_etc_args()]


@functools.lru_cache(maxsize=1)
def _etc_args() -> tuple[str, ...]:
    """The :data:`ETC_ENTRIES` present: a symlink whose target lies in a bound system folder or
    ``/proc`` (``localtime -> /usr/share/zoneinfo/…``, ``mtab -> ../proc/self/mounts``) is recreated as
    that symlink; any other entry is bound read-only (a link elsewhere, ``resolv.conf ->
    /run/systemd/…``, through to its target)."""
    roots = _system_roots() + ["/proc"]
    args: list[str] = []
    for pattern in ETC_ENTRIES:
        for path in sorted(glob.glob(os.path.join("/etc", pattern))):
            if os.path.islink(path):
                target = os.readlink(path)
                where = os.path.normpath(os.path.join("/etc", os.path.dirname(path[5:]), target))
                if _under(where, roots):
                    args += ["--symlink", target, path]
                    continue
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
    return tuple(args)


def _norm(paths: Iterable[Path | str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        s = os.path.abspath(str(p))
        if s not in out and os.path.exists(s):
            out.append(s)
    return out


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def bwrap_argv(command: Sequence[str], policy: Policy, *, bwrap: str = "bwrap", args_fd: bool = False,
               masks: bool = True) -> list[str]:
    """``[bwrap, options…, "--", *command]`` for ``policy`` (see the module docstring); with
    ``args_fd``, ``[bwrap, "--args", ARGS_MARK + str(len(options)), options…, "--", *command]``, to be
    started by :func:`~pytest_homefield.sandbox.procs.run_process` (see :data:`ARGS_MARK`), behind the
    mark of a pids cgroup where one can be made (:func:`~pytest_homefield.sandbox.proccap.marked`).
    ``command`` runs behind ``prlimit --nproc`` (:func:`~pytest_homefield.sandbox.proccap.inside_argv`):
    the sandbox's processes are capped at ``--max-procs`` in its own user namespace.

    Binds are ordered by depth so a read-write folder inside a read-only one (or inside the tmpfs)
    stays writable; a read-only path inside an already read-only one is left out, and so is one that
    holds a protected folder (:mod:`.protected`: the repository under benchmark) or the user's home folder
    (:func:`~.protected.holds_home`: a client's install prefix ``~`` of ``~/bin/NAME``, satk58); a protected folder
    under a system folder is hidden by an empty tmpfs. A read-only path that is a symlink whose real path is visible
    (a system folder, another path of ``policy``) is made that symlink (``--symlink REAL PATH``: a launcher
    ``~/bin/claude -> <install>`` runs from its install, whose relative imports still resolve, satk60).
    Reads only which of the paths exist and the
    protected folders, and finds the copies of the project to mask (:func:`_mask_args`; ``masks=False``:
    none, for :func:`probe` alone, whose sandbox shows nothing of a task).
    """
    sys_roots = _system_roots()
    hidden = [str(p) for p in protected() if _under(str(p), sys_roots)]
    files = [*_system_args(), *[a for p in hidden for a in ("--tmpfs", p)]]
    size = [] if policy.tmpfs_bytes is None else ["--size", str(int(policy.tmpfs_bytes))]
    dev = ["--dev", "/dev", *([*size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"] if size else [])]
    tmpfs = [a for t in policy.tmpfs for a in (*size, "--tmpfs", str(t))] + [a for d in policy.dirs
                                                                              for a in ("--dir", str(d))]
    rw = _norm(policy.rw)
    home = homes()  # once for the policy's paths (not kept: HOME may change between calls)
    ro = [p for p in _norm(policy.ro) if p not in rw and not holds_protected(p) and not holds_home(p, home)]
    binds: list[tuple[int, str, str, str]] = []
    for p in ro:
        # already visible read-only through a system folder or a shallower read-only bind
        if (_under(p, sys_roots) and not _under(p, hidden)) or \
                any(q != p and _under(p, [q]) and not _under(p, rw) for q in ro):
            continue
        if os.path.islink(p) and os.path.realpath(os.path.dirname(p)) == os.path.dirname(p):
            target = os.path.realpath(p)
            if _under(target, [*sys_roots, *ro, *rw]):
                # a launcher ``~/bin/claude -> <install>``: the link itself, never the folder it sits in (satk60)
                binds.append((p.count("/"), "--symlink", target, p))
                continue
        binds.append((p.count("/"), "--ro-bind", p, p))
    binds += [(p.count("/"), "--bind", p, p) for p in rw]
    # a folder of the copy at a path inside the repository (never one of the repository: .editable checked)
    binds += [(str(d).count("/"), "--ro-bind", str(s), str(d)) for s, d in policy.ro_at
              if not touches_protected(s)]
    ordered = sorted(binds, key=lambda b: (b[0], b[3]))
    bind_args = [a for _, opt, src, p in ordered for a in (opt, src, p)]
    mask_args = _mask_args([*sys_roots, *_norm(policy.ro)], visible=[*sys_roots, *ro, *rw],
                           own=[str(policy.cwd), *rw], via_fd=args_fd) if masks else []
    spaces = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", *userns_args(bwrap)]
    # started by root, bubblewrap keeps every capability: a process inside could remount a read-only bind
    # read-write and write on the host, and share root's keyring with every other sandbox
    caps = ["--cap-drop", "ALL"] if os.geteuid() == 0 else []
    tail = [*([] if policy.network else ["--unshare-net"]), "--die-with-parent", "--new-session", "--chdir",
            str(policy.cwd), "--clearenv", *[a for k, v in policy.env.items() for a in ("--setenv", k, v)]]
    command = inside_argv(command, bwrap)  # RLIMIT_NPROC set in the sandbox's own user namespace
    if args_fd and "--disable-userns" in spaces and host_uids.pool() is not None:
        # a host uid of its own (satk48): root's bubblewrap makes the files, the leased uid's the rest
        # the outer: the host's /proc (a fresh one, which bubblewrap covers in part, would keep the inner from
        # mounting its own) and /dev under the files, as the inner finds them; the inner: its own /proc, /dev and
        # tmpfs folders, and again the binds they cover (from the outer's root)
        points = [a for t in policy.tmpfs for a in ("--dir", str(t))]  # the inner's tmpfs folders: root's
        # and a PID namespace of its own, whose init dies with the outer (--die-with-parent, root's: no uid
        # change clears it) and takes every process of it along: the inner bubblewrap, the uid's, outlived a
        # reaper killed outright otherwise (init's child; its own parent death signal did not hold, satk52)
        # bubblewrap makes a bound data file 0600, root's here: the leased uid read a mask (an egg of the project at
        # HEAD) as EACCES where root's sandbox reads an empty file, so the outer's masks are 0444
        masks_read = [w for a in mask_args for w in (("--perms", "0444", a) if a == "--ro-bind-data" else (a,))]
        outer = ["--bind", "/proc", "/proc", "--dev", "/dev", *_parents_args([*files, *bind_args, *points]),
                 *points, *files, *bind_args, *masks_read, "--unshare-pid", "--die-with-parent"]
        covered = [str(t) for t in policy.tmpfs] + ["/dev"]
        again = [a for _, opt, src, p in ordered if _under(p, covered) for a in (opt, src, p)]
        inner = ["--bind", "/", "/", "--proc", "/proc", *_proc_masks(args_fd), *dev, *tmpfs, *again, *spaces,
                 "--uid", "0", "--gid", "0", "--cap-drop", "ALL", *tail]
        owned = [*rw, *_norm(policy.owned)]
        return marked(host_uids.marked([bwrap, "--args", f"{ARGS_MARK}{len(outer)}", *outer, "--",
                                        *host_uids.setpriv_argv(), bwrap, "--args", f"{ARGS_MARK}{len(inner)}",
                                        *inner, "--", *command], owned))
    args = [bwrap, *files, "--proc", "/proc", *_proc_masks(args_fd), *dev, *tmpfs, *bind_args, *mask_args, *spaces,
            *caps, *tail]
    if args_fd:  # run by the reaper: a pids cgroup of its own where one can be made (proccap)
        return marked([bwrap, "--args", f"{ARGS_MARK}{len(args) - 1}", *args[1:], "--", *command])
    return [*args, "--", *command]


def _parents_args(args: Sequence[str]) -> list[str]:
    """``--dir`` (``0755``) for each folder above a destination of ``args`` (bubblewrap's options: binds,
    symlinks, tmpfs) that no system folder or bind of ``args`` holds: bubblewrap makes such a folder ``0700``,
    which the leased uid (:mod:`.host_uids`) of a two-bubblewrap sandbox could not pass."""
    dests: list[str] = []
    bound: list[str] = []  # binds: what lies below shows the host's folders and modes
    i = 0
    while i < len(args):
        if args[i] in ("--ro-bind", "--bind", "--symlink"):
            dests.append(args[i + 2])
            bound += [args[i + 2]] if args[i] != "--symlink" else []
            i += 3
        elif args[i] in ("--tmpfs", "--dir"):
            dests.append(args[i + 1])
            i += 2
        else:
            i += 1
    roots = _system_roots()
    out: list[str] = []
    for dest in dests:
        for parent in reversed(list(Path(dest).parents)[:-1]):
            p = str(parent)
            if p not in out and p not in dests and not _under(p, [*roots, *bound]):
                out.append(p)
    return [a for p in sorted(out, key=lambda q: (q.count("/"), q)) for a in ("--dir", p)]


@functools.lru_cache(maxsize=8)
def userns_args(bwrap: str = "bwrap") -> tuple[str, ...]:
    """The user namespace options of a sandbox of bubblewrap ``bwrap``: ``("--unshare-user", "--disable-userns")``
    where that bubblewrap (0.8 on) makes a user namespace here and closes it to further ones (checked once per
    process and executable: a sandbox of ``/bin/sh -c :`` with ``--assert-userns-disabled``, 30 s at most), else
    ``("--unshare-user-try",)`` (an older bubblewrap, a setuid one, a kernel without user namespaces).

    Why (satk46): the kernel charges a user namespace made in a sandbox, and every namespace a process makes
    with the capabilities it holds in one, to the sandbox's host uid at every level up to the host's
    (``user.max_user_namespaces``, 96,367 here; ``max_mnt_namespaces`` and the rest the same), and a sandbox
    starts no process without them. A sandbox that made nested user namespaces and held them by descriptor
    (3,000 in 14 s) took its uid's quota, and bubblewrap refused every other sandbox of that uid while it held
    them ("Creating new namespace failed … (ENOSPC)"): a concurrent attempt's agent or graded test run did not
    start. ``--disable-userns`` sets the sandbox's namespace's ``user.max_user_namespaces`` so that its
    processes make none (``unshare`` is ``ENOSPC``), so no other namespace either (they hold no capability
    outside one)."""
    try:
        ok = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-user", "--disable-userns",
                             "--assert-userns-disabled", "--", "/bin/sh", "-c", ":"], capture_output=True,
                            timeout=30, stdin=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return ("--unshare-user", "--disable-userns") if ok else ("--unshare-user-try",)


#: The files of a fresh ``/proc`` that show other sandboxes' state and that bubblewrap's namespaces do not
#: make the sandbox's own, each hidden behind an empty read-only file (:func:`_proc_masks`): ``/proc/locks``
#: lists every POSIX, OFD and ``flock`` lock of the machine with its holder's pid and its file's device and
#: inode, so a process in one sandbox read another's locks, on files it never sees (chan29; the same that
#: ``F_GETLK`` tells of a file both bind, which stays: contracts §9). ``/proc/key-users`` gives the machine's count
#: of keys and their bytes per uid, which a sandbox moves by one with each ``add_key`` (in its own user namespace's
#: keyring: the count is its host uid's) and another reads, exactly, while both run and for seconds after (the
#: keys wait for the key collector; satk43). Nothing but key tools reads either file.
PROC_MASKED = ("/proc/locks", "/proc/key-users")
#: The files of a fresh ``/proc`` that change the whole machine when written, each bound read-only over itself
#: (:func:`_proc_masks`). When homefield runs as root, the sandbox's root is the host's uid 0 (bubblewrap maps
#: only the uid that started it), and a sysctl's write is checked against that uid and its file's mode, not
#: against a capability (``--cap-drop ALL`` does not help): an agent set the host's ``kernel.core_pattern``
#: (a ``|program`` there runs as the host's root with every capability when any process dumps core: the
#: program named by its host path, which the workspace has), ``fs.file-max``, ``kernel.pid_max`` and
#: ``vm.drop_caches`` (satk43). bubblewrap covers ``/proc/sys`` only when ``access(W_OK)`` says it is writable,
#: which the folder never says. The bind's source is the host's ``/proc``, but what a sysctl shows and writes
#: is chosen by the reader's namespaces (its network, UTS, PID, IPC), so the sandbox reads its own values.
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger")


def _proc_masks(via_fd: bool = False) -> list[str]:
    """The options that bind an empty read-only file (:func:`_empty_args`) over each of :data:`PROC_MASKED`
    that this kernel has, after ``--proc``: a process inside reads nothing there, and, with no capability
    (``--cap-drop ALL``, or an unprivileged user namespace's mount locked under it), cannot unmount it; then
    each of :data:`PROC_READ_ONLY` bound read-only over itself (a write is ``EROFS``, whoever the writer is)."""
    masks = [a for f in PROC_MASKED if os.path.exists(f) for a in _empty_args(f, via_fd)]
    return [*masks, *[a for f in PROC_READ_ONLY if os.path.exists(f) for a in ("--ro-bind", f, f)]]


def _empty_args(target: str, via_fd: bool) -> list[str]:
    """The options that put an empty read-only file over ``target``: ``--ro-bind-data`` :data:`EMPTY_MARK`
    (``via_fd``: the options go through the reaper, which gives it an empty memfd; bubblewrap copies it to
    a file of its own tmpfs, so ``/proc/self/mountinfo`` names no host path, r25), else ``--ro-bind`` of
    :func:`_empty_file` (a bubblewrap started directly: :func:`probe`, a hook's argv; its mountinfo names
    that file's host path, ``/tmp/hf-<pid>.<start>-…/empty``)."""
    return ["--ro-bind-data", EMPTY_MARK, target] if via_fd else ["--ro-bind", str(_empty_file()), target]


def _mask_args(ro: Sequence[str], visible: Sequence[str], own: Sequence[str] = (), via_fd: bool = False) -> list[str]:
    """Options that hide the copies of the project under benchmark under ``ro`` (the system folders
    and the read-only binds, less the run's ``own`` folders: its workspace, the copy under test), by
    content and by name (:func:`~pytest_homefield.sandbox.project_copies.copies_of_protected`): an empty
    read-only tmpfs over a package folder, an empty file over a module file (:func:`_empty_args`: bubblewrap
    binds without device nodes, so ``/dev/null`` would not open). A copy (or a symlink's target) outside
    the ``visible`` paths is not in the sandbox and needs no mask."""
    args: list[str] = []
    for target in copies_of_protected(ro, skip=own):
        if not _under(target, visible) or not os.path.exists(target):
            continue
        if os.path.isdir(target):
            args += ["--tmpfs", target, "--remount-ro", target]
        else:
            args += _empty_args(target, via_fd)
    return args


@functools.lru_cache(maxsize=1)
def _empty_file() -> Path:
    """An empty read-only file of this process (in an owner-named temp folder, removed at exit and
    swept if the process is killed). The folder can be passed through but not listed by any user (``0o711``):
    every bubblewrap binds the file (:func:`_proc_masks`), also one started as another user with the argv this
    process built; it holds nothing else."""
    folder = mkdtemp()
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    folder.chmod(0o711)
    empty = folder / "empty"
    empty.touch(mode=0o444)
    return empty


def python_paths(pythons: Iterable[str | None] = (), *, path: str | None = None) -> list[Path]:
    """Read-only paths an interpreter needs: ``sys.prefix`` and ``sys.base_prefix`` of this process,
    and for each executable in ``pythons`` (a name looked up on ``path``, default ``$PATH``, or a path)
    its venv folder (the parent of ``bin/`` when ``pyvenv.cfg`` is there), the prefix of the base
    interpreter the venv's ``pyvenv.cfg`` names (``home = <prefix>/bin``, as ``uv venv`` and ``venv``
    write it) when it is one, and :func:`interpreter_paths` of the real binary behind the symlinks.
    Never the folder above a ``bin/`` that is no prefix: a Python copied to ``~/bin/python`` would
    otherwise show all of ``~`` (ssh keys, cloud credentials) to the sandbox (esc30)."""
    out: list[Path] = [Path(sys.prefix), Path(sys.base_prefix)]
    for exe in pythons:
        if not exe:
            continue
        found = shutil.which(exe, path=path) or exe
        if not os.path.isabs(found):
            continue  # a name found nowhere: nothing of it to bind (not the folder we run in)
        where = Path(os.path.abspath(found))
        venv = where.parent.parent
        if (venv / "pyvenv.cfg").exists():
            out.append(venv)
            home, version = _venv_home(venv / "pyvenv.cfg")
            if home is not None and home.name == "bin" and is_prefix(home.parent, version):
                out.append(home.parent)
        if os.path.exists(where):
            real = os.path.realpath(where)
            inner = interpreter_paths(real)
            if str(where) != real and not (venv / "pyvenv.cfg").exists() and not _under(
                    str(where), [*SYSTEM_DIRS, *map(str, inner)]):
                out.append(where)  # a link outside a venv (``~/bin/python -> …``): that file, as named
            out += inner
    seen: list[Path] = []
    for p in out:
        if p not in seen and str(p) != "/":
            seen.append(p)
    return seen


def is_prefix(folder: Path, version: str | None = None) -> bool:
    """Whether ``folder`` is a Python installation prefix: it holds ``lib/pythonX.Y/os.py`` (or under
    ``lib64``) for ``version`` (``"3.11"``; ``None``: any ``python3.*``)."""
    names = [f"python{version}"] if version else [p.name for lib in ("lib", "lib64")
                                                 for p in (folder / lib).glob("python3.*")]
    return any((folder / lib / name / "os.py").is_file() for lib in ("lib", "lib64") for name in names)


#: Run by :func:`interpreter_paths` with ``-I -S``: the version, prefixes and mapped libraries, as JSON.
_ASK = ("import json, sys\nlibs = sorted({l.split(None, 5)[5].strip() for l in open('/proc/self/maps')"
        " if len(l.split(None, 5)) == 6 and '.so' in l.split(None, 5)[5]})\n"
        "print(json.dumps(['%d.%d' % sys.version_info[:2], sys.prefix, sys.base_prefix, sys.exec_prefix, libs]))")


@functools.lru_cache(maxsize=64)
def interpreter_paths(real: str) -> tuple[Path, ...]:
    """What the Python binary at ``real`` (a real path) needs bound read-only: its prefix when it lies
    in one (``<prefix>/bin/``, :func:`is_prefix` for the version its name says, any when it says none);
    else the binary itself, the prefixes it reports (asked once per process: ``real -I -S``, 10 s at
    most; those that are prefixes) and the shared libraries it has mapped that lie outside them and
    outside :data:`SYSTEM_DIRS` (each file, never its folder). A binary that does not answer: itself
    only. A script (no ELF file; never run: a pyenv shim, ``<root>/shims/python``, runs
    ``<root>/libexec/pyenv``): the folder above its own, ``<root>``, when a prefix lies in it or one or
    two levels below (pyenv's ``versions/X.Y.Z``) and it is neither a home folder nor above one
    (``$HOME``, the user's ``passwd`` entry); else nothing: bound without what it runs, it would shadow a
    ``python`` that runs on ``PATH``. ``()`` when ``real`` does not exist."""
    exe = Path(real)
    if not exe.is_file():
        return ()
    name = exe.name.removeprefix("python")
    version = name if name.count(".") == 1 and name.replace(".", "").isdigit() else None
    if exe.parent.name == "bin" and is_prefix(exe.parent.parent, version):
        return (exe.parent.parent,)
    try:
        with open(exe, "rb") as fh:
            elf = fh.read(4) == b"\x7fELF"
    except OSError:
        elf = True  # executable but unreadable: a program; asked, it answers or not
    if not elf:
        tool = exe.parent.parent
        homes = [os.path.realpath(h) for h in (os.environ.get("HOME"), _passwd_home()) if h]
        return (tool,) if _holds_prefix(tool) and not any(_under(h, [str(tool)]) for h in homes) else ()
    try:
        proc = subprocess.run([real, "-I", "-S", "-c", _ASK], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL)  # -I: no PYTHON* variable, no user site
        told, *prefixes, libs = json.loads(proc.stdout) if proc.returncode == 0 else ["", []]
    except (OSError, subprocess.SubprocessError, ValueError, TypeError):
        return (exe,)
    roots = [Path(p) for p in dict.fromkeys(prefixes) if isinstance(p, str) and os.path.isabs(p)
             and str(p) != "/" and is_prefix(Path(p), str(told))]
    system = _system_roots()
    out = [exe, *roots]
    for lib in libs if isinstance(libs, list) else []:
        lib_real = os.path.realpath(str(lib))
        if os.path.isfile(lib_real) and not _under(lib_real, [*system, *map(str, roots)]):
            out.append(Path(lib_real))
    return tuple(out)


def _holds_prefix(folder: Path, depth: int = 2) -> bool:
    """Whether ``folder`` or a folder at most ``depth`` levels below it (links not followed) is a prefix."""
    if is_prefix(folder):
        return True
    if depth == 0:
        return False
    try:
        children = [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return False
    return any(_holds_prefix(c, depth - 1) for c in children)


def _passwd_home() -> str | None:
    """This user's home folder as ``passwd`` names it (``None`` when it names none)."""
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir or None
    except (ImportError, KeyError):
        return None


def _venv_home(cfg: Path) -> tuple[Path | None, str | None]:
    """The ``home`` folder (the base interpreter's ``bin``) a ``pyvenv.cfg`` names, resolved (``None``
    when it names none), and its ``version``'s ``X.Y`` (``None`` when it says none)."""
    try:
        lines = cfg.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, None
    home: Path | None = None
    version: str | None = None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip():
            home = Path(os.path.realpath(value.strip()))
        elif sep and key.strip() in ("version", "version_info") and value.strip():
            version = ".".join(value.strip().split(".")[:2])
    return home, version


def _shebang(path: Path) -> list[str]:
    """The ``#!`` line of ``path`` split into words (``[]`` when there is none or it cannot be read)."""
    try:
        with open(path, "rb") as f:
            first = f.read(400).split(b"\n", 1)[0].decode(errors="replace")
    except OSError:
        return []
    return first[2:].split() if first.startswith("#!") else []


def program_paths(executable: str, path_var: str | None = None) -> list[Path]:
    """Read-only paths a program found as ``executable`` on ``path_var`` (default ``$PATH``) needs
    inside a sandbox; ``[]`` when it is not found. Always the launcher and its real file, each as a file
    (never the folder they sit in: a ``PATH`` folder such as ``~/bin`` holds the user's other programs and
    the secrets of their scripts, satk60; :func:`inside_path` keeps a folder holding a bound file on ``PATH``,
    and :func:`bwrap_argv` makes a launcher that is a link that link); then, for the install layouts of pip,
    pipx, uv and npm:

    * a script under a virtual environment's ``bin/`` (``pyvenv.cfg`` beside it): the venv, and the
      prefix of the interpreter its ``#!`` names;
    * a file under ``node_modules``: the outermost ``node_modules`` folder above it (a project's: the package and
      its hoisted dependencies, e.g. codex's native binary in ``@openai/codex-linux-x64``), but for npm's global
      folder (``<prefix>/lib/node_modules``, every package installed with ``npm i -g``) the client's own package
      folder there, which holds its dependencies (:func:`_node_package`, ops62), and the ``node`` that
      ``#!/usr/bin/env node`` finds;
    * any other ``#!`` interpreter: :func:`_interpreter_install` (its file, never all of the folder above
      the ``bin/`` it lies in: ``#!/opt/bin/node`` bound all of ``/opt``, satk60).

    Folders under :data:`SYSTEM_DIRS` are left out (they are visible anyway)."""
    found = shutil.which(executable, path=path_var if path_var is not None else os.environ.get("PATH"))
    if found is None:
        return []
    launcher = Path(os.path.abspath(found))
    real = Path(os.path.realpath(launcher))
    out: list[Path] = [launcher, real]
    for p in (launcher, real):
        if (p.parent.parent / "pyvenv.cfg").exists():
            out.append(p.parent.parent)
    words = _shebang(real)
    if words and Path(words[0]).name == "env" and len(words) > 1:
        words = words[1:]
    interpreter = words[0] if words else None
    if interpreter and not os.path.isabs(interpreter):
        interpreter = shutil.which(interpreter, path=path_var if path_var is not None else os.environ.get("PATH"))
    if interpreter:
        ipath = Path(os.path.abspath(interpreter))
        if (ipath.parent.parent / "pyvenv.cfg").exists():
            out.append(ipath.parent.parent)
        out += _interpreter_install(ipath)
    modules = [a for a in real.parents if a.name == "node_modules"]
    if modules:
        out.append(_node_package(real, modules[-1]))
    system = _system_roots()
    seen: list[Path] = []
    for p in out:
        if p not in seen and str(p) != "/" and not _under(str(p), system):
            seen.append(p)
    return seen


def _node_package(real: Path, modules: Path) -> Path:
    """What of the ``node_modules`` folder ``modules`` (the outermost above ``real``, a client's real file) the
    client needs: ``modules`` itself for a project's (its dependencies are hoisted there), the client's own package
    (``modules/NAME`` or ``modules/@scope/NAME``) for npm's global folder, ``<prefix>/lib/node_modules``, where
    each global package holds its own dependencies and the folder every other global install (ops62: a client under
    ``/opt/lib/node_modules`` bound all of it, another vendor's package and what it keeps there)."""
    if modules.parent.name != "lib":
        return modules
    parts = real.relative_to(modules).parts
    depth = 2 if parts and parts[0].startswith("@") else 1
    return modules.joinpath(*parts[:depth]) if len(parts) > depth else modules


def _interpreter_install(interpreter: Path) -> list[Path]:
    """What a ``#!`` interpreter (found at ``interpreter``, an absolute path) needs read-only: nothing when it
    is a system one (visible anyway); else the file as named and its real file; a Python's
    :func:`interpreter_paths` (its prefix when it has one of its own);
    for another (``node``, ``ruby``…) under ``<prefix>/bin/``, those of ``<prefix>/lib/NAME*``,
    ``<prefix>/lib/libNAME*`` and ``<prefix>/share/NAME*`` that exist (its own library folder; npm's global
    ``<prefix>/lib/node_modules`` left out), never the prefix itself, which may be ``/opt`` or the home and hold
    every other install there."""
    real = Path(os.path.realpath(interpreter))
    system = _system_roots()
    if _under(str(real), system) and _under(os.path.realpath(interpreter.parent), system):
        return []  # ``/bin/sh``: visible anyway (``/bin -> usr/bin``)
    out: list[Path] = [interpreter, real]
    if real.name.startswith("python"):
        return [*out, *interpreter_paths(str(real))]
    if real.parent.name == "bin":
        stem = real.name.rstrip("0123456789.-")
        if stem:
            prefix = real.parent.parent
            # never npm's global folder ``lib/node_modules``: every ``-g`` package, not node's own (ops62)
            out += [Path(p) for pat in (f"lib/{stem}*", f"lib/lib{stem}*", f"lib64/lib{stem}*", f"share/{stem}*")
                    for p in sorted(glob.glob(os.path.join(glob.escape(str(prefix)), pat)))
                    if Path(p) != prefix / "lib" / "node_modules"]
    return list(dict.fromkeys(out))


def package_paths() -> list[Path]:
    """This package's folder (its reporter plugin and recipe helpers are imported inside)."""
    return [Path(__file__).resolve().parent.parent]


def inside_path(path_var: str, mounted: Sequence[Path], first: Sequence[Path] = ()) -> str:
    """A ``PATH`` for inside the sandbox: ``first`` (e.g. the interpreter's ``bin``), then the entries of
    ``path_var`` that lie in a system folder or a mounted path, or hold a mounted file (``~/bin`` of a
    bound ``~/bin/python``, :func:`python_paths`; a pyenv shim folder that is not bound would shadow the
    real ``python`` with a script that cannot run)."""
    roots = [str(p) for p in mounted] + [d for d in SYSTEM_DIRS if os.path.exists(d)]
    holders = {os.path.dirname(str(p)) for p in mounted if os.path.isfile(p)}
    out: list[str] = []
    for entry in [str(p) for p in first] + path_var.split(os.pathsep):
        if entry and entry not in out and (_under(os.path.abspath(entry), roots)
                                           or os.path.abspath(entry) in holders):
            out.append(entry)
    return os.pathsep.join(out)


def bwrap_executable() -> str | None:
    """``$HOMEFIELD_BWRAP`` or ``bwrap`` on ``PATH``, else ``None``."""
    exe = os.environ.get("HOMEFIELD_BWRAP") or "bwrap"
    return shutil.which(exe)


@functools.cache
def probe(bwrap: str | None = None) -> str:
    """The bubblewrap executable after checking, once per process and executable, that it runs a command
    with the namespaces :func:`bwrap_argv` asks for (user namespaces can be disabled). Raises
    :class:`BwrapUnavailable` with a one-line reason and :func:`install_hint`. Its sandbox masks nothing
    (``masks=False``: it shows no task), so a session that builds no other sandbox (reference agents whose
    patches are empty: nothing to grade) never walks the host for copies of the project (0.3–0.5 s of CPU,
    speed25); the first sandbox that shows a task finds them, and :func:`system_masks` on a controller
    before its local xdist workers start."""
    exe = bwrap or bwrap_executable()
    if exe is None:
        raise BwrapUnavailable(f"bubblewrap (bwrap) is not installed: {install_hint()}")
    with tempfile.TemporaryDirectory(prefix=f"hf-{owner_tag()}-") as tmp:
        argv = bwrap_argv(["/bin/sh", "-c", "echo ok > out"], Policy(cwd=Path(tmp), rw=[Path(tmp)]), bwrap=exe,
                          masks=False)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise BwrapUnavailable(f"bubblewrap cannot run ({exc}): {install_hint()}") from None
        ok = proc.returncode == 0 and (Path(tmp) / "out").exists()
    if not ok:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        why = lines[-1][:200] if lines else f"exit status {proc.returncode}"
        raise BwrapUnavailable(f"bubblewrap does not work here ({why}; user namespaces may be disabled): "
                               f"{install_hint()}")
    return exe


def system_masks() -> None:
    """When bubblewrap works here (:func:`probe` succeeded in this process): the copies of the protected
    repositories under the system folders, found by content now (:func:`~.copies_by_content.content_copies`,
    each folder walked once per process). A controller calls it before it starts its local xdist workers
    (``plugin.XdistHooks``), which take its findings instead of each walking ``/usr``: the probe walks
    nothing, so without it every worker of a session that grades would."""
    if not probe.cache_info().currsize:  # no probe succeeded: no bubblewrap sandbox in this session
        return
    content_copies(_system_roots())


def sandboxed_argv(argv: Sequence[str], *, workdir: Path, out_dir: Path, env: Mapping[str, str],
                   python: str | None = None, bwrap: str | None = None,
                   ro_extra: Sequence[Path] = (), tmpfs_bytes: int | None = None) -> list[str]:
    """``argv`` wrapped in bubblewrap for a test run (docs/contracts.md §7): no network; ``workdir``
    (the grading or mining copy), the interpreter of ``python`` looked up on ``env``'s ``PATH`` (see
    :func:`~pytest_homefield.sandbox.bwrap.python_paths`), the virtual environment ``env`` names in
    ``VIRTUAL_ENV`` (a ``--env uv`` environment: its folder, its ``bin/python`` and the base
    interpreter it links to), this package, the folders on ``env``'s ``PYTHONPATH`` and the files the
    command names by absolute path read-only; ``out_dir`` (outcomes, log, pytest cache) read-write;
    ``/tmp`` a private tmpfs holding ``TMPDIR`` and ``HOME``. Nothing else is writable: an environment
    shared by every task is never changed by a test run. ``bwrap``: the executable (default: the one
    :func:`probe` checked). ``ro_extra``: more paths bound read-only (the services' relay sockets).
    ``tmpfs_bytes``: the size of ``/tmp`` and ``/dev/shm`` (``max_test_write_mb``; ``None``: unsized). The
    options are behind ``--args`` (:func:`bwrap_argv` with ``args_fd=True``): run the argv through
    :func:`~pytest_homefield.sandbox.procs.run_process`, whose reaper puts them in a memfd. Raises
    :class:`~pytest_homefield.sandbox.bwrap.BwrapUnavailable` when bubblewrap does not work here."""
    exe = bwrap or probe()
    pythons = _test_pythons(env, python)
    interpreters = python_paths(pythons, path=env.get("PATH"))
    ro = [Path(workdir), *_ro_paths(argv, env, interpreters), *ro_extra]
    inner = dict(env)
    inner.update(TMPDIR="/tmp/hf-tmp", HOME="/tmp/hf-home")
    first = [Path(p).parent for p in pythons[:1] if os.path.isabs(p)]
    inner["PATH"] = inside_path(env.get("PATH", ""), ro, first=first)
    # an editable install naming a folder of the repository: that folder of the copy there (wz51)
    at = editable_binds([p for p in interpreters if p.is_dir()], Path(workdir))
    policy = Policy(cwd=Path(workdir), rw=[Path(out_dir)], ro=ro, env=inner, network=False, ro_at=at,
                    dirs=[Path("/tmp/hf-tmp"), Path("/tmp/hf-home")], tmpfs_bytes=tmpfs_bytes,
                    owned=[Path(workdir), *ro_extra])  # a uid of its own reads its copy and relays (host_uids)
    # bubblewrap's options through --args FD (the reaper's memfd): PID 1's command line names no host path
    return bwrap_argv(argv, policy, bwrap=exe, args_fd=True)


def _test_pythons(env: Mapping[str, str], python: str | None) -> list[str]:
    search = env.get("PATH")
    pythons = [shutil.which(python, path=search) or python] if python and "python" in Path(python).name else []
    if env.get("VIRTUAL_ENV"):
        pythons.append(str(Path(env["VIRTUAL_ENV"]) / "bin" / "python"))
    return pythons


def tests_ro_paths(argv: Sequence[str], *, env: Mapping[str, str], python: str | None = None) -> list[Path]:
    """What a test run of ``argv`` reads besides its copy (see :func:`sandboxed_argv`): the interpreters
    (``python`` on ``env``'s ``PATH``, ``VIRTUAL_ENV``), this package and its reporter, the folders on
    ``env``'s ``PYTHONPATH`` but those inside or around the repository (:mod:`.protected`) and the files
    ``argv`` names by absolute path."""
    return _ro_paths(argv, env, python_paths(_test_pythons(env, python), path=env.get("PATH")))


def _ro_paths(argv: Sequence[str], env: Mapping[str, str], interpreters: Sequence[Path]) -> list[Path]:
    """:func:`tests_ro_paths` given the interpreters' paths (:func:`python_paths` of the test run's pythons)."""
    ro = [*interpreters, *package_paths(), REPORTER_DIR]
    ro += [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and not touches_protected(p)]
    # files the command names by absolute path (a runner script of a {junit} command): that file only
    ro += [Path(a) for a in argv if os.path.isabs(a) and os.path.isfile(a)]
    return ro
