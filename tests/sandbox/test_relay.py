"""``--sandbox-network loopback:PORT`` (sandbox/relay.py): a sandboxed agent reaches the named ports of
the host's 127.0.0.1 and nothing else; ``none`` reaches none of them, ``shared`` all (the control).

Real bubblewrap and real HTTP servers on 127.0.0.1 (skipped with the probe's reason where bubblewrap
cannot create namespaces); the agent is a ``cmd:`` agent run through run/attempt.py's
:func:`agent_sandbox`, as ``homefield run`` runs it.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.hello_servers import hello_servers

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.errors import ConfigError
from pytest_homefield.run.agent_sandbox import agent_sandbox
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice, parse_network
from pytest_homefield.sandbox.relay import HostRelay
from pytest_homefield.sandbox.tempdirs import mkdtemp, owner_tag
from pytest_homefield.settings import resolve_settings


def test_parse_network() -> None:
    assert parse_network("shared") == (True, ())
    assert parse_network("none") == (False, ())
    assert parse_network("loopback:8000,11434,8000") == (False, (8000, 11434))
    for bad in ("host", "loopback:", "loopback:x", "loopback:0", "loopback:70000", "10.0.0.1:80"):
        with pytest.raises(ValueError, match="loopback:PORT"):
            parse_network(bad)
    assert SandboxChoice("auto", "loopback:9").loopback_ports == (9,)
    assert not SandboxChoice("auto", "loopback:9").shared_network


def test_settings_check_the_network(tmp_path: Path) -> None:
    assert resolve_settings(tmp_path, {"sandbox_network": "loopback:8000"}).sandbox_network == "loopback:8000"
    with pytest.raises(ConfigError, match="--homefield-sandbox-network 'host': use shared, none or loopback:PORT"):
        resolve_settings(tmp_path, {"sandbox_network": "host"})


@pytest.fixture
def servers() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the host's 127.0.0.1: (allowed port, other port)."""
    with hello_servers() as ports:
        yield ports


PROBE = ("import sys, urllib.request\n"
         "for port in sys.argv[1:]:\n"
         "    try:\n"
         "        print(port, urllib.request.urlopen(f'http://127.0.0.1:{port}/', timeout=5).read().decode())\n"
         "    except OSError as exc:\n"
         "        print(port, 'unreachable', type(exc).__name__)\n")


def _run(tmp_path: Path, network: str, ports: tuple[int, int]) -> tuple[list[str], str]:
    """Run a cmd: agent that fetches both ports, under ``--sandbox-network network``; its stdout lines."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    command = f"{sys.executable} -c \"$(cat probe.py)\" {ports[0]} {ports[1]}"
    (ws / "probe.py").write_text(PROBE)
    agent = CommandAgent(name="net", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    box = tmp_path / "box"
    env = build_agent_env(prompt="p", attempt=1, tmpdir=box / "tmp", passthrough=[])
    choice = SandboxChoice("bwrap", network)
    sb = agent_sandbox(agent, choice.for_agent(agent, False), workspace=ws, box=box, env=env, sandbox=choice)
    art = tmp_path / "art"
    try:
        agent.run(AgentContext(workspace=ws, prompt="p", env=env, timeout_s=60, artifacts=art, wrap=sb.wrap,
                               sandbox="bwrap"))
    finally:
        sb.close()
    assert sb.recorded == "bwrap"
    return (art / "agent.out").read_text().splitlines(), (art / "agent.err").read_text()


def test_loopback_reaches_only_the_named_port(tmp_path: Path, servers: tuple[int, int]) -> None:
    allowed, other = servers
    out, err = _run(tmp_path, f"loopback:{allowed}", servers)
    assert out[0] == f"{allowed} hello from {allowed}", err
    assert out[1].startswith(f"{other} unreachable"), err
    assert not list((tmp_path / "box" / "net").glob("*.sock"))  # the relay's sockets are gone after it


def test_none_reaches_nothing_and_shared_everything(tmp_path: Path, servers: tuple[int, int]) -> None:
    allowed, other = servers
    out, err = _run(tmp_path / "none", "none", servers)
    assert [line.split()[1] for line in out] == ["unreachable", "unreachable"], err
    out, err = _run(tmp_path / "shared", "shared", servers)
    assert out == [f"{allowed} hello from {allowed}", f"{other} hello from {other}"], err


def test_host_relay_joins_a_socket_to_the_port(tmp_path: Path, servers: tuple[int, int]) -> None:
    allowed, _ = servers
    relay = HostRelay([allowed], tmp_path / "net").start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(relay.socket_path(allowed)))
            s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    finally:
        relay.close()
    assert data.startswith(b"HTTP/1.0 200") and data.endswith(f"hello from {allowed}".encode())
    assert not relay.socket_path(allowed).exists()


def test_host_relay_moves_a_folder_too_deep_for_a_socket(tmp_path: Path, servers: tuple[int, int]) -> None:
    deep = tmp_path.joinpath(*["d" * 20] * 5)
    relay = HostRelay([servers[0]], deep, fallback=lambda: mkdtemp(dir="/tmp")).start()  # as run/attempt does
    try:
        assert relay.folder != deep and relay.socket_path(servers[0]).exists()
        assert relay.folder.parent == Path("/tmp") and relay.folder.name.startswith(f"hf-{owner_tag()}-")
        assert relay.start() is relay  # once
    finally:
        relay.close()
    assert not relay.folder.exists()


def test_a_service_socket_swapped_for_a_link_is_never_followed(tmp_path: Path) -> None:
    """HostPort (a service's port on the host, ``relay.py serve``'s socket in the service's folder): the
    service can write its folder and runs what its clients ask, so it can replace its socket by a link to
    any socket of the host (the docker daemon's, another attempt's proxy). A connection is made only to the
    socket itself, never through a link: the host's socket gets no client."""
    import os
    import threading

    from pytest_homefield.sandbox.relay import HostPort

    def unix_server(path: Path, reply: bytes, seen: list[bytes]) -> socket.socket:
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(str(path))
        srv.listen(4)

        def serve() -> None:
            while True:
                try:
                    c, _ = srv.accept()
                except OSError:
                    return
                seen.append(c.recv(100))
                c.sendall(reply)
                c.close()

        threading.Thread(target=serve, daemon=True).start()
        return srv

    def ask(port: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            try:
                c.sendall(b"hi")
                return b"".join(iter(lambda: c.recv(100), b""))
            except (ConnectionResetError, BrokenPipeError):  # closed with "hi" unread: refused
                return b""

    folder, host = tmp_path / "svc", tmp_path / "host"
    folder.mkdir()
    host.mkdir()
    own: list[bytes] = []
    theirs: list[bytes] = []
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sock = folder / f"{port}.sock"
    with unix_server(sock, b"service", own), unix_server(host / "docker.sock", b"host secret", theirs):
        relay = HostPort(port, sock).start()
        try:
            assert ask(port) == b"service" and own == [b"hi"]
            sock.unlink()
            os.symlink(host / "docker.sock", sock)
            assert ask(port) == b""  # closed: a link is not the service's socket
        finally:
            relay.close()
    assert theirs == []
