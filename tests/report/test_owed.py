"""Every attempt a run selected counts, recorded or not (atk11 G2, G1): an agent that stops its own run
(a claimed rate limit, a reported cost that spends its budget share) is ``incomplete``, fails
``--fail-under`` and is compared by the gate on the baseline's tasks, its missing attempts failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.report_tasks import plain_task

from pytest_homefield.records import Result
from pytest_homefield.report import build_report
from pytest_homefield.report.gate import gate_summary, worse_than
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.run.session import fail_under_failures

IDS = [f"t{i}" for i in range(8)]


def _run(folder: Path, agents: list[str], rows: list[tuple[str, str, str]]) -> Path:
    """A run folder that selected :data:`IDS` × ``agents`` × 1 attempt and recorded ``rows`` (task, agent,
    outcome): the rest were skipped, never recorded, as a stopped agent's are."""
    folder.mkdir()
    results = [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, outcome=o) for t, a, o in rows]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "attempts": 1, "task_ids": IDS,
                                                  "agents": [{"name": a, "spec": a} for a in agents]}))
    return folder


def test_an_agent_that_stopped_while_ahead_is_incomplete_and_fails_fail_under(tmp_path: Path) -> None:
    """atk11 G2, measured on main: ``ahead`` solved its first task and reported ``{"cost_usd": 1e300}`` on
    the next; its 6 other attempts were skipped unrecorded: ``ahead solves 50%``, no ``incomplete`` mark,
    and ``--fail-under 0.4`` passed."""
    run = _run(tmp_path / "g2", ["ahead"], [("t0", "ahead", "solved"), ("t1", "ahead", "agent_error")])
    report = build_report([run], [plain_task(t) for t in IDS])
    ahead = report["agents"]["ahead"]
    assert (ahead["pass_at_1"], ahead.get("incomplete")) == (0.5, "incomplete: 2 of 8 scored")
    assert fail_under_failures(report, ["0.4"]) == [
        "ahead pass@1 0.50 is not over every attempt (incomplete: 2 of 8 scored): not passing 0.40"]
    # the headline's rate says so too (atk23: it gave each pass@1 without the label)
    assert headline(Report.from_dict(report)).startswith(
        "ahead solves 50% of tasks (95% CI 9–91%; ahead incomplete: 2 of 8 scored); no other agent"), \
        headline(Report.from_dict(report))
    pair = _run(tmp_path / "pair", ["ahead", "other"], [("t0", "ahead", "solved"), ("t1", "ahead", "agent_error")]
                + [(t, "other", "tests_failed") for t in IDS])
    line = headline(Report.from_dict(build_report([pair], [plain_task(t) for t in IDS])))
    assert "(50% vs 0%; ahead incomplete: 2 of 8 scored" in line, line
    done = _run(tmp_path / "done", ["ahead"], [(t, "ahead", "solved") for t in IDS])
    assert "incomplete" not in build_report([done], [plain_task(t) for t in IDS])["agents"]["ahead"]


def test_the_gate_counts_a_candidates_unrun_attempts_as_failed(tmp_path: Path) -> None:
    """atk11 G1, measured on main: the candidate scored ``empty_patch`` twice, then claimed a rate limit:
    its 5 later attempts were never recorded, the gate compared 2 shared tasks, "too few tasks … the gate
    cannot fail on them", ``gate: pass``."""
    base = _run(tmp_path / "base-x", ["x"], [(t, "x", "solved") for t in IDS])
    cand = _run(tmp_path / "cand-x2", ["x"], [("t0", "x", "empty_patch"), ("t1", "x", "empty_patch"),
                                              ("t2", "x", "rate_limited")])
    (g,) = worse_than([cand], base)
    assert (g.n_tasks, g.candidate, g.worse) == (8, 0.0, True), g
    assert g.unscored == 6
    assert "6 unscored attempts counted as failed" in g.text and "WORSE: the gate fails" in g.text
    assert gate_summary([g]).startswith("gate: fail (x worse than base-x")


def test_the_gate_counts_a_flagged_solve_failed(tmp_path: Path) -> None:
    """ratk48: the gate counted a solve flagged ``suspicious`` solved: a candidate whose every solve was flagged
    read ``1.00 vs 1.00``, ``gate: pass``, exit 0 and a passed ``homefield``/``gate`` test case in the JUnit XML.
    The report counts it solved since sus60 (the flag a hint, a verdict resting on it withheld); a pass/fail gate
    cannot withhold itself, so it counts the candidate's flagged solves failed, as it counts claimed retries."""
    base = _run(tmp_path / "base-f", ["x"], [(t, "x", "solved") for t in IDS])
    cand = _run(tmp_path / "cand-f", ["x"], [(t, "x", "solved") for t in IDS])
    rows = [{**json.loads(line), "suspicious": True, "suspicious_reason": "pytest hooks"}
            for line in (cand / "results.jsonl").read_text().splitlines()]
    (cand / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert build_report([cand], [plain_task(t) for t in IDS])["agents"]["x"]["pass_at_1"] == 1.0
    (g,) = worse_than([cand], base)
    assert (g.candidate, g.baseline, g.worse, g.flagged) == (0.0, 1.0, True, 8), g
    assert gate_summary([g]).startswith("gate: fail (x worse than base-f")
    assert "; 8 solves flagged suspicious counted as failed (a pattern list's hint" in g.text, g.text


def test_the_gate_counts_the_baselines_flagged_solves_solved(tmp_path: Path) -> None:
    """fatk60: the gate counted a solve flagged ``suspicious`` failed on both sides. The baseline's flagged solves
    are solves (its own report: pass@1 100%, sus60), and counting them failed lowers the bar a candidate must clear:
    a candidate solving none of the 8 tasks the baseline solved (every solve of the baseline a real fix of a listed
    shape, ``importlib.import_module(name)``) read ``0.00 vs 0.00``, ``gate: pass``. The reading a pass must
    survive counts the candidate's flagged solves failed and the baseline's as its report counts them."""
    base = _run(tmp_path / "base-g", ["x"], [(t, "x", "solved") for t in IDS])
    rows = [{**json.loads(line), "suspicious": True, "suspicious_reason": "dynamic import"}
            for line in (base / "results.jsonl").read_text().splitlines()]
    (base / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert build_report([base], [plain_task(t) for t in IDS])["agents"]["x"]["pass_at_1"] == 1.0
    cand = _run(tmp_path / "cand-g", ["x"], [(t, "x", "tests_failed") for t in IDS])
    (g,) = worse_than([cand], base)
    assert (g.candidate, g.baseline, g.worse) == (0.0, 1.0, True), g
    assert gate_summary([g]).startswith("gate: fail (x worse than base-g")


def test_unsolved_by_all_counts_a_flagged_solve_as_the_rates_do(tmp_path: Path) -> None:
    """ratk48: a task whose only solve was flagged ``suspicious`` (counted unsolved in every rate then) was left
    out of "Unsolved by every agent". The list counts as the rates count: since sus60 a flagged solve counts
    solved (the flag a hint), so such a task is solved, and a task with no solve at all is listed."""
    run = _run(tmp_path / "u", ["x"], [("t0", "x", "solved"), ("t1", "x", "tests_failed")])
    rows = [{**json.loads(line), "suspicious": True} for line in (run / "results.jsonl").read_text().splitlines()]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = build_report([run], [plain_task(t) for t in IDS])
    assert report["unsolved_by_all"] == ["t1"]
    assert report["agents"]["x"]["pass_at_1"] == 0.5


def _claimed_then(folder: Path, rows: list[tuple[str, str, list[str]]]) -> Path:
    """A run folder of :data:`IDS` × the agents of ``rows`` × 1 attempt whose results hold, per (task,
    agent), the claimed rate limits ``--resume`` retried and then the scored outcome (``rows``: task, agent,
    outcomes in order, the last one scored)."""
    folder.mkdir()
    lines = [Result(run_id=folder.name, task_id=t, agent=a, attempt=1, outcome=o, claimed=o == "rate_limited")
             for t, a, outs in rows for o in outs]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in lines))
    agents = sorted({a for _, a, _ in rows})
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "attempts": 1, "task_ids": IDS,
                                                  "agents": [{"name": a, "spec": a} for a in agents]}))
    return folder


@pytest.mark.usefixtures("cli_spelling")
def test_attempts_tried_again_at_the_agents_word_are_named(tmp_path: Path) -> None:
    """atk20 F2, measured on main with the demo (8 tasks × 3 attempts, ``--resume`` until complete): a
    ``cmd:`` agent that fixes a task with chance 1/3 and prints ``{"outcome": "rate_limited"}`` whenever it
    did not got 16 of 24 solved (67%) against 9 of 24 (38%) for the same agent without the claims, and
    the report said nothing of the 22 claims behind it: every attempt ended scored, complete."""
    rows = [(t, "reroll", ["rate_limited", "rate_limited", "solved"]) for t in IDS[:5]]
    rows += [(t, "reroll", ["rate_limited", "solved"]) for t in IDS[5:6]]
    rows += [(t, "reroll", ["solved"]) for t in IDS[6:7]]
    rows += [(t, "reroll", ["rate_limited", "rate_limited", "agent_error"]) for t in IDS[7:]]
    rows += [(t, "honest", ["solved" if i < 3 else "tests_failed"]) for i, t in enumerate(IDS)]
    report = build_report([_claimed_then(tmp_path / "f2", rows)], [plain_task(t) for t in IDS])
    assert report["agents"]["reroll"]["pass_at_1"] == 7 / 8 and "incomplete" not in report["agents"]["reroll"]
    said = [n for n in report["notes"] if "tried again" in n]
    assert said == ["reroll: 7 attempts were tried again after 13 claims of its own (a rate limit or an outage "
                    "its output reported, which homefield cannot check); 6 of its 7 solved attempts came on such "
                    "a retry. Each claim buys an attempt another try (up to --max-retries), so its pass@1 may be "
                    "that of several tries. Counting them as failed, its pass@1 is 12%. A comparison whose verdict "
                    "rests on these claims gives none."], report["notes"]
