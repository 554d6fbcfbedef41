"""Issue 30, atk24: one sandbox starved another of the CPU. Agents work together (the phase lock keeps only
agents apart from gradings), and the kernel shared the CPU between sessions (autogroups) or threads, never
between sandboxes: a ``cmd:`` agent that fixed its task, then spun in 300 processes each in a session of its
own until just before its timeout, left the honest agent beside it 2/301 of the machine's two cores. On the
many-tasks fixture (7 tasks × 3 attempts, ``-n 2``, ``--timeout 30``) the honest agent's attempts went from 3 s
(p50) to 28 s, at its own timeout's edge; with the default 900 s timeout any agent that needs more than a few
seconds of CPU fails there, scored. Every sandbox now gets a cpu cgroup of its own at the default weight
where one can be made (root: cgroup v1 ``cpu``), so a sandbox gets its share however many processes or
sessions the one beside it runs. The attack (:data:`HOG_PY`) lives here: the victim got 0.008 of a core before,
0.22-0.34 on a loaded machine now."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import proccap
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, Policy, bwrap_argv, probe
from pytest_homefield.sandbox.procs import run_process

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
#: Spinning processes of the hog, each in a session of its own, for at most this many seconds.
HOG_N, HOG_S = 200, 60.0
#: The hog: ``HOG_N`` children, each ``setsid`` (an autogroup each where the kernel has them), spinning until the
#: file ``stop`` beside it appears (the sandbox then ends, and its PID namespace with every child).
HOG_PY = f"""import os, time
end = time.time() + {HOG_S}
for _ in range({HOG_N}):
    if os.fork() == 0:
        os.setsid()
        while time.time() < end:
            pass
        os._exit(0)
print("hog", flush=True)
while time.time() < end and not os.path.exists(os.path.join(os.path.dirname(__file__), "stop")):
    time.sleep(0.1)
"""
#: The victim: spins for 3 s of wall time and prints the share of a core it got.
VICTIM_PY = """import time
t0, c0 = time.monotonic(), time.process_time()
while time.monotonic() - t0 < 3.0:
    pass
print(round((time.process_time() - c0) / (time.monotonic() - t0), 3), flush=True)
"""


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def test_a_sandbox_spinning_in_many_sessions_leaves_the_one_beside_it_its_share(tmp_path: Path) -> None:
    if proccap.cpu_root() is None:
        pytest.skip("needs a writable cpu cgroup (root with cgroup v1 cpu, or a delegated v2 subtree)")
    exe, python3 = _bwrap(), shutil.which("python3", path="/usr/bin:/bin")
    if python3 is None:
        pytest.skip("no system python3")
    outs = {}
    for name, code in (("hog", HOG_PY), ("victim", VICTIM_PY)):
        (tmp_path / f"{name}.py").write_text(code)
        outs[name] = tmp_path / f"{name}.out"

    def run(name: str) -> None:
        policy = Policy(cwd=tmp_path, ro=[tmp_path], owned=[tmp_path])  # owned: a host uid of its own reads it
        argv = bwrap_argv([python3, str(tmp_path / f"{name}.py")], policy, bwrap=exe, args_fd=True)
        run_process(argv, cwd=tmp_path, env=ENV, timeout_s=90, stdout_path=outs[name])

    hog = threading.Thread(target=run, args=("hog",))
    hog.start()
    deadline = time.monotonic() + 20
    while "hog" not in (outs["hog"].read_text() if outs["hog"].exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        run("victim")
    finally:
        (tmp_path / "stop").touch()
        hog.join()
    share = float(outs["victim"].read_text())
    # before: 0.008 of a core (2 cores among 201 sessions); now one share against the hog's one, 0.22-0.34 of a
    # core measured while other sessions loaded this 2-core machine (about 1.0 when idle)
    assert share >= 0.1, f"the victim's sandbox got {share:.3f} of a core beside {HOG_N} spinning sessions"


def test_the_mark_carries_a_cpu_cgroup_and_the_sweep_looks_there(tmp_path: Path) -> None:
    """Every sandbox's argv (the mark) gets the reaper's ``cpu=ROOT`` where a cpu cgroup can be made, and a
    killed reaper's cgroup there is swept."""
    root = proccap.cpu_root()
    if root is None:
        pytest.skip("needs a writable cpu cgroup")
    options, rest = proccap.split_mark(proccap.marked(["true"]))
    assert rest == ["true"] and f"cpu={root}" in options
    left = root / f"{proccap.CGROUP_PREFIX}999999999-1"  # no such reaper
    left.mkdir()
    try:
        assert left in proccap.sweep_cgroups() and not left.exists()
    finally:
        if left.exists():
            left.rmdir()


def test_the_header_says_where_no_cpu_cgroup_can_be_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a cpu cgroup the sandboxes compete as sessions: ``meta.json`` says which sandboxes get one and the
    header has one line naming those that do not (as for the pids and memory caps)."""
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.run.runner import sandbox_summary
    from pytest_homefield.settings import resolve_settings

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    settings = resolve_settings(tmp_path, {"sandbox": "bwrap"})
    agents = build_agents(["cmd:true", "oracle"], settings)
    monkeypatch.setattr(proccap, "cpu_root", lambda: Path("/sys/fs/cgroup/cpu"))
    summary = sandbox_summary(settings, agents)
    assert summary["cpu_cgroup"] == {"agents": {"cmd": True, "oracle": False}, "tests": True}
    assert summary["no_cpu_share"] is None
    monkeypatch.setattr(proccap, "cpu_root", lambda: None)
    summary = sandbox_summary(settings, agents)
    assert summary["cpu_cgroup"] == {"agents": {"cmd": False, "oracle": False}, "tests": False}
    line = summary["no_cpu_share"]
    assert line.startswith("homefield: no CPU share for agent cmd, test runs (") and "oracle" not in line
    assert line.endswith("-n 1 runs one attempt at a time")
