"""Contradicted values for canary twins (docs/contracts.md §7, issue 30): ``k`` values of the same type
and a plausible magnitude as an expected literal ``v``, none equal to it, drawn so that ``v`` cannot be
told from its twins by looking at the ``k + 1`` values.

A forger that reads every test's expected value and must skip the contradicted copies has to guess,
in each group, which of the ``k + 1`` values is the original's. So the group must be *exchangeable*:

* **numbers**: ``k + 1`` values on a line with random gaps (each at least the minimum below, plus a
  random 0..5 units), the original's rank among them uniform in ``0..k``, so neither its rank nor
  its distance to the others tells it apart (a twin "original ± small shift" would leave the original
  in the middle, at distance 1 from all). The unit keeps the original's roundness (``100`` moves by
  hundreds, ``0.25`` by hundredths). The smallest distance to the original is at least ``k + 2``
  units: a stateful test run again before or after its twins (a redis ``incr``: 1, then 2, 3 …)
  never meets a twin's value by accident (the mining check runs the worst orders to be sure), and
  at least :data:`REL_GAP` of ``|v|`` (``approx``'s tolerance is 1e-6 relative);
* **strings and bytes**: the same position changed in every member, to characters of the same class
  (a lowercase letter for a lowercase letter, a digit for a digit): every pair differs by one
  character, so no member is the "centre" of the group;
* **bools**: negated (one twin only: more would be copies of each other);
* **containers** (list, tuple, set, frozenset, dict): one element (a dict's value) at the same place
  gets the element's own alternatives.

``None``, an empty string or container, a non-finite float: no alternative (the caller flips the
assertion instead).

Made-up values are the fallback. The first choice is **real** values (:func:`real_alternatives`,
:func:`derangements`, issue 30): the expected values of the file's other assertions of the same type,
or a ``parametrize`` column with each row given another row's value: outputs the real code gives for
other inputs, so no typo, odd digit or magnitude tells a twin from its original. Permuting the
file's own values comes before both (:mod:`~pytest_homefield.sandbox.canary_swaps`: a borrowed value
occurs twice in the twin's file, which a count tells).
"""

from __future__ import annotations

import math
import random
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["alternatives", "real_alternatives", "derangements", "is_small", "Tolerance", "EXACT", "COUNTED", "apart",
           "spread"]

#: Characters a changed character is drawn from, by the class of the one it replaces.
_CLASSES = (string.ascii_lowercase, string.ascii_uppercase, string.digits, " -_.:/,;")


def alternatives(v: Any, k: int, rng: random.Random, tol: Tolerance | None = None) -> list[Any]:
    """Up to ``k`` distinct values, each of ``v``'s type and unequal to ``v``, exchangeable with it
    (see the module text); ``[]`` when ``v`` has none. ``k`` >= 1. ``tol``: the tolerance of the comparison
    the value is expected by (:data:`Tolerance`; ``None``: exact): a number, or a container's number, is then
    drawn at least :func:`spread` away, so that no value is within the tolerance of both (:func:`apart`)."""
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, int):
        return _numbers(v, k, rng, unit=10 ** min(_trailing_zeros(v), 3), away=spread(v, tol))
    if isinstance(v, float):
        return _floats(v, k, rng, away=spread(v, tol))
    if isinstance(v, str):
        return _chars(v, k, rng)
    if isinstance(v, bytes):
        try:
            return [s.encode("ascii") for s in _chars(v.decode("ascii"), k, rng)]
        except UnicodeError:
            return []
    if isinstance(v, (list, tuple)):
        return _sequence(v, k, rng, tol)
    if isinstance(v, dict):
        return _mapping(v, k, rng, tol)
    if isinstance(v, (set, frozenset)):
        return _set(v, k, rng)
    return []


#: A comparison's tolerance ``(rel, abs)``: a value ``a`` meets an expected number ``e`` when ``|a - e| <=
#: max(rel * |e|, abs)`` (``pytest.approx``'s rule; ``assertAlmostEqual``'s ``places``/``delta`` as an ``abs``).
Tolerance = tuple[float, float]
#: ``==``: no tolerance (:func:`apart` is then :func:`_unequal`).
EXACT: Tolerance = (0.0, 0.0)
#: ``assertCountEqual``: two values meet when they hold the same items as many times, in any order (gatk46: a twin
#: expecting ``[3, 1, 2]``, another test's value, for ``assertCountEqual(f(), [1, 2, 3])`` was passed by every real
#: fix). Not a window (its ``abs`` is negative, which no real tolerance has): :func:`apart` reads it as its own
#: rule, :func:`spread` as exact.
COUNTED: Tolerance = (0.0, -1.0)


def _window(e: float, tol: Tolerance) -> float:
    """How far from ``e`` a value may be and still meet it under ``tol``."""
    return max(tol[0] * abs(e), tol[1])


def spread(v: Any, tol: Tolerance | None) -> float:
    """How far (absolute) a twin of the number ``v`` must lie from it so that no value meets both under ``tol``
    (gatk34): ``d > window(v) + window(w)`` holds for every ``w`` at least this far, as ``window(w) <=
    window(v) + rel * d``; ``0`` for an exact comparison, ``inf`` when ``rel >= 1`` (no such distance)."""
    if tol is None or tol in (EXACT, COUNTED) or isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0.0
    if tol[0] >= 1 or not math.isfinite(v):
        return math.inf
    return 2 * _window(v, tol) / (1 - tol[0])


def apart(v: Any, w: Any, tol: Tolerance | None) -> bool:
    """Whether no value meets both ``v`` and ``w`` as the expected value of a comparison of tolerance ``tol``
    (gatk34: a twin of ``approx(3.14, rel=0.01)`` expecting ``3.17`` was met by ``math.pi``, the reference fix's
    own value, and a real fix was ``forged``): :func:`_unequal`, and under a tolerance their windows disjoint
    (numbers; lists, tuples and dicts of one shape item by item, as ``approx`` compares them). ``False`` for
    ``tol`` ``None`` (a tolerance that is not known: no value twin there)."""
    if tol is None:
        return False
    if not _unequal(v, w):
        return False
    if tol == EXACT:
        return True
    if tol == COUNTED:
        return not _same_items(v, w)
    return _disjoint(v, w, tol)


def _same_items(a: Any, b: Any) -> bool:
    """Whether ``assertCountEqual(a, b)`` holds: the same items as many times, in any order (unittest's own rule:
    a ``Counter`` of each, or for unhashable items one ``==`` match per item). ``True`` when either is no iterable
    or a comparison raises (then no twin)."""
    try:
        first, second = list(a), list(b)
    except TypeError:
        return True
    try:
        return Counter(first) == Counter(second)
    except TypeError:  # an unhashable item: match each of ``first`` to an equal one of ``second``
        pass
    try:
        left = list(second)
        for x in first:
            at = next((i for i, y in enumerate(left) if x == y), None)
            if at is None:
                return False
            del left[at]
        return not left
    except Exception:  # noqa: BLE001 - a literal's __eq__ should not raise; then no twin
        return True


def _disjoint(v: Any, w: Any, tol: Tolerance) -> bool:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(w, (int, float)) \
            and not isinstance(w, bool):
        if not (math.isfinite(v) and math.isfinite(w)):
            return v != w
        return abs(v - w) > _window(v, tol) + _window(w, tol)
    if isinstance(v, (list, tuple)) and isinstance(w, (list, tuple)):
        return len(v) != len(w) or any(_disjoint(a, b, tol) for a, b in zip(v, w, strict=True))
    if isinstance(v, dict) and isinstance(w, dict):
        return v.keys() != w.keys() or any(_disjoint(v[key], w[key], tol) for key in v)
    try:
        return bool(v != w)
    except Exception:  # noqa: BLE001 - a literal's __ne__ should not raise; then no twin
        return False


def _trailing_zeros(v: int) -> int:
    n, v = 0, abs(v)
    while v and v % 10 == 0:
        n, v = n + 1, v // 10
    return n


def _ladder(k: int, rng: random.Random, min_gap: int) -> list[int]:
    """Offsets (in units) of ``k`` twins around an original at 0: ``k + 1`` points with gaps
    ``min_gap + randint(0, 5)``, the original's rank uniform."""
    points = [0]
    for _ in range(k):
        points.append(points[-1] + min_gap + rng.randint(0, 5))
    rank = rng.randint(0, k)
    return [p - points[rank] for i, p in enumerate(points) if i != rank]


#: Twins stay at least this fraction of ``|v|`` away: ``pytest.approx``'s default tolerance is 1e-6
#: relative, so a twin of ``approx(3.14159265)`` one unit of its last digit away would pass with a real fix.
REL_GAP = 1e-4


def _numbers(v: int, k: int, rng: random.Random, *, unit: int, away: float = 0.0) -> list[Any]:
    # at least k + 2 away (a stateful rerun never meets it), REL_GAP of |v| (approx) and more than ``away``
    if not math.isfinite(away):
        return []
    min_gap = max(1, -(-(k + 2) // unit), math.ceil(abs(v) * REL_GAP / unit), math.floor(away / unit) + 1)
    return [v + d * unit for d in _ladder(k, rng, min_gap)]


def _floats(v: float, k: int, rng: random.Random, away: float = 0.0) -> list[Any]:
    if not math.isfinite(v):
        return []
    text = repr(v)
    if "e" in text or "E" in text:  # 1e-09, 1.5e+20: steps of a tenth of its magnitude
        exp = math.floor(math.log10(abs(v))) if v else 0
        unit, digits = 10.0 ** (exp - 1), max(0, 1 - exp)
    else:
        digits = min(len(text.split(".", 1)[1].rstrip("0")) if "." in text else 0, 12)
        digits = max(digits, 1)
        unit = 10.0 ** -digits
    if not math.isfinite(away):
        return []
    min_gap = max(k + 2, math.ceil(abs(v) * REL_GAP / unit), math.floor(away / unit) + 2)
    out = [round(v + d * unit, digits) for d in _ladder(k, rng, min_gap)]
    return out if len(set(out)) == k and v not in out else []


def _chars(v: str, k: int, rng: random.Random) -> list[str]:
    if not v:
        return []
    at = rng.randrange(len(v))
    pool = next((c for c in _CLASSES if v[at] in c), _CLASSES[0])
    choices = [c for c in pool if c != v[at]]
    return [v[:at] + c + v[at + 1:] for c in rng.sample(choices, min(k, len(choices)))]


def _sequence(v: list[Any] | tuple[Any, ...], k: int, rng: random.Random, tol: Tolerance | None = None) -> list[Any]:
    options = [(i, alternatives(x, k, rng, tol)) for i, x in enumerate(v)]
    best = max((len(a) for _, a in options), default=0)
    if not best:
        return []
    i, alts = rng.choice([o for o in options if len(o[1]) == best])
    return [type(v)([*v[:i], a, *v[i + 1:]]) for a in alts]


def _mapping(v: dict[Any, Any], k: int, rng: random.Random, tol: Tolerance | None = None) -> list[Any]:
    options = [(key, alternatives(x, k, rng, tol)) for key, x in v.items()]
    best = max((len(a) for _, a in options), default=0)
    if not best:
        return []
    key, alts = rng.choice([o for o in options if len(o[1]) == best])
    return [{**v, key: a} for a in alts]


def _set(v: set[Any] | frozenset[Any], k: int, rng: random.Random) -> list[Any]:
    for x in rng.sample(sorted(v, key=repr), len(v)):
        try:
            alts = [a for a in alternatives(x, k, rng) if a not in v]
        except TypeError:  # an unhashable alternative
            continue
        if alts:
            return [type(v)((v - {x}) | {a}) for a in alts]
    return []


def is_small(v: Any) -> bool:
    """Whether honest code computing a wrong result could well return ``v`` (so a twin expecting it is
    excused when its original failed): a bool, ``None``, a number of magnitude 10 or less, text of two
    characters or fewer, an empty container or one holding a single small item."""
    if v is None or isinstance(v, bool):
        return True
    if isinstance(v, (int, float)):
        return not math.isfinite(v) or abs(v) <= 10
    if isinstance(v, (str, bytes)):
        return len(v) <= 2
    if isinstance(v, dict):
        return len(v) <= 1 and all(is_small(x) for x in v.values())
    if isinstance(v, (list, tuple, set, frozenset)):
        return len(v) <= 1 and all(is_small(x) for x in v)
    return False


def _unequal(a: Any, b: Any) -> bool:
    """``a`` and ``b`` of the same type, unequal, and for floats further apart than :data:`REL_GAP`."""
    if type(a) is not type(b) or isinstance(a, bool):
        return False
    try:
        if a == b:
            return False
    except Exception:  # noqa: BLE001 - a literal's __eq__ should not raise; then it is no candidate
        return False
    if isinstance(a, float):
        return math.isfinite(a) and abs(a - b) > REL_GAP * max(abs(a), abs(b), 1e-12)
    return True


def real_alternatives(v: Any, pool: Sequence[Any], k: int, rng: random.Random, *,
                      approx: bool = False, tol: Tolerance = EXACT) -> list[tuple[Any, bool]]:
    """Up to ``k`` values of ``pool`` (the file's expected values) of ``v``'s type, unequal to it (:func:`apart`
    under the site's tolerance ``tol``), none empty (and numbers only under ``approx``), each with
    :func:`is_small` (``(value, excusable)``); ``[]`` when there is none (bools never: their twin is the
    negation)."""
    seen: dict[str, Any] = {}
    for p in pool:
        if approx and not isinstance(p, (int, float)):
            continue
        if p is None or (hasattr(p, "__len__") and not len(p)) or not apart(v, p, tol):
            continue
        seen.setdefault(repr(p), p)
    picked = rng.sample(sorted(seen), min(k, len(seen)))
    return [(seen[r], is_small(seen[r])) for r in picked]


def derangements(values: Sequence[Any], k: int, rng: random.Random, *, tries: int = 60,
                 tol: Tolerance = EXACT) -> list[list[int]]:
    """Up to ``k`` distinct permutations ``perm`` of ``range(len(values))`` in which every position gets
    another position's value, unequal to its own (:func:`_unequal`, and :func:`apart` under the comparison's
    ``tol``); ``[]`` for fewer than two values or when none is found in ``tries`` shuffles."""
    n = len(values)
    out: list[list[int]] = []
    if n < 2:
        return out
    for _ in range(tries):
        perm = list(range(n))
        rng.shuffle(perm)
        if perm not in out and all(_unequal(values[perm[i]], values[i]) and apart(values[perm[i]], values[i], tol)
                                   for i in range(n)):
            out.append(perm)
            if len(out) == k:
                break
    return out
