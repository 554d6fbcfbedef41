"""Shared fixtures. ``pytester`` is enabled in pyproject's addopts (``-p pytester``)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _clean_xdist_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not think they are xdist workers of the outer suite."""
    for key in list(os.environ):
        if key.startswith(("PYTEST_XDIST_", "PYTEST_ADDOPTS", "HOMEFIELD_")):
            monkeypatch.delenv(key, raising=False)
