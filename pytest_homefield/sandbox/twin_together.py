"""The test files of a confirmation run (docs/contracts.md §7, atk14 A1): every member of every group side
by side in one file, so that one test process runs an original and its twin together.

The twins run apart (:mod:`~pytest_homefield.sandbox.twin_runs`): one member of every group per run, the
runs started at once. A test process that picks one run (an election between the concurrent runs over
a lock, the age or access time of its files) and passes every test there gets its original with chance
``1/(k+1)``; otherwise it passed a twin while its original failed in another run, which honest code
computing a wrong value does too (a sign error meeting a twin ``5`` of ``-5``), so that twin is excused
(:meth:`~pytest_homefield.sandbox.canaries.CanaryPlan.excused`) and the guess cost nothing. Honest code is
deterministic: run together, its original fails and its twin passes again. A test process that picked a
run has no run to pick here: to be excused it must pass exactly the twin beside the original, not knowing
which of the two is real.

:class:`FileLayout` is one test file as the planner cut it (its lines, the span of each group's
definition with the text of every member, the sentinels appended at its end); :func:`together` writes
each file with every member of every span one after the other, in an order drawn per seed, one of them
(drawn too) under the function's own name and the others under fresh names from the file's own words
(:class:`~pytest_homefield.sandbox.canaries._Namer`): neither the place nor the name tells the original.
Every group is laid out so, not only those confirmed, so that each value of the file occurs alike (a
cycle's rotated values, :mod:`~pytest_homefield.sandbox.canary_swaps`) and no file shows one run's
members (a capture of it with one of a run would tell the originals of the other groups).
"""

from __future__ import annotations

import ast
import random
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_homefield.sandbox.canaries import _Namer, parse_source

__all__ = ["FileLayout", "Span", "together"]


@dataclass(frozen=True)
class Span:
    """A group's definition in its file: lines ``start``..``end`` (1-based, decorators included),
    ``members`` (the text of each member there: the original first, then twin 1..k) and ``name`` (the
    function's name)."""

    start: int
    end: int
    members: tuple[str, ...]
    name: str


@dataclass(frozen=True)
class FileLayout:
    """One test file of a plan: ``encoding``, ``text`` (the hidden test file as applied), ``lines``
    (each with its line break), ``spans`` (in file order), ``tail`` (sentinel definitions appended at
    its end, as in every run) and ``groups``: group function id → the index of its span (the classes
    running one definition share it)."""

    encoding: str
    text: str
    lines: tuple[str, ...]
    spans: tuple[Span, ...]
    tail: tuple[str, ...]
    groups: Mapping[str, int]


def together(layouts: Mapping[str, FileLayout], seed: int, first: Mapping[str, int] | None = None,
             orders: dict[str, tuple[int, ...]] | None = None,
             ) -> tuple[dict[str, bytes], dict[str, tuple[str, ...]]] | None:
    """``(files, names)``: each test file of ``layouts`` (path → bytes) with every member of every span
    side by side, and for each group function id the function id of each of its members there (index
    0: the original, ``j``: twin ``j``). The draws are ``seed``'s (the task's canary seed: every
    grading of a task shows the same file). ``None`` when a file would not parse or a member's name
    cannot be found in its text (no confirmation can be made).

    ``first`` (gatk36): group function id → the index of a member laid out before the other members of its span,
    every draw (names, the other members' order, the other spans) as without it: the second confirmation run
    (:func:`~pytest_homefield.run.twin_grading.confirm_excused`), in which that member runs before any other member
    of its group. ``orders``, when given, is filled with each group function id's members in the order laid out
    (their indexes, the first to run first)."""
    rng = random.Random(f"homefield-confirm-{seed}")
    files: dict[str, bytes] = {}
    names: dict[str, tuple[str, ...]] = {}
    for path, lay in sorted(layouts.items()):
        try:
            tree: ast.Module | None = parse_source(lay.text)
        except (SyntaxError, ValueError):
            tree = None
        namer = _Namer(rng, lay.text, tree)
        out: list[str] = []
        line = 1
        span_names: list[list[str]] = []
        lead_of = {lay.groups[f]: j for f, j in (first or {}).items() if f in lay.groups}  # span index → member
        groups_of: dict[int, list[str]] = {}
        for f, m in lay.groups.items():
            groups_of.setdefault(m, []).append(f)
        for k, span in enumerate(lay.spans):
            out += lay.lines[line - 1:span.start - 1]
            keep = rng.randrange(len(span.members))  # the member under the function's own name
            fresh = [span.name if j == keep else namer.name(span.name) for j in range(len(span.members))]
            order = list(range(len(span.members)))
            rng.shuffle(order)
            if lead_of.get(k) in order:
                order = [lead_of[k]] + [j for j in order if j != lead_of[k]]
            if orders is not None:
                for fid in groups_of.get(k, []):
                    orders[fid] = tuple(order)
            for n, j in enumerate(order):
                text = _renamed(span.members[j], span.name, fresh[j])
                if text is None:
                    return None
                out.append(("\n\n" if n else "") + (text if text.endswith(("\n", "\r")) else text + "\n"))
            span_names.append(fresh)
            line = span.end + 1
        out += lay.lines[line - 1:]
        text = "".join(out) + "".join(f"\n\n{t}" for t in lay.tail)
        try:
            parse_source(text)
        except (SyntaxError, ValueError):
            return None
        files[path] = text.encode(lay.encoding, errors="backslashreplace")
        for fid, n in lay.groups.items():
            prefix = fid.rsplit("::", 1)[0]
            names[fid] = tuple(f"{prefix}::{name}" for name in span_names[n])
    return files, names


def _renamed(member: str, name: str, new: str) -> str | None:
    """``member`` (a definition of ``name``) defining ``new`` instead; ``None`` when its header is not found."""
    if name == new:
        return member
    out, n = re.subn(rf"(\bdef\s+){re.escape(name)}(\s*\()", rf"\g<1>{new}\g<2>", member, count=1)
    return out if n else None


def member_function(member: str, *, asyncs: bool = False) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """``member`` (a definition's text, as :attr:`Span.members`) parsed: the indent of its first line (to put back
    on the text made from it) and its first function definition (``asyncs``: an ``async def`` too); ``None`` when it
    does not parse or holds none."""
    indent = member[:len(member) - len(member.lstrip())]
    indent = indent.splitlines()[-1] if indent.splitlines() else indent
    try:
        tree = parse_source(textwrap.dedent(member))
    except (SyntaxError, ValueError):
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if asyncs else (ast.FunctionDef,)
    func = next((n for n in tree.body if isinstance(n, kinds)), None)
    return None if func is None else (indent, func)
