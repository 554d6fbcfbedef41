"""The units task (cmp35): a real repository whose fix makes ``parse_width`` refuse a width below 1 with a message,
``banner`` welcome aboard and ``ratio`` divide truly, with one FAIL_TO_PASS function per kind and form of sealed
site other than ``==`` (contracts §7 "Sealed sites", "Other kinds"): ``pytest.raises(match=)``,
``assertRaisesRegex``, ``in``, ``assertIn``, ``pytest.approx``. The fixture of tests/run/test_sealed_kinds.py and
tests/mine/test_redgreen.py."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

__all__ = ["SOURCE", "TEST", "FUNCS", "KIND_OF", "source", "PARENT", "FIXED", "OTHER_FIX", "TESTS", "F2P", "SITES",
           "build_units"]

SOURCE = "src/units/__init__.py"
TEST = "tests/test_units.py"
#: each function of the package: the parent's, the commit's fix, another real fix
FUNCS = {
    "parse_width": ("def parse_width(text):\n    return int(text)\n",
                    "def parse_width(text):\n    n = int(text)\n    if n < 1:\n"
                    "        raise ValueError(f\"width must be at least 1, got {n}\")\n    return n\n",
                    "def parse_width(text):\n    n = int(text.strip())\n    if n <= 0:\n"
                    "        raise ValueError(\"width must be at least 1, got %d\" % n)\n    return n\n"),
    "banner": ("def banner(name):\n    return \"hello \" + name\n",
               "def banner(name):\n    return f\"*** welcome aboard, {name} ***\"\n",
               "def banner(name):\n    return \"*** welcome aboard, \" + name + \" ***\"\n"),
    "ratio": ("def ratio(a, b):\n    return a // b\n",
              "def ratio(a, b):\n    return a / b\n",
              "def ratio(a, b):\n    return float(a) / b\n"),
}
KIND_OF = {"parse_width": "match", "banner": "in", "ratio": "approx"}


def source(which: int, parent: str = "") -> str:
    """The package: every function's version ``which`` (0 parent, 1 the commit's fix, 2 another fix), ``parent``'s
    the parent's."""
    return "\n\n".join(v[0] if name == parent else v[which] for name, v in FUNCS.items())


PARENT, FIXED, OTHER_FIX = source(0), source(1), source(2)
TESTS = '''import unittest

import pytest

from units import banner, parse_width, ratio


def test_width_must_be_positive():
    with pytest.raises(ValueError, match=r"must be at least 1, got \\d+"):
        parse_width("0")


def test_banner_welcomes():
    assert "welcome aboard" in banner("ada")


def test_ratio_is_true_division():
    assert ratio(1, 3) == pytest.approx(0.3333, rel=1e-3)


def test_plain():
    assert parse_width("5") == 5


class TestUnits(unittest.TestCase):
    def test_negative_width(self):
        with self.assertRaisesRegex(ValueError, r"at least 1, got -\\d"):
            parse_width("-2")

    def test_banner_names(self):
        self.assertIn("aboard, grace", banner("grace"))
'''
F2P = [f"{TEST}::{f}" for f in ("test_width_must_be_positive", "test_banner_welcomes", "test_ratio_is_true_division",
                                "TestUnits::test_negative_width", "TestUnits::test_banner_names")]
#: The sealed sites, by kind.
SITES = {"match": [f"{F2P[0]}@9", f"{F2P[3]}@27"], "in": [f"{F2P[1]}@14", f"{F2P[4]}@31"], "approx": [f"{F2P[2]}@18"]}


def build_units(dest: Path) -> FixTask:
    """The units repository and task in ``dest`` (:func:`~helpers.fix_task.build_fix_task`)."""
    return build_fix_task(dest, name="units", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="Add parse_width(), banner() and ratio()",
                          message="Refuse widths below 1, welcome aboard, divide truly", fail_to_pass=F2P,
                          pass_to_pass=[f"{TEST}::test_plain"])
