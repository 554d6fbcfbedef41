"""gatk39: the tests of a ``Test…`` class nested in another, under soft statements (contracts §7).

pytest collects a ``Test…`` class inside a ``Test…`` class; ``canary_soft`` softened only module-level functions and
the methods of module-level classes, so a nested class's tests had no soft statement. A failing twin there stopped at
its site and left what the rest of its body puts back (twin37's case, ``tests/run/test_after_twin.py``): another
group's original after it failed, a real fix ``tests_failed`` (seeds 1 and 2 of 0-2; seed 2 in the confirmation run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.canary_soft import SOFT, softened
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/modes/__init__.py"
TEST = "tests/test_modes.py"
PARENT = "MODE = {'scale': 1}\n\n\ndef compute(x):\n    return x * MODE['scale']\n"
FIXED = ("MODE = {'scale': 1}\n\n\ndef compute(x):\n    if x < 0:\n        return -x * MODE['scale']\n"
         "    return x * MODE['scale'] + (1 if MODE['scale'] > 1 else 0)\n")
BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
TESTS = ("from modes import MODE, compute\n\n\nclass TestOuter:\n    class TestInner:\n"
         "        def test_scaled(self):\n            MODE['scale'] = 3\n            assert compute(2) == 7\n"
         "            MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n\n\n"
         "def test_plain():\n    assert compute(2) == 2\n")
NESTED = f"{TEST}::TestOuter::TestInner"


def test_a_nested_classs_tests_are_soft() -> None:
    text = ("class TestA:\n    class TestB:\n        class TestC:\n            def test_x(self):\n"
            "                assert 1 == 2\n\n        def test_y(self):\n            x = 1\n\n    def helper(self):\n"
            "        y = 2\n")
    assert softened(text).count(SOFT) == 2, softened(text)


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_what_a_nested_classs_twin_left(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{NESTED}::test_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED.replace("def compute", "# mirrored\ndef compute"), encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=1,
              run_timeout_s=120)
    assert g.outcome == "solved", g
