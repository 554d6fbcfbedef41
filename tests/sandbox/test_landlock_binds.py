"""How many sockets a Landlock launch may hold bound and connected (contracts §9 "Port cap",
:data:`~._landlock_supervisor.BOUND_MAX`, :data:`~._landlock_supervisor.CONNECTED_MAX`):
at most that many live at once, so a launch cannot take every ephemeral port of the host's loopback (latk33:
199 of a range cut to 40000-40200 bound, a host ``bind(("0.0.0.0", 0))`` then ``EADDRINUSE``; the real 28,232
ports in some 6 s), and a socket closed gives its slot back (the count was of every bind ever made: 65,536 in
one launch, then ``EACCES``); the same for the source ports its ``connect``s take. Real Landlock, real
sockets; the exhaustion is measured in a network namespace of its own (``unshare -n``) with a cut port
range, so the host's ports are never at stake."""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.landlock import landlock_abi

from pytest_homefield.sandbox import _landlock_supervisor as supervisor
from pytest_homefield.sandbox import bwrap, landlock
from pytest_homefield.sandbox.landlock import LandlockPolicy, landlock_argv

#: In the sandbox: bind sockets to ``127.0.0.1:0`` until one is refused, print how many and the errno, wait
#: for a line of stdin holding them.
BIND_ALL = '''
import socket, sys
socks, err = [], 0
while True:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
    except OSError as exc:
        err = exc.errno
        s.close()
        break
    socks.append(s)
print("bound", len(socks), err, flush=True)
sys.stdin.readline()
'''

#: In a network namespace of its own (``unshare -n``): loopback up, the ephemeral ports cut to ``argv[2]``,
#: the sandbox's command (``argv[1]``, JSON) run; once it says what it bound, a process outside it binds
#: ``0.0.0.0:0``; prints the sandbox's line and ``host yes`` or ``host ERRNO``.
NETNS = '''
import json, socket, subprocess, sys
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
with open("/proc/sys/net/ipv4/ip_local_port_range", "w") as fh:
    fh.write(sys.argv[2])
proc = subprocess.Popen(json.loads(sys.argv[1]), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
line = proc.stdout.readline().strip()
with socket.socket() as s:
    try:
        s.bind(("0.0.0.0", 0))
        host = "yes"
    except OSError as exc:
        host = str(exc.errno)
proc.stdin.write("\\n")
proc.stdin.close()
proc.wait(timeout=60)
print(line, "host", host, flush=True)
'''


def _netns() -> list[str]:
    """The argv prefix of a network namespace of its own (``unshare -n``), skipped where none can be made."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None or subprocess.run([unshare, "-n", "true"], capture_output=True).returncode:
        pytest.skip("no network namespace (unshare -n) or no ip command here")
    return [unshare, "-n"]


def _policy(ws: Path) -> LandlockPolicy:
    if landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    return LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[ws], connect=[], unix=False)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["landlock", "none"])
def test_a_launch_cannot_bind_every_ephemeral_port(tmp_path: Path, sandbox: str) -> None:
    """latk33: with the ephemeral ports cut to ``BOUND_MAX`` + 277 (a namespace of its own), a Landlock
    launch that binds ``127.0.0.1:0`` until refused got every one of them, and a process outside then got
    ``EADDRINUSE`` for ``0.0.0.0:0``. Now it gets :data:`~._landlock_supervisor.BOUND_MAX`, the next is
    ``EADDRINUSE``, and the process outside binds. Without a sandbox the command takes every port and the
    process outside is refused (the control: the range is cut)."""
    prefix = _netns()
    command = [sys.executable, "-c", BIND_ALL]
    argv = landlock_argv(command, _policy(tmp_path)) if sandbox == "landlock" else command
    ports = (40000, 40000 + supervisor.BOUND_MAX + 276)
    out = subprocess.run([*prefix, sys.executable, "-c", NETNS, json.dumps(argv), f"{ports[0]} {ports[1]}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    if sandbox == "landlock":
        assert out.stdout.split() == ["bound", str(supervisor.BOUND_MAX), "98", "host", "yes"], out
    else:  # every port the kernel gives of the range (it keeps one or two back)
        word, bound, err, host, took = out.stdout.split()
        assert (word, err, host, took) == ("bound", "98", "host", "98") and int(bound) >= ports[1] - ports[0] - 2, out


#: In the sandbox: ``2 x argv[1] + 10`` binds one after another, each socket closed before the next; then
#: sockets held bound until one is refused (``argv[1]`` + 1 at most), one of them closed and a socket bound,
#: made to listen and connected to in its place; a listener closed after its ``listen`` frees its slot too.
LIVE = '''
import socket, sys
cap = int(sys.argv[1])
done = 0
for _ in range(2 * cap + 10):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        if done % 2:
            s.listen(1)
    done += 1
print("one-at-a-time", done, flush=True)
held, err = [], 0
while len(held) <= cap:
    s = socket.socket(socket.AF_INET6 if len(held) % 3 == 0 else socket.AF_INET)
    try:
        s.bind(("::1" if s.family == socket.AF_INET6 else "127.0.0.1", 0))
    except OSError as exc:
        err = exc.errno
        s.close()
        break
    held.append(s)
print("held", len(held), err, flush=True)
held.pop().close()
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
with socket.create_connection(s.getsockname(), timeout=5):
    print("in-its-place", "reached", flush=True)
'''


@pytest.mark.slow
def test_a_closed_socket_gives_its_bind_slot_back(tmp_path: Path) -> None:
    """The cap counts live sockets: ``2 x BOUND_MAX + 10`` binds in one launch, each closed before the next
    (every other one listening), all succeed (with a count of every bind ever made, the ``BOUND_MAX``-th
    and after were refused); ``BOUND_MAX`` held at once (IPv4 and IPv6 alike) succeed and the next is
    ``EADDRINUSE``; one of them closed, a new socket binds, listens and is reached in its place (in a
    network namespace of its own)."""
    cap = supervisor.BOUND_MAX
    argv = landlock_argv([sys.executable, "-c", LIVE, str(cap)], _policy(tmp_path))
    # in a network namespace of its own, loopback up: the host's ports are never held
    out = subprocess.run([*_netns(), "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.stdout.splitlines() == [f"one-at-a-time {2 * cap + 10}", f"held {cap} 98", "in-its-place reached"], out


#: In the sandbox: its own server; connects to it (each accepted, both ends kept) until one is refused:
#: how many and the errno; then one connection closed, client first (its end goes to ``TIME_WAIT``), and the
#: errno of one more ``connect`` (``0``: connected); it waits for a line of stdin holding them.
CONNECT_ALL = '''
import resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
srv = socket.create_server(("127.0.0.1", 0), backlog=64)
socks, accepted, err = [], [], 0
while True:
    s = socket.socket()
    err = s.connect_ex(srv.getsockname())
    if err:
        s.close()
        break
    socks.append(s)
    accepted.append(srv.accept()[0])
socks.pop(0).close()
accepted.pop(0).close()
time.sleep(0.2)
again = socket.socket()
print("connected", len(socks) + 1, err, "again", again.connect_ex(srv.getsockname()), flush=True)
sys.stdin.readline()
'''


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["landlock", "none"])
def test_a_launch_cannot_connect_from_every_ephemeral_port(tmp_path: Path, sandbox: str) -> None:
    """Each ``connect`` takes a source port the kernel picks: a Landlock launch connecting to its own server
    until refused, keeping both ends, took every port of a range cut to 40000-41300 (1,300 connected, then
    ``EADDRNOTAVAIL``) and a process outside was refused ``0.0.0.0:0``. Now it connects
    :data:`~._landlock_supervisor.CONNECTED_MAX` sockets, the next is ``EADDRNOTAVAIL``, the process
    outside binds; one connection closed (the client's end in ``TIME_WAIT``), one more connects (a client
    end in ``FIN_WAIT2``, its server's end still open, keeps its port and its slot). Without a sandbox
    every port is taken and the process outside is refused (the control)."""
    prefix = _netns()
    command = [sys.executable, "-c", CONNECT_ALL]
    if sandbox == "landlock" and landlock_abi() < landlock.NET_ABI:
        pytest.skip("TCP is not confined at this Landlock ABI")
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 2 * supervisor.CONNECTED_MAX + 600:
        pytest.skip("too few open files allowed here")
    argv = landlock_argv(command, _policy(tmp_path)) if sandbox == "landlock" else command
    ports = (40000, 40000 + supervisor.CONNECTED_MAX + 276)
    out = subprocess.run([*prefix, sys.executable, "-c", NETNS, json.dumps(argv), f"{ports[0]} {ports[1]}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if sandbox == "landlock":
        assert out.stdout.split() == ["connected", str(supervisor.CONNECTED_MAX), "99", "again", "0", "host",
                                      "yes"], out
    else:
        word, connected, err, *_, host, took = out.stdout.split()
        assert (word, err, host, took) == ("connected", "99", "host", "98"), out
        assert int(connected) >= ports[1] - ports[0] - 2, out

