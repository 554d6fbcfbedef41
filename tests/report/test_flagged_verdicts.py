"""sus60: a solve flagged ``suspicious`` counts solved (the flag a pattern list's hint, shown beside it), and a
verdict that would change were the flagged solves counted failed is withheld (docs/contracts.md §10), as one
resting on an agent's claims is. Before, a flagged solve counted unsolved everywhere (``records.counts_solved``):
a real fix that trips the list (``importlib.import_module(name)``, alt58) lost its solve, while a forger spells
past the list. Over run folders of hand-written result records (10 tasks, one attempt each)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.report_tasks import plain_task

from pytest_homefield.records import Result
from pytest_homefield.report import build_report, compute_report
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.run.session import fail_under_failures

IDS = [f"t{i}" for i in range(10)]


def _run(folder: Path, rows: dict[str, list[tuple[str, bool]]]) -> Path:
    """A run folder of :data:`IDS` × the agents of ``rows`` × 1 attempt: per agent, per task in order, its
    (outcome, flagged ``suspicious``)."""
    folder.mkdir()
    results = [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, outcome=o, suspicious=s,
                      suspicious_reason="dynamic import" if s else None)
               for a, outs in rows.items() for t, (o, s) in zip(IDS, outs, strict=True)]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "attempts": 1, "task_ids": IDS,
                                                  "agents": [{"name": a, "spec": a} for a in rows]}))
    return folder


FAILED = ("tests_failed", False)
SOLVED = ("solved", False)
FLAGGED = ("solved", True)


def test_a_comparison_won_on_flagged_solves_is_no_verdict(tmp_path: Path) -> None:
    """``flagger`` solves every task, each solve flagged; ``plain`` solves 2, unflagged. As recorded flagger beats
    plain (8 to 0, exact McNemar p=0.008); with the flagged solves counted failed plain leads 2 to 0, no
    detectable difference: the verdict rests on the flags, so there is none."""
    run = _run(tmp_path / "r", {"flagger": [FLAGGED] * 10, "plain": [SOLVED] * 2 + [FAILED] * 8})
    rep = compute_report([run], [plain_task(t) for t in IDS])
    flagger = rep.agents["flagger"]
    assert (flagger.pass_at_1, flagger.solved, flagger.flagged_solves, flagger.counted_pass_at_1) == (1.0, 10, 10, 0.0)
    (row,) = [c for c in rep.comparisons if c.test is not None]
    assert row.flagged == {"flagger": 10} and not row.significant, row
    assert row.verdict.startswith("flagger vs plain: no verdict, it rests on flagged solves (flagger's 10 solves "
                                  "flagged suspicious"), row.verdict
    assert row.counted_failed is not None and "no detectable difference" in row.counted_failed
    assert headline(rep).startswith("No verdict between flagger and plain (100% vs 20% pass@1): it rests on "
                                    "flagged solves"), headline(rep)
    # a pass/fail line has no "no verdict": --fail-under takes the flagged solves as failed
    report = build_report([run], [plain_task(t) for t in IDS])
    assert fail_under_failures(report, ["flagger=0.5"]) == [
        "flagger pass@1 1.00 rests on 10 solve(s) flagged suspicious: not passing 0.50"]
    assert report["comparisons"][0]["flagged"] == {"flagger": 10}


def test_a_verdict_that_no_flag_decides_stands(tmp_path: Path) -> None:
    """``fixer`` solves every task, one solve flagged (a real fix of a listed shape, alt58); ``plain`` none. The
    flagged solve counts solved (pass@1 100%, not 90%), the flag is shown, and the verdict, the same with it
    counted failed, stands."""
    run = _run(tmp_path / "r", {"fixer": [FLAGGED] + [SOLVED] * 9, "plain": [FAILED] * 10})
    rep: Report = compute_report([run], [plain_task(t) for t in IDS])
    fixer = rep.agents["fixer"]
    assert (fixer.pass_at_1, fixer.flagged_solves, fixer.counted_pass_at_1) == (1.0, 1, 0.9)
    (row,) = [c for c in rep.comparisons if c.test is not None]
    assert row.significant and row.flagged is None and row.counted_failed is None, row
    assert headline(rep).startswith("fixer beats plain by +100 pp pass@1"), headline(rep)
    assert [(f.task_id, f.reason) for f in rep.flagged] == [("t0", "dynamic import")]
    assert any("fixer: 1 attempt(s) scored solved but flagged suspicious are counted as solved" in n
               for n in rep.notes), rep.notes


def test_the_pass_a_fail_under_reads_counts_twin_hits_past_the_flagged_solves(tmp_path: Path) -> None:
    """fatk60: ``counted_pass_at_1`` (what ``--fail-under`` reads) counted the twin hits' lucky solves failed first,
    on the tasks the other agents solve least, then the flagged solves: where those were the same solves, the
    twin hits cost nothing. ``picker`` solves every task, t0 and t1 flagged, t9 with a twin hit (2 solves counted
    failed); ``other`` solves t2..t9. The picks fell on t0 and t1, already flagged: 80%, and ``picker=0.7`` passed.
    Counted as the adaptive looks count them (flagged first, then the picks among the rest): 60%."""
    run = _run(tmp_path / "r", {"picker": [FLAGGED] * 2 + [SOLVED] * 8, "other": [FAILED] * 2 + [SOLVED] * 8})
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    rows = [{**r, "twin_hits": 1} if (r["agent"], r["task_id"]) == ("picker", "t9") else r for r in rows]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = compute_report([run], [plain_task(t) for t in IDS])
    picker = rep.agents["picker"]
    assert (picker.pass_at_1, picker.flagged_solves) == (1.0, 2)
    assert picker.counted_pass_at_1 == 0.6, picker
    report = build_report([run], [plain_task(t) for t in IDS])
    assert fail_under_failures(report, ["picker=0.7"]), "a 60% counted pass@1 passed a 0.7 gate"


def test_a_verdict_resting_on_flagged_solves_and_twin_hits_together_is_no_verdict(tmp_path: Path) -> None:
    """fatk60: the report read each doubt apart (the twin hits' lucky solves counted failed, then the flagged
    solves), never both, while the adaptive looks count an agent's doubts together. ``picker`` wins t0..t7 over
    ``plain`` (both solve t8, t9): 8 to 0, p=0.008. Its t0 and t1 are flagged and t9 had a twin hit (2 solves counted
    failed, on the tasks ``plain`` solves least: t0, t1). Either reading alone leaves 6 to 0 (p=0.031, 'picker beats
    plain'); both, the picks among the solves the flags leave, 4 to 0 (p=0.125): the verdict rests on them."""
    run = _run(tmp_path / "r", {"picker": [FLAGGED] * 2 + [SOLVED] * 8, "plain": [FAILED] * 8 + [SOLVED] * 2})
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    rows = [{**r, "twin_hits": 1} if (r["agent"], r["task_id"]) == ("picker", "t9") else r for r in rows]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = compute_report([run], [plain_task(t) for t in IDS])
    assert rep.agents["picker"].counted_pass_at_1 == 0.6
    (row,) = [c for c in rep.comparisons if c.test is not None]
    assert not row.significant and row.flagged == {"picker": 2}, row
    assert row.verdict.startswith("picker vs plain: no verdict, it rests on flagged solves (picker's 2 solves"), row
    assert headline(rep).startswith("No verdict between picker and plain"), headline(rep)


def test_a_lead_that_rests_on_flagged_solves_names_no_leader(tmp_path: Path) -> None:
    """cnt62: ``flagger`` solves 4 tasks, 2 of them flagged; ``plain`` solves 3. No detectable difference either way,
    so no row is withheld, and the headline said ``No agent is detectably better: flagger leads plain by +10 pp``:
    with the flagged solves counted failed flagger has 20% against plain's 30%, so the lead is the flags'. It names
    no leader now, and says what the order rests on; a lead that stands with them counted failed is still named."""
    run = _run(tmp_path / "r", {"flagger": [FLAGGED] * 2 + [SOLVED] * 2 + [FAILED] * 6,
                                "plain": [FAILED] * 5 + [SOLVED] * 3 + [FAILED] * 2})
    rep = compute_report([run], [plain_task(t) for t in IDS])
    (row,) = [c for c in rep.comparisons if c.test is not None]
    assert not row.significant and row.flagged is None, row  # no verdict to withhold: the lead is all there is
    line = headline(rep)
    assert "leads" not in line, line
    assert line.startswith("No agent is detectably better, and the order of flagger and plain (40% vs 30% pass@1, "
                           "p="), line
    assert ("rests on flagger's flagged solves (2 solves flagged suspicious by a pattern list that decides no "
            "count): counted as failed, they leave flagger at 20%") in line, line

    stands = _run(tmp_path / "s", {"flagger": [FLAGGED] + [SOLVED] * 4 + [FAILED] * 5,
                                   "plain": [FAILED] * 5 + [SOLVED] * 3 + [FAILED] * 2})
    rep = compute_report([stands], [plain_task(t) for t in IDS])
    assert headline(rep).startswith("No agent is detectably better: flagger leads plain by +20 pp pass@1 "
                                    "(50% vs 30%"), headline(rep)


def test_a_lead_the_flags_only_tie_names_no_leader(tmp_path: Path) -> None:
    """A lead of one solve, that solve flagged: counted failed, the two tie, so neither leads."""
    run = _run(tmp_path / "r", {"flagger": [FLAGGED] + [SOLVED] * 2 + [FAILED] * 7,
                                "plain": [FAILED] * 8 + [SOLVED] * 2})
    line = headline(compute_report([run], [plain_task(t) for t in IDS]))
    assert "leads" not in line and "the order of flagger and plain (30% vs 20% pass@1" in line, line
    assert "they leave flagger at 20%" in line, line
