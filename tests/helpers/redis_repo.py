"""A tiny real git repository whose tests need a running ``redis-server`` (issue 31).

``kv/__init__.py`` speaks RESP over a raw socket (no ``redis`` package needed) to the server named by
``REDIS_URL`` (default ``redis://127.0.0.1:6379/0``, as many projects do); a refused connection
raises ``ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")``, the words
redis-py uses. Two tasks:

* ``Add get() and set() ...``: ``tests/test_kv.py`` sets and reads a key;
* ``Add incr() ...``: ``tests/test_incr.py`` expects ``incr("visits")`` to return 1 on a fresh
  server, so it fails wherever a test run sees a server another run used without a reset (mining's
  stability runs, two graded attempts in one worker).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from helpers.e2e_repo import git

__all__ = ["build", "SERVICES_YML", "redis_available", "REDIS_SKIP"]

CLIENT = '''"""A minimal Redis client: RESP over a socket."""

import os
import socket
from urllib.parse import urlparse


def _encode(*args):
    out = [b"*%d\\r\\n" % len(args)]
    for a in args:
        data = str(a).encode()
        out.append(b"$%d\\r\\n%s\\r\\n" % (len(data), data))
    return b"".join(out)


class Redis:
    def __init__(self, url=None):
        u = urlparse(url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 6379
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=5)
        except OSError as exc:
            raise ConnectionError(f"Error {exc.errno} connecting to {self.host}:{self.port}. {exc.strerror}.")
        self.file = self.sock.makefile("rb")

    def call(self, *args):
        self.sock.sendall(_encode(*args))
        line = self.file.readline().rstrip(b"\\r\\n")
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data.decode()
        return rest.decode()
'''

KV_1 = CLIENT + '''

def client():
    return Redis()
'''
KV_2 = KV_1 + '''

def put(key, value):
    return client().call("SET", key, value)


def get(key):
    return client().call("GET", key)
'''
KV_3 = KV_2 + '''

def incr(key):
    return client().call("INCR", key)
'''

COMMITS: list[tuple[str, dict[str, str]]] = [
    ("Initial redis client speaking RESP", {
        "kv/__init__.py": KV_1,
        "tests/test_ping.py": "import kv\n\n\ndef test_ping():\n    assert kv.client().call('PING') == 'PONG'\n"}),
    ("Add get() and put() that store strings in redis", {
        "kv/__init__.py": KV_2,
        "tests/test_kv.py": "import kv\n\n\ndef test_put_then_get():\n    kv.put('name', 'homefield')\n"
                            "    assert kv.get('name') == 'homefield'\n"}),
    ("Add incr() that counts visits in redis", {
        "kv/__init__.py": KV_3,
        "tests/test_incr.py": "import kv\n\n\ndef test_incr_starts_from_zero():\n"
                              "    assert kv.incr('visits') == 1\n"}),
]

#: The ``services:`` of the issue's example.
SERVICES_YML = """services:
  redis:
    command: "redis-server --port {port} --save '' --appendonly no"
    ready: tcp
    env: {REDIS_URL: "redis://127.0.0.1:{port}/0"}
    reset: "redis-cli -p {port} flushall"
"""

REDIS_SKIP = ("redis-server/redis-cli not installed (Debian: apt-get install redis-server; .ci/run installs it "
              "as root)")


def redis_available() -> bool:
    """Whether ``redis-server`` and ``redis-cli`` are on ``PATH``."""
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None


def build(dest: Path, *, services: bool = True) -> Path:
    """Create the repository in ``dest`` (must not exist), with an untracked ``.homefield.yml``
    declaring the redis service (``services``) or not; returns it."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    for i, (msg, files) in enumerate(COMMITS):
        for rel, text in files.items():
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", msg, date=f"2026-02-{i + 1:02d}T12:00:00+00:00")
    yml = f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n'
    (dest / ".homefield.yml").write_text(yml + (SERVICES_YML if services else ""), encoding="utf-8")
    return dest
