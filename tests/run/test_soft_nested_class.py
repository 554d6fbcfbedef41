"""gatk39: the tests of a ``Test…`` class nested in another, under soft statements (contracts §7).

pytest collects a ``Test…`` class inside a ``Test…`` class; ``canary_soft`` softened only module-level functions and
the methods of module-level classes, so a nested class's tests had no soft statement. A failing twin there stopped at
its site and left what the rest of its body puts back (twin37's case, ``tests/run/test_after_twin.py``): another
group's original after it failed, a real fix ``tests_failed`` (seeds 1 and 2 of 0-2; seed 2 in the confirmation run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import TEST, grade_modes

from pytest_homefield.sandbox.canary_soft import SOFT, softened

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
    g = grade_modes(tmp_path, TESTS, 1, fail_to_pass=[f"{NESTED}::test_scaled", f"{TEST}::test_negative"])
    assert g.outcome == "solved", g
