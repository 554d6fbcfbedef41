"""canary_teardown._module_tests: a test that overrides a base's test of the same name (rev67, seen in review)."""

from __future__ import annotations

import ast

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


def test_an_overriding_test_is_not_among_its_own_others() -> None:
    """rev67: ``node`` was left out by identity before the dedup by name, so ``Cls::test_x``, its own id, came back
    from ``Base``'s ``test_x`` and stood among the unit's other tests (blinded in its own twin's run): measured
    ``('Base::test_x', 'Cls::test_y', 'Cls::test_x')``."""
    tree = ast.parse(SOURCE)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Cls")
    node = next(m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "test_x")
    others = _module_tests(tree, cls, node)
    assert others is not None
    assert "Cls::test_x" not in others
    assert set(others) == {"Base::test_x", "Cls::test_y"}
