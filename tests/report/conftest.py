"""Fixtures of the report tests: the checked-in run folders of ``tests/data/report``, read from a copy
(a report writes its similarity cache, ``similarity.json``, into each run folder it reads; the checkout
is never written to)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_homefield.records import Task, load_tasks

SOURCE_DATA = Path(__file__).parent.parent / "data" / "report"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of ``tests/data/report`` for the requesting module."""
    return Path(shutil.copytree(SOURCE_DATA, tmp_path_factory.mktemp("report-data") / "report"))


@pytest.fixture(scope="module")
def tasks(data: Path) -> list[Task]:
    return load_tasks(data / "tasks.jsonl")
