"""A task record for reports built from hand-written result records (tests/report): nothing in it is read but
its id, subject and the FAIL_TO_PASS id."""

from __future__ import annotations

from pytest_homefield.records import Task


def plain_task(tid: str) -> Task:
    """A task ``tid`` of one source file and one FAIL_TO_PASS id, ``subject`` ``task <tid>``."""
    return Task(id=tid, commit=tid * 3, parent="0" * 40, committed_at="2025-01-01T00:00:00+00:00",
                authored_at="2025-01-01T00:00:00+00:00", mode="commit", subject=f"task {tid}", message="m",
                prompt="p", source_files=["src/m.py"], test_files=["tests/test_m.py"], test_patch="", gold_patch="",
                FAIL_TO_PASS=["tests/test_m.py::test_value"], PASS_TO_PASS=[])
