"""mine/pipeline.py: freezing candidates, verifying one into a task record, merging tasks.jsonl
(contracts §4, §6, §7), on the tiny real repository of :mod:`helpers.attack_repo`."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import F2P, NO_PLUGINS, P2P, Fixture, build

from pytest_homefield.mine.pipeline import (
    drop_summary,
    freeze_candidates,
    merge_tasks,
    new_id,
    python_of,
    scan_options,
    verify_and_record,
)
from pytest_homefield.records import Task
from pytest_homefield.settings import resolve_settings
from pytest_homefield.store import read_jsonl, write_jsonl_atomic

TEST_CMD = f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}"


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("pipeline") / "repo")


def _settings(root: Path, **flags: Any) -> Any:
    return resolve_settings(root, {"stability_runs": 1, **flags}, mode="mine")


@pytest.fixture(scope="module")
def frozen(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    mine_dir = tmp_path_factory.mktemp("mine")
    return mine_dir, freeze_candidates(_settings(fx.root), mine_dir)


def test_new_id_is_utc_time_and_a_random_suffix() -> None:
    a, b = new_id(), new_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", a)
    assert a != b or a[:-4] == b[:-4]


def test_python_of() -> None:
    assert python_of(f"{sys.executable} -m pytest -x") == sys.executable
    assert python_of("python3 -m pytest") == shutil.which("python3")
    assert python_of("/no/such/python -m pytest") == "/no/such/python"
    assert python_of("npm test") is None
    assert python_of("") is None and python_of("'unclosed") is None


def test_scan_options_follow_the_settings(tmp_path: Path) -> None:
    s = _settings(tmp_path, since="2026-01-01", paths=["src,lib", "docs"], max_commits=5, first_parent=True)
    o = scan_options(s)
    assert (o.since, o.paths, o.max_commits, o.first_parent) == ("2026-01-01", ["src", "lib", "docs"], 5, True)
    assert (o.max_source_files, o.min_message_words, o.test_globs) == (s.max_source_files, s.min_message_words,
                                                                       list(s.test_globs))


def test_freeze_writes_candidates_and_rejections(fx: Fixture, frozen: tuple[Path, Any]) -> None:
    mine_dir, result = frozen
    candidates = list(read_jsonl(mine_dir / "candidates.jsonl"))
    assert [c["commit"] for c in candidates] == [c.commit for c in result.candidates]
    assert {c["commit"] for c in candidates} >= {fx.c2, fx.c3}
    rejected = list(read_jsonl(mine_dir / "scan.jsonl"))
    assert [r["commit"] for r in rejected] == [r.commit for r in result.rejected]
    assert all(set(r) == {"commit", "subject", "reason", "detail"} for r in rejected)
    assert fx.c4 not in {c["commit"] for c in candidates}  # on another branch


def test_verify_and_record_builds_the_task(fx: Fixture, frozen: tuple[Path, Any]) -> None:
    mine_dir, _ = frozen
    cand = next(c for c in read_jsonl(mine_dir / "candidates.jsonl") if c["commit"] == fx.c2)
    rec = verify_and_record(cand, _settings(fx.root), test_cmd=TEST_CMD)
    # test_sub.py is new at the commit: its test_add_still_works is red at the parent too
    assert (rec["commit"], rec["id"], rec["reason"], rec["FAIL_TO_PASS"], rec["PASS_TO_PASS"]) == (
        fx.c2, fx.c2[:12], None, len(F2P + P2P), 0)
    task = Task.from_dict(rec["task"])
    assert (task.parent, task.test_files, task.source_files) == (fx.c1, ["tests/test_sub.py"], ["src/calc/__init__.py"])
    assert sorted(task.FAIL_TO_PASS) == sorted(F2P + P2P) and task.PASS_TO_PASS == []
    assert task.test_cmd == TEST_CMD and task.languages == ["python"] and task.diff_lines > 0
    assert "+def sub(a, b):" in task.gold_patch and "tests/test_sub.py" in task.test_patch
    assert fx.c1[:10] not in task.prompt  # the cleaned prompt drops shas
    assert task.verify["stability_runs"] == 1
    env_file = fx.root / ".homefield" / "envs" / f"{task.env_fingerprint}.json"
    assert json.loads(env_file.read_text())  # kept for `homefield verify`


def test_verify_and_record_reports_a_drop(fx: Fixture, frozen: tuple[Path, Any]) -> None:
    mine_dir, _ = frozen
    cand = next(c for c in read_jsonl(mine_dir / "candidates.jsonl") if c["commit"] == fx.c2)
    rec = verify_and_record(cand, _settings(fx.root), test_cmd="true")  # runs no test at all
    assert rec["reason"] == "setup_failed" and "task" not in rec
    assert rec["detail"].startswith("the test command produced no outcomes")
    assert rec["FAIL_TO_PASS"] == 0


def _task(i: str, at: str) -> dict[str, Any]:
    return {"id": i, "commit": i * 2, "parent": "p", "committed_at": at, "authored_at": at, "mode": "commit",
            "subject": i, "message": i, "prompt": i, "source_files": [], "test_files": [], "test_patch": "",
            "gold_patch": "", "FAIL_TO_PASS": [], "PASS_TO_PASS": []}


def test_merge_tasks_replaces_adds_removes_and_orders(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    old_a = {**_task("a", "2026-01-01"), "subject": "old"}
    write_jsonl_atomic(path, [old_a, _task("b", "2026-01-02"), _task("keep", "2025-06-01")])
    verified = [
        {"id": "a", "task": {**_task("a", "2026-01-01"), "subject": "new"}},  # re-verified: replaced
        {"id": "b", "reason": "flaky"},                                        # dropped this time: removed
        {"id": "c", "task": _task("c", "2026-02-01")},                         # new
    ]
    tasks = merge_tasks(path, verified)
    assert [t.id for t in tasks] == ["c", "a", "keep"]  # newest commit first
    assert next(t for t in tasks if t.id == "a").subject == "new"
    assert [r["id"] for r in read_jsonl(path)] == ["c", "a", "keep"]


def test_merge_tasks_max_tasks_keeps_the_newest_of_this_session(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_jsonl_atomic(path, [_task("old", "2020-01-01")])
    verified = [{"id": i, "task": _task(i, f"2026-01-0{n}")} for n, i in enumerate("xyz", 1)]
    assert [t.id for t in merge_tasks(path, verified, max_tasks=2)] == ["z", "y", "old"]


def test_drop_summary() -> None:
    assert drop_summary([]) == "" and drop_summary([None, None]) == ""
    assert drop_summary(["reference_fails", None, "passes_without_change", "reference_fails"]) == (
        "reference fails 2, passes without change 1")
