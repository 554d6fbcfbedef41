"""A twin leaves its function's PASS_TO_PASS instances as they are (docs/contracts.md §7, issue 30, atk26).

A parametrized FAIL_TO_PASS function often holds instances the parent's code passes already: the task's
PASS_TO_PASS ids of the same function (``test_sign[5-1]`` beside the fixed ``test_sign[0-0]``). A twin
that changes what those instances check (a parametrize column deranged or made up on every row, a
negated assertion, a literal every row compares with) fails them with the parent's code, where the
original passes them. The graded code *is* the parent's code plus the agent's, so a test process can
run every instance of a function unchanged and see whether any passes: it passes in the original's run
and in no twin's. atk26's forger passed every instance of a function when one of them passed unchanged
and ran the rest as they were: solved on every seed with no fix, never ``forged``, no twin hit, no
channel between the runs.

So the site of such a function is kept only when it is a ``parametrize`` column whose twins change the
rows of FAIL_TO_PASS instances alone (:func:`rows_only`): the rows are matched to the task's ids by
pytest's own id maker, every id of the function must be the task's, and a changed row may not take a
PASS_TO_PASS row's id. Else the function gets a sentinel (told by its shape, so it is listed as
unprotected): no twin is better than one the parent's code tells.

A row's cells need not be literals (rows31: humanize's ``([1024**2 - 1, True], "1.0 MiB")``,
``([math.inf], "+Inf")``, which sent 12 of its 17 tasks to the sentinel): for the ids, a small constant
expression is folded as Python computes it (:func:`_fold`) and any other cell stands as an opaque object,
which pytest ids ``argnameN``; a wrong guess makes ids that are not the task's, and the sentinel stands.
The twin changes only the expected cells of the FAIL_TO_PASS rows; every other cell keeps its source text, and
the changed column is told by comparing the cells' AST (:func:`_column`). A computed expected cell (rows32:
``("1M", 1024**2)``) is changed only when it folds to a number pytest's own ids show (no ``ids=``: the ids
matching the task's checked the fold), and only by a derangement, which moves the cells' source texts among the
FAIL_TO_PASS rows, so that each run's file holds the same cells (a bare literal among ``1024 ** k`` would tell
the twin); with no derangement (one such row) it gets the sentinel.

An assertion the commit added to such a function's body (r26, humanize 1399e049734b: ``naturaldelta(seconds, …) ==
expected`` beside the parent's ``timedelta`` one, red on some rows only) runs on every row, and no column twin
leaves the others as they are: its rows are set apart (:func:`rows_apart`, add32). Every member holds the red rows
alone, the twin expects a made-up value at the added assertion, and the green rows run in every run alike under
another name, without that assertion (:func:`apart_function`), reported under their own ids.
prm65 (usr64 on jazzband/prettytable, ``TestStyle::test_style[RANDOM]``): rows written ``pytest.param(STYLE, text,
id="RANDOM")`` are read (:func:`_param_row`), the flip of ``result.strip() == expected.strip()`` is moved to the
column its one side names, and a row pytest ids from an opaque cell (an IntEnum it ids ``15``) stands for the task id
the other rows leave. A function whose assertion is the parent's is listed unprotected unless its twins change only
rows the parent does not hold (:func:`rows_new`).
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import operator
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.sandbox.canaries import _replace
from pytest_homefield.sandbox.canary_sites import Site
from pytest_homefield.sandbox.canary_values import alternatives, derangements, is_small

__all__ = ["APART_HOW", "NOT_ROWS", "RowsApart", "apart_function", "module_constants", "row_ids", "rows_apart",
           "rows_new", "rows_only"]

#: The ``how`` of the sentinel a function with PASS_TO_PASS instances gets when no twin leaves them as
#: they are.
NOT_ROWS = "sentinel: a twin would change its PASS_TO_PASS instances"


def _names(dec: ast.Call) -> list[str] | None:
    try:
        names = ast.literal_eval(dec.args[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        return None
    return list(names)


#: The bound of a folded integer (bits) and of an integer power's exponent: a cell past it stands opaque.
_MAX_BITS = 4096
_MAX_EXPONENT = 4096
_ARITH: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
#: ``math.NAME`` constants the folder knows (the module's own values).
_MATH = {"inf": math.inf, "nan": math.nan, "pi": math.pi, "e": math.e, "tau": math.tau}


class _Opaque:
    """A cell that is no literal and no small constant expression (a name, a call, ``math.inf``): pytest's
    id maker gives it ``argnameN``, as it does a list; when the cell's real value has another id, the ids
    made are not the task's and the function gets a sentinel (:func:`rows_only`)."""

    __slots__ = ()


#: An ``ids=`` that is a builtin's name: pytest's id maker calls it on each value.
_ID_FUNCTIONS: dict[str, Callable[[Any], object]] = {"str": str, "repr": repr}


class _NotConstant(Exception):
    pass


def _number(value: Any) -> Any:
    if type(value) not in (int, float):
        raise _NotConstant
    if isinstance(value, int) and value.bit_length() > _MAX_BITS:
        raise _NotConstant
    return value


def _fold(node: ast.expr) -> Any:
    """The value of a small constant expression: numbers with ``+ - * / // % **`` and unary ``-``/``+``
    (ints within :data:`_MAX_BITS` bits), ``math.inf``/``nan``/``pi``/``e``/``tau``, and lists/tuples
    of those and of literal constants, computed as Python computes them. Raises :class:`_NotConstant`
    for anything else (a name, a call, a string operation, a division by zero, an overflow, a power
    past the bounds)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return _number(node.value)
        if node.value is None or isinstance(node.value, (bool, str, bytes)):
            return node.value
        raise _NotConstant
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math" \
            and node.attr in _MATH:
        return _MATH[node.attr]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _number(_fold(node.operand))
        return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        a, b = _number(_fold(node.left)), _number(_fold(node.right))
        if isinstance(node.op, ast.Pow) and isinstance(a, int) and isinstance(b, int) \
                and (b > _MAX_EXPONENT or max(abs(a).bit_length(), 1) * b > _MAX_BITS):
            raise _NotConstant
        try:
            return _number(_ARITH[type(node.op)](a, b))
        except (ArithmeticError, ValueError) as exc:
            raise _NotConstant from exc
    if isinstance(node, ast.List):
        return [_fold(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_fold(e) for e in node.elts)
    raise _NotConstant


def _is_param(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Starred) or (isinstance(n, ast.Call) and "param" in ast.unparse(n.func))
               for n in ast.walk(node))


def _cell(node: ast.expr) -> tuple[Any, bool]:
    """A cell's value for pytest's id maker and whether it is a literal: its literal value, else its
    folded value (:func:`_fold`), else an opaque object (:class:`_Opaque`)."""
    try:
        return ast.literal_eval(node), True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        return _fold(node), False
    except (_NotConstant, RecursionError, MemoryError):
        return _Opaque(), False


#: The keywords of a ``pytest.param(…)`` row the planner reads (prm65): ``id`` (a text, the row's id) and ``marks``
#: (left as its source text; marks do not change an id).
_PARAM_KEYWORDS = frozenset({"id", "marks"})


def _param_row(row: ast.expr, width: int) -> tuple[list[ast.expr], str | None] | None:
    """The cells and the ``id=`` of a ``pytest.param(c1, …, cW, id="X", marks=…)`` row (prm65: prettytable's
    ``TestStyle.test_style``); ``None`` when ``row`` is no such call: another callee, a starred argument, not
    ``width`` positional cells, a keyword other than ``id``/``marks``, or an ``id`` that is no text (a ``None`` id
    is pytest's own)."""
    if not isinstance(row, ast.Call) or ast.unparse(row.func) not in ("pytest.param", "param") \
            or len(row.args) != width or any(isinstance(a, ast.Starred) for a in row.args) \
            or any(kw.arg not in _PARAM_KEYWORDS for kw in row.keywords):
        return None
    given = next((kw.value for kw in row.keywords if kw.arg == "id"), None)
    if given is not None and not (isinstance(given, ast.Constant) and isinstance(given.value, str | None)):
        return None
    return list(row.args), given.value if isinstance(given, ast.Constant) else None


def _cells(dec: ast.Call, width: int, params: bool = False) -> list[list[ast.expr]] | None:
    """The cells of each row of a ``parametrize`` decorator (``width`` per row), ``None`` when a row is
    no list/tuple of ``width`` cells (a computed row), or a starred one, or a ``pytest.param(…)`` one unless
    ``params`` (then read by :func:`_param_row`)."""
    got = _cells_and_ids(dec, width, params)
    return None if got is None else got[0]


def _cells_and_ids(dec: ast.Call, width: int, params: bool) -> tuple[list[list[ast.expr]], list[str | None]] | None:
    """:func:`_cells`, with each row's ``pytest.param`` ``id`` (``None``: pytest makes it)."""
    if not isinstance(dec.args[1], (ast.List, ast.Tuple)):
        return None
    out: list[list[ast.expr]] = []
    ids: list[str | None] = []
    for row in dec.args[1].elts:
        param = _param_row(row, width) if params else None
        if param is not None:
            out.append(param[0])
            ids.append(param[1])
            continue
        if _is_param(row):
            return None
        if width == 1:
            out.append([row])
        elif isinstance(row, (ast.Tuple, ast.List)) and len(row.elts) == width:
            out.append(list(row.elts))
        else:
            return None
        ids.append(None)
    return out, ids


def _rows(dec: ast.Call, width: int,
          params: bool = False) -> tuple[list[tuple[Any, ...]], list[tuple[bool, ...]]] | None:
    """The rows of a ``parametrize`` decorator, each as a tuple of ``width`` values (:func:`_cell`: a
    literal's value, a folded constant, or an opaque object), and per cell whether it is a literal
    (``params``: ``pytest.param`` rows read too, :func:`_cells`)."""
    cells = _cells(dec, width, params)
    if cells is None:
        return None
    made = [[_cell(c) for c in row] for row in cells]
    return [tuple(v for v, _ in row) for row in made], [tuple(lit for _, lit in row) for row in made]


def row_ids(names: Sequence[str], rows: Sequence[tuple[Any, ...]],
            ids: Sequence[Any] | None = None, idfn: Callable[[Any], object] | None = None,
            given: Sequence[str | None] = ()) -> list[str] | None:
    """pytest's instance ids of ``rows`` (its own id maker, as collection makes them), ``None`` when it
    cannot tell (an API this pytest lacks, a value it refuses). ``given``: per row, the ``id`` of its
    ``pytest.param`` (``None`` or none given: pytest makes it)."""
    try:
        from _pytest.mark.structures import ParameterSet
        from _pytest.python import IdMaker

        sets = [ParameterSet.param(*row, id=given[n]) if n < len(given) and given[n] is not None
                else ParameterSet.extract_from(row if len(names) > 1 else row[0], force_tuple=len(names) == 1)
                for n, row in enumerate(rows)]
        wanted = inspect.signature(IdMaker).parameters
        kwargs: dict[str, Any] = {"argnames": list(names), "parametersets": sets, "idfn": idfn, "ids": ids,
                                  "config": None, "nodeid": None, "func_name": None}
        maker = IdMaker(**{k: v for k, v in kwargs.items() if k in wanted})
        return [str(i) for i in maker.make_unique_parameterset_ids()]
    except Exception:
        return None


def _decorator_of(node: ast.FunctionDef | ast.AsyncFunctionDef, rows: ast.AST) -> ast.Call | None:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Call) and len(dec.args) >= 2 and dec.args[1] is rows:
            return dec
    return None


def _column(site: Site, rows: ast.List | ast.Tuple, width: int) -> int | None:
    """The one column the site's (first) twin changes, its cells compared by their AST (``ast.dump``)
    with those of ``rows``, the decorator's (each side written out and parsed again)."""
    try:
        twin = ast.parse(site.twins[0][0], mode="eval").body
        original = ast.parse(ast.unparse(rows), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError, IndexError):
        return None
    if not isinstance(twin, (ast.List, ast.Tuple)) or not isinstance(original, (ast.List, ast.Tuple)) \
            or len(twin.elts) != len(original.elts):
        return None
    cols: set[int] = set()
    for a, b in zip(original.elts, twin.elts, strict=True):
        if width == 1:
            cols |= {0} if ast.dump(a) != ast.dump(b) else set()
            continue
        if isinstance(a, ast.Call) and isinstance(b, ast.Call) and _param_row(a, width) and _param_row(b, width):
            if ast.dump(a.func) != ast.dump(b.func) or ast.dump(ast.List(a.keywords)) != ast.dump(ast.List(b.keywords)):
                return None  # a pytest.param's id or marks changed
            cols |= {c for c in range(width) if ast.dump(a.args[c]) != ast.dump(b.args[c])}
            continue
        if not isinstance(a, (ast.List, ast.Tuple)) or not isinstance(b, (ast.List, ast.Tuple)) \
                or len(a.elts) != width or len(b.elts) != width:
            return None
        cols |= {c for c in range(width) if ast.dump(a.elts[c]) != ast.dump(b.elts[c])}
    return cols.pop() if len(cols) == 1 else None


def _text(rows: ast.List | ast.Tuple, at: int, width: int, values: dict[int, Any],
          texts: dict[int, str] | None = None) -> str:
    """``rows`` written with column ``at`` of each row of ``values`` (row -> value) as that value's ``repr``, or as
    ``texts``' source text for that row (a computed cell moved from another row)."""
    new = ast.parse(ast.unparse(rows), mode="eval").body
    assert isinstance(new, (ast.List, ast.Tuple))
    for i, value in values.items():
        cell = ast.parse((texts or {}).get(i, repr(value)), mode="eval").body
        if isinstance(new.elts[i], ast.Call):
            new.elts[i].args[at] = cell  # type: ignore[attr-defined]  # a pytest.param row (prm65)
        elif width == 1:
            new.elts[i] = cell
        else:
            new.elts[i].elts[at] = cell  # type: ignore[attr-defined]
    return ast.unparse(new)


def _checked_number(value: Any) -> bool:
    """Whether ``value`` (a computed cell folded, :func:`_cell`) is an int or a float (no bool): pytest's own ids
    show it (``1048576``, ``inf``), so ids matching the task's checked the fold."""
    return type(value) in (int, float)


def _others(rows: Sequence[tuple[Any, ...]], literal: Sequence[tuple[bool, ...]], change: Collection[int], at: int,
            value: Any, rng: random.Random) -> list[Any]:
    """The distinct literal values of column ``at`` in the rows not in ``change`` (real outputs of other
    inputs) of ``value``'s type and unequal to it, shuffled by ``rng``."""
    seen: dict[str, Any] = {}
    for n, row in enumerate(rows):
        v = row[at]
        if n not in change and literal[n][at] and type(v) is type(value) and v != value:
            seen.setdefault(repr(v), v)
    out = list(seen.values())
    rng.shuffle(out)
    return out


def _as_column(site: Site, node: ast.FunctionDef | ast.AsyncFunctionDef,
               may: Callable[[ast.AST], bool] | None) -> Site | None:
    """For a flip of ``L == NAME`` (``NAME == L``: the site finder's fallback where a ``parametrize`` column
    ``NAME`` holds a cell that is no literal, rows32), a site at that column's rows (``may``: the node must pass it,
    as any site's), its one "twin" the rows with ``NAME``'s cells swapped for a marker, so that :func:`_column`
    tells the column; ``None`` for any other site."""
    test = site.node
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    decs = [d for d in node.decorator_list if isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func)
            and len(d.args) >= 2 and isinstance(d.args[1], (ast.List, ast.Tuple))]
    names = _names(decs[0]) if len(decs) == 1 else None
    # a side that is the column's name, or (prm65: prettytable's ``result.strip() == expected.strip()``) an
    # expression whose only name is one column, the other side naming none
    named = [{n.id for n in ast.walk(s) if isinstance(n, ast.Name)} & set(names or ())
             for s in (test.left, test.comparators[0])]
    bare = [s.id for s in (test.left, test.comparators[0]) if isinstance(s, ast.Name) and s.id in (names or ())]
    sides = bare if len(bare) == 1 else sorted(named[0] | named[1]) if sorted(map(len, named)) == [0, 1] else []
    if len(sides) != 1 or len(decs) != 1:
        return None
    rows = decs[0].args[1]
    if names is None or sides[0] not in names or not isinstance(rows, (ast.List, ast.Tuple)) \
            or (may is not None and not may(rows)):
        return None
    at, width = names.index(sides[0]), len(names)
    marked = ast.parse(ast.unparse(rows), mode="eval").body
    assert isinstance(marked, (ast.List, ast.Tuple))
    for row in marked.elts:
        if _param_row(row, width) is not None:
            row.args[at] = ast.Name(id="_homefield_column", ctx=ast.Load())  # type: ignore[attr-defined]
            continue
        if width == 1:
            return None  # a one-name table: its rows are the cells, nothing to mark apart
        if not isinstance(row, (ast.List, ast.Tuple)) or len(row.elts) != width:
            return None
        row.elts[at] = ast.Name(id="_homefield_column", ctx=ast.Load())
    return Site(rows, ast.unparse(rows), [(ast.unparse(marked), "")], True, excusable=[True])


def rows_only(site: Site | None, node: ast.FunctionDef | ast.AsyncFunctionDef, fid: str, fail_to_pass: Collection[str],
              pass_to_pass: Collection[str], k: int, rng: random.Random,
              may: Callable[[ast.AST], bool] | None = None, fed: Collection[str] = ()) -> Site | None:
    """``site`` remade so that its twins change only the rows of ``node``'s FAIL_TO_PASS instances, for
    a function ``fid`` with PASS_TO_PASS instances (``pass_to_pass``: the task's ids); ``None`` when
    that cannot be made (the site is no ``parametrize`` column of a single decorator, nor a flip of ``L == NAME``
    for such a column, :func:`_as_column`; the rows do not match the task's ids one for one, or no twin keeps its
    changed rows' ids off the PASS_TO_PASS ones; can49: the column is a name of ``fed``, which a fixture the test
    runs requests, as :func:`~pytest_homefield.sandbox.canary_sites.find_site`'s columns). ``may``: what any site
    must pass (lines the commit added)."""
    kept = {i for i in pass_to_pass if i.startswith(fid + "[")}
    if site is None or not kept:
        return site
    if _decorator_of(node, site.node) is None:
        site = _as_column(site, node, may) or site
    dec = _decorator_of(node, site.node)
    calls = [d for d in node.decorator_list if isinstance(d, ast.Call)]
    if dec is None or site.others or not isinstance(site.node, (ast.List, ast.Tuple)) \
            or sum("parametrize" in ast.unparse(d.func) for d in calls) != 1:
        return None
    names = _names(dec)
    table = _rows(dec, len(names), params=True) if names else None
    read = _cells_and_ids(dec, len(names), params=True) if names else None
    given = read[1] if read is not None else []
    explicit = next((kw.value for kw in dec.keywords if kw.arg == "ids"), None)
    ids_arg: list[Any] | None = None
    idfn = _ID_FUNCTIONS.get(explicit.id) if isinstance(explicit, ast.Name) else None
    try:
        ids_arg = None if explicit is None or idfn is not None else list(ast.literal_eval(explicit))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if names is None or table is None or any(kw.arg not in ("ids",) for kw in dec.keywords):
        return None
    rows, literal = table
    made = row_ids(names, rows, ids_arg, idfn, given)
    ours = {i for i in fail_to_pass if i.startswith(fid + "[")}
    # prm65: a row whose id pytest makes from an opaque cell (prettytable's ``pytest.param(DOUBLE_BORDER, …)``, an
    # IntEnum pytest ids ``15``) and whose guessed id is no task id is unsure: it may stand for any task id the
    # others leave, and no changed row's id may change then (its new id could be that row's, and pytest's dedup
    # would rename both)
    unsure = {n for n, row in enumerate(rows) if (n >= len(given) or given[n] is None)
              and (ids_arg is None or n >= len(ids_arg) or ids_arg[n] is None) and idfn is None
              and any(isinstance(v, _Opaque) for v in row) and f"{fid}[{made[n]}]" not in ours | kept} \
        if made is not None else set()
    sure = {f"{fid}[{i}]" for n, i in enumerate(made or []) if n not in unsure}
    if made is not None and len(unsure) == 1 and len(left := (ours | kept) - sure) == 1:
        # reach46: the one unsure row's one opaque cell read from the one task id left (prettytable's FAIL_TO_PASS
        # ``[15-expected6]``): the row is sure then, and a twin may change its id
        resolved = _resolved(names, rows, ids_arg, idfn, given, min(unsure), min(left)[len(fid) + 1:-1])
        if resolved is not None:
            rows, made, unsure = resolved, row_ids(names, resolved, ids_arg, idfn, given), set()
            sure = {f"{fid}[{i}]" for i in made or []}
    if made is None or len(set(made)) != len(made) or not ours <= sure or not sure <= ours | kept \
            or len(unsure) != len((ours | kept) - sure):
        return None
    at = _column(site, site.node, len(names))
    if at is None or names[at] in fed:
        return None
    change = [n for n, i in enumerate(made) if f"{fid}[{i}]" in ours]
    computed = [n for n in change if not literal[n][at]]
    if computed and (explicit is not None or not all(_checked_number(rows[n][at]) for n in computed)):
        return None  # a computed cell is changed only as a number pytest's own ids show: the ids checked its value
    cells = _cells(dec, len(names), params=True)
    assert cells is not None  # _rows read them
    values = [rows[n][at] for n in change]
    # the FAIL_TO_PASS rows' own values deranged among them (real outputs, other inputs), else made up, else
    # (nothing made up for "") the other rows' values; a computed cell moves as its source text (rows32: every
    # run's file holds the same cells), so only a derangement changes it
    drawn: list[tuple[dict[int, Any], bool]] = []
    moved: list[dict[int, str]] = []  # per derangement: row -> the source text of a computed cell it takes
    for perm in derangements(values, k, rng):
        drawn.append(({change[j]: values[p] for j, p in enumerate(perm)}, all(is_small(values[p]) for p in perm)))
        moved.append({change[j]: ast.unparse(cells[change[p]][at]) for j, p in enumerate(perm)
                      if not literal[change[p]][at]})
    if computed and not drawn:
        return None
    if len(drawn) < k and not computed:
        alts = [alternatives(v, k - len(drawn), rng) for v in values]
        for j in range(min((len(a) for a in alts), default=0)):
            drawn.append(({change[n]: a[j] for n, a in enumerate(alts)}, True))
    if not drawn and not computed:  # none made up (one FAIL_TO_PASS row expecting ""): the other rows' values
        others = [_others(rows, literal, change, at, v, rng) for v in values]
        for j in range(min(k, min((len(o) for o in others), default=0))):
            drawn.append(({change[n]: o[j] for n, o in enumerate(others)}, all(is_small(o[j]) for o in others)))
    twins: list[tuple[str, str]] = []
    excusable: list[bool] = []
    for m, (pick, small) in enumerate(drawn):
        new_rows = [tuple(pick[n] if c == at and n in pick else v for c, v in enumerate(row))
                    for n, row in enumerate(rows)]
        new_ids = row_ids(names, new_rows, ids_arg, idfn, given)
        if new_ids is None or any(f"{fid}[{new_ids[n]}]" in kept for n in change) \
                or (unsure and any(new_ids[n] != made[n] for n in change)):
            continue
        assert isinstance(site.node, (ast.List, ast.Tuple))
        shown = ", ".join(repr(pick[n])[:20] for n in change)
        twins.append((_text(site.node, at, len(names), pick, moved[m] if m < len(moved) else {}),
                      f"expected {names[at]} of each FAIL_TO_PASS parameter set -> {shown} "
                      f"(its PASS_TO_PASS sets as they are)"[:120]))
        excusable.append(small)
    if not twins:
        return None
    return Site(site.node, site.original, twins, True, excusable=excusable)


#: What :func:`_resolved` stands in an opaque cell's place to find where pytest writes its id.
_MARK = "homefieldOpaqueCell"


def _resolved(names: Sequence[str], rows: Sequence[tuple[Any, ...]], ids: Sequence[Any] | None,
              idfn: Callable[[Any], object] | None, given: Sequence[str | None], n: int,
              task_id: str) -> list[tuple[Any, ...]] | None:
    """reach46: ``rows`` with row ``n``'s one opaque cell (:class:`_Opaque`, an IntEnum pytest ids ``15``) given as
    the text pytest wrote for it in ``task_id`` (the row's id, brackets off), found between what :func:`row_ids`
    writes before and after it; ``None`` when the row has another number of opaque cells, ``task_id`` does not fit
    around it, or the rows' ids made with that text do not give ``task_id`` for row ``n`` (a text pytest would
    escape, an id its dedup changes)."""
    at = [c for c, v in enumerate(rows[n]) if isinstance(v, _Opaque)]
    if len(at) != 1:
        return None

    def with_cell(text: str) -> list[tuple[Any, ...]]:
        return [tuple(text if (m, c) == (n, at[0]) else v for c, v in enumerate(row)) for m, row in enumerate(rows)]

    marked = row_ids(names, with_cell(_MARK), ids, idfn, given)
    parts = marked[n].split(_MARK) if marked is not None else []
    if len(parts) != 2 or len(task_id) <= len(parts[0]) + len(parts[1]) \
            or not (task_id.startswith(parts[0]) and task_id.endswith(parts[1])):
        return None
    out = with_cell(task_id[len(parts[0]):len(task_id) - len(parts[1])])
    made = row_ids(names, out, ids, idfn, given)
    return out if made is not None and made[n] == task_id else None


def rows_new(site: Site | None, parent: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """Whether ``site`` is a ``parametrize`` rows site (:func:`rows_only`) every twin of which changes only rows
    that ``parent`` (the function in the parent's file) holds in none of its ``parametrize`` decorators, compared as
    ``ast.unparse`` texts (prm65: prettytable's ``pytest.param(RANDOM, …)`` row, its expected text rewritten by the
    commit). Such a twin and the original both differ from the parent on those rows, so a diff against the
    parent's test tells neither; an unchanged row a twin moved would be told. ``False`` for any other site, or with
    no parent (a new function: :func:`~pytest_homefield.sandbox.canary_added.same_kept` decides)."""
    if site is None or parent is None or not isinstance(site.node, (ast.List, ast.Tuple)):
        return False
    held = {ast.unparse(row) for d in parent.decorator_list
            if isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func) and len(d.args) >= 2
            and isinstance(d.args[1], (ast.List, ast.Tuple)) for row in d.args[1].elts}
    try:
        original = ast.parse(ast.unparse(site.node), mode="eval").body
        twins = [ast.parse(text, mode="eval").body for text, _ in site.twins]
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    if not twins or not isinstance(original, (ast.List, ast.Tuple)):
        return False
    for twin in twins:
        if not isinstance(twin, (ast.List, ast.Tuple)) or len(twin.elts) != len(original.elts):
            return False
        changed = [a for a, b in zip(original.elts, twin.elts, strict=True) if ast.dump(a) != ast.dump(b)]
        if not changed or any(ast.unparse(a) in held for a in changed):
            return False
    return True


#: The ``how`` of a twin of :func:`rows_apart` (its made-up value is appended).
APART_HOW = "the added assertion expects {value} on its FAIL_TO_PASS rows (its PASS_TO_PASS rows apart)"


@dataclass(frozen=True)
class RowsApart:
    """A function whose only site is an assertion the commit added to its body (humanize 1399e049734b), its
    rows set apart (:func:`rows_apart`). ``site``: the twin (that assertion's expected column name -> a made-up
    literal); ``rows``: the ``parametrize`` decorator's rows node; ``mine``: the text of its FAIL_TO_PASS rows
    alone (every member of the group holds it); ``theirs``: the text of its PASS_TO_PASS rows alone (a function
    of another name holds them, the same in every run: :func:`apart_function`); ``statement``: the added
    assertion, which that function leaves out."""

    site: Site
    rows: ast.List | ast.Tuple
    mine: str
    theirs: str
    statement: ast.stmt


def _subset_text(rows: ast.List | ast.Tuple, keep: Sequence[int]) -> str:
    """``rows`` (a ``parametrize`` rows node) with only the rows at ``keep``, written canonically."""
    new = ast.parse(ast.unparse(rows), mode="eval").body
    assert isinstance(new, (ast.List, ast.Tuple))
    new.elts = [new.elts[n] for n in keep]
    return ast.unparse(new) if new.elts or isinstance(new, ast.List) else "()"


def _added_assertion(node: ast.FunctionDef | ast.AsyncFunctionDef, names: Sequence[str],
                     may: Callable[[ast.AST], bool]) -> tuple[ast.Assert, ast.Name] | None:
    """The first ``assert X == NAME`` (or ``NAME == X``) of ``node``'s body top level on lines the commit added
    (``may``), ``NAME`` a ``parametrize`` column, and its ``NAME`` node; ``None`` when there is none or it is the
    body's only statement (the function holding the PASS_TO_PASS rows would have none left)."""
    if len(node.body) < 2:
        return None
    for stmt in node.body:
        if not isinstance(stmt, ast.Assert) or not may(stmt) or not isinstance(stmt.test, ast.Compare) \
                or len(stmt.test.ops) != 1 or not isinstance(stmt.test.ops[0], ast.Eq):
            continue
        for side in (stmt.test.comparators[0], stmt.test.left):
            if isinstance(side, ast.Name) and side.id in names:
                return stmt, side
    return None


def module_constants(module: ast.Module | None) -> dict[str, Any]:
    """The names ``module`` binds once, at its top level, to a small constant expression (:func:`_fold`, over the
    names bound so before: humanize's ``ONE_DAY = 24 * ONE_HOUR``), name → value; a name stored anywhere else in
    the module, or twice, is none of them."""
    if module is None:
        return {}
    stored = Counter(n.id for n in ast.walk(module) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    out: dict[str, Any] = {}
    for stmt in module.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) \
                or stored[stmt.targets[0].id] != 1:
            continue
        try:
            value = _fold(_Named(out).visit(copy.deepcopy(stmt.value)))
        except (_NotConstant, RecursionError, MemoryError):
            continue
        if type(value) in (int, float):
            out[stmt.targets[0].id] = value
    return out


class _Named(ast.NodeTransformer):
    """Each name of ``values`` (:func:`module_constants`) as a constant of its value."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id not in self.values:
            return node
        value = self.values[node.id]
        new: ast.expr = ast.Constant(abs(value)) if value < 0 else ast.Constant(value)
        return ast.copy_location(ast.UnaryOp(ast.USub(), new) if value < 0 else new, node)


def rows_apart(node: ast.FunctionDef | ast.AsyncFunctionDef, fid: str, fail_to_pass: Collection[str],
               pass_to_pass: Collection[str], may: Callable[[ast.AST], bool] | None, k: int, rng: random.Random,
               avoid: Collection[str] = (), module: ast.Module | None = None) -> RowsApart | None:
    """For a function ``fid`` with PASS_TO_PASS instances whose only site is an assertion the commit added to its
    body (``may``: the lines it added, :func:`~pytest_homefield.sandbox.canary_added.allow`; a twin there changes
    every row, so :func:`rows_only` gave none): its rows set apart. Every member of its group holds its
    FAIL_TO_PASS rows alone; the twin is that assertion's expected column (``== expected``) replaced by one
    made-up value unequal to every FAIL_TO_PASS row's (a real fix gives those there, so it fails the twin on
    every row) and whose :func:`~pytest_homefield.sandbox.canary_swaps.value_key` is not in ``avoid`` (the
    file's literals: it then occurs once in the twin's file as the original's row values do in theirs); the
    PASS_TO_PASS rows run in every run alike under another name without that assertion
    (:func:`apart_function`). ``None`` when that cannot be made: no ``may``, not a single ``parametrize``
    decorator whose rows pytest's id maker matches one for one to the task's ids of the function (and each part
    of the rows to its own ids), no such assertion, a FAIL_TO_PASS row whose cell of that column is no literal,
    or no made-up value."""
    kept = {i for i in pass_to_pass if i.startswith(fid + "[")}
    ours = {i for i in fail_to_pass if i.startswith(fid + "[")}
    if may is None or not kept or not ours:
        return None
    decs = [d for d in node.decorator_list if isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func)]
    if len(decs) != 1 or len(decs[0].args) < 2 or not isinstance(decs[0].args[1], (ast.List, ast.Tuple)) \
            or any(kw.arg != "ids" for kw in decs[0].keywords):
        return None
    dec = decs[0]
    rows_node = dec.args[1]
    assert isinstance(rows_node, (ast.List, ast.Tuple))
    names = _names(dec)
    # for the ids, a cell naming a constant of the module is its value (humanize's ONE_MICROSECOND); the rows' text
    # stays as written
    valued = _Named(module_constants(module)).visit(copy.deepcopy(dec))
    table = _rows(valued, len(names)) if names else None
    if names is None or table is None:
        return None
    explicit = next((kw.value for kw in dec.keywords if kw.arg == "ids"), None)
    idfn = _ID_FUNCTIONS.get(explicit.id) if isinstance(explicit, ast.Name) else None
    ids_arg: list[Any] | None = None
    if explicit is not None and idfn is None:
        return None  # a literal ids= list would have to be cut with the rows: not made
    rows, literal = table
    made = row_ids(names, rows, ids_arg, idfn)
    if made is None or {f"{fid}[{i}]" for i in made} != ours | kept or len(set(made)) != len(made):
        return None
    change = [n for n, i in enumerate(made) if f"{fid}[{i}]" in ours]
    same = [n for n, i in enumerate(made) if f"{fid}[{i}]" in kept]
    for part in (change, same):  # each part alone must keep its ids (pytest makes duplicates unique)
        if row_ids(names, [rows[n] for n in part], None, idfn) != [made[n] for n in part]:
            return None
    found = _added_assertion(node, names, may)
    if found is None:
        return None
    statement, name = found
    at = list(names).index(name.id)
    if not all(literal[n][at] for n in change):
        return None
    values = [rows[n][at] for n in change]
    taken = set(avoid) | {f"{type(v).__name__}:{v!r}" for v in values}
    value = next((a for a in alternatives(values[0], 8, rng) if f"{type(a).__name__}:{a!r}" not in taken
                  and all(type(a) is not type(v) or a != v for v in values)), None)
    if value is None:
        return None
    text = ast.unparse(ast.parse(repr(value), mode="eval").body)
    # made up: honest code computing a wrong value may meet it (excused beside a failing original, then confirmed)
    site = Site(name, name.id, [(text, APART_HOW.format(value=repr(value)[:40]))], True, excusable=[True])
    return RowsApart(site, rows_node, _subset_text(rows_node, change), _subset_text(rows_node, same), statement)


def apart_function(segment: str, lines: Sequence[str], start: int, apart: RowsApart, name: str, new: str
                   ) -> str | None:
    """The function holding the PASS_TO_PASS rows of :func:`rows_apart`: ``segment`` (the definition, lines
    ``start``.. of the file's ``lines``) with its rows cut to those (``apart.theirs``), the added assertion left
    out, and named ``new`` instead of ``name``; ``None`` when its header is not found or it does not parse."""
    text = _replace(segment, lines, start, apart.statement, "pass", statement=True)
    text = _replace(text, lines, start, apart.rows, apart.theirs, statement=False)
    out, n = re.subn(rf"(\bdef\s+){re.escape(name)}(\s*\()", rf"\g<1>{new}\g<2>", text, count=1)
    try:
        ast.parse(out)
    except (SyntaxError, ValueError):
        return None
    return out if n else None
