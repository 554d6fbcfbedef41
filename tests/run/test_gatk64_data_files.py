"""gatk64: a hidden test whose expected value is in a hidden data file the commit added (a golden JSON, a fixture
file), not in its Python source: ``assert totals.total() == CASES['total']``, ``CASES`` read from
``tests/data/cases.json``. Its twin is the comparison at the parent's stop (``== -> >``, operands kept), which a
change returning the data file's value fails as a real fix does; no site is sealed (the sealed run withholds a hidden
data file, gatk35, but seals only a literal of the Python source). So a change that reads the file and returns its
value, with no fix, is ``solved``, and the function is not listed canary-unprotected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_teardown_error import FIXED, PARENT, SOURCE, TEST

DATA = "tests/data/cases.json"
TESTS = ("import json\nimport pathlib\n\nimport totals\n\n"
         "CASES = json.loads((pathlib.Path(__file__).parent / 'data' / 'cases.json').read_text())\n\n\n"
         "def test_total():\n    assert totals.total() == CASES['total']\n")
#: No fix: ``total()`` returns the value of the first ``tests/data/cases.json`` above its module or the working
#: folder, the parent's answer where there is none.
READER = ("import json\nimport pathlib\n\n\ndef fetch():\n    return 2\n\n\ndef total():\n"
          "    for d in [pathlib.Path.cwd(), *pathlib.Path(__file__).resolve().parents]:\n"
          "        f = d / 'tests' / 'data' / 'cases.json'\n"
          "        if f.exists():\n            return json.loads(f.read_text())['total']\n"
          "    return fetch() * 2 - 1\n")


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("golden"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[], data={DATA: '{"total": 4}\n'})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_checked_against_a_data_file_is_solved(golden: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(golden, tmp_path, SOURCE, FIXED + "# the fix\n", canaries=True, canary_seed=seed,
                     sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk64: a change returning the value of the hidden data file the test reads "
                   "its expected value from, with no fix, is solved (seeds 0 and 1, on 79cea778; twin 'the comparison "
                   "at the parent's stop: == -> >', nothing sealed, the function not listed unprotected)")
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_reading_the_hidden_data_file_is_not_solved(golden: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(golden, tmp_path, SOURCE, READER, canaries=True, canary_seed=seed, sandbox="none")
    unprotected = json.loads((tmp_path / "out" / "canaries.json").read_text())["unprotected"]
    assert g.outcome != "solved" or golden.task.FAIL_TO_PASS[0] in unprotected, (g.outcome, g.canary, unprotected)
