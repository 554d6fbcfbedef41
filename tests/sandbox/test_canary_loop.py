"""Twins of a table of rows a loop unpacks (canary_loop, sub33: more-itertools 1c21c3ae9c79's
``RunningMeanTests::test_basic``). Pure planning, no test process; the graded fixture is
tests/run/test_loop_rows.py."""

from __future__ import annotations

import ast
import random
import textwrap
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_loop import loop_rows_site
from pytest_homefield.sandbox.canary_rows import NOT_ROWS
from pytest_homefield.sandbox.twin_runs import plan_twins


def _func(body: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(body)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _column(table: str, at: int) -> list[str]:
    """The source texts of column ``at`` of a rows list written as text."""
    rows = ast.parse(table, mode="eval").body
    assert isinstance(rows, (ast.List, ast.Tuple))
    return [ast.unparse(r.elts[at]) for r in rows.elts if isinstance(r, (ast.Tuple, ast.List))]


#: more-itertools' test as it is (``actual`` on a line of its own; computed cells among literal ones).
RUNNING_MEAN = """
def test_basic(self):
    for i, (iterable, expected) in enumerate(
        [
            ([], []),
            ([1], [1.0]),
            ([1, 2], [1.0, 1.5]),
            ([Fraction(1, 1), Fraction(2, 1)], [Fraction(1, 1), Fraction(3, 2)]),
            ([Decimal('1.0'), Decimal('2.0')], [Decimal('1.0'), Decimal('1.5')]),
            ([8.5, 9.5, 7.5, 6.5], [8.5, 9.0, 8.5, 8.0]),
        ]
    ):
        with self.subTest(i=i):
            actual = list(mi.running_mean(iterable))
            self.assertEqual(actual, expected)
"""


@pytest.mark.parametrize("seed", range(6))
def test_running_mean_literal_cells_are_deranged_and_computed_ones_stay(seed: int) -> None:
    """The literal expected cells move among their rows, each to an unequal one; the ``Fraction``/``Decimal`` cells
    and the input column keep their text."""
    site = loop_rows_site(_func(RUNNING_MEAN), 2, random.Random(seed))
    assert site is not None and site.strong and len(site.twins) == 2
    before = _column(site.original, 1)
    for text, how in site.twins:
        after = _column(text, 1)
        assert _column(text, 0) == _column(site.original, 0)
        assert after[3:5] == before[3:5] and "Fraction" in after[3] and "Decimal" in after[4]
        literal = [0, 1, 2, 5]
        assert sorted(after[n] for n in literal) == sorted(before[n] for n in literal)
        assert all(ast.literal_eval(after[n]) != ast.literal_eval(before[n]) for n in literal), (before, after)
        assert how.startswith("column expected of the loop's rows -> ")


def test_a_flat_target_and_an_assert_statement() -> None:
    site = loop_rows_site(_func("""
        def test_t():
            for n, expected in [(1, 2), (2, 4), (3, 6)]:
                assert double(n) == expected
        """), 1, random.Random(0))
    assert site is not None
    (text, _), = site.twins
    assert sorted(_column(text, 1)) == ["2", "4", "6"] and _column(text, 1) != ["2", "4", "6"]


def test_one_row_gets_a_made_up_value() -> None:
    """No derangement of one cell: made-up values of its type, unequal to it."""
    site = loop_rows_site(_func("""
        def test_t(self):
            for n, expected in [(21, 42)]:
                self.assertEqual(double(n), expected)
        """), 2, random.Random(0))
    assert site is not None and len(site.twins) == 2
    for text, _ in site.twins:
        value = ast.literal_eval(_column(text, 1)[0])
        assert type(value) is int and value != 42


@pytest.mark.parametrize("body", [
    # the expected column feeds the computed side: a real fix could follow the twin
    "for n, expected in [(1, 2), (2, 4)]:\n    self.assertEqual(double(n, expected), expected)",
    "for n, expected in [(1, 2), (2, 4)]:\n    check(n, expected)\n    self.assertEqual(double(n), expected)",
    # the assertion does not run on every row
    "for n, expected in [(1, 2), (2, 4)]:\n    if n > 1:\n        self.assertEqual(double(n), expected)",
    "for n, expected in [(1, 2), (2, 4)]:\n    try:\n        assert double(n) == expected\n    except E:\n"
    "        pass",
    "for n, expected in [(1, 2), (2, 4)]:\n    if n:\n        continue\n    assert double(n) == expected",
    "for n, expected in [(1, 2), (2, 4)]:\n    assert double(n) == expected\nelse:\n    pass",
    # the name rebound, a computed iterable, a starred row, rows of another width, a loop under an ``if``
    "for n, expected in [(1, 2), (2, 4)]:\n    expected = 2 * n\n    assert double(n) == expected",
    "for n, expected in ROWS:\n    assert double(n) == expected",
    "for n, expected in [(1, 2), *MORE]:\n    assert double(n) == expected",
    "for n, expected in [(1, 2), (2, 4, 5)]:\n    assert double(n) == expected",
    "if FLAG:\n    for n, expected in [(1, 2), (2, 4)]:\n        assert double(n) == expected",
    # no column is the expected side of an equality
    "for n, expected in [(1, 2), (2, 4)]:\n    assert double(n) > expected",
    # every expected cell computed: nothing literal to change
    "for n, expected in [(1, f(2)), (2, f(4))]:\n    assert double(n) == expected",
])
def test_shapes_given_no_loop_site(body: str) -> None:
    func = _func("def test_t(self):\n" + textwrap.indent(body, "    ") + "\n")
    assert loop_rows_site(func, 2, random.Random(0)) is None


def test_rows_on_lines_the_parent_has_are_not_changed() -> None:
    """``allowed`` (lines the commit added) refusing the rows node: no site."""
    func = _func("def test_t():\n    for n, expected in [(1, 2), (2, 4)]:\n        assert double(n) == expected\n")
    assert loop_rows_site(func, 1, random.Random(0), lambda node: False) is None
    assert loop_rows_site(func, 1, random.Random(0), lambda node: True) is not None


def test_a_function_with_pass_to_pass_instances_gets_no_loop_twin(tmp_path: Path) -> None:
    """A parametrized function holding a loop table, one of whose instances is PASS_TO_PASS: a loop twin would
    change what that instance checks, so the function keeps its sentinel (listed unprotected)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_d.py").write_text("import pytest\n\nfrom m import double\n\n\n"
                                              "@pytest.mark.parametrize('k', [1, 2])\n"
                                              "def test_d(k):\n"
                                              "    for n, expected in [(1, 2), (2, 4)]:\n"
                                              "        assert double(n + k - k) == expected\n")
    f2p, p2p = ["tests/test_d.py::test_d[1]"], ["tests/test_d.py::test_d[2]"]
    plan = plan_twins(tmp_path, f2p, seed=0, parent={}, pass_to_pass=p2p)
    assert [(c.kind, c.how) for c in plan.canaries] == [("sentinel", NOT_ROWS)]
    every = plan_twins(tmp_path, [*f2p, *p2p], seed=0, parent={}, pass_to_pass=[])
    assert [(c.kind, c.how[:7]) for c in every.canaries] == [("contradiction", "column ")]
