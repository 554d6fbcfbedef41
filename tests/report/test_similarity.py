"""report/similarity.py takes "what is a test file" from mine/classify.py (one rule for mining,
grading and the report)."""

from __future__ import annotations

import pytest

from pytest_homefield.mine.classify import classify_path
from pytest_homefield.report.similarity import changed_lines, is_test_path, similarity

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
