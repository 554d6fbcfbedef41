"""Sandbox backends behind one interface (docs/contracts.md §7, §9), for agent programs and test runs.

A :class:`SandboxBackend` turns the argv of a program into the argv that runs it confined:
:meth:`~SandboxBackend.wrap_agent` for an agent's program (its workspace, ``TMPDIR`` and ``HOME``
writable, read-only paths, the network or loopback ports), :meth:`~SandboxBackend.wrap_tests` for a
test run (grading or mining: the copy under test read-only, no network, its out dir writable). Each
returns a :class:`Wrapped`: the argv and the name of the backend that applied (what the result
records: ``bwrap``, ``landlock``, ``hook`` or ``none``). Four implementations:

* :class:`BwrapBackend`: bubblewrap (:mod:`.bwrap`), built with the executable the probe checked;
* :class:`LandlockBackend`: Landlock (:mod:`.landlock`), where bubblewrap does not work;
* :class:`NoSandbox`: the argv unchanged (``--sandbox none``, or ``auto`` without either);
* :class:`HookBackend`: a conftest's ``pytest_homefield_sandbox(argv, ctx)`` (``ctx`` a
  :class:`SandboxContext` whose ``purpose`` is ``"agent"`` or ``"tests"``), falling back to the
  configured backend when the hook returns ``None``.

:class:`Sandboxes` is the choice of one session: made once (one probe of bubblewrap, and of Landlock
where it is needed, from
``--sandbox``/``--sandbox-network`` and whether a hook exists) and passed down to every attempt.
Adding a backend: a class with the members of :class:`SandboxBackend`, its probe in
:meth:`Sandboxes.choose` and its name in :meth:`Sandboxes._named` and :func:`backend_named` (or a
conftest hook, which needs no code here).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pytest_homefield.sandbox._scope import available as scope_available
from pytest_homefield.sandbox._scope import scoped_argv
from pytest_homefield.sandbox.bwrap import (
    BwrapUnavailable,
    Policy,
    bwrap_argv,
    inside_path,
    probe,
    sandboxed_argv,
    tests_ro_paths,
)
from pytest_homefield.sandbox.landlock import LandlockPolicy, landlock_argv, tests_policy
from pytest_homefield.sandbox.landlock import probe as landlock_probe
from pytest_homefield.sandbox.modes import (
    UNPROBED,
    SandboxChoice,
    agent_backend_name,
    landlock_state,
    tests_backend_name,
)
from pytest_homefield.sandbox.proccap import marked
from pytest_homefield.sandbox.proxy import FilteringProxy, proxy_env
from pytest_homefield.sandbox.relay import HostRelay, inside_argv
from pytest_homefield.spelling import spell

__all__ = ["SandboxBackend", "SandboxContext", "SandboxHook", "AgentBox", "TestBox", "Wrapped", "BwrapBackend",
           "LandlockBackend", "NoSandbox", "HookBackend", "Sandboxes", "backend_named", "PROXY_PORT"]


@dataclass
class SandboxContext:
    """What a ``pytest_homefield_sandbox(argv, ctx)`` hook is told about the command it may wrap.

    ``purpose`` ``"agent"``: an agent's program. ``workspace``, ``tmpdir`` and ``home`` are the only
    host folders it should be able to write (they are its own); ``ro_paths`` what it needs to read
    (interpreter, client); ``env`` the whole environment the command must get; ``network`` whether
    it may use the host's network; ``loopback_ports`` the host's ``127.0.0.1`` ports it may reach
    without it (``--sandbox-network loopback:…``); ``agent`` its name. Under ``--sandbox-network
    allowlist`` (the default) ``allowed_hosts`` lists the ``host:port`` destinations the agent may
    reach (its provider's and ``--allow-host``'s) and ``network`` is true when there is one (false
    for an allowlist of nothing): homefield does not enforce them behind a hook, the hook may, or
    return ``None`` to leave the agent to bubblewrap, whose proxy does (the container template does).

    ``purpose`` ``"tests"``: a test run of grading. ``workspace`` is the grading copy (bubblewrap
    binds it read-only), ``out_dir`` the one folder the run must write (its outcomes, log and pytest
    cache; ``tmpdir`` and ``home`` are the run's own ``TMPDIR`` and ``HOME`` in it), ``ro_paths`` the
    interpreters, this package and the reporter, ``env`` the test run's environment (with its
    services' variables), ``network`` false, ``loopback_ports`` the host's ``127.0.0.1`` ports of its ``services:`` and
    ``--test-network`` that the wrapped command should reach (a hook that wraps it carries them in
    itself), ``agent`` ``""``.
    """

    workspace: Path
    tmpdir: Path
    home: Path
    env: dict[str, str]
    network: bool
    ro_paths: list[Path]
    agent: str
    purpose: str = "agent"
    loopback_ports: tuple[int, ...] = ()
    out_dir: Path | None = None
    allowed_hosts: tuple[str, ...] = ()


#: A ``pytest_homefield_sandbox(argv, ctx)`` implementation: the wrapped argv, or ``None``.
SandboxHook = Callable[[list[str], SandboxContext], "list[str] | None"]


@dataclass
class AgentBox:
    """What one agent program may touch: ``workspace``, ``tmpdir`` and ``home`` read-write,
    ``ro_paths`` read-only, the host's network when ``network``, and the loopback ``relay``
    (``--sandbox-network loopback:…``) when a backend relays ports. ``agent`` is its name. ``proxy``
    (``--sandbox-network allowlist``, with a ``relay``): the filtering proxy the agent's only way out
    goes through, relayed in at ``127.0.0.1`` (:data:`PROXY_PORT`; under Landlock it listens on a port of
    the host's ``127.0.0.1``). ``ports``: the host's ``127.0.0.1`` ports it may reach (``loopback:``, its
    provider's loopback hosts, its own services) under a backend that confines TCP by port (Landlock).
    ``tmpfs_bytes``: the size of its private ``/tmp`` and ``/dev/shm`` (bubblewrap). ``peers``: the
    exact loopback ``(address, port)`` pairs its provider names (``::1`` included) that such a backend
    lets it reach besides ``127.0.0.1``'s ``ports``; a port of ``ports`` that only ``peers`` name is
    reached on those addresses only."""

    workspace: Path
    tmpdir: Path
    home: Path
    ro_paths: list[Path]
    network: bool
    agent: str
    relay: HostRelay | None = None
    proxy: FilteringProxy | None = None
    tmpfs_bytes: int | None = None
    ports: tuple[int, ...] = ()
    peers: tuple[tuple[str, int], ...] = ()


#: The port the filtering proxy listens on inside an agent's sandbox (the next free one when a relayed
#: port takes it).
PROXY_PORT = 3128


def _proxy_port(taken: Sequence[int]) -> int:
    port = PROXY_PORT
    while port in taken:
        port += 1
    return port


@dataclass
class TestBox:
    """What one test run may touch: ``workdir`` (the grading or mining copy) read-only, ``out_dir``
    read-write, no network but the ports of ``relay`` (its services, docs/contracts.md §7); ``python``
    the interpreter its command starts (its prefix is bound read-only); ``tmpfs_bytes`` the size of its
    private ``/tmp`` and ``/dev/shm`` (bubblewrap; ``max_test_write_mb``); ``ports`` the host's
    ``127.0.0.1`` ports of its services and ``--test-network`` (what Landlock lets it connect to)."""

    __test__ = False  # not a pytest test class

    workdir: Path
    out_dir: Path
    python: str | None = None
    #: the loopback relay of the run's services and ``--test-network`` ports (``None``: no port)
    relay: HostRelay | None = None
    tmpfs_bytes: int | None = None
    ports: tuple[int, ...] = ()


@dataclass(frozen=True)
class Wrapped:
    """A wrapped command: ``argv`` to start (with the environment given to the wrapper) and
    ``backend``, the name recorded for it (``bwrap``, ``landlock``, ``hook`` or ``none``)."""

    argv: list[str]
    backend: str


class SandboxBackend(Protocol):
    """One way to confine programs. ``name``: the recorded name (``bwrap``, ``landlock``, ``none``,
    ``hook``); ``configured``: the ``--sandbox`` backend under it (``bwrap``, ``landlock`` or ``none``:
    what an agent's context reports); ``confines``: whether an agent gets a fresh ``HOME`` under it;
    ``relays``: whether it relays ``loopback:`` ports itself; ``by_port``: whether it confines TCP to the
    box's ports of the host's ``127.0.0.1`` instead (Landlock: services and the proxy are reached there)."""

    @property
    def name(self) -> str: ...

    @property
    def configured(self) -> str: ...

    @property
    def confines(self) -> bool: ...

    @property
    def relays(self) -> bool: ...

    @property
    def by_port(self) -> bool: ...

    def wrap_agent(self, argv: Sequence[str], env: Mapping[str, str], box: AgentBox) -> Wrapped:
        """``argv`` of an agent's program confined to ``box``, started with ``env``."""
        ...

    def wrap_tests(self, argv: Sequence[str], env: Mapping[str, str], box: TestBox) -> Wrapped:
        """``argv`` of a test run confined to ``box``, started with ``env``."""
        ...


@dataclass(frozen=True)
class NoSandbox:
    """No sandbox: every argv runs as it is."""

    name: str = "none"
    configured: str = "none"
    confines: bool = False
    relays: bool = False
    by_port: bool = False

    def wrap_agent(self, argv: Sequence[str], env: Mapping[str, str], box: AgentBox) -> Wrapped:
        return Wrapped(list(argv), self.name)

    def wrap_tests(self, argv: Sequence[str], env: Mapping[str, str], box: TestBox) -> Wrapped:
        return Wrapped(list(argv), self.name)


@dataclass(frozen=True)
class BwrapBackend:
    """Bubblewrap through ``exe`` (the executable :func:`~pytest_homefield.sandbox.bwrap.probe`
    checked). An agent: its three folders read-write, its read-only paths and the system read-only,
    nothing else, its network or none (with a relay: the inside half of
    :mod:`~pytest_homefield.sandbox.relay` in front of the command), ``/tmp`` and ``/dev/shm`` of
    ``box.tmpfs_bytes``, bubblewrap's options passed through ``--args`` (never on its command line,
    which the sandbox's PID 1 shows). A test run:
    :func:`~pytest_homefield.sandbox.bwrap.sandboxed_argv`."""

    exe: str
    name: str = "bwrap"
    configured: str = "bwrap"
    confines: bool = True
    relays: bool = True
    by_port: bool = False

    def wrap_agent(self, argv: Sequence[str], env: Mapping[str, str], box: AgentBox) -> Wrapped:
        mounted = [box.workspace, box.tmpdir, box.home, *box.ro_paths]
        inner = {**env, "PATH": inside_path(env.get("PATH", ""), mounted, first=[Path(sys.executable).parent])}
        ro = list(box.ro_paths)
        command = list(argv)
        if box.relay is not None:
            box.relay.start()
            mapping = box.relay.mapping()
            if box.proxy is not None:
                port = _proxy_port(box.relay.ports)
                if box.proxy.socket_path is None:
                    box.proxy.start(box.relay.folder / "proxy.sock")
                mapping.append(f"{port}={box.proxy.socket_path}")
                inner = proxy_env(inner, port)
            command = inside_argv(sys.executable, mapping, command)
            ro.append(box.relay.folder)
        if box.network and scope_available():  # the host's network, not its abstract Unix sockets (satk43)
            command = scoped_argv(sys.executable, command)
            ro.append(Path(command[3]))  # the script itself, wherever this package is
        policy = Policy(cwd=box.workspace, rw=[box.workspace, box.tmpdir, box.home], ro=ro, env=inner,
                        network=box.network, tmpfs_bytes=box.tmpfs_bytes,
                        owned=[box.relay.folder] if box.relay is not None else [])  # host_uids: its sockets
        return Wrapped(bwrap_argv(command, policy, bwrap=self.exe, args_fd=True), self.name)

    def wrap_tests(self, argv: Sequence[str], env: Mapping[str, str], box: TestBox) -> Wrapped:
        extra: list[Path] = []
        if box.relay is not None:  # the services' ports: the inside half of the relay in front
            box.relay.start()
            argv = inside_argv(sys.executable, box.relay.mapping(), argv)
            extra.append(box.relay.folder)
        return Wrapped(sandboxed_argv(argv, workdir=box.workdir, out_dir=box.out_dir, env=env, python=box.python,
                                      bwrap=self.exe, ro_extra=extra, tmpfs_bytes=box.tmpfs_bytes), self.name)


@dataclass(frozen=True)
class LandlockBackend:
    """Landlock (:mod:`.landlock`) at ABI ``abi`` (what :func:`~pytest_homefield.sandbox.landlock.probe`
    found). An agent: its three folders read-write, its read-only paths and the system read-only, nothing
    else; with ``box.network`` TCP as the host's, else TCP only to ``box.ports`` and, with a proxy, to the
    filtering proxy (started on a port of the host's ``127.0.0.1``, named in the proxy variables). A test
    run: :func:`~pytest_homefield.sandbox.landlock.tests_policy` with ``box.ports``. Either in a pids
    cgroup capped at ``--max-procs`` where one can be made (:func:`~pytest_homefield.sandbox.proccap.marked`;
    without a user namespace ``RLIMIT_NPROC`` would count every process of the user)."""

    abi: int
    name: str = "landlock"
    configured: str = "landlock"
    confines: bool = True
    relays: bool = False
    by_port: bool = True

    def wrap_agent(self, argv: Sequence[str], env: Mapping[str, str], box: AgentBox) -> Wrapped:
        rw = [box.workspace, box.tmpdir, box.home]
        setenv = {"PATH": inside_path(env.get("PATH", ""), [*rw, *box.ro_paths], first=[Path(sys.executable).parent])}
        unset: list[str] = []
        named = {port for _, port in box.peers}
        connect = None if box.network else [p for p in box.ports if p not in named or ("127.0.0.1", p) in box.peers]
        if box.proxy is not None and connect is not None:
            port = box.proxy.port or box.proxy.start_tcp()
            proxied = proxy_env(dict(env), port)
            setenv.update({k: v for k, v in proxied.items() if k != "PATH" and env.get(k) != v})
            unset = [k for k in env if k not in proxied]
            connect.append(port)
        policy = LandlockPolicy(ro=box.ro_paths, rw=rw, connect=connect, unix=False, setenv=setenv, unsetenv=unset,
                                peers=box.peers)
        return Wrapped(marked(landlock_argv(argv, policy)), self.name)

    def wrap_tests(self, argv: Sequence[str], env: Mapping[str, str], box: TestBox) -> Wrapped:
        policy = tests_policy(argv, workdir=box.workdir, out_dir=box.out_dir, env=env, python=box.python,
                              ports=box.ports)
        return Wrapped(marked(landlock_argv(argv, policy)), self.name)


@dataclass(frozen=True)
class HookBackend:
    """The conftest's ``pytest_homefield_sandbox`` hook: its argv when it returns one (recorded
    ``hook``), else ``fallback`` (the configured backend) wraps the command."""

    hook: SandboxHook
    fallback: SandboxBackend = field(default_factory=NoSandbox)
    name: str = "hook"
    confines: bool = True

    @property
    def configured(self) -> str:
        return self.fallback.configured

    @property
    def relays(self) -> bool:
        return self.fallback.relays

    @property
    def by_port(self) -> bool:
        return self.fallback.by_port

    def wrap_agent(self, argv: Sequence[str], env: Mapping[str, str], box: AgentBox) -> Wrapped:
        allowed = tuple(box.proxy.allowlist.entries()) if box.proxy is not None else ()
        # an allowlist of nothing is no network (a hook that only reads ``network`` must not open it)
        ctx = SandboxContext(workspace=box.workspace, tmpdir=box.tmpdir, home=box.home, env=dict(env),
                             network=box.network or bool(allowed), ro_paths=list(box.ro_paths),
                             agent=box.agent, loopback_ports=box.relay.ports if box.relay is not None else (),
                             allowed_hosts=allowed)
        wrapped = self.hook(list(argv), ctx)
        if wrapped is not None:
            return Wrapped(list(wrapped), self.name)
        return self.fallback.wrap_agent(argv, env, box)

    def wrap_tests(self, argv: Sequence[str], env: Mapping[str, str], box: TestBox) -> Wrapped:
        ro = tests_ro_paths(argv, env=env, python=box.python)
        ctx = SandboxContext(workspace=box.workdir, tmpdir=Path(env.get("TMPDIR") or box.out_dir),
                             home=Path(env.get("HOME") or box.out_dir), env=dict(env),
                             network=False, ro_paths=ro, agent="", purpose="tests", out_dir=box.out_dir,
                             loopback_ports=box.relay.ports if box.relay is not None else ())
        wrapped = self.hook(list(argv), ctx)
        if wrapped is not None:
            return Wrapped(list(wrapped), self.name)
        return self.fallback.wrap_tests(argv, env, box)


@dataclass(frozen=True)
class Sandboxes:
    """The sandbox choice of one session, made once (:meth:`choose`): ``choice`` (``--sandbox``,
    ``--sandbox-network``), ``hook`` (the ``pytest_homefield_sandbox`` hook, ``None`` when nothing
    implements it), ``bwrap`` (the bubblewrap backend, ``None`` when it does not work here, then
    ``why`` says why in one line; under ``--sandbox landlock`` it is not probed and ``why`` says
    ``--sandbox landlock``), ``landlock`` (the Landlock backend, or why it does not work here in
    one line, :data:`~pytest_homefield.sandbox.modes.UNPROBED` when not needed)."""

    choice: SandboxChoice
    hook: SandboxHook | None = None
    bwrap: BwrapBackend | None = None
    why: str | None = None
    landlock: LandlockBackend | str = UNPROBED

    @classmethod
    def choose(cls, choice: SandboxChoice, hook: SandboxHook | None = None) -> Sandboxes:
        """Probe bubblewrap once (not at all for ``--sandbox none`` or ``landlock``), then Landlock
        where bubblewrap is not used, and keep the results."""
        if choice.mode == "none":
            return cls(choice, hook, None, None)
        bwrap: BwrapBackend | None = None
        why: str | None = f"{spell('sandbox')} landlock"
        if choice.mode != "landlock":
            try:
                bwrap, why = BwrapBackend(probe()), None
            except BwrapUnavailable as exc:
                why = str(exc)
        state = landlock_state() if why is not None else UNPROBED
        return cls(choice, hook, bwrap, why, LandlockBackend(state) if isinstance(state, int) else state)

    @property
    def _landlock_state(self) -> int | str:
        return self.landlock.abi if isinstance(self.landlock, LandlockBackend) else self.landlock

    def _named(self, name: str) -> SandboxBackend:
        if self.bwrap is not None and name == self.bwrap.name:
            return self.bwrap
        if isinstance(self.landlock, LandlockBackend) and name == self.landlock.name:
            return self.landlock
        return NoSandbox()

    def _hooked(self, backend: SandboxBackend) -> SandboxBackend:
        return backend if self.hook is None else HookBackend(self.hook, backend)

    def for_agent(self, agent: object, allow_shell: bool) -> SandboxBackend:
        """The backend of one agent's programs (see :meth:`SandboxChoice.for_agent`). Raises
        :class:`BwrapUnavailable` when the agent needs a sandbox that does not work here and no hook
        exists (with a hook: the hook, over no sandbox)."""
        try:
            name = agent_backend_name(self.choice.mode, agent, allow_shell, self.why, self._landlock_state)
        except BwrapUnavailable:
            if self.hook is None:
                raise
            return HookBackend(self.hook, NoSandbox())
        return self._hooked(self._named(name))

    def for_tests(self) -> SandboxBackend:
        """The backend of test runs (see :meth:`SandboxChoice.for_tests`). Raises
        :class:`BwrapUnavailable` as :meth:`for_agent` does."""
        try:
            name = tests_backend_name(self.choice.mode, self.why, self._landlock_state)
        except BwrapUnavailable:
            if self.hook is None:
                raise
            return HookBackend(self.hook, NoSandbox())
        return self._hooked(self._named(name))


def backend_named(name: str | SandboxBackend, hook: SandboxHook | None = None) -> SandboxBackend:
    """The backend for a recorded name (``bwrap`` probes bubblewrap, ``landlock`` Landlock, raising
    :class:`BwrapUnavailable` where it does not work; anything else: no sandbox), under ``hook``
    when one is given; a backend is returned as it is."""
    if not isinstance(name, str):
        return name
    backend: SandboxBackend = NoSandbox()
    if name == BwrapBackend.name:
        backend = BwrapBackend(probe())
    elif name == LandlockBackend.name:
        backend = LandlockBackend(landlock_probe())
    return backend if hook is None else HookBackend(hook, backend)
