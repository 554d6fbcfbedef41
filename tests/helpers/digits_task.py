"""atk29's column fixture (``tests/run/test_column_flow.py``): ``digits(n)`` gave its digits least significant
first; the commit fixes the order and adds a parametrized test whose ``expected`` column also reaches a statement
past the one where the parent stops (``size = len(expected)``). The parent check tells every value draw, so the
function's one twin is the comparison at the stop contradicted (near31, ``sandbox/canary_order.py``)."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

__all__ = ["SOURCE", "TEST", "PARENT", "FIXED", "OTHER_FIX", "TESTS", "FID", "F2P", "P2P", "build_digits_task"]

SOURCE = "src/digits/__init__.py"
TEST = "tests/test_digits.py"
PARENT = "def digits(n):\n    return [int(c) for c in reversed(str(n))]\n"
FIXED = "def digits(n):\n    return [int(c) for c in str(n)]\n"
#: a real fix that is not the reference's bytes (the reference fix gets no canaries at all)
OTHER_FIX = "def digits(n):\n    return list(map(int, str(n)))\n"
TESTS = ("import pytest\n\nfrom digits import digits\n\n\n"
         "@pytest.mark.parametrize(\"n, expected\", [(12, [1, 2]), (345, [3, 4, 5]), (6789, [6, 7, 8, 9])])\n"
         "def test_digits_in_order(n, expected):\n    got = digits(n)\n    size = len(expected)\n"
         "    assert got == expected\n    assert len(got) == size\n\n\n"
         "def test_one_digit():\n    assert digits(7) == [7]\n")
FID = f"{TEST}::test_digits_in_order"
F2P = [f"{FID}[{i}]" for i in ("12-expected0", "345-expected1", "6789-expected2")]
P2P = [f"{TEST}::test_one_digit"]


def build_digits_task(dest: Path) -> FixTask:
    """The fixture's repository, task and parent snapshot under ``dest``."""
    return build_fix_task(dest, name="digits", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="Add digits()", message="digits(): most significant first", fail_to_pass=F2P,
                          pass_to_pass=P2P)
