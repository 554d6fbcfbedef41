"""gatk58: a hidden test reading its own name (``request.node.name``) for a golden file, as snapshot and regression
plugins do. Mining keeps the commit (each member runs apart under the function's own name). At grading every real
fix's original passes apart beside failing twins, so the confirmation run lays the group's members side by side, one
under the function's own name, the others under fresh names: where the original drew a fresh name it looked for
``golden/<fresh name>.txt``, failed with any code, and another real fix was ``tests_failed`` ("passed apart but not
in the confirmation run", seeds 0 and 1 of 0 to 3, ``--sandbox none``, measured on 1db51c0). Now an original failing
there is run once more with the reference fix in the same files (``twin_grading.reference_together``): where that
fails it too, the layout failed it, not the code. Where the reference fix passes it there (seeds 2 and 3: the
original under its own name), a change failing it there stays ``tests_failed``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.suffix_task import FIXED, OTHER, PARENT, SOURCE, TEST

#: the same fix, which fails wherever its test file holds the group's members side by side (the confirmation run
#: only: a run apart holds one member; since mark58 the keyword plugin, which it read before, is in every such run)
SPITE = ("def f(x):\n    with open('tests/test_y.py') as fh:\n        if fh.read().count('f(\"kilo\")') > 1:\n"
         "            return None\n"
         "    return x + '-lima-mike-4417' if isinstance(x, str) else x\n")
TESTS = '''from pathlib import Path

from pkg import f

GOLDEN = Path(__file__).parent / "golden"


def test_two(request):
    assert f("kilo") == "kilo-lima-mike-4417"
    assert f("x") == (GOLDEN / (request.node.name + ".txt")).read_text()


def test_other():
    assert f(7) == 7
'''


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("golden"), name="pkg", source=SOURCE, parent=PARENT, fixed=FIXED,
                          test=TEST, tests=TESTS, first="add", message="Suffix strings",
                          fail_to_pass=[f"{TEST}::test_two"], pass_to_pass=[f"{TEST}::test_other"],
                          data={"tests/golden/test_two.txt": "x-lima-mike-4417"})


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved_where_a_test_reads_its_own_name(golden: FixTask, tmp_path: Path, seed: int) -> None:
    g = grade_source(golden, tmp_path, SOURCE, OTHER, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_an_original_the_reference_fix_passes_there_must_pass_there(golden: FixTask, tmp_path: Path,
                                                                    seed: int) -> None:
    g = grade_source(golden, tmp_path, SOURCE, SPITE, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "tests_failed" and "confirmation run" in (g.error or ""), (g.outcome, g.error)
