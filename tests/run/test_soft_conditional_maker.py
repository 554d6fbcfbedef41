"""gatk47: a plain maker whose ``return`` gives a taking context or one taking nothing, by its arguments (``def
expect(kind=None): return pytest.raises(kind) if kind else contextlib.nullcontext()``, or a name assigned either;
contracts §7 "Soft statements", the reporter's ``_takes`` through ``_returned_calls``, gatk46).

gatk46 reads such a maker as taking when any of its returned calls takes: right for ``with expect(TypeError):``, wrong
for ``with expect():``, whose ``nullcontext`` takes nothing. An exception that is no assertion's failure reaching a top
soft statement of that body then goes on as written and ends the body there, where a context taking nothing keeps it
and runs the body on (soft42): in a canary run, the exception twin of an expected ``TypeError`` in that body lets the
real fix's ``TypeError`` through, the body stops at the twin's site and leaves what its rest puts back
(``MODE['scale'] = 1``), and the plain run's PASS_TO_PASS ``test_plain`` after it fails: the real fix is
``regression`` on seeds 0 and 1 (twin37's shape). Before gatk46 (dbc83b7) the maker was read as taking nothing for
every call, and ``with expect(TypeError):`` had soft44's fault instead (the body ran on past the real fix's expected
exception): ``tests_failed``. Which of the two a call makes is known only from the context it returned, never from the
maker's code: the softened header now hands the reporter each context it entered (an item ``expect()`` written
``__import__('homefield_reporter').through(expect())``, its argument itself, noted for the ``soft_block`` entered
next, given their number), and ``_taken`` reads those objects (``_takes(obj)``: a ``nullcontext``'s ``__exit__``
returns nothing, pytest's ``raises`` context takes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import EXPECTING_TESTS, grade_modes, softened_outcomes

#: Plain makers returning a taking context or a ``nullcontext`` by their argument: by a conditional expression
#: (``expect``) and by a name assigned either (``maybe``).
MAKERS = '''import contextlib

import pytest


def expect(kind=None):
    return pytest.raises(kind) if kind else contextlib.nullcontext()


def maybe(kind=None):
    context = contextlib.nullcontext()
    if kind:
        context = pytest.raises(kind)
    return context
'''

CONTEXTS = MAKERS + '''
LOG = []


def boom():
    raise TypeError("fixed")


def test_expect_none():
    with expect():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_maybe_none():
    with maybe():
        LOG.append("on")
        boom()
        LOG.append("off")


def test_expect_kind():
    with expect(TypeError):
        boom()
        LOG.append("after expect")


def test_maybe_kind():
    with maybe(TypeError):
        boom()
        LOG.append("after maybe")


def test_log():
    assert LOG == ["on", "off", "on", "off"]
'''


def test_a_maker_s_context_taking_nothing_keeps_the_exception(tmp_path: Path) -> None:
    """Softened: ``test_expect_none`` and ``test_maybe_none`` fail at ``boom()`` with their bodies run to the end (as
    ``test_held`` of ``test_soft_plain_maker.py``), ``test_expect_kind`` and ``test_maybe_kind`` pass with nothing
    after the exception run. On 47373fc the two ``none`` bodies ended at ``boom()`` (``test_log`` failed); on dbc83b7
    the two ``kind`` bodies ran on (``test_log`` failed)."""
    got, log = softened_outcomes(tmp_path, CONTEXTS)
    outcomes = {"test_expect_none": "failed", "test_maybe_none": "failed", "test_expect_kind": "passed",
                "test_maybe_kind": "passed", "test_log": "passed"}
    assert got == outcomes, log


#: The ``modes`` task's commit tests with ``test_scaled``'s body under ``with expect():`` (a context taking nothing),
#: its one site an expected ``TypeError`` (the real fix's, for ``compute('a')``): its exception twin expects another
#: class, the real fix's ``TypeError`` goes through that twin's ``raises`` and reaches the body's next soft statement.
#: ``test_negative`` needs ``with expect(TypeError):`` read as taking (soft44's case), ``test_scaled`` ``with
#: expect():`` read as taking nothing: no reading of the maker's code gives both.
TESTS = MAKERS + '''
from modes import MODE, compute


def test_scaled():
    with expect():
        MODE['scale'] = 3
        with pytest.raises(TypeError):
            compute('a')
        MODE['scale'] = 1
''' + "\n\ndef test_negative" + EXPECTING_TESTS.split("\n\ndef test_negative", 1)[1]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_under_a_maker_s_context_taking_nothing_is_solved(tmp_path: Path, seed: int) -> None:
    """``solved``: ``regression`` on seeds 0 and 1 on 47373fc (``test_plain`` failing), ``tests_failed`` on dbc83b7."""
    assert "def test_scaled():\n    with expect():" in TESTS and TESTS.count("def test_scaled") == 1
    g = grade_modes(tmp_path, TESTS, seed)
    assert g.outcome == "solved", g


#: ``with`` headers of every shape the softener edits: ``as``, a parenthesized one (its first item right after the
#: ``(``, where the soft context goes too), a trailing comma, an item over two lines, an ``async with``.
HEADERS = '''import contextlib


def test_as():
    with contextlib.nullcontext(1) as one, contextlib.nullcontext():
        assert one == 1


def test_parenthesized():
    with (contextlib.nullcontext(2) as two, contextlib.nullcontext()):
        assert two == 2


def test_trailing_comma():
    with (contextlib.nullcontext(),
          contextlib.nullcontext(3) as three,):
        assert three == 3


async def run():
    async with contextlib.AsyncExitStack(
    ) as stack:
        assert stack is not None


def test_async():
    import asyncio
    asyncio.run(run())
'''


def test_each_entered_context_is_handed_through_in_its_place(tmp_path: Path) -> None:
    """Every item's context of a top ``with`` is written ``through(<context>)``, after the soft context and before its
    ``as``, the count given to the ``soft_block``; the file runs as written."""
    from pytest_homefield.sandbox.canary_soft import THROUGH, softened

    text = softened(HEADERS)
    assert text.count(THROUGH) == 6, text
    assert "soft(), __import__('homefield_reporter').through(contextlib.nullcontext(2)) as two" in text, text
    assert text.count(", 2)") == 3 and text.count(", 1)") == 0, text  # run() is no test: left as it is
    got, log = softened_outcomes(tmp_path, HEADERS)
    assert got == {"test_as": "passed", "test_parenthesized": "passed", "test_trailing_comma": "passed",
                   "test_async": "passed"}, log
