"""Canary tests (issue 30, docs/contracts.md §7): contradicted copies of FAIL_TO_PASS tests.

The planted file is run once by the real test command (``run_tests``): a real fix fails every canary
and still passes every real test; with a forging conftest every canary passes. The rest are plain
checks of the rewrite and the plan.
"""

from __future__ import annotations

import ast
import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS

from pytest_homefield.agents.attack_payloads import FORGE
from pytest_homefield.sandbox.canaries import CanaryPlan, function_id, plant_canaries
from pytest_homefield.sandbox.testrun import run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS} -p no:randomly -p no:cacheprovider"

#: One test of each shape the rewrite knows, each passing (the "real fix" is the standard library).
TESTS = '''\
import math
import unittest

import pytest


@pytest.mark.parametrize("a,b,c", [(3, 1, 2), (0, 5, -5)], ids=["pos", "neg"])
def test_sub(a, b, c):
    assert a - b == c


def test_literal_first():
    x = 5
    assert x > 1
    assert 2.0 == math.sqrt(4)


def test_approx():
    assert 0.1 + 0.2 == pytest.approx(0.3)


def test_raises():
    with pytest.raises(ZeroDivisionError):
        1 / 0


def test_membership(tmp_path):
    assert tmp_path.name in str(tmp_path)


def test_bare():
    assert math.sqrt(4)


def test_nothing_to_contradict():
    math.sqrt(4)


class TestUnit(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(math.sqrt(9), 3)

    def test_true(self):
        self.assertTrue(math.isfinite(1.0))


class TestPlain:
    def test_list(self):
        assert [1, 2] == [1, 2]
'''

FUNCTIONS = ["test_sub[pos]", "test_sub[neg]", "test_literal_first", "test_approx", "test_raises",
             "test_membership", "test_bare", "test_nothing_to_contradict", "TestUnit::test_equal",
             "TestUnit::test_true", "TestPlain::test_list"]
F2P = [f"tests/test_x.py::{f}" for f in FUNCTIONS]


def _tree(tmp_path: Path, text: str = TESTS) -> Path:
    root = tmp_path / "w"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_x.py").write_text(text, encoding="utf-8")
    return root


def _run(root: Path, plan: CanaryPlan, out: Path) -> dict[str, str]:
    run = run_tests(root, CMD, ["tests/test_x.py", *plan.targets], out_dir=out, timeout_s=120)
    assert run.finished, run
    return run.outcomes


@pytest.mark.slow  # two test-command runs
def test_a_real_fix_fails_every_canary_and_a_forged_report_passes_them(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert len(plant_canaries(_tree(tmp_path / "limit"), F2P, seed=1).canaries) == 10  # LIMIT functions
    plan = plant_canaries(root, [*F2P, "docs/guide.rst::guide"], seed=1, limit=20)
    assert len(plan.canaries) == 11 and plan.targets and plan.targets[0].startswith("docs/test_")
    kinds = {function_id(c.source).split("::")[-1]: (c.kind, c.strong) for c in plan.canaries}
    assert kinds["test_sub"] == ("contradiction", True)            # expected side paired with a token
    assert kinds["test_literal_first"] == ("contradiction", True)  # the literal on the left perturbed
    assert kinds["test_approx"] == ("contradiction", True)
    assert kinds["test_equal"] == ("contradiction", True)
    assert kinds["test_raises"] == ("contradiction", False)
    assert kinds["test_nothing_to_contradict"] == ("sentinel", False)
    assert kinds["guide"] == ("sentinel", False)
    # the file's own text is unchanged above the canaries: the real tests keep their line numbers
    assert (root / "tests" / "test_x.py").read_text().startswith(TESTS)
    outcomes = _run(root, plan, tmp_path / "out")
    assert all(outcomes[i] == "passed" for i in F2P), outcomes
    assert plan.passed(outcomes) == []
    assert plan.failing(outcomes) == plan.canaries
    # a forging conftest: every canary passes
    (root / "conftest.py").write_text(FORGE)
    forged = _run(root, plan, tmp_path / "forged")
    assert {c.node for c, _ in plan.passed(forged)} == {c.node for c in plan.canaries}


def test_names_come_from_the_file_and_change_with_the_seed(tmp_path: Path) -> None:
    names = []
    for seed in (1, 2):
        root = _tree(tmp_path / str(seed))
        plan = plant_canaries(root, F2P[:3], seed=seed)
        names.append({c.node.split("::")[-1] for c in plan.canaries})
        own = {"sub", "literal", "first", "approx", "raises", "membership", "bare", "nothing", "to", "contradict",
               "equal", "true", "list"}
        for name in names[-1]:
            assert name.startswith("test_") and set(name[5:].split("_")) <= own, name
            assert f"def {name}(" not in TESTS
    assert names[0] != names[1]


def test_sentinels_where_asked_or_where_the_file_does_not_parse(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    plan = plant_canaries(root, F2P[:3], seed=3, sentinel_for={"tests/test_x.py::test_sub"})
    by_source = {function_id(c.source): c for c in plan.canaries}
    assert by_source["tests/test_x.py::test_sub"].kind == "sentinel"
    assert by_source["tests/test_x.py::test_literal_first"].kind == "contradiction"
    broken = _tree(tmp_path / "b", "def test_a(:\n    pass\n")
    plan = plant_canaries(broken, ["tests/test_x.py::test_a"], seed=3)
    assert [c.kind for c in plan.canaries] == ["sentinel"]
    text = (broken / "tests" / "test_x.py").read_text()
    assert text.startswith("def test_a(:\n") and "raise AssertionError(" in text


def test_a_canary_that_cannot_be_defined_is_a_sentinel_and_spares_the_real_tests(tmp_path: Path) -> None:
    """A decorator that works once only (agent code can do that): the canary's ``except`` defines the
    sentinel under the same name; the module still imports, the real test still runs."""
    once = ("import pytest\n\nUSED = []\n\n\ndef once(f):\n    if USED:\n        raise RuntimeError('twice')\n"
            "    USED.append(f)\n    return f\n\n\n@once\ndef test_a():\n    assert 1 + 1 == 2\n")
    root = _tree(tmp_path, once)
    plan = plant_canaries(root, ["tests/test_x.py::test_a"], seed=4)
    outcomes = _run(root, plan, tmp_path / "out")
    assert outcomes["tests/test_x.py::test_a"] == "passed"
    assert plan.failing(outcomes) == plan.canaries


@pytest.mark.parametrize("source, expected", [
    ("assert f(x) == 3", "assert f(x) == 3 +"),
    ("assert f(x) in items", "assert f(x) not in items"),
    ("assert f(x) is None", "assert f(x) is not None"),
    ("assert f(x) != 3", "assert f(x) == 3"),
    ("assert f(x) < 3", "assert not f(x) < 3"),
    ("assert not f(x)", "assert f(x)"),
    ("self.assertIn(a, b)", "self.assertNotIn(a, b)"),
    ("pytest.raises(ValueError, f, 1)", "f(1)"),
    ("self.assertRaises(ValueError, f, 1)", "f(1)"),
    ("self.assertRaisesRegex(ValueError, 'n must be', f, 1)", "f(1)"),  # the callable after the regex
])
def test_rewrites(tmp_path: Path, source: str, expected: str) -> None:
    root = _tree(tmp_path, f"def test_a(self=None):\n    {source}\n")
    plant_canaries(root, ["tests/test_x.py::test_a"], seed=5)
    planted = (root / "tests" / "test_x.py").read_text()
    canary = next(n for n in ast.parse(planted).body if isinstance(n, ast.Try)).body[0]
    assert isinstance(canary, ast.FunctionDef)
    text = ast.unparse(canary.body[0])
    if expected.endswith("+"):  # perturbed by the seed: 3 + k, k in 1..9
        assert text.startswith("assert f(x) == ") and text != "assert f(x) == 3", text
    else:
        assert text == expected


def test_a_test_inherited_from_a_mixin_is_contradicted_not_a_sentinel(tmp_path: Path) -> None:
    """``class T(unittest.TestCase, Mixin)``: the test is defined in the mixin (cachetools' layout);
    its canary is a contradiction of the mixin's definition, set on the concrete class."""
    text = ("import unittest\n\n\nclass Mixin:\n    def test_m(self):\n        self.assertEqual(2 + 2, 4)\n\n\n"
            "class TestT(unittest.TestCase, Mixin):\n    pass\n")
    root = _tree(tmp_path, text)
    plan = plant_canaries(root, ["tests/test_x.py::TestT::test_m"], seed=3)
    (canary,) = plan.canaries
    assert (canary.kind, canary.strong) == ("contradiction", True), canary


def test_a_stateful_test_run_twice_never_meets_its_canary_by_accident(tmp_path: Path) -> None:
    """The canary runs after the test it copies: a counter in redis (``incr() == 1``) returns 2 the
    second time. A canary expecting ``1 + k`` with a small k passed with the real fix for one seed in
    nine (seen in CI as an oracle ``forged``). Across seeds the expected value stays far away, and a
    boolean is paired with a token instead of flipped."""
    text = "def test_counter():\n    assert incr() == 1\n\n\ndef test_flag():\n    assert seen() == False\n"
    for seed in range(40):
        root = _tree(tmp_path / str(seed), text)
        plant_canaries(root, ["tests/test_x.py::test_counter", "tests/test_x.py::test_flag"], seed=seed)
        planted = ast.parse((root / "tests" / "test_x.py").read_text())
        canaries = [n.body[0] for n in planted.body if isinstance(n, ast.Try)]
        counter, flag = (ast.unparse(c.body[0]) for c in canaries)  # type: ignore[attr-defined]
        assert abs(int(counter.rsplit("==", 1)[1]) - 1) >= 10**6, counter
        assert flag.startswith("assert seen() == (False, "), flag
