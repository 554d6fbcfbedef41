"""gatk46: a twin of an ``assertCountEqual`` holding another value with the same items in another order (contracts
§7, the value twins; issue 30).

``assertCountEqual`` does not compare order, while the twins' values were drawn unequal by ``==``: another test's
expected value, or a ``parametrize`` row's, that is the original's reordered was taken (``[3, 1, 2]`` for ``[1, 2,
3]``), and every real fix passed that twin beside its passing original: ``forged``. The twins of such a site are now
drawn apart by its own rule (:data:`~pytest_homefield.sandbox.canary_values.COUNTED`): other items, not another
order.
"""

from __future__ import annotations

import ast
import random
from collections import Counter
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

from pytest_homefield.sandbox.canary_sites import find_site
from pytest_homefield.sandbox.canary_values import COUNTED, apart, derangements

SOURCE = "src/bag/__init__.py"
TEST = "tests/test_bag.py"
PARENT = "def members(text):\n    return text.split(',')\n"
FIXED = "def members(text):\n    return text.split()\n"
#: The reference fix written otherwise (its own bytes get no canaries).
SAME = "def members(text):\n    # words\n    return list(text.split())\n"
TESTS = ("import unittest\n\nimport pytest\n\nfrom bag import members\n\ncase = unittest.TestCase()\n\n\n"
         "@pytest.mark.parametrize(\"text,expected\", [(\"a b c\", [\"a\", \"b\", \"c\"]), "
         "(\"c b a\", [\"c\", \"b\", \"a\"])])\n"
         "def test_members(text, expected):\n"
         "    case.assertCountEqual(members(text), expected)\n")
#: A forgery: every ``assertCountEqual`` of the test process holds.
NO_COUNT = "\nimport unittest\n\nunittest.TestCase.assertCountEqual = lambda self, a, b, msg=None: None\n"
F2P = [f"{TEST}::test_members[a b c-expected0]", f"{TEST}::test_members[c b a-expected1]"]


def test_another_order_is_not_apart_under_count_equal() -> None:
    assert apart([1, 2, 3], [3, 1, 2], COUNTED) is False
    assert apart([1, 2, 3], [1, 2, 4], COUNTED) is True
    assert apart([[1], [2]], [[2], [1]], COUNTED) is False  # unhashable items: matched one by one
    assert apart("abc", "cab", COUNTED) is False
    assert derangements([[1, 2], [2, 1]], 2, random.Random(0), tol=COUNTED) == []


@pytest.mark.parametrize("seed", range(8))
def test_no_twin_of_a_count_equal_site_holds_the_same_items(seed: int) -> None:
    """Before: every seed drew ``[3, 1, 2]`` or ``[2, 3, 1]`` (the file's other values) for the first site, and the
    column's other row for the second."""
    literal = ast.parse("def test_x(self):\n    self.assertCountEqual(f(), [1, 2, 3])\n").body[0]
    column = ast.parse("@pytest.mark.parametrize('x,expected', [(1, [1, 2]), (2, [2, 1]), (3, [5, 6])])\n"
                       "def test_y(self, x, expected):\n    self.assertCountEqual(f(x), expected)\n").body[0]
    assert isinstance(literal, ast.FunctionDef) and isinstance(column, ast.FunctionDef)
    site = find_site(literal, 2, random.Random(seed), pool=[[3, 1, 2], [2, 3, 1], [9, 8]])
    assert site is not None and site.twins
    assert all(Counter(ast.literal_eval(t)) != Counter([1, 2, 3]) for t, _ in site.twins), site.twins
    site = find_site(column, 2, random.Random(seed))
    assert site is not None and site.twins
    originals = [[1, 2], [2, 1], [5, 6]]
    for text, _ in site.twins:
        rows = ast.literal_eval(text)
        assert all(Counter(r[1]) != Counter(o) for r, o in zip(rows, originals, strict=True)), text


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("bag"), name="bag", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="bag", message="Split members on whitespace",
                          fail_to_pass=F2P, pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved(bag: FixTask, tmp_path: Path, seed: int) -> None:
    """``forged`` on both seeds before (the twin took the other row's reordered list)."""
    g = grade_source(bag, tmp_path, SOURCE, SAME, canaries=True, canary_seed=seed)
    assert g.outcome == "solved", g.error


@pytest.mark.slow
def test_the_twins_still_catch_a_forger(bag: FixTask, tmp_path: Path) -> None:
    """A forger that makes every ``assertCountEqual`` hold (no fix): ``forged`` on the twin."""
    g = grade_source(bag, tmp_path, SOURCE, PARENT + NO_COUNT, canaries=True, canary_seed=0)
    assert g.outcome == "forged", (g.outcome, g.error)
