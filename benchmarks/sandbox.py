"""What the bubblewrap sandbox costs per attempt, side by side with no sandbox, in one session.

Run on demand (not a test)::

    python benchmarks/sandbox.py --runs 7

On the tiny task of ``tests/helpers/attack_repo.py`` it runs, alternately, whole attempts
(``run_attempt``: snapshot copy, a ``cmd:`` agent writing a wrong fix, grading with the hidden
tests) with ``--sandbox bwrap``, with ``--sandbox bwrap --sandbox-network loopback:9`` (the relay
of sandbox/relay.py) and with ``--sandbox none``, after one warm-up of each, and prints the median
seconds of each and the median of the per-run ratios to ``none``, for the whole attempt,
the agent's wall time and the grading test run. It also times the bare start of a command
(``sh -c true``) with and without ``bwrap`` (milliseconds). Target: the sandbox adds ≤ 10% to an
attempt on this task (a real agent's attempt takes minutes, so much less there).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.attack_repo import WRONG_CALC, build, script_agent, task_for  # noqa: E402

from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt  # noqa: E402
from pytest_homefield.sandbox.bwrap import Policy, bwrap_argv, probe  # noqa: E402
from pytest_homefield.sandbox.modes import SandboxChoice  # noqa: E402

#: the variants timed: label -> (--sandbox, --sandbox-network); ``loopback`` adds the relay of
#: sandbox/relay.py (port 9: nothing listens, the agent makes no connection, so this is its start-up)
VARIANTS = {"bwrap": ("bwrap", "none"), "loopback": ("bwrap", "loopback:9"), "none": ("none", "none")}


def _attempt(task, cache, agent, run_dir: Path, n: int, label: str) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    mode, network = VARIANTS[label]
    spec = AttemptSpec(task=task, agent=agent, attempt=n, run_id="bench", run_dir=run_dir, timeout_s=120,
                       run_timeout_s=300, sandbox=SandboxChoice(mode, network))
    t0 = time.perf_counter()
    r = run_attempt(spec, cache)
    total = time.perf_counter() - t0
    assert r.outcome == "tests_failed" and r.sandbox == (mode if mode == "bwrap" else "none"), r
    return total, r.wall_s, r.test_s


def _start(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    exe = probe()
    with tempfile.TemporaryDirectory(prefix="hf-bench-") as tmp:
        root = Path(tmp)
        fx = build(root / "repo")
        task = task_for(fx)
        agent = script_agent(root / "agent", {"src/calc/__init__.py": WRONG_CALC})
        cache = SnapshotCache(repo=fx.root)
        cache.pristine(task)
        times: dict[str, list[tuple[float, float, float]]] = {label: [] for label in VARIANTS}
        n = 0
        for k in range(args.runs + 1):
            for label in ("bwrap", "loopback", "none") if k % 2 else ("none", "loopback", "bwrap"):
                n += 1
                t = _attempt(task, cache, agent, root / "run", n, label)
                if k:  # the first round warms up
                    times[label].append(t)
        cache.close()
        ws = root / "ws"
        ws.mkdir()
        boxed = bwrap_argv(["sh", "-c", "true"], Policy(cwd=ws, rw=[ws]), bwrap=exe)
        starts = {"bwrap": [_start(boxed) for _ in range(20)],
                  "none": [_start(["sh", "-c", "true"]) for _ in range(20)]}
    print(f"sandbox overhead per attempt, {args.runs} runs each, alternating (median seconds):")
    for i, what in enumerate(("whole attempt", "agent wall", "grading tests")):
        b = statistics.median(t[i] for t in times["bwrap"])
        nn = statistics.median(t[i] for t in times["none"])
        lo = statistics.median(t[i] for t in times["loopback"])
        ratio = statistics.median(tb[i] / tn[i] for tb, tn in zip(times["bwrap"], times["none"], strict=True) if tn[i])
        lratio = statistics.median(tb[i] / tn[i] for tb, tn in zip(times["loopback"], times["none"], strict=True)
                                   if tn[i])
        print(f"  {what:<14} bwrap {b:7.3f}  loopback {lo:7.3f}  none {nn:7.3f}  ratio bwrap/none {ratio:5.2f}"
              f"  loopback/none {lratio:5.2f}")
    b, nn = statistics.median(starts["bwrap"]) * 1000, statistics.median(starts["none"]) * 1000
    print(f"  start of sh -c true: bwrap {b:.1f} ms, none {nn:.1f} ms (+{b - nn:.1f} ms per sandboxed process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
