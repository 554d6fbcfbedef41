"""gatk38, closed by stride40: a sealed ``in`` site whose member is a number (shape37, ``SEAL_RULES`` 10) was judged
against a flood by its neighbours ``L - 1`` and ``L + 1`` only: a value holding ``L`` and one of them holds many
guesses at once, and is opaque. A flood holding every *other* number -- every even number below 1000 -- held ``L``
whenever ``L`` was even and neither neighbour: the host's check held, the sealed run passed the site ``equal``, and
the unfixed code passed every FAIL_TO_PASS id there and elsewhere (``solved``; canaries on, seeds 0, 3 and 5 of
0-5).

Now (``SEAL_RULES`` 12) a number's neighbours are also its decimal spelling with one digit changed
(``seal_kinds._number_mates``: ``16`` → ``06`` … ``96``, ``10`` … ``19``), the rule a text member's digits had
since satk35: the flood holds ``14`` and ``18`` too, and is opaque. The cost: a reference value holding ``L`` and
another number one digit away is opaque too, so its site is not sealed (protection lost there, never a false
accusation): :func:`test_a_reference_value_holding_a_digit_neighbour_is_not_sealed`. The control: the flood of
*every* number below 1000 holds the neighbours and is not solved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

from pytest_homefield.run import sealed_grading

SOURCE = "src/squares/__init__.py"
TEST = "tests/test_squares.py"
PARENT = "def squares_below(n):\n    return [i * i for i in range(1, int(n ** 0.5))]\n"
FIXED = "def squares_below(n):\n    return [i * i for i in range(1, int(n ** 0.5) + 1)]\n"
TESTS_BEFORE = "from squares import squares_below\n\n\ndef test_ten():\n    assert 4 in squares_below(10)\n"
TESTS = TESTS_BEFORE + "\n\ndef test_last():\n    assert 16 in squares_below(20)\n"
F2P = [f"{TEST}::test_last"]

#: The parent's squares and every even number below 1000: holds 16 and neither 15 nor 17.
STRIDE = PARENT.replace("def squares_below", "def _parent") + \
    "\n\ndef squares_below(n):\n    return sorted(set(_parent(n)) | set(range(0, 1000, 2)))\n"
#: The parent's squares and every number below 1000: holds 15 and 17 too.
EVERY = STRIDE.replace("range(0, 1000, 2)", "range(1000)")


@pytest.fixture(scope="module")
def squares(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("squares"), name="squares", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="Add squares_below()",
                          message="squares_below(): the last square too", fail_to_pass=F2P,
                          pass_to_pass=[f"{TEST}::test_ten"], tests_before=TESTS_BEFORE)


@pytest.mark.slow
def test_the_commit_fix_is_solved_and_a_flood_of_every_number_is_not(squares: FixTask, tmp_path: Path) -> None:
    """The site is sealed (the reference fix passes it sealed: ``solved``) and the neighbour rule holds the flood of
    every number (opaque: not solved)."""
    assert grade_source(squares, tmp_path / "f", SOURCE, FIXED + "# the last too\n").outcome == "solved"
    assert grade_source(squares, tmp_path / "e", SOURCE, EVERY).outcome != "solved"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [None, 0])
def test_a_flood_of_every_other_number_is_not_solved(squares: FixTask, tmp_path: Path, seed: int | None) -> None:
    """``None``: the sealed run alone (canaries off); 0: canaries on too, seed 0, whose twin expects an odd number
    (the flood fails it as a real fix does). Measured before stride40, canaries on, seeds 0-5, ``--sandbox none``:
    ``solved`` on 0, 3 and 5; ``forged`` on 1, 2 and 4, whose twins expect an even number (10, 12). Now the sealed
    run finds the site opaque (the flood holds ``14`` and ``18``): not solved on either."""
    g = grade_source(squares, tmp_path, SOURCE, STRIDE, **({} if seed is None else {"canaries": True,
                                                                                      "canary_seed": seed}))
    assert g.outcome != "solved", g


EVENS_SOURCE = "src/evens/__init__.py"
EVENS_TEST = "tests/test_evens.py"
EVENS_PARENT = "def evens_upto(n):\n    return list(range(0, n - 1, 2))\n"
EVENS_FIXED = "def evens_upto(n):\n    return list(range(0, n, 2))\n"
EVENS_BEFORE = "from evens import evens_upto\n\n\ndef test_four():\n    assert 2 in evens_upto(4)\n"
EVENS_TESTS = EVENS_BEFORE + "\n\ndef test_upto():\n    assert 16 in evens_upto(17)\n"


@pytest.fixture(scope="module")
def evens(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("evens"), name="evens", source=EVENS_SOURCE, parent=EVENS_PARENT,
                          fixed=EVENS_FIXED, test=EVENS_TEST, tests=EVENS_TESTS, first="Add evens_upto()",
                          message="evens_upto(): n - 1 too", fail_to_pass=[f"{EVENS_TEST}::test_upto"],
                          pass_to_pass=[f"{EVENS_TEST}::test_four"], tests_before=EVENS_BEFORE)


@pytest.mark.slow
def test_a_reference_value_holding_a_digit_neighbour_is_not_sealed(evens: FixTask, tmp_path: Path) -> None:
    """stride40's cost: the commit's own value, every even number below 17, holds ``16`` and its new neighbours ``6``
    and ``14`` (no ``15`` nor ``17``): the reference check finds the site opaque and does not seal it (stored
    ``sealed_sites`` empty; before stride40 the site was sealed), and the commit's fix stays ``solved``: protection
    lost there, never a false accusation."""
    store = tmp_path / "parent-checks.jsonl"
    sealed_grading._SEALED_SEEN.clear()
    try:
        g = grade_source(evens, tmp_path, EVENS_SOURCE, EVENS_FIXED + "# n - 1 too\n", parent_checks=store)
        assert g.outcome == "solved", g
        lines = [json.loads(line) for line in store.read_text().splitlines()]
        assert [r["sealed_sites"] for r in lines if "sealed_sites" in r] == [[]]
    finally:
        sealed_grading._SEALED_SEEN.clear()
