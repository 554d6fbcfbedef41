"""The report: numbers over one or more run folders, rendered for the terminal, Markdown, JSON and
HTML.

    report = build_report([run_dir], load_tasks(tasks_path), alpha=0.05, seed=0)
    for line, markup in render_text(report, width=tr._tw.fullwidth): tr.write_line(line, **markup)
    write_reports(report, run_dir)            # report.md, report.json, report.html

:mod:`.compute` makes the numbers (docs/contracts.md §10); :mod:`.text`, :mod:`.markdown` and :mod:`.html`
only render them; :mod:`.similarity` compares an attempt's diff with the gold patch. Nothing here
imports pytest.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.report.compute import SYMBOLS, build_report
from pytest_homefield.report.html import render_html
from pytest_homefield.report.markdown import render_markdown
from pytest_homefield.report.runs import load_meta, load_results
from pytest_homefield.report.text import render_text, render_text_plain
from pytest_homefield.store import write_atomic

__all__ = [
    "FORMATS",
    "SYMBOLS",
    "build_report",
    "load_meta",
    "load_results",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "render_text_plain",
    "write_reports",
]

#: File formats :func:`write_reports` knows, by file extension.
FORMATS = ("md", "json", "html")


def render_json(report: dict[str, Any]) -> str:
    """The report dict as indented JSON (UTF-8 kept readable, key order kept), ending in a newline.
    ``json.loads`` of it equals the dict (all keys are strings already)."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_reports(report: dict[str, Any], run_dir: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write ``report.<fmt>`` for each format into ``run_dir`` (``.homefield/runs/<run_id>/``), each
    atomically (temp file + rename). Returns the paths written, in ``formats`` order. Raises
    ``ValueError`` for an unknown format before writing anything."""
    renderers = {"md": render_markdown, "json": render_json, "html": render_html}
    unknown = [f for f in formats if f not in renderers]
    if unknown:
        raise ValueError(f"unknown report format {unknown[0]!r}; expected one of {', '.join(FORMATS)}")
    paths = []
    for fmt in formats:
        path = Path(run_dir) / f"report.{fmt}"
        write_atomic(path, renderers[fmt](report))
        paths.append(path)
    return paths
