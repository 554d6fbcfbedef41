"""A service instance runs in the test runs' sandbox (``sandbox/service_box.py``; atk18 F1): a server that
does what its clients ask (PostgreSQL's ``pg_read_file``, ``COPY … FROM PROGRAM 'env'``) reads for the
agent neither the repository's ``.homefield/`` nor the user's environment."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox import landlock, protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.services import ServiceError, ServicePool, TestNetwork, parse_services

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
    if mode == "none":  # the control: unconfined, the server is the user's whole power
        assert "the fix" in read and env.get("HF_USERS_SECRET") == "s3cr3t" and reached == "OK"
    else:
        assert read.startswith("ERR "), read
        assert "HF_USERS_SECRET" not in env and str(repo) not in json.dumps(env)
    if mode == "bwrap":  # a network of its own: the host's other servers are out of reach (landlock keeps it)
        assert reached.startswith("ERR "), reached


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
