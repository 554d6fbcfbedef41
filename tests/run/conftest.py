"""Fixtures shared by the run tests: the small task repository of :mod:`attack_repo`, built once per
module (a module may change its files or its snapshots), its task, and a snapshot cache per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.attack_repo import Fixture, build, task_for

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import SnapshotCache


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """The task repository, one per test module."""
    return build(tmp_path_factory.mktemp("run") / "repo")


@pytest.fixture(scope="module")
def task(fx: Fixture) -> Task:
    """The repository's task (its test command blocks the unused plugins)."""
    return task_for(fx)


@pytest.fixture
def cache(fx: Fixture) -> Iterator[SnapshotCache]:
    """A snapshot cache of the repository, closed after the test."""
    c = SnapshotCache(repo=fx.root)
    yield c
    c.close()
