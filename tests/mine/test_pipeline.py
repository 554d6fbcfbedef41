"""mine/pipeline.py: freezing candidates, verifying one into a task record, merging tasks.jsonl
(contracts §4, §6, §7), on the tiny real repository of :mod:`helpers.attack_repo`; and the mining
session without pytest items (workers, the --max-tasks stop, the summary)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import F2P, NO_PLUGINS, P2P, Fixture, build
from helpers.gitrepo import GitRepo

from pytest_homefield.layout import HomefieldDir, candidates_path, results_path, scan_path
from pytest_homefield.mine.pipeline import (
    MAX_TASKS_REACHED,
    MineSession,
    drop_summary,
    dropped_line,
    dropped_tasks_line,
    env_summary,
    freeze_candidates,
    merge_tasks,
    missing_modules_line,
    other_python_note,
    python_of,
    scan_options,
    verify_and_record,
)
from pytest_homefield.mine.redgreen import VERIFY_VERSION
from pytest_homefield.records import Task, load_tasks
from pytest_homefield.settings import Settings, resolve_settings
from pytest_homefield.store import append_jsonl, read_jsonl, write_jsonl_atomic
from pytest_homefield.transport import ControllerWriter

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


@pytest.mark.slow
def test_verify_and_record_builds_the_task(fx: Fixture, frozen: tuple[Path, Any]) -> None:
    mine_dir, _ = frozen
    cand = next(c for c in read_jsonl(mine_dir / "candidates.jsonl") if c["commit"] == fx.c2)
    rec = verify_and_record(cand, _settings(fx.root), test_cmd=TEST_CMD)
    # test_sub.py is new at the commit: its test_add_still_works is red at the parent too, but only through the
    # import of sub(): a stub of the missing name passes it there (ms35): excluded, not FAIL_TO_PASS
    assert (rec["commit"], rec["id"], rec["reason"], rec["FAIL_TO_PASS"], rec["PASS_TO_PASS"]) == (
        fx.c2, fx.c2[:12], None, len(F2P), 0)
    task = Task.from_dict(rec["task"])
    assert (task.parent, task.test_files, task.source_files) == (fx.c1, ["tests/test_sub.py"], ["src/calc/__init__.py"])
    assert sorted(task.FAIL_TO_PASS) == sorted(F2P) and task.PASS_TO_PASS == []
    assert task.excluded == {i: "passes_with_stub" for i in P2P}
    assert task.test_cmd == TEST_CMD and task.languages == ["python"] and task.diff_lines > 0
    assert "+def sub(a, b):" in task.gold_patch and "tests/test_sub.py" in task.test_patch
    assert fx.c1[:10] not in task.prompt  # the cleaned prompt drops shas
    assert task.verify["stability_runs"] == 1
    assert isinstance(task.verify["load_per_cpu"], float) and task.verify["load_per_cpu"] >= 0  # usr63: plan's scale
    assert task.mined_version == VERIFY_VERSION  # sand54: a later rule can tell the tasks mined before it
    env_file = fx.root / ".homefield" / "envs" / f"{task.env_fingerprint}.json"
    assert json.loads(env_file.read_text())  # kept for `homefield verify`


def test_verify_and_record_reports_a_drop(fx: Fixture, frozen: tuple[Path, Any]) -> None:
    mine_dir, _ = frozen
    cand = next(c for c in read_jsonl(mine_dir / "candidates.jsonl") if c["commit"] == fx.c2)
    rec = verify_and_record(cand, _settings(fx.root), test_cmd="true")  # runs no test at all
    assert rec["reason"] == "setup_failed" and "task" not in rec
    assert rec["detail"].startswith("the test command produced no outcomes")
    assert rec["FAIL_TO_PASS"] == 0


def test_a_candidate_whose_tests_write_past_the_cap_is_dropped_saying_so(fx: Fixture,
                                                                         frozen: tuple[Path, Any]) -> None:
    """``max_test_write_mb`` reaches mining: a test command that writes 3 MiB into its ``TMPDIR`` (the
    repository's own tests: nothing else runs at mining) is stopped at a cap of 1 MiB, and the candidate
    dropped as ``writes_over_cap`` with the knob named (contracts §7). In bubblewrap that ``TMPDIR``
    would be a tmpfs of 1 MiB, refusing the writes instead."""
    mine_dir, _ = frozen
    cand = next(c for c in read_jsonl(mine_dir / "candidates.jsonl") if c["commit"] == fx.c2)
    write = 'for i in 1 2 3; do head -c 1000000 /dev/zero > "$TMPDIR/blob$i"; done; exec "$@"'
    rec = verify_and_record(cand, _settings(fx.root, max_test_write_mb=1.0, sandbox="none"),  # TMPDIR: watched
                            test_cmd=f"sh -c {shlex.quote(write)} sh {TEST_CMD}")
    assert rec["reason"] == "writes_over_cap" and "task" not in rec, rec
    assert rec["detail"] == (
        "in parent run 1: the test process wrote over 1 MiB into its folders (max_test_write_mb); stopped; the "
        "repository's own tests at the parent write this much (a real, if odd, repository: raise "
        "--max-test-write-mb to keep such commits)")


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
    tasks, removed, dropped, _ = merge_tasks(path, verified)
    assert [t.id for t in tasks] == ["c", "a", "keep"] and removed == []  # newest commit first
    assert dropped == {"b": "flaky"}
    assert next(t for t in tasks if t.id == "a").subject == "new"
    assert [r["id"] for r in read_jsonl(path)] == ["c", "a", "keep"]


def test_merge_tasks_removes_a_task_the_scan_now_rejects_as_a_duplicate(tmp_path: Path) -> None:
    """nu48, pallets/werkzeug: de546be7144c was kept by a mine before the scan knew it for a backport of
    d3d3df56c98b; the next mine's scan rejected it as ``duplicate_change`` and still left its task in tasks.jsonl
    ("8 tasks … 1 kept from earlier mines"), one fix twice. A task of another window stays, and (gatk50) the older
    copy stays while its newer copy is no task in the file written."""
    path = tmp_path / "tasks.jsonl"
    write_jsonl_atomic(path, [_task("dup", "2026-02-23"), _task("new", "2026-03-23"), _task("keep", "2025-06-01")])
    verified = [{"id": "new", "task": _task("new", "2026-03-23")}]
    tasks, removed, _, _ = merge_tasks(path, verified, duplicates={"dup": "new", "gone": "new"})
    assert [t.id for t in tasks] == ["new", "keep"]
    assert removed == ["dup"]  # the ids it removed, said by the caller: "gone" was no task in the file
    write_jsonl_atomic(path, [_task("dup", "2026-02-23"), _task("keep", "2025-06-01")])
    tasks, removed, _, _ = merge_tasks(path, [], duplicates={"dup": "new"})
    assert [t.id for t in tasks] == ["dup", "keep"] and removed == []


def test_merge_tasks_max_tasks_keeps_the_newest_of_this_session(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    write_jsonl_atomic(path, [_task("old", "2020-01-01")])
    verified = [{"id": i, "task": _task(i, f"2026-01-0{n}")} for n, i in enumerate("xyz", 1)]
    assert [t.id for t in merge_tasks(path, verified, max_tasks=2).tasks] == ["z", "y", "old"]


def test_merge_tasks_never_removes_a_task_for_a_broken_environment(tmp_path: Path) -> None:
    """keep66, usr46: a typo in setup_cmd re-verified the tasks on file, dropped them as setup_failed and rewrote
    tasks.jsonl smaller (11 tasks to 5). A drop that says nothing of the commit keeps the task, and a file whose
    records do not change is not written (byte-identical); a verdict on the commit removes it, the file as it was
    kept as the backup asked for."""
    path = tmp_path / "tasks.jsonl"
    write_jsonl_atomic(path, [_task("a", "2026-01-02"), _task("b", "2026-01-01")])
    path.write_bytes(path.read_bytes().replace(b'", "', b'","'))  # another writer's spacing: same records
    before = path.read_bytes()
    backup = tmp_path / "tasks.jsonl.before-x"
    failed = [{"id": "a", "reason": "setup_failed", "detail": "setup_cmd failed at the parent (exit status 127)"},
              {"id": "b", "reason": "reference_fails", "missing_modules": ["yaml"]}]
    merged = merge_tasks(path, failed, backup=backup)
    assert [t.id for t in merged.tasks] == ["a", "b"] and merged.dropped == {} and merged.backup is None
    assert path.read_bytes() == before and not backup.exists()
    slow = [{"id": "a", "reason": "timeout", "detail": "the commit's tests ran over --test-timeout 60"}]
    assert [t.id for t in merge_tasks(path, slow, backup=backup).tasks] == ["a", "b"] and not backup.exists()
    merged = merge_tasks(path, [failed[0], {"id": "b", "reason": "passes_without_change"}], backup=backup)
    assert [t.id for t in merged.tasks] == ["a"] and merged.dropped == {"b": "passes_without_change"}
    assert merged.backup == backup and backup.read_bytes() == before
    assert dropped_tasks_line(merged.dropped) == (
        "Removed from tasks.jsonl: 1 task that this mine verified again and dropped (b: passes without change)")


def test_drop_summary() -> None:
    assert drop_summary([]) == "" and drop_summary([None, None]) == ""
    assert drop_summary(["reference_fails", None, "passes_without_change", "reference_fails"]) == (
        "reference fails 2, passes without change 1")


def test_dropped_line_keeps_the_candidates_dropped_apart_from_the_commits_the_scan_set_aside() -> None:
    """ux33: the demo's ``Mined 8 tasks from 11 candidates`` was followed by 8 drops in one list, 5 of them
    commits the scan set aside, which never were candidates."""
    scan = ["no_test_change", "docs_only", "no_test_change"]
    assert dropped_line(["reference_fails", None, "flaky", None], scan) == (
        "2 of 4 candidates verified (reference fails 1, flaky 1); 3 commits at the scan, before any test "
        "(no test change 2, docs only 1)")
    assert dropped_line([None], ["docs_only"]) == "1 commit at the scan, before any test (docs only 1)"
    assert dropped_line(["flaky"], []) == "1 of 1 candidate verified (flaky 1)"
    assert dropped_line([None, None], []) is None and dropped_line([], []) is None


# -- the mining session ----------------------------------------------------------------------------


def _full_task(sha: str, day: int) -> dict[str, Any]:
    return Task(id=sha[:12], commit=sha, parent="ff" * 20, committed_at=f"2026-01-{day:02d}T00:00:00+00:00",
                authored_at="", mode="commit", subject=f"subject {day}", message="", prompt="", source_files=[],
                test_files=[], test_patch="", gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[]).to_dict()


def _candidate(sha: str) -> dict[str, Any]:
    return {"commit": sha, "subject": f"candidate {sha[:4]}"}


def _session(root: Path, **kw: Any) -> MineSession:
    s = Settings(root=root)
    for k, v in kw.items():
        setattr(s, k, v)
    mine_dir = HomefieldDir(root).new_mine_dir()
    return MineSession(s, mine_dir)


def test_start_freezes_the_scan_and_a_worker_joins(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/mod.py", "x = 1\n")
    repo.commit("Initial module with a value")
    s = Settings(root=repo.path)
    session = MineSession.start(s)
    assert session.mine_dir.parent == HomefieldDir(repo.path).mine
    assert session.candidates_path == candidates_path(session.mine_dir) and session.candidates_path.exists()
    assert scan_path(session.mine_dir).exists()
    assert session.scan_result is not None and session.n_candidates == 0
    worker = MineSession.join(s, json.loads(json.dumps(session.workerinput())))
    assert (worker.mine_dir, worker.results_path, worker.scan_result) == \
        (session.mine_dir, results_path(session.mine_dir), None)


def test_max_tasks_stops_verifying_once_enough_are_kept(tmp_path: Path) -> None:
    session = _session(tmp_path, mine_max_tasks=1)
    # another worker already kept a task
    append_jsonl(session.results_path, {"commit": "aa" * 20, "id": "a", "subject": "s", "reason": None,
                                        "task": _full_task("aa" * 20, 1)})
    verdict = session.verify(_candidate("bb" * 20), "bbbbbbbbbbbb")
    assert (verdict.rejected, verdict.verified) == (MAX_TASKS_REACHED, False)
    ControllerWriter(session.home.path).deliver(session.messages(verdict))  # what the controller does
    assert list(read_jsonl(session.results_path))[-1] == {
        "commit": "bb" * 20, "id": "bbbbbbbbbbbb", "subject": "candidate bbbb", "reason": "max_tasks"}
    assert session.kept_so_far() == 1  # each line is counted once


def test_finish_merges_the_last_record_per_commit(tmp_path: Path) -> None:
    session = _session(tmp_path, mine_max_tasks=None)
    a, b, c = "aa" * 20, "bb" * 20, "cc" * 20
    write_jsonl_atomic(session.candidates_path, [_candidate(x) for x in (a, b, c)])
    write_jsonl_atomic(scan_path(session.mine_dir), [{"commit": "dd" * 20, "reason": "docs_only"}])
    earlier = {**_full_task("ee" * 20, 9), "spec_score": 0.8, "well_specified": True}  # an earlier session's task
    write_jsonl_atomic(session.settings.tasks_path, [earlier])
    append_jsonl(session.results_path, {"commit": a, "id": a[:12], "subject": "A", "reason": "passes_without_change"})
    append_jsonl(session.results_path, {"commit": a, "id": a[:12], "subject": "A", "reason": None,
                                        "FAIL_TO_PASS": 1, "task": _full_task(a, 2)})  # re-run item: last wins
    append_jsonl(session.results_path, {"commit": b, "id": b[:12], "subject": "B", "reason": "reference_fails"})
    append_jsonl(session.results_path, {"commit": c, "id": c[:12], "subject": "C", "reason": "max_tasks"})
    lines = session.finish(verbose=True)
    assert [t.id for t in load_tasks(session.settings.tasks_path)] == ["ee" * 6, a[:12]]
    assert lines[0] == "Mined 1 task from 3 candidates (4 commits examined); 2 tasks in .homefield/tasks.jsonl"
    assert lines[1] == "Candidates: reused 0, verified 2"
    assert lines[2] == ("Dropped: 1 of 2 candidates verified (reference fails 1); 1 commit at the scan, before any "
                        "test (docs only 1)")
    # nu28: how many tasks are vague was said by homefield tasks only
    assert lines[3].startswith("Vague: 1 of the 2 tasks (spec_score < 0.5; ")
    assert lines[4].startswith(f"  {a[:12]}  task ") and "F2P=1 " in lines[4] and " verified " in lines[4]
    assert lines[-1] == f"Verification records: {session.results_path.relative_to(tmp_path)}"


def test_verbose_lines_follow_the_scan_order_not_the_finishing_order(tmp_path: Path) -> None:
    """nu20: under -n 2 the per-candidate lines of ``mine -v`` came in the order the verifications finished
    (structlog: 2026-03-29, 2026-05-02, 2026-03-29, …), unlike ``--list-candidates``' newest first."""
    session = _session(tmp_path, mine_max_tasks=None)
    a, b, c = "aa" * 20, "bb" * 20, "cc" * 20
    write_jsonl_atomic(session.candidates_path, [_candidate(x) for x in (a, b, c)])  # the scan's order
    for x in (c, a, b):
        append_jsonl(session.results_path, {"commit": x, "id": x[:12], "subject": x[:4], "reason": "reference_fails"})
    lines = session.finish(verbose=True)
    assert [ln.split()[0] for ln in lines if ln.startswith("  ")] == [a[:12], b[:12], c[:12]]


def test_env_summary_counts_built_reused_and_failed() -> None:
    records = [{"env": {"key": "a", "built": True, "build_s": 10.0}}, {"env": {"key": "a", "built": False,
               "build_s": 0.0}}, {"env": {"key": "b", "built": True, "build_s": 2.5}},
               {"env": {"key": None, "built": False, "build_s": 1.0, "error": "x"}}, {"reason": None}]
    assert env_summary(records) == "environments: 2 distinct, 2 built (12.5 s), 1 reused, 1 failed to build"
    assert env_summary([{"reason": None}]) == ""
    # a verification reused from an earlier session built nothing in this one
    assert env_summary([{"env": {"key": "a", "built": True, "build_s": 10.0}, "reused_from": "m1"}]) == ""


def test_missing_modules_line_names_the_modules_and_the_interpreter() -> None:
    # a pyenv shim or a venv without homefield in it can put another python first on PATH than the
    # one the test dependencies went into: the line says which one the tests ran with
    verified = [{"reason": "reference_fails", "missing_modules": ["freezegun"]},
                {"reason": None, "missing_modules": ["freezegun", "yaml"]}, {"reason": "passes_without_change"}]
    line = missing_modules_line(verified, "/opt/py/bin/python")
    assert line == ("Missing modules: freezegun (2 candidates), yaml (1): the tests ran with /opt/py/bin/python; "
                    "install them there (or with setup_cmd) and mine again (a changed environment is verified "
                    "again).")
    assert "the test command's environment lacks them" in str(missing_modules_line(verified[:1], None))
    assert missing_modules_line(verified[2:], "/opt/py/bin/python") is None


def test_other_python_note_names_the_interpreter_of_another_environment(tmp_path: Path) -> None:
    """nu35: a virtualenv's ``homefield`` called by its path, not activated, ran every test with the
    ``python`` on PATH (pyenv's), told only at a mine's end; a real second environment is named at the
    start, and the interpreter running this test (its own environment) gives no line."""
    import subprocess
    import venv

    assert other_python_note(f"{shlex.quote(sys.executable)} -m pytest -x") is None
    other = tmp_path / "other"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(other)
    python = other / "bin" / "python"
    prefix = subprocess.run([str(python), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                            check=True).stdout.strip()
    note = other_python_note(f"{python} -m pytest")
    assert note is not None and note.startswith(f"homefield: the tests run with {python} (its environment ")
    assert f"its environment {Path(prefix).resolve()}), not with {sys.executable}, which runs homefield" in note
    assert note.endswith("set test_cmd in .homefield.yml")
    assert other_python_note(f"{python} -m pytest", env="uv") is None  # each task's own environment
    assert other_python_note("npm test") is None
    assert other_python_note("/no/such/python -m pytest") is None  # does not run: no claim


def test_other_python_note_says_the_python_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare ``python`` is the one PATH finds, and the line says so."""
    import venv

    other = tmp_path / "other"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(other)
    monkeypatch.setenv("PATH", f"{other / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    note = other_python_note("python -m pytest")
    assert note is not None and note.startswith(f"homefield: the tests run with {other / 'bin' / 'python'} "
                                                "(the python on PATH; its environment ")
