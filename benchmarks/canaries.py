"""What the canary tests cost per attempt: grading with and without them, side by side, in one session.

Run on demand (not a test)::

    python benchmarks/canaries.py --runs 7
    python benchmarks/canaries.py --runs 3 --repo /tmp/more-itertools --task da37f9de442b

On the tiny task of ``tests/helpers/attack_repo.py`` it grades a correct fix (``grade`` on a
workspace holding it, ``--sandbox none`` so the sandbox's start-up is not in the figures),
alternately with canaries (the default) and without (``canaries=False``), after one warm-up of each,
and prints for each the median CPU seconds (this process plus its children: the test command) and
wall seconds per grading, and the median of the per-run CPU ratios with/without. It also times the
planning alone (``plan_twins``: parse, find the sites, write each run's files) in milliseconds. With
``--repo`` and ``--task`` it grades that mined task's reference fix (from
``<repo>/.homefield/tasks.jsonl``) with a comment added to its first changed file: a change byte for
byte the reference fix gets no twin runs (contracts §7), so the comment makes it the change of an
agent that fixed the task. The twins run apart (:mod:`pytest_homefield.sandbox.twin_runs`): a
grading with canaries is two runs of the whole hidden test files instead of one, so their cost is
about one more run of the hidden tests, plus a fresh copy of the grading tree. Measured (2 shared cores,
load ~2, issue 30 round 7): the tiny fixture task 0.897 vs 0.426 s CPU per grading (median ratio 2.20),
planning 1.3 ms; the demo's CLI task ``d0301d4d01eb`` (10 FAIL_TO_PASS ids, tests that start
``python -m textkit``) 0.752 vs 0.345 s (ratio 2.18), its ``wrap()`` task ``71254d078326`` 0.616 vs
0.399 s (ratio 1.72); planning 0.9–1.2 ms.
"""

from __future__ import annotations

import argparse
import re
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
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree, make_snapshot  # noqa: E402
from pytest_homefield.sandbox.twin_runs import plan_twins  # noqa: E402


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
            first = re.search(r"^diff --git a/(\S+) ", task.gold_patch, re.M)
            assert first, "the task's reference fix names no file"
            with open(workspace / first.group(1), "a", encoding="utf-8") as fh:
                fh.write("\n# not byte for byte the reference fix\n")
        else:
            (workspace / "src" / "calc" / "__init__.py").write_text(GOOD_CALC + "\n# not the reference fix\n")
        figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for k in range(args.runs + 1):
            for on in (True, False):
                got = _grade(task, pristine, workspace, root / f"out-{k}-{on}", on)
                if k:  # the first of each is the warm-up
                    figures[on].append(got)
        plan_ms = []
        for k in range(20):
            copy = copy_tree(pristine, root / f"plant-{k}")
            apply_patch(copy, task.test_patch)
            t0 = time.perf_counter()
            plan = plan_twins(copy, task.FAIL_TO_PASS, seed=k)
            plan_ms.append(1000 * (time.perf_counter() - t0))
            assert plan.placement, "no twin was planned"
    ratios = [a[0] / b[0] for a, b in zip(figures[True], figures[False], strict=True)]
    for on in (True, False):
        cpu = statistics.median(c for c, _ in figures[on])
        wall = statistics.median(w for _, w in figures[on])
        print(f"canaries {'on ' if on else 'off'}: CPU {cpu:.3f} s, wall {wall:.3f} s per grading "
              f"(median of {args.runs})")
    print(f"CPU ratio with/without: median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    print(f"planning alone: median {statistics.median(plan_ms):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
