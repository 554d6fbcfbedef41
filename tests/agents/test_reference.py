"""Reference agents asked a plain prompt: oracle recites the gold answer, noop answers nothing,
sim:P cannot answer (it is not a model)."""

from __future__ import annotations

from pytest_homefield.agents.base import Completer, can_complete
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent, same_change_line
from pytest_homefield.settings_table import spelled_for


def test_oracle_recites_and_noop_answers_nothing() -> None:
    oracle = OracleAgent(name="oracle", spec="oracle")
    c = oracle.complete("what did this commit add?", timeout_s=1, gold_answer="return a + b\n")
    assert (c.text, c.outcome, c.cost_usd) == ("return a + b\n", None, 0.0)
    c = NoopAgent(name="noop", spec="noop").complete("what did this commit add?", timeout_s=1, gold_answer="x")
    assert (c.text, c.outcome, c.cost_usd) == ("", None, 0.0)
    assert isinstance(oracle, Completer) and can_complete(oracle)
    assert not can_complete(SimAgent(name="sim-0.5", spec="sim:0.5", p=0.5))


def test_same_change_line_says_attempts_of_oracle_and_noop_repeat_the_first() -> None:
    """nu32: oracle and noop at the default 3 attempts graded the reference fix three times over. The option is
    named for the front end in use (ux65: ``pytest --homefield`` was told ``--attempts 1``, which it has not)."""
    with spelled_for("cli"):
        assert same_change_line(["oracle", "noop"], 3) == (
            "oracle and noop make the same change on every attempt: the 2 after the first only repeat it (a flaky test "
            "alone tells them apart); --attempts 1 is the sanity check at 1/3 of the grading time")
    with spelled_for("pytest"):
        assert "; --homefield-attempts 1 is the sanity check" in (
            same_change_line(["oracle", "noop"], 3) or "")
    assert (same_change_line(["oracle"], 2) or "").startswith("oracle makes the same change on every attempt: the 1 "
                                                              "after the first")
    assert same_change_line(["oracle", "noop"], 1) is None and same_change_line([], 3) is None

