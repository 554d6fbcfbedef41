"""gatk34: a value twin of a comparison with a tolerance (``approx(3.14, rel=0.01)``, ``assertAlmostEqual(…,
delta=…)``) must lie so far from its original that no value meets both (contracts §7, issue 30). Drawn one
unit-ladder away as for ``==``, the twin ``approx(3.17)`` of ``approx(3.14, rel=0.01)`` (seed 2) was met by
``math.pi``: a real fix other than the reference's bytes passed it beside its passing original, ``forged``
(``tests/run/test_tolerance_twins.py`` grades it). Plain checks of the plan (no test process)."""

from __future__ import annotations

import ast
import math
import random
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_sites import almost_tolerance, approx_tolerance
from pytest_homefield.sandbox.canary_swaps import find_swap
from pytest_homefield.sandbox.canary_values import EXACT, alternatives, apart
from pytest_homefield.sandbox.twin_runs import plan_twins

PATH = "tests/test_circles.py"
F2P = [f"{PATH}::test_unit_circle"]


def _call(text: str) -> ast.Call:
    node = ast.parse(text, mode="eval").body
    assert isinstance(node, ast.Call)
    return node


@pytest.mark.parametrize(("text", "tol"), [
    ("approx(3.14)", (1e-6, 1e-12)),
    ("approx(3.14, rel=0.01)", (0.01, 1e-12)),
    ("approx(3.14, abs=0.5)", (0.0, 0.5)),
    ("approx(3.14, rel=0.01, abs=0.5)", (0.01, 0.5)),
    ("approx(3.14, 0.01, 0.5)", (0.01, 0.5)),
    ("approx(3.14, rel=None, abs=None)", (1e-6, 1e-12)),
    ("approx(3.14, nan_ok=True)", (1e-6, 1e-12)),
    ("approx(3.14, rel=TOL)", None),
    ("approx(3.14, abs=1 / 3)", None),
    ("approx(3.14, rel=-1)", None),
    ("approx(3.14, **opts)", None),
])
def test_approx_tolerance(text: str, tol: tuple[float, float] | None) -> None:
    """pytest's rule: ``abs`` alone is the window, else ``rel`` (1e-6) of the expected value, at least ``abs``
    (1e-12); a tolerance that is not a literal number is not known (``None``: no value twin there)."""
    assert approx_tolerance(_call(text)) == tol


@pytest.mark.parametrize(("text", "tol"), [
    ("self.assertAlmostEqual(x, 2.5)", (0.0, 1e-7)),
    ("self.assertAlmostEqual(x, 2.5, 2)", (0.0, 0.01)),
    ("self.assertAlmostEqual(x, 2.5, places=1)", (0.0, 0.1)),
    ("self.assertAlmostEqual(x, 2.5, delta=0.5)", (0.0, 0.5)),
    ("self.assertAlmostEqual(x, 2.5, msg='m', delta=0.5)", (0.0, 0.5)),
    ("self.assertAlmostEqual(x, 2.5, delta=D)", None),
    ("self.assertAlmostEqual(x, 2.5, places=P)", None),
])
def test_almost_tolerance(text: str, tol: tuple[float, float] | None) -> None:
    """``delta``, else ``10 ** -places`` (default 7); not a literal: not known."""
    assert almost_tolerance(_call(text)) == tol


def test_apart_means_no_value_meets_both() -> None:
    """Windows disjoint: ``3.17`` is within 1% of ``math.pi`` as ``3.14`` is, so they are not apart at
    ``rel=0.01``; exact comparisons keep :func:`_unequal`; an unknown tolerance is never apart."""
    tol = (0.01, 1e-12)
    assert not apart(3.14, 3.17, tol) and abs(math.pi - 3.17) <= 0.01 * 3.17 and abs(math.pi - 3.14) <= 0.01 * 3.14
    assert apart(3.14, 3.23, tol)
    assert apart(3.14, 3.17, EXACT) and not apart(3.14, 3.14, EXACT)
    assert not apart(3.14, 30.0, None)
    assert not apart([1.0, 3.14], [1.0, 3.17], tol) and apart([1.0, 3.14], [1.0, 3.3], tol)


@pytest.mark.parametrize("tol", [(0.01, 1e-12), (0.0, 0.5), (0.05, 0.2), (1e-6, 1e-12), (0.0, 1e-7)])
@pytest.mark.parametrize("v", [3.14, 2.5, 1234, 0.5, 1e-09, -7.25, [1.5, 2.5]])
def test_made_up_twins_are_apart(v: object, tol: tuple[float, float]) -> None:
    """Every made-up alternative drawn under a tolerance is apart from its value, over 40 draws."""
    for seed in range(40):
        for w in alternatives(v, 2, random.Random(seed), tol):
            assert apart(v, w, tol), (v, w, tol, seed)


def _plan_values(tmp_path: Path, body: str, seeds: range) -> list[str]:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / PATH).write_text("import pytest\n\nfrom circles import area\n\n\ndef test_unit_circle():\n" + body)
    hows = []
    for seed in seeds:
        plan = plan_twins(tmp_path, F2P, seed=seed, parent={}, pass_to_pass=[])
        assert [c.kind for c in plan.canaries] == ["contradiction"], plan.canaries
        hows.append(plan.canaries[0].how)
    return hows


def test_approx_twins_are_outside_the_tolerance(tmp_path: Path) -> None:
    """Over seeds 0-39, the twin of ``approx(3.14, rel=0.01)`` is one no value within 1% of 3.14 meets within 1%
    of itself (on main seed 2 drew ``approx(3.17)``, which ``math.pi`` meets)."""
    hows = _plan_values(tmp_path, "    assert area(1) == pytest.approx(3.14, rel=0.01)\n", range(40))
    for how in hows:
        twin = float(how.split("-> approx(")[1].split(")")[0])
        assert abs(twin - 3.14) > 0.01 * 3.14 + 0.01 * twin, how
        assert abs(math.pi - twin) > 0.01 * twin, how  # the reference fix's value fails every twin


def test_a_tolerance_that_is_not_known_gets_no_value_twin(tmp_path: Path) -> None:
    """``rel=TOL``: no value site at the literal; the function is twinned by a flip (``!=``) instead."""
    hows = _plan_values(tmp_path, "    TOL = 0.01\n    assert area(1) == pytest.approx(3.14, rel=TOL)\n", range(6))
    assert all("->" not in h for h in hows), hows


def test_almost_equal_delta_twins_are_outside_it(tmp_path: Path) -> None:
    """``assertAlmostEqual(…, 2.5, delta=0.5)``: every twin more than twice the delta from 2.5."""
    hows = _plan_values(tmp_path, "    import unittest\n"
                        "    unittest.TestCase().assertAlmostEqual(area(1), 2.5, delta=0.5)\n", range(40))
    for how in hows:
        twin = float(how.split("-> ")[1].split(" ")[0])
        assert abs(twin - 2.5) > 1.0, how


def test_a_swap_never_moves_a_value_within_the_tolerance() -> None:
    """Two sites of one test whose windows overlap (3.14 and 3.16 at ``rel=0.01``) are not swapped with each
    other (a swap would give each the other's value: met by a value meeting both); apart ones are."""
    close = ast.parse("def test_x():\n    assert f(1) == approx(3.14, rel=0.01)\n"
                      "    assert f(2) == approx(3.16, rel=0.01)\n").body[0]
    far = ast.parse("def test_x():\n    assert f(1) == approx(3.14, rel=0.01)\n"
                    "    assert f(2) == approx(6.28, rel=0.01)\n").body[0]
    assert isinstance(close, ast.FunctionDef) and isinstance(far, ast.FunctionDef)
    assert all(find_swap(close, 1, random.Random(s)) is None for s in range(10))
    assert all(find_swap(far, 1, random.Random(s)) is not None for s in range(10))
