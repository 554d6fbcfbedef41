"""Landlock in the tests: the backends a test runs with and without it (the no-sandbox control shows that
an attack works where nothing confines it), and the kernel's ABI, or a skip where Landlock does not work."""

from __future__ import annotations

import pytest

from pytest_homefield.sandbox import landlock
from pytest_homefield.sandbox.backends import LandlockBackend, NoSandbox, SandboxBackend
from pytest_homefield.sandbox.landlock import LandlockUnavailable

SANDBOXES = [pytest.param("landlock", id="landlock"), pytest.param("none", id="control-no-sandbox")]


def landlock_abi() -> int:
    """The kernel's Landlock ABI (:func:`~pytest_homefield.sandbox.landlock.probe`); skips the test where
    Landlock does not work, with the probe's reason."""
    try:
        return landlock.probe()
    except LandlockUnavailable as exc:
        pytest.skip(str(exc))


def backend(kind: str, abi: int) -> SandboxBackend:
    """The backend ``kind`` names in :data:`SANDBOXES`: Landlock at ``abi``, or none."""
    return LandlockBackend(abi) if kind == "landlock" else NoSandbox()
