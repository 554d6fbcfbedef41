"""Which sandbox each process gets (``--sandbox auto|bwrap|landlock|none``, ``--sandbox-network
allowlist|shared|none|loopback:PORT[,PORT…]``, ``--allow-host``; docs/contracts.md §2, §7, §9).

* ``none``: nothing is sandboxed (the user accepts the risk).
* ``bwrap``: every agent process and every test run (grading, mining) runs in bubblewrap; a machine
  where bubblewrap does not work is a usage error.
* ``landlock``: the same under Landlock (:mod:`.landlock`); a machine where it does not work is a
  usage error, and so is an agent that can run commands where the kernel's Landlock ABI is below
  :data:`~pytest_homefield.sandbox.landlock.SCOPED_ABI` (before it, such an agent could signal
  homefield's processes and reach abstract Unix sockets outside its sandbox).
* ``auto`` (default): bubblewrap wherever it works (probed once per process); where it does not,
  Landlock wherever it works for the process (probed once, only then). Where neither does, agents
  that can run commands (``cmd:``, the recipes, ``claude --allow-shell``) are refused with a
  one-line error (:func:`~pytest_homefield.sandbox.bwrap.install_hint`), while edit-only claude,
  ``openai:`` and the reference agents run, and test runs go unsandboxed; every attempt records
  which sandbox it had.

Agents that run in this process (oracle, noop, sim:P, openai:) have no process to wrap: ``none``.

An agent's network: ``allowlist`` (the default): no network but its provider's hosts (the agent's
``provider_hosts``) and the ``--allow-host`` entries, through the filtering proxy of :mod:`.proxy`;
``shared`` (the host's, loopback included: the explicit opt-out), ``none`` (no network at all), or
``loopback:PORT[,PORT…]``: no network except those TCP ports of the host's ``127.0.0.1`` (a local
model server), relayed into the sandbox by :mod:`.relay` (Landlock: allowed by port on the host's
``127.0.0.1``). Only bubblewrap and Landlock enforce ``allowlist``: under ``--sandbox none``, for
unsandboxed agents and behind a hook it is not enforced (:func:`unenforced_note` says so once per
session).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.capabilities import capabilities_of
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.landlock import NET_ABI, SCOPED_ABI, LandlockUnavailable
from pytest_homefield.sandbox.landlock import probe as landlock_probe
from pytest_homefield.sandbox.proxy import Allowlist
from pytest_homefield.spelling import spell

__all__ = ["SANDBOX_MODES", "NETWORK_MODES", "SandboxChoice", "parse_network", "runs_commands", "runs_process",
           "agent_backend_name", "tests_backend_name", "parse_hosts", "unenforced_note", "landlock_state",
           "UNPROBED", "CONFINED_BACKENDS"]

SANDBOX_MODES = ("auto", "bwrap", "landlock", "none")
#: The backends that confine a process's files (bind or allow only what it needs, never a path holding the home).
CONFINED_BACKENDS = ("bwrap", "landlock")
#: What :func:`agent_backend_name` is told of Landlock when nobody probed it (it is then not used).
UNPROBED = "Landlock was not probed"
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
                     f"127.0.0.1), or allowlist (the default: the agent's provider and {spell('allow-host')} only)")


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
            raise ValueError(f"{spell('sandbox')} {self.mode!r}: use one of {', '.join(SANDBOX_MODES)}")
        try:
            parse_network(self.network)
        except ValueError as exc:
            raise ValueError(f"{spell('sandbox-network')} {exc}") from None
        try:
            parse_hosts(self.allow_hosts)
        except ValueError as exc:
            raise ValueError(f"{spell('allow-host')} {exc}") from None

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

    def states(self) -> tuple[str | None, int | str]:
        """``(why, landlock)`` for :func:`agent_backend_name`: bubblewrap probed unless the mode is
        ``landlock`` (then ``why`` is ``"--sandbox landlock"``), Landlock (:func:`landlock_state`) only
        when the mode is ``landlock`` or bubblewrap does not work (both once per process)."""
        why = self.available() if self.mode != "landlock" else f"{spell('sandbox')} landlock"
        return why, landlock_state() if why is not None else UNPROBED

    def for_agent(self, agent: Any, allow_shell: bool) -> str:
        """``"bwrap"``, ``"landlock"`` or ``"none"`` for one agent's process (:func:`agent_backend_name`,
        probing as :meth:`states` does). Raises :class:`BwrapUnavailable` when the agent must be
        sandboxed and no sandbox it needs works here."""
        if self.mode == "none" or not runs_process(agent):
            return "none"
        return agent_backend_name(self.mode, agent, allow_shell, *self.states())

    def for_tests(self) -> str:
        """``"bwrap"``, ``"landlock"`` or ``"none"`` for test runs (grading and mining;
        :func:`tests_backend_name`, probing as :meth:`states` does). Raises :class:`BwrapUnavailable`
        for ``bwrap`` or ``landlock`` when it does not work here."""
        if self.mode == "none":
            return "none"
        return tests_backend_name(self.mode, *self.states())


def landlock_state() -> int | str:
    """The kernel's Landlock ABI when the launcher confines here, else the one-line reason (probed once
    per process, :func:`~pytest_homefield.sandbox.landlock.probe`)."""
    try:
        return landlock_probe()
    except LandlockUnavailable as exc:
        return str(exc)


def _landlock_refusal(landlock: int | str, commands: bool) -> str | None:
    """Why Landlock (``landlock``: its ABI, or why it does not work) cannot hold a process that runs
    commands (``commands``) or not; ``None`` when it can."""
    if isinstance(landlock, str):
        return landlock
    if commands and landlock < SCOPED_ABI:
        return (f"Landlock ABI {landlock} cannot keep it from signalling other processes (ABI {SCOPED_ABI}, "
                "Linux 6.12, can)")
    return None


def agent_backend_name(mode: str, agent: Any, allow_shell: bool, why: str | None,
                       landlock: int | str = UNPROBED) -> str:
    """``"bwrap"``, ``"landlock"`` or ``"none"`` for one agent's process under ``--sandbox mode``, where
    ``why`` is ``None`` when bubblewrap works here, else the reason it does not, and ``landlock`` the
    Landlock ABI when it works, else the reason it does not (:func:`landlock_state`). Raises
    :class:`BwrapUnavailable` when the agent must be sandboxed (``bwrap``, ``landlock``, or ``auto``
    with an agent that runs commands) and the sandbox it needs does not work (for Landlock:
    :class:`LandlockUnavailable`)."""
    if mode == "none" or not runs_process(agent):
        return "none"
    commands = runs_commands(agent, allow_shell)
    if mode != "landlock" and why is None:
        return "bwrap"
    refusal = _landlock_refusal(landlock, commands)
    if mode == "bwrap" or (mode == "landlock" and refusal is not None):
        cls = BwrapUnavailable if mode == "bwrap" else LandlockUnavailable
        because = why if mode == "bwrap" else refusal
        raise cls(f"agent {agent.name!r} can run commands, but {because}" if commands else str(because))
    if refusal is None:
        return "landlock"
    if commands:
        raise BwrapUnavailable(f"agent {agent.name!r} can run commands, but {why}; and {refusal}")
    return "none"


def tests_backend_name(mode: str, why: str | None, landlock: int | str = UNPROBED) -> str:
    """``"bwrap"``, ``"landlock"`` or ``"none"`` for test runs under ``--sandbox mode`` (``why`` and
    ``landlock`` as in :func:`agent_backend_name`). Raises :class:`BwrapUnavailable` for ``bwrap`` and
    :class:`LandlockUnavailable` for ``landlock`` when it does not work."""
    if mode == "none":
        return "none"
    if mode != "landlock" and why is None:
        return "bwrap"
    if mode == "bwrap":
        raise BwrapUnavailable(why)
    if not isinstance(landlock, str):
        return "landlock"
    if mode == "landlock":
        raise LandlockUnavailable(landlock)
    return "none"


def unenforced_note(network: str, backends: Mapping[str, str]) -> str | None:
    """The one line a session prints when its ``--sandbox-network allowlist`` is not enforced for some
    agent that runs a program: ``backends`` maps each such agent's name to its sandbox (``bwrap``,
    ``landlock``, ``hook``, ``none`` or ``refused: …``); ``None`` when every one is in bubblewrap or
    Landlock (or the network is not ``allowlist``). Landlock before ABI
    :data:`~pytest_homefield.sandbox.landlock.NET_ABI` does not confine TCP: it is named too."""
    if network != "allowlist":
        return None
    why = {"hook": "a sandbox hook", "none": "no sandbox", "landlock": "Landlock without TCP rules"}
    loose = {name: b for name, b in backends.items()
             if b in ("none", "hook") or (b == "landlock" and _landlock_below(NET_ABI))}
    if not loose:
        return None
    names = ", ".join(f"{n} ({why[b]})" for n, b in loose.items())
    return (f"homefield: the network allowlist is not enforced for {names}: only bubblewrap and Landlock "
            f"(ABI {NET_ABI}, Linux 6.7, on) enforce it (they reach whatever this machine reaches)")


def _landlock_below(abi: int) -> bool:
    """Whether Landlock works here at an ABI below ``abi`` (probed once per process)."""
    state = landlock_state()
    return isinstance(state, int) and state < abi
