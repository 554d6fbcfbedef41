"""Issue 30, atk20's F3: memory was bounded per process only (``RLIMIT_AS``), so a test process held 5000 MiB in
``memfd_create`` files (no address space once unmapped) past its 4096 MiB cap, and an agent had no bound at all;
the kernel's OOM killer could then kill homefield's own worker (``infra``, unscored, and other agents' attempts
too). Every sandbox now gets a memory cgroup of its own where one can be made (root: this machine's cgroup v1
``memory`` hierarchy, under homefield's own cgroup), so the OOM kill lands inside it. Each hog here is bounded
(:data:`HOG_MIB` against a :data:`CAP_MIB` cap; before the cgroup it held all of it), then a small one passes."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cgroups import orphans
from helpers.landlock import landlock_abi

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.run.agent_sandbox import agent_wrapper
from pytest_homefield.sandbox import proccap
from pytest_homefield.sandbox.backends import BwrapBackend, LandlockBackend
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe, python_paths
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.testrun import TEST_MEMORY_MB, run_tests

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
#: The sandbox's cap (MiB) and the hog that goes over it, then the one that stays under it.
CAP_MIB, HOG_MIB, SMALL_MIB = 256, 600, 100
#: The hog: MiB written into memfds of 32 MiB each (shared memory, charged to the cgroup; no address space, so
#: ``RLIMIT_AS`` never sees it, and no file over ``RLIMIT_FSIZE``), then, with a second argument, a one-case JUnit
#: report naming it passed.
HOG_PY = """import os, sys
fds, block = [], b"x" * (1 << 20)
for i in range(int(sys.argv[1])):
    if i % 32 == 0:
        fds.append(os.memfd_create("hog"))
    os.write(fds[-1], block)
print("held", sys.argv[1], "MiB", flush=True)
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write('<testsuite><testcase classname="t" name="test_hog"/></testsuite>')
"""


@pytest.fixture(autouse=True)
def memory_cgroup() -> None:
    if proccap.memory_root() is None:
        pytest.skip("needs a writable memory cgroup (root with cgroup v1 memory, or a delegated v2 subtree)")


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def _orphans(since: float) -> set[str]:
    """The sandboxes' memory cgroups made since ``since`` whose reaper is gone (:func:`helpers.cgroups.orphans`)."""
    return orphans(proccap.memory_root(), since)


@pytest.fixture
def agent_cap() -> Iterator[None]:
    """This process's agents get a :data:`CAP_MIB` memory cgroup for the test (``--max-agent-memory-mb``)."""
    before = proccap.agent_memory_bytes() / (1 << 20)
    proccap.configure(proccap.max_procs(), CAP_MIB)
    yield
    proccap.configure(proccap.max_procs(), before)


def test_a_test_run_over_its_memory_is_killed_inside_and_says_why(tmp_path: Path) -> None:
    """Grading's and mining's runs (``run_tests`` in bubblewrap, ``max_test_memory_mb`` 256): the hog's process
    is killed by the kernel in its sandbox's cgroup, the run fails naming the cap (a failed grade's error ends
    with it: ``tests_failed``, scored); a run of 100 MiB passes. Before: the 600 MiB hog passed."""
    since = time.time()
    work = tmp_path / "work"
    work.mkdir()
    (work / "hog.py").write_text(HOG_PY)
    runs = {mib: run_tests(work, f"{sys.executable} hog.py {mib} {{junit}}", [], out_dir=tmp_path / f"out{mib}",
                           timeout_s=60, sandbox=BwrapBackend(_bwrap()), memory_mb=CAP_MIB)
            for mib in (HOG_MIB, SMALL_MIB)}
    over, small = runs[HOG_MIB], runs[SMALL_MIB]
    assert over.sandbox == "bwrap" and not over.finished and over.outcomes == {}, over
    assert over.over_memory == f"the kernel killed a test process (1 OOM kill): its sandbox went over its memory " \
                               f"cap of {CAP_MIB} MiB (max_test_memory_mb)"
    assert over.cap_note() == over.over_memory
    assert small.outcomes == {"t::test_hog": "passed"} and small.over_memory is None, small
    assert not _orphans(since)


def test_an_agent_over_its_memory_is_killed_inside_and_is_agent_error(tmp_path: Path, agent_cap: None) -> None:
    """A ``cmd:`` agent in bubblewrap (``--max-agent-memory-mb`` 256): the kernel kills its hog inside the
    sandbox, the attempt is ``agent_error`` naming the cap (never ``infra``); a 100 MiB one is graded as usual.
    Before: the 600 MiB hog ran to its end, graded."""
    since = time.time()
    exe, python3 = _bwrap(), shutil.which("python3", path="/usr/bin:/bin")
    if python3 is None:
        pytest.skip("no system python3")
    results = {}
    for mib in (HOG_MIB, SMALL_MIB):
        root = tmp_path / str(mib)
        ws, home = root / "ws", root / "home"
        for folder in (ws, home, root / "tmp"):
            folder.mkdir(parents=True)
        (ws / "hog.py").write_text(HOG_PY)
        command = f"{python3} hog.py {mib}"
        agent = CommandAgent(name="cmd", spec=f"cmd:{command}", command=command, settings=AgentSettings())
        wrap = agent_wrapper(BwrapBackend(exe), workspace=ws, tmpdir=root / "tmp", home=home, network=False,
                             ro_paths=python_paths([python3]), agent="cmd")
        results[mib] = agent.run(AgentContext(workspace=ws, prompt="x", env={**ENV, "HOME": str(home)},
                                              timeout_s=60, artifacts=root / "art", wrap=wrap, sandbox="bwrap"))
    over, small = results[HOG_MIB], results[SMALL_MIB]
    assert over.outcome == "agent_error" and over.error == (
        f"the kernel killed a process of the agent (1 OOM kill): its sandbox went over its memory cap of {CAP_MIB} "
        "MiB (--max-agent-memory-mb)"), over
    assert small.outcome is None and small.exit_code == 0, small
    assert (tmp_path / str(SMALL_MIB) / "art" / "agent.out").read_text() == f"held {SMALL_MIB} MiB\n"
    assert not _orphans(since)


def test_a_claude_cli_over_its_memory_is_agent_error(tmp_path: Path, agent_cap: None) -> None:
    """The claude adapter's launch (``_execute``: what every claude attempt runs), here of the hog in its place:
    killed inside its sandbox, ``agent_error`` naming the cap, not "killed by a signal". Before: graded on."""
    from pytest_homefield.agents.claude import ClaudeAgent
    from pytest_homefield.sandbox.bwrap import Policy, bwrap_argv

    exe = _bwrap()
    (tmp_path / "hog.py").write_text(HOG_PY)
    agent = ClaudeAgent(name="c", spec="claude", model=None, settings=AgentSettings(), executable=sys.executable)
    policy = Policy(cwd=tmp_path, ro=[tmp_path], owned=[tmp_path])  # owned: a host uid of its own reads it
    argv = bwrap_argv(["/usr/bin/python3", str(tmp_path / "hog.py"), str(HOG_MIB)], policy, bwrap=exe, args_fd=True)
    res = agent._execute(argv, None, cwd=tmp_path, env=ENV, timeout_s=60, artifacts=tmp_path / "art")
    assert res.outcome == "agent_error" and res.error is not None and res.error.endswith(
        f"its sandbox went over its memory cap of {CAP_MIB} MiB (--max-agent-memory-mb)"), res


def test_the_mark_carries_the_memory_and_a_cgroup_not_made_is_a_command_not_started(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox's argv with a memory size gets the reaper's ``mem=BYTES:ROOT``; one without (a service) gets
    none; a memory cgroup the reaper cannot make is a command that does not start, never one that runs
    uncapped."""
    import pytest_homefield.sandbox.procs as procs

    options, rest = proccap.split_mark(proccap.marked(["true"]), 5 << 20)
    assert rest == ["true"] and f"mem={5 << 20}:{proccap.memory_root()}" in options
    assert not any(o.startswith("mem=") for o in proccap.split_mark(proccap.marked(["true"]))[0])
    missing = tmp_path / "no-such-cgroup-root"
    monkeypatch.setattr(procs, "split_mark", lambda argv, memory=None: ([f"mem={1 << 20}:{missing}"], list(argv)))
    with pytest.raises(FileNotFoundError):
        run_process(["true"], cwd=tmp_path, env=ENV, timeout_s=10)


def test_no_memory_cap_is_one_line_naming_the_sandboxes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proccap, "memory_root", lambda: None)
    line = proccap.no_memory_cap_note({"agent cmd": "bwrap", "agent oracle": "none", "test runs": "landlock"})
    assert line is not None and line.startswith("homefield: no memory cap for agent cmd, test runs (")
    monkeypatch.setattr(proccap, "memory_root", lambda: Path("/sys/fs/cgroup/memory"))
    assert proccap.no_memory_cap_note({"test runs": "bwrap"}) is None


def test_meta_and_the_header_say_which_sandboxes_get_a_memory_cgroup(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``meta.json`` ``sandbox.max_memory_mb`` (both caps, which sandbox gets a cgroup) and the header's one line
    where a bubblewrap sandbox gets none."""
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.run.runner import sandbox_summary
    from pytest_homefield.settings import resolve_settings

    _bwrap()
    settings = resolve_settings(tmp_path, {"sandbox": "bwrap", "max_agent_memory_mb": 1024})
    agents = build_agents(["cmd:true", "oracle"], settings)
    summary = sandbox_summary(settings, agents)
    assert summary["max_memory_mb"] == {"agents": 1024, "tests": 4096,
                                        "cgroup": {"agents": {"cmd": True, "oracle": False}, "tests": True}}
    assert summary["no_memory_cap"] is None
    monkeypatch.setattr(proccap, "memory_root", lambda: None)
    line = sandbox_summary(settings, agents)["no_memory_cap"]
    assert line.startswith("homefield: no memory cap for agent cmd, test runs (") and "oracle" not in line


#: The socket hog (atk25): up to ``argv[1]`` MiB queued in TCP connections over the sandbox's own loopback, each
#: with 4 MiB buffers, written until the kernel takes no more (at most 120 connections), then a one-case JUnit
#: report whose name says how many MiB it held. A socket's buffers are kernel memory that cgroup v1 charges to
#: no cgroup unless its ``memory.kmem.tcp`` limit is set, so a 256 MiB sandbox held 600 MiB here (and one
#: process 2.3 GB of the machine's 2.2 GB ``tcp_mem`` pool, every other TCP transfer on the host then reset).
SOCKET_HOG_PY = """import socket, sys
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(200)
target, held, keep, chunk = int(sys.argv[1]) << 20, 0, [], b"x" * 65536
for _ in range(120):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    c.connect(srv.getsockname()); s, _ = srv.accept()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    c.setblocking(False); keep.append((c, s))
    try:
        while held < target:
            held += c.send(chunk)
    except BlockingIOError:
        pass
    if held >= target:
        break
with open(sys.argv[2], "w") as f:
    f.write(f'<testsuite><testcase classname="t" name="test_held_{held >> 20}"/></testsuite>')
"""


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
@pytest.mark.parametrize("cap_mib", [CAP_MIB, int(TEST_MEMORY_MB or 4096)])
def test_a_test_runs_socket_buffers_count_against_its_memory_cap(tmp_path: Path, cap_mib: int, sandbox: str) -> None:
    """atk25: graded code queuing data in TCP connections over its sandbox's own loopback holds kernel memory that
    cgroup v1 left uncharged: 600 MiB past a 256 MiB cap, its run passed (and, scaled up, the machine's whole
    TCP pool, so that other sessions' connections were reset). Now the cgroup's ``memory.kmem.tcp`` limit is
    the cap, and no more than a share of that pool under the default cap (4096 MiB): the sends stop there.
    Under Landlock too, where a test process reaches its own loopback listener since ll32."""
    since = time.time()
    from pytest_homefield.sandbox._reaper import socket_limit

    work = tmp_path / "work"
    work.mkdir()
    (work / "hog.py").write_text(SOCKET_HOG_PY)
    box = BwrapBackend(_bwrap()) if sandbox == "bwrap" else LandlockBackend(landlock_abi())
    run = run_tests(work, f"{sys.executable} hog.py {HOG_MIB} {{junit}}", [], out_dir=tmp_path / "out",
                    timeout_s=60, sandbox=box, memory_mb=cap_mib)
    assert run.sandbox == sandbox and len(run.outcomes) == 1, run
    held = int(next(iter(run.outcomes)).rpartition("_")[2])
    limit = socket_limit(cap_mib << 20) >> 20
    assert limit <= cap_mib and held < min(HOG_MIB, limit + 64), \
        f"the sandbox held {held} MiB in socket buffers past its limit of {limit} MiB (cap {cap_mib} MiB)"
    assert not _orphans(since)


def test_a_test_run_reports_the_peak_of_its_memory_cgroup(tmp_path: Path) -> None:
    """mem27: the reaper reads its memory cgroup's peak (v1 ``memory.max_usage_in_bytes``, v2 ``memory.peak``)
    before it removes it, and the run keeps it (``TestRun.peak_mb``, what mining records as the task's
    ``verify.peak_mb``): a run holding 100 MiB peaks above that and under its 256 MiB cap; one holding 20 MiB
    peaks far below it; an uncapped run (no sandbox) has none."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "hog.py").write_text(HOG_PY)
    peaks = {mib: run_tests(work, f"{sys.executable} hog.py {mib} {{junit}}", [], out_dir=tmp_path / f"out{mib}",
                            timeout_s=60, sandbox=BwrapBackend(_bwrap()), memory_mb=CAP_MIB).peak_mb
             for mib in (SMALL_MIB, 20)}
    assert peaks[SMALL_MIB] is not None and SMALL_MIB < peaks[SMALL_MIB] < CAP_MIB, peaks
    assert peaks[20] is not None and 20 < peaks[20] < SMALL_MIB - 20, peaks
    bare = run_tests(work, f"{sys.executable} hog.py 20 {{junit}}", [], out_dir=tmp_path / "bare", timeout_s=60)
    assert bare.peak_mb is None


def test_a_smaller_memory_cgroup_binds_while_the_address_space_keeps_the_ceiling(tmp_path: Path) -> None:
    """``box_mb`` (a grading's task cap) caps the sandbox's memory cgroup and its reservation, not ``RLIMIT_AS``
    (address space is no memory held: a per-process cap of 512 MiB would fail honest threads and mmaps): the 600
    MiB hog is killed at a box of 256 MiB under a ``memory_mb`` of 4096, naming the task's cap."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "hog.py").write_text(HOG_PY)
    over = run_tests(work, f"{sys.executable} hog.py {HOG_MIB} {{junit}}", [], out_dir=tmp_path / "out",
                     timeout_s=60, sandbox=BwrapBackend(_bwrap()), memory_mb=TEST_MEMORY_MB, box_mb=CAP_MIB)
    assert not over.finished and over.over_memory is not None and over.over_memory.startswith(
        f"the kernel killed a test process (1 OOM kill): its sandbox went over its memory cap of {CAP_MIB} MiB "
        "(the task's cap"), over
