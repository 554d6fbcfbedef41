"""The sandbox backends behind one interface (:mod:`pytest_homefield.sandbox.backends`): bubblewrap,
no sandbox and the conftest hook wrap agent programs and test runs alike; the choice is made once;
a hook that wraps test runs is what grading records (``test_sandbox: hook``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import GOOD_CALC, WRONG_CALC, build, script_agent, task_for
from helpers.templates import load_template

import pytest_homefield.sandbox.backends as backends
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.runner import AttemptRunner
from pytest_homefield.sandbox import host_uids
from pytest_homefield.sandbox.backends import (
    AgentBox,
    BwrapBackend,
    HookBackend,
    LandlockBackend,
    NoSandbox,
    SandboxBackend,
    SandboxContext,
    Sandboxes,
    TestBox,
)
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.landlock import LandlockUnavailable
from pytest_homefield.sandbox.landlock import probe as landlock_probe
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.proccap import split_mark
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.proxy import Allowlist, FilteringProxy
from pytest_homefield.sandbox.relay import HostRelay
from pytest_homefield.settings import Settings


def bare(argv: list[str]) -> list[str]:
    """``argv`` without the reaper's marks in front: the pids cgroup's (``split_mark``) and a host uid's
    (``host_uids.OWN_MARK``, root's default since satk52)."""
    rest = split_mark(argv)[1]
    return rest[1:] if rest and rest[0].startswith(host_uids.OWN_MARK) else rest


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def _tagging_hook(calls: list[SandboxContext]) -> Any:
    def hook(argv: list[str], ctx: SandboxContext) -> list[str]:
        calls.append(ctx)
        return ["env", "HF_HOOKED=1", *argv]
    return hook


def _backend(kind: str, calls: list[SandboxContext]) -> SandboxBackend:
    if kind == "bwrap":
        return BwrapBackend(_bwrap())
    if kind == "landlock":
        try:
            return LandlockBackend(landlock_probe())
        except LandlockUnavailable as exc:
            pytest.skip(str(exc))
    if kind == "none":
        return NoSandbox()
    return HookBackend(_tagging_hook(calls), NoSandbox())


def _run(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> int | None:
    return run_process(argv, cwd=cwd, env=env, timeout_s=60, stdout_path=log).exit_code


@pytest.mark.parametrize("kind", ["bwrap", "landlock", "none", "hook"])
def test_backends_wrap_agents_and_test_runs_through_one_interface(tmp_path: Path, kind: str) -> None:
    """Every backend: an agent's program writes its workspace, a test run writes its out dir, and the
    wrapped command says which backend applied; bubblewrap and Landlock alone keep the test run's copy
    read-only."""
    calls: list[SandboxContext] = []
    backend = _backend(kind, calls)
    ws, tmp, home, out = (tmp_path / n for n in ("ws", "tmp", "home", "out"))
    for d in (ws, tmp, home, out):
        d.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=[Path(sys.base_prefix)], network=False, agent="a")
    wrapped = backend.wrap_agent(["/bin/sh", "-c", "echo agent > made; echo ${HF_HOOKED:-0}"], env, box)
    assert wrapped.backend == kind
    assert _run(wrapped.argv, ws, env, tmp_path / "agent.log") == 0
    assert (ws / "made").read_text() == "agent\n"
    assert (tmp_path / "agent.log").read_text().strip() == ("1" if kind == "hook" else "0")

    tbox = TestBox(workdir=ws, out_dir=out, python=sys.executable)
    cmd = ["/bin/sh", "-c", f"echo tests > {out}/ran; (echo x > {ws}/written) 2>/dev/null; true"]
    wrapped = backend.wrap_tests(cmd, env, tbox)
    assert wrapped.backend == kind
    assert _run(wrapped.argv, ws, env, tmp_path / "tests.log") == 0
    assert (out / "ran").read_text() == "tests\n"
    assert (ws / "written").exists() is (kind not in ("bwrap", "landlock"))
    if kind == "hook":
        assert [c.purpose for c in calls] == ["agent", "tests"]
        tests = calls[1]
        assert tests.workspace == ws and tests.out_dir == out and tests.network is False
        assert Path(sys.base_prefix) in tests.ro_paths and ws not in tests.ro_paths


def test_hook_returning_none_falls_back_to_the_configured_backend(tmp_path: Path) -> None:
    exe = _bwrap()
    hooked = HookBackend(lambda argv, ctx: None, BwrapBackend(exe))
    (tmp_path / "ws").mkdir()
    w = hooked.wrap_tests(["true"], {"PATH": "/usr/bin"}, TestBox(workdir=tmp_path / "ws", out_dir=tmp_path / "o"))
    assert w.backend == "bwrap" and bare(w.argv)[0] == exe  # behind the pids cgroup's mark and a host uid's, if any
    assert hooked.configured == "bwrap" and hooked.name == "hook"


def _attempt(tmp_path: Path, hook: Any, mode: str) -> tuple[Any, AttemptSpec]:
    fx = build(tmp_path / "repo")
    agent = script_agent(tmp_path / "a", {"src/calc/__init__.py": GOOD_CALC})
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=task_for(fx), agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",
                           timeout_s=60, sandbox=SandboxChoice(mode), sandbox_hook=hook)
        return run_attempt(spec, cache), spec
    finally:
        cache.close()


def test_a_hook_that_wraps_test_runs_is_called_for_grading(tmp_path: Path) -> None:
    calls: list[SandboxContext] = []
    r, _ = _attempt(tmp_path, _tagging_hook(calls), "none")
    assert r.outcome == "solved", r
    assert r.sandbox == "hook" and r.test_sandbox == "hook"
    purposes = [c.purpose for c in calls]
    assert purposes[0] == "agent" and "tests" in purposes


def test_a_hook_returning_none_for_tests_leaves_grading_in_bubblewrap(tmp_path: Path) -> None:
    _bwrap()
    calls: list[SandboxContext] = []

    def agents_only(argv: list[str], ctx: SandboxContext) -> list[str] | None:
        calls.append(ctx)
        return ["env", "HF_HOOKED=1", *argv] if ctx.purpose == "agent" else None

    r, _ = _attempt(tmp_path, agents_only, "bwrap")
    assert r.outcome == "solved", r
    assert r.sandbox == "hook" and r.test_sandbox == "bwrap"
    assert "tests" in [c.purpose for c in calls]


@pytest.mark.slow
def test_the_choice_is_made_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One probe of bubblewrap for a session's attempts: the runner's specs share one choice, and
    attempts run with it never probe again."""
    exe = _bwrap()
    probes: list[None] = []

    def counting_probe(bwrap: str | None = None) -> str:
        probes.append(None)
        return exe

    monkeypatch.setattr(backends, "probe", counting_probe)
    fx = build(tmp_path / "repo")
    runner = AttemptRunner(Settings(root=fx.root, sandbox="auto"), [], run_id="r", results=tmp_path / "r.jsonl",
                           folder=lambda variant: tmp_path / "run", session_start="2026-01-01T00:00:00+00:00",
                           budget_usd=None)
    agents = [script_agent(tmp_path / f"a{i}", {"src/calc/__init__.py": WRONG_CALC}, name=f"a{i}") for i in (1, 2)]
    try:
        specs = [runner.spec(task_for(fx), agent, 1) for agent in agents]
        assert specs[0].sandboxes is specs[1].sandboxes is runner.sandboxes
        results = [runner.run(spec) for spec in specs]
    finally:
        runner.cache.close()
    assert [r.sandbox for r in results] == ["bwrap", "bwrap"] and [r.test_sandbox for r in results] == ["bwrap"] * 2
    assert len(probes) == 1


def test_no_sandbox_mode_never_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_probe(bwrap: str | None = None) -> str:
        raise AssertionError("probed")

    monkeypatch.setattr(backends, "probe", failing_probe)
    chosen = Sandboxes.choose(SandboxChoice("none"))
    assert chosen.for_tests().name == "none"


def test_without_bubblewrap_a_hook_wraps_over_no_sandbox() -> None:
    """``--sandbox bwrap`` where it does not work: refused without a hook, the hook over nothing with one."""
    broken = Sandboxes(SandboxChoice("bwrap"), None, None, "bubblewrap (bwrap) is not installed")
    with pytest.raises(BwrapUnavailable, match="not installed"):
        broken.for_tests()
    hooked = Sandboxes(SandboxChoice("bwrap"), lambda argv, ctx: None, None, "bubblewrap (bwrap) is not installed")
    backend = hooked.for_tests()
    assert backend.name == "hook" and backend.configured == "none"


def test_template_mounts_a_test_run_read_only(tmp_path: Path) -> None:
    ctx = SandboxContext(workspace=tmp_path / "ws", tmpdir=tmp_path / "out", home=tmp_path / "out", env={},
                         network=False, ro_paths=[], agent="", purpose="tests", out_dir=tmp_path / "out")
    argv = load_template("sandbox_container.py").container_argv(["sh", "-c", "true"], ctx, engine="podman", image="/")
    assert f"{tmp_path / 'ws'}:{tmp_path / 'ws'}:ro" in argv and f"{tmp_path / 'out'}:{tmp_path / 'out'}:rw" in argv
    assert not any(a.endswith(":rw") and a.startswith(str(tmp_path / "ws")) for a in argv)
    assert argv[-5:] == ["--rootfs", "/", "sh", "-c", "true"] and argv[argv.index("--network") + 1] == "none"


def test_template_leaves_allowlisted_agents_to_bubblewrap(tmp_path: Path) -> None:
    """Issue 30: the container template gave every allowlisted agent ``--network host`` (podman and
    docker filter no host names). An agent with allowed hosts is now left to bubblewrap, whose filtering
    proxy holds the list; an allowlist of nothing is a container without network."""
    exe = _bwrap()
    mod = load_template("sandbox_container.py")
    hooked = HookBackend(lambda argv, ctx: mod.pytest_homefield_sandbox(argv=argv, ctx=ctx), BwrapBackend(exe))
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    boxes = []
    for hosts in (["api.example.com:443"], []):
        relay = HostRelay((), tmp_path / f"net{len(hosts)}")
        proxy = FilteringProxy(Allowlist.of(hosts), tmp_path / f"proxy{len(hosts)}.log")
        boxes.append(AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=[], network=False, agent="a",
                              relay=relay, proxy=proxy))
    try:
        listed = hooked.wrap_agent(["true"], env, boxes[0])
        assert listed.backend == "bwrap" and bare(listed.argv)[0] == exe and "--unshare-net" in listed.argv
        assert any(a.startswith("HTTPS_PROXY") or a == "HTTPS_PROXY" for a in listed.argv)
        empty = hooked.wrap_agent(["true"], env, boxes[1])
        assert empty.backend == "hook" and empty.argv[empty.argv.index("--network") + 1] == "none"
    finally:
        for box in boxes:
            assert box.proxy is not None and box.relay is not None
            box.proxy.close()
            box.relay.close()


def _container_engine() -> str:
    """podman that can run a container from the host's root file system (no image to pull), else skip
    with what is missing or what failed."""
    exe = shutil.which("podman")
    if exe is None:
        pytest.skip("podman is not installed (the --rootfs test needs no image; docker needs a pulled one)")
    proc = subprocess.run([exe, "run", "--rm", "--rootfs", "/", "/bin/true"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        pytest.skip(f"podman run --rootfs / cannot run a container here: {why[:200]}")
    return exe


def test_template_grades_in_a_real_container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The template's hook wraps the agent and the grading of a real attempt (podman, the host's root
    file system read-only): both record ``hook`` and the attempt is graded as without it."""
    engine = _container_engine()
    monkeypatch.setenv("HOMEFIELD_CONTAINER", engine)
    monkeypatch.setenv("HOMEFIELD_CONTAINER_IMAGE", "/")
    mod = load_template("sandbox_container.py")
    r, _ = _attempt(tmp_path, lambda argv, ctx: mod.pytest_homefield_sandbox(argv=argv, ctx=ctx), "none")
    assert r.outcome == "solved" and r.sandbox == "hook" and r.test_sandbox == "hook", r
