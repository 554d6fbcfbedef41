"""Merge-mode tasks are shown by their PR title, not git's generated merge subject."""

from __future__ import annotations

from pytest_homefield.records import Task
from pytest_homefield.report.compute import display_subject


def task(mode: str, subject: str, prompt: str) -> Task:
    return Task(id="a" * 12, commit="a" * 40, parent="b" * 40, committed_at="", authored_at="", mode=mode,
                subject=subject, message=subject, prompt=prompt, source_files=[], test_files=[], test_patch="",
                gold_patch="", FAIL_TO_PASS=["t"], PASS_TO_PASS=[])


def test_merge_subject_becomes_the_pr_title() -> None:
    t = task("merge", "Merge pull request #1223 from u/chunked-guard", "Raise ValueError for negative n\n\nbody")
    assert display_subject(t) == "Raise ValueError for negative n"


def test_commit_subject_is_kept() -> None:
    assert display_subject(task("commit", "Add mul()", "Add mul()")) == "Add mul()"
    assert display_subject(task("merge", "Merge pull request #1 from a/b", "")) == "Merge pull request #1 from a/b"
