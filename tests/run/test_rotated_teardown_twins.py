"""cyc63: teardown twins for the members of a rotation cycle. Two FAIL_TO_PASS tests new in the commit, each with a
value site of one type, have their value twins rotated (``expected 4 -> 8 (values rotated with test_twice)``), the
two twins placed in one run; ``twin_runs._plan_file`` gave such a function no teardown twin or decoy (gatk63's strict
xfail for a unittest cleanup, ``test_unittest_cleanup_shapes63.py``). Measured here for a pytest fixture's check:
a change swallowing every teardown error but the teardown canaries' (gatk54's ``BY_SOURCE``/``BY_VALUE``) was
``solved`` with no fix beside a rotated twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask
from run.test_teardown_canary_shape import BY_SOURCE, BY_VALUE
from run.test_teardown_error import HACK, TESTS, assert_fixed_solved_and_hack_failed, graded, totals_task

from pytest_homefield.sandbox.canaries import TEARDOWN_TWIN
from pytest_homefield.sandbox.canary_teardown import TEARDOWN_DECOY_HOW

#: :data:`~run.test_teardown_error.TESTS` (``test_total`` requesting the ``spy`` fixture whose teardown asserts the
#: fetch) and a second new test with a value of the same type: the two's value twins are a rotation cycle.
TWO = TESTS + "\n\ndef test_twice():\n    assert totals.total() * 2 == 8\n"


@pytest.fixture(scope="module")
def rotated(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return totals_task(tmp_path_factory.mktemp("rotated"), TWO, ["test_total", "test_twice"])


def _canaries(tmp_path: Path) -> list[dict[str, str]]:
    return json.loads((tmp_path / "out" / "canaries.json").read_text(encoding="utf-8"))["canaries"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("tell", [BY_SOURCE, BY_VALUE], ids=["source", "value"])
def test_a_change_swallowing_a_fixture_check_beside_a_rotated_twin_is_not_solved(rotated: FixTask, tmp_path: Path,
                                                                                  tell: str, seed: int) -> None:
    """The change swallowing every teardown error but the canaries', no fix: ``solved`` on fcc1e5bb (seeds 0 and 1,
    both tells: the rotated twins fail as a fix's do, no teardown twin), ``forged`` now by ``test_total``'s teardown
    twin (the spy's check contradicted, its error swallowed) or its decoy."""
    g = graded(rotated, tmp_path, tell + HACK, seed)
    kinds = [(c["kind"], c["how"]) for c in _canaries(tmp_path)]
    assert any("values rotated with" in h for _, h in kinds), kinds  # the premise: a cycle
    assert [k for k, h in kinds if k == TEARDOWN_TWIN and not h.startswith(TEARDOWN_DECOY_HOW)] == [TEARDOWN_TWIN]
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_real_fix_beside_a_rotated_twin_with_a_teardown_twin_is_solved(rotated: FixTask, tmp_path: Path,
                                                                         seed: int) -> None:
    assert_fixed_solved_and_hack_failed(rotated, tmp_path, seed)
