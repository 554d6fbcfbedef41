"""The probe's plan lines (``homefield plan --probe``): a reference agent's probe costs exactly 0 USD,
as ``homefield plan`` says of its runs, where before it read "cost ? USD (no earlier probe call of
this agent)" (nu30, on tkem/cachetools: ``plan --probe --agent oracle --agent noop``); an agent with
a model and no history stays unknown, and one with history is estimated from its earlier calls."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_homefield.probe.probe_plan import plan_lines


def test_reference_agents_cost_exactly_nothing_and_model_agents_are_estimated(tmp_path: Path) -> None:
    home = tmp_path / ".homefield"
    (home / "probe").mkdir(parents=True)
    earlier = [{"schema_version": 1, "kind": "task", "task_id": "a", "sample": 1, "agent": "echo",
                "spec": "cmd:echo", "score": 0.2, "cost_usd": 0.5}]
    (home / "probe" / "echo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in earlier))
    agents = [("oracle", "oracle"), ("nothing", "nothing=noop"), ("echo", "cmd:echo"),
              ("claude", "claude:claude-sonnet-4-5")]
    lines = plan_lines(home, agents, ["a", "b"], 1, None, pairs={"a": "b", "b": "a"})
    assert lines[0].startswith("Probe plan: 2 tasks × 4 agents × 1 sample = 8 calls")
    by_agent = dict(zip([a for a, _ in agents], lines[1:], strict=True))
    for name in ("oracle", "nothing"):
        assert by_agent[name].endswith("4 calls to make, 0 already answered; "
                                       "0.00 USD (exact: a reference agent answers without a model)")
    assert by_agent["echo"].endswith("~2.00 USD (0.5000 USD/call from 1 earlier call)")
    assert by_agent["claude"].endswith("cost ? USD (no earlier probe call of this agent)")
