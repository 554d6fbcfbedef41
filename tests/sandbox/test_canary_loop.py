"""Twins of a table of rows a loop unpacks (canary_loop, sub33: more-itertools 1c21c3ae9c79's
``RunningMeanTests::test_basic``). Pure planning, no test process; the graded fixture is
tests/run/test_loop_rows.py."""

from __future__ import annotations

import ast
import random
import textwrap
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_loop import CALLED, LOOP_KEPT_HOW, changed_rows, loop_rows_site, row_probes
from pytest_homefield.sandbox.canary_rows import NOT_ROWS
from pytest_homefield.sandbox.canary_swaps import literal_counts, value_key
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


#: The doubles fixture's table (tests/run/test_loop_rows.py): the parent passes rows 0, 1 and 3, fails row 2.
DOUBLES = """
def test_basic(self):
    for i, (n, expected) in enumerate([(1, 2), ('2', 4), ('-3', -6), (0, 0), ('-4', -8)]):
        with self.subTest(i=i):
            self.assertEqual(double(n), expected)
"""


@pytest.mark.parametrize("seed", range(6))
def test_rows_the_parent_passes_stay_as_they_are(seed: int) -> None:
    """``kept`` (loop34): the rows the parent passes keep their cells; the others' cells are deranged among them
    (two rows the parent fails: each takes the other's), every twin's how saying so."""
    site = loop_rows_site(_func(DOUBLES), 1, random.Random(seed), kept=(0, 1, 3))
    assert site is not None
    (text, how), = site.twins
    after, before = _column(text, 1), _column(site.original, 1)
    assert [after[n] for n in (0, 1, 3)] == [before[n] for n in (0, 1, 3)] == ["2", "4", "0"]
    assert (after[2], after[4]) == ("-8", "-6"), after
    assert how.startswith(LOOP_KEPT_HOW.split("{")[0]) and how.endswith("(the rows it passes as they are)"), how
    assert _column(text, 0) == _column(site.original, 0)


@pytest.mark.parametrize("seed", range(12))
def test_one_row_the_parent_fails_gets_a_made_up_value_the_file_does_not_hold(seed: int) -> None:
    """One row the parent fails: no derangement, a made-up value of its type, unequal to it and to every literal
    of the file (``counts``: one already there would occur twice in the twin's file, once in the original's)."""
    func = _func(DOUBLES)
    counts = literal_counts(func)
    site = loop_rows_site(func, 2, random.Random(seed), kept=(0, 1, 3, 4), counts=counts)
    assert site is not None and len(site.twins) == 2
    for text, _ in site.twins:
        after = _column(text, 1)
        assert after[:2] == ["2", "4"] and after[3:] == ["0", "-8"]
        value = ast.literal_eval(after[2])
        assert type(value) is int and value != -6 and value_key(value) not in counts, value


def test_every_row_kept_gives_no_site() -> None:
    """Nothing left to change: no loop site (the planner goes on to the next kind)."""
    assert loop_rows_site(_func(DOUBLES), 1, random.Random(0), kept=range(5)) is None


def test_changed_rows_names_the_rows_a_twin_changes() -> None:
    """:func:`changed_rows`: the loop (its index among the plain loops), its row count and the rows whose cells
    the twin writes otherwise; ``None`` for a twin changing no row (another site)."""
    func = _func(DOUBLES)
    site = loop_rows_site(func, 1, random.Random(0), kept=(0, 1, 3))
    assert site is not None
    twin = _func(DOUBLES.replace(ast.get_source_segment(DOUBLES, site.node) or "", site.twins[0][0]))
    assert changed_rows(func, twin) == (0, 5, frozenset({2, 4}))
    assert changed_rows(func, _func(DOUBLES.replace("self.subTest(i=i)", "self.subTest(j=i)"))) is None


def test_row_probes_run_one_row_each_with_its_index() -> None:
    """Each probe runs the loop on one row alone, the ``enumerate`` index that row's, the rest of the method as it
    is (indented as the member); run here with a ``double`` that fails row 2 only."""
    member = textwrap.indent(DOUBLES.lstrip("\n"), "    ")
    probes = row_probes(member, 0, 5)
    assert probes is not None and len(probes) == 5
    seen: list[int] = []
    for row, text in enumerate(probes):
        assert text.startswith("    def test_basic(self):")
        scope = {"double": lambda x: int(x) * 2 if x != "-3" else x * 2}

        class _Case:
            def subTest(self, i: int) -> object:  # noqa: N802 (unittest's name)
                seen.append(i)
                return __import__("contextlib").nullcontext()

            def assertEqual(self, a: object, b: object) -> None:  # noqa: N802
                assert a == b

        exec(textwrap.dedent(text), scope)
        if row == 2:
            with pytest.raises(AssertionError):
                scope["test_basic"](_Case())
        else:
            scope["test_basic"](_Case())
    assert seen == [0, 1, 2, 3, 4]
    assert row_probes("def broken(:\n", 0, 2) is None and row_probes(member, 1, 5) is None


@pytest.mark.parametrize("within", [False, True])
def test_row_probes_return_right_after_the_loop(within: bool) -> None:
    """A probe judges the statements up to its loop's end alone (ratk34): a statement after the loop that fails (here
    on every row) does not run, also when the loop is in a ``with`` whose body goes on; statements before it do."""
    loop = ("for n, expected in [(1, 2), ('-3', -6)]:\n"
            "    ran.append(n)\n"
            "    assert double(n) == expected\n")
    after = "raise ValueError('after the loop')\n"
    body = ("ran.append('before')\n" + (f"with ctx():\n{textwrap.indent(loop + after, '    ')}" if within
                                        else loop) + after)
    member = "def test_t():\n" + textwrap.indent(body, "    ")
    probes = row_probes(member, 0, 2)
    assert probes is not None and len(probes) == 2
    for row, text in enumerate(probes):
        ran: list[object] = []
        scope = {"double": lambda x: int(x) * 2 if x != "-3" else x * 2, "ran": ran,
                 "ctx": __import__("contextlib").nullcontext}
        exec(text, scope)
        if row == 1:
            with pytest.raises(AssertionError):
                scope["test_t"]()
        else:
            scope["test_t"]()  # the raise after the loop never runs
        assert ran == ["before", [1, "-3"][row]]


@pytest.mark.parametrize("check, twinned", [
    ("self.assertEqual(Span(*args)[sl], Span(*expected))", True),
    ("self.assertEqual(Span(*expected), Span(*args)[sl])", True),
    ("assert Span(*args)[sl] == Span(expected)", True),
    ("assert Span(*args)[sl] == make(**expected)", True),
    ("self.assertEqual(Span(*args)[sl], Span(*expected, 1))", False),  # more than the column handed
    ("self.assertEqual(Span(*args)[sl], expected[0](*args))", False),  # the callee reads the column
    ("self.assertEqual(Span(*args, *expected)[sl], Span(*expected))", False),  # the computed side reads it
])
def test_a_column_handed_to_the_expected_sides_call(check: str, twinned: bool) -> None:
    """can53 (more-itertools 3bbe636e23bd ``test_get_item_by_slice``): the expected side may be a call handed the
    column alone; its twin's how starts with ``CALLED`` (grading checks it on the reference fix)."""
    site = loop_rows_site(_func(f"""
        def test_t(self):
            for args, sl, expected in [((0, 9), 1, (0, 1)), ((0, 9), 2, (0, 2)), ((0, 9), 3, (0, 3))]:
                with self.subTest(args=args):
                    {check}
        """), 1, random.Random(0))
    assert (site is not None) == twinned
    if site is not None:
        (text, how), = site.twins
        assert how.startswith(CALLED + "column expected of the loop's rows -> ")
        assert sorted(_column(text, 2)) == ["(0, 1)", "(0, 2)", "(0, 3)"] and _column(text, 2)[0] != "(0, 1)"


def test_a_plain_expected_name_is_not_marked_called() -> None:
    site = loop_rows_site(_func("""
        def test_t():
            for n, expected in [(1, 2), (2, 4), (3, 6)]:
                assert double(n) == expected
        """), 1, random.Random(0))
    assert site is not None and not site.twins[0][1].startswith(CALLED)


@pytest.mark.parametrize("seed", range(6))
def test_a_handed_cell_made_up_has_every_item_made_up(seed: int) -> None:
    """can53: the one row the parent fails (rows 0 and 1 kept) gets a made-up cell; handed to the expected side's
    call, every item of it is made up (one item moved a little, ``(2.0, 11.7, 2.0)``, gave more-itertools'
    ``numeric_range`` the same value as ``(2.0, 12.0, 2.0)``: the reference fix passed it, no guard on 3 of 12
    seeds of 3bbe636e23bd), none a value of the file."""
    func = _func("""
        def test_t(self):
            for args, sl, expected in [((0, 9), 1, (0.0, 1.0, 1.0)), ((0, 9), 2, (0.0, 2.0, 1.0)),
                                       ((10.0, 0.0, -2.0), -1, (2.0, 12.0, 2.0))]:
                self.assertEqual(R(*args)[sl], R(*expected))
        """)
    site = loop_rows_site(func, 1, random.Random(seed), kept={0, 1}, counts=literal_counts(ast.Module([func], [])))
    assert site is not None
    (text, how), = site.twins
    cell = ast.literal_eval(_column(text, 2)[2])
    assert all(a != b for a, b in zip(cell, (2.0, 12.0, 2.0), strict=True)), cell
    assert _column(text, 2)[:2] == ["(0.0, 1.0, 1.0)", "(0.0, 2.0, 1.0)"] and how.startswith(CALLED)
