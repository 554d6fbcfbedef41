"""The Landlock launcher's supervisor: ``chmod``, ``utime`` and extended attributes confined to the policy's
``rw`` roots, and with a confined network ``connect`` to its (address, port) pairs and to the launch's own
loopback listeners, and ``bind``/``listen`` to loopback (stdlib only: imported by
:mod:`._landlock`, which runs as ``python -I -S``).

Landlock has no right for metadata, so a confined process could ``chmod`` or ``utime`` any host path it
can name (atk12 F4), ``fchmod``/``futimens`` any file it may read (a read-only root's: as root,
``fchmod(fd, 0o4755)`` on a root-owned interpreter), and set extended attributes there (a POSIX ACL is a
mode; a user attribute, data for whoever reads the file next). The launcher forks: its child confines
itself and installs the seccomp filter with a listener (``SECCOMP_FILTER_FLAG_NEW_LISTENER``) whose
:data:`CALLS` (every form of ``chmod``, ``utime``, ``setxattr`` and ``removexattr``) return
``SECCOMP_RET_USER_NOTIF``; the parent, outside the
Landlock domain, takes the listener (``pidfd_getfd``) and becomes this supervisor (:func:`serve`). For
each notification it

1. opens the caller's ``/proc/TID/mem`` and the folder the path is relative to (``/proc/TID/fd/N`` for a
   ``dirfd``, ``/proc/TID/cwd`` for ``AT_FDCWD``; for an fd form, that fd's inode is the target), then
   checks ``SECCOMP_IOCTL_NOTIF_ID_VALID`` (the caller is still the thread that asked, so those handles
   are its own);
2. reads the path (and the times, the attribute's name and value) from that memory once: its own copy,
   so a thread of the caller that rewrites the string meanwhile changes nothing;
3. opens the path ``O_PATH`` against that folder, with ``O_NOFOLLOW`` when the call had
   ``AT_SYMLINK_NOFOLLOW`` (``/proc/self`` and ``/proc/thread-self`` at its start mean the caller's);
4. reads the opened inode's real path (``/proc/self/fd/N``) and refuses with ``EACCES`` (what Landlock
   answers) unless it is one of :func:`roots` or beneath one, or no host file (:func:`may_change`): a
   symlink swapped meanwhile changes which inode was opened, never which one is checked;
5. makes the change itself on that inode (``chmod``, ``setxattr``, ``removexattr`` through
   ``/proc/self/fd/N``; ``utimensat(N, "", …, AT_EMPTY_PATH)``) and answers with its result: the call
   in the caller never runs (``SECCOMP_USER_NOTIF_FLAG_CONTINUE`` is never sent: the caller could change
   its arguments after the check).

The supervisor drops every capability when it runs as root (as the child does), so the change is made
with the caller's credentials: the same permission checks (owner, write access for "now"). It is a child
subreaper (a daemonised descendant stays its descendant, whose memory it may read even under Yama
``ptrace_scope=1``), forwards ``SIGTERM``, ``SIGINT``, ``SIGHUP``, ``SIGQUIT``, ``SIGUSR1``, ``SIGUSR2``
to the command, and exits with the command's status (or dies of its signal) once the command ends. When
it is gone, the calls fail with ``ENOSYS`` in every process of the domain (never unconfined). The child
cannot signal it (Landlock scope, ABI ≥ 6) nor read its memory (Landlock denies ptrace out of a domain),
and the filter refuses a new listener to the command (``seccomp`` with ``NEW_LISTENER``: a later
listener's "continue" would override this one's answers).

With a confined network (the policy's ``net``), ``connect`` goes to it too: Landlock's TCP rules name
ports, not addresses, so an allowed port would be reachable on every host. For each ``connect`` it opens
the caller's memory and its thread's pidfd, checks ``NOTIF_ID_VALID``, reads the address once (its own
copy, at most ``sockaddr_storage``'s 128 bytes), takes the socket (``pidfd_getfd``), and refuses with
``EACCES`` unless the socket is ``AF_NETLINK`` (no host beyond the kernel) or ``AF_INET``/``AF_INET6``
and the address is ``AF_UNSPEC`` (a disconnect), one of :func:`peers` (an IPv4 address and its
v4-mapped IPv6 form alike), or a loopback address and port where a socket of this launch listens
(:func:`_pin`: the supervisor's own copy of that very socket, by cookie, still listening there; a
loopback address without one is ``ECONNREFUSED``, as in a network namespace of one's own); then it
connects that socket itself with that copy, never blocking (:func:`_start_connect`), and answers with the
result (``EINPROGRESS`` for a non-blocking socket, which the caller then polls as usual; a blocking caller
once the connect completes, or with ``EINPROGRESS`` once its ``SO_SNDTIMEO`` has passed, as the kernel
would, :func:`settle`, which drops the connect of a caller killed meanwhile). It keeps its copy of a
caller's socket only while a blocking caller waits in it (with the listener it goes to); a ``connect`` to a
listener of the launch still under way is followed by its socket's cookie alone (:func:`_follow`: at once
for a non-blocking caller, once a blocking one is answered or gone), and one copy of that listener is held
while any socket so followed is in ``SYN_SENT`` (:func:`release`, every :data:`LIVENESS_MS`, by
``sock_diag``: :func:`under_way`), whoever holds it: a SYN the kernel sends again reaches that very
listener, never a host process that took its port; once every process holding the connecting socket is
gone (a killed caller), so is the supervisor's hold. At most :data:`CONNECTED_MAX` sockets it connected
live at once (each holds a source port; :func:`forget_disconnected`), else ``EADDRNOTAVAIL``. A Unix
socket is never
connected (its path would be resolved outside the domain). ``bind`` and ``listen`` come too (Landlock's
bind rule names a port, so ``0.0.0.0:0`` then ``listen`` took connections from the LAN): a ``bind`` is
made, the same way, only to a loopback address (``127.0.0.0/8``, ``::1``, v4-mapped alike; a wildcard,
``0.0.0.0`` or ``::``, is bound to its family's loopback instead: :func:`on_loopback`) and a port of
the policy's ``bind`` (``0``, bound by number: :func:`_bind_loopback`, so the socket keeps its port
for its life), never a Unix path, while fewer than :data:`BOUND_MAX` sockets it bound live (else
``EADDRINUSE``: :func:`forget_closed`); the kernel then locks the socket's address for its
life, so the supervisor keeps the socket's cookie (``SO_COOKIE``, never reused) and makes a ``listen``
only on a socket it so bound (an unbound one listens on ``0.0.0.0``; one a ``connect`` bound loses its
address on a disconnect, which the caller could race with the check). Nothing else connects a socket past the
filter: UDP and every other protocol cannot be made, TCP Fast Open is refused, so are a source route and a
routing header (their SYN would go to the first hop, any host: :mod:`._landlock`), and
``sendto``/``sendmsg`` ignore the address on a TCP socket.

Kernel: Landlock (5.13) implies every call used here (user notifications 5.5, ``pidfd_getfd`` 5.6,
``utimensat`` with ``AT_EMPTY_PATH`` 5.8); a step that fails refuses the command (exit 126).
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import stat
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

#: machine → system call number → ``(op, dirfd argument, path argument, value argument, flags argument)``
#: (indexes into the call's arguments; ``None``: the call has none). ``op``: ``chmod`` (value: the mode),
#: ``utime`` (``struct utimbuf *``), ``utimes`` (``struct timeval[2]``), ``utimensat`` (``struct
#: timespec[2]``), ``setxattr`` (value: the name, then the value, its size, the flags), ``removexattr``
#: (value: the name), ``fchown`` (value: the owner, then the group); an ``l`` before it: the last symlink not
#: followed (owner changes by path are refused by the filter: ``EPERM``). ``fchmod``, ``fchown``, ``fsetxattr``,
#: ``fremovexattr``, and ``futimesat``/``utimensat`` with a NULL path (``futimens``), act on their fd: its
#: inode is checked the same way (a file of a read-only root opened for reading would do).
CALLS: dict[str, dict[int, tuple[str, int | None, int | None, int, int | None]]] = {
    "x86_64": {90: ("chmod", None, 0, 1, None), 91: ("chmod", 0, None, 1, None), 268: ("chmod", 0, 1, 2, None),
               452: ("chmod", 0, 1, 2, 3), 132: ("utime", None, 0, 1, None), 235: ("utimes", None, 0, 1, None),
               261: ("utimes", 0, 1, 2, None), 280: ("utimensat", 0, 1, 2, 3),
               188: ("setxattr", None, 0, 1, None), 189: ("lsetxattr", None, 0, 1, None),
               190: ("setxattr", 0, None, 1, None), 197: ("removexattr", None, 0, 1, None),
               198: ("lremovexattr", None, 0, 1, None), 199: ("removexattr", 0, None, 1, None),
               93: ("fchown", 0, None, 1, None)},
    "aarch64": {52: ("chmod", 0, None, 1, None), 53: ("chmod", 0, 1, 2, None), 452: ("chmod", 0, 1, 2, 3),
                88: ("utimensat", 0, 1, 2, 3), 5: ("setxattr", None, 0, 1, None), 6: ("lsetxattr", None, 0, 1, None),
                7: ("setxattr", 0, None, 1, None), 14: ("removexattr", None, 0, 1, None),
                15: ("lremovexattr", None, 0, 1, None), 16: ("removexattr", 0, None, 1, None),
                55: ("fchown", 0, None, 1, None)},
}
#: ``setxattrat``, ``removexattrat`` (Linux 6.13, the same on every architecture): ``ENOSYS``, as on an
#: older kernel (callers fall back to the calls above).
XATTR_AT = (463, 466)
XATTR_SIZE_MAX = 65536
SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
#: ``connect``, ``bind`` and ``listen``, per machine: the supervisor's with a confined network (module docstring)
SYS_CONNECT = {"x86_64": 42, "aarch64": 203}
SYS_BIND = {"x86_64": 49, "aarch64": 200}
SYS_LISTEN = {"x86_64": 50, "aarch64": 201}
AF_UNSPEC, AF_INET, AF_INET6, AF_NETLINK, SOL_SOCKET, SO_DOMAIN, SOCKADDR_MAX = 0, 2, 10, 16, 1, 39, 128
SO_COOKIE, SO_ERROR, SO_ACCEPTCONN, SO_SNDTIMEO, EINPROGRESS, EADDRINUSE = 57, 4, 30, 21, 115, 98
SOCK_STREAM, SOCK_CLOEXEC = 1, os.O_CLOEXEC
#: How often (ms) the supervisor checks that the caller of a blocking ``connect`` under way still waits
#: (``NOTIF_ID_VALID``), and which ``connect`` to a listener of the launch is still under way
#: (:func:`under_way`): a killed caller's socket, and the listener held for its connect, are let go within
#: this time (:func:`settle`, :func:`release`).
LIVENESS_MS = 500
#: How many sockets bound by the supervisor may live at once in one launch (a slot per socket, given back
#: once its address and port are free again: :func:`forget_closed`); a ``bind`` beyond is ``EADDRINUSE``, what
#: the kernel answers when no port is free: a launch cannot take every ephemeral port of the host's loopback.
BOUND_MAX = 4096
#: How many sockets the supervisor connected may live at once in one launch (each holds a source port the
#: kernel picked); a ``connect`` beyond is ``EADDRNOTAVAIL``, what the kernel answers when no source port is
#: free, unless a look finds one of them closed or in ``TIME_WAIT`` (:func:`forget_disconnected`). It bounds
#: the ``connect``s followed at once too (:data:`Net.connecting`: each is a socket in ``SYN_SENT``, counted).
CONNECTED_MAX = 4096
TCP_TIME_WAIT, EADDRNOTAVAIL = 6, 99
NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, IPPROTO_TCP, TCP_SYN_SENT = 4, 20, 6, 2
NLM_F_REQUEST, NLM_F_DUMP, NLMSG_ERROR, NLMSG_DONE = 1, 0x300, 2, 3
PIDFD_THREAD = os.O_EXCL  # Linux 6.9: a pidfd of one thread (its own descriptor table)
SYS_PIDFD_GETFD = 438  # the same on every architecture
SECCOMP_SET_MODE_FILTER, NEW_LISTENER, WAIT_KILLABLE_RECV = 1, 1 << 3, 1 << 5
NOTIF_RECV, NOTIF_SEND, NOTIF_ID_VALID = 0xC0502100, 0xC0182101, 0x40082102
AT_FDCWD, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = -100, 0x100, 0x1000
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PATH_MAX = 1, 36, 4096
#: The names ``/proc/self/fd`` gives objects of no file system a path reaches, each its own inode (not
#: ``anon_inode:``: eventfds, epolls, timers share one inode machine-wide).
PSEUDO = ("pipe:", "socket:")
FORWARDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _Data(ctypes.Structure):
    _fields_ = [("nr", ctypes.c_int), ("arch", ctypes.c_uint32), ("ip", ctypes.c_uint64),
                ("args", ctypes.c_uint64 * 6)]


class _Notif(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("pid", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("data", _Data)]


class _Resp(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("val", ctypes.c_int64), ("error", ctypes.c_int32),
                ("flags", ctypes.c_uint32)]


class _Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_int64), ("nsec", ctypes.c_int64)]


def _fail(err: int) -> OSError:
    return OSError(err, os.strerror(err))


def install(program: ctypes.Structure, machine: str) -> int:
    """Install the seccomp ``program`` (a ``struct sock_fprog``) with a listener; returns the listener fd
    (close-on-exec). Raises ``OSError``."""
    for flags in (NEW_LISTENER | WAIT_KILLABLE_RECV, NEW_LISTENER):  # killable wait: Linux 5.19
        fd = int(_libc.syscall(SYS_SECCOMP[machine], SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(program)))
        if fd >= 0:
            return fd
        err = ctypes.get_errno()
        if err != 22:  # EINVAL: the flag is unknown, try without
            break
    raise OSError(err, f"seccomp filter with a listener: {os.strerror(err)}")


def take_listener(pid: int, fd: int) -> int:
    """Our copy of descriptor ``fd`` of process ``pid`` (``pidfd_getfd``). Raises ``OSError``."""
    pidfd = os.pidfd_open(pid)
    try:
        got = int(_libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0))
    finally:
        os.close(pidfd)
    if got < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"pidfd_getfd: {os.strerror(err)}")
    return got


def roots(rw: list[str]) -> tuple[str, ...]:
    """The real paths of the policy's existing ``rw`` paths: what may change (Landlock's rules hold the
    inodes these name)."""
    return tuple(os.path.realpath(p) for p in rw if os.path.exists(p))


def may_change(fd: int, allowed: tuple[str, ...]) -> bool:
    """Whether the inode ``fd`` holds may change: its real path is one of ``allowed`` or beneath one, or it
    is no host file (a pipe, a socket; a file with no name left, deleted, ``O_TMPFILE`` or a memfd: only
    rw roots could give it one)."""
    real = os.readlink(f"/proc/self/fd/{fd}")
    if real.startswith(PSEUDO) or (real.endswith(" (deleted)") and os.fstat(fd).st_nlink == 0):
        return True
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in allowed)


def peers(net: object) -> frozenset[tuple[bytes, int]]:
    """The ``(address, port)`` pairs a confined process may connect to: every ``hosts`` address (IPv4 or
    IPv6 text; ``127.0.0.1`` when absent) with every ``connect`` port of the policy's ``net``, and each
    ``[ADDRESS, PORT]`` of its ``peers`` (exact pairs: a local model server on ``::1``), each address as
    16 bytes (IPv4 as its v4-mapped IPv6 form). Empty for no ``net``. Raises ``OSError`` (``EINVAL``) for
    an address that is neither."""
    if not isinstance(net, dict):
        return frozenset()
    pairs = [(h, p) for h in net.get("hosts") or ["127.0.0.1"] for p in net.get("connect") or []]
    pairs += [(h, p) for h, p in net.get("peers") or []]
    return frozenset((_mapped(str(h)), int(p)) for h, p in pairs)


class Net:
    """A confined network's state (:func:`serve`): ``peers`` where a ``connect`` may go (:func:`peers`),
    ``binds`` the ports a ``bind`` may name (the policy's ``bind``: ``0``, an ephemeral port; ``None``: any,
    the policy's ``bind_any``, a service instance's), and
    ``bound``, the cookies (``SO_COOKIE``: 64 bits, never reused while the machine runs) of the sockets
    the supervisor bound and that may still live, with the address each holds, at most :data:`BOUND_MAX`:
    only these may ``listen``."""

    def __init__(self, peer_set: frozenset[tuple[bytes, int]] = frozenset(),
                 binds: frozenset[int] | None = frozenset()):
        self.peers = peer_set
        self.binds = binds
        #: cookie → the ``struct sockaddr`` the socket is bound to (its port included): what
        #: :func:`forget_closed` tries to bind to tell whether the socket still holds it
        self.bound: dict[int, bytes] = {}
        #: that address → the cookie of the last socket bound there (:func:`_bound`)
        self.bound_at: dict[bytes, int] = {}
        #: ``(address, port)`` (16 bytes, IPv4 v4-mapped) → ``(cookie, inode, tid)`` of the last socket the
        #: supervisor made listen there (``tid``: the thread that asked); only cookies of ``bound``
        self.listeners: dict[tuple[bytes, int], tuple[int, int, int]] = {}
        #: ``(address, port)`` of ``listeners`` → ``(pid, descriptor number)`` where :func:`_pin` last took it
        self.found: dict[tuple[bytes, int], tuple[int, str]] = {}
        #: our copy of the socket of a blocking caller whose ``connect`` is under way → ``(notification id,
        #: when its ``SO_SNDTIMEO`` ends (``time.monotonic()``) or None, our copy of the listener of the launch
        #: it goes to or -1, the socket's family, the address)`` (:func:`settle`): held only while that caller
        #: waits
        self.pending: dict[int, tuple[int, float | None, int, int, bytes]] = {}
        #: cookie of a socket whose ``connect`` to a listener of the launch may be under way → ``(its family,
        #: its ``struct inet_diag_sockid``, the listener's cookie)``: followed by cookie alone
        #: (:func:`release`), nothing of it held
        self.connecting: dict[int, tuple[int, bytes, int]] = {}
        #: a listener's cookie → our one copy of it, held while a ``connect`` of ``connecting`` goes to it
        self.pins: dict[int, int] = {}
        #: cookie of a socket the supervisor connected (or began to) → ``(its family, its ``struct
        #: inet_diag_sockid``)``: what :data:`CONNECTED_MAX` counts (:func:`forget_disconnected`)
        self.connected: dict[int, tuple[int, bytes]] = {}
        #: when :func:`release` last looked (``time.monotonic()``)
        self.checked = 0.0

    @classmethod
    def of(cls, net: object) -> Net:
        """From the policy's ``net`` (``None``: nothing may connect, bind or listen). Raises ``OSError``."""
        if isinstance(net, dict) and net.get("bind_any") is True:  # a service: any port, on a loopback address
            return cls(peers(net), None)
        binds = frozenset(int(p) for p in net.get("bind") or []) if isinstance(net, dict) else frozenset()
        return cls(peers(net), binds)


def loopback(raw: bytes) -> bool:
    """Whether ``raw`` (16 bytes, IPv4 v4-mapped) is a loopback address: ``127.0.0.0/8`` or ``::1``."""
    return raw == b"\0" * 15 + b"\1" or (raw[:12] == b"\0" * 10 + b"\xff\xff" and raw[12] == 127)


def may_bind(raw: bytes, domain: int, ports: frozenset[int] | None) -> bool:
    """Whether a socket of ``domain`` may be bound to the address ``raw`` (a ``struct sockaddr`` as the
    caller passed it): an ``AF_NETLINK`` one always (no host beyond the kernel), an ``AF_INET``/``AF_INET6``
    one only to a loopback address (:func:`loopback`) or the wildcard (``0.0.0.0``/``::``, which
    :func:`_bind_or_listen` binds to the loopback of its family instead: :func:`on_loopback`) of its own family
    and one of ``ports`` (``None``: any port); nothing else (a Unix socket's path would be made outside the
    domain). Raises ``OSError`` (``EINVAL``) for an address too short for its family, as the kernel would."""
    if domain == AF_NETLINK:
        return True
    if domain not in (AF_INET, AF_INET6) or len(raw) < 2:
        return False
    family, port = int.from_bytes(raw[:2], "little"), int.from_bytes(raw[2:4], "big")
    if family != domain:  # AF_UNSPEC on an AF_INET socket binds 0.0.0.0
        return False
    if len(raw) < (16 if family == AF_INET else 24):
        raise _fail(22)
    address = b"\0" * 10 + b"\xff\xff" + raw[4:8] if family == AF_INET else raw[8:24]
    # the wildcard of the socket's own family only: ``::ffff:0.0.0.0`` on an IPv6 socket is IPv4's any address,
    # which :func:`on_loopback` leaves as it is
    wildcard = (raw[4:8] if family == AF_INET else raw[8:24]) == b"\0" * (4 if family == AF_INET else 16)
    return (loopback(address) or wildcard) and (ports is None or port in ports)


def on_loopback(raw: bytes) -> bytes:
    """``raw`` (an ``AF_INET``/``AF_INET6`` ``struct sockaddr`` :func:`may_bind` allowed) with a wildcard
    address (``0.0.0.0``, ``::``) made the loopback of its family (``127.0.0.1``, ``::1``), else ``raw``: a
    repository's test server on ``("", 0)`` (``http.server``'s habit) listens where the launch's own
    connects reach it (:func:`_pin`) and no LAN host does; ``getsockname`` then says ``127.0.0.1``. A
    ``::`` socket so bound is IPv6 only (no v4-mapped connects to it)."""
    family = int.from_bytes(raw[:2], "little")
    if family == AF_INET and raw[4:8] == b"\0" * 4:
        return raw[:4] + bytes([127, 0, 0, 1]) + raw[8:]
    if family == AF_INET6 and raw[8:24] == b"\0" * 16:
        return raw[:8] + b"\0" * 15 + b"\1" + raw[24:]
    return raw


def _mapped(host: str) -> bytes:
    """``host`` (IPv4 or IPv6 text) as 16 bytes, IPv4 v4-mapped. Raises ``OSError``."""
    import _socket
    try:
        return b"\0" * 10 + b"\xff\xff" + _socket.inet_pton(AF_INET, host)
    except OSError:
        return bytes(_socket.inet_pton(AF_INET6, host))


def may_connect(raw: bytes, domain: int, allowed: frozenset[tuple[bytes, int]]) -> bool:
    """Whether a socket of ``domain`` may connect to the address ``raw`` (a ``struct sockaddr`` as the
    caller passed it): an ``AF_NETLINK`` one always, an ``AF_INET``/``AF_INET6`` one to ``AF_UNSPEC`` (a
    disconnect) or to one of ``allowed`` (:func:`peers`), nothing else. Raises ``OSError`` (``EINVAL``)
    for an address too short for its family, as the kernel would."""
    if domain == AF_NETLINK:
        return True
    if domain not in (AF_INET, AF_INET6):
        return False
    if len(raw) < 2:
        raise _fail(22)
    family, port = int.from_bytes(raw[:2], "little"), int.from_bytes(raw[2:4], "big")
    if family == AF_UNSPEC:
        return True
    if family == AF_INET and len(raw) >= 16:
        return (b"\0" * 10 + b"\xff\xff" + raw[4:8], port) in allowed
    if family == AF_INET6 and len(raw) >= 24:
        return (raw[8:24], port) in allowed
    if family in (AF_INET, AF_INET6):
        raise _fail(22)
    return False


def _read(mem: int, addr: int, size: int) -> bytes:
    """``size`` bytes of the caller's memory at ``addr``. Raises ``OSError`` (``EFAULT``)."""
    try:
        data = os.pread(mem, size, addr)
    except (OSError, OverflowError):
        raise _fail(14) from None
    if len(data) != size:
        raise _fail(14)
    return data


def _read_path(mem: int, addr: int) -> bytes:
    """The NUL-terminated path at ``addr``, read a page at a time. Raises ``OSError``."""
    out = b""
    while len(out) < PATH_MAX:
        chunk = _read(mem, addr, 4096 - addr % 4096)
        nul = chunk.find(b"\0")
        if nul >= 0:
            return out + chunk[:nul]
        out += chunk
        addr += len(chunk)
    raise _fail(36)  # ENAMETOOLONG


def _times(op: str, mem: int, addr: int) -> object:
    """The two times of ``op`` at ``addr`` as ``struct timespec[2]`` (``None``: now). Raises ``OSError``."""
    if addr == 0:
        return None
    raw = _read(mem, addr, 16 if op == "utime" else 32)
    words = [int.from_bytes(raw[i:i + 8], "little", signed=True) for i in range(0, len(raw), 8)]
    if op == "utime":  # struct utimbuf: actime, modtime in seconds
        return (_Timespec * 2)(_Timespec(words[0], 0), _Timespec(words[1], 0))
    if op == "utimes":  # struct timeval[2]
        if not all(0 <= u < 1_000_000 for u in words[1::2]):
            raise _fail(22)
        return (_Timespec * 2)(_Timespec(words[0], words[1] * 1000), _Timespec(words[2], words[3] * 1000))
    return (_Timespec * 2)(_Timespec(words[0], words[1]), _Timespec(words[2], words[3]))


def _target(notif: _Notif, spec: tuple[str, int | None, int | None, int, int | None],
            listener: int) -> tuple[int, int]:
    """The inode the call names, opened ``O_PATH``, and the caller's memory fd (steps 1-3 of the module
    docstring). Raises ``OSError`` with the call's error."""
    op, dir_i, path_i, _, flags_i = spec
    tid, args = notif.pid, notif.data.args
    flags = int(args[flags_i]) & 0xFFFFFFFF if flags_i is not None else 0
    if op.startswith("l"):  # lsetxattr, lremovexattr
        flags |= AT_SYMLINK_NOFOLLOW
    by_fd = path_i is None or not args[path_i]  # fchmod; futimens (utimensat, futimesat with a NULL path)
    if flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) or (by_fd and flags):
        raise _fail(22)
    dirfd = ctypes.c_int32(args[dir_i] & 0xFFFFFFFF).value if dir_i is not None else AT_FDCWD
    if by_fd and (dir_i is None or dirfd == AT_FDCWD):
        raise _fail(14 if dir_i is None or path_i is not None else 9)  # chmod(NULL): EFAULT; fchmod(-100): EBADF
    base = f"/proc/{tid}/cwd" if dirfd == AT_FDCWD else f"/proc/{tid}/fd/{dirfd}"
    mem = os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            folder = os.open(base, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            raise _fail(9) from None  # EBADF: no such fd
        try:
            if _libc.ioctl(listener, ctypes.c_ulong(NOTIF_ID_VALID), ctypes.byref(ctypes.c_uint64(notif.id))) != 0:
                raise _fail(3)  # ESRCH: gone; the answer reaches no one
            path = b"" if by_fd or path_i is None else _read_path(mem, int(args[path_i]))
            if not path and not (by_fd or flags & AT_EMPTY_PATH):
                raise _fail(2)
            if not path:
                return os.dup(folder), mem
            for own in (b"/proc/self", b"/proc/thread-self"):
                if path == own or path.startswith(own + b"/"):
                    path = f"/proc/{tid}".encode() + path[len(own):]
            nofollow = os.O_NOFOLLOW if flags & AT_SYMLINK_NOFOLLOW else 0
            return os.open(path, os.O_PATH | os.O_CLOEXEC | nofollow, dir_fd=folder), mem
        finally:
            os.close(folder)
    except BaseException:
        os.close(mem)
        raise


def _apply(notif: _Notif, machine: str, listener: int, allowed: tuple[str, ...]) -> None:
    """Steps 1-5 of the module docstring for one notification. Raises ``OSError`` with the call's error."""
    spec = CALLS[machine].get(notif.data.nr)
    if spec is None:
        raise _fail(38)  # ENOSYS: not ours to make
    op, value_i = spec[0], spec[3]
    fd, mem = _target(notif, spec, listener)
    try:
        if not may_change(fd, allowed):
            raise _fail(13)  # EACCES, as Landlock answers outside its rules
        args = notif.data.args
        if op.endswith("xattr"):
            _xattr(op, fd, mem, [int(a) for a in args[value_i:value_i + 4]])
            return
        if op == "fchown":  # uid_t, gid_t: (uid_t) -1 keeps it
            owner, group = (ctypes.c_int32(int(a) & 0xFFFFFFFF).value for a in args[value_i:value_i + 2])
            os.chown(f"/proc/self/fd/{fd}", owner, group)
            return
        if op == "chmod":
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise _fail(95)  # EOPNOTSUPP: a symlink has no mode (fchmodat2 with AT_SYMLINK_NOFOLLOW)
            os.chmod(f"/proc/self/fd/{fd}", int(args[value_i]) & 0o7777)
            return
        times = _times(op, mem, int(args[value_i]))
        if _libc.utimensat(fd, b"", times, AT_EMPTY_PATH) != 0:
            raise _fail(ctypes.get_errno())
    finally:
        os.close(fd)
        os.close(mem)


def _xattr(op: str, fd: int, mem: int, args: list[int]) -> None:
    """``setxattr``/``removexattr`` (``args``: the name's address, then the value's, its size, the flags)
    on the inode ``fd`` holds. Raises ``OSError``."""
    if stat.S_ISLNK(os.fstat(fd).st_mode):
        raise _fail(1)  # EPERM: what a user attribute of a symlink gets (the others need capabilities)
    name = os.fsdecode(_read_path(mem, args[0]))
    if op.endswith("removexattr"):
        os.removexattr(f"/proc/self/fd/{fd}", name)
        return
    if args[2] > XATTR_SIZE_MAX:
        raise _fail(7)  # E2BIG
    value = _read(mem, args[1], args[2]) if args[2] else b""
    os.setxattr(f"/proc/self/fd/{fd}", name, value, args[3] & 0xFFFFFFFF)


def _pidfd(tid: int) -> int:
    """A pidfd of thread ``tid`` (``PIDFD_THREAD``), else of its thread group (before Linux 6.9). Raises
    ``OSError``."""
    try:
        return os.pidfd_open(tid, PIDFD_THREAD)
    except OSError as exc:
        if exc.errno != 22:
            raise
    with open(f"/proc/{tid}/status", "rb") as fh:
        tgid = next(int(line.split()[1]) for line in fh if line.startswith(b"Tgid:"))
    return os.pidfd_open(tgid)


def _socket_target(notif: _Notif, listener: int, check: Callable[[bytes, int], bool],
                   with_address: bool = True) -> tuple[int, bytes]:
    """The socket a ``connect`` or ``bind`` (``listen``: not ``with_address``) names (our copy) and the
    address (our copy), once ``check(address, domain)`` passed (module docstring). Raises ``OSError``
    with the call's error (``EACCES``: not allowed)."""
    tid, args = notif.pid, notif.data.args
    size = int(args[2]) & 0xFFFFFFFF if with_address else 0
    if size > SOCKADDR_MAX:
        raise _fail(22)
    mem = os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    try:
        pidfd = _pidfd(tid)
        try:
            if _libc.ioctl(listener, ctypes.c_ulong(NOTIF_ID_VALID), ctypes.byref(ctypes.c_uint64(notif.id))) != 0:
                raise _fail(3)  # ESRCH: gone; the answer reaches no one
            raw = _read(mem, int(args[1]), size) if size else b""
            sock = int(_libc.syscall(SYS_PIDFD_GETFD, pidfd, ctypes.c_int32(int(args[0]) & 0xFFFFFFFF).value, 0))
            if sock < 0:
                raise _fail(ctypes.get_errno())
        finally:
            os.close(pidfd)
    finally:
        os.close(mem)
    try:
        if not check(raw, domain_of(sock)):  # ENOTSOCK raised
            raise _fail(13)  # EACCES, as Landlock answers
        return sock, raw
    except BaseException:
        os.close(sock)
        raise


def _send(listener: int, notif_id: int, error: int) -> None:
    resp = _Resp(notif_id, 0, error, 0)
    _libc.ioctl(listener, ctypes.c_ulong(NOTIF_SEND), ctypes.byref(resp))  # ENOENT: the caller died meanwhile


def loopback_target(raw: bytes, domain: int) -> tuple[bytes, int] | None:
    """The ``(address, port)`` (16 bytes, IPv4 v4-mapped) a ``connect`` of a socket of ``domain`` to the
    address ``raw`` names when it is a loopback address (:func:`loopback`) of the socket's own family;
    ``None`` otherwise (another host, another family, an address too short)."""
    if domain not in (AF_INET, AF_INET6) or len(raw) < (16 if domain == AF_INET else 24):
        return None
    if int.from_bytes(raw[:2], "little") != domain:
        return None
    address = b"\0" * 10 + b"\xff\xff" + raw[4:8] if domain == AF_INET else raw[8:24]
    return (address, int.from_bytes(raw[2:4], "big")) if loopback(address) else None


def _sockname(sock: int) -> tuple[bytes, int] | None:
    """The socket's own ``(address, port)`` (16 bytes, IPv4 v4-mapped; ``None``: no IP socket). Raises
    ``OSError``."""
    buf, length = ctypes.create_string_buffer(SOCKADDR_MAX), ctypes.c_uint32(SOCKADDR_MAX)
    if _libc.getsockname(sock, buf, ctypes.byref(length)) != 0:
        raise _fail(ctypes.get_errno())
    raw = buf.raw[:length.value]
    family = int.from_bytes(raw[:2], "little")
    if family == AF_INET and len(raw) >= 16:
        return b"\0" * 10 + b"\xff\xff" + raw[4:8], int.from_bytes(raw[2:4], "big")
    if family == AF_INET6 and len(raw) >= 24:
        return raw[8:24], int.from_bytes(raw[2:4], "big")
    return None


def _int_opt(sock: int, level: int, name: int) -> int:
    """An integer socket option. Raises ``OSError``."""
    value, length = ctypes.c_int(0), ctypes.c_uint32(4)
    if _libc.getsockopt(sock, level, name, ctypes.byref(value), ctypes.byref(length)) != 0:
        raise _fail(ctypes.get_errno())
    return int(value.value)


def _children(pid: int) -> list[int] | None:
    """The children of process ``pid``, from each of its threads' ``/proc/PID/task/TID/children`` (empty:
    it has ended); ``None`` when the kernel has no such file (``CONFIG_PROC_CHILDREN`` unset)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                kids += [int(k) for k in fh.read().split()]
        except FileNotFoundError:
            if os.path.isdir(f"/proc/{pid}/task/{tid}"):
                return None
        except (OSError, ValueError):
            pass
    return kids


def _descendants() -> list[int]:
    """The processes below this one, nearest first: by :func:`_children`, else (a kernel without it) by a
    walk of every ``/proc/PID/stat``."""
    out, queue = [], [os.getpid()]
    while queue:
        kids = _children(queue.pop(0))
        if kids is None:
            break
        out += kids
        queue += kids
    else:
        return out
    parent_of: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parent_of.setdefault(ppid, []).append(int(name))
    out, queue = [], [os.getpid()]
    while queue:
        kids = parent_of.get(queue.pop(0), [])
        out += kids
        queue += kids
    return out


def _holders(tid: int, owner: int) -> Iterator[int]:
    """Where a listener is looked for: the caller's thread, the thread that made it listen, then (only
    when neither holds it: a walk of ``/proc``) every descendant."""
    yield tid
    yield owner
    yield from _descendants()


def _pin(net: Net, target: tuple[bytes, int], tid: int) -> int:
    """Our copy of the socket this launch made listen on ``target`` (``(address, port)``), taken from a
    process of the domain that holds it (where it was found last, :data:`Net.found`, then the caller, the
    one that made it listen, every descendant), once it is that very socket (its cookie), still listening
    (``SO_ACCEPTCONN``) on exactly ``target``; ``-1`` when there is none (the record is then forgotten).
    Held while the ``connect`` is made, it keeps the socket, and so its port (bound by number:
    :func:`_bind_loopback`), from any other process. Where it was found is only where to look first:
    what is taken there is checked the same way (a descriptor closed, or a process gone and its number
    reused, holds no socket of that cookie)."""
    record = net.listeners.get(target)
    if record is None:
        return -1
    cookie, inode, owner = record
    name = f"socket:[{inode}]"
    last = net.found.get(target)
    if last is not None and (copy := _take(last[0], last[1], name, cookie, target)) is not None and copy >= 0:
        return copy
    seen: set[int] = set()
    for pid in _holders(tid, owner):
        if pid in seen:
            continue
        seen.add(pid)
        try:
            numbers = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for number in numbers:
            copy = _take(pid, number, name, cookie, target)
            if copy is None:
                continue
            if copy >= 0:
                net.found[target] = (pid, number)
                return copy
            break  # that socket, held here, is not (or no longer) the listener
    net.listeners.pop(target, None)
    net.found.pop(target, None)
    return -1


def _take(pid: int, number: str, name: str, cookie: int, target: tuple[bytes, int]) -> int | None:
    """Our copy of descriptor ``number`` of process ``pid`` when it is the socket ``name``
    (``socket:[INODE]``) of ``cookie``, listening on ``target``; ``-1`` when it is that inode but not (or no
    longer) that listener; ``None`` when it is not that inode or cannot be taken."""
    try:
        if os.readlink(f"/proc/{pid}/fd/{number}") != name:
            return None
        pidfd = _pidfd(pid)
    except (OSError, StopIteration):
        return None
    try:
        copy = int(_libc.syscall(SYS_PIDFD_GETFD, pidfd, int(number), 0))
    finally:
        os.close(pidfd)
    if copy < 0:
        return None
    try:
        if _cookie(copy) == cookie and _int_opt(copy, SOL_SOCKET, SO_ACCEPTCONN) and _sockname(copy) == target:
            return copy
    except OSError:
        pass
    os.close(copy)
    return -1


def _start_connect(sock: int, raw: bytes) -> tuple[int, bool]:
    """Start connecting ``sock`` (our copy of the caller's socket) to ``raw`` without blocking this
    process: the error (``0``: connected, ``EINPROGRESS``: under way) and whether the caller's socket
    blocks. A blocking socket is made non-blocking for the call only (the flag is its open file's, shared
    with the caller, which waits in this very ``connect`` meanwhile)."""
    blocking = os.get_blocking(sock)
    if blocking:
        os.set_blocking(sock, False)
    try:
        ret = _libc.connect(sock, ctypes.create_string_buffer(raw, len(raw)), len(raw))
        err = ctypes.get_errno() if ret != 0 else 0
    finally:
        if blocking:
            os.set_blocking(sock, True)
    return (err or 13) if ret != 0 else 0, blocking


def _handle_connect(notif: _Notif, listener: int, net: Net) -> None:
    """A ``connect``, checked (one of ``net.peers``; else a loopback address and port a listener of this
    launch holds, :func:`_pin`, else ``ECONNREFUSED`` for loopback, as in a network namespace of one's
    own, ``EACCES`` elsewhere), then made by the supervisor without blocking; a blocking caller is answered
    when it completes (:func:`settle`). A ``connect`` to a listener of the launch still under way is
    followed by its socket's cookie and the listener held (:func:`_follow`). Beyond :data:`CONNECTED_MAX`
    sockets connected and live (after a look that frees those ended, :func:`forget_disconnected`) a
    ``connect`` is ``EADDRNOTAVAIL``, never made."""
    pin = -1
    try:
        sock, raw = _socket_target(notif, listener, lambda raw, domain: may_connect(raw, domain, net.peers)
                                   or loopback_target(raw, domain) is not None)
    except OSError as exc:
        _send(listener, notif.id, -(exc.errno or 13))
        return
    except Exception:  # never let the command wait for ever, never allow on a doubt
        _send(listener, notif.id, -13)
        return
    try:
        domain = domain_of(sock)
        if not may_connect(raw, domain, net.peers):
            target = loopback_target(raw, domain)
            pin = _pin(net, target, notif.pid) if target is not None else -1
            if pin < 0:
                raise _fail(111)  # ECONNREFUSED: no listener of this launch there
        inet = domain in (AF_INET, AF_INET6) and int.from_bytes(raw[:2], "little") == domain
        if inet and len(net.connected) >= CONNECTED_MAX:
            forget_disconnected(net)
            if len(net.connected) >= CONNECTED_MAX:
                raise _fail(EADDRNOTAVAIL)  # as when no source port is free: the launch holds CONNECTED_MAX
        err, blocking = _start_connect(sock, raw)
        if inet and err in (0, EINPROGRESS):
            _connected(net, sock, raw)
        if err == EINPROGRESS and pin >= 0 and not blocking:
            _follow(net, sock, domain, raw, pin)  # the listener held (one copy of it) while the connect is under way
            pin = -1
    except BaseException as exc:
        os.close(sock)
        if pin >= 0:
            os.close(pin)
        _send(listener, notif.id, -(exc.errno or 13) if isinstance(exc, OSError) else -13)
        return
    if err == EINPROGRESS and blocking:  # a blocking caller waits at most its SO_SNDTIMEO, as in the kernel
        net.pending[sock] = (notif.id, _send_timeout(sock), pin, domain, raw)
        return
    if pin >= 0:
        os.close(pin)
    os.close(sock)
    _send(listener, notif.id, -err if err else 0)


def _connected(net: Net, sock: int, raw: bytes) -> None:
    """Count ``sock`` (our copy of a socket the supervisor just connected, or began to, to ``raw``) in
    ``net.connected``: its cookie and where it connects from and to. Never raises (a socket it cannot read
    is not counted)."""
    try:
        cookie = _cookie(sock)
        net.connected[cookie] = (int.from_bytes(raw[:2], "little"), _sockid(_sockaddr(sock), raw, cookie))
    except OSError:
        pass


def forget_disconnected(net: Net) -> None:
    """Give back the slot of each socket of ``net.connected`` that holds no source port of its own any
    more: no socket of its cookie at its addresses and ports (closed, disconnected, its connect failed), or
    one in ``TIME_WAIT`` (the kernel's, not the launch's: a suite's closed connections are not counted);
    by :func:`states`, lookups alone. A look that fails gives nothing back."""
    try:
        found = states([(cookie, family, sockid) for cookie, (family, sockid) in net.connected.items()], None)
    except OSError:
        return
    for cookie in list(net.connected):
        if found.get(cookie, TCP_TIME_WAIT) == TCP_TIME_WAIT:
            del net.connected[cookie]


def _follow(net: Net, sock: int, domain: int, raw: bytes, pin: int) -> None:
    """Follow the ``connect`` under way of ``sock`` (our copy of the caller's socket, of ``domain``) to ``raw``,
    the address of the listener ``pin`` (our copy, taken by :func:`_pin`; once this returns, ``net``'s:
    closed here when a copy of that listener is held already): its cookie in ``net.connecting``, the
    listener in ``net.pins`` until :func:`release` finds the connect ended. Raises ``OSError`` (``pin``
    then still the caller's to close)."""
    mine, theirs = _cookie(sock), _cookie(pin)
    sockid = _sockid(_sockaddr(sock), raw, mine)
    if theirs in net.pins:
        os.close(pin)
    else:
        net.pins[theirs] = pin
    net.connecting[mine] = (domain, sockid, theirs)


def _send_timeout(sock: int) -> float | None:
    """When a blocking ``connect`` of ``sock`` ends by its ``SO_SNDTIMEO`` (``time.monotonic()``; ``None``: no
    timeout, or it cannot be read)."""
    tv, length = (ctypes.c_int64 * 2)(), ctypes.c_uint32(16)
    if _libc.getsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, ctypes.byref(tv), ctypes.byref(length)) != 0:
        return None
    seconds = tv[0] + tv[1] / 1e6
    return time.monotonic() + seconds if seconds > 0 else None


def settle(listener: int, net: Net, ready: frozenset[int] = frozenset()) -> None:
    """Settle ``net.pending``, the blocking callers' ``connect``s: one whose socket is ``ready`` (its outcome
    known: writable, error or hang-up) is answered with that outcome (``SO_ERROR``); one whose ``SO_SNDTIMEO``
    has passed with ``EINPROGRESS`` (the kernel's answer, still connecting); one whose caller no longer waits
    (killed: ``NOTIF_ID_VALID`` fails) is dropped. Each time our copy of its socket is closed: a caller's
    socket is held only while it waits (a connect to a listener of the launch not known to be over is
    followed on by its cookie alone, :func:`_follow`, the listener held; one known to be over lets the
    listener go)."""
    for sock, (notif_id, deadline, pin, domain, raw) in list(net.pending.items()):
        if sock in ready:
            try:
                err = _int_opt(sock, SOL_SOCKET, SO_ERROR)
            except OSError as exc:
                err = exc.errno or 13
            _send(listener, notif_id, -err if err else 0)
        elif _libc.ioctl(listener, ctypes.c_ulong(NOTIF_ID_VALID), ctypes.byref(ctypes.c_uint64(notif_id))) == 0:
            if deadline is None or time.monotonic() < deadline:
                continue
            _send(listener, notif_id, -EINPROGRESS)  # its SO_SNDTIMEO ended: the kernel's answer, still connecting
        del net.pending[sock]
        if pin >= 0 and sock not in ready:  # may still be under way: followed by its cookie, the listener held
            try:
                _follow(net, sock, domain, raw, pin)
                pin = -1
            except OSError:  # not seen: getsockopt and getsockname of sockets held here
                pass
        if pin >= 0:
            os.close(pin)
        os.close(sock)


def release(net: Net) -> None:
    """Forget each ``connect`` of ``net.connecting`` no longer under way (its socket no longer in
    ``SYN_SENT``: connected, refused, timed out, or closed by every process that held it, a killed caller's
    included: :func:`under_way`) and close the copy of each listener of ``net.pins`` no such ``connect``
    goes to. A listener stays held while a ``connect`` to it is under way, whoever holds the connecting
    socket (a child the caller forked lives on): a SYN the kernel sends again reaches that very listener,
    never a host process that took its port meanwhile. When the look fails, everything stays held."""
    net.checked = time.monotonic()
    if not net.connecting:
        return
    try:
        live = under_way(net.connecting)
    except OSError:
        return
    for cookie in [c for c in net.connecting if c not in live]:
        del net.connecting[cookie]
    wanted = {theirs for _, _, theirs in net.connecting.values()}
    for theirs in [c for c in net.pins if c not in wanted]:
        os.close(net.pins.pop(theirs))


def under_way(connecting: dict[int, tuple[int, bytes, int]], dump: bool = True) -> set[int]:
    """The cookies of ``connecting`` (cookie → ``(family, struct inet_diag_sockid, …)``, :func:`_sockid`)
    whose socket is in ``SYN_SENT`` in this network namespace (:func:`states`: a dump of the ``SYN_SENT`` TCP
    sockets per family, then a lookup of each cookie it did not list; ``dump`` False: lookups alone).
    Raises ``OSError``."""
    seen = states([(cookie, family, sockid) for cookie, (family, sockid, _) in connecting.items()],
                  TCP_SYN_SENT if dump else None)
    return {cookie for cookie in connecting if seen.get(cookie) == TCP_SYN_SENT}


def states(sockets: list[tuple[int, int, bytes]], dump: int | None) -> dict[int, int]:
    """The TCP state (``TCP_ESTABLISHED`` 1 … ``TCP_CLOSING`` 11) of each of ``sockets`` (``(cookie, family,
    struct inet_diag_sockid)``, :func:`_sockid`) found in this network namespace, by cookie, through
    ``sock_diag`` (``NETLINK_SOCK_DIAG``, no privilege needed, what ``ss`` reads; a netlink socket closed
    after): one dump per family of the sockets in state ``dump`` (``None``: no dump), then, for each cookie
    the dump did not list, a lookup of that very socket (its addresses, ports and cookie): a dump of several
    parts may skip a socket when others come and go meanwhile, a lookup does not, so a socket is absent
    only when the kernel finds no socket of its cookie there (``ENOENT``, ``ESTALE``). A connection in
    ``TIME_WAIT`` keeps its socket's cookie (state 6). Raises ``OSError``."""
    import _socket
    seen: dict[int, int] = {}
    nl = _socket.socket(AF_NETLINK, _socket.SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
    try:
        seq = 0
        for family in sorted({family for _, family, _ in sockets} if dump is not None else ()):
            seq += 1
            nl.sendto(_diag_request(family, NLM_F_REQUEST | NLM_F_DUMP, seq, bytes(48), 1 << (dump or 0)), (0, 0))
            while not _diag_part(nl.recv(1 << 16), seen):
                pass
        for cookie, family, sockid in sockets:
            if cookie in seen:
                continue
            seq += 1
            nl.sendto(_diag_request(family, NLM_F_REQUEST, seq, sockid, 0), (0, 0))
            try:
                _diag_part(nl.recv(1 << 16), seen)
            except OSError as exc:
                if exc.errno not in (2, 116):  # ENOENT: no such socket; ESTALE: another socket there
                    raise
    finally:
        nl.close()
    return seen


def _diag_request(family: int, flags: int, seq: int, sockid: bytes, mask: int) -> bytes:
    """A netlink message asking ``sock_diag`` for TCP sockets of ``family``: ``flags`` with ``NLM_F_DUMP``,
    those in the states of ``mask`` (bit ``1 << state``); without it, the one ``sockid`` names (48 bytes,
    :func:`_sockid`)."""
    body = bytes([family, IPPROTO_TCP, 0, 0]) + mask.to_bytes(4, sys.byteorder) + sockid
    return ((16 + len(body)).to_bytes(4, sys.byteorder) + SOCK_DIAG_BY_FAMILY.to_bytes(2, sys.byteorder)
            + flags.to_bytes(2, sys.byteorder) + seq.to_bytes(4, sys.byteorder) + bytes(4) + body)


def _sockid(local: bytes, remote: bytes, cookie: int) -> bytes:
    """The ``struct inet_diag_sockid`` (48 bytes) of the socket of ``cookie`` connecting from ``local`` to
    ``remote`` (``struct sockaddr`` of one family, IPv6 ones v4-mapped alike)."""
    inet = int.from_bytes(local[:2], "little") == AF_INET

    def address(raw: bytes) -> bytes:
        return raw[4:8] + bytes(12) if inet else raw[8:24]

    return (local[2:4] + remote[2:4] + address(local) + address(remote) + bytes(4)
            + (cookie & 0xFFFFFFFF).to_bytes(4, sys.byteorder) + (cookie >> 32).to_bytes(4, sys.byteorder))


def _diag_part(data: bytes, out: dict[int, int]) -> bool:
    """Add the sockets of one part of a ``sock_diag`` answer (``struct inet_diag_msg`` messages) to ``out``
    (cookie → TCP state); whether the answer is done. Raises ``OSError`` (its error; ``EPROTO`` for a
    malformed part)."""
    off = 0
    while off + 16 <= len(data):
        length = int.from_bytes(data[off:off + 4], sys.byteorder)
        kind = int.from_bytes(data[off + 4:off + 6], sys.byteorder)
        if length < 16 or off + length > len(data):
            raise _fail(71)
        if kind == NLMSG_DONE:
            return True
        if kind == NLMSG_ERROR:
            raise _fail(-int.from_bytes(data[off + 16:off + 20], sys.byteorder, signed=True) or 71)
        if kind == SOCK_DIAG_BY_FAMILY and length >= 16 + 72:
            msg = data[off + 16:off + length]  # family, state, timer, retrans, then the id: cookie[2] at 40
            cookie = int.from_bytes(msg[44:48], sys.byteorder) | int.from_bytes(msg[48:52], sys.byteorder) << 32
            out[cookie] = msg[1]
        off += (length + 3) & ~3
    if off != len(data):
        raise _fail(71)
    return False


def _cookie(sock: int) -> int:
    """The socket's ``SO_COOKIE``. Raises ``OSError``."""
    cookie, length = ctypes.c_uint64(0), ctypes.c_uint32(8)
    if _libc.getsockopt(sock, SOL_SOCKET, SO_COOKIE, ctypes.byref(cookie), ctypes.byref(length)) != 0:
        raise _fail(ctypes.get_errno())
    return int(cookie.value)


def _bind_or_listen(notif: _Notif, listener: int, net: Net, listen: bool) -> int:
    """A ``bind`` (to a loopback address and one of ``net.binds``, :func:`may_bind`, port 0 by number,
    :func:`_bind_loopback`; the socket's cookie then kept in ``net.bound``) or a ``listen`` (only on a socket
    of ``net.bound``; where it listens then kept in ``net.listeners``, what :func:`_pin` looks for), made by
    the supervisor on its copy of the socket; the call's result (``0``). Raises ``OSError`` with the call's
    error."""
    check = (lambda raw, domain: domain in (AF_INET, AF_INET6)) if listen else (
        lambda raw, domain: may_bind(raw, domain, net.binds))
    sock, raw = _socket_target(notif, listener, check, with_address=not listen)
    try:
        cookie = _cookie(sock)
        if listen:
            if cookie not in net.bound:  # never bound here: unbound (0.0.0.0 at listen) or its address
                raise _fail(13)          # not locked to loopback (a connect's, reset on a disconnect)
            ret = _libc.listen(sock, ctypes.c_int(int(notif.data.args[1]) & 0xFFFFFFFF))
            target = _sockname(sock) if ret == 0 else None
            if target is not None:  # one record per address and port, of a cookie of net.bound
                net.listeners[target] = (cookie, os.fstat(sock).st_ino, notif.pid)
                net.found.pop(target, None)
        else:
            inet = domain_of(sock) in (AF_INET, AF_INET6)
            if inet and len(net.bound) >= BOUND_MAX:
                forget_closed(net)
                if len(net.bound) >= BOUND_MAX:
                    raise _fail(EADDRINUSE)  # as when no port is free: the launch holds BOUND_MAX
            if inet:
                raw = on_loopback(raw)
            by_number = inet and int.from_bytes(raw[2:4], "big") == 0
            if by_number:
                ret = _bind_loopback(sock, raw)
            else:
                ret = _libc.bind(sock, ctypes.create_string_buffer(raw, len(raw)), len(raw))
            if ret == 0 and inet:  # a loopback address bound: locked to it for the socket's life
                _bound(net, cookie, _sockaddr(sock), by_number)
        if ret != 0:
            raise _fail(ctypes.get_errno())
        return 0
    finally:
        os.close(sock)


def _bound(net: Net, cookie: int, address: bytes, free: bool) -> None:
    """Keep ``cookie``'s slot in ``net.bound`` (``address``: where it is bound); ``free``: that port was free
    when it was bound (:func:`_bind_loopback`), so a socket kept at that very address is gone (its port
    given back and taken again): its slot is given back."""
    if free and (old := net.bound_at.get(address)) is not None:
        net.bound.pop(old, None)
    net.bound[cookie] = address
    net.bound_at[address] = cookie


def forget_closed(net: Net) -> None:
    """Give back the slot of each socket of ``net.bound`` that no longer holds its address and port: the
    supervisor binds a socket of its own to exactly that ``struct sockaddr`` (no ``SO_REUSEADDR``, so any
    socket bound there, listening or not, with ``SO_REUSEADDR`` or not, or a connection's ``TIME_WAIT``,
    makes it fail with ``EADDRINUSE``; then closed at once, never listening); a bind that succeeds means the
    sandbox's socket is gone (bound by number, it keeps its port for its life). Its listener records go
    with it. A port a host process took meanwhile keeps the slot until the host gives it back (never a slot
    given back for a socket that lives). Costs one ``socket``, ``bind`` and ``close`` per slot, only when
    every slot is taken."""
    for cookie, raw in list(net.bound.items()):
        probe = int(_libc.socket(int.from_bytes(raw[:2], "little"), SOCK_STREAM | SOCK_CLOEXEC, 0))
        if probe < 0:
            return  # EMFILE and the like: nothing known, nothing given back
        try:
            free = _libc.bind(probe, ctypes.create_string_buffer(raw, len(raw)), len(raw)) == 0
        finally:
            os.close(probe)
        if free:
            del net.bound[cookie]
            if net.bound_at.get(raw) == cookie:
                del net.bound_at[raw]
    for target, (cookie, _, _) in list(net.listeners.items()):
        if cookie not in net.bound:
            del net.listeners[target]
            net.found.pop(target, None)


def _sockaddr(sock: int) -> bytes:
    """The ``struct sockaddr`` ``sock`` is bound to (``getsockname``). Raises ``OSError``."""
    buf, length = ctypes.create_string_buffer(SOCKADDR_MAX), ctypes.c_uint32(SOCKADDR_MAX)
    if _libc.getsockname(sock, buf, ctypes.byref(length)) != 0:
        raise _fail(ctypes.get_errno())
    return buf.raw[:length.value]


def _bind_loopback(sock: int, raw: bytes) -> int:
    """Bind ``sock`` to the loopback address of ``raw`` (port 0) and a free port named by number: the
    socket then keeps that port for its life, whatever it does (a port the kernel picks for port 0 is given
    back when the socket disconnects, e.g. ``shutdown`` of a listener, while its file lives on, and
    another process could take it meanwhile). The port is the one a socket of the supervisor's own just
    got there (then closed, never listening: nothing lingers), tried up to 16 times (``EADDRINUSE``: taken
    meanwhile). The call's result: ``0``, or ``-1`` with ``errno`` set."""
    family = int.from_bytes(raw[:2], "little")
    ret = -1
    for _ in range(16):
        probe = int(_libc.socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0))
        if probe < 0:
            return -1
        try:
            if _libc.bind(probe, ctypes.create_string_buffer(raw, len(raw)), len(raw)) != 0:
                return -1
            bound = _sockname(probe)
        finally:
            os.close(probe)
        if bound is None:
            return -1
        named = raw[:2] + bound[1].to_bytes(2, "big") + raw[4:]
        ret = int(_libc.bind(sock, ctypes.create_string_buffer(named, len(named)), len(named)))
        if ret == 0 or ctypes.get_errno() != EADDRINUSE:
            return ret
    return ret


def domain_of(sock: int) -> int:
    """The socket's family (``SO_DOMAIN``). Raises ``OSError`` (``ENOTSOCK``)."""
    domain, length = ctypes.c_int(0), ctypes.c_uint32(4)
    if _libc.getsockopt(sock, SOL_SOCKET, SO_DOMAIN, ctypes.byref(domain), ctypes.byref(length)) != 0:
        raise _fail(ctypes.get_errno())
    return int(domain.value)


def handle(listener: int, machine: str, allowed: tuple[str, ...], net: Net | None = None) -> None:
    """Receive one notification and answer it (the change made, or its error; a ``connect`` to one of
    ``net.peers`` made, perhaps answered later by a thread; a ``bind`` or ``listen`` as ``net`` allows)."""
    notif = _Notif()
    if _libc.ioctl(listener, ctypes.c_ulong(NOTIF_RECV), ctypes.byref(notif)) != 0:
        return  # ENOENT: the caller died meanwhile; EINTR: a signal, poll again
    net = net if net is not None else Net()
    if notif.data.nr == SYS_CONNECT.get(machine):
        _handle_connect(notif, listener, net)
        return
    if notif.data.nr in (SYS_BIND.get(machine), SYS_LISTEN.get(machine)):
        try:
            _send(listener, notif.id, _bind_or_listen(notif, listener, net, notif.data.nr == SYS_LISTEN[machine]))
        except OSError as exc:
            _send(listener, notif.id, -(exc.errno or 13))
        except Exception:  # never let the command wait for ever, never allow on a doubt
            _send(listener, notif.id, -13)
        return
    resp = _Resp(notif.id, 0, 0, 0)
    try:
        _apply(notif, machine, listener, allowed)
    except OSError as exc:
        resp.error = -(exc.errno or 13)
    except Exception:  # never let the command wait for ever, never allow on a doubt
        resp.error = -13
    _libc.ioctl(listener, ctypes.c_ulong(NOTIF_SEND), ctypes.byref(resp))  # ENOENT: the caller died meanwhile


def serve(listener: int, child: int, machine: str, allowed: tuple[str, ...], net: Net | None = None) -> int:
    """Answer ``listener``'s notifications until process ``child`` (the command) exits; its status
    (``os.waitstatus_to_exitcode``: negative for a signal). Signals of :data:`FORWARDED` are passed on.
    ``net``: where a ``connect`` may go, what may be bound and listen (:class:`Net`)."""
    net = net if net is not None else Net()
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)

    def forward(signum: int, frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)
    listening = True
    while (status := _reap(child)) is None:  # first: the command may have ended before the handler was set
        poller = select.poll()
        if listening:
            poller.register(listener, select.POLLIN)
        poller.register(wake_r, select.POLLIN)
        for sock in net.pending:  # a blocking caller's connect under way: its outcome
            poller.register(sock, select.POLLOUT)
        waits = [LIVENESS_MS / 1000 if deadline is None else min(LIVENESS_MS / 1000, deadline - time.monotonic())
                 for _, deadline, _, _, _ in net.pending.values()]
        if net.connecting:  # the next look at which connects to a listener of the launch are under way
            waits.append(net.checked + LIVENESS_MS / 1000 - time.monotonic())
        ready = set()
        for fd, events in poller.poll(max(0, int(min(waits) * 1000) + 1) if waits else None):
            if fd == wake_r:
                _drain(wake_r)
            elif fd != listener:
                ready.add(fd)
            elif events & select.POLLIN:
                handle(listener, machine, allowed, net)
            else:  # POLLHUP: no process of the domain is left
                listening = False
        if net.pending:
            settle(listener, net, frozenset(ready))
        if net.connecting and time.monotonic() >= net.checked + LIVENESS_MS / 1000:
            release(net)
    return status


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _reap(child: int) -> int | None:
    """Reap every exited child (orphans below this subreaper too); ``child``'s status once it exited."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 1
        if pid == 0:
            return None
        if pid == child:
            return os.waitstatus_to_exitcode(status)
