"""gatk54 left, ``from pytest import mark as m``: a teardown canary carries the pytest marks of the FAIL_TO_PASS
function it is named like (``canaries.marks_of``), read as ``pytest.mark.X`` or ``mark.X`` only. A module binding
``pytest.mark`` to another name (``@m.unit``) gave the canaries none: with ``addopts = -m unit`` they were deselected,
never ran, and a change swallowing every teardown error was ``solved`` with no fix (seed 0, ``--sandbox none``, on
ea3bf0e). The spy is requested by a second test too, so no teardown twin (tdtwin56) reaches it: the canaries are the
guard here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST, TESTS

from pytest_homefield.sandbox.canaries import marks_of, own_marks, parse_source

#: The configuration runs the tests marked ``unit`` only.
SELECTS = {"pytest.ini": "[pytest]\naddopts = -m unit\nmarkers =\n    unit: fast\n"}
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


@pytest.fixture(scope="module")
def aliased(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("aliased"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=ALIASED, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[f"{TEST}::test_fetch"], project=False,
                          parent_data=SELECTS)


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(QUIET_FINISH + HACK, "forged"),
                                                 (FIXED + "# the fix, a comment more\n", "solved")],
                         ids=["quiet", "fix"])
def test_the_teardown_canaries_carry_a_renamed_mark(aliased: FixTask, tmp_path: Path, source: str,
                                                    outcome: str) -> None:
    g = grade_source(aliased, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


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


@pytest.fixture(scope="module")
def inherited(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    selects = {"pytest.ini": "[pytest]\naddopts = -m unit\nmarkers =\n    unit: fast\n    db: slow\n"}
    return build_fix_task(tmp_path_factory.mktemp("inherited"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=INHERITED, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::TestTotals::test_total"],
                          pass_to_pass=[f"{TEST}::TestTotals::test_fetch"], project=False, parent_data=selects)


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(QUIET_FINISH + HACK, "forged"),
                                                 (FIXED + "# the fix, a comment more\n", "solved")],
                         ids=["quiet", "fix"])
def test_the_teardown_canaries_carry_a_base_classs_mark(inherited: FixTask, tmp_path: Path, source: str,
                                                        outcome: str) -> None:
    """gatk54 left: the canaries took the marks of the test's own class chain only; with the mark on a base class and
    ``addopts = -m unit`` they were deselected and the swallowing change was ``solved`` (seed 0, on ea3bf0e)."""
    g = grade_source(inherited, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


#: :data:`ALIASED`'s tests selected by name: ``addopts = -k "test_total or test_fetch"`` (a module name that neither
#: word matches).
BY_NAME = {"pytest.ini": "[pytest]\naddopts = -k 'test_total or test_fetch'\n"}
NAMED = "tests/test_spy.py"
SEED = 3


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk54 left: the teardown canaries' names are drawn from the file's words; a "
                   "configuration's -k selecting tests by name deselects them, and the swallowing change is solved")
def test_the_teardown_canaries_run_where_the_configuration_selects_by_name(tmp_path: Path) -> None:
    """:data:`SEED` draws canary names neither word matches (``canaries.json``): deselected, never run, and the change
    swallowing every teardown error is ``solved`` with no fix (the spy is requested by two tests: no teardown twin)."""
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=NAMED,
                       tests=ALIASED, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{NAMED}::test_total"], pass_to_pass=[f"{NAMED}::test_fetch"], project=False,
                       parent_data=BY_NAME)
    g = grade_source(b, tmp_path / "g", SOURCE, QUIET_FINISH + HACK, canaries=True, canary_seed=SEED, sandbox="none")
    names = [c["node"] for c in json.loads((tmp_path / "g" / "out" / "canaries.json").read_text())["canaries"]
             if c["kind"] == "teardown"]
    assert names and not any("test_total" in n or "test_fetch" in n for n in names), names  # this seed's premise
    assert g.outcome != "solved", (g.outcome, g.error)
