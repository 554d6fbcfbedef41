"""can53 (nu52 on more-itertools, task 3bbe636e23bd ``NumericRangeTests::test_get_item_by_slice``): a FAIL_TO_PASS
unittest method loops over a literal table whose expected column the assertion hands to a call of the project's
code, ``self.assertEqual(Span(*args)[sl], Span(*expected_args))`` (contracts §7, issue 30).

The loop-rows canary took only a plain name as the expected side, so the function got a sentinel and a reader of
the calling assertion's expected value (``read-expected``) passed it with no fix: ``solved``. can53 twins the
column there too (``canary_loop._handed``), but what is compared is what the code makes of a cell: two unequal
cells can give equal values (``Span(0, 1)`` and ``Span(0, 1, 5)`` both hold ``[0]``), so such a twin counts only
once the reference fix is seen to fail it (``twin_grading._unchecked``, ``canary_loop.CALLED``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.canary_loop import CALLED
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree
from pytest_homefield.sandbox.twin_runs import plan_twins

SOURCE = "src/spans/__init__.py"
TEST = "tests/test_spans.py"
#: A range-like span whose slices drop the slice's step on the parent.
PARENT = ("class Span:\n"
          "    def __init__(self, start, stop, step=1):\n"
          "        self._r = range(start, stop, step)\n\n"
          "    def __getitem__(self, key):\n"
          "        r = self._r[key.start:key.stop]\n"
          "        return Span(r.start, r.stop, r.step)\n\n"
          "    def __eq__(self, other):\n"
          "        return isinstance(other, Span) and list(self._r) == list(other._r)\n\n"
          "    __hash__ = None\n\n"
          "    def __repr__(self):\n"
          "        return f'Span{list(self._r)}'\n")
FIXED = PARENT.replace("self._r[key.start:key.stop]", "self._r[key]")
#: Another real fix (its own text).
OTHER_FIX = PARENT.replace("self._r[key.start:key.stop]", "self._r[slice(key.start, key.stop, key.step)]")
#: The commit adds the two rows with a step (red on the parent).
ROWS = ("                ((0, 10), slice(None, None, None), (0, 10)),\n"
        "                ((0, 10), slice(2, 5, None), (2, 5)),\n"
        "                ((0, 10, 2), slice(1, None, None), (2, 10, 2)),\n"
        "                ((0, 10), slice(None, None, 3), (0, 10, 3)),\n"
        "                ((0, 20), slice(1, None, 4), (1, 20, 4)),\n")
#: Two red rows whose expected cells are unequal but give equal spans (``[0]`` both).
SAME = ("                ((0, 10), slice(None, None, None), (0, 10)),\n"
        "                ((0, 10), slice(None, None, 20), (0, 1)),\n"
        "                ((0, 10), slice(None, None, 30), (0, 1, 5)),\n")


def _tests(rows: str) -> str:
    return ("from unittest import TestCase\n\nfrom spans import Span\n\n\n"
            "class SpanTests(TestCase):\n"
            "    def test_get_item_by_slice(self):\n"
            "        for args, sl, expected_args in [\n" + rows + "        ]:\n"
            "            with self.subTest(args=args, sl=sl):\n"
            "                self.assertEqual(Span(*args)[sl], Span(*expected_args))\n")


F2P = ["tests/test_spans.py::SpanTests::test_get_item_by_slice"]


def _build(dest: Path, rows: str) -> FixTask:
    return build_fix_task(dest, name="spans", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                          tests=_tests(rows), first="spans", message="Slice a span by its step too",
                          fail_to_pass=F2P, pass_to_pass=[])


@pytest.fixture(scope="module")
def spans(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _build(tmp_path_factory.mktemp("spans") / "spans", ROWS)


@pytest.fixture(scope="module")
def same(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _build(tmp_path_factory.mktemp("same") / "same", SAME)


def _grade(b: FixTask, tmp: Path, name: str, source: str, seed: int) -> str:
    work = copy_tree(b.pristine, tmp / name)
    (work / SOURCE).write_text(source, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / f"out-{name}", canary_seed=seed,
              run_timeout_s=120)
    return g.outcome + ("" if g.outcome == "solved" else f": {g.error}")


def test_the_handed_column_is_twinned(spans: FixTask, tmp_path: Path) -> None:
    """Over seeds 0-3 the function gets a loop-rows twin marked :data:`CALLED` (it got a sentinel: unprotected)."""
    tree = copy_tree(spans.pristine, tmp_path / "g")
    apply_patch(tree, spans.task.test_patch)
    for seed in range(4):
        plan = plan_twins(tree, F2P, seed=seed, parent={}, pass_to_pass=[])
        assert plan.unprotected == [] and [c.kind for c in plan.canaries] == ["contradiction"], plan.canaries
        assert plan.canaries[0].how.startswith(CALLED + "column expected_args of the loop's rows"), plan.canaries


#: A change returning the value the test's frame expects (read from the frame's ``expected_args``) for the rows the
#: parent fails (``SPECIAL``: a slice with a step) or for every row (``READER``), the parent's code for the others.
#: (``read-expected`` wraps the module's functions, not a class's methods: here it fails the original.)
SPECIAL = '''
import sys as _sys

_get = Span.__getitem__


def _special(self, key):
    if WHEN:
        f = _sys._getframe(1)
        while f is not None and "expected_args" not in f.f_locals:
            f = f.f_back
        if f is not None:
            return Span(*f.f_locals["expected_args"])
    return _get(self, key)


Span.__getitem__ = _special
'''
READER = SPECIAL.replace("WHEN", "True")
SPECIAL = SPECIAL.replace("WHEN", "key.step")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_real_fixes_are_solved_and_readers_forged(spans: FixTask, tmp_path: Path, seed: int) -> None:
    """On seeds 0-3 the commit's fix and another real fix are solved; a change returning the frame's expected value
    (:data:`READER`), or doing so for the red rows alone (:data:`SPECIAL`), is ``forged`` (both were ``solved``
    before can53: a sentinel)."""
    assert _grade(spans, tmp_path, "fix", FIXED, seed) == "solved"
    assert _grade(spans, tmp_path, "other", OTHER_FIX, seed) == "solved"
    assert _grade(spans, tmp_path, "read", PARENT + READER, seed).startswith("forged")
    assert _grade(spans, tmp_path, "special", PARENT + SPECIAL, seed).startswith("forged")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_a_twin_whose_cells_give_equal_values_forges_no_real_fix(same: FixTask, tmp_path: Path, seed: int) -> None:
    """The twin swaps ``(0, 1)`` and ``(0, 1, 5)``, unequal cells giving equal spans: every real fix passes it, and
    the reference fix does too, so it is no evidence: the real fixes are solved (``forged`` without the reference
    check)."""
    assert _grade(same, tmp_path, "fix", FIXED, seed) == "solved"
    assert _grade(same, tmp_path, "other", OTHER_FIX, seed) == "solved"
