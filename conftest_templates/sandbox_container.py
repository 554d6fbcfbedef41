"""conftest.py template: run every agent and every grading test run in a podman or docker container
instead of bubblewrap.

Copy this file to your repository's root ``conftest.py`` (or merge it into yours). pytest-homefield
calls ``pytest_homefield_sandbox(argv, ctx)`` for each agent program it starts (``ctx.purpose ==
"agent"``) and for each test run of grading (``ctx.purpose == "tests"``); returning an argv replaces
its own bubblewrap sandbox, and the attempt records ``sandbox: hook`` / ``test_sandbox: hook``.

A test run's container sees the grading copy read-only (``ctx.workspace``), its out dir read-write
(``ctx.out_dir``: outcomes, log, pytest cache) and the interpreter, this package and its reporter
read-only (``ctx.ro_paths``), with no network. The image must hold the repository's test
dependencies (or mount them: they are in ``ctx.ro_paths`` when they are the interpreter's).

The container sees only the attempt's workspace, its ``TMPDIR`` and a fresh ``HOME`` (read-write,
at the same paths) and the read-only paths the agent needs (interpreter, client); the network is
off unless the agent needs its API (``--sandbox-network``; ``loopback:PORT`` is relayed by
bubblewrap only: here it means no network). Under ``--sandbox-network allowlist`` (the default) an
agent that may reach some hosts (``ctx.allowed_hosts``: its provider's, ``--allow-host``'s) is left
to bubblewrap, whose filtering proxy holds the allowlist (its attempts record ``sandbox: bwrap``):
podman and docker filter no host names, and ``--network host`` would give the agent every host; an
allowlist of nothing is a container without network. ``HOMEFIELD_CONTAINER_IMAGE`` picks the
image (default ``python:3.12-slim``: it must hold the agent's client); an absolute path there is a
root file system for podman's ``--rootfs`` (``/`` runs the host's own, read-only, with no pulled
image). ``HOMEFIELD_CONTAINER`` picks the engine (``podman`` if installed, else ``docker``). Podman
runs rootless without a daemon; docker needs its daemon.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

#: Environment variables the container does not get from the host (its own image sets them).
SKIP_ENV = ("PATH", "HOME", "SHELL", "TERM")


def container_argv(argv: list[str], ctx: Any, *, engine: str, image: str) -> list[str]:
    """``ENGINE run --rm -i …`` that runs ``argv`` in ``image`` (an absolute path: ``--rootfs``) with
    the attempt's folders mounted: an agent's workspace, ``TMPDIR`` and ``HOME`` read-write; a test
    run's copy read-only and its out dir read-write. The host's network only when ``ctx.network`` and
    no allowlist (``ctx.allowed_hosts``) narrows it: a container cannot hold one, so it gets none."""
    shared = ctx.network and not getattr(ctx, "allowed_hosts", ())
    out = [engine, "run", "--rm", "-i", "--init", "--workdir", str(ctx.workspace),
           "--network", "host" if shared else "none", "--security-opt", "no-new-privileges",
           "--cap-drop", "ALL", "--pids-limit", "512"]
    if ctx.purpose == "tests":
        out += ["--volume", f"{ctx.workspace}:{ctx.workspace}:ro", "--volume", f"{ctx.out_dir}:{ctx.out_dir}:rw"]
    else:
        for path in (ctx.workspace, ctx.tmpdir, ctx.home):
            out += ["--volume", f"{path}:{path}:rw"]
    for path in ctx.ro_paths:
        if os.path.exists(path):
            out += ["--volume", f"{path}:{path}:ro"]
    for key, value in ctx.env.items():
        if key not in SKIP_ENV:
            out += ["--env", f"{key}={value}"]
    out += ["--env", f"HOME={ctx.home}"]
    if os.path.isabs(image):
        return [*out, "--read-only", "--rootfs", image, *argv]
    return [*out, image, *argv]


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_sandbox(argv: list[str], ctx: Any) -> list[str] | None:
    if ctx.purpose == "agent" and getattr(ctx, "allowed_hosts", ()):
        return None  # bubblewrap's filtering proxy holds the allowlist; a container cannot (module docstring)
    engine = os.environ.get("HOMEFIELD_CONTAINER") or shutil.which("podman") or shutil.which("docker")
    if not engine:
        raise pytest.UsageError("sandbox_container.py: neither podman nor docker is installed")
    return container_argv(argv, ctx, engine=engine,
                          image=os.environ.get("HOMEFIELD_CONTAINER_IMAGE", "python:3.12-slim"))
