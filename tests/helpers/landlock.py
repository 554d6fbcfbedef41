"""Landlock in the tests: the backends a test runs with and without it (the no-sandbox control shows that
an attack works where nothing confines it), the kernel's ABI, or a skip where Landlock does not work, and
:func:`agent_reach`, a script run as an agent's program that says what it could reach."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_homefield.sandbox import bwrap, landlock
from pytest_homefield.sandbox.backends import AgentBox, LandlockBackend, NoSandbox, SandboxBackend
from pytest_homefield.sandbox.landlock import LandlockUnavailable
from pytest_homefield.sandbox.procs import run_process

SANDBOXES = [pytest.param("landlock", id="landlock"), pytest.param("none", id="control-no-sandbox")]


def landlock_abi() -> int:
    """The kernel's Landlock ABI (:func:`~pytest_homefield.sandbox.landlock.probe`); skips the test where
    Landlock does not work, with the probe's reason."""
    try:
        return landlock.probe()
    except LandlockUnavailable as exc:
        pytest.skip(str(exc))


def backend(kind: str, abi: int) -> SandboxBackend:
    """The backend ``kind`` names in :data:`SANDBOXES`: Landlock at ``abi``, or none."""
    return LandlockBackend(abi) if kind == "landlock" else NoSandbox()


#: ``reach(name, fn)`` prints ``name yes`` when ``fn()`` worked, ``name no`` when it raised ``OSError``.
PRELUDE = '''
import ctypes, os, platform, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def reach(name, fn):
    try:
        fn()
        print(name, "yes")
    except OSError as exc:
        print(name, "no")
def check(ret):
    if ret == -1:
        raise OSError(ctypes.get_errno(), "refused")
    return ret
'''


def agent_reach(sandbox: str, abi: int, tmp_path: Path, script: str, *args: str, ports: tuple[int, ...] = (),
                ro: Sequence[Path] = (), timeout_s: float = 60) -> dict[str, str]:
    """``script`` (after :data:`PRELUDE`) run as an agent's program under ``sandbox`` (its workspace
    ``tmp_path/box/ws``, ``TMPDIR``, ``HOME``; the interpreter's and ``ro`` paths read-only; no network but
    ``ports``): the ``name verdict`` lines it printed, as a dict. Fails the test when the program exits
    non-zero."""
    ws, tmp, home = (tmp_path / "box" / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir(parents=True, exist_ok=True)
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=[*bwrap.python_paths([sys.executable]), *ro],
                   network=False, agent="a", ports=ports)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    wrapped = backend(sandbox, abi).wrap_agent([sys.executable, "-c", PRELUDE + script, *args], env, box)
    code = run_process(wrapped.argv, cwd=ws, env=env, timeout_s=timeout_s, stdout_path=tmp_path / "agent.log",
                       stderr_path=tmp_path / "agent.err").exit_code
    text = (tmp_path / "agent.log").read_text()
    assert code == 0, text + (tmp_path / "agent.err").read_text()[-2000:]
    return dict(line.split(" ", 1) for line in text.splitlines())
