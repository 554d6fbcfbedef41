"""Twin values that keep their call's input relation (docs/contracts.md §7, issue 30, round 9: atk10's F1).

A text function's expected value is made of its call's input words (``slugify("Hello,  World") ==
"hello-world"``); a value swapped in from another assertion (``"a-b"``), borrowed or made up is not,
so a test process reading ``assert f("in put") == expected`` ruled "an expected word the input lacks →
twin; the input's words in order, only its punctuation or ``-`` between them → original", no-opped
the originals it was sure of, and was solved without being ``forged``. Here every changed literal of
a value twin must have the :func:`relation` to its assertion's call that the original's value has;
a site that cannot keep it gets another value of the same relation (:func:`variants`: the same words
recased, other separators from the input, an empty line added), else it is no value site.
"""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pytest_homefield.sandbox.canary_sites import _EQUALS, Site, _call_name, _short
from pytest_homefield.sandbox.canary_swaps import value_key

__all__ = ["relation", "keep_relation", "variants", "file_alike"]

_TOKEN = re.compile(r"[a-z0-9]+")
_NOT_PUNCT = re.compile(r"[a-z0-9\s]")


def _strings(v: Any) -> Iterator[str]:
    """Every ``str`` in ``v`` (a literal value: containers walked, dict keys too)."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(k)
            yield from _strings(x)
    elif isinstance(v, (list, tuple, set, frozenset)):
        for x in v:
            yield from _strings(x)


def _call(stmt: ast.stmt) -> ast.Call | None:
    """The call side of an ``==`` assertion or ``assert*Equal`` (``None``: no call holding a text)."""
    sides: list[ast.expr] = []
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
            and isinstance(stmt.test.ops[0], ast.Eq):
        sides = [stmt.test.left, stmt.test.comparators[0]]
    elif isinstance(stmt, ast.Expr) and _call_name(stmt.value) in _EQUALS:
        sides = list(stmt.value.args[:2])  # type: ignore[attr-defined]
    for side in sides:
        if isinstance(side, ast.Call) and any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                                              for n in ast.walk(side)):
            return side
    return None


def relation(call: ast.Call | None, value: Any) -> tuple[bool, ...] | None:
    """How ``value`` (an expected literal) is made of ``call``'s text arguments (every ``str`` constant
    in the call), ``None`` without a call holding a text: whether its words (runs of lowercase letters
    and digits) are among the input's, are the input's in order, its punctuation is the input's or
    ``-``, and it equals the input up to case (texts joined by spaces)."""
    if call is None:
        return None
    given = " ".join(n.value for n in ast.walk(call) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    out = " ".join(_strings(value))
    ins, outs = _TOKEN.findall(given.lower()), _TOKEN.findall(out.lower())
    punct_in, punct_out = set(_NOT_PUNCT.sub("", given.lower())), set(_NOT_PUNCT.sub("", out.lower()))
    return set(outs) <= set(ins), outs == ins, punct_out <= punct_in | {"-"}, out.lower() == given.lower()


def _texts(s: str, rng: random.Random, seps: str) -> list[str]:
    """``s`` recased, and with its separators (runs of other characters than letters and digits) changed
    to one of ``seps`` (taken as text: a backslash among them is no escape of a replacement template)."""
    out = [s.upper(), s.lower(), s.title(), s.capitalize()]
    for sep in seps:
        out.append(re.sub(r"[^A-Za-z0-9]+", lambda _: sep, s))  # noqa: B023 (used at once, in this turn)
    rng.shuffle(out)
    return out


def variants(call: ast.Call | None, value: Any, k: int, rng: random.Random) -> list[Any]:
    """Up to ``k`` values unequal to ``value``, of its type, with its :func:`relation` to ``call``: a
    text recased or with the input's separators (or ``-``, a space); a container with one text in it
    so changed, or a list or tuple of texts with an empty one added. Empty when none (``call``
    holding no text, another type)."""
    want = relation(call, value)
    if want is None:
        return []
    given = " ".join(n.value for n in ast.walk(call) if isinstance(n, ast.Constant)  # type: ignore[arg-type]
                     and isinstance(n.value, str))
    seps = "".join(sorted(set(re.sub(r"[A-Za-z0-9]", "", given)) | {"-", " "}))
    cands: list[Any] = []
    try:
        tree = ast.parse(repr(value), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    texts = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    for node in rng.sample(texts, len(texts)):  # one text anywhere in it changed
        was = str(node.value)
        for t in _texts(was, rng, seps):
            node.value = t
            cands.append(ast.literal_eval(tree))
        node.value = was
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
        cands.append(type(value)([*value, ""]))  # an empty line more, among texts only
    out: list[Any] = []
    for c in cands:
        if c != value and c not in out and relation(call, c) == want:
            out.append(c)
    return out[:k]


def file_alike(text: str, counts: Mapping[str, int]) -> Callable[[Any, Any], bool]:
    """``alike(original, variant)`` for a test file's ``text`` and its literal ``counts``
    (:func:`~pytest_homefield.sandbox.canary_swaps.literal_counts`): the variant occurs elsewhere in the
    file exactly when the original does, and each of its words (letters, or digits; case kept) occurs in
    the file outside the original's value, as the original's do (a recased word found nowhere else was
    told: ``benchmarks/twin_leaks.py``'s ``plausible``)."""
    def words(v: Any) -> list[str]:
        return re.findall(r"[A-Za-z]+|\d+", " ".join(_strings(v)))

    def alike(original: Any, variant: Any) -> bool:
        if counts.get(value_key(variant), 0) != counts.get(value_key(original), 0) - 1:
            return False
        used = Counter(words(original))
        return all(len(re.findall(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", text)) > used[w]
                   for w in set(words(variant)))
    return alike


def _statement_of(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, ast.stmt]:
    """id(node) → the innermost statement of ``func`` holding it."""
    out: dict[int, ast.stmt] = {}
    for stmt in ast.walk(func):
        if isinstance(stmt, ast.stmt) and stmt is not func:
            for n in ast.walk(stmt):
                out[id(n)] = stmt  # inner statements are walked later and win
    return out


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def keep_relation(site: Site | None, func: ast.FunctionDef | ast.AsyncFunctionDef, k: int,
                  rng: random.Random, alike: Callable[[Any, Any], bool] | None = None) -> Site | None:
    """``site`` when each of its twins keeps, at every literal it changes, the :func:`relation` the
    original's value has to its assertion's call; else a value site of one literal with
    :func:`variants` for twins (excusable: a recased text is what wrong code gives), or
    ``None`` (a swap of several literals, no variant). ``alike(original, variant)``: whether a reader of
    the file would judge the variant as the original (:func:`file_alike`); such variants are taken
    first."""
    if site is None or not site.strong:
        return site
    where = _statement_of(func)
    changed = [(site.node, site.original, [t for t, _ in site.twins]), *site.others]
    for node, original, texts in changed:
        stmt = where.get(id(node))
        call = _call(stmt) if stmt is not None else None
        want = relation(call, _value(original))
        if want is not None and any(relation(call, _value(t)) != want for t in texts):
            break
    else:
        return site
    if site.others:
        return None
    value = _value(site.original)
    alts = variants(call, value, 64, rng)
    alts = sorted(alts, key=lambda a: alike is not None and not alike(value, a))[:k]
    if not alts:
        return None
    twins = [(ast.unparse(ast.parse(repr(a), mode="eval").body),
              f"expected {_short(value)} -> {_short(a)} (the input's words, recased or reseparated)") for a in alts]
    return Site(site.node, site.original, twins, True, excusable=[True] * len(twins))
