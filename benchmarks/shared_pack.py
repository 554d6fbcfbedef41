"""What packing the session's parent trees costs at ``-n W``: each xdist worker packing them all (before ops41)
against the controller packing them once and each worker taking its pack (``SnapshotCache.offer`` /
``keep(offer=…)``, run/attempt.py; ``TreePack.taken``, sandbox/snapshot.py).

Run on demand (not a test)::

    python benchmarks/shared_pack.py --repo /path/to/a/repository --parents 30 --workers 2 4

The parents are ``--parents`` commits of ``--repo``'s first-parent history (every fifth, newest first), as a
``tasks.jsonl`` of that many tasks would name them. For each ``W`` of ``--workers``, ``W`` fresh interpreters
start at once (as xdist's workers do) and each makes its store of the parent trees: *before*, each resolves and
packs them all from the repository (``SnapshotCache.keep``); *after*, this process (the controller) packs them
once and each worker takes that pack. Prints, the median of ``--runs``: the wall seconds until every worker's
store is ready (the controller's pack included), the CPU seconds of all processes and their children
(``getrusage``) of the stores' making, and the bytes of pack files held (each worker's pack, or the one pack).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from pytest_homefield.run.attempt import SnapshotCache
from pytest_homefield.records import Task

repo, parents, offer = Path(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
tasks = [Task(id=f"t{n}", commit=p, parent=p, committed_at="", authored_at="", mode="commit", subject="",
              message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
              FAIL_TO_PASS=[], PASS_TO_PASS=[]) for n, p in enumerate(parents)]
def cpu():
    s, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + k.ru_utime + k.ru_stime

cache = SnapshotCache(repo=repo)
t0, c0 = time.perf_counter(), cpu()
cache.keep(tasks, offer=offer)
wall, used = time.perf_counter() - t0, cpu() - c0
(store,) = cache._stores
print(json.dumps({"size": store.pack.size, "took": offer is not None and store.pack.intact(), "wall": wall,
                  "cpu": used}))
cache.close()
"""


def _cpu() -> float:
    s, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + k.ru_utime + k.ru_stime


def one(repo: Path, parents: list[str], workers: int, shared: bool) -> tuple[float, float, int]:
    """``(wall s, CPU s, pack bytes held)`` of ``workers`` workers making their stores (``SnapshotCache.keep``,
    timed inside each worker: not its interpreter's start), ``shared``: from one pack this process makes first
    (its time and CPU added)."""
    from pytest_homefield.records import Task
    from pytest_homefield.run.attempt import SnapshotCache

    wall0 = cpu0 = 0.0
    offer, held, controller = None, 0, None
    if shared:
        tasks = [Task(id=f"t{n}", commit=p, parent=p, committed_at="", authored_at="", mode="commit", subject="",
                      message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                      FAIL_TO_PASS=[], PASS_TO_PASS=[]) for n, p in enumerate(parents)]
        t0, c0 = time.perf_counter(), _cpu()
        controller = SnapshotCache(repo=repo)
        controller.keep(tasks)
        offer = controller.offer()
        wall0, cpu0 = time.perf_counter() - t0, _cpu() - c0
        held = controller._stores[0].pack.size
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(repo), json.dumps(parents), json.dumps(offer)],
                              stdout=subprocess.PIPE, text=True) for _ in range(workers)]
    said = [json.loads(p.communicate()[0]) for p in procs]
    assert all(s["took"] == shared for s in said), said
    if controller is not None:
        controller.close()
    else:
        held = sum(int(s["size"]) for s in said)
    return wall0 + max(s["wall"] for s in said), cpu0 + sum(s["cpu"] for s in said), held


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--parents", type=int, default=30)
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    log = subprocess.run(["git", "rev-list", "--first-parent", "-n", str(args.parents * 5), "HEAD"], cwd=args.repo,
                         capture_output=True, text=True, check=True).stdout.split()
    parents = log[::5][:args.parents]
    print(f"{args.repo}: {len(parents)} parent trees, median of {args.runs} runs")
    for w in args.workers:
        for shared in (False, True):
            runs = [one(args.repo, parents, w, shared) for _ in range(args.runs)]
            wall, cpu, held = (statistics.median(r[i] for r in runs) for i in range(3))
            print(f"  -n {w} {'one pack, taken' if shared else 'a pack per worker':18s}  wall {wall:5.2f} s  "
                  f"CPU {cpu:5.2f} s  packs held {held / 1e6:5.2f} MB")


if __name__ == "__main__":
    main()
