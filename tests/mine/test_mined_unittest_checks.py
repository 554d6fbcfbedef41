"""ucln62: mining's check of a task whose hidden unittest test checks after the test (a cleanup, ``tearDown``,
``tearDownClass``, a class cleanup): the teardown twin and its decoy are planted and run (two runs more), left to
grading's reference check as a fixture's are, and the reference fix keeps its task."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import build_fix_task

from pytest_homefield.mine.redgreen import verify_candidate

TEST = "tests/test_totals.py"


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["addCleanup", "tearDown", "tearDownClass", "addClassCleanup"])
def test_mining_keeps_a_task_whose_unittest_check_gets_a_teardown_twin(tmp_path: Path, shape: str) -> None:
    """The record counts 5 canaries (the body twin, the teardown twin, its decoy, the two teardown canaries) and 4
    runs (2 with no such check: tests/mine/test_mined_teardown_canary.py)."""
    from run.test_honest_shapes61 import SHAPES
    from run.test_teardown_error import FIXED, PARENT, SOURCE
    from run.test_unittest_class_checks import SHAPES as CLASS_SHAPES

    tests = {**{k: v[0] for k, v in SHAPES.items()}, **CLASS_SHAPES}[shape]
    fid = f"{TEST}::TestTotal::test_total"
    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                       first="totals", message="Count both fetches", fail_to_pass=[fid], pass_to_pass=[])
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[TEST], runnable_tests=[TEST],
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=1, log_dir=tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS, v.canaries) == (None, [fid], 5), (v.reason, v.detail)
    assert v.canary_sentinels == [] and v.canary_teardown
    assert v.twin_runs == 4
