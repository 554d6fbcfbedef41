"""Fixtures shared by the run tests: the small task repository of :mod:`attack_repo`, built once per
module (a module may change its files or its snapshots), its task, a snapshot cache per test, and a canary
key for the session's checkouts of it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from helpers.attack_repo import Fixture, build, task_for

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import SnapshotCache
from pytest_homefield.run.canary_key import KEY_BYTES


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


@pytest.fixture(scope="session")
def session_canary_key() -> bytes:
    """A canary key (random, one per test process) for checkouts of the repository whose tests are not about
    the key (:func:`helpers.attack_repo.plant_canary_key`): a task's twins are drawn from a fresh seed in
    every session, and its parent check is made once per process instead of once per checkout."""
    return secrets.token_bytes(KEY_BYTES)
