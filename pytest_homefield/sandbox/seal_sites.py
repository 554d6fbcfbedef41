"""Sealed sites of a task's hidden tests (docs/contracts.md §7 "Sealed sites", issue 30).

A forger that reads a test's expected value inside the test process (the test file, the running frame) and
judges when to return it is met by twins one shape at a time. A **sealed run** closes that family for the
assertions it covers: the expected literal is in no file of the run. A **sealable site**
(:func:`sealable_sites`) is a top-level statement of a FAIL_TO_PASS test function's body (not inside
``if``/``for``/``while``/``try``/``with``/a lambda) of one of the forms ``assert A == L``, ``assert L == A``,
``self.assertEqual(A, L)``, ``self.assertEqual(L, A)`` (a message argument allowed) where ``L`` is a literal
(:func:`ast.literal_eval` succeeds) and ``A`` is not, on lines the commit added (not kept from the parent's
version of the function: :func:`~pytest_homefield.sandbox.canary_added.fixed_lines`), and whose value cannot be
read elsewhere: ``L``'s source text and ``repr`` (for a string its content, for bytes their text) occur nowhere
else in the hidden test files nor in the parent's versions of them, and no other literal of those Python files (nor
a value the compiler folds an expression of constants into: :func:`_folded_values`) has a value ``==`` to ``L``
(another spelling: ``'a' '-b'``, an escape, ``1000`` for ``1e3``, ``2 ** 10`` for ``1024``) nor, for a container, the
same items in another container type (:func:`_same_items`), nor, for a string or bytes, holds ``L``'s value inside its
own (``"a\\nb"`` in ``"a\\nb\\nc"``: :func:`_held`) (so a small value such as ``3`` is rarely sealable).
:func:`sealed_files` rewrites each chosen site to ``__hf_seal__("<site id>", (A))`` (a random id that occurs in none
of those files), importing the call from ``homefield_seal`` (shipped beside the reporter) at the end of the file, so
no line moves; :func:`withheld_data` gives what the sealed run holds in place of the hidden data files (nothing).

A **sealable column** (col35, :func:`_column_sites`) is an argument of a FAIL_TO_PASS function's one
``pytest.mark.parametrize`` decorator used in the body only as one side ``L`` of such statements (multi35: several
allowed, ``L`` the bare name or an expression of it :func:`derived_value` computes, ``"-" + expected``): each row
whose cell (a literal) cannot be read elsewhere (the same rule, the other rows, cells and ``ids`` counting), nor any
value its statements compute from it, is a site per statement (key ``<function id>@<line>#<row>``); in the sealed
file its cell is a random site id (so neither the file nor pytest's auto id holds the value) and each statement
``__hf_seal_row__(name, (A), …)``, which seals a row whose cell is a site id (statement ``k`` > 0 reporting
``<id>:<k>``) and makes the statement as written for a row left as it is; a row is sealed only with all its
statements' sites (:func:`sealed_files`). A sealed run judges such a function
by function (:func:`column_passed`, :func:`row_reports`): its items' ids there are not the original ones.
loop36: a column's statement may be under an ``if`` or a ``with self.subTest(…)`` (:func:`_reached`), and a ``for``
loop over a literal table of rows (:func:`_loop_tables`: ``for n, expected in [(1, "one"), …]:``, ``enumerate`` of
one too) is a table as a decorator is, its target's names the columns; and a top-level ``expected = L`` (a literal
assigned to one name) is a table of one row, its statements those after it. loop38: such a table's rows are judged
per id (:attr:`SealSite.decorated` false): the sealed file changes no decorator, so the function's items keep their
ids, and a function run once per item (a parametrized fixture, ``pytest_generate_tests``, a ``parametrize``
decorator none of whose columns is sealable) reports each row once per id; in a function whose decorator has a
sealable column (its items' ids change) each item of the function in the sealed run reports each row once
(:func:`item_reports`).

Other kinds (cmp35, :mod:`~pytest_homefield.sandbox.seal_kinds`, :attr:`SealSite.kind`; :func:`_other_shape`):
``with pytest.raises(E, match=L):`` / ``with self.assertRaisesRegex(E, L):`` (``match``: the ``with`` item becomes
``__hf_raises__("<id>", pytest.raises((E)))``, the body unchanged), ``assert L in A`` / ``self.assertIn(L, A)``
(``in``: ``__hf_seal_in__("<id>", (A))``; ``L`` a text, or shape37 any literal with a neighbour, ``3``, ``(1, "a")``:
:func:`_member`) and ``assert A == pytest.approx(L, …)`` (``approx``: ``__hf_seal__``), under
the same rules, ``L`` also readable elsewhere when a text its regex matches literally occurs there
(:func:`~.seal_kinds.regex_literal_runs`) or another literal passes the site's check (:func:`_passed_by_another`).

Covers (hole41, :func:`_covers`, :attr:`SealSite.cover`): a plain ``==`` site whose value is readable only in the
literals ``L`` of other statements of a plain site's form (in any function of the hidden test files: a PASS_TO_PASS
test's ``assert lines("a;b;c") == "a\\nb\\nc"`` holding ``"a\\nb"``) is sealed with each such statement, a cover: it is
rewritten as a plain site is (its literal leaves the sealed file, its ``A`` still runs) and never judged, and it is
in a plan only beside a site it covers (``covering``). The rule is the readability rule run on the files with those
literals out (:func:`_masked`): a value shown anywhere else besides (a parent's version, a call's argument, a ``!=``,
a data file) is still readable, and not sealed.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import itertools
import re
import secrets
import tokenize
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.canaries import _find, function_id, parse_source
from pytest_homefield.sandbox.canary_added import fixed_lines
from pytest_homefield.sandbox.pytest_config import from_top
from pytest_homefield.sandbox.seal_kinds import (
    APPROX_OPTIONS,
    SealCheck,
    approx_judged_alike,
    bounded_regex,
    match_text_cap,
    member_neighbours,
    regex_literal_runs,
)

__all__ = ["SealSite", "sealable_sites", "sealed_files", "seal_text", "withheld_data", "passing_sites", "SEAL_CALL",
           "SEAL_ROW_CALL", "SEAL_MODULE", "MAX_SEAL_SITES", "ROW_ID", "column_passed", "row_reports", "item_reports",
           "SEAL_RULES"]

#: The name a sealed file calls and the module it imports it from (``sandbox/_reporter/homefield_seal.py``).
SEAL_CALL = "__hf_seal__"
#: The call a sealed column's statement becomes (:func:`_column_sites`): given the column's value of the row, a
#: sealed row's site id or an unsealed row's literal.
SEAL_ROW_CALL = "__hf_seal_row__"
#: What a sealed row's cell holds in the sealed file, and what the seal module takes for a site id: ``hf`` and 24
#: hex digits (an unsealed row's string of that form makes its column not sealable).
ROW_ID = re.compile(r"hf[0-9a-f]{24}")
SEAL_MODULE = "homefield_seal"
#: The calls of the other kinds' sealed sites (cmp35): an ``in`` site's and a ``match`` site's.
SEAL_IN_CALL = "__hf_seal_in__"
SEAL_RAISES_CALL = "__hf_raises__"
#: The version of the sealable-site rules (this module's): part of the key of a stored reference check
#: (``run.sealed_grading.reference_sealed``), and a task's ``sealed_rules`` (shape37): a change of the rules leaves the
#: lines, and the ``sealed_sites`` mining recorded, of another version unused. 3 (gatk35): the
#: sealed run holds no hidden data file of the commit (``seal_sites.withheld_data``) and selects the hidden test
#: files whole; cmp35's other kinds and satk35's neighbour rule made theirs 3 and 4 beside it, 5 held them all; 6
#: (col35): parametrize columns' rows; 7 (multi35): a column read by several statements; 8 (loop36): loop tables'
#: rows, a name assigned a literal once, and a column's statements under an ``if`` or ``with self.subTest(…)``; 9
#: (satk36): a plain site beside a loop table none of whose rows is kept whole is judged per id; 10 (shape37): an
#: ``in`` site's member may be any literal with a neighbour (``seal_kinds.member_neighbours``), not only a text; 11
#: (loop38): a loop or assigned table's rows are judged per id, not in all over the function's ids (a row kept
#: under 10 in a function of several ids, its statement run by one of them only, would now fail the others), and a
#: function with a ``parametrize`` decorator has its loop tables' rows sealed (judged per item of the function in the
#: sealed run beside a sealed column: :attr:`SealSite.items`); 12 (stride40): a number leaf of an ``in`` member has
#: for neighbours its decimal spelling with one digit changed beside ``± 1`` (``seal_kinds._number_mates``), so a
#: reference value holding one of those is opaque and its site no longer sealed; 13 (hole41): a plain ``==`` site whose
#: value only other ``==`` assertions' literals of the hidden test files hold is sealed with those statements
#: (covers, :func:`_covers`: sealed unjudged beside it), not left unsealed as readable elsewhere; 14 (seal47): the
#: ids' paths are read from pytest's rootdir for the task's whole run (:func:`sealable_sites`' ``rootdir``: a
#: ``tests/pytest.ini``'s task had no site, and its record under 13 says ``[]``); 15 (ops60, deco60): a sealed run
#: holding no canary keeps the configuration's ``-m``/``-k``/``--deselect`` (14 dropped them there too: its stored
#: reference checks ran tests the repository deselects), and the fallback sealed run is drawn from a teardown-twin
#: task's four runs, the decoy's its own; 16 (ucln62, swap62): a method whose class's ``tearDown``/``tearDownClass``/
#: ``setUpClass`` differs among the runs is left unsealed, and a teardown twin beside an exception-swap twin leaves
#: its function unsealed; 17 (seal64, ut64): the sealed run blanks every unittest check after the test (a
#: ``tearDown``'s, ``tearDownClass``', a class or test cleanup's, ``tearDownModule``'s), and a method whose module's
#: ``tearDownModule`` differs among the runs is left unsealed; 18 (ut46, gatk66, ran66): the sealed run blanks the
#: ``tearDown`` check of a mixin of the module a class inherits or reaches through ``super().tearDown()``, and a
#: method whose such mixin's ``tearDown`` differs among the runs is left unsealed.
SEAL_RULES = 18
#: Sites sealed in one task at most (the first in file and line order).
MAX_SEAL_SITES = 200

#: A source line with its line break: only ``\r\n``, ``\r`` and ``\n`` end one, as Python's tokenizer counts
#: lines (``str.splitlines`` also splits at a form feed or U+2028 inside a string literal).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    """``text``'s lines as :mod:`ast` numbers them, each with its line break."""
    return list(_split(text)[0])


@functools.lru_cache(maxsize=16)
def _split(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """:func:`_lines` and the character offset at which each starts (then ``len(text)``), once per text: the planner
    asks for a file's lines (and a node's source, :func:`_segment`, :func:`_offset`) once per statement, and each
    split read the whole file (and :func:`_offset` summed the lengths of the lines before, on each call)."""
    lines = tuple(_LINE.findall(text))
    return lines, tuple(itertools.accumulate((len(x) for x in lines), initial=0))


def _segment(text: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment(text, node)`` (not padded): ``text`` between :func:`_offset`'s of its start and end
    (the lines :func:`_split` keeps: that function splits the whole source again, character by character in Python,
    on every call, so the planner's two calls per statement of a function's body cost the file's size each (nu52,
    arrow-py/arrow d8bf13d44413: 4046 calls on its 3404-line ``tests/test_locales.py`` took 87 s between two test
    runs, no ``--time-budget`` could stop it, and the mine ran 84 s past its budget). ``None`` where the node has no
    end position."""
    end_lineno: int | None = getattr(node, "end_lineno", None)
    end_col: int | None = getattr(node, "end_col_offset", None)
    lineno: int | None = getattr(node, "lineno", None)
    col: int | None = getattr(node, "col_offset", None)
    if end_lineno is None or end_col is None or lineno is None or col is None or end_lineno > len(_split(text)[0]):
        return None
    return text[_offset(text, lineno, col):_offset(text, end_lineno, end_col)]


@dataclass(frozen=True)
class SealSite:
    """One sealable site. ``key``: ``<function id>@<line>`` (stable for the task's hidden tests: what a check of
    the reference fix remembers); ``path``: its test file; ``function``: its function id; ``first``/``last``:
    the statement's lines (1-based); ``actual``: ``A``'s source text; ``expected``: ``L``'s."""

    key: str
    path: str
    function: str
    first: int
    last: int
    actual: str
    expected: str
    #: ``self.assertEqual(…)``: the seal call is given ``self``, whose ``assertEqual`` must be unittest's own ``==``
    case: bool = False
    #: the comparison (:data:`~pytest_homefield.sandbox.seal_kinds.KINDS`): ``==``; ``match`` (``actual`` is then
    #: ``E``'s text, ``extra`` ``"pytest"`` or ``"unittest"``, ``span`` the character offsets of the ``with``
    #: item's call); ``in``; ``approx`` (``extra``: the literal text of a dict of ``pytest.approx``'s options)
    kind: str = "=="
    extra: str = ""
    span: tuple[int, int] | None = None
    #: col35, a row of a sealed parametrize column (:func:`_column_sites`): the column's argument name (``L`` of
    #: the statement), the row's index among the decorator's rows, its cell's position (line, UTF-8 column, end
    #: line, end column: ``expected`` is its text) and whether the column is the statement's first side
    column: str | None = None
    row: int | None = None
    cell: tuple[int, int, int, int] | None = None
    flipped: bool = False
    #: multi35: the statement's index among its column's statements (from 0), how many statements the column has,
    #: and the statement's ``L`` text when it is an expression of the column (``"-" + expected``), not its bare name
    statement: int = 0
    statements: int = 1
    derived: str = ""
    #: loop38: a row of the function's ``parametrize`` decorator (col35; its cell is in the decorator, so the sealed
    #: run's ids of the function's items are not the original ones: judged by function, :func:`column_passed`,
    #: :func:`row_reports`); ``False`` for a loop or assigned table's row, whose function's items keep their ids:
    #: judged per id as a plain site (each FAIL_TO_PASS id of the function reporting it exactly once, equal)
    decorated: bool = False
    #: loop38: a loop or assigned table's row in a function whose ``parametrize`` decorator has a sealable column
    #: (its items' ids change in the sealed run): how many items that decorator makes (its rows), each of which
    #: reports the row once; judged per item of the function in the sealed run (:func:`item_reports`), the channel
    #: parsing twice as many of its reports at most. 0 for any other site.
    items: int = 0
    #: hole41, a **cover** (:func:`_covers`): a ``==`` statement of any function of the hidden test files whose
    #: literal holds the value of a sealed site (``covering``: those sites' keys), rewritten in the sealed run as a
    #: plain site is so that no file of the run holds the value; never judged (its reports are passed over), and
    #: sealed only with a site it covers
    cover: bool = False
    covering: tuple[str, ...] = ()

    def value(self) -> Any:
        """``L``'s value (:func:`ast.literal_eval`; it succeeded when the site was found), its text read inside
        brackets as in its file (a string concatenated over lines is no expression on its own)."""
        return ast.literal_eval(f"(\n{self.expected}\n)")

    def expectation(self) -> Any:
        """What the host judges the site's seal reports with: ``L``'s value for ``==``, else a
        :class:`~pytest_homefield.sandbox.seal_kinds.SealCheck` (cmp35)."""
        if self.kind == "==":
            if self.derived and self.column is not None:
                return derived_value(ast.parse(f"(\n{self.derived}\n)", mode="eval").body, self.column, self.value())
            return self.value()
        return SealCheck(self.kind, self.value(), ast.literal_eval(self.extra) if self.kind == "approx" else {})


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _operands(stmt: ast.stmt) -> tuple[ast.expr, ast.expr] | None:
    """``(A, L)`` of a site's statement, else ``None``."""
    pair = _sides(stmt)
    if pair is None:
        return None
    a, b = pair
    if _is_literal(b) and not _is_literal(a):
        return a, b
    if _is_literal(a) and not _is_literal(b):
        return b, a
    return None


def _sides(stmt: ast.stmt) -> tuple[ast.expr, ast.expr] | None:
    """The two sides, in order, of a statement of a site's form (``assert X == Y``, ``self.assertEqual(X, Y)`` with a
    message allowed, no keywords), else ``None``."""
    pair: tuple[ast.expr, ast.expr] | None = None
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
            and isinstance(stmt.test.ops[0], ast.Eq):
        pair = stmt.test.left, stmt.test.comparators[0]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "assertEqual" \
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == "self" \
            and 2 <= len(stmt.value.args) <= 3 and not stmt.value.keywords \
            and not any(isinstance(a, ast.Starred) for a in stmt.value.args):
        pair = stmt.value.args[0], stmt.value.args[1]
    return pair


@dataclass(frozen=True)
class _Shape:
    """A statement's comparison: its kind, ``A``, ``L``, the kind's extra text (:attr:`SealSite.extra`) and, for a
    ``match`` site, the node whose text the rewrite replaces."""

    kind: str
    actual: ast.expr
    literal: ast.expr
    extra: str = ""
    span: ast.expr | None = None


def _self_call(node: ast.expr, name: str) -> ast.Call | None:
    """``node`` when it is ``self.<name>(…)`` with positional arguments only (none starred), else ``None``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        return node
    return None


def _pytest_call(node: ast.expr, name: str) -> ast.Call | None:
    """``node`` when it is ``pytest.<name>(…)`` with no starred argument nor ``**``, else ``None``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest" \
            and not any(isinstance(a, ast.Starred) for a in node.args) and all(k.arg for k in node.keywords):
        return node
    return None


def _text_literal(node: ast.expr) -> bool:
    """Whether ``node`` is a ``str`` or ``bytes`` literal (an implicit concatenation too)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))


def _member(node: ast.expr) -> bool:
    """Whether ``node`` may be an ``in`` site's member ``L``: a ``str`` or ``bytes`` literal, or (shape37) another
    literal with a neighbour (:func:`~.seal_kinds.member_neighbours`: a number, a tuple, list, set or dict of at most
    :data:`~.seal_kinds.MAX_MEMBER_LEAVES` leaves, not ``None`` alone). A member without one would be held by a value
    that holds every guess (nothing tells them apart), so it is not sealed."""
    if _text_literal(node):
        return True
    if not _is_literal(node):
        return False
    try:
        return bool(member_neighbours(ast.literal_eval(node)))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _other_shape(stmt: ast.stmt) -> _Shape | None:
    """The comparison of a statement of a kind other than ``==`` (cmp35, :mod:`~.seal_kinds`), else ``None``:
    ``with pytest.raises(E, match=L):`` and ``with self.assertRaisesRegex(E, L):`` (one ``with`` item, ``L`` a
    ``str`` literal that :func:`~.seal_kinds.bounded_regex` accepts, ``E`` not a literal); ``assert L in A`` and
    ``self.assertIn(L, A)`` (a message allowed; ``L`` a ``str`` or ``bytes`` literal, or shape37 another literal with a
    neighbour, :func:`_member`; ``A`` not a literal);
    ``assert A == pytest.approx(L, …)`` or ``assert pytest.approx(L, …) == A`` (``L`` and every keyword of
    :data:`~.seal_kinds.APPROX_OPTIONS` literals, ``A`` not one). ``assert L not in A`` is not sealed: nearly
    every value passes it, so reading ``L`` gives a forger nothing it needs."""
    if isinstance(stmt, ast.With) and len(stmt.items) == 1:
        cm = stmt.items[0].context_expr
        call = _pytest_call(cm, "raises")
        if call is not None and len(call.args) == 1 and [k.arg for k in call.keywords] == ["match"]:
            e, lit, extra = call.args[0], call.keywords[0].value, "pytest"
        elif (u := _self_call(cm, "assertRaisesRegex")) is not None and len(u.args) == 2:
            e, lit, extra = u.args[0], u.args[1], "unittest"
        else:
            return None
        if not (isinstance(lit, ast.Constant) and isinstance(lit.value, str)) or _is_literal(e) \
                or not bounded_regex(lit.value):
            return None
        return _Shape("match", e, lit, extra, cm)
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1:
        left, op, right = stmt.test.left, stmt.test.ops[0], stmt.test.comparators[0]
        if isinstance(op, ast.In) and _member(left) and not _is_literal(right):
            return _Shape("in", right, left)
        if isinstance(op, ast.Eq):
            for a, b in ((left, right), (right, left)):
                call = _pytest_call(b, "approx")
                if call is None or len(call.args) != 1 or _is_literal(a) or not _is_literal(call.args[0]) \
                        or not approx_judged_alike(ast.literal_eval(call.args[0])):  # satk35: no bool
                    continue
                opts = {k.arg: k.value for k in call.keywords}
                if not set(opts) <= set(APPROX_OPTIONS) or not all(_is_literal(v) for v in opts.values()):
                    return None
                extra = "{" + ", ".join(f"{k!r}: {ast.unparse(v)}" for k, v in opts.items()) + "}"
                return _Shape("approx", a, call.args[0], extra)
        return None
    if isinstance(stmt, ast.Expr) and (u := _self_call(stmt.value, "assertIn")) is not None \
            and 2 <= len(u.args) <= 3 and _member(u.args[0]) and not _is_literal(u.args[1]):
        return _Shape("in", u.args[1], u.args[0], "unittest")
    return None


def _span(text: str, node: ast.expr) -> tuple[int, int]:
    """The character offsets in ``text`` of ``node``'s source."""
    return (_offset(text, node.lineno, node.col_offset),
            _offset(text, node.end_lineno or node.lineno, node.end_col_offset or 0))


def _readings(value: Any, source: str) -> list[str]:
    """The texts whose occurrence elsewhere makes a value readable there: its source text and ``repr``; a string's
    content, bytes' as Latin-1 text."""
    out = [source, repr(value)]
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, bytes):
        out.append(value.decode("latin-1"))
    return out


def _decoded(data: bytes) -> tuple[str, str] | None:
    """``(encoding, text)`` of a test file's bytes (its declared encoding), ``None`` when they do not decode
    strictly (a rewrite would then change other bytes)."""
    try:
        import io
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        return encoding, data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None


def sealable_sites(root: Path, test_files: Collection[str], fail_to_pass: Sequence[str],
                   parent: Mapping[str, bytes | None], rootdir: str | None = ".") -> list[SealSite]:
    """The sealable sites (module docstring) of the ``fail_to_pass`` functions in ``root`` (a tree with the hidden
    tests applied), at most :data:`MAX_SEAL_SITES`, in file and line order. ``test_files``: the task's hidden test
    files (read without following a link; one that cannot be read is searched as empty; one that does not decode
    has no site and is searched as UTF-8 and Latin-1 text: a data file of the hidden tests too); ``parent``: their
    bytes in the parent (``None``: new; :func:`~.twin_runs.parent_tests`). ``rootdir``: pytest's rootdir for the
    task's whole run, ``/``-separated and relative to ``root`` (:attr:`~.pytest_config.Setup.rootdir`; ``None``, a
    run of paths outside the tree, as ``.``): the ids' paths are relative to it (seal47, as root47's twins: a
    ``tests/pytest.ini`` makes ``test_a.py::test_x`` an id of ``tests/test_a.py``); a site's :attr:`SealSite.path`
    is a path of ``root`` (as ``test_files`` and ``parent``'s keys), its function and key stay in the ids' terms, as
    pytest reports them. Mining's check and grading must pass the same. Never raises for a file that does not
    parse (it has no site)."""
    texts: dict[str, str] = {}
    encodings: dict[str, str] = {}
    searched: dict[str, str] = {}  # every file as text to search, whatever its encoding (a data file too)
    for p in sorted(set(test_files)):
        try:
            data = nofollow.read_bytes(root, p)
        except OSError:
            data = b""
        got = _decoded(data)
        texts[p] = got[1] if got is not None else ""
        encodings[p] = got[0] if got is not None else "utf-8"
        searched[p] = _searchable(data)
    others = [_searchable(d) for d in parent.values() if d is not None]
    # the values of the literals of every Python file among them and of their parent versions (satk34: a value
    # spelled otherwise elsewhere, 'hello' '-world' or 1000 for 1e3, is readable there as much as its spelling)
    trees = {p: _parsed(t) for p, t in texts.items()}
    values = {p: _literal_values(t) for p, t in trees.items()}
    parent_values = [_literal_values(_parsed(d)) for d in parent.values() if d is not None]
    plain = {p: _plain_counts(v) for p, v in values.items()}
    parent_plain = [_plain_counts(v) for v in parent_values]
    by_file: dict[str, list[str]] = {}
    for fid in dict.fromkeys(function_id(i) for i in fail_to_pass if "::" in i):  # by file, a path of ``root``
        by_file.setdefault(from_top(rootdir, fid.split("::", 1)[0]), []).append(fid)
    sites: list[SealSite] = []
    # hole41: the covers of the sites sealed with them, by their file and first line (one may cover several sites)
    covers: dict[tuple[str, int], SealSite] = {}
    holders: list[_Holder] | None = None  # made once, when a site is readable
    for path in sorted(by_file):
        text = texts.get(path, "")
        tree, before = trees.get(path), _parsed(parent.get(path))
        if tree is None:
            continue
        rest_files = [t for p, t in searched.items() if p != path] + others
        for fid in by_file[path]:
            parts = fid.split("::")[1:]
            # defined in its class itself, never inherited: a rewrite of a base's method would change every class
            # using it
            func = _find(tree, parts[:-1], parts[-1], inherited=False)
            if func is None:
                continue
            was = _find(before, parts[:-1], parts[-1], inherited=False) if before is not None else None
            kept = fixed_lines(func, was)
            # col35: a sealable parametrize column's rows are the function's sites, its plain sites are not sealed
            # (the sealed run's node ids of its items differ from the originals: it is judged by function)
            readable = _Readable(text, rest_files, values.get(path),
                                 [v for q, v in values.items() if q != path] + parent_values, plain.get(path),
                                 [v for q, v in plain.items() if q != path] + parent_plain)
            column = _column_sites(text, path, fid, func, readable)
            sites.extend(column[:MAX_SEAL_SITES - len(sites)])
            if len(sites) >= MAX_SEAL_SITES:
                return sites + list(covers.values())
            # loop36: a loop table's function keeps its plain sites (its items' ids are the originals; loop38: its
            # rows and plain sites are judged per id alike: passing_sites, SealPlan.columns)
            for stmt in func.body if not any(s.decorated for s in column) else ():
                pair = _operands(stmt)
                shape = _Shape("==", pair[0], pair[1]) if pair is not None else _other_shape(stmt)
                if shape is None:
                    continue
                a, lit = shape.actual, shape.literal
                first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                if kept.intersection(range(first, last + 1)) or not _whole_lines(text, stmt, func.body):
                    continue
                expected, actual = _segment(text, lit), _segment(text, a)
                if not expected or not actual:
                    continue
                key = f"{fid}@{first}"
                if readable(lit, expected, shape.kind):
                    # hole41 (gatk35): a value held only by the literals of other ``==`` statements of the hidden
                    # test files (a PASS_TO_PASS test's "first\nsecond\nthird" holding "first\nsecond") is sealed
                    # with them: each such statement is sealed too, unjudged (a cover), so no file of the run holds
                    # it; readable when their literals masked (a parent's version, a non-assert place) stays as is
                    if holders is None:
                        holders = _holders(trees, texts)
                    held = _covers(ast.literal_eval(lit), expected, holders, stmt, key) if shape.kind == "==" else []
                    fresh = {(c.path, c.first) for c, _ in held} - set(covers)
                    if not held or len(covers) + len(fresh) > MAX_SEAL_SITES or _masked(
                            path, lit, expected, held, trees, texts, encodings, values, searched, others,
                            parent_values):
                        continue
                    for c, _ in held:
                        prior = covers.get((c.path, c.first))
                        covers[(c.path, c.first)] = c if prior is None else dataclasses.replace(
                            prior, covering=(*prior.covering, key))
                value = ast.literal_eval(lit)
                if shape.kind in ("match", "approx") and _passed_by_another(
                        shape.kind, value, shape.extra, [*values.values(), *parent_values]):
                    continue
                sites.append(SealSite(key, path, fid, first, last, actual, expected,
                                      case=isinstance(stmt, ast.Expr) or shape.extra == "unittest", kind=shape.kind,
                                      extra=shape.extra, span=_span(text, shape.span) if shape.span else None))
                if len(sites) >= MAX_SEAL_SITES:
                    return sites + list(covers.values())
    return sites + list(covers.values())


def _functions(tree: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function defined in ``tree`` (nested in classes, functions and compound statements too), each with its
    id: ``prefix`` and the names of the classes and functions holding it and its own, joined by ``::``. Recurses
    through statements only (their nesting is bounded by the parser's indentation limit)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield f"{prefix}::{node.name}", node
            yield from _functions(node, f"{prefix}::{node.name}")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}::{node.name}")
        elif isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):  # no expression holds a definition
            yield from _functions(node, prefix)


def _holders(trees: Mapping[str, ast.Module | None], texts: Mapping[str, str]) -> list[_Holder]:
    """hole41: the statements of the hidden Python test files (``trees``, ``texts``) that may cover a site: each
    top-level statement of a function's body (any function, a PASS_TO_PASS test's too) of a plain site's form
    (:func:`_operands`: ``assert A == L``, ``L == A``, ``self.assertEqual``, ``L`` a literal, ``A`` not) with its lines
    to itself (:func:`_whole_lines`), in file and line order."""
    out: list[_Holder] = []
    for path, tree in sorted(trees.items()):
        text = texts.get(path, "")
        for fid, func in _functions(tree, path) if tree is not None else ():
            for stmt in func.body:
                pair = _operands(stmt)
                if pair is None or not _whole_lines(text, stmt, func.body):
                    continue
                a, lit = pair
                shown, actual = _segment(text, lit), _segment(text, a)
                if shown and actual:
                    vals = _literal_values(ast.Module(body=[ast.Expr(lit)], type_ignores=[]))
                    out.append((path, fid, stmt, lit, shown, actual, vals, _plain_counts(vals)))
    return out


def _covers(value: Any, expected: str, holders: Sequence[_Holder], site: ast.stmt,
            key: str) -> list[tuple[SealSite, ast.expr]]:
    """hole41: the :func:`_holders` (``site``'s own statement left out) whose literal may show ``value`` (a site's
    ``L``, its source text ``expected``), each as a cover of the site ``key`` (:attr:`SealSite.cover`) with its literal
    node: ``L`` holds the value by any rule of :class:`_Readable`: a reading (:func:`_readings`) in its source text, or
    among its literal values one ``==`` to it, a container of its items, a string holding it. Another place showing
    the value (``A``, an argument, a parent's version) is no cover: :func:`_masked` still finds it there."""
    readings = [r for r in _readings(value, expected) if r]
    out: list[tuple[SealSite, ast.expr]] = []
    for path, fid, stmt, lit, shown, actual, vals, plain in holders:
        if stmt is site or not (any(r in shown for r in readings) or _occurrences(value, vals)
                                or _held(value, vals) or _same_items(value, plain)):
            continue
        first = stmt.lineno
        out.append((SealSite(f"{fid}@{first}", path, fid, first, stmt.end_lineno or first, actual, shown,
                             case=isinstance(stmt, ast.Expr), cover=True, covering=(key,)), lit))
    return out


def _mask(text: str, literals: Sequence[ast.expr]) -> str:
    """``text`` with each of ``literals``' source (nodes of it) made NUL characters, its line breaks kept (no
    offset moves)."""
    chars = list(text)
    for lit in literals:
        start, end = _span(text, lit)
        for i in range(start, end):
            if chars[i] not in "\r\n":
                chars[i] = "\0"
    return "".join(chars)


def _masked(path: str, lit: ast.expr, expected: str, held: Sequence[tuple[SealSite, ast.expr]],
            trees: Mapping[str, ast.Module | None], texts: Mapping[str, str], encodings: Mapping[str, str],
            values: Mapping[str, _Values], searched: Mapping[str, str], others: Sequence[str],
            parent_values: Sequence[_Values]) -> bool:
    """hole41: whether the literal ``lit`` of ``path`` (its source text ``expected``, an ``==`` site's) is readable
    (:class:`_Readable`) once the covers' literals (``held``, :func:`_covers`) are out of the hidden test files, as
    the sealed run's files have them: their text masked (:func:`_mask`), their values not counted; the parent's
    versions (``others``, ``parent_values``) as they are. The text search first: a value shown elsewhere in text
    needs no file's values counted again."""
    lits: dict[str, list[ast.expr]] = {}
    for c, node in held:
        lits.setdefault(c.path, []).append(node)
    own = _mask(texts.get(path, ""), lits.get(path, []))
    rest = [_searchable(_mask(texts[q], lits[q]).encode(encodings[q], "replace")) if q in lits else t
            for q, t in searched.items() if q != path] + list(others)
    if _Readable(own, rest, None, ())(lit, expected):
        return True
    vals = {q: _literal_values(trees.get(q), lits[q]) if q in lits else v for q, v in values.items()}
    plain = {q: _plain_counts(v) for q, v in vals.items()}
    return _Readable(own, rest, vals.get(path), [v for q, v in vals.items() if q != path] + list(parent_values),
                     plain.get(path), [v for q, v in plain.items() if q != path]
                     + [_plain_counts(v) for v in parent_values])(lit, expected)


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` of a chain of names and attributes, else ``""``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _parametrize(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[str], list[list[ast.expr] | None]] | None:
    """The argument names and rows of ``func``'s one ``parametrize`` decorator, ``@pytest.mark.parametrize(names,
    rows)`` or ``@mark.parametrize(…)`` with no keyword but ``ids=`` (as pytest reads them: names a string split
    at commas or a list/tuple of strings; rows a list/tuple display, each a tuple/list of as many cells or
    ``pytest.param(cells…, id=…)``, a lone name's row its one cell): each row's cells in the names' order, ``None``
    for a row of another shape. ``None`` when there is no such decorator, more than one decorator naming
    ``parametrize``, or another form."""
    named = [d for d in func.decorator_list
             if _dotted(d.func if isinstance(d, ast.Call) else d).rsplit(".", 1)[-1] == "parametrize"]
    if len(named) != 1 or not isinstance(named[0], ast.Call):
        return None
    dec = named[0]
    if _dotted(dec.func) not in ("pytest.mark.parametrize", "mark.parametrize") or len(dec.args) != 2 \
            or any(k.arg != "ids" for k in dec.keywords):
        return None
    spec, table = dec.args
    lone = False
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        names = [x.strip() for x in spec.value.split(",") if x.strip()]
        lone = len(names) == 1
    elif isinstance(spec, (ast.List, ast.Tuple)):
        names = [e.value for e in spec.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(names) != len(spec.elts):
            return None
    else:
        return None
    if not names or len(set(names)) != len(names) or not isinstance(table, (ast.List, ast.Tuple)):
        return None
    rows: list[list[ast.expr] | None] = []
    for row in table.elts:
        cells: list[ast.expr] | None = None
        if isinstance(row, ast.Call) and _dotted(row.func) in ("pytest.param", "param"):
            if all(k.arg == "id" for k in row.keywords):
                cells = list(row.args)
        elif lone:
            cells = [row]
        elif isinstance(row, (ast.Tuple, ast.List)):
            cells = list(row.elts)
        ok = cells is not None and len(cells) == len(names) and not any(isinstance(c, ast.Starred) for c in cells)
        rows.append(cells if ok else None)
    return names, rows


#: multi35: how deep an expression of a column (:func:`derived_value`) may nest its operations.
MAX_DERIVED_DEPTH = 4


def derived_value(node: ast.expr, name: str, value: Any, depth: int = 0) -> Any:
    """The value of ``node``, an expression of the column ``name`` whose row's value is ``value`` (multi35): the bare
    name, or ``+``/``-`` of it and a literal (either side), or unary ``-``/``+`` of it, nested
    :data:`MAX_DERIVED_DEPTH` deep at most; evaluated here by these rules only (never :func:`eval`), on literal
    values, so its size is at most the sum of its operands'. ``ValueError`` for another form or when an operation
    fails on these values (``TypeError``, ``OverflowError`` …)."""
    if depth > MAX_DERIVED_DEPTH:
        raise ValueError("too deep")
    if isinstance(node, ast.Name) and node.id == name:
        return value
    try:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = derived_value(node.operand, name, value, depth + 1)
            if type(v) not in (int, float, complex):
                raise ValueError("not a number")
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            if _is_literal(node.left) and not _is_literal(node.right):
                a, b = ast.literal_eval(node.left), derived_value(node.right, name, value, depth + 1)
            elif _is_literal(node.right) and not _is_literal(node.left):
                a, b = derived_value(node.left, name, value, depth + 1), ast.literal_eval(node.right)
            else:
                raise ValueError("not one column and one literal")
            if type(a) not in (int, float, complex, str, bytes, tuple, list) or type(a) is not type(b) \
                    and not {type(a), type(b)} <= {int, float, complex}:
                raise ValueError("operands of other types")
            if isinstance(a, bool) or isinstance(b, bool):
                raise ValueError("a bool operand")
            return a + b if isinstance(node.op, ast.Add) else a - b
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the operation raised on these values: no value
        raise ValueError(str(e)) from None
    raise ValueError("another form")


def _derived_readable(readable: _Readable, value: Any) -> bool:
    """Whether a value computed from a row's cell (:func:`derived_value`) is readable anywhere: its texts in the file
    or the other files, a literal ``==`` to it, a string holding it (as :class:`_Readable`, none of it being the
    cell's own node)."""
    texts = [readable.text, *readable.rest_files]
    if any(r and r in t for r in _readings(value, repr(value)) for t in texts):
        return True
    if _occurrences(value, readable.own) or any(_occurrences(value, v) for v in readable.others):
        return True
    if _same_items(value, readable.own_plain) or any(_same_items(value, v) for v in readable.others_plain):
        return True
    return bool(_held(value, readable.own) or any(_held(value, v) for v in readable.others))


def _column_sites(text: str, path: str, fid: str, func: ast.FunctionDef | ast.AsyncFunctionDef,
                  readable: _Readable) -> list[SealSite]:
    """The sealable rows of ``func``'s tables (docs/contracts.md §7 "Sealed columns"), one :class:`SealSite` per row
    and statement (key ``<fid>@<line>#<row>``), in table, row then statement order; ``[]`` when it has none. A table
    is ``func``'s one ``parametrize`` decorator (col35, :func:`_parametrize`, every row of a known shape, the column
    an argument of the function), and each ``for`` loop over a literal list of rows (loop36, :func:`_loop_tables`;
    loop38: beside a decorator's column too, :attr:`SealSite.items`).
    Its column (:func:`_table_sites`): every use of its name in the function is one side ``L`` of a statement of a
    site's form (:func:`_sides`) on lines of its own, ``L`` the bare name or (multi35) an expression of it
    :func:`derived_value` computes; each row whose cell's value cannot be read elsewhere is sealable."""
    got = _parametrize(func)
    if got is not None and not any(r is None for r in got[1]):
        names, rows = got
        arguments = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
        cells: list[Sequence[ast.expr]] = [r or [] for r in rows]
        column = _table_sites(text, path, fid, func, readable, [n if n in arguments else "" for n in names], cells,
                              _reached(func.body), 0)
        if column:
            # its items' ids change in the sealed run (a sealed cell is a site id): judged by function; loop38: its
            # loops' rows too, each reported once by every item of the function there (item_reports)
            return column + [dataclasses.replace(s, items=len(rows)) for s in _loop_sites(text, path, fid, func,
                                                                                          readable)]
    # loop38: a loop or assigned table's rows are judged per id (the sealed file changes no decorator, so its
    # items keep their original ids), so a function run once per item (a parametrize decorator none of whose
    # columns is sealable, a parametrized fixture, pytest_generate_tests) reports each row once per id
    return _loop_sites(text, path, fid, func, readable)


def _loop_sites(text: str, path: str, fid: str, func: ast.FunctionDef | ast.AsyncFunctionDef,
                readable: _Readable) -> list[SealSite]:
    """The sealable rows of ``func``'s loop tables (loop36, :func:`_loop_tables`) and names assigned a literal once
    (:func:`_column_sites`)."""
    out: list[SealSite] = []
    for loop, targets, table in _loop_tables(func):
        out += _table_sites(text, path, fid, func, readable, targets, table, _reached(loop.body), 1)
    # loop36: ``expected = L`` (a top-level assignment of a literal to one name) is a table of one row, its
    # statements those after it (more-itertools: ``expected = [0, 1, 8, 9]`` … ``self.assertEqual(actual, expected)``)
    for stmt in func.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) and stmt.simple and stmt.value is not None else None
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(target, ast.Name) or value is None or not _is_literal(value):
            continue
        after = [(x, b) for x, b in _reached(func.body) if x.lineno > (stmt.end_lineno or stmt.lineno)]
        out += _table_sites(text, path, fid, func, readable, [target.id], [[value]], after, 1)
    return out


def _reached(body: Sequence[ast.stmt]) -> list[tuple[ast.stmt, Sequence[ast.stmt]]]:
    """loop36: the statements of ``body`` (each with the body holding it) a row's check may be: its own, and those of
    the bodies (and ``else``) of its ``if`` statements and of its ``with self.subTest(…):`` statements, nested too.
    An ``if`` only makes a statement run less often (a row whose statement does not run reports nothing, and fails
    its function); a ``subTest`` lets a failed statement fail the test still. Not inside ``try`` (an ``except``
    may pass a statement the seal would fail), another ``with`` (a manager may swallow the failure), or a loop (a
    statement made twice in a row)."""
    out: list[tuple[ast.stmt, Sequence[ast.stmt]]] = []
    for stmt in body:
        out.append((stmt, body))
        if isinstance(stmt, ast.If):
            out += _reached(stmt.body) + _reached(stmt.orelse)
        elif isinstance(stmt, ast.With) and stmt.items and all(
                _is_subtest(i.context_expr) and i.optional_vars is None for i in stmt.items):
            out += _reached(stmt.body)
    return out


def _is_subtest(node: ast.expr) -> bool:
    """Whether ``node`` is ``self.subTest(…)`` (any arguments)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "subTest" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"


def _loop_tables(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.For, list[str], list[list[ast.expr]]]]:
    """loop36: each ``for`` loop among ``func``'s reached statements (:func:`_reached`) over a literal table, with
    its target's names and its rows' cells: ``for a, b in [(…), …]:`` or ``for i, (a, b) in enumerate([…]):`` (a
    list or tuple display of rows, each a tuple or list display of as many cells as the target's names, two or
    more, distinct, none starred), no ``else``, no ``break``/``continue`` of its own (each row runs the body once
    to its end or fails)."""
    out: list[tuple[ast.For, list[str], list[list[ast.expr]]]] = []
    for loop, _ in _reached(func.body):
        if not isinstance(loop, ast.For) or loop.orelse or any(
                isinstance(n, (ast.Break, ast.Continue)) for n in _own_nodes(loop.body)):
            continue
        table, target = loop.iter, loop.target
        if isinstance(table, ast.Call) and isinstance(table.func, ast.Name) and table.func.id == "enumerate" \
                and len(table.args) == 1 and all(k.arg == "start" for k in table.keywords) \
                and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2 \
                and isinstance(target.elts[0], ast.Name):
            table, target = table.args[0], target.elts[1]
        if not isinstance(table, (ast.List, ast.Tuple)) or not table.elts \
                or not isinstance(target, (ast.Tuple, ast.List)):
            continue
        names = [t.id for t in target.elts if isinstance(t, ast.Name)]
        if len(names) != len(target.elts) or len(names) < 2 or len(set(names)) != len(names):
            continue
        rows = [list(r.elts) for r in table.elts if isinstance(r, (ast.Tuple, ast.List))]
        if len(rows) != len(table.elts) or any(
                len(r) != len(names) or any(isinstance(c, ast.Starred) for c in r) for r in rows):
            continue
        out.append((loop, names, rows))
    return out


#: :func:`_cell_value` of a cell whose value is not known without running the test.
_UNKNOWN = object()


def _cell_value(node: ast.expr) -> Any:
    """A table cell's value when the host knows it without running anything: a literal's
    (:func:`ast.literal_eval`), or (loop36) the constant the compiler folds an expression of constants into
    (:func:`_folded_values`' rule: ``'1' + '0' * 101``); else :data:`_UNKNOWN` (a name, a call: its value at run
    time could be a string of a site id's form, taken for a sealed cell)."""
    if _is_literal(node):
        return ast.literal_eval(node)
    if isinstance(node, _FOLDED_NODES) and all(isinstance(n, _CONSTANT_PARTS) for n in ast.walk(node)):
        import dis
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(node)), "<cell>", "eval")
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return _UNKNOWN
        ops = [i for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
        if not code.co_names and [i.opname for i in ops] in (["LOAD_CONST", "RETURN_VALUE"], ["RETURN_CONST"]):
            return ops[0].argval
    return _UNKNOWN


def _own_nodes(body: Sequence[ast.stmt]) -> list[ast.AST]:
    """The nodes of ``body`` outside its nested loops, functions and classes (whose ``break`` is their own)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef, ast.Lambda)):
            todo += list(ast.iter_child_nodes(node))
    return out


def _table_sites(text: str, path: str, fid: str, func: ast.FunctionDef | ast.AsyncFunctionDef, readable: _Readable,
                 names: Sequence[str], rows: Sequence[Sequence[ast.expr]],
                 statements: Sequence[tuple[ast.stmt, Sequence[ast.stmt]]], bound: int) -> list[SealSite]:
    """The sealable rows of one table (:func:`_column_sites`): ``names`` its columns' names (``""`` for one that
    cannot be a column), ``rows`` its rows' cells, ``statements`` the statements (each with its body) a column may
    be a side of, ``bound``: how many times the table itself binds each name (a loop's target: 1; parametrize: 0).
    The first column (in the statements' order) every other use of whose name in ``func`` (every ``Name`` node,
    nested functions and lambdas too) is one side of one of ``statements`` of a site's form on lines of its own,
    its cell a literal in every row (none a string of :data:`ROW_ID`'s form). A row is sealable when its cell's
    value cannot be read elsewhere (``readable``: the file outside the cell, so the other rows, the row's other
    cells and ``ids=``/``id=`` too; the other files) and neither can any value an expression of it computes, and
    every statement's value of it is computed: a row that fails stays as it is."""
    used: dict[str, int] = {}
    for stmt in func.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                used[node.id] = used.get(node.id, 0) + 1
    # each statement of a site's form with a side that is the bare name or an expression of one column
    found: dict[str, list[tuple[ast.stmt, ast.expr, ast.expr, bool, Sequence[ast.stmt]]]] = {}
    order: list[str] = []
    for stmt, body in statements:
        pair = _sides(stmt)
        if pair is None:
            continue
        for flipped, (a, side) in ((False, pair), (True, (pair[1], pair[0]))):
            inside = [n.id for n in ast.walk(side) if isinstance(n, ast.Name)]
            if len(inside) != 1 or not inside[0] or inside[0] not in names:
                continue
            if not isinstance(side, ast.Name) and not isinstance(side, (ast.BinOp, ast.UnaryOp)):
                continue
            if inside[0] not in found:
                order.append(inside[0])
            found.setdefault(inside[0], []).append((stmt, a, side, flipped, body))
            break
    for name in order:
        stmts = found[name]
        # every use of the name is one such side (a use elsewhere would compute on the sealed cell, a site id)
        if used.get(name) != len(stmts) + bound or len({id(s) for s, *_ in stmts}) != len(stmts) \
                or not all(_whole_lines(text, s, body) for s, _, _, _, body in stmts):
            continue
        col = list(names).index(name)
        cells = [r[col] for r in rows]
        actuals = [_segment(text, a) for _, a, _, _, _ in stmts]
        sides = [_segment(text, side) for _, _, side, _, _ in stmts]
        # loop36: a cell the compiler folds into a constant (``'1' + '0' * 101``) is known too; its row stays as it is
        known = [_cell_value(c) for c in cells]
        if not all(actuals) or not all(sides) or any(v is _UNKNOWN for v in known) or any(
                isinstance(v, str) and ROW_ID.fullmatch(v) for v in known):
            return []
        out = []
        for k, cell in enumerate(cells):
            expected = _segment(text, cell)
            if not expected or not _is_literal(cell) or readable(cell, expected):
                continue
            value = ast.literal_eval(cell)
            try:
                derived = [derived_value(side, name, value) for _, _, side, _, _ in stmts]
            except ValueError:
                continue
            if any(not isinstance(side, ast.Name) and _derived_readable(readable, d)
                   for (_, _, side, _, _), d in zip(stmts, derived, strict=True)):
                continue
            for j, ((stmt, _, side, flipped, _), actual, side_text) in enumerate(
                    zip(stmts, actuals, sides, strict=True)):
                first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                out.append(SealSite(f"{fid}@{first}#{k}", path, fid, first, last, actual or "", expected,
                                    case=isinstance(stmt, ast.Expr), column=name, row=k,
                                    cell=(cell.lineno, cell.col_offset, cell.end_lineno or cell.lineno,
                                          cell.end_col_offset or 0), flipped=flipped, statement=j,
                                    statements=len(stmts),
                                    derived="" if isinstance(side, ast.Name) else side_text or "",
                                    decorated=not bound))
        return out
    return []


#: The nodes :func:`ast.literal_eval` may accept (a container display, a constant, a sign, a complex sum).
_LITERAL_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp, ast.Call)
#: The literal values of one file: hashable value → how many nodes have it (``1``, ``1.0`` and ``True`` are one
#: key, as ``==`` has them equal), and the unhashable values (lists, dicts, sets) one by one.
_Values = tuple[dict[Any, int], list[Any]]
#: hole41: a statement that may cover a site (:func:`_covers`): its file, function id, the statement, its literal node,
#: the literal's and ``A``'s source texts, the literal's values (:func:`_literal_values`) and their
#: :func:`_plain_counts`.
_Holder = tuple[str, str, ast.stmt, ast.expr, str, str, _Values, dict[Any, int]]


def _walk(tree: ast.AST, skip: Collection[ast.AST] = ()) -> Iterator[ast.AST]:
    """:func:`ast.walk` of ``tree`` less the subtrees of ``skip``'s nodes (by identity; hole41: a cover's literal,
    :func:`_covers`), in no particular order."""
    if not skip:
        yield from ast.walk(tree)
        return
    left = {id(n) for n in skip}
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if id(node) in left:
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def _literal_values(tree: ast.Module | None, skip: Collection[ast.AST] = ()) -> _Values:
    """The values of every node of ``tree`` that :func:`ast.literal_eval` accepts (a docstring, an f-string's
    constant parts, each part of a container and the container itself), counted (:data:`_Values`); empty for
    ``None``. ``skip``: nodes whose subtrees are not counted (hole41: the literals covers hide, :func:`_covers`)."""
    counts: dict[Any, int] = {}
    unhashable: list[Any] = []
    for node in _walk(tree, skip) if tree is not None else ():
        if not isinstance(node, _LITERAL_NODES):
            continue
        try:
            v = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        try:
            counts[v] = counts.get(v, 0) + 1
        except TypeError:
            unhashable.append(v)
    for v in _folded_values(tree, skip):
        counts[v] = counts.get(v, 0) + 1
    return counts, unhashable


#: The nodes the compiler folds into one constant when every operand is one (``2 ** 10``, ``"a\\n" + "b"``,
#: ``"abc"[1]``, a tuple of them), and the nodes such an expression may consist of.
_FOLDED_NODES = (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple)
_CONSTANT_PARTS = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple, ast.Slice, ast.operator,
                   ast.unaryop, ast.expr_context)


def _folded_values(tree: ast.Module | None, skip: Collection[ast.AST] = ()) -> list[Any]:
    """gatk35: the values the compiler folds expressions of constants of ``tree`` into (what its code objects hold as
    constants, read with no evaluation: ``co_consts``), each a node :func:`ast.literal_eval` does not accept:
    ``3 * 2 ** 10`` (``3072``, and ``1024``), ``"first\\n" + "second"``, ``"abc"[1]``. Each is readable in the test
    process as much as a literal (``compile`` of the file, or the module's code objects), though no literal
    spells it; the compiler's own caps bound them. Empty for ``None``; ``skip`` as :func:`_literal_values`'s."""
    import dis
    out: list[Any] = []
    for node in _walk(tree, skip) if tree is not None else ():
        if not isinstance(node, _FOLDED_NODES) or _is_literal(node) \
                or not all(isinstance(n, _CONSTANT_PARTS) for n in ast.walk(node)):
            continue
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(node)), "<folded>", "eval")
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        ops = [i.opname for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
        if not code.co_names and ops in (["LOAD_CONST", "RETURN_VALUE"], ["RETURN_CONST"]):
            v = code.co_consts[0] if ops[0] == "RETURN_CONST" else next(
                i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_CONST")
            try:
                hash(v)
            except TypeError:
                continue
            out.append(v)
    return out


def _occurrences(value: Any, values: _Values | None) -> int:
    """How many literals of :data:`_Values` ``values`` are ``==`` ``value`` (0 for ``None``)."""
    if values is None:
        return 0
    counts, unhashable = values
    try:
        return counts.get(value, 0)
    except TypeError:
        n = 0
        for v in unhashable:
            try:
                n += bool(v == value)
            except Exception:  # noqa: BLE001 - literals of builtins compare; never raise for one that does not
                continue
        return n


def _passed_by_another(kind: str, value: Any, extra: str, literals: Sequence[_Values]) -> bool:
    """Whether a literal of the hidden test files or their parent versions other than ``L`` itself (one ``==`` to
    it is readable already: no site then) passes a ``match`` or ``approx`` site's check (cmp35): a string the regex
    ``value`` finds a match in (one longer than :func:`~.seal_kinds.match_text_cap` only by the texts it matches
    literally: the bound of the search), a number or container ``pytest.approx(value, **extra)`` holds equal (a
    near value, ``0.33333`` for ``approx(0.3333, rel=1e-3)``, or a bound ``abs=`` gives). Such a literal is a value
    a forger reads that passes the site as well as ``L``."""
    if kind == "match":
        pattern, cap, runs = re.compile(value), match_text_cap(value), regex_literal_runs(value)
    else:
        import pytest
        near = pytest.approx(value, **ast.literal_eval(extra))
    for counts, unhashable in literals:
        for v in [*counts, *unhashable]:
            if kind == "match" and not isinstance(v, str):
                continue
            if kind == "approx" and (isinstance(v, (str, bytes)) or v is None):
                continue
            try:
                if bool(v == value):
                    continue
                if kind == "match":
                    if pattern.search(v) if len(v) <= cap else any(r in v for r in runs):
                        return True
                elif bool(near == v):
                    return True
            except Exception:  # noqa: BLE001 - approx of a literal it cannot compare: not passed by it
                continue
    return False


def _held(value: Any, values: _Values | None) -> int:
    """How many string and bytes literals of :data:`_Values` ``values`` hold ``value``'s characters, a ``str`` or
    ``bytes`` (its own literal one of them): a ``str`` inside a ``str``'s value or its UTF-8 inside a ``bytes``
    one, ``bytes`` inside a ``bytes``' value or, when they are UTF-8, their text inside a ``str``'s. The rule of
    the text search (a string's content occurring in another file's text) over values, whatever their spelling:
    ``"a\\nb"`` is held in ``"a\\nb\\nc"``, whose text holds neither its text nor its content. 0 for another
    value or ``None``."""
    if values is None or not isinstance(value, (str, bytes)):
        return 0
    try:
        text: str | None = value if isinstance(value, str) else value.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    n = 0
    for v, k in values[0].items():
        if (isinstance(v, str) and text is not None and text in v) or (isinstance(v, bytes) and data in v):
            n += k
    return n


def _plain(value: Any) -> Any:
    """``value`` with its containers as their items (hashable): a ``list`` or ``tuple`` ``("seq", items)``, a ``set``
    ``("set", items)``, a ``dict`` ``("dict", items)``; any other value as it is."""
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_plain(x) for x in value))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(_plain(x) for x in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_plain(k), _plain(x)) for k, x in value.items()))
    return value


def _plain_counts(values: _Values) -> dict[Any, int]:
    """gatk35: the containers of :data:`_Values` ``values`` as their items (:func:`_plain`), counted: a sequence
    also as the set of its items (``[3, 1, 3]`` shows ``{1, 3}``). A value whose items do not hash (a list of
    ``nan``-free builtins always does) is passed over."""
    counts: dict[Any, int] = {}
    for v, n in [*values[0].items(), *((u, 1) for u in values[1])]:
        if not isinstance(v, (list, tuple, set, frozenset, dict)):
            continue
        try:
            keys = [_plain(v)]
            if isinstance(v, (list, tuple)):
                keys.append(("set", frozenset(_plain(x) for x in v)))
        except TypeError:
            continue
        for k in keys:
            counts[k] = counts.get(k, 0) + n
    return counts


def _same_items(value: Any, counts: dict[Any, int] | None) -> int:
    """How many containers of ``counts`` (:func:`_plain_counts`) hold ``value``'s items, a ``list``, ``tuple``,
    ``set`` or ``dict``, in any container type (``(1, "a")`` for ``[1, "a"]``, ``{1, 2}`` for ``(2, 1, 2)``): a
    forger reads the one and returns the other. Its own literal is one of them. 0 for another value or ``None``."""
    if counts is None or not isinstance(value, (list, tuple, set, dict)):
        return 0
    try:
        return counts.get(_plain(value), 0)
    except TypeError:
        return 0


@dataclass(frozen=True)
class _Readable:
    """Whether a literal of a test file's ``text`` can be read elsewhere (module docstring): ``rest_files``: the
    other hidden test files and the parent's versions as text (:func:`_searchable`); ``own``: the literal values of
    ``text`` (:func:`_literal_values`); ``others``: those of the other Python files and parent versions; ``own_plain``
    and ``others_plain``: the same as :func:`_plain_counts` (gatk35)."""

    text: str
    rest_files: Sequence[str]
    own: _Values | None
    others: Sequence[_Values]
    own_plain: dict[Any, int] | None = None
    others_plain: Sequence[dict[Any, int]] = ()

    def __call__(self, lit: ast.expr, expected: str, kind: str = "==") -> bool:
        """Whether ``lit`` (a literal node of :attr:`text`, its source text ``expected``, the site's ``kind``) is
        readable elsewhere: its source text, ``repr`` or a string's content (for a ``match`` site also each text its
        regex matches literally: :func:`~.seal_kinds.regex_literal_runs`) in :attr:`text` outside it or in
        :attr:`rest_files`; a value ``==`` to it among the other literals; a container of the same items in another
        container type (:func:`_same_items`); another string or bytes literal holding its value (:func:`_held`)."""
        value = ast.literal_eval(lit)
        start, end = _span(self.text, lit)
        rest = [self.text[:start] + "\0" + self.text[end:], *self.rest_files]
        readings = _readings(value, expected) + (regex_literal_runs(value) if kind == "match" else [])
        if any(r and r in t for r in readings for t in rest):
            return True
        # its own literal is one occurrence in its file (a part of it equal to it, as 1 in 1+0j, one more)
        if _occurrences(value, self.own) > 1 or any(_occurrences(value, v) for v in self.others):
            return True
        # gatk35: a container of the same items in another container type ((1, "a") for [1, "a"])
        if _same_items(value, self.own_plain) > 1 or any(_same_items(value, v) for v in self.others_plain):
            return True
        # gatk35: a string's value inside another literal's ("a\nb" in "a\nb\nc", where the escape hides its text)
        return _held(value, self.own) > 1 or any(_held(value, v) for v in self.others)


def _searchable(data: bytes) -> str:
    """A file's bytes as text to search for a value: decoded as UTF-8 (bad bytes replaced) and as Latin-1, so that
    a string's UTF-8 text and bytes' Latin-1 text are found in a file of any encoding."""
    return data.decode("utf-8", errors="replace") + "\0" + data.decode("latin-1")


def _parsed(source: str | bytes | None) -> ast.Module | None:
    """``source`` parsed (``None``: none given, or it does not parse)."""
    if not source:
        return None
    try:
        return parse_source(source)
    except (SyntaxError, ValueError):
        return None


def _whole_lines(text: str, stmt: ast.stmt, body: Sequence[ast.stmt]) -> bool:
    """Whether ``stmt`` has its lines to itself: only indentation before it, nothing but a comment after it, no
    other statement of ``body`` on them (a rewrite replaces its lines whole)."""
    lines = _lines(text)
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    head = lines[first - 1].encode("utf-8")[:stmt.col_offset]
    tail = lines[last - 1].encode("utf-8")[stmt.end_col_offset or 0:].strip()
    if head.strip() or (tail and not tail.startswith(b"#")):
        return False
    return not any(o is not stmt and (o.end_lineno or o.lineno) >= first and o.lineno <= last for o in body)


def _offset(text: str, line: int, col: int) -> int:
    """The character offset in ``text`` of ``line`` (1-based) at UTF-8 byte column ``col``."""
    lines, starts = _split(text)
    return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))


def sealed_files(root: Path, sites: Sequence[SealSite], test_files: Collection[str],
                 texts: dict[str, tuple[str, str]] | None = None) -> tuple[dict[str, bytes], dict[str, SealSite]]:
    """The sealed test files (path → bytes) of ``sites`` (each statement rewritten to ``__hf_seal__("<id>", (A))``
    (``__hf_seal_in__`` for an ``in`` site) and padded with blank lines to its lines, a ``match`` site's ``with``
    item only (:func:`_rewrite_spans`), the import of the calls used appended) and each site's id → the site. An id is
    ``hf`` and 24 random hex digits that occur in none of ``test_files`` (read from ``root``). ``texts``: path →
    ``(encoding, text)`` of the files read, filled in place and read from (a path in it is not read again: the
    caller's copy of what was read, rev58). ``OSError`` when a file cannot be read (never through a link);
    ``ValueError`` when one no longer decodes."""
    texts = {} if texts is None else texts
    for p in sorted({s.path for s in sites} | set(test_files)):
        if p in texts:
            continue
        got = _decoded(nofollow.read_bytes(root, p))
        if got is None:
            if p in {s.path for s in sites}:
                raise ValueError(f"{p} does not decode")
            continue
        texts[p] = got
    # multi35: a row of a column is sealed only with every statement of its column (a statement whose site is not
    # in the run would make no check of a sealed cell); its statements after the first report the cell's id with
    # ``:<statement>`` appended
    # loop36: a row is its cell (a function's loops each have a row 0)
    whole: dict[tuple[str, Any], int] = {}
    for s in sites:
        if s.column is not None:
            whole[(s.function, s.cell)] = whole.get((s.function, s.cell), 0) + 1
    sites = [s for s in sites if s.column is None or whole[(s.function, s.cell)] == s.statements]
    # hole41: a cover whose statement is a site's too is sealed as that site (a statement is rewritten once)
    judged = {(s.path, s.first) for s in sites if not s.cover}
    sites = [s for s in sites if not s.cover or (s.path, s.first) not in judged]
    ids: dict[str, SealSite] = {}
    rows: dict[tuple[str, Any], str] = {}
    for s in sorted(sites, key=lambda x: x.statement):
        if s.column is not None and s.statement:
            ids[f"{rows[(s.function, s.cell)]}:{s.statement}"] = s
            continue
        while True:
            sid = "hf" + secrets.token_hex(12)
            if sid not in ids and not any(sid in t for _, t in texts.values()):
                break
        ids[sid] = s
        if s.column is not None:
            rows[(s.function, s.cell)] = sid
    out: dict[str, bytes] = {}
    for path in sorted({s.path for s in sites}):
        encoding, text = texts[path]
        out[path] = seal_text(text, [(i, s) for i, s in ids.items() if s.path == path]).encode(encoding)
    return out, ids


def seal_text(text: str, sites: Sequence[tuple[str, SealSite]]) -> str:
    """``text`` (a test file's) with ``sites`` (site id → one of its sites, as :func:`sealed_files` found and named
    them; seal54: a site placed in a run apart's version of the file, :func:`dataclasses.replace` of its lines,
    cell and span) rewritten as :func:`sealed_files` rewrites them, the import of the calls used appended. No line
    moves."""
    mine = sorted(sites, key=lambda x: -x[1].first)
    text = _rewrite_spans(text, mine)
    lines = _lines(_sealed_cells(text, [(i, s) for i, s in mine if s.cell is not None and not s.statement]))
    done: set[int] = set()  # the statements rewritten (a column's rows share theirs)
    for sid, s in mine:
        if s.span is not None or s.first in done:
            continue
        done.add(s.first)
        head = lines[s.first - 1]
        indent = head[:len(head) - len(head.lstrip())]
        name = SEAL_IN_CALL if s.kind == "in" else SEAL_CALL
        call = f"{indent}{name}({sid!r}, ({s.actual}){', self' if s.case else ''})" if s.column is None \
            else f"{indent}{SEAL_ROW_CALL}({s.column}, ({s.actual}), {'self' if s.case else None}, {s.flipped})" \
            if not s.statement and not s.derived else \
            f"{indent}{SEAL_ROW_CALL}({s.column}, ({s.actual}), {'self' if s.case else None}, {s.flipped}, " \
            f"{s.statement}, lambda: ({s.derived or s.column}))"
        pad = (s.last - s.first) - call.count("\n")
        lines[s.first - 1:s.last] = [call + "\n" + "\n" * max(0, pad)]
    body = "".join(lines)
    if body and not body.endswith("\n"):
        body += "\n"
    names = [SEAL_CALL, *(n for n, k in ((SEAL_IN_CALL, "in"), (SEAL_RAISES_CALL, "match"))
                          if any(s.kind == k for _, s in mine)),
             *([SEAL_ROW_CALL] if any(s.column is not None for _, s in mine) else [])]
    body += f"from {SEAL_MODULE} import {', '.join(names)}  # homefield: a sealed run (docs/contracts.md §7)\n"
    return body


def _rewrite_spans(text: str, sites: Sequence[tuple[str, SealSite]]) -> str:
    """``text`` with the ``with`` item of each ``match`` site (``span``) replaced by ``__hf_raises__("<id>",
    pytest.raises((E)))`` (``self.assertRaises((E)), self`` for ``assertRaisesRegex``), padded with line breaks
    inside its parentheses to the lines it had: ``L`` leaves the file, no line moves."""
    for sid, s in sorted(((i, s) for i, s in sites if s.span is not None), key=lambda x: -x[1].span[0]):  # type: ignore[index]
        start, end = s.span  # type: ignore[misc]
        inner = f"self.assertRaises(({s.actual}))" if s.extra == "unittest" else f"pytest.raises(({s.actual}))"
        call = f"{SEAL_RAISES_CALL}({sid!r}, {inner}{', self' if s.extra == 'unittest' else ''}"
        pad = text[start:end].count("\n") - call.count("\n")
        text = text[:start] + call + "\n" * max(0, pad) + ")" + text[end:]
    return text


def withheld_data(root: Path, test_files: Collection[str], parent: Mapping[str, bytes | None]) -> dict[str, bytes]:
    """gatk35: what a sealed run's copy holds in place of each hidden test file that is no Python source (a data
    file: not named ``*.py``, or not decoding and parsing as Python) and that the commit added or changed: an empty
    file (path → ``b""``; ``parent``: :func:`~.twin_runs.parent_tests`, a file the same as its parent's is left
    out). Only a Python file's values are known to the host, by its own parser and compiler
    (:func:`sealable_sites`); a data file's are whatever a decoder makes of its bytes (a YAML block scalar, an XML
    entity, a compressed file), so no search of its text shows that it does not hold an expected value, and the
    sealed run does without it: a site whose test needs it fails the reference fix's check and is not sealed.
    Empty rather than the parent's version: a test reading the parent's rows could pass the reference fix with a
    value another real fix gives only on the commit's (that fix then ``forged``); on no rows a test passes only when
    its value does not come from them. A file that cannot be read is withheld too; one the commit deleted stays
    away."""
    out: dict[str, bytes] = {}
    for p in sorted(set(test_files)):
        try:
            data = nofollow.read_bytes(root, p)
        except FileNotFoundError:  # the commit deleted it: nothing to withhold, nor to bring back
            continue
        except OSError:
            data = b""
        if p.endswith(".py"):
            got = _decoded(data)
            if got is not None and (not got[1].strip() or _parsed(got[1]) is not None):
                continue
        if parent.get(p) != data:
            out[p] = b""
    return out


def _sealed_cells(text: str, rows: Sequence[tuple[str, SealSite]]) -> str:
    """``text`` with each sealed row's cell (``rows``: site id → a site of a column) replaced by its site id's
    string literal, padded with line breaks to the cell's lines (inside the decorator's brackets: no line moves)."""
    for sid, s in sorted(rows, key=lambda x: x[1].cell or (0, 0, 0, 0), reverse=True):
        if s.cell is None:
            continue
        line, col, end_line, end_col = s.cell
        start, end = _offset(text, line, col), _offset(text, end_line, end_col)
        text = text[:start] + repr(sid) + "\n" * (end_line - line) + text[end:]
    return text


def passing_sites(ids: Mapping[str, SealSite], fail_to_pass: Sequence[str], outcomes: Mapping[str, str],
                  seal_reports: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    """The keys of the sites of ``ids`` (site id → site) that a sealed run of the reference fix passes, sorted:
    every ``fail_to_pass`` id of the site's function passed in pytest (``outcomes``) and reported the site exactly
    once with a value equal to its literal (``seal_reports``: :attr:`~.testrun.TestRun.seal_reports`); a row of a
    parametrize decorator's column (col35, :attr:`SealSite.decorated`: its items' ids in the sealed run are not the
    original ones): every item of its function in the run passed (:func:`column_passed`) and the row was reported
    exactly once in all, equal (:func:`row_reports`). loop38: a loop or assigned table's row is judged per id as a
    plain site is (its function's items keep their ids; a function run once per item of a parametrized fixture
    reports each row once per item, which judged in all was "reported twice", never sealed), as a grading judges
    it (:attr:`~pytest_homefield.run.sealed_grading.SealPlan.columns`); but in a function with a decorator's row among
    ``ids`` (whose items' ids change) every item of the function in the run passed and reported it exactly once,
    equal (:func:`item_reports`). A site whose function has no such id is not passed."""
    keep: set[str] = set()
    by_function = {s.function for s in ids.values() if s.decorated}
    for site_id, site in ids.items():
        mine = [i for i in fail_to_pass if function_id(i) == site.function]
        if not mine or site.cover:  # hole41: a cover is never judged, and sealed with a site it covers
            continue
        if site.decorated:
            if column_passed(site.function, outcomes) and row_reports(site_id, seal_reports) == ["equal"]:
                keep.add(site.key)
        elif site.function in by_function:  # a loop's row beside a sealed column: every item there reported it once
            if column_passed(site.function, outcomes) and set(item_reports(site_id, site.function, outcomes,
                                                                           seal_reports)) == {("equal",)}:
                keep.add(site.key)
        elif all(outcomes.get(i) == "passed" and list(seal_reports.get(i, {}).get(site_id, [])) == ["equal"]
                 for i in mine):
            keep.add(site.key)
    return sorted(keep)


def column_passed(function: str, outcomes: Mapping[str, str]) -> bool:
    """Whether a sealed run ran ``function``'s items (its node ids there: ``outcomes``' ids of that function, which
    hold the rows' site ids instead of their values) and pytest passed every one."""
    items = [o for i, o in outcomes.items() if function_id(i) == function]
    return bool(items) and all(o == "passed" for o in items)


def item_reports(sid: str, function: str, outcomes: Mapping[str, str],
                 seal_reports: Mapping[str, Mapping[str, Sequence[str]]]) -> list[tuple[str, ...]]:
    """loop38: what each item of ``function`` in a sealed run (``outcomes``' ids of it) reported of the site ``sid``
    (a loop's row beside a sealed column, :attr:`SealSite.items`), one tuple of verdicts per item: it passes when
    there is an item and each is exactly ``("equal",)``."""
    return [tuple(seal_reports.get(i, {}).get(sid, ())) for i in outcomes if function_id(i) == function]


def row_reports(sid: str, seal_reports: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    """What every test id of a sealed run reported of the sealed row ``sid`` (``seal_reports``: test id → site id
    → verdicts), in one list: exactly ``["equal"]`` passes it."""
    return [v for reports in seal_reports.values() for v in reports.get(sid, ())]
