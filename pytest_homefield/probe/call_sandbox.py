"""The sandbox of the probe's calls (docs/contracts.md §9): an agent that starts a program (``cmd:``,
the recipes, claude) answers the probe question in the same sandbox as an attempt of ``homefield run``.

:class:`ProbeSandboxes` is the choice of one probe session (``--sandbox``, ``--sandbox-network``,
``--allow-host``, the ``pytest_homefield_sandbox`` hook, the write limits), made once; it is the
:class:`~pytest_homefield.agents.base.CallSandbox` the session hands such an agent's ``complete()``.
Each call gets what an attempt gets (:func:`pytest_homefield.run.agent_sandbox.agent_sandbox`): bubblewrap,
Landlock where bubblewrap does not work (or the hook), with its cwd, ``TMPDIR`` and a fresh ``HOME``
writable, the client's configuration copied in, the network allowlist behind the filtering proxy,
``--max-output-mb`` / ``--max-file-mb`` / ``--max-workspace-mb``. :meth:`ProbeSandboxes.check` refuses,
before any call, an agent that must be confined where the sandbox it needs does not work, as a run
does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import CallBox
from pytest_homefield.errors import RunError
from pytest_homefield.run.agent_sandbox import agent_sandbox
from pytest_homefield.sandbox.backends import Sandboxes, SandboxHook
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.limits import AgentFolders, Baseline, DiskWatch, WriteLimits
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.settings import Settings

__all__ = ["ProbeSandboxes"]


class ProbeSandboxes:
    """The sandbox of every call of one probe session (see the module docstring). ``hook`` is the
    ``pytest_homefield_sandbox`` hook (``None`` when nothing implements it). Bubblewrap (then Landlock)
    is probed on the first call. A probe call is text-only: agents are judged as edit-only
    (``--allow-shell`` is a run's flag), so ``cmd:`` and the recipes, which always run commands, need
    bubblewrap or Landlock ABI ≥ 6 under ``auto`` and claude does not."""

    def __init__(self, settings: Settings, hook: SandboxHook | None = None) -> None:
        self.choice = SandboxChoice(settings.sandbox, settings.sandbox_network, tuple(settings.allow_hosts))
        self.hook = hook
        self.limits = WriteLimits.from_mb(settings.max_output_mb, settings.max_file_mb, settings.max_workspace_mb)
        self._sandboxes: Sandboxes | None = None

    def check(self, agents: Sequence[Any]) -> None:
        """Raise :class:`RunError` (one line) when one of ``agents`` must be confined and the sandbox it
        needs does not work here (with a hook: never, the hook wraps them)."""
        if self.hook is not None:
            return
        try:
            for agent in agents:
                self.choice.for_agent(agent, False)
        except BwrapUnavailable as exc:
            raise RunError(f"pytest-homefield: {exc}") from None

    @contextmanager
    def __call__(self, agent: Any, *, workspace: Path, box: Path, env: dict[str, str]) -> Iterator[CallBox]:
        """The :class:`CallBox` of one call of ``agent`` (a :class:`~pytest_homefield.agents.base.CallSandbox`).
        Raises :class:`BwrapUnavailable` (see :meth:`check`) and ``OSError`` when the client's
        configuration cannot be copied."""
        if self._sandboxes is None:
            self._sandboxes = Sandboxes.choose(self.choice, self.hook)
        backend = self._sandboxes.for_agent(agent, False)
        sb = agent_sandbox(agent, backend, workspace=workspace, box=box, env=env, sandbox=self.choice,
                           proxy_log=box / "proxy.log", tmpfs_bytes=self.limits.total_bytes)
        try:
            folders = AgentFolders(workspace, tmpdir=box / "tmp", home=sb.home if backend.confines else None)
            watch = DiskWatch(folders, self.limits, Baseline.measure(folders, self.limits))
            yield CallBox(wrap=sb.wrap, limits=self.limits, watch=watch, sandbox=backend.configured)
        finally:
            sb.close()
