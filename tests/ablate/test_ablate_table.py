"""The per-rule effect table: paired tests, Holm across rules, labels, and the simulated acceptance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.ablate.simulate import label_rates, simulate_labels
from pytest_homefield.ablate.table import (
    AT_ITS_WORD,
    FLAGGED,
    HARMFUL,
    LOAD_BEARING,
    NO_EFFECT,
    PICKED,
    RETRIED,
    build_tables,
    label_gap,
    outcomes_by_variant,
    rule_effects,
    slim_keep,
)
from pytest_homefield.ablate.variants import slim_variant
from pytest_homefield.report.runs import cut_short_by_key
from pytest_homefield.report.stats import compare, holm


@pytest.mark.slow
def test_simulated_six_rule_file_labels_the_two_real_rules_and_spares_the_nulls() -> None:
    """Issue 14's acceptance: 30 tasks × 3 attempts, 200 seeded repetitions; rule 2 raises the solve rate
    (logit +1.75 when present: removing it costs about 30 points) and rule 5 lowers it (logit −1.75)."""
    result = simulate_labels(n_rules=6, effects={2: 1.75, 5: -1.75}, n_tasks=30, attempts=3, repetitions=200,
                             seed=14)
    rates = label_rates(result)
    assert result.rate(2, LOAD_BEARING) >= 0.8
    assert result.rate(5, HARMFUL) >= 0.8
    assert rates["correct_real"] >= 0.8  # both right in the same repetition
    for null in (1, 3, 4, 6):
        assert result.rate(null, LOAD_BEARING) + result.rate(null, HARMFUL) <= 0.05
    assert rates["null_flagged"] <= 0.05


def test_without_any_effect_the_labels_stay_quiet() -> None:
    result = simulate_labels(n_rules=6, effects={}, repetitions=60, seed=3)
    assert label_rates(result)["null_flagged"] <= 0.05


def _outcomes(pattern: list[int]) -> dict[str, list[int]]:
    return {f"t{i}": [v] for i, v in enumerate(pattern)}


def test_rule_effects_are_the_report_test_holm_adjusted_and_signed_base_minus_without() -> None:
    base = _outcomes([1] * 5 + [0] * 5 + [1] * 2)
    without = {1: _outcomes([0] * 12), 2: _outcomes([1] * 12), 3: _outcomes([1] * 5 + [0] * 5 + [1] * 2)}
    effects = rule_effects(base, without)
    raw = {n: compare(base, o, names=("with", "without")) for n, o in without.items()}
    assert effects[1].delta == raw[1].delta > 0 and effects[2].delta < 0 and effects[3].delta == 0
    assert [effects[n].p_adjusted for n in (1, 2, 3)] == holm([raw[n].p_value for n in (1, 2, 3)])
    assert effects[1].ci == raw[1].ci
    # issue 32: a rule's MDE is the gap labelled right 80 % of the time at alpha / rules (Holm's first step)
    pooled = (7 + 0 + 1) / (24 + 2)  # base solves 7 of 12, without rule 1 none
    assert effects[1].mde == label_gap(12, 1, pooled, 0.05 / 3) >= raw[1].mde


def _record(variant: str, task: str, outcome: str, attempt: int = 1, agent: str = "a") -> dict[str, object]:
    return {"variant": variant, "task_id": task, "agent": agent, "attempt": attempt, "outcome": outcome}


def test_outcomes_by_variant_keeps_the_last_line_and_only_scored_attempts() -> None:
    recs = [_record("base", "t1", "infra"), _record("base", "t1", "solved"), _record("base", "t2", "rate_limited"),
            _record("rule-1", "t1", "tests_failed")]
    by = outcomes_by_variant(recs)
    assert by["a"]["base"] == {"t1": [1]} and by["a"]["rule-1"] == {"t1": [0]}


def test_a_suspicious_solve_counts_as_the_report_counts_it() -> None:
    """ratk48: a rule keeping the agent off pytest's internals, whose removal made it solve every task by patching
    them (each solve flagged ``suspicious``), read 'no detectable effect' (100 % with and without) and the slimmer
    file dropped it. Since sus60 a flagged solve counts solved, as in the report (contracts §10), and a label that
    would change were the flagged solves counted failed is withheld: ``no verdict: it rests on flagged solves``,
    and the slimmer file keeps the rule (it drops none on a pattern list's word)."""
    rules = split_rules("- Never touch pytest's internals.\n- filler.\n")
    tasks = [f"t{i}" for i in range(10)]
    recs = []
    for t in tasks:
        recs += [_record("base", t, "solved"), {**_record("rule-1", t, "solved"), "suspicious": True},
                 _record("rule-2", t, "solved")]
    assert outcomes_by_variant(recs)["a"]["rule-1"] == {t: [1] for t in tasks}
    assert outcomes_by_variant(recs, flagged_failed=True)["a"]["rule-1"] == {t: [0] for t in tasks}
    table = build_tables(recs, rules, ["a"])[0]
    assert [r.verdict for r in table.rows] == [FLAGGED, NO_EFFECT] and table.rows[0].without_rule == 1.0
    assert slim_keep([table]) == {1}


def test_build_tables_labels_rows_and_measures_the_slimmer_file() -> None:
    rules = split_rules("# R\n\n- KEY RULE always.\n- filler one.\n- filler two.\n")
    tasks = [f"t{i}" for i in range(10)]
    recs = []
    for t in tasks:
        recs += [_record("base", t, "solved"), _record("rule-1", t, "empty_patch"),
                 _record("rule-2", t, "solved"), _record("rule-3", t, "solved")]
    first = build_tables(recs, rules, ["a"])
    assert [r.verdict for r in first[0].rows] == [LOAD_BEARING, NO_EFFECT, NO_EFFECT]
    assert first[0].rows[0].effect == 1.0 and first[0].rows[0].p_adjusted is not None
    assert first[0].rows[1].mde is not None and 0 < first[0].rows[1].mde <= 1
    assert all(r.tokens >= 1 for r in first[0].rows)
    assert slim_keep(first) == {1}
    slim = slim_variant(rules, slim_keep(first))
    assert slim is not None and slim.removed == (2, 3)
    recs += [_record("slim", t, "solved") for t in tasks]
    tables = build_tables(recs, rules, ["a"], slim=slim)
    s = tables[0].slim
    assert s is not None and s.slim == 1.0 and s.with_rules == 1.0 and "no detectable difference" in s.sentence
    assert s.tokens_saved == first[0].rows[1].tokens + first[0].rows[2].tokens


def test_a_rule_without_results_says_no_data() -> None:
    rules = split_rules("- a\n- b\n")
    tables = build_tables([_record("base", "t1", "solved")], rules, ["a"])
    assert [r.verdict for r in tables[0].rows] == ["no data", "no data"]


def test_a_label_that_rests_on_the_agents_claims_is_no_verdict() -> None:
    """atk20 F2 in an ablation: the agent solves 10 of 20 tasks at the first try in base and without rule 1,
    but in base it claims a rate limit after each failure and solves 8 more on the retries: 18 of 20
    against 10, so rule 1 was "load-bearing" (8 wins to 0). Counted as failed, base is 10 of 20 too: no
    verdict. Without rule 2 it solves nothing: load-bearing either way, and that label stands."""
    rules = split_rules("- rule one.\n- rule two.\n")
    recs: list[dict[str, object]] = []
    for i in range(20):
        t = f"t{i}"
        claim = {**_record("base", t, "rate_limited"), "claimed": True}
        if i < 10:
            recs += [_record("base", t, "solved")]
        elif i < 18:
            recs += [claim, _record("base", t, "solved")]
        else:
            recs += [claim, claim, _record("base", t, "agent_error")]
        recs += [_record("rule-1", t, "solved" if i < 10 else "tests_failed"), _record("rule-2", t, "tests_failed")]
    (table,) = build_tables(recs, rules, ["a"])
    assert table.rows[0].effect == 0.4 and table.rows[0].verdict == AT_ITS_WORD, table.rows[0]
    assert table.rows[1].verdict == LOAD_BEARING
    assert slim_keep([table]) == {2}
    counted = outcomes_by_variant(recs, claims_failed=True)["a"]["base"]
    assert sum(v[0] for v in counted.values()) == 10
    honest = [{**r, "claimed": False} for r in recs]
    assert [r.verdict for r in build_tables(honest, rules, ["a"])[0].rows] == [LOAD_BEARING, LOAD_BEARING]


def test_a_label_that_may_rest_on_twin_hits_is_no_verdict() -> None:
    """atk22 in an ablation: a rule that tells the agent to pass one version of each hidden test by content
    (a lock picker) wins 10 of 20 tasks by luck in base and hits a twin on the 10 others; without the rule
    it solves nothing: "load-bearing" (10 wins to 0). With two solves per twin hit counted as failed, base
    solves none: no verdict, and the rule is not kept as load-bearing. Rule 2, whose variant solves 18 of
    20 honestly, is harmful either way."""
    rules = split_rules("- rule one.\n- rule two.\n")
    recs: list[dict[str, object]] = []
    for i in range(20):
        t = f"t{i}"
        recs.append(_record("base", t, "solved") if i < 10 else {**_record("base", t, "tests_failed"), "twin_hits": 1})
        recs += [_record("rule-1", t, "tests_failed"), _record("rule-2", t, "solved" if i < 18 else "tests_failed")]
    (table,) = build_tables(recs, rules, ["a"])
    assert table.rows[0].effect == 0.5 and table.rows[0].verdict == PICKED, table.rows[0]
    assert table.rows[1].verdict == HARMFUL
    assert slim_keep([table]) == set()
    no_hits = [{**r, "twin_hits": 0} for r in recs]
    assert [r.verdict for r in build_tables(no_hits, rules, ["a"])[0].rows] == [LOAD_BEARING, HARMFUL]


def test_a_label_that_rests_on_tries_an_interruption_cut_short_is_no_verdict(tmp_path: Path) -> None:
    """atk23 F3 in an ablation (int24): the agent hangs on the attempts it misses, so an interrupted session
    cuts mostly those short and ``--resume`` makes them again. In base it solved 10 of 20 at once and 8 more
    on tries made again after a cut (no claim, nothing unscored in results.jsonl): 18 against 10 without rule
    1, "load-bearing" (8 wins to 0). The ablation's tries.jsonl keeps the cut starts; counting those attempts
    as failed, base is 10 too: no verdict, and the rule is not kept as load-bearing."""
    rules = split_rules("- rule one.\n- rule two.\n")
    recs: list[dict[str, object]] = []
    for i in range(20):
        t = f"t{i}"
        recs += [_record("base", t, "solved" if i < 18 else "tests_failed"),
                 _record("rule-1", t, "solved" if i < 10 else "tests_failed"), _record("rule-2", t, "tests_failed")]
    folder = tmp_path / "ablate"
    folder.mkdir()
    tries = [{"task_id": f"t{i}", "agent": "a", "attempt": 1, "variant": "base", "event": "start", "session": "s1"}
             for i in range(10, 18)]  # cut short by the first session
    tries += [{**_record(str(r["variant"]), str(r["task_id"]), ""), "event": e, "session": "s2"} for r in recs
              for e in ("start", "end")]
    (folder / "tries.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tries))
    cut = cut_short_by_key([folder])
    assert set(cut) == {(f"t{i}", "a", 1, "base") for i in range(10, 18)}
    (recorded,) = build_tables(recs, rules, ["a"])
    assert recorded.rows[0].verdict == LOAD_BEARING  # reading the results alone, as before
    (table,) = build_tables(recs, rules, ["a"], cut=cut)
    assert table.rows[0].effect == 0.4 and table.rows[0].verdict == RETRIED, table.rows[0]
    assert RETRIED.startswith("no verdict: it rests on retried attempts")
    assert table.rows[1].verdict == LOAD_BEARING and slim_keep([table]) == {2}
    # cut tries of a variant count in that variant only: the same starts in rule-2 leave rule 1's label
    other = {(t, a, n, "rule-2") for t, a, n, _v in cut}
    assert build_tables(recs, rules, ["a"], cut=other)[0].rows[0].verdict == LOAD_BEARING


def _rule_one_bears_rule_two_does_not() -> list[dict[str, object]]:
    """Records of agent ``a`` on t0..t19, one attempt each: the full file (``base``) and the file without rule two
    (``rule-2``) solve t0..t9, the file without rule one (``rule-1``) none: rule one load-bearing (10 to 0), rule
    two of no effect (10 of 20 either way)."""
    recs: list[dict[str, object]] = []
    for i in range(20):
        t = f"t{i}"
        recs += [_record("base", t, "solved" if i < 10 else "tests_failed"), _record("rule-1", t, "tests_failed"),
                 _record("rule-2", t, "solved" if i < 10 else "tests_failed")]
    return recs


def test_the_slimmer_files_sentence_resting_on_flagged_solves_is_no_verdict() -> None:
    """fatk60: the per-rule labels were withheld when they rested on flagged solves, the slimmer file's comparison
    with the full file was not. Rule 2 has no effect (10 of 20 with and without it), so the slimmer file drops it;
    with it gone the agent solves 18 of 20, 8 of them flagged ``suspicious`` (patching pytest's internals, say).
    Counted solved (sus60) the slimmer file read "slimmer file better by +40" with the flagged solves buying the
    whole gap; counted failed it is 10 of 20, as the full file. The sentence names no winner then: ``no verdict:
    it rests on flagged solves``, the numbers kept as recorded."""
    rules = split_rules("- rule one.\n- rule two.\n")
    recs = _rule_one_bears_rule_two_does_not()
    first = build_tables(recs, rules, ["a"])
    assert [r.verdict for r in first[0].rows] == [LOAD_BEARING, NO_EFFECT]
    slim = slim_variant(rules, slim_keep(first))
    assert slim is not None and slim.removed == (2,)
    recs += [_record("slim", f"t{i}", "solved") if i < 10 else
             {**_record("slim", f"t{i}", "solved" if i < 18 else "tests_failed"), "suspicious": i < 18}
             for i in range(20)]
    (table,) = build_tables(recs, rules, ["a"], slim=slim)
    s = table.slim
    assert s is not None and s.slim == 0.9 and s.with_rules == 0.5 and s.comparison is not None
    assert s.sentence.startswith(FLAGGED), s.sentence
    honest = [{**r, "suspicious": False} for r in recs]
    (plain,) = build_tables(honest, rules, ["a"], slim=slim)
    assert plain.slim is not None and not plain.slim.sentence.startswith("no verdict"), plain.slim.sentence


def test_the_slimmer_files_sentence_resting_on_the_agents_claims_is_no_verdict() -> None:
    """fatk60, atk20 F2 in the slimmer file: it solves 10 of 20 at the first try and 8 more on retries after
    claimed rate limits, against the full file's 10: "slimmer file beats full file" rested on the agent's word
    (the rules' labels were withheld so, the slimmer file's sentence was not). Now ``no verdict: it rests on the
    agent's claims``."""
    rules = split_rules("- rule one.\n- rule two.\n")
    recs = _rule_one_bears_rule_two_does_not()
    for i in range(20):
        if 10 <= i < 18:
            recs.append({**_record("slim", f"t{i}", "rate_limited"), "claimed": True})
        recs.append(_record("slim", f"t{i}", "solved" if i < 18 else "tests_failed"))
    slim = slim_variant(rules, {1})
    assert slim is not None and slim.removed == (2,)
    (table,) = build_tables(recs, rules, ["a"], slim=slim)
    assert table.slim is not None and table.slim.slim == 0.9
    assert table.slim.sentence.startswith(AT_ITS_WORD), table.slim.sentence
    assert table.slim.comparison is not None and table.slim.comparison["significant"] is False


def test_a_label_resting_on_flagged_solves_and_twin_hits_together_is_no_verdict() -> None:
    """fatk60: the labels were read with each doubt apart, never the flagged solves with the others. With the rule
    the agent solves t0..t9, t0 and t1 flagged and a twin hit on t9; without it t8 and t9: 8 wins to 0,
    load-bearing. The flags alone leave 6 to 0 (p=0.031), the picks alone (t0, t1: what the variant solves least)
    too; together (the picks among the solves the flags leave) 4 to 0: no verdict, it rests on flagged solves."""
    rules = split_rules("- rule one.\n")
    recs: list[dict[str, object]] = []
    for i in range(10):
        t = f"t{i}"
        recs += [{**_record("base", t, "solved"), "suspicious": i < 2, "twin_hits": int(i == 9)},
                 _record("rule-1", t, "solved" if i >= 8 else "tests_failed")]
    (table,) = build_tables(recs, rules, ["a"])
    assert table.rows[0].effect == 0.8 and table.rows[0].verdict == FLAGGED, table.rows[0]
    assert slim_keep([table]) == {1}
