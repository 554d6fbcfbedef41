"""The numbers table of an attempt page (``homefield view``): what it says of the agent's network."""

from __future__ import annotations

import pytest

from pytest_homefield.records import Result
from pytest_homefield.view.attempt_page import _numbers

META = {"sandbox": {"mode": "auto", "network": "allowlist", "agents": {}, "tests": "bwrap"}}


def _network(spec: str | None) -> str:
    html = _numbers(Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="solved", sandbox="none"),
                    META, spec)
    return html.split("<th>Network</th><td>", 1)[1].split("</td>", 1)[0]


@pytest.mark.parametrize("spec", ["sim:0.5", "oracle", "noop", "ref=sim:0.9"])
def test_a_reference_agent_has_no_network(spec: str) -> None:
    """ux63: a ``sim:P`` attempt's page said "Network: allowlist", the session's setting, for an agent that
    runs inside homefield, starts no process and opens no connection."""
    assert _network(spec).startswith("none")
    assert "allowlist" not in _network(spec)


@pytest.mark.parametrize("spec", ["claude", "cmd:python agent.py --context=oracle", None])
def test_other_agents_show_the_session_s_network(spec: str | None) -> None:
    assert _network(spec) == "allowlist"
