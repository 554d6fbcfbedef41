"""Fallback twin values that occur in the parent's code exactly when the original's does (docs/contracts.md
§7, issue 30, leak A of round 8).

A value unique in its test file cannot be borrowed from another test (it would then occur twice in the
twin's file, :mod:`~pytest_homefield.sandbox.canary_swaps`), so its twin held a made-up value, and a
made-up value occurs nowhere in the parent commit's ``.py`` files while the original's often does (a
constant of the code, a value an older test already asserted): a test process that reads the parent's
files (the agent's workspace is the parent) ruled "one expected value of this test occurs nowhere in the
parent → twin" and told the runs apart (``benchmarks/twin_leaks.py``'s ``not-in-parent``: itsdangerous
8.5% of groups, two tasks on every seed).

:func:`parent_alternatives` draws the twin's value instead from the parent's own literals of the same
type when the original's value occurs in the parent (:meth:`ParentText.occurs`), keeping alike with
the original what a reader of the twin's file, of the parent and of the commit's other files can check:

* it occurs in the parent's ``.py`` text (the candidates come from it), and in a parent file other than
  the test file itself exactly when the original's does (the commit's other files show that: a value
  the parent holds only in the test file itself, against one the code holds, was told by
  ``count-repo``; without such a candidate the twin is made up, as before);
* it occurs nowhere in the test file (the site is then its only occurrence, as the original's is), nor
  at another site of the file that drew one;
* the nearest in magnitude (numbers) or length (texts, containers) among those of the original's shape
  (:func:`_shape`: sign and roundness, character classes, length and item types), the words of a text
  occurring elsewhere in the file when the original's do; an int at least ``k + 2`` away.

When the original's value does not occur in the parent the twin stays made up, and a made-up value
that happens to occur there is not taken (:func:`unseen`). Such a twin is excusable (a constant of the
code is a value wrong code could return). It is unequal to the original, so the reference fix fails it.
What stays told: a container (``[1, 2, 3]``) that is the only literal of its type in the parent
(itsdangerous, two one-test tasks) gets a made-up twin, since no other list occurs there.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import os
import random
import re
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.canary_swaps import value_key
from pytest_homefield.sandbox.canary_values import _unequal

__all__ = ["ParentText", "parent_alternatives", "unseen", "is_test_path"]

#: Folders of a parent tree that are no part of its commit (what ``setup_cmd`` may have made).
_SKIP = {".git", ".hg", ".venv", "venv", "env", ".tox", ".nox", "node_modules", "site-packages", "__pycache__",
         "build", "dist", ".eggs"}
#: Bytes of ``.py`` text read from a parent tree at most (a file over 2 MiB is skipped): a value only in
#: what is left unread counts as absent.
MAX_BYTES = 64 << 20
_FILE_BYTES = 2 << 20

_STR = re.compile(r"""(?<![\w'"])(b?)(?:'([^'"\\\r\n]{1,80})'|"([^'"\\\r\n]{1,80})")""")
_NUM = re.compile(r"(?<![\w.])(-?)(\d+(?:\.\d+)?)(?![\w.])")
_WORD = re.compile(r"[A-Za-z]+|\d+")
#: A bracketed literal on one line, not an index or a call (no word or closing bracket before it).
_BRACKETS = re.compile(r"(?<![\w)\]}])(?:\[[^][(){}\n]{1,120}\]|\([^][(){}\n]{1,120}\)|\{[^][(){}\n]{1,120}\})")
_SCALARS = ("str", "bytes", "int", "float")
_MESSAGE = re.compile(r"""(?<![\w.])raise[ \t]+[\w.]+\([ \t]*(?:'([^'"\\\n]{4,80})'|"([^'"\\\n]{4,80})")[ \t]*[,)]""")
_CLASS = re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.M)
_RAISE = re.compile(r"(?<![\w.])raise[ \t]+(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)")
_CONTAINERS = ("list", "tuple", "dict", "set")


class ParentText:
    """The text of a parent tree's ``.py`` files (path → text), read on first use. ``tree``: the
    parent's snapshot (its ``.git``, virtual environments and build folders skipped, at most
    :data:`MAX_BYTES`); or ``files`` given as they are (a benchmark reading ``git show``). Unreadable
    files are skipped; never raises."""

    def __init__(self, tree: Path | None = None, files: Mapping[str, str] | None = None) -> None:
        self._tree = tree
        self._files: dict[str, str] | None = dict(files) if files is not None else None
        self._by_type: dict[str, dict[str, tuple[Any, frozenset[str]]]] = {}
        self._seen: dict[tuple[str, str], bool] = {}
        self._raised: tuple[str, ...] | None = None
        self._bases: dict[str, list[str]] | None = None
        self._messages: tuple[str, ...] | None = None

    def load(self) -> ParentText:
        """Read the tree now (mining removes the parent's snapshot before it plans twins); returns self."""
        self.files()
        return self

    def files(self) -> dict[str, str]:
        """Path (relative, ``/``-separated) → text of every ``.py`` file read."""
        if self._files is None:
            self._files = _read_tree(self._tree) if self._tree is not None else {}
        return self._files

    def occurs(self, v: Any, skip: str = "") -> bool:
        """Whether ``v``'s source text occurs in a file other than ``skip`` (the way a reader of the text
        would look: a text's ``repr`` or its double-quoted form, a number between non-word characters,
        anything else its ``repr``). A simple literal is looked up in :meth:`values`' index; any other
        value is searched for in every file."""
        if _simple(v):
            hit = self.values(type(v)).get(value_key(v))
            return hit is not None and bool(hit[1] - {skip})
        key = (value_key(v), skip)
        if key not in self._seen:  # a value no index holds: searched for once
            self._seen[key] = any(_in_text(v, t) for p, t in self.files().items() if p != skip)
        return self._seen[key]

    def values(self, kind: type) -> dict[str, tuple[Any, frozenset[str]]]:
        """The literals of type ``kind`` written in the text, each (by
        :func:`~pytest_homefield.sandbox.canary_swaps.value_key`) with the files it occurs in: simple ones,
        written as they read back, so each occurs in those files as :meth:`occurs` looks (a printable
        text without quotes, backslashes or line breaks up to 80 characters, ASCII between double
        quotes; a decimal number as its ``repr``; a list, tuple, set or dict of such written on one
        line as its ``repr``). The scalars are indexed on the first call, the containers on the first
        call for one."""
        name = kind.__name__
        group = _CONTAINERS if name in _CONTAINERS else _SCALARS
        if name not in self._by_type and name in group:
            found: dict[str, dict[str, tuple[Any, set[str]]]] = {k: {} for k in group}
            for path, text in self.files().items():
                for v in (_containers(text) if group is _CONTAINERS else _literals(text)):
                    found[type(v).__name__].setdefault(value_key(v), (v, set()))[1].add(path)
            self._by_type.update({k: {r: (v, frozenset(p)) for r, (v, p) in d.items()} for k, d in found.items()})
        return self._by_type.get(name, {})

    def raised(self) -> tuple[str, ...]:
        """The exception classes the parent's code (its ``.py`` files outside tests, :func:`is_test_path`)
        raises by name (``raise ValueError``, ``raise errors.BadSignature(…)``), sorted: builtin ones
        (``Exception`` subclasses, no warnings) and classes the code defines that derive from one
        (round 9, atk10's F1: a twin expecting an exception the code never raises by name was told from
        its original, which expected one the code raises). Empty when none is."""
        if self._raised is None:
            names = {m.group(1) for p, t in self.files().items() if not is_test_path(p) for m in _RAISE.finditer(t)}
            self._raised = tuple(sorted(n for n in names if _builtin_exception(n) or self._derives(n)))
        return self._raised

    def exception_classes(self) -> tuple[str, ...]:
        """The exception classes the parent's code (outside tests) defines, by their ``class`` statements, deriving
        from a builtin ``Exception`` (no warnings), sorted; raised by name or not."""
        return tuple(sorted(c for c in self._class_bases() if self._derives(c)))

    def messages(self) -> tuple[str, ...]:
        """The texts the parent's code (outside tests) raises exceptions with, as a plain literal first
        argument (``raise ValueError("attempts must be at least 1")``), without regular-expression
        characters, sorted: what the twin of a ``raises(…, match=…)`` may match instead."""
        if self._messages is None:
            found = {m.group(1) or m.group(2) for p, t in self.files().items() if not is_test_path(p)
                     for m in _MESSAGE.finditer(t)}
            self._messages = tuple(sorted(m for m in found if not re.search(r"[\\^$.|?*+()\[\]{}]", m)))
        return self._messages

    def lineage(self, name: str) -> set[str]:
        """The exception names related to ``name`` by inheritance: its bases up to ``BaseException`` and
        the classes deriving from it, by the code's ``class`` statements (by last name) and the
        builtins' own hierarchy; ``name`` itself included."""
        down = {c for c in self._class_bases() if name in self.lineage_up(c)}
        cls = getattr(builtins, name, None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            down |= {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                     and issubclass(getattr(builtins, n), cls)}
        return self.lineage_up(name) | down

    def lineage_up(self, name: str) -> set[str]:
        """``name`` and its bases (by the code's ``class`` statements and the builtins' hierarchy)."""
        bases, out, todo = self._class_bases(), set[str](), [name]
        while todo:
            n = todo.pop()
            if n not in out:
                out.add(n)
                cls = getattr(builtins, n, None)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    out.update(c.__name__ for c in cls.__mro__)
                todo += bases.get(n, [])
        return out

    def _derives(self, name: str) -> bool:
        return name in self._class_bases() and any(_builtin_exception(n) for n in self.lineage_up(name))

    def _class_bases(self) -> dict[str, list[str]]:
        """Class name → the last names of its bases, over the code's files (not tests)."""
        if self._bases is None:
            self._bases = {}
            for p, t in self.files().items():
                if not is_test_path(p):
                    for m in _CLASS.finditer(t):
                        self._bases.setdefault(m.group(1), []).extend(
                            b.strip().rsplit(".", 1)[-1] for b in (m.group(2) or "").split(",") if b.strip())
        return self._bases


def is_test_path(path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is a test file by pytest's conventions: a folder
    named ``test``/``tests`` or starting with ``test_``, a ``test_*.py`` or ``*_test.py`` file, a
    ``conftest.py``."""
    *folders, name = path.split("/")
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py") \
        or any(f in ("test", "tests") or f.startswith("test_") for f in folders)


def _builtin_exception(name: str) -> bool:
    cls = getattr(builtins, name, None)
    return isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, Warning)


def _literals(text: str) -> list[Any]:
    out: list[Any] = []
    for m in _STR.finditer(text):
        single, s = m.group(2) is not None, m.group(2) if m.group(2) is not None else m.group(3)
        if m.group(1):  # bytes read back as b'…' only
            if single and s.isascii() and s.isprintable():
                out.append(s.encode("ascii"))
        elif s.isprintable() and (single or s.isascii()):
            out.append(s)
    for m in _NUM.finditer(text):
        digits = m.group(2)
        v: Any = float(digits) if "." in digits else int(digits)
        if repr(v) == digits:  # "-7" holds "7" too, for a reader searching for it
            out += [v, -v] if m.group(1) else [v]
    return out


def _simple(v: Any) -> bool:
    """Whether :meth:`ParentText.values` indexes ``v`` where it occurs (it reads back from its ``repr``)."""
    name = type(v).__name__
    return (name in _SCALARS and _literals(repr(v)) == [v]) or (name in _CONTAINERS and _containers(repr(v)) == [v])


def _containers(text: str) -> list[Any]:
    out: list[Any] = []
    for m in _BRACKETS.finditer(text):
        try:
            v = ast.literal_eval(m.group(0))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if type(v).__name__ in _CONTAINERS and v and repr(v) == m.group(0):
            out.append(v)
    return out


def _read_tree(tree: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    total = 0
    for folder, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.endswith(".egg-info")
                         and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
        for name in sorted(names):
            path = os.path.join(folder, name)
            if not name.endswith(".py") or os.path.islink(path):
                continue
            try:
                size = os.path.getsize(path)
                if size > _FILE_BYTES or total + size > MAX_BYTES:
                    continue
                with open(path, "rb") as fh:
                    out[Path(path).relative_to(tree).as_posix()] = fh.read().decode("utf-8", "replace")
                total += size
            except OSError:
                continue
    return out


def _in_text(v: Any, text: str) -> bool:
    if isinstance(v, str):
        return repr(v) in text or json.dumps(v) in text
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return re.search(rf"(?<![\w.]){re.escape(repr(v))}(?![\w.])", text) is not None
    return repr(v) in text


def unseen(corpus: ParentText | None) -> Callable[[Any], bool]:
    """A filter for made-up twin values: true for a value that does not occur in the parent (any value
    without a ``corpus``)."""
    return (lambda v: True) if corpus is None else (lambda v: not corpus.occurs(v))


def _words_known(v: str | bytes, words: Mapping[str, int], need: int) -> bool:
    """Whether every word of text ``v`` (letters, or digits) occurs ``need`` times or more in a text
    whose runs of letters and digits are counted in ``words``."""
    s = v.decode("ascii", "replace") if isinstance(v, bytes) else v
    return all(words.get(w, 0) >= need for w in set(_WORD.findall(s)))


def _shape(v: Any) -> tuple[Any, ...]:
    """What a twin's value keeps of the original's: a number's sign and roundness (trailing zeros up to
    three, a multiple of 5; a float's decimals), a text's character classes, a container's length and
    the types of its items."""
    if isinstance(v, (str, bytes)):
        s = v.decode("ascii", "replace") if isinstance(v, bytes) else v
        return (any(c.islower() for c in s), any(c.isupper() for c in s), any(c.isdigit() for c in s),
                " " in s, any(not c.isalnum() and c != " " for c in s))
    if isinstance(v, float):
        return (v < 0, len(repr(v).split(".", 1)[-1]) if "e" not in repr(v) else -1)
    if isinstance(v, int):
        a, zeros = abs(v), 0
        while a and a % 10 == 0 and zeros < 3:
            a, zeros = a // 10, zeros + 1
        return (v < 0, zeros, abs(v) % 5 == 0)
    items = v.values() if isinstance(v, dict) else v
    return (len(v), tuple(sorted(type(x).__name__ for x in items)))


def _distance(v: Any, w: Any) -> float:
    """How far ``w`` is from ``v`` in magnitude (numbers) or length (log scale)."""
    if isinstance(v, (int, float)):
        return abs(math.log1p(abs(float(w))) - math.log1p(abs(float(v))))
    return abs(math.log(len(w) + 1) - math.log(len(v) + 1))


def parent_alternatives(v: Any, corpus: ParentText, counts: Mapping[str, int], file_text: str, path: str,
                        k: int, rng: random.Random) -> list[Any]:
    """Up to ``k`` values for the twin of ``v`` (a value unique in its test file ``path``, whose text is
    ``file_text`` and literal counts ``counts``: :func:`~pytest_homefield.sandbox.canary_swaps.
    literal_counts`), drawn from the parent's literals as the module text says; ``[]`` when ``v`` does
    not occur in the parent, is of another type, or nothing fits (the caller makes one up)."""
    if type(v).__name__ not in (*_SCALARS, *_CONTAINERS) or not v or not corpus.occurs(v):
        return []
    numeric = isinstance(v, (int, float))
    text = isinstance(v, (str, bytes))
    elsewhere = corpus.occurs(v, skip=path)
    words = Counter(re.findall(r"[A-Za-z0-9]+", file_text))
    known = text and _words_known(v, words, 2)
    ranked: list[tuple[int, float, Any]] = []
    best = 0
    for key, (w, files) in corpus.values(type(v)).items():
        if counts.get(key, 0) or not _unequal(v, w) or (isinstance(v, int) and abs(w - v) < k + 2):
            continue  # in the file already; equal; an int a stateful rerun could meet
        shape = int(_shape(w) != _shape(v)) + int(text and _words_known(w, words, 1) != known)
        # the parent's other files as for the original (what the commit's other files show)
        if bool(files - {path}) == elsewhere:
            ranked.append((shape, _distance(v, w), w))
    ranked.sort(key=lambda r: (r[0], r[1]))
    near: list[Any] = []
    for shape, _, w in ranked:  # the best fits, a text occurring in the file outside a literal (a comment) left out
        if near and shape > best or len(near) == max(4, k):
            break
        if numeric or not _in_text(w, file_text):  # a text in a comment, a list in a call
            best = shape
            near.append(w)
    return rng.sample(near, min(k, len(near)))
