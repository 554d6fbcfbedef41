"""What the canary tests cost per attempt: grading with and without them, side by side, in one session.

Run on demand (not a test)::

    python benchmarks/canaries.py --runs 7
    python benchmarks/canaries.py --runs 3 --repo /tmp/more-itertools --task da37f9de442b

On the tiny task of ``tests/helpers/attack_repo.py`` it grades the reference fix (``grade`` on a
workspace holding it, ``--sandbox none`` so the sandbox's start-up is not in the figures),
alternately with canaries (the default) and without (``canaries=False``), after one warm-up of each,
and prints for each the median CPU seconds (this process plus its children: the test command) and
wall seconds per grading, and the median of the per-run CPU ratios with/without. It also times the
planting alone (``plant_canaries``: parse, find the site, write the twins) in milliseconds. With ``--repo`` and
``--task`` it grades that mined task's reference fix (from ``<repo>/.homefield/tasks.jsonl``)
instead. The canaries are ``k`` twins (3) of each FAIL_TO_PASS test run in the same test process, so
their cost is up to ``k`` times those tests' own run time; on a task whose tests are cheap it is the
interpreter's work of collecting a few more items. Measured (2 shared cores, issue 30 round 4): the
tiny fixture task 0.389 vs 0.373 s CPU per grading (median ratio 1.04), planting 2.0 ms; the demo's
CLI task (10 FAIL_TO_PASS ids, 13 canaries, tests that start ``python -m textkit``) 0.628 vs 0.422 s
(ratio 1.29), planting 2.7 ms.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.attack_repo import GOOD_CALC, build, task_for  # noqa: E402

from pytest_homefield.records import load_tasks  # noqa: E402
from pytest_homefield.run.grading import grade  # noqa: E402
from pytest_homefield.sandbox.canaries import plant_canaries  # noqa: E402
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree, make_snapshot  # noqa: E402


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _grade(task, pristine: Path, workspace: Path, out: Path, canaries: bool) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    c0, t0 = _cpu(), time.perf_counter()
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=out, sandbox="none", canaries=canaries)
    cpu, wall = _cpu() - c0, time.perf_counter() - t0
    assert g.outcome == "solved" and (g.canaries > 0) == canaries, g
    shutil.rmtree(out)
    return cpu, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repo", type=Path, help="a repository mined by homefield (default: the tiny fixture)")
    ap.add_argument("--task", help="the id of one of its tasks (with --repo)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hf-bench-canaries-") as tmp:
        root = Path(tmp)
        if args.repo:
            repo = args.repo
            task = next(t for t in load_tasks(repo / ".homefield" / "tasks.jsonl") if t.id == args.task)
        else:
            fx = build(root / "repo")
            repo, task = fx.root, task_for(fx)
        pristine = make_snapshot(repo, task.parent, dest=root / "pristine", init_git=False)
        workspace = copy_tree(pristine, root / "work")
        if args.repo:
            apply_patch(workspace, task.gold_patch)
        else:
            (workspace / "src" / "calc" / "__init__.py").write_text(GOOD_CALC)
        figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for k in range(args.runs + 1):
            for on in (True, False):
                got = _grade(task, pristine, workspace, root / f"out-{k}-{on}", on)
                if k:  # the first of each is the warm-up
                    figures[on].append(got)
        plant_ms = []
        for k in range(20):
            copy = copy_tree(pristine, root / f"plant-{k}")
            apply_patch(copy, task.test_patch)
            t0 = time.perf_counter()
            plant_canaries(copy, task.FAIL_TO_PASS, seed=k)
            plant_ms.append(1000 * (time.perf_counter() - t0))
    ratios = [a[0] / b[0] for a, b in zip(figures[True], figures[False], strict=True)]
    for on in (True, False):
        cpu = statistics.median(c for c, _ in figures[on])
        wall = statistics.median(w for _, w in figures[on])
        print(f"canaries {'on ' if on else 'off'}: CPU {cpu:.3f} s, wall {wall:.3f} s per grading "
              f"(median of {args.runs})")
    print(f"CPU ratio with/without: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    print(f"planting alone: median {statistics.median(plant_ms):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
