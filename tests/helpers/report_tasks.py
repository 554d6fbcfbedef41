"""A task record for reports built from hand-written result records (tests/report): nothing in it is read but
its id, subject and the FAIL_TO_PASS id."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.records import Result, Task
from pytest_homefield.report import compute_report
from pytest_homefield.report.headline import headline
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
    results = [Result(run_id="r1", task_id=t, agent="x", attempt=1, outcome=o, suspicious=s,
                      suspicious_reason="deleted the assertion" if s else None) for t, o, s in FLAGGED_ROWS]
    return write_run(tmp_path / ".homefield" / "runs" / "r1", results, FLAGGED_IDS, spec="{}")


def write_run(folder: Path, results: Sequence[Result], task_ids: Sequence[str], *, spec: str = "cmd:{}") -> Path:
    """The run folder ``folder`` (made, with its parents; the run's id its name) of 1 attempt of ``task_ids``:
    ``results`` as its ``results.jsonl``, and its ``meta.json`` naming the results' agents in the order they first
    come, each of spec ``spec`` formatted with its name. Returns ``folder``."""
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
    agents = [{"name": a, "spec": spec.format(a)} for a in dict.fromkeys(r.agent for r in results)]
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name, "attempts": 1, "task_ids": list(task_ids),
                                                  "agents": agents}))
    return folder


def pair_row(report: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    """The row of ``report``'s comparisons (a built report's dict) between the agents ``a`` and ``b``, either way
    round; ``ValueError`` unless there is exactly one."""
    (row,) = [c for c in report["comparisons"] if {c["a"], c["b"]} == {a, b}]
    return row


def assert_leaderless_headline(report: dict[str, Any], a: str, b: str, kept_out: str, rates: str,
                               rests_on: str, left: str) -> None:
    """That ``report``'s headline (a built report's dict) names no leader of ``a`` and ``b`` (their row not
    significant, with no ``kept_out`` key: ``at_their_word``, ``twin_hits``), says their order (``rates``:
    ``35% vs 25%`` pass@1) rests on ``a``'s ``rests_on``, and, those counted as failed, leaves ``a`` at ``left``."""
    row = pair_row(report, a, b)
    assert row["significant"] is False and kept_out not in row, row
    text = headline(Report.from_dict(report))
    assert "leads" not in text, text
    assert text.startswith(f"No agent is detectably better, and the order of {a} and {b} ({rates} pass@1, p="), text
    assert f"rests on {a}'s {rests_on}" in text, text
    assert f"counted as failed, they leave {a} at {left}" in text, text


def flagged_report(run: Path) -> Report:
    """The report of :func:`flagged_run`'s folder ``run``."""
    return compute_report([run], [plain_task(t) for t in FLAGGED_IDS])
