"""Issue 31 end to end: a repository whose tests need a real ``redis-server``, mined (``-n 2``, the
session fixture; ``-n 0`` here), run with oracle and noop at ``-n 0`` and verified at ``-n 2``, in
the default sandbox (bubblewrap where it works: the tests reach redis through the relay only)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield
from helpers.redis_repo import build

pytestmark = pytest.mark.slow


def _results(repo: Path) -> list[dict[str, object]]:
    (run,) = [p for p in (repo / ".homefield" / "runs").iterdir() if not p.name.startswith("verify-")]
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def _no_server_left(logs: list[Path]) -> None:
    ports = [int(m.group(1)) for log in logs for m in re.finditer(r"start on port (\d+)", log.read_text())]
    assert ports
    for port in ports:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


def test_mined_tasks_name_their_service(redis_mined: Path) -> None:
    tasks = [json.loads(line) for line in (redis_mined / ".homefield" / "tasks.jsonl").read_text().splitlines()]
    assert sorted(t["FAIL_TO_PASS"][0] for t in tasks) == ["tests/test_incr.py::test_incr_starts_from_zero",
                                                           "tests/test_kv.py::test_put_then_get"]
    assert all(t["services"] == ["redis"] for t in tasks)
    # issue 30: twins beside `incr() == 1` and run before it made it see 4 (verification version 5 fixed
    # the original first); run apart, each in its own process with redis reset, no order is needed
    incr = "tests/test_incr.py::test_incr_starts_from_zero"
    orders = {t["FAIL_TO_PASS"][0]: t["canary_order"] for t in tasks}
    assert orders == {incr: {}, "tests/test_kv.py::test_put_then_get": {}}, orders
    assert all(t["canary_sentinels"] == [] and t["canaries"] for t in tasks), tasks
    (mine,) = (redis_mined / ".homefield" / "mine").iterdir()
    assert json.loads((mine / "meta.json").read_text())["services"][0]["name"] == "redis"
    assert list((mine / "services").glob("redis-*.log"))


def test_mine_again_at_n0_then_oracle_and_noop_at_n0_then_verify_at_n2(redis_mined: Path, tmp_path: Path) -> None:
    """Mined again at ``-n 0`` (the session fixture mined at ``-n 2``); two oracle attempts per task in
    one process: each grading's test run gets a fresh redis (never one an earlier attempt's code ran
    against), so every oracle attempt is solved; then ``verify`` grades the oracle at ``-n 2``. No
    server is left afterwards."""
    repo = copy_mined(redis_mined, tmp_path / "repo")
    proc = homefield(repo, "mine", "--reverify", "--stability-runs", "2", "-n", "0")
    assert proc.returncode == 0 and "Mined 2 tasks from 2 candidates" in proc.stdout, proc.stdout + proc.stderr
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--attempts", "2", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcomes = sorted((r["agent"], r["outcome"]) for r in _results(repo))
    assert outcomes == [("noop", "empty_patch")] * 4 + [("oracle", "solved")] * 4, proc.stdout
    (run,) = [p for p in (repo / ".homefield" / "runs").iterdir()]
    assert json.loads((run / "meta.json").read_text())["services"][0]["command"].startswith("redis-server")
    logs = list((run / "services").glob("redis-*.log"))
    # a fresh instance per test run, never reset: 4 gradings of one whole-file run each (the oracle's
    # change is the reference fix: no twin run, grading.is_reference_fix)
    assert len(logs) == 4 and not any("--- homefield: reset" in log.read_text() for log in logs)
    proc = homefield(repo, "verify", "-n", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _no_server_left(list((repo / ".homefield").rglob("services/redis-*.log")))


@pytest.mark.usefixtures("needs_bwrap")
def test_without_services_the_drop_says_what_the_tests_tried(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", services=False)
    proc = homefield(repo, "mine", "--stability-runs", "1", "--sandbox", "bwrap", "-n", "0")
    assert proc.returncode != 0 or "Mined 0 tasks" in proc.stdout
    hint = "tests tried 127.0.0.1:6379: declare it under `services:` or pass `--test-network loopback:6379`"
    assert f"Network: the test logs of 2 dropped candidates show a connection error (test runs have no network in " \
           f"the sandbox; it may not be what dropped them): {hint}" in proc.stdout, proc.stdout
    (mine,) = (repo / ".homefield" / "mine").iterdir()
    records = [json.loads(line) for line in (mine / "results.jsonl").read_text().splitlines()]
    assert [r["network_hint"] for r in records] == [hint, hint]
    assert all(str(r["detail"]).endswith(hint) for r in records)


@pytest.mark.usefixtures("needs_redis")
def test_services_check_prints_one_line_per_service(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo")
    with (repo / ".homefield.yml").open("a") as f:
        f.write("  broken:\n    command: \"redis-server --port {port} --no-such-option\"\n    timeout: 5\n")
    proc = homefield(repo, "services", "--check")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.fullmatch(r"  redis: ok \(ready in \d+\.\d s, reset ok\)", lines[0]), lines
    assert lines[1].startswith("  broken: FAILED: service 'broken' exited with status 1 before it was ready") \
        and "no-such-option" in lines[1], lines
    assert lines[2] == "homefield services: 1 of 2 started, got ready and stopped; logs in .homefield/services"


def test_a_service_that_fails_in_a_run_is_said_once(redis_mined: Path, tmp_path: Path) -> None:
    """The run's redis cannot start (its command is broken after mining): every oracle attempt is
    ``infra`` with the service's message, and the summary says so in one line with the count, not once
    per attempt (issue 31)."""
    repo = copy_mined(redis_mined, tmp_path / "repo")
    yml = repo / ".homefield.yml"
    yml.write_text(yml.read_text().replace("redis-server --port {port}", "redis-server --port {port} --no-such-option"))
    proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "-n", "0")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    results = _results(repo)
    assert len(results) == 2 and all(r["outcome"] == "infra" for r in results), proc.stdout
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("Services: ")]
    assert len(lines) == 1 and "service 'redis'" in lines[0] and "(2 attempts infra;" in lines[0], proc.stdout
