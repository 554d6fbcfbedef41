"""Shared fixtures. ``pytester`` is enabled in pyproject's addopts (``-p pytester``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.e2e_repo import build, homefield
from helpers.shared_repo import built_once


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in ``clients`` tests are deselected unless ``-m`` names them: deselected items run no fixture,
    so a default run installs no third-party client."""
    if "clients" in (config.getoption("markexpr") or ""):
        return
    keep = [item for item in items if item.get_closest_marker("clients") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("clients")])
        items[:] = keep


@pytest.fixture(autouse=True)
def _clean_xdist_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not think they are xdist workers of the outer suite."""
    for key in list(os.environ):
        if key.startswith(("PYTEST_XDIST_", "PYTEST_ADDOPTS", "HOMEFIELD_")) and key != "HOMEFIELD_CLAUDE_BIN":
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def mined(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The fixture repository (:mod:`e2e_repo`), mined once per test session, shared by xdist workers."""

    def make(repo: Path) -> None:
        build(repo)
        proc = homefield(repo, "mine", "--stability-runs", "2", "-n", "2")
        assert proc.returncode == 0, proc.stdout + proc.stderr

    return built_once(tmp_path_factory, testrun_uid, "e2e-mined", make)
