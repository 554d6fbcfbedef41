"""satk58: no sandbox is given the user's home folder whole.

An agent's client or interpreter is bound read-only at its install prefix: the folder above a ``bin/`` holding its
real file (:meth:`~pytest_homefield.agents.claude.ClaudeAgent.sandbox_paths`,
:func:`~pytest_homefield.sandbox.bwrap.program_paths`, :func:`~pytest_homefield.sandbox.bwrap.python_paths`). A
client whose real file is ``~/bin/claude`` (a wrapper script in the user's ``~/bin``, a binary copied there) made
that prefix the user's home: bubblewrap bound all of it, and an ``--allow-shell`` agent read ``~/.ssh``, the cloud
and forge credentials and every other repository's ``.homefield/`` there (contracts §9: nothing of the user's home
but what ``sandbox_home`` copies). Only a folder holding the repository under benchmark was left out
(:mod:`pytest_homefield.sandbox.protected`); now a read-only path that is the user's home or holds it is left out too.
Since satk60 the client's launcher is bound as its file (``~/bin/claude``), never a folder holding it.

Real bubblewrap and Landlock (each skipped with its probe's reason where it does not work).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.landlock import landlock_abi

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend, LandlockBackend, SandboxBackend
from pytest_homefield.sandbox.bwrap import python_paths
from pytest_homefield.sandbox.procs import run_process

#: What the stand-in client (``~/bin/claude``) runs: the shell command an --allow-shell agent would.
READ_KEY = 'cat "$1" 2>&1; test -r "$0" && echo client-visible\n'


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
def test_a_client_in_the_users_bin_does_not_bind_the_users_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              kind: str) -> None:
    backend: SandboxBackend = BwrapBackend(bwrap_or_skip()) if kind == "bwrap" else LandlockBackend(landlock_abi())
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("PRIVATE KEY of the user\n")
    client = home / "bin" / "claude"
    client.parent.mkdir()
    client.write_text("#!/bin/sh\n" + READ_KEY)
    client.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    agent = ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(), executable=str(client))
    paths = agent.sandbox_paths({})
    assert home not in paths and client in paths  # before satk60: the prefix of ~/bin/claude, the home folder
    ws, tmp, box_home = (tmp_path / n for n in ("ws", "tmp", "box"))
    for d in (ws, tmp, box_home):
        d.mkdir()
    box = AgentBox(workspace=ws, tmpdir=tmp, home=box_home,
                   ro_paths=[*python_paths([sys.executable]), *paths], network=False, agent="c")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(box_home)}
    res = run_process(backend.wrap_agent([str(client), str(key)], env, box).argv, cwd=ws, env=env, timeout_s=60,
                      stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    out = (tmp_path / "out").read_text()
    assert "PRIVATE KEY" not in out, out
    assert "client-visible" in out and res.exit_code == 0, out + (tmp_path / "err").read_text()


def test_the_users_home_is_asked_once_per_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap's and Landlock's policies asked :func:`~.protected.homes` (its ``pwd`` lookup) once per read-only path;
    once per policy now, the same paths left out (the home and what holds it) and kept (what is inside it)."""
    import pwd

    from pytest_homefield.sandbox.bwrap import Policy, bwrap_argv
    from pytest_homefield.sandbox.landlock import LandlockPolicy

    home = tmp_path / "home"
    folders = [home, home / "bin", tmp_path / "a", tmp_path / "b"]
    for f in folders:
        f.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    asked: list[int] = []
    real = pwd.getpwuid
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: asked.append(uid) or real(uid))
    argv = bwrap_argv(["true"], Policy(cwd=tmp_path / "a", ro=folders), masks=False)
    assert len(asked) == 1  # before: 4
    bound = {argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"}
    assert str(home) not in bound and {str(home / "bin"), str(tmp_path / "b")} <= bound, argv
    asked.clear()
    ro = LandlockPolicy(ro=folders).as_json()
    assert len(asked) == 1, asked  # before: one per path, the system paths' included
    assert f'"{home}"' not in ro and f'"{home / "bin"}"' in ro, ro
