"""Loopback-only network for a sandboxed agent (``--sandbox-network loopback:PORT[,PORT…]``;
docs/contracts.md §9).

bubblewrap's ``--unshare-net`` gives the sandbox a network namespace of its own with nothing but a
loopback device: the host's ``127.0.0.1`` (a local model server, the scripted API of the tests) is
out of reach as well as the internet. To let an agent reach a few local TCP ports and nothing else,
the two sides are joined through Unix sockets, which cross namespaces as files:

* on the host, :class:`HostRelay` listens on ``FOLDER/PORT.sock`` for each allowed port and joins each
  connection to ``127.0.0.1:PORT``;
* inside, this file run as a script (:func:`inside_argv`: ``python -I -S relay.py inside PORT=SOCK … --
  COMMAND…``) listens on ``127.0.0.1:PORT`` (and ``[::1]:PORT`` where the namespace has IPv6), joins
  each connection to its socket, runs ``COMMAND`` and exits with its status.

So a client configured for ``http://127.0.0.1:PORT`` works unchanged, DNS and every other address
fail, and an agent that talks to the socket itself reaches the same allowed port only. Plain TCP is
relayed byte for byte (HTTP, server-sent events, WebSockets).

A service instance (:mod:`.service_box`) is the other way round: it runs in a network namespace of its own
and is reached from the host. Inside, this file run as ``relay.py serve PORT=SOCK -- COMMAND…``
(:func:`serve_argv`) starts the service, waits until ``127.0.0.1:PORT`` accepts inside, then listens on
``SOCK`` and joins each connection to that port; on the host, :class:`HostPort` listens on
``127.0.0.1:PORT`` and joins each connection to ``SOCK``. The socket appears only once the service accepts:
its existence is the service's readiness. Remote endpoints cannot be reached this
way (TLS needs the real host name): the default ``allowlist`` network relays the filtering proxy of
:mod:`.proxy` in the same way (one more ``PORT=SOCK`` pair), and clients reach remote hosts through
it. Standard library only, because the inside half runs as a script with ``-I -S`` under whatever
interpreter is bound into the sandbox.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["HostRelay", "HostPort", "inside_argv", "serve_argv", "close_listener", "MAX_SOCKET_PATH", "MAX_CONNECTIONS",
           "main"]

_CHUNK = 65536


def _pump(src: socket.socket, dst: socket.socket, through: Callable[[bytes], bytes] | None = None) -> None:
    """Copy bytes from ``src`` to ``dst`` until EOF, then half-close ``dst``; ``through``: what of each read goes on
    (it sees every byte, in order)."""
    try:
        while True:
            data = src.recv(_CHUNK)
            if not data:
                break
            dst.sendall(through(data) if through else data)
    except OSError:
        pass
    finally:
        _shut(socket.SHUT_WR, dst)


def _shut(how: int, *socks: socket.socket) -> None:
    """``shutdown(how)`` each of ``socks``, one closed or reset already let be."""
    for sock in socks:
        try:
            sock.shutdown(how)
        except OSError:
            pass


def _join(a: socket.socket, b: socket.socket,
          forward: Callable[[socket.socket, socket.socket], None] | None = None,
          back_through: Callable[[bytes], bytes] | None = None) -> None:
    """Relay both directions between ``a`` and ``b`` (blocks until both are done), then close both. ``forward``: what
    carries ``a`` to ``b`` (default :func:`_pump`; it must shut ``b``'s sending side when done), on this thread, while
    another thread pumps ``b`` back to ``a``, each read through ``back_through`` (:func:`_pump`)."""
    back = threading.Thread(target=_pump, args=(b, a, back_through), daemon=True)
    back.start()
    (forward or _pump)(a, b)
    back.join()
    a.close()
    b.close()


#: Connections one listener of a relay joins at once (each holds two threads and two descriptors of the process
#: that serves it, the host's for :class:`HostRelay` and :class:`HostPort`); more are closed as they come, as the
#: filtering proxy answers past its own cap (hatk39: a sandbox made the host hold every connection it opened).
MAX_CONNECTIONS = 256


class _Joined:
    """The connections a relay's listeners joined and still hold: at most ``limit`` per listener at once
    (:meth:`take`), all cut by :meth:`cut` (a relay's close)."""

    def __init__(self, limit: int = MAX_CONNECTIONS) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._open: dict[socket.socket, socket.socket] = {}

    def slots(self) -> threading.BoundedSemaphore:
        """The bound of one listener."""
        return threading.BoundedSemaphore(self.limit)

    def hold(self, a: socket.socket, b: socket.socket) -> None:
        with self._lock:
            self._open[a] = b

    def drop(self, a: socket.socket) -> None:
        with self._lock:
            self._open.pop(a, None)

    def cut(self) -> None:
        """Shut both ends of every connection still joined (their threads then end)."""
        with self._lock:
            pairs = list(self._open.items())
            self._open.clear()
        for a, b in pairs:
            for sock in (a, b):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _serve(listener: socket.socket, connect: object, stop: threading.Event, joined: _Joined | None = None) -> None:
    """Accept on ``listener`` until ``stop`` is set; each connection is joined, in a thread, to a new
    socket made by ``connect()`` (a connection that cannot be made is closed), at most
    :data:`MAX_CONNECTIONS` at once (``joined``'s limit): one past it is closed at once, never waited for."""
    joined = joined or _Joined()
    slots = joined.slots()
    while not stop.is_set():
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        if not slots.acquire(blocking=False):
            conn.close()
            continue
        try:
            peer = connect()  # type: ignore[operator]
        except OSError:
            conn.close()
            slots.release()
            continue
        joined.hold(conn, peer)

        def run(conn: socket.socket = conn, peer: socket.socket = peer) -> None:
            try:
                _join(conn, peer)
            finally:
                joined.drop(conn)
                slots.release()

        threading.Thread(target=run, daemon=True).start()


def close_listener(listener: socket.socket) -> None:
    """Stop a listening socket: shut it down (which wakes a thread blocked in its ``accept``), then close it."""
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    listener.close()


#: A Unix socket's path must fit in ``sun_path`` (108 bytes on Linux, with its NUL).
MAX_SOCKET_PATH = 100


class HostRelay:
    """The host half: ``FOLDER/PORT.sock`` → ``host:PORT`` for each port in ``ports`` (``host:TARGET``
    when ``targets`` maps ``PORT`` to another port: the inside half still listens on ``PORT``; ``hosts``
    maps a port to another address of the host, e.g. ``::1``).

    :meth:`start` (once; later calls do nothing) creates the folder and the listening sockets (raises
    ``OSError``); a ``folder`` whose socket paths would be too long for a Unix socket is replaced by a
    new private folder under ``/tmp`` made by ``fallback`` (the caller passes an owner-named one,
    :func:`pytest_homefield.sandbox.tempdirs.mkdtemp`; this module stays stdlib-only because its
    inside half runs in the sandbox with ``python -I -S``). :meth:`close` stops accepting and removes
    the sockets (connections in flight end with their peers)."""

    def __init__(self, ports: Sequence[int], folder: Path, host: str = "127.0.0.1", *,
                 fallback: Callable[[], Path] | None = None, targets: Mapping[int, int] | None = None,
                 hosts: Mapping[int, str] | None = None) -> None:
        self.ports = tuple(ports)
        #: inside port → host port where they differ (a service the tests expect at a fixed port)
        self.targets = dict(targets or {})
        #: inside port → the host's address where it is not ``host`` (a local server on ``::1`` alone)
        self.hosts = dict(hosts or {})
        self.folder = Path(folder)
        self._fallback = fallback or (lambda: Path(tempfile.mkdtemp(prefix="hf-net-", dir="/tmp")))
        self.host = host
        self._stop = threading.Event()
        self._joined = _Joined()
        self._listeners: list[socket.socket] = []
        self._started = False
        self._own_folder = False

    def socket_path(self, port: int) -> Path:
        """Where the socket of ``port`` is."""
        return self.folder / f"{port}.sock"

    def start(self) -> HostRelay:
        """Listen on every socket (the first time); returns ``self``."""
        if self._started:
            return self
        self._started = True
        if len(str(self.socket_path(65535))) > MAX_SOCKET_PATH:
            self.folder = self._fallback()
            self._own_folder = True
        self.folder.mkdir(parents=True, exist_ok=True)
        for port in self.ports:
            path = self.socket_path(port)
            path.unlink(missing_ok=True)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
            listener.listen(64)
            self._listeners.append(listener)

            def connect(port: int = self.targets.get(port, port), host: str = self.hosts.get(port, self.host)
                        ) -> socket.socket:
                return socket.create_connection((host, port), timeout=30)

            threading.Thread(target=_serve, args=(listener, connect, self._stop, self._joined), daemon=True).start()
        return self

    def mapping(self) -> list[str]:
        """``PORT=SOCKET`` words for :func:`inside_argv`."""
        return [f"{port}={self.socket_path(port)}" for port in self.ports]

    def close(self) -> None:
        """Stop accepting, cut the connections in flight and remove the sockets."""
        self._stop.set()
        for listener in self._listeners:
            close_listener(listener)
        self._listeners.clear()
        self._joined.cut()
        for port in self.ports:
            self.socket_path(port).unlink(missing_ok=True)
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)


class HostPort:
    """The host half of a service's relay: ``host:port`` → the Unix socket ``sock`` (made inside the
    service's sandbox by ``relay.py serve``, :func:`serve_argv`). A connection that arrives before the socket
    exists, or that the socket refuses, is closed. :meth:`start` raises ``OSError`` when the port cannot be
    bound (in use); :meth:`close` stops accepting (connections in flight end with their peers)."""

    def __init__(self, port: int, sock: Path, host: str = "127.0.0.1") -> None:
        self.port, self.sock, self.host = port, Path(sock), host
        self._stop = threading.Event()
        self._joined = _Joined()
        self._listener: socket.socket | None = None

    def start(self) -> HostPort:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self.host, self.port))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self._listener = listener

        threading.Thread(target=_serve, args=(listener, self._connect, self._stop, self._joined), daemon=True).start()
        return self

    def _connect(self) -> socket.socket:
        """A connection to :attr:`sock` that never follows a link: the service's folder is writable by the
        service, which runs what its clients ask (a PostgreSQL's ``COPY … TO PROGRAM 'ln -sf
        /var/run/docker.sock 5432.sock'``), and ``connect`` follows a symlink to any socket of the host. The
        entry is pinned with ``O_PATH | O_NOFOLLOW``, must be a socket, and is connected to through
        ``/proc/self/fd``. Raises ``OSError`` otherwise."""
        fd = os.open(self.sock, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                raise OSError(f"{self.sock} is not a socket")
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(f"/proc/self/fd/{fd}")
            except OSError:
                s.close()
                raise
            return s
        finally:
            os.close(fd)

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            close_listener(self._listener)
            self._listener = None


def serve_argv(python: str, port: int, sock: Path, command: Sequence[str]) -> list[str]:
    """The argv that runs a service's ``command`` inside its sandbox behind the inside half of :class:`HostPort`."""
    return [python, "-I", "-S", os.path.abspath(__file__), "serve", f"{port}={sock}", "--", *command]


def _serve_when_ready(port: int, sock_path: str, proc: subprocess.Popen[bytes], stop: threading.Event) -> None:
    """Wait until ``127.0.0.1:port`` accepts (while ``proc`` runs), then listen on ``sock_path`` and join
    each connection to the port."""
    while proc.poll() is None and not stop.is_set():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            stop.wait(0.01)
    else:
        return
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(64)
    _serve(listener, lambda: socket.create_connection(("127.0.0.1", port), timeout=30), stop)


def inside_argv(python: str, mapping: Sequence[str], command: Sequence[str]) -> list[str]:
    """The argv that runs ``command`` inside the sandbox behind the inside half of the relay."""
    return [python, "-I", "-S", os.path.abspath(__file__), "inside", *mapping, "--", *command]


def _listen_inside(port: int, sock_path: str, stop: threading.Event) -> int:
    """Listen on ``127.0.0.1:port`` and, where possible, ``[::1]:port``; returns how many listen."""
    count = 0
    for family, address in ((socket.AF_INET, ("127.0.0.1", port)), (socket.AF_INET6, ("::1", port))):
        try:
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(address)
            listener.listen(64)
        except OSError:
            if family == socket.AF_INET:
                raise
            continue

        def connect() -> socket.socket:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            return s

        threading.Thread(target=_serve, args=(listener, connect, stop), daemon=True).start()
        count += 1
    return count


def main(argv: Sequence[str] | None = None) -> int:
    """``relay.py inside PORT=SOCK … -- COMMAND…``: the inside half (``serve``: a service's, :func:`serve_argv`).
    Exit status: the command's (128 + signal number when a signal ended it), 127 when it cannot start, 2 on a
    usage error."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[0] not in ("inside", "serve") or "--" not in args:
        print("usage: relay.py inside|serve PORT=SOCK ... -- COMMAND ...", file=sys.stderr)
        return 2
    cut = args.index("--")
    pairs, command = args[1:cut], args[cut + 1:]
    stop = threading.Event()
    serving: list[tuple[int, str]] = []
    try:
        for pair in pairs:
            port, _, path = pair.partition("=")
            if args[0] == "serve":  # a service inside: its socket once its port accepts (after the start)
                serving.append((int(port), path))
                continue
            _listen_inside(int(port), path, stop)
    except (OSError, ValueError) as exc:
        print(f"homefield relay: cannot listen inside the sandbox: {exc}", file=sys.stderr)
        return 2
    try:
        # close_fds=False: the command keeps the descriptors this process inherited (the test run's
        # outcome channel, docs/contracts.md §7); the relay's own sockets are not inheritable
        proc = subprocess.Popen(command, close_fds=False)
    except OSError as exc:
        print(f"homefield relay: cannot start {command[:1]}: {exc}", file=sys.stderr)
        return 127
    for number, path in serving:
        threading.Thread(target=_serve_when_ready, args=(number, path, proc, stop), daemon=True).start()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: proc.send_signal(signum))
    code = proc.wait()
    stop.set()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
