"""Issue 30, fork bombs: every sandbox holds at most ``--max-procs`` processes (default 512), by a pids cgroup of
its own (root: this machine's cgroup v1 ``pids`` hierarchy) or by ``RLIMIT_NPROC`` set inside bubblewrap's own
user namespace (any other user), so that no attempt's code can exhaust the host's pids and make other agents'
attempts fail as ``infra``. Each bomb here is bounded (:data:`BOMB` children, all killed), never an unbounded one
on this shared machine: before the cap every one of them started, as root and as uid 1000."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cgroups import orphans

from pytest_homefield.sandbox import proccap
from pytest_homefield.sandbox.backends import BwrapBackend, LandlockBackend, TestBox
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, Policy, bwrap_argv, probe, userns_args
from pytest_homefield.sandbox.landlock import LandlockUnavailable
from pytest_homefield.sandbox.landlock import probe as landlock_probe
from pytest_homefield.sandbox.procs import run_process

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
#: Children a bounded bomb tries to hold at once: four times the default cap.
BOMB = 2000
#: The bounded bomb (run by the system's python3: readable by uid 1000, unlike a venv under /root): the
#: number of children it held at once, then the errno that stopped it (``None``: none did); with a second
#: argument it holds them that many seconds more.
BOMB_PY = """
import os, sys, time
pids, err = [], None
for _ in range(int(sys.argv[1])):
    try:
        pids.append(os.posix_spawn("/bin/sleep", ["sleep", "30"], {}))
    except OSError as exc:
        err = exc.errno
        break
print(len(pids), err, flush=True)
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
for p in pids:
    os.kill(p, 9)
for p in pids:
    os.waitpid(p, 0)
"""


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def _python3() -> str:
    found = shutil.which("python3", path="/usr/bin:/bin")
    if found is None:
        pytest.skip("no system python3")
    return found


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder uid 1000 can read (pytest's own are root's alone), holding the bomb's script."""
    folder = Path(tempfile.mkdtemp(prefix="homefield-proccap-", dir="/tmp"))
    folder.chmod(0o755)
    (folder / "bomb.py").write_text(BOMB_PY)
    (folder / "bomb.py").chmod(0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _started(out: str) -> tuple[int, int | None]:
    n, err = out.split()
    return int(n), None if err == "None" else int(err)


def _orphans(since: float) -> set[str]:
    """The sandboxes' pids cgroups made since ``since`` whose reaper is gone (:func:`helpers.cgroups.orphans`)."""
    return orphans(proccap.pids_root(), since)


def test_a_bounded_bomb_as_root_stops_at_the_cap(shared: Path, tmp_path: Path) -> None:
    """Root: the kernel exempts uid 0 from ``RLIMIT_NPROC``, so the sandbox's pids cgroup holds it (measured
    before: 2000 of 2000 started; after: 509, bubblewrap's two processes and the bomb's own taking the rest).
    The cgroup is gone once the command ended."""
    since = time.time()
    if os.geteuid() != 0 or proccap.pids_root() is None:
        pytest.skip("needs root and a writable pids cgroup (cgroup v1 pids, or a delegated v2 subtree)")
    exe = _bwrap()
    argv = bwrap_argv([_python3(), str(shared / "bomb.py"), str(BOMB)], Policy(cwd=shared, ro=[shared]), bwrap=exe,
                      args_fd=True)
    r = run_process(argv, cwd=shared, env=ENV, timeout_s=120, stdout_path=tmp_path / "out",
                    stderr_path=tmp_path / "err")
    assert r.exit_code == 0, (tmp_path / "err").read_text()
    n, err = _started((tmp_path / "out").read_text())
    assert err == 11 and proccap.DEFAULT_MAX_PROCS - 8 <= n < proccap.DEFAULT_MAX_PROCS, n  # EAGAIN
    assert not _orphans(since)


def test_a_bounded_bomb_as_uid_1000_stops_at_the_cap_set_in_its_user_namespace(
        shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any user but root: ``RLIMIT_NPROC`` set by ``prlimit`` inside bubblewrap's new user namespace counts the
    sandbox's processes only (measured before: 2000 of 2000; after: 510). Its hard limit is the cap, and the
    sandbox cannot raise it (no ``CAP_SYS_RESOURCE`` in the host's namespace). bubblewrap runs as a real uid
    1000 here (``setpriv``), not as uid 1000 of a namespace whose kuid is 0 (exempt as root is), with the argv
    homefield builds when it runs as that user (its ``geteuid``: this test process is root, and this package's
    interpreter lies under root's home, which uid 1000 cannot read)."""
    exe = _bwrap()
    setpriv = shutil.which("setpriv")
    user = [setpriv or "setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups"]
    if os.geteuid() != 0 or setpriv is None or subprocess.run([*user, exe, "--ro-bind", "/", "/", "--unshare-user",
                                                             "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root's setpriv to uid 1000, and bubblewrap working as that user")
    if proccap.prlimit_path() is None or os.stat(shutil.which(exe) or exe).st_mode & 0o4000:
        pytest.skip("needs util-linux's prlimit and a bubblewrap that is not setuid")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    policy = Policy(cwd=shared, ro=[shared])
    bomb = subprocess.run([*user, *bwrap_argv([_python3(), str(shared / "bomb.py"), str(BOMB)], policy, bwrap=exe)],
                          capture_output=True, text=True, timeout=120)
    assert bomb.returncode == 0, bomb.stderr
    n, err = _started(bomb.stdout)
    assert err == 11 and proccap.DEFAULT_MAX_PROCS - 8 <= n < proccap.DEFAULT_MAX_PROCS, n
    script = ("grep 'Max processes' /proc/self/limits; prlimit --pid $$ --nproc=unlimited:unlimited "
              "&& echo raised || echo kept")
    limits = subprocess.run([*user, *bwrap_argv(["sh", "-c", script], policy, bwrap=exe)], capture_output=True,
                            text=True, timeout=60)
    cap = proccap.DEFAULT_MAX_PROCS
    assert limits.stdout.split()[2:4] == [str(cap), str(cap)], limits.stdout
    assert limits.stdout.rstrip().endswith("kept"), limits.stdout + limits.stderr
    # nor does a user namespace of its own reset the count (atk21): the kernel counts each level up to the
    # sandbox's against the limit its creator held, so three bombs in three nested namespaces share one cap
    nested = " & ".join([f"unshare -U -r {_python3()} {shared / 'bomb.py'} 300 3"] * 3) + " & wait"
    run = subprocess.run([*user, *bwrap_argv(["sh", "-c", nested], policy, bwrap=exe)], capture_output=True,
                         text=True, timeout=120)
    held = [int(line.split()[0]) for line in run.stdout.splitlines() if line.split()[:1] != ["None"]]
    if "--disable-userns" in userns_args(exe):  # satk46: no user namespace is made inside at all
        assert not held and run.stderr.count("No space left on device") == 3, run.stdout + run.stderr
    else:
        assert held and sum(held) < cap, run.stdout + run.stderr


def test_a_bomb_leaves_a_concurrent_sandbox_its_room(shared: Path, tmp_path: Path) -> None:
    """Per sandbox, not per host: while one sandbox holds its cap, another starts its 300 children in full."""
    if proccap.cap_by("bwrap") is None:
        pytest.skip("no process cap here")
    exe = _bwrap()
    policy = Policy(cwd=shared, ro=[shared])
    outs = {"bomb": BOMB, "honest": 300}
    results: dict[str, object] = {}

    def run(name: str) -> None:
        argv = bwrap_argv([_python3(), str(shared / "bomb.py"), str(outs[name])], policy, bwrap=exe, args_fd=True)
        results[name] = run_process(argv, cwd=shared, env=ENV, timeout_s=120, stdout_path=tmp_path / name)

    threads = [threading.Thread(target=run, args=(name,)) for name in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _started((tmp_path / "honest").read_text()) == (300, None)
    assert _started((tmp_path / "bomb").read_text())[1] == 11


def test_landlock_test_runs_get_the_pids_cgroup(shared: Path, tmp_path: Path) -> None:
    """Landlock has no user namespace (``RLIMIT_NPROC`` would count every process of the user): its test runs
    get the pids cgroup where one can be made."""
    try:
        abi = landlock_probe()
    except LandlockUnavailable as exc:
        pytest.skip(str(exc))
    if proccap.pids_root() is None:
        pytest.skip("no writable pids cgroup")
    backend = LandlockBackend(abi)
    wrapped = backend.wrap_tests([_python3(), str(shared / "bomb.py"), str(BOMB)], ENV,
                                 TestBox(workdir=shared, out_dir=tmp_path))
    r = run_process(wrapped.argv, cwd=shared, env=ENV, timeout_s=120, stdout_path=tmp_path / "out")
    assert r.exit_code == 0
    n, err = _started((tmp_path / "out").read_text())
    assert err == 11 and n < proccap.DEFAULT_MAX_PROCS, n


def test_a_cgroup_the_reaper_cannot_make_is_a_command_that_does_not_start(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail closed: never a sandbox that runs uncapped because its cgroup could not be made (here: its root
    is a file, ``ENOTDIR``)."""
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(proccap, "pids_root", lambda: tmp_path / "file")
    with pytest.raises(OSError) as raised:
        run_process(proccap.marked(["true"]), cwd=tmp_path, env=ENV, timeout_s=30)
    assert raised.value.errno == errno.ENOTDIR


def test_the_mark_becomes_the_reapers_option_and_the_cap_follows_max_procs(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(proccap, "pids_root", lambda: tmp_path)
    monkeypatch.setattr(proccap, "memory_root", lambda: None)  # the memory cgroup: tests/sandbox/test_memory_cgroup.py
    monkeypatch.setattr(proccap, "cpu_root", lambda: None)  # the cpu cgroup: tests/sandbox/test_cpu_share.py
    monkeypatch.setattr(proccap, "_CAP", [64])
    assert proccap.marked(["x", "y"]) == ["@homefield-pids:64", "x", "y"]
    assert proccap.split_mark(proccap.marked(["x"])) == ([f"pids=64:{tmp_path}"], ["x"])
    assert proccap.split_mark(["x"]) == ([], ["x"])
    monkeypatch.setattr(proccap, "pids_root", lambda: None)
    assert proccap.marked(["x"]) == ["x"]
    assert proccap.cap_by("landlock") is None and proccap.cap_by("none") is None
    monkeypatch.setattr(proccap, "by_rlimit", lambda bwrap="bwrap": True)
    tool = proccap.prlimit_path()
    if tool is not None:
        assert proccap.inside_argv(["x"]) == [tool, "--nproc=64:64", "--sigpending=256:256", "--", "x"]
    monkeypatch.setattr(proccap, "by_rlimit", lambda bwrap="bwrap": False)  # root: exempt from --nproc
    if tool is not None:
        assert proccap.inside_argv(["x"]) == [tool, "--sigpending=256:256", "--", "x"]  # satk46
    monkeypatch.setattr(proccap, "prlimit_path", lambda: None)
    assert proccap.inside_argv(["x"]) == ["x"]


def test_no_cap_is_one_line_naming_the_sandboxes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proccap, "pids_root", lambda: None)
    monkeypatch.setattr(proccap, "by_rlimit", lambda bwrap="bwrap": False)
    note = proccap.no_cap_note({"agent claude": "bwrap", "agent oracle": "none", "test runs": "landlock"})
    assert note is not None and "\n" not in note
    assert "agent claude, test runs" in note and "oracle" not in note
    monkeypatch.setattr(proccap, "by_rlimit", lambda bwrap="bwrap": True)
    assert proccap.cap_by("bwrap") == "RLIMIT_NPROC" and proccap.cap_by("landlock") is None
    assert proccap.no_cap_note({"agent claude": "bwrap"}) is None


def test_a_refused_fork_in_a_failed_run_is_named() -> None:
    tail = b"BlockingIOError: [Errno 11] Resource temporarily unavailable\n"
    assert proccap.over_cap_note(tail, 512) == ("a test process could not start a process: its sandbox holds at "
                                                "most 512 (--max-procs)")
    assert proccap.over_cap_note(tail, None) is None
    assert proccap.over_cap_note(b"1 failed\n", 512) is None


def test_the_sweep_removes_the_cgroups_of_dead_reapers_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for pid in (dead.pid, os.getpid()):
        (tmp_path / f"{proccap.CGROUP_PREFIX}{pid}-1").mkdir()
    (tmp_path / "other").mkdir()
    monkeypatch.setattr(proccap, "pids_root", lambda: tmp_path)
    assert proccap.sweep_cgroups() == [tmp_path / f"{proccap.CGROUP_PREFIX}{dead.pid}-1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{proccap.CGROUP_PREFIX}{os.getpid()}-1", "other"]


def test_bwrap_backend_test_runs_carry_the_cap(tmp_path: Path) -> None:
    """The argv a grading or mining run gets: ``prlimit`` in front of its command inside, the cgroup's mark
    in front of bubblewrap where one can be made."""
    exe = _bwrap()
    wrapped = BwrapBackend(exe).wrap_tests(["true"], ENV, TestBox(workdir=tmp_path, out_dir=tmp_path / "o"))
    tail = wrapped.argv[wrapped.argv.index("--"):]
    if proccap.by_rlimit(exe):
        assert tail[1:3] == [proccap.prlimit_path(), f"--nproc={proccap.max_procs()}:{proccap.max_procs()}"]
    assert wrapped.argv[0].startswith(proccap.PIDS_MARK) == (proccap.pids_root() is not None)


#: A ``{junit}`` test command's script: the bounded bomb, then one test case that fails when a fork was refused.
FORKS = """import os, sys
pids, failure = [], ""
for _ in range(int(sys.argv[1])):
    try:
        pids.append(os.posix_spawn("/bin/sleep", ["sleep", "30"], {}))
    except OSError as exc:
        print(exc, flush=True)
        failure = '<failure message="fork refused"/>'
        break
for p in pids:
    os.kill(p, 9)
    os.waitpid(p, 0)
with open(sys.argv[2], "w") as f:
    f.write(f'<testsuite><testcase classname="t" name="test_forks">{failure}</testcase></testsuite>')
"""


def test_a_test_run_over_the_cap_fails_and_says_why(tmp_path: Path) -> None:
    """Grading's and mining's runs (``run_tests`` in bubblewrap): the bomb's fork is refused, its test fails
    (scored), and the run names the cap (``TestRun.procs_refused``, appended to a failed grade's error)."""
    from pytest_homefield.sandbox.testrun import run_tests

    if proccap.cap_by("bwrap") is None:
        pytest.skip("no process cap here")
    work = tmp_path / "work"
    work.mkdir()
    (work / "forks.py").write_text(FORKS)
    run = run_tests(work, f"{sys.executable} forks.py {BOMB} {{junit}}", [], out_dir=tmp_path / "out",
                    timeout_s=120, sandbox=BwrapBackend(_bwrap()))
    assert run.sandbox == "bwrap" and run.outcomes == {"t::test_forks": "failed"}, run
    assert run.procs_refused == f"a test process could not start a process: its sandbox holds at most " \
                                f"{proccap.max_procs()} (--max-procs)"
    assert run.cap_note() == run.procs_refused


def test_meta_and_the_header_say_how_each_sandbox_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``meta.json`` ``sandbox.max_procs`` (the cap, how each sandbox gets it) and the header's one line where a
    sandbox gets none (root without a writable pids cgroup: nothing else caps it)."""
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.run.runner import sandbox_summary
    from pytest_homefield.settings import resolve_settings

    _bwrap()
    settings = resolve_settings(tmp_path, {"sandbox": "bwrap", "max_procs": 100})
    agents = build_agents(["cmd:true", "oracle"], settings)
    monkeypatch.setattr(proccap, "pids_root", lambda: tmp_path)
    summary = sandbox_summary(settings, agents)
    assert summary["max_procs"] == {"cap": 100, "agents": {"cmd": "pids cgroup", "oracle": None},
                                    "tests": "pids cgroup"}
    assert summary["no_proc_cap"] is None
    monkeypatch.setattr(proccap, "pids_root", lambda: None)
    monkeypatch.setattr(proccap, "by_rlimit", lambda bwrap="bwrap": False)
    line = sandbox_summary(settings, agents)["no_proc_cap"]
    assert line.startswith("homefield: no process cap for agent cmd, test runs (") and "oracle" not in line


def test_the_cgroup_is_gone_after_a_timeout_too(tmp_path: Path) -> None:
    """A command stopped on its timeout: the reaper kills its tree, reaps it, then removes its cgroup."""
    since = time.time()
    if proccap.pids_root() is None:
        pytest.skip("no writable pids cgroup")
    r = run_process(proccap.marked(["sh", "-c", "sleep 30 & sleep 30 & wait"]), cwd=tmp_path, env=ENV, timeout_s=0.5)
    assert r.timed_out and not _orphans(since)


def test_rlimit_nproc_is_no_cap_on_a_kernel_that_counts_the_users_every_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before Linux 5.14 RLIMIT_NPROC counted every task of the uid on the host, not of the sandbox's user
    # namespace (atk21): 512 set inside the sandbox refused its forks, an honest fix's tests failing, whenever
    # the user held 512 tasks elsewhere (a browser's threads); there bubblewrap gets no prlimit
    def kernel(release: str) -> None:
        monkeypatch.setattr(os, "uname", lambda: os.uname_result(("Linux", "host", release, "#1", "x86_64")))

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(proccap, "_setuid", lambda exe: False)
    monkeypatch.setattr(proccap, "prlimit_path", lambda: "/usr/bin/prlimit")
    monkeypatch.setattr(proccap, "pids_root", lambda: None)
    kernel("5.10.0-28-amd64")
    assert not proccap.by_rlimit() and proccap.inside_argv(["x"]) == ["/usr/bin/prlimit", "--sigpending=256:256",
                                                                      "--", "x"]
    assert proccap.cap_by("bwrap") is None
    note = proccap.no_cap_note({"test runs": "bwrap"})
    assert note is not None and "before 5.14" in note
    kernel("5.14.0-362.el9.x86_64")
    n = proccap.max_procs()
    assert proccap.by_rlimit() and proccap.inside_argv(["x"])[:2] == ["/usr/bin/prlimit", f"--nproc={n}:{n}"]
    old = ["5.13.19-2-pve", "4.18.0-513.el8.x86_64", "3.10.0", "5.4", "garbage", ""]
    new = ["5.14", "5.15.0-91-generic", "6.18.44-fc-v1147", "10.0.1"]
    assert [proccap.counts_per_namespace(r) for r in old + new] == [False] * len(old) + [True] * len(new)
