"""Golden reports in every format, the typed report model, the table model and the formats table
(issue 29, "a typed report model").

The golden files in ``tests/golden/`` were rendered by the code before the typed model and the table
model (commit e9bfad8), so these tests hold the refactor to byte-identical output: HTML beside the
Markdown, JSON and text of ``test_report.py``, the union of two runs in every format, the terminal
report at three widths, and the ablation report (from the fixed document
``tests/data/report/ablation-doc.json``) in all four of its formats. ``UPDATE_GOLDEN=1`` rewrites
them after an intended change.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.ablate import render as ablate_render
from pytest_homefield.cli import build_parser
from pytest_homefield.records import Task
from pytest_homefield.report import (
    FORMATS,
    REPORT_FORMATS,
    Report,
    build_report,
    compute_report,
    render_html,
    render_json,
    render_markdown,
    render_text,
    render_text_plain,
    write_reports,
)
from pytest_homefield.report.html import html_table
from pytest_homefield.report.markdown import markdown_table
from pytest_homefield.report.tables import AgentName, Column, Row, Subject, Table, Text, leaderboard, similarity_table
from pytest_homefield.report.text import text_table

SOURCE_DATA = Path(__file__).parent.parent / "data" / "report"
GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def run_a(data: Path, tasks: list[Task]) -> Report:
    return compute_report([data / "run-a"], tasks, alpha=0.05, seed=0)


@pytest.fixture(scope="module")
def run_a_b(data: Path, tasks: list[Task]) -> Report:
    return compute_report([data / "run-a", data / "run-b"], tasks, alpha=0.05, seed=0)


@pytest.fixture(scope="module")
def ablation_doc() -> dict[str, Any]:
    return dict(json.loads((SOURCE_DATA / "ablation-doc.json").read_text(encoding="utf-8")))


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"golden file {path} was missing and has been written; check it and re-run")
        return
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


def _lines_jsonl(lines: list[tuple[str, dict[str, bool]]]) -> str:
    return "".join(json.dumps([t, m], ensure_ascii=False) + "\n" for t, m in lines)


# ------------------------------------------------------------------------------------- goldens


def test_golden_html(run_a: Report) -> None:
    check_golden("report-run-a.html", render_html(run_a))


@pytest.mark.parametrize("fmt", ["md", "json", "html", "txt"])
def test_golden_union_of_two_runs(run_a_b: Report, fmt: str) -> None:
    render = {"md": render_markdown, "json": render_json, "html": render_html,
              "txt": lambda r: render_text_plain(r, width=100, verbose=True)}[fmt]
    check_golden(f"report-run-a-b.{fmt}", render(run_a_b))


@pytest.mark.parametrize("width", [60, 80, 160])
@pytest.mark.parametrize("name", ["report-run-a", "report-run-a-b"])
def test_golden_terminal_lines_with_markup(run_a: Report, run_a_b: Report, name: str, width: int) -> None:
    """The short terminal report, markup included: at 60 columns the leaderboard drops columns."""
    rep = run_a if name == "report-run-a" else run_a_b
    check_golden(f"{name}-w{width}.jsonl", _lines_jsonl(render_text(rep, width=width, verbose=False)))


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
@pytest.mark.usefixtures("cli_spelling")
def test_golden_ablation_report(ablation_doc: dict[str, Any], fmt: str) -> None:
    check_golden(f"ablation.{fmt}", ablate_render.FORMATS[fmt](ablation_doc))


@pytest.mark.parametrize("width", [100, 160])
def test_golden_ablation_terminal(ablation_doc: dict[str, Any], width: int) -> None:
    check_golden(f"ablation-w{width}.jsonl", _lines_jsonl(ablate_render.render_lines(ablation_doc, width=width)))


# ------------------------------------------------------------------------------------- model


def test_build_report_is_the_models_dict(data: Path, tasks: list[Task], run_a_b: Report) -> None:
    d = build_report([data / "run-a", data / "run-b"], tasks, alpha=0.05, seed=0)
    assert d == run_a_b.to_dict()
    assert json.dumps(d, ensure_ascii=False) == json.dumps(run_a_b.to_dict(), ensure_ascii=False)  # key order too


def test_from_dict_reads_back_every_value_in_place(run_a: Report, run_a_b: Report) -> None:
    for rep in (run_a, run_a_b):
        d = json.loads(render_json(rep))
        again = Report.from_dict(d)
        assert again == rep
        assert json.dumps(again.to_dict(), ensure_ascii=False) == json.dumps(d, ensure_ascii=False)


def test_to_dict_is_a_copy(run_a: Report) -> None:
    d = run_a.to_dict()
    d["notes"].append("changed")  # type: ignore[attr-defined]
    next(iter(d["agents"].values()))["outcomes"]["solved"] = -1  # type: ignore[attr-defined]
    assert "changed" not in run_a.notes
    assert next(iter(run_a.agents.values())).outcomes.get("solved") != -1


def test_keys_a_caller_adds_are_kept_at_the_end(run_a: Report) -> None:
    d = run_a.to_dict() | {"incomplete": ["incomplete: shard 2/2 missing"], "x_extra": {"a": 1}}
    again = Report.from_dict(d)
    assert again.incomplete == ["incomplete: shard 2/2 missing"] and again.extra == {"x_extra": {"a": 1}}
    assert list(again.to_dict())[-2:] == ["incomplete", "x_extra"]
    assert render_json(again) == json.dumps(d, indent=2, ensure_ascii=False) + "\n"


def test_a_pair_not_compared_has_no_test_keys(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(
        {"schema_version": 1, "run_id": "r", "task_id": t, "agent": a, "attempt": 1, "variant": "base",
         "outcome": "solved"}) + "\n" for t, a in (("t1", "x"), ("t2", "y"))))
    c = build_report([run], [])["comparisons"][0]
    assert list(c) == ["a", "b", "test", "n_tasks", "delta", "ci", "p_value", "p_adjusted", "mde", "verdict",
                       "alpha", "significant", "note"]
    assert c["verdict"] == "x vs y: not compared (no task with scored attempts from both)"


def test_renderers_take_the_model_or_its_dict(run_a_b: Report) -> None:
    d = run_a_b.to_dict()
    assert render_markdown(run_a_b) == render_markdown(d)
    assert render_html(run_a_b) == render_html(d)
    assert render_text(run_a_b, width=80) == render_text(d, width=80)
    assert render_json(run_a_b) == render_json(d)


# ------------------------------------------------------------------------------------- formats


def test_one_table_of_formats_drives_the_cli_and_the_files(tmp_path: Path, run_a: Report) -> None:
    choices = next(a.choices for p in build_parser()._subparsers._group_actions  # type: ignore[union-attr]
                   for name, sub in p.choices.items() if name == "report"  # type: ignore[union-attr]
                   for a in sub._actions if a.dest == "format")
    assert list(choices) == list(REPORT_FORMATS) == ["text", "md", "json", "html"]
    assert FORMATS == ("md", "json", "html")
    paths = write_reports(run_a, tmp_path)
    assert [p.name for p in paths] == [REPORT_FORMATS[f].file_name() for f in FORMATS]
    for f, p in zip(FORMATS, paths, strict=True):
        assert p.read_text(encoding="utf-8") == REPORT_FORMATS[f].render(run_a)
    with pytest.raises(ValueError, match="printed, not saved"):
        REPORT_FORMATS["text"].file_name()
    with pytest.raises(ValueError, match="unknown report format 'text'"):
        write_reports(run_a, tmp_path, formats=("text",))


# ------------------------------------------------------------------------------------- tables


def _toy() -> Table:
    columns = (Column(Text("name")), Column(Text("n"), numeric=True, drop=2), Column(Text("note"), drop=1),
               Column(Text("score"), numeric=True))
    rows = (Row((AgentName("alpha", ("sim",)), Text("1"), Text("a|b $1", prose=True), Text("0.5", strong=True)),
                "sim"),
            Row((AgentName("b"), Text("22"), Text("long note text"), Text("1.0")), "bad"))
    return Table(columns, rows)


def test_text_table_aligns_drops_in_rank_order_and_marks_rows() -> None:
    wide = text_table(_toy(), width=80)
    assert [t for t, _ in wide] == ["name          n  note            score",
                                    "alpha [sim]   1  a|b $1            0.5",
                                    "b            22  long note text    1.0"]
    assert [m for _, m in wide] == [{"bold": True}, {"cyan": True}, {"red": True}]
    assert [t for t, _ in text_table(_toy(), width=30)] == ["name          n  score", "alpha [sim]   1    0.5",
                                                            "b            22    1.0"]
    assert [t for t, _ in text_table(_toy(), width=10)][0] == "name         score"  # as narrow as it gets


def test_fill_column_takes_the_room_left_or_is_left_out() -> None:
    table = Table((Column(Text("task")), Column(Text("subject"), fill=True)),
                  (Row((Text("t1"), Subject("A subject long enough to be clipped"))),))
    assert [t for t, _ in text_table(table, width=24)] == ["task  subject", "t1    A subject long en…"]
    assert [t for t, _ in text_table(table, width=11)] == ["task  subject", "t1"]


def test_markdown_and_html_render_the_same_table() -> None:
    md = markdown_table(_toy())
    assert md[:2] == ["| name | n | note | score |", "| --- | ---: | --- | ---: |"]
    assert md[2] == "| `alpha` *(sim)* | 1 | a\\|b \\$1 | **0.5** |"
    assert markdown_table(_toy(), escape=lambda s: s.replace("|", "\\|"), compact=True)[1:3] == [
        "|---|---|---|---|", "| `alpha` *(sim)* | 1 | a\\|b $1 | **0.5** |"]
    html = html_table(_toy())
    assert html.startswith("<table><thead><tr><th>name</th><th>n</th>")
    assert '<td><code>alpha</code><span class="tag">sim</span></td><td class="n">1</td><td>a|b $1</td>' in html
    assert '<td class="n"><span class="sig">0.5</span></td>' in html
    toned = Table(tuple(dataclasses.replace(c, tone_class=i == 3) for i, c in enumerate(_toy().columns)),
                  _toy().rows)
    compact = html_table(toned, compact=True, tone_classes={"sim": "s"})
    assert compact.startswith("<table><tr><th>name</th>") and "<td class='s'>0.5</td>" in compact
    assert "<td class=''>1.0</td>" in compact and "sig" not in compact


def test_the_similarity_table_is_built_once_for_markdown_and_html(run_a: Report) -> None:
    table = similarity_table(run_a)
    assert [text_table(table)[0][0].split()[0]] == ["Agent"]
    md, html = render_markdown(run_a), render_html(run_a)
    assert "\n".join(markdown_table(table)) in md
    assert html_table(table) in html
    assert html_table(leaderboard(run_a, tokens=True)) in html
