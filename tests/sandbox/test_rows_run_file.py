"""gatk34: the file of the run of the rows set apart (``twin_grading.rows_run``, grn33; contracts §7) shows no group's
original that a run apart did not show.

The run checks a function's PASS_TO_PASS rows with the assertion the commit added, on the task's test file. That
file was the hidden one as given: every *other* group of the file in its original, in a run a test process tells at
a glance (its rows-apart function whole, no appended function). Within one grading the run comes last, but a grading
of the same task (same key, same twins) that a channel reaches (the lock channel of contracts §7, atk22) would read
it as an oracle of every original instead of a guess. The plan now writes that file itself
(:attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.rows`): the rows-apart function whole, every other group as one run
apart holds it (a twin on some seeds, the original on others). Plain checks of the plan (no test
process); ``tests/run/test_added_assertion_rows.py`` grades with the run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_homefield.run.twin_grading import rows_apart_ids, rows_files
from pytest_homefield.sandbox.twin_runs import plan_twins

TEST = "tests/test_doubles.py"
BEFORE = ("import pytest\n\nfrom doubles import double\n\n\n"
          "@pytest.mark.parametrize(\"n, expected\", [(1, 2), (2, 4), (3, 6), (-1, -2)])\n"
          "def test_double(n, expected):\n"
          "    assert double(n) == expected\n")
#: The commit adds an assertion to the parametrized test (its rows set apart) and a test of its own (value twins).
AFTER = (BEFORE + "    assert double(str(n)) == expected\n\n\n"
         "def test_negative_text():\n"
         "    assert double('-21') == -42\n")
F2P = [f"{TEST}::test_double[-1--2]", f"{TEST}::test_negative_text"]
P2P = [f"{TEST}::test_double[1-2]", f"{TEST}::test_double[2-4]", f"{TEST}::test_double[3-6]"]


def _function(text: str, name: str) -> str:
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.unparse(node)


def test_the_rows_file_holds_another_group_as_a_run_apart_does(tmp_path: Path) -> None:
    """Over seeds 0-11: the rows file's ``test_negative_text`` is exactly one a run apart holds (the twin on some
    seeds; on main always the original), and its ``test_double`` is the commit's whole (every row, the added
    assertion), with no appended function."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(AFTER, encoding="utf-8")
    twins = 0
    for seed in range(12):
        plan = plan_twins(tmp_path, F2P, seed=seed, parent={TEST: BEFORE.encode()}, pass_to_pass=P2P)
        ids = rows_apart_ids(plan, P2P)
        assert ids == sorted(P2P), plan.renamed
        text = rows_files(tmp_path, ids, plan.rows)[TEST].decode()
        held = {_function(r[TEST].decode(), "test_negative_text") for r in plan.runs}
        assert _function(text, "test_negative_text") in held
        assert _function(text, "test_double") == _function(AFTER, "test_double")
        assert {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)} == {
            "test_double", "test_negative_text"}
        twins += _function(text, "test_negative_text") != _function(AFTER, "test_negative_text")
    assert 0 < twins < 12, twins  # the twin on some seeds, the original on the others
