"""The Landlock backend (:mod:`pytest_homefield.sandbox.landlock`, issue 30): where bubblewrap does not
work, test runs and agents are confined by Landlock instead of running as the user with the repository
in reach. Real Landlock, real processes; each confinement has its control (``none``) that shows the
same code does reach what it reaches for without it. Skipped, with the reason, where Landlock does not
work (a kernel before 5.13, ``lsm=`` without it, a seccomp profile that refuses its calls)."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, NO_PLUGINS, Fixture, build, script_agent, task_for, user_checkout
from helpers.bwrap import ProcessAgent
from helpers.demo_run import DemoRun, clean_env
from helpers.landlock import SANDBOXES, backend, landlock_abi

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox import bwrap, landlock, modes, protected
from pytest_homefield.sandbox.backends import AgentBox, Sandboxes
from pytest_homefield.sandbox.landlock import LAUNCHER, LandlockUnavailable
from pytest_homefield.sandbox.modes import SandboxChoice, agent_backend_name
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.proxy import Allowlist, FilteringProxy
from pytest_homefield.sandbox.testrun import run_tests


@pytest.fixture(scope="module")
def abi() -> int:
    return landlock_abi()


# -- the F7 payload: the gold patch applied at test time -----------------------------------------

#: Prepended to the package by an agent that can only edit files: when the hidden tests import it, it
#: looks for ``.homefield/tasks.jsonl`` in its ancestors' ``/proc/<pid>/cwd`` and at the checkout's
#: absolute path, rebuilds the file the gold patch makes and runs it in the module (attack 9, F7).
F7_PAYLOAD = '''
import json as _json, os as _os


def _gold(known):
    pid, places = _os.getpid(), [known]
    while pid > 1:
        places.append("/proc/%d/cwd" % pid)
        try:
            with open("/proc/%d/stat" % pid) as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    for place in places:
        try:
            with open(_os.path.join(place, ".homefield", "tasks.jsonl")) as fh:
                patch = _json.loads(fh.readline())["gold_patch"]
        except (OSError, ValueError, KeyError):
            continue
        hunk = patch.split("+++ b/src/calc/__init__.py", 1)[1].split("@@", 2)[2]
        return "".join(line[1:] + "\\n" for line in hunk.splitlines()[1:] if line[:1] in " +")
    return None


_fix = _gold(KNOWN)
if _fix:
    exec(_fix)
'''


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("ll") / "repo")


@pytest.fixture(scope="module")
def task(fx: Fixture) -> Task:
    return task_for(fx, canaries=1)


@pytest.fixture
def cache(fx: Fixture, task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SnapshotCache]:
    """The user's checkout (``.homefield/tasks.jsonl`` in it) as homefield's cwd, protected as a run does."""
    repo = user_checkout(fx, task, tmp_path / "user-repo")
    monkeypatch.chdir(repo)
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    c = SnapshotCache(repo=repo)
    yield c
    c.close()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_gold_patch_at_test_time_solves_only_without_a_sandbox(abi: int, task: Task, cache: SnapshotCache,
                                                                tmp_path: Path, sandbox: str) -> None:
    """F7 of attack 9: the agent's code, run by the hidden tests, finds the gold patch through its parents'
    ``/proc/<pid>/cwd`` or the checkout's path: ``solved`` unsandboxed, nothing found under Landlock."""
    payload = F7_PAYLOAD.replace("KNOWN", repr(str(cache.repo)))
    agent = script_agent(tmp_path / "agent", {"src/calc/__init__.py": payload + CALC_1}, name="gold")
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"))
    r = run_attempt(spec, cache)
    if sandbox == "none":
        assert r.outcome == "solved" and r.test_sandbox == "none", r
    else:
        assert r.outcome == "tests_failed" and r.sandbox == "landlock" and r.test_sandbox == "landlock", r


# -- a test run: its copy and its folders only ---------------------------------------------------

PROBE_TEST = '''
import os, pwd, socket, pytest

SECRET, REPO, PORT, UNIX, OUTSIDE = {secret!r}, {repo!r}, {port!r}, {unix!r}, {outside!r}


def _ancestors_cwd():
    pid = os.getppid()
    while pid > 1:
        try:
            return open("/proc/%d/cwd/.homefield/tasks.jsonl" % pid).read()
        except OSError:
            with open("/proc/%d/stat" % pid) as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
    raise OSError("no ancestor's cwd holds .homefield")


CHECKS = {{
    "write-its-copy": lambda: open("written", "w"),
    "write-elsewhere": lambda: open(os.path.join(OUTSIDE, "escape"), "w"),
    "read-elsewhere": lambda: open(SECRET).read(),
    "list-users-home": lambda: os.listdir(pwd.getpwuid(os.getuid()).pw_dir),
    "read-the-repository": lambda: open(os.path.join(REPO, ".homefield", "tasks.jsonl")).read(),
    "read-through-proc-cwd": _ancestors_cwd,
    "read-parents-environ": lambda: open("/proc/%d/environ" % os.getppid()).read(),
    "signal-the-parent": lambda: os.kill(os.getppid(), 0),
    "tcp-to-another-port": lambda: socket.create_connection(("127.0.0.1", PORT), timeout=5),
    "named-unix-socket": lambda: socket.socket(socket.AF_UNIX).connect(UNIX),
    "udp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", PORT)),
}}


@pytest.mark.parametrize("name", CHECKS)
def test_denied(name):
    with pytest.raises(OSError):
        CHECKS[name]()


def test_its_own_folders():
    assert open(os.path.join(os.environ["TMPDIR"], "t"), "w").write("x")
    assert open(os.path.join(os.environ["HOME"], "h"), "w").write("x")
    assert socket.socketpair()
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_test_run_reads_and_writes_only_its_own_folders(abi: int, tmp_path: Path, sandbox: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Eleven reaches of a test process (its copy, the checkout, the user's home, the parents through
    ``/proc``, a signal, another TCP port, a named Unix socket, UDP): each refused under Landlock, each
    made without a sandbox; its own ``TMPDIR`` and ``HOME`` stay writable."""
    repo, copy = tmp_path / "repo", tmp_path / "copy"
    (repo / ".homefield").mkdir(parents=True)
    (repo / ".homefield" / "tasks.jsonl").write_text('{"gold_patch": "x"}\n')
    secret = tmp_path / "secret.txt"
    secret.write_text("gold")
    (tmp_path / "outside").mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))  # a Docker or ssh-agent socket: Landlock alone would let it connect
    unix.listen()
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "test_probe.py").write_text(PROBE_TEST.format(secret=str(secret), repo=str(repo),
                                                                    port=listener.getsockname()[1],
                                                                    unix=str(tmp_path / "s.sock"),
                                                                    outside=str(tmp_path / "outside")))
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    monkeypatch.chdir(repo)  # homefield runs in the checkout: the test process's parents' cwd
    try:
        run = run_tests(copy, f"{sys.executable} -m pytest {NO_PLUGINS}", ["tests/test_probe.py"],
                        out_dir=tmp_path / "out", sandbox=backend(sandbox, abi), timeout_s=120)
    finally:
        listener.close()
        unix.close()
    assert run.sandbox == sandbox
    # every reach is refused under Landlock, and each one is made without it (the control)
    expected = "passed" if sandbox == "landlock" else "failed"
    denied = {k.split("[")[1][:-1]: v for k, v in run.outcomes.items() if "test_denied[" in k}
    log = (tmp_path / "out" / "tests.log").read_text()
    assert len(denied) == 11 and set(denied.values()) == {expected}, (denied, log)
    assert run.outcomes["tests/test_probe.py::test_its_own_folders"] == "passed"
    assert (copy / "written").exists() == (sandbox == "none")


# -- an agent: its workspace, and TCP to its ports and proxy only ---------------------------------

AGENT_SCRIPT = '''
import os, socket, sys, urllib.request
other, allowed, forbidden, unix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def reach(fn):
    try:
        fn()
        return "yes"
    except OSError:
        return "no"
open("mine", "w").write("x")
print("sibling", reach(lambda: open(other).read()))
print("allowed", reach(lambda: socket.create_connection(("127.0.0.1", allowed), timeout=5).close()))
print("forbidden", reach(lambda: socket.create_connection(("127.0.0.1", forbidden), timeout=5).close()))
print("unix", reach(lambda: socket.socket(socket.AF_UNIX).connect(unix)))
try:
    urllib.request.urlopen("http://not-listed.invalid/", timeout=10)
    print("proxy", "open")
except urllib.error.HTTPError as exc:
    print("proxy", exc.code)
except OSError as exc:
    print("proxy", "unreachable", exc)
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_an_agent_reads_no_other_workspace_and_reaches_only_its_ports(abi: int, tmp_path: Path,
                                                                      sandbox: str) -> None:
    """Another attempt's workspace beside this one, two of the host's ports (one allowed), and the
    filtering proxy (which refuses an unlisted host with 403): under Landlock the agent writes its
    workspace, reaches the allowed port and the proxy, and nothing else."""
    ws, tmp, home = (tmp_path / "box" / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir(parents=True)
    other = tmp_path / "other-attempt" / "ws" / "fix.py"
    other.parent.mkdir(parents=True)
    other.write_text("the fix")
    allowed, forbidden = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "s.sock"))
    unix.listen()
    proxy = FilteringProxy(Allowlist.of(["example.com"]), tmp_path / "proxy.log")
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=bwrap.python_paths([sys.executable]),
                   network=False, agent="a", proxy=proxy, ports=(allowed.getsockname()[1],))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp), "NO_PROXY": "*"}
    argv = [sys.executable, "-c", AGENT_SCRIPT, str(other), str(allowed.getsockname()[1]),
            str(forbidden.getsockname()[1]), str(tmp_path / "s.sock")]
    wrapped = backend(sandbox, abi).wrap_agent(argv, env, box)
    try:
        code = run_process(wrapped.argv, cwd=ws, env=env, timeout_s=60, stdout_path=tmp_path / "agent.log").exit_code
    finally:
        proxy.close()
        allowed.close()
        forbidden.close()
        unix.close()
    out = dict(line.split(" ", 1) for line in (tmp_path / "agent.log").read_text().splitlines())
    assert code == 0 and (ws / "mine").exists(), out
    if sandbox == "landlock":
        assert out == {"sibling": "no", "allowed": "yes", "forbidden": "no", "unix": "no", "proxy": "403"}, out
    else:
        assert out["sibling"] == "yes" and out["forbidden"] == "yes" and out["unix"] == "yes", out


# -- the choice -----------------------------------------------------------------------------------

@pytest.mark.usefixtures("cli_spelling")
def test_auto_takes_landlock_where_bubblewrap_does_not_work(abi: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real failing bubblewrap (a path that does not exist): ``auto`` confines test runs and every agent
    with Landlock, and records it; ``--sandbox landlock`` never probes bubblewrap."""
    monkeypatch.setenv("HOMEFIELD_BWRAP", "/nonexistent/bwrap")
    bwrap.probe.cache_clear()
    try:
        auto = Sandboxes.choose(SandboxChoice("auto"))
        assert auto.bwrap is None and auto.why is not None
        assert auto.for_tests().name == "landlock"
        assert auto.for_agent(ProcessAgent(shell=False), False).name == "landlock"
        assert SandboxChoice("auto").for_tests() == "landlock"
        if abi >= landlock.SCOPED_ABI:
            assert auto.for_agent(ProcessAgent(shell=True), False).name == "landlock"
    finally:
        bwrap.probe.cache_clear()
    explicit = Sandboxes.choose(SandboxChoice("landlock"))
    assert explicit.why == "--sandbox landlock" and explicit.for_tests().name == "landlock"


def test_agents_that_run_commands_need_scoped_landlock() -> None:
    """Before ABI 6 a process under Landlock can still signal homefield's processes: an agent that runs
    commands is refused then (``auto`` and ``landlock`` alike), an edit-only one is confined; where
    Landlock is missing, ``landlock`` is a one-line refusal and ``auto`` without bubblewrap is today's."""
    shell, edit = ProcessAgent(shell=True), ProcessAgent(shell=False)
    nobwrap = "bubblewrap (bwrap) is not installed"
    with pytest.raises(LandlockUnavailable, match="agent 'a' can run commands, but Landlock ABI 5"):
        agent_backend_name("landlock", shell, False, None, 5)
    with pytest.raises(bwrap.BwrapUnavailable, match="not installed; and Landlock ABI 5"):
        agent_backend_name("auto", shell, False, nobwrap, 5)
    assert agent_backend_name("auto", edit, False, nobwrap, 5) == "landlock"
    assert agent_backend_name("auto", shell, False, nobwrap, 6) == "landlock"
    assert agent_backend_name("auto", shell, False, None, 6) == "bwrap"
    missing = "Landlock is not available here: not built into this kernel (errno 38)"
    with pytest.raises(LandlockUnavailable, match="not built into this kernel"):
        modes.tests_backend_name("landlock", None, missing)
    assert modes.tests_backend_name("auto", nobwrap, missing) == "none"
    assert agent_backend_name("auto", edit, False, nobwrap, missing) == "none"


def test_the_allowlist_note_names_landlock_only_without_tcp_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Landlock enforces the allowlist from ABI 4 (TCP rules); before it the session's note names the agent."""
    monkeypatch.setattr(modes, "landlock_state", lambda: 7)
    assert modes.unenforced_note("allowlist", {"c": "landlock", "b": "bwrap"}) is None
    monkeypatch.setattr(modes, "landlock_state", lambda: 3)
    note = modes.unenforced_note("allowlist", {"c": "landlock", "b": "bwrap", "o": "none"})
    assert note is not None and "c (Landlock without TCP rules), o (no sandbox)" in note and "b (" not in note
    assert modes.unenforced_note("shared", {"c": "landlock"}) is None


def test_the_launcher_never_runs_a_command_it_could_not_confine(abi: int, tmp_path: Path) -> None:
    """A policy it cannot apply: exit status 126, one line, and the command did not run."""
    marker = tmp_path / "ran"
    for policy in ("{not json", '{"rw": 3}'):
        proc = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), policy, "--", "touch", str(marker)],
                              capture_output=True, text=True)
        assert proc.returncode == 126 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("homefield landlock: ") and not marker.exists()
    version = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "--abi"], capture_output=True, text=True)
    assert version.stdout.strip() == str(abi)


def test_the_command_gets_the_default_action_of_sigpipe_and_sigxfsz(abi: int, tmp_path: Path) -> None:
    """Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across ``exec``: a command
    started by the launcher printed "Broken pipe" where it dies quietly elsewhere (``yes | head -1``), and
    went on with ``EFBIG`` past ``--max-file-mb`` where it is killed elsewhere. It gets the defaults, as
    the reaper gives every command."""
    policy = json.dumps({"ro": ["/"], "rw": [str(tmp_path)]})
    proc = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), policy, "--", "cat", "/proc/self/status"],
                          capture_output=True, text=True, check=True)
    ignored = int(next(ln for ln in proc.stdout.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << (signal.SIGPIPE - 1) | 1 << (signal.SIGXFSZ - 1)), hex(ignored)


def test_landlock_can_be_turned_off(abi: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HOMEFIELD_LANDLOCK=off``: the probe says so in one line, ``--sandbox landlock`` refuses with it."""
    monkeypatch.setenv("HOMEFIELD_LANDLOCK", "off")
    landlock.probe.cache_clear()
    try:
        with pytest.raises(LandlockUnavailable, match=r"^Landlock is turned off \(HOMEFIELD_LANDLOCK=off\)$"):
            SandboxChoice("landlock").for_tests()
    finally:
        landlock.probe.cache_clear()


# -- the demo, end to end -------------------------------------------------------------------------

@pytest.mark.slow
def test_the_oracle_solves_the_demos_tasks_under_landlock(abi: int, demo_run: DemoRun, tmp_path: Path) -> None:
    """``homefield run --sandbox landlock --agent oracle`` on a copy of the demo's mined repository: every
    task solved, every test run recorded ``landlock``."""
    assert demo_run.returncode == 0, demo_run.stderr[-3000:]
    repo = tmp_path / "repo"
    shutil.copytree(demo_run.repo, repo, symlinks=True, ignore=shutil.ignore_patterns("runs"))
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--sandbox", "landlock",
                           "--agent", "oracle", "--attempts", "1"], cwd=repo, env=clean_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = [json.loads(line) for path in (repo / ".homefield" / "runs").glob("*/results.jsonl")
               for line in path.read_text().splitlines()]
    tasks = (repo / ".homefield" / "tasks.jsonl").read_text().splitlines()
    assert len(results) == len(tasks) > 0
    assert {(r["outcome"], r["test_sandbox"]) for r in results} == {("solved", "landlock")}, results


@pytest.mark.slow
def test_a_cmd_agent_under_landlock_records_it(abi: int, task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """An agent's program under Landlock: it edits its workspace, the attempt records ``landlock``."""
    if abi < landlock.SCOPED_ABI:
        pytest.skip(f"Landlock ABI {abi}: agents that run commands are refused")
    agent = CommandAgent(name="w", spec="cmd:x", command="printf 'x' > touched && cat /etc/hostname >/dev/null",
                         settings=AgentSettings())
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice("landlock", "none"))
    r = run_attempt(spec, cache)
    assert r.sandbox == "landlock" and r.outcome == "tests_failed", r
    assert "touched" in (spec.artifacts / "diff.patch").read_text()
