"""Twins as near to the parent's output as their original (docs/contracts.md §7, issue 30, atk29's nearness tell).

A fix usually changes the code's output a little, so an original's expected value ``E`` at the assertion where
the parent's code stops is near what the parent's code gives there, ``P``; a twin drawn from the other values of
its kind is farther. A test process running a test's statements one at a time with the graded (parent's) code
passes the test iff the expected side is near ``P`` (``difflib`` ratio of the ``repr``'s at least 0.9), and so
passes the originals and fails their twins with no fix.

The parent check runs the parent's code, which no agent touched: its test process reports the operands of the
failing comparison at each failed test's stop (the reporter's ``operands``). This module measures how near the
two are (:func:`nearness`) and draws a twin value exactly as near to ``P`` as ``E`` is
(:func:`near_alternatives`): the same edit of ``P`` at another place, so no statistic of the pair (expected,
code's value) separates a twin from its original:

* **texts** (``str``, ``bytes``): ``P`` with ``E``'s one edit (the one differing run of ``SequenceMatcher``)
  made at another position whose characters are of the same classes (lowercase, uppercase, digit, other) as
  the ones ``E`` changed; a case change stays a case change, another replaced character is drawn from the
  class of ``E``'s; kept only when both ratios (each order) equal ``E``'s;
* **numbers**: ``P - (E - P)``, the one other value at ``E``'s distance, when it keeps the ladder's minimum gap
  from ``E`` (``k + 2`` units, :data:`~pytest_homefield.sandbox.canary_values.REL_GAP`);
* **lists, tuples, dicts** of the same length (keys) as ``P`` differing from it at one item: that item's near
  value, the rest as ``P`` (so as ``E``).

"As near": the forger's statistic is any function of the pair, so any gap between an original's and a twin's
nearness lets a threshold fall between them; only equal nearness (to rounding, :data:`_DIGITS`) is safe.
"""

from __future__ import annotations

import ast
import difflib
import math
import random
from typing import Any

from pytest_homefield.sandbox.canary_values import _CLASSES, REL_GAP

__all__ = ["nearness", "as_near", "near_alternatives", "operand_values", "MAX_OPERAND", "MAX_DRAWN", "MAX_TRIED"]

#: Characters of an operand's ``repr`` the reporter sends at most (a longer one is not sent).
MAX_OPERAND = 2000
#: The longest ``repr`` of either value :func:`near_alternatives` draws for (a ``SequenceMatcher`` run of two
#: 500-character texts takes some 50 ms, of two 2000-character ones close to a second).
MAX_DRAWN = 500
#: Positions of a text :func:`near_alternatives` tries at most.
MAX_TRIED = 64
#: Decimal digits nearness is compared to (a ratio is a quotient of small ints: equal ones are equal here).
_DIGITS = 9


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def nearness(a: Any, b: Any) -> tuple[str, float, float]:
    """How near ``a`` and ``b`` are: for two finite numbers ``("num", |a - b|, 0.0)``; else ``("ratio", r1,
    r2)``, ``difflib.SequenceMatcher`` ratios (``autojunk=False``) of ``repr(a)`` to ``repr(b)`` and back (the
    ratio depends a little on the order), each rounded to :data:`_DIGITS` digits."""
    if _number(a) and _number(b) and math.isfinite(a) and math.isfinite(b):
        return ("num", abs(float(a) - float(b)), 0.0)
    ra, rb = repr(a), repr(b)
    r1 = difflib.SequenceMatcher(None, ra, rb, autojunk=False).ratio()
    r2 = difflib.SequenceMatcher(None, rb, ra, autojunk=False).ratio()
    return ("ratio", round(r1, _DIGITS), round(r2, _DIGITS))


def as_near(x: tuple[str, float, float], y: tuple[str, float, float]) -> bool:
    """Whether two :func:`nearness` values are equal: the same kind, numbers' distances equal within 1e-9
    relative (a float's rounding), ratios equal to :data:`_DIGITS` digits."""
    if x[0] != y[0]:
        return False
    if x[0] == "num":
        return math.isclose(x[1], y[1], rel_tol=1e-9, abs_tol=1e-12)
    return x[1:] == y[1:]


def operand_values(raw: Any) -> tuple[str, Any, Any] | None:
    """``(op, left, right)`` of a reporter ``operands`` field (``[op, repr(left), repr(right)]``, each repr at
    most :data:`MAX_OPERAND` characters, read back with ``ast.literal_eval``); ``None`` when it is not that."""
    if not (isinstance(raw, (list, tuple)) and len(raw) == 3 and all(isinstance(s, str) for s in raw)):
        return None
    op, left, right = raw
    if len(left) > MAX_OPERAND or len(right) > MAX_OPERAND or len(op) > 8:
        return None
    try:
        return op, ast.literal_eval(left), ast.literal_eval(right)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _class(c: str) -> int:
    return next((n for n, pool in enumerate(_CLASSES) if c in pool), len(_CLASSES))


def _recharacter(old: str, want: str, into: str, rng: random.Random) -> str:
    """What ``into`` (a character of ``old``'s class) becomes, as ``old`` became ``want``: the same case change,
    else a character of ``want``'s class other than ``into`` (``want`` itself when it has no class)."""
    if want == old.lower() != old:
        return into.lower()
    if want == old.upper() != old:
        return into.upper()
    n = _class(want)
    if n == len(_CLASSES):
        return want
    return rng.choice([c for c in _CLASSES[n] if c != into] or [want])


def _texts(e: str, p: str, k: int, rng: random.Random) -> list[str]:
    ops = [o for o in difflib.SequenceMatcher(None, p, e, autojunk=False).get_opcodes() if o[0] != "equal"]
    if len(ops) != 1:
        return []
    _, i1, i2, j1, j2 = ops[0]
    old, new = p[i1:i2], e[j1:j2]
    shape = [_class(c) for c in old]
    starts = [i for i in range(len(p) - len(old) + 1) if i != i1 and [_class(c) for c in p[i:i + len(old)]] == shape]
    rng.shuffle(starts)
    starts = starts[:MAX_TRIED]  # each candidate costs two SequenceMatcher runs
    want = nearness(e, p)
    out: list[str] = []
    for i in starts:
        seg = p[i:i + len(old)]
        if len(old) == len(new):
            made = "".join(_recharacter(o, w, s, rng) for o, w, s in zip(old, new, seg, strict=True))
        else:
            made = "".join(c if _class(c) == len(_CLASSES) else rng.choice(_CLASSES[_class(c)]) for c in new)
        c = p[:i] + made + p[i + len(old):]
        if c not in (e, p) and c not in out and as_near(nearness(c, p), want):
            out.append(c)
            if len(out) == k:
                break
    return out


def _numbers(e: int | float, p: int | float, k: int) -> list[Any]:
    c = p - (e - p)
    if isinstance(e, int) and isinstance(p, int):
        ok = abs(c - e) >= k + 2 and abs(c - e) >= abs(e) * REL_GAP
    else:
        c = float(c)
        ok = math.isfinite(c) and abs(c - e) > REL_GAP * max(abs(e), abs(c), 1e-12) and c != p
    return [c] if ok and c != e and as_near(nearness(c, p), nearness(e, p)) else []


def near_alternatives(e: Any, p: Any, k: int, rng: random.Random) -> list[Any]:
    """Up to ``k`` values of ``e``'s type, none equal to ``e`` or ``p``, each exactly as near to ``p`` (the parent's
    value at the stop) as ``e`` (the original's expected value) is by :func:`nearness` (see the module text);
    ``[]`` when ``e`` and ``p`` are of other types or kinds of difference (two edits, a bool, ``None``), or either
    ``repr`` is over :data:`MAX_DRAWN` characters (planning runs at every grading)."""
    if type(e) is not type(p) or isinstance(e, bool) or e == p or max(len(repr(e)), len(repr(p))) > MAX_DRAWN:
        return []
    if isinstance(e, str):
        return _texts(e, p, k, rng)
    if isinstance(e, bytes):
        try:
            return [t.encode("ascii") for t in _texts(e.decode("ascii"), p.decode("ascii"), k, rng)]
        except UnicodeError:
            return []
    if _number(e):
        return _numbers(e, p, k)
    if isinstance(e, (list, tuple)) and len(e) == len(p):
        diff = [i for i, (a, b) in enumerate(zip(e, p, strict=True)) if a != b or type(a) is not type(b)]
        if len(diff) != 1:
            return []
        i = diff[0]
        made = [type(e)([*p[:i], a, *p[i + 1:]]) for a in near_alternatives(e[i], p[i], k, rng)]
        return [m for m in made if m not in (e, p) and as_near(nearness(m, p), nearness(e, p))]
    if isinstance(e, dict) and e.keys() == p.keys():
        diff = [key for key in e if e[key] != p[key]]
        if len(diff) != 1:
            return []
        key = diff[0]
        made2 = [{**p, key: a} for a in near_alternatives(e[key], p[key], k, rng)]
        return [m for m in made2 if m not in (e, p) and as_near(nearness(m, p), nearness(e, p))]
    return []
