"""How often does the parent's own code pass a canary twin at grading? (atk27, contracts §7)

Run on demand (not a test); it starts test processes (two per task and seed, no sandbox)::

    python examples/sample-project/build_history.py /tmp/demo && (cd /tmp/demo && homefield mine)
    python benchmarks/parent_twins.py /tmp/demo 12

For each task of ``REPO/.homefield/tasks.jsonl`` and each seed in ``range(SEEDS)``: plan the twins as grading
does (the task's options) on the parent plus the hidden tests, make the plan's runs there (no change of the
agent's: what a change that leaves the tested behaviour as the parent's is graded on), and print every twin
that passed (its value is the parent's own output), then the totals: group × seed twins so, and task × seed
plans in which every contradiction group is so (what ``parent_tell``, ``agents/attack_canary_aware.py``, solves
over the lock channel).

Measured on the demo (9 tasks, 12 seeds; main at b794ad0): 7 of 264 group × seed twins, all on 091319e41154
(titlecase: the recased twin ``"Don'T Look Back"`` on 6 seeds, ``"Of Mice And Men"`` on 1), 0 of 108 plans
with every group so; 1 min 47 s. Before atk27 each such twin made a twin hit of every change that left that
behaviour (honest ones: 7 of 12 comment-only attempts, 6 of 12 fixing only the small words), and
``parent_tell`` solved such a plan with no fix. The planner's draw is the same since: gradings check the plan
on the parent before the agent's runs and draw again (``run/twin_grading.py`` ``parent_checked_seed``), so
this script measures what that check meets (what it costs: a second draw on 7 of 108 task × seed plans).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pytest_homefield.paths import runnable_tests
from pytest_homefield.records import load_tasks
from pytest_homefield.run.twin_grading import apart_runs, merge_runs, twin_options
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree, make_snapshot
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins

repo = Path(sys.argv[1])
seeds = range(int(sys.argv[2]))
tasks = load_tasks(repo / ".homefield" / "tasks.jsonl")
groups = hit = task_seeds_all = task_seeds = 0
for t in tasks:
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        pristine = make_snapshot(repo, t.parent, dest=tmp / "p", init_git=False)
        g = copy_tree(pristine, tmp / "g")
        apply_patch(g, t.test_patch)
        targets = [p for p in runnable_tests(t.test_files, []) if (g / p).exists()]
        for s in seeds:
            plan = plan_twins(g, t.FAIL_TO_PASS, seed=s, parent=parent_tests(pristine, t.test_files),
                              parent_text=ParentText(pristine), pass_to_pass=t.PASS_TO_PASS, **twin_options(t))
            if not plan.groups:
                continue
            made = apart_runs(plan, g, tmp, t.test_cmd, [*targets, *plan.targets], tmp / f"o{s}", timeout_s=120,
                              test_timeout_s=None, sandbox="none", env=None, network=None, fail_to_pass=t.FAIL_TO_PASS)
            merged, _ = merge_runs(plan, made, t.FAIL_TO_PASS)
            passed = {c.source for c, _ in plan.passed(merged) if c.kind == "contradiction"}
            contra = {c.source for c in plan.canaries if c.kind == "contradiction"}
            groups += len(contra)
            hit += len(passed)
            task_seeds += 1
            task_seeds_all += bool(contra) and passed >= contra
            for c, tid in plan.passed(merged):
                print(f"{t.id} seed {s}: parent passes {tid} ({c.how}) of {len(contra)} groups", flush=True)
print(f"groups x seeds: {hit}/{groups} twins passed by the parent's code; task x seeds with every group so: "
      f"{task_seeds_all}/{task_seeds}")
