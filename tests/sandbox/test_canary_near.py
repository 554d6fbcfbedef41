"""Twin values as near the parent's output as their original (atk29's nearness tell, contracts §7): pure functions,
no test process."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_near import as_near, near_alternatives, nearness, operand_values
from pytest_homefield.sandbox.twin_runs import plan_twins


@pytest.mark.parametrize("e, p", [
    ("Don't Look Back", "Don'T Look Back"),  # a capital lowercased (titlecase, 091319e41154)
    ("hello-world-again", "hello world-again"),  # a separator replaced (slug)
    ("Version 2.10", "Version 2.11"),  # a digit
    ("abcdeYf", "abcXdeYf"),  # a character removed
    ("abc def ghi", "abcdefghi x"),  # two edits: none
    (b"Don't Look", b"Don'T Look"),
    (["a", "Bc", "x"], ["a", "BC", "x"]),  # one item of a list
    (("a", "Bc"), ("a", "BC")),
    ({"k": "Bc", "j": 1}, {"k": "BC", "j": 1}),  # one value of a dict
    (105, 100), (1.5, 1.25), (-7, 3),
])
@pytest.mark.parametrize("seed", range(6))
def test_every_twin_is_exactly_as_near_the_parents_value_and_neither_value(e: object, p: object, seed: int) -> None:
    alts = near_alternatives(e, p, 3, random.Random(seed))
    for a in alts:
        assert type(a) is type(e) and a != e and a != p, (e, p, a)
        assert as_near(nearness(a, p), nearness(e, p)), (e, p, a, nearness(a, p), nearness(e, p))
    assert len(alts) == len({repr(a) for a in alts})
    if e == "abc def ghi":
        assert alts == []
    elif isinstance(e, (int, float)):
        assert alts == [p - (e - p)], alts  # the one other value at E's distance
    else:
        assert alts, (e, p)


def test_a_case_change_stays_a_case_change_of_a_character_of_the_same_class() -> None:
    seen = set()
    for seed in range(40):
        for a in near_alternatives("Don't Look Back", "Don'T Look Back", 1, random.Random(seed)):
            seen.add(a)
    # P with one more capital lowercased: the D, the L or the B (the T is E's own change)
    assert seen == {"don'T Look Back", "Don'T look Back", "Don'T Look back"}, seen


def test_no_near_value_where_none_fits() -> None:
    rng = random.Random(0)
    assert near_alternatives(True, False, 1, rng) == []  # a bool: its twin is the negation
    assert near_alternatives(None, 1, 1, rng) == []
    assert near_alternatives("a", 1, 1, rng) == []  # other types
    assert near_alternatives("same", "same", 1, rng) == []
    assert near_alternatives([], ["  ", " "], 1, rng) == []  # lengths differ: no item to change
    assert near_alternatives(101, 100, 1, rng) == []  # 99 is 2 from 101: under the ladder's minimum gap (k + 2)
    assert near_alternatives("ab", "aB", 1, rng) == []  # no other capital in P
    long = "Ab" * 260
    assert near_alternatives(long + "t", long + "T", 1, rng) == []  # over MAX_DRAWN: planning stays cheap
    assert near_alternatives(long[:400] + "t", long[:400] + "T", 1, rng) != []


def test_nearness_is_the_pair_statistic_and_as_near_its_equality() -> None:
    assert nearness(3, 5) == ("num", 2.0, 0.0) and as_near(nearness(3, 5), nearness(7, 5))
    assert not as_near(nearness(3, 5), nearness(8, 5)) and not as_near(nearness(3, 5), nearness("3", "5"))
    e, p, far = "Don't Look Back", "Don'T Look Back", "don't look back"
    assert nearness(e, p)[1] >= 0.9 > nearness(far, p)[1]  # atk29's numbers: 0.94 against 0.77
    assert not as_near(nearness(far, p), nearness(e, p))


def test_operands_read_back_only_as_three_literal_texts() -> None:
    assert operand_values(["==", "'a'", "[1, (2, b'x')]"]) == ("==", "a", [1, (2, b"x")])
    assert operand_values(["==", "'a'"]) is None
    assert operand_values(["==", "f()", "1"]) is None  # not a literal
    assert operand_values(["==", "'" + "a" * 3000 + "'", "1"]) is None  # over MAX_OPERAND
    assert operand_values(None) is None


TEST = ("from titles import titlecase\n\n\n"
        "def test_apostrophes():\n"
        "    assert titlecase(\"don't look back\") == \"Don't Look Back\"\n")


@pytest.mark.parametrize("seed", range(8))
def test_the_planner_draws_the_stop_sites_twin_near_the_parents_value(tmp_path: Path, seed: int) -> None:
    """With the parent check's ``stops`` and ``near`` the twin at the stop's literal is the parent's value with
    the original's edit elsewhere (never the far ``"don't look back"`` a draw without them can give)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_t.py").write_text(TEST)
    fid = "tests/test_t.py::test_apostrophes"
    near = {fid: ("==", repr("Don'T Look Back"), repr("Don't Look Back"))}
    plan = plan_twins(tmp_path, [fid], seed=seed, stops={fid: 1}, near=near)
    texts = {r["tests/test_t.py"].decode() for r in plan.runs}
    twin = next(t for t in texts if "Don't Look Back" not in t)
    value = twin.split("== ", 1)[1].strip()
    assert value.strip("'\"") in {"don'T Look Back", "Don'T look Back", "Don'T Look back"}, twin
    assert [c.how for c in plan.canaries][0].endswith("(as near the parent's \"Don'T Look Back\")"), plan.canaries
    # the operands the other way round (the expected side left) draw the same
    flipped = {fid: ("==", repr("Don't Look Back"), repr("Don'T Look Back"))}
    assert plan_twins(tmp_path, [fid], seed=seed, stops={fid: 1}, near=flipped).runs == plan.runs


STATS = ("from textkit import top_words\n\n\n"
         "def test_ties():\n"
         "    assert top_words(\"b a c a b\", 2) == [(\"a\", 2), (\"b\", 2)]\n")


@pytest.mark.parametrize("seed", range(6))
def test_with_no_edit_to_repeat_the_usual_draws_as_near_are_taken(tmp_path: Path, seed: int) -> None:
    """``top_words``' ties (5e4f5c1cddcb): the original swaps the parent's two items, an edit no other position
    holds; a recased item is exactly as near the parent's ``[('b', 2), ('a', 2)]`` (0.9), a changed count is not."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_s.py").write_text(STATS)
    fid = "tests/test_s.py::test_ties"
    near = {fid: ("==", "[('b', 2), ('a', 2)]", "[('a', 2), ('b', 2)]")}
    plan = plan_twins(tmp_path, [fid], seed=seed, stops={fid: 1}, near=near)
    (how,) = [c.how for c in plan.canaries]
    assert "as near the parent's" in how, how
    twin = next(t for r in plan.runs for t in [r["tests/test_s.py"].decode()] if '[("a", 2), ("b", 2)]' not in t)
    value = ast.literal_eval(twin.split("== ", 1)[1].strip())
    p, e = [("b", 2), ("a", 2)], [("a", 2), ("b", 2)]
    assert as_near(nearness(value, p), nearness(e, p)) and value not in (p, e), value
