"""Where a canary twin contradicts its test (docs/contracts.md §7, issue 30): one expression of the test
function's source, and the texts that replace it in the original (unchanged meaning) and in each twin.

A statement is eligible when it runs whenever the test passes: the body's top level and the bodies of
``with`` statements that expect no exception. The first choice, in statement order, is a **value**
site (``strong``: also caught when only values are forged): the expected literal of ``==``,
``assertEqual`` and its kin, ``assertAlmostEqual``, or inside ``approx(…)``; for an expected side
that is a name, the literal it was assigned earlier in the test, or its values in the test's
``parametrize`` decorator (every parameter set's value changed) — given ``k`` alternatives
by :func:`~pytest_homefield.sandbox.canary_values.alternatives`. Else the first **flip** site (one
twin): ``==`` with a non-literal side → ``!=``, ``in``/``is``/``!=`` → their negation, any other
assertion negated, a ``unittest`` assertion swapped for its opposite, ``pytest.raises`` /
``assertRaises`` expecting another builtin exception (:data:`OTHER_EXCEPTIONS`; unwrapped so the
exception escapes only when it expects ``Exception`` itself).

Texts come from :func:`ast.unparse`, and the original's site is rewritten in the same canonical form
(same meaning): every member of a group then differs from the others only at the site.
"""

from __future__ import annotations

import ast
import builtins
import copy
import random
import re
import string
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_homefield.sandbox.canary_values import (
    COUNTED,
    EXACT,
    Tolerance,
    alternatives,
    apart,
    derangements,
    is_small,
    real_alternatives,
)
from pytest_homefield.sandbox.seal_kinds import required_change

__all__ = ["Site", "Drawn", "find_site", "expected_values", "fixture_requests", "fed_columns", "handed_columns",
           "read_once", "RAISES", "approx_tolerance", "almost_tolerance"]

_EQUALS = {"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual", "assertDictEqual",
           "assertSetEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertCountEqual"}
_OPPOSITE = {"assertTrue": "assertFalse", "assertFalse": "assertTrue", "assertIn": "assertNotIn",
             "assertNotIn": "assertIn", "assertIs": "assertIsNot", "assertIsNot": "assertIs",
             "assertIsNone": "assertIsNotNone", "assertIsNotNone": "assertIsNone",
             "assertIsInstance": "assertNotIsInstance", "assertNotIsInstance": "assertIsInstance",
             "assertNotEqual": "assertEqual", "assertRegex": "assertNotRegex", "assertNotRegex": "assertRegex",
             "assertGreater": "assertLessEqual", "assertLessEqual": "assertGreater",
             "assertLess": "assertGreaterEqual", "assertGreaterEqual": "assertLess",
             "assertAlmostEqual": "assertNotAlmostEqual", "assertNotAlmostEqual": "assertAlmostEqual",
             "assertEqual": "assertNotEqual", "assertEquals": "assertNotEqual"}
#: Names of the calls and context managers that expect an exception.
RAISES = {"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"}


@dataclass(frozen=True)
class Drawn:
    """The real values a value site's twins may take, and how to say where they came from: ``source``
    (the end of the twin's ``how``); ``excusable``: every such twin is (a value of the parent's code:
    wrong code could return one), ``None``: a small value is (:func:`~pytest_homefield.sandbox.
    canary_values.is_small`); ``keep``: whether a made-up value may be taken when none of ``values``
    fits (one occurring in the parent's code may not, when the original's does not)."""

    values: Sequence[Any]
    source: str = "another test's expected value"
    excusable: bool | None = None
    keep: Callable[[Any], bool] | None = None


#: Real values a value site's twins may take: a sequence, or a function of the site's value giving one.
Pool = Sequence[Any] | Callable[[Any], Sequence[Any] | Drawn]
#: Draws of a made-up value kept by :attr:`Drawn.keep` before one it refuses is taken all the same.
_TRIES = 8


@dataclass
class Site:
    """One rewrite site of a test function. ``node``: the expression or statement replaced (its
    ``lineno``/``col_offset``/``end_*`` locate it in the source); ``original``: its canonical text
    (same meaning); ``twins``: ``(text, how)`` per twin; ``strong``: a value site; ``statement``:
    ``node`` is a whole statement (its text may span lines, indented like the statement)."""

    node: ast.AST
    original: str
    twins: list[tuple[str, str]]
    strong: bool
    statement: bool = False
    #: Per twin: whether honest code that computes a wrong value could well meet it (a flip, a bool, a
    #: made-up value near the original, a small number or short text): its passing is then excused
    #: when the original failed (:meth:`~pytest_homefield.sandbox.canaries.CanaryPlan.forged`).
    #: ``None``: every twin is.
    excusable: list[bool] | None = None
    #: More literals changed with ``node`` (a within-function swap, :mod:`~pytest_homefield.sandbox.
    #: canary_swaps`): ``(node, its canonical text, its text in each twin)``.
    others: list[tuple[ast.AST, str, list[str]]] = field(default_factory=list)


def find_site(func: ast.FunctionDef | ast.AsyncFunctionDef, k: int, rng: random.Random,
              pool: Pool = (), exceptions: Sequence[str] | None = None,
              allowed: Callable[[ast.AST], bool] | None = None,
              lineage: Callable[[str], set[str]] | None = None, messages: Sequence[str] = (),
              unraised: Sequence[str] | None = None, fed: Collection[str] = ()) -> Site | None:
    """The first value site of ``func`` with ``k`` (or fewer, when the value has fewer) alternatives,
    else its first flip site; ``None`` when no statement can be contradicted. ``pool``: real expected
    values of the same file (:func:`expected_values`): a value site's twins take those of its type
    first (:func:`~pytest_homefield.sandbox.canary_values.real_alternatives`), made-up ones only when
    there are none; or a function of the site's value giving them. ``exceptions``: what an exception
    twin may expect instead (builtin names; ``None``: :data:`OTHER_EXCEPTIONS`): grading and mining give
    those the parent's code raises by name (:meth:`~pytest_homefield.sandbox.canary_parent.ParentText.
    raised`), none ``lineage`` relates to the original's (:func:`_other_exception`). ``allowed``:
    whether a site may change a node (:func:`~pytest_homefield.sandbox.canary_added.allow`: not a line
    the parent's version of the test has); a site changing another is passed over. ``messages``: texts
    the parent's code raises with (:meth:`~pytest_homefield.sandbox.canary_parent.ParentText.messages`):
    a ``raises(E, match=…)`` with no other exception to expect matches one of them instead. ``unraised``: what
    an exception twin expects instead when the original's exception is none of ``exceptions`` (the parent's
    code does not raise it by name: a class its fix adds a ``raise`` of), names the parent's code does not
    raise either (:func:`_other_exception`); ``None``: ``exceptions`` whatever the original's. ``fed``: names the
    fixtures ``func`` runs request (:func:`fed_columns`): no ``parametrize`` column of those is a site
    (:func:`_parametrized`)."""
    flip: Site | None = None
    bound: dict[str, ast.expr] = {}  # a name → the literal it was last assigned at the top level
    once = read_once(func)
    for stmt in _statements(func.body):
        value = _value_site(stmt, k, rng, lambda e, tol: _bound(e, bound, func, k, rng, pool, tol, fed), pool)
        if value is not None and _may(value, allowed):
            return value
        if flip is None:
            other = _flip_site(stmt, rng, OTHER_EXCEPTIONS if exceptions is None else exceptions, lineage, messages,
                               unraised)
            flip = other if other is not None and _may(other, allowed) else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id in once:
            bound[stmt.targets[0].id] = stmt.value
    return flip


def _may(site: Site, allowed: Callable[[ast.AST], bool] | None) -> bool:
    return allowed is None or all(allowed(n) for n in (site.node, *(o[0] for o in site.others)))


def read_once(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names ``func`` reads exactly once: an expected side that is a name is contradicted at the
    literal it was assigned only when the assertion is that name's one reader. A name the test also
    hands to the code (``value = 'hello'``, ``s.dumps(value)``, ``… == value``) would change the input
    with the expected value, and the reference fix passed that twin (itsdangerous: a forced sentinel)."""
    reads = Counter(n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    return {name for name, n in reads.items() if n == 1}


def expected_values(tree: ast.Module) -> list[Any]:
    """The literal expected sides of the value assertions (``==``, ``assertEqual`` and its kin) of every
    test function of ``tree`` (module level and in classes), in source order: the outputs the real
    code gives for other inputs (a ``parametrize`` column mixes inputs in: its own twins derange it)."""
    out: list[Any] = []
    bodies: list[list[ast.stmt]] = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for fn in body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test"):
                continue
            for stmt in _statements(fn.body):
                pair: list[ast.expr] = []
                if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
                        and isinstance(stmt.test.ops[0], ast.Eq):
                    pair = [stmt.test.left, stmt.test.comparators[0]]
                elif isinstance(stmt, ast.Expr) and _call_name(stmt.value) in _EQUALS \
                        and len(stmt.value.args) >= 2:  # type: ignore[attr-defined]
                    pair = list(stmt.value.args[:2])  # type: ignore[attr-defined]
                out += [v for v in map(_literal, pair) if v is not None]
    return out


def _bound(expr: ast.expr, bound: dict[str, ast.expr], func: ast.FunctionDef | ast.AsyncFunctionDef, k: int,
           rng: random.Random, pool: Pool = (), tol: Tolerance = EXACT, fed: Collection[str] = ()) -> Site | None:
    """A value site for an expected side that is a name: the literal it was assigned earlier in the
    test (``expected = [1, 2]``), or its values in a ``parametrize`` decorator of the test; ``tol``: its
    comparison's (:data:`~pytest_homefield.sandbox.canary_values.EXACT` or ``COUNTED``); ``fed``: names a fixture
    requests (:func:`_parametrized`)."""
    if not isinstance(expr, ast.Name):
        return None
    if expr.id in bound:
        return _values(bound[expr.id], k, rng, pool, tol)
    return _parametrized(expr.id, func, k, rng, tol, fed)


def fixture_requests(trees: Iterable[ast.Module]) -> dict[str, set[str]]:
    """The fixtures of ``trees`` (test modules, ``conftest.py`` files), each name with the names it requests: every
    function decorated by ``fixture`` (``@pytest.fixture``, ``@pytest.fixture(scope=…)``, ``@fixture``,
    ``pytest_asyncio.fixture``) at a module's top level or in its top-level classes, by its own name (or a literal
    ``name=``), its parameters but ``self``, ``cls`` and ``request``; an ``autouse=`` one (not a literal ``False``)
    also under ``""``, which every test requests. Fixtures of one name are merged (over-reading only keeps a column
    from being a site: :func:`fed_columns`)."""
    out: dict[str, set[str]] = {}
    for tree in trees:
        bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
        for body in bodies:
            for fn in body:
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                decs = [d for d in fn.decorator_list
                        if (_call_name(d) if isinstance(d, ast.Call) else _dotted_last(d)) == "fixture"]
                if not decs:
                    continue
                a = fn.args
                asked = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - {"self", "cls", "request"}
                keywords = {kw.arg: kw.value for d in decs if isinstance(d, ast.Call) for kw in d.keywords}
                named = _literal(keywords["name"]) if "name" in keywords else None
                out.setdefault(named if isinstance(named, str) else fn.name, set()).update(asked)
                if "autouse" in keywords and _literal(keywords["autouse"]) is not False:
                    out.setdefault("", set()).update(asked)
    return out


def fed_columns(func: ast.FunctionDef | ast.AsyncFunctionDef, fixtures: Mapping[str, Collection[str]]) -> set[str]:
    """The names the fixtures ``func`` runs request (``fixtures``: :func:`fixture_requests`): those its parameters
    and ``usefixtures`` marks name and the autouse ones, and what those request in turn. A ``parametrize`` column of
    such a name is handed to that fixture as well as to the test (:func:`_parametrized`)."""
    a = func.args
    todo = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)] + [""]
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and _call_name(dec) == "usefixtures":
            todo += [v for v in map(_literal, dec.args) if isinstance(v, str)]
    seen: set[str] = set()
    out: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        asked = fixtures.get(name, ())
        out.update(asked)
        todo += list(asked)
    return out


#: Calls a column may pass through without its value reaching the code under test: pytest's ``approx`` (it wraps an
#: expected value for a comparison) and the comparing assertions of ``unittest``.
_COMPARING = {"approx", "assertAlmostEqual", "assertNotAlmostEqual", "assertNotEqual", *_EQUALS}
#: Comparisons whose either side may be the column's: the other side's code compares against the value, it computes
#: nothing from it. ``in``/``not in`` only with the column as the container (``x in expected``): as the member,
#: the other side's ``__contains__`` takes it (``value in registry``).
_ORDERS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot)
#: Nodes a column's value passes through unchanged in kind, to be read again where the result goes.
_CARRIERS = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Starred, ast.JoinedStr, ast.FormattedValue, ast.IfExp,
             ast.BoolOp, ast.UnaryOp, ast.keyword)


def handed_columns(func: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module | None = None) -> set[str]:
    """The parameters of ``func`` whose value the body hands to the code under test (can52), followed through the
    names it is assigned to (``size = len(expected)``, ``for ch in value``, ``(n := value)``): a ``parametrize``
    column of such a name is an input as well as an expected value, and its twin (every row given another row's
    value) changes the input with it, which a real fix passes (``assert half(double(value)) == value``): no value
    site (:func:`_parametrized`). A read is no input where it is a side of a comparison (``==``, ``<``, ``is``, …;
    the container of ``in``), an argument of ``approx`` or a comparing ``unittest`` assertion, an ``assert``'s test
    or message, a bare expression; or where what it gives is read so in turn: an argument of a builtin the module and
    the test do not rebind (:mod:`builtins`, every other argument a literal or such a read: ``len(expected)``,
    ``sorted(expected)``), an attribute, method or item of the value (``value.upper()``, ``value[0]``), a container
    or f-string holding it, arithmetic with literals. Any other read (an argument of any other call, an operand of
    arithmetic with the code's objects, an item's key, a stored attribute, a lambda's or nested function's body, a
    ``return``, …) hands it on. ``module``: the test's module (names it binds are no builtins). Flow-insensitive:
    a name assigned from the value anywhere is followed everywhere (reading more as input only takes a site away)."""
    a = func.args
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    rebound = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    if module is not None:
        for n in module.body:
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                rebound |= {(x.asname or x.name).split(".")[0] for x in n.names}
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                rebound.add(n.name)
            else:
                rebound |= {t.id for t in ast.walk(n) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    pure = set(dir(builtins)) - rebound
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return {p for p in params if _hands_on(p, func, parents, pure)}


def _hands_on(name: str, func: ast.FunctionDef | ast.AsyncFunctionDef, parents: Mapping[int, ast.AST],
              pure: Collection[str]) -> bool:
    """Whether a read of ``name`` in ``func``, or of a name holding what it gives, hands it on
    (:func:`handed_columns`)."""
    tainted, todo = {name}, [name]
    while todo:
        current = todo.pop()
        for read in (n for stmt in func.body for n in ast.walk(stmt)):  # not its decorators' or defaults' names
            if not (isinstance(read, ast.Name) and read.id == current and isinstance(read.ctx, ast.Load)):
                continue
            held = _where_it_goes(read, tainted, parents, pure)
            if held is None:
                return True
            for target in held - tainted:
                tainted.add(target)
                todo.append(target)
    return False


def _targets(node: ast.AST) -> set[str] | None:
    """The names an assignment target binds (a name, a tuple or list of them, starred), ``None`` for any other
    (an attribute, an item: the value is stored in an object)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    if isinstance(node, (ast.Tuple, ast.List)):
        out: set[str] = set()
        for e in node.elts:
            got = _targets(e)
            if got is None:
                return None
            out |= got
        return out
    return None


def _where_it_goes(read: ast.expr, tainted: Collection[str], parents: Mapping[int, ast.AST],
                   pure: Collection[str]) -> set[str] | None:
    """The names ``read`` (a read of a tainted name) is assigned to, read by read up its expression, when no step of
    it hands the value to the code; ``None`` when one does."""

    def plain(e: ast.AST) -> bool:  # a literal, or what a tainted name gives
        return isinstance(e, ast.Constant) or (isinstance(e, ast.expr) and _literal(e) is not None) or (
            isinstance(e, ast.Name) and e.id in tainted) or (
            isinstance(e, _CARRIERS + (ast.BinOp, ast.Attribute, ast.Subscript)) and all(
                plain(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)))

    node: ast.AST = read
    while True:
        up = parents.get(id(node))
        if up is None:
            return None
        if isinstance(up, ast.Compare):
            sides: list[ast.AST] = [up.left, *up.comparators]
            at = next((i for i, x in enumerate(sides) if x is node), -1)
            if at < 0:
                return None
            # the operator before the side has it on its right, the one after on its left (the member of ``in``)
            ops = [(up.ops[i], i == at) for i in (at - 1, at) if 0 <= i < len(up.ops)]
            if all(isinstance(o, _ORDERS) or (isinstance(o, (ast.In, ast.NotIn)) and not left) for o, left in ops):
                return set()
            return None
        if isinstance(up, (ast.Assert, ast.Expr)):
            return set()
        if isinstance(up, ast.Call):
            fn = up.func
            if node is fn:  # the column called; its own method (``value.upper()``) given literals or such values:
                # read on, as its attribute is (gatk53: handed on before, against the docstring)
                if isinstance(fn, ast.Attribute) and all(plain(x) for x in up.args) \
                        and all(plain(k.value) for k in up.keywords):
                    node = up
                    continue
                return None
            if _call_name(up) in _COMPARING:
                return set()
            if isinstance(fn, ast.Name) and fn.id in pure or (isinstance(fn, ast.Attribute) and plain(fn.value)):
                # the argument read up to here is what the value gives (reach46: ``len(expected.strip())``)
                if all(x is node or plain(x) for x in up.args) and all(plain(k.value) for k in up.keywords):
                    node = up
                    continue
            return None
        if isinstance(up, ast.Attribute):
            node = up  # the value's own attribute or method: a builtin type's (a column holds literals)
            continue
        if isinstance(up, ast.Subscript):
            if node is up.value or plain(up.value):
                node = up
                continue
            return None  # a key into another object
        if isinstance(up, ast.BinOp):
            if all(x is node or plain(x) for x in (up.left, up.right)):
                node = up
                continue
            return None
        if isinstance(up, _CARRIERS) or (isinstance(up, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
                                          and any(node is getattr(up, f, None) for f in ("elt", "key", "value"))):
            node = up  # held in a container, or each item of one made from it
            continue
        if isinstance(up, ast.NamedExpr):
            got = _targets(up.target)
            if got is None:
                return None
            rest = _where_it_goes(up, [*tainted, *got], parents, pure)
            return None if rest is None else got | rest
        if isinstance(up, (ast.Assign, ast.AnnAssign)) and node is up.value:
            targets = up.targets if isinstance(up, ast.Assign) else [up.target]
            names: set[str] = set()
            for t in targets:
                got = _targets(t)
                if got is None:
                    return None
                names |= got
            return names
        if isinstance(up, (ast.For, ast.AsyncFor, ast.comprehension)) and node is up.iter:
            return _targets(up.target)
        if isinstance(up, ast.comprehension) and any(node is c for c in up.ifs):
            return set()
        return None


def _dotted_last(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _indirect(dec: ast.Call, name: str) -> bool:
    """Whether the ``parametrize`` decorator ``dec`` hands its column ``name`` to a fixture of that name
    (``indirect=True``, or a literal list naming it; its third positional argument too): anything but a literal
    ``False``, ``None``, or a literal list or tuple of texts without ``name`` counts as yes (not known)."""
    given = dec.args[2] if len(dec.args) > 2 else next((kw.value for kw in dec.keywords if kw.arg == "indirect"), None)
    if given is None:
        return False
    try:
        value = ast.literal_eval(given)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return True
    if value is False or value is None:
        return False
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return name in value
    return True


def _with_column(rows: ast.List | ast.Tuple, at: int, width: int, values: Sequence[Any]) -> str:
    """The source of ``rows`` (a ``parametrize`` argument of ``width`` names) with column ``at`` of row
    ``i`` set to ``values[i]`` (each written as its ``repr``); ``rows`` itself is left as it is."""
    new = copy.deepcopy(rows)
    for i, row in enumerate(new.elts):
        cell = ast.parse(repr(values[i]), mode="eval").body
        if width == 1:
            new.elts[i] = cell
        else:
            row.elts[at] = cell  # type: ignore[attr-defined]
    return ast.unparse(new)


def _parametrized(name: str, func: ast.FunctionDef | ast.AsyncFunctionDef, k: int, rng: random.Random,
                  tol: Tolerance = EXACT, fed: Collection[str] = ()) -> Site | None:
    """``@pytest.mark.parametrize("a,b,c", [(3, 1, 2), …])`` with ``name`` among the argnames: every
    row's value of ``name`` (a literal) gets its alternatives, twin ``j`` taking the ``j``-th of each. ``None``
    when the column is an input too (can49; mining's check made a sentinel of the function, whatever other site it
    had, and a grading with no such check ``forged`` a real fix): a fixture the test runs requests ``name`` (``fed``,
    :func:`fed_columns`: ``def doubled(value): return double(value)``, which a twin's value reaches as well), the
    decorator hands it to a fixture (``indirect=``, :func:`_indirect`). Left: the test handing the column to the code
    itself (``assert half(double(value)) == value``): told from a read that is no input (``size = len(expected)``)
    only by what the call is, it stays a site, and mining's check makes a sentinel of the function."""
    if name in fed:
        return None
    for dec in func.decorator_list:
        if _call_name(dec) != "parametrize" or not isinstance(dec, ast.Call) or len(dec.args) < 2:
            continue
        names = _literal(dec.args[0])
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        if not isinstance(names, (list, tuple)) or name not in names \
                or not isinstance(dec.args[1], (ast.List, ast.Tuple)):
            continue
        if _indirect(dec, name):
            return None
        at, rows = names.index(name), dec.args[1]
        cells: list[ast.expr] = []
        for row in rows.elts:
            if len(names) == 1:
                cells.append(row)
            elif isinstance(row, (ast.Tuple, ast.List)) and len(row.elts) == len(names):
                cells.append(row.elts[at])
            else:
                return None  # pytest.param(…) or a computed row
        values = [_literal(c) for c in cells]
        if not cells or any(v is None for v in values):
            return None
        shuffled = derangements(values, k, rng, tol=tol)
        twins: list[tuple[str, str]] = []
        excusable: list[bool] = []
        if shuffled:  # the column's own values, each row given another row's: real outputs, other inputs
            for perm in shuffled:
                twins.append((_with_column(rows, at, len(names), [values[j] for j in perm]),
                              f"expected {name} of each parameter set -> another set's "
                              f"({', '.join(_short(values[j]) for j in perm)})"[:120]))
                excusable.append(all(is_small(values[j]) for j in perm))
            if len(twins) == k:
                return Site(rows, ast.unparse(rows), twins, True, excusable=excusable)
        # made-up values (all, or the twins the derangements could not give)
        alts = [alternatives(v, k - len(twins), rng, tol) for v in values]
        n = min(len(a) for a in alts)
        if not n:
            return Site(rows, ast.unparse(rows), twins, True, excusable=excusable) if twins else None
        for j in range(n):
            twins.append((_with_column(rows, at, len(names), [a[j] for a in alts]),
                          f"expected {name} of each parameter set -> "
                          f"{', '.join(_short(a[j]) for a in alts)}"[:120]))
            excusable.append(True)
        return Site(rows, ast.unparse(rows), twins, True, excusable=excusable)
    return None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and not _expects_raise(stmt):
            yield from _statements(stmt.body)


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return None


def _expects_raise(stmt: ast.With | ast.AsyncWith) -> bool:
    return any(_call_name(item.context_expr) in RAISES for item in stmt.items)


def _literal(node: ast.expr) -> Any:
    """The value of a literal expression (``None`` for anything else, and for ``None`` itself)."""
    if isinstance(node, ast.Name):
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


#: ``pytest.approx``'s tolerance when none is given: ``(rel, abs)``.
APPROX_DEFAULT: Tolerance = (1e-6, 1e-12)


def _number(node: ast.expr | None) -> float | None:
    """A literal int or float (not a bool) ≥ 0 as a float; ``None`` for anything else (``None`` itself too)."""
    v = _literal(node) if node is not None else None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
        return float(v)
    return None


def approx_tolerance(call: ast.Call) -> Tolerance | None:
    """The tolerance of ``approx(expected, rel=None, abs=None, nan_ok=False)`` (gatk34), as pytest computes it:
    ``abs`` alone is the whole window; else ``rel`` (default 1e-6) of ``|expected|``, at least ``abs`` (default
    1e-12). ``None`` when ``rel`` or ``abs`` is given as anything but a literal number (``rel=TOL``), or another
    argument is given: the window is then not known, and no value twin may be drawn there."""
    given: dict[str, ast.expr] = dict(zip(("rel", "abs", "nan_ok"), call.args[1:], strict=False))
    if len(call.args) > 4:
        return None
    for kw in call.keywords:
        if kw.arg not in ("rel", "abs", "nan_ok") or kw.arg in given:
            return None
        given[kw.arg] = kw.value
    rel, absolute = _given(given.get("rel")), _given(given.get("abs"))
    if rel is False or absolute is False:
        return None
    if rel is None and absolute is not None:
        return 0.0, absolute
    return (APPROX_DEFAULT[0] if rel is None else rel), (APPROX_DEFAULT[1] if absolute is None else absolute)


def _given(node: ast.expr | None) -> float | None | bool:
    """An optional number argument: ``None`` when absent or the literal ``None``, its value when a literal number
    ≥ 0, else ``False`` (not known)."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return None
    v = _number(node)
    return False if v is None else v


def almost_tolerance(call: ast.Call) -> Tolerance | None:
    """The tolerance of ``assertAlmostEqual(first, second, places=None, msg=None, delta=None)`` (gatk34):
    ``delta``, else ``10 ** -places`` (default 7; the difference rounded to ``places`` digits is 0 within half
    of that, so this is a wider window than the real one, never a narrower one). ``None`` when ``places`` or
    ``delta`` is not a literal number."""
    given: dict[str, ast.expr] = dict(zip(("places", "msg", "delta"), call.args[2:], strict=False))
    for kw in call.keywords:
        if kw.arg is None or kw.arg in given:
            return None
        given[kw.arg] = kw.value
    if len(call.args) > 5 or not set(given) <= {"places", "msg", "delta"}:
        return None
    delta = _given(given.get("delta"))
    if delta is not None:
        return None if delta is False else (0.0, float(delta))
    places = given.get("places")
    if places is None or (isinstance(places, ast.Constant) and places.value is None):
        return 0.0, 1e-7
    n = _literal(places)
    if not isinstance(n, int) or isinstance(n, bool) or not -300 < n < 300:
        return None
    return 0.0, 10.0 ** -n


def _values(expr: ast.expr, k: int, rng: random.Random, pool: Pool = (), tol: Tolerance | None = EXACT) -> Site | None:
    """A value site at ``expr`` (a literal, or ``approx(literal)``), else ``None``: twins from ``pool``
    (real values of the file, :func:`real_alternatives`) when it has any of the type, else made up. ``tol``:
    the tolerance of the comparison expecting ``expr`` (``approx``'s own, :func:`approx_tolerance`, for an
    ``approx`` call): every twin is :func:`~pytest_homefield.sandbox.canary_values.apart` from the value under
    it, so that no value meets both (a real fix passing a twin beside its passing original is ``forged``);
    ``None`` (not known): no site."""
    value = _literal(expr)
    target: ast.expr = expr
    wrap = ""
    if value is None and isinstance(expr, ast.Call) and _call_name(expr) == "approx" and expr.args:
        target, value, wrap = expr.args[0], _literal(expr.args[0]), "approx"
        tol = approx_tolerance(expr)
    if value is None or tol is None:
        return None
    given = pool(value) if callable(pool) else pool
    drawn = given if isinstance(given, Drawn) else Drawn(given)
    real = real_alternatives(value, drawn.values, k, rng, approx=bool(wrap), tol=tol)
    alts = [a for a, _ in real] or [a for a in _made_up(value, k, rng, drawn.keep, tol)
                                    if tol == EXACT or apart(value, a, tol)]
    excusable = [e if drawn.excusable is None else drawn.excusable for _, e in real] or [True] * len(alts)
    if tol not in (EXACT, COUNTED):  # honest wrong code meets a window, not one value: no "exactly another's output"
        excusable = [True] * len(alts)
    if not alts:
        return None
    how = "expected {}{} -> {}{}" + (f" ({drawn.source})" if real else " (made up)")
    twins = [(ast.unparse(ast.parse(repr(a), mode="eval").body),
              how.format(wrap, _short(value) if not wrap else f"({_short(value)})", wrap,
                         _short(a) if not wrap else f"({_short(a)})")) for a in alts]
    return Site(target, ast.unparse(target), twins, True, excusable=excusable)


def _made_up(value: Any, k: int, rng: random.Random, keep: Callable[[Any], bool] | None,
             tol: Tolerance | None = None) -> list[Any]:
    """:func:`~pytest_homefield.sandbox.canary_values.alternatives` of ``value`` (under ``tol``), those ``keep``
    refuses left out (drawn again up to :data:`_TRIES` times, then taken as they come)."""
    alts = alternatives(value, k, rng, tol)
    for _ in range(_TRIES if keep is not None else 0):
        kept = [a for a in alts if keep(a)]  # type: ignore[misc]
        if kept:
            return kept
        alts = alternatives(value, k, rng, tol)
    return alts


def _compared_by(expected: ast.expr, other: ast.expr) -> Tolerance | None:
    """The tolerance ``expected`` is compared with when ``other`` is the other side of an ``==``: ``approx``'s
    (:func:`approx_tolerance`) when ``other`` is an ``approx(…)`` call (``3.14 == approx(area(1), rel=0.01)``),
    else :data:`~pytest_homefield.sandbox.canary_values.EXACT`."""
    if isinstance(other, ast.Call) and _call_name(other) == "approx":
        return approx_tolerance(other)
    return EXACT


def _equals_by(name: str | None, expected: ast.expr, other: ast.expr) -> Tolerance | None:
    """The comparison ``expected`` is met by as an argument of the ``assert*Equal`` call ``name``:
    :data:`~pytest_homefield.sandbox.canary_values.COUNTED` for ``assertCountEqual`` (its order is not compared:
    a twin must hold other items, gatk46), else :func:`_compared_by`."""
    return COUNTED if name == "assertCountEqual" else _compared_by(expected, other)


def _bound_exact(expr: ast.expr, other: ast.expr, bound: Callable[[ast.expr, Tolerance], Site | None],
                 counted: bool = False) -> Site | None:
    """``bound(expr)`` (a name's literal or ``parametrize`` column) when ``expr`` is compared exactly (or, ``counted``,
    by ``assertCountEqual``), else ``None``: its twins are drawn for ``==``, not for an ``approx`` on the other side
    (gatk34)."""
    if _compared_by(expr, other) != EXACT:
        return None
    return bound(expr, COUNTED if counted else EXACT)


def _value_site(stmt: ast.stmt, k: int, rng: random.Random,
                bound: Callable[[ast.expr, Tolerance], Site | None], pool: Pool = ()) -> Site | None:
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
            and isinstance(stmt.test.ops[0], ast.Eq):
        left, right = stmt.test.left, stmt.test.comparators[0]
        first, second = (left, right) if _literal(right) is None and _literal(left) is not None else (right, left)
        return _values(first, k, rng, pool, _compared_by(first, second)) \
            or _values(second, k, rng, pool, _compared_by(second, first)) \
            or _bound_exact(right, left, bound) or _bound_exact(left, right, bound)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call, name = stmt.value, _call_name(stmt.value)
        if name in _EQUALS and len(call.args) >= 2:
            a, b = call.args[0], call.args[1]
            first, second = (a, b) if _literal(b) is None and _literal(a) is not None else (b, a)
            counted = name == "assertCountEqual"
            return _values(first, k, rng, pool, _equals_by(name, first, second)) \
                or _values(second, k, rng, pool, _equals_by(name, second, first)) \
                or _bound_exact(b, a, bound, counted) or _bound_exact(a, b, bound, counted)
        if name == "assertAlmostEqual" and len(call.args) >= 2:
            v = _literal(call.args[1])
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return _values(call.args[1], k, rng, pool, almost_tolerance(call))
    return None


#: What the twin of an expected-exception site expects instead (attacker8's F4: a twin that unwrapped
#: ``pytest.raises`` was told apart by its shape, since every original of the kind held one and no
#: twin did). The twin keeps the ``raises`` and names another builtin exception; one related to the
#: original's by inheritance is never drawn (a real fix raising ``KeyError`` would pass ``LookupError``),
#: and mining's check drops a twin a custom exception class still passes.
#: How such a twin's :attr:`~pytest_homefield.sandbox.canaries.Canary.how` begins. Whether a real fix
#: fails it depends on the class the code raises (a custom ``BadSignature(ValueError)`` passes a twin
#: expecting ``ValueError``) and the class is drawn per seed, so mining's check of one seed does not
#: cover it: grading checks such a twin that passed against the reference fix
#: (:func:`pytest_homefield.run.grading.reference_passes`).
EXCEPTION_SWAP = "the expected exception"
OTHER_EXCEPTIONS = ("ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "AttributeError",
                    "OSError", "ZeroDivisionError", "NotImplementedError", "UnicodeError")


def _other_exception(expr: ast.expr, rng: random.Random, exceptions: Sequence[str],
                     lineage: Callable[[str], set[str]] | None = None, kind_only: bool = False,
                     unraised: Sequence[str] | None = None) -> Site | None:
    """A site expecting another exception than ``expr`` (the exception argument of ``raises`` or
    ``assertRaises``: a name, a dotted name or a tuple of them), drawn from ``exceptions`` (names the
    test module can use); ``None`` when every one of them is named there or related by inheritance to
    a name there: a builtin's by the builtins' hierarchy (``Exception``), any by ``lineage`` (a name →
    its bases and subclasses, :meth:`~pytest_homefield.sandbox.canary_parent.ParentText.lineage`).
    One of the original's kind is drawn when there is one: a builtin for a builtin, a class of the code
    for one of the code's (a test process knows which kind projects test with); ``kind_only``: only
    such a one. ``unraised`` (not ``None``): when no name of ``expr`` is one of ``exceptions`` (those the
    parent's code raises by name), the names are drawn from ``unraised`` instead (those it does not raise),
    so that the twin's exception is raised by the parent exactly when the original's is (xatk32: drawn from
    ``exceptions`` whatever the original's, a twin of a class a commit's fix raises first was told by "a
    class the code raises already"; round 9 had closed the other way round)."""
    names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)}
    if unraised is not None and not names & set(exceptions):
        exceptions = unraised
    related: set[str] = set()
    for name in names:
        cls = getattr(builtins, name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            related |= {o for o in exceptions if isinstance(b := getattr(builtins, o, None), type)
                        and (issubclass(cls, b) or issubclass(b, cls))}
        related |= lineage(name) if lineage is not None else set()
    choices = [o for o in exceptions if o not in names | related]
    own = {hasattr(builtins, n) for n in names}
    choices = [o for o in choices if hasattr(builtins, o) in own] or ([] if kind_only else choices)
    if not choices:
        return None
    other = rng.choice(choices)
    return Site(expr, ast.unparse(expr), [(other, f"{EXCEPTION_SWAP} {_short(ast.unparse(expr))} -> {other}")], False)


def _expected_pattern(call: ast.Call) -> ast.Constant | None:
    """The literal pattern ``call`` expects the exception's message to match (``re.search``): ``match=`` of a
    ``raises``, the second positional argument or ``expected_regex=`` of an ``assertRaisesRegex`` (can49: read from
    ``match=`` only, it got no message twin); ``None`` when there is no such ``str`` literal."""
    node: ast.expr | None = None
    if _call_name(call) in ("assertRaisesRegex", "assertRaisesRegexp"):
        node = call.args[1] if len(call.args) >= 2 else None
        keyword = "expected_regex"
    else:
        keyword = "match"
    node = node if node is not None else next((k.value for k in call.keywords if k.arg == keyword), None)
    return node if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _other_match(call: ast.Call, rng: random.Random, messages: Sequence[str]) -> Site | None:
    """A site expecting another message of the same exception: the literal pattern of ``call``
    (:func:`_expected_pattern`: ``match=`` of a ``raises``, the pattern of an ``assertRaisesRegex``) given a
    made-up text (:func:`_made_up_message`) that it does not match, that does not match it, and that no text of
    ``messages`` (the parent's code raises with) matches. ``None`` without such a pattern or text, and when the
    pattern is one of ``messages``: no message twin is then both sound and as much one of the code's as the
    original (can49: the twin was another of ``messages``, text a real fix's message may well hold beside the
    original's, ``invalid port: port out of range`` matching ``invalid port`` and its twin ``port out of range``: a
    real fix ``forged``; a made-up one there is told by "the message the code raises already is the original's",
    xatk32 the other way round), so the site falls to another exception, else the expected exception unwrapped,
    twins no real fix raising what the original expects passes."""
    node = _expected_pattern(call)
    if node is None or node.value in messages:
        return None
    was = str(node.value)
    other = _made_up_message(was, rng, messages)
    if other is None:
        return None
    return Site(node, ast.unparse(node), [(repr(other), f"the expected message {_short(was)} -> {_short(other)} "
                                                        "(made up)")], False)


def _made_up_message(was: str, rng: random.Random, messages: Sequence[str]) -> str | None:
    """``was`` (a ``match=`` pattern) with one part changed, the first drawn whose text is a valid pattern matching no
    text of ``messages`` (can49: a real fix may raise one of the code's messages, or one holding it), and neither
    matching the other (a real fix's message, which the original's pattern matches, would have to hold both texts
    for the twin's to match it too; mining's check runs the reference fix on it):
    a number to another of as many digits, else a word to another word of ``messages`` (the parent's code's
    texts) of its case, else one letter to another of its case (a misspelt word is told by a spelling check,
    so the letter comes last); never a part right after a backslash (``\\d`` stays) or inside ``{…}``, and only
    a part every match of ``was`` holds, changed to literal characters every match of the new pattern holds
    (:func:`~pytest_homefield.sandbox.seal_kinds.required_change`; gatk46: ``must be (positive|zero)`` was changed
    to ``must be (positive|too)``, which the message ``must be zero`` matches too, and a real fix raising it was
    ``forged``). ``None`` when no part gives one (``[a-z]+``: then no message twin)."""
    free = [not (i and was[i - 1] == "\\") and was.rfind("{", 0, i) <= was.rfind("}", 0, i) for i in range(len(was))]
    parts = [m for m in re.finditer(r"\d+|[A-Za-z]+", was) if free[m.start()]]
    numbers = [m for m in parts if m.group().isdigit()]
    words = [m for m in parts if not m.group().isdigit()]
    vocabulary = sorted({w for t in messages for w in re.findall(r"[A-Za-z]+", t)})

    def changes() -> Iterator[tuple[int, int, str]]:
        for m in rng.sample(numbers, len(numbers)):
            n = len(m.group())
            low = 10 ** (n - 1) if n > 1 else 0
            others = [str(v) for v in range(low, min(10 ** n, low + 100)) if str(v) != m.group()]
            for v in rng.sample(others, min(4, len(others))):
                yield m.start(), m.end(), v
        for m in rng.sample(words, len(words)):
            w = m.group()
            alike = [v for v in vocabulary if v != w and v.lower() not in was.lower()
                     and (v.islower(), v.isupper(), v[:1].isupper()) == (w.islower(), w.isupper(), w[:1].isupper())]
            for v in rng.sample(alike, min(4, len(alike))):
                yield m.start(), m.end(), v
        letters = [i for m in words for i in range(m.start(), m.end()) if was[i].isascii()]
        for i in rng.sample(letters, len(letters)):
            pool = string.ascii_lowercase if was[i].islower() else string.ascii_uppercase
            yield i, i + 1, rng.choice([c for c in pool if c != was[i]])

    for start, end, part in changes():
        other = was[:start] + part + was[end:]
        try:
            if not re.search(was, other) and not re.search(other, was) \
                    and not any(re.search(other, m) for m in messages) and required_change(was, start, end, part):
                return other
        except re.error:
            continue
    return None


def _flip_site(stmt: ast.stmt, rng: random.Random, exceptions: Sequence[str],
               lineage: Callable[[str], set[str]] | None = None, messages: Sequence[str] = (),
               unraised: Sequence[str] | None = None) -> Site | None:
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        new: ast.expr
        how = "negated"
        flips: dict[type, ast.cmpop] = {ast.In: ast.NotIn(), ast.NotIn: ast.In(), ast.Is: ast.IsNot(),
                                        ast.IsNot: ast.Is(), ast.NotEq: ast.Eq(), ast.Eq: ast.NotEq()}
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in flips:
            new = copy.deepcopy(test)
            new.ops = [flips[type(test.ops[0])]]
            how = f"{type(test.ops[0]).__name__} flipped"
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            new = test.operand
        else:
            new = ast.UnaryOp(op=ast.Not(), operand=test)
        return Site(test, ast.unparse(test), [(ast.unparse(new), how)], False)
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and _expects_raise(stmt) and len(stmt.items) == 1:
        ctx = stmt.items[0].context_expr
        if isinstance(ctx, ast.Call) and ctx.args:
            other = _other_exception(ctx.args[0], rng, exceptions, lineage, kind_only=True, unraised=unraised) \
                or _other_match(ctx, rng, messages) \
                or _other_exception(ctx.args[0], rng, exceptions, lineage, unraised=unraised)
            if other is not None:
                return other
        body = "\n".join(ast.unparse(s) for s in stmt.body)
        return Site(stmt, ast.unparse(stmt), [(body, "the expected exception unwrapped")], False, statement=True)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call, name = stmt.value, _call_name(stmt.value)
        if name is None:
            return None
        if name in _OPPOSITE and isinstance(call.func, ast.Attribute):
            func = copy.deepcopy(call.func)
            func.attr = _OPPOSITE[name]
            return Site(call.func, ast.unparse(call.func), [(ast.unparse(func), f"{name} -> {func.attr}")], False)
        at = 2 if name.startswith("assertRaisesRegex") else 1  # (exc, [regex,] callable, *args)
        if name in RAISES and len(call.args) > at and not call.keywords:
            other = _other_exception(call.args[0], rng, exceptions, lineage, kind_only=True, unraised=unraised) \
                or (_other_match(call, rng, messages) if at == 2 else None) \
                or _other_exception(call.args[0], rng, exceptions, lineage, unraised=unraised)
            if other is not None:
                return other
            unwrapped = ast.Call(func=call.args[at], args=list(call.args[at + 1:]), keywords=[])
            return Site(call, ast.unparse(call), [(ast.unparse(unwrapped), "the expected exception unwrapped")],
                        False)
    return None
