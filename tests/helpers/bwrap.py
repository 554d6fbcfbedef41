"""Whether the real bubblewrap works on this machine, for tests that run both with and without it; a
stand-in agent for the sandbox choice."""

from __future__ import annotations

import pytest

from pytest_homefield.sandbox import proccap
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe


def bwrap_works() -> bool:
    """True when :func:`~pytest_homefield.sandbox.bwrap.probe` finds a working bubblewrap."""
    try:
        probe()
    except BwrapUnavailable:
        return False
    return True


def skip_without_memory_cgroup_bwrap() -> None:
    """Skip the calling test unless test runs get a memory cgroup in bubblewrap here (root with cgroup v1
    memory, or a delegated v2 subtree), saying which is missing."""
    if proccap.memory_root() is None:
        pytest.skip("needs a writable memory cgroup (root with cgroup v1 memory, or a delegated v2 subtree)")
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


class ProcessAgent:
    """An agent that starts a program (``process``) and runs commands when ``shell`` is true: what the
    sandbox choice (:class:`~pytest_homefield.sandbox.modes.SandboxChoice`) asks of an agent."""

    name = "a"
    process = True

    def __init__(self, shell: bool) -> None:
        self.shell = shell

    def runs_commands(self, allow_shell: bool) -> bool:
        return self.shell
