"""``homefield export`` with an ``--out`` it cannot write (issue 35 item 10): a folder, a place under
``/proc``: one line and exit 2, never a traceback; a tasks file whose line is a JSON list: one line."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from pytest_homefield.commands.export import run_export
from pytest_homefield.records import Task
from pytest_homefield.store import write_jsonl_atomic


def _repo(tmp_path: Path, tasks: list[object]) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", tasks)  # type: ignore[arg-type]
    return tmp_path


def _ns(out: str | None, fmt: str = "swe-bench") -> argparse.Namespace:
    return argparse.Namespace(out=out, format=fmt, split="test", repo_name="me/x", dataset=None)


def _task() -> dict[str, object]:
    return Task(id="abcdef123456", commit="c" * 40, parent="p" * 40, committed_at="2026-01-02T00:00:00+00:00",
                authored_at="2026-01-01T00:00:00+00:00", mode="commit", subject="Add x", message="Add x",
                prompt="Add x", source_files=["a.py"], test_files=["tests/test_a.py"], test_patch="T", gold_patch="G",
                FAIL_TO_PASS=["tests/test_a.py::test_x"], PASS_TO_PASS=[]).to_dict()


@pytest.mark.parametrize("where", ["folder", "proc"])
def test_out_that_cannot_be_written_is_one_line(tmp_path: Path, where: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, [_task()])
    # the flat JSON file onto a folder; the swebench 5 task repository (a folder) under /proc
    out = str(tmp_path) if where == "folder" else "/proc/homefield-export.jsonl"
    assert run_export(repo, _ns(out, "swe-bench-json" if where == "folder" else "swe-bench")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("homefield export: "), err
    assert ("is a folder" in err) if where == "folder" else ("cannot write /proc/homefield-export.jsonl" in err)


def test_a_json_list_line_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, [])
    (repo / ".homefield" / "tasks.jsonl").write_text("[1, 2]\n")
    assert run_export(repo, _ns(None)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "line 1: a record must be a JSON object, got list" in err


def test_run_argv_does_not_trip_on_a_json_list_line(tmp_path: Path) -> None:
    # `homefield run` builds pytest's argv before the session: the session then says it in one line
    from pytest_homefield.argv import _tasks_have_envs

    repo = _repo(tmp_path, [])
    (repo / ".homefield" / "tasks.jsonl").write_text("[1, 2]\n")
    assert _tasks_have_envs(repo) is False
