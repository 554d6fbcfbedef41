"""What the bubblewrap and Landlock sandboxes cost per attempt and per test run, side by side with no
sandbox, in one session.

Run on demand (not a test)::

    python benchmarks/sandbox.py --runs 7

On the tiny task of ``tests/helpers/attack_repo.py`` it runs, alternately, whole attempts
(``run_attempt``: snapshot copy, a ``cmd:`` agent writing a wrong fix, grading with the hidden
tests) with ``--sandbox bwrap``, with ``--sandbox bwrap --sandbox-network loopback:9999`` (the relay
of sandbox/relay.py), with ``--sandbox landlock`` and with ``--sandbox none``, after one warm-up of
each, and prints the median seconds of each and the median of the per-run ratios to ``none``, for
the whole attempt, the agent's wall time and the grading test run. Then the CPU seconds (this
process and its children, ``getrusage``) of one test run (``run_tests`` of the task's test command
on one test file) under each backend, alternately, and of the bare start of a command (``sh -c
true``) with ``bwrap``, behind the Landlock launcher and with neither (milliseconds), and what the process
cap adds to a launch (``--cap-only``: that line alone). Target: the
sandbox adds ≤ 10% to an attempt on this task (a real agent's attempt takes minutes, so much less
there).
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

from caps import _measure  # noqa: E402  (the same CPU clock as the agent caps' benchmark)
from helpers.attack_repo import WRONG_CALC, build, script_agent, task_for  # noqa: E402

from pytest_homefield.records import Task  # noqa: E402
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt  # noqa: E402
from pytest_homefield.sandbox import proccap  # noqa: E402
from pytest_homefield.sandbox.backends import BwrapBackend, LandlockBackend, NoSandbox, SandboxBackend  # noqa: E402
from pytest_homefield.sandbox.bwrap import Policy, bwrap_argv, probe  # noqa: E402
from pytest_homefield.sandbox.landlock import LandlockPolicy, landlock_argv  # noqa: E402
from pytest_homefield.sandbox.landlock import probe as landlock_probe  # noqa: E402
from pytest_homefield.sandbox.modes import SandboxChoice  # noqa: E402
from pytest_homefield.sandbox.procs import run_process  # noqa: E402
from pytest_homefield.sandbox.testrun import run_tests  # noqa: E402

#: the variants timed: label -> (--sandbox, --sandbox-network); ``loopback`` adds the relay of
#: sandbox/relay.py (port 9999: nothing listens, the agent makes no connection, so this is its start-up; not a port
#: below 1024, which the relay inside cannot bind when homefield runs as root: every capability is dropped)
VARIANTS = {"bwrap": ("bwrap", "none"), "loopback": ("bwrap", "loopback:9999"), "landlock": ("landlock", "none"),
            "none": ("none", "none")}


def _attempt(task, cache, agent, run_dir: Path, n: int, label: str) -> tuple[float, float, float]:  # type: ignore[no-untyped-def]
    mode, network = VARIANTS[label]
    spec = AttemptSpec(task=task, agent=agent, attempt=n, run_id="bench", run_dir=run_dir, timeout_s=120,
                       run_timeout_s=300, sandbox=SandboxChoice(mode, network))
    t0 = time.perf_counter()
    r = run_attempt(spec, cache)
    total = time.perf_counter() - t0
    assert r.outcome == "tests_failed" and r.sandbox == mode, r
    return total, r.wall_s, r.test_s


def _start(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - t0


def _test_runs_cpu(task: Task, copy: Path, out: Path, backends: dict[str, SandboxBackend],
                   runs: int) -> dict[str, list[float]]:
    """CPU seconds of ``runs`` test runs of ``tests/test_add.py`` in ``copy`` per backend, alternately,
    after one warm-up of each."""
    cpu: dict[str, list[float]] = {label: [] for label in backends}
    for k in range(runs + 1):
        for label in list(backends) if k % 2 else list(reversed(backends)):
            def one(label: str = label) -> None:
                run = run_tests(copy, task.test_cmd, ["tests/test_add.py"], out_dir=out / label,
                                sandbox=backends[label], timeout_s=120)
                assert run.outcomes == {"tests/test_add.py::test_add": "passed"} and run.sandbox == label, run
            if k:
                cpu[label].append(_measure(one)[1])
            else:
                one()
    return cpu


def _starts_cpu(ws: Path, exe: str, runs: int = 20) -> dict[str, float]:
    """Median CPU milliseconds of starting ``sh -c true`` bare, in bubblewrap and behind the launcher."""
    true = ["sh", "-c", "true"]
    argvs = {"none": true, "bwrap": bwrap_argv(true, Policy(cwd=ws, rw=[ws]), bwrap=exe),
             "landlock": landlock_argv(true, LandlockPolicy(rw=[ws]))}
    return {label: statistics.median(_measure(lambda a=argv: run_process(a, cwd=ws, env={"PATH": "/usr/bin:/bin"},
                                                                       timeout_s=60))[1] for _ in range(runs)) * 1000
            for label, argv in argvs.items()}


def _cap_cost(ws: Path, exe: str, runs: int = 40) -> dict[str, float]:
    """Median wall milliseconds of starting ``true`` through the reaper (:func:`run_process`), alternately
    with and without each way of the process cap (issue 30): ``prlimit`` in front of bubblewrap's command
    (its ``exec`` inside), the pids cgroup the reaper makes, joins and removes (where one can be made), and the
    memory cgroup beside it (``cgroup+memory``: its limit set, its OOM kills read and sent back)."""
    true = ["true"]
    n = proccap.max_procs()
    # prlimit as a user but root gets it (root is exempt, and gets none): timed here whoever runs this
    limited = [proccap.prlimit_path() or "prlimit", f"--nproc={n}:{n}", "--", *true]
    policy = Policy(cwd=ws, rw=[ws])
    argvs = {"bwrap+prlimit": proccap.split_mark(bwrap_argv(limited, policy, bwrap=exe, args_fd=True))[1],
             "bwrap": proccap.split_mark(bwrap_argv(true, policy, bwrap=exe, args_fd=True))[1],
             "cgroup": proccap.marked(true), "bare": true}
    if proccap.memory_root() is not None:
        argvs["cgroup+memory"] = proccap.marked(true)
    if argvs["cgroup"] == true:
        del argvs["cgroup"]
    times: dict[str, list[float]] = {label: [] for label in argvs}
    for k in range(runs + 1):
        for label in list(argvs) if k % 2 else list(reversed(argvs)):
            t0 = time.perf_counter()
            run_process(argvs[label], cwd=ws, env={"PATH": "/usr/bin:/bin"}, timeout_s=60,
                        box_memory=256 << 20 if label == "cgroup+memory" else None)
            if k:
                times[label].append(time.perf_counter() - t0)
    return {label: statistics.median(v) * 1000 for label, v in times.items()}


def print_cap_cost(ws: Path, exe: str) -> None:
    """The process cap's cost per launch, one line (``--cap-only`` prints it alone)."""
    ms = _cap_cost(ws, exe)
    cgroup = f"pids cgroup +{ms['cgroup'] - ms['bare']:.2f} ms" if "cgroup" in ms else "no pids cgroup here"
    memory = (f", memory cgroup beside it +{ms['cgroup+memory'] - ms.get('cgroup', ms['bare']):.2f} ms "
              f"({ms.get('cgroup', ms['bare']):.1f} -> {ms['cgroup+memory']:.1f})") if "cgroup+memory" in ms \
        else ", no memory cgroup here"
    print(f"process cap per launch (median wall, run_process of true): prlimit in bubblewrap "
          f"+{ms['bwrap+prlimit'] - ms['bwrap']:.2f} ms ({ms['bwrap']:.1f} -> {ms['bwrap+prlimit']:.1f}), {cgroup} "
          f"({ms['bare']:.1f} -> {ms.get('cgroup', ms['bare']):.1f}){memory}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cap-only", action="store_true", help="only the process cap's cost per launch")
    args = ap.parse_args()
    exe = probe()
    if args.cap_only:
        with tempfile.TemporaryDirectory(prefix="hf-bench-") as tmp:
            print_cap_cost(Path(tmp), exe)
        return 0
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
            for label in ("bwrap", "loopback", "landlock", "none") if k % 2 else ("none", "landlock", "loopback",
                                                                                   "bwrap"):
                n += 1
                t = _attempt(task, cache, agent, root / "run", n, label)
                if k:  # the first round warms up
                    times[label].append(t)
        backends: dict[str, SandboxBackend] = {"none": NoSandbox(), "bwrap": BwrapBackend(exe),
                                               "landlock": LandlockBackend(landlock_probe())}
        test_cpu = _test_runs_cpu(task, cache.pristine(task), root / "out", backends, args.runs)
        cache.close()
        ws = root / "ws"
        ws.mkdir()
        start_cpu = _starts_cpu(ws, exe)
        print_cap_cost(ws, exe)
        boxed = bwrap_argv(["sh", "-c", "true"], Policy(cwd=ws, rw=[ws]), bwrap=exe)
        starts = {"bwrap": [_start(boxed) for _ in range(20)],
                  "none": [_start(["sh", "-c", "true"]) for _ in range(20)]}
    print(f"sandbox overhead per attempt, {args.runs} runs each, alternating (median seconds):")
    for i, what in enumerate(("whole attempt", "agent wall", "grading tests")):
        b = statistics.median(t[i] for t in times["bwrap"])
        nn = statistics.median(t[i] for t in times["none"])
        lo = statistics.median(t[i] for t in times["loopback"])
        ll = statistics.median(t[i] for t in times["landlock"])
        ratio = statistics.median(tb[i] / tn[i] for tb, tn in zip(times["bwrap"], times["none"], strict=True) if tn[i])
        lratio = statistics.median(tb[i] / tn[i] for tb, tn in zip(times["loopback"], times["none"], strict=True)
                                   if tn[i])
        llratio = statistics.median(tb[i] / tn[i] for tb, tn in zip(times["landlock"], times["none"], strict=True)
                                    if tn[i])
        print(f"  {what:<14} bwrap {b:7.3f}  loopback {lo:7.3f}  landlock {ll:7.3f}  none {nn:7.3f}  ratio "
              f"bwrap/none {ratio:5.2f}  loopback/none {lratio:5.2f}  landlock/none {llratio:5.2f}")
    b, nn = statistics.median(starts["bwrap"]) * 1000, statistics.median(starts["none"]) * 1000
    print(f"  start of sh -c true: bwrap {b:.1f} ms, none {nn:.1f} ms (+{b - nn:.1f} ms per sandboxed process)")
    print(f"CPU seconds per test run (tests/test_add.py, {args.runs} runs each, alternating, median; this process "
          "and its children):")
    cpu = {label: statistics.median(v) for label, v in test_cpu.items()}
    print("  " + "  ".join(f"{label} {c:.3f}" for label, c in cpu.items())
          + "  " + "  ".join(f"{label}-none +{cpu[label] - cpu['none']:.3f}" for label in ("bwrap", "landlock")))
    print("  CPU of starting sh -c true (median ms): " + ", ".join(f"{k} {v:.1f}" for k, v in start_cpu.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
