"""The report's answer on top, the failure kinds, the first error per agent and the HTML without empty
panels (issues 33, 35). Small synthetic runs, no test process."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_homefield.records import Result, Task
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain
from pytest_homefield.report.headline import headline
from pytest_homefield.report.kinds import failure_kind
from pytest_homefield.report.model import Report


def _task(tid: str, subject: str = "") -> Task:
    return Task(id=tid, commit=tid * 3, parent="0" * 40, committed_at="2025-01-01T00:00:00+00:00",
                authored_at="2025-01-01T00:00:00+00:00", mode="commit", subject=subject or f"task {tid}",
                message="m", prompt=subject or f"task {tid}", source_files=["src/m.py"],
                test_files=["tests/test_m.py"], test_patch="",
                gold_patch="", FAIL_TO_PASS=["tests/test_m.py::test_a"], PASS_TO_PASS=["tests/test_m.py::test_b"],
                well_specified=True, languages=["python"])


def _run(path: Path, agents: dict[str, str], outcomes: dict[str, list[str]], *, cost: float | None = None,
         errors: dict[tuple[str, int], str] | None = None, test_sandbox: dict[str, str] | None = None) -> Path:
    """A run folder: ``agents`` name → spec, ``outcomes`` agent → one outcome per task (t00, t01, …)."""
    path.mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps({
        "run_id": path.name, "created_at": "2026-12-01T10:00:00+00:00", "attempts": 1,
        "agents": [{"name": n, "spec": s} for n, s in agents.items()]}))
    lines = []
    for agent, outs in outcomes.items():
        for i, o in enumerate(outs):
            err = (errors or {}).get((agent, i))
            lines.append({"schema_version": 1, "run_id": path.name, "task_id": f"t{i:02d}", "agent": agent,
                          "attempt": 1, "outcome": o, "cost_usd": cost if agents[agent].startswith("cmd:") else None,
                          "wall_s": 30.0 if agents[agent].startswith("cmd:") else 0.01, "error": err,
                          **({"sandbox": "none", "test_sandbox": test_sandbox[agent]}
                             if test_sandbox and o not in ("empty_patch",) else {})})
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _report(tmp_path: Path, agents: dict[str, str], outcomes: dict[str, list[str]], **kw: Any) -> dict[str, Any]:
    n = max(len(v) for v in outcomes.values())
    return build_report([_run(tmp_path / "r", agents, outcomes, **kw)], [_task(f"t{i:02d}") for i in range(n)])


def test_who_beats_whom_with_p_and_family_the_sanity_line_size_and_cost(tmp_path: Path) -> None:
    n = 24
    rep = _report(tmp_path, {"oracle": "oracle", "noop": "noop", "alpha": "cmd:./a", "bravo": "cmd:./b",
                             "charlie": "cmd:./c"},
                  {"oracle": ["solved"] * n, "noop": ["empty_patch"] * n,
                   "alpha": ["solved"] * 20 + ["tests_failed"] * 4,
                   "bravo": ["tests_failed"] * 20 + ["solved"] * 4, "charlie": ["tests_failed"] * 22 + ["solved"] * 2},
                  cost=0.25)
    line = headline(Report.from_dict(rep))
    assert re.fullmatch(r"alpha beats bravo by \+67 pp pass@1 \(83% vs 17%, p=[<0-9.]+, Holm-adjusted over 3 "
                        r"pairs\), and 1 more of the 2 others; reference agents as expected \(oracle 100%, noop 0%\); "
                        r"24 tasks × 1 attempt; cost known for 3 of 5 agents \(reported by the agent\)\.", line), line
    # on top of every format, under the title
    assert render_text_plain(rep).splitlines()[1].startswith("alpha beats bravo by +67 pp")
    assert render_markdown(rep).splitlines()[2].startswith("**alpha beats bravo by +67 pp")
    html = render_html(rep)
    assert html.index('id="headline"') < html.index("<h2>Leaderboard</h2>")


def test_no_detectable_gap_a_lone_agent_and_a_broken_oracle(tmp_path: Path) -> None:
    rep = _report(tmp_path / "a", {"alpha": "cmd:./a", "bravo": "cmd:./b"},
                  {"alpha": ["solved", "tests_failed", "solved", "solved"],
                   "bravo": ["solved", "solved", "tests_failed", "tests_failed"]})
    assert headline(Report.from_dict(rep)).startswith("No agent is detectably better: alpha leads bravo by +25 pp "
                                                      "pass@1 (75% vs 50%, p=1)")
    assert headline(Report.from_dict(rep)).endswith("; 4 tasks × 1 attempt; no cost data.")
    # equal rates are a tie, not a lead of 0 pp (more-itertools: every attack agent at 0%)
    rep = _report(tmp_path / "t", {"alpha": "cmd:./a", "bravo": "cmd:./b"},
                  {"alpha": ["tests_failed", "solved"], "bravo": ["solved", "tests_failed"]})
    assert headline(Report.from_dict(rep)).startswith("No agent is detectably better: alpha and bravo tie at 50% "
                                                      "pass@1 (p=1)")
    rep = _report(tmp_path / "b", {"oracle": "oracle", "solo": "cmd:./s"},
                  {"oracle": ["solved", "tests_failed"], "solo": ["solved", "solved"]})
    line = headline(Report.from_dict(rep))
    assert line.startswith("solo solves 100% of tasks (95% CI ")
    assert "no other agent to compare with; check the tasks: oracle solves 50%, expected 100%;" in line


def test_broke_existing_tests_apart_from_did_not_fix(tmp_path: Path) -> None:
    def r(outcome: str, error: str | None) -> Result:
        return Result(run_id="r", task_id="t", agent="a", attempt=1, outcome=outcome, error=error)

    assert failure_kind(r("tests_failed", "2/2 FAIL_TO_PASS did not pass")) == "did_not_fix"
    assert failure_kind(r("tests_failed", "2/2 FAIL_TO_PASS did not pass; 3/3 PASS_TO_PASS broke")) \
        == "broke_existing_tests"
    assert failure_kind(r("tests_failed", "the test process did not finish with this change (exit 3); it does on "
                                          "the untouched parent with the hidden tests")) == "broke_existing_tests"
    assert failure_kind(r("regression", "1/1 PASS_TO_PASS broke")) == "broke_existing_tests"
    assert failure_kind(r("timeout", None)) is None and failure_kind(r("solved", None)) is None

    rep = _report(tmp_path, {"alpha": "cmd:./a"}, {"alpha": ["tests_failed", "tests_failed", "regression", "solved"]},
                  errors={("alpha", 0): "1/1 FAIL_TO_PASS did not pass; 1/1 PASS_TO_PASS broke",
                          ("alpha", 1): "1/1 FAIL_TO_PASS did not pass", ("alpha", 2): "1/1 PASS_TO_PASS broke"})
    a = rep["agents"]["alpha"]
    assert a["failure_kinds"] == {"did_not_fix": 1, "broke_existing_tests": 2}
    assert a["first_error"] == ["t00", 1, "1/1 FAIL_TO_PASS did not pass; 1/1 PASS_TO_PASS broke"]
    assert "(did not fix 1 · broke existing tests 2)" in render_text_plain(rep)
    html = render_html(rep)
    assert "<th>Failed: broke existing tests</th>" in html and "<h2>First error per agent</h2>" in html
    assert "Failed: did not fix" in render_markdown(rep)


def test_html_hides_empty_panels_and_keeps_whitespace(tmp_path: Path) -> None:
    """Issue 33: no cost chart without cost, no all-empty column, double spaces in a subject kept,
    numbers never wrapped, every table in a scroll box (a 400 px screen scrolls it, not the page)."""
    run = _run(tmp_path / "r", {"oracle": "oracle", "noop": "noop"},
               {"oracle": ["solved", "solved"], "noop": ["empty_patch", "empty_patch"]})
    rep = build_report([run], [_task("t00", "Keep  two spaces in   padding"), _task("t01")])
    html = render_html(rep)
    assert 'id="cost-vs-pass"' not in html and 'id="no-cost-data"' in html  # said in one line, not drawn empty
    board = html[html.index("<h2>Leaderboard</h2>"):html.index("</table>", html.index("<h2>Leaderboard</h2>"))]
    for empty in ("Cost", "Cost / solved", "p50 wall", "Input tok", "pass@k"):
        assert f"<th>{empty}</th>" not in board
    assert "<th>pass@1</th>" in board and "<th>95% CI</th>" in board
    assert '<span class="subject">Keep  two spaces in   padding</span>' in html
    assert ".subject, .prose { white-space: pre-wrap;" in html and "td.n, th { white-space: nowrap; }" in html
    assert html.count("<table") == html.count('<div class="scroll"><table')


def test_too_few_tasks_to_detect_any_gap_is_said_so(tmp_path: Path) -> None:
    """With 4 tasks the minimum detectable effect is 100 points or more: the headline says no gap can be
    detected rather than "these 4 tasks detect gaps of about 100"; 40 tasks give a number."""
    rep = _report(tmp_path / "a", {"alpha": "cmd:./a", "bravo": "cmd:./b"},
                  {"alpha": ["solved", "tests_failed", "solved", "solved"],
                   "bravo": ["solved", "solved", "tests_failed", "tests_failed"]})
    line = headline(Report.from_dict(rep))
    assert "; too few tasks (4) to detect any gap: add tasks;" in line and "detect gaps of about" not in line, line
    rep = _report(tmp_path / "b", {"alpha": "cmd:./a", "bravo": "cmd:./b"},
                  {"alpha": ["solved", "tests_failed"] * 20, "bravo": ["tests_failed", "solved"] * 20})
    assert re.search(r"; these 40 tasks detect gaps of about [1-9]\d? pp;", headline(Report.from_dict(rep)))


def test_a_forged_agent_is_left_out_of_who_beats_whom(tmp_path: Path) -> None:
    """A forged agent is not ranked and has no comparison (contracts §8): the headline compares the
    others, instead of saying that the leader and the forger "share no scored task"."""
    n = 8
    rep = _report(tmp_path, {"wrong": "cmd:./w", "forger": "cmd:./f"},
                  {"wrong": ["tests_failed"] * n, "forger": ["forged"] * n})  # as on simonw/llm this round
    line = headline(Report.from_dict(rep))
    assert "forger" not in line and "share no scored task" not in line, line
    assert line.startswith("wrong solves 0% of tasks (95% CI 0–32%); no other agent to compare with"), line


def test_verdicts_graded_without_a_sandbox_are_said_to_be_buyable(tmp_path: Path) -> None:
    """atk10 F3: a run graded without a sandbox (where any agent's code can read the answers, contracts §9)
    says so in its headline, on top of every format, with how many graded attempts it concerns; a run
    graded in a sandbox says nothing of the kind."""
    agents = {"alpha": "cmd:./a", "bravo": "cmd:./b"}
    outcomes = {"alpha": ["solved", "solved", "tests_failed"], "bravo": ["tests_failed", "solved", "empty_patch"]}
    rep = _report(tmp_path / "a", agents, outcomes, test_sandbox={"alpha": "none", "bravo": "none"})
    line = headline(Report.from_dict(rep))
    assert "; every graded attempt ran the hidden tests without a sandbox, where any agent's code can read the " \
           "answers: these verdicts can be bought; 3 tasks" in line, line
    text = " ".join(" ".join(render_text_plain(rep).splitlines()[1:5]).split())  # under the title, wrapped
    assert "every graded attempt ran the hidden tests without a sandbox" in text, text
    assert "every graded attempt ran the hidden tests without a sandbox" in render_markdown(rep).splitlines()[2]
    rep = _report(tmp_path / "b", agents, outcomes, test_sandbox={"alpha": "none", "bravo": "bwrap"})
    assert "; 3 of 5 graded attempts ran the hidden tests without a sandbox, where any agent's code can read the " \
           "answers: their verdicts can be bought;" in headline(Report.from_dict(rep))
    rep = _report(tmp_path / "c", agents, outcomes, test_sandbox={"alpha": "bwrap", "bravo": "bwrap"})
    assert "sandbox" not in headline(Report.from_dict(rep))


def test_attempts_graded_under_landlock_get_no_metadata_warning(tmp_path: Path) -> None:
    """atk12 F4 is closed under Landlock (the launcher's supervisor makes chmod and utime only in the
    attempt's own folders, contracts §9): a run graded there no longer claims that an agent's code can
    change the mode and times of host files; one graded without a sandbox still says its verdicts can be
    bought."""
    agents = {"alpha": "cmd:./a", "bravo": "cmd:./b"}
    outcomes = {"alpha": ["solved", "solved", "tests_failed"], "bravo": ["tests_failed", "solved", "empty_patch"]}
    rep = _report(tmp_path / "a", agents, outcomes, test_sandbox={"alpha": "landlock", "bravo": "bwrap"})
    text = headline(Report.from_dict(rep))
    assert "mode and times" not in text and "Landlock" not in text, text
    rep = _report(tmp_path / "b", agents, outcomes, test_sandbox={"alpha": "landlock", "bravo": "none"})
    assert "graded attempts ran the hidden tests without a sandbox" in headline(Report.from_dict(rep))


def test_the_sanity_line_says_when_the_tasks_are_too_few_for_its_own_gap(tmp_path: Path) -> None:
    """nu21 on simonw/llm: 5 tasks, oracle 100% and noop 0%; the headline said "reference agents as expected"
    while the table said "oracle vs noop: no detectable difference". The headline now says both."""
    rep = _report(tmp_path, {"oracle": "oracle", "noop": "noop"}, {"oracle": ["solved"] * 5,
                                                                   "noop": ["empty_patch"] * 5})
    (row,) = rep["comparisons"]
    assert not row["significant"]
    line = headline(Report.from_dict(rep))
    assert line.startswith("Reference agents as expected (oracle 100%, noop 0%), though 5 tasks are too few for "
                           "even that gap to be significant; 5 tasks"), line
    big = _report(tmp_path / "big", {"oracle": "oracle", "noop": "noop"}, {"oracle": ["solved"] * 8,
                                                                           "noop": ["empty_patch"] * 8})
    assert headline(Report.from_dict(big)).startswith("Reference agents as expected (oracle 100%, noop 0%); 8 tasks")


def test_a_tie_on_shared_tasks_names_each_rate_and_who_is_incomplete(tmp_path: Path) -> None:
    """xatk31: an agent that claims a rate limit at its first failure stops its own attempts (§8), and the task it
    failed leaves the ranking (its attempt is unscored). On the 2 tasks both scored it ties with an honest agent
    that solves 8 of 12, and the headline said "x and y tie at 100% pass@1": x's rate over its 2 tasks, given to
    both, with no "incomplete" beside x's pass@1, which issue 30 puts wherever it appears. A tie between
    different rates names each, and every label."""
    y = ["solved" if i % 3 != 2 else "tests_failed" for i in range(12)]
    rep = _report(tmp_path, {"x": "cmd:x", "y": "cmd:y"}, {"x": ["solved", "solved", "rate_limited"], "y": y})
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    (tmp_path / "r" / "meta.json").write_text(json.dumps({**meta, "task_ids": [f"t{i:02d}" for i in range(12)]}))
    rep = build_report([tmp_path / "r"], [_task(f"t{i:02d}") for i in range(12)])
    line = headline(Report.from_dict(rep))
    assert "tie on the 2 tasks both scored (pass@1 100% vs 73%; x incomplete: 2 of 12 scored, p=1)" in line, line
    assert "tie at" not in line
    same = _report(tmp_path / "s", {"a": "cmd:a", "b": "cmd:b"}, {"a": ["solved", "tests_failed"] * 3,
                                                                   "b": ["tests_failed", "solved"] * 3})
    assert "a and b tie at 50% pass@1" in headline(Report.from_dict(same))  # equal rates, all scored: as before


def test_a_note_is_never_broken_inside_a_flag_of_its_command(tmp_path: Path) -> None:
    """nu54, more-itertools at 80 columns: the partial-mine note's command read ``… --time-budget 8m --stop-`` /
    ``after-tasks 8 -n 2``; textwrap broke the flag at its hyphen, and a copy of the two lines is no command. Notes
    (and the head-to-head lines) now break at spaces only."""
    run = _run(tmp_path / "r", {"oracle": "oracle"}, {"oracle": ["solved"] * 2})
    meta = json.loads((run / "meta.json").read_text())
    command = "homefield mine --first-parent --merges --since 2026-01-01 --time-budget 8m --stop-after-tasks 8 -n 2"
    meta["partial_mine"] = {"mine": "20261207-021647-9e89", "why": "time_budget", "detail": "time budget 8m reached",
                            "not_verified": 15, "candidates": 19, "continue": command}
    (run / "meta.json").write_text(json.dumps(meta))
    text = render_text_plain(build_report([run], [_task("t00"), _task("t01")]), width=80)
    note = text[text.index("note: the task set is partial"):].split("\nnote:")[0]
    assert " ".join(note.split()).endswith(command), note
    assert not any(line.rstrip().endswith("-") for line in note.splitlines()), note
