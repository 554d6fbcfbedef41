"""The ablation plan: runs, time and cost before anything is spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.ablate.ablate_plan import make_plan, merged_history, min_tasks_for, plan_lines
from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.store import append_jsonl

RULES = split_rules("# R\n\n- first rule\n- second rule\n")


@pytest.mark.usefixtures("cli_spelling")
def test_counts_and_cost_from_the_flags() -> None:
    plan = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=3, agents=[("spy", "cmd:spy", "CLAUDE.md")],
                     attempts=2, workers=2, history={}, seconds_per_run=60, cost_per_run=0.5)
    assert plan.n_variants == 3 and plan.runs == 18 and plan.slim_runs == 6
    text = "\n".join(plan_lines(plan, will_run=False))
    assert "2 rules, 3 tasks, 1 agent, 2 attempts each, 3 variants" in text
    assert "Agent runs: 18 (+ up to 6 for the slimmer file" in text
    assert "Estimated: 18 min sequential, 9 min at -n 2; $9.00" in text
    assert "The slimmer file adds up to 6 min, $3.00." in text
    assert "no rule can reach significance" in text  # 3 tasks
    assert text.rstrip().endswith("continue a stopped ablation with --resume).")
    assert "1. first rule" in text and "2. second rule" in text


def test_unknown_is_said_not_guessed() -> None:
    plan = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=20, agents=[("c", "claude", "CLAUDE.md")],
                     attempts=3, workers=1, history={})
    text = "\n".join(plan_lines(plan, will_run=True))
    assert "Estimated: unknown sequential, unknown at -n 1; USD unknown" in text
    assert "no earlier runs" in text and "Nothing run" not in text
    assert "Sensitivity: effects under about" in text


def _run(root: Path, run_id: str, agent: str, spec: str, rows: list[tuple[float, float | None]]) -> None:
    d = root / ".homefield" / "runs" / run_id
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"run_id": run_id, "agents": [{"name": agent, "spec": spec}]}))
    for i, (wall, cost) in enumerate(rows):
        append_jsonl(d / "results.jsonl", {"task_id": f"t{i}", "agent": agent, "attempt": 1, "outcome": "solved",
                                           "wall_s": wall, "test_s": 0.0, "cost_usd": cost})


def test_per_agent_averages_from_earlier_runs_and_the_flag_wins(tmp_path: Path) -> None:
    _run(tmp_path, "r1", "sonnet", "claude:claude-sonnet-4-5", [(100.0, 0.30), (140.0, 0.50)])
    _run(tmp_path, "r2", "haiku", "claude:claude-haiku-4-5", [(20.0, 0.02)])
    hist = merged_history(HomefieldDir(tmp_path))
    agents = [("sonnet", "claude:claude-sonnet-4-5", "CLAUDE.md"), ("h2", "claude:claude-haiku-4-5", "CLAUDE.md")]
    plan = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=10, agents=agents, attempts=1, workers=1,
                     history=hist)
    a, b = plan.agents
    assert (a.s_per_run, round(a.usd_per_run or 0, 6)) == (120.0, 0.4) and "2 earlier attempts" in a.basis
    assert (b.s_per_run, b.usd_per_run) == (20.0, 0.02)  # matched by spec although renamed
    assert plan.usd == 30 * 0.4 + 30 * 0.02
    flagged = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=10, agents=agents, attempts=1, workers=1,
                        history=hist, cost_per_run=1.0)
    assert [x.usd_per_run for x in flagged.agents] == [1.0, 1.0] and flagged.agents[0].s_per_run == 120.0


def test_a_run_takes_its_agent_and_its_grading(tmp_path: Path) -> None:
    """nu25 on hynek/stamina: the oracle's earlier runs took 0.04 s each and their grading about 2 s; the
    plan said "per run 0 s" and "1 min" for 70 runs that took 4m41s."""
    d = tmp_path / ".homefield" / "runs" / "r1"
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"run_id": "r1", "agents": [{"name": "oracle", "spec": "oracle"}]}))
    for i in range(4):
        append_jsonl(d / "results.jsonl", {"task_id": f"t{i}", "agent": "oracle", "attempt": 1, "outcome": "solved",
                                           "wall_s": 0.04, "test_s": 2.0, "cost_usd": 0.0})
    plan = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=14, agents=[("oracle", "oracle", "CLAUDE.md")],
                     attempts=1, workers=2, history=merged_history(HomefieldDir(tmp_path)))
    (a,) = plan.agents
    assert a.s_per_run is not None and round(a.s_per_run, 2) == 2.04
    text = "\n".join(plan_lines(plan, will_run=False))
    assert "per run 2 s, $0.0000 (4 earlier attempts: agent 0 s + grading 2 s)" in text, text
    assert plan.seconds is not None and round(plan.seconds, 1) == round(14 * 3 * 2.04, 1)  # 3 variants
    # a reference agent is not said to read the file the note then says it does not read (nu25)
    assert "agent oracle (oracle) reads no rules file: 42 runs" in text, text
    assert "Note: oracle: reads no rules file" in text and "so its rows" in text
    two = make_plan(rules_file="CLAUDE.md", rules=RULES, n_tasks=14, attempts=1, workers=2, history={},
                    agents=[("oracle", "oracle", "CLAUDE.md"), ("s", "sim:0.7", "CLAUDE.md"),
                            ("c", "claude", "CLAUDE.md")])
    text = "\n".join(plan_lines(two, will_run=False))
    assert "Note: oracle, s: read no rules file" in text and "so their rows" in text
    assert "agent c (claude) reads CLAUDE.md: 42 runs" in text


def test_min_tasks_for_significance() -> None:
    assert min_tasks_for(0.05) == 6  # 2/2**6 = 0.031 < 0.05 <= 2/2**5
    assert min_tasks_for(0.05 / 6) == 8
