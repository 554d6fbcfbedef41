"""canary_teardown._module_tests: a test that overrides a base's test of the same name (rev67, seen in review)."""

from __future__ import annotations

import ast

import pytest

from pytest_homefield.sandbox.canary_teardown import _module_tests

SOURCE = '''
import unittest


class Base(unittest.TestCase):
    def test_x(self):
        pass


class Cls(Base):
    def test_x(self):
        pass

    def test_y(self):
        pass
'''


@pytest.mark.xfail(strict=True, reason="rev67: _module_tests leaves out node by identity before its dedup by name, so "
                   "Cls::test_x, node's own id, comes back from Base's test_x and stands among the unit's other "
                   "tests (measured: ('Base::test_x', 'Cls::test_y', 'Cls::test_x'))")
def test_an_overriding_test_is_not_among_its_own_others() -> None:
    tree = ast.parse(SOURCE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Cls")
    node = next(m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "test_x")
    others = _module_tests(tree, cls, node)
    assert others is not None
    assert "Cls::test_x" not in others
    assert set(others) == {"Base::test_x", "Cls::test_y"}
