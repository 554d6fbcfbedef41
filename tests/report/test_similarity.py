"""report/similarity.py takes "what is a test file" from mine/classify.py (one rule for mining,
grading and the report); each attempt's similarity is computed once and kept."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from pytest_homefield.layout import HomefieldDir, attempt_dir, similarity_path
from pytest_homefield.paths import classify_path
from pytest_homefield.records import Result, load_tasks
from pytest_homefield.report import build_report
from pytest_homefield.report.compute import _similarity_split
from pytest_homefield.report.runs import Attempt
from pytest_homefield.report.similarity import changed_lines, is_test_path, similarity, similarity_of_lines

PATHS = [
    "tests/unit/helpers.py", "pkg/test_x.py", "conftest.py", "src/x_test.go", "web/a.spec.js",
    "src/testing_utils.py", "src/contest.py",
    # the paths on which the report's own rule used to disagree with classify.py
    "numpy/testing/utils.py", "lib/spec/thing.rb", "testing/helpers.py", "spec/models/user_spec.rb",
    "pkg/testdata/input.txt", "web/__snapshots__/a.snap", "docs/index.md",
]


@pytest.mark.parametrize("path", PATHS)
def test_is_test_path_is_the_classify_rule(path: str) -> None:
    assert is_test_path(path) == (classify_path(path) == "test")


def test_rule_on_formerly_disputed_paths() -> None:
    assert not is_test_path("numpy/testing/utils.py")  # a nested testing/ folder is source
    assert not is_test_path("lib/spec/thing.rb")
    assert is_test_path("testing/helpers.py") and is_test_path("spec/models/user_spec.rb")
    assert is_test_path("pkg/testdata/input.txt")  # fixture data travels with the tests


def test_task_files_and_globs_count_as_tests() -> None:
    assert is_test_path("m.py", ["m.py"])
    assert not is_test_path("qa/check_x.py")
    assert is_test_path("qa/check_x.py", test_globs=["qa/"])


def _patch(path: str, line: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old\n+{line}\n"


def test_changed_lines_skip_test_files_by_the_shared_rule() -> None:
    patch = _patch("pkg/testdata/in.txt", "data") + _patch("numpy/testing/utils.py", "code")
    assert changed_lines(patch) == {("-", "old"): 1, ("+", "code"): 1}
    assert changed_lines(patch, test_globs=["numpy/testing/"]) == {}


def test_similarity_with_globs() -> None:
    gold = _patch("src/a.py", "fix")
    agent = gold + _patch("qa/check.py", "noise")
    assert similarity(agent, gold).f1 < 1.0
    assert similarity(agent, gold, test_globs=["qa/"]).exact


def test_each_attempts_similarity_is_computed_once_and_kept(tmp_path: Path) -> None:
    """The report keeps every attempt's similarity in ``runs/<id>/similarity.json`` and reads it back
    while the attempt's ``diff.patch`` and the gold patch are unchanged (issue 18)."""
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "report.py"
    build = runpy.run_path(str(bench))["build"]
    repo = tmp_path / "repo"
    run_id = build(repo, tasks=4, attempts=2)
    home = HomefieldDir(repo)
    run = home.run_dir(run_id)
    tasks = load_tasks(home.tasks)
    first = build_report([run], tasks)
    cache = json.loads(similarity_path(run).read_text())
    assert cache["version"] == 1 and len(cache["attempts"]) == 4 * 5 * 2
    key = f"{tasks[0].id}/alpha/1"
    assert first["tasks"][0]["similarity"]["alpha"][0] == round(cache["attempts"][key][4], 6)
    # the kept value is what the next report uses ...
    cache["attempts"][key][4] = 0.123456
    similarity_path(run).write_text(json.dumps(cache))
    assert build_report([run], tasks)["tasks"][0]["similarity"]["alpha"][0] == 0.123456
    # ... until the attempt's diff changes
    patch = attempt_dir(run, tasks[0].id, "alpha", 1) / "diff.patch"
    patch.write_text(tasks[0].gold_patch + "\n")
    again = build_report([run], tasks)
    assert again["tasks"][0]["similarity"]["alpha"][0] == 1.0
    assert json.loads(similarity_path(run).read_text())["attempts"][key][3] is True  # exact
    # an unreadable cache is ignored (and replaced)
    similarity_path(run).write_text("{not json")
    assert build_report([run], tasks)["tasks"][0]["similarity"] == again["tasks"][0]["similarity"]
    assert json.loads(similarity_path(run).read_text())["version"] == 1


def test_similarity_of_lines_is_similarity() -> None:
    gold = _patch("pkg/a.py", "x = 1") + _patch("pkg/b.py", "y = 2")
    agent = _patch("pkg/a.py", "x = 1") + _patch("tests/test_a.py", "z")
    assert similarity(agent, gold) == similarity_of_lines(changed_lines(agent), changed_lines(gold))


def test_a_flagged_solve_is_in_the_solved_similarity_mean(tmp_path: Path) -> None:
    """ratk48: the similarity split follows the rates' count (``records.counts_solved``). Since sus60 a solve
    flagged ``suspicious`` counts solved (the flag a hint), so its edit-F1 (0.9 here) is the solved mean's, with
    the clean solve's 0.5; a failed attempt's 0.2 is the unsolved mean."""
    def attempt(f1: float, **flags: bool) -> Attempt:
        return Attempt(Result(run_id="r", task_id="t", agent="a", attempt=1, outcome="solved", **flags),
                       tmp_path, None, f1)

    failed = Attempt(Result(run_id="r", task_id="t", agent="a", attempt=2, outcome="tests_failed"), tmp_path, None, 0.2)
    split = _similarity_split([attempt(0.9, suspicious=True), attempt(0.5), failed])
    assert (split.mean_f1_solved, split.mean_f1_unsolved) == (0.7, 0.2)
