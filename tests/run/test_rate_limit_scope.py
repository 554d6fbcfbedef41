"""What one agent reports stops only that agent: its rate limit and its spending against its share of
``--budget`` (atk9 F5b, F6: both are the agent's own claims)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.reference import OracleAgent
from pytest_homefield.records import Result
from pytest_homefield.run.runner import AttemptRunner, RunLimits
from pytest_homefield.settings import Settings
from pytest_homefield.store import append_jsonl

START = "2026-01-01T00:00:00+00:00"


def _record(agent: str, outcome: str, *, cost: float | None = None, error: str | None = None, attempt: int = 1,
            finished_at: str = "2026-01-01T00:00:01+00:00") -> dict[str, object]:
    return Result(run_id="r", task_id="t", agent=agent, attempt=attempt, outcome=outcome, cost_usd=cost, error=error,
                  finished_at=finished_at).to_dict()


def _runner(tmp_path: Path, agents: list[object], budget_usd: float | None = None) -> AttemptRunner:
    return AttemptRunner(Settings(root=tmp_path, sandbox="none"), agents, run_id="r",  # type: ignore[arg-type]
                         results=tmp_path / "results.jsonl", folder=lambda variant: tmp_path, session_start=START,
                         budget_usd=budget_usd)


def _claude(name: str) -> ClaudeAgent:
    return ClaudeAgent(name=name, spec=f"claude:claude-{name}-1", model=f"claude-{name}-1", settings=AgentSettings())


def test_a_rate_limit_stops_only_the_agent_that_reported_it(tmp_path: Path) -> None:
    """Measured on main: two claude agents shared a provider, so the rate limit one of them forged
    (a result line written into the CLI's own stdout) stopped the other: ``honest: no attempt recorded``."""
    evil, honest = _claude("evil"), _claude("honest")
    runner = _runner(tmp_path, [evil, honest])
    append_jsonl(runner.results, _record("evil", "rate_limited", error="API Error: 429 rate_limit_error"))
    assert runner.stop_reason(evil) == "rate limited: API Error: 429 rate_limit_error"
    assert runner.stop_reason(honest) is None


def test_a_claimed_cost_spends_only_the_claimants_share(tmp_path: Path) -> None:
    """Measured on main: ``cmd:echo '{"cost_usd": 1e9}'`` spent ``--budget 50`` for every agent of the
    run (oracle: no attempt recorded, and again after every ``--resume``)."""
    spender = CommandAgent(name="spender", spec="cmd:x", command="x", settings=AgentSettings())
    oracle = OracleAgent(name="oracle", spec="oracle")
    runner = _runner(tmp_path, [spender, oracle], budget_usd=50.0)
    append_jsonl(runner.results, _record("spender", "empty_patch", cost=1e9))
    assert runner.stop_reason(spender) == "budget spent: spender: 1000000000.00 of 25.00 USD (its share of 50.00)"
    assert runner.stop_reason(oracle) is None
    append_jsonl(runner.results, _record("oracle", "solved", cost=24.0))
    assert runner.stop_reason(oracle) is None
    append_jsonl(runner.results, _record("oracle", "solved", cost=1.0, attempt=2))
    assert runner.stop_reason(oracle) == "budget spent: oracle: 25.00 of 25.00 USD (its share of 50.00)"


def test_one_agent_has_the_whole_budget(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    limits = RunLimits(path, budget_usd=0.05, since_iso=START)
    append_jsonl(path, _record("a", "solved", cost=0.04))
    assert limits.stop_reason("a") is None and limits.spent_usd("a") == pytest.approx(0.04)
    append_jsonl(path, _record("a", "solved", cost=0.02, attempt=2))
    assert limits.stop_reason("a") == "budget spent: a: 0.06 of 0.05 USD"


def test_a_limit_of_the_previous_session_does_not_count(tmp_path: Path) -> None:
    """A resume that starts in the second an earlier session's rate limit was recorded (seconds-precision
    records of older versions, or the same second) is not stopped by it; this session's own limit is."""
    path = tmp_path / "results.jsonl"
    append_jsonl(path, _record("a", "rate_limited", error="old"))
    limits = RunLimits(path, budget_usd=None, since_iso="2026-01-01T00:00:01.400+00:00")
    limits.refresh()
    assert limits.rate_limited("a") is None
    append_jsonl(path, _record("a", "rate_limited", error="new", attempt=2,
                               finished_at="2026-01-01T00:00:01.650+00:00"))
    limits.refresh()
    assert limits.rate_limited("a") == "new" and limits.rate_limited("b") is None
    assert RunLimits(path, budget_usd=None, since_iso="2026-01-02T00:00:00+00:00").stop_reason("a") is None
