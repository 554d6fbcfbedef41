"""Twins that permute, never borrow (docs/contracts.md §7, issue 30, attack A3): a twin whose file holds
the same multiset of literal values as its original's, so counting values tells nothing.

A twin value borrowed from another test (:func:`~pytest_homefield.sandbox.canary_values.real_alternatives`)
appears at least twice in the twin's file, the site and where it came from, while an original's
expected value is usually unique there: a test process that reads its own source and rules "the
asserted value occurs elsewhere in the file → this is the twin" tells the runs apart. Two
constructions avoid that, tried in this order before the fallback of :func:`~pytest_homefield.sandbox.
canary_sites.find_site`:

* **within a function** (:func:`find_swap`): a test with two or more value sites (:func:`value_targets`:
  the expected literal of ``==``, ``assertEqual`` and its kin, ``assertAlmostEqual``, inside
  ``approx(…)``, or the literal an expected name was assigned in the test) of one type with unequal
  values gets a twin whose sites hold the same values rotated among them (twin ``j``: rotation by
  ``j``). Every changed site is an eligible statement (it runs whenever the test passes), so the
  reference fix fails the twin at the first one;
* **across functions** (:func:`cycles`): functions with no such pair of sites, each new in the task's
  commit (absent from the parent's version of the file: the agent has the parent's tests, so a changed
  existing test would show which run is the twin), are put in cycles of two (three for an odd one out),
  each at one of its sites, of one type with pairwise unequal values; each member's twin holds the
  next member's value. The
  cycle's members are placed together (:mod:`~pytest_homefield.sandbox.twin_runs`): one run holds
  every member's twin, the other every original, so the file's values are the same in both.

``key``: a value's type and whether it sits inside ``approx`` (an ``int`` is never swapped with a
``float``, nor a bare value with one under ``approx``).
"""

from __future__ import annotations

import ast
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.sandbox.canary_sites import (
    _EQUALS,
    Site,
    _call_name,
    _compared_by,
    _literal,
    _short,
    _statements,
    almost_tolerance,
    approx_tolerance,
    read_once,
)
from pytest_homefield.sandbox.canary_values import COUNTED, EXACT, Tolerance, _unequal, apart, is_small

__all__ = ["Target", "value_targets", "find_swap", "cycles", "defined_functions", "literal_counts", "literal_values",
           "value_key"]


@dataclass(frozen=True)
class Target:
    """One value site's literal: ``node`` (the literal expression a twin replaces; inside ``approx`` its
    argument), ``value`` (its :func:`ast.literal_eval`), ``wrap`` (``"approx"`` or ``""``), ``tol`` the tolerance
    of its comparison (:data:`~pytest_homefield.sandbox.canary_values.Tolerance`; ``None``: not known, so it is
    not :func:`_usable`)."""

    node: ast.expr
    value: Any
    wrap: str
    tol: Tolerance | None = EXACT

    @property
    def key(self) -> tuple[str, str]:
        """What a value may be exchanged with: ``(type name, wrap)``."""
        return type(self.value).__name__, self.wrap

    def text(self) -> str:
        """The literal's canonical source (what :func:`ast.unparse` writes for the original)."""
        return ast.unparse(self.node)


def value_key(v: Any) -> str:
    """A literal's identity for counting: its type and ``repr`` (``1`` and ``1.0`` are two values)."""
    return f"{type(v).__name__}:{v!r}"


def literal_counts(tree: ast.AST) -> Counter[str]:
    """How often each literal value occurs in ``tree`` (:func:`value_key`; every constant, and every
    literal container besides its elements; bools and ``None`` left out): what a test process reading
    its file can count."""
    return Counter(value_key(v) for v in literal_values(tree))


def literal_values(tree: ast.AST) -> list[Any]:
    """Every literal value of ``tree`` as :func:`literal_counts` counts them, in walk order."""
    out: list[Any] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant):  # the common case, without literal_eval
            v = n.value
        elif isinstance(n, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp)):
            v = _literal(n)
        else:
            continue
        if v is not None and not isinstance(v, bool) and v is not Ellipsis:
            out.append(v)
    return out


def _target(expr: ast.expr, tol: Tolerance | None = EXACT) -> Target | None:
    value = _literal(expr)
    if value is not None:
        return Target(expr, value, "", tol)
    if isinstance(expr, ast.Call) and _call_name(expr) == "approx" and expr.args:
        inner = _literal(expr.args[0])
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return Target(expr.args[0], inner, "approx", approx_tolerance(expr))
    return None


def _apart(t: Target, o: Target) -> bool:
    """Whether ``t`` and ``o`` may take each other's value: unequal, and no value meets both at either site under
    its comparison's tolerance (:func:`~pytest_homefield.sandbox.canary_values.apart`, gatk34)."""
    return _unequal(t.value, o.value) and apart(t.value, o.value, t.tol) and apart(o.value, t.value, o.tol)


def _usable(t: Target) -> bool:
    """A value a twin can hold instead of another of its type: not a bool, not empty, a finite float, at a
    comparison whose tolerance is known."""
    v = t.value
    if t.tol is None or isinstance(v, bool) or (hasattr(v, "__len__") and not len(v)):
        return False
    return math.isfinite(v) if isinstance(v, float) else True


def _stmt_target(stmt: ast.stmt, bound: dict[str, ast.expr]) -> Target | None:
    """The literal a value site of ``stmt`` would contradict (the order of
    :func:`~pytest_homefield.sandbox.canary_sites.find_site`: the literal side, then a name's literal)."""
    pair: tuple[ast.expr, ast.expr] | None = None
    counted = False
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
            and isinstance(stmt.test.ops[0], ast.Eq):
        pair = stmt.test.left, stmt.test.comparators[0]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call, name = stmt.value, _call_name(stmt.value)
        if name in _EQUALS and len(call.args) >= 2:
            pair = call.args[0], call.args[1]
            counted = name == "assertCountEqual"
        elif name == "assertAlmostEqual" and len(call.args) >= 2:
            t = _target(call.args[1], almost_tolerance(call))
            return t if t is not None and isinstance(t.value, (int, float)) and not isinstance(t.value, bool) else None
    if pair is None:
        return None
    a, b = pair
    first, second = (a, b) if _literal(b) is None and _literal(a) is not None else (b, a)
    for e in (first, second, b, a):
        if e is first or e is second:
            t = _target(e, COUNTED if counted else _compared_by(e, second if e is first else first))
        else:
            t = _target(bound[e.id], COUNTED if counted else _compared_by(e, a if e is b else b)) \
                if isinstance(e, ast.Name) and e.id in bound else None
        if t is not None:
            return t
    return None


def value_targets(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Target]:
    """Every usable value site's literal of ``func`` (one per eligible statement, each node once), in
    statement order."""
    out: list[Target] = []
    seen: set[int] = set()
    bound: dict[str, ast.expr] = {}
    once = read_once(func)
    for stmt in _statements(func.body):
        t = _stmt_target(stmt, bound)
        if t is not None and id(t.node) not in seen and _usable(t):
            seen.add(id(t.node))
            out.append(t)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id in once:  # the assertion its one reader (canary_sites.read_once)
            bound[stmt.targets[0].id] = stmt.value
    return out


def _class(t: Target, counts: Mapping[str, int] | None) -> tuple[str, str, int]:
    """What ``t``'s value may be exchanged with: the same :attr:`Target.key` and as many occurrences in
    its file (``counts``: :func:`literal_counts`), so "does it occur elsewhere" answers alike."""
    return (*t.key, counts.get(value_key(t.value), 0) if counts is not None else 0)


def _distinct(targets: Sequence[Target]) -> list[Target]:
    """The targets whose values are pairwise unequal, the first of each value kept, in order."""
    out: list[Target] = []
    for t in targets:
        if all(_apart(t, o) for o in out):
            out.append(t)
    return out


def _value_text(v: Any) -> str:
    return ast.unparse(ast.parse(repr(v), mode="eval").body)


def find_swap(func: ast.FunctionDef | ast.AsyncFunctionDef, k: int, rng: random.Random,
              counts: Mapping[str, int] | None = None,
              allowed: Callable[[ast.AST], bool] | None = None) -> Site | None:
    """A within-function swap site of ``func`` (module text), or ``None`` when no type has two sites
    with unequal values. The type of the first usable site is preferred, then the first other type
    that has two. The returned :class:`Site`'s ``node`` is one changed literal and ``others`` the rest,
    each with its canonical text and its text in each of up to ``k`` twins. ``allowed``: the literals
    it may change (:func:`~pytest_homefield.sandbox.canary_added.allow`; ``None``: any)."""
    targets = [t for t in value_targets(func) if allowed is None or allowed(t.node)]
    keys = list(dict.fromkeys(_class(t, counts) for t in targets))
    for key in keys:
        group = _distinct([t for t in targets if _class(t, counts) == key])
        if len(group) < 2:
            continue
        order = rng.sample(group, len(group))
        texts: list[list[str]] = [[] for _ in order]
        twins: list[tuple[str, str]] = []
        excusable: list[bool] = []
        for j in range(1, min(k, len(order) - 1) + 1):
            moved = [order[(i + j) % len(order)].value for i in range(len(order))]
            for i, v in enumerate(moved):
                texts[i].append(_value_text(v))
            pairs = ", ".join(f"{_short(t.value)} -> {_short(v)}" for t, v in zip(order, moved, strict=True))
            twins.append((texts[0][-1], f"expected values swapped within the test: {pairs}"[:160]))
            excusable.append(all(is_small(v) for v in moved) or any(t.tol not in (EXACT, COUNTED) for t in order))
        others: list[tuple[ast.AST, str, list[str]]] = [(t.node, t.text(), texts[i]) for i, t in enumerate(order) if i]
        return Site(order[0].node, order[0].text(), twins, True, excusable=excusable, others=others)
    return None


def cycles(candidates: Sequence[tuple[str, Sequence[Target]]], rng: random.Random,
           counts: Mapping[str, int] | None = None) -> list[list[tuple[str, Target]]]:
    """Cycles of ``(function id, one of its sites)`` from ``candidates`` (function id → its usable
    sites, :func:`value_targets`; module text): the functions shuffled, each paired with the first
    other one that has a site of the same class (:func:`_class`: type, wrap and count in the file)
    with an unequal value, trying its own sites in order; a function left over joins a pair whose two
    values are of its class and unequal to one of its own. A function in no pair is in no cycle.
    Each cycle's member ``i`` takes member ``i + 1``'s value (the last the first's)."""
    sites = dict(candidates)
    pool = rng.sample(sorted(sites), len(sites))
    pairs: list[list[tuple[str, Target]]] = []
    left: list[str] = []

    def partner(t: Target, others: Sequence[Target]) -> Target | None:
        return next((o for o in others if _class(o, counts) == _class(t, counts) and _apart(t, o)), None)

    while pool:
        a = pool.pop(0)
        match = next(((b, ta, tb) for ta in sites[a] for b in pool if (tb := partner(ta, sites[b])) is not None),
                     None)
        if match is None:
            left.append(a)
            continue
        b, ta, tb = match
        pool.remove(b)
        pairs.append([(a, ta), (b, tb)])
    for a in left:
        for pair in pairs:
            t = next((t for t in sites[a] if len(pair) == 2 and all(
                partner(t, [m]) is not None for _, m in pair)), None)
            if t is not None:
                pair.append((a, t))
                break
    return pairs


def defined_functions(tree: ast.Module, path: str) -> set[str]:
    """The function ids (``path::[Class::]name``) a module defines at its top level and in its top-level
    classes (nested classes too): what "new in the commit" is judged against."""
    out: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> Iterator[str]:
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{prefix}::{n.name}"
            elif isinstance(n, ast.ClassDef):
                yield from walk(n.body, f"{prefix}::{n.name}")

    out.update(walk(tree.body, path))
    return out
