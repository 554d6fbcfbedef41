"""The sealed comparisons other than ``==`` (cmp35, issue 30; docs/contracts.md §7 "Sealed sites").

A sealed site of kind ``==`` (:class:`~pytest_homefield.sandbox.seal_sites.SealSite`) is judged on the host by
``value == L``. The other kinds are judged by a :class:`SealCheck`, given to the outcome channel in place of the
expected value (:func:`~pytest_homefield.sandbox.outcomes.seal_verdict` calls :meth:`SealCheck.holds`):

- ``"match"``: ``with pytest.raises(E, match=L):`` / ``with self.assertRaisesRegex(E, L):``; the value is the
  message of the exception of class ``E`` the body raised, as the test process's pytest stringifies it for
  ``match`` (unittest: ``str(exc)``); it holds when ``re.search(L, message)`` finds a match (pytest's rule, and
  unittest's ``re.compile(L).search``). ``L`` is sealed only when :func:`bounded_regex` holds, and a message
  longer than :func:`match_text_cap` is searched in linear time (:func:`regex_search`) or is opaque, so that the
  host's search of one message takes at most about 0.1 s (no regex a test process could answer with a message that
  stalls the host); a message that matches a neighbour of ``L`` too is opaque (:func:`regex_neighbours`).
- ``"in"``: ``assert L in A`` / ``self.assertIn(L, A)``, ``L`` a ``str`` or ``bytes`` literal, or (shape37) any
  other literal with a neighbour (:func:`member_neighbours`: a number, a tuple, a set …); holds when ``L in value``
  (a ``TypeError``, as ``'a' in b'a'``, does not hold) and no neighbour of ``L`` is in it (:func:`text_neighbours`,
  :func:`member_neighbours`: else opaque).
- ``"approx"``: ``assert A == pytest.approx(L, rel=…, abs=…, nan_ok=…)`` with literal arguments; holds when
  ``pytest.approx(L, **options) == value`` on the host.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
import string
import warnings
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SealCheck", "KINDS", "MAX_MATCH_TEXT", "MATCH_WORK", "match_text_cap", "bounded_regex",
           "required_change",
           "regex_literal_runs", "APPROX_OPTIONS", "MIN_LITERAL_RUN", "text_neighbours", "regex_neighbours",
           "NEIGHBOUR_CLASSES", "MAX_LONG_MATCH_TEXT", "regex_search",
           "regex_neighbourhoods", "MAX_NEIGHBOUR_CHARS", "approx_judged_alike", "member_neighbours",
           "member_leaves", "MAX_MEMBER_LEAVES"]

#: The comparison kinds of a sealed site: ``==`` (the value), and those judged by a :class:`SealCheck`.
KINDS = ("==", "match", "in", "approx")
#: Characters of an exception message a ``match`` site judges at most; a longer one is opaque (a failure, never
#: ``forged``).
MAX_MATCH_TEXT = 2000
#: A bound of the host's work searching one message with a regex of one repeat: ``n²·len(pattern)``
#: (:func:`match_text_cap`).
MATCH_WORK = 40_000_000
#: The keyword arguments of ``pytest.approx`` a sealed site may give (each a literal).
APPROX_OPTIONS = ("rel", "abs", "nan_ok")
#: A run of at least this many characters a ``match`` regex matches literally is a text of it that, found
#: elsewhere in the hidden tests, makes the site readable there (:func:`regex_literal_runs`).
MIN_LITERAL_RUN = 4

try:  # Python 3.11+ (the same modules as sre_constants and sre_parse, which warn there)
    _sre_c: Any = importlib.import_module("re._constants")
    _sre_p: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python 3.10
    _sre_c = importlib.import_module("sre_constants")
    _sre_p = importlib.import_module("sre_parse")

#: Tokens matching one character, that a bounded regex may repeat.
_ONE_CHAR = {_sre_c.LITERAL, _sre_c.NOT_LITERAL, _sre_c.ANY, _sre_c.IN}
#: Tokens a bounded regex may hold outside a repeat (one character, an anchor, a group).
_PLAIN = _ONE_CHAR | {_sre_c.AT, _sre_c.SUBPATTERN}
_REPEATS = {_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT}
_POSSESSIVE = getattr(_sre_c, "POSSESSIVE_REPEAT", None)


def _parse(pattern: str) -> Any:
    try:
        with warnings.catch_warnings():  # a made-up candidate ("[[b-z]") may look like a nested set: parsed, not used
            warnings.simplefilter("ignore")
            return _sre_p.parse(pattern)
    except Exception:  # noqa: BLE001 - re.error, RecursionError, OverflowError: not a regex we seal
        return None


def bounded_regex(pattern: str) -> bool:
    """Whether :func:`_repeats` finds ``pattern`` bounded."""
    return _repeats(pattern) is not None


def match_text_cap(pattern: str) -> int:
    """Characters of a message the host searches with the bounded regex ``pattern`` at most: :data:`MAX_MATCH_TEXT`
    when it has no repeat (a search is then ``O(n·len(pattern))``), else the largest ``n`` with ``n²·len(pattern)``
    within :data:`MATCH_WORK` (at most :data:`MAX_MATCH_TEXT`): a longer message is opaque. Measured (CPython
    3.11, ``'a' * n`` searched with ``a.*`` and 100 more ``a`` and a ``b``): 2000 characters took 1.2 s; the cap,
    632, about 0.1 s."""
    n = _repeats(pattern)
    if not n:
        return MAX_MATCH_TEXT
    return min(MAX_MATCH_TEXT, math.isqrt(MATCH_WORK // max(1, len(pattern))))


def _repeats(pattern: str) -> int | None:
    """The number of repeats (0 or 1) of ``pattern`` when it compiles and is made only of characters, character
    classes, ``.``, anchors and groups (no alternation ``|``, back reference, look-around, conditional), with at
    most one repeat (``*``, ``+``, ``?``, ``{m,n}``), itself of one character (``\\d+``, ``.*``,
    ``[a-z]{2,3}``): searching a text of ``n`` characters then tries each start with at most ``n`` lengths of that
    repeat, ``O(n²·len(pattern))`` steps at worst (:func:`match_text_cap` bounds ``n``). Nested repeats or two of
    them are what make a backtracking search exponential or cubic. ``None`` for any other."""
    if not isinstance(pattern, str):
        return None
    try:
        re.compile(pattern)
    except Exception:  # noqa: BLE001 - re.error, RecursionError, OverflowError
        return None
    parsed = _parse(pattern)
    if parsed is None:
        return None
    repeats = [0]

    def ok(items: Any, depth: int) -> bool:
        if depth > 20:
            return False
        for op, av in items:
            if op in _ONE_CHAR or op == _sre_c.AT:
                continue
            if op == _sre_c.SUBPATTERN:
                if not ok(av[-1], depth + 1):
                    return False
            elif op in _REPEATS or (_POSSESSIVE is not None and op == _POSSESSIVE):
                repeats[0] += 1
                body = list(av[2])
                if repeats[0] > 1 or len(body) != 1 or body[0][0] not in _ONE_CHAR:
                    return False
            else:
                return False
        return True

    return repeats[0] if ok(parsed, 0) else None


def required_change(pattern: str, start: int, end: int, new: str) -> bool:
    """Whether ``pattern[start:end]`` replaced by ``new`` changes characters every match of ``pattern`` holds
    (gatk46, a ``raises(match=…)`` twin's made-up message, :func:`~pytest_homefield.sandbox.canary_sites.
    _made_up_message`): both the replaced characters in ``pattern`` and ``new``'s in the changed pattern are literal
    characters of the regex's top level, its groups or a repeat of at least one, never inside an alternation ``|``,
    a class ``[…]``, an optional or zero-or-more repeat, a look-around, a conditional, a group's name or flags, or a
    verbose comment; and in both, next to another literal character of the same sequence (:func:`_anchored`: the
    changed word never stands alone). Else a text matching the original need not hold the replaced part at all, and
    matches the changed pattern too: ``must be (positive|zero)`` changed to ``must be (positive|too)`` is matched by
    ``must be zero``, a real fix's message (``colou?r`` → ``colox?r`` by ``color``, ``[Ii]nvalid`` → ``[Xi]nvalid`` by
    ``invalid``). ``False`` when either does not parse or nothing is replaced."""
    if not 0 <= start < end <= len(pattern) or not new:
        return False
    mark = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in pattern and chr(c) not in new)
    for text, n in ((pattern[:start] + mark * (end - start) + pattern[end:], end - start),
                    (pattern[:start] + mark * len(new) + pattern[end:], len(new))):
        parsed = _parse(text)
        if parsed is None or _required_marks(parsed, ord(mark), 0) != n or not _anchored(parsed, ord(mark), 0):
            return False
    return True


def _anchored(items: Any, mark: int, depth: int) -> bool:
    """Whether a ``LITERAL`` of code ``mark`` in ``items`` (a parsed regex), at a place every match passes, has another
    literal character right before or after it in the same sequence (:func:`required_change`): a twin's changed part
    must come with text of the original around it, else a real message holding the original's part and, elsewhere,
    the twin's word matches both (``match="negative"`` changed to ``"must"``, a word of the parent's messages, is
    matched by ``value must not be negative``: 24 of 40 seeds)."""
    if depth > 40:
        return False
    seq = list(items)
    for i, (op, av) in enumerate(seq):
        if op == _sre_c.LITERAL and av == mark:
            near = [seq[j] for j in (i - 1, i + 1) if 0 <= j < len(seq)]
            if any(o == _sre_c.LITERAL and v != mark for o, v in near):
                return True
        elif op == _sre_c.SUBPATTERN:
            if _anchored(av[-1], mark, depth + 1):
                return True
        elif op == getattr(_sre_c, "ATOMIC_GROUP", None):
            if _anchored(av, mark, depth + 1):
                return True
        elif (op in _REPEATS or (_POSSESSIVE is not None and op == _POSSESSIVE)) and av[0] >= 1:
            if _anchored(av[2], mark, depth + 1):
                return True
    return False


def _required_marks(items: Any, mark: int, depth: int) -> int:
    """How many ``LITERAL`` tokens of code ``mark`` ``items`` (a parsed regex) holds where every match passes
    (:func:`required_change`): its own sequence, groups, atomic groups and repeats of at least one; none counted
    inside anything else."""
    if depth > 40:
        return 0
    n = 0
    for op, av in items:
        if op == _sre_c.LITERAL:
            n += av == mark
        elif op == _sre_c.SUBPATTERN:
            n += _required_marks(av[-1], mark, depth + 1)
        elif op == getattr(_sre_c, "ATOMIC_GROUP", None):
            n += _required_marks(av, mark, depth + 1)
        elif (op in _REPEATS or (_POSSESSIVE is not None and op == _POSSESSIVE)) and av[0] >= 1:
            n += _required_marks(av[2], mark, depth + 1)
    return n


def regex_literal_runs(pattern: str) -> list[str]:
    """The texts ``pattern`` matches literally: each maximal run of literal characters at its top level and in its
    groups (``r"width must be at least \\d+"`` → ``["width must be at least "]``, ``r"1\\.5"`` → ``["1.5"]``)
    of at least :data:`MIN_LITERAL_RUN` characters, and the whole of a pattern made of literal characters only
    whatever its length. Empty when it does not parse."""
    parsed = _parse(pattern)
    if parsed is None:
        return []
    runs: list[str] = []
    every: list[bool] = [True]

    def walk(items: Any) -> None:
        cur: list[str] = []
        for op, av in items:
            if op == _sre_c.LITERAL:
                cur.append(chr(av))
                continue
            every[0] = False
            runs.append("".join(cur))
            cur = []
            if op == _sre_c.SUBPATTERN:
                walk(av[-1])
        runs.append("".join(cur))

    walk(parsed)
    out = [r for r in runs if len(r) >= MIN_LITERAL_RUN]
    whole = "".join(runs)
    if every[0] and whole and whole not in out:
        out.append(whole)
    return out


#: The classes of characters a neighbour of ``L`` changes one character within (satk35): a digit to each other digit,
#: a lowercase letter to each other lowercase letter, an uppercase one to each other uppercase one, an ASCII
#: punctuation character to each other one (``"=>"`` has neighbours too: every pair of them is in 1025 characters).
NEIGHBOUR_CLASSES = (string.digits, string.ascii_lowercase, string.ascii_uppercase, string.punctuation)


#: Characters of ``L`` whose neighbours the host checks at most (satk35): a ``match`` site's, each a search of the
#: message; an ``in`` site's, each 25 ``in`` at most. Spread evenly over ``L``'s characters of a class when it has
#: more, so that every run of ``len(L) / K`` characters a forger does not know holds one.
MAX_NEIGHBOUR_CHARS = {"match": 12, "in": 64}


def _spread(items: list[Any], k: int) -> list[Any]:
    """At most ``k`` of ``items``, evenly spread (the first and the last among them), in order."""
    if len(items) <= k:
        return items
    return [items[round(j * (len(items) - 1) / (k - 1))] for j in range(k)]


def _mates(c: str) -> str:
    """The characters of ``c``'s class in :data:`NEIGHBOUR_CLASSES` other than ``c`` (none when it is in none)."""
    for cls in NEIGHBOUR_CLASSES:
        if c in cls:
            return cls.replace(c, "")
    return ""


def text_neighbours(text: str | bytes) -> list[str | bytes]:
    """The neighbours of an ``in`` site's member ``text`` (satk35): ``text`` with one character of a class of
    :data:`NEIGHBOUR_CLASSES` changed to another character of that class, for each such character (``"404"`` →
    ``"004"``, …, ``"904"``, ``"414"``, …, ``"409"``: 27; a letter's: 25 each); bytes likewise (their Latin-1
    characters). Empty when it has no such character. A value holding ``text`` and one of these holds many guesses
    at once (every text of three digits is in 1002 characters, every ``E`` and three digits in 4000): it does not
    tell ``text`` from its neighbours, so it is nothing to judge (:meth:`SealCheck.holds`). A value holding
    ``text`` and none of them holds no two texts that differ in one such character: a value made without ``text``,
    even knowing all of it but the characters it varies, holds it with a chance of at most one in the smallest
    class's size among those (10 for a digit)."""
    chars = text.decode("latin-1") if isinstance(text, bytes) else text
    at = _spread([i for i, c in enumerate(chars) if _mates(c)], MAX_NEIGHBOUR_CHARS["in"])
    out = [chars[:i] + m + chars[i + 1:] for i in at for m in _mates(chars[i])]
    return [t.encode("latin-1") for t in out] if isinstance(text, bytes) else list(out)


#: shape37: leaves (numbers, bools, strings, bytes) an ``in`` site's member that is no ``str``/``bytes`` may have at
#: most (a larger one is not sealed: its neighbours, :func:`member_neighbours`, are each a copy of it).
MAX_MEMBER_LEAVES = 64


def _number_mates(v: int | float) -> list[int | float]:
    """The neighbours of a number leaf (stride40): ``v - 1``, ``v + 1``, and ``v`` spelt in decimal (``repr``:
    ``16``, ``0.25``, ``1e-05``) with one digit changed to each other digit, for each of its digits (at most
    :data:`MAX_NEIGHBOUR_CHARS` ``["in"]``, evenly spread, the last among them), read back as ``v``'s type (each
    other than ``v``: ``1e+300 ± 1`` is ``1e+300``): ``16`` →
    ``15``, ``17``, ``06`` … ``96``, ``10`` … ``19``; ``0.25`` → ``-0.75``, ``1.25``, ``2.25`` … ``9.25``, ``0.05`` …
    ``0.95``, ``0.20`` … ``0.29`` (an infinite one, ``1e+908``, left out). :func:`text_neighbours`' rule for its
    spelling: a value holding ``v`` and none of these holds no two numbers whose spellings differ in one digit, so
    at most one of every ten that differ only in the last digit, whatever its stride (gatk38: every even number
    below 1000 held an even ``v`` and neither ``v - 1`` nor ``v + 1``; it holds ``v + 2`` or ``v - 2`` whenever
    the last digit allows, ``v ± 20`` otherwise, and a stride-``s`` flood ``v ± k·s`` for each ``k·s`` that moves
    one digit), with the chance a value made without ``v`` holds it at most one in ten even knowing all of ``v``
    but one digit (a stride of 9, the numbers of one digit sum mod 9, holds one in nine). Empty for a non-finite
    float; ``v ± 1`` alone for an ``int`` too long to spell (``ValueError``)."""
    if isinstance(v, float) and not math.isfinite(v):
        return []
    near: list[int | float] = [w for w in (v - 1, v + 1) if w != v]  # a float past 2**53 is its own ± 1
    try:
        spelt = repr(v)
    except ValueError:  # an int past sys.get_int_max_str_digits(): ±1 alone
        return near
    read: type[int] | type[float] = int if isinstance(v, int) else float
    seen = {v, *near}
    for i in _spread([i for i, c in enumerate(spelt) if c in string.digits], MAX_NEIGHBOUR_CHARS["in"]):
        for m in _mates(spelt[i]):
            w = read(spelt[:i] + m + spelt[i + 1:])  # a repr with one digit changed: always a number of its type
            if w not in seen and (read is int or math.isfinite(w)):
                seen.add(w)
                near.append(w)
    return near


def _leaf_mates(v: Any) -> list[Any]:
    """The neighbours of one leaf of a member (:func:`member_neighbours`): an ``int`` or a finite ``float`` →
    :func:`_number_mates` (stride40: ``v ± 1`` and its spelling with one digit changed); a ``bool`` → the other; a
    ``str`` or ``bytes`` → some of :func:`text_neighbours`' (8 of its characters that have mates, evenly spread, each
    changed to 4 of its mates, evenly spread: the host's work stays bounded); anything else (``None``, ``complex``,
    an infinite float) none."""
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, (int, float)):
        return _number_mates(v)
    if isinstance(v, (str, bytes)):
        chars = v.decode("latin-1") if isinstance(v, bytes) else v
        out = [chars[:i] + m + chars[i + 1:] for i in _spread([i for i, c in enumerate(chars) if _mates(c)], 8)
               for m in _spread(list(_mates(chars[i])), 4)]
        return [t.encode("latin-1") for t in out] if isinstance(v, bytes) else out
    return []


def member_leaves(value: Any) -> int | None:
    """How many leaves (:func:`_leaf_mates`' values and ``None``) an ``in`` member's value has, nested in ``tuple``,
    ``list``, ``set``, ``frozenset`` and ``dict`` (keys and values); ``None`` for any other value in it."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return 1
    if isinstance(value, (tuple, list, set, frozenset)):
        parts: list[Any] = list(value)
    elif isinstance(value, dict):
        parts = [*value.keys(), *value.values()]
    else:
        return None
    n = 0
    for p in parts:
        k = member_leaves(p)
        if k is None:
            return None
        n += k
    return n


def _variants(v: Any) -> list[Any]:
    """``v`` with exactly one leaf replaced by one of its :func:`_leaf_mates`, every way (a set or a dict key whose
    variant collides with another item is left out)."""
    out: list[Any] = []
    if isinstance(v, (tuple, list)):
        for i, item in enumerate(v):
            for w in _variants(item):
                out.append(type(v)([*v[:i], w, *v[i + 1:]]))
    elif isinstance(v, (set, frozenset)):
        for item in v:
            for w in _variants(item):
                rest = set(v) - {item}
                if w not in rest:
                    out.append(type(v)(rest | {w}))
    elif isinstance(v, dict):
        for k, x in v.items():
            out += [{**v, k: w} for w in _variants(x)]
            for w in _variants(k):
                if w not in v:
                    out.append({(w if j == k else j): y for j, y in v.items()})
    else:
        out = _leaf_mates(v)
    return out


def member_neighbours(value: Any) -> list[Any]:
    """The neighbours of an ``in`` site's member ``value`` that is no ``str``/``bytes`` (shape37: ``assert 3 in A``,
    ``assert (1, "a") in A``, ``self.assertIn({"a", "b"}, A)``): ``value`` with one leaf changed to a neighbour of it
    (:func:`_leaf_mates`: ``(1, "a")`` → ``(0, "a")``, ``(2, "a")``, ``(1, "b")`` …), at most 256, evenly spread.
    A container holding ``value`` and one of these holds many guesses at once (``list(range(2000))`` holds every
    small ``int``): it does not tell ``value`` from its neighbours, so it is nothing to judge
    (:meth:`SealCheck.holds`), as :func:`text_neighbours` for a text. Empty for a value of more than
    :data:`MAX_MEMBER_LEAVES` leaves, or with no leaf that has a neighbour (``None``, ``()``: not sealed)."""
    n = member_leaves(value)
    if n is None or n > MAX_MEMBER_LEAVES:
        return []
    return _spread(_variants(value), 256)


def _tokens(items: Any) -> list[Any]:
    """A parsed regex's tokens flattened in order (a group's and a repeat's body between their own tokens), each
    compared by value: two patterns with equal lists match the same texts."""
    out: list[Any] = []
    for op, av in items:
        if op == _sre_c.SUBPATTERN:
            out.append((str(op), repr(av[:-1])))
            out.extend(_tokens(av[-1]))
            out.append(("end",))
        elif op in _REPEATS or (_POSSESSIVE is not None and op == _POSSESSIVE):
            out.append((str(op), av[0], av[1]))
            out.extend(_tokens(av[2]))
            out.append(("end",))
        elif op == _sre_c.LITERAL:
            out.append(("literal", av))
        else:
            out.append((str(op), repr(av)))
    return out


def _class_of(mates: str) -> str:
    """A regex class of the characters ``mates``, each escaped (``]``, ``\\``, ``^``, ``-`` of the punctuation)."""
    return "[" + "".join(re.escape(m) if not m.isalnum() else m for m in mates) + "]"


@functools.lru_cache(maxsize=256)
def _neighbour_positions(pattern: str) -> tuple[tuple[int, str], ...]:
    """``(index, mates)`` of each literal character of ``pattern`` of a class of :data:`NEIGHBOUR_CLASSES` that the
    regex matches as that character (not ``d`` of ``\\d``, a repeat's count, a class's member or a flag): those
    whose replacement by ``[mates]`` parses as ``pattern`` does but for that one token; none when ``pattern`` does
    not parse."""
    base = _parse(pattern)
    if base is None:
        return ()
    want = _tokens(base)
    out = []
    for i, c in enumerate(pattern):
        mates = _mates(c)
        if not mates or (i and pattern[i - 1] == "\\"):
            continue
        got = _parse(pattern[:i] + _class_of(mates) + pattern[i + 1:])
        if got is None:
            continue
        toks = _tokens(got)
        diff = [k for k, (a, b) in enumerate(zip(want, toks, strict=False)) if a != b]
        if len(toks) == len(want) and len(diff) == 1 and want[diff[0]] == ("literal", ord(c)) \
                and toks[diff[0]][0] == str(_sre_c.IN):
            out.append((i, mates))
    return tuple(_spread(out, MAX_NEIGHBOUR_CHARS["match"]))


def regex_neighbours(pattern: str) -> list[str]:
    """The neighbours of a ``match`` site's bounded regex (satk35): ``pattern`` with one literal character of a class
    of :data:`NEIGHBOUR_CLASSES` that it matches as that character (:func:`_neighbour_positions`) changed to another
    of its class, for each such character (``"409"`` → ``"009"``, …, ``"408"``; ``r"got \\d+"`` → ``r"aot \\d+"``,
    …, ``r"gos \\d+"``). Empty when it has none. :func:`text_neighbours`' reason; the host searches those of one
    character at once (:func:`regex_neighbourhoods`)."""
    return [pattern[:i] + re.escape(m) + pattern[i + 1:] for i, mates in _neighbour_positions(pattern) for m in mates]


def regex_neighbourhoods(pattern: str) -> list[str]:
    """One regex per character of :func:`regex_neighbours`, finding a match where any of its neighbours does: that
    character replaced by the class of its mates (``"409"`` → ``"[0-35-9]09"``, ``"4[1-9]9"``, ``"40[0-8]"``, spelt
    out): the host searches a message once per character, not 25 times."""
    return [pattern[:i] + _class_of(mates) + pattern[i + 1:] for i, mates in _neighbour_positions(pattern)]


#: Characters of a message a ``match`` site judges at most when its regex has no repeat, or its one repeat at its
#: top level (satk35, :func:`regex_search`): the most the seal module sends.
MAX_LONG_MATCH_TEXT = 8000


@functools.lru_cache(maxsize=256)
def _split(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], int, int] | None:
    """A bounded regex with one greedy or lazy repeat at its top level as ``P X{lo,hi} S`` (satk35): ``P`` and ``S``
    compiled from the texts before and after the repeat (each parsing to exactly the tokens ``pattern`` has there,
    with its global flags), ``X`` from the repeat's one-character body; ``None`` for any other (no repeat, a
    possessive one, one inside a group, a part that does not parse alone as it does in ``pattern``)."""
    parsed = _parse(pattern)
    if parsed is None or _repeats(pattern) != 1:
        return None
    items = list(parsed)
    at = [k for k, (op, _) in enumerate(items) if op in _REPEATS]
    if len(at) != 1:
        return None
    r = at[0]

    def end_of(count: int, start: int = 0) -> int | None:
        want = _tokens(items[start:count])
        for k in range(start, len(pattern) + 1):
            got = _parse(pattern[start:k])
            if got is not None and _tokens(got) == want:
                return k
        return None

    k1, k2 = end_of(r), end_of(r + 1)
    if k1 is None or k2 is None:
        return None
    lo, hi, body = items[r][1]
    want_body = _tokens(body)
    kb = next((k for k in range(k1, k2 + 1) if (b := _parse(pattern[k1:k])) is not None and _tokens(b) == want_body),
              None)
    tail = _parse(pattern[k2:])
    if kb is None or tail is None or _tokens(tail) != _tokens(items[r + 1:]):
        return None
    flags = parsed.state.flags & ~_sre_c.SRE_FLAG_UNICODE
    try:
        return (re.compile(pattern[:k1], flags), re.compile(pattern[k1:kb], flags), re.compile(pattern[k2:], flags),
                int(lo), int(hi))
    except Exception:  # noqa: BLE001 - a part that does not compile alone: judged as before
        return None


def _split_search(parts: tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], int, int], text: str) -> bool:
    """Whether ``P X{lo,hi} S`` (:func:`_split`) finds a match in ``text``, in ``O(len(text)·len(pattern))``: a start
    where ``P`` matches up to ``e``, and a start ``j`` of ``S`` with ``e + lo <= j <= e + hi`` and every character of
    ``text[e:j]`` matched by ``X``. ``P`` and ``S`` hold no repeat, so each matches at a position in one way only:
    the same answer as ``re.search`` of the whole, which backtracks in ``O(len(text)²·len(pattern))``."""
    pc, xc, sc, lo, hi = parts
    n = len(text)
    run = [0] * (n + 1)  # run[i]: characters from i on that X matches
    for i in range(n - 1, -1, -1):
        run[i] = run[i + 1] + 1 if xc.match(text, i) else 0
    starts = [0] * (n + 2)  # starts[j]: positions before j where S matches
    for j in range(n + 1):
        starts[j + 1] = starts[j] + (sc.match(text, j) is not None)
    for s in range(n + 1):
        m = pc.match(text, s)
        if m is None:
            continue
        e = m.end()
        a, b = e + lo, e + min(hi, run[e])
        if a <= b and starts[b + 1] > starts[a]:  # b <= n: run[e] <= n - e
            return True
    return False


def regex_search(pattern: str, text: str) -> bool | None:
    """Whether the bounded regex ``pattern`` finds a match in ``text`` (``re.search``): by ``re.search`` itself up to
    :func:`match_text_cap`, and for a regex with no repeat up to :data:`MAX_LONG_MATCH_TEXT` (its search is linear);
    longer, up to that, for one whose repeat is at its top level by :func:`_split_search` (satk35: a real fix whose
    message was longer than the cap, 1336 characters against 1217 for ``must be at least 1, got \\d+``, was
    ``tests_failed``); ``None`` for any other."""
    if len(text) <= match_text_cap(pattern) or (len(text) <= MAX_LONG_MATCH_TEXT and not _repeats(pattern)):
        return re.search(pattern, text) is not None
    parts = _split(pattern) if len(text) <= MAX_LONG_MATCH_TEXT else None
    return None if parts is None else _split_search(parts, text)


def approx_judged_alike(expected: Any) -> bool:
    """Whether every pytest judges ``pytest.approx(expected) == value`` alike, so that the host's pytest may judge for
    the test process's (satk35): no ``bool`` in ``expected`` (in a container's items or a mapping's values).
    ``approx(True) == 1.0`` holds under pytest 7.2.2 and not under 8.3.5 or 9.2: with ``L`` a ``bool``, a real fix
    returning ``1.0`` passed a test process's pytest 7 and was unequal on a host's pytest 9 (``forged``); every other
    pair of ``tests/sandbox/test_seal_kinds.py``'s was judged alike by the three."""
    if isinstance(expected, bool):
        return False
    if isinstance(expected, dict):
        return all(approx_judged_alike(v) for v in expected.values())
    if isinstance(expected, (list, tuple, set, frozenset)):
        return all(approx_judged_alike(v) for v in expected)
    return True


@dataclass(frozen=True)
class SealCheck:
    """What the host checks of a sealed site's value other than ``== L`` (module docstring). ``kind``: one of
    :data:`KINDS` but ``==``; ``expected``: ``L``'s value (``match``: the regex text; ``in``: a ``str`` or
    ``bytes``; ``approx``: a number or a container of numbers); ``options``: ``approx``'s keyword arguments."""

    kind: str
    expected: Any
    options: dict[str, Any] = field(default_factory=dict, hash=False)

    @functools.cached_property
    def _near(self) -> list[Any]:
        """An ``in`` site's neighbours (:func:`text_neighbours`, :func:`member_neighbours`), made once per check: a
        site in a loop reports once per item, each judged against the same (stride40: a member of 64 numbers of 20
        digits takes some 30 ms CPU to make them)."""
        return text_neighbours(self.expected) if isinstance(self.expected, (str, bytes)) \
            else member_neighbours(self.expected)

    def holds(self, value: Any) -> bool | None:
        """Whether ``value`` (a literal's value of builtins, from the seal report) passes the check; ``None`` when
        there is nothing to judge (``match``: not a ``str``, or longer than :func:`match_text_cap`; ``approx``:
        pytest's comparison raised; ``match`` and ``in``: a value that holds as well for a neighbour of ``L``,
        :func:`regex_neighbours`, :func:`text_neighbours`: many guesses at once, satk35). Never raises (but
        ``KeyboardInterrupt``)."""
        if self.kind == "match":
            if type(value) is not str or not bounded_regex(self.expected):
                return None
            found = regex_search(self.expected, value)
            if not found:
                return found
            return None if any(regex_search(near, value) is not False for near in regex_neighbourhoods(self.expected)) \
                else True
        if self.kind == "in":
            try:
                if self.expected not in value:
                    return False
            except Exception:  # noqa: BLE001 - 'a' in b'a', 'a' in 3: the test's own `in` raised there too
                return False
            try:
                return None if any(n in value for n in self._near) else True
            except Exception:  # noqa: BLE001 - a neighbour its `in` cannot judge (unhashable in a set): nothing to judge
                return None
        if self.kind == "approx":
            import pytest
            try:
                return bool(pytest.approx(self.expected, **self.options) == value)
            except Exception:  # noqa: BLE001 - whatever approx makes of an unexpected type: nothing to judge
                return None
        return None
