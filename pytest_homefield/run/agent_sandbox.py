"""The sandbox of one agent's attempt (docs/contracts.md §9): the backend's wrap of the agent's commands, a
fresh ``HOME`` with its client's configuration, the read-only interpreters and client installs, and the
network it may reach (the allowlist's filtering proxy, the loopback relay). Used by every attempt
(:func:`pytest_homefield.run.attempt.run_attempt`) and by ``homefield probe``'s calls."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.capabilities import provider_hosts_of
from pytest_homefield.sandbox.backends import AgentBox, SandboxBackend, SandboxHook, backend_named
from pytest_homefield.sandbox.bwrap import package_paths, python_paths
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.proxy import FilteringProxy
from pytest_homefield.sandbox.relay import HostRelay
from pytest_homefield.sandbox.services import Lease
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp

__all__ = ["AgentSandbox", "agent_sandbox", "agent_wrapper"]


def agent_wrapper(backend: SandboxBackend, *, workspace: Path, tmpdir: Path, home: Path, network: bool,
                  ro_paths: list[Path], agent: str, used: list[str] | None = None,
                  relay: HostRelay | None = None,
                  proxy: FilteringProxy | None = None,
                  tmpfs_bytes: int | None = None, ports: tuple[int, ...] = (),
                  peers: tuple[tuple[str, int], ...] = ()) -> Callable[[list[str], Any], list[str]]:
    """The ``AgentContext.wrap`` of one attempt: ``backend``'s ``wrap_agent`` with ``workspace``,
    ``tmpdir`` and ``home`` read-write, ``ro_paths`` read-only and the network or not (a hook's argv
    when it returns one, else the configured backend; see :mod:`pytest_homefield.sandbox.backends`).
    The backend actually used is appended to ``used`` (``hook``, ``bwrap``, ``landlock`` or ``none``). With
    ``relay`` (``--sandbox-network loopback:…``; ``network`` is then false) bubblewrap's command runs
    behind the inside half of :mod:`pytest_homefield.sandbox.relay`, started on first use; with
    ``proxy`` too (``--sandbox-network allowlist``) the filtering proxy is relayed in beside it.
    ``tmpfs_bytes``: the size of the sandbox's private ``/tmp`` and ``/dev/shm`` (bubblewrap). ``ports``:
    the host's ``127.0.0.1`` ports a backend that confines TCP by port (Landlock) lets it reach; ``peers``
    the exact loopback pairs its provider names (``::1`` too, :attr:`~.backends.AgentBox.peers`)."""
    box = AgentBox(workspace=workspace, tmpdir=tmpdir, home=home, ro_paths=list(ro_paths), network=network,
                   agent=agent, relay=relay, proxy=proxy, tmpfs_bytes=tmpfs_bytes, ports=ports,
                   peers=peers)

    def wrap(argv: list[str], env: Any) -> list[str]:
        wrapped = backend.wrap_agent(argv, dict(env), box)
        if used is not None:
            used.append(wrapped.backend)
        return wrapped.argv

    return wrap


@dataclass
class AgentSandbox:
    """The sandbox of one agent attempt (:func:`agent_sandbox`): ``wrap`` for ``AgentContext.wrap``,
    ``home`` (the fresh ``HOME`` when sandboxed), ``used`` (the backends ``wrap`` applied), the
    loopback ``relay`` and the allowlist's filtering ``proxy`` if any. :meth:`close` stops both."""

    backend: SandboxBackend
    home: Path
    wrap: Callable[[list[str], Any], list[str]]
    used: list[str]
    relay: HostRelay | None = None
    proxy: FilteringProxy | None = None

    @property
    def recorded(self) -> str:
        """The result's ``sandbox`` field: the last backend applied, else ``none``."""
        return self.used[-1] if self.used else "none"

    def close(self) -> None:
        """Stop the filtering proxy and the loopback relay (those that were started)."""
        if self.proxy is not None:
            self.proxy.close()
        if self.relay is not None:
            self.relay.close()


def agent_sandbox(agent: Any, backend: str | SandboxBackend, *, workspace: Path, box: Path, env: dict[str, str],
                  sandbox: SandboxChoice, pythons: Iterable[str | None] = (),
                  hook: SandboxHook | None = None, proxy_log: Path | None = None,
                  tmpfs_bytes: int | None = None, services: Lease | None = None) -> AgentSandbox:
    """Prepare the sandbox of one attempt of ``agent`` (``backend``: from :meth:`Sandboxes.for_agent`,
    or a name from :meth:`SandboxChoice.for_agent`, then under ``hook`` when one is given) whose
    workspace is ``workspace``, in the attempt's private folder ``box`` (``box/tmp`` is its
    ``TMPDIR``; ``box/home`` becomes its ``HOME``, ``box/net`` holds the relay's sockets). When the
    backend confines it (bubblewrap, Landlock or a hook), the agent gets a fresh ``HOME``: the agent's
    ``sandbox_home(home, env)`` copies its client's configuration in from the user's (still
    ``env["HOME"]`` when it is called) and may re-point variables; then ``env["HOME"]`` is the fresh
    one (``env`` is changed in place). Read-only: the interpreters (this one, ``python`` and each of
    ``pythons``), this package, and the agent's ``sandbox_paths(env)`` (its client's install).
    Network: ``sandbox.network`` (:mod:`pytest_homefield.sandbox.modes`); under ``allowlist`` (the
    default) with a backend that relays (bubblewrap) or confines TCP by port (Landlock), a
    :class:`FilteringProxy` allowing the agent's ``provider_hosts(env)`` and ``sandbox.allow_hosts``,
    logging to ``proxy_log`` (the attempt's ``proxy.log``), with those of its hosts that are this
    machine's loopback ports relayed directly (Landlock: allowed by port).
    ``tmpfs_bytes``: the size of bubblewrap's private ``/tmp`` and ``/dev/shm``.
    ``services``: the agent's own service instances (:func:`~pytest_homefield.sandbox.services.agent_lease`),
    whose ports are relayed too when the agent has no shared network.
    Raises :class:`BwrapUnavailable` for the name ``bwrap`` where bubblewrap does not work."""
    chosen = backend_named(backend, hook)
    tmpdir, home = box / "tmp", box / "home"
    if chosen.confines:
        home.mkdir(parents=True, exist_ok=True)
        fill_home = getattr(agent, "sandbox_home", None)
        if callable(fill_home):
            fill_home(home, env)
        env["HOME"] = str(home)
    extra = getattr(agent, "sandbox_paths", None)
    ro_paths = [*python_paths([sys.executable, "python", *pythons]), *package_paths(),
                *(extra(env) if callable(extra) else [])]
    own = services if services is not None and not sandbox.shared_network else Lease()
    ports: tuple[int, ...] = tuple(sandbox.loopback_ports)
    proxy: FilteringProxy | None = None
    peers: tuple[tuple[str, int], ...] = ()
    if sandbox.allowlist and (chosen.relays or chosen.by_port):
        allowed = sandbox.agent_allowlist(provider_hosts_of(agent, env))
        ports = tuple(allowed.loopback_ports())
        peers = allowed.loopback_peers()
        proxy = FilteringProxy(allowed, proxy_log)
    ports = tuple(dict.fromkeys([*ports, *own.ports]))
    if peers:  # exact pairs (Landlock): its services on the host's 127.0.0.1
        peers = tuple(dict.fromkeys([*peers, *(("127.0.0.1", p) for p in own.ports)]))
    # a port its provider names on one address of this machine only (``[::1]:P``) is relayed to that address
    only_at = {p: hs[0] for p in ports if len(hs := [h for h, q in peers if q == p]) == 1}
    relay = (HostRelay(ports, box / "net", fallback=lambda: hf_mkdtemp(dir="/tmp"),  # owner-named: swept
                       targets=own.targets, hosts=only_at)
             if (ports or proxy is not None) and chosen.relays else None)
    used: list[str] = []
    wrap = agent_wrapper(chosen, workspace=workspace, tmpdir=tmpdir, home=home, network=sandbox.shared_network,
                         ro_paths=ro_paths, agent=agent.name, used=used, relay=relay, proxy=proxy,
                         tmpfs_bytes=tmpfs_bytes, ports=ports, peers=peers)
    return AgentSandbox(backend=chosen, home=home, wrap=wrap, used=used, relay=relay, proxy=proxy)
