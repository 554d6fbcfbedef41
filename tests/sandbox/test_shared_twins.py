"""A test definition several collected classes run (a base class's test) gets a real twin when every class
running it is a FAIL_TO_PASS function given twins, or runs nothing graded (issue 30, round 8 leak B;
sandbox/twin_runs.py): it had an appended sentinel, which fails by constant evaluation (a test process
evaluating a test's last statement told it). A fixture repository, the reference fix run on each member."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pytest_homefield.sandbox.twin_runs import TWIN_MARK, plan_twins

CODE = "def area(w, h):\n    return w * h\n"
TESTS = '''from shapes import area


class TestBase:
    size = 3

    def test_area(self):
        assert area(self.size, 4) == self.size * 4
        assert area(2, 5) == 10


class TestWide(TestBase):
    size = 7


class TestTall(TestBase):
    size = 9
'''
PATH = "test_shapes.py"
IDS = [f"{PATH}::{c}::test_area" for c in ("TestBase", "TestTall", "TestWide")]


def _repo(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "shapes.py").write_text(CODE)
    (tmp_path / PATH).write_text(TESTS)
    return tmp_path


def _outcomes(root: Path, text: bytes) -> dict[str, bool]:
    """Each class's ``test_area`` → passed, with ``text`` as the test file (the reference fix: ``shapes.py``)."""
    (root / PATH).write_bytes(text)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", PATH], cwd=root,
                          env=env, capture_output=True, text=True)
    return {i: f"PASSED {i}" in done.stdout for i in IDS}


def test_a_base_class_test_gets_one_twin_group_of_every_class_and_the_reference_fails_each(tmp_path: Path
                                                                                          ) -> None:
    root = _repo(tmp_path)
    plan = plan_twins(root, IDS, seed=2, pass_to_pass=[])
    assert sorted(plan.placement) == IDS and len(set(plan.placement.values())) == 1, plan.placement
    assert all(c.kind == "contradiction" for c in plan.canaries), [c.how for c in plan.canaries]
    assert sorted(c.node for c in plan.canaries) == [f"{i}{TWIN_MARK}1" for i in IDS]
    original, twin = (plan.runs[plan.placement[IDS[0]].index(m)][PATH] for m in (0, 1))
    assert original != twin and original.count(b"def test_area") == twin.count(b"def test_area") == 1
    assert all(_outcomes(root, original).values()), "the reference fix passes every class's original"
    assert not any(_outcomes(root, twin).values()), "and fails every class's twin"
    # a class's function past the limit joins the group too (it costs no run)
    limited = plan_twins(root, IDS, seed=2, pass_to_pass=[], limit=1)
    assert sorted(limited.placement) == IDS and len(set(limited.placement.values())) == 1
    # the merge names each class's twin instance
    merged = plan.merge([{i: "failed" if m else "passed" for i in IDS} for m in plan.placement[IDS[0]]], IDS)
    assert {k: v for k, v in merged.items() if TWIN_MARK in k} == {f"{i}{TWIN_MARK}1": "failed" for i in IDS}


def test_a_class_running_it_that_is_pass_to_pass_or_unknown_keeps_the_sentinel(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    f2p = IDS[:2]  # TestWide passes at the parent: a twin would fail it in its run
    for p2p in ([IDS[2]], None):
        plan = plan_twins(root, f2p, seed=2, pass_to_pass=p2p)
        assert not plan.placement
        assert {c.how for c in plan.canaries} == {"sentinel: other tests run the same definition"}


def test_a_class_whose_ids_are_not_graded_runs_the_twin_outside_the_group(tmp_path: Path) -> None:
    # TestWide's id is in neither list (excluded from the task: it fails with the reference fix too)
    root = _repo(tmp_path)
    plan = plan_twins(root, IDS[:2], seed=2, pass_to_pass=[f"{PATH}::test_other"])
    assert sorted(plan.placement) == IDS[:2] and all(c.kind == "contradiction" for c in plan.canaries)
