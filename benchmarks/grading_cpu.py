"""What one grading costs in CPU, per attempt, side by side with a baseline checkout of the package.

Run on demand (not a test)::

    git -C /work/main worktree add --detach /tmp/hf-base <commit before the change>
    python benchmarks/grading_cpu.py --baseline /tmp/hf-base --rounds 8

It builds (once, under ``--dir``, default a temporary folder) the demo's sample repository
(``examples/sample-project/build_history.py``) and mines it as ``homefield demo`` does (``--sandbox none``:
the sample's flaky test counts its runs in ``.git``), then, ``--rounds`` times, alternating this checkout and
``--baseline`` (first on ``PYTHONPATH`` of a fresh interpreter each), grades attempts of the newest task in
process (:func:`~pytest_homefield.run.attempt.run_attempt`, the bubblewrap test sandbox when it works here,
as a ``homefield run`` worker does) and measures each attempt's CPU (user + sys of the process and of the
children it waited for, ``os.times``), after one warm-up attempt of the same kind on the second newest task in
that interpreter (its imports and the walk of the system folders for copies of the project: once per process,
not per attempt). The first timed attempt is that process's first grading of the task (what each session and
each xdist worker pays; what the repository remembers, ``.homefield/parent-checks.jsonl``, made by the rounds
before), ``--per-round`` more its later ones. Kinds (``--kinds``):

* ``oracle``: the reference fix (one test run, no canary: mining checked them);
* ``noop``: no change (``empty_patch``: no test run);
* ``fix``: the reference fix and a comment, so not the reference byte for byte: graded with canaries (the
  runs of the twins apart from their originals), ``solved``;
* ``wrong``: a comment only (``tests_failed``), graded with canaries too.

Measured (speedp31, TMPDIR=/dev/shm, load 15-19 on 2 cores, 8 rounds, baseline 301524c): ``fix`` 1.820 s -> 1.355 s
(this/baseline median 0.745: the parent's run of the confirmation files is read from ``parent-checks.jsonl``, one
test process less), ``wrong`` 0.930 s -> 0.940 s (1.005: no confirmation run). Where one grading's CPU goes (the
same machine): each test process 0.33-0.36 s (Python 0.035, ``import pytest`` about 0.2, pytest's collection and
run about 0.1, the reporter about 0.01), its reaper 0.02 s, bubblewrap and git under 0.01 s each; ``oracle`` one
test process, ``wrong`` two (the runs apart), ``fix`` three (and the confirmation's parent run, once per process
before, once per repository now); a session's own start and report 0.6 s and, once per process that grades in a
sandbox, the walk of the system folders for copies of the project 0.55-0.58 s.

``--session`` times whole ``homefield run --agent KIND --attempts 1 --max-tasks 1 -n 0`` sessions instead
(start-up, the walk, the report: what every e2e test pays per session). Prints the median CPU seconds of
each kind and side and the median of the per-round ratios this / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
KINDS = ("oracle", "noop", "fix", "wrong")

CHILD = r"""
import json, os, sys, tempfile
from pathlib import Path
from pytest_homefield.agents.base import AgentContext, AgentResult, Capable
from pytest_homefield.agents.reference import NoopAgent, OracleAgent
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.records import load_tasks
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.snapshot import apply_patch

class Edit(Capable):
    capabilities = Capabilities(modelless=True)
    def __init__(self, gold):
        self.name = self.spec = "fix" if gold else "wrong"
        self.gold = gold
    def version(self):
        return None
    def run(self, ctx: AgentContext) -> AgentResult:
        if self.gold:
            apply_patch(ctx.workspace, ctx.gold_patch)
        src = sorted(p for p in (ctx.workspace / "textkit").glob("*.py"))[0]
        src.write_text(src.read_text() + "\n# touched\n")
        return AgentResult(exit_code=0, cost_usd=0.0)

repo, kind, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
tasks = load_tasks(repo / ".homefield" / "tasks.jsonl")
agent = {"oracle": OracleAgent(name="oracle", spec="oracle"), "noop": NoopAgent(name="noop", spec="noop"),
         "fix": Edit(True), "wrong": Edit(False)}[kind]
cache = SnapshotCache(repo=repo)
out = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(n + 1):  # the warm-up grades another task: this process's first grading of tasks[0] is timed
        before = os.times()
        spec = AttemptSpec(task=tasks[0 if i else 1], agent=agent, attempt=i + 1, run_id="bench",
                           run_dir=Path(tmp) / f"r{i}", timeout_s=120, run_timeout_s=120)
        r = run_attempt(spec, cache)
        after = os.times()
        cpu = sum(after[k] - before[k] for k in range(4))
        if i:
            out.append([cpu, r.outcome])
cache.close()
print(json.dumps(out))
"""


def _env(code: Path) -> dict[str, str]:
    # byte-compiled modules, as every install has them (the warm-up writes them): PYTHONDONTWRITEBYTECODE
    # (set on the team's machines) would compile the package from source in every process
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "HOMEFIELD_SANDBOX")} \
        | {"PYTHONPATH": str(code)}


def build(repo: Path) -> None:
    """The sample repository in ``repo``, mined as ``homefield demo`` mines it."""
    sys.path.insert(0, str(HERE))
    from pytest_homefield.commands.demo import load_build_history

    sample = load_build_history(HERE / "examples" / "sample-project" / "build_history.py")
    sample.build(repo)
    env = _env(HERE) | {sample.FLAKY_ENV: str(repo / ".git" / "textkit-flaky-counter"),
                        "HOMEFIELD_TEST_ENV": sample.FLAKY_ENV}  # its tests see only the variables named
    subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "mine", "-n", "0", "--sandbox", "none"], cwd=repo,
                   env=env, check=True, stdout=subprocess.DEVNULL)


def attempts(code: Path, repo: Path, kind: str, n: int) -> list[tuple[float, str]]:
    """CPU seconds and outcome of ``n`` attempts of ``kind`` with ``code``, after one warm-up."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(repo), kind, str(n)], env=_env(code), cwd=repo,
                         check=True, capture_output=True, text=True).stdout
    return [(float(c), o) for c, o in json.loads(out.splitlines()[-1])]


def session(code: Path, repo: Path, kind: str) -> tuple[float, str]:
    """CPU seconds (the session and every process it waited for) of one ``homefield run`` of ``kind``."""
    before = os.times()
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", kind, "--attempts", "1",
                           "--max-tasks", "1", "-n", "0"], env=_env(code), cwd=repo, capture_output=True, text=True)
    after = os.times()
    return after.children_user - before.children_user + after.children_system - before.children_system, \
        f"exit {proc.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="a checkout of the package to compare with")
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds (default 8)")
    parser.add_argument("--per-round", type=int, default=1, help="attempts timed per interpreter (default 1)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--session", action="store_true", help="time whole `homefield run` sessions (oracle, noop)")
    parser.add_argument("--dir", type=Path, help="where to build the repository (default: a temp folder)")
    args = parser.parse_args(argv)
    tmp = None
    if args.dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="hf-grading-bench-"))
        args.dir = tmp
    repo = (args.dir / "repo").resolve()
    try:
        if not (repo / ".homefield" / "tasks.jsonl").exists():
            build(repo)
        codes = {"this": HERE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        kinds = [k for k in args.kinds.split(",") if k]
        cpus: dict[tuple[str, str], list[float]] = {}
        ratios: dict[str, list[float]] = {k: [] for k in kinds}
        seen: dict[tuple[str, str], set[str]] = {}
        for code in codes.values():  # warm-up: .pyc files, the task's parent check in .homefield
            for kind in kinds:
                session(code, repo, kind) if args.session else attempts(code, repo, kind, 1)
        for _ in range(args.rounds):
            for kind in kinds:
                got: dict[str, float] = {}
                for name, code in codes.items():
                    runs = [session(code, repo, kind)] if args.session else attempts(code, repo, kind, args.per_round)
                    cpus.setdefault((name, kind), []).extend(c for c, _ in runs)
                    seen.setdefault((name, kind), set()).update(o for _, o in runs)
                    got[name] = statistics.median(c for c, _ in runs)
                if "baseline" in got and got["baseline"] > 0:
                    ratios[kind].append(got["this"] / got["baseline"])
        what = "whole `homefield run` sessions" if args.session else "attempts in process (after a warm-up)"
        print(f"CPU of one grading, {what}, {args.rounds} rounds, python {sys.version.split()[0]}")
        for kind in kinds:
            line = "  ".join(f"{name} {statistics.median(cpus[name, kind]):6.3f} s "
                             f"({'/'.join(sorted(seen[name, kind]))})" for name in codes)
            ratio = f"  this/baseline median {statistics.median(ratios[kind]):.3f}" if ratios[kind] else ""
            print(f"  {kind:<7} {line}{ratio}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
