"""The ``pytest_homefield_sandbox(argv, ctx)`` hook and the podman/docker conftest template (issue 15)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import WRONG_CALC, build, script_agent, task_for
from helpers.templates import load_template

from pytest_homefield.run.attempt import AttemptSpec, SandboxContext, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice


@pytest.mark.slow
def test_hook_wraps_the_agent_command(tmp_path: Path) -> None:
    """A hook's argv is what runs (here: ``env`` adding a variable), the hook gets the attempt's
    folders, and the result records ``sandbox: hook``; bubblewrap is then not needed."""
    fx = build(tmp_path / "repo")
    task = task_for(fx)
    seen: list[SandboxContext] = []

    def hook(argv: list[str], ctx: Any) -> list[str]:
        seen.append(ctx)
        return ["env", "HF_WRAPPED=yes", *argv]

    agent = script_agent(tmp_path / "a", {"src/calc/__init__.py": WRONG_CALC}, "echo wrapped=$HF_WRAPPED")
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                           sandbox=SandboxChoice("none"), sandbox_hook=hook)
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert r.sandbox == "hook" and r.outcome == "tests_failed", r
    assert "wrapped=yes" in (spec.artifacts / "agent.out").read_text()
    ctx = seen[0]
    assert ctx.purpose == "agent" and ctx.agent == "attack" and ctx.network is not None
    assert ctx.env["HOME"] == str(ctx.home) and ctx.env["TMPDIR"] == str(ctx.tmpdir)
    assert Path(sys.base_prefix) in ctx.ro_paths


def test_template_builds_a_container_command(tmp_path: Path) -> None:
    mod = load_template("sandbox_container.py")
    ctx = SandboxContext(workspace=tmp_path / "ws", tmpdir=tmp_path / "tmp", home=tmp_path / "home",
                         env={"HOMEFIELD_PROMPT": "fix it", "PATH": "/usr/bin"}, network=False,
                         ro_paths=[Path(sys.base_prefix)], agent="a")
    argv = mod.container_argv(["sh", "-c", "true"], ctx, engine="podman", image="img")
    assert argv[:3] == ["podman", "run", "--rm"] and argv[-4:] == ["img", "sh", "-c", "true"]
    assert "--network" in argv and argv[argv.index("--network") + 1] == "none"
    assert f"{tmp_path / 'ws'}:{tmp_path / 'ws'}:rw" in argv
    assert f"{sys.base_prefix}:{sys.base_prefix}:ro" in argv
    assert "HOMEFIELD_PROMPT=fix it" in argv and not any(a.startswith("PATH=") for a in argv)


@pytest.mark.parametrize("engine", ["podman", "docker"])
def test_template_runs_in_a_real_container(tmp_path: Path, engine: str) -> None:
    exe = shutil.which(engine)
    if exe is None:
        pytest.skip(f"{engine} is not installed")
    info = subprocess.run([exe, "info"], capture_output=True, text=True, timeout=30)
    if info.returncode != 0:
        why = (info.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"{engine} cannot run containers here: {why[:200]}")
    images = subprocess.run([exe, "image", "ls", "-q", "python:3.12-slim"], capture_output=True, text=True)
    if not images.stdout.strip():
        pytest.skip(f"{engine}: image python:3.12-slim is not pulled (no registry access in tests)")
    mod = load_template("sandbox_container.py")
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = SandboxContext(workspace=ws, tmpdir=tmp_path, home=tmp_path, env={}, network=False, ro_paths=[],
                         agent="a")
    argv = mod.container_argv(["sh", "-c", "echo inside > out; ls /work 2>&1 || true"], ctx, engine=exe,
                              image="python:3.12-slim")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "out").read_text().strip() == "inside"
