"""Twins shaped like their originals (issue 30, attacker8's F1, sandbox/canary_shapes.py): a test with no
assertion gets a twin expecting an exception of its last call; what is left a sentinel keeps the
original's decorators, signature and body. Plain checks of the plan (no test process); the twins'
functions are executed in-process where it takes no fixture."""

from __future__ import annotations

import ast
import unittest
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_sites import OTHER_EXCEPTIONS
from pytest_homefield.sandbox.twin_runs import plan_twins

SRC = '''import unittest

import pytest


def helper(x):
    return x


def test_runs():
    """Only calls: no assertion."""
    value = helper(2)
    helper(value)


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)])
def test_sum(a, b, tmp_path):
    assert helper(a) + b == a + b


class TestOld(unittest.TestCase):
    def test_method(self):
        helper(3)

    def test_checked(self):
        self.assertEqual(helper(5), 5)
'''


def _plan(tmp_path: Path, f2p: list[str], seed: int = 1, forced: tuple[str, ...] = ()) -> tuple[object, dict[str, str]]:
    (tmp_path / "test_s.py").write_text(SRC)
    plan = plan_twins(tmp_path, f2p, seed=seed, sentinel_for=forced)
    twin_text = {}
    for source, members in plan.placement.items():
        twin_text[source] = plan.runs[members.index(1)]["test_s.py"].decode()
    return plan, twin_text


def _func(text: str, *names: str) -> ast.FunctionDef:
    body: list[ast.stmt] = ast.parse(text).body
    for name in names:
        node = next(n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name)
        body = node.body
    assert isinstance(node, ast.FunctionDef)
    return node


def test_a_test_with_no_assertion_gets_a_twin_expecting_an_exception_of_its_last_call(tmp_path: Path) -> None:
    """On main it got ``def test_runs(): raise AssertionError(…)`` (told by its shape)."""
    plan, twins = _plan(tmp_path, ["test_s.py::test_runs", "test_s.py::TestOld::test_method"])
    kinds = {c.source: (c.kind, c.how, c.strong, c.excusable) for c in plan.canaries}  # type: ignore[attr-defined]
    for source in ("test_s.py::test_runs", "test_s.py::TestOld::test_method"):
        kind, how, strong, excusable = kinds[source]
        assert kind == "contradiction" and how.startswith("no assertion") and not strong and excusable, kinds
    twin = _func(twins["test_s.py::test_runs"], "test_runs")
    original = _func(SRC, "test_runs")
    assert ast.unparse(twin.body[:2]) == ast.unparse(original.body[:2])  # the docstring and the first call
    wrapped = twin.body[2]
    assert isinstance(wrapped, ast.With) and ast.unparse(wrapped.body) == "helper(value)", ast.unparse(twin)
    call = wrapped.items[0].context_expr
    assert isinstance(call, ast.Call) and ast.unparse(call.func) == "pytest.raises"
    assert ast.unparse(call.args[0]) in OTHER_EXCEPTIONS
    ns: dict[str, object] = {}
    exec(compile(twins["test_s.py::test_runs"], "test_s.py", "exec"), ns)  # noqa: S102 - the twin's own text
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):  # the real code raises nothing: it fails
        ns["test_runs"]()  # type: ignore[operator]
    method = _func(twins["test_s.py::TestOld::test_method"], "TestOld", "test_method")
    assert ast.unparse(method.body[0]).startswith("with self.assertRaises("), ast.unparse(method)
    ns = {}
    exec(compile(twins["test_s.py::TestOld::test_method"], "test_s.py", "exec"), ns)  # noqa: S102
    result = unittest.TestResult()
    ns["TestOld"]("test_method").run(result)  # type: ignore[operator]
    assert len(result.failures) == 1 and "not raised" in result.failures[0][1]


def test_a_sentinel_keeps_the_originals_decorators_signature_and_body(tmp_path: Path) -> None:
    """A function the reference fix failed with its twins is a sentinel; on main a lone ``raise`` in
    place of the definition (no decorator, no fixture: other ids, told by its shape)."""
    f2p = ["test_s.py::test_sum[1-2]", "test_s.py::test_sum[3-4]", "test_s.py::TestOld::test_checked"]
    plan, twins = _plan(tmp_path, f2p, forced=("test_s.py::test_sum", "test_s.py::TestOld::test_checked"))
    assert {c.kind for c in plan.canaries} == {"sentinel"}  # type: ignore[attr-defined]
    original, twin = _func(SRC, "test_sum"), _func(twins["test_s.py::test_sum"], "test_sum")
    assert [ast.unparse(d) for d in twin.decorator_list] == [ast.unparse(d) for d in original.decorator_list]
    assert ast.unparse(twin.args) == ast.unparse(original.args) == "a, b, tmp_path"
    assert ast.unparse(twin.body[:-1]) == ast.unparse(original.body) and len(twin.body) == 2
    last = twin.body[-1]
    assert isinstance(last, ast.Assert) and isinstance(last.test, ast.Compare), ast.unparse(twin)
    assert ast.literal_eval(last.test.left) != ast.literal_eval(last.test.comparators[0])
    ns: dict[str, object] = {}
    exec(compile(twins["test_s.py::test_sum"], "test_s.py", "exec"), ns)  # noqa: S102
    with pytest.raises(AssertionError):
        ns["test_sum"](1, 2, tmp_path)  # type: ignore[operator]
    method = _func(twins["test_s.py::TestOld::test_checked"], "TestOld", "test_checked")
    assert ast.unparse(method.body[0]) == "self.assertEqual(helper(5), 5)"
    assert ast.unparse(method.body[-1]).startswith("self.assertEqual("), ast.unparse(method)


SHARED = '''import pytest


class Base:
    def test_x(self):
        assert len("abc") == 3


class TestA(Base):
    pass


class TestB(Base):
    pass


class Mixin:
    def test_y(self):
        assert len("ab") == 2


class TestOnly(Mixin):
    pass


class TestOwn:
    def test_z(self):
        assert len("a") == 1
'''


def test_a_definition_other_test_ids_run_gets_no_twin(tmp_path: Path) -> None:
    """A twin of a base class's test changed every class that inherits it: on main ``TestA::test_x`` got a
    twin in ``Base``, so ``TestB::test_x`` (another FAIL_TO_PASS id, or a PASS_TO_PASS one) failed in the
    twin's run and a real fix was ``tests_failed`` (itsdangerous: 4 of 16 tasks). Such a definition gets an
    appended sentinel; a mixin only one class runs keeps its twin, and so does a class another test file
    imports (only the task's own file is read: an agent could add importers to turn twins into sentinels)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(SHARED)
    f2p = ["tests/test_a.py::TestA::test_x", "tests/test_a.py::TestOnly::test_y", "tests/test_a.py::TestOwn::test_z"]
    plan = plan_twins(tmp_path, f2p, seed=2)
    hows = {c.source: c.how for c in plan.canaries}
    assert hows["tests/test_a.py::TestA::test_x"] == "sentinel: other tests run the same definition", hows
    assert sorted(plan.placement) == ["tests/test_a.py::TestOnly::test_y", "tests/test_a.py::TestOwn::test_z"]
    (tmp_path / "tests" / "test_b.py").write_text("from tests.test_a import TestOwn\n\n\nclass TestMore(TestOwn):\n"
                                                  "    pass\n")
    plan = plan_twins(tmp_path, f2p, seed=2)
    assert sorted(plan.placement) == ["tests/test_a.py::TestOnly::test_y", "tests/test_a.py::TestOwn::test_z"]
