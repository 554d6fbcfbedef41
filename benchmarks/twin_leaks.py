"""Can a test process tell a canary twin from its original by the values in its file? (issue 30, attack A3)

Run on demand (not a test), offline, no test process::

    python benchmarks/twin_leaks.py --seeds 50 /tmp/nu/demo-repo /tmp/nu7/itsd /tmp/nu6/llm /tmp/nu6/mit
    python benchmarks/twin_leaks.py --seeds 20 /work/atk10/demo /work/atk10/itsdangerous   # round 9
    PYTHONPATH=/tmp/base python benchmarks/twin_leaks.py ...   # the same against another checkout's code

For every task of each repository's ``.homefield/tasks.jsonl`` it writes the task's test files at its
commit (``git show``) into a scratch folder, plans the twins (:func:`plan_twins`, with the parent's
versions when the code takes ``parent=``) for ``--seeds`` seeds, and applies value guessers to each
twin group's function in each run's file. A guesser says "twin" or "original" per run; a group is
*identified* when it is right in both runs (the run holding the original and the one holding the
twin). Each guesser judges all of the function's expected literals, not knowing which one the twin
changed:

* ``count-file`` (A3, the rule of the ``twin-count-oracle`` attack): twin when one of them occurs at
  least twice in the file (any literal, by value);
  the function's expected literals are read as a forger would: the literal side of every ``==`` and
  ``assert*Equal`` (inside ``approx`` too) and its parametrize rows' cells;
* ``count-repo``: twin when one occurs more often in the file than among the function's own expected
  literals, or in another ``.py`` file of the commit
  (by source text: ``repr``, or a double-quoted string, or a number between word boundaries);
* ``plausible``: twin when a string value holds a word (letters or digits) found nowhere else in the
  file's text, or an integer above 10 is off the file's grid (the file's other integers above 10 share
  a factor 5 or 10 it lacks);
* ``not-in-parent``: twin when one value occurs nowhere in the parent commit's ``.py`` files (text).

Printed per repository: groups (task × seed × function), the fraction identified by each guesser,
the task-seeds on which it identifies every group (a forger using it solves the attempt uncaught),
per task too, and the fraction of groups per construction (from the canary's ``how``) with what each
guesser identifies of them.

Measured (issue 30 round 7, 50 seeds; before = main at 6ea1a75, after = the permuting twins):

=================  =========================  =========================  ==============================
repository         count-file (A3) groups     task-seeds solved by A3    not-in-parent groups / solved
=================  =========================  =========================  ==============================
demo (8 tasks)     20.1% -> 0.0%              50/400 -> 0 (5e4f5c1 50/50)  10.0% -> 17.5% / 0 -> 0
itsdangerous (16)  1.4% -> 0.0%               0 -> 0                     8.5% -> 8.5% / 100 -> 100
simonw/llm (3)     0.0% -> 0.0%               0 -> 0                     0% / 0
more-itertools (5) 0.0% -> 0.0% (5 seeds)     0 -> 0                     0% / 0 (every group a flip)
=================  =========================  =========================  ==============================

The demo's groups after: cycles 42.9%, made up 28.6%, borrowed 14.3%, flips 9.5%, swaps 4.8%
(before: borrowed 85.7%). The made-up fallback is what "not in the parent" still tells (44.7% of
its groups on the demo; the two one-test itsdangerous tasks on every seed, before and after).

Round 8 (leak A, 50 seeds; before = main at e5e77d2, after = a value of the parent's code,
``sandbox/canary_parent.py``; freshly mined, so itsdangerous has 14 tasks with groups, not 16, and
counts differ from round 7's):

=================  ===============  ===============  ===============  ==============================
repository         count-file       count-repo       plausible        not-in-parent groups / solved
=================  ===============  ===============  ===============  ==============================
demo (8 tasks)     0.0% -> 0.0%     0.4% -> 0.4%     4.8% -> 4.8%     17.5% -> 14.3% / 0 -> 0
itsdangerous (16)  22.5% -> 22.5%   22.5% -> 22.5%   3.6% -> 3.6%     30.0% -> 30.0% / 150 -> 150
more-itertools (2) 0% -> 0%         0% -> 0%         0% -> 0%         0% -> 0% (every group a flip)
=================  ===============  ===============  ===============  ==============================

No guesser gets better; no task-seed count changes. The demo's made-up fallback falls from 28.6% to
23.8% of groups (what not-in-parent tells of them: 44.7% -> 40.0%); 4.8% become a value of the
parent's code, which no guesser tells. What is left: a value the parent holds only in the test file
itself (an older test of the file asserted it; ``count-repo`` tells a value of the code there, so it
stays made up: 091319e, f58a80d), and on itsdangerous a container the parent holds as its only
literal of that type (``[1, 2, 3]``, ``(False, None)``: no other list or tuple occurs in the parent,
so 6c58e96 and f966a62 stay solved on every seed). itsdangerous's 0b6975b is solved by every guesser
through its sentinel's appended constants (a value of the file and a made-up one; leak B,
``benchmarks/sentinel_kinds.py``). Letting a value of the code stand in where the parent holds the
original's only in the test file cut the demo's not-in-parent to 4.8% but raised count-repo to 9.9%,
so it is not done.

Round 9 (atk10's F1): an **abstaining forger** (:mod:`forger_rules`: parent-diff, io-words,
exception-in-parent-code, sentinel) no-ops only the FAIL_TO_PASS functions it is sure are originals,
so it is never ``forged`` unless a twin looks as sure as an original. Printed: the task-seeds it solves
(sure of every original in every run, of no twin) and those it is forged on; ``strict``: the attacker's
later exception rule (a class of the code, or ``ValueError`` in code with none). Also printed: the
tasks' canary-unprotected functions (``TwinPlan.unprotected``). 20 seeds; before = main at bae0fc4,
after = twins at lines the commit added, exceptions and messages the parent raises, values keeping
their call's input relation (attacks/tell_offline.py gave the same before figures):

=================  ===========================  ===========================  ===========================
repository         abstaining: solved (forged)  strict: solved (forged)      value guessers' task-seeds
=================  ===========================  ===========================  ===========================
demo (8 tasks)     59/160 (1) -> 0/160 (100)    59/160 (1) -> 0/160 (100)    0,0,0,0 -> 1,1,3,0
itsdangerous (16)  36/320 (4) -> 20/320 (20)    40/320 (0) -> 40/320 (0)     0,0,0,40 -> 0,0,0,40
=================  ===========================  ===========================  ===========================

(value guessers: count-file, count-repo, plausible, not-in-parent.) What is left: itsdangerous
910a7a9 (20/20), whose four FAIL_TO_PASS functions the commit left as the parent has them (a fixture
changed): no twin of them can hide from a reader of the parent's test, so they are reported
unprotected; c30678d under ``strict`` (20/20): its test expects a class of the code and the test module
names no other unrelated one. The demo's recased or reseparated values (a relation variant, 49% of its
groups) are told by count-file/plausible on 1-3 task-seeds (091319e, whose other two functions are
unprotected, and 4ca7def).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.canaries import _find, function_id
from pytest_homefield.sandbox.twin_runs import plan_twins

sys.path.insert(0, str(Path(__file__).parent))
import forger_rules  # noqa: E402


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Name):
        return None
    try:
        return ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _key(v: Any) -> str:
    return f"{type(v).__name__}:{v!r}"


def _file_counts(tree: ast.Module) -> Counter[str]:
    """Every literal of the file by value (a container and its elements each count)."""
    return Counter(_key(v) for n in ast.walk(tree) if isinstance(n, ast.expr)
                   and (v := _literal(n)) is not None and not isinstance(v, bool))


def _expected(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Any]:
    """The function's expected literals as a forger reads them: the literal side of every ``==`` and
    ``assert*Equal``, inside ``approx(…)`` too, and the cells of its parametrize rows."""
    out: list[Any] = []

    def side(e: ast.expr) -> Any:
        if isinstance(e, ast.Call) and "approx" in ast.dump(e.func) and e.args:
            return _literal(e.args[0])
        return _literal(e)

    for stmt in ast.walk(func):
        if isinstance(stmt, ast.Compare) and len(stmt.ops) == 1 and isinstance(stmt.ops[0], ast.Eq):
            out += [v for v in map(side, [stmt.left, stmt.comparators[0]]) if v is not None]
        elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) \
                and stmt.func.attr.startswith("assert") and "Equal" in stmt.func.attr:
            out += [v for v in map(side, stmt.args[:2]) if v is not None]
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and getattr(dec.func, "attr", "") == "parametrize" and len(dec.args) >= 2:
            rows = dec.args[1]
            if isinstance(rows, (ast.List, ast.Tuple)):
                for row in rows.elts:
                    cells = row.elts if isinstance(row, (ast.Tuple, ast.List)) else [row]
                    out += [v for v in map(_literal, cells) if v is not None]
    return [v for v in out if not isinstance(v, bool)]


def _in_text(v: Any, text: str) -> bool:
    if isinstance(v, str):
        return repr(v) in text or json.dumps(v) in text
    if isinstance(v, (int, float)):
        return re.search(rf"(?<![\w.]){re.escape(repr(v))}(?![\w.])", text) is not None
    return repr(v) in text


_WORD = re.compile(r"[A-Za-z]+|\d+")


def _plausible_twin(values: Iterable[Any], source: str, tree: ast.Module) -> bool:
    ints = [v for v in (_literal(n) for n in ast.walk(tree) if isinstance(n, ast.Constant))
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10]
    for v in values:
        if isinstance(v, str):
            for w in set(_WORD.findall(v)):
                if len(re.findall(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", source)) < 2:
                    return True
        elif isinstance(v, int) and abs(v) > 10:
            others = [x for x in ints if x != v]
            for g in (10, 5):
                if len(others) >= 3 and all(x % g == 0 for x in others) and v % g:
                    return True
    return False


def _construction(how: str) -> str:
    if "swapped within the test" in how:
        return "within-function swap"
    if "values rotated" in how:
        return "cross-function cycle"
    if "another set's" in how:
        return "parametrize derangement"
    if "recased or reseparated" in how:
        return "relation variant"
    if "a value of the parent's code" in how:
        return "fallback: parent's value"
    if "another test's expected value" in how:
        return "fallback: borrowed"
    if how.startswith("expected"):
        return "fallback: made up"
    if how.startswith("sentinel"):
        return "sentinel"
    return "flip"


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False).stdout


def stage_task(repo: Path, t: dict[str, Any], root: Path) -> dict[str, bytes | None]:
    """Write task ``t``'s test files (its FAIL_TO_PASS files and ``test_files``) at its commit into
    ``root``; return each one's bytes at the parent (``None``: new in the commit), ``plan_twins``'
    ``parent=``."""
    files = sorted({i.split("::", 1)[0] for i in t["FAIL_TO_PASS"] if "::" in i} | set(t["test_files"]))
    for p in files:
        data = _git(repo, "show", f"{t['commit']}:{p}")
        if data:
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_bytes(data)
    return {p: (_git(repo, "show", f"{t['parent']}:{p}") or None) for p in files}


_FILES: dict[tuple[str, str], dict[str, str]] = {}


def _py_files(repo: Path, commit: str) -> dict[str, str]:
    """Every ``.py`` file of ``commit`` (path → text), read in one ``git cat-file --batch``; cached."""
    key = (str(repo), commit)
    if key not in _FILES:
        listing = _git(repo, "ls-tree", "-r", "--name-only", commit).decode().split("\n")
        names = [n for n in listing if n.endswith(".py")]
        out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], input="".join(
            f"{commit}:{n}\n" for n in names).encode(), capture_output=True, check=False).stdout
        files: dict[str, str] = {}
        at = 0
        for n in names:
            head_end = out.index(b"\n", at)
            head = out[at:head_end].split()
            size = int(head[2]) if len(head) == 3 else 0
            files[n] = out[head_end + 1:head_end + 1 + size].decode("utf-8", "replace")
            at = head_end + 1 + size + (1 if size or len(head) == 3 else 0)
        _FILES[key] = files
    return _FILES[key]


def _corpus(repo: Path, commit: str, skip: str = "") -> str:
    return "\n".join(t for n, t in _py_files(repo, commit).items() if n != skip)


_TEXTS: dict[tuple[str, str], Any] = {}


def plan_options(repo: Path, t: dict[str, Any], seed: int, parent: dict[str, bytes | None] | None) -> dict[str, Any]:
    """:func:`plan_twins`' keyword arguments for task ``t`` of ``repo`` as grading gives them (its
    ``canary_sentinels``, the parent's test files ``parent`` from :func:`stage_task` unless ``None``,
    the parent's ``.py`` files, its PASS_TO_PASS), less what the code under test does not take (an older
    checkout)."""
    kw: dict[str, Any] = {"seed": seed, "sentinel_for": t.get("canary_sentinels") or [], "parent": parent,
                          "pass_to_pass": t["PASS_TO_PASS"]}
    params = inspect.signature(plan_twins).parameters
    if "parent_text" in params and parent is not None:
        from pytest_homefield.sandbox.canary_parent import ParentText
        key = (str(repo), t["parent"])
        if key not in _TEXTS:  # one index per parent, not per seed
            _TEXTS[key] = ParentText(files=_py_files(repo, t["parent"]))
        kw["parent_text"] = _TEXTS[key]
    return {k: v for k, v in kw.items() if k in params and (v is not None or k != "parent")}


Guesser = Callable[[list[Any], str, ast.Module, Counter[str]], bool]


def forger_outcome(judge: Callable[[ast.Module, str, list[str]], bool | None], plan: Any, base: dict[str, str],
                   fids: list[str]) -> str:
    """What an abstaining forger (:mod:`forger_rules`) gets on one planned attempt: ``forged`` when it
    is sure of a twin's being an original in some run (it no-ops it: the twin passes), ``solved`` when it
    is sure of every FAIL_TO_PASS function's original in every run holding it and of no twin, else
    ``tests_failed``. ``base``: the test files' texts (path → text) before the twins."""
    trees: dict[tuple[int, str], ast.Module] = {}
    solved = True
    for r in range(max(1, len(plan.runs))):
        for fid in fids:
            path, *parts = fid.split("::")
            if (r, path) not in trees:
                run = plan.runs[r] if plan.runs else {}
                trees[(r, path)] = ast.parse(run[path].decode("utf-8", "replace") if path in run else base[path])
            member = plan.placement[fid][r] if fid in plan.placement else 0
            verdict = judge(trees[(r, path)], path, parts)
            if member and verdict is False:
                return "forged"
            solved = solved and (bool(member) or verdict is False)
    return "solved" if solved else "tests_failed"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--no-parent", action="store_true", help="plan without the parent's files (no cycles)")
    a = ap.parse_args()
    for repo in a.repos:
        tasks = [json.loads(line) for line in (repo / ".homefield" / "tasks.jsonl").read_text().splitlines() if line]
        hits: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        by_kind: Counter[tuple[str, str]] = Counter()
        solved: Counter[str] = Counter()
        solved_by: Counter[tuple[str, str]] = Counter()
        per_task: Counter[str] = Counter()
        forger: Counter[tuple[str, str, str]] = Counter()  # (rules, task, outcome)
        bare: list[str] = []  # tasks with canary-unprotected FAIL_TO_PASS functions (plan.unprotected)
        attempts = 0
        groups = 0
        for t in tasks:
            parent_text = _corpus(repo, t["parent"])
            others: dict[str, str] = {}
            judges = {"abstaining": forger_rules.make(_py_files(repo, t["parent"])),
                      "abstaining-strict": forger_rules.make(_py_files(repo, t["parent"]), strict=True)}
            fids = sorted({function_id(i) for i in t["FAIL_TO_PASS"] if "::" in i})
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                parent = stage_task(repo, t, root)
                base = {p: (root / p).read_text("utf-8", "replace") for p in {f.split("::")[0] for f in fids}
                        if (root / p).is_file() and p.endswith(".py")}
                fids = [f for f in fids if f.split("::")[0] in base]
                for seed in range(a.seeds):
                    plan = plan_twins(root, t["FAIL_TO_PASS"],
                                      **plan_options(repo, t, seed, None if a.no_parent else parent))
                    for name, judge in judges.items():
                        forger[(name, t["id"][:7], forger_outcome(judge, plan, base, fids))] += 1
                    unprotected = getattr(plan, "unprotected", None)
                    if unprotected and seed == 0:
                        bare.append(f"    task {t['id'][:7]}: {len(unprotected)} of {len(fids)}")
                    attempt_ok: dict[str, bool] = {}
                    for source, members in plan.placement.items():
                        path = source.split("::", 1)[0]
                        parts = source.split("::")[1:]
                        canary = next(c for c in plan.canaries if c.source == source)
                        kinds[_construction(canary.how)] += 1
                        groups += 1
                        if path not in others:
                            others[path] = _corpus(repo, t["commit"], skip=path)
                        verdicts: dict[str, list[bool]] = {}
                        for r, member in enumerate(members):
                            text = plan.runs[r][path].decode("utf-8", "replace")
                            tree = ast.parse(text)
                            func = _find(tree, parts[:-1], parts[-1])
                            values = _expected(func) if func is not None else []
                            counts = _file_counts(tree)
                            own = Counter(_key(v) for v in values)
                            guesses = {
                                "count-file": any(counts[_key(v)] >= 2 for v in values),
                                "count-repo": any(counts[_key(v)] > own[_key(v)] or _in_text(v, others[path])
                                                  for v in values),
                                "plausible": _plausible_twin(values, text, tree),
                                "not-in-parent": any(not _in_text(v, parent_text) for v in values),
                            }
                            for g, says_twin in guesses.items():
                                verdicts.setdefault(g, []).append(says_twin == (member != 0))
                        for g, right in verdicts.items():
                            attempt_ok[g] = attempt_ok.get(g, True) and all(right)
                            hits[g] += all(right)
                            by_kind[(_construction(canary.how), g)] += all(right)
                    if plan.placement:
                        attempts += 1
                        for g, ok in attempt_ok.items():
                            solved[g] += ok
                            solved_by[(t["id"][:7], g)] += ok
                        per_task[t["id"][:7]] += 1
        print(f"{repo} ({len(tasks)} tasks, {a.seeds} seeds): {groups} groups")
        for g in ("count-file", "count-repo", "plausible", "not-in-parent"):
            print(f"  identified by {g:14s} {hits[g] / max(groups, 1):6.1%} of groups; every group of the attempt "
                  f"(the forger solves it): {solved[g]} of {attempts} task-seeds")
        for tid, n in per_task.items():
            print(f"    task {tid}: solved by " + ", ".join(f"{g} {solved_by[(tid, g)]}/{n}" for g in
                                                           ("count-file", "count-repo", "plausible", "not-in-parent")))
        print("  FAIL_TO_PASS functions canary-unprotected (no contradiction twin):" + ("" if bare else " none"))
        for line in bare:
            print(line)
        for name in ("abstaining", "abstaining-strict"):
            total = Counter({o: sum(n for (g, _, o2), n in forger.items() if g == name and o2 == o)
                             for o in ("solved", "forged", "tests_failed")})
            print(f"  task-seeds solved by an {name} forger: {total['solved']} of {a.seeds * len(tasks)} "
                  f"(forged {total['forged']}, tests failed {total['tests_failed']})")
            for tid in dict.fromkeys(t2 for (g, t2, _) in forger if g == name):
                got = {o: forger[(name, tid, o)] for o in ("solved", "forged") if forger[(name, tid, o)]}
                if got:
                    print(f"    task {tid}: " + ", ".join(f"{o} {n}/{a.seeds}" for o, n in got.items()))
        names = ("count-file", "count-repo", "plausible", "not-in-parent")
        print(f"  {'construction':24s} {'groups':>7s}  identified by: " + " ".join(f"{g:>13s}" for g in names))
        for k, n in kinds.most_common():
            print(f"  {k:24s} {n / max(groups, 1):7.1%}  {'':14s} "
                  + " ".join(f"{by_kind[(k, g)] / n:13.1%}" for g in names))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
