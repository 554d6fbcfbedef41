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
else in the hidden test files nor in the parent's versions of them, and no other literal of those Python files has
a value ``==`` to ``L`` (another spelling: ``'a' '-b'``, an escape, ``1000`` for ``1e3``) (so a small value such as
``3`` is rarely sealable). :func:`sealed_files` rewrites each chosen site to ``__hf_seal__("<site id>", (A))``
(a random id that occurs in none of those files), importing the call from ``homefield_seal`` (shipped beside the
reporter) at the end of the file, so no line moves.

A **sealable column** (col35, :func:`_column_sites`) is an argument of a FAIL_TO_PASS function's one
``pytest.mark.parametrize`` decorator used in the body only as one side of one such statement: each row whose cell
(a literal) cannot be read elsewhere (the same rule, the other rows, cells and ``ids`` counting) is a site of its
own (key ``<function id>@<line>#<row>``); in the sealed file its cell is a random site id (so neither the file nor
pytest's auto id holds the value) and the statement ``__hf_seal_row__(name, (A), …)``, which seals a row whose
cell is a site id and makes the statement as written for a row left as it is. A sealed run judges such a function
by function (:func:`column_passed`, :func:`row_reports`): its items' ids there are not the original ones.
"""

from __future__ import annotations

import ast
import re
import secrets
import tokenize
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.canaries import _find, function_id, parse_source
from pytest_homefield.sandbox.canary_added import fixed_lines

__all__ = ["SealSite", "sealable_sites", "sealed_files", "passing_sites", "SEAL_CALL", "SEAL_ROW_CALL", "SEAL_MODULE",
           "MAX_SEAL_SITES", "ROW_ID", "column_passed",
           "row_reports"]

#: The name a sealed file calls and the module it imports it from (``sandbox/_reporter/homefield_seal.py``).
SEAL_CALL = "__hf_seal__"
#: The call a sealed column's statement becomes (:func:`_column_sites`): given the column's value of the row, a
#: sealed row's site id or an unsealed row's literal.
SEAL_ROW_CALL = "__hf_seal_row__"
#: What a sealed row's cell holds in the sealed file, and what the seal module takes for a site id: ``hf`` and 24
#: hex digits (an unsealed row's string of that form makes its column not sealable).
ROW_ID = re.compile(r"hf[0-9a-f]{24}")
SEAL_MODULE = "homefield_seal"
#: Sites sealed in one task at most (the first in file and line order).
MAX_SEAL_SITES = 200

#: A source line with its line break: only ``\r\n``, ``\r`` and ``\n`` end one, as Python's tokenizer counts
#: lines (``str.splitlines`` also splits at a form feed or U+2028 inside a string literal).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _lines(text: str) -> list[str]:
    """``text``'s lines as :mod:`ast` numbers them, each with its line break."""
    return _LINE.findall(text)


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
    #: col35, a row of a sealed parametrize column (:func:`_column_sites`): the column's argument name (``L`` of
    #: the statement), the row's index among the decorator's rows, its cell's position (line, UTF-8 column, end
    #: line, end column: ``expected`` is its text) and whether the column is the statement's first side
    column: str | None = None
    row: int | None = None
    cell: tuple[int, int, int, int] | None = None
    flipped: bool = False

    def value(self) -> Any:
        """``L``'s value (:func:`ast.literal_eval`; it succeeded when the site was found), its text read inside
        brackets as in its file (a string concatenated over lines is no expression on its own)."""
        return ast.literal_eval(f"(\n{self.expected}\n)")


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
                   parent: Mapping[str, bytes | None]) -> list[SealSite]:
    """The sealable sites (module docstring) of the ``fail_to_pass`` functions in ``root`` (a tree with the hidden
    tests applied), at most :data:`MAX_SEAL_SITES`, in file and line order. ``test_files``: the task's hidden test
    files (read without following a link; one that cannot be read is searched as empty; one that does not decode
    has no site and is searched as UTF-8 and Latin-1 text: a data file of the hidden tests too); ``parent``: their
    bytes in the parent (``None``: new; :func:`~.twin_runs.parent_tests`). Never raises for a file that does not
    parse (it has no site)."""
    texts: dict[str, str] = {}
    searched: dict[str, str] = {}  # every file as text to search, whatever its encoding (a data file too)
    for p in sorted(set(test_files)):
        try:
            data = nofollow.read_bytes(root, p)
        except OSError:
            data = b""
        got = _decoded(data)
        texts[p] = got[1] if got is not None else ""
        searched[p] = _searchable(data)
    others = [_searchable(d) for d in parent.values() if d is not None]
    # the values of the literals of every Python file among them and of their parent versions (satk34: a value
    # spelled otherwise elsewhere, 'hello' '-world' or 1000 for 1e3, is readable there as much as its spelling)
    values = {p: _literal_values(_parsed(t)) for p, t in texts.items()}
    parent_values = [_literal_values(_parsed(d)) for d in parent.values() if d is not None]
    by_file: dict[str, list[str]] = {}
    for fid in dict.fromkeys(function_id(i) for i in fail_to_pass if "::" in i):
        by_file.setdefault(fid.split("::", 1)[0], []).append(fid)
    sites: list[SealSite] = []
    for path in sorted(by_file):
        text = texts.get(path, "")
        tree, before = _parsed(text), _parsed(parent.get(path))
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
                                 [v for q, v in values.items() if q != path] + parent_values)
            column = _column_sites(text, path, fid, func, readable)
            sites.extend(column[:MAX_SEAL_SITES - len(sites)])
            if len(sites) >= MAX_SEAL_SITES:
                return sites
            for stmt in func.body if not column else ():
                pair = _operands(stmt)
                if pair is None:
                    continue
                a, lit = pair
                first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
                if kept.intersection(range(first, last + 1)) or not _whole_lines(text, stmt, func.body):
                    continue
                expected, actual = ast.get_source_segment(text, lit), ast.get_source_segment(text, a)
                if not expected or not actual:
                    continue
                if readable(lit, expected):
                    continue
                sites.append(SealSite(f"{fid}@{first}", path, fid, first, last, actual, expected,
                                      case=isinstance(stmt, ast.Expr)))
                if len(sites) >= MAX_SEAL_SITES:
                    return sites
    return sites


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


def _column_sites(text: str, path: str, fid: str, func: ast.FunctionDef | ast.AsyncFunctionDef,
                  readable: _Readable) -> list[SealSite]:
    """The sealable rows of ``func``'s parametrize column (col35, docs/contracts.md §7 "Sealed sites"), one
    :class:`SealSite` each (key ``<fid>@<line>#<row>``), in row order; ``[]`` when it has none. The column: an
    argument of the function's one ``parametrize`` decorator (:func:`_parametrize`, every row of a known shape)
    whose name occurs once in the body, as one side of a top-level statement of a site's form (:func:`_sides`) on
    lines of its own; its cell is a literal in every row (none a string of :data:`ROW_ID`'s form). A row is
    sealable when its cell's value cannot be read elsewhere (``readable``: the file outside the cell, so the other
    rows, the row's other cells and ``ids=``/``id=`` too; the other files): a row that fails stays as it is."""
    got = _parametrize(func)
    if got is None or any(r is None for r in got[1]):
        return []
    names, rows = got
    arguments = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    used: dict[str, int] = {}
    for stmt in func.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                used[node.id] = used.get(node.id, 0) + 1
    for stmt in func.body:
        pair = _sides(stmt)
        if pair is None:
            continue
        for flipped, (a, name) in ((False, pair), (True, (pair[1], pair[0]))):
            if not isinstance(name, ast.Name) or name.id not in names or name.id not in arguments \
                    or used.get(name.id) != 1 or not _whole_lines(text, stmt, func.body):
                continue
            actual = ast.get_source_segment(text, a)
            col = names.index(name.id)
            cells = [r[col] for r in rows if r is not None]
            if not actual or not all(_is_literal(c) for c in cells) or any(
                    isinstance(v, str) and ROW_ID.fullmatch(v) for v in map(ast.literal_eval, cells)):
                return []
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            out = []
            for k, cell in enumerate(cells):
                expected = ast.get_source_segment(text, cell)
                if not expected or readable(cell, expected):
                    continue
                out.append(SealSite(f"{fid}@{first}#{k}", path, fid, first, last, actual, expected,
                                    case=isinstance(stmt, ast.Expr), column=name.id, row=k,
                                    cell=(cell.lineno, cell.col_offset, cell.end_lineno or cell.lineno,
                                          cell.end_col_offset or 0), flipped=flipped))
            return out
    return []


#: The nodes :func:`ast.literal_eval` may accept (a container display, a constant, a sign, a complex sum).
_LITERAL_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp, ast.Call)
#: The literal values of one file: hashable value → how many nodes have it (``1``, ``1.0`` and ``True`` are one
#: key, as ``==`` has them equal), and the unhashable values (lists, dicts, sets) one by one.
_Values = tuple[dict[Any, int], list[Any]]


def _literal_values(tree: ast.Module | None) -> _Values:
    """The values of every node of ``tree`` that :func:`ast.literal_eval` accepts (a docstring, an f-string's
    constant parts, each part of a container and the container itself), counted (:data:`_Values`); empty for
    ``None``."""
    counts: dict[Any, int] = {}
    unhashable: list[Any] = []
    for node in ast.walk(tree) if tree is not None else ():
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
    return counts, unhashable


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


@dataclass(frozen=True)
class _Readable:
    """Whether a literal of a test file's ``text`` can be read elsewhere (module docstring): ``rest_files``: the
    other hidden test files and the parent's versions as text (:func:`_searchable`); ``own``: the literal values of
    ``text`` (:func:`_literal_values`); ``others``: those of the other Python files and parent versions."""

    text: str
    rest_files: Sequence[str]
    own: _Values | None
    others: Sequence[_Values]

    def __call__(self, lit: ast.expr, expected: str) -> bool:
        """Whether ``lit`` (a literal node of :attr:`text`, its source text ``expected``) is readable elsewhere: its
        source text, ``repr`` or a string's content in :attr:`text` outside it or in :attr:`rest_files`, or a
        value ``==`` to it among the other literals."""
        value = ast.literal_eval(lit)
        start = _offset(self.text, lit.lineno, lit.col_offset)
        end = _offset(self.text, lit.end_lineno or lit.lineno, lit.end_col_offset or 0)
        rest = [self.text[:start] + "\0" + self.text[end:], *self.rest_files]
        if any(r and r in t for r in _readings(value, expected) for t in rest):
            return True
        # its own literal is one occurrence in its file (a part of it equal to it, as 1 in 1+0j, one more)
        return _occurrences(value, self.own) > 1 or any(_occurrences(value, v) for v in self.others)


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
    lines = _lines(text)
    before = sum(len(x) for x in lines[:line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))


def sealed_files(root: Path, sites: Sequence[SealSite], test_files: Collection[str]) -> tuple[
        dict[str, bytes], dict[str, SealSite]]:
    """The sealed test files (path → bytes) of ``sites`` (each statement rewritten to ``__hf_seal__("<id>", (A))``
    and padded with blank lines to its lines, the import appended) and each site's id → the site. An id is
    ``hf`` and 24 random hex digits that occur in none of ``test_files`` (read from ``root``). ``OSError`` when a
    file cannot be read (never through a link); ``ValueError`` when one no longer decodes."""
    texts: dict[str, tuple[str, str]] = {}
    for p in sorted({s.path for s in sites} | set(test_files)):
        got = _decoded(nofollow.read_bytes(root, p))
        if got is None:
            if p in {s.path for s in sites}:
                raise ValueError(f"{p} does not decode")
            continue
        texts[p] = got
    ids: dict[str, SealSite] = {}
    for s in sites:
        while True:
            sid = "hf" + secrets.token_hex(12)
            if sid not in ids and not any(sid in t for _, t in texts.values()):
                break
        ids[sid] = s
    out: dict[str, bytes] = {}
    for path in sorted({s.path for s in sites}):
        encoding, text = texts[path]
        mine = sorted(((i, s) for i, s in ids.items() if s.path == path), key=lambda x: -x[1].first)
        lines = _lines(_sealed_cells(text, [(i, s) for i, s in mine if s.cell is not None]))
        done: set[int] = set()  # the statements rewritten (a column's rows share theirs)
        for sid, s in mine:
            if s.first in done:
                continue
            done.add(s.first)
            head = lines[s.first - 1]
            indent = head[:len(head) - len(head.lstrip())]
            call = f"{indent}{SEAL_CALL}({sid!r}, ({s.actual}){', self' if s.case else ''})" if s.column is None \
                else f"{indent}{SEAL_ROW_CALL}({s.column}, ({s.actual}), {'self' if s.case else None}, {s.flipped})"
            pad = (s.last - s.first) - call.count("\n")
            lines[s.first - 1:s.last] = [call + "\n" + "\n" * max(0, pad)]
        body = "".join(lines)
        if body and not body.endswith("\n"):
            body += "\n"
        calls = SEAL_CALL + (f", {SEAL_ROW_CALL}" if any(s.column is not None for _, s in mine) else "")
        body += f"from {SEAL_MODULE} import {calls}  # homefield: a sealed run (docs/contracts.md §7)\n"
        out[path] = body.encode(encoding)
    return out, ids


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
    column (col35: its items' ids in the sealed run are not the original ones): every item of its function in the
    run passed (:func:`column_passed`) and the row was reported exactly once in all, equal (:func:`row_reports`).
    A site whose function has no such id is not passed."""
    keep: set[str] = set()
    for sid, site in ids.items():
        mine = [i for i in fail_to_pass if function_id(i) == site.function]
        if site.column is not None:
            if mine and column_passed(site.function, outcomes) and row_reports(sid, seal_reports) == ["equal"]:
                keep.add(site.key)
            continue
        if mine and all(outcomes.get(i) == "passed" and list(seal_reports.get(i, {}).get(sid, [])) == ["equal"]
                        for i in mine):
            keep.add(site.key)
    return sorted(keep)


def column_passed(function: str, outcomes: Mapping[str, str]) -> bool:
    """Whether a sealed run ran ``function``'s items (its node ids there: ``outcomes``' ids of that function, which
    hold the rows' site ids instead of their values) and pytest passed every one."""
    items = [o for i, o in outcomes.items() if function_id(i) == function]
    return bool(items) and all(o == "passed" for o in items)


def row_reports(sid: str, seal_reports: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    """What every test id of a sealed run reported of the sealed row ``sid`` (``seal_reports``: test id → site id
    → verdicts), in one list: exactly ``["equal"]`` passes it."""
    return [v for reports in seal_reports.values() for v in reports.get(sid, ())]
