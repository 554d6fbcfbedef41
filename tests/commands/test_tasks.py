"""``homefield tasks``: each task's spec score with the parts that made it (issue 35 item 8)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_homefield.cli import main
from pytest_homefield.commands.tasks import task_lines
from pytest_homefield.records import Task
from pytest_homefield.store import write_jsonl_atomic

GOLD = ("diff --git a/pkg/num.py b/pkg/num.py\n--- a/pkg/num.py\n+++ b/pkg/num.py\n"
        "@@ -1,2 +1,4 @@ def intword(value):\n-    return str(value)\n+    if value < 0:\n"
        "+        return '-' + intword(-value)\n+    return str(value)\n")


def task(i: int, prompt: str, *, score: float, well: bool) -> Task:
    return Task(id=f"{i:012d}", commit=f"{i:040d}", parent="0" * 40, committed_at="", authored_at="",
                mode="commit", subject=prompt, message=prompt, prompt=prompt, source_files=["pkg/num.py"],
                test_files=[], test_patch="", gold_patch=GOLD, FAIL_TO_PASS=["t::a", "t::b"], PASS_TO_PASS=[],
                spec_score=score, well_specified=well)


def test_lines_give_the_score_its_parts_and_what_mining_recorded() -> None:
    lines = task_lines([task(1, "Fix intword for negative numbers", score=0.15, well=False),
                        task(2, "Update config", score=0.0, well=False)], 0.5)
    first = lines[1]
    # named the changed function and a condition: lifted to the threshold, though mined as vague
    assert first.startswith("000000000001    2  0.50        Fix intword for negative numbers  [")
    assert first.endswith("[words +0.15 precise +0.35] (mined: 0.15 vague)")
    assert lines[2].split()[:4] == ["000000000002", "2", "0.00", "vague"]
    assert lines[-1] == ("2 tasks, 1 vague (spec_score < 0.5; spec_threshold in .homefield.yml moves it); 1 scored "
                         "otherwise at mining: homefield mine again re-scores them without running a test")


def test_a_subjects_escape_sequences_are_shown_not_played() -> None:
    """host29: ``homefield tasks`` printed a commit subject's ESC sequences raw (one cleared the screen)."""
    lines = task_lines([task(1, "Fix intword\x1b[2J\x1b[H\rall good\u202e", score=0.15, well=False)], 0.5,
                       verbose=True)
    assert "  Fix intword\\x1b[2J\\x1b[H  [" in lines[1]  # the subject; -v adds the prompt's lines after it
    assert any(ln.endswith("| all good\\u202e") for ln in lines)
    assert [ln for ln in lines if "\x1b" in ln or "\r" in ln or "\u202e" in ln] == []


def test_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["tasks"]) == 2
    assert "no tasks yet" in capsys.readouterr().err
    (tmp_path / ".homefield").mkdir()
    (tmp_path / ".homefield" / "tasks.jsonl").write_text("[1, 2]\n")
    assert main(["tasks"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("homefield tasks: ") and err.count("\n") == 1
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl",
                       [task(1, "Fix intword for negative numbers", score=0.6, well=True).to_dict(),
                        task(2, "Tidy up the number module a bit more", score=0.3, well=False).to_dict()])
    (tmp_path / ".homefield.yml").write_text("spec_threshold: 0.6\n")
    assert main(["tasks", "-v"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the repository's threshold: a precise prompt is lifted to it, a vague one stays below
    assert out[1].split()[:4] == ["000000000001", "2", "0.60", "Fix"]
    assert out[2].strip() == "| Fix intword for negative numbers"
    assert out[3].split()[:4] == ["000000000002", "2", "0.30", "vague"]
    assert out[-1] == "2 tasks, 1 vague (spec_score < 0.6; spec_threshold in .homefield.yml moves it)"


def test_a_task_whose_commits_tests_were_deselected_names_them() -> None:
    """bld62: a test of the commit that the repository's configuration deselects is in no list of the task;
    ``homefield tasks`` said nothing of it (before: one line, the task's)."""
    t = task(1, "Fix intword for negative numbers", score=0.5, well=True)
    t.excluded = {"t::c": "deselected", "t::d": "flaky", "t::e": "deselected"}
    lines = task_lines([t], 0.5)
    assert lines[2] == (f"{'':30}left out, deselected by the repository's configuration: 2 tests of the commit's "
                        "test files, t::c, t::e"), lines
    assert len(task_lines([task(2, "Fix intword for negative numbers", score=0.5, well=True)], 0.5)) == 3
