"""can49: the confirmation run's names were drawn from a twin's text, not the test file's (contracts §7, the
confirmation run; ``sandbox/twin_runs.py``'s ``FileLayout``).

The planner's loop over a site's twins bound each twin's expected text to ``text``, the name of the test file's text,
since exc35 (1034a89e); the file's layout for the confirmation run (``FileLayout.text``) was then the last twin's text
(``half(word) != word[:2]``). The confirmation run draws its members' fresh names from the words of that text and
never one it defines, so a name it drew could be the original's own (``test_half``): both members defined under one
name, the second shadowed the first, and the run reported one member as both. A real fix, whose original passes
beside its failing flip twin, always gets that run: it was ``forged`` ("passed in one run holding both") or its
original ``unsteady``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins
from pytest_homefield.sandbox.twin_together import together

SOURCE = "src/halves/__init__.py"
TEST = "tests/test_halves.py"
PARENT = "def half(s):\n    return s\n"
FIXED = "def half(s):\n    return s[:len(s) // 2]\n"
TESTS = '''from halves import half


def test_half():
    word = "ab" * 2
    assert half(word) == word[:2]
'''
FID = f"{TEST}::test_half"
SEEDS = range(16)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_layout_holds_the_file_and_no_member_takes_a_name_it_defines(tmp_path: Path) -> None:
    """Over 16 seeds: the layout's text is the test file's, and the confirmation file defines each member under its
    own name, none defined by the file. Before: the layout held ``half(word) != word[:2]``, and 4 of 16 seeds drew
    ``test_half`` for the twin."""
    parent = _write(tmp_path / "parent", {SOURCE: PARENT})
    commit = _write(tmp_path / "commit", {SOURCE: FIXED, TEST: TESTS})
    defined = {n.id for n in ast.walk(ast.parse(TESTS)) if isinstance(n, ast.Name)} | {"test_half", "half"}
    for seed in SEEDS:
        plan = plan_twins(commit, [FID], seed=seed, parent=parent_tests(parent, [TEST]), parent_text=ParentText(parent))
        assert plan.layouts[TEST].text == TESTS, (seed, plan.layouts[TEST].text)
        built = together(plan.layouts, plan.seed)
        assert built is not None
        files, names = built
        fresh = [n.rsplit("::", 1)[1] for n in names[FID]]
        assert len(set(fresh)) == len(fresh) and not (set(fresh) - {"test_half"}) & defined, (seed, fresh)
        tree = ast.parse(files[TEST].decode())
        assert sorted(n.name for n in tree.body if isinstance(n, ast.FunctionDef)) == sorted(fresh), seed


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("halves"), name="halves", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="halves", message="half() halves",
                          fail_to_pass=[FID], pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 3, 4])
def test_a_real_fix_is_solved_where_the_names_collided(halves: FixTask, tmp_path: Path, seed: int) -> None:
    """The reference fix written otherwise, on the grading seeds of 0-5 whose names collided before: ``forged`` on 1
    and 3 (the twin "passed in one run holding both"), ``tests_failed`` on 4 (its original not reported there);
    ``solved`` now."""
    fix = FIXED.replace("return s[:len(s) // 2]", "n = len(s) // 2\n    return s[:n]")
    g = grade_source(halves, tmp_path, SOURCE, fix, canaries=True, canary_seed=seed)
    assert g.outcome == "solved", (g.outcome, g.error)
