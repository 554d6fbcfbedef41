"""gatk43: a ``with`` at a test's top whose context takes the exception its body raises through an expecting context
of its own (contracts §7 "Soft statements", soft42's ``_takes``).

soft42 reads whether a context takes exceptions from its code: a ``contextmanager`` whose ``yield`` sits in a ``try``
with an ``except``, a class whose ``__exit__`` returns something truthy. A ``contextmanager`` whose ``yield`` sits in
the body of a ``with`` of an expecting context (``@contextmanager def expect(kind): with pytest.raises(kind): yield``,
the usual way to name ``pytest.raises`` with a message of the repository's own) has no ``try``: read as taking none, a
real fix's expected ``TypeError`` at the body's first statement was kept, the rest of the body ran (what the original
never ran: a loop's next item), and the ``TypeError`` was raised at the body's end, where ``expect`` took it; what the
rest did stayed and the test failed in every canary run: the real fix ``tests_failed`` on seeds 0 and 1.

Now (``homefield_reporter._takes``): a generator's ``yield`` in the body of a ``with`` one of whose contexts takes
exceptions (what makes it named in the generator's own module, read as any context is) takes them too; and a plain
function is read as taking when it is one of the expecting functions whose contexts the reporter watches
(``pytest.raises``, ``unittest``'s ``assertRaises``/``assertRaisesRegex``), whatever name the test gives it: soft42's
strict xfail (``from pytest import raises as expect_error``) closes with it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.modes_task import EXPECTING_TESTS, grade_modes, softened_outcomes

#: The commit's test: ``expect`` is ``pytest.raises`` inside a ``contextmanager`` (no ``try`` of its own).
WRAPPED = """from contextlib import contextmanager

import pytest

from modes import MODE, compute


@contextmanager
def expect(kind):
    with pytest.raises(kind):
        yield
""" + EXPECTING_TESTS


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_body_a_wrapped_raises_expects_to_raise_stops_there(tmp_path: Path, seed: int) -> None:
    """``solved`` on seeds 0 and 1 (``tests_failed`` before: the body ran on to ``'b'`` and ``seen`` held both)."""
    g = grade_modes(tmp_path, WRAPPED, seed)
    assert g.outcome == "solved", g


#: Which contexts take a top soft statement's exception, told through what their generator's ``with`` holds:
#: ``pytest.raises`` and ``suppress`` inside a ``contextmanager`` take (the body ends at ``boom()``, as written), and so
#: does ``pytest.raises`` under another name; a ``contextmanager`` holding a lock or ``warnings.catch_warnings`` (no
#: taking context) takes none: kept there, the body runs on.
CONTEXTS = '''import threading
import warnings
from contextlib import contextmanager, suppress

import pytest
from pytest import raises as expect_error

LOG = []
LOCK = threading.Lock()


@contextmanager
def expect(kind):
    with pytest.raises(kind):
        yield


@contextmanager
def ignoring(kind):
    with suppress(kind):
        yield


@contextmanager
def locked():
    with LOCK:
        yield


@contextmanager
def quiet():
    with warnings.catch_warnings():
        yield


def boom():
    raise TypeError("fixed")


def test_expect():
    with expect(TypeError):
        boom()
        LOG.append("after expect")


def test_ignoring():
    with ignoring(TypeError):
        boom()
        LOG.append("after ignoring")


def test_aliased():
    with expect_error(TypeError):
        boom()
        LOG.append("after aliased")


def test_locked():
    with locked():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_quiet():
    with quiet():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_log():
    assert LOG == ["on", "off", "on", "off"]
'''


def test_a_context_taking_through_its_own_with_is_told_by_its_code(tmp_path: Path) -> None:
    """Softened: ``test_expect``, ``test_ignoring`` and ``test_aliased`` pass with nothing after the exception run
    (before, each ran on and ``test_log`` failed); ``test_locked`` and ``test_quiet`` fail at ``boom()`` with their
    bodies run to the end."""
    got, log = softened_outcomes(tmp_path, CONTEXTS)
    outcomes = {"test_expect": "passed", "test_ignoring": "passed", "test_aliased": "passed", "test_locked": "failed",
                "test_quiet": "failed", "test_log": "passed"}
    assert got == outcomes, log


#: ``except*`` (Python 3.11, ``ast.TryStar``) takes an exception as ``except`` does (a naked one too, in a group).
GROUPED = '''from contextlib import contextmanager

LOG = []


@contextmanager
def grouped(kind):
    try:
        yield
    except* kind:
        pass


def boom():
    raise TypeError("fixed")


def test_grouped():
    with grouped(TypeError):
        boom()
        LOG.append("after grouped")


def test_log():
    assert LOG == []
'''


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11's")
def test_a_context_taking_with_except_star_ends_its_body(tmp_path: Path) -> None:
    """Softened: ``test_grouped`` passes with nothing after the exception run (before, its ``try`` was no ``ast.Try``
    and the body ran on: ``test_log`` failed)."""
    got, log = softened_outcomes(tmp_path, GROUPED)
    assert got == {"test_grouped": "passed", "test_log": "passed"}, log


#: A ``contextmanager``'s context made before its ``with`` (``cm = keep()``, ``with cm:``) is read by its generator's
#: function, as ``with keep():`` is: ``keep`` (a ``try``/``finally``) takes none, ``expect`` (a ``try``/``except``)
#: takes. Before, the made context was read by its class, ``contextlib``'s, whose ``__exit__`` returns a computed
#: value: every such context took, and ``keep``'s body ended at ``boom()`` without putting the setting back. ``Quiet``'s
#: ``__exit__`` (a ``functools.wraps`` wrapper over one returning nothing) is read by what it wraps, as ``inspect``
#: reads a wrapped function's source: it takes none.
MADE = '''import functools
from contextlib import contextmanager

LOG = []


def logged(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


class Quiet:
    def __enter__(self):
        return self

    @logged
    def __exit__(self, *exc):
        LOG.append("quiet")


@contextmanager
def keep():
    try:
        yield
    finally:
        LOG.append("kept")


@contextmanager
def expect(kind):
    try:
        yield
    except kind:
        pass


def boom():
    raise TypeError("fixed")


def test_keep():
    cm = keep()
    with cm:
        LOG.append("on")
        boom()
        LOG.append("off")


def test_expect():
    cm = expect(TypeError)
    with cm:
        boom()
        LOG.append("after expect")


def test_quiet():
    with Quiet():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_log():
    assert LOG == ["on", "off", "kept", "on", "off", "quiet"]
'''


def test_a_context_made_before_its_with_is_read_by_its_generator(tmp_path: Path) -> None:
    """Softened: ``test_keep`` fails at ``boom()`` with its body run to the end, ``test_expect`` passes with nothing
    after the exception run, ``test_log`` passes (it failed before: ``"off"`` missing)."""
    got, log = softened_outcomes(tmp_path, MADE)
    outcomes = {"test_keep": "failed", "test_expect": "passed", "test_quiet": "failed", "test_log": "passed"}
    assert got == outcomes, log
