"""``services:`` and ``--test-network`` (issue 31): the plain classes, with a real ``redis-server``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pytest_homefield.errors import ConfigError
from pytest_homefield.export.swebench import services_note
from pytest_homefield.mine.reuse import verify_inputs
from pytest_homefield.sandbox import services
from pytest_homefield.sandbox.fingerprint import env_description, env_fingerprint, fingerprint_diff
from pytest_homefield.sandbox.nethint import network_hint, tried_addresses
from pytest_homefield.sandbox.services import (
    Instance,
    ServiceError,
    ServicePool,
    ServiceSpec,
    TestNetwork,
    free_port,
    parse_services,
    parse_test_network,
)
from pytest_homefield.sandbox.tempdirs import owner_tag
from pytest_homefield.sandbox.testrun import run_tests
from pytest_homefield.settings import network_of, resolve_settings

REDIS = {"command": "redis-server --port {port} --save '' --appendonly no",
         "env": {"REDIS_URL": "redis://127.0.0.1:{port}/0"}, "reset": "redis-cli -p {port} flushall"}


def _call(port: int, *args: str) -> bytes:
    """One RESP command to 127.0.0.1:``port``; the raw reply line."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
        return s.makefile("rb").readline().strip()


def _open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


# --- configuration ---------------------------------------------------------------------------------

def test_the_issues_example_parses_with_defaults() -> None:
    (spec,) = parse_services({"redis": {**REDIS, "ready": "tcp"}})
    assert (spec.name, spec.scope, spec.ready, spec.timeout_s) == ("redis", "worker", "tcp", 30.0)
    assert spec.env_for(6400) == {"REDIS_URL": "redis://127.0.0.1:6400/0"}
    assert parse_services({"pg": "postgres -p {port}"})[0].command == "postgres -p {port}"


@pytest.mark.parametrize("body, message", [
    ({"ready": "tcp"}, "services.redis.command' is required"),
    ({**REDIS, "scope": "session"}, "scope' 'session': use worker or run"),
    ({**REDIS, "host": "db"}, "unknown key 'services.redis.host'"),
    ({**REDIS, "port": 0}, "port' must be a TCP port"),
    ({**REDIS, "timeout": 0}, "timeout' must be a number of seconds above 0"),
    ({**REDIS, "env": ["REDIS_URL"]}, "env' must be a mapping"),
    ({**REDIS, "env": {"PYTEST_ADDOPTS": "-o python_functions=check_*"}}, "env' sets PYTEST_ADDOPTS, which a test"),
])
def test_a_bad_service_is_one_line_naming_the_key(tmp_path: Path, body: dict[str, object], message: str) -> None:
    import yaml

    (tmp_path / ".homefield.yml").write_text(yaml.safe_dump({"services": {"redis": body}}))
    with pytest.raises(ConfigError, match=message) as err:
        resolve_settings(tmp_path, {})
    assert ".homefield.yml" in str(err.value) and "\n" not in str(err.value)


def test_test_network_takes_loopback_ports_only(tmp_path: Path) -> None:
    assert parse_test_network("none") == () and parse_test_network("loopback:6379,5432,6379") == (6379, 5432)
    with pytest.raises(ValueError, match="use none or loopback:PORT"):
        parse_test_network("shared")
    with pytest.raises(ConfigError, match="--homefield-test-network 'loopback:0'"):
        resolve_settings(tmp_path, {"test_network": "loopback:0"})
    s = resolve_settings(tmp_path, {"test_network": "loopback:6379"})
    assert network_of(s).ports == (6379,) and not TestNetwork() and network_of(s)


# --- recorded: verification key, fingerprint, export ------------------------------------------------

def test_a_changed_service_command_changes_the_verification_key_and_fingerprint(tmp_path: Path) -> None:
    s = resolve_settings(tmp_path, {})
    cand = {"commit": "c" * 40, "parent": "p" * 40, "test_files": ["tests/test_x.py"]}
    plain = verify_inputs(cand, s, runnable=[], sandbox="none", env_fingerprint="f")
    assert "services" not in plain  # keys of repositories without services are what they were
    s.services = parse_services({"redis": REDIS})
    one = verify_inputs(cand, s, runnable=[], sandbox="none", env_fingerprint="f")
    s.services = parse_services({"redis": {**REDIS, "command": "redis-server --port {port}"}})
    two = verify_inputs(cand, s, runnable=[], sandbox="none", env_fingerprint="f")
    assert one["services"] != two["services"] and one["services"][0]["name"] == "redis"
    a, b = (parse_services({"redis": r})[0].to_dict() for r in (REDIS, {**REDIS, "command": "redis-server"}))
    assert env_fingerprint() != env_fingerprint(services=[a]) != env_fingerprint(services=[b])
    assert fingerprint_diff(env_description(services=[a]), env_description(services=[b])) == [
        "service redis changed: redis-server --port {port} --save '' --appendonly no -> redis-server"]


def test_the_export_note_names_command_readiness_and_env() -> None:
    note = services_note(["redis", "pg"], parse_services({"redis": REDIS}))
    assert note == ("the tests need these services running: redis: `redis-server --port {port} --save '' "
                    "--appendonly no` (ready: tcp; env REDIS_URL=redis://127.0.0.1:{port}/0); pg")


# --- the hint ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("log, addresses", [
    ("E   ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.", ["127.0.0.1:6379"]),
    ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): Max retries "
     "exceeded (Caused by NewConnectionError('[Errno 111] Connection refused'))", ["localhost:8000"]),
    ('psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: '
     "Connection refused", ["127.0.0.1:5432"]),
    ("socket.gaierror: [Errno -3] Temporary failure in name resolution\n  redis://cache.internal:6380/0",
     ["cache.internal:6380"]),
    ("AssertionError: assert 2 == 1 (redis://127.0.0.1:6379/0)", []),
])
def test_the_addresses_the_tests_tried(log: str, addresses: list[str]) -> None:
    assert tried_addresses(log) == addresses


#: A pytest log of psf/requests (nu41, commit a94e9b5308ff): one test could not connect (no network in the
#: sandbox), another reached the TLS server the test itself started on a random port and failed its handshake.
REQUESTS_LOG = """\
=================================== FAILURES ===================================
__________________ TestTimeout.test_connect_timeout[timeout0] __________________
E       requests.exceptions.ConnectionError: HTTPConnectionPool(host='10.255.255.1', port=80): Max retries \
exceeded with url: / (Caused by NewConnectionError('<HTTPConnection(host='10.255.255.1', port=80)>: Failed to \
establish a new connection: [Errno 101] Network is unreachable'))
tests/test_requests.py:2561: ConnectionError
_______ TestPreparingURLs.test_different_connection_pool_for_mtls_settings _______
E       requests.exceptions.SSLError: HTTPSConnectionPool(host='localhost', port=52301): Max retries exceeded \
with url: / (Caused by SSLError(SSLEOFError(8, 'EOF occurred in violation of protocol (_ssl.c:2427)')))
tests/test_requests.py:2888: SSLError
=========================== short test summary info ============================
FAILED tests/test_requests.py::TestTimeout::test_connect_timeout[timeout0] - requests.exceptions.ConnectionError: \
HTTPConnectionPool(host='10.255.255.1', port=80): Max retries exceeded with url: / (Caused by NewConnectionError(\
'Failed to establish a new connection: [Errno 101] Network is unreachable'))
FAILED tests/test_requests.py::TestPreparingURLs::test_different_connection_pool_for_mtls_settings - \
requests.exceptions.SSLError: HTTPSConnectionPool(host='localhost', port=52301): Max retries exceeded
========================= 2 failed, 30 passed in 7.65s =========================
"""


@pytest.mark.usefixtures("cli_spelling")
def test_a_server_the_tests_reached_is_not_named(tmp_path: Path) -> None:
    """nu41 (psf/requests): a log where one test could not connect named every address of the log, the
    TLS server another test started and reached on a random port too, so the hint asked for
    `--test-network loopback:80,52301`; only the address of the failure that could not connect is named."""
    assert tried_addresses(REQUESTS_LOG) == ["10.255.255.1:80"]
    (tmp_path / "tests.log").write_text(REQUESTS_LOG)
    assert network_hint([tmp_path / "tests.log"]) == (
        "tests tried 10.255.255.1:80, not on this machine: tests that need it cannot pass in the sandbox "
        "(no service or --test-network can give it)")


@pytest.mark.usefixtures("cli_spelling")
def test_an_address_of_another_machine_is_not_offered_as_a_loopback_port(tmp_path: Path) -> None:
    """nu41 (psf/requests): its timeout tests connect to 10.255.255.1:80 on purpose; the hint said to pass
    `--test-network loopback:80`, which opens 127.0.0.1:80 and never that address. A loopback address or a
    name (a service's `env` can point it at 127.0.0.1) keeps the advice, beside the other machine's."""
    (tmp_path / "a.log").write_text("E   ConnectionError: Error 111 connecting to 127.0.0.1:6379. Connection refused.\n"
                                    "E   OSError: [Errno 101] Network is unreachable ('10.255.255.1', 80)\n")
    assert network_hint([tmp_path / "a.log"]) == (
        "tests tried 127.0.0.1:6379: declare it under `services:` or pass `--test-network loopback:6379`; "
        "and 10.255.255.1:80, not on this machine: tests that need it cannot pass in the sandbox (no service or "
        "--test-network can give it)")
    (tmp_path / "b.log").write_text("socket.gaierror: [Errno -3] Temporary failure in name resolution "
                                    "redis://cache.internal:6380/0\n")
    assert network_hint([tmp_path / "b.log"]) == (
        "tests tried cache.internal:6380: declare it under `services:` or pass `--test-network loopback:6380`")


@pytest.mark.usefixtures("cli_spelling")
def test_the_hint_says_what_to_declare(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("Error 111 connecting to 127.0.0.1:6379. Connection refused.\n")
    (tmp_path / "b.log").write_text("1 passed\n")
    assert network_hint([tmp_path / "a.log", tmp_path / "b.log", tmp_path / "missing.log"]) == (
        "tests tried 127.0.0.1:6379: declare it under `services:` or pass `--test-network loopback:6379`")
    assert network_hint([tmp_path / "b.log"]) is None
    (tmp_path / "c.log").write_text("ConnectionRefusedError: [Errno 111] Connection refused\n")
    assert "declare the servers they need under `services:`" in str(network_hint([tmp_path / "c.log"]))


# --- instances of a real redis-server ---------------------------------------------------------------

@pytest.mark.usefixtures("needs_redis")
def test_mining_keeps_a_worker_instance_and_resets_it_between_runs(tmp_path: Path) -> None:
    """A network that reuses (mining): one instance per process, reset before each later run: a key
    written in one lease is gone in the next. Without ``reset`` it would still be there."""
    for body, expect in ((REDIS, b"$-1"), ({k: v for k, v in REDIS.items() if k != "reset"}, b"$2")):
        pool = ServicePool(TestNetwork(parse_services({"redis": body}), (), tmp_path / "logs", reuse=True))
        try:
            with pool.lease() as first:
                port = first.ports[0]
                assert first.env == {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}
                assert _call(port, "SET", "attempt", "A1") == b"+OK"
            with pool.lease() as second:
                assert second.ports == (port,)  # the same instance
                assert _call(port, "GET", "attempt") == expect
        finally:
            pool.close()
        assert not _open(port)


@pytest.mark.usefixtures("needs_redis")
def test_grading_gives_every_test_run_a_fresh_instance_in_a_private_folder(tmp_path: Path) -> None:
    """attacker9 F3/F3c: an agent's code in one grading's test process sets what ``reset`` does not clear
    (``CONFIG SET maxmemory 1``, an ACL) and ``SAVE``s a key: the next test run (another attempt's, or
    the same attempt's twin run) gets an instance of its own, with none of it; no instance writes
    into the shared ``services/`` folder, and its own folder is gone once it stopped."""
    logs = tmp_path / "logs"
    pool = ServicePool(TestNetwork(parse_services({"redis": REDIS}), (), logs))  # worker scope, as grading gets it
    try:
        with pool.lease() as first:
            port = first.ports[0]
            for cmd in (("SET", "visits", "41"), ("SAVE",), ("CONFIG", "SET", "maxmemory", "1"),
                        ("CONFIG", "SET", "maxmemory-policy", "noeviction"), ("ACL", "SETUSER", "default", "-set")):
                assert _call(port, *cmd) == b"+OK"
        with pool.lease() as second:
            other = second.ports[0]
            assert other != port and not _open(port)
            assert _call(other, "GET", "visits") == b"$-1"  # no dump.rdb loaded
            assert _call(other, "SET", "k", "v") == b"+OK"  # neither the ACL nor maxmemory
    finally:
        pool.close()
    assert sorted(p.suffix for p in logs.iterdir()) == [".log", ".log"]  # no dump.rdb beside the logs
    assert not [p for p in Path(tempfile.gettempdir()).glob(f"hf-{owner_tag()}-*") if (p / "dump.rdb").exists()]


@pytest.mark.usefixtures("needs_redis")
def test_run_scope_is_a_fresh_instance_per_run_stopped_after_it(tmp_path: Path) -> None:
    pool = ServicePool(TestNetwork(parse_services({"redis": {**REDIS, "scope": "run"}}), (6399,), tmp_path))
    with pool.lease() as one:
        assert one.ports[1:] == (6399,) and _open(one.ports[0])
    assert not _open(one.ports[0])
    with pool.lease() as two:
        assert two.ports[0] != one.ports[0]
    logs = sorted(p.name for p in tmp_path.iterdir())
    assert logs == sorted(f"redis-{os.getpid()}-{p}.log" for p in (one.ports[0], two.ports[0]))


def test_a_service_that_does_not_start_fails_once_with_its_log(tmp_path: Path) -> None:
    """At mining (a pool that reuses); a grading's pool tries again (test_service_box.py)."""
    bad = ServiceSpec("db", f"{sys.executable} -c \"print('FATAL: bad config line 3'); raise SystemExit(3)\"")
    pool = ServicePool(TestNetwork((bad,), (), tmp_path, reuse=True))
    with pytest.raises(ServiceError, match=r"service 'db' exited with status 3 .*FATAL: bad config line 3"):
        with pool.lease():
            pass
    t0 = time.monotonic()
    with pytest.raises(ServiceError, match="FATAL"):  # the same error, no second start
        with pool.lease():
            pass
    assert time.monotonic() - t0 < 0.5 and pool.failures.keys() == {"db"}
    (log,) = tmp_path.iterdir()
    assert log.read_text().count("--- homefield: start") == 1


def test_a_service_never_ready_is_stopped_after_its_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    slow = f"{sys.executable} -c \"import os, time; open('{pid_file}', 'w').write(str(os.getpid())); time.sleep(60)\""
    inst = Instance(ServiceSpec("slow", slow, timeout_s=1), free_port(), tmp_path / "slow.log")
    with pytest.raises(ServiceError, match=r"'slow' was not ready after 1 s \(ready: tcp\)"):
        inst.start()
    pid = int(pid_file.read_text())  # the service's own process
    assert inst.proc is None and not Path(f"/proc/{pid}").exists()


HOLDER = """
import sys, time
from pathlib import Path
from pytest_homefield.sandbox.services import TestNetwork, parse_services, pool_for
spec = parse_services({"redis": {"command": "redis-server --port {port} --save ''"}})
with pool_for(TestNetwork(spec, (), Path(sys.argv[1]))).lease() as lease:
    print(lease.ports[0], flush=True)
    time.sleep(120)
"""


@pytest.mark.usefixtures("needs_redis")
def test_sigkill_of_the_session_leaves_no_redis_server(tmp_path: Path) -> None:
    """A homefield process holding a worker-scope redis is SIGKILLed: the reaper takes the server down."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        assert _open(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _open(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _open(port)
    finally:
        if proc.poll() is None:
            proc.kill()


# --- test runs reach those ports, and only those, through the relay ---------------------------------

TEST_CONNECT = """import os, socket
from urllib.parse import urlparse


def test_connect():
    u = urlparse(os.environ.get("REDIS_URL", "redis://127.0.0.1:1/0"))
    with socket.create_connection((u.hostname, u.port), timeout=5) as s:
        s.sendall(b"*1\\r\\n$4\\r\\nPING\\r\\n")
        assert s.recv(7) == b"+PONG\\r\\n"
"""


@pytest.mark.slow
@pytest.mark.usefixtures("needs_redis", "needs_bwrap")
def test_a_sandboxed_test_run_reaches_the_declared_ports_only(tmp_path: Path) -> None:
    """In bubblewrap (no network) the test reaches its service through the relay, a server the user runs
    with ``--test-network loopback:PORT``, and nothing else."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "test_connect.py").write_text(TEST_CONNECT)
    cmd = f"{sys.executable} -m pytest --disable-plugin-autoload -p no:cacheprovider"
    tid = "test_connect.py::test_connect"
    services = TestNetwork(parse_services({"redis": REDIS}), (), tmp_path / "logs")
    run = run_tests(work, cmd, ["test_connect.py"], out_dir=tmp_path / "o1", sandbox="bwrap", network=services)
    assert run.sandbox == "bwrap" and run.outcomes == {tid: "passed"}, run.log_path.read_text()[-2000:]
    # tests that expect a fixed port (Redis() is localhost:6379): the relay maps it to a free one
    fixed = TestNetwork(parse_services({"redis": {**REDIS, "port": 6390}}), (), tmp_path / "fixed")
    run = run_tests(work, cmd, ["test_connect.py"], out_dir=tmp_path / "o0", sandbox="bwrap", network=fixed)
    assert run.outcomes == {tid: "passed"}, run.log_path.read_text()[-2000:]
    assert "6390" not in "".join(p.name for p in (tmp_path / "fixed").iterdir())  # the host's port is free
    user = Instance(parse_services({"own": REDIS})[0], free_port(), tmp_path / "own.log").start()
    try:
        # the user names the variable its tests find the server by (hatk39: nothing else of the host's reaches them)
        env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{user.port}/0", "HOMEFIELD_TEST_ENV": "REDIS_URL"}
        ok = run_tests(work, cmd, ["test_connect.py"], out_dir=tmp_path / "o2", sandbox="bwrap", env=env,
                       network=TestNetwork((), (user.port,)))
        assert ok.outcomes == {tid: "passed"}, ok.log_path.read_text()[-2000:]
        cut = run_tests(work, cmd, ["test_connect.py"], out_dir=tmp_path / "o3", sandbox="bwrap", env=env)
        assert cut.outcomes == {tid: "failed"} and "Connection refused" in cut.log_path.read_text()
    finally:
        user.stop()


@pytest.mark.usefixtures("needs_redis")
def test_an_agent_with_a_shell_gets_instances_of_its_own(tmp_path: Path) -> None:
    """Never grading's: a fresh instance for the attempt (its own port and ``env``), stopped after it;
    an agent that cannot run commands gets none."""
    from pytest_homefield.sandbox.services import agent_lease, pool_for

    network = TestNetwork(parse_services({"redis": REDIS}), (), tmp_path)
    with pool_for(network).lease() as grading:
        with agent_lease(network, True, relays=False) as mine:
            assert mine.ports != grading.ports and mine.env["REDIS_URL"].endswith(f":{mine.ports[0]}/0")
            assert _call(mine.ports[0], "SET", "k", "agent") == b"+OK"
        assert not _open(mine.ports[0]) and _call(grading.ports[0], "GET", "k") == b"$-1"
    with agent_lease(network, False, relays=False) as none:
        assert none.ports == () and none.env == {}


@pytest.mark.usefixtures("needs_redis")
def test_a_fixed_port_in_use_is_refused_not_taken_for_the_service(tmp_path: Path) -> None:
    """Without a sandbox a service with ``port:`` listens there itself: a second process (another xdist
    worker) must not mistake the first one's server for its own."""
    spec = parse_services({"redis": {**REDIS, "port": free_port()}})
    first = ServicePool(TestNetwork(spec, (), tmp_path / "a"))
    try:
        with first.lease() as lease:
            assert lease.ports == (spec[0].port,)
            with pytest.raises(ServiceError, match=f"port {spec[0].port} of 127.0.0.1 is already in use"):
                with ServicePool(TestNetwork(spec, (), tmp_path / "b")).lease():
                    pass
    finally:
        first.close()


def test_the_mine_summary_names_a_failed_service_once() -> None:
    from pytest_homefield.mine.pipeline import service_lines

    detail = "service 'db' exited with status 3 before it was ready; its log (x.log): FATAL"
    records = [{"reason": "setup_failed", "detail": detail}] * 3 + [{"reason": "flaky", "detail": "x"}]
    assert service_lines(records) == [f"Services: {detail} (3 candidates dropped; homefield services --check "
                                      "tries it alone)"]


def test_plan_names_the_services(redis_mined: Path) -> None:
    from pytest_homefield.commands.plan import plan_text

    s = resolve_settings(redis_mined, {"agent": ["oracle"]})
    s.services = parse_services({"redis": REDIS, "pg": {"command": "postgres -p {port}", "scope": "run"}})
    assert plan_text(s).splitlines()[-1] == ("Services: redis (worker scope), pg (run scope): homefield starts "
                                             "them for the hidden tests (homefield services --check tries them)")


def test_verify_drift_counts_the_services_of_the_task(tmp_path: Path) -> None:
    """A task's fingerprint includes its services: the same services are no drift, a changed command is."""
    from pytest_homefield.commands.verify import drift_lines
    from pytest_homefield.mine.pipeline import _record_env

    a, b = (parse_services({"redis": r})[0].to_dict() for r in (REDIS, {**REDIS, "command": "redis-server"}))
    fp = _record_env(tmp_path, None, [a])
    assert drift_lines(tmp_path, fp, None, [a]) == []
    assert drift_lines(tmp_path, fp, None, [b]) == [
        "service redis changed: redis-server --port {port} --save '' --appendonly no -> redis-server"]


def test_failure_lines_say_each_failure_once_with_its_count() -> None:
    from pytest_homefield.sandbox.services import failure_lines

    msg = "service 'redis' exited with status 1 before it was ready; its log (x.log): bad option"
    again = msg.replace("x.log", "y.log")  # a grading tried it again: another port, another log
    lines = failure_lines([msg, f"cannot prepare the agent's services: {msg}", None, "tests failed", again,
                           "no service 'x' here"], "attempt", "infra")
    assert lines == [f"Services: {msg} (3 attempts infra; homefield services --check tries it alone)"]


@pytest.mark.usefixtures("needs_redis")
def test_a_service_that_logs_without_bound_is_cut_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """atk19: graded code turned redis' logging up (``CONFIG SET loglevel debug``) and connected in a
    loop: 8 MB in 5 s into the run folder's ``services/``, no bound but the disk. The server's output now
    comes through a pipe into a capped sink (here 64 KiB): its head, one marker line, its last lines."""
    monkeypatch.setattr(services, "SERVICE_LOG_BYTES", 64 * 1024)
    log = tmp_path / "redis.log"
    inst = Instance(parse_services({"redis": REDIS})[0], free_port(), log).start()
    try:
        assert _call(inst.port, "CONFIG", "SET", "loglevel", "debug") == b"+OK"
        for _ in range(1000):  # a round trip each: the server has taken (and logged) every connection
            assert _call(inst.port, "PING") == b"+PONG"
        assert _call(inst.port, "ECHO", "last-words") == b"$10"
    finally:
        inst.stop()
    data = log.read_bytes()
    assert b"Accepted 127.0.0.1:" in data  # the debug lines arrived
    assert len(data) < 64 * 1024 + 1024, len(data)  # main: 382 KB
    marker = [line for line in data.splitlines() if line.startswith(b"[homefield: ")]
    assert len(marker) == 1 and b"redis.log cut here; it keeps at most 65536 bytes (a service's log)" in marker[0]
    assert data.index(marker[0]) > 32 * 1024 and data.startswith(b"--- homefield: start on port")
