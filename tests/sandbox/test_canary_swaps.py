"""Twins that permute, never borrow (issue 30, attack A3; sandbox/canary_swaps.py): each run's file holds
the same literal values, so a test process counting them cannot tell the run holding the twin. Plain
checks of the plan (no test process)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from pytest_homefield.sandbox.canary_swaps import literal_counts, value_key
from pytest_homefield.sandbox.twin_runs import plan_twins

SRC = '''import pytest


def test_old():
    assert inc(1) == 2


def test_two():
    assert f(1) == 13
    expected = "abc"
    assert g() == expected
    assert f(2) == pytest.approx(5.5)
    assert f(3) == 17


def test_a():
    assert h("x") == "hello"


def test_b():
    assert h("y") == "world"


def test_c():
    assert h("z") == "again"


def test_d():
    assert h("w") == "label"


def test_e():
    assert h("v") == "label"
'''
PATH = "t/test_y.py"
F2P = [f"{PATH}::test_{n}" for n in ("old", "two", "a", "b", "c")]
PARENT = {PATH: b"def test_old():\n    assert inc(1) == 2\n"}


def _root(tmp_path: Path, src: str = SRC) -> Path:
    (tmp_path / "t").mkdir(parents=True)
    (tmp_path / PATH).write_text(src)
    return tmp_path


def _counts(text: bytes) -> Counter[str]:
    return literal_counts(ast.parse(text))


def _site_value(text: bytes, func: str) -> object:
    """What the A3 forger reads: the first expected literal of ``func`` in a run's file."""
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == func)
    stmt = fn.body[0]
    assert isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare)
    return ast.literal_eval(stmt.test.comparators[0])


def test_a_function_with_two_values_of_a_type_swaps_them_and_both_runs_count_alike(tmp_path: Path) -> None:
    root = _root(tmp_path)
    for seed in range(6):
        plan = plan_twins(root, [f"{PATH}::test_two"], seed=seed)
        (twin,) = plan.canaries
        assert twin.how.startswith("expected values swapped within the test: ") and twin.strong, twin.how
        a, b = (run[PATH] for run in plan.runs)
        assert _counts(a) == _counts(b), "the same literal values in both runs"
        held = {m: _site_value(run[PATH], "test_two") for m, run in zip(plan.placement[f"{PATH}::test_two"],
                                                                            plan.runs, strict=True)}
        assert held == {0: 13, 1: 17}, "the twin holds the other site's value, the original its own"
        assert b'expected = "abc"' in a and b"approx(5.5)" in a, "a lone str and the approx value stay"


def test_new_functions_with_one_site_are_cycled_and_placed_together(tmp_path: Path) -> None:
    root = _root(tmp_path)
    plan = plan_twins(root, F2P, seed=5, parent=PARENT)
    how = {c.source.rsplit("::", 1)[1]: c.how for c in plan.canaries}
    cycled = sorted(f for f, h in how.items() if "values rotated with" in h)
    assert cycled == ["test_a", "test_b", "test_c"], how  # three unique str values: one cycle of three
    assert "values rotated" not in how["test_old"], "a function of the parent's file is in no cycle"
    placements = {plan.placement[f"{PATH}::{f}"] for f in cycled}
    assert len(placements) == 1, "one run holds every twin of the cycle, the other every original"
    values = [{f: _site_value(run[PATH], f) for f in cycled} for run in plan.runs]
    assert sorted(values[0].values()) == sorted(values[1].values()) == ["again", "hello", "world"], \
        "the cycle's values are the same multiset in both runs"
    assert all(values[0][f] != values[1][f] for f in cycled)
    # without the parent's files nothing counts as new: no cycle
    assert not any("values rotated" in c.how for c in plan_twins(root, F2P, seed=5).canaries)


def test_values_of_unequal_counts_are_not_cycled(tmp_path: Path) -> None:
    # "label" occurs twice in the file, "hello" once: rotating them would change what occurs elsewhere
    plan = plan_twins(_root(tmp_path), [f"{PATH}::test_a", f"{PATH}::test_d"], seed=1, parent=PARENT)
    assert not any("values rotated" in c.how for c in plan.canaries), [c.how for c in plan.canaries]


def test_a_fallback_twin_is_made_up_for_a_unique_value_and_borrowed_for_a_repeated_one(tmp_path: Path) -> None:
    plan = plan_twins(_root(tmp_path), [f"{PATH}::test_a", f"{PATH}::test_d"], seed=2)
    how = {c.source.rsplit("::", 1)[1]: c.how for c in plan.canaries}
    assert how["test_a"].endswith("(made up)"), how  # "hello" is unique: a borrowed value would occur twice
    assert how["test_d"].endswith("(another test's expected value)"), how  # "label" occurs twice
    for run, member in zip(plan.runs, plan.placement[f"{PATH}::test_d"], strict=True):
        counts = _counts(run[PATH])
        assert counts[value_key(_site_value(run[PATH], "test_d"))] >= 2 or member == 0


def test_a_repeated_value_with_no_expected_value_to_match_borrows_an_input(tmp_path: Path) -> None:
    # [1, 2, 3] occurs twice (an input too); no other expected list: the twin takes the input [4, 5],
    # so the site's value occurs twice in both runs (a made-up list would occur once: A3 inverted)
    src = ("def test_round_trip():\n    value = dumps([1, 2, 3])\n    other = dumps([4, 5])\n"
           "    assert loads(value) == [1, 2, 3]\n")
    root = tmp_path / "r"
    root.mkdir()
    (root / "test_z.py").write_text(src)
    plan = plan_twins(root, ["test_z.py::test_round_trip"], seed=4)
    (twin,) = plan.canaries
    assert twin.how == "expected [1, 2, 3] -> [4, 5] (another test's expected value)", twin.how
    for run in plan.runs:
        assert sorted(_counts(run["test_z.py"]).values())[-1] == 2


def test_an_expected_name_the_test_also_hands_to_the_code_is_not_rewritten_and_the_reference_fails_the_twin(
        tmp_path: Path) -> None:
    # `value` is the input and the expected value: a twin rewriting `value = 'hello'` changed both, and
    # the reference fix passed it (itsdangerous 0b6975b: a forced sentinel); `count = 2` has one reader
    code = "def dumps(v):\n    return '!' + v\n\n\ndef loads(s):\n    return s[1:]\n"
    src = ("def test_round_trip():\n    value = 'hello'\n    s = dumps(value)\n    assert loads(s) == value\n\n\n"
           "def test_count():\n    count = 2\n    assert len(loads('!ab')) == count\n")
    root = tmp_path / "r"
    root.mkdir()
    (root / "test_z.py").write_text(src)
    for name in ("test_round_trip", "test_count"):
        plan = plan_twins(root, [f"test_z.py::{name}"], seed=3)
        (twin,) = plan.canaries
        for member, run in zip(plan.placement[f"test_z.py::{name}"], plan.runs, strict=True):
            text = run["test_z.py"].decode()
            space: dict[str, object] = {}
            exec(compile(code + "\n\n" + text, "test_z.py", "exec"), space)  # noqa: S102 - the reference fix
            try:
                space[name]()  # type: ignore[operator]
                passed = True
            except AssertionError:
                passed = False
            assert passed == (member == 0), (name, twin.how, text)
        if name == "test_round_trip":
            assert "value = 'hello'" in plan.runs[0]["test_z.py"].decode() \
                and "value = 'hello'" in plan.runs[1]["test_z.py"].decode(), twin.how
        else:
            assert twin.how.startswith("expected 2 ->"), twin.how  # its one reader: the value site stays
