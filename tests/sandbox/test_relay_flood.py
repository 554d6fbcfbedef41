"""hatk39: the host half of the loopback relay (``sandbox/relay.py`` ``HostRelay``, ``--sandbox-network
loopback:PORT``, an allowed loopback provider, an agent's own services) joined every connection the sandbox made to
its Unix socket with two threads and two descriptors of the *host* process, without a bound: a sandbox capped at
512 processes (``--max-procs``) had the host hold as many threads and connections as it opened, past the
filtering proxy's cap (256) and the sandbox's own, until the host process ran out of descriptors (20,000 here:
every file it opened after that failed) or the machine out of threads. Now each listener of a relay serves
:data:`~pytest_homefield.sandbox.relay.MAX_CONNECTIONS` at once and closes the others at once, and closing the
relay cuts the connections in flight."""

from __future__ import annotations

import shlex
import socket
import sys
import threading
from pathlib import Path

import pytest
from helpers.attack_repo import Fixture, build, cmd_agent, task_for
from helpers.bwrap import bwrap_works

from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.relay import MAX_CONNECTIONS

#: Connections the agent opens to the relay's socket and holds.
OPENED = 1500

#: The agent: finds the relay's socket of PORT in the inside relay's command line (``PORT=SOCK``), connects to it
#: OPENED times (directly: no thread of the sandbox's own per connection) and holds them for a while.
FLOOD = r"""
import os, socket, sys, time
port = sys.argv[1]
path = None
for pid in os.listdir('/proc'):
    try:
        words = open('/proc/%s/cmdline' % pid, 'rb').read().split(b'\0')
    except OSError:
        continue
    for w in words:
        if w.startswith((port + '=').encode()):
            path = w.split(b'=', 1)[1].decode()
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
    except OSError:
        break
    held.append(s)
print('opened', len(held), 'to', path, flush=True)
time.sleep(4)
"""


class Server:
    """A local server on the host's ``127.0.0.1`` (a model server's stand-in) that accepts every connection and
    holds it; :attr:`peak` is how many it accepted (none is closed before the agent ends: as many held at once)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=4096)
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        self.peak = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.held.append(conn)
                self.peak = len(self.held)

    def close(self) -> None:
        self.listener.close()
        for c in self.held:
            c.close()


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_an_agent_cannot_make_the_host_hold_connections_without_bound(tmp_path: Path) -> None:
    """Before: the host's relay held all 1,500 (3,000 threads of the host process). Now at most 256 at once."""
    fx: Fixture = build(tmp_path / "repo")
    task = task_for(fx)
    server = Server()
    cache = SnapshotCache(repo=fx.root)
    try:
        agent = cmd_agent(f"{shlex.quote(sys.executable)} -I -S -c {shlex.quote(FLOOD)} {server.port} {OPENED}")
        spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                           sandbox=SandboxChoice("bwrap", f"loopback:{server.port}"))
        r = run_attempt(spec, cache)
        out = (spec.artifacts / "agent.out").read_text()
    finally:
        cache.close()
        server.close()
    assert r.outcome == "empty_patch", (r.outcome, r.error, out)
    assert f"opened {OPENED} to " in out, out  # the agent's side: every connect was taken (the backlog)
    assert 0 < server.peak <= MAX_CONNECTIONS, server.peak
