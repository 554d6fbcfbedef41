"""The order twin (near31, docs/contracts.md §7): the comparison at the parent's stop contradicted, operands kept.

Pure functions, no test process: :func:`contradicted_order` picks an order false for every operand pair the
original failed with on the parent, and :func:`order_site` rewrites the ``==`` of the statement where it stopped.
"""

from __future__ import annotations

import ast
import copy
import random
import textwrap
from typing import Any

import pytest

from pytest_homefield.sandbox.canary_order import ORDER_HOW, contradicted_order, order_site
from pytest_homefield.sandbox.canary_values import alternatives


def _holds(op: str, left: Any, right: Any) -> bool:
    """Whether ``left op right`` holds, evaluated as the twin's ``assert`` does (compiled source)."""
    return bool(eval(compile(f"left {op} right", "<twin>", "eval"), {}, {"left": left, "right": right}))


@pytest.mark.parametrize(("pairs", "want"), [
    ([([2, 1], [1, 2]), ([5, 4, 3], [3, 4, 5]), ([9, 8, 7, 6], [6, 7, 8, 9])], "<"),  # atk29's digits rows
    ([("hello---world", "hello-world")], ">"),  # the slug: '-' < 'w'
    ([("Don'T Look Back", "Don't Look Back")], ">"),  # 'T' < 't'
    ([(3, 7), (1.5, 2.0)], ">"),
    ([(b"ab", b"aa")], "<"),
    ([((1, 2), (1, 3)), ((0,), (0, 0))], ">"),
])
def test_the_order_drawn_is_false_on_the_parent_and_for_any_fix(pairs: list[tuple[Any, Any]], want: str) -> None:
    """The order is false for every pair (the twin fails on the parent, where the original does) and for a value
    equal to the expected one (a real fix fails it too)."""
    op = contradicted_order(("==", p, e) for p, e in pairs)
    assert op == want
    for p, e in pairs:
        assert not _holds(op, p, e)
        assert not _holds(op, copy.deepcopy(e), e) and not _holds(op, e, copy.deepcopy(e))


@pytest.mark.parametrize("items", [
    [],  # nothing seen
    [None],  # operands that are not plain
    [("==", [2, 1], [1, 2]), None],
    [("!=", 1, 1)],  # another operator
    [("<", 3, 1)],
    [("==", 1, 1)],  # equal: nothing to contradict
    [("==", {"a": 1}, {"a": 2})],  # a dict has no order
    [("==", {1}, {1, 2})],  # a set's < is inclusion
    [("==", 1, "1")],  # a TypeError
    [("==", [1, "a"], [1, 2])],
    [("==", float("nan"), 1.0)],  # neither order holds
    [("==", 1, 2), ("==", 2, 1)],  # one pair below, another above: no order false for both
])
def test_no_order_where_none_is_a_sure_contradiction(items: list[Any]) -> None:
    assert contradicted_order(items) is None


def test_made_up_values_get_an_order_false_both_ways() -> None:
    """Over made-up expected values of every orderable kind and parent values drawn as their twins are: the
    order drawn is false for the parent's pair and for a fix's, never ``None`` where the pair is ordered."""
    rng = random.Random(31)
    seeds: list[Any] = [0, 17, -4, 2.5, "slug-text", b"raw", [1, 2, 3], (4, "x"), ["a", "b"]]
    for _ in range(20):
        for e in seeds:
            for p in alternatives(e, 3, rng):
                op = contradicted_order([("==", p, e)])
                assert op in ("<", ">"), (p, e)
                assert not _holds(op, p, e) and not _holds(op, e, e), (op, p, e)


SOURCE = textwrap.dedent('''\
    @pytest.mark.parametrize("n, expected", [(12, [1, 2])])
    def test_digits(n, expected):
        got = digits(n)
        size = len(expected)
        assert got == expected, "in order"
        assert len(got) == size
    ''')


def _func() -> ast.FunctionDef:
    node = ast.parse(SOURCE).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_the_site_is_the_comparison_at_the_stop() -> None:
    site = order_site(_func(), 5, 5, "<")
    assert site is not None and not site.strong and site.excusable is None  # excusable, as a flip
    assert isinstance(site.node, ast.Compare) and site.node.lineno == 5
    assert site.original == "got == expected"
    assert site.twins == [("got < expected", f"{ORDER_HOW}: == -> < (operands kept, < false there)")]


def test_no_site_elsewhere_or_for_another_order() -> None:
    func = _func()
    other = order_site(func, 6, 6, "<")  # a stop at another statement: that statement's comparison
    assert other is not None and other.original == "len(got) == size"
    assert order_site(func, 3, 4, ">") is None  # no assertion there
    assert order_site(func, 5, 5, "<=") is None  # true for a fix's equal values: no contradiction
    assert order_site(func, 5, 5, ">", may=lambda node: False) is None  # a line the parent's test has
    assert order_site(func, 5, 5, ">", may=lambda node: True) is not None
