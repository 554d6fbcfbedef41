"""A repository's own loopback servers under a confined network (issue 30, contracts §9): a test that
starts a server on ``127.0.0.1:0`` or ``::1`` and connects to it passes under Landlock (the supervisor
allows a loopback ``connect`` exactly to a port a socket of the same launch listens on, held while it
connects) and under bubblewrap (a network namespace of its own), while a host service on ``127.0.0.1``
stays unreachable; the races of a port given back and taken by the host; and a killed blocking
``connect`` holds nothing of the supervisor. Real Landlock, real bubblewrap, real sockets; each check has
its control (``none``) that shows the same code reaches the host without a sandbox."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo
from helpers.landlock import SANDBOXES, backend, landlock_abi

from pytest_homefield.mine.redgreen import verify_candidate
from pytest_homefield.sandbox import _landlock_supervisor as supervisor
from pytest_homefield.sandbox import bwrap, landlock
from pytest_homefield.sandbox.backends import SandboxBackend
from pytest_homefield.sandbox.landlock import LandlockPolicy, landlock_argv
from pytest_homefield.sandbox.testrun import TEST_ENV_VAR, run_tests

#: A package with a tiny echo server and a client, as a repository under benchmark has them.
ECHO = '''"""An echo server and its client."""
import socket
import threading


class EchoServer:
    """Echo one message per connection, in a thread, on ``(host, 0)``."""

    def __init__(self, host="127.0.0.1", family=socket.AF_INET):
        self.sock = socket.socket(family)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(64))

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (a close alone leaves it listening)
        self.sock.close()


def echo(host, port, message, family=socket.AF_INET, timeout=None):
    with socket.socket(family) as s:
        s.settimeout(timeout)
        s.connect((host, port))
        s.sendall(message)
        return s.recv(64)
'''

#: The repository's tests: its servers on both loopbacks, blocking and with a timeout, HTTP, a server in
#: another process, a refused connect once the server is closed; and the host's service (its port in
#: ``HOST_PORT``), which a test of the repository must not reach.
TESTS = '''import http.client
import http.server
import os
import socket
import subprocess
import sys
import threading

import pytest

from netpkg.echo import EchoServer, echo


def test_v4_blocking():
    srv = EchoServer()
    assert echo("127.0.0.1", srv.port, b"one") == b"one"
    srv.close()


def test_v4_timeout():
    srv = EchoServer()
    assert echo("127.0.0.1", srv.port, b"two", timeout=10) == b"two"
    srv.close()


def test_v6():
    if not socket.has_ipv6 or not os.path.exists("/proc/net/if_inet6"):
        pytest.skip("no IPv6")
    srv = EchoServer("::1", socket.AF_INET6)
    assert echo("::1", srv.port, b"six", socket.AF_INET6) == b"six"
    srv.close()


def test_v4_mapped():
    if not socket.has_ipv6 or not os.path.exists("/proc/net/if_inet6"):
        pytest.skip("no IPv6")
    srv = EchoServer()
    assert echo("::ffff:127.0.0.1", srv.port, b"map", socket.AF_INET6, timeout=10) == b"map"
    srv.close()


def test_http():
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=10)
    conn.request("GET", "/")
    assert conn.getresponse().read() == b"hello"
    srv.shutdown()
    srv.server_close()


def test_server_in_another_process():
    child = subprocess.Popen([sys.executable, "-c", "from netpkg.echo import EchoServer; import sys, time; "
                              "s = EchoServer(); print(s.port, flush=True); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(child.stdout.readline())
    try:
        assert echo("127.0.0.1", port, b"far") == b"far"
    finally:
        child.stdin.close()
        child.wait()


def test_listener_handed_to_a_child():
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    child = subprocess.Popen([sys.executable, "-c", "import socket, sys; s = socket.socket(fileno=int(sys.argv[1])); "
                              "c, _ = s.accept(); c.sendall(c.recv(64))", str(srv.fileno())], pass_fds=[srv.fileno()])
    srv.close()  # only the child holds it now
    try:
        assert echo("127.0.0.1", port, b"kid", timeout=10) == b"kid"
    finally:
        child.wait(timeout=10)


def test_refused_once_closed():
    srv = EchoServer()
    srv.close()
    with pytest.raises(ConnectionRefusedError):
        echo("127.0.0.1", srv.port, b"gone")


def test_any_address():
    srv = EchoServer("")  # http.server's and socketserver's habit: made 127.0.0.1 under Landlock
    assert echo("127.0.0.1", srv.port, b"any", timeout=10) == b"any"
    srv.close()


def test_host_service_unreachable():
    with pytest.raises(OSError):
        echo("127.0.0.1", int(os.environ["HOST_PORT"]), b"host", timeout=5)
'''

OWN = ["test_v4_blocking", "test_v4_timeout", "test_v6", "test_v4_mapped", "test_http",
       "test_server_in_another_process", "test_listener_handed_to_a_child", "test_refused_once_closed",
       "test_any_address"]


def _sandbox(kind: str) -> str | SandboxBackend:
    """``bwrap`` (skipped where it does not work), or :func:`~helpers.landlock.backend`'s."""
    if kind == "bwrap":
        from helpers.bwrap import bwrap_works
        if not bwrap_works():
            pytest.skip("bubblewrap does not work here")
        return "bwrap"
    return backend(kind, landlock_abi() if kind == "landlock" else 0)


@pytest.fixture
def host_service() -> Iterator[int]:
    """A service of the host on ``127.0.0.1`` (it echoes too): its port."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(conn.recv(64))

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("sandbox", [*SANDBOXES, pytest.param("bwrap", id="bwrap")])
def test_a_repositorys_tests_reach_their_own_loopback_servers_only(tmp_path: Path, sandbox: str,
                                                                   host_service: int) -> None:
    """Issue 30: under Landlock a test's own server on ``127.0.0.1:0`` could not be connected to (its port
    is no provider's), so every such task failed, against the agent. Now each of the repository's own
    servers is reached (both loopbacks, v4-mapped, blocking or with a timeout, HTTP, a server in a child
    process, a listener handed to a child that alone holds it) and a closed one refuses, under Landlock
    and bubblewrap alike; the host's service on ``127.0.0.1`` stays unreachable in both (reached without
    a sandbox, the control)."""
    box = _sandbox(sandbox)
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("netpkg/__init__.py", "")
    repo.write("netpkg/echo.py", ECHO)
    repo.write("tests/test_echo.py", TESTS)
    repo.commit("An echo server and its tests")
    env = {**os.environ, "HOST_PORT": str(host_service), TEST_ENV_VAR: "HOST_PORT"}  # named for the test run
    run = run_tests(repo.path, f"{sys.executable} -m pytest {NO_PLUGINS}", ["tests/test_echo.py"],
                    out_dir=tmp_path / "out", env=env, sandbox=box, timeout_s=120)
    log = (tmp_path / "out" / "tests.log").read_text()
    outcomes = {k.split("::")[1]: v for k, v in run.outcomes.items()}
    assert {k: outcomes.get(k) for k in OWN} == dict.fromkeys(OWN, "passed"), log
    assert outcomes["test_host_service_unreachable"] == ("failed" if sandbox == "none" else "passed"), log


#: Each step prints a port, then waits for a line on stdin (the host acts meanwhile), then says what it
#: reached. 1: its listener closed, the host listens on that port; 2: bound with ``SO_REUSEADDR``, never
#: listening, the host listens on that port (``SO_REUSEADDR`` too); 3: its listener on ``::1``, the host's on
#: ``127.0.0.1`` at the same port (and a UDP socket to its own port: a listener of the launch allows TCP only,
#: and UDP is refused anyway); 4: its listener shut down (``SHUT_RDWR``: not listening, still bound),
#: the host tries to take its port.
RACES = '''
import socket, sys
def wait(port):
    print(port, flush=True)
    sys.stdin.readline()
def reach(name, host, port, family=socket.AF_INET, read=True):
    try:
        with socket.socket(family) as s:
            s.settimeout(5)
            s.connect((host, port))
            print(name, s.recv(8).decode() if read else "connected", flush=True)
    except OSError:
        print(name, "no", flush=True)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
port = s.getsockname()[1]
s.close()
wait(port)
reach("closed-then-host", "127.0.0.1", port)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
wait(port)
reach("bound-not-listening", "127.0.0.1", port)
s.close()
v6 = socket.socket(socket.AF_INET6)
v6.bind(("::1", 0))
v6.listen(1)
port = v6.getsockname()[1]
wait(port)
reach("other-family-same-port", "127.0.0.1", port)
reach("own-v6", "::1", port, socket.AF_INET6, read=False)
try:
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as u:
        u.connect(("::1", port))
        print("udp-own-port", "connected", flush=True)
except OSError:
    print("udp-own-port", "no", flush=True)
v6.close()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
port = s.getsockname()[1]
s.shutdown(socket.SHUT_RDWR)
wait(port)
reach("shut-down", "127.0.0.1", port)
'''


def _host_listens(port: int, *, reuse: bool = False) -> socket.socket | None:
    """The host's listener on ``127.0.0.1:port`` answering ``host`` (``None``: the port is taken)."""
    s = socket.socket()
    if reuse:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        s.listen(4)
    except OSError:
        s.close()
        return None

    def serve() -> None:
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"host")

    threading.Thread(target=serve, daemon=True).start()
    return s


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_port_given_back_to_the_host_is_not_reached(tmp_path: Path, sandbox: str) -> None:
    """The races of issue 30's loopback rule, made deterministic: a port a sandbox listener had, closed
    and then taken by a host process; a port the sandbox holds bound but not listening while the host
    listens on it (both ``SO_REUSEADDR``); the same port number on the other loopback; a listener shut
    down. Under Landlock none reaches the host (only the sandbox's own ``::1`` listener answers), and a
    sandbox socket keeps its port while it lives, shut down or not (bound by number): the host cannot take
    it. Without a sandbox the host is reached each time and takes the port (the control)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    if sandbox == "landlock":
        landlock_abi()
        policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[ws], connect=[], unix=False)
        argv = landlock_argv([sys.executable, "-c", RACES], policy)
    else:
        argv = [sys.executable, "-c", RACES]
    if not socket.has_ipv6 or not Path("/proc/net/if_inet6").exists():
        pytest.skip("no IPv6 loopback here")
    proc = subprocess.Popen(argv, cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    hosts: list[socket.socket | None] = []
    seen: dict[str, str] = {}
    try:
        for line in proc.stdout:
            if not line.strip().isdigit():  # what it reached
                name, verdict = line.split()
                seen[name] = verdict
                continue
            hosts.append(_host_listens(int(line), reuse=len(hosts) == 1))  # the host acts on that port
            seen[f"host-took-{len(hosts)}"] = "no" if hosts[-1] is None else "yes"
            proc.stdin.write("go\n")
            proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
        for s in hosts:
            if s is not None:
                s.close()
    if sandbox == "landlock":
        assert seen == {"host-took-1": "yes", "closed-then-host": "no", "host-took-2": "yes",
                        "bound-not-listening": "no", "host-took-3": "yes", "other-family-same-port": "no",
                        "own-v6": "connected", "udp-own-port": "no", "host-took-4": "no", "shut-down": "no"}, seen
    else:
        assert seen == {"host-took-1": "yes", "closed-then-host": "host", "host-took-2": "yes",
                        "bound-not-listening": "host", "host-took-3": "yes", "other-family-same-port": "host",
                        "own-v6": "connected", "udp-own-port": "connected", "host-took-4": "yes",
                        "shut-down": "host"}, seen


def test_which_connect_is_a_loopback_one() -> None:
    """:func:`~._landlock_supervisor.loopback_target`: a loopback address of the socket's own family as
    ``(16 bytes, port)``, IPv4 v4-mapped; nothing for another host, another family, a short address."""
    inet, inet6 = socket.AF_INET, socket.AF_INET6

    def raw(family: int, host: str, port: int) -> bytes:
        head = family.to_bytes(2, "little") + port.to_bytes(2, "big")
        if family == inet:
            return head + socket.inet_pton(family, host) + bytes(8)
        return head + bytes(4) + socket.inet_pton(family, host) + bytes(4)

    mapped = bytes(10) + b"\xff\xff" + bytes([127, 0, 0, 1])
    assert supervisor.loopback_target(raw(inet, "127.0.0.1", 80), inet) == (mapped, 80)
    assert supervisor.loopback_target(raw(inet6, "::ffff:127.0.0.1", 80), inet6) == (mapped, 80)
    assert supervisor.loopback_target(raw(inet6, "::1", 81), inet6) == (bytes(15) + b"\1", 81)
    assert supervisor.loopback_target(raw(inet, "127.9.9.9", 82), inet) == (bytes(10) + b"\xff\xff" +
                                                                          bytes([127, 9, 9, 9]), 82)
    for data, domain in ((raw(inet, "10.0.0.1", 80), inet), (raw(inet, "0.0.0.0", 80), inet),
                         (raw(inet6, "::", 80), inet6), (raw(inet, "127.0.0.1", 80), inet6),
                         (raw(inet, "127.0.0.1", 80)[:8], inet), (raw(inet, "127.0.0.1", 80), socket.AF_UNIX)):
        assert supervisor.loopback_target(data, domain) is None, data


def test_which_connect_is_under_way() -> None:
    """:func:`~._landlock_supervisor.under_way`, by a dump and by a lookup of each socket alike: a socket
    connecting to a full accept queue (``SYN_SENT``, IPv4 and v4-mapped IPv6) is under way; one connected,
    one closed, and a cookie that is not the socket's at those addresses are not."""
    with _full_port() as port:
        family6 = socket.has_ipv6 and Path("/proc/net/if_inet6").exists()
        socks = [socket.socket() for _ in range(3)] + ([socket.socket(socket.AF_INET6)] if family6 else [])
        for s in socks:
            s.setblocking(False)
            host = "127.0.0.1" if s.family == socket.AF_INET else "::ffff:127.0.0.1"
            assert s.connect_ex((host, port)) == 115  # EINPROGRESS: its SYN dropped, retried

        def entry(s: socket.socket, cookie: int | None = None) -> tuple[int, tuple[int, bytes, int]]:
            own = supervisor._cookie(s.fileno())
            local, remote = supervisor._sockaddr(s.fileno()), bytearray(supervisor._sockaddr(s.fileno()))
            remote[2:4] = port.to_bytes(2, "big")
            return (cookie or own), (s.family, supervisor._sockid(local, bytes(remote), cookie or own), 0)

        server = socket.create_server(("127.0.0.1", 0))
        done = socket.create_connection(server.getsockname(), timeout=5)
        closed = socket.socket()
        closed.setblocking(False)
        closed.connect_ex(("127.0.0.1", port))
        gone = entry(closed)
        closed.close()
        connecting = dict([entry(s) for s in socks] + [entry(done), gone, entry(socks[0], cookie=12345)])
        expected = {supervisor._cookie(s.fileno()) for s in socks}
        try:
            assert supervisor.under_way(connecting) == expected
            assert supervisor.under_way(connecting, dump=False) == expected
        finally:
            for s in [*socks, done, server]:
                s.close()


@contextlib.contextmanager
def _full_port() -> Iterator[int]:
    """A host port whose accept queue is full: a ``connect`` to it waits (its SYNs dropped) for minutes."""
    full = socket.socket()
    full.bind(("127.0.0.1", 0))
    full.listen(0)
    port = full.getsockname()[1]
    fillers = []
    for _ in range(2):
        f = socket.socket()
        f.setblocking(False)
        f.connect_ex(("127.0.0.1", port))
        fillers.append(f)
    try:
        yield port
    finally:
        full.close()
        for f in fillers:
            f.close()


#: In the sandbox: a child makes a blocking ``connect`` to the host's port whose accept queue is full (it
#: waits for the kernel's retries, minutes), is killed, and the command lives on.
#: How each killed-connect script ends: it says it is connecting, waits for the test's line, kills its child (the
#: caller), says so, and waits again (:func:`_before_and_after_the_kill` reads the supervisor at each line).
KILL_CHILD = '''print("connecting", flush=True)
sys.stdin.readline()
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
print("killed", flush=True)
sys.stdin.readline()
'''

KILLED_CONNECT = '''
import os, signal, socket, sys, time
child = os.fork()
if child == 0:
    s = socket.socket()
    s.connect(("127.0.0.1", int(sys.argv[1])))
    os._exit(0)
time.sleep(1)
''' + KILL_CHILD


def _threads_and_sockets(pid: int) -> tuple[int, int]:
    """A process's thread count and how many sockets it holds: the least of 3 looks 0.1 s apart (the
    supervisor holds a netlink socket for the moment of each look at the connects it follows)."""
    seen = []
    for k in range(3):
        time.sleep(0.1 if k else 0)
        with open(f"/proc/{pid}/status") as fh:
            threads = next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
        links = []
        for n in os.listdir(f"/proc/{pid}/fd"):
            try:
                links.append(os.readlink(f"/proc/{pid}/fd/{n}"))
            except OSError:
                pass
        seen.append((threads, sum(link.startswith("socket:") for link in links)))
    return min(seen)


def _before_and_after_the_kill(argv: list[str], policy: LandlockPolicy, ws: Path) -> tuple[tuple[int, int],
                                                                                          tuple[int, int]]:
    """Run ``argv`` under Landlock with ``policy`` in ``ws``: a command that prints ``connecting`` once its
    connects are made, kills its child on a line from stdin and prints ``killed``, then exits 0 on another line.
    The supervisor's ``(threads, sockets)`` (:func:`_threads_and_sockets`) while it connects, and 3 ×
    :data:`~._landlock_supervisor.LIVENESS_MS` after the kill."""
    proc = subprocess.Popen(landlock_argv(argv, policy), cwd=ws, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline() == "connecting\n"
        during = _threads_and_sockets(proc.pid)  # the supervisor: the process the launcher started as
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "killed\n"
        time.sleep(supervisor.LIVENESS_MS / 1000 * 3)
        after = _threads_and_sockets(proc.pid)
        proc.stdin.write("\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    return during, after


def test_a_killed_blocking_connect_holds_nothing_of_the_supervisor(tmp_path: Path) -> None:
    """Issue 30: the supervisor made a blocking ``connect`` in a thread of its own, which stayed, with its
    copy of the socket, as long as the kernel kept trying (minutes) after the caller was killed. Now it
    connects without blocking and checks that a waiting caller still waits (``NOTIF_ID_VALID``): within
    :data:`~._landlock_supervisor.LIVENESS_MS` of the kill it has one thread and no socket of the
    command's."""
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    ws = tmp_path / "ws"
    ws.mkdir()
    with _full_port() as port:
        policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[ws], connect=[port], unix=False)
        during, after = _before_and_after_the_kill([sys.executable, "-c", KILLED_CONNECT, str(port)], policy, ws)
    assert during == (1, 1), during  # its copy of the connecting socket, no thread
    assert after == (1, 0), after


#: In the sandbox: its own listener whose accept queue is full (backlog 0, one connect queued), then a child
#: makes a blocking ``connect`` to it (it waits for the kernel's retries), is killed, and the command lives on.
KILLED_OWN_CONNECT = '''
import os, signal, socket, sys, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
filler = socket.socket()
filler.setblocking(False)
filler.connect_ex(("127.0.0.1", port))
child = os.fork()
if child == 0:
    srv.close()
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    os._exit(0)
time.sleep(1)
''' + KILL_CHILD


def test_a_killed_blocking_connect_to_an_own_listener_holds_nothing(tmp_path: Path) -> None:
    """A blocking caller connecting to a listener of its launch: while it waits the supervisor holds its
    socket and the listener (two copies); once it is killed, its socket is followed by cookie
    (:func:`~._landlock_supervisor.settle`, then :func:`~._landlock_supervisor.release`): gone with the
    caller, so nothing is held within 3 x :data:`~._landlock_supervisor.LIVENESS_MS`."""
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path], connect=[], unix=False)
    during, after = _before_and_after_the_kill([sys.executable, "-c", KILLED_OWN_CONNECT], policy, tmp_path)
    assert during == (1, 2), during
    assert after == (1, 0), after


#: A blocking ``connect`` with ``SO_SNDTIMEO`` (1 s) to a port whose accept queue is full: the kernel
#: answers ``EINPROGRESS`` once the timeout ends, the connect going on.
SEND_TIMEOUT = '''
import socket, struct, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 1, 0))
t = time.monotonic()
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
    print("connected", flush=True)
except OSError as exc:
    print(exc.errno, round(time.monotonic() - t, 1), flush=True)
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_blocking_connect_ends_at_its_send_timeout(tmp_path: Path, sandbox: str) -> None:
    """A blocking ``connect`` ends with ``EINPROGRESS`` once its ``SO_SNDTIMEO`` has passed, under Landlock
    (the supervisor, which connects without blocking, answers it at that time) as without a sandbox."""
    if sandbox == "landlock" and landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    with _full_port() as port:
        argv = [sys.executable, "-c", SEND_TIMEOUT, str(port)]
        if sandbox == "landlock":
            argv = landlock_argv(argv, LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path],
                                                      connect=[port], unix=False))
        out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    errno, seconds = out.stdout.split()
    assert errno == "115" and 0.9 <= float(seconds) <= 5, out


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["landlock", pytest.param("bwrap", id="bwrap")])
def test_a_commit_whose_test_serves_on_loopback_is_a_task(tmp_path: Path, sandbox: str) -> None:
    """Issue 30 at the level of a mine: a commit whose new test starts a server on ``127.0.0.1:0`` and
    talks to it goes red→green under Landlock as under bubblewrap, and is kept (under Landlock it failed
    at the commit too, refused, and was dropped as `reference_fails`)."""
    _sandbox(sandbox)  # skips where it does not work
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("netpkg/__init__.py", "")
    repo.write("netpkg/echo.py", ECHO + "\n\ndef shout(host, port, message):\n    return echo(host, port, message)\n")
    repo.write("tests/test_echo.py", "from netpkg.echo import EchoServer, echo\n\n\ndef test_echo():\n"
               "    srv = EchoServer()\n    assert echo('127.0.0.1', srv.port, b'hi') == b'hi'\n    srv.close()\n")
    parent = repo.commit("An echo server")
    repo.write("netpkg/echo.py", ECHO + "\n\ndef shout(host, port, message):\n"
               "    return echo(host, port, message).upper()\n")
    repo.write("tests/test_shout.py", "from netpkg.echo import EchoServer, shout\n\n\ndef test_shout():\n"
               "    srv = EchoServer()\n    assert shout('127.0.0.1', srv.port, b'hi') == b'HI'\n    srv.close()\n")
    commit = repo.commit("shout answers in capitals")
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_shout.py"],
                         runnable_tests=["tests/test_shout.py", "tests/test_echo.py"],
                         test_cmd=f"{sys.executable} -m pytest {NO_PLUGINS}", setup_cmd=None, stability_runs=2,
                         run_timeout_s=120, sandbox=sandbox, log_dir=tmp_path / "logs")
    assert v.reason is None, v
    assert v.FAIL_TO_PASS == ["tests/test_shout.py::test_shout"], v
    assert v.PASS_TO_PASS == ["tests/test_echo.py::test_echo"], v


#: One launch's server: prints its port, answers ``mine`` until stdin closes.
SERVER = '''
import socket, sys, threading
srv = socket.create_server(("127.0.0.1", 0))
def serve():
    while True:
        c, _ = srv.accept()
        c.sendall(b"mine")
        c.close()
threading.Thread(target=serve, daemon=True).start()
print(srv.getsockname()[1], flush=True)
sys.stdin.read()
'''
#: Another launch's client: what it reads from ``argv[1]``'s port, or ``no``.
CLIENT = '''
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as s:
        print(s.recv(8).decode())
except OSError:
    print("no")
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_another_launchs_server_is_a_host_service(tmp_path: Path, sandbox: str) -> None:
    """Each launch's supervisor knows its own listeners only: a server in one Landlock launch (another
    attempt's test run or agent) is out of reach of another launch, as any host service is; without a
    sandbox it is reached (the control)."""
    def argv(script: str, *args: str) -> list[str]:
        command = [sys.executable, "-c", script, *args]
        if sandbox == "none":
            return command
        landlock_abi()
        return landlock_argv(command, LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path],
                                                     connect=[], unix=False))

    server = subprocess.Popen(argv(SERVER), cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    try:
        port = server.stdout.readline().strip()
        got = subprocess.run(argv(CLIENT, port), cwd=tmp_path, capture_output=True, text=True, timeout=60).stdout
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    assert got.strip() == ("mine" if sandbox == "none" else "no"), got


#: In the sandbox: its own listener on ``::1``, then per way of giving a TCP socket a routing header (a segment
#: routing header, type 4, whose next hop is ``2001:db8::77``; the same in a 2292 ancillary buffer) whether it is
#: set and whether the ``connect`` to that own listener then reaches it (``no``: it went to the next hop); and
#: IPv4's loose source route (``IP_OPTIONS``, first hop ``192.0.2.77``).
ROUTED = '''
import socket, struct
srv = socket.create_server(("::1", 0), family=socket.AF_INET6)
port = srv.getsockname()[1]
hop = socket.inet_pton(socket.AF_INET6, "2001:db8::77")
srh = bytes([0, 4, 4, 1, 1, 0, 0, 0]) + bytes(16) + hop  # type 4, segments_left 1: segments[1] is the next hop
cmsg = struct.pack("@Qii", 16 + len(srh), socket.IPPROTO_IPV6, 57) + srh
lsrr = bytes([1, 0x83, 7, 4]) + socket.inet_aton("192.0.2.77")  # NOP, LSRR (length 7, pointer 4), the first hop
for name, family, level, opt, value in (("rthdr", socket.AF_INET6, socket.IPPROTO_IPV6, 57, srh),
                                        ("pktoptions", socket.AF_INET6, socket.IPPROTO_IPV6, 6, cmsg),
                                        ("ip-options", socket.AF_INET6, socket.IPPROTO_IP, 4, lsrr)):
    s = socket.socket(family)
    s.settimeout(3)
    try:
        s.setsockopt(level, opt, value)
        got = "set"
    except OSError as exc:
        got = "refused%d" % exc.errno
    try:
        s.connect(("::1", port))
        reached = "connected"
    except OSError:
        reached = "no"
    print(name, got, reached, flush=True)
    s.close()
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_routing_header_cannot_send_a_loopback_connect_elsewhere(tmp_path: Path, sandbox: str) -> None:
    """latk33: the supervisor checks a ``connect``'s address (here the launch's own ``::1`` listener) and
    makes it, but a TCP socket given an IPv6 routing header (``setsockopt(IPPROTO_IPV6, IPV6_RTHDR)``, a
    segment routing header, type 4: no capability needed) sends its SYN to the header's next hop instead
    (``fl6_update_dst``): the "loopback" connect went out of ``eth0`` (neighbour solicitations for
    ``fd00::77`` seen there), a channel to any LAN or Internet host carrying up to 2 KB of segments per SYN.
    Under Landlock with a confined network every ``setsockopt`` that routes a packet by other than its
    address is ``EACCES`` (``IPV6_RTHDR``, ``IPV6_2292PKTOPTIONS``, whose buffer may hold one, and IPv4's
    ``IP_OPTIONS``, a loose source route, which the kernel already refuses without ``CAP_NET_RAW``), so the
    same ``connect`` reaches the own listener. Without a sandbox the header is set and the ``connect`` goes
    to the next hop (the control)."""
    if not socket.has_ipv6 or not Path("/proc/net/if_inet6").exists():
        pytest.skip("no IPv6 loopback here")
    argv = [sys.executable, "-c", ROUTED]
    if sandbox == "landlock":
        if landlock_abi() < landlock.NET_ABI:
            pytest.skip("TCP is not confined at this Landlock ABI")
        argv = landlock_argv(argv, LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path],
                                                  connect=[], unix=False))
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    seen = {line.split()[0]: tuple(line.split()[1:]) for line in out.stdout.splitlines()}
    if sandbox == "none":
        if seen.get("rthdr", ("",))[0] != "set":
            pytest.skip(f"this kernel sets no segment routing header: {seen}")
        assert seen["rthdr"] == ("set", "no"), out
    else:
        assert seen == {"rthdr": ("refused13", "connected"), "pktoptions": ("refused13", "connected"),
                        "ip-options": ("refused13", "connected")}, out


#: In the sandbox: its own listener whose accept queue is full (backlog 0, one connect queued), then a child
#: starts 20 non-blocking ``connect``s to it (each ``EINPROGRESS``: their SYNs dropped, retried for minutes)
#: and waits; the child is killed on a line of stdin, the command lives on until the next.
NONBLOCKING_FLOOD = '''
import os, signal, socket, sys, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
child = os.fork()
if child == 0:
    socks = [socket.socket() for _ in range(20)]
    for s in socks:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
    time.sleep(120)
    os._exit(0)
time.sleep(2)
''' + KILL_CHILD


def test_a_killed_non_blocking_connect_holds_nothing_of_the_supervisor(tmp_path: Path) -> None:
    """latk33: :func:`~._landlock_supervisor.settle` dropped a killed caller's connect only when the caller
    waited in it (a blocking one, ``NOTIF_ID_VALID``); a non-blocking caller, answered ``EINPROGRESS`` at
    once, left the supervisor's copy of its socket and of the listener it goes to until the connect's
    outcome was known: to a full accept queue, the kernel's SYN retries, some two minutes, whether the
    caller lived or not (300 such connects, the caller killed: 598 sockets of the supervisor 3 s later; past
    its ``RLIMIT_NOFILE`` every ``connect``, ``bind``, ``chmod`` of the launch failed with ``EMFILE``). Now
    the supervisor keeps no copy of a non-blocking caller's socket, only its cookie, and one copy of the
    listener while a socket of that cookie is in ``SYN_SENT`` (``sock_diag``,
    :func:`~._landlock_supervisor.release`): while the caller lives, one socket for its 20 connects; within
    3 x :data:`~._landlock_supervisor.LIVENESS_MS` of the kill, none."""
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    ws = tmp_path / "ws"
    ws.mkdir()
    policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[ws], connect=[], unix=False)
    during, after = _before_and_after_the_kill([sys.executable, "-c", NONBLOCKING_FLOOD], policy, ws)
    assert during == (1, 1), during  # the measure works: the one copy of the listener, held while it lives
    assert after == (1, 0), after


#: In the sandbox: its listener with a full accept queue (backlog 0, one connect queued); a child (the
#: caller) closes its copy of it, starts 5 non-blocking ``connect``s to it (``argv[1]`` ``blocking``: instead
#: one blocking, in a thread, which waits in it) and forks a keeper that inherits those sockets, still
#: connecting; the caller is killed, then the command closes the listener, prints its port and waits for a
#: line of stdin; then kills the keeper, prints ``released`` and waits for another line.
KEPT_CONNECTS = '''
import os, signal, socket, sys, time
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
filler = socket.socket()
filler.setblocking(False)
filler.connect_ex(("127.0.0.1", port))
r, w = os.pipe()
caller = os.fork()
if caller == 0:
    srv.close()
    socks = [socket.socket() for _ in range(5 if sys.argv[1] == "non-blocking" else 0)]
    for s in socks:
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
    if sys.argv[1] == "blocking":
        import threading
        waits = socket.socket()
        threading.Thread(target=waits.connect, args=(("127.0.0.1", port),), daemon=True).start()
        time.sleep(0.5)
    keeper = os.fork()
    if keeper == 0:
        time.sleep(120)
        os._exit(0)
    os.write(w, b"%d\\n" % keeper)
    time.sleep(120)
    os._exit(0)
keeper = int(os.read(r, 64))
time.sleep(1)
os.kill(caller, signal.SIGKILL)
os.waitpid(caller, 0)
srv.close()
print(port, flush=True)
sys.stdin.readline()
os.kill(keeper, signal.SIGKILL)
print("released", flush=True)
sys.stdin.readline()
'''


def _takes(port: int) -> str:
    """Whether a host process can bind and listen on ``127.0.0.1:port``: ``yes`` or the errno."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            s.listen(1)
        except OSError as exc:
            return str(exc.errno)
    return "yes"


@pytest.mark.parametrize("mode", ["non-blocking", "blocking"])
def test_a_connect_under_way_in_a_survivor_keeps_its_listener(tmp_path: Path, mode: str) -> None:
    """What the release of a killed caller's connects must not give up (latk33's reason not to drop them
    with the caller): a child of the caller still holds the connecting sockets, so their SYNs are sent
    again; the launch then closes its listener. The supervisor keeps its one copy of the listener (so its
    port) while any of those sockets is in ``SYN_SENT``: a host process cannot take the port, so the
    retried SYNs reach the launch's own listener only. Once the keeper is killed too, the supervisor holds
    nothing within 3 x :data:`~._landlock_supervisor.LIVENESS_MS`, and the port is free. The same when the
    caller waited in a blocking ``connect`` (before ll34 the supervisor let its listener go with it)."""
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path], connect=[], unix=False)
    proc = subprocess.Popen(landlock_argv([sys.executable, "-c", KEPT_CONNECTS, mode], policy), cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        port = int(proc.stdout.readline())
        time.sleep(supervisor.LIVENESS_MS / 1000 * 3)  # the caller is gone: a look has been made since
        kept, took = _threads_and_sockets(proc.pid), _takes(port)
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "released\n"
        time.sleep(supervisor.LIVENESS_MS / 1000 * 3)
        after, took_after = _threads_and_sockets(proc.pid), _takes(port)
        proc.stdin.write("\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (kept, took) == ((1, 1), "98"), (kept, took)
    assert (after, took_after) == ((1, 0), "yes"), (after, took_after)


#: In the sandbox: its listener with a full accept queue (backlog 0, one connect queued); non-blocking
#: ``connect``s to it (their SYNs dropped, retried) until one is not ``EINPROGRESS``: how many were and that
#: one's errno; then one of them closed, and the errno of one more.
CONNECTING_CAP = '''
import resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(0)
port = srv.getsockname()[1]
def start():
    s = socket.socket()
    s.setblocking(False)
    return s, s.connect_ex(("127.0.0.1", port))
filler = start()
socks = []
while True:
    s, code = start()
    if code != 115:
        break
    socks.append(s)
print(len(socks), code, flush=True)
socks[0].close()
print(start()[1], flush=True)
'''


@pytest.mark.slow
def test_the_connects_under_way_are_capped(tmp_path: Path) -> None:
    """The ``connect``s the supervisor follows are sockets it connected: at most
    :data:`~._landlock_supervisor.CONNECTED_MAX` live at once (the filler's and ``CONNECTED_MAX`` - 1 in
    ``SYN_SENT``, each followed by its cookie); the next is ``EADDRNOTAVAIL``, never made; once one of them
    is closed, a look frees its slot and one more is made."""
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    import resource
    cap = supervisor.CONNECTED_MAX
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < cap + 64:
        pytest.skip(f"fewer than {cap + 64} open files allowed here")
    policy = LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path], connect=[], unix=False)
    out = subprocess.run(landlock_argv([sys.executable, "-c", CONNECTING_CAP], policy), cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == [str(cap - 1), "99", "115"], out


#: In the sandbox: a listener on ``127.0.0.1:0`` with ``SO_REUSEPORT`` asked for (``set`` or its error), its
#: port printed; once the host has acted (a line of stdin), 20 connects to that port, what each read.
REUSEPORT = '''
import socket, sys
srv = socket.socket()
try:
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    print("reuseport set", flush=True)
except OSError as exc:
    print("reuseport refused%d" % exc.errno, flush=True)
srv.bind(("127.0.0.1", 0))
srv.listen(32)
print(srv.getsockname()[1], flush=True)
sys.stdin.readline()
got = set()
for _ in range(20):
    try:
        with socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=5) as c:
            srv.settimeout(0.2)
            try:
                srv.accept()[0].sendall(b"mine")
            except OSError:
                pass
            got.add(c.recv(8).decode() or "none")
    except OSError:
        got.add("no")
print("reached", ",".join(sorted(got)), flush=True)
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_host_service_cannot_share_a_sandbox_listeners_port(tmp_path: Path, sandbox: str) -> None:
    """latk33 (ll32's note): a sandbox listener with ``SO_REUSEPORT`` let a host process of the same user
    bind and listen on its very port (a service restarted on a port the sandbox took meanwhile); the
    kernel then spreads the port's connects over both, so the sandbox's connects to its "own" listener,
    which the supervisor allows, reached the host service (and the host's clients, the sandbox's).
    Under Landlock with a confined network ``SO_REUSEPORT`` is ``EACCES``: the host's bind of that
    port fails and only the sandbox's listener answers. Without a sandbox both answer (the control)."""
    argv = [sys.executable, "-c", REUSEPORT]
    if sandbox == "landlock":
        if landlock_abi() < landlock.NET_ABI:
            pytest.skip("TCP is not confined at this Landlock ABI")
        argv = landlock_argv(argv, LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp_path],
                                                  connect=[], unix=False))
    proc = subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    host = socket.socket()
    try:
        asked = proc.stdout.readline().split()
        port = int(proc.stdout.readline())
        host.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            host.bind(("127.0.0.1", port))
            host.listen(32)
            took = "yes"
        except OSError:
            took = "no"
        if took == "yes":
            def serve() -> None:
                while True:
                    try:
                        conn, _ = host.accept()
                    except OSError:
                        return
                    with conn:
                        conn.sendall(b"host")
            threading.Thread(target=serve, daemon=True).start()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        reached = proc.stdout.readline().split()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        host.close()
    if sandbox == "landlock":
        assert (asked, took, reached) == (["reuseport", "refused13"], "no", ["reached", "mine"])
    else:
        assert (asked, took, reached) == (["reuseport", "set"], "yes", ["reached", "host,mine"])
