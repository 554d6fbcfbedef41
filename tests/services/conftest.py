"""The redis fixture repository (:mod:`helpers.redis_repo`), mined once per test session (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.e2e_repo import homefield
from helpers.redis_repo import REDIS_SKIP, build, redis_available
from helpers.shared_repo import built_once

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe


@pytest.fixture(scope="session")
def redis_mined(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The redis repository with ``services: redis``, mined at ``-n 2`` in the default sandbox; shared by
    xdist workers. Skips where ``redis-server`` is not installed."""
    if not redis_available():
        pytest.skip(REDIS_SKIP)

    def make(repo: Path) -> None:
        build(repo)
        proc = homefield(repo, "mine", "--stability-runs", "2", "-n", "2")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Mined 2 tasks from 2 candidates" in proc.stdout, proc.stdout

    return built_once(tmp_path_factory, testrun_uid, "redis-mined", make)


@pytest.fixture
def needs_redis() -> None:
    """Skip with the reason where ``redis-server``/``redis-cli`` are not installed."""
    if not redis_available():
        pytest.skip(REDIS_SKIP)


@pytest.fixture
def needs_bwrap() -> None:
    """Skip with the reason where bubblewrap does not work here."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
