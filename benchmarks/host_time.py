"""What the host spends on an attempt whose agent leaves very many files (host29's "Left", host30): the
attempt's elapsed seconds beside the agent's ``wall_s``, the test runs' ``test_s``, the waits' ``wait_s``
and the host's own ``host_s`` (docs/contracts.md §8).

Run on demand (not a test)::

    PYTHONPATH=. python benchmarks/host_time.py --files 100000 --runs 3

Each run builds the tiny task repository of ``tests/helpers/attack_repo.py`` afresh, runs one attempt of an
in-process agent that writes ``--files`` empty files into its workspace (``--sandbox none``) and times
:func:`~pytest_homefield.run.attempt.run_attempt` from outside (wall seconds, and CPU seconds of this process
and its children: less sensitive to a loaded machine). Prints one JSON line per run and the median of each
figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.attack_repo import build, task_for  # noqa: E402

from pytest_homefield.agents.base import AgentContext, AgentResult  # noqa: E402
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt  # noqa: E402
from pytest_homefield.sandbox.modes import SandboxChoice  # noqa: E402


class _Flood:
    """An in-process agent writing ``n`` empty files into its workspace, in folders of 1,000."""

    simulated = False
    hinted = False
    name, spec = "flood", "test:flood"

    def __init__(self, n: int) -> None:
        self.n = n

    def version(self) -> str | None:
        return "flood 1"

    def run(self, ctx: AgentContext) -> AgentResult:
        for i in range(self.n):
            folder = ctx.workspace / "flood" / f"d{i // 1000:03d}"
            if i % 1000 == 0:
                folder.mkdir(parents=True, exist_ok=True)
            os.close(os.open(folder / f"f{i:06d}", os.O_WRONLY | os.O_CREAT, 0o644))
        return AgentResult()


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (the test runs, git)."""
    s, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + k.ru_utime + k.ru_stime


def one(n: int) -> dict[str, float | str]:
    """One attempt on a fresh repository; its figures (s) and outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        fx = build(Path(tmp) / "repo")
        task = task_for(fx)
        cache = SnapshotCache(repo=fx.root)
        try:
            spec = AttemptSpec(task=task, agent=_Flood(n), attempt=1, run_id="r1",  # type: ignore[arg-type]
                               run_dir=Path(tmp) / "run", timeout_s=600, run_timeout_s=600,
                               sandbox=SandboxChoice("none", "shared"))
            t0, c0 = time.monotonic(), _cpu()
            r = run_attempt(spec, cache)
            elapsed, cpu = time.monotonic() - t0, _cpu() - c0
        finally:
            cache.close()
    return {"outcome": r.outcome, "elapsed_s": round(elapsed, 2), "cpu_s": round(cpu, 2), "wall_s": r.wall_s,
            "test_s": r.test_s, "wait_s": r.wait_s, "host_s": getattr(r, "host_s", float("nan"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ns = ap.parse_args()
    rows = []
    for _ in range(ns.runs):
        rows.append(one(ns.files))
        print(json.dumps(rows[-1]), flush=True)
    keys = ("elapsed_s", "cpu_s", "wall_s", "test_s", "wait_s", "host_s")
    print(json.dumps({"median": {k: round(statistics.median(float(r[k]) for r in rows), 2) for k in keys},
                      "files": ns.files, "runs": ns.runs}))


if __name__ == "__main__":
    main()
