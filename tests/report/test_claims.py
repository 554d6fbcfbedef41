"""A verdict that rests on an agent's word is no verdict (atk20 F2, docs/contracts.md §10): an agent that
claims a rate limit whenever it believes it failed has each such attempt tried again by ``--resume``,
and so reports the pass@1 of several tries. Each comparison is computed again with those attempts counted
as failed; where the verdict changes, the report gives none."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.report_tasks import assert_leaderless_headline, pair_row, plain_task, write_run

from pytest_homefield.records import Result
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain
from pytest_homefield.report.adaptive import adaptive_pairs, not_needed_reason
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.run.session import fail_under_failures

IDS = [f"t{i:02d}" for i in range(20)]


def _run(folder: Path, rows: dict[str, list[list[str]]]) -> Path:
    """A run of :data:`IDS` × 1 attempt: ``rows`` {agent: per task, its recorded outcomes in order, every
    ``rate_limited`` a claim that ``--resume`` tried again, the last one scored}."""
    return write_run(folder, [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, outcome=o,
                                     claimed=o == "rate_limited", solved=o == "solved")
                              for a, per_task in rows.items() for t, outs in zip(IDS, per_task, strict=True)
                              for o in outs], IDS)


def _liar(first_try: int, retried: int) -> list[list[str]]:
    """Solves ``first_try`` tasks at once; on every other task it claims a rate limit, and of those it
    solves ``retried`` on a later try (the rest: two claims, then scored as failed)."""
    out = [["solved"] for _ in range(first_try)]
    out += [["rate_limited", "solved"] for _ in range(retried)]
    out += [["rate_limited", "rate_limited", "agent_error"] for _ in range(len(IDS) - first_try - retried)]
    return out


def _honest(solved: int) -> list[list[str]]:
    return [["solved"] if i < solved else ["tests_failed"] for i in range(len(IDS))]


def test_a_liar_cannot_buy_beats(tmp_path: Path) -> None:
    """Both agents solve the same 6 tasks at the first try; the liar claimed rate limits on the 14 others
    and solved 8 of them on a retry: 14/20 against 6/20, 8 wins to 0 (exact McNemar p=0.0078), which said
    "liar beats honest". Counting its 14 retried attempts as failed, the two are equal."""
    report = build_report([_run(tmp_path / "r", {"liar": _liar(6, 8), "honest": _honest(6)})],
                          [plain_task(t) for t in IDS])
    assert report["agents"]["liar"]["pass_at_1"] == 0.7
    row = pair_row(report, "liar", "honest")
    assert row["significant"] is False and row["at_their_word"] == {"liar": 14}, row
    assert row["verdict"].startswith("liar vs honest: no verdict, it rests on liar's word (14 attempts tried "
                                     "again after claims of a rate limit or an outage"), row["verdict"]
    assert "With them counted as failed: liar vs honest: no detectable difference" in row["verdict"]
    assert row["counted_failed"].startswith("liar vs honest: no detectable difference")
    assert (row["p_value"], row["b_c"]) == (0.007812, [8, 0])  # the numbers stay those recorded
    (note,) = [n for n in report["notes"] if "tried again" in n]
    assert "Counting them as failed, its pass@1 is 30%." in note
    text = headline(Report.from_dict(report))
    assert text.startswith("No verdict between liar and honest (70% vs 30% pass@1): it rests on liar's word"), text
    label = "14 attempts tried again at its word: counted as failed, pass@1 30%"
    assert report["agents"]["liar"]["at_its_word"] == label and "at_its_word" not in report["agents"]["honest"]
    board = render_text_plain(report, verbose=False)
    assert "70%*" in board and f"liar pass@1 70%*: {label}" in board, board
    for doc in (render_markdown(report), render_html(report)):
        assert f"% ({label})" in doc
    assert fail_under_failures(report, ["0.5"]) == [f"liar pass@1 0.70 rests on its word ({label}): not passing 0.50",
                                                    "honest pass@1 0.30 is below 0.50"]
    assert fail_under_failures(report, ["0.25"]) == []


def test_a_liar_cannot_buy_no_difference(tmp_path: Path) -> None:
    """The honest agent solves 12; the liar 4 at the first try and, re-rolling its 16 failures, 8 more: 12
    each, "no detectable difference", where counting its retries as failed says the honest agent wins."""
    report = build_report([_run(tmp_path / "r", {"liar": _liar(4, 8), "honest": _honest(12)})],
                          [plain_task(t) for t in IDS])
    row = pair_row(report, "liar", "honest")
    assert row["at_their_word"] == {"liar": 16} and "no verdict" in row["verdict"], row
    assert row["counted_failed"].startswith("honest beats liar"), row["counted_failed"]


def test_claims_that_change_nothing_leave_the_verdict(tmp_path: Path) -> None:
    """An honest agent with two real rate limits that beats a weak one either way keeps its verdict; an
    agent without claims has no key; the note still names the retries."""
    strong = [["rate_limited", "solved"], ["rate_limited", "tests_failed"]] + [["solved"]] * 16 + [["tests_failed"]] * 2
    report = build_report([_run(tmp_path / "r", {"strong": strong, "weak": _honest(2)})], [plain_task(t) for t in IDS])
    row = pair_row(report, "strong", "weak")
    assert row["significant"] is True and row["verdict"].startswith("strong beats weak"), row
    assert "at_their_word" not in row and "counted_failed" not in row
    (note,) = [n for n in report["notes"] if "tried again" in n]
    assert note.startswith("strong: 2 attempts were tried again after 2 claims of its own") and "is 80%." in note
    plain = build_report([_run(tmp_path / "p", {"a": _honest(17), "weak": _honest(2)})], [plain_task(t) for t in IDS])
    assert "at_their_word" not in pair_row(plain, "a", "weak") and not [n for n in plain["notes"] if "tried again" in n]


def test_the_gate_counts_a_re_roll_as_failed(tmp_path: Path) -> None:
    """The baseline solved 14 of 20; the candidate solves 6 at the first try and re-rolls its other 14
    with claimed rate limits to 14 of 20: "not worse" on main, though without the claims it loses 8 tasks
    and none back (one-sided exact p=0.0039)."""
    from pytest_homefield.report.gate import worse_than
    base = _run(tmp_path / "base", {"x": _honest(14)})
    cand = _run(tmp_path / "cand", {"x": _liar(6, 8)})
    (g,) = worse_than([cand], base)
    assert (g.candidate, g.worse, g.retried) == (0.3, True, 14), g
    assert ("14 attempts tried again after its own claims (a rate limit or an outage homefield cannot check) or "
            "after an interrupted try, counted as failed") in g.text and g.text.endswith("WORSE: the gate fails")
    honest = _run(tmp_path / "cand2", {"x": _honest(14)})
    (h,) = worse_than([honest], base)
    assert (h.worse, h.retried) == (False, 0) and "tried again" not in h.text


def _rounds(rows: dict[str, list[list[list[str]]]]) -> list[dict]:
    """Records of :data:`IDS` × len(rounds) attempts: ``rows`` {agent: per round, per task, its outcomes in
    order, every ``rate_limited`` a claim tried again}."""
    return [Result(run_id="r", task_id=t, agent=a, attempt=n, outcome=o, claimed=o == "rate_limited",
                   solved=o == "solved").to_dict()
            for a, rounds in rows.items() for n, per_task in enumerate(rounds, 1)
            for t, outs in zip(IDS, per_task, strict=True) for o in outs]


def test_a_liar_cannot_settle_an_adaptivepair_row(tmp_path: Path) -> None:
    """--adaptive (atk23): rounds 1 and 2 as in test_a_liar_cannot_buy_beats, looks K = 3. As recorded the
    pair was settled at look 2 ("difference": +40 pts over 40 attempt pairs, repeated p=0.0007), so round 3
    was not needed for either agent, and the report's note said so; counted as failed, the two agents are
    equal (futile). The pair is not settled on the liar's word: round 3 runs and the note gives no verdict."""
    rows = {"liar": [_liar(6, 8), _liar(6, 8)], "honest": [_honest(6), _honest(6)]}
    recs = _rounds(rows)
    agents = [("liar", "cmd:liar"), ("honest", "cmd:honest")]
    for name in ("liar", "honest"):
        assert not_needed_reason(recs, agents, name, 3, looks=3) is None
    (pair,) = adaptive_pairs(recs, agents, looks=3)
    assert not pair.settled and pair.why.startswith("no verdict: it rests on liar's word"), pair.why
    assert "counted as failed: futility" in pair.why
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (folder / "meta.json").write_text(json.dumps({
        "run_id": "r", "attempts": 3, "task_ids": IDS, "adaptive": {"looks": 3, "alpha": 0.05, "margin": 0.1},
        "agents": [{"name": a, "spec": f"cmd:{a}"} for a in rows]}))
    report = build_report([folder], [plain_task(t) for t in IDS])
    (note,) = [n for n in report["notes"] if n.startswith("adaptive: liar vs honest")]
    assert "no verdict: it rests on liar's word" in note and "(difference)" not in note, note
    # the honest agent's own claims, if any, are read the same way; a pair with no claim is as before
    fair = _rounds({"a": [_honest(16), _honest(16)], "b": [_honest(2), _honest(2)]})
    (plain,) = adaptive_pairs(fair, [("a", "cmd:a"), ("b", "cmd:b")], looks=3)
    assert plain.why == "difference"
    # claims that change nothing leave the pair settled: a strong agent whose retried attempts all failed
    strong = [["solved"]] * 18 + [["rate_limited", "tests_failed"]] * 2
    kept = _rounds({"a": [strong, strong], "b": [_honest(2), _honest(2)]})
    (same,) = adaptive_pairs(kept, [("a", "cmd:a"), ("b", "cmd:b")], looks=3)
    assert same.why == "difference", same.why


def test_a_liar_cannot_buy_a_verdict_between_two_others(tmp_path: Path) -> None:
    """atk23: the Holm family holds every pair of candidates, so a liar's re-rolled wins (liar vs h2 p=0.0001,
    liar vs h1 p=0.008) took Holm's first two steps and left "h1 beats h2" (6 wins to 0, p=0.031) at adjusted
    p=0.031; with the liar's claimed retries counted as failed, that pair is adjusted to p=0.094, no verdict.
    The pair names neither liar, yet its verdict rests on the liar's word."""
    liar = _liar(0, 14)
    h1 = [["solved"] if i < 6 else ["tests_failed"] for i in range(len(IDS))]
    h2 = [["tests_failed"] for _ in IDS]
    report = build_report([_run(tmp_path / "r", {"liar": liar, "h1": h1, "h2": h2})], [plain_task(t) for t in IDS])
    row = pair_row(report, "h1", "h2")
    assert (row["p_value"], row["b_c"]) == (0.03125, [6, 0])  # the numbers stay those recorded
    assert row["significant"] is False and row["at_their_word"] == {"liar": 20}, row
    assert row["verdict"].startswith("h1 vs h2: no verdict, it rests on liar's word"), row["verdict"]
    assert "no detectable difference after Holm adjustment" in row["counted_failed"]
    # without the liar the same two agents keep their verdict
    alone = build_report([_run(tmp_path / "s", {"h1": h1, "h2": h2})], [plain_task(t) for t in IDS])
    assert pair_row(alone, "h1", "h2")["verdict"].startswith("h1 beats h2")


def test_tries_an_interruption_cut_short_cannot_buy_beats(tmp_path: Path) -> None:
    """atk23 F3: an agent that hangs on the attempts it misses has mostly those in flight when a CI time limit
    interrupts the session; they leave no result line and ``--resume`` makes them again (17 of 24 re-rolled
    to 71% against an honest 17%, "hanger beats honest", nothing said). The run's ``tries.jsonl`` keeps each
    try's start: a start without an end is a try cut short, counted as a claimed retry is."""
    hanger = [["solved"] for _ in range(6)] + [["solved"] for _ in range(8)] + [["tests_failed"] for _ in range(6)]
    folder = _run(tmp_path / "r", {"hanger": hanger, "honest": _honest(6)})
    starts = [{"task_id": t, "agent": "hanger", "attempt": 1, "event": "start"} for t in IDS[6:14]]  # cut short
    tries = starts + [{"task_id": t, "agent": a, "attempt": 1, "event": e} for a in ("hanger", "honest")
                      for t in IDS for e in ("start", "end")]
    (folder / "tries.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tries))
    report = build_report([folder], [plain_task(t) for t in IDS])
    assert report["agents"]["hanger"]["pass_at_1"] == 0.7
    row = pair_row(report, "hanger", "honest")
    assert row["significant"] is False and row["at_their_word"] == {"hanger": 8}, row
    assert row["verdict"].startswith("hanger vs honest: no verdict, it rests on hanger's retried attempts (8 tried "
                                     "again after its claims of a rate limit or an outage, or after a try an "
                                     "interrupted session cut short"), row["verdict"]
    assert report["agents"]["hanger"]["at_its_word"] == ("8 attempts tried again at its word or after an interrupted "
                                                         "try: counted as failed, pass@1 30%")
    (note,) = [n for n in report["notes"] if n.startswith("hanger: 8 attempts were tried again")]
    assert "8 tries an interrupted session cut short" in note, note
    assert "at_its_word" not in report["agents"]["honest"]
    from pytest_homefield.report.gate import worse_than

    (line,) = worse_than([folder], _run(tmp_path / "base", {"hanger": _honest(6)}))
    assert line.candidate == 0.3 and line.retried == 8, line


def test_tries_cut_short_cannot_settle_an_adaptivepair_row(tmp_path: Path) -> None:
    """--adaptive (int24): the hanger of test_tries_an_interruption_cut_short_cannot_buy_beats over rounds 1
    and 2, looks K = 3: its 8 wins a round all came on tries made again after an interrupted session cut the
    first short. As recorded the pair settles at look 2 ("difference"), round 3 not needed for either; with
    those attempts counted as failed the two agents tie. The pair is not settled, and round 3 runs."""
    hanger = [["solved"]] * 14 + [["tests_failed"]] * 6
    recs = _rounds({"hanger": [hanger, hanger], "honest": [_honest(6), _honest(6)]})
    agents = [("hanger", "cmd:hanger"), ("honest", "cmd:honest")]
    cut = {(t, "hanger", n) for t in IDS[6:14] for n in (1, 2)}
    (recorded,) = adaptive_pairs(recs, agents, looks=3)
    assert recorded.why == "difference" and recorded.look == 2  # as on main, reading the results alone
    (pair,) = adaptive_pairs(recs, agents, looks=3, cut=cut)
    assert not pair.settled and pair.why.startswith("no verdict: it rests on hanger's retried attempts (tried again "
                                                    "after its claims or after a try an interrupted session cut "
                                                    "short; counted as failed: futility"), pair.why
    for name in ("hanger", "honest"):
        assert not_needed_reason(recs, agents, name, 3, looks=3, cut=cut) is None
    # through the run folder: the report reads tries.jsonl, and a session deciding during its run reads only
    # the tries earlier sessions cut short (its own ends may be on their way)
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (folder / "meta.json").write_text(json.dumps({
        "run_id": "r", "attempts": 3, "task_ids": IDS, "adaptive": {"looks": 3, "alpha": 0.05, "margin": 0.1},
        "agents": [{"name": a, "spec": f"cmd:{a}"} for a, _ in agents]}))
    earlier = "2026-01-01T00:00:00+00:00"
    (folder / "tries.jsonl").write_text("".join(
        json.dumps({"task_id": t, "agent": a, "attempt": n, "event": "start", "session": earlier}) + "\n"
        for t, a, n in sorted(cut)))
    report = build_report([folder], [plain_task(t) for t in IDS])
    (note,) = [n for n in report["notes"] if n.startswith("adaptive: hanger vs honest")]
    assert "no verdict: it rests on hanger's retried attempts" in note and "(difference)" not in note, note
    from pytest_homefield.report.finish import RUN_REPORTS
    assert RUN_REPORTS.not_needed(recs, agents, "honest", 3, looks=3, alpha=0.05, margin=0.1, run_dir=folder,
                                  session="2026-02-02T00:00:00+00:00") is None
    assert RUN_REPORTS.not_needed(recs, agents, "honest", 3, looks=3, alpha=0.05, margin=0.1, run_dir=folder,
                                  session=earlier).startswith("settled at look 2: hanger vs honest (difference)")


def test_a_lead_bought_by_re_rolls_names_no_leader(tmp_path: Path) -> None:
    """cnt62: the liar solves 4 at the first try and 3 more after claimed rate limits (7 of 20), the honest agent 5:
    no detectable difference, no row withheld, and the headline said ``liar leads honest by +10 pp``; with its
    retried attempts counted as failed the liar has 20% against 25%. The headline names no leader now."""
    report = build_report([_run(tmp_path / "r", {"liar": _liar(4, 3), "honest": _honest(5)})],
                          [plain_task(t) for t in IDS])
    assert_leaderless_headline(report, "liar", "honest", "at_their_word", "35% vs 25%",
                               "retried attempts (tried again after its own claims", "20%")
