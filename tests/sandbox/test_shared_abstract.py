"""satk43: what ``--sandbox-network shared`` (the explicit opt-out, not the default) shows besides the network.

Sharing the host's network namespace shares its abstract Unix sockets too (their names live in the network
namespace): a sandboxed agent connects to every one a host process listens on, as the host's uid (the peer
credentials a server checks), e.g. an X server's ``@/tmp/.X11-unix/X0``, which admits its user's local clients by
uid (``xhost +si:localuser:…``), and whose keyboard reaches the user's terminals. ``allowlist``, ``none`` and
``loopback:`` unshare the network and see none (the first test). Real bubblewrap and a real listener.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import pytest

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
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=python_paths([sys.executable]), network=network,
                   agent="a")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    try:
        wrapped = BwrapBackend(exe).wrap_agent([sys.executable, "-c", PROBE, name], env, box)
        code = run_process(wrapped.argv, cwd=ws, env=env, timeout_s=60, stdout_path=tmp_path / "agent.out",
                           stderr_path=tmp_path / "agent.err").exit_code
        assert code == 0, (tmp_path / "agent.err").read_text()
        return (tmp_path / "agent.out").read_text().strip()
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()


def test_an_unshared_network_reaches_no_abstract_socket_of_the_host(tmp_path: Path) -> None:
    assert _run(tmp_path, network=False) == "unreachable ConnectionRefusedError"


@pytest.mark.xfail(strict=True, reason="satk43: under --sandbox-network shared (bubblewrap) the sandbox shares the "
                                       "host's abstract Unix sockets with its network namespace and reaches every "
                                       "one a host process listens on (an X server's, as its user)")
def test_a_shared_network_reaches_no_abstract_socket_of_the_host(tmp_path: Path) -> None:
    assert _run(tmp_path, network=True).startswith("unreachable"), "connected to the host's abstract socket"
