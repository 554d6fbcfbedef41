"""big60: a candidate whose task record no line of ``tasks.jsonl`` may hold is set aside by the scan (filter 13,
``too_large``) before any record of it is written; one that only looks large (a big fixture changed in one line)
stays a candidate. Real git history; the large blobs are written straight into the object store (``git
hash-object -w --stdin`` from ``seq``), never as files of the working tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.scan import TOO_LARGE, Candidate, ScanOptions, scan
from pytest_homefield.store import MAX_LINE_BYTES


def _stage_seq(repo: GitRepo, path: str, count: int, sed: str = "") -> int:
    """Stage at ``path`` the text of ``seq 1 count`` (``sed``: a sed script applied to it), written as a blob from
    a pipe; its size in bytes."""
    script = f"seq 1 {count}" + (f" | sed '{sed}'" if sed else "") + " | git hash-object -w --stdin"
    sha = subprocess.run(["sh", "-c", script], cwd=repo.path, capture_output=True, text=True, check=True).stdout.strip()
    repo.git("update-index", "--add", "--cacheinfo", f"100644,{sha},{path}")
    return int(repo.git("cat-file", "-s", sha))


@pytest.mark.slow  # 70 MB through git diff and JSON: some 4 s alone, 14 s on the loaded CI machine
def test_a_change_too_large_for_a_record_is_set_aside_at_the_scan(tmp_path: Path) -> None:
    """Before: the commit adding a 68.9 MB text fixture beside its fix (``max_diff_lines`` counts non-test files
    only) was a candidate, verified and kept, and its task's ``test_patch`` made ``tasks.jsonl`` unreadable. Now it
    is ``too_large`` at the scan; a 5.9 MB fixture changed in one line (past the blob-size bound, a small patch) and
    an ordinary fix stay candidates."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", "def test_core():\n    assert True\n")
    repo.commit("Initial import of the package")
    repo.write("pkg/core.py", "def core():\n    return 2\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 2\n")
    assert _stage_seq(repo, "tests/data/numbers.txt", 800_000) > 5_000_000
    ordinary = repo.commit("Make core return two and keep a table of numbers")
    repo.write("pkg/core.py", "def core():\n    return 3\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 3\n")
    _stage_seq(repo, "tests/data/numbers.txt", 800_000, sed="s/^400000$/four hundred thousand/")
    one_line = repo.commit("Make core return three and spell one number of the table")
    repo.write("pkg/core.py", "def core():\n    return 4\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 4\n")
    size = _stage_seq(repo, "tests/data/huge.txt", 9_000_000)
    assert size > MAX_LINE_BYTES
    huge = repo.commit("Make core return four, checked against a huge table of numbers")

    result = scan(repo.path, ScanOptions(min_message_words=0))
    candidates = {c.commit for c in result.candidates}
    assert candidates == {ordinary, one_line}, result.rejected
    (rejected,) = [r for r in result.rejected if r.commit == huge]
    assert rejected.reason == TOO_LARGE and result.counts == {"root_commit": 1, TOO_LARGE: 1}
    assert rejected.detail.startswith("its patches and message are ") and "bytes of files changed" in rejected.detail
    assert all(isinstance(c, Candidate) and c.diff_lines is None for c in result.candidates)


def test_a_verification_record_no_line_holds_is_set_aside_before_it_is_sent(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What only verification adds (the FAIL_TO_PASS and PASS_TO_PASS ids) can take a task past the line cap too:
    its record is then ``too_large``, no task, before any message carries it (before: the record was sent whole, and
    the controller's append wrote a line no reader reads, or, with the writers' cap, stopped the mine). Here a reused
    record, no test run, against a cap of 20,000 characters (``pipeline.MAX_LINE_BYTES``, read at each call)."""
    import pytest_homefield.mine.pipeline as pipeline
    from pytest_homefield.layout import HomefieldDir
    from pytest_homefield.mine.pipeline import MineSession, fit_record
    from pytest_homefield.records import Task, load_tasks
    from pytest_homefield.settings import Settings
    from pytest_homefield.store import dumps, read_jsonl, write_jsonl_atomic
    from pytest_homefield.transport import ControllerWriter

    sha = "a" * 40
    candidate = {"commit": sha, "parent": "b" * 40, "test_files": ["tests/test_x.py"], "subject": "Add x to y",
                 "message": "Add x to y", "committed_at": "2024-01-01T00:00:00+00:00", "verify_key": "k" * 64,
                 "authored_at": "2024-01-01T00:00:00+00:00", "source_files": ["pkg/x.py"]}
    ids = [f"tests/test_x.py::test_{n}" for n in range(1000)]  # some 30,000 characters of ids
    task = Task(id=sha[:12], commit=sha, parent="b" * 40, committed_at=candidate["committed_at"],
                authored_at=candidate["authored_at"], mode="commit", subject="Add x to y", message="Add x to y",
                prompt="Add x to y", source_files=["pkg/x.py"], test_files=["tests/test_x.py"], test_patch="",
                gold_patch="", FAIL_TO_PASS=ids, PASS_TO_PASS=[]).to_dict()
    prior = {"commit": sha, "id": sha[:12], "subject": "Add x to y", "reason": None, "detail": "",
             "FAIL_TO_PASS": len(ids), "PASS_TO_PASS": 0, "excluded": {}, "seconds": 1.5,
             "verify_key": candidate["verify_key"], "reused_from": "m0", "task": task}
    assert fit_record(prior) is prior  # under the real cap it fits
    session = MineSession(Settings(root=tmp_path), HomefieldDir(tmp_path).new_mine_dir())
    write_jsonl_atomic(session.candidates_path, [candidate])
    write_jsonl_atomic(session.reused_path, [prior])
    monkeypatch.setattr(pipeline, "MAX_LINE_BYTES", 20_000)
    verdict = session.verify(candidate, sha[:12])
    assert "task" not in verdict.record and verdict.record["reason"] == "too_large"
    assert verdict.rejected is not None and verdict.rejected.startswith("too large (its verification record is ")
    assert len(dumps(verdict.record)) < 1000 and verdict.record["verify_key"] == candidate["verify_key"]
    ControllerWriter(session.home.path).deliver(session.messages(verdict))  # what the controller does
    assert [r["reason"] for r in read_jsonl(session.results_path)] == ["too_large"]
    lines = session.finish()
    assert load_tasks(session.settings.tasks_path) == []
    assert any(line.startswith("Dropped: 1 of 1 candidate verified (too large 1)") for line in lines), lines
