"""``homefield status`` and the report's pick (issue 35): a run another process is running is "in
progress" (its folder lock is held), and ``homefield report`` picks the newest *finished* run, with one
line about the newer run in progress."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_homefield.commands.status import status_lines
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.store import FolderLock, lock_holder, write_jsonl_atomic

_HOLD = ("import sys, time; from pathlib import Path; from pytest_homefield.store import FolderLock; "
         "lock = FolderLock.take(Path(sys.argv[1]), 'test'); print('held', flush=True); sys.stdin.read()")


@pytest.fixture
def hold() -> Iterator[object]:
    """``hold(folder)``: another process takes ``folder``'s lock and keeps it until the test ends."""
    procs: list[subprocess.Popen[str]] = []

    def take(folder: Path) -> None:
        p = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout is not None and p.stdout.readline().strip() == "held"

    yield take
    for p in procs:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=10)


def _run(runs: Path, rid: str, created: str, finished: int, planned: int = 2) -> None:
    d = runs / rid
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({
        "run_id": rid, "created_at": created, "agents": [{"name": "noop", "spec": "noop"}], "attempts": 1,
        "task_ids": [f"t{i}" for i in range(planned)], "cut_short": None}))
    write_jsonl_atomic(d / "results.jsonl", [{"run_id": rid, "task_id": f"t{i}", "agent": "noop", "attempt": 1,
                                              "outcome": "empty_patch"} for i in range(finished)])


def _mine(home: HomefieldDir, mid: str, created: str, candidates: int, verified: int, kept: int) -> None:
    d = home.mine / mid
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"kind": "mine", "mine_id": mid, "created_at": created, "shard": None}))
    write_jsonl_atomic(d / "candidates.jsonl", [{"commit": f"{i:040x}"} for i in range(candidates)])
    write_jsonl_atomic(d / "results.jsonl", [{"id": f"{i:012x}", "task": {"id": "x"} if i < kept else None}
                                             for i in range(verified)])


def test_lock_holder_sees_another_process_and_nobody_after(tmp_path: Path, hold) -> None:  # type: ignore[no-untyped-def]
    assert lock_holder(tmp_path) is None  # no lock file
    lock = FolderLock.take(tmp_path, "x")
    assert lock_holder(tmp_path) == "this process"
    lock.release()
    assert lock_holder(tmp_path) is None  # the file stays, nobody holds it
    hold(tmp_path)
    holder = lock_holder(tmp_path)
    assert holder is not None and holder.startswith("pid ") and "since" in holder


def test_status_and_report_pick_the_newest_finished_run(tmp_path: Path, hold, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from pytest_homefield.cli import main

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = HomefieldDir(tmp_path)
    _run(home.runs, "r-old", "2026-12-01T10:00:00+00:00", 2)
    _run(home.runs, "r-new", "2026-12-01T11:00:00+00:00", 0)
    _mine(home, "m-old", "2026-11-30T10:00:00+00:00", 5, 5, 2)
    _mine(home, "m-new", "2026-12-01T09:00:00+00:00", 10, 4, 1)
    write_jsonl_atomic(home.tasks, [])
    monkeypatch.chdir(tmp_path)

    lines = status_lines(home)  # nothing held: the newest run holding a result is the report's (nu56: not r-new,
    # which holds none), the short mine "stopped"
    assert "  m-new  stopped · started 2026-12-01 09:00 UTC · 4 of 10 candidates verified, 1 kept" in lines
    assert "  m-old  finished · started 2026-11-30 10:00 UTC · 5 of 5 candidates verified, 2 kept" in lines
    assert lines[-2:] == ["homefield report picks r-old (the newest finished run): .homefield/runs/r-old",
                          "run r-new (started 2026-12-01 11:00 UTC) holds no result (0 of 2 attempts finished: a "
                          "--collect-only, or stopped before any attempt); homefield report r-new reports on it"]

    hold(home.run_dir("r-new"))
    hold(home.path)  # the mining lock: the newest mine folder is in progress
    lines = status_lines(home)
    assert lines[0] == "mines (.homefield/mine):"
    assert lines[1].startswith("  m-new  in progress (pid ")
    assert lines[2].startswith("  m-old  finished")
    assert lines[3] == "runs (.homefield/runs):"
    assert lines[4].startswith("  r-new  started 2026-12-01 11:00 UTC · noop · 0 of 2 attempts finished · in progress")
    assert lines[5] == "  r-old  started 2026-12-01 10:00 UTC · noop · 2 of 2 attempts finished"
    assert lines[6] == "homefield report picks r-old (the newest finished run): .homefield/runs/r-old"
    assert lines[7].startswith("run r-new (started 2026-12-01 11:00 UTC) is in progress: 0 of 2 attempts finished")

    assert main(["status"]) == 0
    assert capsys.readouterr().out.splitlines() == lines
    assert main(["report", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["run_ids"] == ["r-old"]  # not the run just started
    assert err.splitlines()[0].startswith("Report on run r-old (the newest run")
    assert [x for x in err.splitlines() if x.startswith("run r-new (started")] == [lines[7]]


def test_status_of_an_empty_repository(tmp_path: Path) -> None:
    assert status_lines(HomefieldDir(tmp_path)) == ["mines: none in .homefield/mine", "runs: none in .homefield/runs"]


@pytest.mark.usefixtures("cli_spelling")
def test_status_counts_only_the_results_inside_a_runs_plan(tmp_path: Path) -> None:
    """atk17: a shard with lines appended for another shard's tasks and past ``--attempts`` showed as "48 of
    16 attempts finished", while ``homefield report`` refuses it (``shard.outside_plan``). status uses the
    same check: it counts the results inside the plan and says, in the run's line, how many are not."""
    home = HomefieldDir(tmp_path)
    _run(home.runs, "crafted", "2026-12-01T10:00:00+00:00", 2)
    with (home.run_dir("crafted") / "results.jsonl").open("a") as fh:
        for task, attempt in [("t1", 2), ("t1", 3), ("t9", 1), ("t0", "x")]:
            fh.write(json.dumps({"run_id": "crafted", "task_id": task, "agent": "noop", "attempt": attempt,
                                 "outcome": "solved"}) + "\n")
    _run(home.runs, "honest", "2026-12-01T09:00:00+00:00", 1)
    lines = status_lines(home)
    assert lines[2] == ("  crafted  started 2026-12-01 10:00 UTC · noop · 2 of 2 attempts finished · 4 results outside "
                        "its plan, not counted (attempt 2 of noop is outside its --attempts 1): lines its session "
                        "could not have written, which homefield report leaves out (and refuses in a merge)")
    assert lines[3] == "  honest  started 2026-12-01 09:00 UTC · noop · 1 of 2 attempts finished (a subset: -k, " \
                       "--max-tasks, stopped or cut short)"


def test_report_of_one_run_counts_only_the_results_inside_its_plan(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                   capsys) -> None:
    """A crafted run (lines appended for a task it never had and past ``--attempts``) that ``status`` shows as
    "2 of 2 attempts finished · 3 results outside its plan": ``homefield report RUN`` counted the 5 (a merge of
    runs refuses them); it reports the 2 and says in one note how many it left out, by status's rule."""
    from pytest_homefield.cli import main

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = HomefieldDir(tmp_path)
    _run(home.runs, "crafted", "2026-12-01T10:00:00+00:00", 2)
    with (home.run_dir("crafted") / "results.jsonl").open("a") as fh:
        for task, attempt in [("t1", 2), ("t1", 3), ("t9", 1)]:
            fh.write(json.dumps({"run_id": "crafted", "task_id": task, "agent": "noop", "attempt": attempt,
                                 "outcome": "solved"}) + "\n")
    write_jsonl_atomic(home.tasks, [])
    monkeypatch.chdir(tmp_path)
    assert main(["report", "crafted", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["agents"]["noop"]["attempts"] == 2 and report["agents"]["noop"]["solved"] == 0
    notes = [n for n in report["notes"] if "outside" in n]
    assert notes == ["3 result(s) outside their run's plan left out (run crafted: attempt 2 of noop is outside its "
                     "--attempts 1): lines the run's session could not have written."]
    assert "2 of 2 attempts finished · 3 results outside its plan, not counted" in err.splitlines()[0]


@pytest.mark.usefixtures("cli_spelling")
def test_status_lists_verify_runs_apart_and_never_picks_one(tmp_path: Path) -> None:
    """nu19 on andialbrecht/sqlparse: after ``homefield verify --attacks`` wrote
    ``runs/verify-20261203-…``, ``homefield status`` listed the mine and the agent run only, with no
    sign of the verify run or how to see its report."""
    home = HomefieldDir(tmp_path)
    _run(home.runs, "r1", "2026-12-01T10:00:00+00:00", 2)
    _run(home.runs, "verify-a", "2026-12-01T11:00:00+00:00", 1)
    _run(home.runs, "verify-b", "2026-12-01T12:00:00+00:00", 2)
    assert status_lines(home)[1:] == [
        "runs (.homefield/runs):",
        "  r1  started 2026-12-01 10:00 UTC · noop · 2 of 2 attempts finished",
        "verify runs (homefield verify; homefield report VERIFY_ID reports on one):",
        "  verify-b  started 2026-12-01 12:00 UTC · noop · 2 of 2 attempts finished",
        "  verify-a  started 2026-12-01 11:00 UTC · noop · 1 of 2 attempts finished (a subset: -k, --max-tasks, "
        "stopped or cut short)",
        "homefield report picks r1 (the newest finished run): .homefield/runs/r1",
    ]
    meta = home.run_dir("verify-b") / "meta.json"  # verify --attacks: oracle and 40 attacks, named in short
    meta.write_text(meta.read_text().replace('[{"name": "noop", "spec": "noop"}]', json.dumps(
        [{"name": "oracle", "spec": "oracle"}] + [{"name": f"attack-{i}", "spec": f"attack:{i}"} for i in range(40)])))
    assert status_lines(home)[4].startswith("  verify-b  started 2026-12-01 12:00 UTC · oracle, attack-0, attack-1 "
                                            "and 38 more agents · 0 of 82 attempts finished")


def test_a_reader_that_closes_early_ends_status_quietly(tmp_path: Path) -> None:
    """ref28: ``homefield status | head -3`` printed a BrokenPipeError traceback; it ends as a shell tool
    ends, exit 141 (128 + SIGPIPE), nothing on stderr."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = HomefieldDir(tmp_path)
    for i in range(40):  # more lines than a pipe's reader takes before it closes
        _run(home.runs, f"r-{i:02d}", f"2026-12-01T10:{i:02d}:00+00:00", 2)
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line: every write to the pipe fails
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "status"], cwd=tmp_path, stdout=w,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(w)
    assert (proc.returncode, proc.stderr) == (141, "")


def test_status_lists_ablations_and_probes_as_it_lists_runs(ablate_repo: Path, tmp_path: Path) -> None:
    """ux30 (a new user on tkem/cachetools): ``status`` listed runs and mines only, never the ablations in
    ``.homefield/ablate`` nor the probes in ``.homefield/probe``. A real probe (the oracle, on the eight-task
    repository) and a real ablation folder (its session started, holding its lock, two results in) are
    listed as runs are: in progress or finished, how far, and the probe's verdict."""
    from helpers.ablate_repo import N_TASKS, RULES
    from helpers.e2e_repo import homefield

    from pytest_homefield.ablate.ablate_plan import build_plan
    from pytest_homefield.ablate.rules import split_rules
    from pytest_homefield.ablate.session import AblationSession
    from pytest_homefield.agents.registry import build_agents
    from pytest_homefield.probe_records import load_verdict, probe_path
    from pytest_homefield.records import load_tasks
    from pytest_homefield.settings import resolve_settings
    from pytest_homefield.store import append_jsonl

    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    home = HomefieldDir(repo)
    before = status_lines(home)
    assert not [ln for ln in before if ln.startswith(("ablations", "probes"))]  # none: no lines about them

    proc = homefield(repo, "probe", "--agent", "oracle", "--samples", "1", "--max-tasks", "4", "--fdr", "0.5",
                     "--sandbox", "none", "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    verdict = load_verdict(probe_path(home.path, "oracle"))
    assert verdict is not None and verdict["judged"] == 4 and verdict["flagged"]  # the oracle recites the fixes

    settings = resolve_settings(repo, {"agent": ["oracle"], "attempts": 1, "run_id": "abl1", "yes": True})
    tasks = load_tasks(settings.tasks_path)
    rules = split_rules(RULES)
    plan = build_plan(settings, "CLAUDE.md", rules, len(tasks), [("oracle", "oracle", "CLAUDE.md")], 1)
    session = AblationSession.start(settings, tasks, build_agents(settings.agents, settings), rules=rules,
                                    rules_file="CLAUDE.md", rules_paths={"oracle": "CLAUDE.md"}, plan=plan,
                                    new_id="unused")
    try:
        for v, t, a, n in session.pending()[:2]:
            append_jsonl(session.results_path, {"run_id": "abl1", "variant": v, "task_id": t, "agent": a,
                                                "attempt": n, "outcome": "solved"})
        lines = status_lines(home)
        at = lines.index("ablations (.homefield/ablate):")
        assert lines[at + 1].startswith(f"  abl1  started {session.session_start[:10]}")
        assert f"· oracle · 2 of {N_TASKS * 4} attempts finished · in progress (this process) · " in lines[at + 1]
        assert lines[at + 1].endswith(" · rules CLAUDE.md, 4 variants")
    finally:
        assert session.lock is not None
        session.lock.release()
    assert "in progress" not in status_lines(home)[at + 1]

    at = lines.index("probes (.homefield/probe):")
    assert lines[at + 1].startswith("  oracle  8 calls, 8 scored · last call ")
    assert lines[at + 1].endswith(f" · {len(verdict['flagged'])} of {verdict['judged']} tasks flagged memorized")
    # a call after the verdict line: a probe in progress (or stopped), not the verdict's
    append_jsonl(probe_path(home.path, "oracle"), {"schema_version": 1, "kind": "task", "task_id": "x", "sample": 2,
                                                   "agent": "oracle", "spec": "oracle", "score": None,
                                                   "outcome": "infra"})
    line = status_lines(home)[at + 1]
    assert line.startswith("  oracle  9 calls, 8 scored") and line.endswith(
        " · no verdict yet (a probe in progress, or one stopped before its end: homefield probe --resume finishes it)")


def test_status_says_a_linked_results_file_it_did_not_read(tmp_path: Path) -> None:
    """fix45: a run's (or a mine's) ``results.jsonl`` replaced by a link to a file elsewhere (graded code under
    ``--sandbox none``) is never followed: the run's line says so, counting none of its lines, and so does the
    mine's; no traceback. Before: the link's target was read and counted as the run's records."""
    home = HomefieldDir(tmp_path)
    _run(home.runs, "r1", "2026-12-01T10:00:00+00:00", finished=0)
    _mine(home, "m1", "2026-12-01T09:00:00+00:00", candidates=3, verified=0, kept=0)
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps({"run_id": "r1", "task_id": f"t{i}", "agent": "noop", "attempt": 1,
                                          "id": f"{i:012x}", "task": {"id": "x"}, "outcome": "solved"}) + "\n"
                              for i in range(2)))
    for results in (home.runs / "r1" / "results.jsonl", home.mine / "m1" / "results.jsonl"):
        results.unlink()
        results.symlink_to(forged)
    lines = status_lines(home)
    run = next(line for line in lines if line.startswith("  r1  "))
    assert run.endswith(f"· results not read: {home.runs / 'r1' / 'results.jsonl'}: a symlink, never followed"), run
    assert "0 of 2 attempts finished" in run, run
    assert f"    not read: {home.mine / 'm1' / 'results.jsonl'}: a symlink, never followed" in lines, lines
