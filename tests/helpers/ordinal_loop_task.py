"""The ordinal loop task (loop36, issue 30): the ordinal task's fix (tests/helpers/ordinal_task.py) with its test in
more-itertools' shape, a unittest method checking a literal table row by row in a ``for`` loop under
``self.subTest``. The method is new in the commit (its one id is FAIL_TO_PASS); its three rows' values are in no
other file nor the parent's: all three sealable (contracts §7 "Sealed columns"), and the plain site after the loop
(``121st``) beside them; a second method assigns its expected value to a name first (``expected = '1013th'``, a
table of one row, more-itertools' other common shape). The fixture of
tests/run/test_sealed_loops.py."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task
from helpers.ordinal_task import FIXED, OTHER_FIX, PARENT, SOURCE

__all__ = ["SOURCE", "TEST", "PARENT", "FIXED", "OTHER_FIX", "TESTS", "FID", "FID2", "F2P", "P2P", "ROWS",
           "build_loop_task"]

TEST = "tests/test_ordinal_loop.py"
TESTS_BEFORE = ("import unittest\n\nfrom ordinals import ordinal\n\n\n"
                "class OrdinalTests(unittest.TestCase):\n"
                "    def test_small(self):\n"
                "        self.assertEqual(ordinal(2), '2nd')\n")
TESTS = TESTS_BEFORE + ("\n"
                        "    def test_teens(self):\n"
                        "        for n, expected in [\n"
                        "            (11, '11th'),\n"
                        "            (12, '12th'),\n"
                        "            (113, '113th'),\n"
                        "        ]:\n"
                        "            with self.subTest(n=n):\n"
                        "                self.assertEqual(ordinal(n), expected)\n"
                        "        self.assertEqual(ordinal(121), '121st')\n"
                        "\n"
                        "    def test_thousands(self):\n"
                        "        expected = '1013th'\n"
                        "        self.assertEqual(ordinal(1013), expected)\n")
FID = f"{TEST}::OrdinalTests::test_teens"
#: A method checking a value assigned to a name first (``expected = '1013th'``): a table of one row.
FID2 = f"{TEST}::OrdinalTests::test_thousands"
F2P = [FID, FID2]
P2P = [f"{TEST}::OrdinalTests::test_small"]
#: The keys of its sealed rows (function id @ the check's line # the row's index) and of the plain site beside them.
ROWS = [f"{FID}@17#{k}" for k in (0, 1, 2)] + [f"{FID}@18", f"{FID2}@22#0"]


def build_loop_task(dest: Path) -> FixTask:
    """The ordinal loop repository and task in ``dest`` (:func:`~helpers.fix_task.build_fix_task`)."""
    return build_fix_task(dest, name="ordinals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="Add ordinal()", message="ordinal(): 11th, 12th and 13th, not 11st",
                          fail_to_pass=F2P, pass_to_pass=P2P, tests_before=TESTS_BEFORE)
