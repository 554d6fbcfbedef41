"""``--homefield-mine``: one pytest item per frozen candidate commit (docs/contracts.md §4, §5, §7).

The controller scans history and freezes ``.homefield/mine/<mine_id>/candidates.jsonl`` before
workers start; every worker collects the same items from it. Each item verifies its candidate
(:func:`pytest_homefield.mine.pipeline.verify_and_record`) and appends one record to
``mine/<mine_id>/results.jsonl``. Kept → passed; dropped → skipped, shown as ``REJECTED``; harness
failure → error. Only the controller writes ``tasks.jsonl``, at the end of the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.collect import ensure_homefield_dir, is_worker, redirect_collection
from pytest_homefield.mine.pipeline import drop_summary, freeze_candidates, merge_tasks, new_id, verify_and_record
from pytest_homefield.mine.scan import format_scan
from pytest_homefield.settings import Settings
from pytest_homefield.store import append_jsonl, read_jsonl

REJECTED_PREFIX = "rejected: "


class MinePlugin:
    """The mine mode's pytest hooks; one instance per process, created in ``pytest_configure``."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.scan_result: Any = None
        self.summary: list[str] = []
        if is_worker(config):
            self.mine_dir = Path(config.workerinput["homefield_mine_dir"])  # type: ignore[attr-defined]
        else:
            hf = ensure_homefield_dir(settings.root)
            self.mine_dir = hf / "mine" / new_id()
            self.mine_dir.mkdir(parents=True)
            self.scan_result = freeze_candidates(settings, self.mine_dir)
        self.candidates_path = self.mine_dir / "candidates.jsonl"
        self.results_path = self.mine_dir / "results.jsonl"
        if settings.list_candidates:
            config.args[:] = []
            return
        redirect_collection(config, self.candidates_path)

    def workerinput(self) -> dict[str, Any]:
        return {"homefield_mine_dir": str(self.mine_dir)}

    # -- collection ---------------------------------------------------------------------------
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self.settings.list_candidates:
            return True  # collect nothing: --list-candidates runs no tests
        return None

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path.resolve() == self.candidates_path.resolve():
            return CandidatesFile.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        n = sum(1 for _ in read_jsonl(self.candidates_path))
        return [f"homefield mine: {n} candidates frozen in {self.mine_dir.relative_to(self.settings.root)}"]

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        if report.when == "call" and report.skipped and "homefield" in report.keywords:
            msg = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
            if REJECTED_PREFIX in msg:
                return "rejected", "r", ("REJECTED", {"yellow": True})
        return None

    # -- end of session (controller only) -----------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if is_worker(self.config):
            return
        if self.settings.list_candidates:
            self.summary = format_scan(self.scan_result, verbose=True).splitlines()
            session.exitstatus = pytest.ExitCode.OK
            return
        records = [r for r in read_jsonl(self.results_path) if r.get("reason") != "max_tasks"]
        # the last record per commit wins (a re-run item)
        by_commit = {r["commit"]: r for r in records}
        verified = list(by_commit.values())
        tasks = merge_tasks(self.settings.tasks_path, verified, max_tasks=self.settings.mine_max_tasks)
        kept = sum(1 for r in verified if r.get("task"))
        scan_reasons = [r["reason"] for r in read_jsonl(self.mine_dir / "scan.jsonl")]
        n_cand = sum(1 for _ in read_jsonl(self.candidates_path))
        examined = getattr(self.scan_result, "examined", n_cand + len(scan_reasons))
        lines = [
            f"Mined {kept} tasks from {n_cand} candidates ({examined} commits examined); "
            f"{len(tasks)} tasks in {self.settings.tasks_path.relative_to(self.settings.root)}",
        ]
        dropped = drop_summary([r.get("reason") for r in verified] + scan_reasons)
        if dropped:
            lines.append(f"Dropped: {dropped}")
        if self.config.get_verbosity() > 0:
            for r in verified:
                status = "task" if r.get("task") else (r.get("reason") or "?").replace("_", " ")
                lines.append(f"  {r['id']}  {status:<24} F2P={r.get('FAIL_TO_PASS', 0):<3} {r['subject'][:70]}")
        lines.append(f"Verification records: {self.results_path.relative_to(self.settings.root)}")
        self.summary = lines
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and n_cand == 0:
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if is_worker(config) or not self.summary:
            return
        terminalreporter.section("homefield mine", sep="=", bold=True)
        for line in self.summary:
            terminalreporter.write_line(line)


class CandidatesFile(pytest.File):
    """``candidates.jsonl`` as a collector: one :class:`CandidateItem` per line, in file order."""

    def __init__(self, *, plugin: MinePlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self) -> Any:
        rel = self.nodeid
        for cand in read_jsonl(self.path):
            name = cand["commit"][:12]
            item = CandidateItem.from_parent(self, name=name, nodeid=f"{rel}::{name}", candidate=cand)
            item.add_marker("homefield")
            yield item


class CandidateItem(pytest.Item):
    """Verifies one candidate. A plain ``pytest.Item``: the repository's fixtures never wrap it."""

    def __init__(self, *, candidate: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.extra_keyword_matches.update({candidate["commit"][:12], "homefield"})

    @property
    def plugin(self) -> MinePlugin:
        return self.parent.plugin  # type: ignore[union-attr,no-any-return]

    def runtest(self) -> None:
        plugin = self.plugin
        settings = plugin.settings
        if settings.mine_max_tasks is not None:
            kept = sum(1 for r in read_jsonl(plugin.results_path) if r.get("task"))
            if kept >= settings.mine_max_tasks:
                append_jsonl(plugin.results_path, {"commit": self.candidate["commit"], "id": self.name,
                                                   "subject": self.candidate["subject"], "reason": "max_tasks"})
                raise pytest.skip.Exception(f"{REJECTED_PREFIX}max tasks reached")
        record = verify_and_record(self.candidate, settings)
        append_jsonl(plugin.results_path, record)
        self.user_properties.append(("homefield.reason", record["reason"] or "task"))
        self.user_properties.append(("homefield.fail_to_pass", record["FAIL_TO_PASS"]))
        if record["reason"] is not None:
            detail = f" ({record['detail']})" if record.get("detail") else ""
            raise pytest.skip.Exception(f"{REJECTED_PREFIX}{record['reason'].replace('_', ' ')}{detail}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield mine: {self.name} {self.candidate['subject'][:60]}"
