"""The ablation fixture repository (tests/helpers/ablate_repo.py), built once per test session and
shared by the end-to-end and the shards tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.ablate_repo import build, write_tasks
from helpers.shared_repo import built_once


@pytest.fixture(scope="session")
def ablate_repo(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The ablation fixture repository with its tasks written, once per test session."""

    def make(repo: Path) -> None:
        build(repo)
        write_tasks(repo)

    return built_once(tmp_path_factory, testrun_uid, "ablate-repo", make)
