"""The report at the end of a run's session: the one entry point the run mode calls
(:func:`finish_run`), so that ``run/`` builds, writes and renders no report itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.records import load_tasks
from pytest_homefield.report import build_report, render_text, write_reports
from pytest_homefield.report.adaptive import not_needed_reason
from pytest_homefield.report.gate import GateLine, worse_than
from pytest_homefield.report.runs import cut_short_by_key

__all__ = ["FinishedReport", "finish_run", "RunReports", "RUN_REPORTS"]


@dataclass
class FinishedReport:
    """A run's report as its session ends: ``report`` (docs/contracts.md §10; ``None`` when it could not
    be built: ``error`` says why, the results stay on disk) and ``write_error`` (why
    ``report.{md,json,html}`` could not be written, a full disk, else ``None``)."""

    report: dict[str, Any] | None = None
    error: str = "no results"
    write_error: str | None = None

    def text(self, width: int, verbose: bool) -> list[tuple[str, dict[str, bool]]]:
        """The report as terminal lines with markup (:func:`pytest_homefield.report.render_text`),
        at most ``width`` columns where possible; none without a report."""
        if self.report is None:
            return []
        return render_text(self.report, width=width, verbose=verbose)


def finish_run(run_dir: Path, tasks_path: Path) -> FinishedReport:
    """Build the report over the run folder ``run_dir`` (``.homefield/runs/<run_id>/``) with the tasks of
    ``tasks_path`` and write ``report.{md,json,html}`` into it. Never raises: a report that cannot be
    built is ``FinishedReport(report=None, error=…)`` (the report must never lose the run), files that
    cannot be written are left as they were and named in ``write_error``."""
    try:
        report = build_report([run_dir], load_tasks(tasks_path), stamp=True)  # made_by: the viewer may reuse it
    except Exception as exc:  # the report must never lose the run: results are on disk
        return FinishedReport(error=f"{type(exc).__name__}: {exc}")
    try:
        write_reports(report, run_dir)
    except OSError as exc:  # a full disk: the results are kept, the files are not written
        return FinishedReport(report=report, write_error=str(exc))
    return FinishedReport(report=report)


class RunReports:
    """The report package's side of a run's end (the protocol
    :class:`pytest_homefield.run.session.RunReports`): :func:`finish_run` and the regression gate
    :func:`pytest_homefield.report.gate.worse_than`."""

    def finish(self, run_dir: Path, tasks_path: Path) -> FinishedReport:
        return finish_run(run_dir, tasks_path)

    def worse_than(self, candidates: Sequence[Path], baseline: Path, *, alpha: float) -> list[GateLine]:
        return worse_than(candidates, baseline, alpha=alpha)

    def not_needed(self, results: Sequence[Mapping[str, Any]], agents: Sequence[tuple[str, str | None]], agent: str,
                   attempt: int, *, looks: int, alpha: float, margin: float, run_dir: Path | None = None,
                   session: str | None = None) -> str | None:
        cut = {k[:3] for k in cut_short_by_key([run_dir], other_than=session)} if run_dir is not None else set()
        return not_needed_reason(results, agents, agent, attempt, looks=looks, alpha=alpha, margin=margin, cut=cut)


#: What the entry point hands to the run mode.
RUN_REPORTS = RunReports()
