"""Files read once and passed down (rev58): what a stage read is handed to the next step rather than read and parsed
again. Each test counts the real reads of a real file (the function wrapped, never replaced)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.sandbox import twin_runs
from pytest_homefield.sandbox.twin_runs import plan_twins

TEST = "tests/test_totals.py"
SPIED = ("import pytest\n\nimport totals\n\n\n"
         "@pytest.fixture\n"
         "def spy(monkeypatch):\n"
         "    calls = []\n"
         "    monkeypatch.setattr(totals, 'fetch', lambda: calls.append(1) or 2)\n"
         "    yield calls\n"
         "    assert calls, \"total() never fetched\"\n\n\n"
         "def test_total(spy):\n"
         "    assert totals.total() == 4\n")


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[Any]:
    """``module.name`` wrapped to note each call's first argument (the real function still does the work)."""
    calls: list[Any] = []
    real = getattr(module, name)

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(args[0] if args else None)
        return real(*args, **kw)
    monkeypatch.setattr(module, name, counted)
    return calls


def test_plan_twins_reads_each_test_file_once_with_the_teardown_twins(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With teardown canaries planned, plan_twins read and parsed each test file twice: once for whether a teardown
    twin is in reach (one run more), once to plan it. The same plan, one read."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(SPIED, encoding="utf-8")
    before = plan_twins(tmp_path, [f"{TEST}::test_total"], seed=1, teardown=True)
    reads = _counted(monkeypatch, twin_runs, "read_source")
    plan = plan_twins(tmp_path, [f"{TEST}::test_total"], seed=1, teardown=True)
    assert [Path(f).name for f in reads] == ["test_totals.py"]  # before: twice
    assert len(plan.runs) == 3 and plan.runs == before.runs and plan.to_dict() == before.to_dict()
