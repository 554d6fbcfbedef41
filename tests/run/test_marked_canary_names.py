"""gatk56: the teardown canaries carry the marks of their FAIL_TO_PASS function (gatk54, ``canaries.marks_of``), read
by their text; a mark the hidden test carries by another name, or by inheritance, was not copied, and a configuration
selecting by that mark (``addopts = -m unit``) deselected the canaries: never run, never ``forged``. mark58: every run
holding canaries drops the configuration's ``-m`` and ``-k`` (the grading end-to-end tests of each way of marking are
in ``test_teardown_canary_marks.py``); mining keeps the configuration's selection where it decides the FAIL_TO_PASS
ids, so a test it deselects is never one, and runs, counting for nothing, beside the canaries at grading."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_canary_marks import FORMS, build_marked
from run.test_teardown_canary_shape import assert_sentinel_member_takes_the_classs_arguments
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST, TESTS

from pytest_homefield.mine.redgreen import Verification, verify_candidate
from pytest_homefield.sandbox.canaries import class_params, marks_of, parse_source


def _verified(root: Path, commit: str, parent: str, log_dir: Path) -> Verification:
    return verify_candidate(root, commit=commit, parent=parent, test_files=[TEST], runnable_tests=[TEST],
                            test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                            stability_runs=1, log_dir=log_dir)


@pytest.mark.slow
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_commit_marked_by_another_name_is_kept_at_mining(tmp_path: Path, form: str) -> None:
    b = build_marked(tmp_path, form)
    v = _verified(b.root, b.task.commit, b.task.parent, tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS) == (None, list(b.task.FAIL_TO_PASS)), (v.reason, v.detail)
    assert v.canary_teardown


#: A configuration leaving out the tests marked ``slow``, and a ``slow`` test of the hidden file that fails with any
#: code: it is never a FAIL_TO_PASS id (mining's runs keep the configuration's ``-m``), and it runs beside the
#: canaries at grading (every run holding them drops it), counting for nothing.
NOT_SLOW = {"pytest.ini": "[pytest]\naddopts = -m 'not slow'\nmarkers =\n    slow: slow\n"}
WITH_SLOW = TESTS + ("\n\n@pytest.mark.slow\ndef test_slow_total(spy):\n    assert totals.total() == 5\n")


@pytest.mark.slow
def test_a_test_the_configuration_leaves_out_counts_for_nothing(tmp_path: Path) -> None:
    """mark58: the honest task of a ``-m 'not slow'`` repository is mined with ``test_total`` alone, its teardown
    canaries judged; at grading the real fix is ``solved`` (the ``slow`` test failing beside it) and the change
    swallowing every teardown error ``forged``."""
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=WITH_SLOW, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[], project=False, parent_data=NOT_SLOW)
    v = _verified(b.root, b.task.commit, b.task.parent, tmp_path / "logs")
    assert (v.reason, v.FAIL_TO_PASS) == (None, [f"{TEST}::test_total"]), (v.reason, v.detail)
    assert v.canary_teardown
    for source, outcome in ((FIXED + "# the fix, a comment more\n", "solved"), (QUIET_FINISH + HACK, "forged")):
        g = grade_source(b, tmp_path / outcome, SOURCE, source, canaries=True, canary_seed=0, sandbox="none")
        assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


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
