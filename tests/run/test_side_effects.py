"""Issue 30, escapes from scoring through side effects: each attack is an agent run through
``run_attempt`` on the task of :mod:`attack_repo`. On the code before the fix each of them ended
unscored (``infra``), unrecorded, or not at all; now each is scored (``agent_error`` or ``timeout``)
with its reason, and the run folder holds at most the caps."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from helpers.attack_repo import Fixture, cmd_agent, writes_calc
from helpers.bwrap import bwrap_works

from pytest_homefield.agents.base import AgentContext, AgentResult
from pytest_homefield.records import Result, Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

MIB = 1 << 20


SANDBOXES = [pytest.param("bwrap", id="sandboxed", marks=pytest.mark.skipif(not bwrap_works(), reason="no bwrap")),
             pytest.param("none", id="no-sandbox")]


def attempt(task: Task, cache: SnapshotCache, agent: object, tmp_path: Path, sandbox: str = "auto",
            timeout_s: float = 60, **kw: object) -> tuple[Result, Path]:
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",  # type: ignore[arg-type]
                       timeout_s=timeout_s, run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"),
                       **kw)  # type: ignore[arg-type]
    return run_attempt(spec, cache), spec.artifacts


class InProcess:
    """An in-process agent (as a conftest's ``pytest_homefield_agents`` hook can add): no sandbox, no
    ``RLIMIT_FSIZE``; ``fn`` edits the workspace."""

    simulated = False
    hinted = False

    def __init__(self, fn: object) -> None:
        self.name, self.spec, self.fn = "inproc", "test:inproc", fn

    def version(self) -> str | None:
        return None

    def run(self, ctx: AgentContext) -> AgentResult:
        self.fn(ctx)  # type: ignore[operator]
        return AgentResult()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_named_pipe_left_in_the_workspace_is_the_agents_fault(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                                sandbox: str) -> None:
    """Before: grading failed as ``infra`` (``--resume`` retried it for ever). Now: ``agent_error``."""
    r, art = attempt(task, cache, cmd_agent("mkfifo src/calc/feed"), tmp_path, sandbox)
    assert r.outcome == "agent_error" and r.scored, r
    assert r.error is not None and "named pipe at src/calc/feed" in r.error
    assert (art / "diff.patch").read_text() == ""


def test_a_sparse_gibibyte_ends_the_attempt_at_once_as_the_agents_fault(task: Task, cache: SnapshotCache,
                                                                        tmp_path: Path) -> None:
    """Before: grading compared, diffed and copied the 1 GiB file (the attempt did not finish).
    Now: it is seen by its apparent size, never read."""
    def sparse(ctx: AgentContext) -> None:
        with open(ctx.workspace / "src" / "calc" / "table.bin", "wb") as f:
            f.truncate(1 << 30)

    started = time.monotonic()
    r, art = attempt(task, cache, InProcess(sparse), tmp_path)
    assert time.monotonic() - started < 30
    assert r.outcome == "agent_error", r
    assert r.error is not None and "src/calc/table.bin holds 1073741824 bytes, over the 50 MiB per file" in r.error


def test_a_file_written_past_the_cap_is_cut_there_and_scored(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """``RLIMIT_FSIZE`` stops the write one byte past ``--max-file-mb``; the file is then seen over it."""
    agent = cmd_agent("head -c 60000000 /dev/zero > src/calc/blob.bin; echo \"exit $?\" >&2")
    r, art = attempt(task, cache, agent, tmp_path)
    assert r.outcome == "agent_error", r
    assert r.error is not None and "src/calc/blob.bin holds 52428801 bytes, over the 50 MiB per file" in r.error
    assert "exit 153" in (art / "agent.err").read_text() or "exit 1" in (art / "agent.err").read_text()


def test_flooding_stdout_is_capped_and_the_attempt_recorded(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """Before: ``agent.out`` grew for the whole timeout (it filled the runs folder; homefield's own
    write then failed and nothing was recorded). Now: each stream keeps at most its cap."""
    r, art = attempt(task, cache, cmd_agent("yes; exit 0"), tmp_path, timeout_s=1.5)
    assert r.outcome == "timeout" and r.scored, r
    out = (art / "agent.out").read_bytes()
    assert len(out) <= 5 * MIB + 200
    assert b"[homefield: " in out and b"bytes of agent.out cut here" in out and out.endswith(b"y\n")


def test_writing_past_the_total_stops_the_agent(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The disk watch stops an agent that keeps writing (small caps here; 500 MiB by default)."""
    from pytest_homefield.sandbox.limits import WriteLimits

    agent = cmd_agent("i=0; while [ $i -lt 400 ]; do head -c 1000000 /dev/zero > f$i.bin; sync; i=$((i+1)); "
                      "sleep 0.02; done")
    started = time.monotonic()
    r, _ = attempt(task, cache, agent, tmp_path, timeout_s=60,
                   limits=WriteLimits(file_bytes=2 * MIB, total_bytes=4 * MIB, poll_s=0.2))
    assert time.monotonic() - started < 20
    assert r.outcome == "agent_error", r
    assert r.error is not None and "over 4 MiB" in r.error


def test_making_empty_files_past_the_total_stops_the_agent_while_it_runs(task: Task, cache: SnapshotCache,
                                                                        tmp_path: Path) -> None:
    """atk25: empty files take an inode each and next to no bytes, and the disk watch polled the used bytes of
    its folders' file systems only, so it never walked them: an agent making 20,000 empty files (80 MiB as the
    final check counts them, an inode and a block each) ran on to its end unstopped; at one process's 100,000 in
    15 s it takes about 6 M of the disk's 16 M free inodes in the default 900 s (every other writer on the
    machine failing once they are gone: other agents' attempts, homefield's own records). The poll counts each
    inode used as an entry now, and stops it while it runs."""
    from pytest_homefield.sandbox.limits import WriteLimits

    agent = cmd_agent("python3 -c 'import os, time\n"
                      "for d in range(100):\n"
                      "    os.mkdir(\"e%d\" % d)\n"
                      "    for i in range(200):\n"
                      "        open(\"e%d/%d\" % (d, i), \"w\").close()\n"
                      "time.sleep(40)'")
    started = time.monotonic()
    r, _ = attempt(task, cache, agent, tmp_path, timeout_s=60,
                   limits=WriteLimits(file_bytes=2 * MIB, total_bytes=4 * MIB, poll_s=0.2))
    assert r.outcome == "agent_error", r
    assert r.error is not None and "over 4 MiB" in r.error and r.error.endswith("; stopped"), r.error
    assert time.monotonic() - started < 30


#: atk25's deep writer: 20 folders of 250-character names (a path of 5,000 bytes, past the system's 4,096,
#: which the host's walk named each entry by), then 1 MiB files below them until it cannot, saying each (50 a
#: second at most: the watch is a bound of one poll of writing, not a quota).
DEEP_WRITER = ("python3 -c 'import os, time\n"
               "for i in range(20):\n"
               "    os.mkdir(\"d\" * 250); os.chdir(\"d\" * 250)\n"
               "block = os.urandom(1 << 20)\n"
               "for i in range(200):\n"
               "    try:\n"
               "        open(\"f%d\" % i, \"wb\").write(block)\n"
               "    except OSError:\n"
               "        break\n"
               "    print(\"wrote\", i + 1, \"MiB\", flush=True)\n"
               "    time.sleep(0.02)'")


def test_writing_below_a_path_too_long_to_name_is_seen_and_stopped(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """atk25: the host walked the agent's folders by path, and skipped a folder whose path was longer than the
    system's limit (``ENAMETOOLONG``, as an unreadable one): what the agent wrote below 20 folders of 250-character
    names counted for nothing. On a 96 MiB disk (a tmpfs holding its workspace) it wrote 90 MiB there past a
    4 MiB cap and filled it; the watch found its folders had grown by nothing, so the full disk was not its doing
    (on a real machine every other writer fails; here the attempt was graded as if nothing happened). Now a
    path the host cannot walk is the agent's fault: stopped while it runs, ``agent_error``."""
    from helpers.tmpfs import mounted_tmpfs

    from pytest_homefield.sandbox.limits import WriteLimits

    with mounted_tmpfs(tmp_path / "disk", "96m") as disk:
        cache = SnapshotCache(repo=fx.root, root=disk)
        try:
            r, art = attempt(task, cache, cmd_agent(DEEP_WRITER), tmp_path, timeout_s=60,
                             limits=WriteLimits(file_bytes=2 * MIB, total_bytes=4 * MIB, poll_s=0.2))
        finally:
            cache.close()
    said = (art / "agent.out").read_text().split()
    wrote = int(said[-2]) if said else 0
    assert r.outcome == "agent_error", (r, wrote)
    assert r.error is not None and "cannot walk" in r.error, r.error
    assert wrote < 40, f"it wrote {wrote} MiB below the long path past a 4 MiB cap"


def test_a_chain_of_folders_deeper_than_pythons_recursion_is_the_agents_fault_and_removed(
        task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """atk25: 3,000 nested one-letter folders (12 MiB as the cap counts them, a path of 6,000 bytes): the walk
    skipped them, and removing the workspace raised ``RecursionError`` (``shutil.rmtree`` recurses once a level,
    ``ignore_errors`` catches only ``OSError``) out of ``run_attempt``: the attempt had no result line, which
    ``--resume`` makes again, and the folders stayed in the temp folder. Now ``agent_error`` (a folder too deep
    to walk), and the workspace is gone."""
    before = set(cache.root.iterdir()) if cache.root.exists() else set()
    agent = cmd_agent("python3 -c 'import os\nfor i in range(3000):\n    os.mkdir(\"a\"); os.chdir(\"a\")'")
    r, _ = attempt(task, cache, agent, tmp_path, timeout_s=60)
    assert r.outcome == "agent_error" and r.error is not None and "cannot walk" in r.error, r
    left = set(cache.root.iterdir()) - before
    assert all(p.name != "a" for entry in left for p in entry.rglob("a")), left


#: A wrong fix whose import makes a chain of 3,000 folders in its test process's working directory (the grading
#: copy, or a twin run's copy of it), reached by descriptor: what graded code can do where nothing confines it.
DEEP_AT_IMPORT = """
def sub(a, b):
    return a + b


import os
fd = os.open(".", os.O_RDONLY)
for _ in range(3000):
    try:
        os.mkdir("z", dir_fd=fd)
    except FileExistsError:
        pass
    fd, old = os.open("z", os.O_RDONLY, dir_fd=fd), fd
    os.close(old)
"""


@pytest.mark.slow
def test_a_chain_of_folders_graded_code_leaves_in_its_copy_is_scored(task: Task, cache: SnapshotCache,
                                                                     tmp_path: Path) -> None:
    """hatk34, ``--sandbox none`` (where the hidden tests may write their copy: bubblewrap and Landlock keep it
    read-only): a wrong fix whose import made 3,000 nested folders in the twin run's copy made the host's
    ``shutil.rmtree`` of that copy (and ``TemporaryDirectory`` of the grading copy) raise ``RecursionError``:
    ``infra``, "grading failed", homefield's own, so never a claim, retried by ``--resume`` and then left
    unscored for good. Now each copy is removed by descriptor at any depth (``nofollow.remove_tree``,
    ``tempdirs.scratch``), and the test run's write watch finds the folders it cannot walk: ``agent_error``."""
    agent = cmd_agent(writes_calc(DEEP_AT_IMPORT))
    r, _ = attempt(task, cache, agent, tmp_path, "none", timeout_s=60)
    assert r.outcome == "agent_error" and r.scored, r
    assert r.error is not None and "nested deeper than 256" in r.error, r.error


@pytest.mark.slow
def test_graded_code_that_spoils_the_control_run_is_scored(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """hatk34, ``--sandbox none`` only (bubblewrap and Landlock keep the pristine snapshot out of a test run's
    reach): a wrong fix whose import appends ``os._exit(3)`` to the pristine snapshot's module (found below the
    snapshot cache's folder, which any process of the user can list) and then exits ended ``infra`` ("the test
    process did not finish ..., nor on the untouched parent with the hidden tests"): the control run that tells
    the agent's fault from the environment's was built from that snapshot after the graded process was gone, and
    ``infra`` homefield established is never a claim: on the last ``--resume`` try it stayed unscored for good.
    Now the host checks the snapshot against the digest it keeps in its own memory before the control run: the
    change is the graded code's (``agent_error``, scored), and the snapshot is rebuilt from git objects for the
    attempts after it."""
    import base64

    from pytest_homefield.run.grading import SPOILED_PRISTINE

    payload = (f"\n\ndef sub(a, b):\n    return a + b\n\n\nimport glob, os\n"
               f"for d in glob.glob({str(cache.root)!r} + '/*/s/src/calc'):\n"
               "    with open(d + '/__init__.py', 'a') as f:\n"
               "        f.write('\\nimport os\\nos._exit(3)\\n')\n"
               "os._exit(1)\n")
    code = base64.b64encode(payload.encode()).decode()
    r, _ = attempt(task, cache, cmd_agent(f"echo {code} | base64 -d >> src/calc/__init__.py"), tmp_path, "none",
                   timeout_s=60)
    assert r.scored and r.outcome == "agent_error", r
    assert r.error == f"hidden tests: {SPOILED_PRISTINE}", r.error
    snap = cache.pristine(task)
    assert "os._exit" not in (snap / "src" / "calc" / "__init__.py").read_text()


@pytest.mark.slow
def test_a_change_of_many_short_lines_leaves_a_capped_diff_and_costs_the_host_little(
        task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """atk19: within the workspace caps, files of short lines made a ``diff.patch`` up to twice their
    size in the user's run folder, and grading held about 47 bytes of memory per byte of it (96 MB of
    ``ab`` lines: 4.6 GB, 58 s; at the 500 MiB cap, more than this machine's memory: a killed worker
    is ``infra``, never scored). Here 6 MB: before, an 8 MB ``diff.patch`` and 230 MB traced at the peak.
    Now: each diff is kept up to ``--max-output-mb`` (1 MiB here), cut with a line saying so, git stopped
    there, and the cut change is flagged as too large to scan."""
    import tracemalloc

    from pytest_homefield.run.changes import CUT_LINE
    from pytest_homefield.run.suspicious import TOO_LARGE
    from pytest_homefield.sandbox.limits import WriteLimits

    agent = cmd_agent("for i in 1 2 3; do yes ab | head -c 2000000 > src/calc/lines$i.txt; done")
    tracemalloc.start()
    try:
        r, art = attempt(task, cache, agent, tmp_path, limits=WriteLimits(output_bytes=MIB))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.outcome == "tests_failed" and r.scored, r
    assert r.suspicious and r.suspicious_reason is not None and TOO_LARGE in r.suspicious_reason, r
    diff = (art / "diff.patch").read_bytes()
    assert len(diff) <= MIB + 200, len(diff)
    assert diff.endswith((CUT_LINE.format(limit=MIB) + "\n").encode()), diff[-300:]
    assert diff.startswith(b"diff --git a/src/calc/lines1.txt b/src/calc/lines1.txt\n"), diff[:200]
    assert peak < 40 * MIB, f"{peak / MIB:.0f} MiB traced at the peak"


#: Run by :func:`test_folders_the_agent_made_unreadable_are_read_counted_graded_and_removed` as a user other
#: than root: each attack is one attempt (after a wrong fix) with caps of 2 MiB a file and 4 MiB in all.
UNREADABLE_ATTACKS = {
    "unreadable-package": "chmod 000 src/calc",
    "unreadable-file": "chmod 000 src/calc/__init__.py",
    "unreadable-root": "chmod 000 .",
    # write-only: the agent can add files the host cannot list, then hides the folder
    # 1 MB a step for up to 200 steps (10 s or more): the disk watch (every 0.5 s) stops it past 4 MiB even
    # on a loaded machine; with 20 steps (1 s) a watch thread scheduled late found the folder only at the end
    "hidden-folder": "mkdir d && chmod 300 d && i=0; while [ $i -lt 200 ]; do head -c 1000000 /dev/zero > d/f$i.bin; "
                     "sync; i=$((i+1)); sleep 0.05; done; chmod 000 d",
}
UNREADABLE_CHILD = r'''
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from helpers.attack_repo import WRONG_CALC, build, script_agent, task_for
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.limits import WriteLimits
base, out = Path(sys.argv[1]), {}
fx = build(base / "repo")
task = task_for(fx, canaries=1)
cache = SnapshotCache(repo=fx.root)
for name, shell in json.loads(sys.argv[3]).items():
    agent = script_agent(base / name, {"src/calc/__init__.py": WRONG_CALC}, shell=shell, name=name)
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=base / "run", timeout_s=60,
                       run_timeout_s=120, limits=WriteLimits(file_bytes=2 << 20, total_bytes=4 << 20, poll_s=0.2))
    r = run_attempt(spec, cache)
    out[name] = [r.outcome, r.error]
cache.close()
print(json.dumps(out))
'''


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_folders_the_agent_made_unreadable_are_read_counted_graded_and_removed(tmp_path: Path) -> None:
    """atk19, as any user but root (here: uid 1000 of a user namespace, where the permission bits bind as
    they do for a user): ``chmod 000`` of a folder or file in its workspace made grading raise
    ``PermissionError``: ``infra``, homefield's own failure, never scored (each 1 of 1 attempt with no fix);
    the disk watch skipped a folder it could not list, so 20 MB written into a write-only one passed a
    4 MiB cap unseen (it could fill the disk); and ``shutil.rmtree`` left each such workspace in the temp
    folder. Now the owner's access is given back (``nofollow.restore_access``) once the agent stopped, and to
    folders by the disk watch before it counts: each is graded, the hidden folder's writer is stopped at the
    cap, and nothing is left behind."""
    import json
    import subprocess
    import sys

    from helpers.userns import as_user_1000

    as_user = as_user_1000()
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.run([*as_user, sys.executable, "-c", UNREADABLE_CHILD,
                           str(tmp_path / "base"), str(Path(__file__).parent.parent), json.dumps(UNREADABLE_ATTACKS)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.splitlines()[-1])
    for name in ("unreadable-package", "unreadable-file", "unreadable-root"):
        assert got[name][0] == "tests_failed", (name, got[name])
    # stopped while it wrote (the disk watch gives the folder back), not only found over the cap at the end
    assert got["hidden-folder"] == ["agent_error", "the agent wrote over 4 MiB into its folders (--max-workspace-mb); "
                                                   "stopped"], got["hidden-folder"]
    assert not [p.name for p in temp.iterdir() if p.name.startswith("hf-")]


@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_no_host_path_inside_the_sandbox(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """Before: fd 1 was the host's ``agent.out`` (its path readable with ``readlink``), PID 1's
    command line listed every bound host path and its environment was the user's (atk30: every secret of
    it, ``PWD``). Now: a pipe, bubblewrap's options in a memfd, and no environment of PID 1."""
    agent = cmd_agent("readlink /proc/self/fd/1; readlink /proc/self/fd/2; tr '\\0' ' ' < /proc/1/cmdline; echo; "
                      "echo \"environ[$(tr '\\0' ' ' < /proc/1/environ)]\"")
    r, art = attempt(task, cache, agent, tmp_path, "bwrap")
    assert r.sandbox == "bwrap" and r.outcome == "empty_patch", r
    fd1, fd2, cmdline, environ = (art / "agent.out").read_text().splitlines()[:4]
    assert environ == "environ[]", environ
    assert fd1.startswith("pipe:[") and fd2.startswith("pipe:["), (fd1, fd2)
    assert "--args" in cmdline
    for host in (str(cache.root), str(tmp_path), str(cache.pristine(task)), os.path.realpath(cache.root)):
        assert host not in cmdline, (host, cmdline)


def test_the_settings_reach_the_attempt(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """``--max-output-mb``, ``--max-file-mb`` and ``--max-workspace-mb`` become the attempt's limits (and
    ``--max-test-write-mb`` its hidden tests': run, verify and ablate make their attempts here)."""
    from pytest_homefield.run.runner import AttemptRunner
    from pytest_homefield.settings import Settings

    settings = Settings(root=fx.root, sandbox="none", max_output_mb=0.0625, max_file_mb=0.5, max_workspace_mb=3,
                        max_test_write_mb=8)
    runner = AttemptRunner(settings, [], run_id="r", results=tmp_path / "r.jsonl", folder=lambda variant: tmp_path,
                           session_start="2026-01-01T00:00:00+00:00", budget_usd=None)
    agent = cmd_agent("seq 1 100000; head -c 600000 /dev/zero > blob.bin")
    try:
        spec = runner.spec(task, agent, 1)
        assert (spec.limits.output_bytes, spec.limits.file_bytes, spec.limits.total_bytes) == (
            64 * 1024, MIB // 2, 3 * MIB)
        assert spec.test_write_mb == 8
        r = runner.run(spec)
    finally:
        runner.cache.close()
    out = (spec.artifacts / "agent.out").read_text()
    assert len(out) < 64 * 1024 + 200 and "cut here" in out and out.endswith("100000\n")
    assert r.outcome == "agent_error", r
    assert r.error is not None and "blob.bin holds 524289 bytes, over the 0.5 MiB" in r.error


def test_a_workspace_swapped_for_a_link_is_the_agents_fault(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """With ``--sandbox none`` an agent replaces its workspace folder with a link to a host folder.
    Before: grading failed on the link (``ELOOP``) and the attempt was ``infra``, retried for ever."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "mine.txt").write_text("the user's\n")

    def swap(ctx: AgentContext) -> None:
        moved = ctx.workspace.with_name("moved")
        ctx.workspace.rename(moved)
        ctx.workspace.symlink_to(host)

    r, _ = attempt(task, cache, InProcess(swap), tmp_path, "none")
    assert r.outcome == "agent_error" and r.error is not None and "symlink" in r.error, r
    assert [p.name for p in host.iterdir()] == ["mine.txt"] and (host / "mine.txt").read_text() == "the user's\n"


def test_a_snapshot_swapped_for_a_link_is_rebuilt_not_followed(task: Task, cache: SnapshotCache,
                                                               tmp_path: Path) -> None:
    """The pristine snapshot folder replaced with a link to an identical copy elsewhere: the digest
    does not follow it (before: it did, found the same content, and grading read the linked folder)."""
    import shutil

    snap = cache.pristine(task)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(snap, elsewhere, symlinks=True)
    shutil.rmtree(snap)
    snap.symlink_to(elsewhere)
    fresh, changed = cache.checked_pristine(task)
    assert changed and not fresh.is_symlink() and fresh.is_dir()
