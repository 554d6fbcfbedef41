"""Merge-mode tasks are shown by their PR title, not git's generated merge subject."""

from __future__ import annotations

from pytest_homefield.records import Task
from pytest_homefield.report.compute import display_subject


def task(mode: str, subject: str, prompt: str) -> Task:
    return Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode=mode,
                subject=subject, message=subject, prompt=prompt, source_files=[], test_files=[], test_patch="",
                gold_patch="", FAIL_TO_PASS=["t"], PASS_TO_PASS=[])


def test_merge_subject_becomes_the_pr_title() -> None:
    t = task("merge", "Merge pull request #1223 from u/chunked-guard", "Raise ValueError for negative n\n\nbody")
    assert display_subject(t) == "Raise ValueError for negative n"


def test_commit_subject_is_kept() -> None:
    assert display_subject(task("commit", "Add mul()", "Add mul()")) == "Add mul()"
    assert display_subject(task("merge", "Merge pull request #1 from a/b", "")) == "Merge pull request #1 from a/b"


def test_report_shows_the_cleaned_title() -> None:
    from pytest_homefield.mine.prompt import clean_prompt

    raw = "Fix naturalsize rounding at unit boundaries (closes #822)"
    t = task("commit", raw, clean_prompt(raw))
    assert display_subject(t) == "Fix naturalsize rounding at unit boundaries"


def test_report_marks_red_by_import_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from pytest_homefield.report import build_report, render_markdown, render_text_plain
    from pytest_homefield.store import read_jsonl, write_jsonl_atomic

    t = task("commit", "Add sub()", "Add sub()")
    t.red_by_import_error, t.well_specified = True, True
    run = tmp_path / "r1"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-12-01T10:00:00+00:00",
                                               "agents": [{"name": "noop", "spec": "noop"}], "attempts": 1,
                                               "task_ids": [t.id]}))
    write_jsonl_atomic(run / "results.jsonl", [{"schema_version": 1, "run_id": "r1", "task_id": t.id, "agent": "noop",
                                                "attempt": 1, "variant": "base", "outcome": "empty_patch",
                                                "solved": False, "scored": True}])
    report = build_report([run], [t])
    assert report["tasks"][0]["red_by_import_error"] is True
    assert "[red by import error] Add sub()" in render_text_plain(report)
    assert "Add sub() *red by import error*" in render_markdown(report)


def test_zero_costs_and_times_say_no_data(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from pytest_homefield.report import build_report, render_html, render_text_plain
    from pytest_homefield.store import read_jsonl, write_jsonl_atomic

    t = task("commit", "Add sub()", "Add sub()")
    run = tmp_path / "r1"
    run.mkdir()
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-12-01T10:00:00+00:00",
                                               "agents": [{"name": "oracle", "spec": "oracle"}], "attempts": 1,
                                               "task_ids": [t.id]}))
    write_jsonl_atomic(run / "results.jsonl", [{"schema_version": 1, "run_id": "r1", "task_id": t.id,
                                                "agent": "oracle", "attempt": 1, "variant": "base",
                                                "outcome": "solved", "solved": True, "scored": True,
                                                "cost_usd": 0.0, "wall_s": 0.01, "test_s": 1.0}])
    report = build_report([run], [t])
    text = render_text_plain(report)
    assert "p50/p95" not in text and "$/solved" not in text and "0s/0s" not in text
    assert "no cost data (every agent reported zero or no cost); no agent time data" in text
    assert "host p50/p95" not in text  # no host_s recorded: no column, and the note names none
    # keep66, usr46: "host p50/p95 1s/2s" above "no time data" read as a contradiction: the note says which is which
    write_jsonl_atomic(run / "results.jsonl", [{**next(read_jsonl(run / "results.jsonl")), "host_s": 1.5}])
    text = render_text_plain(build_report([run], [t]))
    assert "no agent time data (every agent answered in under a second; host p50/p95 is homefield's own time " \
           "outside the agent)" in text and "host p50/p95" in text.split("no agent time data")[0]
    html = render_html(report)
    assert 'id="no-cost-data"' in html and "oracle: pass@1" not in html
