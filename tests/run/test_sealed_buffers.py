"""gatk36: a real fix whose value equals the literal by a builtin protocol the seal's conversion did not mirror
(contracts §7 "Sealed sites").

``memoryview`` is a ``Sequence`` (``collections.abc`` registers it), so the seal converted it, by its own protocol,
to the *list* of its items, marked loose: ``[172, 2]``. But a ``memoryview`` is equal to a ``bytes`` object of the
same items (``memoryview(b"\\xac\\x02") == b"\\xac\\x02"`` holds), never to a list. A real fix returning the buffer
it filled (zero-copy, where the commit's fix returns ``bytes``) passed every run where the expected value is
visible and failed the sealed one: ``tests_failed`` ("a value unequal to the expected one, converted by its own
protocol"). Now a one-dimensional ``memoryview`` whose items are the ints of bytes converts to those ``bytes``
exactly, which compare with any literal as the view does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.run.sealed_grading import SEALED_OUTCOMES
from pytest_homefield.sandbox.snapshot import copy_tree

VARINT_SOURCE = "src/varints/__init__.py"
VARINT_TEST = "tests/test_varints.py"
VARINT_PARENT = "def encode(n):\n    return bytes([n & 0xFF])\n"
VARINT_FIXED = ("def encode(n):\n    out = bytearray()\n    while n > 0x7F:\n"
                "        out.append(n & 0x7F | 0x80)\n        n >>= 7\n    out.append(n)\n    return bytes(out)\n")
#: Another real fix: the same encoding, the buffer it filled returned as a view (no copy).
VARINT_VIEW_FIX = VARINT_FIXED.replace("    return bytes(out)\n", "    return memoryview(out)\n")
VARINT_TESTS = "from varints import encode\n\n\ndef test_two_bytes():\n    assert encode(300) == b\"\\xac\\x02\"\n"


@pytest.mark.slow
def test_a_real_fix_returning_a_memoryview_is_solved(tmp_path: Path) -> None:
    """``assert encode(300) == b"\\xac\\x02"`` is sealed (the commit's fix returns ``bytes``); another real fix
    returning a ``memoryview`` of the same bytes is ``solved``, its seal the exact ``bytes``. Before: its seal was
    the loose list ``~[172, 2]``, unequal to the literal: ``tests_failed`` (``solved`` with ``sealed=False``)."""
    b = build_fix_task(tmp_path / "varints", name="varints", source=VARINT_SOURCE, parent=VARINT_PARENT,
                       fixed=VARINT_FIXED, test=VARINT_TEST, tests=VARINT_TESTS, first="Add encode()",
                       message="encode(): varints past one byte", fail_to_pass=[f"{VARINT_TEST}::test_two_bytes"],
                       pass_to_pass=[])
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / VARINT_SOURCE).write_text(VARINT_VIEW_FIX, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              canaries=False)
    assert g.outcome == "solved", g
    events = [json.loads(line) for line in (tmp_path / "out" / SEALED_OUTCOMES).read_text().splitlines()]
    assert [s[1] for e in events for s in e.get("seals", [])] == ["b'\\xac\\x02'"], events
