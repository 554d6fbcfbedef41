"""A twin that contradicts the comparison at the parent's stop, its operands kept (docs/contracts.md §7, issue 30,
near31: the column the parent check tells on every draw).

A value twin changes a value; when that value also reaches statements past the one where the original stops on
the parent's code (atk29: ``size = len(expected)`` before ``assert got == expected``, ``len(got) == size`` past
it), a test process running the statements one at a time with the parent's code sees the twin fail a statement
past the stop that its original passes (``assert-tell``). The parent check tells such a twin, and when the value
is the function's only site every draw is told: no value twin guards it.

This twin changes no value: on the statement where every failed instance of the original stopped on the
parent, ``assert A == B`` becomes ``assert A < B`` or ``assert A > B``, whichever is false for the operands every
such instance failed with there (the reporter's ``operands``: plain literals, from the parent check's own test
process, which runs the parent's code). So:

* **it fails with any fix**: where ``A == B`` holds, neither ``A < B`` nor ``A > B`` does (plain literals:
  str, bytes, numbers, tuples and lists of them; a real fix gives the original's expected value at the stop);
* **it fails on the parent where its original does, with the same operands**: the order chosen is false for
  each of them, so the parent check (same line, same operands) sees it as the original, and nothing past the
  stop differs: every name keeps its value, so running the statements one at a time passes and fails the same
  statements in both versions but the stop;
* honest code giving a wrong value may pass it (a value below or above the expected one): it is excusable, as
  every contradiction that is no value twin (a flip), and confirmed as those are.

It is drawn only for a function the parent check told on a try already drawn on its stop (the value twin is the
stronger guard: its source differs from the original's only in a value); a test process reading the source sees
an ordering comparison, as it sees a flip's ``!=``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from pytest_homefield.sandbox.canary_sites import Site

__all__ = ["contradicted_order", "order_site", "ORDERS", "ORDER_HOW"]

#: The comparisons an order twin writes at the stop, by the reporter's operator text.
ORDERS: dict[str, type[ast.cmpop]] = {"<": ast.Lt, ">": ast.Gt}
#: How an order twin's :attr:`~pytest_homefield.sandbox.canaries.Canary.how` begins.
ORDER_HOW = "the comparison at the parent's stop"


def contradicted_order(operands: Iterable[tuple[str, Any, Any] | None]) -> str | None:
    """``"<"`` or ``">"``: an order false for every one of ``operands`` (``(op, left, right)`` of each failed
    instance at the stop, :func:`~pytest_homefield.sandbox.canary_near.operand_values`; ``None``: not plain),
    each an ``==`` whose operands differ and are ordered one way or the other; ``"<"`` when both orders are.
    ``None`` when there is none: no operands, one not plain, another operator, operands that cannot be
    ordered (a ``TypeError``, a dict, a set: ``<`` is inclusion there) or that are equal, or no order false for
    all (one instance below, another above)."""
    false = set(ORDERS)
    seen = False
    for item in operands:
        if item is None:
            return None
        op, left, right = item
        if op != "==" or left == right or isinstance(left, (dict, set, frozenset)) \
                or isinstance(right, (dict, set, frozenset)):
            return None
        try:
            lt, gt = left < right, left > right
        except (TypeError, ValueError, RecursionError):
            return None
        if not isinstance(lt, bool) or not isinstance(gt, bool) or lt == gt:
            return None  # not ordered (a NaN, an unorderable mix): neither order is a sure contradiction
        false -= {"<"} if lt else {">"}
        seen = True
    return min(false) if seen and false else None


def order_site(func: ast.FunctionDef | ast.AsyncFunctionDef, lo: int, hi: int, op: str,
               may: Callable[[ast.AST], bool] | None = None) -> Site | None:
    """The site of an order twin (see the module text): the comparison of an ``assert A == B`` statement of
    ``func`` within lines ``lo``..``hi`` (the statement where the parent stopped, lines of the parsed source),
    its twin the same operands compared with ``op`` (a key of :data:`ORDERS`); ``None`` when no such statement
    is there, ``op`` is none of :data:`ORDERS`, or ``may`` (as for
    :func:`~pytest_homefield.sandbox.canary_sites.find_site`) refuses the comparison."""
    if op not in ORDERS:
        return None
    for node in ast.walk(func):
        if not isinstance(node, ast.Assert) or not lo <= node.lineno <= (node.end_lineno or node.lineno) <= hi:
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            continue
        if may is not None and not may(test):
            continue
        new = ast.Compare(left=test.left, ops=[ORDERS[op]()], comparators=list(test.comparators))
        return Site(test, ast.unparse(test), [(ast.unparse(new), f"{ORDER_HOW}: == -> {op} (operands kept, "
                                                                 f"{op} false there)")], False)
    return None
