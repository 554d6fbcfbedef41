"""gatk64: a hidden test whose expected value is not in its function's source but beside it: a hidden data file the
commit added (``CASES['total']``, read from ``tests/data/cases.json``), a hidden module's constant (``from
expected_totals import TOTAL``), a fixture of a hidden ``conftest.py`` (a class-based test taking ``expected``). No
value site exists (the expected side is no literal of the function), the flip (``!=``) is passed by the parent's
code and told, so the twin is the order twin at the parent's stop (``== -> >``, operands kept, near31), which a change
returning the expected value fails as a real fix does (xatk32's open: ``tests/run/test_order_twin_reader.py``); and
nothing is sealed (a literal of the Python source only; the sealed run withholds data files, gatk35). Each reader
below makes no fix and is ``solved``, seeds 0 and 1 (``--sandbox none``): the fixture's reads the calling test's
frame, no file at all. Before otw64 its function was not listed canary-unprotected (a strict xfail here); now the plan
lists it ``unprotected`` and ``order_only`` (the order twin its one twin), so ``verify --attacks`` flags the solve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from run.test_teardown_error import FIXED, PARENT, SOURCE, TEST

#: The reader's own head: the parent's ``fetch``, ``total`` to follow.
_HEAD = "import json\nimport pathlib\nimport re\nimport sys\n\n\ndef fetch():\n    return 2\n\n\ndef total():\n"
#: ``total()`` returns ``found(text)`` of the first ``tests/NAME`` above its module or the working folder, else the
#: parent's answer.
_FILE = ("    for d in [pathlib.Path.cwd(), *pathlib.Path(__file__).resolve().parents]:\n"
         "        f = d / 'tests' / {name!r}\n"
         "        if f.exists():\n            return {found}\n"
         "    return fetch() * 2 - 1\n")
#: shape → (hidden files beside the test file, the test file, its FAIL_TO_PASS function, the reader)
SHAPES = {
    "data file": ({"tests/data/cases.json": '{"total": 4}\n'},
                  "import json\nimport pathlib\n\nimport totals\n\n"
                  "CASES = json.loads((pathlib.Path(__file__).parent / 'data' / 'cases.json').read_text())\n\n\n"
                  "def test_total():\n    assert totals.total() == CASES['total']\n",
                  "test_total",
                  _HEAD + _FILE.format(name="data/cases.json", found="json.loads(f.read_text())['total']")),
    "module constant": ({"tests/expected_totals.py": "TOTAL = 4\n"},
                        "import totals\nfrom expected_totals import TOTAL\n\n\n"
                        "def test_total():\n    assert totals.total() == TOTAL\n",
                        "test_total",
                        _HEAD + _FILE.format(name="expected_totals.py",
                                             found=r"int(re.search(r'= (\d+)', f.read_text()).group(1))")),
    "conftest fixture": ({"tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef expected():\n    return 4\n"},
                         "import totals\n\n\nclass TestTotal:\n    def test_total(self, expected):\n"
                         "        assert totals.total() == expected\n",
                         "TestTotal::test_total",
                         _HEAD + "    want = sys._getframe(1).f_locals.get('expected')\n"
                                 "    return want if isinstance(want, int) else fetch() * 2 - 1\n"),
}


def _task(dest: Path, shape: str) -> FixTask:
    data, tests, name, _ = SHAPES[shape]
    return build_fix_task(dest, name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=tests,
                          first="totals", message="Count both fetches", fail_to_pass=[f"{TEST}::{name}"],
                          pass_to_pass=[], data=data)


@pytest.fixture(scope="module", params=list(SHAPES))
def elsewhere(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, FixTask]:
    return request.param, _task(tmp_path_factory.mktemp("elsewhere"), request.param)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_checked_against_a_value_beside_the_test_is_solved(elsewhere: tuple[str, FixTask], tmp_path: Path,
                                                                      seed: int) -> None:
    _, task = elsewhere
    g = grade_source(task, tmp_path, SOURCE, FIXED + "# the fix\n", canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_change_returning_the_value_beside_the_test_is_flagged_unprotected(elsewhere: tuple[str, FixTask],
                                                                             tmp_path: Path, seed: int) -> None:
    """otw64: the reader is still ``solved`` (its one twin the order twin, which it fails as a real fix does; nothing
    sealed), but flagged: the function is listed ``unprotected`` in ``canaries.json``, its reason ``order_only``, as
    ``verify --attacks`` shows it."""
    shape, task = elsewhere
    g = grade_source(task, tmp_path, SOURCE, SHAPES[shape][3], canaries=True, canary_seed=seed, sandbox="none")
    plan = json.loads((tmp_path / "out" / "canaries.json").read_text())
    fid = task.task.FAIL_TO_PASS[0]
    assert (g.outcome, plan["unprotected"], plan.get("order_only")) == ("solved", [fid], [fid]), (g.outcome, g.canary)
