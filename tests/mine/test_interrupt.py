"""An interrupted mine says so (issue 35): SIGINT to ``homefield mine`` at ``-n 0`` and ``-n 2`` while a
candidate's test run hangs ends with a summary naming the candidates not verified, the partial
``tasks.jsonl`` and the command that goes on, a non-zero exit, ``stopped`` in ``meta.json``; ``plan``
and ``export`` then print one line about the partial task set. The newest candidate (verified first,
at either ``-n``) is quick; the three older ones sleep at import. Fail-fast and a mine keeping no task
exit non-zero; --stop-after-tasks keeps the newest."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import MINED_STABILITY, cli_env, git, homefield, homefield_in_process
from helpers.gitrepo import GitRepo

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def _repo(path: Path, started: Path) -> GitRepo:
    """Four candidates; the three older ones' test modules touch ``started`` (outside the repository),
    then sleep 120 s at import."""
    repo = GitRepo.init(path)
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.write("tests/__init__.py", "")
    repo.commit("Start the package with an empty module")
    for n in (1, 2, 3, 4):
        slow = f"import pathlib, time\n\npathlib.Path({str(started)!r}).touch()\ntime.sleep(120)\n" if n < 4 else ""
        repo.write(f"pkg/f{n}.py", f"def f{n}():\n    return {n}\n")
        repo.write(f"tests/test_f{n}.py", f"{slow}from pkg.f{n} import f{n}\n\n\ndef test_f{n}():\n"
                                          f"    assert f{n}() == {n}\n")
        repo.commit(f"Add function f{n} returning the number {n}")
    return repo


def _interrupted(repo: Path, started: Path, args: list[str], workers: str) -> tuple[int, str]:
    """``homefield <args>`` in ``repo``, sent SIGINT once the quick candidate was verified and a slow one's test run
    began (``started`` exists): its exit status and output."""
    # its own process group: at -n 2 the SIGINT goes to the whole group (workers too), as Ctrl-C does
    proc = subprocess.Popen([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: (os.setpgrp(), signal.signal(signal.SIGINT, signal.SIG_DFL)))
    try:
        deadline = time.monotonic() + 120
        results: list[Path] = []
        while time.monotonic() < deadline and not (results and any(read_jsonl(results[0]))):
            time.sleep(0.1)
            results = list((repo / ".homefield" / "mine").glob("*/results.jsonl"))
        assert results, "the quick candidate was never verified"
        while time.monotonic() < deadline and not started.exists():
            time.sleep(0.05)
        assert started.exists(), "no slow candidate's test run started"  # one is in its test run now
        if workers == "2":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out


@pytest.mark.parametrize("workers", ["0", "2"])
def test_sigint_mine_says_what_is_left(tmp_path: Path, workers: str) -> None:
    started = tmp_path / "started"
    repo = _repo(tmp_path / "repo", started)
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", workers]
    rc, out = _interrupted(repo.path, started, args, workers)
    assert rc != 0, out
    assert "Mined 1 task from 1 of 4 candidates" in out, out
    assert ("Interrupted: Ctrl-C; 3 of 4 candidates not verified: tasks.jsonl is partial (1 task from the 1 "
            "verified).") in out, out
    assert f"Continue with: homefield {shlex.join(args)}" in out, out
    # the summary ends the output: no KeyboardInterrupt banner or traceback after it, exit status 2
    assert rc == 2 and "KeyboardInterrupt" not in out and "Traceback" not in out, out
    assert out.rstrip().splitlines()[-1].startswith("Verification records: .homefield/mine/"), out
    assert "Missing modules" not in out, out  # pkg.f2 is the repository's own, added by the commit
    (mine_dir,) = (repo.path / ".homefield" / "mine").iterdir()
    stopped = json.loads((mine_dir / "meta.json").read_text())["stopped"]
    assert (stopped["why"], stopped["not_verified"], stopped["candidates"]) == ("interrupted", 3, 4)
    assert [t["subject"] for t in read_jsonl(repo.path / ".homefield" / "tasks.jsonl")] == \
        ["Add function f4 returning the number 4"]
    note = f"Note: the task set is partial: mine {mine_dir.name} stopped (Ctrl-C) with 3 of 4 candidates not verified"
    plan = homefield_in_process(repo.path, "plan", "--agent", "noop")  # main() in this process: no session
    assert plan.returncode == 0 and note in plan.stdout, plan.stdout + plan.stderr
    export = homefield_in_process(repo.path, "export", "--out", str(tmp_path / "x.jsonl"))
    assert export.returncode == 0 and note in export.stderr, export.stdout + export.stderr
    if workers == "0":  # and once for run (its header): noop is not graded, so this is cheap
        run = homefield(repo.path, "run", "--agent", "noop", "--attempts", "1", "-n", "0", "--sandbox", "none")
        assert f"homefield: {note}" in run.stdout, run.stdout + run.stderr
        # and the saved report, from the run's meta.json (mine48: only the header said it)
        (run_dir,) = (repo.path / ".homefield" / "runs").iterdir()
        assert json.loads((run_dir / "meta.json").read_text())["partial_mine"]["not_verified"] == 3
        assert note.removeprefix("Note: ") in (run_dir / "report.md").read_text()
        assert any(n.startswith(note.removeprefix("Note: ")) for n in json.loads((run_dir / "report.json").read_text())[
            "notes"]), (run_dir / "report.json").read_text()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_sigint_k_mine_counts_the_candidates_it_selected_and_those_it_reached(tmp_path: Path, workers: str) -> None:
    """ops43 (left by lines41): a ``-k`` mine Ctrl-C'd while a slow candidate's test run hangs counted as selected
    only the candidates with a record: at ``-n 0``, of the three newest (f1 left out), "from 1 candidate selected by
    -k" and no "Interrupted" line at all, the one never started counted nowhere. The count is now the items ``-k``
    collected, and the line says how many started. At ``-n 2`` (the workers' collections) all four are selected:
    f4 and a slow one start, maybe the other slow one; f1 never does (both workers hang)."""
    started = tmp_path / "started"
    repo = _repo(tmp_path / "repo", started)
    ids = git(repo.path, "log", "--format=%h", "--abbrev=12", "-4" if workers == "2" else "-3").split()
    selection = shlex.quote(" or ".join(ids))
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", workers, "-k", " or ".join(ids)]
    rc, out = _interrupted(repo.path, started, args, workers)
    assert rc == 2, out
    n = len(ids)
    found = re.search(rf"^Mined 1 task from 1 of {n} candidates selected by -k {re.escape(selection)} \((\d) reached, "
                      rf"(\d) never started; of 4 candidates frozen; 5 commits examined\); \.homefield/tasks\.jsonl "
                      "holds 1 task$", out, re.M)
    assert found, out
    reached, never = int(found.group(1)), int(found.group(2))
    assert reached + never == n and (reached == 2 if workers == "0" else reached in (2, 3)), out
    assert f"Interrupted: Ctrl-C; {n - 1} of {n} candidates not verified: tasks.jsonl is partial" in out, out
    (mine_dir,) = (repo.path / ".homefield" / "mine").iterdir()
    stopped = json.loads((mine_dir / "meta.json").read_text())["stopped"]
    assert (stopped["not_verified"], stopped["candidates"]) == (n - 1, n)


def test_sigint_after_the_task_bound_names_a_higher_bound(tmp_path: Path) -> None:
    """nu43 on simonw/llm: ``--stop-after-tasks 3`` was reached with one candidate still in flight; a Ctrl-C then
    said ``Continue with: homefield mine … --stop-after-tasks 3``, which reuses the 3 tasks and stops at once.
    Like a mine the bound stopped, it names the bound raised by N over the tasks kept."""
    started = tmp_path / "started"
    repo = _repo(tmp_path / "repo", started)
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", "2", "--stop-after-tasks", "1"]
    rc, out = _interrupted(repo.path, started, args, "2")
    assert rc == 2, out
    assert "Interrupted: Ctrl-C; " in out and "Mined 1 task from 1 of 4 candidates" in out, out
    bounded = shlex.join(args[:-2])
    assert f"Continue with: homefield {bounded} --stop-after-tasks 2  (the 1 verified is reused" in out, out


def test_fail_fast_then_no_fail_fast_and_zero_tasks_exit_non_zero(tmp_path: Path) -> None:
    """The first 2 candidates fail on the same missing module: the mine stops (exit 1) with the hint;
    --no-fail-fast goes on (reusing both) and, keeping no task, exits 1 too."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.commit("Start the package with an empty module")
    for n in (1, 2, 3):
        repo.write(f"pkg/g{n}.py", f"def g{n}():\n    return {n}\n")
        repo.write(f"tests/test_g{n}.py", f"import homefield_absent_module\nfrom pkg.g{n} import g{n}\n\n\n"
                                          f"def test_g{n}():\n    assert g{n}() == {n}\n")
        repo.commit(f"Add function g{n} returning the number {n}")
    args = ("mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0")
    first = homefield(repo.path, *args, "--fail-fast", "2")
    out = first.stdout
    assert first.returncode == 1, out + first.stderr
    assert ("Stopped (fail-fast): the first 2 candidates all failed on the same error (No module named "
            "'homefield_absent_module'); 1 of 3 candidates not verified") in out, out
    assert "Missing modules: homefield_absent_module (2 candidates)" in out, out
    # nu19 on tox-dev/platformdirs: "Fix the test environment (see the hint above)" pointed up, away from it
    fix = next(line for line in out.splitlines() if line.startswith("Fix the test environment"))
    assert "below" in fix and out.index(fix) < out.index("Missing modules:"), out
    assert "pkg" not in out.split("Missing modules:")[1].split("\n")[0]  # the repository's own: never missing
    again = homefield(repo.path, *args, "--fail-fast", "2", "--no-fail-fast")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "Candidates: reused 2, verified 1" in again.stdout and "No task kept" in again.stdout, again.stdout


#: A plugin that reorders the items as pytest-randomly does: in a tryfirst wrapper, before every other
#: implementation of the hook (structlog's test dependencies install pytest-randomly; nu20).
SHUFFLER = """import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(items):
    items.reverse()
    return (yield)
"""


@pytest.mark.parametrize("shuffled", [False, True], ids=["plain", "items-shuffled-by-a-plugin"])
def test_stop_after_tasks_keeps_the_newest(mined: Path, tmp_path: Path, shuffled: bool) -> None:
    """On the mined fixture (every verification reused, nothing runs): one task, the newest, then skips; also
    when another plugin of the environment (pytest-randomly) reorders the items: homefield's order is the
    product's, put back after every plugin."""
    repo = tmp_path / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    args = ["mine", "--stability-runs", MINED_STABILITY, "-n", "0", "--stop-after-tasks", "1"]
    if shuffled:
        (tmp_path / "plugins").mkdir()
        (tmp_path / "plugins" / "homefield_test_shuffler.py").write_text(SHUFFLER)
        env = {**cli_env(), "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "plugins"),
                                                                        os.environ.get("PYTHONPATH")]))}
        proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args, "--", "-p",
                               "homefield_test_shuffler"], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=300)
    else:
        proc = homefield(repo, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Stopped: --stop-after-tasks 1 reached; 2 of 3 candidates not verified: tasks.jsonl is partial" \
        in proc.stdout, proc.stdout
    assert "2 skipped" in proc.stdout and "rejected" not in proc.stdout.split("homefield mine ===")[0]
    newest = max(read_jsonl(repo / ".homefield" / "tasks.jsonl"), key=lambda t: t["committed_at"])
    new = max((repo / ".homefield" / "mine").iterdir(), key=lambda d: d.name)
    kept = [r for r in read_jsonl(new / "results.jsonl") if r.get("task")]
    assert [r["commit"] for r in kept] == [newest["commit"]]
    # ref28: "3 of 3 candidates verified" counted the not_verified records (main() here; a real status process:
    # tests/commands/test_status.py)
    status = homefield_in_process(repo, "status")
    assert f"  {new.name}  stopped (--stop-after-tasks 1 reached) · " in status.stdout, status.stdout
    assert " · 1 of 3 candidates verified, 1 kept\n" in status.stdout, status.stdout


@pytest.mark.parametrize(("workers", "budget"), [("0", 3), ("2", 15)])
def test_time_budget_stops_verifications_in_flight(mined: Path, tmp_path: Path, workers: str, budget: int) -> None:
    """Two new candidates whose tests hang at import (120 s) on top of the mined fixture (its three
    verifications reused, which the budget never skips): at the budget the hanging runs are killed,
    those candidates count as not verified (the summary names the ones cut mid-way), and the mine ends
    at once with exit status 0 (3 tasks kept), not after the hang. (The budget starts before xdist's
    workers do: at -n 2 it leaves them time to start on a loaded machine: 5 s passed three times at load
    6-7 on 2 cores, and failed at load 15 with no hang yet in flight. At -n 0 no worker starts: 3 s
    passed at load 15. 10 s failed twice at load 12-16 on 2026-12-05 with no hang in flight yet: 15 s. The hangs
    sleep: no CPU.)"""
    repo = tmp_path / "repo"
    shutil.copytree(mined, repo, symlinks=True)
    for n in (1, 2):
        (repo / "calc" / f"h{n}.py").write_text(f"def h{n}():\n    return {n}\n")
        (repo / "tests" / f"test_h{n}.py").write_text(f"import time\n\ntime.sleep(120)\nfrom calc.h{n} import h{n}\n"
                                                     f"\n\ndef test_h{n}():\n    assert h{n}() == {n}\n")
        git(repo, "add", "calc", "tests")
        git(repo, "commit", "-q", "-m", f"Add h{n} returning the number {n}", date=f"2026-02-0{n}T12:00:00+00:00")
    started = time.monotonic()
    proc = homefield(repo, "mine", "--stability-runs", MINED_STABILITY, "-n", workers, "--time-budget", f"{budget}s",
                     timeout=180)
    elapsed = time.monotonic() - started
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert elapsed < budget + 40, (elapsed, out)  # the hang would hold it for 60 s (parent run 1's probe) or more
    assert "Mined 3 tasks from 3 of 5 candidates" in out, out
    assert (f"Stopped: time budget {budget}s reached; 2 of 5 candidates not verified (those with the largest test "
            "files: a time budget verifies the smallest first): tasks.jsonl is partial") in out, out
    new = max((repo / ".homefield" / "mine").iterdir(), key=lambda d: d.name)
    records = {r["subject"]: r for r in read_jsonl(new / "results.jsonl")}
    hangs = [records[f"Add h{n} returning the number {n}"] for n in (1, 2)]
    assert all(r["reason"] == "not_verified" and r["stop"] == "time_budget" for r in hangs), hangs
    # in the order of results.jsonl, as the summary names them: at -n 2 both hangs are in flight and either
    # worker may write its record first (mine29: the test read them in subject order and failed when h2 came first)
    cut = [r for r in read_jsonl(new / "results.jsonl") if r.get("in_flight")]
    assert cut and all(r in hangs for r in cut), hangs  # at least the first was running when the budget ran out
    assert all(r["detail"].startswith(f"time budget {budget}s reached in ") for r in cut), cut
    assert (f"Stopped mid-verification at the time budget ({len(cut)}, their test runs killed; not verified): "
            f"{cut[0]['id']} ") in out, out
    # nu43: each names the run the budget killed and how long it had gone (a hang reads as one)
    assert all(r["cut_in"] == r["detail"].split(" reached in ", 1)[1] for r in cut), cut
    timed = [r for r in cut if "ran_s" in r]
    assert timed and all(r["ran_s"] > 0 for r in timed), cut
    assert f"{timed[0]['id']} Add h" in out and f"{timed[0]['cut_in']} killed after " in out, out
    stopped = json.loads((new / "meta.json").read_text())["stopped"]
    assert (stopped["why"], stopped["not_verified"], sorted(stopped["in_flight"])) == \
        ("time_budget", 2, sorted(r["id"] for r in cut))
