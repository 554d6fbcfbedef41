"""``homefield report`` says which run it reports on and lists the other recent runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.report.which import run_summaries, which_run_lines
from pytest_homefield.store import write_jsonl_atomic


def make_run(root: Path, rid: str, created: str, agents: list[str], tasks: int, attempts: int,
             finished: int) -> None:
    d = root / rid
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({
        "run_id": rid, "created_at": created, "agents": [{"name": a, "spec": a} for a in agents],
        "attempts": attempts, "task_ids": [f"t{i}" for i in range(tasks)], "cut_short": None}))
    recs = [{"run_id": rid, "task_id": f"t{i % tasks}", "agent": agents[i // tasks % len(agents)],
             "attempt": 1 + i // (tasks * len(agents)), "outcome": "solved"}
            for i in range(finished)]  # valid records within the plan: a report refuses others
    write_jsonl_atomic(d / "results.jsonl", recs + recs[:1])  # a retried key counts once


@pytest.mark.usefixtures("cli_spelling")
def test_newest_by_default_and_the_others_listed(tmp_path: Path) -> None:
    make_run(tmp_path, "r-compare", "2026-12-01T10:00:00+00:00", ["claude", "noop"], 91, 1, 182)
    make_run(tmp_path, "r-try", "2026-12-01T11:30:00+00:00", ["claude"], 91, 1, 1)
    make_run(tmp_path, "verify-x", "2026-12-01T12:00:00+00:00", ["oracle"], 91, 1, 91)
    assert [s.run_id for s in run_summaries(tmp_path)] == ["r-try", "r-compare"]
    lines = which_run_lines(tmp_path, ["r-try"], by_default=True)
    assert lines[0] == ("Report on run r-try (the newest run; give a RUN_ID for another): started 2026-12-01 "
                        "11:30 UTC · claude · 1 of 91 attempts finished (a subset: -k, --max-tasks, stopped or "
                        "cut short)")
    assert lines[1].startswith("Other recent runs (homefield report RUN_ID")
    assert lines[2] == "  r-compare  started 2026-12-01 10:00 UTC · claude, noop · 182 of 182 attempts finished"
    assert len(lines) == 3
    named = which_run_lines(tmp_path, ["r-compare"], by_default=False)
    assert named[0].startswith("Report on run r-compare: started")
    assert named[2].startswith("  r-try  ")


def test_a_verify_run_named_is_described_from_its_meta(tmp_path: Path) -> None:
    """nu19 on andialbrecht/sqlparse: ``homefield report verify-…`` (the run ``homefield verify`` wrote)
    opened with "Report on run verify-…: no meta.json" beside its meta.json, and counted one run too
    few in "… and N older runs"."""
    make_run(tmp_path, "verify-x", "2026-12-01T12:00:00+00:00", ["oracle", "attack-daemon"], 2, 1, 4)
    for i in range(3):
        make_run(tmp_path, f"r{i}", f"2026-12-01T1{i}:00:00+00:00", ["noop"], 1, 1, 1)
    lines = which_run_lines(tmp_path, ["verify-x"], by_default=False, others=1)
    assert lines[0] == ("Report on run verify-x: started 2026-12-01 12:00 UTC · oracle, attack-daemon · "
                        "4 of 4 attempts finished")
    assert lines[2].startswith("  r2  started")
    assert lines[3] == f"  … and 2 older runs in {tmp_path}"
    assert which_run_lines(tmp_path, ["gone"], by_default=False)[0] == "Report on run gone: no meta.json"


def test_cli_prints_it_on_stderr(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from pytest_homefield.cli import main

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    runs = tmp_path / ".homefield" / "runs"
    make_run(runs, "r1", "2026-12-01T10:00:00+00:00", ["noop"], 1, 1, 1)
    make_run(runs, "r2", "2026-12-01T11:00:00+00:00", ["noop"], 1, 1, 1)
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", [])
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["run_ids"] == ["r2"]  # stdout stays the report alone
    assert err.splitlines()[0].startswith("Report on run r2 (the newest run")
    assert "  r1  started 2026-12-01 10:00 UTC · noop · 1 of 1 attempt finished" in err.splitlines()


def test_the_reported_run_is_counted_from_the_records_the_report_read(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``homefield report`` reads its run's results once (issue 35): the summary's count of finished
    attempts comes from the records :func:`load_results` read while the file is unchanged, and from the
    file again once it changed."""
    import pytest_homefield.report.which as which
    from pytest_homefield.report.runs import load_results
    from pytest_homefield.store import append_jsonl

    make_run(tmp_path, "r1", "2026-12-01T10:00:00+00:00", ["claude"], 4, 1, 3)
    assert len(load_results(tmp_path / "r1")) == 3
    opened: list[Path] = []
    monkeypatch.setattr(which, "read_jsonl", lambda path: opened.append(path) or iter(()))
    (summary,) = run_summaries(tmp_path)
    assert summary.finished == 3 and opened == []
    append_jsonl(tmp_path / "r1" / "results.jsonl", {"run_id": "r1", "task_id": "t3", "agent": "claude",
                                                       "attempt": 1, "outcome": "solved"})
    (summary,) = run_summaries(tmp_path)
    assert summary.finished == 0 and opened == [tmp_path / "r1" / "results.jsonl"]  # read again (stubbed)


def test_the_run_picked_by_default_is_read_once_for_its_pick_and_its_report(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """rev58: picking the run (:func:`pick_run` counts its finished attempts) read its results.jsonl as JSON lines,
    then the report read and parsed the file again. Now the pick of ``homefield report`` and ``view``
    (:func:`default_run`) reads the records once and the report takes them; a file with a bad record is still
    counted from its JSON lines (a summary never fails on it); ``homefield status`` counts JSON lines, as before."""
    import pytest_homefield.report.runs as runs
    import pytest_homefield.report.which as which
    from pytest_homefield.report.runs import load_results
    from pytest_homefield.report.which import default_run

    make_run(tmp_path, "r1", "2026-12-01T10:00:00+00:00", ["claude"], 4, 1, 3)
    reads: list[object] = []
    for module, name in ((which, "read_jsonl"), (runs, "records_load_results")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda path, real=real: reads.append(path) or real(path))
    picked, _, summaries = default_run(tmp_path)
    assert picked == "r1" and summaries is not None and summaries[0].finished == 3
    assert len(load_results(tmp_path / "r1")) == 3
    assert reads == [tmp_path / "r1" / "results.jsonl"]  # before: read_jsonl's, then load_results' again
    with (tmp_path / "r1" / "results.jsonl").open("a") as f:  # a bad record: no result, counted as JSON lines
        f.write(json.dumps({"run_id": "r1", "task_id": "t3", "agent": "claude", "attempt": 1, "outcome": "??"}) + "\n")
    assert run_summaries(tmp_path, keep=True)[0].finished == 4


def test_a_newer_run_without_results_is_passed_over_by_default(tmp_path: Path) -> None:
    """nu56 on Suor/funcy: ``pytest --homefield … -k … --collect-only`` (to check what a ``-k`` selects) left a run
    of 0 of 114 attempts; ``homefield report`` and ``homefield status`` picked it over the 57 finished attempts of
    the run before it ("no results yet"). The newest run holding a result is picked, with a line about the other."""
    from pytest_homefield.report.which import pick_run

    make_run(tmp_path, "r-real", "2026-12-01T10:00:00+00:00", ["oracle", "noop"], 19, 1, 38)
    make_run(tmp_path, "r-co", "2026-12-01T11:00:00+00:00", ["oracle"], 19, 3, 0)
    picked, lines = pick_run(run_summaries(tmp_path))
    assert picked == "r-real"
    assert lines == ["run r-co (started 2026-12-01 11:00 UTC) holds no result (0 of 57 attempts finished: a "
                     "--collect-only, or stopped before any attempt); homefield report r-co reports on it"]
    make_run(tmp_path, "r-only", "2026-12-01T12:00:00+00:00", ["oracle"], 1, 1, 0)
    assert pick_run(run_summaries(tmp_path / "none")) == (None, [])
    (tmp_path / "r-real" / "results.jsonl").unlink()  # no run holds a result: the newest, as before
    assert pick_run(run_summaries(tmp_path)) == ("r-only", [])


def test_the_runs_not_picked_are_described_from_their_json_lines(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """default_run left ``keep`` on every summary, so the other runs ``which_run_lines`` describes were parsed as
    records and kept for a report that never came: only the run picked is, the others counted from their JSON
    lines (as ``homefield status`` counts them), the same lines."""
    import pytest_homefield.report.runs as runs
    from pytest_homefield.report.which import default_run

    make_run(tmp_path, "r1", "2026-12-01T10:00:00+00:00", ["claude"], 4, 1, 4)
    make_run(tmp_path, "r2", "2026-12-01T11:00:00+00:00", ["claude"], 4, 1, 2)
    parsed: list[object] = []
    real = runs.records_load_results
    monkeypatch.setattr(runs, "records_load_results", lambda path: parsed.append(path) or real(path))
    picked, _, summaries = default_run(tmp_path)
    lines = which_run_lines(tmp_path, [str(picked)], by_default=True, summaries=summaries)
    assert picked == "r2" and lines[2] == "  r1  started 2026-12-01 10:00 UTC · claude · 4 of 4 attempts finished"
    assert parsed == [tmp_path / "r2" / "results.jsonl"]  # before: r1's too
