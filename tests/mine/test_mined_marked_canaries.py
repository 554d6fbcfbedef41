"""gatk54: mining a repository whose configuration selects its tests by mark (``addopts = -m unit``, the hidden test
marked ``unit``). The teardown canaries (tcan50, can52) were planted unmarked, deselected by that ``-m``, and mining's
check read a canary that did not run as one the reference fix does not fail: the real commit was dropped,
``reference_passes_canary`` ("canary … (teardown of …) did not run"), measured on 1e97cb7. A planted test now carries
its function's marks (``canaries.marks_of``): the task is kept, its teardown canaries judged."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import build_fix_task

from pytest_homefield.mine.redgreen import verify_candidate

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import pytest\n\nimport totals\n\n\n@pytest.mark.unit\ndef test_total():\n    assert totals.total() == 4\n"
SELECTS = {"pytest.ini": "[pytest]\naddopts = -m unit\nmarkers =\n    unit: fast\n"}


@pytest.mark.slow
def test_a_commit_of_a_repository_selecting_by_mark_is_kept(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                       first="totals", message="Count both", fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[],
                       project=False, parent_data=SELECTS)
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[TEST], runnable_tests=[TEST],
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=1, log_dir=tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS, v.canaries) == (None, [f"{TEST}::test_total"], 3), (v.reason, v.detail)
    assert v.canary_teardown
