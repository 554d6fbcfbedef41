"""can49: a ``with`` whose context is made by an expression no name chain spells (``sys.modules[__name__].Expect(k)``,
a subscript in its maker; contracts §7 "Soft statements", the softener's ``_takers`` and ``through``).

The softener names what makes each context of a top ``with`` (soft42's ``_takers``: a name or a chain of attributes
of one) and, only when there was such a name, hands the reporter the contexts the header entered (gatk47's
``through``). A maker reached through a subscript gave no name, so the contexts were not handed through either and the
reporter read nothing: a context whose ``__exit__`` takes the body's exception (``Expect(TypeError)``) was taken for
one taking nothing, the real fix's expected exception was kept and the body ran on past it, as the original's passing
run never does. The contexts the header entered are read whatever made them now.
"""

from __future__ import annotations

from pathlib import Path

from helpers.modes_task import softened_outcomes

CONTEXTS = '''import sys

LOG = []


class Expect:
    def __init__(self, kind):
        self.kind = kind

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, self.kind)


def boom():
    raise TypeError("fixed")


def test_module_kind():
    with sys.modules[__name__].Expect(TypeError):
        boom()
        LOG.append("after module")


def test_table_kind():
    with {"e": Expect}["e"](TypeError):
        boom()
        LOG.append("after table")


def via(kind):
    return sys.modules[__name__].Expect(kind)


def test_via_kind():
    with via(TypeError):
        boom()
        LOG.append("after via")


def test_named_kind():
    with Expect(TypeError):
        boom()
        LOG.append("after named")


def test_log():
    assert LOG == []
'''


def test_a_context_made_through_a_subscript_is_read_as_entered(tmp_path: Path) -> None:
    """Softened: the two bodies whose maker is reached through a subscript end at ``boom()`` as the one naming it
    does (their context takes the ``TypeError``: passed, nothing after it run). Before: both ran on (``LOG`` held
    ``after module`` and ``after table``, ``test_log`` failed)."""
    got, log = softened_outcomes(tmp_path, CONTEXTS)
    assert got == {"test_module_kind": "passed", "test_table_kind": "passed", "test_via_kind": "passed",
                   "test_named_kind": "passed",
                   "test_log": "passed"}, log
