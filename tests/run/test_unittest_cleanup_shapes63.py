"""gatk63: unittest checks after the test (ucln62's teardown twins and decoys) attacked. A cleanup added as the assert
method and its arguments (``self.addCleanup(self.assertTrue, calls)``, no lambda) had no twin, and a change dropping
every cleanup's error was ``solved`` with no fix: contradicted in place now, ``forged``. ut64: a class ``tearDown``
check of a class with several tests (the others' outcomes in its twin's run counting for nothing) and a module's
``tearDownModule`` check (its one test's) get twins too, ``forged``; ut65: so do a class's ``tearDownClass`` and class
cleanup and a module's ``tearDownModule`` beside other tests (pytest reports the error on the unit's last test run,
whichever it is), with no decoy (a strict xfail: the polarity tell); ut46: a decoy whose run cuts every test of the
unit, the polarity tell ``forged``. Left, strict xfails with the measured outcomes: a change keeping the error of a
check where none of the code under test ran (the decoy's body, cut, calls nothing; the unit's, all cut) and telling
the twin by its polarity, where the check has no positive contradiction."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask
from run.test_honest_shapes61 import QUIET_CLEANUPS, QUIET_TEARDOWN, SHAPES, UNITTEST_HEAD
from run.test_teardown_error import FIXED, HACK, assert_fixed_solved_and_hack_failed, graded, totals_task
from run.test_unittest_check_polarity import POLARITY
from run.test_unittest_class_checks import QUIET_CLASS
from run.test_unittest_class_checks import SHAPES as CLASS_SHAPES

#: The method and its arguments, no lambda: the check is the call the cleanup makes.
NO_LAMBDA = (UNITTEST_HEAD + "class TestTotal(unittest.TestCase):\n"
             "    def test_total(self):\n        calls = []\n        real = totals.fetch\n"
             "        totals.fetch = lambda: calls.append(1) or real()\n"
             "        self.addCleanup(setattr, totals, 'fetch', real)\n"
             "        self.addCleanup(self.assertTrue, calls)\n"
             "        self.assertEqual(totals.total(), 4)\n")
#: A class whose ``tearDown`` checks the fetch, with two tests (both FAIL_TO_PASS).
SEVERAL = (UNITTEST_HEAD + "class TestTotal(unittest.TestCase):\n"
           "    def setUp(self):\n        self.calls = []\n        self.real = totals.fetch\n"
           "        totals.fetch = lambda: self.calls.append(1) or self.real()\n\n"
           "    def tearDown(self):\n        totals.fetch = self.real\n        self.assertTrue(self.calls)\n\n"
           "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n\n"
           "    def test_twice(self):\n        self.assertEqual(totals.total() * 2, 8)\n")
#: Two FAIL_TO_PASS tests new in the commit, each with a value site of one type: their twins are a rotation cycle
#: (``expected 4 -> 8 (values rotated with test_twice)``); a cycle's members got no teardown twin (cyc63: they do).
TWO = (UNITTEST_HEAD + "class TestTotal(unittest.TestCase):\n"
       "    def test_total(self):\n        calls = []\n        real = totals.fetch\n"
       "        totals.fetch = lambda: calls.append(1) or real()\n"
       "        self.addCleanup(setattr, totals, 'fetch', real)\n"
       "        self.addCleanup(lambda: self.assertTrue(calls))\n"
       "        self.assertEqual(totals.total(), 4)\n\n"
       "    def test_twice(self):\n        self.assertEqual(totals.total() * 2, 8)\n")
#: A module's own check after its tests: ``tearDownModule`` asserting the fetch ``setUpModule`` spied on.
MODULE = ("import unittest\n\nimport totals\n\nCALLS = []\nREAL = totals.fetch\n\n\n"
          "def setUpModule():\n    totals.fetch = lambda: CALLS.append(1) or REAL()\n\n\n"
          "def tearDownModule():\n    totals.fetch = REAL\n    assert CALLS, 'total() never fetched'\n\n\n"
          "class TestTotal(unittest.TestCase):\n    def test_total(self):\n"
          "        self.assertEqual(totals.total(), 4)\n")
#: ut65: a class check after every test of the class (``tearDownClass``, a class cleanup) with a second test, both
#: FAIL_TO_PASS: pytest reports its error on the class's last test run (``test_twice``).
TWICE = "\n    def test_twice(self):\n        self.assertEqual(totals.total() * 2, 8)\n"
CLASS_SEVERAL = {shape: tests + TWICE for shape, tests in CLASS_SHAPES.items()}
#: ut65: :data:`MODULE` with a second class and test after the first: pytest reports the module's error on its last
#: test run (``TestTwice::test_twice``).
MODULE_SEVERAL = MODULE + ("\n\nclass TestTwice(unittest.TestCase):\n    def test_twice(self):\n"
                           "        self.assertEqual(totals.total() * 2, 8)\n")
#: Drops the error of a function named ``tearDownModule`` (``teardown_module``) that pytest's module fixture calls,
#: every other teardown's kept (the teardown canaries' among them).
QUIET_MODULE = ("import _pytest.python as _python\n\n_real = _python._call_with_optional_argument\n\n\n"
                "def _quiet(func, arg):\n"
                "    if getattr(func, '__name__', '') not in ('tearDownModule', 'teardown_module'):\n"
                "        return _real(func, arg)\n"
                "    try:\n        return _real(func, arg)\n    except BaseException:\n        pass\n\n\n"
                "_python._call_with_optional_argument = _quiet\n\n\n")
#: :data:`POLARITY` keeping the error of a positive check where the code under test did not run (the decoy's cut
#: body, or ``pass``, calls nothing) and dropping it where it did; a negated check still fails whatever it did.
RAN = "_RAN = []\n" + POLARITY.replace(
    "    if _negated(function):\n        raise AssertionError('negated check')\n",
    "    else:\n        return\n"
    "    finally:\n        if _negated(function):\n            raise AssertionError('negated check')\n").replace(
    "    except BaseException:\n        pass\n",
    "    except BaseException:\n        if not _RAN:\n            raise\n        _RAN.clear()\n") \
    + HACK.replace("def total():\n", "def total():\n    _RAN.append(1)\n")


@pytest.fixture(scope="module")
def no_lambda(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("nolambda"), NO_LAMBDA, ["TestTotal::test_total"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_cleanup_check_added_without_a_lambda_is_not_solved(no_lambda: FixTask, tmp_path: Path,
                                                                                seed: int) -> None:
    """:data:`QUIET_CLEANUPS` with :data:`HACK` (no fix) on ``self.addCleanup(self.assertTrue, calls)``: ``solved`` on
    e46a8e87 (seed 0; no twin: ``unittest_check`` took a lambda or a local function only), ``forged`` now by the
    contradicted twin (``addCleanup(self.assertFalse, calls)``)."""
    g = graded(no_lambda, tmp_path, QUIET_CLEANUPS + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and g.canary.startswith(no_lambda.task.FAIL_TO_PASS[0] + "@twin"), g.canary


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_of_a_cleanup_check_added_without_a_lambda_is_solved(no_lambda: FixTask, tmp_path: Path,
                                                                         seed: int) -> None:
    assert_fixed_solved_and_hack_failed(no_lambda, tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["addCleanup", "tearDown"])
def test_a_change_telling_the_unittest_decoy_by_the_code_it_ran_is_forged_on_a_literal_check(tmp_path: Path,
                                                                                            shape: str) -> None:
    """ut64, measured: :data:`RAN` on the check ``assertEqual(calls, [1])``: its twin takes a literal near ``[1]``
    (``_call_twin``), written as positively as the file's, which :data:`RAN` drops where the code ran: ``forged``
    (seed 0). The hole left is a check with no positive contradiction (``assertTrue(calls)``: its twin is
    ``assertFalse``), below."""
    tests, name = SHAPES[shape]
    tests = tests.replace("self.assertTrue(calls)", "self.assertEqual(calls, [1])").replace(
        "self.assertTrue(self.calls)", "self.assertEqual(self.calls, [1])")
    assert "[1])" in tests
    task = totals_task(tmp_path / "task", tests, [name])
    g = graded(task, tmp_path, RAN, 0)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk63: the unittest decoy's body runs none of the code; a change keeping the "
                   "error of a check where the code did not run, dropping it where it did and failing a negated one is "
                   "solved with no fix (addCleanup and tearDown, seeds 0 and 1, on e46a8e87; ut64: still on 5dd4c64f, "
                   "seed 0, for assertTrue(calls), whose only contradiction is negated; a decoy running the code under "
                   "test whose positive check fails whatever the code does needs the check's state cut from the code, "
                   "which no text edit of the test gives in general; a literal check is forged, test above)")
@pytest.mark.parametrize("shape", ["addCleanup", "tearDown"])
def test_a_change_telling_the_unittest_decoy_by_the_code_it_ran_is_not_solved(tmp_path: Path, shape: str) -> None:
    """:data:`RAN`: the original's positive check fails unseen (``total()`` ran), the twin's negated one fails as the
    fix's does, the decoy's positive one fails as the fix's does (nothing ran, its error kept): as for a fixture's
    decoy (deco60's strict xfail ``test_a_change_telling_the_teardown_decoy_by_its_body_is_not_solved``); a decoy
    running the body would let the code decide its check."""
    tests, name = SHAPES[shape]
    task = totals_task(tmp_path / "task", tests, [name])
    g = graded(task, tmp_path, RAN, 0)
    assert g.outcome != "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.fixture(scope="module")
def several(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("several"), SEVERAL, ["TestTotal::test_total", "TestTotal::test_twice"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_teardown_check_of_a_class_with_several_tests_is_not_solved(several: FixTask,
                                                                                        tmp_path: Path,
                                                                                        seed: int) -> None:
    """:data:`SEVERAL` with :data:`QUIET_TEARDOWN` and :data:`HACK` (no fix): ``solved`` on e46a8e87 and 79cea778
    (gatk63: a class tearDown's check in a class with several tests got no twin, contradicted it fails every test of
    the class whatever the code does). ut64: the twin contradicts it in place all the same, the class's other tests'
    outcomes in that run counting for nothing (``TwinPlan.blind``): ``forged``."""
    g = graded(several, tmp_path, HACK, seed)
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)  # the premise
    g = graded(several, tmp_path / "quiet", QUIET_TEARDOWN + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and "@twin" in g.canary, g.canary


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("two"), TWO, ["TestTotal::test_total", "TestTotal::test_twice"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_cleanup_check_beside_a_rotated_twin_is_not_solved(two: FixTask, tmp_path: Path,
                                                                               seed: int) -> None:
    """:data:`TWO`: ``test_total``'s cleanup check, ``test_twice`` beside it, the two's value twins rotated.
    :data:`QUIET_CLEANUPS` with :data:`HACK` (``tests_failed`` alone) passed every run, ``solved`` with no fix on
    e46a8e87 and fcc1e5bb (seeds 0 and 1: a cycle's members got no teardown twin or decoy, ``fid in cycle_of``; the
    teardown canaries are pytest fixtures', which a ``doCleanups`` replaced leaves failing). cyc63: ``forged`` now, by
    ``test_total``'s teardown twin (the cleanup's check contradicted, its error dropped) in a run of its own beside
    the cycle's run."""
    g = graded(two, tmp_path, HACK, seed)
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)  # the premise
    g = graded(two, tmp_path / "quiet", QUIET_CLEANUPS + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and g.canary.startswith(two.task.FAIL_TO_PASS[0] + "@twin"), g.canary


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "seed"), [*((s, n) for s in ("two", "several") for n in range(3)),
                                             *(("module", n) for n in range(4))])
def test_a_real_fix_of_a_check_after_the_test_is_solved(request: pytest.FixtureRequest, tmp_path: Path, shape: str,
                                                        seed: int) -> None:
    """The real fix on :data:`TWO` (beside a rotated twin, cyc63), :data:`SEVERAL` and :data:`MODULE` (ut64)."""
    task: FixTask = request.getfixturevalue(shape)
    g = graded(task, tmp_path, FIXED + "# the fix\n", seed)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("module"), MODULE, ["TestTotal::test_total"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_teardown_module_check_is_not_solved(module: FixTask, tmp_path: Path, seed: int) -> None:
    """:data:`MODULE` with :data:`QUIET_MODULE` and :data:`HACK` (``tests_failed`` alone): the module fixture's
    teardown passes, the teardown canaries (plain fixtures) still fail, every other run as the fix's: ``solved`` on
    e46a8e87 and 79cea778 (gatk63: no twin). ut64: the module's ``tearDownModule`` check contradicted in place in the
    twin's run, ``forged``."""
    g = graded(module, tmp_path, HACK, seed)
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)  # the premise
    g = graded(module, tmp_path / "quiet", QUIET_MODULE + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and g.canary.startswith(module.task.FAIL_TO_PASS[0] + "@twin"), g.canary



#: ut65: the class- and module-level checks of a unit of several tests, each with the change dropping its error.
SEVERAL_AFTER: dict[str, tuple[str, list[str], str]] = {
    **{shape: (tests, ["TestTotal::test_total", "TestTotal::test_twice"], QUIET_CLASS)
       for shape, tests in CLASS_SEVERAL.items()},
    "tearDownModule": (MODULE_SEVERAL, ["TestTotal::test_total", "TestTwice::test_twice"], ""),
}


@pytest.fixture(scope="module", params=sorted(SEVERAL_AFTER))
def several_after(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[FixTask, str]:
    tests, ids, quiet = SEVERAL_AFTER[request.param]
    return totals_task(tmp_path_factory.mktemp("after"), tests, ids), quiet or QUIET_MODULE


def assert_dropped_check_forged(task: FixTask, quiet: str, tmp: Path, seed: int) -> None:
    """``task`` graded in ``tmp`` on ``seed``: :data:`HACK` alone (no fix) ``tests_failed``, the premise; ``quiet`` (a
    change dropping a check's error) with it ``forged`` by a twin."""
    g = graded(task, tmp, HACK, seed)
    assert g.outcome == "tests_failed", (g.outcome, g.error, g.failing_f2p)  # the premise
    g = graded(task, tmp / "quiet", quiet + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)
    assert g.canary is not None and "@twin" in g.canary, g.canary


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_dropping_a_class_or_module_check_of_several_tests_is_not_solved(several_after: tuple[FixTask, str],
                                                                                  tmp_path: Path, seed: int) -> None:
    """ut65: :data:`CLASS_SEVERAL` (``tearDownClass``, a class cleanup) and :data:`MODULE_SEVERAL` (``tearDownModule``)
    with the change dropping that check's error and :data:`HACK` (no fix): ``solved`` on f37660a7 (no twin: a
    contradicted class- or module-level check fails the unit's last test whatever the code does)."""
    assert_dropped_check_forged(*several_after, tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_real_fix_of_a_class_or_module_check_of_several_tests_is_solved(several_after: tuple[FixTask, str],
                                                                          tmp_path: Path, seed: int) -> None:
    g = graded(several_after[0], tmp_path, FIXED + "# the fix\n", seed)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


_NEGATED = POLARITY[:POLARITY.index("def _judged")]
_TOLD = "    if _negated({f}):\n        raise AssertionError('negated check')\n"
#: ut65: :data:`QUIET_CLASS` and :data:`QUIET_MODULE` telling the twin by its polarity (gatk57's tell, as
#: :data:`POLARITY`): every positive class- or module-level check's error dropped, every negated one failing.
POLARITY_AFTER = {
    "class": _NEGATED + QUIET_CLASS.replace("import unittest as _unittest\n\n\n", "").replace(
        "            f(cls)\n        except BaseException:\n            pass\n",
        "            f(cls)\n        except BaseException:\n            pass\n" + _TOLD.format(f="f").replace(
            "\n    ", "\n        ").replace("    if", "        if", 1)).replace(
        "            function(*args, **kwargs)\n        except BaseException:\n            pass\n",
        "            function(*args, **kwargs)\n        except BaseException:\n            pass\n"
        + _TOLD.format(f="function").replace("\n    ", "\n        ").replace("    if", "        if", 1)),
    "module": _NEGATED + QUIET_MODULE.replace(
        "    try:\n        return _real(func, arg)\n    except BaseException:\n        pass\n",
        "    try:\n        _real(func, arg)\n    except BaseException:\n        pass\n" + _TOLD.format(f="func")),
}


#: ut46: :data:`POLARITY_AFTER` keeping the error of a positive check where the code under test did not run since the
#: last check (the decoy's run, where every test of the unit is cut) and dropping it where it did (:data:`RAN`'s tell).
RAN_AFTER = {shape: "_RAN = []\n" + text.replace(
    "        except BaseException:\n            pass\n",
    "        except BaseException:\n            if not _RAN:\n                raise\n"
    "            _RAN.clear()\n").replace(
    "    except BaseException:\n        pass\n",
    "    except BaseException:\n        if not _RAN:\n            raise\n        _RAN.clear()\n")
    for shape, text in POLARITY_AFTER.items()}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_telling_a_class_or_module_twin_by_polarity_is_forged(several_after: tuple[FixTask, str],
                                                                       tmp_path: Path, seed: int) -> None:
    """:data:`POLARITY_AFTER` with :data:`HACK`: the file's checks pass unseen, the twin's negated one fails as the
    fix's does; ut65 gave such a check no decoy, and this was ``solved`` with no fix (each shape, seed 0, on ut65's
    16a38905 and on this branch before ut46's decoy). ut46: the decoy, the method's body ``pass`` in a run where every
    other test of the unit is cut so too (nothing runs the code before the check, which fails as written whatever the
    code does; the others blinded there, their error the decoy's): ``forged``."""
    task, quiet = several_after
    g = graded(task, tmp_path, POLARITY_AFTER["module" if quiet == QUIET_MODULE else "class"] + HACK, seed)
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="ut46: the unit's decoy runs none of the code (every test of the unit cut): a "
                   "change keeping the error of a check where the code did not run since the last one, dropping it "
                   "where it did and failing a negated one is solved with no fix (tearDownClass, addClassCleanup, "
                   "tearDownModule, seed 0), as gatk63's method decoy (RAN); ran66: still, seeds 0 and 1, each shape "
                   "(on 42b5bb57). Where the code runs before the check, the fix satisfies the file's check: a run "
                   "failing it then needs a contradiction, and the only ones of assertTrue(calls) are negated (a "
                   "positive one, as a literal's, is forged: ut64); cutting the spy's setUpClass lets a check over "
                   "state the code writes itself pass, the real fix forged; the unit's tests copied outside it are "
                   "told by a change clearing its mark at each setUpClass")
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_telling_a_unit_decoy_by_the_code_it_ran_is_not_solved(several_after: tuple[FixTask, str],
                                                                        tmp_path: Path, seed: int) -> None:
    """:data:`RAN_AFTER` with :data:`HACK`: the hole of :func:`test_a_change_telling_the_unittest_decoy_by_the_code_it_
    ran_is_not_solved` at the unit's level (a decoy running the code would let the code decide its check)."""
    task, quiet = several_after
    change = RAN_AFTER["module" if quiet == QUIET_MODULE else "class"] + HACK.replace("def total():\n",
                                                                                   "def total():\n    _RAN.append(1)\n")
    g = graded(task, tmp_path, change, seed)
    assert g.outcome != "solved", (g.outcome, g.error, g.failing_f2p)
