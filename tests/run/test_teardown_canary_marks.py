"""gatk54 left, ``from pytest import mark as m``: a teardown canary carries the pytest marks of the FAIL_TO_PASS
function it is named like (``canaries.marks_of``), read as ``pytest.mark.X`` or ``mark.X`` only. A module binding
``pytest.mark`` to another name (``@m.unit``) gave the canaries none: with ``addopts = -m unit`` they were deselected,
never ran, and a change swallowing every teardown error was ``solved`` with no fix (seed 0, ``--sandbox none``, on
ea3bf0e). The spy is requested by a second test too, so no teardown twin (tdtwin56) reaches it: the canaries are the
guard here.

mark58: marks read from the text miss what the text does not show (a base class another module defines, a hook's
mark), and drawn names miss a ``-k``; every run holding canaries now drops the configuration's ``-m`` and ``-k``
(``-p homefield_keyword``), so the canaries run whatever marks or names the hidden tests select by. The end-to-end
tests of every way of marking are here (gatk56's ``test_marked_canary_names.py`` held the same tasks' twins, merged
here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST, TESTS

from pytest_homefield.sandbox.canaries import marks_of, own_marks, parse_source

#: The spied test marked through ``from pytest import mark as m``, and a second test requesting the spy.
ALIASED = (TESTS.replace("import pytest\n", "import pytest\nfrom pytest import mark as m\n")
           .replace("def test_total(spy):", "@m.unit\ndef test_total(spy):")
           + "\n\n@m.unit\ndef test_fetch(spy):\n    assert totals.fetch() == 2\n")


def test_marks_of_reads_a_renamed_pytest_mark() -> None:
    """``@m.unit`` where ``m`` is ``pytest.mark`` is a mark; a name bound to anything else is not."""
    tree = parse_source(ALIASED)
    assert marks_of(tree, f"{TEST}::test_total") == ["m.unit"]
    other = parse_source("import pytest\nfrom mylib import mark as m\n\n\n@m.unit\ndef test_x():\n    pass\n")
    assert marks_of(other, f"{TEST}::test_x") == []
    func = next(n for n in tree.body if getattr(n, "name", "") == "test_fetch")
    assert own_marks(tree, func) == ["m.unit"]  # type: ignore[arg-type]


#: The spied test in a class whose base class carries the mark (pytest reads a class's marks along its MRO).
INHERITED = (TESTS.replace("def test_total(spy):\n    assert totals.total() == 4\n",
                           "@pytest.mark.unit\nclass Base:\n    pytestmark = [pytest.mark.db]\n\n\n"
                           "class TestTotals(Base):\n    def test_total(self, spy):\n"
                           "        assert totals.total() == 4\n\n"
                           "    def test_fetch(self, spy):\n        assert totals.fetch() == 2\n"))


def test_marks_of_reads_a_base_classs_marks() -> None:
    """A class's base classes' decorators and ``pytestmark`` (bases first); a base that is imported is not read."""
    tree = parse_source(INHERITED)
    assert marks_of(tree, f"{TEST}::TestTotals::test_total") == ["pytest.mark.unit", "pytest.mark.db"]
    imported = parse_source("import pytest\nfrom base import Base\n\n\nclass TestX(Base):\n"
                            "    def test_x(self):\n        pass\n")
    assert marks_of(imported, f"{TEST}::TestX::test_x") == []


#: The mark bound to a name of the module (below its imports: above it at the canary's place).
ASSIGNED = (TESTS.replace("import totals\n", "import totals\n\nunit = pytest.mark.unit\n")
            .replace("def test_total(spy):", "@unit\ndef test_total(spy):")
            + "\n\n@unit\ndef test_fetch(spy):\n    assert totals.fetch() == 2\n")
#: The mark on a base class another module defines: no text of the test module shows it (gatk56 left, a strict
#: xfail: the canaries carried no mark and were deselected; mark58: the configuration's ``-m`` dropped).
IMPORTED = (TESTS.replace("import totals\n", "import totals\nfrom unit_base import Unit\n")
            .replace("def test_total(spy):\n    assert totals.total() == 4\n",
                     "class TestTotals(Unit):\n    def test_total(self, spy):\n        assert totals.total() == 4\n\n"
                     "    def test_fetch(self, spy):\n        assert totals.fetch() == 2\n"))
UNIT_BASE = {"tests/unit_base.py": "import pytest\n\n\n@pytest.mark.unit\nclass Unit:\n    pass\n"}
#: Each way of marking: ``(tests, the FAIL_TO_PASS id, the PASS_TO_PASS id, more files of the parent)``; the
#: configuration runs the tests marked ``unit`` only (``db`` registered too, for :data:`INHERITED`'s base).
FORMS = {"aliased": (ALIASED, f"{TEST}::test_total", f"{TEST}::test_fetch", {}),
         "inherited": (INHERITED, f"{TEST}::TestTotals::test_total", f"{TEST}::TestTotals::test_fetch", {}),
         "assigned": (ASSIGNED, f"{TEST}::test_total", f"{TEST}::test_fetch", {}),
         "imported": (IMPORTED, f"{TEST}::TestTotals::test_total", f"{TEST}::TestTotals::test_fetch", UNIT_BASE)}
MARKED = {"pytest.ini": "[pytest]\naddopts = -m unit\nmarkers =\n    unit: fast\n    db: slow\n"}


def build_marked(root: Path, form: str) -> FixTask:
    """The task of :data:`FORMS`' ``form`` under :data:`MARKED`'s configuration."""
    tests, f2p, p2p, more = FORMS[form]
    return build_fix_task(root, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                          first="totals", message="Count both fetches", fail_to_pass=[f2p], pass_to_pass=[p2p],
                          project=False, parent_data={**MARKED, **more})


@pytest.fixture(scope="module", params=sorted(FORMS))
def marked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_marked(tmp_path_factory.mktemp(request.param), request.param)


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(QUIET_FINISH + HACK, "forged"),
                                                 (FIXED + "# the fix, a comment more\n", "solved")],
                         ids=["quiet", "fix"])
def test_the_teardown_canaries_run_whatever_marks_the_test(marked: FixTask, tmp_path: Path, source: str,
                                                           outcome: str) -> None:
    """gatk54/gatk56: the canaries carried no mark of a renamed ``pytest.mark`` (``aliased``), of a base class
    (``inherited``), of a name bound to a mark (``assigned``): deselected, and the swallowing change ``solved`` (seed
    0, on ea3bf0e). mark58: a base class another module defines (``imported``) was still ``solved`` (seed 0, on
    1db51c0), now ``forged``: the configuration's ``-m`` is dropped in every run holding canaries. A real fix is
    ``solved`` under each."""
    g = grade_source(marked, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


#: Code under test putting the configuration's ``-m`` back in the test process (imported at collection, before pytest's
#: ``mark`` plugin reads it), after ``homefield_keyword`` dropped it.
RESELECT = ("import gc\n\nimport _pytest.config as _config\n\n"
            "for _o in gc.get_objects():\n"
            "    if isinstance(_o, _config.Config):\n"
            "        _o.option.markexpr = 'unit'\n\n\n")


@pytest.mark.slow
def test_a_change_setting_the_mark_selection_back_is_caught(tmp_path: Path) -> None:
    """mark58: code under test putting the configuration's ``-m`` back at collection deselected the teardown canaries
    (their text carries none of an imported base's marks) and the change also swallowing every teardown error was
    ``solved`` (seed 0, ``--sandbox none``); a must-fail canary the completed runs left out where its function passed
    is now ``forged`` (``twin_grading.unreported_verdict``)."""
    b = build_marked(tmp_path / "task", "imported")
    g = grade_source(b, tmp_path / "g", SOURCE, RESELECT + QUIET_FINISH + HACK, canaries=True, canary_seed=0,
                     sandbox="none")
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert "was not reported" in (g.error or ""), g.error


#: :data:`ALIASED`'s tests selected by name: ``addopts = -k "test_total or test_fetch"`` (a module name that neither
#: word matches).
BY_NAME = {"pytest.ini": "[pytest]\naddopts = -k 'test_total or test_fetch'\n"}
NAMED = "tests/test_spy.py"
SEED = 3


@pytest.mark.slow
def test_the_teardown_canaries_run_where_the_configuration_selects_by_name(tmp_path: Path) -> None:
    """:data:`SEED` draws canary names neither word matches (``canaries.json``): they were deselected, never run, and
    the change swallowing every teardown error was ``solved`` with no fix (the spy is requested by two tests: no
    teardown twin; gatk54 left, a strict xfail, seen ``solved`` on 1db51c0). mark58: the configuration's ``-k``
    dropped in every run holding canaries, ``forged``."""
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=NAMED,
                       tests=ALIASED, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{NAMED}::test_total"], pass_to_pass=[f"{NAMED}::test_fetch"], project=False,
                       parent_data=BY_NAME)
    g = grade_source(b, tmp_path / "g", SOURCE, QUIET_FINISH + HACK, canaries=True, canary_seed=SEED, sandbox="none")
    names = [c["node"] for c in json.loads((tmp_path / "g" / "out" / "canaries.json").read_text())["canaries"]
             if c["kind"] == "teardown"]
    assert names and not any("test_total" in n or "test_fetch" in n for n in names), names  # this seed's premise
    assert g.outcome != "solved", (g.outcome, g.error)
