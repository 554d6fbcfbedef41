"""Where a twin's changed value can reach in its test function (docs/contracts.md §7, issue 30, atk29): the parent
check's question "does the twin differ from its original past the statement where the original stops on the
parent?" (:func:`~pytest_homefield.run.twin_grading.parent_told`), asked of every route a value takes inside the
function, not only of the names the changed lines bind.

A test process that runs a test's statements one at a time with the parent's code (``ASSERT_TELL``) runs the
statements past the one where the original stops; if the twin's value reaches one of them, that statement can
pass for the original and fail for the twin, and the process tells them apart (passes the original, fails the
twin: solved with no fix, never ``forged``). atk28's check followed only the names a changed line stores and
the names a changed ``parametrize`` decorator lists, read directly past the stop. atk29's task carried the
value one step further::

    @pytest.mark.parametrize("n, expected", [(12, [1, 2]), (345, [3, 4, 5]), (6789, [6, 7, 8, 9])])
    def test_digits_in_order(n, expected):
        got = digits(n)
        size = len(expected)        # the column flows into another name before the stop
        assert got == expected      # the original stops here on the parent
        assert len(got) == size     # the original passes this, a twin with another row's list fails it

and was solved with no fix on 12 of 12 seeds (``--sandbox none`` and bubblewrap), never ``forged``.

:func:`changed_names` gives the names a twin gives another value: those stored by a statement it rewrote and,
for a rewritten ``parametrize`` decorator, only the columns whose cells differ (an input column left as it is
carries nothing; every listed name when the rows cannot be compared). :func:`reaches_past` follows them through
the statements up to the stop, in source order and twice round (a loop carries a value back): a statement
reading a carried name (or rewritten) carries every name it stores, the object an attribute or item is set on,
the receiver of a method it calls; a call taking a carried value that is not a builtin's, nor a method of the
carried value itself, lets it **escape** (a helper keeping it in a module global, an object keeping it where
no name shows). A fixture of the test's module or of a ``conftest.py`` above it that asks for a changed column,
for ``request``, or for such a fixture, carries it into its value. The value reaches past the stop when a
statement past it reads a carried name, or when it escaped and any statement runs past the stop. A fixture of a
plugin or an installed package that asks for a column is not seen here.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator, Sequence

from pytest_homefield.sandbox.canary_sites import _EQUALS, _OPPOSITE

__all__ = ["changed_names", "reaches_past"]


def changed_names(func: ast.FunctionDef | ast.AsyncFunctionDef, twin: ast.FunctionDef | ast.AsyncFunctionDef | None,
                  lines: set[int], stored_in: Sequence[tuple[int, int]]) -> set[str]:
    """The names the twin ``twin`` of ``func`` (``None``: not parsed) gives another value, changing ``lines``
    (1-based, of the member's text): for each decorator of ``func`` on those lines, the argument names of its
    ``parametrize`` columns whose cells differ from the twin's (every name it lists when the twin's decorator
    cannot be compared cell by cell), and the names stored by the statements spanning ``stored_in`` (``(first,
    last)`` lines of each statement holding a changed line)."""
    names: set[str] = set()
    others = twin.decorator_list if twin is not None else []
    for at, dec in enumerate(func.decorator_list):
        if not lines & set(range(dec.lineno, (dec.end_lineno or dec.lineno) + 1)):
            continue
        listed = _listed(dec)
        columns = _columns(dec, others[at]) if at < len(others) and listed else None
        argnames = _argnames(dec) or []
        names |= listed if columns is None else {n for n, same in zip(argnames, columns, strict=True) if not same}
    for lo, hi in stored_in:
        if lo > func.lineno:
            names |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                      and lo <= n.lineno <= hi}
    return names


def reaches_past(func: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str], lines: set[int], end: int,
                 modules: Sequence[ast.Module] = ()) -> bool:
    """Whether a value given to ``names`` or written on ``lines`` of ``func`` (lines of the member's text) can
    reach a statement past line ``end`` (the end of the statement where the original stops). ``modules``: the
    test file's tree and those of the ``conftest.py`` files above it, for their fixtures (a fixture asking for a
    changed name, for ``request`` or for such a fixture carries it to the test's argument of its name)."""
    carried = set(names)
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    fixtures = [f for m in modules for f in _module_fixtures(m)]
    asking = set(names) | {"request"}
    grew = True
    while grew:  # a fixture asking for one that carries the value carries it too
        grew = False
        for fixture in fixtures:
            asks = {a.arg for a in (*fixture.args.posonlyargs, *fixture.args.args, *fixture.args.kwonlyargs)}
            if fixture.name not in asking and asks & asking:
                asking.add(fixture.name)
                grew = True
    carried |= (asking - {"request"}) & params
    statements = [s for s in ast.walk(func) if isinstance(s, ast.stmt) and s is not func]
    before = sorted((s for s in statements if s.lineno <= end), key=lambda s: (s.lineno, s.col_offset))
    after = [s for s in statements if s.lineno > end]
    escaped = False
    for _ in range(2):  # a loop's body carries a value back to its earlier lines
        for stmt in before:
            own = list(_own(stmt))
            span = set(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
            if not (_reads(own) & carried) and not (span & lines and not isinstance(stmt, _COMPOUND)):
                continue
            carried |= {n.id for n in own if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
            carried |= {r for n in own if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store)
                        and (r := _root(n)) is not None}
            for call in (n for n in own if isinstance(n, ast.Call)):
                if not _reads(list(_inputs(call))) & carried or _callee(call) in _COMPARISONS:
                    continue
                f = call.func
                owner = _root(f.value) if isinstance(f, ast.Attribute) else None
                if owner is not None and owner not in names:
                    carried.add(owner)  # the receiver of a method may keep what it was given
                if owner is None and not (isinstance(f, ast.Name) and f.id not in params and hasattr(builtins, f.id)) \
                        or owner is not None and owner not in names:
                    escaped = True  # into code no name of the test shows (a helper's module global)
    return bool(_reads([n for s in after for n in _own(s)]) & carried) or (escaped and bool(after))


#: The calls a site's comparison is made of (``approx``, ``unittest``'s assertions): they compare what they are
#: given and keep none of it.
_COMPARISONS = frozenset({"approx", *_EQUALS, *_OPPOSITE, "assertAlmostEqual", "assertNotAlmostEqual"})


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef)


def _own(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of ``stmt`` that are not inside another statement nested in it (a compound statement's
    header: an ``if``'s test, a ``for``'s target and iterable, a ``with``'s items)."""
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        yield node
        todo += [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt)]


def _reads(nodes: Sequence[ast.AST]) -> set[str]:
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _inputs(call: ast.Call) -> Iterator[ast.AST]:
    """Every node of ``call``'s arguments and of its receiver (``x`` of ``x.f(…)``)."""
    if isinstance(call.func, ast.Attribute):
        yield from ast.walk(call.func.value)
    for a in (*call.args, *(k.value for k in call.keywords)):
        yield from ast.walk(a)


def _root(node: ast.AST) -> str | None:
    """The name an attribute or item chain starts from (``self`` of ``self.a[0].b``), ``None`` for another."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _module_fixtures(module: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions of ``module`` (top level and in classes) decorated as fixtures."""
    bodies = [module.body] + [n.body for n in module.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for fn in body:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    "fixture" in ast.unparse(d) for d in fn.decorator_list):
                yield fn


def _argnames(dec: ast.expr) -> list[str] | None:
    """The argument names of a ``parametrize(…)`` decorator, ``None`` for another."""
    if not isinstance(dec, ast.Call) or not dec.args or not _is_parametrize(dec):
        return None
    first = dec.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [w.strip() for w in first.value.split(",") if w.strip()]
    if isinstance(first, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                       for e in first.elts):
        return [str(e.value).strip() for e in first.elts]  # type: ignore[attr-defined]
    return None


def _is_parametrize(dec: ast.Call) -> bool:
    f = dec.func
    return (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") == "parametrize"


def _listed(dec: ast.expr) -> set[str]:
    """Every identifier a decorator lists in its texts (``"a, b"``: ``a`` and ``b``)."""
    return {w.strip() for n in ast.walk(dec) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            for w in n.value.split(",") if w.strip().isidentifier()}


def _columns(dec: ast.expr, other: ast.expr) -> list[bool] | None:
    """Per argument name of ``parametrize`` decorator ``dec``, whether every row's cell of its column is the same
    in ``other`` (the twin's decorator); ``None`` when the two cannot be compared cell by cell (another decorator,
    other names or rows, a row that is not a plain tuple)."""
    names = _argnames(dec)
    if names is None or _argnames(other) != names or not isinstance(dec, ast.Call) or not isinstance(other, ast.Call) \
            or len(dec.args) < 2 or len(other.args) < 2 or ast.dump(dec.func) != ast.dump(other.func) \
            or [ast.dump(k) for k in dec.keywords] != [ast.dump(k) for k in other.keywords] \
            or ast.dump(dec.args[0]) != ast.dump(other.args[0]) or dec.args[2:] or other.args[2:]:
        return None
    rows, theirs = dec.args[1], other.args[1]
    if not isinstance(rows, (ast.List, ast.Tuple)) or not isinstance(theirs, (ast.List, ast.Tuple)) \
            or len(rows.elts) != len(theirs.elts):
        return None
    same = [True] * len(names)
    for mine, yours in zip(rows.elts, theirs.elts, strict=True):
        if len(names) == 1:
            cells: list[tuple[ast.expr, ast.expr]] = [(mine, yours)]
        elif isinstance(mine, (ast.Tuple, ast.List)) and isinstance(yours, (ast.Tuple, ast.List)) \
                and len(mine.elts) == len(yours.elts) == len(names):
            cells = list(zip(mine.elts, yours.elts, strict=True))
        else:
            return None
        for i, (a, b) in enumerate(cells):
            same[i] = same[i] and ast.dump(a) == ast.dump(b)
    return same
