"""What Landlock alone leaves shared with the host (atk12, issue 30): without namespaces every kernel
object named machine-wide — ``/dev/shm``, the keyrings, System V IPC, TCP reached past Landlock's
``connect`` hook, the mode and owner of a host file, a policy on a command line — is shared with every
process of the user. Each is closed in the policy or the launcher's seccomp filter; each check has its
control (``none``) that shows the same code reaches it without the sandbox. Real Landlock, real processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.landlock import SANDBOXES, agent_reach, backend, landlock_abi

from pytest_homefield.sandbox import _landlock_supervisor as supervisor
from pytest_homefield.sandbox import landlock
from pytest_homefield.sandbox.nethint import semaphore_hint
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.testrun import run_tests


@pytest.fixture(scope="module")
def abi() -> int:
    return landlock_abi()


#: The machine-wide objects: a file in ``/dev/shm``, a key in the user's keyring, a System V message
#: queue, semaphore set and shared-memory segment; each removed again when it was made (the control).
KERNEL_OBJECTS = '''
tag = sys.argv[1]
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
MQ_OPEN, MQ_UNLINK = {"x86_64": (240, 241), "aarch64": (180, 181)}[platform.machine()]
KEY_SPEC_USER_KEYRING, KEYCTL_INVALIDATE, IPC_RMID = -4, 21, 0
def shm_file():
    with open("/dev/shm/" + tag, "w") as fh:
        fh.write("hidden tests")
    os.unlink("/dev/shm/" + tag)
def key():
    kid = check(libc.syscall(ADD_KEY, b"user", tag.encode(), b"hidden tests", 12, KEY_SPEC_USER_KEYRING))
    libc.syscall(KEYCTL, KEYCTL_INVALIDATE, kid)
reach("dev-shm", shm_file)
reach("keyring", key)
reach("msg-queue", lambda: libc.msgctl(check(libc.msgget(0, 0o1600)), IPC_RMID, None))
reach("semaphores", lambda: libc.semctl(check(libc.semget(0, 1, 0o1600)), 0, IPC_RMID))
reach("shared-memory", lambda: libc.shmctl(check(libc.shmget(0, 4096, 0o1600)), IPC_RMID, None))
def mqueue():  # Landlock refuses to open it, after mq_open(O_CREAT) made it: it exists iff mq_unlink works
    libc.syscall(MQ_OPEN, tag.encode(), os.O_CREAT | os.O_RDWR, 0o600, None)
    check(libc.syscall(MQ_UNLINK, tag.encode()))
reach("posix-mqueue", mqueue)
'''


@pytest.fixture
def temp_outside_shm(monkeypatch: pytest.MonkeyPatch) -> None:
    """homefield's temp folder outside ``/dev/shm`` (the suite's own is in it: ``TMPDIR=/dev/shm``),
    as on most machines: ``/dev/shm`` was then shared with every confined process."""
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.usefixtures("temp_outside_shm")
def test_an_agent_shares_no_kernel_object_with_the_host(abi: int, tmp_path: Path, sandbox: str) -> None:
    """atk12 F1/F1b/F3: a file in the host's ``/dev/shm``, a key in the user's keyring, a System V queue,
    semaphore set or segment outlive the process and are seen by every later one (a test run left the
    hidden tests there for the next attempt's agent): none can be made under Landlock; all without it.
    atk16 F2: a POSIX message queue's *name* too (256 names a byte: 458 bytes of hidden tests to attempt 2):
    no command the reaper starts makes one, with or without a sandbox (satk46: ``RLIMIT_MSGQUEUE`` 0)."""
    out = agent_reach(sandbox, abi, tmp_path, KERNEL_OBJECTS, f"hf-test-{uuid.uuid4().hex[:12]}")
    expected = "no" if sandbox == "landlock" else "yes"
    assert out == {**dict.fromkeys(("dev-shm", "keyring", "msg-queue", "semaphores", "shared-memory"), expected),
                   "posix-mqueue": "no"}, out


SHM_TEST = '''
import multiprocessing, os

def test_leave_a_note():
    with open("/dev/shm/{tag}", "w") as fh:
        fh.write("hidden tests")

def test_lock():
    multiprocessing.Lock()
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.usefixtures("temp_outside_shm")
def test_a_test_run_leaves_nothing_in_dev_shm_and_its_lock_failure_says_why(abi: int, tmp_path: Path,
                                                                           sandbox: str) -> None:
    """atk12 F1: a graded test run copied the hidden tests to ``/dev/shm`` for the next attempt. Under
    Landlock it cannot write there, and a suite that needs ``multiprocessing`` locks (POSIX semaphores
    live there) fails with the hint to use bubblewrap; without a sandbox both work and no hint is made."""
    tag = f"hf-test-{uuid.uuid4().hex[:12]}"
    copy = tmp_path / "copy"
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "test_shm.py").write_text(SHM_TEST.format(tag=tag))
    try:
        run = run_tests(copy, f"{sys.executable} -m pytest {NO_PLUGINS}", ["tests/test_shm.py"],
                        out_dir=tmp_path / "out", sandbox=backend(sandbox, abi), timeout_s=120)
        left = Path("/dev/shm", tag).exists()
    finally:
        Path("/dev/shm", tag).unlink(missing_ok=True)
    verdict = "failed" if sandbox == "landlock" else "passed"
    assert set(run.outcomes.values()) == {verdict} and len(run.outcomes) == 2, run.outcomes
    assert left is (sandbox == "none")
    hint = semaphore_hint([tmp_path / "out" / "tests.log"])
    assert (hint is not None and "bubblewrap" in hint) is (sandbox == "landlock"), hint


#: TCP past Landlock's ``connect`` hook: an MPTCP socket, TCP Fast Open (``sendto(MSG_FASTOPEN)``,
#: ``TCP_FASTOPEN_CONNECT``), and a plain connect to the one allowed port (which must keep working).
TCP_PAST_CONNECT = '''
port, allowed = int(sys.argv[1]), int(sys.argv[2])
IPPROTO_MPTCP, TCP_FASTOPEN_CONNECT = 262, 30
def mptcp():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
def fast_open():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking: sendto waits for the handshake
    s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", port))
def fast_open_connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1)
reach("mptcp", mptcp)
reach("fast-open", fast_open)
reach("fast-open-connect", fast_open_connect)
reach("allowed-port", lambda: socket.create_connection(("127.0.0.1", allowed), timeout=5).close())
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_tcp_past_landlocks_connect_check_is_refused(abi: int, tmp_path: Path, sandbox: str) -> None:
    """atk12 F2/F2b: Landlock checks TCP at ``connect`` and only for ``IPPROTO_TCP`` sockets, so an MPTCP
    socket and TCP Fast Open reached a host service on ``127.0.0.1`` past the policy. Refused under
    Landlock (the allowed port still answers); all made without it."""
    if abi < landlock.NET_ABI:
        pytest.skip(f"Landlock ABI {abi}: TCP is not confined")
    mptcp_on = Path("/proc/sys/net/mptcp/enabled").read_text().strip() == "1" if Path(
        "/proc/sys/net/mptcp/enabled").exists() else False
    service, allowed = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    try:
        out = agent_reach(sandbox, abi, tmp_path, TCP_PAST_CONNECT, str(service.getsockname()[1]),
                     str(allowed.getsockname()[1]), ports=(allowed.getsockname()[1],))
    finally:
        service.close()
        allowed.close()
    if sandbox == "landlock":
        assert out == {"mptcp": "no", "fast-open": "no", "fast-open-connect": "no", "allowed-port": "yes"}, out
    else:
        assert out["fast-open"] == out["fast-open-connect"] == out["allowed-port"] == "yes", out
        assert out["mptcp"] == ("yes" if mptcp_on else "no"), out


#: Landlock's TCP rules name ports, not addresses: the allowed port on another loopback address and on
#: ``::1`` (where a LAN host's would be reached alike), and on the allowed ``127.0.0.1``, blocking, non-blocking
#: and v4-mapped.
TCP_OTHER_ADDRESS = '''
import select
port = int(sys.argv[1])
def nonblocking(host):
    s = socket.socket(socket.AF_INET)
    s.setblocking(False)
    err = s.connect_ex((host, port))
    if err == 115:  # EINPROGRESS
        select.select([], [s], [], 5)
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    s.close()
    if err:
        raise OSError(err, "refused")
def blocking(host):
    with socket.socket(socket.AF_INET) as s:  # no timeout: connected in a thread of the supervisor
        s.connect((host, port))
reach("other-v4", lambda: blocking("127.0.0.2"))
reach("other-v4-nonblocking", lambda: nonblocking("127.0.0.2"))
reach("v6-loopback", lambda: socket.create_connection(("::1", port), timeout=5).close())
reach("allowed", lambda: blocking("127.0.0.1"))
reach("allowed-timeout", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
reach("allowed-nonblocking", lambda: nonblocking("127.0.0.1"))
reach("allowed-v4-mapped", lambda: socket.create_connection(("::ffff:127.0.0.1", port), timeout=5).close())
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_allowed_port_is_reached_on_its_address_only(abi: int, tmp_path: Path, sandbox: str) -> None:
    """esc30: an agent allowed the host's ``127.0.0.1:P`` (a local model server) reached ``P`` on any
    address, ``127.0.0.2`` and ``::1`` here (a LAN host's the same way). Under Landlock only
    ``127.0.0.1:P`` answers (as IPv4 or v4-mapped IPv6, blocking or not); without it, all do."""
    allowed = socket.create_server(("127.0.0.1", 0))
    port = allowed.getsockname()[1]
    other = socket.create_server(("127.0.0.2", port))
    try:
        v6 = socket.create_server(("::1", port), family=socket.AF_INET6)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    try:
        out = agent_reach(sandbox, abi, tmp_path, TCP_OTHER_ADDRESS, str(port), ports=(port,))
    finally:
        for s in (allowed, other, v6):
            s.close()
    refused = "no" if sandbox == "landlock" else "yes"
    assert out == {"other-v4": refused, "other-v4-nonblocking": refused, "v6-loopback": refused, "allowed": "yes",
                   "allowed-timeout": "yes", "allowed-nonblocking": "yes", "allowed-v4-mapped": "yes"}, out


def _sockaddr(family: int, host: str, port: int) -> bytes:
    """A ``struct sockaddr_in``/``sockaddr_in6`` as a caller passes it to ``connect``."""
    head = family.to_bytes(2, "little") + port.to_bytes(2, "big")
    if family == socket.AF_INET:
        return head + socket.inet_pton(family, host) + bytes(8)
    return head + bytes(4) + socket.inet_pton(family, host) + bytes(4)


def test_the_supervisor_allows_a_connect_by_address_and_port_only() -> None:
    """The check behind each ``connect`` (:func:`~._landlock_supervisor.may_connect`): the policy's pairs,
    IPv4 and v4-mapped IPv6 alike; a disconnect (``AF_UNSPEC``) and a netlink socket pass; a Unix socket,
    another address or port, an unknown family do not; an address too short is ``EINVAL``."""
    allowed = supervisor.peers({"connect": [8080], "hosts": ["127.0.0.1"]})
    inet, inet6 = socket.AF_INET, socket.AF_INET6
    assert supervisor.may_connect(_sockaddr(inet, "127.0.0.1", 8080), inet, allowed)
    assert supervisor.may_connect(_sockaddr(inet6, "::ffff:127.0.0.1", 8080), inet6, allowed)
    assert supervisor.may_connect(bytes(16), inet, allowed)  # AF_UNSPEC
    assert supervisor.may_connect(b"", socket.AF_NETLINK, allowed)
    for raw, domain in ((_sockaddr(inet, "127.0.0.2", 8080), inet), (_sockaddr(inet, "127.0.0.1", 8081), inet),
                        (_sockaddr(inet6, "::1", 8080), inet6), (_sockaddr(inet, "127.0.0.1", 8080), socket.AF_UNIX),
                        (socket.AF_PACKET.to_bytes(2, "little") + bytes(14), inet)):
        assert not supervisor.may_connect(raw, domain, allowed)
    with pytest.raises(OSError) as err:
        supervisor.may_connect(_sockaddr(inet, "127.0.0.1", 8080)[:8], inet, allowed)
    assert err.value.errno == 22
    assert supervisor.peers(None) == frozenset()


#: A listener: on every address (``0.0.0.0``, ``::``: a LAN host connects once it learns the port), on an
#: unbound socket (``listen`` binds it to ``0.0.0.0``), with ``AF_UNSPEC`` (``0.0.0.0`` too), and what a
#: test's local server does (``127.0.0.1:0``, ``::1``). ``yes`` for the first three is a listener a LAN host
#: reaches (one made on loopback instead is ``no``: ``OSError`` raised).
LISTENERS = '''
import ipaddress
def listen(family, address):
    s = socket.socket(family)
    if address is not None:
        s.bind(address)
    s.listen(1)
    if address is None or address[0] in ("0.0.0.0", "::"):
        if ipaddress.ip_address(s.getsockname()[0]).is_loopback:
            raise OSError("a loopback listener: no LAN host reaches it")
def unspec():
    s = socket.socket()
    s.bind(socket.AF_UNSPEC.to_bytes(2, "little") + bytes(14))  # as raw bytes: Python refuses the family
reach("any-v4", lambda: listen(socket.AF_INET, ("0.0.0.0", 0)))
reach("any-v6", lambda: listen(socket.AF_INET6, ("::", 0)))
reach("unbound", lambda: listen(socket.AF_INET, None))
reach("loopback", lambda: listen(socket.AF_INET, ("127.0.0.1", 0)))
reach("loopback-v6", lambda: listen(socket.AF_INET6, ("::1", 0)))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_agent_listens_on_loopback_only(abi: int, tmp_path: Path, sandbox: str) -> None:
    """r25: Landlock's bind rule names a port, so ``bind(0.0.0.0:0)`` then ``listen`` (or ``listen`` on an
    unbound socket) took connections from the LAN once the agent told its provider the port. Under Landlock
    only a loopback listener can be made (a bind to ``0.0.0.0``/``::`` is made to the loopback of its family);
    without it, all can."""
    if abi < landlock.NET_ABI:
        pytest.skip(f"Landlock ABI {abi}: TCP is not confined")
    if not socket.has_ipv6 or not Path("/proc/net/if_inet6").exists():
        pytest.skip("no IPv6 here")
    out = agent_reach(sandbox, abi, tmp_path, LISTENERS)
    refused = "no" if sandbox == "landlock" else "yes"
    assert out == {"any-v4": refused, "any-v6": refused, "unbound": refused, "loopback": "yes",
                   "loopback-v6": "yes"}, out


def test_the_supervisor_binds_loopback_addresses_only() -> None:
    """The check behind each ``bind`` (:func:`~._landlock_supervisor.may_bind`): a loopback address of the
    socket's family on a policy port (``127.0.0.0/8``, ``::1``, v4-mapped), or the any address, which is bound
    to the loopback instead (:func:`~._landlock_supervisor.on_loopback`); never ``AF_UNSPEC`` (``0.0.0.0`` on
    an IPv4 socket, bound as it is), another address or port, a Unix socket; netlink passes."""
    inet, inet6, ports = socket.AF_INET, socket.AF_INET6, frozenset({0})
    for raw, domain in ((_sockaddr(inet, "127.0.0.1", 0), inet), (_sockaddr(inet, "127.3.2.1", 0), inet),
                        (_sockaddr(inet6, "::1", 0), inet6), (_sockaddr(inet6, "::ffff:127.0.0.1", 0), inet6),
                        (_sockaddr(inet, "0.0.0.0", 0), inet), (_sockaddr(inet6, "::", 0), inet6),
                        (b"", socket.AF_NETLINK)):
        assert supervisor.may_bind(raw, domain, ports), raw
    assert supervisor.on_loopback(_sockaddr(inet, "0.0.0.0", 0)) == _sockaddr(inet, "127.0.0.1", 0)
    assert supervisor.on_loopback(_sockaddr(inet6, "::", 0)) == _sockaddr(inet6, "::1", 0)
    for kept in (_sockaddr(inet, "127.3.2.1", 0), _sockaddr(inet6, "::ffff:127.0.0.1", 0)):
        assert supervisor.on_loopback(kept) == kept
    for raw, domain in ((_sockaddr(inet6, "::ffff:0.0.0.0", 0), inet6), (_sockaddr(inet6, "::ffff:0.0.0.1", 0), inet6),
                        (_sockaddr(inet, "192.168.1.2", 0), inet), (_sockaddr(inet6, "::ffff:10.0.0.1", 0), inet6),
                        (_sockaddr(inet, "127.0.0.1", 8080), inet), (_sockaddr(inet, "127.0.0.1", 0), inet6),
                        (bytes(16), inet), (_sockaddr(inet, "127.0.0.1", 0), socket.AF_UNIX)):
        assert not supervisor.may_bind(raw, domain, ports), raw
    with pytest.raises(OSError) as err:
        supervisor.may_bind(_sockaddr(inet, "127.0.0.1", 0)[:8], inet, ports)
    assert err.value.errno == 22
    # a service's policy (bind_any, hatk35): any port, still of a loopback address only
    assert supervisor.Net.of({"connect": [], "bind": [], "bind_any": True}).binds is None
    assert supervisor.Net.of({"connect": [], "bind": [0]}).binds == frozenset({0})
    for raw, domain in ((_sockaddr(inet, "127.0.0.1", 8080), inet), (_sockaddr(inet6, "::1", 9300), inet6),
                        (_sockaddr(inet, "0.0.0.0", 6379), inet)):
        assert supervisor.may_bind(raw, domain, None), raw
    for raw, domain in ((_sockaddr(inet, "192.168.1.2", 8080), inet), (_sockaddr(inet6, "::ffff:10.0.0.1", 80), inet6),
                        (_sockaddr(inet, "127.0.0.1", 0), socket.AF_UNIX)):
        assert not supervisor.may_bind(raw, domain, None), raw


#: A local model server on ``::1`` only, reached without the proxy (a client that ignores the proxy
#: variables), and the same port on ``127.0.0.1`` (another listener: not named by the agent's provider).
IPV6_PEER = '''
port = int(sys.argv[1])
for name, host in (("v6-peer", "::1"), ("same-port-v4", "127.0.0.1")):
    try:
        with socket.create_connection((host, port), timeout=5) as s:
            print(name, s.recv(8).decode() or "closed")
    except OSError:
        print(name, "no")
'''


def _says(server: socket.socket, word: bytes) -> None:
    """Answer each connection to ``server`` with ``word`` (until it is closed)."""
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            conn.sendall(word)


@pytest.mark.parametrize("sandbox", [*SANDBOXES, pytest.param("bwrap", id="bwrap")])
def test_an_agent_reaches_its_ipv6_loopback_server_and_nothing_else(tmp_path: Path, sandbox: str) -> None:
    """r25: Landlock allowed ``127.0.0.1`` only, so an agent whose provider is ``http://[::1]:P`` (a local
    model server on IPv6 loopback alone) could not reach it. The exact pairs the provider names are allowed
    (:meth:`~pytest_homefield.sandbox.proxy.Allowlist.loopback_peers`), ``::1`` included, through
    :func:`~pytest_homefield.run.agent_sandbox.agent_sandbox` as ``homefield run`` confines a ``cmd:``
    agent; ``127.0.0.1:P`` stays unreachable. Under bubblewrap the relay of that port (inside, both
    loopbacks) leads to the host's ``::1`` (it led to ``127.0.0.1``, the other listener)."""
    from pytest_homefield.agents.base import AgentContext, AgentSettings
    from pytest_homefield.agents.cmd_agent import CommandAgent
    from pytest_homefield.agents.environment import build_agent_env
    from pytest_homefield.run.agent_sandbox import agent_sandbox
    from pytest_homefield.sandbox.modes import SandboxChoice

    for _ in range(50):  # a port free on both loopbacks: the v6 one's number may be another process's on v4
        try:
            v6 = socket.create_server(("::1", 0), family=socket.AF_INET6)
        except OSError:
            pytest.skip("no IPv6 loopback here")
        port = v6.getsockname()[1]
        try:
            v4 = socket.create_server(("127.0.0.1", port))
            break
        except OSError:  # the final CI's fast tier: EADDRINUSE on 127.0.0.1, a server of a test beside it
            v6.close()
    else:
        raise AssertionError("no port free on both ::1 and 127.0.0.1 in 50 tries")
    for server, word in ((v6, b"v6"), (v4, b"v4")):
        threading.Thread(target=_says, args=(server, word), daemon=True).start()
    ws, box, art = tmp_path / "ws", tmp_path / "box", tmp_path / "art"
    for d in (ws, art):
        d.mkdir()
    (ws / "probe.py").write_text("import socket, sys\n" + IPV6_PEER)
    command = f"{sys.executable} probe.py {port}"
    agent = CommandAgent(name="net", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    env = build_agent_env(prompt="p", attempt=1, tmpdir=box / "tmp", passthrough=[],
                          source={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    choice = SandboxChoice(sandbox, "allowlist", (f"[::1]:{port}",))
    if sandbox == "bwrap":
        from helpers.bwrap import bwrap_works
        if not bwrap_works():
            pytest.skip("bubblewrap does not work here")
    chosen = "bwrap" if sandbox == "bwrap" else backend(sandbox, landlock_abi() if sandbox == "landlock" else 0)
    sb = agent_sandbox(agent, chosen, workspace=ws, box=box, env=env, sandbox=choice, proxy_log=art / "proxy.log")
    try:
        agent.run(AgentContext(workspace=ws, prompt="p", env=env, timeout_s=60, artifacts=art, wrap=sb.wrap,
                               sandbox=sandbox))
    finally:
        sb.close()
        v6.close()
        v4.close()
    assert sb.recorded == sandbox
    out = dict(line.split(" ", 1) for line in (art / "agent.out").read_text().splitlines())
    # under bubblewrap both loopbacks inside are the relay, to the host's ::1
    assert out == {"v6-peer": "v6", "same-port-v4": {"none": "v4", "landlock": "no", "bwrap": "v6"}[sandbox]}, out


#: What a confined process reads of another process of the user outside its domain (another attempt's, the
#: host session's): ``/proc/PID/…`` entry by entry.
OTHER_PROCESS = '''
pid = sys.argv[1]
def read(name):
    return lambda: open(f"/proc/{pid}/{name}", "rb").read()
reach("cmdline", read("cmdline"))
reach("status", read("status"))
reach("fd-list", lambda: os.listdir(f"/proc/{pid}/fd"))
reach("fd-link", lambda: os.readlink(f"/proc/{pid}/fd/0"))
reach("environ", read("environ"))
reach("cwd", lambda: os.listdir(f"/proc/{pid}/cwd"))
reach("root", lambda: os.listdir(f"/proc/{pid}/root"))
reach("maps", read("maps"))
def mem():
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)  # refused here when refused (ptrace)
    os.pread(fd, 1, int(open(f"/proc/{pid}/maps").readline().split("-")[0], 16))
reach("mem", mem)
reach("fdinfo", read("fdinfo/0"))
reach("signal", lambda: os.kill(int(pid), 0))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_what_an_agent_reads_of_another_process(abi: int, tmp_path: Path, sandbox: str) -> None:
    """r25 (measured, nothing to close): without a PID namespace every process of the machine is in
    ``/proc``. Landlock refuses ptrace out of the domain, and with it another process's ``environ``,
    ``cwd``, ``root``, ``maps``, ``mem``, ``fdinfo`` and its fds' targets; its ``cmdline``, ``status`` and
    the numbers of its open fds stay readable (no ptrace check in the kernel; Landlock cannot deny a
    subfolder of the allowed ``/proc``, whose ``/proc/self`` the command needs). Hence homefield puts no
    secret and no hidden test on a command line (policies, targets and bubblewrap's options go by file
    or memfd). Landlock's scope (ABI ≥ 6) refuses it a signal. Without a sandbox all are read."""
    (tmp_path / "other").mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE,
                             cwd=tmp_path / "other", env={"SECRET": "hidden tests"})
    try:
        out = agent_reach(sandbox, abi, tmp_path, OTHER_PROCESS, str(other.pid))
    finally:
        other.communicate(timeout=30)
    refused = "no" if sandbox == "landlock" else "yes"
    assert out == {"cmdline": "yes", "status": "yes", "fd-list": "yes", "fd-link": refused, "environ": refused,
                   "cwd": refused, "root": refused, "maps": refused, "mem": refused, "fdinfo": refused,
                   "signal": "no" if sandbox == "landlock" and abi >= landlock.SCOPED_ABI else "yes"}, out


#: The mode and owner of a host file the process can name but not open; then what honest code does in
#: its own folder (``shutil.copy`` copies the mode; an executable script).
HOST_METADATA = '''
import shutil
host = sys.argv[1]
reach("chown-host-file", lambda: os.chown(host, os.getuid(), os.getgid()))
reach("setuid-on-host-file", lambda: os.chmod(host, 0o4755))
open("a.py", "w").write("print(1)")
reach("copy-in-workspace", lambda: shutil.copy("a.py", "b.py"))
reach("chmod-x-in-workspace", lambda: os.chmod("b.py", 0o755))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_agent_cannot_set_setuid_or_chown_a_host_file(abi: int, tmp_path: Path, sandbox: str) -> None:
    """atk12 F4: Landlock has no right for metadata, so an agent set the setuid bit on a root-owned copy
    of an interpreter it could not open. The launcher's filter refuses setuid/setgid/sticky modes and
    every owner change; ``shutil.copy`` and ``chmod +x`` in its own folder still work."""
    host = tmp_path / "host" / "py"
    host.parent.mkdir()
    host.write_text("#!/bin/sh\n")
    host.chmod(0o755)
    out = agent_reach(sandbox, abi, tmp_path, HOST_METADATA, str(host))
    confined = sandbox == "landlock"
    assert out == {"setuid-on-host-file": "no" if confined else "yes", "chown-host-file": "no" if confined else "yes",
                   "copy-in-workspace": "yes", "chmod-x-in-workspace": "yes"}, out
    assert (host.stat().st_mode & 0o7777) == (0o755 if confined else 0o4755)


def test_no_policy_is_on_a_command_line(abi: int, tmp_path: Path) -> None:
    """atk12 F4b: ``/proc/<pid>/cmdline`` of the reaper and launcher is readable by every process, and a
    policy there named a rival's grading copy. The launcher's argv holds no allowed path, and the
    policy it reads from its file still confines (a write outside refused, inside made)."""
    inner = tmp_path / "the-attempts-folder"
    inner.mkdir()
    argv = landlock.landlock_argv(["/bin/sh", "-c", "echo ok > in; echo no > ../out 2>/dev/null; exit 0"],
                                  landlock.LandlockPolicy(rw=[inner], connect=[], unix=False))
    assert not any(str(inner) in word for word in argv), argv
    assert run_process(argv, cwd=inner, env=dict(os.environ), timeout_s=30).exit_code == 0
    assert (inner / "in").read_text() == "ok\n" and not (tmp_path / "out").exists()
