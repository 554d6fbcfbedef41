"""The signed ordinal task (multi35, issue 30): the ordinal task (``helpers.ordinal_task``) whose test reads its
``expected`` column twice, python-humanize's shape: ``assert ordinal(n) == expected`` and then the negated input
``assert ordinal(-n) == "-" + expected``. The commit adds three rows to the column; the three new rows are
FAIL_TO_PASS and sealable at both statements (contracts §7 "Sealed columns"). The fixture of
tests/run/test_sealed_columns_multi.py."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

__all__ = ["SOURCE", "TEST", "PARENT", "FIXED", "OTHER_FIX", "HALF_FIX", "TESTS_BEFORE", "TESTS", "FID", "F2P",
           "P2P", "ROWS", "build_signed_ordinals"]

SOURCE = "src/ordinals/__init__.py"
TEST = "tests/test_ordinals.py"
PARENT = ("def ordinal(n):\n"
          "    suffix = {1: 'st', 2: 'nd', 3: 'rd'}.get(abs(n) % 10, 'th')\n"
          "    return f'{n}{suffix}'\n")
FIXED = ("def ordinal(n):\n"
         "    if abs(n) % 100 in (11, 12, 13):\n"
         "        return f'{n}th'\n"
         "    suffix = {1: 'st', 2: 'nd', 3: 'rd'}.get(abs(n) % 10, 'th')\n"
         "    return f'{n}{suffix}'\n")
#: A real fix other than the commit's.
OTHER_FIX = ("def ordinal(n):\n"
             "    m = abs(n)\n"
             "    teen = 10 < m % 100 < 20\n"
             "    return str(n) + ('th' if teen else ['th', 'st', 'nd', 'rd', *['th'] * 6][m % 10])\n")
#: Right for positive numbers only (the teens of a negative one keep the parent's suffix): not a fix.
HALF_FIX = ("def ordinal(n):\n"
            "    if n % 100 in (11, 12, 13):\n"
            "        return f'{n}th'\n"
            "    suffix = {1: 'st', 2: 'nd', 3: 'rd'}.get(abs(n) % 10, 'th')\n"
            "    return f'{n}{suffix}'\n")
TESTS_BEFORE = ("import pytest\n\nfrom ordinals import ordinal\n\n\n"
                "@pytest.mark.parametrize(\"n, expected\", [\n"
                "    (1, \"1st\"),\n    (2, \"2nd\"),\n    (3, \"3rd\"),\n])\n"
                "def test_ordinal(n, expected):\n"
                "    assert ordinal(n) == expected\n"
                "    assert ordinal(-n) == \"-\" + expected\n")
TESTS = TESTS_BEFORE.replace("    (3, \"3rd\"),\n", "    (3, \"3rd\"),\n    (11, \"11th\"),\n    (12, \"12th\"),\n"
                             "    (113, \"113th\"),\n")
FID = f"{TEST}::test_ordinal"
F2P = [f"{FID}[11-11th]", f"{FID}[12-12th]", f"{FID}[113-113th]"]
P2P = [f"{FID}[1-1st]", f"{FID}[2-2nd]", f"{FID}[3-3rd]"]
#: The keys of its sealed rows: each new row at both statements (function id @ the statement's line # the row).
ROWS = [f"{FID}@{line}#{k}" for line in (15, 16) for k in (3, 4, 5)]


def build_signed_ordinals(dest: Path) -> FixTask:
    """The signed ordinal repository and task in ``dest`` (:func:`~helpers.fix_task.build_fix_task`)."""
    return build_fix_task(dest, name="ordinals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="Add ordinal()", message="ordinal(): 11th, 12th and 13th, not 11st",
                          fail_to_pass=F2P, pass_to_pass=P2P, tests_before=TESTS_BEFORE)
