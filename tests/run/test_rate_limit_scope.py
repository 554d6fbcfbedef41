"""A rate limit stops only the agents behind the same provider."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pytest_homefield.agents.registry import provider_of
from pytest_homefield.records import Result
from pytest_homefield.run.runner import RunLimits
from pytest_homefield.store import append_jsonl


def _agent(name: str, spec: str, base_url: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(name=name, spec=spec, settings=SimpleNamespace(base_url=base_url))


def test_providers() -> None:
    assert provider_of(_agent("sonnet", "claude:claude-sonnet-4-5")) == provider_of(_agent("claude", "claude"))
    assert provider_of(_agent("q", "openai:q", "http://127.0.0.1:1/v1")) != provider_of(
        _agent("r", "openai:r", "http://127.0.0.1:2/v1"))
    assert provider_of(_agent("a", "cmd:x")) != provider_of(_agent("b", "cmd:x"))
    declared = SimpleNamespace(name="w", spec="cmd:x", provider="anthropic")
    assert provider_of(declared) == provider_of(_agent("claude", "claude"))


def test_a_limit_counts_only_for_the_named_agents(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    append_jsonl(path, Result(run_id="r", task_id="t", agent="wrapped", attempt=1, outcome="rate_limited",
                              error="429 from the API", finished_at="2026-01-01T00:00:01+00:00").to_dict())
    since = "2026-01-01T00:00:00+00:00"

    def rate_limit_since(since_iso: str, agents: set[str]) -> str | None:
        limits = RunLimits(path, budget_usd=None, since_iso=since_iso)
        limits.refresh()
        return limits.rate_limited(agents)

    assert rate_limit_since(since, agents={"wrapped"}) == "429 from the API"
    assert rate_limit_since(since, agents={"oracle", "other"}) is None
    assert rate_limit_since("2026-01-02T00:00:00+00:00", agents={"wrapped"}) is None
    limits = RunLimits(path, budget_usd=None, since_iso=since)
    assert limits.stop_reason({"wrapped"}) == "rate limited: 429 from the API"
    assert limits.stop_reason({"oracle"}) is None


def test_a_limit_of_the_previous_session_in_the_same_second_does_not_count(tmp_path: Path) -> None:
    """A resume that starts in the second an earlier session's rate limit was recorded (seconds-precision
    records of older versions, or the same second) is not stopped by it; this session's own limit is."""
    path = tmp_path / "results.jsonl"
    append_jsonl(path, Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="rate_limited",
                              error="old", finished_at="2026-01-01T00:00:01+00:00").to_dict())
    limits = RunLimits(path, budget_usd=None, since_iso="2026-01-01T00:00:01.400+00:00")
    limits.refresh()
    assert limits.rate_limited({"a"}) is None
    append_jsonl(path, Result(run_id="r", task_id="t", agent="a", attempt=2, outcome="rate_limited",
                              error="new", finished_at="2026-01-01T00:00:01.650+00:00").to_dict())
    limits.refresh()
    assert limits.rate_limited({"a"}) == "new"
