"""What the network allowlist's filtering proxy (sandbox/proxy.py) costs per attempt, in one session.

Run on demand (not a test)::

    python benchmarks/proxy.py --runs 7 --requests 200

Two measurements, each variant alternated with the others after one warm-up:

* **start-up**: a ``cmd:`` agent running ``true`` in bubblewrap through run/attempt.py's
  :func:`agent_sandbox`, with ``--sandbox-network none`` (no relay, no proxy) and with ``allowlist``
  (the proxy started on its Unix socket, the relay's inside half in front of the command): median
  wall seconds and CPU seconds (this process, where the proxy's threads run, plus its waited-for
  children: bubblewrap, the relay's inside half, the command) of each, and the differences in
  milliseconds (what the allowlist adds to every attempt); on a loaded machine the wall time mostly
  measures waiting for a core, the CPU time does not;
* **per request**: sequential HTTP GETs, one new connection each (as an API client that does not
  keep connections alive; the worst case for a proxy), to a local HTTP server on 127.0.0.1, from
  Python's ``http.client``: on the host, directly (the baseline); and inside one ``allowlist``
  sandbox, directly through the relay (the server's port is an allowed loopback port), through the
  proxy as an absolute-URI request, and through a ``CONNECT`` tunnel (what HTTPS takes). Median
  milliseconds per request and the ratio of each to the host's direct request;
* **per tunnel** (on the host, no sandbox): a real ClientHello (Python's TLS client's first flight) sent to a
  server on 127.0.0.1 that answers one byte once it has it all, directly and through a ``CONNECT`` tunnel of the
  proxy on its Unix socket, which reads and judges that ClientHello before it goes on (satk56: the tunnel's
  peek), a new connection each: median milliseconds; and the proxy's own microseconds judging it, in-process;
* **per TLS handshake** (on the host, no sandbox; ``--tls-only`` runs this alone): Python's TLS 1.3 client
  connecting to a TLS server on 127.0.0.1 for ``listed.example`` and reading a two-byte answer, directly and through
  a ``CONNECT`` tunnel, where the proxy judges every record of the client's up to the server's hello (natk65,
  :class:`_TlsFlights`), with and without a HelloRetryRequest (the server taking only secp384r1): median ms each, a
  new connection each.
"""

from __future__ import annotations

import argparse
import http.server
import json
import resource
import socket
import socketserver
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.environment import build_agent_env
from pytest_homefield.run.agent_sandbox import agent_sandbox
from pytest_homefield.sandbox.bwrap import probe
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.proxy import Allowlist, FilteringProxy, _Deadline, _tunnel_opening

#: Run inside (and on the host): ``N PORT MODE…`` → one JSON line {mode: [ms per request]}.
CLIENT = r"""
import http.client, json, os, socket, sys, time
n, port, modes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
proxy = int(os.environ.get("HTTP_PROXY", "http://127.0.0.1:0").rsplit(":", 1)[1])
out = {}
for mode in modes:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        if mode == "direct":
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/")
        elif mode == "proxy":
            c = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
            c.request("GET", f"http://127.0.0.1:{port}/")
        else:
            c = http.client.HTTPConnection("127.0.0.1", proxy, timeout=10)
            c.set_tunnel("127.0.0.1", port)
            c.request("GET", "/")
        body = c.getresponse().read()
        c.close()
        assert body == b"ok", body
        times.append((time.perf_counter() - t0) * 1000)
    out[mode] = times
print(json.dumps(out))
"""


class _Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its waited-for children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _sandboxed(tmp: Path, n: int, command: str, network: str,
               allow: tuple[str, ...] = ()) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one ``cmd:`` agent attempt running ``command`` under ``network``."""
    root = Path(tempfile.mkdtemp(dir=tmp))
    ws, box, art = root / "ws", root / "box", root / "art"
    ws.mkdir()
    art.mkdir()
    (ws / "client.py").write_text(CLIENT)
    agent = CommandAgent(name="bench", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    env = build_agent_env(prompt="p", attempt=n, tmpdir=box / "tmp", passthrough=[])
    choice = SandboxChoice("bwrap", network, allow)
    t0, c0 = time.perf_counter(), _cpu()
    sb = agent_sandbox(agent, "bwrap", workspace=ws, box=box, env=env, sandbox=choice, proxy_log=art / "proxy.log")
    try:
        agent.run(AgentContext(workspace=ws, prompt="p", env=env, timeout_s=300, artifacts=art, wrap=sb.wrap,
                               sandbox="bwrap"))
    finally:
        sb.close()
    return time.perf_counter() - t0, _cpu() - c0, (art / "agent.out").read_text()


def _hello() -> bytes:
    """The first flight of Python's TLS client to ``127.0.0.1`` (no server name: an IP literal)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    tls = ctx.wrap_bio(ssl.MemoryBIO(), out := ssl.MemoryBIO(), server_hostname="127.0.0.1")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def _per_tunnel(n: int, tmp: Path) -> dict[str, float]:
    """Median ms of :func:`_hello`'s round trip directly and through a tunnel (module docstring), and the median
    µs of judging it (``_tunnel_opening`` on a socket pair)."""
    hello = _hello()

    class Answer(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            got = b""
            while len(got) < len(hello) and (chunk := self.request.recv(65536)):
                got += chunk
            self.request.sendall(b"x")

    listener = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Answer)
    listener.daemon_threads = True
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    port = listener.server_address[1]
    proxy = FilteringProxy(Allowlist.of([f"127.0.0.1:{port}"])).start(tmp / "tunnel.sock")
    times: dict[str, list[float]] = {"direct": [], "tunnel": [], "judge": []}
    for _ in range(n):
        for mode in ("direct", "tunnel"):
            t0 = time.perf_counter()
            with socket.socket(socket.AF_UNIX if mode == "tunnel" else socket.AF_INET) as s:
                s.settimeout(10)
                if mode == "tunnel":
                    s.connect(str(tmp / "tunnel.sock"))
                    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
                    head = b""
                    while b"\r\n\r\n" not in head:
                        head += s.recv(4096)
                else:
                    s.connect(("127.0.0.1", port))
                s.sendall(hello)
                assert s.recv(1) == b"x"
            times[mode].append((time.perf_counter() - t0) * 1000)
        a, b = socket.socketpair()
        with a, b:
            a.sendall(hello)
            t0 = time.perf_counter()
            assert not _tunnel_opening(_Deadline(b, 30), b"", "127.0.0.1", port).refusal
            times["judge"].append((time.perf_counter() - t0) * 1e6)
    proxy.close()
    listener.shutdown()
    listener.server_close()
    return {k: statistics.median(v) for k, v in times.items()}


class _Listed(FilteringProxy):
    """The proxy, its one allowed host ``listed.example`` reached at ``front`` (a port of 127.0.0.1)."""

    def __init__(self, front: int) -> None:
        super().__init__(Allowlist.of(["listed.example:443"]))
        self.front = front

    def _connect(self, host: str, port: int) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.front), timeout=10)


def _per_handshake(n: int, tmp: Path) -> dict[str, float]:
    """Median ms of a TLS 1.3 handshake and a two-byte answer, directly and through the tunnel, with and without a
    HelloRetryRequest (module docstring)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=listed.example", "-addext", "subjectAltName=DNS:listed.example", "-days", "1",
                    "-keyout", str(tmp / "key.pem"), "-out", str(tmp / "cert.pem")], check=True, capture_output=True)
    client = ssl.create_default_context(cafile=tmp / "cert.pem")
    times: dict[str, list[float]] = {}
    for retry in (False, True):
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
        if retry:
            server.set_ecdh_curve("secp384r1")

        class Answer(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with server.wrap_socket(self.request, server_side=True) as tls:
                    tls.sendall(b"ok")

        listener = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Answer)
        listener.daemon_threads = True
        threading.Thread(target=listener.serve_forever, daemon=True).start()
        proxy = _Listed(listener.server_address[1])
        port = proxy.start_tcp()
        for _ in range(n):
            for mode in ("direct", "tunnel"):
                t0 = time.perf_counter()
                with socket.create_connection(("127.0.0.1", port if mode == "tunnel" else listener.server_address[1]),
                                              timeout=10) as s:
                    if mode == "tunnel":
                        s.sendall(b"CONNECT listed.example:443 HTTP/1.1\r\n\r\n")
                        assert s.recv(4096).startswith(b"HTTP/1.1 200")
                    with client.wrap_socket(s, server_hostname="listed.example") as tls:
                        assert tls.recv(2) == b"ok"
                times.setdefault(f"{mode}{' retry' if retry else ''}", []).append((time.perf_counter() - t0) * 1000)
        proxy.close()
        listener.shutdown()
        listener.server_close()
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="attempts per start-up variant (default 7)")
    ap.add_argument("--requests", type=int, default=200, help="requests per per-request variant (default 200)")
    ap.add_argument("--tunnels", type=int, default=500, help="round trips per per-tunnel variant (default 500)")
    ap.add_argument("--handshakes", type=int, default=300, help="handshakes per per-handshake variant (default 300)")
    ap.add_argument("--tls-only", action="store_true", help="measure the per-handshake cost only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hf-bench-proxy-") as tmp_s:
        shakes = _per_handshake(args.handshakes, Path(tmp_s))
    print(f"per TLS 1.3 handshake, median of {args.handshakes}, a new connection each:")
    for kind in ("", " retry"):
        print(f"  {'with' if kind else 'without'} a HelloRetryRequest: direct {shakes['direct' + kind]:.3f} ms, "
              f"through a CONNECT tunnel {shakes['tunnel' + kind]:.3f} ms "
              f"(+{shakes['tunnel' + kind] - shakes['direct' + kind]:.3f} ms)")
    if args.tls_only:
        return 0
    probe()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    with tempfile.TemporaryDirectory(prefix="hf-bench-proxy-") as tmp_s:
        tmp = Path(tmp_s)
        starts: dict[str, list[float]] = {"none": [], "allowlist": []}
        cpus: dict[str, list[float]] = {"none": [], "allowlist": []}
        for i in range(args.runs + 1):
            for network in starts:
                seconds, cpu, _ = _sandboxed(tmp, i + 1, "true", network)
                if i:  # the first round warms up
                    starts[network].append(seconds)
                    cpus[network].append(cpu)
        host = subprocess.run([sys.executable, "-c", CLIENT, str(args.requests), str(port), "direct"],
                              capture_output=True, text=True, check=True)
        per: dict[str, list[float]] = dict(json.loads(host.stdout))
        per["host direct"] = per.pop("direct")
        _, _, out = _sandboxed(tmp, 1, f"{sys.executable} client.py {args.requests} {port} direct proxy connect",
                            "allowlist", (f"127.0.0.1:{port}",))
        inside = json.loads(out.strip().splitlines()[-1])
        per.update({"relay direct": inside["direct"], "proxy http": inside["proxy"],
                    "proxy CONNECT": inside["connect"]})
        tunnel = _per_tunnel(args.tunnels, tmp)
    server.shutdown()
    med = {k: statistics.median(v) for k, v in starts.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    print(f"start-up, median of {args.runs} attempts (cmd: true in bubblewrap):")
    for k in med:
        print(f"  network {k:<10} wall {med[k]:.3f} s, CPU {cpu[k]:.3f} s")
    print(f"  the allowlist adds {1000 * (med['allowlist'] - med['none']):+.0f} ms wall "
          f"(ratio {med['allowlist'] / med['none']:.2f}), {1000 * (cpu['allowlist'] - cpu['none']):+.0f} ms CPU "
          f"(ratio {cpu['allowlist'] / cpu['none']:.2f}) per attempt")
    base = statistics.median(per["host direct"])
    print(f"per request, median of {args.requests} GETs on a new connection each:")
    for k, v in per.items():
        m = statistics.median(v)
        print(f"  {k:<14} {m:.3f} ms  ({m / base:.2f}x host direct)")
    print(f"per tunnel, median of {args.tunnels} ClientHello round trips on the host, a new connection each:")
    print(f"  direct {tunnel['direct']:.3f} ms, through a CONNECT tunnel {tunnel['tunnel']:.3f} ms "
          f"(+{tunnel['tunnel'] - tunnel['direct']:.3f} ms); judging the ClientHello {tunnel['judge']:.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
