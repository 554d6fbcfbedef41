"""What a service writes for the code that commands it counts against that code's write cap (atk20 F4).

A service instance runs in a working folder of its own on the host's disk (:mod:`pytest_homefield.sandbox.services`).
Before: graded code (and an agent with a shell, through its own instances) had redis ``SET`` a value and
``SAVE`` it: the ``dump.rdb`` grew in the instance's folder, which no cap watched (measured: 1 GiB written
there with ``max_test_write_mb`` 1024 and the run's own folders empty), up to filling the user's disk. Now the
instances' folders are watched with the run's own: past ``max_test_write_mb`` the run is stopped.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

import pytest
from helpers.redis_repo import REDIS_SKIP, redis_available

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.limits import AgentFolders
from pytest_homefield.sandbox.services import ServicePool, TestNetwork, parse_services
from pytest_homefield.sandbox.testrun import run_tests

#: A test that has redis keep 3 MiB and save them to its working folder (raw RESP: no client library).
SAVE_TEST = '''
import os, socket, time


def _cmd(s, *args):
    s.sendall(b"*%d\\r\\n" % len(args) + b"".join(b"$%d\\r\\n%s\\r\\n" % (len(a), a) for a in args))
    return s.recv(100)


def test_save():
    port = int(os.environ["REDIS_URL"].rsplit(":", 1)[1].split("/")[0])
    s = socket.create_connection(("127.0.0.1", port))
    assert _cmd(s, b"SET", b"k", os.urandom(3 << 20)).startswith(b"+OK")
    assert _cmd(s, b"SAVE").startswith(b"+OK")
    time.sleep(1.5)  # a few polls of the watch
'''


@pytest.fixture
def network(tmp_path: Path) -> TestNetwork:
    if not redis_available():
        pytest.skip(REDIS_SKIP)
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    specs = parse_services({"redis": {"command": "redis-server --port {port} --save ''", "ready": "tcp",
                                      "env": {"REDIS_URL": "redis://127.0.0.1:{port}/0"}}})
    return TestNetwork(specs, (), tmp_path / "logs", sandbox="bwrap")


def test_a_service_saving_for_the_tests_is_held_to_their_write_cap(network: TestNetwork, tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "test_save.py").write_text(SAVE_TEST)
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider -p no:xdist -p no:hypothesispytest -p no:anyio"
    run = run_tests(work, cmd, ["test_save.py"], out_dir=tmp_path / "out", timeout_s=60, sandbox="bwrap",
                    network=network, write_mb=2)
    assert run.over_writes is not None and "max_test_write_mb" in run.over_writes, (run, run.outcomes)
    assert not run.finished


def test_an_instances_folder_is_one_of_the_agents(network: TestNetwork, tmp_path: Path) -> None:
    """The agent's own instances (``agent_lease``) are counted with its workspace, TMPDIR and HOME."""
    with ServicePool(network).lease() as lease:
        assert len(lease.folders) == 1 and lease.folders[0].is_dir()
        folders = AgentFolders(tmp_path, services=lease.folders)
        assert folders.roots()[-1] == ("service1", lease.folders[0])


def test_a_service_holds_no_more_memory_than_a_test_run(network: TestNetwork) -> None:
    """atk21: four ``SETRANGE k 524288000 x`` (60 bytes each) grew a grading's redis from 13 MiB to 2 GiB, past
    the test run's memory cap (its client was held to 256 MiB), and about 40 would take this host's 23 GB. A
    sandboxed instance now has the test runs' memory cap (``max_test_memory_mb``) in a memory cgroup of its
    own: past it the kernel kills the service, not a process of the host. On main redis answered with the
    new length (it held 200 MiB)."""
    from pytest_homefield.sandbox.proccap import memory_root
    if memory_root() is None:
        pytest.skip("no memory cgroup can be made here (root with cgroup v1 memory, or a delegated cgroup v2)")
    import dataclasses
    import socket
    capped = dataclasses.replace(network, memory_mb=64)
    with ServicePool(capped).lease() as lease:
        port = lease.ports[0]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"*4\r\n$8\r\nSETRANGE\r\n$1\r\nk\r\n$9\r\n209715200\r\n$1\r\nx\r\n")
            try:
                answer = s.recv(100)
            except OSError as exc:  # the connection reset by the kill
                answer = repr(exc).encode()
        assert not answer.startswith(b":209715201"), answer


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_an_agent_with_services_of_its_own_is_graded_not_blamed_for_their_folders(
        sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hatk35: an agent that runs commands gets instances of its own (``agent_lease``), stopped when it ends, and
    their working folders are among its folders (atk20 F4). Stopping an instance removed its folder before the
    agent's folders were judged, so every such attempt was ``agent_error`` ("the agent removed its service1
    folder"): on main a ``cmd:`` agent applying the reference fix, and one changing nothing, in a repository
    declaring ``services:`` (both sandboxes). Now the folders are judged (and counted) first, removed after."""
    if not redis_available():
        pytest.skip(REDIS_SKIP)
    from helpers.attack_repo import GOOD_CALC, build, cmd_agent, script_agent, task_for
    from helpers.landlock import landlock_abi

    from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
    from pytest_homefield.sandbox.modes import SandboxChoice
    if sandbox == "landlock":
        landlock_abi()
    else:
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    fx = build(tmp_path / "repo")
    task = task_for(fx, canaries=1)
    temp = tmp_path / "t"  # where the instances' folders are made
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    specs = parse_services({"redis": {"command": "redis-server --port {port} --save ''", "ready": "tcp",
                                      "env": {"REDIS_URL": "redis://127.0.0.1:{port}/0"}}})
    network = TestNetwork(specs, (), tmp_path / "logs", sandbox=sandbox)
    agents = {"empty_patch": cmd_agent("true", name="nothing"),
              "solved": script_agent(tmp_path / "fix", {"src/calc/__init__.py": GOOD_CALC}, name="fixer")}
    cache = SnapshotCache(repo=fx.root)
    try:
        for want, agent in agents.items():
            spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                               run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"), network=network)
            r = run_attempt(spec, cache)
            assert (r.outcome, r.error) == (want, None), r
            assert r.sandbox == sandbox, r
    finally:
        cache.close()
    # each instance started (its log), and its folder removed on the way out (only Landlock's policy files are left)
    assert len(list((tmp_path / "logs").glob("redis-*.log"))) >= 2
    left = [p for p in temp.iterdir() if not any(p.glob("policy-*.json"))]
    assert not left, left
