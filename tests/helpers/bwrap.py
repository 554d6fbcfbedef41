"""Whether the real bubblewrap works on this machine, for tests that run both with and without it; a
stand-in agent for the sandbox choice."""

from __future__ import annotations

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe


def bwrap_works() -> bool:
    """True when :func:`~pytest_homefield.sandbox.bwrap.probe` finds a working bubblewrap."""
    try:
        probe()
    except BwrapUnavailable:
        return False
    return True


class ProcessAgent:
    """An agent that starts a program (``process``) and runs commands when ``shell`` is true: what the
    sandbox choice (:class:`~pytest_homefield.sandbox.modes.SandboxChoice`) asks of an agent."""

    name = "a"
    process = True

    def __init__(self, shell: bool) -> None:
        self.shell = shell

    def runs_commands(self, allow_shell: bool) -> bool:
        return self.shell
