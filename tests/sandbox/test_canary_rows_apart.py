"""Rows set apart (canary_rows.rows_apart, add32): an assertion a commit adds to a parametrized body, red on some
rows only (humanize 1399e049734b). Pure planning, no test process; the gradings are in
``tests/run/test_added_assertion_rows.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.attack_repo import _write

from pytest_homefield.sandbox.canary_rows import APART_HOW, NOT_ROWS, module_constants
from pytest_homefield.sandbox.canary_swaps import literal_values, value_key
from pytest_homefield.sandbox.twin_runs import plan_twins

TEST = "tests/test_time.py"
FID = f"{TEST}::test_delta"
HEAD = ("import datetime as dt\n\nimport pytest\n\nfrom m import delta\n\n"
        "ONE_MICROSECOND = 1 / 1000000\nFOUR_MILLISECONDS = 4 / 1000\nONE_HOUR = 3600\n"
        "ONE_DAY = 24 * ONE_HOUR\nNOW = dt.datetime.now()\n\n\n")
ROWS = ('        ("seconds", ONE_MICROSECOND, "a moment"),\n'
        '        ("seconds", ONE_DAY + FOUR_MILLISECONDS, "a day"),\n'
        '        ("microseconds", ONE_MICROSECOND, "1 microsecond"),\n'
        '        ("microseconds", FOUR_MILLISECONDS, "4 milliseconds"),\n')
BODY = ("def test_delta(unit, seconds, expected):\n    d = dt.timedelta(seconds=seconds)\n"
        "    assert delta(d, unit) == expected\n")
ADDED = "    assert delta(seconds, unit) == expected\n"
F2P = [f"{FID}[microseconds-1e-06-1 microsecond]", f"{FID}[microseconds-0.004-4 milliseconds]"]
P2P = [f"{FID}[seconds-1e-06-a moment]", f"{FID}[seconds-86400.004-a day]"]


def _file(rows: str = ROWS, added: str = ADDED, keywords: str = "", body: str = BODY) -> str:
    return (HEAD + f'@pytest.mark.parametrize(\n    "unit, seconds, expected",\n    [\n{rows}    ],{keywords}\n)\n'
            + body + added)


def _plan(root: Path, text: str, seed: int = 0, f2p: list[str] = F2P, p2p: list[str] = P2P):  # type: ignore[no-untyped-def]
    _write(root, {TEST: text, "m.py": "def delta(*a):\n    return ''\n"})
    parent = text[:text.rstrip("\n").rfind("\n") + 1]  # the file without its last line, the added assertion
    return plan_twins(root, f2p, seed=seed, parent={TEST: parent.encode()}, pass_to_pass=p2p)


def _function(text: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_module_constants_are_the_names_bound_once_to_constants() -> None:
    """Folded in order over the names bound before; a name bound twice or to a call is none of them."""
    got = module_constants(ast.parse(HEAD + "TWICE = 1\nTWICE = 2\nLATER = ONE_DAY * 2\n"))
    assert got == {"ONE_MICROSECOND": 1e-06, "FOUR_MILLISECONDS": 0.004, "ONE_HOUR": 3600, "ONE_DAY": 86400,
                   "LATER": 172800}
    assert module_constants(None) == {}


@pytest.mark.parametrize("seed", range(6))
def test_an_added_assertion_red_on_some_rows_gets_its_rows_apart(tmp_path: Path, seed: int) -> None:
    """Every run holds the same functions and rows under the same names: the red rows alone under the function's
    name, the green rows under another one with the added assertion left out; the members differ only at that
    assertion's expected side, a literal unequal to each red row's value and to every literal of the file."""
    text = _file()
    plan = _plan(tmp_path, text, seed)
    assert [c.kind for c in plan.canaries] == ["contradiction"] and plan.unprotected == []
    assert plan.canaries[0].how.startswith(APART_HOW.split("{")[0]) and plan.canaries[0].strong
    (fresh, group), = plan.renamed.items()
    assert group == FID and plan.kept[FID] == frozenset(P2P)
    runs = [r[TEST].decode() for r in plan.runs]
    twin = runs[plan.placement[FID].index(1)]
    original = runs[plan.placement[FID].index(0)]
    name = fresh.rsplit("::", 1)[1]
    for run in runs:
        ours, theirs = _function(run, "test_delta"), _function(run, name)
        assert [ast.unparse(r) for r in ours.decorator_list[0].args[1].elts] == [  # type: ignore[attr-defined]
            "('microseconds', ONE_MICROSECOND, '1 microsecond')",
            "('microseconds', FOUR_MILLISECONDS, '4 milliseconds')"]
        assert [ast.unparse(r) for r in theirs.decorator_list[0].args[1].elts] == [  # type: ignore[attr-defined]
            "('seconds', ONE_MICROSECOND, 'a moment')", "('seconds', ONE_DAY + FOUR_MILLISECONDS, 'a day')"]
        assert ast.unparse(theirs.body[-1]) == "pass" and len(theirs.body) == 3
    assert ast.unparse(_function(original, "test_delta").body[-1]) == "assert delta(seconds, unit) == expected"
    last = _function(twin, "test_delta").body[-1]
    assert isinstance(last, ast.Assert) and isinstance(last.test, ast.Compare)
    value = ast.literal_eval(last.test.comparators[0])
    assert isinstance(value, str) and value not in ("1 microsecond", "4 milliseconds")
    assert value_key(value) not in {value_key(v) for v in literal_values(ast.parse(text))}
    differ = [(a, b) for a, b in zip(original.splitlines(), twin.splitlines(), strict=True) if a != b]
    assert differ == [(ADDED.rstrip(), f"    assert delta(seconds, unit) == {value!r}")]
    assert plan.home(f"{fresh}[seconds-86400.004-a day]") == P2P[1]
    assert plan.rename(0, f"{fresh}[seconds-1e-06-a moment]") == P2P[0]


@pytest.mark.parametrize(("case", "text"), [
    ("ids list", _file(keywords='\n    ids=["a", "b", "c", "d"],')),
    ("no added assertion on a column", _file(added="    assert delta(seconds, unit) == 'x'\n")),
    ("a red row's expected cell computed", _file(rows=ROWS.replace('"1 microsecond"', '"1 " + "microsecond"'))),
])
def test_what_cannot_be_set_apart_keeps_its_sentinel(tmp_path: Path, case: str, text: str) -> None:
    """An ``ids=`` list (it would have to be cut with the rows), an added assertion comparing no column, a red row
    whose expected cell is no literal: the sentinel as before, unprotected."""
    f2p, p2p = F2P, P2P
    if case == "ids list":
        f2p, p2p = [f"{FID}[c]", f"{FID}[d]"], [f"{FID}[a]", f"{FID}[b]"]
    plan = _plan(tmp_path, text, f2p=f2p, p2p=p2p)
    assert [c.how for c in plan.canaries] == [NOT_ROWS] and plan.unprotected == [FID] and plan.renamed == {}
