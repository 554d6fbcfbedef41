"""Fallback twin values that occur in the parent's code when the original's does (issue 30, round 8 leak
A; sandbox/canary_parent.py): a made-up twin value occurs nowhere in the parent's ``.py`` files while
the original's often does, so "one expected value occurs nowhere in the parent → twin" told the runs
apart. A fixture repository: its parent, its commit, and the reference fix run on each member."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins

PARENT_SRC = '''MODES = ("plain", "title", "upper", "lower")
SIZES = [15, 16, 17, 18, 19, 20]


def classify(text):
    return "plain"
'''
COMMIT_SRC = '''MODES = ("plain", "title", "upper", "lower")
SIZES = [15, 16, 17, 18, 19, 20]


def classify(text):
    if text.isupper():
        return "upper"
    return "plain"


def width(text):
    return 12 if text else 0
'''
PARENT_TEST = '''from textfmt import classify


def test_plain():
    assert classify("a b") == "plain"
'''
COMMIT_TEST = PARENT_TEST + '''

def test_upper():
    assert classify("HELLO") == "upper"


def test_width():
    assert width("abc") == 12
'''.replace("from textfmt import classify", "from textfmt import classify, width")
TEST = "tests/test_fmt.py"
UPPER, WIDTH = f"{TEST}::test_upper", f"{TEST}::test_width"


def _tree(root: Path, src: str, test: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "textfmt.py").write_text(src)
    (root / TEST).write_text(test)
    return root


def _expected(text: bytes, name: str) -> object:
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    stmt = fn.body[0]
    assert isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare)
    return ast.literal_eval(stmt.test.comparators[0])


def _in_parent(v: object, parent: Path) -> bool:
    """The ``not-in-parent`` guesser's reading (benchmarks/twin_leaks.py): the value's text in a parent file."""
    if isinstance(v, str):
        return any(repr(v) in f.read_text() or json.dumps(v) in f.read_text() for f in parent.rglob("*.py"))
    return any(re.search(rf"(?<![\w.]){re.escape(repr(v))}(?![\w.])", f.read_text()) for f in parent.rglob("*.py"))


def test_a_value_the_parent_holds_gets_a_twin_value_the_parent_holds_and_the_reference_fails_it(tmp_path: Path
                                                                                                  ) -> None:
    parent = _tree(tmp_path / "parent", PARENT_SRC, PARENT_TEST)
    commit = _tree(tmp_path / "commit", COMMIT_SRC, COMMIT_TEST)
    plan = plan_twins(commit, [UPPER], seed=3, parent=parent_tests(parent, [TEST]), parent_text=ParentText(parent))
    (twin,) = plan.canaries
    assert twin.how.endswith("(a value of the parent's code)") and twin.excusable, twin.how
    run_of = dict(zip(plan.placement[UPPER], plan.runs, strict=True))
    original, changed = _expected(run_of[0][TEST], "test_upper"), _expected(run_of[1][TEST], "test_upper")
    assert original == "upper" and changed in {"title", "lower"}, changed  # the parent's, not in the test file
    # the leak rule says "original" in both runs: it no longer tells them apart
    assert _in_parent(original, parent) and _in_parent(changed, parent)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(commit)}
    for member, run in run_of.items():  # the reference fix (the commit) on each member: the twin fails
        work = tmp_path / f"run{member}"
        shutil.copytree(commit, work)
        (work / TEST).write_bytes(run[TEST])
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{TEST}::test_upper"],
                              cwd=work, env={**env, "PYTHONPATH": str(work)}, capture_output=True, text=True)
        assert (done.returncode == 0) == (member == 0), done.stdout[-500:]


def test_a_value_the_parent_lacks_gets_a_made_up_twin_the_parent_lacks_too(tmp_path: Path) -> None:
    # 12 occurs nowhere in the parent; a made-up twin 15..20 would occur there (SIZES), 4..9 would not
    parent = _tree(tmp_path / "parent", PARENT_SRC, PARENT_TEST)
    commit = _tree(tmp_path / "commit", COMMIT_SRC, COMMIT_TEST)
    text = ParentText(parent)
    for seed in range(12):
        plan = plan_twins(commit, [WIDTH], seed=seed, parent=parent_tests(parent, [TEST]), parent_text=text)
        (twin,) = plan.canaries
        assert twin.how.endswith("(made up)"), twin.how
        changed = next(_expected(r[TEST], "test_width") for m, r in zip(plan.placement[WIDTH], plan.runs, strict=True)
                       if m)
        assert changed != 12 and not _in_parent(changed, parent), (seed, changed)


def test_a_value_only_the_parents_test_file_holds_is_not_given_one_of_the_code(tmp_path: Path) -> None:
    # "plain" in the parent: only its test file (not in its code); "title" is in the code. A twin "title"
    # would occur in the parent's other files where "plain" does not ("count-repo" told it): made up.
    # The commit rewrote the assertion (a twin changes only a line the commit changed)
    old = PARENT_TEST.replace('classify("a b") == "plain"', '"plain" == classify("a b")')
    parent = _tree(tmp_path / "parent", PARENT_SRC.replace('"plain"', '"none"'), old)
    commit = _tree(tmp_path / "commit", COMMIT_SRC, COMMIT_TEST)
    fid = f"{TEST}::test_plain"
    plan = plan_twins(commit, [fid], seed=1, parent=parent_tests(parent, [TEST]), parent_text=ParentText(parent))
    (twin,) = plan.canaries
    assert twin.how.endswith("(made up)"), twin.how


def test_parent_text_indexes_simple_literals_where_a_reader_finds_them() -> None:
    text = ParentText(files={"a.py": "x = 'ab'\ny = \"c d\"\nz = [1, 2] + f(3, -7)\nw = x[0]\n", "b.py": "q = 3\n"})
    assert set(text.values(str)) == {"str:'ab'", "str:'c d'"}
    assert {k: sorted(f) for k, (_, f) in text.values(int).items()} == \
        {"int:1": ["a.py"], "int:2": ["a.py"], "int:3": ["a.py", "b.py"], "int:-7": ["a.py"], "int:7": ["a.py"],
         "int:0": ["a.py"]}
    assert set(text.values(list)) == {"list:[1, 2]"}, "x[0] is an index, not a list"
    assert text.occurs(3, skip="a.py") and not text.occurs("ab", skip="a.py")
    assert text.occurs("it's") is False and ParentText(files={"a.py": 's = "it\'s"'}).occurs("it's")
