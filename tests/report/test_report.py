"""The report (issue 8): numbers, golden Markdown/JSON/text, the HTML plots, and odd runs.

Regenerate the golden files after an intended change with::

    UPDATE_GOLDEN=1 python -m pytest tests/test_report.py

The fixed inputs live in ``tests/data/report/`` (made by ``generate.py`` there).
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.records import Task
from pytest_homefield.report import (
    build_report,
    load_meta,
    load_results,
    render_html,
    render_json,
    render_markdown,
    render_text,
    render_text_plain,
    write_reports,
)
from pytest_homefield.report.headline import headline
from pytest_homefield.report.model import Report
from pytest_homefield.report.similarity import changed_lines, is_test_path, similarity

#: The checked-in inputs are read from a copy (the ``data`` fixture of ``conftest.py``).
GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def report(data: Path, tasks: list[Task]) -> dict[str, Any]:
    return build_report([data / "run-a"], tasks, alpha=0.05, seed=0)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"golden file {path} was missing and has been written; check it and re-run")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file; UPDATE_GOLDEN=1 regenerates it"


# ------------------------------------------------------------------------------- fixed-run goldens


def test_golden_markdown(report: dict[str, Any]) -> None:
    check_golden("report-run-a.md", render_markdown(report))


def test_golden_json(report: dict[str, Any]) -> None:
    text = render_json(report)
    assert json.loads(text) == report
    check_golden("report-run-a.json", text)


def test_golden_text(report: dict[str, Any]) -> None:
    check_golden("report-run-a.txt", render_text_plain(report, width=100, verbose=True))


def test_report_is_deterministic(data: Path, tasks: list[Task], report: dict[str, Any]) -> None:
    assert build_report([data / "run-a"], tasks, alpha=0.05, seed=0) == report


def test_contract_keys(report: dict[str, Any]) -> None:
    """Contracts §10: every listed key is present."""
    assert {
        "schema_version",
        "run_ids",
        "cut_short",
        "agents",
        "comparisons",
        "tasks",
        "unsolved_by_all",
        "well_specified",
    } <= set(report)
    agent_keys = {
        "spec",
        "simulated",
        "hinted",
        "tasks",
        "attempts",
        "scored",
        "solved",
        "pass_at_1",
        "pass_at_1_ci",
        "pass_at_k",
        "pass_hat_k",
        "cost_usd",
        "cost_partial",
        "cost_per_solved_usd",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "wall_s_p50",
        "wall_s_p95",
        "outcomes",
        "touched_tests",
        "suspicious",
        "similarity_mean",
        "per_language",
    }
    for a in report["agents"].values():
        assert agent_keys <= set(a)
    for c in report["comparisons"]:
        assert {"a", "b", "test", "n_tasks", "delta", "ci", "p_value", "p_adjusted", "mde", "verdict"} <= set(c)
    for t in report["tasks"]:
        assert {"id", "subject", "well_specified", "languages", "attempts"} <= set(t)
    assert {"tasks", "agents"} <= set(report["well_specified"])


# ------------------------------------------------------------------------------------- numbers


def test_numbers_of_the_fixed_run(report: dict[str, Any]) -> None:
    agents = report["agents"]
    assert report["run_ids"] == ["run-a"]
    assert report["cut_short"] == "budget spent ($2.00 of $2.00)"
    assert list(agents) == ["sonnet", "sim-0.7", "haiku", "qwen3-coder"]  # ranked by pass@1

    sonnet = agents["sonnet"]
    # the retried key (infra, then solved) counts once, solved; the later infra stays unscored
    assert sonnet["attempts"] == 18 and sonnet["scored"] == 17 and sonnet["solved"] == 11
    assert sonnet["outcomes"]["infra"] == 1 and sonnet["unscored"] == {"infra": 1}
    # pass@1 = mean over the ranked tasks of solved/scored: (3/3 + 3/3 + 0/3 + 1/3) / 4 — the task with
    # sonnet's infra (2/2 scored) and the one with haiku's rate limit (2/3) are left out for every agent
    assert sonnet["pass_at_1"] == pytest.approx((1 + 1 + 0 + 1 / 3) / 4, abs=1e-6)
    assert sonnet["incomplete"] == "incomplete: 17 of 18 scored"
    assert sonnet["attempts_per_task"] == [3, 3]
    assert list(sonnet["pass_at_k"]) == ["1", "2", "3"]  # k ≤ the fewest scored attempts on a task

    sim = agents["sim-0.7"]
    assert sim["simulated"] and not sim["hinted"]
    assert sim["pass_at_1"] == pytest.approx(5 / 12, abs=1e-6) and "incomplete" not in sim
    assert list(sim["pass_at_k"]) == ["1", "2", "3"]
    assert sim["pass_at_k"]["3"] == pytest.approx(2 / 4, abs=1e-6)  # tasks solved at least once
    assert sim["pass_hat_k"]["3"] == pytest.approx(1 / 4, abs=1e-6)  # tasks solved every time
    assert sim["cost_usd"] is None and sim["cost_per_solved_usd"] is None and sim["cost_missing"] == 18

    haiku = agents["haiku"]
    assert haiku["cost_partial"] is True
    assert haiku["cost_per_solved_usd"] == pytest.approx(haiku["cost_usd"] / haiku["solved"], abs=1e-6)
    assert haiku["unscored"] == {"rate_limited": 1}

    qwen = agents["qwen3-coder"]
    assert qwen["hinted"] and qwen["touched_tests"] == 1 and qwen["suspicious"] == 1
    assert qwen["outcomes"]["agent_error"] == 3
    assert "javascript" not in qwen["per_language"]  # its one javascript task has an unscored attempt (haiku)

    assert report["unsolved_by_all"] == ["c3d4e5f6a1b2"]
    assert report["well_specified"]["tasks"] == 4
    assert report["well_specified"]["excluded"] == ["c3d4e5f6a1b2", "f6a1b2c3d4e5"]
    assert report["languages"] == {"python": 5, "javascript": 1, "shell": 1}
    row = next(t for t in report["tasks"] if t["id"] == "d4e5f6a1b2c3")
    assert row["attempts"]["sonnet"] == ["solved", "solved", "infra"]
    assert row["attempts"]["qwen3-coder"] == ["agent_error"] * 3


def test_comparisons_cover_every_pair_holm_adjusted(report: dict[str, Any]) -> None:
    comps = report["comparisons"]
    names = list(report["agents"])
    assert [(c["a"], c["b"]) for c in comps] == [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    # issue 32: sim-0.7 (sim:P) is a reference agent, so its three pairs are sanity checks outside the family
    family = [c for c in comps if not c["sanity"]]
    assert {(c["a"], c["b"]) for c in comps if c["sanity"]} == {(a, b) for a, b in (
        ("sonnet", "sim-0.7"), ("sim-0.7", "haiku"), ("sim-0.7", "qwen3-coder"))}
    assert len(family) == 3
    for c in comps:
        assert c["n_tasks"] == 4  # the 6 tasks less the 2 with an unscored attempt
        a, b = report["agents"][c["a"]], report["agents"][c["b"]]
        assert c["delta"] == pytest.approx(a["pass_at_1"] - b["pass_at_1"], abs=1e-5)
        if c["sanity"]:
            assert c["p_adjusted"] is None and "family" not in c and c["significant"] == (c["p_value"] < 0.05)
            assert "sanity check" in c["verdict"]
        else:
            assert c["p_adjusted"] >= c["p_value"] - 1e-12 and c["family"] == 3
            assert c["significant"] == (c["p_adjusted"] < 0.05) and "over 3 pairs" in c["verdict"]
    # Holm: the smallest p of the family is multiplied by the family's size (capped at 1)
    smallest = min(family, key=lambda c: c["p_value"])
    assert smallest["p_adjusted"] == pytest.approx(min(1.0, smallest["p_value"] * len(family)), abs=1e-6)


def test_load_results_last_line_wins_and_torn_line_ignored(data: Path) -> None:
    results = load_results(data / "run-a")
    keys = [r.key for r in results]
    assert len(keys) == len(set(keys)) == 72
    r = next(r for r in results if r.key == ("d4e5f6a1b2c3", "sonnet", 1, "base"))
    assert r.outcome == "solved"
    assert load_meta(data / "run-a")["cut_short"].startswith("budget spent")


def test_load_meta_missing_and_broken(tmp_path: Path) -> None:
    assert load_meta(tmp_path) == {"run_id": tmp_path.name}
    (tmp_path / "meta.json").write_text("{not json")
    with pytest.raises(ValueError, match="meta.json"):
        load_meta(tmp_path)


# --------------------------------------------------------------------------------------- HTML


class _SvgFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.svg_ids: list[str | None] = []
        self.ids: set[str] = set()
        self.external: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        d = dict(attrs)
        self.tags.add(tag)
        if d.get("id"):
            self.ids.add(str(d["id"]))
        if tag == "svg":
            self.svg_ids.append(d.get("id"))
        for key in ("src", "href"):
            if d.get(key):
                self.external.append(str(d[key]))


def parse_html(text: str) -> _SvgFinder:
    p = _SvgFinder()
    p.feed(text)
    p.close()
    return p


def test_html_has_both_plots_and_is_self_contained(report: dict[str, Any]) -> None:
    text = render_html(report)
    p = parse_html(text)
    assert "forest-plot" in p.svg_ids and "cost-vs-pass" in p.svg_ids
    assert "zero-line" in p.ids and "cut-short" in p.ids
    assert "script" not in p.tags and "link" not in p.tags and not p.external
    assert "<style>" in text
    # one labelled point per plottable agent (sim and qwen have no cost)
    scatter = re.search(r'<svg id="cost-vs-pass".*?</svg>', text, re.S)
    assert scatter and scatter.group(0).count("<circle") == 2
    assert all(f">{n} (reported by the agent)<" in scatter.group(0) for n in ("sonnet", "haiku"))
    forest = re.search(r'<svg id="forest-plot".*?</svg>', text, re.S)
    assert forest and forest.group(0).count("<circle") == len(report["comparisons"])


# ----------------------------------------------------------------------------------- odd runs


def _task(tid: str, **kw: Any) -> Task:
    gold = "diff --git a/src/m.py b/src/m.py\n--- a/src/m.py\n+++ b/src/m.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"
    base: dict[str, Any] = dict(
        id=tid,
        commit=tid * 3,
        parent="0" * 40,
        committed_at="2025-01-01T00:00:00+00:00",
        authored_at="2025-01-01T00:00:00+00:00",
        mode="commit",
        subject=f"task {tid}",
        message="m",
        prompt="p",
        source_files=["src/m.py"],
        test_files=["tests/test_m.py"],
        test_patch="",
        gold_patch=gold,
        FAIL_TO_PASS=["tests/test_m.py::test_a"],
        PASS_TO_PASS=[],
        well_specified=True,
        languages=["python"],
    )
    base.update(kw)
    return Task(**base)


def _make_run(run_dir: Path, agents: list[str], records: list[tuple[str, str, int, str]], **meta: Any) -> Path:
    """A run folder: ``records`` are (task_id, agent, attempt, outcome); costs/tokens only for some."""
    run_dir.mkdir(parents=True)
    meta_d = {
        "run_id": run_dir.name,
        "agents": [
            {"name": a, "spec": a, "version": None, "model": None, "simulated": a.startswith("sim"), "hinted": False}
            for a in agents
        ],
        "attempts": 3,
        "tasks_digest": "x",
        "versions": {},
        "created_at": "2025-01-01T00:00:00+00:00",
        "cut_short": None,
    }
    meta_d.update(meta)
    (run_dir / "meta.json").write_text(json.dumps(meta_d))
    lines = []
    for tid, agent, attempt, outcome in records:
        lines.append(
            json.dumps(
                {
                    "schema_version": 1,
                    "run_id": run_dir.name,
                    "task_id": tid,
                    "agent": agent,
                    "attempt": attempt,
                    "variant": "base",
                    "outcome": outcome,
                    "cost_usd": None,
                    "wall_s": 10.0 * attempt,
                    "error": "claude: command not found" if outcome == "agent_error" else None,
                }
            )
        )
    (run_dir / "results.jsonl").write_text("\n".join(lines) + "\n")
    return run_dir


def _render_all(rep: dict[str, Any]) -> dict[str, str]:
    out = {
        "md": render_markdown(rep),
        "json": render_json(rep),
        "html": render_html(rep),
        "text": render_text_plain(rep),
        "short": "\n".join(line for line, _ in render_text(rep, verbose=False)),
    }
    p = parse_html(out["html"])
    # a chart only when it has something to show (issue 33: no empty charts)
    assert ("forest-plot" in p.svg_ids) == any(c.get("delta") is not None for c in rep["comparisons"])
    assert ("cost-vs-pass" in p.svg_ids) == any(a["cost_usd"] for a in rep["agents"].values())
    assert json.loads(out["json"]) == rep
    return out


def test_agent_whose_every_attempt_errored(tmp_path: Path) -> None:
    tasks = [_task("t1"), _task("t2")]
    recs = [(t, "good", k, "solved" if k != 2 else "tests_failed") for t in ("t1", "t2") for k in (1, 2, 3)]
    recs += [(t, "broken", k, "agent_error") for t in ("t1", "t2") for k in (1, 2, 3)]
    recs += [(t, "down", k, "infra") for t in ("t1", "t2") for k in (1, 2)]
    run = _make_run(tmp_path / "r1", ["good", "broken", "down"], recs)
    rep = build_report([run], tasks)
    broken, down = rep["agents"]["broken"], rep["agents"]["down"]
    assert broken["scored"] == 6 and broken["solved"] == 0 and broken["pass_at_1"] == 0.0
    assert broken["cost_per_solved_usd"] is None and broken["errors"] == [["claude: command not found", 6]]
    assert down["scored"] == 0 and down["pass_at_1"] is None and down["pass_at_1_ci"] is None
    assert down["pass_at_k"] == {} and down["outcomes"] == {"infra": 4} and down["wall_s_p50"] is None
    assert list(rep["agents"]) == ["good", "broken", "down"]
    assert any("broken: every scored attempt ended in agent_error" in n for n in rep["notes"])
    assert any("down: no scored attempt" in n for n in rep["notes"])
    pair = {(c["a"], c["b"]): c for c in rep["comparisons"]}
    assert pair[("good", "broken")]["p_value"] is not None
    assert pair[("good", "down")]["test"] is None and pair[("good", "down")]["p_adjusted"] is None
    out = _render_all(rep)
    assert "claude: command not found" in out["md"]
    assert "not compared (no task with scored attempts from both): good–down" in out["short"]
    assert rep["unsolved_by_all"] == []


def test_the_terminal_says_why_an_agent_that_changed_nothing_failed(tmp_path: Path) -> None:
    """Seen on pypa/packaging: ``cmd:sh /path/agent.sh`` (a script the sandbox does not show) exited 2 on
    every attempt; the terminal report said only "∅ empty patch 3", the reason was in the HTML alone."""
    recs = [(t, a, 1, "tests_failed" if a == "tried" else "empty_patch") for t in ("t1", "t2")
            for a in ("tried", "script")]
    run = _make_run(tmp_path / "r1", ["tried", "script"], recs)
    results = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    for r in results:
        r["error"] = ("command exited 2: sh: 0: cannot open /x/agent.sh: No such file" if r["agent"] == "script"
                      else "1/1 FAIL_TO_PASS did not pass")
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    short = _render_all(build_report([run], [_task("t1"), _task("t2")]))["short"]
    assert "first error (t1 #1): command exited 2: sh: 0: cannot open /x/agent.sh: No such file" in short
    assert "FAIL_TO_PASS did not pass" not in short  # a graded failure says itself in its kind


def test_one_agent_one_task(tmp_path: Path) -> None:
    run = _make_run(tmp_path / "solo", ["solo"], [("t1", "solo", 1, "solved")], attempts=1)
    rep = build_report([run], [_task("t1")])
    a = rep["agents"]["solo"]
    assert a["pass_at_1"] == 1.0 and a["pass_at_k"] == {"1": 1.0} and a["tasks"] == 1
    assert rep["comparisons"] == []
    assert rep["unsolved_by_all"] == []
    out = _render_all(rep)
    assert "One agent only: nothing to compare." in out["html"]  # said, not drawn as an empty plot (issue 33)
    assert "1 task · 1 agent · 1 attempt per task" in out["text"]


def test_empty_run(tmp_path: Path) -> None:
    run = tmp_path / "empty"
    run.mkdir()
    rep = build_report([run], [])
    assert rep["agents"] == {} and rep["tasks"] == [] and rep["comparisons"] == []
    out = _render_all(rep)
    assert "no results yet (0 agents, no attempt recorded)" in out["short"]


def test_union_of_two_run_dirs(data: Path, tasks: list[Task], report: dict[str, Any]) -> None:
    rep = build_report([data / "run-a", data / "run-b"], tasks)
    assert rep["run_ids"] == ["run-a", "run-b"]
    assert rep["cut_short"] == "run-a: budget spent ($2.00 of $2.00)"
    assert len(rep["tasks"]) == 8
    assert rep["agents"]["haiku"]["tasks"] == 6 and rep["agents"]["sim-0.7"]["tasks"] == 4  # 2 with unscored
    assert rep["agents"]["sonnet"]["solved"] == report["agents"]["sonnet"]["solved"] + 5
    pair = {(c["a"], c["b"]): c for c in rep["comparisons"]}
    assert pair[("sonnet", "haiku")]["n_tasks"] == 6
    assert pair[("sonnet", "sim-0.7")]["n_tasks"] == 4
    _render_all(rep)


def test_union_later_run_wins_a_repeated_key(tmp_path: Path) -> None:
    first = _make_run(tmp_path / "first", ["x"], [("t1", "x", 1, "infra"), ("t1", "x", 2, "solved")])
    second = _make_run(tmp_path / "second", ["x"], [("t1", "x", 1, "tests_failed")], cut_short="rate limit")
    rep = build_report([first, second], [_task("t1")])
    assert rep["tasks"][0]["attempts"]["x"] == ["tests_failed", "solved"]
    assert rep["agents"]["x"]["scored"] == 2 and rep["agents"]["x"]["unscored"] == {}
    assert rep["cut_short"] == "second: rate limit"


def test_unequal_attempts_missing_costs_unknown_task_bad_lines(tmp_path: Path) -> None:
    run = _make_run(
        tmp_path / "r",
        ["a", "b"],
        [
            ("t1", "a", 1, "solved"),
            ("t1", "a", 2, "solved"),
            ("t1", "a", 3, "tests_failed"),
            ("t2", "a", 1, "tests_failed"),
            ("t1", "b", 1, "tests_failed"),
            ("t2", "b", 1, "solved"),
            ("zz", "b", 1, "solved"),
        ],
    )
    with open(run / "results.jsonl", "a") as fh:
        fh.write('{"torn": ')  # a torn last line is skipped (a crashed writer)
    # costs on some attempts only
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()[:7]]
    lines[0]["cost_usd"], lines[0]["cost_partial"] = 0.5, True
    extra = (run / "results.jsonl").read_text().splitlines()[7:]
    (run / "results.jsonl").write_text("\n".join([json.dumps(x) for x in lines] + extra))
    rep = build_report([run], [_task("t1"), _task("t2", well_specified=False, languages=["go"])])
    a = rep["agents"]["a"]
    assert a["attempts_per_task"] == [1, 3] and list(a["pass_at_k"]) == ["1"]
    assert a["pass_at_1"] == pytest.approx((2 / 3 + 0) / 2, abs=1e-6)
    assert a["cost_usd"] == 0.5 and a["cost_partial"] and a["cost_missing"] == 3
    assert a["cost_per_solved_usd"] == 0.25
    assert [t["id"] for t in rep["tasks"]] == ["t1", "t2", "zz"] and rep["tasks"][2]["known"] is False
    notes = "\n".join(rep["notes"])
    assert "not in the tasks file" in notes
    assert "a: 3 of 4 attempt(s) reported no cost" in notes
    assert rep["well_specified"]["tasks"] == 1
    assert rep["agents"]["b"]["per_language"] == {"go": 1.0, "python": 0.0}
    _render_all(rep)


def test_a_bad_result_record_is_one_line_naming_file_line_and_field(tmp_path: Path) -> None:
    run = _make_run(tmp_path / "r", ["a"], [("t1", "a", 1, "solved")])
    with open(run / "results.jsonl", "a") as fh:
        fh.write(json.dumps({"run_id": "r", "task_id": "t1", "agent": "a", "attempt": 2, "outcome": "exploded"}) + "\n")
    with pytest.raises(ValueError) as err:
        build_report([run], [_task("t1")])
    msg = str(err.value)
    assert msg == (f"{run / 'results.jsonl'}: line 2: field 'outcome' is 'exploded'; expected one of "
                   "solved, tests_failed, regression, empty_patch, missing, timeout, test_timeout, agent_error, "
                   "budget_exceeded, forged, infra, rate_limited, not_needed")
    (run / "results.jsonl").write_text(json.dumps({"run_id": "r", "task_id": "t1", "agent": "a", "attempt": "1",
                                                   "outcome": "solved"}) + "\n")
    with pytest.raises(ValueError, match=r"line 1: field 'attempt' must be an integer, got string '1'$"):
        build_report([run], [_task("t1")])


def test_one_agent_name_for_two_specs_is_refused(tmp_path: Path) -> None:
    r1 = _make_run(tmp_path / "r1", ["a"], [("t1", "a", 1, "solved")])
    r2 = _make_run(tmp_path / "r2", ["a"], [("t1", "a", 1, "tests_failed")])
    meta = json.loads((r2 / "meta.json").read_text())
    meta["agents"][0]["spec"] = "cmd:other"
    (r2 / "meta.json").write_text(json.dumps(meta))
    spec1 = json.loads((r1 / "meta.json").read_text())["agents"][0]["spec"]
    with pytest.raises(ValueError) as err:
        build_report([r1, r2], [_task("t1")])
    assert str(err.value) == (f"agent 'a' is {spec1!r} in run r1 but 'cmd:other' in run "
                              "r2: report these runs apart, or rename one agent (NAME=SPEC)")


def test_missing_diff_gives_no_similarity(tmp_path: Path) -> None:
    run = _make_run(tmp_path / "r", ["a"], [("t1", "a", 1, "solved"), ("t1", "a", 2, "tests_failed")])
    task = _task("t1")
    d = run / "attempts" / "t1" / "a" / "1"
    d.mkdir(parents=True)
    (d / "diff.patch").write_text(task.gold_patch)
    rep = build_report([run], [task])
    assert rep["tasks"][0]["similarity"]["a"] == [1.0, None]
    assert rep["agents"]["a"]["similarity_exact"] == 1 and rep["agents"]["a"]["similarity_n"] == 1
    assert rep["agents"]["a"]["similarity_mean"] == 1.0


# ------------------------------------------------------------------------------------ rendering


def test_text_markup_and_width(report: dict[str, Any]) -> None:
    lines = render_text(report, width=100)
    assert all(isinstance(t, str) and isinstance(m, dict) for t, m in lines)
    assert lines[0][1] == {"bold": True}
    assert lines[1][0].startswith("! run cut short: budget spent") and lines[1][1]["red"]
    header = next(t for t, _ in lines if t.lstrip().startswith("#"))
    board = [t for t, _ in lines[lines.index((header, {"bold": True})) : lines.index((header, {"bold": True})) + 5]]
    assert all(len(t) <= 100 for t in board)
    assert any("sim-0.7 [sim]" in t for t in board) and any("qwen3-coder [hinted]" in t for t in board)
    narrow = render_text(report, width=60)
    assert any(t.lstrip().startswith("agent") for t, _ in narrow)  # columns dropped, table kept
    verbose = render_text_plain(report)
    assert "per task (" in verbose and "✓✓✓" in verbose and "well-specified tasks only" in verbose


def test_markdown_marks_cut_short_and_agents(report: dict[str, Any]) -> None:
    md = render_markdown(report)
    assert md.splitlines()[2].startswith("> **Cut short:**")
    assert "`sim-0.7` *(sim)*" in md and "`qwen3-coder` *(hinted)*" in md
    assert "Holm-adjusted across 3 pairs of non-reference agents; 3 pairs with a reference agent" in md
    assert "$3" not in md.replace("\\$", "")  # every dollar sign escaped


def test_write_reports(tmp_path: Path, report: dict[str, Any]) -> None:
    paths = write_reports(report, tmp_path)
    assert [p.name for p in paths] == ["report.md", "report.json", "report.html"]
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left
    with pytest.raises(ValueError, match="unknown report format"):
        write_reports(report, tmp_path, formats=("pdf",))


def test_report_package_does_not_import_pytest() -> None:
    pkg = Path(__file__).parents[2] / "pytest_homefield" / "report"
    for path in pkg.glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+(pytest|_pytest)\b", path.read_text(), re.M), path.name


# ----------------------------------------------------------------------------------- similarity

GOLD = (
    "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,3 @@\n"
    " keep\n-old = 1\n+new = 1\n \n"
    "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n"
    "@@ -1 +1 @@\n-assert 0\n+assert 1\n"
)


def test_similarity_exact_ignores_tests_whitespace_and_blank_lines() -> None:
    agent = GOLD.replace("+new = 1", "+    new = 1   ").replace("+assert 1", "+assert True")
    s = similarity(agent, GOLD)
    assert s.exact and s.f1 == 1.0 and s.gold_lines == 2


def test_similarity_partial_and_empty() -> None:
    agent = "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,2 +1,3 @@\n-old = 1\n+new = 2\n+extra()\n keep\n"
    s = similarity(agent, GOLD)
    assert not s.exact and s.overlap == 1 and s.agent_lines == 3 and s.gold_lines == 2
    assert s.f1 == pytest.approx(2 * 1 / 5)
    e = similarity("", GOLD)
    assert e.f1 == 0.0 and not e.exact


def test_changed_lines_skips_binary_and_headers() -> None:
    patch = (
        "diff --git a/img.png b/img.png\nnew file mode 100644\nGIT binary patch\nliteral 5\n+abc\n\n"
        "diff --git a/src/x.sql b/src/x.sql\n--- a/src/x.sql\n+++ b/src/x.sql\n@@ -1,2 +1,2 @@\n"
        "--- a comment\n+++ another\n ctx\n"
    )
    assert changed_lines(patch) == {("-", "-- a comment"): 1, ("+", "++ another"): 1}


def test_is_test_path() -> None:
    assert is_test_path("tests/unit/helpers.py") and is_test_path("pkg/test_x.py") and is_test_path("conftest.py")
    assert is_test_path("src/x_test.go") and is_test_path("web/a.spec.js") and is_test_path("m.py", ["m.py"])
    assert not is_test_path("src/testing_utils.py") and not is_test_path("src/contest.py")


@pytest.mark.parametrize("width", [60, 100, 160, 240])
def test_one_attempt_shows_no_pass_k_column_at_any_width(tmp_path: Path, width: int) -> None:
    """ux63 (usr63): with 1 attempt per task pass@k and pass^k mean nothing (k = 1 is pass@1); the Markdown and
    HTML leaderboards left both out, the terminal's showed them as ``—`` columns, dropped (pass^k first) only
    when the terminal was narrow: a verify report (one agent, no cost column) showed pass^k where a run's did
    not. Neither shows them now, at any width."""
    recs = [(t, a, 1, "solved" if a == "oracle" else "empty_patch") for t in ("t1", "t2") for a in ("oracle", "noop")]
    run = _make_run(tmp_path / "r1", ["oracle", "noop"], recs, attempts=1)
    rep = build_report([run], [_task("t1"), _task("t2")])
    text = "\n".join(t for t, _ in render_text(rep, width=width))
    assert "pass@1" in text and "pass^k" not in text and "pass@k" not in text
    assert "pass^k" not in render_markdown(rep).split("pass@1: mean")[0]


def test_a_run_that_recorded_a_flaky_pass_to_pass_id_says_so(tmp_path: Path) -> None:
    """usr66 on jd/tenacity: oracle's run failed ``tests/test_asyncio.py::TestContextManager::test_sleeps`` (a
    timing test: 2 not less than 1.1) at one task, and recorded it in ``.homefield/flaky.jsonl``; its report said
    "Check the tasks: oracle solves 96%" and nothing of the record. The report names what its own runs recorded, and
    not what another run did."""
    home = tmp_path / ".homefield"
    run = _make_run(home / "runs" / "r1", ["oracle"], [("t1", "oracle", 1, "regression"), ("t2", "oracle", 1,
                                                                                          "solved")])
    test = "tests/test_asyncio.py::TestContextManager::test_sleeps"
    (home / "flaky.jsonl").write_text("".join(json.dumps(
        {"schema_version": 1, "task_id": tid, "test_id": test, "run_id": rid, "agent": "oracle", "attempt": 1,
         "found_at": "2026-12-07T22:14:14.395+00:00"}) + "\n" for tid, rid in (("t1", "r1"), ("t2", "r0"))))
    out = _render_all(build_report([run], [_task("t1"), _task("t2")]))
    for form in ("md", "short", "html"):
        assert "recorded as flaky in .homefield/flaky.jsonl" in " ".join(out[form].split()), form
    short = " ".join(out["short"].split())
    assert f"t1 {test}" in short and f"t2 {test}" not in short


def test_oracles_only_miss_on_a_test_its_run_found_flaky_is_not_check_the_tasks(tmp_path: Path) -> None:
    """ux67 (usr66 on jd/tenacity): oracle's one miss was a regression on a PASS_TO_PASS timing test that the same run
    recorded in ``.homefield/flaky.jsonl``, and the headline said "Check the tasks: oracle solves 96%", sending the
    user to tasks that were fine. It says the miss is a test the run found flaky now; a miss at a task without such
    a record still reads "check the tasks"."""
    home = tmp_path / ".homefield"
    recs = [("t1", "oracle", 1, "regression"), ("t2", "oracle", 1, "solved"), ("t3", "oracle", 1, "solved")]
    run = _make_run(home / "runs" / "r1", ["oracle"], recs)
    (home / "flaky.jsonl").write_text(json.dumps(
        {"schema_version": 1, "task_id": "t1", "test_id": "tests/test_m.py::test_b", "run_id": "r1", "agent": "oracle",
         "attempt": 1, "found_at": "2026-12-07T22:14:14.395+00:00"}) + "\n")
    tasks = [_task("t1"), _task("t2"), _task("t3")]
    line = headline(Report.from_dict(build_report([run], tasks)))
    assert line.startswith("oracle solves 67%: its one miss is a test this run found flaky (later runs leave it "
                           "out);"), line
    assert "check the tasks" not in line.lower()
    other = _make_run(home / "runs" / "r2", ["oracle"], [("t1", "oracle", 1, "solved"), ("t2", "oracle", 1,
                                                                                         "regression")])
    assert headline(Report.from_dict(build_report([other], tasks[:2]))).startswith(
        "Check the tasks: oracle solves 50%, expected 100%;")
