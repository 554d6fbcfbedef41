"""Whether the real bubblewrap works on this machine, for tests that run both with and without it."""

from __future__ import annotations

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe


def bwrap_works() -> bool:
    """True when :func:`~pytest_homefield.sandbox.bwrap.probe` finds a working bubblewrap."""
    try:
        probe()
    except BwrapUnavailable:
        return False
    return True
