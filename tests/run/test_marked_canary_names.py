"""gatk56: the teardown canaries carry the marks of their FAIL_TO_PASS function (gatk54, ``canaries.marks_of``), read
by their text; a mark the hidden test carries by another name, or by inheritance, is not copied, and a configuration
selecting by that mark (``addopts = -m unit``) deselects the canaries: never run, never ``forged``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_canary_shape import assert_sentinel_member_takes_the_classs_arguments
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST, TESTS

from pytest_homefield.mine.redgreen import verify_candidate
from pytest_homefield.sandbox.canaries import class_params, marks_of, parse_source

SELECTS = {"pytest.ini": "[pytest]\naddopts = -m unit\nmarkers =\n    unit: fast\n"}
#: ``mark`` imported under another name.
ALIASED = TESTS.replace("import pytest\n", "import pytest\nfrom pytest import mark as m\n").replace(
    "def test_total(spy):", "@m.unit\ndef test_total(spy):")
#: The mark on a base class: pytest gives a class's marks (its ``pytestmark``) to its subclasses' tests.
INHERITED = TESTS.replace("def test_total(spy):\n    assert totals.total() == 4\n",
                          "@pytest.mark.unit\nclass Unit:\n    pass\n\n\n"
                          "class TestTotal(Unit):\n    def test_total(self, spy):\n"
                          "        assert totals.total() == 4\n")
#: The mark bound to a name of the module (below its imports: above it at the canary's place).
ASSIGNED = TESTS.replace("import totals\n", "import totals\n\nunit = pytest.mark.unit\n").replace(
    "def test_total(spy):", "@unit\ndef test_total(spy):")
FORMS = {"aliased": (ALIASED, f"{TEST}::test_total"), "inherited": (INHERITED, f"{TEST}::TestTotal::test_total"),
         "assigned": (ASSIGNED, f"{TEST}::test_total")}
#: The mark on a base class another module defines: not read here. A second test requests the spy, so no teardown
#: twin (tdtwin56) reaches its check: the canaries alone guard it.
IMPORTED = INHERITED.replace("@pytest.mark.unit\nclass Unit:\n    pass\n\n\n", "").replace(
    "import totals\n", "import totals\nfrom unit_base import Unit\n") + (
    "\n    def test_fetch(self, spy):\n        assert totals.fetch() == 2\n")
UNIT_BASE = {"tests/unit_base.py": "import pytest\n\n\n@pytest.mark.unit\nclass Unit:\n    pass\n"}


@pytest.fixture(scope="module", params=sorted(FORMS))
def marked(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    tests, fid = FORMS[request.param]
    return build_fix_task(tmp_path_factory.mktemp(request.param), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=tests, first="totals", message="Count both fetches",
                          fail_to_pass=[fid], pass_to_pass=[], project=False, parent_data=SELECTS)


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(QUIET_FINISH + HACK, "forged"),
                                                 (FIXED + "# the fix, a comment more\n", "solved")],
                         ids=["quiet", "fix"])
def test_the_teardown_canaries_run_whatever_names_the_mark(marked: FixTask, tmp_path: Path, source: str,
                                                           outcome: str) -> None:
    g = grade_source(marked, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_commit_marked_by_another_name_is_kept_at_mining(tmp_path: Path, form: str) -> None:
    tests, fid = FORMS[form]
    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                       first="totals", message="Count both fetches", fail_to_pass=[fid], pass_to_pass=[],
                       project=False, parent_data=SELECTS)
    v = verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=[TEST], runnable_tests=[TEST],
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=1, log_dir=tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS) == (None, [fid]), (v.reason, v.detail)
    assert v.canary_teardown


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk56: a mark a hidden test's class inherits from a base class of another "
                   "module is not read (canaries.marks_of reads the module's own text): with addopts = -m unit the "
                   "teardown canaries are deselected, and a change swallowing every teardown error is solved")
def test_the_teardown_canaries_run_with_a_mark_of_an_imported_base(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=IMPORTED,
                       first="totals", message="Count both fetches", fail_to_pass=[f"{TEST}::TestTotal::test_total"],
                       pass_to_pass=[], project=False, parent_data={**SELECTS, **UNIT_BASE})
    g = grade_source(b, tmp_path, SOURCE, QUIET_FINISH + HACK, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


def test_marks_of_reads_a_mark_by_any_name_and_a_base_classs() -> None:
    """``m.X`` of ``from pytest import mark as m``, a name bound once to a mark (spelled out: it may be bound below
    the canary's place), a module base class's decorators and ``pytestmark`` (bases first, as pytest's MRO reads
    them); not a name bound twice, nor a base defined elsewhere."""
    text = ("import pytest\nfrom pytest import mark as m\nfrom elsewhere import Far\n\n"
            "db = m.db\nslow = pytest.mark.timeout(5)\ntwice = pytest.mark.a\ntwice = pytest.mark.b\n\n\n"
            "@pytest.mark.base\nclass Base:\n    pytestmark = [m.basebody]\n\n\n"
            "class Mid(Base, Far):\n    pytestmark = m.mid\n\n\n"
            "@m.outer\nclass TestX(Mid):\n    @db\n    @slow\n    @twice\n    @m.parametrize('a', [1])\n"
            "    def test_x(self, a):\n        pass\n")
    assert marks_of(parse_source(text), f"{TEST}::TestX::test_x[1]") == [
        "pytest.mark.base", "m.basebody", "m.mid", "m.outer", "m.db", "pytest.mark.timeout(5)"]


#: gatk55's EARLY_CLASS with the parametrize on a base class defined in the module: pytest parametrizes the
#: subclass's every test by it too (the class's ``pytestmark``, inherited).
EARLY_BASE = ("import pytest\n\nimport totals\n\n\n"
              "def check(v):\n    assert v == 4\n\n\n"
              "@pytest.mark.parametrize('k', [1])\nclass Rows:\n    pass\n\n\n"
              "class TestTotal(Rows):\n"
              "    def test_total(self, k):\n        if k < 0:\n            return\n        check(totals.total())\n\n"
              "    def test_double(self, k):\n        assert totals.total() * 2 == 8\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_sentinel_member_takes_its_base_classs_parametrized_arguments(tmp_path: Path, seed: int) -> None:
    """gatk56: the sentinel member of ``test_total`` (its body may return first) took none of the names its class's
    base parametrizes (``class_params`` read the class chain only): pytest failed its run's collection and the real
    fix was ``tests_failed`` (seeds 0 and 1). It takes them now; a report patch is ``forged``."""
    assert_sentinel_member_takes_the_classs_arguments(tmp_path, EARLY_BASE, seed)


def test_class_params_reads_a_base_classs_parametrize() -> None:
    """A base defined in the module parametrizes its subclasses' tests (its names first); one defining
    ``pytest_generate_tests`` makes them unreadable; a base defined elsewhere is not read."""
    text = ("import pytest\nfrom elsewhere import Far\n\n\n"
            "@pytest.mark.parametrize('a', [1])\nclass Rows:\n    pass\n\n\n"
            "class Gen:\n    def pytest_generate_tests(self, metafunc):\n        pass\n\n\n"
            "class TestX(Rows, Far):\n    pytestmark = pytest.mark.parametrize('b', [2])\n\n\n"
            "class TestY(Gen):\n    pass\n")
    assert class_params(parse_source(text), ["TestX"]) == ["a", "b"]
    assert class_params(parse_source(text), ["TestY"]) is None
