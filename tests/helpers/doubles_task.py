"""The ``doubles`` package of the rows fixtures (``tests/run/test_added_assertion_rows.py``, add32/grn33;
``tests/run/test_loop_rows.py``, sub33; ``tests/run/test_loop_rows_after.py``, ratk34): its source before and after
a commit that doubles a signed number given as text, the loop fixtures' test text, and the grading of a source
text in its place."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/doubles/__init__.py"
TEST = "tests/test_doubles.py"
#: Digits as text are doubled as numbers already; a sign is not: only the rows with a negative number given as
#: text are red on the parent.
PARENT = ("def double(x):\n"
          "    if isinstance(x, str) and x.isdigit():\n"
          "        x = int(x)\n"
          "    return x * 2\n")
FIXED = "def double(x):\n    return int(x) * 2\n"
#: Another real fix than the commit's (its own text; it doubles a sign given as text too).
OTHER_FIX = "def double(x):\n    if isinstance(x, str):\n        x = int(x.strip())\n    return 2 * x\n"

#: more-itertools' shape (``tests/run/test_loop_rows.py``, ``test_loop_rows_after.py``): the rows a literal list,
#: unpacked by the loop's target, each checked in a subTest; one unittest method, so one test id.
LOOP_TESTS = ("from unittest import TestCase\n\nfrom doubles import double\n\n\n"
              "class DoubleTests(TestCase):\n"
              "    def test_basic(self):\n"
              "        for i, (n, expected) in enumerate(\n"
              "            [\n"
              "                (1, 2),\n"
              "                ('2', 4),\n"
              "                ('-3', -6),\n"
              "                (0, 0),\n"
              "            ]\n"
              "        ):\n"
              "            with self.subTest(i=i):\n"
              "                self.assertEqual(double(n), expected)\n")
LOOP_F2P = ["tests/test_doubles.py::DoubleTests::test_basic"]


def grade_source(b: FixTask, tmp: Path, name: str, source: str) -> str:
    """The outcome of grading ``source`` as :data:`SOURCE` of ``b``'s task, seed 0, in ``tmp``/``name`` (its error
    appended when it is not ``solved``)."""
    work = copy_tree(b.pristine, tmp / name)
    (work / SOURCE).write_text(source, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / f"out-{name}", canary_seed=0,
              run_timeout_s=120)
    return g.outcome + ("" if g.outcome == "solved" else f": {g.error}")
