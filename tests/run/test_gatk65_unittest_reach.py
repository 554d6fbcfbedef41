"""gatk65: this round's unittest checks after the test (ut64's blinded class ``tearDown`` twins and ``tearDownModule``
twin, seal64's sealed run without them) attacked where their reach stops. Two holes, strict xfails with the measured
outcomes: a ``tearDown`` check the class inherits from a mixin of its module (no test of its own) has no twin, and a
module's ``tearDownModule`` check beside a pytest function test has none either: a change dropping every such error is
``solved`` with no fix, not flagged (``canaries.json`` ``unprotected`` empty). Caught, kept caught: a class
``tearDown`` twin beside a PASS_TO_PASS test of the class (blinded there): the change dropping the errors ``forged``,
the real fix ``solved``. Fixed: a PASS_TO_PASS test the class inherits from a base of another module (a mixin of
tests) ran the contradicted ``tearDown`` unblinded, and the real fix was a ``regression``. ut46: the mixin's
``tearDown`` check gets its twin (the class's MRO as far as the module defines it), ``forged``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task
from run.test_honest_shapes61 import QUIET_TEARDOWN, SHAPES, UNITTEST_HEAD
from run.test_teardown_error import (
    FIXED,
    HACK,
    PARENT,
    SOURCE,
    TEST,
    assert_fixed_solved_and_hack_failed,
    graded,
    totals_task,
)
from run.test_unittest_cleanup_shapes63 import MODULE, QUIET_MODULE

#: A mixin of tests in a module of its own, at the parent and unchanged by the commit.
COMMON = "import totals\n\n\nclass Common:\n    def test_common(self):\n        self.assertGreater(totals.total(), 0)\n"

#: The spy and its ``tearDown`` check in a mixin of the module (no test of its own), the test class deriving from it.
MIXIN = (UNITTEST_HEAD + "class Spy:\n"
         "    def setUp(self):\n        self.calls = []\n        self.real = totals.fetch\n"
         "        totals.fetch = lambda: self.calls.append(1) or self.real()\n\n"
         "    def tearDown(self):\n        totals.fetch = self.real\n        self.assertTrue(self.calls)\n\n\n"
         "class TestTotal(Spy, unittest.TestCase):\n"
         "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n")
#: :data:`MODULE` (``tearDownModule`` asserting the fetch) with a pytest function test after its class, which runs
#: neither ``fetch`` nor ``total``.
BESIDE = MODULE + "\n\ndef test_plain():\n    assert callable(totals.total)\n"
#: The class ``tearDown`` check with a second test, PASS_TO_PASS (at the parent already, its class's ``tearDown``
#: then checking nothing).
SIBLING = SHAPES["tearDown"][0] + "\n    def test_old(self):\n        self.assertEqual(totals.fetch(), 2)\n"
SIBLING_BEFORE = (UNITTEST_HEAD + "class TestTotal(unittest.TestCase):\n"
                  "    def test_old(self):\n        self.assertEqual(totals.fetch(), 2)\n")


def _unprotected(tmp: Path) -> list[str]:
    """The functions the grading in ``tmp`` listed canary-unprotected (its ``canaries.json``)."""
    return list(json.loads((tmp / "out" / "canaries.json").read_text(encoding="utf-8")).get("unprotected", []))


@pytest.fixture(scope="module")
def mixin(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("mixin"), MIXIN, ["TestTotal::test_total"])


#: ut46: :data:`MIXIN` with a second class of the module deriving from the mixin, its test PASS_TO_PASS (at the parent
#: already, the mixin's ``tearDown`` then checking nothing): it runs the contradicted check in the twin's run.
OTHERS = MIXIN + ("\n\nclass TestOld(Spy, unittest.TestCase):\n"
                  "    def test_old(self):\n        self.assertEqual(totals.fetch(), 2)\n")


def _with_old(tmp: Path, tests: str, old: str, before: str) -> FixTask:
    """The task of ``tests`` (``TestTotal::test_total`` FAIL_TO_PASS) whose test ``old`` (``Class::test``) is
    PASS_TO_PASS, the test file ``before`` at the parent."""
    return build_fix_task(tmp, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                          first="totals", message="Count both fetches", fail_to_pass=[f"{TEST}::TestTotal::test_total"],
                          pass_to_pass=[f"{TEST}::{old}"], tests_before=before)


@pytest.fixture(scope="module")
def others(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _with_old(tmp_path_factory.mktemp("others"), OTHERS, "TestOld::test_old",
                     OTHERS.replace("        self.assertTrue(self.calls)\n", ""))


@pytest.fixture(scope="module")
def beside(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("beside"), BESIDE, ["TestTotal::test_total"])


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "seed"), [("mixin", 0), ("mixin", 1), ("mixin", 2), ("beside", 0),
                                             ("beside", 1)])
def test_the_checks_out_of_reach_fail_the_hack_and_pass_the_fix(request: pytest.FixtureRequest, tmp_path: Path,
                                                                 shape: str, seed: int) -> None:
    """The premises: the real fix ``solved``, :data:`HACK` alone (the check kept) ``tests_failed`` (``beside``
    with ut65's module twin on two seeds; ut46: ``mixin`` with the mixin's twin)."""
    assert_fixed_solved_and_hack_failed(request.getfixturevalue(shape), tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_mixins_teardown_check_is_forged(mixin: FixTask, tmp_path: Path, seed: int) -> None:
    """gatk65: a class's ``tearDown`` check inherited from a mixin of its module (no test of its own) got no teardown
    twin (``unittest_check`` read the class's own body): :data:`QUIET_TEARDOWN` with :data:`HACK` (no fix) ``solved``,
    seeds 0 and 1 on f37660a7, nothing unprotected. ut46: the check resolved through the class's MRO as far as the
    module defines it, contradicted in the mixin: ``forged``."""
    g = graded(mixin, tmp_path, QUIET_TEARDOWN + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, _unprotected(tmp_path))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_teardown_module_check_beside_a_function_is_not_solved(beside: FixTask, tmp_path: Path,
                                                                                  seed: int) -> None:
    """gatk65: a ``tearDownModule`` check in a module holding a pytest function test too got no teardown twin (ut64's
    reach: the method the module's one test): :data:`QUIET_MODULE` with :data:`HACK` (no fix) ``solved``, seeds 0 and
    1 on f37660a7, nothing unprotected. ut65's module twin, the function's outcomes blinded and folded in its run:
    ``forged`` (found by the lead's CI of the merge, where this strict xfail passed)."""
    g = graded(beside, tmp_path, QUIET_MODULE + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, _unprotected(tmp_path))


@pytest.fixture(scope="module")
def sibling(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _with_old(tmp_path_factory.mktemp("sibling"), SIBLING, "TestTotal::test_old", SIBLING_BEFORE)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["sibling", "others"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_teardown_twin_blinding_a_pass_to_pass_sibling_still_grades(request: pytest.FixtureRequest, tmp_path: Path,
                                                                      shape: str, seed: int) -> None:
    """:data:`SIBLING`: ``test_old`` (PASS_TO_PASS) blinded in ``test_total``'s teardown twin's run
    (``TwinPlan.blind``). The real fix ``solved``, :data:`QUIET_TEARDOWN` with :data:`HACK` ``forged`` by the twin
    (measured on f37660a7, seeds 0 and 1). ut46: :data:`OTHERS`, ``TestOld::test_old`` (another class deriving from
    the mixin) blinded in the twin's run of the mixin's check, alike (the hack ``solved`` before, no twin)."""
    sibling: FixTask = request.getfixturevalue(shape)
    g = graded(sibling, tmp_path, FIXED + "# the fix\n", seed)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    blind = json.loads((tmp_path / "out" / "canaries.json").read_text(encoding="utf-8"))["blind"]
    assert blind[sibling.task.FAIL_TO_PASS[0]][1] == [sibling.task.PASS_TO_PASS[0]], blind
    g = graded(sibling, tmp_path / "quiet", QUIET_TEARDOWN + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and g.canary.startswith(sibling.task.FAIL_TO_PASS[0] + "@twin"), g.canary


@pytest.fixture(scope="module")
def inherited(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The class ``tearDown`` check, the class deriving from :data:`COMMON`'s ``Common`` too: ``test_common``
    PASS_TO_PASS, as mining's ``verify_candidate`` lists it (measured: no sentinel, nothing unprotected)."""
    tests = SHAPES["tearDown"][0].replace("import totals\n", "import totals\nfrom common import Common\n").replace(
        "(unittest.TestCase)", "(Common, unittest.TestCase)")
    return build_fix_task(tmp_path_factory.mktemp("inherited"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=tests, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::TestTotal::test_total"],
                          pass_to_pass=[f"{TEST}::TestTotal::test_common"], parent_data={"tests/common.py": COMMON})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_beside_an_inherited_test_is_solved(inherited: FixTask, tmp_path: Path, seed: int) -> None:
    """``test_common`` (inherited, no function of the class's body) runs the ``tearDown`` its class's teardown twin
    contradicts: the real fix was a ``regression`` (``1/1 PASS_TO_PASS broke``), seeds 0 and 1 on f37660a7. gatk65:
    the task's ids of the class blinded too, ``solved``; :data:`QUIET_TEARDOWN` with :data:`HACK` still ``forged``."""
    g = graded(inherited, tmp_path, FIXED + "# the fix\n", seed)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    g = graded(inherited, tmp_path / "quiet", QUIET_TEARDOWN + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
