"""Services that test runs need (``services:`` and ``test_network`` in ``.homefield.yml``,
``--test-network loopback:PORT[,PORT…]``; docs/contracts.md §2, §7).

A :class:`ServiceSpec` is one named command homefield starts and stops itself (a ``redis-server``, a
PostgreSQL): ``{port}`` in its ``command``, ``ready``, ``env`` and ``reset`` is replaced by a free TCP
port of ``127.0.0.1`` chosen for each instance. A :class:`ServicePool` holds the instances of one
process (one pytest-xdist worker, or the session at ``-n 0``):

* ``scope: worker`` (the default) in a network that reuses (``TestNetwork.reuse``: mining, where only
  the repository's own code runs): one instance per process, started at the first test run, and
  ``reset`` (when given) before every later run; an instance that died is started again;
* ``scope: run``, and every service of a network that does not reuse (grading, an agent's own): a
  fresh instance for each test run, stopped when the run ends. Grading runs an agent's code in the test
  process, and a ``reset`` clears data, not what a client can set besides (redis' ``CONFIG SET``, an
  ACL): an instance shared by two attempts, or by one attempt's twin runs, would carry one run's state
  into the next (attacker9 F3).

Every instance runs in a fresh, empty, private working folder of its own (so do its ``ready`` and
``reset`` commands), removed when it stops: a redis ``SAVE`` writes ``dump.rdb`` there, and no other
instance loads it (attacker9 F3c). It runs under the reaper
(:func:`~pytest_homefield.sandbox.procs.spawn_process`): Ctrl-C, ``SIGTERM`` or ``SIGKILL`` of
homefield leaves none behind. Its output goes through a pipe homefield reads into
``LOG_DIR/<name>-<pid>-<port>.log`` (the mine or run folder's ``services/``), at most
:data:`SERVICE_LOG_BYTES` of it (the head, a marker line, the last 256 KiB: the agent's
:class:`~pytest_homefield.sandbox.streams.CappedSink`; what homefield and the ``ready`` and ``reset``
commands write there is appended beside it): graded code can make a server log without bound (atk19:
redis ``CONFIG SET loglevel debug`` and a connect loop, 8 MB in 5 s), and the service never holds a
host file. Readiness: ``ready: tcp`` waits until the port accepts a connection, any other ``ready`` is
a shell command that exits 0 once the service is ready; both within ``timeout`` seconds (default 30).
A service that does not start or get ready raises :class:`ServiceError` with the last lines of its log.
A pool that reuses (mining) remembers it and raises the same error for every later run without trying again (the session
says so once); a grading's pool tries again at every lease: one failed start (which a graded process
could provoke, say by taking ports) must not turn every later grading of the process into ``infra``
(atk18 N1).

A :class:`Lease` (:meth:`ServicePool.lease`) is what one test run gets: the variables of each
service's ``env`` and the ports the run may reach: the services' and those of ``--test-network
loopback:…`` (servers the user runs). A sandboxed test run has no network; those ports, and no
others, are carried in by the loopback relay (:mod:`.relay`, see :func:`run_network`).

:mod:`.nethint` reads the logs of test runs that failed inside a sandbox without a network and names
the addresses the tests tried.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.dropped_env import dropped_variable
from pytest_homefield.sandbox.modes import parse_network
from pytest_homefield.sandbox.nofollow import read_tail, remove_tree
from pytest_homefield.sandbox.procs import descendants, run_process, spawn_process, stop_process
from pytest_homefield.sandbox.relay import HostPort, HostRelay
from pytest_homefield.sandbox.service_box import instance_folder, service_argv, service_backend, service_socket
from pytest_homefield.sandbox.tempdirs import mkdtemp
from pytest_homefield.store import open_own_file

__all__ = ["SCOPES", "ServiceSpec", "ServiceError", "Instance", "ServicePool", "Lease", "TestNetwork",
           "parse_services", "parse_test_network", "free_port", "pool_for", "close_pools", "run_network",
           "services_digest", "check_services", "agent_lease", "failure_lines", "listens_itself"]

SCOPES = ("worker", "run")
#: Keys of one ``services.<name>`` entry.
SERVICE_KEYS = ("command", "ready", "env", "reset", "scope", "timeout", "port")
#: Lines of a service's log quoted when it does not start.
LOG_TAIL = 5
#: Bytes of one instance's output kept in its log (its ``ready`` and ``reset`` commands, the user's own, are apart).
SERVICE_LOG_BYTES = 2 * 2**20
#: What the marker line of a cut service log names.
_LOG_CAP_WHY = "a service's log"


class ServiceError(RuntimeError):
    """A service did not start, did not get ready, or its reset failed; the message is one line
    (the service, what happened, the last lines of its log joined by `` | ``)."""


#: How a :class:`ServiceError`'s message starts (``service 'redis' did not get ready …``).
FAILURE_START = "service '"


def failure_lines(messages: Iterable[str | None], noun: str, verb: str) -> list[str]:
    """One line per failed service among ``messages`` (errors of records; a message counts when it is,
    or ends with after ``": "``, a :class:`ServiceError`'s; the first message of each service is quoted),
    said once however many records it ended: ``'Services: service 'redis' did not get ready … (4 attempts
    infra; homefield services --check tries it alone)'`` for ``noun="attempt"``, ``verb="infra"``."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for message in messages:
        text = str(message or "")
        at = text.find(FAILURE_START)
        if at < 0 or (at > 0 and not text[:at].endswith(": ")):
            continue
        detail = text[at:]
        # by service: a grading tries a failed service again (each try another port and log), one line each
        name = detail[len(FAILURE_START):].split("'", 1)[0]
        first.setdefault(name, detail)
        counts[name] = counts.get(name, 0) + 1
    return [f"Services: {first[name]} ({n} {noun}{'s' if n != 1 else ''} {verb}; homefield services --check tries "
            "it alone)" for name, n in counts.items()]


@dataclass(frozen=True)
class ServiceSpec:
    """One ``services.<name>`` entry. ``command``: a shell command (``/bin/sh -c``) that runs the
    server in the foreground; ``ready``: ``tcp`` or a shell command exiting 0 when ready; ``env``:
    variables set in the test run (sorted pairs); ``reset``: a shell command run before each later
    test run of a ``worker`` instance (``None``: none); ``scope``: ``worker`` or ``run``;
    ``timeout_s``: seconds for it to get ready and for ``ready``/``reset`` commands. ``port``: the fixed
    port the tests expect the service at (``Redis()`` meaning ``localhost:6379``), or ``None``: in a
    sandbox the instance still gets a free port and the relay carries the fixed one to it, so every
    worker has its own; without a sandbox the instance listens on the fixed port itself (one process
    at a time can)."""

    name: str
    command: str
    ready: str = "tcp"
    env: tuple[tuple[str, str], ...] = ()
    reset: str | None = None
    scope: str = "worker"
    timeout_s: float = 30.0
    port: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry as recorded (``meta.json``, the verification key): every field, ``env`` a mapping
        (``port`` only when set, so entries without one record what they did before it existed)."""
        out = {"name": self.name, "command": self.command, "ready": self.ready, "env": dict(self.env),
               "reset": self.reset, "scope": self.scope, "timeout": self.timeout_s}
        return out if self.port is None else {**out, "port": self.port}

    def env_for(self, port: int) -> dict[str, str]:
        """``env`` with ``{port}`` replaced."""
        return {k: fill(v, port) for k, v in self.env}


def fill(text: str, port: int) -> str:
    """``text`` with every ``{port}`` replaced by ``port``."""
    return text.replace("{port}", str(port))


def parse_services(data: object) -> tuple[ServiceSpec, ...]:
    """The ``services:`` mapping of ``.homefield.yml`` as specs, in its order (``None``: none).
    Raises ``ValueError`` with one line naming the key for an unknown key, a missing ``command``, a
    wrong type, a ``scope`` other than ``worker``/``run`` or a ``timeout`` that is not above 0."""
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise ValueError("key 'services' must be a mapping of service names")
    out = []
    for name, body in data.items():
        key = f"services.{name}"
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"key {key!r}: service names must match [A-Za-z0-9_.-]+")
        if isinstance(body, str):
            body = {"command": body}
        if not isinstance(body, Mapping):
            raise ValueError(f"key {key!r} must be a mapping with a command")
        unknown = sorted(set(body) - set(SERVICE_KEYS))
        if unknown:
            raise ValueError(f"unknown key '{key}.{unknown[0]}' (use {', '.join(SERVICE_KEYS)})")
        for k in ("command", "ready", "reset", "scope"):
            if k in body and body[k] is not None and not isinstance(body[k], str):
                raise ValueError(f"key '{key}.{k}' must be a string, got {body[k]!r}")
        if not body.get("command"):
            raise ValueError(f"key '{key}.command' is required")
        env = body.get("env") or {}
        if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, (str, int))
                                                   for k, v in env.items()):
            raise ValueError(f"key '{key}.env' must be a mapping of variable names to strings")
        dropped = sorted(k for k in env if dropped_variable(k))
        if dropped:  # soft41: PYTEST_ADDOPTS there changed what pytest collected; the softener never saw it
            raise ValueError(f"key '{key}.env' sets {dropped[0]}, which a test run never gets (it would change "
                             "what pytest does); put pytest's options in the test command")
        scope = body.get("scope") or "worker"
        if scope not in SCOPES:
            raise ValueError(f"key '{key}.scope' {scope!r}: use worker or run")
        port = body.get("port")
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise ValueError(f"key '{key}.port' must be a TCP port (1-65535), got {port!r}")
        timeout = body.get("timeout", 30.0)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"key '{key}.timeout' must be a number of seconds above 0, got {timeout!r}")
        out.append(ServiceSpec(name=name, command=body["command"], ready=body.get("ready") or "tcp",
                               env=tuple(sorted((k, str(v)) for k, v in env.items())),
                               reset=body.get("reset") or None, scope=scope, timeout_s=float(timeout),
                               port=port))
    return tuple(out)


def parse_test_network(value: str | None) -> tuple[int, ...]:
    """The host ports of ``--test-network``: ``none`` (or ``None``) → ``()``, ``loopback:6379,5432`` →
    ``(6379, 5432)``. Raises ``ValueError`` with one line for anything else."""
    if value in (None, "", "none"):
        return ()
    if str(value).startswith("loopback:"):
        with contextlib.suppress(ValueError):
            return parse_network(str(value))[1]  # the agents' loopback:PORT syntax, one parser
    raise ValueError(f"{value!r}: use none or loopback:PORT[,PORT...] (TCP ports of this machine's 127.0.0.1 "
                     "that test runs may reach)")


def services_digest(specs: Sequence[ServiceSpec], ports: Sequence[int] = ()) -> str | None:
    """A short digest of the services and test-network ports (``None`` when there are none): part of
    the verification key and the environment fingerprint, so a changed service command verifies again."""
    if not specs and not ports:
        return None
    blob = json.dumps({"services": [s.to_dict() for s in specs], "ports": list(ports)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def free_port() -> int:
    """A TCP port of ``127.0.0.1`` that nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, n: int = LOG_TAIL) -> str:
    try:  # never through a link, never a fifo (link46)
        text = read_tail(path, SERVICE_LOG_BYTES + (1 << 16)).decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return " | ".join(lines[-n:])[:600]


def _listening_inodes(port: int) -> set[str]:
    """The inodes of the TCP sockets listening on ``port`` of this network namespace (``/proc/net/tcp`` and
    ``tcp6``: the local address's port in hex, state ``0A``, the inode in the tenth field)."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                found.add(f[9])
    return found


def listens_itself(root_pid: int, port: int) -> bool:
    """Whether a process of ``root_pid``'s tree (itself and its live descendants) holds a socket listening on
    TCP ``port`` of this network namespace (its ``/proc/<pid>/fd`` links ``socket:[inode]``); ``False`` when no
    socket listens there, when another process's does, or when the tree's descriptors cannot be read."""
    inodes = {f"socket:[{i}]" for i in _listening_inodes(port)}
    if not inodes:
        return False
    for pid in (root_pid, *descendants(root_pid)):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return True
    return False


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Instance:
    """One running service: ``spec``, its ``port`` on the host, ``log`` path and the reaper's process;
    ``inside``: the port the tests reach it at (``port`` unless the relay maps ``spec.port`` to it);
    ``cwd``: its working folder, made by :meth:`start` and removed by :meth:`stop`; ``sandbox``: the
    ``--sandbox`` mode whose test-run backend confines it (:mod:`.service_box`)."""

    spec: ServiceSpec
    port: int
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    inside: int | None = None
    cwd: Path | None = None
    #: the sandbox mode it runs under (``--sandbox``: :func:`~.service_box.service_backend`)
    sandbox: str = "none"
    #: the host half of its port's relay when it has a network of its own (:mod:`.service_box`)
    host_port: HostPort | None = None
    #: the socket that relay reaches it through; it exists once the service accepts
    sock: Path | None = None
    #: bytes of memory its sandbox may hold (its memory cgroup, where one can be made; ``None``: none)
    memory_bytes: int | None = None
    #: its reaper keeps the memory reserved for the run that starts it (a fresh instance: stopped inside it)
    hold_memory: bool = False
    #: the backend that confines it (:func:`~.service_box.service_backend` of ``sandbox``), set by :meth:`start`
    backend: str = "none"

    @property
    def address(self) -> int:
        """The port the tests use: ``inside`` when set, else ``port``."""
        return self.inside if self.inside is not None else self.port

    def _fail(self, what: str) -> ServiceError:
        tail = _tail(self.log)
        return ServiceError(f"service {self.spec.name!r} {what}" + (f"; its log ({self.log}): {tail}" if tail
                                                                  else f"; its log {self.log} is empty"))

    def _shell(self, command: str, log_name: str) -> int | None:
        """Run ``command`` (``{port}`` filled) under the reaper in the instance's folder (``cwd``, made
        by :meth:`start`); its exit status (``None``: timed out). Its output is appended to the
        service's log."""
        assert self.cwd is not None, "only a started instance runs its commands"
        with contextlib.suppress(ServiceError):  # the instance runs: a log refused now is not written, as below
            self._note(f"--- homefield: {log_name}: {fill(command, self.port)}\n")
        side = self.log.with_suffix(f".{log_name}.tmp")
        try:
            res = run_process(["/bin/sh", "-c", fill(command, self.port)], cwd=self.cwd, env=os.environ,
                              timeout_s=self.spec.timeout_s, stdout_path=side, stderr_path=None)
        finally:
            with contextlib.suppress(OSError), open_own_file(side, "rb") as got, open_own_file(self.log, "ab") as f:
                f.write(got.read(SERVICE_LOG_BYTES))
            side.unlink(missing_ok=True)
        return res.exit_code

    def _note(self, line: str) -> None:
        """Append ``line`` to the service's log, never through a link put in its place (link46). Raises
        :class:`ServiceError` (one line naming the log) when it cannot."""
        try:
            with open_own_file(self.log, "ab") as f:
                f.write(line.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise ServiceError(f"service {self.spec.name!r} cannot write its log {self.log}: "
                               f"{exc.strerror or exc}") from None

    def start(self) -> Instance:
        """Start the command and wait until it is ready (``spec.timeout_s``). Raises
        :class:`ServiceError` (the instance stopped) when it cannot start, exits or is not ready in time."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self._note(f"--- homefield: start on port {self.port}: {fill(self.spec.command, self.port)}\n")
        if _port_open(self.port):  # else `ready: tcp` would take another server (another worker's) for this one
            raise self._fail(f"cannot start: port {self.port} of 127.0.0.1 is already in use (a fixed port "
                             "without a sandbox serves one process: run with -n 0 or in the sandbox)")
        try:
            # confined as a test run is (atk18 F1: a server runs what its clients ask, the agent among them),
            # under bubblewrap in a network of its own, its port carried out (service_box)
            backend = self.backend = service_backend(self.sandbox)
            self.cwd = instance_folder(self.port, backend)  # never shared: what one instance saves, no other loads
            self.sock = service_socket(self.cwd, self.port, backend)
            if self.sock is not None:
                self.host_port = HostPort(self.port, self.sock).start()
            argv, env = service_argv(fill(self.spec.command, self.port), self.cwd, backend, self.port)
            self.proc = spawn_process(argv, cwd=self.cwd, env=env, stdout_path=self.log,
                                      output_cap=SERVICE_LOG_BYTES, why=_LOG_CAP_WHY, box_memory=self.memory_bytes,
                                      hold_memory=self.hold_memory)
        except BwrapUnavailable as exc:
            self.stop()
            raise self._fail(f"could not be sandboxed: {exc}") from None
        except OSError as exc:
            self.stop()
            raise self._fail(f"could not be started: {exc}") from None
        deadline = time.monotonic() + self.spec.timeout_s
        pause = 0.005  # a redis is ready in about 10 ms: poll soon, then every 50 ms
        while True:
            code = self.proc.poll()
            if code is not None:
                self.stop()
                raise self._fail(f"exited with status {code} before it was ready")
            if self.spec.ready == "tcp":
                if self.sock.exists() if self.sock is not None else self._its_port():
                    return self
            elif self._shell(self.spec.ready, "ready") == 0 and self._not_taken():
                return self
            if time.monotonic() > deadline:
                self.stop()
                raise self._fail(f"was not ready after {self.spec.timeout_s:g} s (ready: {self.spec.ready})")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _its_port(self) -> bool:
        """Whether the instance's port is its own to take for ready: under bubblewrap the host half of its relay
        holds the port from before the start (:class:`~.relay.HostPort`); under Landlock a socket of the
        instance's own process tree must listen there (aatk49: another process, a graded test's or an agent's
        that took the port between :func:`free_port` and the server's ``bind``, answered ``ready`` and then the
        tests' every command; the server, its port taken, exits and the start fails); with ``--sandbox none``
        (nothing confined: a server started through another, ``docker run -p``) whatever listens there."""
        if self.sock is not None:
            return True
        if self.proc is None or not _port_open(self.port):
            return False
        return self.backend != "landlock" or listens_itself(self.proc.pid, self.port)

    def _not_taken(self) -> bool:
        """Whether a ``ready`` command's 0 may be believed: nothing listens on the instance's port (a service
        that serves no TCP, a socket file, a worker: the command alone decides, as before aatk49), or what listens
        there is the instance's own (:meth:`_its_port`: under Landlock another process may have taken it)."""
        return self.sock is not None or self.backend != "landlock" or not _port_open(self.port) or self._its_port()

    def alive(self) -> bool:
        """Whether the service's process is still running."""
        return self.proc is not None and self.proc.poll() is None

    def reset(self) -> None:
        """Run ``spec.reset`` (nothing without one). Raises :class:`ServiceError` when it fails."""
        if self.spec.reset is None:
            return
        code = self._shell(self.spec.reset, "reset")
        if code != 0:
            how = "timed out" if code is None else f"exited with status {code}"
            raise self._fail(f"reset {how}")

    def stop(self, remove: bool = True) -> None:
        """Stop the service and everything it started, wait for it, and remove its working folder (``remove``;
        else it is left as the service left it, ``cwd`` still naming it, for the caller to judge and remove)."""
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None
        if self.host_port is not None:
            self.host_port.close()
            self.host_port = None
        if self.cwd is not None and remove:
            remove_tree(self.cwd)
            self.cwd = None


@dataclass(frozen=True)
class Lease:
    """What one test run gets: ``env`` (every service's ``env``, filled) and ``ports`` (the services'
    and ``--test-network``'s, the only ports a sandboxed run reaches); ``targets``: inside port → host
    port for a service at a fixed ``port`` whose instance listens elsewhere; ``folders``: the instances'
    working folders, on the host's disk, which the clients make them write (a redis ``SAVE``): counted
    with the writer's own folders against its write cap (atk20 F4)."""

    env: dict[str, str] = field(default_factory=dict)
    ports: tuple[int, ...] = ()
    targets: dict[int, int] = field(default_factory=dict)
    folders: tuple[Path, ...] = ()


@dataclass(frozen=True)
class TestNetwork:
    """The services and test-network ports of a session (``Settings.services``, ``test_network``) and
    ``log_dir``, where service logs go (the mine or run folder's ``services/``; ``None``: a temp
    folder). ``reuse``: ``scope: worker`` instances are kept for the process and ``reset`` between
    test runs (mining: only the repository's own code runs); ``False`` (grading, the default): every
    test run gets fresh instances, none shared with another run. Hashable: :func:`pool_for` keeps one
    pool per value in each process."""

    __test__ = False  # not a pytest test class

    services: tuple[ServiceSpec, ...] = ()
    ports: tuple[int, ...] = ()
    log_dir: Path | None = None
    reuse: bool = False
    sandbox: str = "auto"
    #: MiB of memory each sandboxed instance may hold (``max_test_memory_mb``: what its clients make it hold
    #: is theirs, atk21); ``None``: no cap
    memory_mb: float | None = None

    def __bool__(self) -> bool:
        return bool(self.services or self.ports)

    @property
    def names(self) -> list[str]:
        """The services' names, in declaration order."""
        return [s.name for s in self.services]

    @property
    def digest(self) -> str | None:
        """:func:`services_digest` of the services and ports."""
        return services_digest(self.services, self.ports)


class ServicePool:
    """The service instances of one process for ``network`` (see the module docstring)."""

    def __init__(self, network: TestNetwork) -> None:
        self.network = network
        self._log_dir = network.log_dir
        self._workers: dict[str, Instance] = {}
        self._failed: dict[str, str] = {}
        self._fresh: set[str] = set()

    @property
    def failures(self) -> dict[str, str]:
        """Service name → the one-line error that stopped it (remembered for the session)."""
        return dict(self._failed)

    def _log(self, spec: ServiceSpec, port: int) -> Path:
        if self._log_dir is None:
            self._log_dir = mkdtemp() / "services"
        return self._log_dir / f"{spec.name}-{os.getpid()}-{port}.log"

    def _start(self, spec: ServiceSpec, relays: bool, fresh: bool = False) -> Instance:
        if spec.name in self._failed and self.network.reuse:  # mining: the repository's own code only
            raise ServiceError(self._failed[spec.name])
        port = spec.port if spec.port is not None and not relays else free_port()
        inside = spec.port if relays else None
        try:
            memory = int(self.network.memory_mb * 2**20) if self.network.memory_mb else None
            return Instance(spec, port, self._log(spec, port), inside=inside, sandbox=self.network.sandbox,
                            memory_bytes=memory, hold_memory=fresh).start()
        except ServiceError as exc:
            self._failed[spec.name] = str(exc)
            raise

    def _worker(self, spec: ServiceSpec, relays: bool) -> Instance:
        inst = self._workers.get(spec.name)
        if inst is not None and not inst.alive():
            inst.stop()
            inst = None
        if inst is None:
            inst = self._workers[spec.name] = self._start(spec, relays)
            return inst
        inst.reset()
        return inst

    @contextlib.contextmanager
    def lease(self, relays: bool = False, *, leave: Callable[[Path], None] | None = None) -> Iterator[Lease]:
        """The services for one test run: worker-scope instances of a network that reuses started or
        reset, every other one started fresh (and stopped when the block ends). ``relays``: the run is
        in a sandbox whose ports the relay carries (a service's fixed ``port`` then maps to a free one).
        ``leave``: the fresh instances' working folders are not removed when they stop but handed to it (the
        caller judges them, :attr:`Lease.folders`, then removes them: an agent's, hatk35). Raises
        :class:`ServiceError` when one cannot be had (the fresh ones already started are stopped)."""
        own: list[Instance] = []
        try:
            env: dict[str, str] = {}
            ports: list[int] = []
            targets: dict[int, int] = {}
            folders: list[Path] = []
            for spec in self.network.services:
                if spec.scope == "run" or not self.network.reuse:
                    inst = self._start(spec, relays, fresh=True)
                    own.append(inst)
                else:
                    inst = self._worker(spec, relays)
                env.update(spec.env_for(inst.address))
                ports.append(inst.address)
                if inst.address != inst.port:
                    targets[inst.address] = inst.port
                if inst.cwd is not None:
                    folders.append(inst.cwd)
            yield Lease(env, tuple(dict.fromkeys([*ports, *self.network.ports])), targets, tuple(folders))
        finally:
            for inst in own:
                inst.stop(remove=leave is None)
                if leave is not None and inst.cwd is not None:
                    leave(inst.cwd)

    def close(self) -> None:
        """Stop every worker-scope instance."""
        for inst in self._workers.values():
            inst.stop()
        self._workers.clear()


_POOLS: dict[TestNetwork, ServicePool] = {}


def pool_for(network: TestNetwork) -> ServicePool:
    """This process's pool for ``network`` (made once; stopped by :func:`close_pools` at exit)."""
    pool = _POOLS.get(network)
    if pool is None:
        pool = _POOLS[network] = ServicePool(network)
    return pool


@atexit.register
def close_pools() -> None:
    """Stop the instances of every pool of this process (also run at interpreter exit)."""
    for pool in list(_POOLS.values()):
        pool.close()
    _POOLS.clear()


@contextlib.contextmanager
def run_network(network: TestNetwork | None, *, relays: bool, folder: Path
                ) -> Iterator[tuple[dict[str, str], HostRelay | None, tuple[int, ...], tuple[Path, ...]]]:
    """For one test run: the services' variables, when the backend relays (``relays``: a sandbox
    without a network) and there are ports, a :class:`~.relay.HostRelay` of them with its sockets in
    ``folder`` (a new ``/tmp`` folder when that path is too long), closed when the block ends, the
    ports (:attr:`Lease.ports`) and the instances' folders (:attr:`Lease.folders`). Raises
    :class:`ServiceError` as :meth:`ServicePool.lease` does."""
    if not network:
        yield {}, None, (), ()
        return
    with pool_for(network).lease(relays) as lease:
        relay = (HostRelay(lease.ports, folder, fallback=lambda: mkdtemp(dir="/tmp"), targets=lease.targets)
                 if relays and lease.ports else None)
        try:
            yield dict(lease.env), relay, lease.ports, lease.folders
        finally:
            if relay is not None:
                relay.close()


def agent_lease(network: TestNetwork | None, runs_commands: bool, *, relays: bool,
                leave: Callable[[Path], None] | None = None) -> contextlib.AbstractContextManager[Lease]:
    """The services of an agent that can run commands (``runs_commands``): instances of its own, started
    for the attempt and stopped when the block ends, never the ones grading uses; their ``env`` and
    ports (``relays``: the agent's sandbox relays ports, so a fixed ``port`` maps to a free one); ``leave``:
    as :meth:`ServicePool.lease` (their folders are the agent's, judged with its own after it ends). For
    other agents, or without services: an empty :class:`Lease`. Raises :class:`ServiceError`."""
    if network is None or not network.services or not runs_commands:
        return contextlib.nullcontext(Lease())
    # fresh: no reuse
    return ServicePool(TestNetwork(network.services, (), network.log_dir, sandbox=network.sandbox,
                                   memory_mb=network.memory_mb)).lease(relays, leave=leave)


# --- homefield services --check ----------------------------------------------------------------------

def check_services(specs: Sequence[ServiceSpec], log_dir: Path,
                   sandbox: str = "auto") -> list[tuple[ServiceSpec, str | None, float]]:
    """Start each service once (confined as under ``--sandbox sandbox``), wait for it, run its reset,
    stop it: ``(spec, error or None, seconds)`` per service, in order (``homefield services --check``)."""
    out: list[tuple[ServiceSpec, str | None, float]] = []
    for spec in specs:
        t0 = time.monotonic()
        port = free_port()
        inst = Instance(spec, port, log_dir / f"{spec.name}-check-{port}.log", sandbox=sandbox)
        error: str | None = None
        try:
            inst.start()
            inst.reset()
        except ServiceError as exc:
            error = str(exc)
        finally:
            inst.stop()
        out.append((spec, error, time.monotonic() - t0))
    return out
