"""Twin hits (atk22, docs/contracts.md §10): code that passes one version of each hidden test by content,
unable to tell the original from its twin, is solved by luck about as often as it passes a twin exactly
(a confirmed "twin hit", graded ``tests_failed``). The report counts two of its solves as failed per
twin-hit attempt; a verdict that changes so is withheld."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers.report_tasks import assert_leaderless_headline, pair_row, plain_task, write_run

from pytest_homefield.records import Result
from pytest_homefield.report import build_report, picks, render_html, render_markdown, render_text_plain, stats
from pytest_homefield.report.adaptive import adaptive_pairs, not_needed_reason
from pytest_homefield.report.gate import worse_than
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.report.picks import picked_outcomes
from pytest_homefield.run.session import fail_under_failures

IDS = [f"t{i:02d}" for i in range(20)]


def _run(folder: Path, rows: dict[str, list[tuple[str, int]]]) -> Path:
    """A run of :data:`IDS` × 1 attempt: ``rows`` {agent: per task, (outcome, twin hits)}."""
    return write_run(folder, [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, outcome=o, twin_hits=h)
                              for a, per_task in rows.items() for t, (o, h) in zip(IDS, per_task, strict=True)], IDS)


def _picker(right: int) -> list[tuple[str, int]]:
    """Solved on ``right`` tasks by luck, a twin hit on every other."""
    return [("solved", 0) if i < right else ("tests_failed", 1) for i in range(len(IDS))]


def _honest(solved: int, hits: int = 0) -> list[tuple[str, int]]:
    return [("solved", 0) if i < solved else ("tests_failed", int(i < solved + hits)) for i in range(len(IDS))]


def test_a_picker_cannot_buy_beats(tmp_path: Path) -> None:
    """A picker right on 10 of 20 tasks and a twin hit on the 10 others, against an agent that solves
    nothing: 10 wins to 0 (exact McNemar p=0.002), which said "picker beats zero". With two solves counted
    as failed per twin-hit attempt it solves none: no verdict, in every format, the gate and --fail-under."""
    run = _run(tmp_path / "r", {"picker": _picker(10), "zero": _honest(0)})
    report = build_report([run], [plain_task(t) for t in IDS])
    assert report["agents"]["picker"]["pass_at_1"] == 0.5
    row = pair_row(report, "picker", "zero")
    assert row["significant"] is False and row["twin_hits"] == {"picker": 10}, row
    assert row["verdict"].startswith("picker vs zero: no verdict, it may rest on luck (picker's code passed "
                                     "contradicted twins of hidden tests exactly"), row["verdict"]
    assert "). With 10 solves of its counted as failed: picker vs zero: no detectable difference" in row["verdict"]
    assert row["counted_failed"].startswith("picker vs zero: no detectable difference"), row["counted_failed"]
    assert (row["p_value"], row["b_c"]) == (0.001953, [10, 0])  # the numbers stay those recorded
    (note,) = [n for n in report["notes"] if "contradicted twin" in n]
    assert "10 attempts passed a contradicted twin" in note and "its pass@1 is 0%." in note, note
    text = headline(Report.from_dict(report))
    assert text.startswith("No verdict between picker and zero (50% vs 0% pass@1): it may rest on luck"), text
    label = "10 attempts passed a contradicted twin exactly: 10 solves counted as failed, pass@1 0%"
    assert report["agents"]["picker"]["twin_hits"] == label and "twin_hits" not in report["agents"]["zero"]
    assert report["agents"]["picker"]["counted_pass_at_1"] == 0.0
    board = render_text_plain(report, verbose=False)
    assert "50%*" in board and f"picker pass@1 50%*: {label}" in board, board
    for doc in (render_markdown(report), render_html(report)):
        assert "no verdict, it may rest on luck" in doc and label in doc
    assert fail_under_failures(report, ["picker=0.4"]) == [
        f"picker pass@1 0.50 rests on solves its twin hits may have won ({label}): not passing 0.40"]
    # the gate: the same picker against a baseline in which it solved nothing honestly
    base = _run(tmp_path / "base", {"picker": _honest(0)})
    (line,) = worse_than([run], base)
    assert line.picked == 10 and line.candidate == 0.0 and line.delta == 0.0, line
    assert "10 solves counted as failed for its twin hits" in line.text


def test_an_honest_coincidence_keeps_a_clear_verdict(tmp_path: Path) -> None:
    """An agent that solves 16 of 20 and once gave a twin's value exactly (a sign error, say) still beats
    one that solves nothing: 2 solves counted as failed leave 14 wins to 0. The label says what was counted."""
    report = build_report([_run(tmp_path / "r", {"good": _honest(16, hits=1), "zero": _honest(0)})],
                          [plain_task(t) for t in IDS])
    row = pair_row(report, "good", "zero")
    assert row["significant"] is True and "twin_hits" not in row and row["verdict"].startswith("good beats zero")
    assert report["agents"]["good"]["twin_hits"] == ("1 attempt passed a contradicted twin exactly: 2 solves "
                                                     "counted as failed, pass@1 70%")
    assert headline(Report.from_dict(report)).startswith("good beats zero")


def test_honest_agents_without_twin_hits_are_left_as_recorded(tmp_path: Path) -> None:
    report = build_report([_run(tmp_path / "r", {"a": _honest(12), "b": _honest(3)})], [plain_task(t) for t in IDS])
    assert all("twin_hits" not in a and "counted_pass_at_1" not in a for a in report["agents"].values())
    assert "twin_hits" not in pair_row(report, "a", "b")


def test_the_solves_counted_are_those_on_the_tasks_others_solve_least() -> None:
    counted, n_hit, flipped = picked_outcomes(
        {"a": [1, 1], "b": [1], "c": [0]}, {"c": [1]}, [{"a": [1, 1], "b": [0], "c": [0]}])
    assert (n_hit, flipped) == (1, 2)
    assert counted == {"a": [1, 0], "b": [0], "c": [0]}  # b first (the other failed it), then a's last attempt


@pytest.mark.parametrize(("per_hit", "bought_at_most", "bought_at_least"), [(2, 0.02, 0.0), (1, 1.0, 0.1)])
def test_two_solves_per_hit_keep_a_pure_picker_from_a_verdict(monkeypatch: pytest.MonkeyPatch, per_hit: int,
                                                             bought_at_most: float, bought_at_least: float) -> None:
    """The constant's reason (report/picks.py): 200 seeded runs of 48 tasks, a picker right with chance 1/2
    on each against an agent that solves nothing. Counting one solve per hit still lets the exact test
    call the picker better in more than 10% of them (23% measured over 400); two, in none."""
    monkeypatch.setattr(picks, "SOLVES_PER_HIT", per_hit)
    bought = 0
    for seed in range(200):
        rng = random.Random(seed)
        right = {f"t{i}": rng.random() < 0.5 for i in range(48)}
        outcomes = {t: [int(r)] for t, r in right.items()}
        hits = {t: [int(not r)] for t, r in right.items()}
        zero = {t: [0] for t in right}
        counted, _, _ = picked_outcomes(outcomes, hits, [zero])
        cmp = stats.compare(counted, zero, names=("picker", "zero"))
        bought += cmp.significant and cmp.delta > 0
    assert bought_at_least <= bought / 200 <= bought_at_most, bought


def test_a_picker_cannot_buy_a_verdict_between_two_others(tmp_path: Path) -> None:
    """atk23's third-party rule for twin hits: a picker lucky on 14 of 20 tasks (a twin hit on the other 6)
    takes Holm's first steps with its wins over h1 and h2, and leaves "h1 beats h2" (6 wins to 0, p=0.031) at
    adjusted p=0.031; with its 12 solves counted as failed that pair is adjusted past 0.05: no verdict."""
    h1 = _honest(6)
    h2 = _honest(0)
    report = build_report([_run(tmp_path / "r", {"picker": _picker(14), "h1": h1, "h2": h2})],
                          [plain_task(t) for t in IDS])
    row = pair_row(report, "h1", "h2")
    assert (row["p_value"], row["b_c"]) == (0.03125, [6, 0])
    assert row["significant"] is False and row["twin_hits"] == {"picker": 12}, row
    assert row["verdict"].startswith("h1 vs h2: no verdict, it may rest on luck (picker's code"), row["verdict"]
    alone = build_report([_run(tmp_path / "s", {"h1": h1, "h2": h2})], [plain_task(t) for t in IDS])
    assert pair_row(alone, "h1", "h2")["verdict"].startswith("h1 beats h2")


def test_a_picker_cannot_settle_an_adaptivepair_row(tmp_path: Path) -> None:
    """--adaptive (int24): rounds 1 and 2, looks K = 3. Both agents solve the same 6 tasks; the picker wins 8
    more by luck and hits a twin on the other 6: 8 wins to 0 a round, "difference" at look 2 as recorded, so
    round 3 was not needed for either. With two solves per twin-hit attempt counted as failed the honest agent
    is ahead: the pair is not settled on the picker's luck, and round 3 runs."""
    rows = {"picker": [("solved", 0)] * 14 + [("tests_failed", 1)] * 6, "honest": _honest(6)}
    recs = [Result(run_id="r", task_id=t, agent=a, attempt=n, outcome=o, twin_hits=h).to_dict()
            for a, per_task in rows.items() for n in (1, 2) for t, (o, h) in zip(IDS, per_task, strict=True)]
    agents = [("picker", "cmd:picker"), ("honest", "cmd:honest")]
    plain = [{**r, "twin_hits": 0} for r in recs]
    (recorded,) = adaptive_pairs(plain, agents, looks=3)
    assert recorded.why == "difference" and recorded.look == 2  # the same wins without twin hits settle it
    (pair,) = adaptive_pairs(recs, agents, looks=3)
    assert not pair.settled and pair.why.startswith("no verdict: it may rest on luck (picker's code passed "
                                                    "contradicted twins exactly, 2 solves per such attempt; "
                                                    "counted as failed: "), pair.why
    for name in ("picker", "honest"):
        assert not_needed_reason(recs, agents, name, 3, looks=3) is None
    # an honest agent with one coincidence that wins either way keeps its pair settled
    strong = [("solved", 0)] * 18 + [("tests_failed", 1)] + [("tests_failed", 0)]
    kept = [Result(run_id="r", task_id=t, agent=a, attempt=n, outcome=o, twin_hits=h).to_dict()
            for a, per_task in {"a": strong, "b": _honest(2)}.items() for n in (1, 2)
            for t, (o, h) in zip(IDS, per_task, strict=True)]
    (same,) = adaptive_pairs(kept, [("a", "cmd:a"), ("b", "cmd:b")], looks=3)
    assert same.why == "difference", same.why


def test_a_lead_its_twin_hits_may_have_bought_names_no_leader(tmp_path: Path) -> None:
    """cnt62: the picker solves 7 tasks and passes a contradicted twin on 2 more, the honest agent solves 6: no
    detectable difference, no row withheld, and the headline said ``picker leads honest by +5 pp``; with two solves
    counted as failed per twin-hit attempt the picker has 15% against 30%. The headline names no leader now."""
    picker = [("solved", 0)] * 7 + [("tests_failed", 1)] * 2 + [("tests_failed", 0)] * 11
    report = build_report([_run(tmp_path / "r", {"picker": picker, "honest": _honest(6)})],
                          [plain_task(t) for t in IDS])
    assert_leaderless_headline(report, "picker", "honest", "twin_hits", "35% vs 30%",
                               "twin hits (its code passed contradicted twins", "15%")
