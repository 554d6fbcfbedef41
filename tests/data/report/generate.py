"""Write the fixed report inputs beside this file (run once; the outputs are committed).

    python tests/data/report/generate.py

Deterministic: the same files every time. ``tasks.jsonl`` holds 6 tasks; ``run-a`` is a run of four
agents × 3 attempts that was cut short by the budget (with a retried key, a torn last line, an
unscored infra and a rate-limited attempt, missing costs, a partial cost, flagged attempts and two
missing ``diff.patch`` files); ``run-b`` is a second shard (two more tasks for two agents) for the
union test.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

HERE = Path(__file__).parent

TASKS = [
    # id, subject, languages, well_specified, source file
    ("a1b2c3d4e5f6", "Fix off-by-one in paginate() when the last page is full", ["python"], True, "src/pager.py"),
    ("b2c3d4e5f6a1", "Parse ISO week dates in parse_date()", ["python"], True, "src/dates.py"),
    ("c3d4e5f6a1b2", "Cleanup", ["python"], False, "src/util.py"),
    ("d4e5f6a1b2c3", "Escape pipes in Markdown table cells", ["javascript"], True, "web/table.js"),
    ("e5f6a1b2c3d4", "Retry HTTP 429 with exponential backoff", ["python", "shell"], True, "src/http.py"),
    ("f6a1b2c3d4e5", "Make cache keys stable across processes", ["python"], False, "src/cache.py"),
]
EXTRA_TASKS = [
    ("0a1b2c3d4e5f", "Support NO_COLOR in the CLI", ["python"], True, "src/cli.py"),
    ("1b2c3d4e5f0a", "Drop Python 3.8 compat shims", ["python"], True, "src/compat.py"),
]


def gold(path: str, i: int) -> str:
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -10,4 +10,5 @@ def f{i}():\n"
        f"     x = load({i})\n-    return x[:-1]\n+    if not x:\n+        return []\n+    return x[: len(x)]\n"
        f"     # end\n"
    )


def agent_patch(kind: str, path: str, i: int, rng: random.Random) -> str:
    g = gold(path, i)
    if kind == "exact":
        return g
    if kind == "partial":
        return g.replace("+        return []\n", f"+        return None  # {rng.randint(1, 9)}\n")
    if kind == "tests":
        return g + (
            "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
            "@@ -1,1 +1,1 @@\n-assert f() == 1\n+assert True\n"
        )
    if kind == "other":
        return (
            f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,2 @@\n"
            f"-import os\n+import os, sys  # {rng.randint(1, 9)}\n keep = 1\n"
        )
    if kind == "empty":
        return ""
    raise ValueError(kind)


def task_record(tid: str, subject: str, langs: list[str], ws: bool, path: str, i: int) -> dict:
    commit = (tid * 4)[:40]
    return {
        "schema_version": 1,
        "id": tid,
        "commit": commit,
        "parent": commit[::-1],
        "committed_at": f"2025-02-{10 + i:02d}T12:00:00+00:00",
        "authored_at": f"2025-02-{10 + i:02d}T11:00:00+00:00",
        "mode": "commit",
        "subject": subject,
        "message": subject + "\n",
        "prompt": subject,
        "source_files": [path],
        "test_files": ["tests/test_x.py"],
        "test_patch": "",
        "gold_patch": gold(path, i),
        "FAIL_TO_PASS": [f"tests/test_x.py::test_{i}"],
        "PASS_TO_PASS": [],
        "excluded": {},
        "test_cmd": "python -m pytest",
        "setup_cmd": None,
        "env_fingerprint": "fixed",
        "spec_score": 0.8 if ws else 0.3,
        "well_specified": ws,
        "languages": langs,
        "diff_lines": 5,
        "verify": {"stability_runs": 3, "parent_s": 1.0, "commit_s": 1.0},
    }


AGENTS = [
    {
        "name": "haiku",
        "spec": "claude:claude-haiku-4-5",
        "version": "2.1.3 (Claude Code)",
        "model": "claude-haiku-4-5",
        "simulated": False,
        "hinted": False,
    },
    {
        "name": "sonnet",
        "spec": "claude:claude-sonnet-4-5",
        "version": "2.1.3 (Claude Code)",
        "model": "claude-sonnet-4-5",
        "simulated": False,
        "hinted": False,
    },
    {"name": "sim-0.7", "spec": "sim:0.7", "version": "0.1.0", "model": None, "simulated": True, "hinted": False},
    {
        "name": "qwen3-coder",
        "spec": "openai:qwen3-coder",
        "version": "0.1.0",
        "model": "qwen3-coder",
        "simulated": False,
        "hinted": True,
    },
]

# Outcomes per task (rows) and agent (columns) for run-a: 3 attempts each.
PLAN_A = {
    "a1b2c3d4e5f6": {"haiku": "s s f", "sonnet": "s s s", "sim-0.7": "s f s", "qwen3-coder": "f f s"},
    "b2c3d4e5f6a1": {"haiku": "f s f", "sonnet": "s s s", "sim-0.7": "s s s", "qwen3-coder": "f e f"},
    "c3d4e5f6a1b2": {"haiku": "f f f", "sonnet": "f r f", "sim-0.7": "f f f", "qwen3-coder": "f f f"},
    "d4e5f6a1b2c3": {"haiku": "T f s", "sonnet": "s s I", "sim-0.7": "s s f", "qwen3-coder": "x x x"},
    "e5f6a1b2c3d4": {"haiku": "s s L", "sonnet": "s t s", "sim-0.7": "f s s", "qwen3-coder": "f f f"},
    "f6a1b2c3d4e5": {"haiku": "f f $", "sonnet": "f s f", "sim-0.7": "f f f", "qwen3-coder": "f E f"},
}
PLAN_B = {
    "0a1b2c3d4e5f": {"haiku": "s f s", "sonnet": "s s s"},
    "1b2c3d4e5f0a": {"haiku": "f f f", "sonnet": "s f s"},
}
CODES = {
    "s": "solved",
    "f": "tests_failed",
    "r": "regression",
    "e": "empty_patch",
    "T": "timeout",
    "t": "test_timeout",
    "x": "agent_error",
    "$": "budget_exceeded",
    "I": "infra",
    "L": "rate_limited",
    "E": "tests_failed",  # tests_failed whose diff also edits tests (touched_tests, suspicious)
}
PRICE = {"haiku": 0.04, "sonnet": 0.11, "sim-0.7": None, "qwen3-coder": None}


def write_run(run_id: str, plan: dict, all_tasks: list, meta_extra: dict, rng: random.Random) -> None:
    run = HERE / run_id
    shutil.rmtree(run, ignore_errors=True)
    (run / "attempts").mkdir(parents=True)
    agents = [a for a in AGENTS if any(a["name"] in row for row in plan.values())]
    meta = {
        "run_id": run_id,
        "agents": agents,
        "attempts": 3,
        "tasks_digest": "0123456789abcdef",
        "versions": {"pytest_homefield": "0.1.0", "python": "3.11.9", "pytest": "9.0.1"},
        "created_at": "2025-03-01T10:15:00+00:00",
        "cut_short": None,
        **meta_extra,
    }
    (run / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    index = {t[0]: (i, t) for i, t in enumerate(all_tasks)}
    lines = []
    for tid, row in plan.items():
        i, t = index[tid]
        path = t[4]
        for agent, codes in row.items():
            for attempt, code in enumerate(codes.split(), start=1):
                outcome = CODES[code]
                price = PRICE[agent]
                wall = round(rng.uniform(20, 200) if outcome not in ("timeout",) else 900.0, 1)
                cost = None if price is None else round(price * wall / 60, 4)
                tokens = None if agent == "sim-0.7" else rng.randint(20_000, 400_000)
                rec = {
                    "schema_version": 1,
                    "run_id": run_id,
                    "task_id": tid,
                    "agent": agent,
                    "attempt": attempt,
                    "variant": "base",
                    "outcome": outcome,
                    "solved": outcome == "solved",
                    "scored": outcome not in ("infra", "rate_limited"),
                    "cost_usd": cost,
                    "cost_partial": outcome in ("timeout", "budget_exceeded"),
                    "exit_code": 1 if outcome == "agent_error" else 0,
                    "input_tokens": tokens,
                    "output_tokens": tokens and tokens // 20,
                    "cache_read_tokens": tokens and tokens * 3,
                    "cache_write_tokens": tokens and tokens // 4,
                    "turns": None if tokens is None else rng.randint(3, 40),
                    "wall_s": wall,
                    "test_s": round(rng.uniform(1, 9), 1),
                    "model": next(a["model"] for a in AGENTS if a["name"] == agent),
                    "agent_version": next(a["version"] for a in AGENTS if a["name"] == agent),
                    "touched_tests": code == "E",
                    "suspicious": code == "E",
                    "started_at": "2025-03-01T10:16:00+00:00",
                    "finished_at": "2025-03-01T10:19:00+00:00",
                    "error": None,
                }
                if outcome == "agent_error":
                    rec["error"] = "HTTP 401 from http://127.0.0.1:8080/v1: invalid API key"
                    rec["input_tokens"] = rec["output_tokens"] = None
                    rec["cache_read_tokens"] = rec["cache_write_tokens"] = rec["turns"] = None
                if outcome == "infra":
                    rec["error"] = "grading: outcome file missing"
                if outcome == "rate_limited":
                    rec["error"] = "429 rate limit reached"
                if code == "s" and agent == "sonnet" and tid == "d4e5f6a1b2c3" and attempt == 1:
                    # a retried key: first an infra line, then the solved one (last line wins)
                    lines.append(
                        {**rec, "outcome": "infra", "solved": False, "scored": False, "error": "worker crashed"}
                    )
                lines.append(rec)
                kind = {"solved": rng.choice(["exact", "partial", "exact"]), "empty_patch": "empty"}.get(
                    outcome, rng.choice(["other", "partial"])
                )
                if code == "E":
                    kind = "tests"
                if outcome in ("infra", "rate_limited", "agent_error"):
                    continue
                if (tid, agent, attempt) in {("a1b2c3d4e5f6", "qwen3-coder", 3), ("c3d4e5f6a1b2", "haiku", 2)}:
                    continue  # a missing diff.patch
                d = run / "attempts" / tid / agent / str(attempt)
                d.mkdir(parents=True)
                (d / "diff.patch").write_text(agent_patch(kind, path, i, rng))
    text = "".join(json.dumps(r) + "\n" for r in lines)
    if run_id == "run-a":
        text += '{"schema_version": 1, "run_id": "run-a", "task_id": "a1b2'  # a torn last line
    (run / "results.jsonl").write_text(text)


def main() -> None:
    all_tasks = TASKS + EXTRA_TASKS
    with open(HERE / "tasks.jsonl", "w") as fh:
        for i, t in enumerate(all_tasks):
            fh.write(json.dumps(task_record(*t, i)) + "\n")
    write_run("run-a", PLAN_A, all_tasks, {"cut_short": "budget spent ($2.00 of $2.00)"}, random.Random(7))
    write_run("run-b", PLAN_B, all_tasks, {"created_at": "2025-03-02T09:00:00+00:00", "attempts": 3}, random.Random(8))


if __name__ == "__main__":
    main()
