"""Fixtures shared by the sandbox tests of sealed sites (``test_seal_*.py``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from pytest_homefield.sandbox.testrun import REPORTER_DIR


@pytest.fixture
def seal_module() -> Iterator[ModuleType]:
    """The seal call's module (``_reporter/homefield_seal.py``) as a test process imports it, its pending reports
    taken first (``take()``); ``REPORTER_DIR`` leaves ``sys.path`` after."""
    sys.path.insert(0, str(REPORTER_DIR))
    try:
        mod = importlib.import_module("homefield_seal")
        mod.take()
        yield mod
    finally:
        sys.path.remove(str(REPORTER_DIR))
