"""A task record for reports built from hand-written result records (tests/report): nothing in it is read but
its id, subject and the FAIL_TO_PASS id."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_homefield.records import Result, Task
from pytest_homefield.report import compute_report
from pytest_homefield.report.model import Report


def plain_task(tid: str) -> Task:
    """A task ``tid`` of one source file and one FAIL_TO_PASS id, ``subject`` ``task <tid>``."""
    return Task(id=tid, commit=tid * 3, parent="0" * 40, committed_at="2025-01-01T00:00:00+00:00",
                authored_at="2025-01-01T00:00:00+00:00", mode="commit", subject=f"task {tid}", message="m",
                prompt="p", source_files=["src/m.py"], test_files=["tests/test_m.py"], test_patch="", gold_patch="",
                FAIL_TO_PASS=["tests/test_m.py::test_value"], PASS_TO_PASS=[])


#: One attempt per task of agent ``x``: ``t0`` solved and flagged, ``t1`` solved clean, ``t2`` failed and flagged.
FLAGGED_IDS = ["t0", "t1", "t2"]
FLAGGED_ROWS = [("t0", "solved", True), ("t1", "solved", False), ("t2", "tests_failed", True)]


def flagged_run(tmp_path: Path) -> Path:
    """A run folder ``r1`` under ``tmp_path/.homefield/runs`` of hand-written result records, :data:`FLAGGED_ROWS`
    (the grid's and the outcomes' tests of a flagged solve: grid50, gatk51)."""
    folder = tmp_path / ".homefield" / "runs" / "r1"
    folder.mkdir(parents=True)
    results = [Result(run_id="r1", task_id=t, agent="x", attempt=1, outcome=o, suspicious=s,
                      suspicious_reason="deleted the assertion" if s else None) for t, o, s in FLAGGED_ROWS]
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    (folder / "meta.json").write_text(json.dumps({"run_id": "r1", "attempts": 1, "task_ids": FLAGGED_IDS,
                                                  "agents": [{"name": "x", "spec": "x"}]}))
    return folder


def flagged_report(run: Path) -> Report:
    """The report of :func:`flagged_run`'s folder ``run``."""
    return compute_report([run], [plain_task(t) for t in FLAGGED_IDS])
