"""The run page of ``homefield view`` (``view/index.html``) opens as every report does: the report's
one-sentence answer first, then its notes and the memorization probe's verdicts (nu30: on
tkem/cachetools the page had the tables but neither the answer nor the probe's verdicts that
``report.html`` of the same run showed). Over the checked-in run folder of ``tests/data/report``
placed in a ``.homefield/runs/`` folder, with a probe verdict beside it; no test process."""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

from pytest_homefield.records import load_tasks
from pytest_homefield.report import compute_report, write_reports
from pytest_homefield.report.fmt import memorization_lines
from pytest_homefield.report.headline import headline
from pytest_homefield.view import build_site
from pytest_homefield.view.data import saved_report

SOURCE_DATA = Path(__file__).parent.parent / "data" / "report"


def test_the_run_page_opens_with_the_answer_and_the_probe_verdicts(tmp_path: Path) -> None:
    home = tmp_path / ".homefield"
    run = Path(shutil.copytree(SOURCE_DATA / "run-a", home / "runs" / "run-a"))
    tasks = load_tasks(SOURCE_DATA / "tasks.jsonl")
    verdict = {"schema_version": 1, "kind": "verdict", "agent": "sonnet", "judged": len(tasks),
               "control": "mismatched", "cutoff": None, "control_n": 12, "control_p95": 0.31,
               "flagged": [{"task_id": tasks[0].id, "best": 0.97, "mean": 0.9}]}
    (home / "probe").mkdir()
    (home / "probe" / "sonnet.jsonl").write_text(json.dumps(verdict) + "\n")
    report = compute_report([run], tasks)
    answer, memo = headline(report), memorization_lines(report)
    assert answer and memo  # what report.html shows on top for this run
    build_site([run], tasks, run / "view")
    page = html.unescape((run / "view" / "index.html").read_text())
    assert f'<p class="headline" id="headline">{answer}</p>' in page
    assert page.index(answer) < page.index("<h2>Leaderboard</h2>")  # the answer first
    assert all(line in page for line in memo) and f"{tasks[0].id} (0.97 best, 0.90 mean)" in page


def test_a_probe_after_the_run_shows_on_the_page_though_the_run_kept_its_report(tmp_path: Path) -> None:
    """The run's saved report.json is reused only while it is at least as new as every probe file: a
    probe made after the run (its verdicts are in no report.json yet) is shown by ``homefield view``
    without a ``homefield report`` first."""
    home = tmp_path / ".homefield"
    run = Path(shutil.copytree(SOURCE_DATA / "run-a", home / "runs" / "run-a"))
    tasks = load_tasks(SOURCE_DATA / "tasks.jsonl")
    write_reports(compute_report([run], tasks, stamp=True), run, formats=("json",))  # as the run's end writes it
    saved = (run / "report.json").stat().st_mtime
    assert saved_report(run, 0.0) is not None  # reused while nothing changed
    verdict = {"schema_version": 1, "kind": "verdict", "agent": "sonnet", "judged": len(tasks), "control": "mismatched",
               "cutoff": None, "control_n": 12, "control_p95": 0.31, "flagged": []}
    (home / "probe").mkdir()
    probe = home / "probe" / "sonnet.jsonl"
    probe.write_text(json.dumps(verdict) + "\n")
    os.utime(probe, (saved + 5, saved + 5))
    assert saved_report(run, 0.0) is None
    build_site([run], tasks, run / "view", tasks_mtime=0.0)
    page = html.unescape((run / "view" / "index.html").read_text())
    assert f"sonnet recites 0 of {len(tasks)} tasks; control 12 mismatched pairs, 95th percentile 0.31" in page
