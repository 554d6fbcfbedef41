"""satk60: a client's launcher and interpreter are bound as files, never the folder they sit in.

:func:`~pytest_homefield.sandbox.bwrap.program_paths` (a recipe client's install) and
:meth:`~pytest_homefield.agents.claude.ClaudeAgent.sandbox_paths` bound the whole folder of the client's launcher
(the ``PATH`` folder it was found in: ``~/bin``, ``~/.local/bin``, holding the user's other programs and the
secrets scripts there carry), and :func:`~.bwrap.program_paths` the folder above the ``bin/`` of a ``#!``
interpreter whatever it was (``#!/opt/bin/node``: all of ``/opt``, every other vendor's install and credentials
there). An ``--allow-shell`` agent read them all (contracts §9: only what the client needs). Now a launcher outside
its client's install is bound as that file (``PATH`` inside still finds it: :func:`~.bwrap.inside_path` keeps a
folder holding a bound file), and an interpreter outside a prefix of its own as its file.

Real bubblewrap and Landlock (each skipped with its probe's reason where it does not work).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.claude_cli import find_claude
from helpers.home_client import home_prefixed_aider
from helpers.landlock import landlock_abi

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.claude import ClaudeAgent
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend, LandlockBackend, SandboxBackend
from pytest_homefield.sandbox.bwrap import inside_path, program_paths, python_paths
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.tempdirs import owner_tag

#: What the stand-in client runs: the shell command an --allow-shell agent would, then a word saying it ran.
READ = 'cat "$1" 2>&1; echo client-ran\n'


def _backend(kind: str) -> SandboxBackend:
    return BwrapBackend(bwrap_or_skip()) if kind == "bwrap" else LandlockBackend(landlock_abi())


def _run(backend: SandboxBackend, tmp_path: Path, argv: list[str], paths: list[Path], path_var: str) -> str:
    """``argv`` in an agent's sandbox given ``paths`` read-only, its ``PATH`` :func:`inside_path` of
    ``path_var``: what it printed (stdout and stderr)."""
    ws, tmp, box_home = (tmp_path / n for n in ("ws", "tmp", "box"))
    for d in (ws, tmp, box_home):
        d.mkdir(exist_ok=True)
    ro = [*python_paths([sys.executable]), *paths]
    box = AgentBox(workspace=ws, tmpdir=tmp, home=box_home, ro_paths=ro, network=False, agent="c")
    env = {"PATH": inside_path(f"{path_var}:/usr/bin:/bin", ro), "HOME": str(box_home)}
    run_process(backend.wrap_agent(argv, env, box).argv, cwd=ws, env=env, timeout_s=60,
                stdout_path=tmp_path / "out", stderr_path=tmp_path / "err")
    return (tmp_path / "out").read_text() + (tmp_path / "err").read_text()


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
def test_a_linked_claude_launcher_binds_the_link_not_its_path_folder(tmp_path: Path, kind: str) -> None:
    """``~/bin/claude -> <pkg>/bin/claude.exe``: the sandbox got all of ``~/bin`` (before: the token printed)."""
    backend = _backend(kind)
    home_bin = tmp_path / "home" / "bin"
    home_bin.mkdir(parents=True)
    (home_bin / "deploy").write_text("TOKEN=secret-of-the-user\n")
    real = tmp_path / "pkg" / "bin" / "claude.exe"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\n" + READ)
    real.chmod(0o755)
    (home_bin / "claude").symlink_to(real)
    agent = ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(),
                        executable=str(home_bin / "claude"))
    out = _run(backend, tmp_path, ["claude", str(home_bin / "deploy")], agent.sandbox_paths({}), str(home_bin))
    assert "secret-of-the-user" not in out, out
    assert "client-ran" in out, out


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
def test_a_recipe_client_in_a_path_folder_binds_its_file_not_the_folder(tmp_path: Path, kind: str) -> None:
    """A recipe's client found as ``~/bin/codex`` (a file of its own there): :func:`program_paths` gave all of
    ``~/bin`` (before: the token printed)."""
    backend = _backend(kind)
    home_bin = tmp_path / "home" / "bin"
    home_bin.mkdir(parents=True)
    (home_bin / "deploy").write_text("TOKEN=secret-of-the-user\n")
    client = home_bin / "codex"
    client.write_text("#!/bin/sh\n" + READ)
    client.chmod(0o755)
    paths = program_paths("codex", str(home_bin))
    assert home_bin not in paths, paths
    out = _run(backend, tmp_path, ["codex", str(home_bin / "deploy")], paths, str(home_bin))
    assert "secret-of-the-user" not in out, out
    assert "client-ran" in out, out


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
def test_an_interpreter_outside_a_prefix_binds_its_file_not_the_folder_above_bin(tmp_path: Path, kind: str) -> None:
    """A client ``#!<opt>/bin/sh-like`` whose interpreter lies in ``<opt>/bin`` (``/opt/bin/node``):
    :func:`program_paths` bound all of ``<opt>``, another vendor's credentials with it (before: printed)."""
    backend = _backend(kind)
    opt = tmp_path / "opt"
    (opt / "bin").mkdir(parents=True)
    (opt / "vendor").mkdir()
    (opt / "vendor" / "credentials").write_text("vendor-api-key\n")
    interp = opt / "bin" / "shell"
    shutil.copy2(Path(shutil.which("sh") or "/bin/sh").resolve(), interp)
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    client = tools / "gemini"
    client.write_text(f"#!{interp}\n" + READ)
    client.chmod(0o755)
    paths = program_paths("gemini", str(tools))
    assert opt not in paths, paths
    out = _run(backend, tmp_path, ["gemini", str(opt / "vendor" / "credentials")], paths, str(tools))
    assert "vendor-api-key" not in out, out
    assert "client-ran" in out, out


@pytest.mark.parametrize("layout", ["claude", "bin/claude", "bin/claude->versions/2"])
def test_the_real_claude_cli_installed_in_a_home_runs_in_the_sandbox(layout: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Claude Code CLI installed under a (fake) home: ``~/claude`` itself, ``~/bin/claude``, and the native
    installer's link ``~/bin/claude -> ~/versions/2``. The launcher's folder and the real file's were each the
    home or held by it; satk58 dropped every bind holding the home, so ``~/claude`` ran with nothing of it bound
    (before: bubblewrap's ``execvp`` could not find it, exit 127, an attempt spent on an agent error). Bound as its
    files, it answers ``--version``; ``~/.ssh`` stays out. Hard-links the binary (373 MB) into a folder on its
    filesystem; skipped where it cannot."""
    backend = BwrapBackend(bwrap_or_skip())
    found = find_claude()
    if found is None:
        pytest.skip("Claude Code CLI not installed (run .ci/install-claude.sh or set HOMEFIELD_CLAUDE_BIN)")
    binary = Path(os.path.realpath(found))
    with open(binary, "rb") as fh:
        if fh.read(4) != b"\x7fELF":
            pytest.skip("the CLI installed is no native binary")
    with tempfile.TemporaryDirectory(dir=_same_fs_tmp(binary), prefix=f"hf-{owner_tag()}-satk60-") as scratch:
        home = Path(scratch) / "home"
        (home / ".ssh").mkdir(parents=True)
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY of the user\n")
        monkeypatch.setenv("HOME", str(home))  # the user's home, as homefield finds it
        launcher = home / layout.split("->")[0]
        launcher.parent.mkdir(parents=True, exist_ok=True)
        real = home / layout.split("->")[1] if "->" in layout else launcher
        real.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(binary, real)
        except OSError as exc:
            pytest.skip(f"cannot hard-link the CLI near it ({exc})")
        if real != launcher:
            launcher.symlink_to(real)
        agent = ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(), executable=str(launcher))
        paths = agent.sandbox_paths({})
        assert not any(home == p or home.is_relative_to(p) for p in paths), paths
        out = _run(backend, Path(scratch), [str(launcher), "--version"], paths, "")
        assert "Claude Code" in out, out
        out = _run(backend, Path(scratch), ["/bin/sh", "-c", f"cat {home}/.ssh/id_ed25519 2>&1; ls {home}"], paths, "")
        assert "PRIVATE KEY" not in out, out


def _same_fs_tmp(path: Path) -> str:
    """A scratch folder on ``path``'s filesystem: ``/tmp`` when it is there, else ``path``'s folder's parent."""
    return "/tmp" if os.stat("/tmp").st_dev == path.stat().st_dev else str(path.parent.parent)


@pytest.mark.usefixtures("cli_spelling")
def test_a_recipe_client_whose_interpreter_prefix_is_the_home_is_refused_before_the_attempt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recipe client ``#!~/bin/python3.11`` whose Python was installed with ``--prefix=$HOME`` (``~/lib/python3.11``):
    its prefix is the home, which no sandbox gets (satk58), so inside it had its binary and not its standard
    library, and the attempt ran to an empty patch, scored as the agent's (before: outcome ``None``, graded). Now,
    sandboxed, it is ``infra`` before the attempt, one line naming the path; unsandboxed it runs."""
    from helpers.bwrap import bwrap_or_skip as _probe

    from pytest_homefield.agents.base import AgentContext
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.settings import resolve_settings

    bwrap = _probe()
    home = tmp_path / "home"
    (home / "lib" / "python3.11").mkdir(parents=True)
    (home / "lib" / "python3.11" / "os.py").write_text("")
    (home / "bin").mkdir()
    python = home / "bin" / "python3.11"  # a shell under a Python's name: it runs the script below on the host
    shutil.copy2(Path(shutil.which("sh") or "/bin/sh").resolve(), python)
    client = home / "bin" / "aider"
    client.write_text(f"#!{python}\necho edited > done.txt\n")
    client.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    ws.mkdir()
    (aider,) = build_agents(["aider"], resolve_settings(tmp_path, {}))
    env = {"PATH": f"{home / 'bin'}:/usr/bin:/bin", "HOMEFIELD_PROMPT": "x", "TMPDIR": str(tmp_path),
           "HOME": str(home)}
    res = aider.run(AgentContext(workspace=ws, prompt="x", env=dict(env), timeout_s=60, artifacts=tmp_path / "a1",
                                 sandbox=BwrapBackend(bwrap).name))
    assert (res.outcome, res.established) == ("infra", True), res
    assert res.error == (f"cannot sandbox aider: it needs {home}, your home folder, which no sandbox is given "
                         "(install it outside your home, or pass --sandbox none to accept the risk)"), res.error
    assert not (ws / "done.txt").exists()
    res = aider.run(AgentContext(workspace=ws, prompt="x", env=dict(env), timeout_s=60, artifacts=tmp_path / "a2"))
    assert res.outcome is None and (ws / "done.txt").read_text() == "edited\n", res


@pytest.mark.slow
def test_a_run_refuses_a_client_whose_install_is_the_home_once_before_anything_runs(tmp_path: Path) -> None:
    """satk61: the run-wide check (:func:`~pytest_homefield.agents.registry.unstartable`) did not know the sandbox,
    so a recipe client whose interpreter's prefix is the home passed it and every attempt was ``infra``, one by one
    (``cannot sandbox aider: …``), to the end of the run. Now, sandboxed, the run stops first with that one line,
    exit 4 (contracts §8), no run folder; under ``--sandbox none`` the check lets it through."""
    from helpers.e2e_repo import cli_env, git

    bwrap_or_skip()
    home = tmp_path / "home"
    home_prefixed_aider(home)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "test_a.py").write_text("def test_a():\n    pass\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a")
    (repo / ".homefield").mkdir()
    (repo / ".homefield" / "tasks.jsonl").write_text("")
    env = {**cli_env(), "HOME": str(home), "PATH": f"{home / 'bin'}:/usr/bin:/bin"}

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "aider", "-n", "0",
                               *extra], cwd=repo, env=env, capture_output=True, text=True, timeout=120)

    proc = run("--sandbox", "bwrap")
    errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("ERROR:")]
    assert (proc.returncode, errors) == (4, [
        f"ERROR: pytest-homefield: agent 'aider': cannot sandbox aider: it needs {home}, your home folder, which no "
        "sandbox is given (install it outside your home, or pass --sandbox none to accept the risk); nothing was run"
    ]), proc.stdout + proc.stderr
    assert not (repo / ".homefield" / "runs").exists()
    proc = run("--sandbox", "none")
    assert "cannot sandbox" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.usefixtures("cli_spelling")
def test_a_probe_call_refuses_a_client_whose_install_is_the_home_when_sandboxed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """satk61: the probe's call (:meth:`CommandAgent.complete`) checked only that the client was on ``PATH``, not
    ``confined`` as an attempt does: in bubblewrap the client ran without the home its interpreter's prefix is, and
    its empty answer was read as the agent's. Now it is ``infra``, the attempt's one line; unsandboxed it runs."""
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.probe.call_sandbox import ProbeSandboxes
    from pytest_homefield.settings import resolve_settings

    bwrap_or_skip()
    home = tmp_path / "home"
    home_prefixed_aider(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / 'bin'}:/usr/bin:/bin")
    (aider,) = build_agents(["aider"], resolve_settings(tmp_path, {}))
    done = aider.complete("x", timeout_s=60, sandbox=ProbeSandboxes(resolve_settings(tmp_path, {"sandbox": "bwrap"})))
    assert (done.outcome, done.established) == ("infra", True), done
    assert done.error == (f"cannot sandbox aider: it needs {home}, your home folder, which no sandbox is given "
                          "(install it outside your home, or pass --sandbox none to accept the risk)"), done.error
    done = aider.complete("x", timeout_s=60, sandbox=ProbeSandboxes(resolve_settings(tmp_path, {"sandbox": "none"})))
    assert done.error != (f"cannot sandbox aider: it needs {home}, your home folder, which no sandbox is given "
                          "(install it outside your home, or pass --sandbox none to accept the risk)"), done


def _npm_global(prefix: Path) -> Path:
    """``prefix`` laid out as npm's global install (``npm i -g``): ``bin/``, and ``lib/node_modules/`` holding another
    vendor's package with its credentials. Returns that credentials file."""
    (prefix / "bin").mkdir(parents=True)
    other = prefix / "lib" / "node_modules" / "other-vendor"
    other.mkdir(parents=True)
    (other / "credentials").write_text("other-vendor-api-key\n")
    return other / "credentials"


def test_a_node_client_in_npm_global_folder_binds_its_package_not_the_folder(tmp_path: Path) -> None:
    """ops62: a client ``npm i -g`` put in ``<opt>/lib/node_modules`` (``#!/usr/bin/env node``, ``node`` in
    ``<opt>/bin``) had all of ``<opt>/lib/node_modules`` bound, twice (the outermost ``node_modules`` above it, and
    ``<opt>/lib/node*`` of its interpreter): every other global package, another vendor's credentials with it
    (before: that folder bound). Now its package folder and node's file: the client runs, the credentials are not
    there."""
    backend = BwrapBackend(bwrap_or_skip())
    node = Path(shutil.which("node") or "/nonexistent").resolve()
    if not node.is_file():
        pytest.skip("no node here")
    with tempfile.TemporaryDirectory(dir=_same_fs_tmp(node), prefix=f"hf-{owner_tag()}-ops62-") as scratch:
        opt = Path(scratch) / "opt"
        secret = _npm_global(opt)
        try:
            os.link(node, opt / "bin" / "node")  # node's own file under the prefix, as an install there has it
        except OSError as exc:
            pytest.skip(f"cannot hard-link node near it ({exc})")
        package = opt / "lib" / "node_modules" / "@scope" / "cli"
        (package / "bin").mkdir(parents=True)
        js = package / "bin" / "cli.js"
        js.write_text("#!/usr/bin/env node\nconst fs = require('fs');\n"
                      "try { console.log(fs.readFileSync(process.argv[2], 'utf8')) } catch (x) { console.log('no') }\n"
                      "console.log('client-ran')\n")
        js.chmod(0o755)
        (opt / "bin" / "cli").symlink_to("../lib/node_modules/@scope/cli/bin/cli.js")
        paths = program_paths("cli", str(opt / "bin"))
        assert paths == [opt / "bin" / "cli", js, opt / "bin" / "node", package], paths
        out = _run(backend, Path(scratch), ["cli", str(secret)], paths, str(opt / "bin"))
        assert "other-vendor-api-key" not in out, out
        assert "client-ran" in out, out


def test_the_real_claude_cli_in_npm_global_folder_starts_with_its_package_alone() -> None:
    """ops62: the real Claude Code CLI laid out as ``npm i -g`` puts it (``<opt>/bin/claude ->
    ../lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe``, its package hard-linked from the one installed):
    :func:`program_paths` binds its package folder, not all of ``lib/node_modules`` (before: all of it, the other
    vendor's credentials with it), and the CLI still answers ``--version`` in the sandbox."""
    backend = BwrapBackend(bwrap_or_skip())
    found = find_claude()
    if found is None:
        pytest.skip("Claude Code CLI not installed (run .ci/install-claude.sh or set HOMEFIELD_CLAUDE_BIN)")
    real = Path(os.path.realpath(found))
    installed = real.parent.parent
    if installed.name != "claude-code" or installed.parent.name != "@anthropic-ai":
        pytest.skip("the CLI installed is no npm package")
    with tempfile.TemporaryDirectory(dir=_same_fs_tmp(real), prefix=f"hf-{owner_tag()}-ops62-") as scratch:
        opt = Path(scratch) / "opt"
        secret = _npm_global(opt)
        package = opt / "lib" / "node_modules" / "@anthropic-ai" / "claude-code"
        package.parent.mkdir(parents=True)
        if subprocess.run(["cp", "-al", str(installed), str(package)], capture_output=True).returncode != 0:
            pytest.skip("cannot hard-link the CLI's package near it")
        rel = real.relative_to(installed)
        (opt / "bin" / "claude").symlink_to(Path("../lib/node_modules/@anthropic-ai/claude-code") / rel)
        paths = program_paths("claude", str(opt / "bin"))
        assert opt / "lib" / "node_modules" not in paths and package in paths, paths
        out = _run(backend, Path(scratch), ["claude", "--version"], paths, str(opt / "bin"))
        assert "Claude Code" in out, out
        out = _run(backend, Path(scratch), ["/bin/sh", "-c", f"cat {secret} 2>&1"], paths, str(opt / "bin"))
        assert "other-vendor-api-key" not in out, out
