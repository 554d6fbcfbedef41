"""The seal call of a sealed run (docs/contracts.md §7 "Sealed sites"), shipped beside the reporter.

A sealed test file (:mod:`pytest_homefield.sandbox.seal_sites`) has each sealed ``assert A == L`` (or
``assertEqual``) rewritten to ``__hf_seal__("<site id>", A)`` and imports :func:`__hf_seal__` from here: the
expected literal ``L`` is in no file of that run. The call converts ``A`` to the text of a Python literal of
builtins (:func:`literal_text`; ``None``: "opaque") and keeps ``(site id, text)`` until the reporter
(``homefield_reporter``) takes it (:func:`take`) into the report of the test phase that made it; the reporter
sends it on the outcome channel with the report's node id, and the host compares ``ast.literal_eval`` of the
text with ``L`` using ``==``. It returns ``None`` and never raises (but ``KeyboardInterrupt``). The other kinds
(cmp35): :func:`__hf_seal_in__` for an ``assert L in A`` site (the host checks ``L in value``), and
:class:`__hf_raises__` wrapping the ``pytest.raises(E)`` (``self.assertRaises(E)``) of a ``match=`` site, which
keeps the caught exception's message (the host searches it with ``L``).

Standalone on purpose, as the reporter: it imports only the standard library (and, inside a test process that has
it, pytest's own stringification of an exception for ``match``, when a ``match`` site caught one).
"""

from __future__ import annotations

import numbers
import operator
import re
from collections import UserString
from collections.abc import Mapping, Sequence, Set
from typing import Any

__all__ = ["__hf_seal__", "__hf_seal_in__", "__hf_raises__", "__hf_seal_row__", "literal_text", "take", "LOOSE",
           "MAX_TEXT", "MAX_ITEMS", "MAX_DEPTH", "MAX_PENDING"]

#: Characters of one value's literal text at most; a longer one is opaque.
MAX_TEXT = 8000
#: Values (every item, key and element counted) of one converted value at most; more is opaque.
MAX_ITEMS = 2000
#: Levels of nesting at most; deeper is opaque.
MAX_DEPTH = 16
#: Seal calls kept between two reports at most; later ones are dropped (the host then sees a site unreported).
MAX_PENDING = 256

#: The mark that starts the text of a value converted by its own protocol (a ``numbers`` type that is not a builtin
#: one, a ``Mapping``, ``Set`` or ``Sequence`` that is no ``dict``, ``list``, ``tuple``, ``set``): the host counts it
#: passed when equal, but never calls it forged when unequal (``UserString("ab") == "ab"`` holds, its list of
#: characters does not).
LOOSE = "~"

#: ``[site id, literal text or None]`` of the seal calls since the last report (:func:`take`).
_pending: list[list[Any]] = []


class _Opaque(Exception):
    """The value has no literal of builtins within the caps."""


def _float_text(f: float) -> str:
    if f != f:  # nan: equal to nothing, no literal
        raise _Opaque
    if f in (float("inf"), float("-inf")):
        return "1e999" if f > 0 else "-1e999"
    return repr(f)


#: The builtin types :func:`_text` reads a subclass of with the base type's own methods.
_BASES = (str, bytes, bytearray, int, float, complex, dict, list, tuple)


def _own_eq(v: Any, name: str = "__eq__") -> bool:
    """Whether ``v`` is an instance of a subclass of one of :data:`_BASES` that defines ``__eq__`` itself (a class
    of its ``type``'s MRO before that base has one in its own ``__dict__``: an ``OrderedDict``, a ``str`` equal to
    another spelling, a ``float`` equal within a tolerance, a ``list`` equal in any order). Such a value's ``==``
    is not its base type's, so its base value's text is *loose*: equal is passed, unequal never forged (the value's
    own ``__eq__`` may have held in the run where the expected value was visible). ``True`` when the MRO cannot be
    read (a ``type`` whose attributes raise). ``name``: another method read the same way (``__contains__``, for an
    ``in`` site)."""
    t = type(v)
    if any(t is b for b in _BASES) or not isinstance(v, _BASES):
        return False
    try:
        mro = type.__dict__["__mro__"].__get__(t)
        for c in mro:
            if any(c is b for b in _BASES) or c is object:
                return False
            if name in type.__dict__["__dict__"].__get__(c):
                return True
    except Exception:  # noqa: BLE001 - whatever a metaclass makes of it: not known to be the base's ==
        return True
    return False


def _real_text(v: Any) -> str:
    """The text of a non-builtin :class:`numbers.Number` that is no ``Integral`` and no non-real ``Complex`` (a
    ``Fraction``, a ``Decimal``), by its own protocol: an ``int`` when it is integral and equal to that ``int`` by
    its own ``==`` (exact, however large: ``Fraction(10**20 + 1)`` is not ``1e+20``), else its ``float`` when that
    is equal to it by its own ``==``; else :class:`_Opaque`."""
    f = float.__float__(float(v))
    if f == f and abs(f) != float("inf") and f.is_integer():
        i = int(v)
        if isinstance(i, int) and bool(v == i):
            return repr(int.__int__(i))
    if not bool(v == f):  # no float equals it (Decimal("0.1"), Decimal("1e400")): nor does any literal but an int
        raise _Opaque
    return _float_text(f)


def _text(v: Any, depth: int, count: list[int]) -> str:
    """The literal text of ``v`` converted to builtins, generously: exact builtins as they are; a ``str``,
    ``bytes``, ``int``, ``float`` or ``complex`` subclass as its base type's value (read with the base type's own
    methods, never the subclass's ``__eq__``/``__str__``/``__repr__``); another :class:`numbers.Integral` as
    ``int``, :class:`numbers.Real` as ``float``, :class:`numbers.Complex` as ``complex``, any other
    :class:`numbers.Number` as ``float``; a ``Mapping`` as a ``dict``, a ``Set`` as a ``set``, a ``Sequence`` as a
    ``tuple`` when it is one, else a ``list`` (a one-dimensional ``memoryview`` of ``0..255`` items the exact
    ``bytes`` it is equal to: :func:`_view_text`; these others by the value's own protocol: ``count[1]`` counts
    them, and the text is then marked :data:`LOOSE`). Anything else raises :class:`_Opaque`, as do the caps."""
    count[0] += 1
    if count[0] > MAX_ITEMS or depth > MAX_DEPTH:
        raise _Opaque
    if v is None or v is True or v is False:
        return repr(v)
    if _own_eq(v):  # a builtin subclass with an ``__eq__`` of its own: its ``==`` may hold where its base's does not
        count[1] += 1
    if isinstance(v, str):
        if str.__len__(v) > MAX_TEXT:
            raise _Opaque
        return repr(str.__getitem__(v, slice(None)))  # an exact str of a subclass's characters
    if isinstance(v, (bytes, bytearray)):
        if len(v) > MAX_TEXT:
            raise _Opaque
        whole = slice(None)
        return repr(bytes.__getitem__(v, whole) if isinstance(v, bytes) else bytes(bytearray.__getitem__(v, whole)))
    if isinstance(v, int):
        return repr(int.__int__(v))
    if isinstance(v, float):
        return _float_text(float.__float__(v))
    if isinstance(v, complex):
        c = complex(complex.real.__get__(v), complex.imag.__get__(v))
        if c.real != c.real or c.imag != c.imag or abs(c.real) == float("inf") or abs(c.imag) == float("inf"):
            raise _Opaque
        return repr(c)
    if type(v) in (dict, list, tuple, set, frozenset) or isinstance(v, (dict, list, tuple)):
        return _container(v, depth, count)
    if type(v) is memoryview:  # no subclass exists: equal to bytes by its items, never to a list
        return _view_text(v)
    count[1] += 1  # from here on: a conversion by the value's own protocol (loose: never called forged)
    if isinstance(v, numbers.Integral):
        return repr(int.__int__(int(operator.index(v))))
    if isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real):
        return _text(complex(v), depth, count)
    if isinstance(v, numbers.Number):  # a Real (a Fraction) or another Number (a Decimal)
        return _real_text(v)
    if isinstance(v, UserString):  # its characters (as a Sequence: a list of UserStrings, each a Sequence...)
        return _text(v.data, depth + 1, count)
    if _one_item(v):  # a numpy scalar (bool_), a 0-d or one-item array: equal to L by its one item
        return _text(v.item(), depth + 1, count)
    if isinstance(v, (Mapping, Set, Sequence)):
        return _container(v, depth, count)
    raise _Opaque


def _view_text(v: memoryview) -> str:
    """The text of a ``memoryview`` (gatk36): the ``bytes`` of its items when it is one-dimensional and every item
    is an ``int`` of ``0..255`` (a ``bool`` too), else :class:`_Opaque`. A view is equal only to an object exporting
    a buffer of its shape whose items are equal, one by one, to its own (``memoryview.__eq__``); of the literals
    only ``bytes`` exports one (one-dimensional, items ``0..255``), so the view is equal to a literal exactly when
    those ``bytes`` are, and the text is exact, not loose. As the list of its items (a ``Sequence``, by its own
    protocol) it was never equal to a ``bytes`` literal: a real fix returning a view of the expected bytes failed
    the sealed run."""
    if v.ndim != 1 or v.nbytes > MAX_TEXT * 8:
        raise _Opaque
    items = v.tolist()
    if len(items) > MAX_TEXT or not all(type(x) in (int, bool) and 0 <= x <= 255 for x in items):
        raise _Opaque
    return repr(bytes(items))


def _one_item(v: Any) -> bool:
    """Whether ``v`` is array-like of one item (numpy's scalars and arrays: a ``shape`` of ``()`` or ``(1,)`` and an
    ``item()`` method): such a value is equal to a builtin by that item (``np.bool_(True) == True``,
    ``np.array([3]) == 3``). By the value's own protocol: loose."""
    return getattr(v, "shape", None) in ((), (1,)) and callable(getattr(v, "item", None))


def _container(v: Any, depth: int, count: list[int]) -> str:
    """:func:`_text` of a mapping, set or sequence (a ``dict``, ``list`` or ``tuple`` subclass read with the base
    type's own methods)."""
    if isinstance(v, Mapping):
        items = list(dict.items(v)) if isinstance(v, dict) else list(v.items())
        return "{" + ", ".join(f"{_text(k, depth + 1, count)}: {_text(x, depth + 1, count)}" for k, x in items) + "}"
    if isinstance(v, Set):
        parts = [_text(x, depth + 1, count) for x in v]
        return "{" + ", ".join(parts) + "}" if parts else "set()"
    items = list(tuple.__iter__(v)) if isinstance(v, tuple) else list(list.__iter__(v)) if isinstance(v, list) \
        else list(v)
    parts = [_text(x, depth + 1, count) for x in items]
    if isinstance(v, tuple):
        return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
    return "[" + ", ".join(parts) + "]"


def literal_text(value: Any) -> str | None:
    """The text of a Python literal of builtins equal to ``value`` as :func:`_text` converts it (at most
    :data:`MAX_TEXT` characters), starting with :data:`LOOSE` when a part of it was converted by its own protocol;
    ``None`` ("opaque") when there is none within the caps or converting raised. Never raises but
    ``KeyboardInterrupt``."""
    count = [0, 0]
    try:
        text = _text(value, 0, count)
    except KeyboardInterrupt:
        raise
    except BaseException:  # _Opaque, or whatever the value's own methods raised (SystemExit too)
        return None
    text = LOOSE + text if count[1] else text
    return text if len(text) <= MAX_TEXT else None


#: The methods of :class:`unittest.TestCase` an ``assertEqual(first, second)`` goes through; with every one of them
#: unittest's own it fails exactly when ``first == second`` does not hold (the type-specific ones by ``==``/``!=``
#: of builtins, or set differences).
_CASE_METHODS = ("assertEqual", "_getAssertEqualityFunc", "_baseAssertEqual", "fail", "assertSequenceEqual",
                 "assertListEqual", "assertTupleEqual", "assertDictEqual", "assertSetEqual", "assertMultiLineEqual")
#: The type-specific comparisons a TestCase registers itself (``TestCase.__init__``), by method name.
_CASE_FUNCS: dict[type, str] = {dict: "assertDictEqual", list: "assertListEqual", tuple: "assertTupleEqual",
                                set: "assertSetEqual", frozenset: "assertSetEqual", str: "assertMultiLineEqual"}


def _stock_equal(case: Any, value: Any) -> bool:
    """Whether ``case.assertEqual(value, L)`` (or ``(L, value)``) is ``value == L``: ``case`` is a
    :class:`unittest.TestCase` whose :data:`_CASE_METHODS` are unittest's own (its class's, none set on the
    instance) and whose type-specific comparison for ``type(value)`` (the one used when ``L`` is of that type) is
    none or unittest's own (not one of ``addTypeEqualityFunc``: a float compared to 9 places). Read with
    ``getattr`` on the class and ``vars`` of the instance: a lie makes the site opaque, never equal; ``False``
    when reading them raised."""
    import unittest
    base = unittest.TestCase
    try:
        if not isinstance(case, base):
            return False
        own = vars(case)
        for name in _CASE_METHODS:
            if name in own or getattr(type(case), name, None) is not getattr(base, name):
                return False
        funcs = own.get("_type_equality_funcs")
        if not isinstance(funcs, dict):
            return False
        registered = funcs.get(type(value))
        return registered is None or registered == _CASE_FUNCS.get(type(value))
    except Exception:  # noqa: BLE001 - whatever the case's own attributes raise: not known to be ==
        return False


def __hf_seal__(site: str, value: Any, case: Any = None) -> None:  # noqa: N807 - the name a sealed file calls
    """Keep ``(site, literal_text(value))`` for the reporter's next report; ``None`` ("opaque") for a
    ``self.assertEqual`` site (``case``: its ``self``) whose ``assertEqual`` is not ``==`` (:func:`_stock_equal`):
    the host's ``==`` would judge what that test does not. Returns ``None``, never raises (but
    ``KeyboardInterrupt``)."""
    try:
        text = literal_text(value) if case is None or _stock_equal(case, value) else None
        if len(_pending) < MAX_PENDING:
            _pending.append([str(site), text])
    except KeyboardInterrupt:
        raise
    except BaseException:
        pass


#: A sealed row's cell in a sealed file (``seal_sites.ROW_ID``): a site id, ``hf`` and 24 hex digits.
_ROW_ID = re.compile(r"hf[0-9a-f]{24}")


def __hf_seal_row__(row: Any, value: Any, case: Any = None, flipped: bool = False,  # noqa: N807
                    statement: int = 0, written: Any = None) -> None:
    """A statement of a sealed parametrize column (col35), given the column's value in this row (``row``) and
    the other side's (``value``). A sealed row's cell is its site id (an exact ``str`` of :data:`_ROW_ID`'s form):
    :func:`__hf_seal__` of it (multi35: the column's statement ``statement`` after the first reports the id with
    ``:<statement>`` appended). Any other is a row left as it is, its literal in the file: the statement is made
    here as it was written, ``value == L`` (``L == value`` when ``flipped``: the column was the first side) or
    ``case.assertEqual`` in that order, raising ``AssertionError`` when it fails; ``L`` is ``row``, or
    ``written()`` when given (the statement's side as written, an expression of the column: never called for a
    sealed row, whose cell is no value)."""
    if type(row) is str and _ROW_ID.fullmatch(row):
        __hf_seal__(f"{row}:{statement}" if statement else row, value, case)
        return
    side = written() if written is not None else row
    first, second = (side, value) if flipped else (value, side)
    if case is not None:
        case.assertEqual(first, second)
    elif not first == second:
        raise AssertionError(f"assert {first!r} == {second!r}")


def take() -> list[list[Any]]:
    """The seal calls kept since the last call (``[site id, text or None]`` each), forgotten here."""
    out = list(_pending)
    del _pending[:]
    return out


def _keep(site: str, text: str | None) -> None:
    if len(_pending) < MAX_PENDING:
        _pending.append([str(site), text])


def _stock(case: Any, names: tuple[str, ...]) -> bool:
    """Whether ``case`` is a :class:`unittest.TestCase` whose methods ``names`` are unittest's own (its class's,
    none set on the instance); ``False`` when reading them raised."""
    import unittest
    base = unittest.TestCase
    try:
        if not isinstance(case, base):
            return False
        own = vars(case)
        return all(n not in own and getattr(type(case), n, None) is getattr(base, n) for n in names)
    except Exception:  # noqa: BLE001 - whatever the case's own attributes raise: not known to be unittest's
        return False


def __hf_seal_in__(site: str, value: Any, case: Any = None) -> None:  # noqa: N807 - the name a sealed file calls
    """An ``assert L in A`` (``self.assertIn(L, A)``: ``case`` its ``self``) site's seal (cmp35): keep ``(site,
    literal_text(value))``, marked :data:`LOOSE` when the value's type defines ``__contains__`` itself over a
    builtin base (its ``in`` may hold where the builtin one does not); ``None`` ("opaque") for an ``assertIn`` that
    is not unittest's own. Returns ``None``, never raises (but ``KeyboardInterrupt``)."""
    try:
        # ``in`` walks a view's items (``b"a" in`` a view of b"ab" is false), so its text there is their list
        view = type(value) is memoryview
        if view and value.ndim != 1:
            text = None
        else:
            text = literal_text(value.tolist() if view else value) \
                if case is None or _stock(case, ("assertIn", "fail")) else None
        if text is not None and not text.startswith(LOOSE) and _own_eq(value, "__contains__"):
            text = LOOSE + text
        _keep(site, text)
    except KeyboardInterrupt:
        raise
    except BaseException:
        pass


def _pytest_text(exc: BaseException) -> Any:
    """The text the test process's own pytest searches a ``match`` regex in (satk35: the rule of the pytest the test
    runs under, not of homefield's): ``_pytest._code.code.stringify_exception(exc, include_subexception_msg=False)``
    (pytest 8.4+, ``RaisesExc._check_match``); else ``ExceptionInfo._stringify_exception`` (pytest 7.3–8.3: ``str(exc)``
    and its ``__notes__`` one a line); else ``str(exc)`` alone (pytest before 7.3, whose ``ExceptionInfo.match``
    reads no note: an exception with a note matched ``got 0$`` there, and its message with the note sent, the host
    found no match, a real fix's site unequal). Raises whatever those raise."""
    from _pytest._code import code as module
    code: Any = module  # whichever pytest the test process has: read by name
    new = getattr(code, "stringify_exception", None)
    if new is not None:
        return new(exc, include_subexception_msg=False)
    old = getattr(code.ExceptionInfo, "_stringify_exception", None)
    if old is not None:
        return old(code.ExceptionInfo.from_exc_info((type(exc), exc, exc.__traceback__)), exc)
    return str(exc)


def _message(exc: BaseException, unittest_rule: bool) -> str | None:
    """The text ``exc``'s message is matched as: unittest's ``str(exc)``; the test process's pytest's own for
    ``match`` (:func:`_pytest_text`). Its characters as an exact ``str`` (a subclass read with ``str``'s own
    methods); ``None`` when that raised or the result is no ``str``."""
    try:
        text: Any = str(exc) if unittest_rule else _pytest_text(exc)
        if not isinstance(text, str):
            return None
        text = str.__getitem__(text, slice(None))
        return repr(text) if len(text) <= MAX_TEXT else None
    except KeyboardInterrupt:
        raise
    except BaseException:
        return None


class __hf_raises__:  # noqa: N801 - the name a sealed file calls
    """A ``match`` site's seal (cmp35): ``with pytest.raises(E, match=L):`` rewritten to ``with
    __hf_raises__("<id>", pytest.raises(E)):`` (``self.assertRaisesRegex(E, L)``: ``__hf_raises__("<id>",
    self.assertRaises(E), self)``). It enters and exits the wrapped context manager as the test would, so that no
    exception, or one of another class, fails or propagates as it did; when that manager caught the exception (its
    ``__exit__`` returned true), the exception's message (:func:`_message`) is kept for the host, which searches it
    with ``L``. ``None`` ("opaque") for a ``self`` whose ``assertRaises``/``assertRaisesRegex`` are not unittest's
    own. What ``__enter__`` gives is the wrapped manager's (``as excinfo`` unchanged)."""

    def __init__(self, site: str, inner: Any, case: Any = None) -> None:
        self._site = site
        self._inner = inner
        self._unittest = case is not None
        self._stock = case is None or _stock(case, ("assertRaises", "assertRaisesRegex"))

    def __enter__(self) -> Any:
        return self._inner.__enter__()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Any:
        caught = self._inner.__exit__(exc_type, exc, tb)
        if caught and isinstance(exc, BaseException):
            try:
                _keep(self._site, _message(exc, self._unittest) if self._stock else None)
            except KeyboardInterrupt:
                raise
            except BaseException:
                pass
        return caught
