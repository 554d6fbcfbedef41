"""Reference agents asked a plain prompt: oracle recites the gold answer, noop answers nothing,
sim:P cannot answer (it is not a model)."""

from __future__ import annotations

from pytest_homefield.agents.base import Completer, can_complete
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent


def test_oracle_recites_and_noop_answers_nothing() -> None:
    oracle = OracleAgent(name="oracle", spec="oracle")
    c = oracle.complete("what did this commit add?", timeout_s=1, gold_answer="return a + b\n")
    assert (c.text, c.outcome, c.cost_usd) == ("return a + b\n", None, 0.0)
    c = NoopAgent(name="noop", spec="noop").complete("what did this commit add?", timeout_s=1, gold_answer="x")
    assert (c.text, c.outcome, c.cost_usd) == ("", None, 0.0)
    assert isinstance(oracle, Completer) and can_complete(oracle)
    assert not can_complete(SimAgent(name="sim-0.5", spec="sim:0.5", p=0.5))
