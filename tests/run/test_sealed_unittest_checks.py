"""seal64: what the sealed run shows of a ``unittest`` test's own check after the test (ucln62's teardown twin).

The sealed run is made before the runs apart, and gatk57 blanked there the fixture checks a teardown twin
contradicts (``seal_apart.unchecked_files``): the file's own check, shown there, tells which of the runs apart's two
checks is the file's. ucln62's unittest checks were not blanked: on this task (a ``tearDown`` check, and a module
test with a sealed site, so that there is a sealed run) the sealed run's file held ``self.assertTrue(self.calls)``
in ``tearDown`` as the file writes it (seeds 0 and 1, on 79cea778). Now it holds ``pass`` there; the real fix is
``solved``, the value without the work ``tests_failed`` and ucln62's polarity tell ``forged``, all graded sealed."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TEST
from run.test_unittest_check_polarity import POLARITY

from pytest_homefield.run import sealed_grading

CHECK = "self.assertTrue(self.calls)"
#: A unittest class whose ``tearDown`` checks that ``total()`` fetched (ucln62's teardown twin contradicts it).
CLASS = ("import unittest\n\nimport totals\n\n\n"
         "class TestTotal(unittest.TestCase):\n"
         "    def setUp(self):\n        self.calls = []\n        self.real = totals.fetch\n"
         "        totals.fetch = lambda: self.calls.append(1) or self.real()\n\n"
         f"    def tearDown(self):\n        totals.fetch = self.real\n        {CHECK}\n\n"
         "    def test_total(self):\n        self.assertEqual(totals.total(), 4)\n")
#: ut46: :data:`CLASS` with its ``setUp`` and ``tearDown`` in a mixin of the module, the test class deriving from it.
MIXIN = CLASS.replace("class TestTotal(unittest.TestCase):\n", "class Spy:\n").replace(
    "\n\n    def test_total(self):", "\n\n\nclass TestTotal(Spy, unittest.TestCase):\n    def test_total(self):")
#: ran66: :data:`MIXIN` with the test class's own ``tearDown`` calling the mixin's through ``super()``.
SUPER = MIXIN.replace("class TestTotal(Spy, unittest.TestCase):\n", "class TestTotal(Spy, unittest.TestCase):\n"
                      "    def tearDown(self):\n        super().tearDown()\n\n")
#: :data:`CLASS` (:data:`MIXIN`, :data:`SUPER`) and a module test with a sealable site (a sealed run).
TESTS = {shape: text + "\n\ndef test_sum():\n    assert totals.total() + 3 == 7\n"
         for shape, text in (("own", CLASS), ("mixin", MIXIN), ("super", SUPER))}


@pytest.fixture(scope="module", params=sorted(TESTS))
def sealed_task(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """ut46: ``mixin``, the sealed run showed the mixin's check as the file writes it (``without_checks`` read the
    class's own ``tearDown`` alone); ran66: ``super``, the mixin's reached through ``super()`` alike."""
    return build_fix_task(tmp_path_factory.mktemp("sealut"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS[request.param], first="totals",
                          message="Count both fetches",
                          fail_to_pass=[f"{TEST}::TestTotal::test_total", f"{TEST}::test_sum"], pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize(("change", "outcome"), [(FIXED + "# the fix\n", "solved"), (HACK, "tests_failed"),
                                                 (POLARITY + HACK, "forged")], ids=["fix", "hack", "polarity"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_sealed_run_shows_no_unittest_teardown_check(sealed_task: FixTask, tmp_path: Path, seed: int,
                                                         change: str, outcome: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    unchecked = sealed_grading.unchecked_files

    def seen(files: dict[str, bytes]) -> dict[str, bytes]:
        out = unchecked(files)
        shown.extend(data.decode() for path, data in out.items() if path == TEST)
        return out
    monkeypatch.setattr(sealed_grading, "unchecked_files", seen)
    g = grade_source(sealed_task, tmp_path, SOURCE, change, canaries=True, canary_seed=seed, sandbox="none",
                     sealed=True)
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)
    assert (tmp_path / "out" / "sealed.log").is_file()
    assert shown and all("__hf_seal__" in t and CHECK not in t for t in shown), shown
    assert all("    def tearDown(self):\n        totals.fetch = self.real\n        pass\n" in t for t in shown)
