"""A service instance runs in the test runs' sandbox (``sandbox/service_box.py``; atk18 F1): a server that
does what its clients ask (PostgreSQL's ``pg_read_file``, ``COPY … FROM PROGRAM 'env'``) reads for the
agent neither the repository's ``.homefield/`` nor the user's environment."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import landlock, protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.relay import MAX_SOCKET_PATH
from pytest_homefield.sandbox.services import ServiceError, ServicePool, TestNetwork, free_port, parse_services

#: A server that answers ``READ <path>`` with the file's text, ``ENV`` with its environment and ``CONNECT
#: <port>`` with whether it reached that port of ``127.0.0.1``: what a superuser's PostgreSQL gives any client
#: (``pg_read_file``, ``COPY … FROM PROGRAM 'env'``, ``COPY … FROM PROGRAM 'curl …'``).
SERVER = r'''
import json, os, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4)
while True:
    c, _ = s.accept()
    line = c.makefile().readline().strip()
    try:
        if line.startswith("CONNECT "):  # another server of the host's loopback, for the client
            socket.create_connection(("127.0.0.1", int(line[8:])), timeout=5).close()
            out = "OK"
        elif line.startswith("LISTEN "):  # a second port of its own (a cluster's transport port), reached by itself
            t = socket.socket(); t.bind(("0.0.0.0", int(line[7:]))); t.listen(1)
            socket.create_connection(("127.0.0.1", int(line[7:])), timeout=5).close()
            t.close()
            out = "OK"
        else:
            out = json.dumps(dict(os.environ)) if line == "ENV" else open(line[5:]).read()
    except OSError as exc:
        out = f"ERR {type(exc).__name__}"
    c.sendall(out.encode()); c.close()
'''


def ask(port: int, line: str) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(line.encode() + b"\n")
        return b"".join(iter(lambda: c.recv(65536), b"")).decode()


def works(mode: str) -> None:
    try:
        probe() if mode == "bwrap" else landlock.probe()
    except BwrapUnavailable as exc:  # LandlockUnavailable is one
        pytest.skip(str(exc))


@pytest.mark.parametrize("mode", ["bwrap", "landlock", "none"])
def test_a_service_reads_no_repository_and_no_user_secret(mode: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if mode != "none":
        works(mode)
    repo = tmp_path / "repo"
    (repo / ".homefield").mkdir(parents=True)
    gold = repo / ".homefield" / "tasks.jsonl"
    gold.write_text('{"gold_patch": "the fix"}\n')
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    monkeypatch.setenv("HF_USERS_SECRET", "s3cr3t")
    script = tmp_path / "srv" / "server.py"
    script.parent.mkdir()
    script.write_text(SERVER)
    specs = parse_services({"files": {"command": f"{sys.executable} {script} {{port}}",
                                      "env": {"FILES_PORT": "{port}"}}})
    other = socket.socket()  # another server of the user's on the host's loopback
    other.bind(("127.0.0.1", 0))
    other.listen(4)
    with other, ServicePool(TestNetwork(specs, (), tmp_path / "logs", sandbox=mode)).lease() as lease:
        port = int(lease.env["FILES_PORT"])
        assert ask(port, f"READ {script}") == SERVER  # the server does read files for its clients
        read, env = ask(port, f"READ {gold}"), json.loads(ask(port, "ENV"))
        reached = ask(port, f"CONNECT {other.getsockname()[1]}")
        second = ask(port, f"LISTEN {free_port()}")
    if mode == "none":  # the control: unconfined, the server is the user's whole power
        assert "the fix" in read and env.get("HF_USERS_SECRET") == "s3cr3t" and reached == "OK"
    else:
        assert read.startswith("ERR "), read
        assert "HF_USERS_SECRET" not in env and str(repo) not in json.dumps(env)
    if mode != "none":  # bwrap: a network of its own; landlock: no port to connect to (hatk35)
        assert reached.startswith("ERR "), reached
    assert second == "OK", second  # any port of its own, on the loopback (landlock: bind_any), and reached there


@pytest.mark.parametrize("reuse", [False, True])
def test_a_failed_start_is_tried_again_at_grading_and_remembered_at_mining(reuse: bool, tmp_path: Path) -> None:
    """atk18 N1: a grading's pool that remembered one failed start made every later grading of the process
    ``infra`` (4 of 5 oracle attempts). Mining (the repository's own code) still remembers it."""
    marker = tmp_path / "failed-once"
    script = tmp_path / "server.py"
    script.write_text(f"import os, pathlib, sys\nm = pathlib.Path({str(marker)!r})\n"
                      "if not m.exists():\n    m.touch(); sys.exit(1)\n" + SERVER)
    specs = parse_services({"files": {"command": f"{sys.executable} {script} {{port}}", "env": {"P": "{port}"}}})
    pool = ServicePool(TestNetwork(specs, (), tmp_path / "logs", reuse=reuse, sandbox="none"))
    with pytest.raises(ServiceError, match="exited with status 1"), pool.lease():
        pass
    if reuse:
        with pytest.raises(ServiceError, match="exited with status 1"), pool.lease():
            pass
    else:
        with pool.lease() as lease:
            assert ask(int(lease.env["P"]), f"READ {script}").startswith("import os")
    pool.close()


def resp(port: int, *args: str) -> bytes:
    """One redis command (RESP) to ``127.0.0.1:port``; its reply's first bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(f"*{len(args)}\r\n".encode() + b"".join(f"${len(a)}\r\n{a}\r\n".encode() for a in args))
        return c.recv(65536)


@pytest.mark.parametrize("mode,long_tmp", [("landlock", False), ("bwrap", False), ("bwrap", True), ("none", False)])
def test_a_redis_instance_writes_into_no_other_redis_of_the_host(mode: str, long_tmp: bool, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """hatk35: the agent (its own instances) and the graded test process (the grading's) drive a redis that
    does what its clients ask: ``MIGRATE 127.0.0.1 <port> <key> 0 5000`` makes the server itself connect to
    another redis and write the key there. Under Landlock the instance's network was not confined at all:
    the key landed in the user's own redis on the host's ``127.0.0.1`` (another attempt's instance, or any
    host of the internet, alike); under bubblewrap with a ``TMPDIR`` too long for the relay's socket the
    instance kept the host's network. Now it reaches no other server (``none`` is the control: it does)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    if mode != "none":
        works(mode)
    if long_tmp:  # a TMPDIR whose instance folders hold no socket path short enough
        deep = tmp_path / ("d" * (MAX_SOCKET_PATH - len(str(tmp_path))))
        deep.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(deep))
    vport = free_port()  # the user's own redis on the host
    victim = subprocess.Popen(["redis-server", "--port", str(vport), "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, cwd=tmp_path)
    try:
        for _ in range(200):
            try:
                resp(vport, "PING")
                break
            except OSError:
                time.sleep(0.05)
        specs = parse_services({"redis": {"command": "redis-server --port {port} --save '' --appendonly no",
                                          "env": {"REDIS_PORT": "{port}"}}})
        with ServicePool(TestNetwork(specs, (), tmp_path / "logs", sandbox=mode)).lease() as lease:
            port = int(lease.env["REDIS_PORT"])
            assert resp(port, "SET", "planted", "by-the-agent") == b"+OK\r\n"
            migrated = resp(port, "MIGRATE", "127.0.0.1", str(vport), "planted", "0", "5000")
        planted = resp(vport, "GET", "planted")
    finally:
        victim.kill()
        victim.wait()
    if mode == "none":
        assert migrated == b"+OK\r\n" and b"by-the-agent" in planted
    else:
        assert migrated.startswith(b"-IOERR"), migrated
        assert planted == b"$-1\r\n", planted


@pytest.mark.parametrize("ready", ["tcp", "sh"])
def test_a_port_another_process_took_before_the_instance_is_never_its_ready(ready: str, tmp_path: Path) -> None:
    """aatk49, under Landlock (no network namespace of its own: the instance listens on the host's loopback): a
    process that is not the instance (a graded test's or an agent's of another attempt: they may listen on a
    loopback port) took the instance's port between homefield's choice of it and the server's ``bind``, and
    ``ready: tcp`` (or a ``ready`` command asking the port) took that listener for the instance: the lease's
    tests then talked to it. Here the server binds half a second after it started (as a slow launcher does) and
    the other listener comes once it started: now the start fails (the server, its port taken, exits) instead."""
    import threading

    from pytest_homefield.sandbox.services import Instance

    works("landlock")
    script = tmp_path / "server.py"
    script.write_text("import time\nopen('started', 'w').close()\ntime.sleep(0.5)\n" + SERVER)
    body: dict[str, object] = {"command": f"{sys.executable} {script} {{port}}", "timeout": 5}
    if ready == "sh":
        body["ready"] = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {{port}}), 1)\""
    (spec,) = parse_services({"srv": body})
    port = free_port()
    other = socket.socket()
    other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def take() -> None:  # once the server runs (after the start's own check that the port is free)
        deadline = time.monotonic() + 10
        while not (inst.cwd is not None and (inst.cwd / "started").exists()) and time.monotonic() < deadline:
            time.sleep(0.005)
        other.bind(("127.0.0.1", port))
        other.listen(4)

    taker = threading.Thread(target=take)
    inst = Instance(spec, port, tmp_path / "logs" / "srv.log", sandbox="landlock")
    try:
        taker.start()
        with pytest.raises(ServiceError, match="exited with status|was not ready"):
            inst.start()
    finally:
        inst.stop()
        taker.join()
        other.close()


def test_the_instance_s_own_listener_is_its_ready(tmp_path: Path) -> None:
    """The check of the test above takes the instance's own socket (a process of its tree) for ready."""
    from pytest_homefield.sandbox.services import Instance, listens_itself

    works("landlock")
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    (spec,) = parse_services({"srv": {"command": f"{sys.executable} {script} {{port}}", "timeout": 10}})
    port = free_port()
    inst = Instance(spec, port, tmp_path / "logs" / "srv.log", sandbox="landlock").start()
    try:
        assert inst.proc is not None and listens_itself(inst.proc.pid, port)
        with subprocess.Popen(["sleep", "30"]) as sibling:  # a process outside the instance's tree
            assert not listens_itself(sibling.pid, port)
            sibling.kill()
        assert ask(port, f"READ {script}").lstrip().startswith("import json")  # its own server answers
    finally:
        inst.stop()


@pytest.mark.parametrize("sandbox", ["none", "landlock"])
def test_a_ready_command_of_a_service_serving_no_tcp_is_believed(sandbox: str, tmp_path: Path) -> None:
    """A service that listens on no TCP port (a worker, a socket file) is ready when its ``ready`` command says so,
    under Landlock too: aatk49's check that the listener is the instance's own asked the port to be open, and such a
    service was never ready (20 s, then ``ServiceError``: ``test_own_files_nofollow``'s service, lead48)."""
    from pytest_homefield.sandbox.services import Instance

    if sandbox == "landlock":
        works("landlock")
    (spec,) = parse_services({"srv": {"command": "sleep 30", "ready": "true", "timeout": 5}})
    inst = Instance(spec, free_port(), tmp_path / "logs" / "srv.log", sandbox=sandbox).start()
    try:
        assert inst.proc is not None and inst.proc.poll() is None
    finally:
        inst.stop()
