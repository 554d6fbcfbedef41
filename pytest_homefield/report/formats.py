"""The report's formats, in one table: the name ``homefield report --format`` takes, the renderer,
and the file a run folder keeps (``report.<suffix>``; ``text`` is printed only).

A new format is one renderer (``Report -> str``) and one row of :data:`REPORT_FORMATS`: the CLI's
``--format`` choices, :func:`write_reports` and the run's end all read the table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.report.html import render_html
from pytest_homefield.report.markdown import render_markdown
from pytest_homefield.report.model import JsonObject, Report, as_report
from pytest_homefield.report.text import render_text_plain
from pytest_homefield.store import write_atomic

__all__ = ["FORMATS", "REPORT_FORMATS", "Format", "render_json", "write_reports"]


def render_json(report: Report | JsonObject) -> str:
    """The report as indented JSON (docs/contracts.md §10; UTF-8 kept readable, key order kept), ending
    in a newline. ``json.loads`` of it equals :meth:`Report.to_dict` (all keys are strings already).

    The text is exactly ``json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False)``, written by
    :func:`_indented` (``json.dumps`` with an indent runs the standard library's pure-Python encoder:
    0.08 s of a 1,000-task report, 0.06 s this way, issue 35); ``ValueError`` for a NaN or infinite number
    as there."""
    d = as_report(report).to_dict()
    out: list[str] = []
    try:
        _indented(d, out, "\n")
    except _NotPlain:  # a key or value the fast path does not write: the standard library decides
        return json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    out.append("\n")
    return "".join(out)


class _NotPlain(Exception):
    """A value :func:`_indented` leaves to ``json.dumps`` (a key that is not a string, an unknown type)."""


_encode_str = json.encoder.encode_basestring  # the C function json.dumps(ensure_ascii=False) uses


#: exact value types -> how json.dumps writes them (the types json.loads gives, and tuples' members)
_SCALARS: dict[type, Callable[[Any], str]] = {
    str: _encode_str, int: int.__repr__, float: float.__repr__, bool: lambda v: "true" if v else "false",
    type(None): lambda v: "null",
}


def _indented(value: object, out: list[str], newline: str) -> None:
    """Append ``value`` as ``json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)`` writes
    it, at the nesting whose line break plus indentation is ``newline``."""
    if isinstance(value, str):
        out.append(_encode_str(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (math.inf, -math.inf):
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        out.append(float.__repr__(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        kinds = set(map(type, value))
        if kinds <= _SCALARS.keys():  # a list of plain values (outcomes, similarities): one join, no recursion
            if float in kinds and not all(map(math.isfinite, (v for v in value if type(v) is float))):
                raise ValueError(f"Out of range float values are not JSON compliant: "
                                 f"{next(v for v in value if type(v) is float and not math.isfinite(v))!r}")
            out.append("[" + inner + ("," + inner).join([_SCALARS[type(v)](v) for v in value]) + newline + "]")
            return
        out.append("[")
        sep = inner
        for item in value:
            out.append(sep)
            _indented(item, out, inner)
            sep = "," + inner
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        out.append("{")
        sep = inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain
            out.append(sep + _encode_str(key) + ": ")
            _indented(item, out, inner)
            sep = "," + inner
        out.append(newline + "}")
    else:
        raise _NotPlain


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
