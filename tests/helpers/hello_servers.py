"""Two small HTTP servers on the host's 127.0.0.1 for the network tests (relay, proxy, allowlist): each
answers ``GET`` with ``hello from PORT`` (and `` PATH`` with ``path=True``)."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator


def _handler(*, path: bool, http11: bool) -> type[http.server.BaseHTTPRequestHandler]:
    class Hello(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if http11 else "HTTP/1.0"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = f"hello from {self.server.server_address[1]}{f' {self.path}' if path else ''}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Hello


@contextlib.contextmanager
def hello_servers(*, path: bool = False, http11: bool = False) -> Iterator[tuple[int, int]]:
    """Two servers running in threads while the block runs: ``(first port, second port)``."""
    handler = _handler(path=path, http11=http11)
    made = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for srv in made:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield made[0].server_address[1], made[1].server_address[1]
    finally:
        for srv in made:
            srv.shutdown()
            srv.server_close()
