"""Which twins do mined tasks get, and does a shape rule tell them? (issue 30, attacker8's F1)

Run on demand (not a test), offline, no test process::

    python benchmarks/sentinel_kinds.py --seeds 5 /tmp/nu/demo-repo /tmp/nu7/itsd /tmp/nu6/llm /tmp/nu6/mit
    PYTHONPATH=/tmp/base python benchmarks/sentinel_kinds.py ...   # the same against another checkout's code

For every task of each repository's ``.homefield/tasks.jsonl`` it writes the task's test files at its
commit into a scratch folder and plans the twins (:func:`plan_twins`, the task's ``canary_sentinels``
forced, the parent's versions given) for ``--seeds`` seeds. Printed per repository: groups by
construction (from each canary's ``how``; an appended sentinel counts as one group), the tasks whose
every group is a sentinel, and what two shape rules tell, applied to the group function's definition in
each run's file (a rule *tells* a group when it says "twin" for exactly the runs holding a twin; an
appended sentinel is told when the rule says "twin" for it):

* ``lone-raise`` (the ``sentinel-shape-forger`` attack): the body, docstrings aside, is one ``raise``;
* ``constant``: a top-level statement of the body fails by constant evaluation (a ``raise``; an
  ``assert`` of constants that is false; ``self.assertEqual`` / ``assertTrue`` … of constants that
  fails; ``self.fail`` / ``pytest.fail``).

A task-seed is *solved* by a rule when it tells every group of it (a forger applying the rule passes
the originals and fails the twins).

Measured (issue 30 round 7, 5 seeds; before = main at dbaca02, after = shaped twins):

==================  ===============================  ====================  ================================
repository          sentinels (of all canaries)      sentinel-only tasks   task-seeds solved: lone-raise /
                                                                           constant
==================  ===============================  ====================  ================================
itsdangerous (16)   64.2% -> 52.3% (shaped twins)    1 -> 1                5/80 -> 0/80  /  5/80 -> 5/80
                    -> 72.5% (shared definitions)    -> 3                  -> 10/80  /  -> 15/80
demo (8), llm (3),  0% (every group a contradiction) none                  0 -> 0
more-itertools (5)
==================  ===============================  ====================  ================================

itsdangerous, first step (shaped twins): "no assertion" 13.8% of its canaries were sentinels, now
11.9% are raises twins and 1.8% stay sentinels (no call statement, no pytest import); the forced
sentinels (15.6%) keep their definition (94% of them; the rest could return first). Second step: a
definition other classes of its file run (a base class's test) gets no twin, since a twin failed
those ids in its run (a real fix was ``tests_failed`` on 4 of the 16 tasks, seed 0): 63.3% of its
canaries are such appended sentinels, contradictions fall from 35.8% to 25.7%, raises twins to
1.8%, and tasks 07cfb648bd and 9981a90b46 become sentinel-only (every group an inherited test): a
lone ``raise`` in a new function, told by its shape.

Round 8 (leak B, 5 seeds; before = main at e5e77d2, after = a shared definition's twin): a definition
several collected classes run gets a real twin when every such class's function is FAIL_TO_PASS (past
the limit of 24 too) or has no graded id (``plan_twins(pass_to_pass=…)``), each such function a
member of its group (a group here: one per function id, so the groups double):

==================  ===============================  ====================  ================================
repository          sentinels (of all groups)        sentinel-only tasks   task-seeds solved: lone-raise /
                                                                           constant
==================  ===============================  ====================  ================================
itsdangerous (16)   72.4% -> 11.8%                   3 -> 1                10/80 -> 0/80  /  15/80 -> 5/80
                    (shared: 63.3% -> 7.3%)
==================  ===============================  ====================  ================================

Of the new twins: contradictions 62.7% of all groups (was 25.7%), raises twins 25.5% (was 1.8%).
07cfb648bd's base-class test runs in nine classes: five are FAIL_TO_PASS, four fail with the
reference fix too (excluded), so one group of five; 0635526a's shared tests ran in classes whose
functions were FAIL_TO_PASS past the limit. Left sentinel-only: 0b6975b570, forced at mining because
its twin rewrote ``value = u'hello'``, which the test also hands to the code (the reference passed it).

Mined again with the round's code (an expected name is rewritten only when the assertion is its one
reader, ``canary_sites.read_once``): the same 16 tasks kept, none dropped as
``reference_passes_canary``; forced sentinels only on 7f4dcf83 and 0635526a (``test_serializer_kwargs``
returns early for pickle serializers, so its assertion does not run whenever the test passes). On those
records, main's code / this round's: sentinels 66.0% -> 9.9% of groups, sentinel-only tasks 2 -> 0,
task-seeds solved by lone-raise 10/80 -> 0/80, by constant 10/80 -> 0/80. ``twin_leaks.py`` on them (50
seeds): no task-seed solved by a guesser that was not before (not-in-parent 100 of 700 -> 100 of 800: the
two ``[1, 2, 3]`` tasks); plausible 0.3% -> 9.3% of groups, all in the new twins of base-class tests
that existed in the parent (a made-up value there; a sentinel before, told by its shape).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.canaries import _find
from pytest_homefield.sandbox.twin_runs import plan_twins

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_leaks import plan_options, stage_task  # noqa: E402  (the same staging and options)

_CONST = (ast.Constant, ast.Compare, ast.cmpop, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.unaryop,
          ast.BoolOp, ast.boolop, ast.BinOp, ast.operator, ast.Load)
_FAILS = {"assertEqual": lambda a, b: a != b, "assertEquals": lambda a, b: a != b,
          "assertNotEqual": lambda a, b: a == b, "assertTrue": lambda a: not a, "assertFalse": bool,
          "assertIn": lambda a, b: a not in b, "assertIs": lambda a, b: a is not b}


def _const(node: ast.expr) -> tuple[bool, Any]:
    if not all(isinstance(n, _CONST) for n in ast.walk(node)):
        return False, None
    try:
        return True, eval(compile(ast.Expression(node), "<c>", "eval"), {"__builtins__": {}})  # noqa: S307
    except Exception:  # noqa: BLE001 - a constant that raises fails too
        return True, False


def _body(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    return [b for b in func.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]


def lone_raise(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = _body(func)
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def constant_fail(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for s in _body(func):
        if isinstance(s, ast.Raise):
            return True
        if isinstance(s, ast.Assert):
            ok, v = _const(s.test)
            if ok and not v:
                return True
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name == "fail":
                return True
            if name in _FAILS and not s.value.keywords:
                vals = [_const(a) for a in s.value.args]
                if vals and all(ok for ok, _ in vals):
                    try:
                        if _FAILS[name](*[v for _, v in vals][:2]):
                            return True
                    except Exception:  # noqa: BLE001
                        return True
    return False


RULES = {"lone-raise": lone_raise, "constant": constant_fail}


def kind(how: str) -> str:
    if how.startswith("sentinel"):
        return how
    if how.startswith("no assertion"):
        return "no assertion: raises twin"
    return "contradiction"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    for repo in a.repos:
        tasks = [json.loads(line) for line in (repo / ".homefield" / "tasks.jsonl").read_text().splitlines() if line]
        kinds: Counter[str] = Counter()
        told: Counter[tuple[str, str]] = Counter()
        solved: Counter[str] = Counter()
        only_sentinels: set[str] = set()
        task_seeds = groups = 0
        for t in tasks:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                parent = stage_task(repo, t, root)
                for seed in range(a.seeds):
                    plan = plan_twins(root, t["FAIL_TO_PASS"], **plan_options(repo, t, seed, parent))
                    if not plan.canaries:
                        continue
                    task_seeds += 1
                    every: dict[str, bool] = dict.fromkeys(RULES, True)
                    all_sentinel = True
                    for c in plan.canaries:
                        k = kind(c.how)
                        kinds[k] += 1
                        groups += 1
                        all_sentinel &= c.kind == "sentinel"
                        if c.source in plan.placement:
                            path, parts = c.source.split("::", 1)[0], c.source.split("::")[1:]
                            verdict = dict.fromkeys(RULES, True)
                            for r, member in enumerate(plan.placement[c.source]):
                                tree = ast.parse(plan.runs[r][path])
                                func = _find(tree, parts[:-1], parts[-1])
                                for name, rule in RULES.items():
                                    verdict[name] &= func is not None and rule(func) == (member != 0)
                        else:  # appended: a new function of its own
                            verdict = dict.fromkeys(RULES, True)
                        for name, ok in verdict.items():
                            told[(k, name)] += ok
                            every[name] &= ok
                    for name, ok in every.items():
                        solved[name] += ok
                    if all_sentinel:
                        only_sentinels.add(t["id"][:10])
        print(f"{repo} ({len(tasks)} tasks, {a.seeds} seeds): {groups} groups, {task_seeds} task-seeds")
        print(f"  {'construction':56s} {'groups':>7s} " + " ".join(f"{n:>11s}" for n in RULES))
        for k, n in kinds.most_common():
            print(f"  {k[:56]:56s} {n / max(groups, 1):7.1%} " + " ".join(f"{told[(k, r)] / n:11.1%}" for r in RULES))
        print(f"  tasks whose every group is a sentinel (any seed): {len(only_sentinels)} {sorted(only_sentinels)}")
        print("  task-seeds solved by a rule: " + ", ".join(f"{r} {solved[r]}/{task_seeds}" for r in RULES))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
