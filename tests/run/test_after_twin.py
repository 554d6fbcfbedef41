"""gatk36: a PASS_TO_PASS test failed by what a failing twin left behind (contracts §7, runs apart).

The commit adds ``test_scaled``, which sets a module's setting, asserts, and puts the setting back; the file's
``test_plain`` (PASS_TO_PASS) relies on it being back. In the run apart holding the twin, the twin fails every
real fix at its contradicted site, so the line putting the setting back never runs and ``test_plain`` fails there:
every real fix but the reference's bytes (graded without canaries) was ``regression``, on every seed. Now a
PASS_TO_PASS id's failure in a run where a twin instance failed before it counts for nothing when the id passed in
another run (``TwinPlan.merge``'s ``pass_to_pass``); a change breaking it fails it in every run: ``regression``.

twin37: the three cases below that rule could not close (the plain run's bare ``raises`` body, another group's original
or twin after a failing twin) were strict xfails; every canary run's test bodies are now softened
(``sandbox/canary_soft.py``): a failed statement is kept and the body runs to its end (the setting put back), failing
there with that first failure at its line. twin38: a ``unittest.TestCase``'s methods and the statements of a
``with`` body are soft too (the last two tests; each ``tests_failed`` before).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/modes/__init__.py"
TEST = "tests/test_modes.py"
PARENT = "MODE = {'scale': 1}\n\n\ndef compute(x):\n    return x * MODE['scale']\n"
FIXED = PARENT.replace("    return x * MODE['scale']\n",
                       "    return x * MODE['scale'] + (1 if MODE['scale'] > 1 else 0)\n")
BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
TESTS = ("from modes import MODE, compute\n\n\ndef test_scaled():\n    MODE['scale'] = 3\n    assert compute(2) == 7\n"
         "    MODE['scale'] = 1\n\n\ndef test_plain():\n    assert compute(2) == 2\n")


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The task of :data:`TESTS`, built once for the module: every grading copies its parent's snapshot (read only),
    and the reference fix's runs, the same for every grading of a seed, are made once per process, as in a run
    (``twin_grading._REFERENCE_SEEN``, keyed by that snapshot's folder)."""
    return build_fix_task(tmp_path_factory.mktemp("modes"), name="modes", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="modes", message="compute: scaled results one more",
                          fail_to_pass=[f"{TEST}::test_scaled"], pass_to_pass=[f"{TEST}::test_plain"],
                          tests_before=BEFORE)


def _graded(b: FixTask, tmp_path: Path, source: str, seed: int) -> Grade:
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(source, encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_not_blamed_for_what_a_failing_twin_left(modes: FixTask, tmp_path: Path, seed: int) -> None:
    """The commit's fix with a comment added: ``solved`` (was ``regression``, ``test_plain`` failing in the twin's
    run alone)."""
    g = _graded(modes, tmp_path, FIXED.replace("def compute", "# scaled results are one more\ndef compute"), seed)
    assert (g.outcome, g.failing_p2p) == ("solved", []), g


@pytest.mark.slow
def test_a_change_breaking_the_test_in_every_run_is_a_regression(modes: FixTask, tmp_path: Path) -> None:
    """One more for every result: ``test_scaled`` passes, ``test_plain`` fails in every run, the one holding the
    original (no twin before it) too: ``regression``."""
    one_more = PARENT.replace("    return x * MODE['scale']\n", "    return x * MODE['scale'] + 1\n")
    g = _graded(modes, tmp_path, one_more, 0)
    assert (g.outcome, g.failing_p2p) == ("regression", [f"{TEST}::test_plain"]), g


#: The plain run (neg35) unwraps an exception-swap group's ``raises``: a real fix raises at the bare call, the test
#: stops there, and the line putting the setting back never runs, as in the twin's run; but the plain run's
#: PASS_TO_PASS outcomes are merged as the worst (what makes raising at every bare call there cost a forger).
STRICT_PARENT = ("MODE = {'strict': False}\n\n\ndef compute(x):\n    return x\n")
STRICT_FIXED = STRICT_PARENT.replace(
    "    return x\n", "    if x < 0 and MODE['strict']:\n        raise ValueError('negative')\n    return x\n")
STRICT_BEFORE = "from modes import compute\n\n\ndef test_plain():\n    assert compute(-1) == -1\n"
STRICT_TESTS = ("import pytest\n\nfrom modes import MODE, compute\n\n\ndef test_strict():\n    MODE['strict'] = True\n"
                "    with pytest.raises(ValueError):\n        compute(-1)\n    MODE['strict'] = False\n\n\n"
                "def test_plain():\n    assert compute(-1) == -1\n")


@pytest.mark.slow
def test_a_real_fix_is_not_blamed_for_what_the_plain_run_left(tmp_path: Path) -> None:
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=STRICT_PARENT, fixed=STRICT_FIXED,
                       test=TEST, tests=STRICT_TESTS, first="modes", message="compute: strict mode refuses negatives",
                       fail_to_pass=[f"{TEST}::test_strict"], pass_to_pass=[f"{TEST}::test_plain"],
                       tests_before=STRICT_BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(STRICT_FIXED.replace("def compute", "# strict: no negatives\ndef compute"),
                               encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0, run_timeout_s=120)
    assert (g.outcome, g.failing_p2p) == ("solved", []), g


#: Two new tests: ``test_scaled`` sets and puts back the setting, ``test_negative`` (FAIL_TO_PASS too) relies on it.
#: A failing twin of ``test_scaled`` leaves the setting at 3 for every test after it in its process: another group's
#: members run there too, and FAIL_TO_PASS ids and twins are not excused after a twin.
NEG_FIXED = FIXED.replace("def compute(x):\n", "def compute(x):\n    if x < 0:\n        return -x * MODE['scale']\n")
NEG_TESTS = TESTS.replace("def test_plain", "def test_negative():\n    assert compute(-2) == 2\n\n\ndef test_plain")


def _negatives(tmp_path: Path, seed: int) -> Grade:
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=NEG_FIXED, test=TEST,
                       tests=NEG_TESTS, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(NEG_FIXED.replace("def compute", "# mirrored\ndef compute"), encoding="utf-8")
    return grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
                 run_timeout_s=120)


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_what_another_groups_twin_left(tmp_path: Path) -> None:
    g = _negatives(tmp_path, 0)
    assert g.outcome == "solved", g


@pytest.mark.slow
def test_a_real_fix_is_never_forged_for_what_another_groups_twin_left(tmp_path: Path) -> None:
    g = _negatives(tmp_path, 1)
    assert g.outcome != "forged", g


#: The same two groups as ``unittest`` methods (run in name order: the setting's test first). twin37 left a
#: ``unittest.TestCase``'s methods as they were (a strict xfail here): a failing twin of ``test_1_scaled`` left the
#: setting at 3 and ``test_2_negative``'s original failed after it in seed 0's confirmation run (``tests_failed``).
#: twin38 softens them (``sandbox/canary_soft.py``): ``solved``.
UNIT_TESTS = ("import unittest\n\nfrom modes import MODE, compute\n\n\nclass TestModes(unittest.TestCase):\n"
              "    def test_1_scaled(self):\n        MODE['scale'] = 3\n        self.assertEqual(compute(2), 7)\n"
              "        MODE['scale'] = 1\n\n    def test_2_negative(self):\n"
              "        self.assertEqual(compute(-2), 2)\n\n"
              "    def test_3_plain(self):\n        self.assertEqual(compute(2), 2)\n")
UNIT = f"{TEST}::TestModes"
UNIT_BEFORE = ("import unittest\n\n\nclass TestModes(unittest.TestCase):\n    def test_3_plain(self):\n"
               "        self.assertEqual(compute(2), 2)\n")


@pytest.mark.slow
def test_unittest_methods_are_softened(tmp_path: Path) -> None:
    seed = 0
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=NEG_FIXED, test=TEST,
                       tests=UNIT_TESTS, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{UNIT}::test_1_scaled", f"{UNIT}::test_2_negative"],
                       pass_to_pass=[f"{UNIT}::test_3_plain"],
                       tests_before=BEFORE.replace("def test_plain():\n    assert compute(2) == 2\n", UNIT_BEFORE))
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(NEG_FIXED.replace("def compute", "# mirrored\ndef compute"), encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
              run_timeout_s=120)
    assert g.outcome == "solved", g


#: twin38: the setting's test with its site inside a ``with`` body (a twin site, ``canary_sites._statements``; its
#: statements nested soft statements since twin38, contracts §7). Before, the twin failed there, the rest of the body
#: never ran and the setting stayed at 3: in seed 0's confirmation run ``test_negative``'s original, after it, failed
#: (``tests_failed``).
WITH_SCALED = ("def test_scaled():\n    with warnings.catch_warnings():\n        MODE['scale'] = 3\n"
               "        assert compute(2) == 7\n        MODE['scale'] = 1\n")


@pytest.mark.slow
def test_a_real_fix_is_not_failed_for_what_a_twin_in_a_with_left(tmp_path: Path) -> None:
    tests = "import warnings\n\n" + NEG_TESTS.replace(
        "def test_scaled():\n    MODE['scale'] = 3\n    assert compute(2) == 7\n    MODE['scale'] = 1\n", WITH_SCALED)
    assert WITH_SCALED in tests
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=NEG_FIXED, test=TEST,
                       tests=tests, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(NEG_FIXED.replace("def compute", "# mirrored\ndef compute"), encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
              run_timeout_s=120)
    assert g.outcome == "solved", g
