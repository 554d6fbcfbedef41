"""Assertions past the stop that read a twin's value, checked on the parent (docs/contracts.md §7, rows32).

The parent check tells a twin whose value can reach a statement past the one where its original stops on the
parent (:func:`~pytest_homefield.sandbox.canary_flow.reaches_past`, atk28/atk29): with the parent's code neither
version runs that statement, while a test process running a test's statements one at a time runs it, and tells
the twin when the original passes an assertion there that the twin fails. That rule is static, so it also told
twins no such process can tell: humanize's ``test_naturaldelta`` reads ``expected`` again after its failing
assertion, ``assert humanize.naturaldelta(-test_input) == expected``, which the parent's code fails for the
original's rows as it fails the first (its value for ``-x`` is its value for ``x``): a twin there fails both as
its original does, yet the function was listed unprotected on every try (and ``test_naturalsize``, whose later
assertion compares with ``"-" + expected``, on 5 tasks: 6 of humanize's 25 FAIL_TO_PASS functions; none of them
is told now).

This module makes the rule precise where it can be checked, never looser: when every read of the changed names
past the stop is in the side ``R`` of an ``assert L == R`` (or ``R == L``) made of those names, constants and
operators alone (``expected``, ``"-" + expected``: humanize's ``test_naturalsize``) whose other side reads none, a
top-level statement of the test or the only statement of a top-level ``if`` (no ``else``) whose test reads none
(:func:`later_asserts`; any other read, a flow into another name, a fixture asking for it: no probe, told as
before), a **probe** of each member (:func:`probe`) runs the test on the parent with every top-level statement
from the stop on continued past an ``AssertionError`` (as such a process does) and each such assertion's
comparison made unconditionally (its ``L`` evaluated; one that raises compares nothing, the same for every
member), failing with :data:`PROBE_ERROR` when a comparison holds (and with whatever ``R`` raises). ``L`` reads
none of the changed names, so it is the same value in every member, and what a process learns of the value there
is whether ``R`` equals ``L``: when
no comparison holds for the original's rows nor for the twin's, it learns there what it learns at the stop (both
differ from the parent's value), and the twin is not told by that rule (nearness to the parent's value is
:mod:`~pytest_homefield.sandbox.canary_near`'s, at the stop, as before).
"""

from __future__ import annotations

import ast
import copy
import textwrap
from collections.abc import Sequence

from pytest_homefield.sandbox.canary_flow import reaches_past
from pytest_homefield.sandbox.twin_together import member_function

__all__ = ["PROBE_ERROR", "later_asserts", "probe"]

#: The message a probe fails with where an assertion past the stop holds on the parent.
PROBE_ERROR = "homefield probe: an assertion past the stop holds"


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


#: What the side of a checked comparison reading the changed names may hold: names, constants and operators on
#: them (``"-" + expected``, humanize's ``test_naturalsize``), no call, attribute or anything else that runs code
#: a value could escape through.
_PURE = (ast.Name, ast.Load, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Tuple, ast.List,
         ast.JoinedStr, ast.FormattedValue)


def _side(node: ast.expr, names: set[str]) -> bool:
    """Whether ``node`` reads ``names`` and is made of :data:`_PURE` nodes alone."""
    return _reads(node, names) and all(isinstance(n, _PURE) for n in ast.walk(node))


def _checkable(stmt: ast.stmt, names: set[str]) -> ast.Assert | None:
    """``stmt`` when it is an ``assert L == R`` (or ``R == L``, no message reading ``names``) whose ``R`` reads
    ``names`` through names, constants and operators alone (:func:`_side`: ``expected``, ``"-" + expected``) and
    whose ``L`` reads none of them, else ``None``."""
    if not isinstance(stmt, ast.Assert) or not isinstance(stmt.test, ast.Compare) or len(stmt.test.ops) != 1 \
            or not isinstance(stmt.test.ops[0], ast.Eq) or (stmt.msg is not None and _reads(stmt.msg, names)):
        return None
    left, right = stmt.test.left, stmt.test.comparators[0]
    for side, other in ((left, right), (right, left)):
        if _side(side, names) and not _reads(other, names):
            return stmt
    return None


def later_asserts(func: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], lines: set[int], end: int,
                  modules: Sequence[ast.Module] = ()) -> list[ast.Assert] | None:
    """The assertions of ``func`` past line ``end`` (the end of the statement where the original stops; lines of
    the member's text) through which alone the value given to ``names`` or written on ``lines`` reaches past it,
    each of a shape a probe checks (module docstring); ``None`` when the value reaches past it otherwise
    (:func:`~pytest_homefield.sandbox.canary_flow.reaches_past` of ``func`` with those assertions made ``pass``),
    when the statement holding ``end`` is not a top-level statement ending there, or ``func`` is ``async``.
    An empty list: the value reaches nothing past ``end``."""
    if isinstance(func, ast.AsyncFunctionDef) or any(line > end for line in lines):
        return None
    top = [s for s in func.body if s.lineno <= end <= (s.end_lineno or s.lineno)]
    if not top or (top[0].end_lineno or top[0].lineno) != end:
        return None
    found: list[ast.Assert] = []
    for stmt in func.body:
        if stmt.lineno <= end:
            continue
        inner = stmt.body[0] if isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse \
            and not _reads(stmt.test, names) else stmt
        hit = _checkable(inner, names)
        if hit is not None:
            found.append(hit)
    if not found:
        return [] if not reaches_past(func, names, lines, end, modules) else None
    cut = {id(a) for a in found}

    class _Cut(ast.NodeTransformer):
        def visit_Assert(self, node: ast.Assert) -> ast.AST:
            return ast.copy_location(ast.Pass(), node) if id(node) in cut else node

    # the copy keeps the nodes' lines; the transformer sees the original's asserts through a map of ids
    twin = copy.deepcopy(func)
    pairs = dict(zip((id(n) for n in ast.walk(func)), ast.walk(twin), strict=True))
    cut = {id(pairs[c]) for c in cut}
    rest = _Cut().visit(twin)
    assert isinstance(rest, (ast.FunctionDef, ast.AsyncFunctionDef))
    return None if reaches_past(rest, names, lines, end, modules) else found


def _check(a: ast.Assert, names: set[str]) -> list[ast.stmt]:
    """The statements that make ``a``'s comparison unconditionally: its other side evaluated (nothing compared
    when that raises), :data:`PROBE_ERROR` raised when it equals the name."""
    test = a.test
    assert isinstance(test, ast.Compare)
    left, right = test.left, test.comparators[0]
    name_left = _side(left, names) and not _reads(right, names)
    other = right if name_left else left
    seen = ast.parse("_hf_seen[0]", mode="eval").body
    compare = ast.Compare(left=left if name_left else seen, ops=[ast.Eq()], comparators=[seen if name_left else right])
    code = (f"try:\n    _hf_seen = ({ast.unparse(other)},)\nexcept Exception:\n    _hf_seen = ()\n"
            f"if _hf_seen and {ast.unparse(compare)}:\n    raise SystemError({PROBE_ERROR!r})\n")
    return ast.parse(code).body


def probe(member: str, names: set[str], end: int, asserts: Sequence[ast.Assert]) -> str | None:
    """``member`` (a definition's text, its first line 1, as :attr:`~.twin_together.Span.members`) as a probe:
    its top-level statements from the one ending at line ``end`` on each continued past an ``AssertionError``, and
    each of ``asserts`` (:func:`later_asserts` of the original, at the same lines in every member) replaced by
    its comparison made unconditionally (:func:`_check`); ``None`` when it does not parse or its assertions are
    not at those lines."""
    found = member_function(member)
    if found is None:
        return None
    indent, func = found
    at = {(a.lineno, a.col_offset) for a in asserts}
    body: list[ast.stmt] = []
    for stmt in func.body:
        if (stmt.end_lineno or stmt.lineno) < end:
            body.append(stmt)
            continue
        inner = stmt.body[0] if isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse else stmt
        if stmt.lineno > end and (inner.lineno, inner.col_offset) in at:
            if not isinstance(inner, ast.Assert) or _checkable(inner, names) is None:
                return None
            if isinstance(stmt, ast.If):  # its guard still runs, its assertion apart
                guard = ast.If(test=stmt.test, body=[ast.Pass()], orelse=[])
                body.append(ast.Try(body=[guard], handlers=[_handler()], orelse=[], finalbody=[]))
            body += _check(inner, names)
            at.discard((inner.lineno, inner.col_offset))
            continue
        body.append(ast.Try(body=[stmt], handlers=[_handler()], orelse=[], finalbody=[]))
    if at:
        return None
    func.body = body
    text = ast.unparse(ast.fix_missing_locations(func))
    return textwrap.indent(text, indent) + "\n"


def _handler() -> ast.ExceptHandler:
    return ast.ExceptHandler(type=ast.Name(id="AssertionError", ctx=ast.Load()), name=None, body=[ast.Pass()])
