"""The report's formats, in one table: the name ``homefield report --format`` takes, the renderer,
and the file a run folder keeps (``report.<suffix>``; ``text`` is printed only).

A new format is one renderer (``Report -> str``) and one row of :data:`REPORT_FORMATS`: the CLI's
``--format`` choices, :func:`write_reports` and the run's end all read the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_homefield.report.html import render_html
from pytest_homefield.report.markdown import render_markdown
from pytest_homefield.report.model import JsonObject, Report, as_report
from pytest_homefield.report.text import render_text_plain
from pytest_homefield.store import write_atomic

__all__ = ["FORMATS", "REPORT_FORMATS", "Format", "render_json", "write_reports"]


def render_json(report: Report | JsonObject) -> str:
    """The report as indented JSON (docs/contracts.md §10; UTF-8 kept readable, key order kept), ending
    in a newline. ``json.loads`` of it equals :meth:`Report.to_dict` (all keys are strings already).
    ``ValueError`` for a NaN or infinite number."""
    return json.dumps(as_report(report).to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@dataclass(frozen=True)
class Format:
    """One report format: its ``name`` (``--format NAME``), how to ``render`` a report, whether a run
    folder keeps it as ``report.<name>`` (``saved``), and whether ``homefield report`` prints it on
    stdout (``printed``; otherwise it prints the saved file's path)."""

    name: str
    render: Callable[[Report], str]
    saved: bool = True
    printed: bool = True

    def file_name(self) -> str:
        """``report.md`` …; raises ``ValueError`` for a format that is never saved."""
        if not self.saved:
            raise ValueError(f"the {self.name} report is printed, not saved")
        return f"report.{self.name}"


#: Every format, in ``--format`` order (``text`` first: the default).
REPORT_FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("text", render_text_plain, saved=False),
        Format("md", render_markdown),
        Format("json", render_json),
        Format("html", render_html, printed=False),
    )
}

#: The formats a run folder keeps, by file extension, in the order :func:`write_reports` writes them.
FORMATS = tuple(name for name, f in REPORT_FORMATS.items() if f.saved)


def write_reports(report: Report | JsonObject, run_dir: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``report.<fmt>`` for each format into ``run_dir`` (``.homefield/runs/<run_id>/``), each
    atomically (temp file + rename). Returns the paths written, in ``formats`` order. Raises
    ``ValueError`` for an unknown format before writing anything."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report format {unknown[0]!r}; expected one of {', '.join(FORMATS)}")
    rep = as_report(report)
    paths = []
    for name in formats:
        fmt = REPORT_FORMATS[name]
        path = Path(run_dir) / fmt.file_name()
        write_atomic(path, fmt.render(rep))
        paths.append(path)
    return paths
