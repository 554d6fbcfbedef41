"""A twin of a table of rows a loop unpacks (docs/contracts.md §7, issue 30, sub33).

nu32 on more-itertools (task 1c21c3ae9c79, ``RunningMeanTests::test_basic``): a FAIL_TO_PASS unittest method's
rows are a literal list a ``for`` target unpacks, each checked in a ``subTest``::

    for i, (iterable, expected) in enumerate([([], []), ([1], [1.0]), ...]):
        with self.subTest(i=i):
            self.assertEqual(list(mi.running_mean(iterable)), expected)

The expected values are cells of that list, not literals of the assertion, so no value site held them and the
function got a sentinel: a reader of the calling assertion's expected value (``read-expected``) passed it with no
fix. :func:`loop_rows_site` twins the table as :func:`~pytest_homefield.sandbox.canary_rows.rows_only` does a
``parametrize`` column: the expected column's literal cells deranged among the rows (real outputs of other
inputs; every run's file then holds the same cells), else made up; a computed cell (``[Fraction(1, 1)]``) stays.
A real fix computes each row's value, so it fails a twin where at least one row expects another value, which
every twin is (each changed cell is unequal to its own, :func:`~pytest_homefield.sandbox.canary_values.
derangements`); a reader returns what the twin's frame holds and passes it.

It is sound only when every check of the loop is the task's FAIL_TO_PASS: a twin changes every row the loop runs,
so the caller (:func:`~pytest_homefield.sandbox.twin_runs._plan_file`) asks for it only for a function with no
PASS_TO_PASS instance (a unittest method is one test id). The column's name must be read once in the loop's body,
as the expected side of one ``assertEqual``/``==`` assertion whose other side does not read it (the name feeding
the computed side would let a real fix follow the twin), and never be stored there.

loop34: a twin moving every row's cell moved the rows the parent's code passes too, so a test process running the
parent's code on the rows found one it agrees with in the original's list and none in the twin's (gatk33). The
parent check finds those rows (:func:`changed_rows`, :func:`row_probes`: the test run on each row alone, on the
parent) and the planner is given them (``kept``): their cells stay as they are, only the other rows' change.

can53 (nu52 on more-itertools, task 3bbe636e23bd, ``NumericRangeTests::test_get_item_by_slice``): the expected side
may be a call handed the column, ``self.assertEqual(mi.numeric_range(*args)[sl], mi.numeric_range(*expected_args))``
(:func:`_handed`); before, only a plain name was taken and the function got a sentinel, which a reader of the
calling assertion's expected value passed with no fix. Its twin changes that column as above, but what the
assertion compares is what the project's code makes of the cell, not the cell: two unequal cells may give equal
values (``numeric_range(9.0, 9.0, 4.5)`` and ``numeric_range(1.0, 1.0, 4.5)`` are both empty), so a real fix may
pass a twin drawn on some seed. Such a twin's ``how`` starts with :data:`CALLED`, and grading counts it only once
the reference fix is seen to fail it too (``twin_grading._unchecked``, as an exception swap): a twin the reference
fix passes is excused, never evidence. A real fix giving the reference's values fails every twin the reference
fails; a reader returns what the twin's frame computes and passes it.
"""

from __future__ import annotations

import ast
import copy
import random
import textwrap
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pytest_homefield.sandbox.canary_rows import _cell, _text
from pytest_homefield.sandbox.canary_sites import Site
from pytest_homefield.sandbox.canary_swaps import value_key
from pytest_homefield.sandbox.canary_values import alternatives, derangements, is_small
from pytest_homefield.sandbox.twin_together import member_function

__all__ = ["CALLED", "LOOP_HOW", "LOOP_KEPT_HOW", "changed_rows", "loop_rows_site", "row_probes"]

#: The ``how`` of a loop-rows twin (the column's name and the first changed values are filled in).
LOOP_HOW = "column {name} of the loop's rows -> {shown}"
#: The ``how`` of one changing only the rows the parent's code fails (loop34).
LOOP_KEPT_HOW = "column {name} of the loop's rows the parent fails -> {shown} (the rows it passes as they are)"
#: The start of the ``how`` of a twin whose column the expected side hands to a call (:func:`_handed`, can53): whether
#: a real fix fails it depends on what the code makes of the cells, so grading checks it on the reference fix.
CALLED = "handed to the expected side's call: "

#: The ``unittest`` methods whose second argument is an expected value compared for equality.
_EQUAL = frozenset({"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual", "assertDictEqual",
                    "assertSetEqual", "assertSequenceEqual"})


def _table(loop: ast.For) -> tuple[ast.List | ast.Tuple, list[str]] | None:
    """The literal rows of ``loop`` and the names its target unpacks each row into (two or more, distinct):
    ``for a, b in [...]`` or ``for i, (a, b) in enumerate([...])``; ``None`` for any other loop (a computed
    iterable, a starred or nested target, a row that is no list/tuple of as many cells, a starred cell)."""
    rows: ast.expr = loop.iter
    target: ast.expr = loop.target
    if isinstance(rows, ast.Call) and isinstance(rows.func, ast.Name) and rows.func.id == "enumerate" \
            and len(rows.args) == 1 and all(kw.arg == "start" for kw in rows.keywords):
        if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != 2 \
                or not isinstance(target.elts[0], ast.Name):
            return None
        rows, target = rows.args[0], target.elts[1]
    if not isinstance(rows, (ast.List, ast.Tuple)) or not rows.elts or not isinstance(target, (ast.Tuple, ast.List)):
        return None
    names = [t.id for t in target.elts if isinstance(t, ast.Name)]
    if len(names) != len(target.elts) or len(names) < 2 or len(set(names)) != len(names):
        return None
    for row in rows.elts:
        if not isinstance(row, (ast.Tuple, ast.List)) or len(row.elts) != len(names) \
                or any(isinstance(c, ast.Starred) for c in row.elts):
            return None
    return rows, names


def _checks(body: Sequence[ast.stmt]) -> list[ast.AST]:
    """The plain statements of ``body`` (:func:`_plain`) and the expressions they are (a call statement's call)."""
    return [x for stmt in _plain(body) for x in ((stmt, stmt.value) if isinstance(stmt, ast.Expr) else (stmt,))]


def _expected_name(loop: ast.For, names: Sequence[str]) -> tuple[str, bool] | None:
    """``(name, handed)``: the one name of ``names`` the loop's body reads once, as the expected side of an
    equality assertion among its plain statements (:func:`_checks`: run on every row, under no ``if``/``try``;
    ``self.assertEqual(X, NAME)``, ``assertEqual(NAME, X)``, ``assert X == NAME``; when no plain name is, one
    handed alone to a call there, ``g(*NAME)``, :func:`_handed`, can53: ``handed`` true) whose other side ``X``
    does not read it; ``None`` when there is no such name, more than one, or it is stored in the body."""
    body = ast.Module(body=list(loop.body), type_ignores=[])
    loads: dict[str, int] = {}
    for n in ast.walk(body):
        if isinstance(n, ast.Name) and n.id in names:
            if not isinstance(n.ctx, ast.Load):
                return None  # rebound in the body: what the assertion reads is no longer the row's cell
            loads[n.id] = loads.get(n.id, 0) + 1
    found: set[str] = set()
    handed: set[str] = set()
    for n in _checks(loop.body):
        pair: list[ast.expr] = []
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _EQUAL \
                and len(n.args) >= 2:
            pair = list(n.args[:2])
        elif isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 \
                and isinstance(n.test.ops[0], ast.Eq):
            pair = [n.test.left, n.test.comparators[0]]
        for side, other in ((pair[1], pair[0]), (pair[0], pair[1])) if pair else ():
            name = side.id if isinstance(side, ast.Name) else _handed(side, names)
            if name is not None and loads.get(name) == 1 \
                    and not any(isinstance(m, ast.Name) and m.id == name for m in ast.walk(other)):
                (found if isinstance(side, ast.Name) else handed).add(name)
    # a plain name first: ``double(n) == expected`` hands ``n`` to the computed side
    by_call = not found
    found = found or handed
    return (found.pop(), by_call) if len(found) == 1 else None


def _handed(side: ast.expr, names: Sequence[str]) -> str | None:
    """The name of ``names`` that ``side``, a call, is handed as its one argument, plain, ``*NAME`` or
    ``**NAME`` (``numeric_range(*expected_args)``), its callee reading none of ``names`` (can53); ``None`` for any
    other expression."""
    if not isinstance(side, ast.Call) or len(side.args) + len(side.keywords) != 1:
        return None
    arg = side.args[0] if side.args else side.keywords[0].value if side.keywords[0].arg is None else None
    arg = arg.value if isinstance(arg, ast.Starred) else arg
    if not isinstance(arg, ast.Name) or arg.id not in names \
            or any(isinstance(m, ast.Name) and m.id in names for m in ast.walk(side.func)):
        return None
    return arg.id


def _plain(body: Sequence[ast.stmt]) -> list[ast.stmt]:
    """The statements of ``body`` that run whenever it runs to its end: its own, and those of the bodies of its
    ``with`` statements (``with self.subTest(…):``), in order; none under an ``if``, a ``try`` or a loop."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            out += _plain(stmt.body)
    return out


def _loops(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.For]:
    """The ``for`` loops (no ``else``, no ``break``/``continue`` of their own) among ``func``'s plain statements
    (:func:`_plain`), in order."""
    return [s for s in _plain(func.body) if isinstance(s, ast.For) and not s.orelse
            and not any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(ast.Module(s.body, [])))]


def _fitting(func: ast.FunctionDef | ast.AsyncFunctionDef, allowed: Callable[[ast.AST], bool] | None = None
             ) -> list[tuple[int, ast.List | ast.Tuple, list[str], str, bool]]:
    """``(index among :func:`_loops`, rows, target names, the expected column's name, whether the expected side hands
    it to a call)`` of each loop of ``func`` whose rows fit (:func:`_table`, :func:`_expected_name`; ``allowed``:
    whether the rows node may be changed)."""
    out: list[tuple[int, ast.List | ast.Tuple, list[str], str, bool]] = []
    for n, loop in enumerate(_loops(func)):
        table = _table(loop)
        if table is None:
            continue
        rows, names = table
        expected = _expected_name(loop, names)
        if expected is not None and (allowed is None or allowed(rows)):
            out.append((n, rows, names, *expected))
    return out


def loop_rows_site(func: ast.FunctionDef | ast.AsyncFunctionDef, k: int, rng: random.Random,
                   allowed: Callable[[ast.AST], bool] | None = None, kept: Collection[int] | None = None,
                   counts: Mapping[str, int] | None = None) -> Site | None:
    """A site at the literal rows of the first loop of ``func`` that unpacks them and checks one column as an
    expected value (:func:`_table`, :func:`_expected_name`), up to ``k`` twins each with that column's literal
    cells deranged among the rows (:func:`~pytest_homefield.sandbox.canary_values.derangements`), else made up
    (:func:`~pytest_homefield.sandbox.canary_values.alternatives`, as many twins as every cell has); strong,
    each twin excusable when all its changed cells are small (:func:`~pytest_homefield.sandbox.canary_values.
    is_small`). ``allowed``: whether the site may change the rows node (lines the commit added). ``kept``: the
    indices (from 0, in the list's order) of the rows the parent's code passes (:func:`row_probes`, loop34): their
    cells stay as they are, only the other rows' are changed (:data:`LOOP_KEPT_HOW`); ``None``: not known, every
    row may change. ``counts``: how often each literal value occurs in the file (:func:`~pytest_homefield.sandbox.
    canary_swaps.literal_counts`): a made-up value is none of them (a value the file holds already would occur
    twice in the twin's file where the original's occurs once: ``twin-count-oracle``'s tell). ``None`` when no loop
    fits or no cell can be changed. A column handed to the expected side's call (:func:`_handed`, can53): the
    ``how`` starts with :data:`CALLED` and a made-up cell is :func:`_every`'s. The caller asks only for a function
    every instance of which is FAIL_TO_PASS (module text)."""
    for _, rows, names, name, handed in _fitting(func, allowed):
        at = names.index(name)
        cells = [_cell(row.elts[at]) for row in rows.elts if isinstance(row, (ast.Tuple, ast.List))]
        change = [n for n, (_, literal) in enumerate(cells) if literal and (kept is None or n not in kept)]
        values = [cells[n][0] for n in change]
        drawn: list[dict[int, Any]] = [{change[j]: values[p] for j, p in enumerate(perm)}
                                       for perm in derangements(values, k, rng)]
        if not drawn and values:
            alts = [(_every if handed else _unseen)(v, k, rng, counts or {}) for v in values]
            drawn = [{change[n]: a[j] for n, a in enumerate(alts)} for j in range(min(len(a) for a in alts))]
        if not drawn:
            continue
        how = (CALLED if handed else "") + (LOOP_HOW if kept is None else LOOP_KEPT_HOW)
        twins = [(_text(rows, at, len(names), pick),
                  how.format(name=name, shown=", ".join(repr(pick[n])[:20] for n in change))[:120])
                 for pick in drawn]
        return Site(rows, ast.unparse(rows), twins, True,
                    excusable=[all(is_small(v) for v in pick.values()) for pick in drawn])
    return None


def _every(v: Any, k: int, rng: random.Random, counts: Mapping[str, int]) -> list[Any]:
    """Up to ``k`` made-up values for ``v``, a cell handed to the expected side's call (can53), as :func:`_unseen`,
    but a list/tuple with **every** item made up when each has an alternative: the call's value depends on its
    arguments, and one argument moved a little often leaves it as it is (more-itertools 3bbe636e23bd: the red row's
    ``(2.0, 12.0, 2.0)`` made ``(2.0, 11.7, 2.0)``, the same ``numeric_range`` ``[2.0, …, 10.0]``, so the reference
    fix passed that twin, excused, no guard on seeds 0 and 2 of 0-3). Else :func:`_unseen`'s."""
    if isinstance(v, (list, tuple)) and v and not isinstance(v, bool):
        each = [alternatives(x, k, rng) for x in v]
        n = min(len(a) for a in each)
        out = [type(v)(a[j] for a in each) for j in range(n)]
        out = [x for x in out if value_key(x) not in counts]
        if out:
            return out
    return _unseen(v, k, rng, counts)


def _unseen(v: Any, k: int, rng: random.Random, counts: Mapping[str, int]) -> list[Any]:
    """Up to ``k`` made-up values for ``v`` (:func:`~pytest_homefield.sandbox.canary_values.alternatives`) none of
    which ``counts`` holds; drawn among more of them only when the first ``k`` hold one."""
    for n in (k, k + 8):
        out = [a for a in alternatives(v, n, rng) if value_key(a) not in counts][:k]
        if len(out) == k:
            return out
    return out


def changed_rows(original: ast.FunctionDef | ast.AsyncFunctionDef, twin: ast.FunctionDef | ast.AsyncFunctionDef
                 ) -> tuple[int, int, frozenset[int]] | None:
    """``(loop, rows, changed)`` for the first loop of ``original`` fitting a loop-rows site (:func:`_fitting`)
    whose rows ``twin`` (the same function with that site changed) writes otherwise: its index among the
    function's plain loops, its number of rows and the indices of the rows whose cells differ (as ASTs); ``None``
    when the twin changes no such loop's rows (another site, or not the same shape)."""
    theirs = _loops(twin)
    for n, rows, _, _, _ in _fitting(original):
        other = _table(theirs[n]) if n < len(theirs) else None
        if other is None or len(other[0].elts) != len(rows.elts):
            continue
        changed = frozenset(i for i, (a, b) in enumerate(zip(rows.elts, other[0].elts, strict=True))
                            if ast.dump(a) != ast.dump(b))
        if changed:
            return n, len(rows.elts), changed
    return None


def row_probes(member: str, loop: int, rows: int) -> list[str] | None:
    """``member`` (a definition's text, as :attr:`~.twin_together.Span.members`) once per row of its plain loop
    number ``loop`` (:func:`changed_rows`), each running that loop on one row alone: its iterable ``X`` replaced by
    ``[r for (n, r) in enumerate(X) if n == ROW]`` (every row still built, an ``enumerate`` index kept), the
    statements before the loop as they are, none after it (:func:`_return_after`), so that a probe passes on the
    parent exactly when the parent's code passes that row (and the test up to the loop); ``None`` when it does not
    parse or has no such loop."""
    found = member_function(member, asyncs=True)
    if found is None or loop >= len(_loops(found[1])):
        return None
    indent, func = found
    out: list[str] = []
    for row in range(rows):
        one = copy.deepcopy(func)
        target = _loops(one)[loop]
        only = ast.parse(f"[_hf_row for _hf_n, _hf_row in enumerate(X) if _hf_n == {row}]", mode="eval").body
        assert isinstance(only, ast.ListComp)
        only.generators[0].iter.args[0] = target.iter  # type: ignore[attr-defined]
        target.iter = only
        _return_after(one, target)
        out.append(textwrap.indent(ast.unparse(ast.fix_missing_locations(one)), indent) + "\n")
    return out


def _return_after(func: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For) -> None:
    """``func`` (changed in place) returning right after ``loop``, one of its plain statements (:func:`_plain`: in
    its body or that of a ``with`` in it): a ``return`` takes the place of every statement after the loop in the body
    holding it, so that a row probe judges the statements up to the loop's end alone (ratk34: an assertion after the
    loop that the parent fails failed every row's probe; none was kept, and the twin moved the rows the parent's
    code passes). The ``with`` statements around it still exit as the loop's end reaches them."""
    bodies: list[list[ast.stmt]] = [func.body]
    while bodies:
        body = bodies.pop()
        if loop in body:
            body[body.index(loop) + 1:] = [ast.Return(value=None)]
            return
        bodies += [s.body for s in body if isinstance(s, (ast.With, ast.AsyncWith))]
