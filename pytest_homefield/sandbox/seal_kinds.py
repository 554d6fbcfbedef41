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
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SealCheck", "KINDS", "MAX_MATCH_TEXT", "MATCH_WORK", "match_text_cap", "bounded_regex",
           "regex_literal_runs", "APPROX_OPTIONS", "MIN_LITERAL_RUN"]

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
        pytest's comparison raised). Never raises (but ``KeyboardInterrupt``)."""
        if self.kind == "match":
            if type(value) is not str or not bounded_regex(self.expected) \
                    or len(value) > match_text_cap(self.expected):
                return None
            return re.search(self.expected, value) is not None
        if self.kind == "in":
            try:
                return bool(self.expected in value)
            except Exception:  # noqa: BLE001 - 'a' in b'a', 'a' in 3: the test's own `in` raised there too
                return False
        if self.kind == "approx":
            import pytest
            try:
                return bool(pytest.approx(self.expected, **self.options) == value)
            except Exception:  # noqa: BLE001 - whatever approx makes of an unexpected type: nothing to judge
                return None
        return None
