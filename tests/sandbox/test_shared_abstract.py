"""satk43: ``--sandbox-network shared`` (the explicit opt-out, not the default) keeps the host's network, not
its abstract Unix sockets.

Sharing the host's network namespace shares its abstract Unix sockets too (their names live in the network
namespace): a sandboxed agent connected to every one a host process listens on, as the host's uid (the peer
credentials a server checks), e.g. an X server's ``@/tmp/.X11-unix/X0``, which admits its user's local clients by
uid (``xhost +si:localuser:…``), and whose keyboard reaches the user's terminals. Now the command runs in a
Landlock domain scoped to its abstract sockets (:mod:`pytest_homefield.sandbox._scope`, ABI 6) where the kernel
has it: the host's are refused, its own still work, and TCP to the host's loopback too. ``allowlist``, ``none``
and ``loopback:`` unshare the network and see none. Real bubblewrap and real listeners.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from pytest_homefield.sandbox._scope import available as scope_available
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe, python_paths
from pytest_homefield.sandbox.procs import run_process

PROBE = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\\0" + sys.argv[1])
    print("connected", s.recv(16).decode())
except OSError as exc:
    print("unreachable", type(exc).__name__)
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.bind("\\0" + sys.argv[1] + "-own")
own.listen(1)
mine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
mine.connect("\\0" + sys.argv[1] + "-own")
print("own", "works")
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=10).close()
    print("tcp", "connected")
except OSError as exc:
    print("tcp", "unreachable", type(exc).__name__)
"""


def _run(tmp_path: Path, network: bool) -> str:
    try:
        exe = probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    name = f"hf-satk43-{os.getpid()}-{network}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(4)

    def serve() -> None:
        try:
            conn, _ = listener.accept()
            conn.sendall(b"host")
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=python_paths([sys.executable]), network=network,
                   agent="a")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    try:
        wrapped = BwrapBackend(exe).wrap_agent([sys.executable, "-c", PROBE, name, str(tcp.getsockname()[1])], env, box)
        code = run_process(wrapped.argv, cwd=ws, env=env, timeout_s=60, stdout_path=tmp_path / "agent.out",
                           stderr_path=tmp_path / "agent.err").exit_code
        assert code == 0, (tmp_path / "agent.err").read_text()
        return (tmp_path / "agent.out").read_text().strip()
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        tcp.close()


def test_an_unshared_network_reaches_no_abstract_socket_of_the_host(tmp_path: Path) -> None:
    assert _run(tmp_path, network=False).splitlines() == ["unreachable ConnectionRefusedError", "own works",
                                                          "tcp unreachable ConnectionRefusedError"]


def test_a_shared_network_reaches_no_abstract_socket_of_the_host(tmp_path: Path) -> None:
    if not scope_available():
        pytest.skip("Landlock below ABI 6 here: no scope for abstract Unix sockets (contracts §9)")
    # before: "connected host"; Landlock refuses a scoped connect with EPERM
    assert _run(tmp_path, network=True).splitlines() == ["unreachable PermissionError", "own works", "tcp connected"]
