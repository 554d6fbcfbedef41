"""A re-mine never throws away tasks already mined (keep66). usr46 found: a mine with a typo in ``setup_cmd`` verified
the tasks on file again, dropped them as ``setup_failed`` and rewrote ``tasks.jsonl`` smaller (11 tasks to 5; on the
base, this test's 2 tasks went to 0). Real ``homefield mine`` runs of a repository of two task commits: the first
keeps 2 tasks; a typo in ``setup_cmd`` then stops at the first task it cannot set up, one line naming the command and
its output, exit 1, ``tasks.jsonl`` byte-identical; a setup that really breaks the tasks' reference (a verdict on the
commits under the inputs the user gave) removes them, says so, and keeps the file as it was beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.e2e_repo import homefield
from helpers.many_tasks_repo import build_many

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def test_a_broken_setup_leaves_tasks_jsonl_as_it_was_and_a_verdict_removes_with_a_backup(tmp_path: Path) -> None:
    repo = build_many(tmp_path / "repo", n=2)
    first = homefield(repo, "mine")
    assert first.returncode == 0, first.stdout + first.stderr
    tasks = repo / ".homefield" / "tasks.jsonl"
    before = tasks.read_bytes()
    ids = sorted(t["id"] for t in read_jsonl(tasks))
    assert len(ids) == 2
    config = (repo / ".homefield.yml").read_text()

    (repo / ".homefield.yml").write_text(config + 'setup_cmd: "pip-instal -e ."\n')
    typo = homefield(repo, "mine")
    assert typo.returncode == 1, typo.stdout + typo.stderr
    assert tasks.read_bytes() == before
    stopped = [line for line in typo.stdout.splitlines() if line.startswith("Stopped: ")]
    assert len(stopped) == 1, typo.stdout
    assert "setup_cmd 'pip-instal -e .' failed at the parent (exit status 127)" in stopped[0]
    assert "pip-instal: not found" in stopped[0] and "tasks.jsonl is unchanged (2 tasks)" in stopped[0]
    assert not list(tasks.parent.glob("tasks.jsonl.before-*"))

    # the tasks' reference fails under this setup: a verdict on the commits as configured, which removes them
    wrong = "printf 'import pkg\\\\npkg.f1 = pkg.f2 = lambda: 0\\\\n' > conftest.py"
    (repo / ".homefield.yml").write_text(config + f'setup_cmd: "{wrong}"\n')
    removed = homefield(repo, "mine")
    assert removed.returncode == 1, removed.stdout + removed.stderr
    assert list(read_jsonl(tasks)) == []
    said = ", ".join(f"{i}: reference fails" for i in ids)
    assert f"Removed from tasks.jsonl: 2 tasks that this mine verified again and dropped ({said})" in removed.stdout
    backups = list(tasks.parent.glob("tasks.jsonl.before-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == before
    assert f"tasks.jsonl as it was before: .homefield/{backups[0].name}" in removed.stdout
