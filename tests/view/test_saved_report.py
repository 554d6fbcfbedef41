"""The report a run folder keeps is shown by ``homefield view`` only while it is the report this homefield
would compute (r5 "noticed": a run reported by an older homefield kept its old verdict text): same
homefield version and report format (``made_by``), same results (size and mtime in ns, not the report's
mtime against the results'). Over the checked-in run folder of ``tests/data/report``; no test process."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from pytest_homefield import __version__
from pytest_homefield.records import load_tasks
from pytest_homefield.report import compute_report, write_reports
from pytest_homefield.report.compute import REPORT_FORMAT
from pytest_homefield.view.data import load_site, saved_report

SOURCE_DATA = Path(__file__).parent.parent / "data" / "report"


def _kept(run: Path, change: dict[str, object]) -> None:
    """Rewrite ``run``'s report.json with ``change`` applied (``None`` drops a key), keeping it newer than
    the results."""
    path = run / "report.json"
    doc = json.loads(path.read_text())
    for key, value in change.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    path.write_text(json.dumps(doc))
    later = (run / "results.jsonl").stat().st_mtime_ns + 10**9
    os.utime(path, ns=(later, later))


def test_a_kept_report_is_reused_only_for_this_version_and_these_results(tmp_path: Path) -> None:
    run = Path(shutil.copytree(SOURCE_DATA / "run-a", tmp_path / "run-a"))
    tasks = load_tasks(SOURCE_DATA / "tasks.jsonl")
    report = compute_report([run], tasks, stamp=True)
    write_reports(report, run, formats=("json",))
    doc = json.loads((run / "report.json").read_text())
    assert doc["made_by"] == {"homefield": __version__, "format": REPORT_FORMAT}
    stat = (run / "results.jsonl").stat()
    assert doc["runs"][0]["results"] == {"bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    assert "made_by" not in compute_report([run], tasks).to_dict()  # the same JSON wherever it is computed
    assert saved_report(run) == report
    assert saved_report(run, (run / "report.json").stat().st_mtime + 1) is None  # tasks.jsonl changed since
    # an older homefield's report (no made_by, or another version or format) says what that version said
    old_verdict = [*doc["notes"], "OLD VERDICT: -100…+100"]
    _kept(run, {"made_by": None, "notes": old_verdict})
    assert saved_report(run) is None
    site = load_site([run], tasks, tasks_mtime=0.0)
    assert "OLD VERDICT: -100…+100" not in site.report.notes and site.report.notes == report.notes
    for made_by in ({"homefield": "0.0.1", "format": REPORT_FORMAT}, {"homefield": __version__, "format": -1}):
        _kept(run, {"made_by": made_by, "notes": old_verdict})
        assert saved_report(run) is None
    _kept(run, {"made_by": doc["made_by"], "notes": doc["notes"]})
    assert saved_report(run) == report
    # results that changed after the report, although the report's mtime is the newer
    line, rest = (run / "results.jsonl").read_text().split("\n", 1)  # (its last line is torn on purpose)
    first = json.loads(line)
    assert first["outcome"] == "solved"
    changed = json.dumps({**first, "outcome": "tests_failed", "solved": False})
    (run / "results.jsonl").write_text(changed + "\n" + rest)
    _kept(run, {})
    assert saved_report(run) is None
    shown = load_site([run], tasks, tasks_mtime=0.0).report
    assert shown.agents[first["agent"]].outcomes["solved"] == report.agents[first["agent"]].outcomes["solved"] - 1


def test_a_kept_report_is_read_without_following_a_link_or_waiting_on_a_fifo(tmp_path: Path) -> None:
    """satk60: a run folder comes from another machine too (a CI shard's artifact, ``homefield report RUN…``); its
    ``report.json`` was read following a link (a report kept outside the run, any host file: ``/dev/zero`` filled
    memory) and waiting on a fifo (``homefield view`` hung for good: before, the read was still blocked after 5 s).
    Now it is read as the run's own regular file, without waiting: a link or a fifo there is recomputed from the
    results, as an unreadable report is."""
    import threading

    run = Path(shutil.copytree(SOURCE_DATA / "run-a", tmp_path / "run-a"))
    tasks = load_tasks(SOURCE_DATA / "tasks.jsonl")
    report = compute_report([run], tasks, stamp=True)
    write_reports(report, run, formats=("json",))
    assert saved_report(run) == report
    elsewhere = tmp_path / "kept-elsewhere.json"
    os.replace(run / "report.json", elsewhere)
    (run / "report.json").symlink_to(elsewhere)
    assert saved_report(run) is None  # before: the linked report was shown
    (run / "report.json").unlink()
    os.mkfifo(run / "report.json")
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(saved_report(run)), daemon=True)
    reader.start()
    reader.join(5)
    blocked = reader.is_alive()
    if blocked:  # let the blocked reader go before failing
        with open(run / "report.json", "w"):
            pass
        reader.join(5)
    assert not blocked and got == [None]
