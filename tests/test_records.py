"""records.py: every record read is validated; the error is one line naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_homefield.records import RecordError, Result, Task, check_meta, load_results, load_tasks

TASK = {"schema_version": 1, "id": "abc123abc123", "commit": "a" * 40, "parent": "b" * 40,
        "committed_at": "2026-01-01T00:00:00+00:00", "authored_at": "2026-01-01T00:00:00+00:00", "mode": "commit",
        "subject": "Add x", "message": "Add x", "prompt": "Add x", "source_files": ["x.py"],
        "test_files": ["tests/test_x.py"], "test_patch": "", "gold_patch": "", "FAIL_TO_PASS": ["t::a"],
        "PASS_TO_PASS": []}


def _write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


@pytest.mark.parametrize(("line", "message"), [
    ('{"schema_version": 1, "id": "abc', "line 2: not valid JSON (truncated or garbage)"),
    ("garbage here", "line 2: not valid JSON (truncated or garbage)"),
    ("[1, 2, 3]", "line 2: a record must be a JSON object, got list"),
    ({k: v for k, v in TASK.items() if k != "gold_patch"}, "line 2: field 'gold_patch' is missing"),
    ({**TASK, "FAIL_TO_PASS": "t::a"}, "line 2: field 'FAIL_TO_PASS' must be a list of strings, got string 't::a'"),
    ({**TASK, "diff_lines": "12"}, "line 2: field 'diff_lines' must be an integer, got string '12'"),
    ({**TASK, "schema_version": 2}, "line 2: field 'schema_version' is 2; this version of homefield reads 1 only"),
    ({**TASK, "id": TASK["id"]}, "line 2: field 'id': task 'abc123abc123' is also on line 1"),
])
def test_a_bad_task_line_is_one_line_naming_file_line_and_field(tmp_path: Path, line: object, message: str) -> None:
    path = _write(tmp_path / "tasks.jsonl", TASK, line)
    with pytest.raises(RecordError) as err:
        load_tasks(path)
    assert str(err.value) == f"{path}: {message}"


def test_valid_tasks_load_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    path = _write(tmp_path / "tasks.jsonl", {**TASK, "future_field": 1}, {**TASK, "id": "other"})
    assert [t.id for t in load_tasks(path)] == ["abc123abc123", "other"]
    assert Task.from_dict(TASK).FAIL_TO_PASS == ["t::a"]


def test_results_skip_a_torn_line_but_refuse_a_bad_record(tmp_path: Path) -> None:
    ok = Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="solved").to_dict()
    path = _write(tmp_path / "results.jsonl", ok, '{"run_id": "r", "task_')
    assert len(load_results(path)) == 1
    _write(path, ok, {**ok, "attempt": 0})
    with pytest.raises(RecordError, match=r"line 2: field 'attempt' must be at least 1, got 0$"):
        load_results(path)
    _write(path, ok, {**ok, "cost_usd": "0.5"})
    with pytest.raises(RecordError, match=r"line 2: field 'cost_usd' must be a number or null, got string '0.5'$"):
        load_results(path)


@pytest.mark.parametrize(("meta", "message"), [
    ([], "must be a JSON object, got array []"),
    ({"schema_version": 2}, "field 'schema_version' is 2; this version of homefield reads 1 only"),
    ({"run_id": "r", "created_at": "x", "attempts": "3", "tasks_digest": "d", "task_ids": []},
     "field 'attempts' must be an integer, got string '3'"),
    ({"run_id": "r", "created_at": "x", "attempts": 3, "tasks_digest": "d", "task_ids": [], "agents": [{"name": 1}]},
     "field 'agents' must be a list of {name, spec} objects, got array [{'name': 1}]"),
])
def test_meta_is_checked(meta: object, message: str) -> None:
    with pytest.raises(RecordError) as err:
        check_meta(meta)
    assert str(err.value) == message


def test_every_field_type_has_a_check() -> None:
    # a field added to Task or Result without a _CHECKS entry would crash every read with a KeyError
    import dataclasses

    from pytest_homefield.records import _CHECKS

    missing = [(c.__name__, f.name, str(f.type)) for c in (Task, Result) for f in dataclasses.fields(c)
               if str(f.type) not in _CHECKS]
    assert missing == []


def test_a_canary_id_the_test_process_reported_is_sendable_visible_text() -> None:
    """atk14 A5: a made-up instance ``f[\\x00\\ud800]`` of a twin was the record's ``canary`` as is; no
    xdist worker could send it and the whole session died. It is one line of visible UTF-8 text."""
    made_up = "t.py::f[\x00\ud800]" + "x" * 900
    r = Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="forged", canary=made_up)
    assert r.canary is not None and r.canary.encode("utf-8") and r.canary.startswith("t.py::f[\\x00\\ud800]")
    assert len(r.canary) == 500 and r.canary.isprintable()
