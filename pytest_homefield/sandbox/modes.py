"""Which sandbox each process gets (``--sandbox auto|bwrap|none``, ``--sandbox-network
allowlist|shared|none|loopback:PORT[,PORT…]``, ``--allow-host``; docs/contracts.md §2, §7, §9).

* ``none``: nothing is sandboxed (the user accepts the risk).
* ``bwrap``: every agent process and every test run (grading, mining) runs in bubblewrap; a machine
  where bubblewrap does not work is a usage error.
* ``auto`` (default): bubblewrap wherever it works (probed once per process). Where it does not,
  agents that can run commands (``cmd:``, the recipes, ``claude --allow-shell``) are refused with a
  one-line error (:data:`~pytest_homefield.sandbox.bwrap.INSTALL_HINT`), while edit-only claude,
  ``openai:`` and the reference agents run, and test runs go unsandboxed; every attempt records
  which sandbox it had.

Agents that run in this process (oracle, noop, sim:P, openai:) have no process to wrap: ``none``.

An agent's network: ``allowlist`` (the default): no network but its provider's hosts (the agent's
``provider_hosts``) and the ``--allow-host`` entries, through the filtering proxy of :mod:`.proxy`;
``shared`` (the host's, loopback included: the explicit opt-out), ``none`` (no network at all), or
``loopback:PORT[,PORT…]``: no network except those TCP ports of the host's ``127.0.0.1`` (a local
model server), relayed into the sandbox by :mod:`.relay`. Only bubblewrap enforces ``allowlist``:
under ``--sandbox none``, for unsandboxed agents and behind a hook it is not enforced
(:func:`unenforced_note` says so once per session).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.capabilities import capabilities_of
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.proxy import Allowlist

__all__ = ["SANDBOX_MODES", "NETWORK_MODES", "SandboxChoice", "parse_network", "runs_commands", "runs_process",
           "agent_backend_name", "tests_backend_name", "parse_hosts", "unenforced_note"]

SANDBOX_MODES = ("auto", "bwrap", "none")
NETWORK_MODES = ("allowlist", "shared", "none", "loopback:PORT[,PORT...]")


def parse_network(value: str) -> tuple[bool, tuple[int, ...]]:
    """``(shared, ports)`` of a ``--sandbox-network`` value: ``shared`` → ``(True, ())``, ``none`` and
    ``allowlist`` → ``(False, ())``, ``loopback:8000,11434`` → ``(False, (8000, 11434))``. Raises
    ``ValueError`` with a one-line message (the value and what to use; ports 1–65535, at least one)
    for anything else."""
    if value == "shared":
        return True, ()
    if value in ("none", "allowlist"):
        return False, ()
    kind, _, rest = value.partition(":")
    if kind == "loopback" and rest:
        try:
            ports = tuple(int(p) for p in rest.split(","))
        except ValueError:
            ports = ()
        if ports and all(0 < p < 65536 for p in ports):
            return False, tuple(dict.fromkeys(ports))
    raise ValueError(f"{value!r}: use shared, none or loopback:PORT[,PORT...] (TCP ports of this machine's "
                     "127.0.0.1), or allowlist (the default: the agent's provider and --allow-host only)")


def parse_hosts(entries: Sequence[str]) -> Allowlist:
    """The :class:`~pytest_homefield.sandbox.proxy.Allowlist` of ``--allow-host`` entries. Raises
    ``ValueError`` with a one-line message naming the bad entry."""
    return Allowlist.of(entries)


def runs_process(agent: object) -> bool:
    """Whether the agent starts a program that a sandbox can wrap (its capabilities' ``process``)."""
    return capabilities_of(agent).process


def runs_commands(agent: object, allow_shell: bool) -> bool:
    """Whether the agent can run arbitrary commands (its capabilities' ``commands``; agents that run
    in-process edit files only)."""
    return capabilities_of(agent).runs_commands(allow_shell)


@dataclass(frozen=True)
class SandboxChoice:
    """The resolved sandbox settings: ``mode`` in :data:`SANDBOX_MODES`, ``network`` one of
    :data:`NETWORK_MODES` (:func:`parse_network`; agents only: test runs never have a network),
    ``allow_hosts`` the ``--allow-host`` entries (:func:`parse_hosts`) added to every agent's provider
    hosts under ``allowlist``."""

    mode: str = "auto"
    network: str = "allowlist"
    allow_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in SANDBOX_MODES:
            raise ValueError(f"--sandbox {self.mode!r}: use one of {', '.join(SANDBOX_MODES)}")
        try:
            parse_network(self.network)
        except ValueError as exc:
            raise ValueError(f"--sandbox-network {exc}") from None
        try:
            parse_hosts(self.allow_hosts)
        except ValueError as exc:
            raise ValueError(f"--allow-host {exc}") from None

    @property
    def allowlist(self) -> bool:
        """Whether an agent reaches only its provider's hosts and ``allow_hosts`` (the default)."""
        return self.network == "allowlist"

    def agent_allowlist(self, provider_hosts: Sequence[str]) -> Allowlist:
        """The allowlist of one agent: its ``provider_hosts`` (URLs or ``host[:port]``; a bad one is
        left out) then :attr:`allow_hosts`."""
        entries: list[str] = []
        for entry in provider_hosts:
            try:
                Allowlist.of([entry])
            except ValueError:
                continue
            entries.append(entry)
        return Allowlist.of([*entries, *self.allow_hosts])

    @property
    def shared_network(self) -> bool:
        """Whether an agent keeps the host's network."""
        return parse_network(self.network)[0]

    @property
    def loopback_ports(self) -> tuple[int, ...]:
        """The host's ``127.0.0.1`` ports relayed into an agent's sandbox (``loopback:``), else ``()``."""
        return parse_network(self.network)[1]

    def available(self) -> str | None:
        """``None`` when bubblewrap works here, else the one-line reason (probed once per process)."""
        try:
            probe()
        except BwrapUnavailable as exc:
            return str(exc)
        return None

    def for_agent(self, agent: Any, allow_shell: bool) -> str:
        """``"bwrap"`` or ``"none"`` for one agent's process (:func:`agent_backend_name`, probing
        bubblewrap). Raises :class:`BwrapUnavailable` when the agent must be sandboxed and bubblewrap
        does not work here."""
        if self.mode == "none" or not runs_process(agent):
            return "none"
        return agent_backend_name(self.mode, agent, allow_shell, self.available())

    def for_tests(self) -> str:
        """``"bwrap"`` or ``"none"`` for test runs (grading and mining; :func:`tests_backend_name`,
        probing bubblewrap). Raises :class:`BwrapUnavailable` for ``bwrap`` when it does not work here."""
        if self.mode == "none":
            return "none"
        return tests_backend_name(self.mode, self.available())


def agent_backend_name(mode: str, agent: Any, allow_shell: bool, why: str | None) -> str:
    """``"bwrap"`` or ``"none"`` for one agent's process under ``--sandbox mode``, where ``why`` is
    ``None`` when bubblewrap works here, else the reason it does not. Raises
    :class:`BwrapUnavailable` when the agent must be sandboxed (``bwrap``, or ``auto`` with an agent
    that runs commands) and bubblewrap does not work."""
    if mode == "none" or not runs_process(agent):
        return "none"
    if why is None:
        return "bwrap"
    if mode == "bwrap" or runs_commands(agent, allow_shell):
        raise BwrapUnavailable(f"agent {agent.name!r} can run commands, but {why}"
                               if runs_commands(agent, allow_shell) else why)
    return "none"


def tests_backend_name(mode: str, why: str | None) -> str:
    """``"bwrap"`` or ``"none"`` for test runs under ``--sandbox mode`` (``why`` as in
    :func:`agent_backend_name`). Raises :class:`BwrapUnavailable` for ``bwrap`` when it does not work."""
    if mode == "none":
        return "none"
    if why is None:
        return "bwrap"
    if mode == "bwrap":
        raise BwrapUnavailable(why)
    return "none"


def unenforced_note(network: str, backends: Mapping[str, str]) -> str | None:
    """The one line a session prints when its ``--sandbox-network allowlist`` is not enforced for some
    agent that runs a program: ``backends`` maps each such agent's name to its sandbox (``bwrap``,
    ``hook``, ``none`` or ``refused: …``); ``None`` when every one is in bubblewrap (or the network is
    not ``allowlist``)."""
    if network != "allowlist":
        return None
    loose = {name: b for name, b in backends.items() if b in ("none", "hook")}
    if not loose:
        return None
    names = ", ".join(f"{n} ({'a sandbox hook' if b == 'hook' else 'no sandbox'})" for n, b in loose.items())
    return (f"homefield: the network allowlist is not enforced for {names}: only bubblewrap enforces it "
            "(they reach whatever this machine reaches)")
