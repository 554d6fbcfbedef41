"""``homefield plan``: how many agent runs a run would make and what they would cost, before anything
is spent. Estimates are per-agent averages of earlier runs' results (seconds, USD)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pytest_homefield.agents.registry import parse_spec
from pytest_homefield.layout import HomefieldDir, read_meta, results_path
from pytest_homefield.records import UNSCORED_OUTCOMES, load_tasks
from pytest_homefield.settings import Settings
from pytest_homefield.store import read_jsonl

__all__ = ["history_averages", "plan_rows", "plan_text"]


def history_averages(runs_root: Path) -> dict[str, dict[str, float | int]]:
    """Per agent spec (and name): mean ``wall_s`` and mean ``cost_usd`` of every earlier scored attempt,
    and how many attempts back each mean. Keys ``wall_s``, ``cost_usd`` (``nan`` when unknown), ``n``."""
    walls: dict[str, list[float]] = defaultdict(list)
    costs: dict[str, list[float]] = defaultdict(list)
    for run_dir in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        meta_specs: dict[str, str] = {}
        try:
            meta = read_meta(run_dir)
            meta_specs = {a["name"]: a["spec"] for a in meta.get("agents", [])}
        except (OSError, ValueError, KeyError):
            pass
        for r in read_jsonl(results_path(run_dir)):
            if r.get("outcome") in UNSCORED_OUTCOMES:
                continue  # an infra error or rate limit says nothing about an agent's time or cost
            for key in {r.get("agent", ""), meta_specs.get(r.get("agent", ""), "")} - {""}:
                walls[key].append(float(r.get("wall_s") or 0.0) + float(r.get("test_s") or 0.0))
                if r.get("cost_usd") is not None:
                    costs[key].append(float(r["cost_usd"]))
    out: dict[str, dict[str, float | int]] = {}
    for key, w in walls.items():
        c = costs.get(key, [])
        out[key] = {"wall_s": sum(w) / len(w), "cost_usd": (sum(c) / len(c)) if c else float("nan"), "n": len(w)}
    return out


def plan_rows(settings: Settings) -> list[dict[str, Any]]:
    """One row per agent: name, spec, runs, mean s and USD per attempt from history, estimated
    hours and USD (``None`` without history). Raises ``ValueError`` when there are no tasks/agents."""
    if not settings.tasks_path.exists():
        raise ValueError(f"no tasks at {settings.tasks_path}: run `homefield mine` first")
    tasks = load_tasks(settings.tasks_path)
    if settings.run_max_tasks is not None:
        tasks = tasks[: settings.run_max_tasks]
    if not settings.agents:
        raise ValueError("no agent given: add --agent SPEC")
    hist = history_averages(HomefieldDir(settings.root).runs)
    rows = []
    for text in settings.agents:
        p = parse_spec(text, named=settings.agent_defs)
        spec = settings.agent_defs[p.arg]["spec"] if p.kind == "named" and p.arg else p.spec
        runs = len(tasks) * settings.attempts
        h = hist.get(spec) or hist.get(p.name)
        wall = h["wall_s"] if h else None
        cost = h["cost_usd"] if h and h["cost_usd"] == h["cost_usd"] else None
        rows.append({
            "agent": p.name, "spec": spec, "runs": runs, "history_n": int(h["n"]) if h else 0,
            "s_per_run": wall, "usd_per_run": cost,
            "hours": (runs * wall / 3600) if wall is not None else None,
            "usd": (runs * cost) if cost is not None else None,
        })
    return rows


def plan_text(settings: Settings) -> str:
    """The plan as printed by ``homefield plan``."""
    rows = plan_rows(settings)
    n_tasks = rows[0]["runs"] // settings.attempts if rows else 0
    lines = [f"Plan: {n_tasks} tasks × {len(rows)} agents × {settings.attempts} attempts = "
             f"{sum(r['runs'] for r in rows)} agent runs"]
    lines.append(f"{'agent':<20} {'runs':>5} {'s/run':>8} {'USD/run':>9} {'hours':>7} {'USD':>9}  basis")
    for r in rows:
        def f(v: float | None, fmt: str) -> str:
            return "?" if v is None else format(v, fmt)
        basis = f"{r['history_n']} earlier attempts" if r["history_n"] else "no history: run a few attempts first"
        lines.append(f"{r['agent']:<20} {r['runs']:>5} {f(r['s_per_run'], '.1f'):>8} {f(r['usd_per_run'], '.4f'):>9} "
                     f"{f(r['hours'], '.2f'):>7} {f(r['usd'], '.2f'):>9}  {basis}")
    known_h = [r["hours"] for r in rows if r["hours"] is not None]
    known_usd = [r["usd"] for r in rows if r["usd"] is not None]
    total = f"Total (agents with history): {sum(known_h):.2f} agent-hours sequential, {sum(known_usd):.2f} USD"
    if settings.budget is not None:
        total += f"; run budget {settings.budget:.2f} USD"
    lines.append(total)
    return "\n".join(lines)
