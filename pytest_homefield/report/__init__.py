"""The report: numbers over one or more run folders, rendered for the terminal, Markdown, JSON and
HTML.

    report = compute_report([run_dir], load_tasks(tasks_path), alpha=0.05, seed=0)
    for line, markup in render_text(report, width=tr._tw.fullwidth): tr.write_line(line, **markup)
    write_reports(report, run_dir)            # report.md, report.json, report.html

:mod:`.compute` makes the numbers, a :class:`~.model.Report` (its ``to_dict()`` is the JSON of
docs/contracts.md §10, what :func:`build_report` returns); :mod:`.tables` lays them out as tables
that :mod:`.text`, :mod:`.markdown` and :mod:`.html` only render; :mod:`.formats` is the one table of
formats; :mod:`.stats` compares agents and :mod:`.verdicts` words the result; :mod:`.similarity`
compares an attempt's diff with the gold patch. Every renderer takes a :class:`~.model.Report` or
its dict. Nothing here imports pytest.
"""

from __future__ import annotations

from pytest_homefield.report.compute import SYMBOLS, build_report, compute_report
from pytest_homefield.report.formats import FORMATS, REPORT_FORMATS, Format, render_json, write_reports
from pytest_homefield.report.html import render_html
from pytest_homefield.report.markdown import render_markdown
from pytest_homefield.report.model import Report, as_report
from pytest_homefield.report.runs import load_meta, load_results
from pytest_homefield.report.text import render_text, render_text_plain

__all__ = [
    "FORMATS",
    "REPORT_FORMATS",
    "SYMBOLS",
    "Format",
    "Report",
    "as_report",
    "build_report",
    "compute_report",
    "load_meta",
    "load_results",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "render_text_plain",
    "write_reports",
]
