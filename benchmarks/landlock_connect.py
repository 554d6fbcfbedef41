"""What the Landlock supervisor's ``connect`` check costs (``sandbox/_landlock_supervisor.py``, contracts §7):
the wall time of one TCP ``connect`` to an allowed ``127.0.0.1`` port under an agent's policy, of one
``bind(127.0.0.1:0)`` plus ``listen`` (a test's local server; checked by the supervisor since r26), of one
``connect`` to a server of the confined process itself (allowed since ll32; and the supervisor's CPU per
such ``connect``, ll34), and of one launch of
``/bin/true``; this tree's launcher against another's (``--baseline``: main's
``pytest_homefield/sandbox/_landlock.py``, where Landlock alone checks the port), alternately, in one session.

Run on demand (not a test)::

    python benchmarks/landlock_connect.py --runs 5 --baseline /path/to/main/pytest_homefield/sandbox/_landlock.py

Per connect: the median of ``CONNECTS`` blocking connects (socket made outside the timing, closed after)
in one confined process, then the median over the runs; per bind+listen the same; per launch: the median
of ``--launches`` launches per run, then over the runs.

Measured (2026-12-05, 2 shared cores, Linux 6.18, Landlock ABI 7, --runs 5 --launches 20; baseline: main
2480afc): a connect 237.8 µs against 10.6 µs; a launch 137.2 against 136.4 ms (the machine loaded by
other sessions), the same within the noise.

Measured (sbx31, --runs 5 --launches 20; baseline: main 301524c, where Landlock alone checks bind's port):
a bind plus listen 109.2 µs against 2.5 µs (two notifications); a connect 241.4 against 255.4 µs; a
launch 246.6 against 247.9 ms (load average 12-17).

Measured (ll32, --runs 5 --launches 20; baseline: this branch's base 9f59d80, where a blocking connect
starts a thread of the supervisor and a test's own server is refused): a connect 153.2 against 221.7 µs
(no thread now); a bind plus listen 141.8 against 95.8 µs (port 0 bound by number: one more socket of the
supervisor's); a connect to the process's own server 210.0 µs (refused before: nan); a launch 177.2
against 171.4 ms (load average 12). Again after the SO_SNDTIMEO deadline (0d93739), load average 17-23: a
connect 161.4 against 213.9 µs, a bind plus listen 139.5 against 97.4 µs, to its own server 212.5 µs, a
launch 284.8 against 360.0 ms (the noise of the load).

Measured (ll34, --runs 5 and 7 --launches 10; baseline: this branch's base f43713f, where a connect to a
listener of the launch held a copy of the caller's socket and of the listener until its outcome; now one
copy per listener, the connect followed by cookie): the supervisor's CPU per connect to its own server
(``/proc/PID/schedstat`` between the first connect and the last) 177.6 and 164.6 µs against 166.1 and
186.9 µs, its wall time 207.1 and 195.7 against 200.4 and 220.1 µs, a connect 137.0 and 160.5 against
158.6 and 158.2 µs, a bind plus listen 143.6 and 144.1 against 140.2 and 143.5 µs (load average 9-10):
the same within the noise. With the listener taken where it was found last (no read of the caller's fd
table): 154.4 against 172.9 µs of the supervisor's CPU, 186.1 against 213.4 µs of wall time (load 13).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_homefield.sandbox import bwrap  # noqa: E402
from pytest_homefield.sandbox.landlock import LAUNCHER, LandlockPolicy, probe  # noqa: E402

#: connects per measured command
CONNECTS = 300
LOOP = ("import socket, statistics, sys, time\nts = []\nfor _ in range({n}):\n    s = socket.socket()\n"
        "    t = time.perf_counter()\n    s.connect(('127.0.0.1', {port}))\n    ts.append(time.perf_counter() - t)\n"
        "    s.close()\nprint(statistics.median(ts))\n")
#: connects to a server of the confined process itself (ll32: allowed as a listener of the launch;
#: refused, ``nan``, by a launcher before it)
OWN = ("import socket, statistics, sys, threading, time\nsrv = socket.create_server(('127.0.0.1', 0), backlog=1024)\n"
       "def serve():\n    while True:\n        c, _ = srv.accept()\n        c.close()\n"
       "threading.Thread(target=serve, daemon=True).start()\nprint('ready', flush=True)\nsys.stdin.readline()\n"
       "ts = []\nfor _ in range({n}):\n    s = socket.socket()\n"
       "    t = time.perf_counter()\n    try:\n        s.connect(('127.0.0.1', srv.getsockname()[1]))\n"
       "    except OSError:\n        print('nan', flush=True)\n        sys.exit()\n"
       "    ts.append(time.perf_counter() - t)\n"
       "    s.close()\nprint(statistics.median(ts), flush=True)\nsys.stdin.readline()\n")
LISTEN = ("import socket, statistics, sys, time\nts = []\nfor _ in range({n}):\n    s = socket.socket()\n"
          "    t = time.perf_counter()\n    s.bind(('127.0.0.1', 0))\n    s.listen(1)\n"
          "    ts.append(time.perf_counter() - t)\n    s.close()\nprint(statistics.median(ts))\n")


def _cpu(pid: int) -> float:
    """Seconds of CPU the main thread of process ``pid`` has used (``/proc/PID/schedstat``, nanoseconds: the
    supervisor has no other thread; ``stat``'s clock ticks, 10 ms, are too coarse for 300 connects)."""
    with open(f"/proc/{pid}/schedstat") as fh:
        return int(fh.read().split()[0]) / 1e9


def _own(prefix: list[str]) -> tuple[float, float]:
    """The median wall time of a connect to the confined process's own server, and the supervisor's CPU per
    such connect (the launcher's process, read between the first connect and the last)."""
    proc = subprocess.Popen([*prefix, sys.executable, "-c", OWN.format(n=CONNECTS)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline() == "ready\n"
        before = _cpu(proc.pid)
        proc.stdin.write("\n")
        proc.stdin.flush()
        wall = float(proc.stdout.readline())
        cpu = (_cpu(proc.pid) - before) / CONNECTS if wall == wall else float("nan")
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return wall, cpu


def _serve(server: socket.socket) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--launches", type=int, default=20)
    ap.add_argument("--baseline", type=Path, help="another tree's _landlock.py (e.g. main's)")
    args = ap.parse_args()
    probe()
    launchers = {"this": LAUNCHER, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    server = socket.create_server(("127.0.0.1", 0), backlog=1024)
    port = server.getsockname()[1]
    threading.Thread(target=_serve, args=(server,), daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="hf-bench-") as tmp:
        policy = Path(tmp) / "policy.json"
        policy.write_text(LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[tmp], connect=[port],
                                         unix=False).as_json())
        connects: dict[str, list[float]] = {k: [] for k in launchers}
        starts: dict[str, list[float]] = {k: [] for k in launchers}
        listens: dict[str, list[float]] = {k: [] for k in launchers}
        owns: dict[str, list[float]] = {k: [] for k in launchers}
        own_cpus: dict[str, list[float]] = {k: [] for k in launchers}
        for k in range(args.runs + 1):
            for label in list(launchers) if k % 2 else list(reversed(launchers)):
                prefix = [sys.executable, "-I", "-S", str(launchers[label]), f"@{policy}", "--"]
                out = subprocess.run([*prefix, sys.executable, "-c", LOOP.format(n=CONNECTS, port=port)],
                                     check=True, capture_output=True, text=True).stdout
                bound = subprocess.run([*prefix, sys.executable, "-c", LISTEN.format(n=CONNECTS)],
                                       check=True, capture_output=True, text=True).stdout
                own, own_cpu = _own(prefix)
                launches = []
                for _ in range(args.launches):
                    t = time.perf_counter()
                    subprocess.run([*prefix, "/bin/true"], check=True)
                    launches.append(time.perf_counter() - t)
                if k:  # the first round warms up
                    connects[label].append(float(out))
                    listens[label].append(float(bound))
                    owns[label].append(own)
                    own_cpus[label].append(own_cpu)
                    starts[label].append(statistics.median(launches))
    server.close()
    for label in launchers:
        print(f"{label:9} connect: {statistics.median(connects[label]) * 1e6:6.1f} µs per call   "
              f"bind+listen: {statistics.median(listens[label]) * 1e6:6.1f} µs   "
              f"connect to its own server: {statistics.median(owns[label]) * 1e6:6.1f} µs "
              f"({statistics.median(own_cpus[label]) * 1e6:6.1f} µs of the supervisor's CPU)   "
              f"/bin/true launch: {statistics.median(starts[label]) * 1e3:5.1f} ms   ({launchers[label]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
