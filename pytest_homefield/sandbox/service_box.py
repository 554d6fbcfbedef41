"""The sandbox a service instance runs in (``services:`` in ``.homefield.yml``; docs/contracts.md §2, §9).

A service is reached from inside the sandboxes: an agent that runs commands gets instances of its own,
and a grading's test process (the agent's code) gets the grading's. A server that can run commands or
read files for its clients (PostgreSQL's ``COPY … TO PROGRAM``, ``pg_read_file``; an old redis' ``CONFIG
SET dir``) would otherwise do so on the host, as the user, with the user's environment: atk18 F1 read
``.homefield/tasks.jsonl`` (the reference fixes) through it, 7 of 8 demo tasks counted solved from the
graded test process alone, and read the user's API keys. So each instance runs confined as a test run
is (:func:`service_argv`), by the backend test runs use:

* **bubblewrap**: the system folders and the folders of the program it starts read-only (the first
  word of ``command``, as :func:`~.bwrap.program_paths` finds it, and every absolute path the command
  names), its own working folder read-write (also its ``HOME``), a private ``/tmp``, a new PID, IPC and
  UTS namespace, no capability; nothing of the repository, the user's home or ``.homefield/``
  (a path that is or holds a protected folder is never bound; copies of the project are masked);
* **Landlock**: the same paths read / read-write, the rest of the file system refused;
* ``--sandbox none``: as the command is, unconfined (nothing is claimed there).

Under bubblewrap the instance gets a network namespace of its own, with nothing but its loopback: a
program it runs for a client reaches no other server of the host (the user's own databases, another
instance). Its port is carried out by :class:`~.relay.HostPort` on the host's ``127.0.0.1:PORT`` and the
inside half ``relay.py serve`` (:func:`~.relay.serve_argv`), through a Unix socket in its working folder
that appears once the service accepts (:func:`service_socket`): homefield's ``ready: tcp`` waits for it.
Under Landlock (no namespace of its own without one for the user) the instance listens on the host's
``127.0.0.1`` and its network is confined as a test run's is, with no port to connect to: it may ``bind``
any port of a loopback address (a wildcard bound to the loopback instead; a server may listen on more than
its one port: a cluster's transport port) and ``connect`` nowhere but to its own listeners; no UDP, no Unix
socket path (hatk35: a redis under Landlock, its network not confined, ``MIGRATE``-d a key its client gave it
into the user's own redis on the host's ``127.0.0.1``, and would have into another attempt's instance or any
host of the internet). Under bubblewrap a socket path too long for a Unix socket under ``TMPDIR`` puts the
instance's working folder under ``/tmp`` instead (:func:`instance_folder`): before, the instance kept the
host's network there.

Its environment is never the user's: ``PATH`` (the entries it can see), ``HOME`` and ``TMPDIR`` (its
working folder), ``LANG``, ``LC_ALL``, ``TZ``, ``USER``, ``LOGNAME`` where set. ``ready`` and ``reset``
commands are the user's own, run on the host; they talk to the instance only through its port.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from pytest_homefield.sandbox.bwrap import (
    BwrapUnavailable,
    Policy,
    bwrap_argv,
    inside_path,
    probe,
    program_paths,
    python_paths,
)
from pytest_homefield.sandbox.landlock import LandlockPolicy, landlock_argv
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.nofollow import remove_tree
from pytest_homefield.sandbox.proccap import marked
from pytest_homefield.sandbox.relay import MAX_SOCKET_PATH, serve_argv
from pytest_homefield.sandbox.tempdirs import mkdtemp

__all__ = ["service_backend", "service_argv", "service_socket", "instance_folder", "KEPT_VARS"]

#: The user's variables an instance keeps (none of them a secret).
KEPT_VARS = ("LANG", "LC_ALL", "TZ", "USER", "LOGNAME")


def service_backend(mode: str) -> str:
    """``"bwrap"``, ``"landlock"`` or ``"none"``: the backend test runs use under ``--sandbox mode``
    (:meth:`~.modes.SandboxChoice.for_tests`). Raises :class:`~.bwrap.BwrapUnavailable` when the mode
    needs a sandbox that does not work here."""
    return SandboxChoice(mode=mode).for_tests()


def _paths(command: str, path_var: str) -> list[Path]:
    """What ``command`` (a shell command line) names: its program's folders (a Python's prefixes) and its
    absolute paths."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out = program_paths(words[0], path_var) if words else []
    if words and "python" in Path(words[0]).name:  # its prefixes and venv (the standard library)
        out += python_paths([words[0]], path=path_var)
    for w in words:
        for part in w.split("="):  # --dir=/x, PGDATA=/x
            if part.startswith("/") and os.path.exists(part):
                out.append(Path(part))
    return out


def service_socket(cwd: Path, port: int, backend: str) -> Path | None:
    """The Unix socket an instance on ``port`` with working folder ``cwd`` is reached through under
    ``backend``: ``cwd/PORT.sock`` under bubblewrap (its own network namespace), ``None`` elsewhere or when
    that path is too long for a socket (:func:`instance_folder` makes the folder where it is not)."""
    sock = cwd / f"{port}.sock"
    return sock if backend == "bwrap" and len(str(sock)) <= MAX_SOCKET_PATH else None


def instance_folder(port: int, backend: str) -> Path:
    """A fresh private working folder for an instance on ``port`` under ``backend``: in the temp dir,
    or in ``/tmp`` when under bubblewrap the temp dir's would make :func:`service_socket`'s path too long
    for a Unix socket (a long ``TMPDIR``): the instance's port is carried out through that socket, and
    it never gets the host's network instead (hatk35)."""
    cwd = mkdtemp()
    if backend == "bwrap" and service_socket(cwd, port, backend) is None:
        remove_tree(cwd)
        cwd = mkdtemp(dir="/tmp")
    return cwd


def service_argv(command: str, cwd: Path, backend: str, port: int | None = None) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` that start ``command`` (``/bin/sh -c 'exec …'``, ``{port}`` already filled) in
    ``cwd`` (the instance's own folder) under ``backend`` (:func:`service_backend`; module docstring).
    With ``port`` and a :func:`service_socket`, bubblewrap gives it no network but its own loopback and
    ``relay.py serve`` carries ``port`` out through the socket. Raises :class:`~.bwrap.BwrapUnavailable`
    (from :func:`~.bwrap.probe`) when bubblewrap stopped working since it was chosen."""
    host_path = os.environ.get("PATH", "/usr/bin:/bin")
    shell = ["/bin/sh", "-c", "exec " + command]
    if backend == "none":
        return shell, dict(os.environ)
    ro = _paths(command, host_path)
    env = {k: os.environ[k] for k in KEPT_VARS if k in os.environ}
    env.update(PATH=inside_path(host_path, ro), HOME=str(cwd))
    if backend == "bwrap":
        env["TMPDIR"] = "/tmp"
        sock = None if port is None else service_socket(cwd, port, backend)
        if sock is None:  # never the host's network (hatk35): a port is carried out through the socket only
            if port is not None:
                raise BwrapUnavailable(f"the socket path of port {port} in {cwd} is too long for a Unix socket "
                                       f"(over {MAX_SOCKET_PATH} bytes): use a shorter TMPDIR")
            policy = Policy(cwd=cwd, rw=[cwd], ro=ro, env=env, network=False)
            return bwrap_argv(shell, policy, bwrap=probe(), args_fd=True), {}
        relay = serve_argv(sys.executable, port, sock, shell)  # type: ignore[arg-type]  # port is set
        ro += [*python_paths([sys.executable]), Path(relay[3]).parent]
        policy = Policy(cwd=cwd, rw=[cwd], ro=ro, env=env, network=False)
        return bwrap_argv(relay, policy, bwrap=probe(), args_fd=True), {}
    if backend == "landlock":
        env["TMPDIR"] = str(cwd)
        # connect to no port (its own listeners only), bind any port of a loopback address (hatk35; module docstring)
        confined = LandlockPolicy(ro=ro, rw=[cwd], connect=(), bind=None, unix=True)
        return marked(landlock_argv(shell, confined)), env
    raise BwrapUnavailable(f"unknown sandbox backend {backend!r} for a service")

