"""Twins of a test the parent already has change only lines the commit added (docs/contracts.md §7,
issue 30, round 9: atk10's F1).

The agent's workspace is the parent, so a test process holds the parent's version of every test
function the commit only extended. A commit adds lines to such a test; a twin that rewrote one of the
parent's lines (a swap of its values, a parametrize derangement, a flip, another exception) showed a
``replace`` in a ``difflib`` of the parent's and the run's function (``ast.unparse`` lines) where the
original showed only insertions, and a forger no-opped exactly the functions whose diff was insertions
only. Here a function the parent defines gets twins only at lines outside what it keeps of the
parent (:func:`fixed_lines`: its decorators, headers and statements that a diff over canonical
lines matches with the parent's, in place), so a twin differs from the parent where the original
does, and nowhere else; :func:`same_kept` checks the result as the attacker's diff sees it. A
function the commit left unchanged has no such line: no twin can differ from the original without
differing from the parent, so it is **canary-unprotected** (``TwinPlan.unprotected``); it gets a twin
at any line all the same (only a reader of the parent's test tells it; a sentinel anyone would).
"""

from __future__ import annotations

import ast
import difflib
import textwrap
from collections.abc import Callable, Iterator, Sequence

from pytest_homefield.sandbox.canaries import parse_source

__all__ = ["fixed_lines", "allow", "same_kept"]

_Func = ast.FunctionDef | ast.AsyncFunctionDef


def _block(stmts: Sequence[ast.stmt], depth: int) -> Iterator[tuple[str, range]]:
    """``(canonical text, source lines)`` per statement, a compound one by its header then its blocks."""
    pad = "    " * depth
    for s in stmts:
        body = getattr(s, "body", None)
        if not (isinstance(body, list) and body and isinstance(body[0], ast.stmt)):
            yield pad + ast.unparse(s), range(s.lineno, (s.end_lineno or s.lineno) + 1)
            continue
        yield pad + ast.unparse(s).split("\n")[0], range(s.lineno, max(s.lineno + 1, body[0].lineno))
        yield from _block(body, depth + 1)
        for h in getattr(s, "handlers", []):
            yield pad + ast.unparse(h).split("\n")[0], range(h.lineno, max(h.lineno + 1, h.body[0].lineno))
            yield from _block(h.body, depth + 1)
        for name in ("orelse", "finalbody"):
            yield from _block(getattr(s, name, []), depth + 1)


def _items(func: _Func) -> list[tuple[str, range]]:
    out = [("@" + ast.unparse(d), range(d.lineno, (d.end_lineno or d.lineno) + 1)) for d in func.decorator_list]
    kind = "async def" if isinstance(func, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(func.returns)}" if func.returns else ""
    out.append((f"{kind} {func.name}({ast.unparse(func.args)}){returns}",
                range(func.lineno, max(func.lineno + 1, func.body[0].lineno))))
    return out + list(_block(func.body, 1))


def fixed_lines(func: _Func, parent: _Func | None) -> set[int]:
    """The source lines of ``func`` (its file's numbering) holding a decorator, header or statement
    that a diff of the canonical texts matches with ``parent``'s (its version in the parent's file;
    ``None``: new in the commit, nothing fixed)."""
    if parent is None:
        return set()
    mine, theirs = _items(func), _items(parent)
    matcher = difflib.SequenceMatcher(None, [t for t, _ in theirs], [t for t, _ in mine], autojunk=False)
    out: set[int] = set()
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for _, lines in mine[j1:j2]:
                out.update(lines)
    return out


def allow(fixed: set[int]) -> Callable[[ast.AST], bool]:
    """Whether a node lies on none of ``fixed`` (a site may change it)."""
    def ok(node: ast.AST) -> bool:
        start = getattr(node, "lineno", None)
        if start is None:
            return True
        return not fixed.intersection(range(start, (getattr(node, "end_lineno", None) or start) + 1))
    return ok


def _kept(text: str, parent: _Func) -> list[tuple[str, int, int]] | None:
    try:
        tree = parse_source(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return None
    func = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return None
    old, new = ast.unparse(parent).splitlines(), ast.unparse(func).splitlines()
    ops = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(op, i1, i2) for op, i1, i2, _, _ in ops if op != "equal"]


def same_kept(original: str, twin: str, parent: _Func | None) -> bool:
    """Whether ``twin`` (a member's source: decorators, ``def`` and body, maybe indented) rewrites or
    drops exactly the lines of ``parent`` that ``original`` does, as a ``difflib`` over
    ``ast.unparse`` lines sees them (true without a parent, or when either does not parse)."""
    if parent is None:
        return True
    a, b = _kept(original, parent), _kept(twin, parent)
    return a is None or b is None or a == b
