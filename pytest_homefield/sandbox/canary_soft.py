"""Soft statements (docs/contracts.md §7, twin37): a test file of a canary run whose test functions run to the end
of their body after a failed statement, failing there with the first failure, as their original does on a real fix.

A twin fails every real fix at its contradicted site. Stopped there, it never ran the rest of its body (a line putting
back a module setting the test changed), and what it left reached every later test of its process: a later
PASS_TO_PASS test failed in that run alone (``regression``), another group's original failed (``tests_failed``), or
another group's made-up twin met the left value and passed beside its original (``forged``; gatk36,
``tests/run/test_after_twin.py``). The plain run's bare ``raises`` body (neg35) stopped so too.

:func:`softened` rewrites a test file's text so that each *soft statement* of each test function records its
failure instead of ending the test: ``with __import__('homefield_reporter').soft(): <statement>`` (a ``with``
statement gets the context as its first item), on the statement's own line, so every line stays where it was (the
reporter's ``line``, the planner's statement lines, the plain run's unwrapped body lines). The reporter
(``_reporter/homefield_reporter.py``, :data:`SOFT`) keeps the first failure a soft statement met in the test's call
phase (an ``Exception`` or pytest's ``Failed``; a skip, ``xfail``, ``exit`` or ``KeyboardInterrupt`` goes through),
lets the body run on, and fails the call phase with that first failure at its end, whatever the rest of the body
did (raised, skipped, failed another assertion): its traceback still holds the test function's frame at the
statement that failed, so the reporter's ``line`` and ``operands`` name the contradicted site as before.

Every test function of every file a run writes is softened alike (originals, twins, other groups, tests of no group,
in every run apart, the confirmation runs, the rows run and the plain run): a soft statement tells neither the
member nor the site nor the group. Soft statements: an ``assert``, a call (an expression statement), an assignment
and a ``with`` (its header not parenthesized) in the function's body, also under an ``if`` or a ``for``, never inside
a ``try`` or a ``with`` (the test may expect the failure there) nor a ``while`` (a loop waiting for a statement to
succeed would run on forever), each alone on its lines. Test
functions: a module-level ``def test…`` and a ``test…`` method of a module-level ``Test…`` class with no base class
(a ``unittest.TestCase`` reports its failures through ``unittest``'s result: left as it is, not closed), none a
fixture.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections.abc import Mapping

from pytest_homefield.sandbox.canaries import _chars, parse_source

__all__ = ["SOFT", "softened", "softened_bytes", "softened_files"]

#: The context a soft statement runs in (the reporter's :func:`soft`; the reporter is loaded by name, ``-p
#: homefield_reporter``, in every test process homefield starts).
SOFT = "__import__('homefield_reporter').soft()"

_SIMPLE = (ast.Assert, ast.Assign, ast.AugAssign, ast.AnnAssign)


def softened(text: str) -> str:
    """``text`` (a test file) with its soft statements (module text) run under :data:`SOFT`, every line where it
    was; ``text`` itself when it does not parse, holds none, or would not parse so."""
    try:
        tree = parse_source(text)
    except (SyntaxError, ValueError):
        return text
    lines = io.StringIO(text, newline="").readlines()
    edits: list[tuple[int, int, str]] = []  # (line from 1, character, text inserted there)
    for func in _test_functions(tree):
        for stmt in _soft_statements(func.body):
            edit = _edit(stmt, lines)
            if edit is not None:
                edits.append(edit)
    if not edits:
        return text
    for lineno, at, insert in sorted(edits, reverse=True):
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:at] + insert + line[at:]
    out = "".join(lines)
    try:
        parse_source(out)
    except (SyntaxError, ValueError):  # pragma: no cover - each edit keeps its statement whole
        return text
    return out


@functools.lru_cache(maxsize=64)
def softened_bytes(data: bytes) -> bytes:
    """:func:`softened` of a test file's bytes, in the encoding it declares (``utf-8`` by default, a BOM kept);
    ``data`` itself when it cannot be decoded or encoded back so. Remembered for the last 64 texts: a grading writes
    a file alike into each of its runs (two parses, some 1 ms of CPU per KiB)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        out = softened(text)
        return data if out == text else out.encode(encoding)
    except (SyntaxError, LookupError, UnicodeError):
        return data


def softened_files(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """``files`` (path → bytes, a canary run's test files as a plan holds them) as the run writes them: each Python
    file :func:`softened_bytes`, anything else as it is."""
    return {rel: softened_bytes(data) if rel.endswith(".py") else data for rel, data in files.items()}


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test functions of ``tree`` (module text): module-level ``test…`` functions and ``test…`` methods of
    module-level ``Test…`` classes with no base but ``object``, none decorated as a fixture."""
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") and not node.keywords and all(
                isinstance(b, ast.Name) and b.id == "object" for b in node.bases):
            out += [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [f for f in out if f.name.startswith("test") and not any(
        "fixture" in ast.unparse(d) for d in f.decorator_list)]


def _soft_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The soft statements of ``body`` (module text), under ``if`` and ``for`` too; never under a ``while`` (a loop
    waiting for a statement to succeed, ``while True: … break``, would run on forever once its failure is kept)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, _SIMPLE) or isinstance(stmt, ast.With) \
                or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Await))):
            if not isinstance(stmt, ast.AnnAssign) or stmt.value is not None:
                out.append(stmt)
        elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor)):
            out += _soft_statements(stmt.body) + _soft_statements(stmt.orelse)
    return out


def _edit(stmt: ast.stmt, lines: list[str]) -> tuple[int, int, str] | None:
    """Where and what to insert so that ``stmt`` runs under :data:`SOFT` on its own first line; ``None`` when it
    shares a line with another statement (``a; b``) or is a ``with`` whose header is parenthesized."""
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    if first > len(lines) or last > len(lines):  # pragma: no cover - the tree is the text's
        return None
    at = _chars(lines[first - 1], stmt.col_offset)
    if lines[first - 1][:at].strip():
        return None
    end = _chars(lines[last - 1], stmt.end_col_offset or 0)
    rest = lines[last - 1][end:].strip()
    if rest and not rest.startswith("#"):
        return None
    if isinstance(stmt, ast.With):
        head = lines[first - 1][at:]
        if not head.startswith("with") or not head[4:5].isspace() or head[4:].lstrip().startswith(("(", "\\")):
            return None
        return first, at + 4, f" {SOFT},"
    return first, at, f"with {SOFT}: "
