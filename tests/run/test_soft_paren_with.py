"""gatk39: a ``with`` whose parentheses hold its items (``with (a as x, b):``, Python 3.9+), under soft statements.

``canary_soft`` left a ``with`` whose header is parenthesized as it was, its body no soft statement: the form black
gives a ``with`` of several long items. A failing twin in that body stopped at its site and left what the rest of the
body puts back (twin37's case, ``tests/run/test_after_twin.py``): another group's original after it failed, a real fix
``tests_failed`` (seed 0), and another group's twin passed beside it: ``forged`` (seed 1). Now the first item goes
right after the ``(`` and ``soft_block()`` right before the ``)``; a ``with (a) as x:`` (and a lone ``with (a):``,
which Python 3.8 reads as one item too) stays as it is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.modes_task import grade_modes

from pytest_homefield.sandbox.canary_soft import BLOCK, BLOCK_TAKING, NESTED, SOFT, softened

TESTS = ("import warnings\n\nfrom modes import MODE, compute\n\n\ndef test_scaled():\n    with (\n"
         "        warnings.catch_warnings(),\n        warnings.catch_warnings() as caught,\n    ):\n"
         "        MODE['scale'] = 3\n        assert compute(2) == 7\n        MODE['scale'] = 1\n\n\n"
         "def test_negative():\n    assert compute(-2) == 2\n\n\ndef test_plain():\n    assert compute(2) == 2\n")


@pytest.mark.parametrize(("header", "takers"), [("with (\n        a() as x,\n        b(),\n    ):", "a, b, "),
                                               ("with (a() as x, b()):", "a, b, "), ("with(a() as x, b()):", "a, b, "),
                                               ("with (a(1,\n          (2)) as x,  # one\n          b()\n    ):  # two",
                                                "a, b, "),
                                               ("with (a() as x):", "a, ")])
def test_a_parenthesized_with_is_soft(header: str, takers: str) -> None:
    """The header's first item is :data:`SOFT`, its last :data:`BLOCK_TAKING` (soft42: with what makes its contexts);
    gatk40: its body's statements (a ``with`` expecting no exception, at the top) are top soft statements too."""
    text = f"def test_x():\n    {header}\n        y = 1\n        assert x == y\n"
    out = softened(text)
    block = BLOCK_TAKING.format(takers, takers.count(","))  # gatk47: each item's context handed through
    assert out.count(SOFT) == 3 and out.count(block) == 1 and out.count(NESTED.format("")) == 0, out
    assert BLOCK not in out
    assert out.count("\n") == text.count("\n")
    with_ = ast.parse(out).body[0].body[0]  # type: ignore[attr-defined]
    assert [ast.unparse(i.context_expr) for i in (with_.items[0], with_.items[-1])] == \
        [ast.unparse(ast.parse(SOFT, mode="eval").body), ast.unparse(ast.parse(block, mode="eval").body)], out


@pytest.mark.parametrize("header", ["with (a()) as x:", "with (a()):", "with (a(), b()) as x:"])
def test_parentheses_of_an_expression_stay(header: str) -> None:
    text = f"def test_x():\n    {header}\n        assert x == 1\n"
    assert softened(text) == text


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_not_failed_for_what_a_twin_in_a_parenthesized_with_left(tmp_path: Path, seed: int) -> None:
    g = grade_modes(tmp_path, TESTS, seed)
    assert g.outcome == "solved", g
