"""soft44: a ``with`` at a test's top whose context is made by a plain function returning a context that takes
exceptions (``def expect(kind): return Expect(kind)``, ``Expect.__exit__`` returning true for ``kind``; contracts §7
"Soft statements", soft42's ``_takes``).

soft42 and gatk43 read whether a context takes exceptions from what makes it: a ``contextmanager`` function's
generator, a class's ``__exit__``, the expecting functions the reporter watches. A plain function returning a context
was not read ("another function returning some context"): taken as taking none, a real fix's expected ``TypeError``
at the body's first statement was kept, the rest of the body ran (what the original never ran: a loop's next item),
and the ``TypeError`` was raised at the body's end, where ``Expect`` took it; what the rest did stayed and the test
failed in every canary run: the real fix ``tests_failed`` on seeds 0 and 1.

Now (``homefield_reporter._takes``): a plain function is read through its ``return`` statements: one returning a call
of a name (or a chain of attributes of one, read in its closure, its module, the builtins, as a ``with`` item is read)
whose maker takes exceptions takes them too; one returning anything else is not read, as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import EXPECTING_TESTS, grade_modes, softened_outcomes

#: The commit's test: ``expect`` a plain function returning an ``Expect``, whose ``__exit__`` takes ``kind``.
PLAIN = """import pytest

from modes import MODE, compute


class Expect:
    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        assert kind is not None, f"{self.kind.__name__} not raised"
        return issubclass(kind, self.kind)


def expect(kind):
    return Expect(kind)
""" + EXPECTING_TESTS


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_body_a_plain_maker_s_context_expects_to_raise_stops_there(tmp_path: Path, seed: int) -> None:
    """``solved`` on seeds 0 and 1 (``tests_failed`` before: the body ran on to ``'b'`` and ``seen`` held both)."""
    g = grade_modes(tmp_path, PLAIN, seed)
    assert g.outcome == "solved", g


#: gatk46: the same maker returning a name it assigned the context to (read as taking none before).
NAMED = PLAIN.replace("def expect(kind):\n    return Expect(kind)\n",
                      "def expect(kind):\n    context = Expect(kind)\n    return context\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_maker_returning_a_name_it_assigned_a_taking_context_stops_there(tmp_path: Path, seed: int) -> None:
    """``solved`` on seeds 0 and 1 (gatk46: ``tests_failed`` on both before, as soft44's case was)."""
    assert NAMED != PLAIN
    g = grade_modes(tmp_path, NAMED, seed)
    assert g.outcome == "solved", g


#: Which plain makers' contexts take a top soft statement's exception: ``expect`` (an ``Expect``), ``via`` (``expect``
#: again, a plain function of a plain function) and ``gen`` (a taking ``contextmanager``) take (the body ends at
#: ``boom()``, as written); ``held`` (a ``Held``, whose ``__exit__`` returns nothing) and ``lock`` (a
#: ``threading.Lock``, C code) take none: kept there, the body runs on.
CONTEXTS = '''import threading
from contextlib import contextmanager

LOG = []
LOCK = threading.Lock()
MADE = None


class Expect:
    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, self.kind)


class Held:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        LOG.append("held")


@contextmanager
def taking(kind):
    try:
        yield
    except kind:
        pass


def expect(kind):
    return Expect(kind)


def via(kind):
    return expect(kind)


def gen(kind):
    return taking(kind)


def held():
    return Held()


def lock():
    return threading.Lock()


def boom():
    raise TypeError("fixed")


def test_expect():
    with expect(TypeError):
        boom()
        LOG.append("after expect")


def test_via():
    with via(TypeError):
        boom()
        LOG.append("after via")


def test_gen():
    with gen(TypeError):
        boom()
        LOG.append("after gen")


def test_held():
    with held():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_lock():
    with lock():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_log():
    assert LOG == ["on", "off", "held", "on", "off"]
'''


def test_a_plain_maker_is_read_through_what_it_returns(tmp_path: Path) -> None:
    """Softened: ``test_expect``, ``test_via`` and ``test_gen`` pass with nothing after the exception run (before,
    each ran on and ``test_log`` failed); ``test_held`` and ``test_lock`` fail at ``boom()`` with their bodies run to
    the end."""
    got, log = softened_outcomes(tmp_path, CONTEXTS)
    outcomes = {"test_expect": "passed", "test_via": "passed", "test_gen": "passed", "test_held": "failed",
                "test_lock": "failed", "test_log": "passed"}
    assert got == outcomes, log
