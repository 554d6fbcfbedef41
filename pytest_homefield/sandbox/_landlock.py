"""The Landlock launcher: confine this process to a policy, then become the command (stdlib only).

Started as ``python -I -S _landlock.py POLICY -- ARGV...`` (by path, with ``-I -S``, like
:mod:`._reaper`: nothing of the command's environment is imported into it), where ``POLICY`` is one
JSON object (built by :func:`pytest_homefield.sandbox.landlock.landlock_argv`)::

    {"ro": [PATH, ...], "rw": [PATH, ...], "dev": [PATH, ...],
     "net": null | {"connect": [PORT, ...], "bind": [PORT, ...]}, "scope": true | false,
     "unix": true | false, "setenv": {NAME: VALUE, ...}, "unsetenv": [NAME, ...]}

It calls ``landlock_create_ruleset`` with every filesystem right the kernel's Landlock ABI knows
handled, adds a ``LANDLOCK_RULE_PATH_BENEATH`` rule per existing path (``ro``: execute, read files,
list folders; ``rw``: every right; ``dev``: read and write the file, e.g. ``/dev/null``; a file gets
only the rights a file can have), with ``net`` (ABI ≥ 4) TCP ``bind``/``connect`` handled and allowed
to the listed ports only (``null``: the network is not confined), with ``scope`` (ABI ≥ 6) signals
and abstract Unix sockets to processes outside the new domain refused; then, when it runs as root,
drops every capability (bounding set, ambient, effective/permitted/inheritable: root keeps its uid
but not ``CAP_DAC_READ_SEARCH``'s ``open_by_handle_at``, which walks no path); sets
``PR_SET_NO_NEW_PRIVS``; ``landlock_restrict_self``; and ``execvp`` ARGV. The domain holds for the
command and every process it starts; nothing can lift it. With ``"unix": false`` or a ``net`` it also
installs a seccomp filter (x86_64 and aarch64; elsewhere it refuses) that refuses with ``EACCES``
``socket(AF_UNIX, …)`` (``"unix": false``: Landlock, ABI ≤ 7, does not confine ``connect`` to a named
Unix socket, so a known path, a Docker or ssh-agent socket, would be reached; ``socketpair`` stays)
and an ``AF_INET``/``AF_INET6`` socket that is not a stream (with ``net``: Landlock confines TCP
only, so UDP, DNS included, would go anywhere), ``io_uring_setup`` with ``ENOSYS`` (io_uring could
make a socket past the filter), and kills a process that makes a system call of another
architecture (i386 ``socketcall`` takes its arguments from memory, out of the filter's sight).
``setenv``/``unsetenv`` change the command's environment (the proxy's variables, ``PATH``: never a
secret, the policy is on a command line).

Rights per ABI (linux/landlock.h): 1: the 13 of Linux 5.13; 2: ``REFER`` (5.19); 3: ``TRUNCATE``
(6.2); 4: TCP bind/connect (6.7); 5: ``IOCTL_DEV`` (6.10, not handled here: ioctls on files opened
under the policy are the file's business); 6: scoping (6.12); 7: audit flags (6.15, unused).

Exit status 126 with one line on stderr, and the command never started, when Landlock is missing
(``ENOSYS``, ``EOPNOTSUPP``: disabled at boot) or a step fails: it never runs a command unconfined.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import warnings  # noqa: F401  os.execvp imports it: done before the policy may hide the stdlib

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
#: ABI 1's 13 rights, then REFER (ABI 2) and TRUNCATE (ABI 3)
FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1}
REFER, TRUNCATE = 1 << 13, 1 << 14
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


#: machine → (AUDIT_ARCH_*, __NR_socket)
SECCOMP_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NR_IO_URING_SETUP, X32_BIT = 22, 2, 425, 0x40000000
AF_UNIX, AF_INET, AF_INET6, SOCK_STREAM = 1, 2, 10, 1


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Refused(Exception):
    """A step failed; the message is one line."""


def _call(what: str, *args: object) -> int:
    ret = int(_libc.syscall(*args))
    if ret < 0:
        err = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(err)} (errno {err})")
    return ret


def abi() -> int:
    """The kernel's Landlock ABI version. Raises :class:`Refused` when Landlock is absent."""
    ret = int(_libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)))
    if ret < 0:
        err = ctypes.get_errno()
        why = "not built into this kernel" if err == 38 else "disabled at boot" if err == 95 else os.strerror(err)
        raise Refused(f"Landlock is not available here: {why} (errno {err})")
    return ret


def _add_path(ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # missing: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights & handled, fd)
        _call(f"landlock_add_rule {path}", SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)


def _drop_capabilities() -> None:
    """Drop every capability of this root process and of what it starts (module docstring)."""
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two data structs
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise Refused(f"capset: {os.strerror(ctypes.get_errno())}")


def _socket_filter(unix: bool, datagrams: bool) -> None:
    """The seccomp filter (module docstring): ``socket(AF_UNIX)`` refused unless ``unix``, an
    ``AF_INET``/``AF_INET6`` socket other than a stream refused unless ``datagrams``."""
    arch = SECCOMP_ARCHES.get(os.uname().machine)
    if arch is None:
        raise Refused(f"cannot filter sockets on {os.uname().machine} (x86_64 and aarch64 only)")
    ld, jeq, jge, alu_and, ret = 0x20, 0x15, 0x35, 0x54, 0x06
    allow, kill, errno, never = 0x7FFF0000, 0x80000000, 0x00050000, 0xFFFFFFFF
    program = [
        (ld, 0, 0, 4),                                     # 0: arch
        (jeq, 0, 14, arch[0]),                             # 1: another architecture → 16
        (ld, 0, 0, 0),                                     # 2: syscall number
        (jge, 11, 0, X32_BIT),                             # 3: x32 → 15
        (jeq, 10, 0, NR_IO_URING_SETUP),                   # 4: io_uring_setup → 15
        (jeq, 0, 7, arch[1]),                              # 5: socket → 6, else → 13
        (ld, 0, 0, 16),                                    # 6: its domain (args[0], low half)
        (jeq, 6, 0, never if unix else AF_UNIX),           # 7: AF_UNIX → 14
        (jeq, 1, 0, never if datagrams else AF_INET),      # 8: AF_INET → 10
        (jeq, 0, 3, never if datagrams else AF_INET6),     # 9: AF_INET6 → 10, else → 13
        (ld, 0, 0, 24),                                    # 10: its type (args[1], low half)
        (alu_and, 0, 0, 0xF),                              # 11: without SOCK_NONBLOCK, SOCK_CLOEXEC
        (jeq, 0, 1, SOCK_STREAM),                          # 12: a stream → 13, else → 14
        (ret, 0, 0, allow),                                # 13
        (ret, 0, 0, errno | 13),                           # 14: EACCES
        (ret, 0, 0, errno | 38),                           # 15: ENOSYS
        (ret, 0, 0, kill),                                 # 16
    ]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), filters)
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise Refused(f"seccomp filter: {os.strerror(ctypes.get_errno())}")


def restrict(policy: dict[str, object]) -> int:
    """Confine this process to ``policy`` (module docstring); returns the ABI used. Raises
    :class:`Refused`."""
    version = abi()
    handled_fs = FS_RIGHTS[min(version, 3)]
    net = policy.get("net")
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if isinstance(net, dict) and version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if policy.get("scope") and version >= 6 else 0
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    size = 24 if scoped else 16 if handled_net else 8
    ruleset = _call("landlock_create_ruleset", SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    try:
        kinds = {"ro": EXECUTE | READ_FILE | READ_DIR, "rw": handled_fs, "dev": READ_FILE | WRITE_FILE | TRUNCATE}
        for kind, rights in kinds.items():
            for path in policy.get(kind) or []:  # type: ignore[attr-defined]
                _add_path(ruleset, str(path), rights, handled_fs)
        if handled_net:
            assert isinstance(net, dict)
            for key, right in (("connect", NET_CONNECT_TCP), ("bind", NET_BIND_TCP)):
                for port in net.get(key) or []:
                    rule = _NetPort(right, int(port))
                    _call(f"landlock_add_rule port {port}", SYS_ADD_RULE, ruleset, RULE_NET_PORT, ctypes.byref(rule), 0)
        if os.geteuid() == 0:
            _drop_capabilities()
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise Refused(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        _call("landlock_restrict_self", SYS_RESTRICT_SELF, ruleset, 0)
        if policy.get("unix") is False or isinstance(net, dict):
            _socket_filter(unix=policy.get("unix") is not False, datagrams=not isinstance(net, dict))
    finally:
        os.close(ruleset)
    return version


def main(argv: list[str]) -> int:
    """``_landlock.py POLICY -- ARGV...`` (module docstring); ``_landlock.py --abi`` prints the ABI."""
    if argv[:1] == ["--abi"]:
        try:
            print(abi())
        except Refused as exc:
            print(f"homefield landlock: {exc}", file=sys.stderr)
            return 126
        return 0
    if len(argv) < 3 or argv[1] != "--":
        print("usage: _landlock.py POLICY_JSON -- COMMAND ...", file=sys.stderr)
        return 2
    try:
        policy = json.loads(argv[0])
        restrict(policy)
    except (Refused, ValueError, TypeError) as exc:
        print(f"homefield landlock: {exc}", file=sys.stderr)
        return 126
    env = os.environ
    for name in policy.get("unsetenv") or []:
        env.pop(name, None)
    env.update(policy.get("setenv") or {})
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as exc:
        print(f"homefield landlock: cannot start {argv[2]}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
