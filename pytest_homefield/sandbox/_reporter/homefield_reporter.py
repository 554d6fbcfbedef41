"""Outcome reporter loaded into the repository's own test process with ``-p homefield_reporter``.

Standalone on purpose: it imports nothing from ``pytest_homefield``, so it loads in whatever Python
the repository's test command uses, as long as this folder is on ``PYTHONPATH``. It is inert unless
the environment variable ``HOMEFIELD_OUTCOMES_FD`` names an inherited pipe (the outcome channel,
docs/contracts.md §7): homefield opened it and reads it as the run goes, and no file path is ever
given to the test process. The module takes the descriptor when it is imported (``-p`` loads it
before any conftest or test module) and removes the variable from ``os.environ``, so code the tests
import does not find it there. It writes one JSON object per line, each with the writer's ``"pid"``:

* ``{"event": "start", "pytest": str, "python": str, "pid": int}`` at configure time;
* ``{"event": "collect_error", "nodeid": str, "path": str, "message": str}`` for every failed
  collection (an import error in a test module, a broken ``conftest.py`` — also an initial
  conftest that fails before the session starts, with ``nodeid`` ``""``), with ``"left_out": true`` added
  when the file is one the command line named that the repository's own configuration leaves out of
  collection here (``pytest_ignore_collect`` says so: ``collect_ignore_glob`` of a ``conftest.py`` for a
  newer Python, ``--ignore``), which pytest collects only because it was named;
* ``{"event": "collected", "count": int}`` once collection is done (under xdist: per worker, the
  largest count is the number collected), followed by ``{"event": "collected_ids", "ids": [str, ...]}`` lines
  naming those ``count`` test ids in collection order, at most :data:`_IDS_PER_LINE` characters of ids a line
  (perf47: mining's parent run after its probe runs only the ids the probe did not reach);
* ``{"event": "deselected", "ids": [str, ...]}`` lines naming the ids a selection left out of the run (pytest's
  ``pytest_deselected``: the configuration's or command line's ``-m``, ``-k``, ``--deselect``, a plugin's or
  ``conftest.py``'s own), as many a line as ``collected_ids`` (bld62: mining names a commit's tests its runs
  never saw; under xdist each worker deselects, and the first worker to end sends its ids, at most
  :data:`_MAX_DESELECTED`, with its output to this process, which writes them then: ops64, ``-n`` in ``addopts``);
* ``{"event": "phase", "nodeid": str, "when": "setup"|"call"|"teardown", "outcome":
  "passed"|"failed"|"skipped"|<other>, "xfail": bool, "duration": float (s), "message": str|null,
  "subtest": bool, "timeout": bool, "line": int|null, "operands": [str, str, str]|null}`` for every test phase
  (and, on a failed teardown only, ``"torn": [node id, ...]``: the nodes whose own finalizers raised in it, the test
  itself or a class, module, package or the session whose scope ended with it, ``""`` the session's: gatk50);
  ``xfail`` is true for xfail-marked tests
  (``wasxfail``), ``subtest`` for the report of one subtest (a ``call`` phase may then be reported
  several times for one id), ``timeout`` when pytest-timeout failed the test (pytest-timeout is
  loaded by this module when ``PYTEST_TIMEOUT`` is set, even where plugin autoload is off); ``line``, for
  a failed phase, where the test function itself stopped: the line of its deepest frame on the failure's
  traceback, counted from the first line of its definition (``co_firstlineno``, the first decorator: 0),
  else null (it passed, or its own code is not on the traceback: a fixture failed); ``operands``, for a call
  phase that failed with an ``AssertionError``, the last comparison pytest's assertion rewriting reported as
  failing in it (``pytest_assertrepr_compare``): ``[op, repr(left), repr(right)]`` when both are plain literals
  (str, bytes, int, float, bool, None, and tuples, lists, dicts, sets of those, at most 100 items and 4 deep,
  each ``repr`` at most 2000 characters), else null (the parent check's nearness, contracts §7); and, only when
  the phase made seal calls (a sealed run, contracts §7 "Sealed sites": ``homefield_seal``), ``"seals": [[site
  id, literal text or null], ...]``: the calls since the previous report, in order, a text dropped to null once
  the phase's seals pass :data:`_MAX_SEALS_CHARS` characters; and, only when the phase caught expected
  exceptions, ``"caught": [[[expected class names], [caught class's MRO names], [function, line]], ...]``: every
  exception a ``pytest.raises`` or ``unittest`` ``assertRaises`` context took as expected since the previous
  report (its ``__exit__`` returned true), at most :data:`_MAX_CAUGHT` of them, :data:`_MAX_NAMES` names each, and
  where: the function that entered the context (the first frame outside pytest's and ``unittest``'s modules) and
  its line there, counted from the function's ``co_firstlineno`` (:func:`_where`; the host tells
  from it an exception-swap twin met by an exception that is also the original's: contracts §7);
* ``{"event": "finish", "exitstatus": int}`` at the end of the session; the descriptor is closed
  right after it.

A canary run's test files run their test bodies' statements under :func:`soft` (docs/contracts.md §7 "Soft
statements"): the first failure of a soft statement is kept, the body runs to its end, and the call phase then fails
with that failure (:func:`pytest_runtest_call`), so its ``line`` and ``operands`` are that statement's.

homefield counts only the events from ``start`` to the first ``finish`` written by the process that
wrote ``start``: an exit handler that writes more after ``finish``, or another process that found
the pipe, changes nothing. The descriptor is used for one session only (a second ``pytest.main``
in the same process writes nothing).

Exactly one process writes: the one that is not an xdist worker (no ``config.workerinput``, no
``PYTEST_XDIST_WORKER`` in the environment). Under xdist that is the controller, which receives
every worker's reports through the same hooks, so each phase is written once.
"""

from __future__ import annotations

import json
import os
import sys
import types
from typing import Any

import pytest

ENV_VAR = "HOMEFIELD_OUTCOMES_FD"
_MAX_MESSAGE = 500
#: Characters of JSON-written ids one ``collected_ids`` line carries at most (one longer id alone on its line; the
#: host ignores a line over 64 KiB, and then the ids it read are fewer than ``count``: not used).
_IDS_PER_LINE = 32000


def _take_channel() -> int | None:
    """The outcome pipe's descriptor named by ``HOMEFIELD_OUTCOMES_FD`` (removed from the environment),
    or ``None`` when there is none or it is not an open pipe. Not set in an xdist worker (the
    controller writes), where the variable is left as it is."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return None
    value = os.environ.pop(ENV_VAR, "")
    try:
        fd = int(value)
        if os.fstat(fd).st_mode & 0o170000 != 0o010000:  # stat.S_ISFIFO, without one more import
            return None
    except (ValueError, OSError):
        return None
    return fd


#: The key of an xdist worker's output (``config.workeroutput``, sent to its controller when it ends) that holds the
#: ids its selection left out (:class:`_WorkerDeselected`).
_DESELECTED_KEY = "homefield_deselected"
#: The most deselected ids a worker sends: the host keeps fewer (``outcomes``' ``max_ids``).
_MAX_DESELECTED = 100_000


class _WorkerDeselected:
    """In an xdist worker: the ids its selection left out, kept in its output (``config.workeroutput``), which xdist
    sends to the controller when the worker ends; the controller's writer writes them
    (:meth:`_Writer.pytest_testnodedown`). Under xdist the workers collect and deselect, the controller neither."""

    def __init__(self, output: dict[str, Any]) -> None:
        self.output = output

    def pytest_deselected(self, items: list[Any]) -> None:
        kept = self.output.setdefault(_DESELECTED_KEY, [])
        ids = [str(getattr(item, "nodeid", "")) for item in items]
        kept.extend([i for i in ids if i][:max(0, _MAX_DESELECTED - len(kept))])


#: The channel's descriptor; ``None`` once a session has used it (or when there is none).
_channel: list[int | None] = [_take_channel()]


def _active() -> bool:
    return _channel[0] is not None


def _is_worker(config: Any) -> bool:
    return hasattr(config, "workerinput") or "PYTEST_XDIST_WORKER" in os.environ


def _one_line(text: str, *, last: bool = True) -> str:
    """The last (or first) non-blank line of ``text``, without pytest's ``E`` marker."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = (lines[-1] if last else lines[0]) if lines else ""
    if line.startswith("E "):  # pytest's marker for exception lines in a traceback
        line = line[1:].strip()
    return line[:_MAX_MESSAGE]


#: How pytest-timeout's failure message starts, after pytest's ``Failed: ``: ``Timeout >0.5s``
#: (2.2, 2.3) or ``Timeout (>0.5s) from pytest-timeout.`` (2.4).
_TIMEOUT_STARTS = ("Timeout >", "Timeout (>")


def _timed_out(report: pytest.TestReport, message: str | None) -> bool:
    """Whether pytest-timeout failed this phase, read from the stable start of its message across
    versions (:data:`_TIMEOUT_STARTS`). A test that fails with that text itself is only counted a
    timeout, not passed: the outcome stays a failure either way."""
    if not (report.failed and message):
        return False
    return message.removeprefix("Failed: ").startswith(_TIMEOUT_STARTS)


def _line_of(report: Any) -> int | None:
    """:data:`_LINE_ATTR` of ``report`` when it is an int, else ``None``."""
    line = getattr(report, _LINE_ATTR, None)
    return line if isinstance(line, int) and not isinstance(line, bool) else None


def _operands_of(report: Any) -> list[str] | None:
    """:data:`_OPERANDS_ATTR` of ``report`` when it is a list of three texts, else ``None``."""
    v = getattr(report, _OPERANDS_ATTR, None)
    return [str(x) for x in v] if isinstance(v, (list, tuple)) and len(v) == 3 \
        and all(isinstance(x, str) for x in v) else None


def _message(report: Any) -> str | None:
    """A one-line summary of a failed or skipped report (``None`` when it passed)."""
    if report.passed:
        return None
    longrepr = report.longrepr
    if longrepr is None:
        return None
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # skip: (path, lineno, reason)
        return str(longrepr[2])[:_MAX_MESSAGE]
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _one_line(crash.message, last=False)  # "assert x == y" comes first
    return _one_line(str(longrepr))


#: The attribute of a test report holding :func:`_stop_line` (an int or ``None``; sent from an xdist worker
#: to the controller with the report's other attributes).
_LINE_ATTR = "homefield_line"


def _stop_line(item: Any, excinfo: Any) -> int | None:
    """Where the test function of ``item`` stopped on the traceback of ``excinfo`` (a failure): the line of its
    code's deepest frame there, minus its ``co_firstlineno`` (the line of its first decorator, else of its
    ``def``); ``None`` when its code is not on the traceback (a fixture or setup failed) or there is none. A test
    a decorator wrapped (``functools.wraps``'s ``__wrapped__``: freezegun's ``freeze_time``) is the function it
    wraps, not the wrapper (rows32: humanize's time tests reported the wrapper's line, which lies in no statement
    of the test); so is (soft39) a body a decorator leaving no ``__wrapped__`` calls (:func:`_named_bodies`:
    hypothesis's ``given``), when its frame is on the traceback."""
    try:
        bodies = _named_bodies(item)
    except Exception:  # an object that cannot be read so: none
        bodies = []
    for body in bodies:
        tb, line = getattr(excinfo, "tb", None), None
        while tb is not None:
            if tb.tb_frame.f_code is body:
                line = tb.tb_lineno - body.co_firstlineno
            tb = tb.tb_next
        if line is not None:
            return int(line)
    obj = getattr(item, "obj", None)
    for _ in range(16):
        inner = getattr(obj, "__wrapped__", None)
        if inner is None or getattr(inner, "__code__", None) is None:
            break
        obj = inner
    code = getattr(obj, "__code__", None)
    tb = getattr(excinfo, "tb", None)
    line = None
    while code is not None and tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno - code.co_firstlineno
        tb = tb.tb_next
    return line


#: The attribute of a test report holding :func:`_plain` operands of its failed comparison (a list of three texts
#: or ``None``).
_OPERANDS_ATTR = "homefield_operands"
#: The last failing comparison pytest reported in the running test (``[op, repr(left), repr(right)]``) or ``None``.
_last_compare: list[list[str] | None] = [None]
_MAX_OPERAND = 2000


def _plain(v: Any, depth: int = 0) -> bool:
    """Whether ``v`` is a plain literal: str, bytes, int, float, bool, None, or a tuple, list, dict, set or
    frozenset (at most 100 items, 4 levels) of those, each of exactly those types."""
    if v is None or type(v) in (str, bytes, int, float, bool):
        return True
    if depth >= 4 or type(v) not in (tuple, list, dict, set, frozenset) or len(v) > 100:
        return False
    items = [*v.keys(), *v.values()] if type(v) is dict else list(v)
    return all(_plain(x, depth + 1) for x in items)


def pytest_assertrepr_compare(config: Any, op: str, left: Any, right: Any) -> None:
    """Remember the failing comparison's operands when both are plain (:func:`_plain`) and short; returns nothing,
    so pytest's own explanation is unchanged."""
    try:
        if _plain(left) and _plain(right):
            a, b = repr(left), repr(right)
            _last_compare[0] = [str(op)[:8], a, b] if len(a) <= _MAX_OPERAND and len(b) <= _MAX_OPERAND else None
        else:
            _last_compare[0] = None
    except Exception:  # a repr that fails: nothing
        _last_compare[0] = None


#: The attribute of a test report holding the seal calls made since the previous report (:func:`_seals_taken`).
_SEALS_ATTR = "homefield_seals"
#: Characters of seal texts one phase event carries at most (the host takes a line of 64 KiB at most).
_MAX_SEALS_CHARS = 24000


def _seals_taken() -> list[list[Any]] | None:
    """The seal calls since the previous report (``homefield_seal.take()``, when a sealed test file imported it),
    each ``[site id, text or None]``, the texts past :data:`_MAX_SEALS_CHARS` in all dropped to ``None``; ``None``
    when there were none."""
    seal = sys.modules.get("homefield_seal")
    take = getattr(seal, "take", None)
    if take is None:
        return None
    out: list[list[Any]] = []
    used = 0
    for s in take():
        site, text = str(s[0]), s[1] if isinstance(s[1], str) else None
        if text is not None:
            used += len(text)
            text = text if used <= _MAX_SEALS_CHARS else None
        out.append([site[:200], text])
    return out or None


def _seals_of(report: Any) -> list[list[Any]] | None:
    """:data:`_SEALS_ATTR` of ``report`` when it is a list of ``[text, text or None]``, else ``None``."""
    v = getattr(report, _SEALS_ATTR, None)
    if not isinstance(v, list) or not v:
        return None
    ok = all(isinstance(s, (list, tuple)) and len(s) == 2 and isinstance(s[0], str)
             and (s[1] is None or isinstance(s[1], str)) for s in v)
    return [[s[0], s[1]] for s in v] if ok else None


#: The attribute of a test report holding the expected exceptions caught since the previous report
#: (:func:`_caught_taken`).
_CAUGHT_ATTR = "homefield_caught"
#: Caught exceptions one phase event carries at most, and names per list (longer names cut to 200 characters).
_MAX_CAUGHT = 32
_MAX_NAMES = 32
#: ``[[expected names], [MRO names]]`` of each expected exception caught since the last report.
_caught: list[list[Any]] = []
#: The last exceptions (at most :data:`_MAX_UNMATCHED`, the newest last) that went through an expecting context
#: (a ``pytest.raises``, an ``assertRaises``) not being the one it expected: the context's failure, as an assertion's
#: (:func:`_assertion`; gatk40). Forgotten at each call phase's start.
_unmatched: list[BaseException] = []
_MAX_UNMATCHED = 8


def _names(classes: Any) -> list[str]:
    """The ``__name__`` of each class of ``classes`` (a class or a tuple of them; anything else: none), at most
    :data:`_MAX_NAMES`."""
    seq = classes if isinstance(classes, tuple) else (classes,)
    return [str(getattr(c, "__name__", ""))[:200] for c in seq if isinstance(c, type)][:_MAX_NAMES]


#: The top-level packages whose frames :func:`_where` passes over (where ``raises`` and ``assertRaises`` live).
_RAISES_MODULES = frozenset({"_pytest", "pytest", "unittest"})


def _where() -> list[Any]:
    """``[function name, line]`` of the first frame outside pytest's and ``unittest``'s modules above the caller of
    this one's caller (the ``with`` or the ``raises(E, f)`` call that expected the exception; a ``with``'s
    ``__exit__`` is on its first line), the line counted from its code's ``co_firstlineno``; ``["", -1]`` when none."""
    f: Any = sys._getframe(2)
    while f is not None and str(f.f_globals.get("__name__", "")).partition(".")[0] in _RAISES_MODULES:
        f = f.f_back
    if f is None:
        return ["", -1]
    return [f.f_code.co_name[:200], int(f.f_lineno or 0) - f.f_code.co_firstlineno]


def _watched(exit_: Any, expected_of: Any) -> Any:
    """``exit_`` (an expecting context's ``__exit__``) that also records, when it returns true for an exception (the
    exception was the one expected), the expected classes (``expected_of(context)``) and the caught exception's
    class's MRO names in :data:`_caught`. It returns and raises exactly as ``exit_``."""
    def __exit__(self: Any, exc_type: Any, exc_val: Any, tb: Any) -> Any:
        __tracebackhide__ = True
        took = exit_(self, exc_type, exc_val, tb)
        if not took and isinstance(exc_val, Exception):
            _unmatched[:] = [*_unmatched[-(_MAX_UNMATCHED - 1):], exc_val]
        if took and exc_val is not None and len(_caught) < _MAX_CAUGHT:
            try:
                _caught.append([_names(expected_of(self)), _names(tuple(type(exc_val).__mro__)), _where()])
            except Exception:  # a context this cannot read: nothing recorded
                pass
        return took
    __exit__.homefield_watch = True  # type: ignore[attr-defined]
    return __exit__


def _watch_raises() -> None:
    """Wrap the ``__exit__`` of ``pytest.raises``'s context class (``RaisesExc`` from pytest 8.4, else
    ``RaisesContext``; whatever the function returns) and of ``unittest``'s ``assertRaises`` context with
    :func:`_watched`, once. In every run alike: the process cannot tell a run the host reads it in from another."""
    targets: list[tuple[Any, Any]] = []
    try:
        targets.append((type(pytest.raises(BaseException)), lambda c: getattr(c, "expected_exceptions", None)
                        or getattr(c, "expected_exception", None)))
    except Exception:
        pass
    try:
        import unittest.case
        targets.append((unittest.case._AssertRaisesContext, lambda c: c.expected))
    except (ImportError, AttributeError):
        pass
    for cls, expected_of in targets:
        exit_ = cls.__dict__.get("__exit__")
        if exit_ is not None and not getattr(exit_, "homefield_watch", False):
            cls.__exit__ = _watched(exit_, expected_of)


def _caught_taken() -> list[list[Any]] | None:
    """The caught exceptions recorded since the previous report (then forgotten); ``None`` when there were none."""
    out = list(_caught)
    _caught.clear()
    return out or None


def _caught_of(report: Any) -> list[list[Any]] | None:
    """:data:`_CAUGHT_ATTR` of ``report`` when it is a list of ``[texts, texts, [text, int]]``, else ``None``."""
    v = getattr(report, _CAUGHT_ATTR, None)
    if not isinstance(v, list) or not v:
        return None
    ok = all(isinstance(r, (list, tuple)) and len(r) == 3 and all(
        isinstance(n, (list, tuple)) and all(isinstance(x, str) for x in n) for n in r[:2])
        and isinstance(r[2], (list, tuple)) and len(r[2]) == 2 and isinstance(r[2][0], str)
        and isinstance(r[2][1], int) for r in v)
    return [[list(r[0]), list(r[1]), [r[2][0], r[2][1]]] for r in v[:_MAX_CAUGHT]] if ok else None


#: The report attribute of a failed teardown naming the nodes whose own finalizers raised in it (:func:`_torn_of`).
_TORN_ATTR = "homefield_torn"
#: The node ids whose finalizers raised in the running teardown, in the order they raised (gatk50).
_torn: list[str] = []
#: The attribute a finalizer watched by :func:`_fin_watched` carries: its node's id (a finalizer is wrapped once).
_WATCHED = "_homefield_node"
#: The most node ids one teardown reports (a test's own, its class's, module's, packages', the session's).
_MAX_TORN = 16


def _fin_watched(fin: Any, nodeid: str) -> Any:
    """``fin`` (a finalizer of the node ``nodeid``) that, when it raises, records ``nodeid`` in :data:`_torn`."""
    def watched() -> Any:
        try:
            return fin()
        except BaseException:
            if nodeid not in _torn and len(_torn) < _MAX_TORN:
                _torn.append(nodeid)
            raise
    setattr(watched, _WATCHED, nodeid)
    return watched


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: Any, nextitem: Any) -> Any:
    """Before pytest tears down what ends with ``item`` (the test's own finalizers, and those of its class, module,
    package or session when their scope ends here): every finalizer on its setup stack is :func:`_fin_watched`, so the
    teardown's report can say whose raised (:data:`_TORN_ATTR`, gatk50: a module- or session-scoped fixture's
    teardown error is reported on whichever test ended the scope in this run, the last one pytest or xdist ran, so
    that one id was ``error`` and its siblings ``passed``, an outcome a subset or another schedule moved; homefield
    gives it to every id of that scope). pytest ≥ 7's ``SetupState.stack`` (node → (finalizers, …)); else nothing is
    watched and the report names none."""
    del _torn[:]
    try:
        stack = item.session._setupstate.stack
        for node, entry in stack.items():
            fins = entry[0]
            if isinstance(fins, list):
                nodeid = str(getattr(node, "nodeid", ""))
                fins[:] = [f if hasattr(f, _WATCHED) else _fin_watched(f, nodeid) for f in fins]
    except Exception:  # another pytest's setup state: nothing watched
        pass
    yield


def _torn_of(report: Any) -> list[str] | None:
    """:data:`_TORN_ATTR` of ``report`` when it is a list of texts, else ``None``."""
    v = getattr(report, _TORN_ATTR, None)
    return [str(x) for x in v][:_MAX_TORN] if isinstance(v, list) and all(isinstance(x, str) for x in v) else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """Set :data:`_LINE_ATTR` on each phase's report: :func:`_stop_line` of its failure, else ``None``;
    :data:`_OPERANDS_ATTR` on a call phase failed by an ``AssertionError``: the last comparison reported failing
    during it; :data:`_SEALS_ATTR`: the seal calls made since the previous report (:func:`_seals_taken`); and
    :data:`_CAUGHT_ATTR`: the expected exceptions caught since then (:func:`_caught_taken`). Old-style
    hookwrapper, as below, for old pytest/pluggy versions."""
    outcome = yield
    try:
        report = outcome.get_result()
        seals = _seals_taken()
        if seals is not None:
            setattr(report, _SEALS_ATTR, seals)
        caught = _caught_taken()
        if caught is not None:
            setattr(report, _CAUGHT_ATTR, caught)
        excinfo = getattr(call, "excinfo", None)
        setattr(report, _LINE_ATTR, _stop_line(item, excinfo) if excinfo is not None and report.failed else None)
        failed_assert = call.when == "call" and report.failed and excinfo is not None \
            and excinfo.errisinstance(AssertionError)
        setattr(report, _OPERANDS_ATTR, _last_compare[0] if failed_assert else None)
        if call.when == "teardown" and report.failed:
            setattr(report, _TORN_ATTR, list(_torn))
    except Exception:  # a report this cannot read (a plugin's own): no line
        pass
    _last_compare[0] = None


#: The first failure a :func:`soft` statement met in the running test's call phase: ``[exception, operands]`` (the
#: failing comparison pytest reported for it, :data:`_last_compare`, when it was an ``AssertionError``); empty when
#: none. ``_in_call[0]``: a test's call phase runs under :func:`pytest_runtest_call` (only then is a failure kept; not
#: for a ``unittest`` test expected to fail, :func:`_expecting_failure`); ``_called[0]``: the code of the function
#: pytest calls for that test (``item.obj``), the only frame whose soft statements keep a failure (gatk38: a decorated
#: test's body is called by its decorator, which may take what the body raises as part of its protocol, as
#: hypothesis's ``given`` takes ``assume``'s ``UnsatisfiedAssumption``; kept there, every canary run failed such a
#: test with a real fix); ``_wrapped[0]``: the codes of the bodies a decorator of it wraps (:func:`_wrapped_code`: a
#: ``functools.wraps`` one's, gatk39; one bearing the test's name reached from it, soft39), whose soft statements keep
#: an assertion's failure only. ``_blocks``: one list
#: like ``_soft_first`` per :func:`soft_block` entered and not left (innermost last): a failure is kept in the
#: innermost; ``_left``: beside each, whether a jump (:func:`soft_jump`) is leaving its body. ``_nested[0]``: the
#: failures nested soft statements kept in the call phase.
_soft_first: list[Any] = []
_in_call: list[bool] = [False]
_called: list[Any] = [None]
_wrapped: list[tuple[Any, ...]] = [()]
_blocks: list[list[Any]] = []
_left: list[bool] = []
#: Per :data:`_blocks` entry: what returns the callables making the ``with``'s contexts (soft42), or ``None``; or
#: (gatk47) the contexts the ``with`` entered, a list (:func:`through`).
_block_takers: list[Any] = []
#: The contexts the items of a softened ``with`` header made, noted by :func:`through` until its :func:`soft_block`
#: is entered, which takes them (gatk47).
_through: list[Any] = []
_nested: list[int] = [0]
#: Failures nested soft statements (inside a ``while``, ``try`` or ``with``) take in one call phase at most; the next
#: goes through as without the context (a loop whose condition waits on what failed ends as it did).
_MAX_NESTED = 1000


def _called_code(item: Any) -> Any:
    """The code object of the function pytest calls for ``item`` (a bound method's function's), or ``None``."""
    try:
        obj = item.obj
    except Exception:  # not a function item (a plugin's own), or its object cannot be had: no soft failure kept
        return None
    return getattr(getattr(obj, "__func__", obj), "__code__", None)


def _wrapped_code(item: Any) -> tuple[Any, ...]:
    """The code objects of the bodies a decorator of ``item``'s test wraps (``()`` when it is not decorated so): the
    innermost ``__wrapped__`` of ``item.obj``, as ``functools.wraps`` leaves it (``mock.patch``, freezegun's
    ``freeze_time``; gatk39), and (soft39) each function :func:`_reached` from ``item.obj`` (through ``__wrapped__``,
    hypothesis's ``.hypothesis.inner_test``, a closure's cells: what a decorator that leaves no ``__wrapped__`` calls,
    hypothesis's ``given``, a plain ``def run(*a): return f(*a)``) whose code bears the test function's own name, none
    the code of ``item.obj`` itself. ``()`` too when a function reached lists an explicit hypothesis example expected
    to fail (``@example(...).xfail()``: its decorator takes what the body raises there, kept it would be no failure)."""
    try:
        obj = item.obj
        obj = getattr(obj, "__func__", obj)
        called = _called_code(item)
        inner = obj
        seen = 0
        while hasattr(inner, "__wrapped__") and seen < 100:  # inspect.unwrap, without importing it
            inner, seen = inner.__wrapped__, seen + 1
        inner = getattr(inner, "__func__", inner)
        codes = [getattr(inner, "__code__", None)]
        reached = _reached(obj)
        for func in reached:
            examples = getattr(func, "hypothesis_explicit_examples", None)
            if isinstance(examples, list) and any(getattr(e, "raises", None) is not None for e in examples):
                return ()
        codes += _named_bodies(item, reached)
    except Exception:  # an object that cannot be read so: not wrapped
        return ()
    out: list[Any] = []
    for code in codes:
        if code is not None and code is not called and not any(code is c for c in out):
            out.append(code)
    return tuple(out)


def _named_bodies(item: Any, reached: list[Any] | None = None) -> list[Any]:
    """The codes of the functions :func:`_reached` from ``item.obj`` (``reached``: that list when the caller has it)
    that bear the test function's own name (its ``originalname``), none ``item.obj``'s own: the body a decorator
    calls (soft39). May raise (an object that cannot be read so)."""
    obj = item.obj
    called = _called_code(item)
    name = getattr(item, "originalname", None) or str(getattr(item, "name", "")).split("[", 1)[0]
    out: list[Any] = []
    for func in _reached(getattr(obj, "__func__", obj)) if reached is None else reached:
        code = getattr(func, "__code__", None)
        if code is not None and code is not called and getattr(code, "co_name", None) == name:
            out.append(code)
    return out


#: Objects :func:`_reached` looks at, at most (a closure holding a large graph of functions is not walked further).
_MAX_REACHED = 64


def _reached(obj: Any) -> list[Any]:
    """``obj`` (a test's function) and the Python functions reached from it, breadth first, at most
    :data:`_MAX_REACHED`: a function's ``__wrapped__``, its ``.hypothesis.inner_test`` (hypothesis's ``given``) and
    the functions (a bound or static method's ``__func__``) its closure's cells hold."""
    out: list[Any] = []
    todo = [obj]
    while todo and len(out) < _MAX_REACHED:
        func = todo.pop(0)
        if isinstance(func, (types.MethodType, staticmethod, classmethod)):
            func = func.__func__
        if not isinstance(func, types.FunctionType) or any(func is f for f in out):
            continue  # only plain functions are looked into (a mock in a closure is not asked for attributes)
        out.append(func)
        todo.append(getattr(func, "__wrapped__", None))
        todo.append(getattr(getattr(func, "hypothesis", None), "inner_test", None))
        for cell in getattr(func, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
    return out


def _assertion(exc: BaseException) -> bool:
    """Whether ``exc`` is an assertion's failure: an ``AssertionError``, pytest's ``Failed``, or (gatk40) an exception
    an expecting context let through, not the one it expected (:data:`_unmatched`: ``pytest.raises(OSError)`` meeting
    a ``ValueError`` fails so; an exception-swap twin fails a real fix so at its site). A nested soft statement keeps
    these only; before, such a twin in a ``with`` body stopped there and left what the rest of the body puts back."""
    return isinstance(exc, (AssertionError, pytest.fail.Exception)) or any(exc is e for e in _unmatched)


def _skip_test(exc: BaseException) -> bool:
    """Whether ``exc`` is ``unittest``'s ``SkipTest`` (an ``Exception``, a skip to pytest and ``unittest``)."""
    skip = getattr(sys.modules.get("unittest"), "SkipTest", None)
    return isinstance(skip, type) and isinstance(exc, skip)


class _Soft:
    """The context of one soft statement (:func:`soft`); ``caught``: ``None`` at a test function's top, else (nested)
    what returns the types the enclosing ``except`` clauses catch."""

    def __init__(self, caught: Any = None) -> None:
        self._caught = caught

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc_val: Any, tb: Any) -> bool:
        __tracebackhide__ = True
        return self._exit(exc_val)

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, exc_type: Any, exc_val: Any, tb: Any) -> bool:
        __tracebackhide__ = True
        return self._exit(exc_val)

    def _exit(self, exc_val: Any) -> bool:
        """Whether the failure ``exc_val`` leaving the statement is kept (:func:`soft`); the statement's frame is
        the caller's of ``__exit__`` or ``__aexit__`` (an ``async with``'s: soft40)."""
        __tracebackhide__ = True
        if exc_val is None or not _in_call[0] or _skip_test(exc_val):
            return False  # a pass, no call phase of ours, a unittest skip: as without the context
        failed = _assertion(exc_val)
        if self._caught is None:
            if not (failed or isinstance(exc_val, Exception)):
                return False  # a skip, xfail, exit, interrupt: as without the context
        elif not failed or _nested[0] >= _MAX_NESTED:
            return False  # nested: an assertion's failure only, and not past the bound
        frame = sys._getframe(2)
        code = frame.f_code
        if _called[0] is None or code is not _called[0] and (
                not any(code is c for c in _wrapped[0]) or not (failed or _returnable(frame))):
            # not the body pytest calls itself (a helper test's), nor the body a decorator wraps: what it raises goes
            # on; there, what is no assertion's failure goes on too unless the decorator meets it when the body
            # returns (soft41: its decorator may take it, a retry, hypothesis's assume, and so still does)
            return False
        if self._caught is None and not failed and _taken():
            return False  # soft42: a context around it whose own code takes exceptions ends the body there, as written
        if self._caught is not None:
            try:
                if isinstance(exc_val, self._caught()):
                    return False  # an enclosing except clause takes it, as without the context
            except Exception:  # a clause's types this cannot read: as without the context
                return False
            _nested[0] += 1
        if not _blocks and code is not _called[0] and _at_return(frame, exc_val):
            return True  # a decorator's body: its decorator meets the failure when the body returns (soft40)
        scope = _blocks[-1] if _blocks else _soft_first
        if not scope:
            scope.extend([exc_val, _last_compare[0]])
        return True


def _taken() -> bool:
    """Whether a ``with`` body around a top soft statement (the :func:`soft_block` contexts entered, innermost
    first; only a softened test body enters them) has a context whose own code takes exceptions (:func:`_takes`;
    soft42): an exception that is no assertion's failure reaching the statement then goes on as written, ending the
    body there (a repository's ``@contextmanager def expect(kind)`` takes a real fix's expected exception so, and the
    original never ran the rest of that body); elsewhere it is kept and the body runs on (the plain run's bare
    ``raises`` body inside a ``warnings.catch_warnings``, gatk40)."""
    for takers in reversed(_block_takers):
        if takers is None:
            continue
        try:  # gatk47: the contexts the with entered, else what made them
            objs = takers if isinstance(takers, list) else takers()
        except Exception:  # what made a context cannot be read again: as not taking
            continue
        if any(_takes(obj) for obj in objs):
            return True
    return False


_TAKES: dict[Any, bool] = {}


def _takes(obj: Any) -> bool:
    """Whether what makes a ``with``'s context (a callable, or the context itself) is one whose own Python code takes
    an exception the body raises (soft42), told from that code, not its name: a ``contextlib.contextmanager`` function
    (unwrapped through ``__wrapped__``) whose generator has a ``yield`` inside a ``try`` with an ``except`` clause, or
    (gatk43) inside the body of a ``with`` one of whose contexts takes exceptions so (what makes it named in the
    generator's own module or closure: ``with pytest.raises(kind): yield``), and (gatk43) such a function's context
    made before its ``with`` (``cm = keep()``; ``with cm:``), read by that function; a class, or an object's class,
    whose ``__exit__`` or ``__aexit__`` (Python code) returns anything but nothing, ``None`` or ``False``; and (gatk43)
    one of the expecting functions whose contexts the reporter watches (:func:`_expecting_functions`:
    ``pytest.raises``, ``unittest``'s ``assertRaises``), under any name; and (soft44) a plain function one of whose
    ``return`` statements returns a call of what takes so (``def expect(kind): return Expect(kind)``; gatk46: or a
    name it assigns one, :func:`_returned_calls`), the callable
    named as a ``with`` item's (:func:`_with_takes`). ``False`` for what it cannot read (C code, a plain function
    returning anything else: a name, a call of what is not a name or a chain of attributes of one)."""
    try:
        func = getattr(obj, "__func__", obj)
        if isinstance(func, types.FunctionType):
            seen = 0
            while not any(func is f for f in _expecting_functions()) and hasattr(func, "__wrapped__") and seen < 100:
                func, seen = func.__wrapped__, seen + 1
            func = getattr(func, "__func__", func)
            if any(func is f for f in _expecting_functions()):
                return True  # gatk43: pytest.raises under another name (from pytest import raises as expect_error)
            if not isinstance(func, types.FunctionType):
                return False
            # soft44: a plain function is read through the maker of what it returns
            return _code_takes(func, True, maker=not func.__code__.co_flags & (0x20 | 0x200))
        gen = getattr(obj, "gen", None)
        if isinstance(gen, _GENERATORS):  # gatk43: a contextmanager's context made before its with
            frame = getattr(gen, "gi_frame", None) or getattr(gen, "ag_frame", None)
            return frame is not None and _code_takes(_Generated(gen, frame), True)
        cls = obj if isinstance(obj, type) else type(obj)
        return any(isinstance(f, types.FunctionType) and _code_takes(f, False)
                   for f in (getattr(cls, "__exit__", None), getattr(cls, "__aexit__", None)))
    except Exception:  # an object that cannot be read so: as not taking
        return False


_EXPECTING: list[Any] = []
#: What a ``contextlib`` context made by a generator function holds as its ``gen``.
_GENERATORS = (types.GeneratorType, types.AsyncGeneratorType)


def _expecting_functions() -> list[Any]:
    """The functions making the expecting contexts :func:`_watch_raises` watches (gatk43): ``pytest.raises`` and
    ``unittest.TestCase``'s ``assertRaises`` and ``assertRaisesRegex`` (their plain functions), read once."""
    if not _EXPECTING:
        found: list[Any] = [getattr(pytest.raises, "__func__", pytest.raises)]
        try:
            import unittest

            found += [unittest.TestCase.assertRaises, unittest.TestCase.assertRaisesRegex]
        except (ImportError, AttributeError):
            pass
        _EXPECTING.extend(found)
    return _EXPECTING


class _Generated:
    """What :func:`_code_takes` reads of a function, had from a suspended generator (``gen``, its ``frame``) whose
    function a ``contextlib`` context no longer holds once entered: its code, globals, builtins and free variables."""

    def __init__(self, gen: Any, frame: Any) -> None:
        self.__code__ = getattr(gen, "gi_code", None) or gen.ag_code
        self.__globals__ = frame.f_globals
        self.__builtins__ = frame.f_builtins
        names = self.__code__.co_freevars
        self.free = {n: v for n, v in frame.f_locals.items() if n in names}


def _code_takes(func: Any, generator: bool, maker: bool = False) -> bool:
    """From ``func``'s source (:func:`_takes`): a generator's ``yield`` inside a ``try`` body with handlers (``except``
    or, gatk43, ``except*``), or inside
    a ``with`` body one of whose contexts takes exceptions (:func:`_with_takes`, gatk43), or (an ``__exit__``) a
    ``return`` of anything but ``None``/``False``, or (``maker``: a plain function making a context, soft44) a
    ``return`` of a call whose callable takes (:func:`_made_by`; gatk46: or of a name assigned such a call, or a
    conditional expression of them, :func:`_returned_calls`); ``False`` without source. Cached by code (``False``
    while it is read: a generator reached again through its own ``with`` adds nothing, nor a maker through itself)."""
    code = func.__code__
    key: Any = (code, "maker") if maker else code
    if key in _TAKES:
        return _TAKES[key]
    _TAKES[key] = False
    import ast
    import inspect
    import textwrap

    tries: tuple[Any, ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))
    out = False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func if isinstance(func, types.FunctionType) else code)))
    except Exception:  # no source (a built function, a file gone), or none that parses alone
        tree = None
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] if tree else []
    if defs:
        for node in _own_nodes(defs[0]):
            if maker and isinstance(node, ast.Return) and node.value is not None:
                out = any(_takes_or_not(_made_by(func, call.func)) for call in _returned_calls(defs[0], node.value))
            elif maker:
                continue
            elif generator and isinstance(node, tries) and node.handlers:
                out = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for s in node.body for n in _own_nodes(s))
            elif generator and isinstance(node, (ast.With, ast.AsyncWith)):
                out = (any(isinstance(n, (ast.Yield, ast.YieldFrom)) for s in node.body for n in _own_nodes(s))
                       and _with_takes(func, node))
            elif not generator and isinstance(node, ast.Return) and node.value is not None:
                out = not (isinstance(node.value, ast.Constant) and node.value.value in (None, False))
            if out:
                break
    _TAKES[key] = out
    return out


def _returned_calls(func_node: Any, value: Any, depth: int = 0) -> list[Any]:
    """The calls a plain maker's ``return value`` may return (gatk46, :func:`_code_takes`): ``value`` itself when a
    call, both sides of a conditional expression, and for a name the calls assigned to it in the function's own code
    (``context = Expect(kind)``; ``return context``: read as taking none before, a real fix ``tests_failed``); a
    name's values read so up to 3 names deep."""
    import ast

    if isinstance(value, ast.Call):
        return [value]
    if isinstance(value, ast.IfExp):
        return _returned_calls(func_node, value.body, depth) + _returned_calls(func_node, value.orelse, depth)
    if not isinstance(value, ast.Name) or depth >= 3:
        return []
    out: list[Any] = []
    for node in _own_nodes(func_node):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None else []
        if any(isinstance(t, ast.Name) and t.id == value.id for t in targets):
            out += _returned_calls(func_node, node.value, depth + 1)
    return out


def _with_takes(func: Any, node: Any) -> bool:
    """Whether a context of ``node`` (a ``with`` statement of ``func``'s code) takes exceptions (:func:`_takes`, by
    what makes it: the callable of an item that is a call, else the item, :func:`_made_by`; gatk43). An item read
    otherwise takes none."""
    import ast

    for item in node.items:
        expr = item.context_expr.func if isinstance(item.context_expr, ast.Call) else item.context_expr
        if _takes_or_not(_made_by(func, expr)):
            return True
    return False


#: What :func:`_made_by` gives for an expression it does not read.
_UNREAD = object()


def _takes_or_not(obj: Any) -> bool:
    """:func:`_takes` of ``obj``; ``False`` for :data:`_UNREAD`."""
    return obj is not _UNREAD and _takes(obj)


def _made_by(func: Any, expr: Any) -> Any:
    """What ``expr`` (an expression of ``func``'s code: a name or a chain of attributes of one) names, the name read in
    ``func``'s closure, then its module, then the builtins, as the header's ``lambda`` of :func:`soft_block` reads
    them; :data:`_UNREAD` for any other expression, a name unbound or an attribute missing."""
    import ast

    chain: list[str] = []
    while isinstance(expr, ast.Attribute):
        chain.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return _UNREAD
    free: dict[str, Any] | None = getattr(func, "free", None)
    if free is None:
        free = {}
        cells = func.__closure__ or ()
        for i, name in enumerate(func.__code__.co_freevars[:len(cells)]):
            try:
                free[name] = cells[i].cell_contents
            except ValueError:  # an empty cell
                continue
    try:
        if expr.id in free:
            obj = free[expr.id]
        elif expr.id in func.__globals__:
            obj = func.__globals__[expr.id]
        else:
            obj = func.__builtins__[expr.id]
        for attr in chain:
            obj = getattr(obj, attr)
    except Exception:  # a name unbound, an attribute missing: not read
        return _UNREAD
    return obj


def _own_nodes(node: Any) -> list[Any]:
    """``node`` and the nodes under it, not those of a function, lambda or class defined inside it."""
    import ast

    out = [node]
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


#: The failures kept in the bodies a decorator calls (:func:`_at_return`), by their frame's id: ``[frame, failure,
#: comparison]``, each raised when its frame returns.
_returning: dict[int, list[Any]] = {}
#: What a frame's code flags when it may return more than once (a generator's or coroutine's suspension is a return).
_SUSPENDS = 0x20 | 0x80 | 0x100 | 0x200


def _at_return(frame: Any, exc: BaseException) -> bool:
    """Keep ``exc`` (an assertion's failure a soft statement at the top of the body a decorator of the test calls met,
    :func:`_wrapped_code`) to be raised when ``frame`` (that body's) returns, whatever it returns or raises (soft40):
    the body runs on to its end, as its original's passing run does, and its decorator then meets the failure as it
    did (a retry wrapper calls the body again; ``mock.patch`` puts back what it patched; hypothesis shrinks the
    example), where kept for the call phase the decorator met none (a retry wrapper's first failing attempt failed
    the test its second attempt passes). Done with a profile function of the test's thread (``sys.setprofile``)
    while such a failure waits; ``False`` (the failure kept for the call phase as before) when another profile
    function is set (a profiler) or the frame may suspend (a generator's or coroutine's)."""
    if frame.f_code.co_flags & _SUSPENDS or not _profile_raises():
        return False
    if id(frame) in _returning:
        return True  # a later failure of the same body: its first is raised
    if not _returning:
        if sys.getprofile() is not None:
            return False
        sys.setprofile(_returned)
    _returning[id(frame)] = [frame, exc, _last_compare[0]]
    return True


def _returnable(frame: Any) -> bool:
    """Whether a failure kept in ``frame`` (the body a decorator of the test calls) would be raised when it returns
    (:func:`_at_return`): its code does not suspend, this Python raises so, and no other profile function is set.
    soft41: only then does such a body's top soft statement keep what is no assertion's failure (a real fix's
    exception at an unwrapped ``raises`` body, the plain run's or a twin's): its decorator meets it at the body's end
    as it met it at the statement (a retry calls the body again, hypothesis passes over an ``assume``), the rest of
    the body having run; else it goes to the decorator as written."""
    return (not frame.f_code.co_flags & _SUSPENDS and _profile_raises()
            and sys.getprofile() in (None, _returned))


_RAISES: list[bool] = []


def _profile_raises() -> bool:
    """Whether this Python raises in a returning frame what a profile function set from a call inside it raises at
    its return (what :func:`_at_return` does), tried once (``False`` while another profile function is set)."""
    if not _RAISES:
        if sys.getprofile() is not None:
            return False
        marker = AssertionError("soft40")

        def profile(frame: Any, event: str, arg: Any) -> None:
            if event == "return" and frame.f_code is body.__code__:
                sys.setprofile(None)
                raise marker

        def body() -> int:
            sys.setprofile(profile)
            return 1

        try:
            body()
            _RAISES.append(False)
        except AssertionError as e:
            _RAISES.append(e is marker)
        finally:
            if sys.getprofile() is profile:
                sys.setprofile(None)
    return _RAISES[0]


def _returned(frame: Any, event: str, arg: Any) -> None:
    """The profile function :func:`_at_return` sets: when a frame holding a kept failure returns, that failure is
    raised in place of what it returned or raised (the profile function is unset first, the last one waiting)."""
    if event != "return" or id(frame) not in _returning or _returning[id(frame)][0] is not frame:
        return
    __tracebackhide__ = True
    _, exc, compare = _returning.pop(id(frame))
    if not _returning:
        sys.setprofile(None)
    _last_compare[0] = compare
    raise exc


def _end_returning() -> None:
    """At a call phase's end: unset :func:`_returned` when it is set, a failure that still waits (its frame never
    returned so) kept for the call phase (the first, when none is)."""
    if sys.getprofile() is _returned:
        sys.setprofile(None)
    for _, exc, compare in _returning.values():
        if not _soft_first:
            _soft_first.extend([exc, compare])
    _returning.clear()


def soft(caught: Any = None) -> Any:
    """The context a *soft statement* of a canary run's test file runs in (docs/contracts.md §7, twin37;
    ``pytest_homefield.sandbox.canary_soft``): a failure there (an ``Exception`` or pytest's ``Failed``; a nested
    statement's, ``caught`` given, an assertion's (:func:`_assertion`) that no type of ``caught()`` is, at most
    :data:`_MAX_NESTED` in a call phase) is kept, the first of the test's call phase (of its innermost
    :func:`soft_block`), and the body runs on; :func:`pytest_runtest_call` fails the call phase with that first
    failure at the body's end, whatever came after it (another failure, a skip, an ``xfail``; an ``exit``, a
    ``KeyboardInterrupt`` or a ``unittest`` ``SkipTest`` goes through), so the test leaves what its body leaves when
    it passes, and its ``line`` and ``operands`` are the statement's that failed. Outside a call phase this process
    runs under that hook (the reporter not loaded as a plugin), and in any frame but that of the function pytest
    calls for the test (a decorated test's body, called by its decorator, which may expect what it raises:
    hypothesis's ``assume``), the context changes nothing; but in the body a ``functools.wraps`` decorator wraps
    (``mock.patch``: :func:`_wrapped_code`) it keeps an assertion's failure as a nested statement does (gatk39), and
    raises it when that body returns (:func:`_at_return`, soft40: a retry wrapper met no failure); where it can be
    raised so (:func:`_returnable`), any ``Exception`` at that body's top too (soft41)."""
    return _Soft(caught)


class _Block:
    """The context of one ``with`` (or ``async with``) body holding soft statements (:func:`soft_block`)."""

    def __init__(self, takers: Any = None, entered: int = 0) -> None:
        self._takers = takers
        self._entered = entered

    def __enter__(self) -> None:
        _blocks.append([])
        _left.append(False)
        # gatk47: the contexts the header's items made (noted by :func:`through`), read in place of what made them
        objs = _through[len(_through) - self._entered:] if 0 < self._entered <= len(_through) else None
        del _through[:]
        _block_takers.append(objs if objs is not None else self._takers)

    def __exit__(self, exc_type: Any, exc_val: Any, tb: Any) -> None:
        __tracebackhide__ = True
        self._leave(exc_val)

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(self, exc_type: Any, exc_val: Any, tb: Any) -> None:
        __tracebackhide__ = True
        self._leave(exc_val)

    def _leave(self, exc_val: Any) -> None:
        """The body's end (the ``with`` statement's frame: the caller's of ``__exit__`` or ``__aexit__``): its first
        kept failure raised, or, a jump leaving the body (:func:`soft_jump`), kept further out: in the next body out,
        else (soft40) raised when the frame returns where it is the body a decorator calls (:func:`_at_return`), else
        for the call phase."""
        __tracebackhide__ = True
        kept = _blocks.pop() if _blocks else []
        left = _left.pop() if _left else False
        if _block_takers:
            _block_takers.pop()
        if not kept or isinstance(exc_val, (KeyboardInterrupt, pytest.exit.Exception)):
            return
        _last_compare[0] = kept[1]
        if exc_val is None and left:  # a jump leaves the body: it goes on, its failure kept further out (soft40)
            frame = sys._getframe(2)
            if not _blocks and frame.f_code is not _called[0] and _at_return(frame, kept[0]):
                return
            scope = _blocks[-1] if _blocks else _soft_first
            if not scope:
                scope.extend(kept)
            return
        raise kept[0]


def through(context: Any) -> Any:
    """``context`` itself, noted for the :func:`soft_block` its ``with`` header enters next (gatk47): a softened
    header at a test's top writes each item's context as ``through(<item>)``, so that :func:`_taken` reads the
    context the ``with`` entered (``_takes`` of the object: its class's ``__exit__``, a ``contextmanager``'s
    generator), never only what made it: a maker returning ``pytest.raises(kind) if kind else nullcontext()`` makes
    a taking context or one taking nothing by its arguments, which its code cannot tell."""
    _through.append(context)
    return context


def soft_block(takers: Any = None, entered: int = 0) -> Any:
    """The last context of a ``with`` statement whose body holds nested soft statements (contracts §7): the first
    failure one kept in the body (:func:`soft`) is raised at the body's end (in place of what the body raised after
    it, an ``exit`` or ``KeyboardInterrupt`` apart), so the ``with``'s own contexts meet it as they met it at its
    statement (a ``pytest.raises`` or ``assertRaises`` takes it, a ``subTest`` reports it), the rest of the body having
    run. ``takers`` (soft42; a ``with`` at a test's top whose body holds top soft statements): what returns the
    callables making the ``with``'s contexts, read when an exception that is no assertion's failure reaches such a
    statement (:func:`_taken`); ``entered`` (gatk47): how many of the header's items :func:`through` noted, the
    contexts read then in place of ``takers``."""
    return _Block(takers, entered)


def soft_jump(blocks: int) -> None:
    """Called right before a ``return``, ``break`` or ``continue`` (contracts §7, soft40) that leaves the bodies of
    the ``blocks`` innermost :func:`soft_block` contexts: each of those, left with no failure going through, keeps
    its body's first kept failure in the scope around it (the next body out, else the test's call phase) instead of
    raising it, so the jump happens as in the original's passing run (raised at the body's end, the failure would
    undo the jump) and the test still fails with that failure at its end."""
    for n in range(1, min(blocks, len(_left)) + 1):
        _left[-n] = True


def _expecting_failure(item: Any) -> bool:
    """Whether ``item`` is a ``unittest`` test marked ``expectedFailure`` (its method or class): its failure is
    what makes it pass, so none is kept (a kept one would make ``unittest`` report an unexpected success)."""
    return bool(getattr(getattr(item, "obj", None), "__unittest_expecting_failure__", False)
                or getattr(getattr(item, "cls", None), "__unittest_expecting_failure__", False))


def _force(outcome: Any, exc: BaseException) -> None:
    """Make ``outcome`` (an old-style hookwrapper's result) raise ``exc``: ``force_exception`` (pluggy 1.1), else
    its ``_excinfo`` (pluggy 0.x, 1.0)."""
    force = getattr(outcome, "force_exception", None)
    if force is not None:
        force(exc)
    else:  # pragma: no cover - old pluggy
        outcome._excinfo = (type(exc), exc, exc.__traceback__)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_call(item: Any) -> Any:
    """Forget any comparison and soft failure before the test's call phase runs; after it, when a soft statement
    failed (:func:`soft`), the call phase fails with the first such failure (outermost: what every other wrapper
    made of the call is replaced; for a ``unittest`` test also what its result recorded after it, a later failure or
    a ``SkipTest``: pytest's ``TestCaseFunction._excinfo``), unless it ended with an ``exit`` or a
    ``KeyboardInterrupt``."""
    _last_compare[0] = None
    del _soft_first[:], _blocks[:], _unmatched[:], _left[:], _block_takers[:], _through[:]
    _nested[0] = 0
    _called[0], _wrapped[0] = _called_code(item), _wrapped_code(item)
    _in_call[0] = not _expecting_failure(item)
    _returning.clear()
    try:
        outcome = yield
    finally:
        _in_call[0], _called[0], _wrapped[0] = False, None, ()
        _end_returning()
    first = list(_soft_first)
    del _soft_first[:]
    if not first:
        return
    excinfo = getattr(outcome, "excinfo", None)
    if excinfo is not None and isinstance(excinfo[1], (KeyboardInterrupt, pytest.exit.Exception)):
        return
    _last_compare[0] = first[1]
    _force(outcome, first[0])
    excinfos = getattr(item, "_excinfo", None)  # what pytest's unittest plugin makes the call's failure in its place
    if isinstance(excinfos, list):
        del excinfos[:]


class _Writer:
    """Writes one JSON line per event, with this process's ``pid``, to the channel's descriptor (taken
    from :data:`_channel`, so that only one session ever writes)."""

    def __init__(self) -> None:
        self._fd: int | None = _channel[0]
        _channel[0] = None
        self._pid = os.getpid()
        self._max_collected = -1
        self._session: pytest.Session | None = None
        self._workers_deselected = False  # a worker's deselected ids written (all workers deselect alike)

    def write(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            return
        line = (json.dumps({**record, "pid": self._pid}, ensure_ascii=True) + "\n").encode("ascii")
        while line:  # a pipe takes a long line in pieces; homefield's reader drains it meanwhile
            line = line[os.write(self._fd, line):]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- hooks (registered on the non-worker process only) -------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            path = report.nodeid.split("::")[0]
            event: dict[str, Any] = {"event": "collect_error", "nodeid": report.nodeid, "path": path,
                     "message": _message(report) or "collection failed"}
            if "::" not in report.nodeid and self._left_out(path):
                event["left_out"] = True
            self.write(event)

    def _left_out(self, path: str) -> bool:
        """Whether ``path`` (relative to the rootdir) is a file the command line named that the repository's own
        configuration would leave out of collection: pytest asks ``pytest_ignore_collect`` (a ``conftest.py``'s
        ``collect_ignore``/``collect_ignore_glob``, ``--ignore``) only of paths it finds, never of those named, so
        cattrs' ``tests/strategies/test_tagged_unions_695.py``, left out on Python < 3.12, was collected when
        named and failed on its ``type`` statements (nu58). False when it cannot tell."""
        session = self._session
        if session is None or not path:
            return False
        try:
            file = session.config.rootpath / path
            if not file.is_file() or not session.isinitpath(file):
                return False
            return bool(session.gethookproxy(file).pytest_ignore_collect(collection_path=file, config=session.config))
        except Exception:  # a conftest's hook that raises says nothing about the file
            return False

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._collected([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._collected([str(i) for i in ids])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker ended: the ids its selection left out (:class:`_WorkerDeselected`), once."""
        ids = (getattr(node, "workeroutput", None) or {}).get(_DESELECTED_KEY)
        if isinstance(ids, list) and not self._workers_deselected:
            self._workers_deselected = True
            self._ids("deselected", [str(i) for i in ids if i])

    def _collected(self, ids: list[str]) -> None:
        if len(ids) > self._max_collected:
            self._max_collected = len(ids)
            self.write({"event": "collected", "count": len(ids)})
            self._ids("collected_ids", ids)

    def _ids(self, event: str, ids: list[str]) -> None:
        """Write ``ids`` as ``event`` lines of at most :data:`_IDS_PER_LINE` characters of ids each."""
        chunk: list[str] = []
        size = 0
        for nodeid in ids:  # a line stays well under the host's longest (64 KiB)
            cost = len(json.dumps(nodeid, ensure_ascii=True)) + 2
            if chunk and size + cost > _IDS_PER_LINE:
                self.write({"event": event, "ids": chunk})
                chunk, size = [], 0
            chunk.append(nodeid)
            size += cost
        if chunk:
            self.write({"event": event, "ids": chunk})

    def pytest_deselected(self, items: list[Any]) -> None:
        ids = [str(getattr(item, "nodeid", "")) for item in items]
        self._ids("deselected", [i for i in ids if i])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        message = _message(report)
        seals = _seals_of(report)
        caught = _caught_of(report)
        torn = _torn_of(report) if report.when == "teardown" and report.failed else None
        self.write(
            {
                **({"seals": seals} if seals else {}),
                **({"torn": torn} if torn is not None else {}),
                **({"caught": caught} if caught else {}),
                "event": "phase",
                "nodeid": report.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "xfail": hasattr(report, "wasxfail"),
                "duration": float(getattr(report, "duration", 0.0) or 0.0),
                "message": message,
                "subtest": type(report).__name__.lower() == "subtestreport",
                "timeout": _timed_out(report, message),
                "line": _line_of(report),
                "operands": _operands_of(report),
            }
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write({"event": "finish", "exitstatus": int(exitstatus)})
        self.close()  # nothing after finish counts; nothing after it is written either


_PLUGIN_NAME = "homefield_reporter_writer"
_WORKER_PLUGIN = "homefield_reporter_worker_deselected"


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: Any, args: Any) -> Any:
    """Record an initial ``conftest.py`` that fails to import (pytest then exits with status 4
    before any configure hook runs, so this is the only place to see it). Old-style hookwrapper so
    that the module also loads under old pytest/pluggy versions of a repository's environment.

    Before the hook's implementations run, coverage is switched off (:func:`_no_coverage`)."""
    if _active() or _is_worker(early_config):
        _no_coverage(early_config)
    outcome = yield
    excinfo = outcome.excinfo
    if excinfo is None or not _active() or _is_worker(early_config):
        return
    exc = excinfo[1]
    if type(exc).__name__ != "ConftestImportFailure":
        return
    conftest = str(getattr(exc, "path", ""))
    try:
        conftest = os.path.relpath(conftest)
    except ValueError:
        pass
    cause = getattr(exc, "cause", None) or exc
    writer = _Writer()  # configure never runs after this: the start event is written here
    writer.write({"event": "start", "pytest": pytest.__version__, "python": sys.version.split()[0]})
    writer.write(
        {
            "event": "collect_error",
            "nodeid": "",
            "path": conftest,
            "message": _one_line(f"{type(cause).__name__}: {cause}"),
        }
    )
    writer.close()


def _no_coverage(early_config: pytest.Config) -> None:
    """pytest-cov's ``--no-cov`` in a homefield test run, whatever the command or its ``addopts`` ask (``--cov``):
    coverage writes its data file and reports (``.coverage``, ``coverage.xml``) into the tree under test, which
    every sandboxed run keeps read-only, so each run ended before any outcome with ``OSError: [Errno 30]
    Read-only file system: '.coverage'`` (nu52, arrow-py/arrow: its ``addopts`` hold ``--cov=arrow``; 13 of 13
    candidates ``setup_failed``), and a ``--cov-fail-under`` judges a run of a few test files by the whole
    suite's threshold. Coverage decides no test's outcome. pytest-cov starts coverage in its own
    ``pytest_load_initial_conftests`` (``tryfirst``), which the wrapper of this module's runs before; its
    option is only there when pytest-cov is loaded (a ``-p no:cov`` or an uninstalled one: nothing to do)."""
    options = early_config.known_args_namespace
    if getattr(options, "no_cov", None) is False:
        options.no_cov = True


#: The report files a repository's ``addopts`` may ask for, each option and its "off" value: pytest's own JUnit
#: (``--junitxml``, arrow-py/arrow's ``--junitxml=junit.xml``), pytest-html's (``--html=report.html``) and
#: pytest-json-report's (``--json-report``, its ``.report.json``); an option is only there when its plugin is loaded.
_REPORT_FILES = (("xmlpath", None), ("htmlpath", None), ("json_report", False))


def _no_report_files(config: pytest.Config) -> None:
    """No report file of :data:`_REPORT_FILES` in a homefield test run, before their plugins open one (this module's
    ``pytest_configure`` is ``tryfirst``; pytest-html and pytest-json-report read theirs in a plain one): each is
    written into the tree under test when the session finishes, read-only in a sandboxed run, and the ``OSError``
    raised there came after the last outcome and before the reporter's finish event, so a run of the reference fix
    read "did not finish" (nu52: oracle ``tests_failed`` on arrow's 4c8c44aefc0e; nu54: a traceback in ``tests.log``,
    "exit status 1 but no test failed"). homefield reads no such file: a command that writes JUnit for homefield names
    ``{junit}`` and gets no reporter."""
    for name, off in _REPORT_FILES:
        if getattr(config.option, name, None):
            setattr(config.option, name, off)


def pytest_addoption(parser: Any, pluginmanager: Any) -> None:
    """Two things a test command may have switched off:

    * The cache provider (``-p no:cacheprovider`` on its command line): homefield still passes
      ``-o cache_dir=…``, which pytest would then call an unknown option; a repository whose
      ``filterwarnings`` makes warnings errors stopped there with an INTERNALERROR before any test
      ran. The ``cache_dir`` ini name is declared here, unused, so the override is harmless.
    * pytest-timeout, loaded when a per-test limit is asked for (``PYTEST_TIMEOUT`` set) and it is
      installed but not loaded: a test command with ``--disable-plugin-autoload`` (or
      ``PYTEST_DISABLE_PLUGIN_AUTOLOAD``) would otherwise ignore the limit. ``-p no:timeout`` is
      respected. Registered under its entry-point name ``timeout``, so autoloading skips it later."""
    if _active() and pluginmanager.is_blocked("cacheprovider"):
        parser.addini("cache_dir", "set by homefield; unused while the cache provider is disabled")
    if not _active() or not os.environ.get("PYTEST_TIMEOUT"):
        return
    if pluginmanager.has_plugin("timeout") or pluginmanager.is_blocked("timeout") \
            or pluginmanager.is_blocked("pytest_timeout"):
        return
    try:
        import pytest_timeout  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return
    if not pluginmanager.is_registered(pytest_timeout):
        pluginmanager.register(pytest_timeout, "timeout")


#: The seed pytest-randomly gets in every test run where it is loaded and not given one (:func:`_keep_order`).
RANDOMLY_SEED = 0


def _keep_order(config: pytest.Config) -> None:
    """Every test run of a task in the same order, with the same random numbers: where pytest-randomly is
    loaded (an entry-point plugin any test environment may install), its reordering is turned off
    (``--randomly-dont-reorganize``) and, unless the command gave a number, its seed is
    :data:`RANDOMLY_SEED` (else a new one per run: ``default``, or ``last``, read from the run's fresh
    cache). It shuffled every run anew, so a test that depends on another's order passed when mined and
    failed the reference fix when graded (nu20, hynek/structlog: oracle 49 of 62, 62 of 62 with
    ``-p no:randomly``), as ``PYTHONHASHSEED=0`` already does for hash order. The options are set before
    pytest-randomly's own ``pytest_configure`` reads them (this hook is ``tryfirst``); xdist workers get
    the controller's."""
    option = config.option
    if hasattr(option, "randomly_reorganize"):
        option.randomly_reorganize = False
    if getattr(option, "randomly_seed", None) in ("default", "last"):
        option.randomly_seed = RANDOMLY_SEED


def _run_every_test(config: pytest.Config) -> None:
    """Every selected test of a run reports an outcome (docs/contracts.md §7, as ``--maxfail=0`` on the command line
    makes of ``-x``): pytest's stepwise plugin (``--sw``, ``--stepwise-skip``, ``--sw-reset`` in a repository's
    ``addopts``) is not registered. It stopped the session at its first failed test, and in a canary run a twin fails
    every real fix: the tests after it went unreported, a FAIL_TO_PASS id whose original ran after another group's twin
    ``error`` there (gatk38: a real fix ``tests_failed``, the reference fix, graded without canaries, ``solved``). The
    options are cleared before stepwise's own ``pytest_configure`` reads them (this hook is ``tryfirst``), in xdist
    workers too (each parses the command line and ``addopts`` again: ``--sw -n 1`` stopped the session from its
    worker)."""
    option = config.option
    for name in ("stepwise", "stepwise_skip", "stepwise_reset"):
        if getattr(option, name, False):
            setattr(option, name, False)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if _active():
        _keep_order(config)
        _no_report_files(config)
    if _active() or _is_worker(config):
        # an xdist worker parses the command line and addopts again; it never has the channel (its controller took
        # it), it records
        _run_every_test(config)
        _watch_raises()
    output = getattr(config, "workeroutput", None)
    if _is_worker(config) and isinstance(output, dict) and not config.pluginmanager.has_plugin(_WORKER_PLUGIN):
        config.pluginmanager.register(_WorkerDeselected(output), _WORKER_PLUGIN)
    if not _active() or _is_worker(config) or config.pluginmanager.has_plugin(_PLUGIN_NAME):
        return
    writer = _Writer()
    config.pluginmanager.register(writer, _PLUGIN_NAME)
    writer.write({"event": "start", "pytest": pytest.__version__, "python": sys.version.split()[0]})


def pytest_unconfigure(config: pytest.Config) -> None:
    writer = config.pluginmanager.get_plugin(_PLUGIN_NAME)
    if writer is not None:
        writer.close()
        config.pluginmanager.unregister(writer)
