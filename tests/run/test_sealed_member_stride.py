"""gatk38, not closed: a sealed ``in`` site whose member is a number (shape37, ``SEAL_RULES`` 10) is judged against a
flood by its neighbours ``L - 1`` and ``L + 1`` only (``seal_kinds._leaf_mates``): a value holding ``L`` and one of
them holds many guesses at once, and is opaque. A flood holding every *other* number -- every even number below
1000 -- holds ``L`` whenever ``L`` is even and neither neighbour: the host's check holds, the sealed run passes the
site ``equal``, and the unfixed code passes every FAIL_TO_PASS id there and elsewhere. Half of all integer members are
even; the same holds for floats with any step other than 1 (every hundredth below 1 holds ``0.25`` and neither
``-0.75`` nor ``1.25``).

Closing it changes which sites the reference fix passes sealed (a stricter flood rule makes some reference outputs
opaque), so ``SEAL_RULES`` (``sandbox/seal_sites.py``, another helper's file this round) must move with it: left as a
strict xfail. The control: the flood of *every* number below 1000 holds the neighbours and is not solved.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

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
@pytest.mark.xfail(strict=True, reason="gatk38, not closed: a flood of every even number holds an even int member "
                                       "and neither neighbour (L-1, L+1): the sealed run passes it, the unfixed code "
                                       "is solved; closing it moves SEAL_RULES (sandbox/seal_sites.py)")
@pytest.mark.parametrize("seed", [None, 0])
def test_a_flood_of_every_other_number_is_not_solved(squares: FixTask, tmp_path: Path, seed: int | None) -> None:
    """``None``: the sealed run alone (canaries off); 0: canaries on too, seed 0, whose twin expects an odd number
    (the flood fails it as a real fix does). Measured, canaries on, seeds 0-5, ``--sandbox none``: ``solved`` on 0, 3
    and 5; ``forged`` on 1, 2 and 4, whose twins expect an even number (10, 12)."""
    g = grade_source(squares, tmp_path, SOURCE, STRIDE, **({} if seed is None else {"canaries": True,
                                                                                      "canary_seed": seed}))
    assert g.outcome != "solved", g
