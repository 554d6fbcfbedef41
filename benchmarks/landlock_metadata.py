"""What the Landlock launcher's supervisor costs (``sandbox/_landlock_supervisor.py``, contracts §7): the
CPU of one ``chmod``/``utime`` round trip, and of ``python -m venv`` with pip plus a ``pip install`` of a
tiny local wheel with a console script, under an agent's policy; this tree's launcher against another's
(``--baseline``: main's ``pytest_homefield/sandbox/_landlock.py``, where those calls run unsupervised),
alternately, in one session.

Run on demand (not a test)::

    python benchmarks/landlock_metadata.py --runs 5 --baseline /path/to/main/pytest_homefield/sandbox/_landlock.py

CPU seconds are this process's children's (``getrusage``: the launcher, its supervisor, the command and
what it starts). Per call: (CPU of ``CALLS`` chmods and ``CALLS`` utimes − CPU of none) / (2 × ``CALLS``),
median over the runs; ``python -c pass``: the launcher's start with a command that makes none.

Measured (2026-12-03, 2 shared cores, Linux 6.18, --runs 5, two sessions; baseline: main f2fd225): a
call 56-98 µs of CPU supervised against 2-5 µs unsupervised (load-dependent); ``python -c pass`` 67.0
against 67.0 ms (a bare ``/bin/true``, 40 launches each: 30.5 against 25.0 ms: the fork and the
supervisor's start); venv + pip install 6.59-7.03 s against 6.49-7.27 s, the same within the noise:
``python -m venv`` makes 11 chmods (``strace -c``). A tool that sets the times of every file it
writes (``tar x``, ``cp -a``) pays some 0.1 ms a file.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from caps import _measure  # noqa: E402  (the same CPU clock as the agent caps' benchmark)
from helpers.wheels import write_wheel  # noqa: E402

from pytest_homefield.sandbox import bwrap  # noqa: E402
from pytest_homefield.sandbox.landlock import LAUNCHER, LandlockPolicy, probe  # noqa: E402

#: chmods and utimes per measured command
CALLS = 5000
LOOP = "import os\nfor i in range({n}):\n    os.chmod('f', 0o644 | (i & 0o100))\n    os.utime('f')\n"


def _cpu(launcher: Path, policy: Path, cmd: list[str], ws: Path, env: dict[str, str]) -> float:
    argv = [sys.executable, "-I", "-S", str(launcher), f"@{policy}", "--", *cmd]
    return _measure(lambda: subprocess.run(argv, cwd=ws, env=env, check=True, stdout=subprocess.DEVNULL))[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="another tree's _landlock.py (e.g. main's)")
    args = ap.parse_args()
    probe()
    launchers = {"this": LAUNCHER, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory(prefix="hf-bench-") as tmp:
        root = Path(tmp)
        ws, tmpdir, home = root / "ws", root / "tmp", root / "home"
        for d in (ws, tmpdir, home):
            d.mkdir()
        (ws / "f").write_text("x")
        wheel = write_wheel(ws, "tiny-hello", "1.0", {"tiny_hello.py": b"def main():\n    print('hello')\n"},
                            extra_dist_info={"entry_points.txt": b"[console_scripts]\ntiny-hello = tiny_hello:main\n"})
        policy = root / "policy.json"
        policy.write_text(LandlockPolicy(ro=bwrap.python_paths([sys.executable]), rw=[ws, tmpdir, home], connect=[],
                                         unix=False).as_json())
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmpdir)}
        install = ["sh", "-c", f"rm -rf venv && {sys.executable} -m venv venv && venv/bin/python -m pip install -q "
                               f"--no-index --no-cache-dir {wheel.name} && venv/bin/tiny-hello"]
        per_call: dict[str, list[float]] = {k: [] for k in launchers}
        tools: dict[str, list[float]] = {k: [] for k in launchers}
        starts: dict[str, list[float]] = {k: [] for k in launchers}
        for k in range(args.runs + 1):
            for label in list(launchers) if k % 2 else list(reversed(launchers)):
                launcher = launchers[label]
                none = _cpu(launcher, policy, [sys.executable, "-c", LOOP.format(n=0)], ws, env)
                many = _cpu(launcher, policy, [sys.executable, "-c", LOOP.format(n=CALLS)], ws, env)
                venv = _cpu(launcher, policy, install, ws, env)
                if k:  # the first round warms up
                    per_call[label].append((many - none) / (2 * CALLS))
                    tools[label].append(venv)
                    starts[label].append(none)
        for label in launchers:
            print(f"{label:9} chmod/utime: {statistics.median(per_call[label]) * 1e6:6.1f} µs CPU per call   "
                  f"python -c pass: {statistics.median(starts[label]) * 1e3:5.1f} ms   "
                  f"venv + pip install: {statistics.median(tools[label]):5.2f} s   ({launchers[label]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
