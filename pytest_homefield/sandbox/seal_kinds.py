"""The sealed comparisons other than ``==`` (cmp35, issue 30; docs/contracts.md §7 "Sealed sites").

A sealed site of kind ``==`` (:class:`~pytest_homefield.sandbox.seal_sites.SealSite`) is judged on the host by
``value == L``. The other kinds are judged by a :class:`SealCheck`, given to the outcome channel in place of the
expected value (:func:`~pytest_homefield.sandbox.outcomes.seal_verdict` calls :meth:`SealCheck.holds`):

- ``"match"``: ``with pytest.raises(E, match=L):`` / ``with self.assertRaisesRegex(E, L):``; the value is the
  message of the exception of class ``E`` the body raised, as the test process's pytest stringifies it for
  ``match`` (unittest: ``str(exc)``); it holds when ``re.search(L, message)`` finds a match (pytest's rule, and
  unittest's ``re.compile(L).search``). ``L`` is sealed only when :func:`bounded_regex` holds, and a message
  longer than :func:`match_text_cap` is opaque, so that the host's search of one message takes at most about
  0.1 s (no regex a test process could answer with a message that stalls the host).
- ``"in"``: ``assert L in A`` / ``self.assertIn(L, A)``, ``L`` a ``str`` or ``bytes`` literal; holds when
  ``L in value`` (a ``TypeError``, as ``'a' in b'a'``, does not hold).
- ``"approx"``: ``assert A == pytest.approx(L, rel=…, abs=…, nan_ok=…)`` with literal arguments; holds when
  ``pytest.approx(L, **options) == value`` on the host.
"""

from __future__ import annotations

import importlib
import math
import re
import string
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SealCheck", "KINDS", "MAX_MATCH_TEXT", "MATCH_WORK", "match_text_cap", "bounded_regex",
           "regex_literal_runs", "APPROX_OPTIONS", "MIN_LITERAL_RUN", "text_neighbours", "regex_neighbours",
           "NEIGHBOUR_CLASSES"]

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
#: a lowercase letter to each other lowercase letter, an uppercase one to each other uppercase one.
NEIGHBOUR_CLASSES = (string.digits, string.ascii_lowercase, string.ascii_uppercase)


def _mates(c: str) -> str:
    """The characters of ``c``'s class in :data:`NEIGHBOUR_CLASSES` other than ``c`` (none when it is in none)."""
    for cls in NEIGHBOUR_CLASSES:
        if c in cls:
            return cls.replace(c, "")
    return ""


def text_neighbours(text: str | bytes) -> list[str | bytes]:
    """The neighbours of an ``in`` site's member ``text`` (satk35): ``text`` with its first character of a class of
    :data:`NEIGHBOUR_CLASSES` changed to each other character of that class (``"404"`` → ``"004"``, ``"104"``, …,
    ``"904"``: 9; a letter: 25); bytes likewise (their Latin-1 characters). Empty when it has no such character.
    A value holding ``text`` and one of these holds many guesses at once (every text of three digits is in 1002
    characters): it does not tell ``text`` from its neighbours, so it is nothing to judge
    (:meth:`SealCheck.holds`). Any value holding ``text`` and none of them holds at most one text of each line of
    texts differing only at that character: a value made without ``text`` holds it with a chance of at most one in
    the class's size (10 for a digit)."""
    chars = text.decode("latin-1") if isinstance(text, bytes) else text
    for i, c in enumerate(chars):
        mates = _mates(c)
        if mates:
            out = [chars[:i] + m + chars[i + 1:] for m in mates]
            return [t.encode("latin-1") for t in out] if isinstance(text, bytes) else list(out)
    return []


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


def regex_neighbours(pattern: str) -> list[str]:
    """The neighbours of a ``match`` site's bounded regex (satk35): ``pattern`` with its first literal character of a
    class of :data:`NEIGHBOUR_CLASSES` (one the regex matches as that character: not ``d`` of ``\\d``, a repeat's
    count, a class's member or a flag) changed to each other character of its class, each a pattern that parses
    as ``pattern`` does but for that one literal (``"409"`` → ``"009"``, …; ``r"got \\d+ items"`` → ``r"aot \\d+
    items"``, …). Empty when it has none or does not parse. :func:`text_neighbours`' reason."""
    base = _parse(pattern)
    if base is None:
        return []
    want = _tokens(base)
    for i, c in enumerate(pattern):
        mates = _mates(c)
        if not mates or (i and pattern[i - 1] == "\\"):
            continue
        out = []
        for m in mates:
            cand = pattern[:i] + m + pattern[i + 1:]
            got = _parse(cand)
            if got is None:
                break
            toks = _tokens(got)
            diff = [k for k, (a, b) in enumerate(zip(want, toks, strict=False)) if a != b]
            if len(toks) != len(want) or len(diff) != 1 or want[diff[0]] != ("literal", ord(c)) \
                    or toks[diff[0]] != ("literal", ord(m)):
                break
            out.append(cand)
        else:
            return out
    return []


@dataclass(frozen=True)
class SealCheck:
    """What the host checks of a sealed site's value other than ``== L`` (module docstring). ``kind``: one of
    :data:`KINDS` but ``==``; ``expected``: ``L``'s value (``match``: the regex text; ``in``: a ``str`` or
    ``bytes``; ``approx``: a number or a container of numbers); ``options``: ``approx``'s keyword arguments."""

    kind: str
    expected: Any
    options: dict[str, Any] = field(default_factory=dict, hash=False)

    def holds(self, value: Any) -> bool | None:
        """Whether ``value`` (a literal's value of builtins, from the seal report) passes the check; ``None`` when
        there is nothing to judge (``match``: not a ``str``, or longer than :func:`match_text_cap`; ``approx``:
        pytest's comparison raised; ``match`` and ``in``: a value that holds as well for a neighbour of ``L``,
        :func:`regex_neighbours`, :func:`text_neighbours`: many guesses at once, satk35). Never raises (but
        ``KeyboardInterrupt``)."""
        if self.kind == "match":
            if type(value) is not str or not bounded_regex(self.expected) \
                    or len(value) > match_text_cap(self.expected):
                return None
            if re.search(self.expected, value) is None:
                return False
            return None if any(re.search(n, value) for n in regex_neighbours(self.expected)) else True
        if self.kind == "in":
            try:
                if self.expected not in value:
                    return False
                return None if any(n in value for n in text_neighbours(self.expected)) else True
            except Exception:  # noqa: BLE001 - 'a' in b'a', 'a' in 3: the test's own `in` raised there too
                return False
        if self.kind == "approx":
            import pytest
            try:
                return bool(pytest.approx(self.expected, **self.options) == value)
            except Exception:  # noqa: BLE001 - whatever approx makes of an unexpected type: nothing to judge
                return None
        return None
