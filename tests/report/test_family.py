"""The Holm family of the report's comparisons (issue 32): pairs of non-reference agents are adjusted
together, pairs with ``oracle``/``noop``/``sim:P`` are unadjusted sanity checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.report_tasks import plain_task

from pytest_homefield.agents.registry import KINDS
from pytest_homefield.records import Result
from pytest_homefield.report import build_report
from pytest_homefield.report.adaptive import not_needed_reason
from pytest_homefield.report.family import REFERENCE_KINDS, adjust_family, cost_measured, is_reference_spec
from pytest_homefield.report.fmt import family_sentence, fmt_p_adjusted, p_rule
from pytest_homefield.report.html import forest_svg
from pytest_homefield.report.model import ComparisonRow
from pytest_homefield.report.stats import Comparison, compare

TASKS = [f"t{i}" for i in range(10)]


def _solves(n: int) -> dict[str, list[int]]:
    """One attempt per task, the first ``n`` of the ten tasks solved."""
    return {t: [int(i < n)] for i, t in enumerate(TASKS)}


#: The demo's shape: a reference that solves everything, A solves 10, B 7, C none (one attempt each):
#: p(A, C) = 2/1024, p(B, C) = 2/128 = 0.0156, p(A, B) = 0.25.
DEMO = {"oracle": _solves(10), "A": _solves(10), "B": _solves(7), "C": _solves(0)}


def _pairs(agents: dict[str, dict[str, list[int]]]) -> list[Comparison]:
    names = list(agents)
    return [compare(agents[a], agents[b], names=(a, b)) for i, a in enumerate(names) for b in names[i + 1 :]]


def _by_pair(comps: list[Comparison]) -> dict[tuple[str, str], Comparison]:
    return {(c.a, c.b): c for c in comps}


def test_reference_kinds_are_the_modelless_kinds_of_the_registry() -> None:
    assert REFERENCE_KINDS == {name for name, kind in KINDS.items() if kind.capabilities.modelless}
    assert is_reference_spec("oracle") and is_reference_spec("noop") and is_reference_spec("sim:0.5")
    assert is_reference_spec("base=sim:0.7")
    assert not is_reference_spec("claude:claude-haiku-4-5") and not is_reference_spec("cmd:aider")
    assert not is_reference_spec(None) and not is_reference_spec("similar")


def test_holm_without_the_reference_pairs_gives_the_issue_example() -> None:
    comps = _pairs(DEMO)
    raw = _by_pair(comps)
    assert raw[("B", "C")].p_value == pytest.approx(2 / 128)
    # every pair in the family (the old behaviour): B vs C is lost, 4 * 0.0156 = 0.0625
    everything = _by_pair(adjust_family(comps, references=()))
    assert everything[("B", "C")].p_adjusted == pytest.approx(0.0625)
    assert "no detectable difference after Holm adjustment" in everything[("B", "C")].verdict
    # oracle is a reference: the family is the three pairs of A, B, C and B vs C stays significant
    decided = _by_pair(adjust_family(comps, references={"oracle"}))
    bc = decided[("B", "C")]
    assert bc.p_adjusted == pytest.approx(max(3 * 2 / 1024, 2 * 2 / 128)) and round(bc.p_adjusted, 3) == 0.031
    assert bc.family == 3 and bc.significant and not bc.sanity
    assert bc.verdict.startswith("B beats C") and "Holm-adjusted p=0.031 over 3 pairs" in bc.verdict
    for pair in (("oracle", "A"), ("oracle", "B"), ("oracle", "C")):
        c = decided[pair]
        assert c.sanity and c.p_adjusted is None and c.family is None
        assert "unadjusted: a sanity check against a reference agent" in c.verdict
    assert decided[("oracle", "C")].significant  # decided by its own p = 2/1024


def test_demo_agents_are_all_sanity_checks() -> None:
    demo = {"oracle": _solves(10), "sim-0.7": _solves(9), "sim-0.5": _solves(7), "noop": _solves(0)}
    specs = ("oracle", "sim:0.7", "sim:0.5", "noop")
    refs = {n for n, spec in zip(demo, specs, strict=True) if is_reference_spec(spec)}
    decided = _by_pair(adjust_family(_pairs(demo), refs))
    c = decided[("sim-0.5", "noop")]
    assert c.sanity and c.significant and c.p_value == pytest.approx(2 / 128)
    assert c.verdict.startswith("sim-0.5 beats noop") and "p=0.016 unadjusted" in c.verdict
    assert all(x.sanity for x in decided.values())


def test_family_shown_beside_every_adjusted_p() -> None:
    rows = [ComparisonRow("A", "B", "mcnemar", 10, 0.3, [0.0, 0.6], 0.0156, 0.031, 0.4, "", 0.05, family=3,
                          sanity=False),
            ComparisonRow("oracle", "A", "mcnemar", 10, 0.3, [0.0, 0.6], 0.25, None, 0.4, "", 0.05, sanity=True),
            ComparisonRow("A", "C", "mcnemar", 10, 0.3, [0.0, 0.6], 0.2, 0.4, 0.4, "", 0.05)]  # an old report
    assert [fmt_p_adjusted(r) for r in rows] == ["0.031 of 3", "sanity", "0.4"]
    assert family_sentence(rows[:2]) == (
        "p-values Holm-adjusted across 1 pair of non-reference agents; 1 pair with a reference agent "
        "(oracle, noop, sim:P) is a sanity check, decided by the unadjusted p")
    assert ComparisonRow.from_dict(rows[0].to_dict()) == rows[0]
    assert "family" not in rows[2].to_dict() and ComparisonRow.from_dict(rows[2].to_dict()) == rows[2]


def test_a_run_of_reference_agents_only_adjusts_nothing_and_says_so() -> None:
    """pallets/markupsafe, oracle + noop + a cmd: agent: the HTML said "p-values Holm-adjusted across 0
    pairs", and its forest plot "+100 pp, p=<0.001 sanity"."""
    rows = [ComparisonRow("oracle", "noop", "mcnemar", 11, 1.0, [0.52, 1.0], 0.00098, None, 0.68, "", 0.05,
                          sanity=True),
            ComparisonRow("noop", "wrong", "mcnemar", 11, 0.0, [-0.24, 0.24], 1.0, None, 0.63, "", 0.05,
                          sanity=True)]
    assert family_sentence(rows) == (
        "no pair of two non-reference agents, so no p-value is Holm-adjusted; 2 pairs with a reference agent "
        "(oracle, noop, sim:P) are sanity checks, decided by the unadjusted p")
    svg = forest_svg(rows)
    assert ">+100 pp, p&lt;0.001 sanity<" in svg and ">0 pp, p=1 sanity<" in svg and "p=&lt;" not in svg


def test_the_head_to_heads_note_names_the_p_that_decides() -> None:
    """nu60: with reference agents only, report.md and report.html said "no p-value is Holm-adjusted" and then "the
    verdict uses the adjusted p"; the note now names the adjusted p only where a pair has one."""
    plain = ComparisonRow("A", "B", "mcnemar", 10, 0.3, [0.0, 0.6], 0.0156, 0.031, 0.4, "", 0.05, family=1,
                          sanity=False)
    sanity = ComparisonRow("oracle", "noop", "mcnemar", 11, 1.0, [0.52, 1.0], 0.00098, None, 0.68, "", 0.05,
                           sanity=True)
    assert p_rule([sanity], 0.05) == f"{family_sentence([sanity])} (α = 0.05)"
    assert "uses the adjusted p" not in p_rule([sanity], 0.05)
    assert p_rule([plain], 0.05).endswith("; the verdict uses the adjusted p (α = 0.05)")
    assert p_rule([plain, sanity], 0.01).endswith("; the other verdicts use the adjusted p (α = 0.01)")


def test_an_equals_sign_in_a_commands_arguments_names_no_kind(tmp_path: Path) -> None:
    """ratk54: the report read an agent's kind as what follows the first ``=`` of its spec, as if it were
    ``NAME=SPEC``; but ``meta.json`` keeps the spec without its name (``agents/registry.py``: an ``=`` after the
    kind's ``:`` belongs to the spec), so a ``cmd:`` agent run with ``--context=oracle`` (SWE-bench's name of a
    retrieval setting) was a reference agent: its own ``{"cost_usd": 0}`` shown as measured, fit to break a tie on
    cost per solved (atk23's hole again), its pairs sanity checks outside the Holm family, left out of the
    headline, its probe plan "0.00 USD (exact: a reference agent answers without a model)", and with
    ``--adaptive`` run in round 1 only. The kind is read as the
    registry reads it."""
    tricky = ["cmd:python agent.py --context=oracle", "cmd:env MODE=sim:0.9 ./agent", "cmd:./agent --baseline=noop"]
    for spec in tricky:
        assert not is_reference_spec(spec) and not cost_measured(spec), spec
    for spec in ("oracle", "noop", "sim:0.5", "ref=oracle", "b=sim:0.5", " noop "):
        assert is_reference_spec(spec) and cost_measured(spec), spec
    assert not is_reference_spec("cmd:oracle") and not is_reference_spec("zz=cmd:x --k=oracle")
    agents = {"aa": "cmd:paid", "bb": "cmd:other", "zz": tricky[0]}
    folder = tmp_path / "r"
    folder.mkdir()
    lines = [Result(run_id="r", task_id=t, agent=a, attempt=1, solved=i < 6, outcome="solved" if i < 6 else
                    "tests_failed", cost_usd=0.0 if a == "zz" else 0.12) for a in agents for i, t in enumerate(TASKS)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in lines))
    (folder / "meta.json").write_text(json.dumps({"run_id": "r", "attempts": 1, "task_ids": TASKS,
                                                  "agents": [{"name": a, "spec": s} for a, s in agents.items()]}))
    report = build_report([folder], [plain_task(t) for t in TASKS])
    assert report["agents"]["zz"].get("cost_reported") == "reported by the agent", report["agents"]["zz"]
    pairs = [c for c in report["comparisons"] if "zz" in (c["a"], c["b"])]
    assert len(pairs) == 2 and not any(c.get("sanity") for c in pairs), pairs
    assert not_needed_reason([], list(agents.items()), "zz", 2, looks=3) is None
