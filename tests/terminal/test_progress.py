"""The progress line: the plain class fed with events, and what a terminal and a CI log show."""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.e2e_repo import build, cli_env, copy_mined, homefield
from helpers.pty_run import run_on_pty

from pytest_homefield.store import read_jsonl
from pytest_homefield.terminal.hooks import heartbeat_s, on_ci, run_family
from pytest_homefield.terminal.progress import Progress, fmt_duration, plural


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_mine_line_counts_rates_and_item_in_flight() -> None:
    clock = Clock()
    p = Progress("mine", 10, clock=clock)
    assert p.line() == "mine 0/10 · 0s · ETA ?"
    p.start("a", "a1b2c3d4e5f6 Fix naturaldelta for months")
    clock.t += 30
    p.finish("a", "kept")
    p.start("b", "b1 Add ordinal()")
    p.start("c", "c1 Drop Python 3.8")
    clock.t += 30
    p.finish("b", "dropped")
    # 2 candidates done: too few to tell the other 8 by (ETA_AFTER)
    assert p.line() == "mine 2/10 · kept 1 · dropped 1 · 1m00s · ETA ? · running c1 Drop Python 3.8"
    p.start("d", "d1 Another")
    assert p.line().endswith("· running d1 Another (+1 more)")
    assert p.line(width=30) == "mine 2/10 · kept 1 · dropped…"
    assert len(p.line(width=30)) == 29
    clock.t += 30
    p.finish("c", "dropped")
    # 3 candidates (30, 30 and 60 s: median 30 s): 7 left, d 30 s in already -> 180 s of work; 150 s of items
    # ran in 90 s (c beside b, then beside d): 5/3 at once -> 108 s
    assert p.line() == "mine 3/10 · kept 1 · dropped 2 · 1m30s · ETA 1m48s · running d1 Another"


def test_the_item_the_line_names_is_one_in_flight_never_one_that_finished() -> None:
    """nu37 on simonw/llm (--time-budget 7m, CI log): ``mine 2/37 · kept 2 · 4m54s · ETA 2m27s · 0e2aa5afbbb5
    List server-side tools by model`` was written when the second candidate was kept, but named a third one
    still in flight, which the budget then stopped unverified; the line read as if 0e2aa5afbbb5 were kept.
    The item named is marked as running."""
    p = Progress("mine", 3)
    p.start("a", "9a06c5685e77 Follow redirects")
    p.start("b", "0e2aa5afbbb5 List server-side tools by model")
    p.finish("a", "kept")
    line = p.line()
    assert line.endswith(" · running 0e2aa5afbbb5 List server-side tools by model")
    assert "9a06c5685e77" not in line
    p.finish("b", "skipped", fresh=False, stopped=True)
    assert "running" not in p.line() and "0e2aa5afbbb5" not in p.line()


def test_a_commit_subjects_escape_sequences_are_shown_not_played() -> None:
    """host29: a mined commit's subject ``ESC [2J ESC [H ...`` on the live line cleared the screen and wrote
    its own text where the counts were; it is shown as its escapes, on one line."""
    p = Progress("mine", 2)
    p.start("a", "a1 Fix\x1b[2J\x1b[H\x1b[32mmine 2/2 kept 2\r\u202eX")
    line = p.line(width=200)
    assert line.endswith("a1 Fix\\x1b[2J\\x1b[H\\x1b[32mmine 2/2 kept 2 \\u202eX")
    assert "\x1b" not in line and "\r" not in line and "\u202e" not in line


def test_a_mines_eta_is_its_soonest_end() -> None:
    """nu21 on pallets/click: ``--stop-after-tasks 12`` of 82 candidates showed the ETA of all 82. The goal
    (12 kept) and the time budget (from the end of the scan: set_total) each end it sooner."""
    clock = Clock()
    p = Progress("mine", 80, clock=clock, goal=("kept", 4))
    p.set_total(80)
    for i, status in enumerate(["kept", "dropped", "kept", "dropped"]):
        p.start(str(i), f"c{i}")
        clock.t += 30
        p.finish(str(i), status)
    # 30 s per candidate, one kept in two: 2 more kept in about 4 more candidates -> 2 minutes (not 38)
    assert p.eta_s() == 120.0 and p.line().endswith("ETA 2m00s")
    for i in (4, 5):  # the goal met with a candidate still in flight: 'stopping', not 'ETA 0s' (nu40 on simonw/llm)
        p.start(str(i), f"c{i}")
        clock.t += 30
    p.finish("4", "kept")
    p.finish("5", "kept")
    p.start("6", "c6")
    assert "stopping" in p.parts() and "ETA" not in p.line()
    budget = Progress("mine", 80, clock=clock, budget_s=300.0)
    budget.set_total(80)
    budget.start("a", "a")
    clock.t += 30
    budget.finish("a", "dropped")
    assert budget.eta_s() == 270.0  # the budget's end, not 79 × 30 s
    nothing = Progress("mine", 80, clock=clock, goal=("kept", 4))
    nothing.set_total(80)
    for i in range(3):
        nothing.start(str(i), str(i))
        clock.t += 30
        nothing.finish(str(i), "dropped")
    assert nothing.eta_s() == 77 * 30.0  # no candidate kept yet: no rate for the goal


def test_run_line_shows_money_against_the_budget() -> None:
    clock = Clock()
    p = Progress("run", 4, budget_usd=20.0, clock=clock)
    p.start("x", "e4935e064407 claude[1] Add ordinal()")
    clock.t += 125
    p.finish("x", "solved", 0.42)
    p.finish("y", "unsolved", 0.08)
    p.finish("z", "infra")
    assert p.line() == "run 3/4 · solved 1 · unsolved 1 · infra 1 · $0.50 of $20.00 · 2m05s · ETA ?"
    p.finish("w", "solved")
    assert p.line() == "run 4/4 · solved 2 · unsolved 1 · infra 1 · $0.50 of $20.00 · 2m05s"


def test_run_line_without_costs_or_budget_shows_no_money() -> None:
    p = Progress("run", 2, clock=Clock())
    p.finish("a", "unsolved")
    assert "$" not in p.line()


def test_periodic_lines_every_n_items_every_s_seconds_and_at_the_end() -> None:
    clock = Clock()
    p = Progress("mine", 25, clock=clock)
    due = []
    for i in range(25):
        clock.t += 1
        p.finish(str(i), "dropped")
        due.append(p.periodic_due(every_n=10, every_s=60))
    assert [i + 1 for i, d in enumerate(due) if d] == [10, 20, 25]
    slow = Progress("mine", 100, clock=clock)
    slow.finish("a", "kept")
    assert not slow.periodic_due(every_n=10, every_s=60)
    clock.t += 61
    slow.finish("b", "kept")
    assert slow.periodic_due(every_n=10, every_s=60)
    assert not slow.periodic_due(every_n=10, every_s=60)  # nothing new since


def test_a_mine_stopped_by_a_bound_says_stopping_and_prints_no_line_per_ten_skips() -> None:
    # pallets/click, --stop-after-tasks 12 -n 2 (nu21): the other worker skipped the 67 candidates left
    # while one still verified; the CI log printed seven lines "kept 12 · skipped 13 … ETA 11m58s",
    # "skipped 23 … ETA 10m11s", …, each with the same candidate in flight
    clock = Clock()
    p = Progress("mine", 30, clock=clock)
    p.start("slow", "07c909f23f0f Validate style() color arguments")
    for i in range(5):
        p.start(str(i), f"c{i}")
        clock.t += 10
        p.finish(str(i), "kept")
    # 10 s each beside the slow one (2 at once): 25 left, less the 10 s the slow one ran of its own -> 2 minutes
    assert p.periodic_due(every_n=5, every_s=60) and "ETA 2m00s" in p.line()
    due = []
    for i in range(20):
        p.finish(f"s{i}", "skipped", fresh=False, stopped=True)
        due.append(p.periodic_due(every_n=5, every_s=60))
        clock.t += 1
    assert not any(due)
    assert p.line() == ("mine 25/30 · kept 5 · skipped 20 · 1m10s · stopping · "
                        "running 07c909f23f0f Validate style() color arguments")
    clock.t += 61  # nothing finished: no line, however long the item in flight takes
    assert not p.periodic_due(every_n=5, every_s=60)
    p.finish("slow", "kept")
    assert p.periodic_due(every_n=5, every_s=60)
    for i in range(4):
        p.finish(f"t{i}", "skipped", fresh=False, stopped=True)
        assert p.periodic_due(every_n=5, every_s=60) == (i == 3)  # the last one
    assert p.line() == "mine 30/30 · kept 6 · skipped 24 · 2m11s"


def test_formatting_helpers() -> None:
    assert [fmt_duration(s) for s in (0, 59.9, 60, 3599, 3600, 7620)] == ["0s", "59s", "1m00s", "59m59s",
                                                                         "1h00m", "2h07m"]
    assert plural(1, "agent") == "1 agent" and plural(3, "attempt") == "3 attempts"


# -- what people see ----------------------------------------------------------------------------

def _env() -> dict[str, str]:
    return cli_env()


@pytest.mark.slow
def test_mining_on_a_terminal_draws_one_live_status_line(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    tasks = {t["id"]: t["subject"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")}
    first = next(iter(tasks))
    # a setup step of 0.5 s before each of the candidate's four test runs (parent, commit, two twin
    # runs) keeps it in flight for over 2 s even on an idle machine, so the once-a-second redraw is seen
    # (the assertion below does not depend on load)
    with open(repo / ".homefield.yml", "a", encoding="utf-8") as f:
        f.write('setup_cmd: "sleep 0.5"\n')
    rc, out = run_on_pty([sys.executable, "-m", "pytest_homefield.cli", "mine", "--stability-runs", "1",
                          "-n", "1", "-k", first], repo, env={**_env(), "HOMEFIELD_HEARTBEAT_S": "1"})
    assert rc == 0, out
    # each redraw is one frame; pytest's own letter for an item lands after the padded line, at once redrawn
    frames = [re.sub(r"\s+[.rsxEF]$", "", f).strip() for f in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;]*m", "", out))]
    live = [f for f in frames if f.startswith("mine ")]
    # while the candidate is verified: its id and subject, count, elapsed and an ETA
    waiting = [f for f in live if f.startswith("mine 0/1 · ")]
    assert all(re.fullmatch(rf"mine 0/1 · \d+s · ETA \? · running {first} {re.escape(tasks[first])}", f)
               for f in waiting), waiting
    # redrawn every second while the item runs in its worker: elapsed moves on between events
    assert len({f.split(" · ")[1] for f in waiting}) >= 2, waiting
    assert any(re.fullmatch(r"mine 1/1 · kept 1 · \d+s", f) for f in live), live
    # the fixture history has 4 source+test commits; its root commit is no candidate (root_commit)
    assert "homefield: 1 of 3 candidates selected (-k, -m, --lf or node ids)" in frames
    # pytest's own count is replaced by the line, and the line is drawn in place (\r), not printed per item
    assert "[1/1]" not in out
    assert out.count("\r" + "mine 0/1") >= 1
    assert not re.search(r"running .* for \d+s", out)  # no heartbeat line where the line is redrawn (ops40)


@pytest.mark.slow
def test_run_without_a_terminal_writes_plain_progress_lines(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "-n", "0", "--budget", "5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(list(read_jsonl(repo / ".homefield" / "tasks.jsonl")))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("homefield run ")]
    assert re.fullmatch(rf"homefield run {n}/{n} · unsolved {n} · \$0\.00 of \$5\.00 · \d+s", lines[-1]), lines
    assert "\r" not in proc.stdout
    assert "PytestAssertRewriteWarning" not in proc.stdout  # the script imports the plugin before pytest does
    # every attempt folder has the files the README lists, in-process agents included
    (run,) = (repo / ".homefield" / "runs").iterdir()
    for attempt in (run / "attempts").glob("*/noop/1"):
        assert {"agent.out", "agent.err", "diff.patch"} <= {p.name for p in attempt.iterdir()}, attempt
        assert "noop runs inside homefield" in (attempt / "agent.out").read_text()


@pytest.mark.slow
def test_verbose_lines_name_the_task_by_subject(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    tasks = list(read_jsonl(repo / ".homefield" / "tasks.jsonl"))
    tid, subject = tasks[0]["id"], tasks[0]["subject"]
    junit = tmp_path / "junit.xml"
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "-n", "2", "-v", "-k", tid,
                     "--junitxml", str(junit))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # JUnit: the ids stay in classname, the name says what the task is, no count is written as "None"
    (case,) = ET.parse(junit).getroot().iter("testcase")
    assert case.get("classname") == f"homefield.tasks.jsonl.{tid}"  # no leading dot (issue 33)
    assert case.get("name") == f"noop[1]: {subject}"
    # the properties are `name: value` lines of <system-out> under xunit2 (issue 33)
    props = dict(line.split(": ", 1) for line in (case.findtext("system-out") or "").splitlines())
    assert props["homefield.subject"] == subject
    assert "None" not in props.values() and "homefield.input_tokens" not in props
    assert re.search(rf"\[gw\d\] \[1/1\] UNSOLVED \.homefield/tasks\.jsonl::{tid}::noop\[1\]  {re.escape(subject)} "
                     r"\(empty patch\)", proc.stdout), proc.stdout
    assert "1 task × 1 agent × 1 attempt" not in proc.stdout  # the header counts the whole task file
    assert f"homefield: 1 of {len(tasks)} attempts selected" in proc.stdout
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "-n", "0", "-v", "-k", tid)
    out = proc.stdout.splitlines()
    i = next(i for i, line in enumerate(out) if f"::{tid}::noop[1] UNSOLVED" in line)
    assert out[i + 1] == f"    {subject}", out[i: i + 2]


def test_a_verify_line_is_named_verify() -> None:
    """Issue 35: ``homefield verify``'s progress line said ``run`` (verify is a run of oracle)."""
    p = Progress("run", 2, name="verify", clock=lambda: 0.0)
    p.finish("a", "solved")
    assert p.line().startswith("verify 1/2 · solved 1 · ")
    assert Progress("run", 2, clock=lambda: 0.0).line().startswith("run 0/2")


def test_one_slow_first_item_leaves_the_eta_within_a_fifth_of_the_truth() -> None:
    """ops40: the ETA was ``elapsed / fresh × remaining``, so one slow first candidate (a big one: 10 min, the
    other 29 take 30 s each) made it off by its own length for every item left: 4h50m after the first (the
    truth: 14m30s), still 1h39m after the third. Now: no ETA until three candidates did their work, then the
    median candidate's 30 s for each left, within 20 % of the truth (a scripted clock, one item at a time)."""
    clock = Clock()
    p = Progress("mine", clock=clock)
    keys = [f"c{i}" for i in range(30)]
    p.set_total(30, keys)
    seen: list[tuple[float | None, float, float]] = []  # (new ETA, old ETA, truth) after each item
    for i, key in enumerate(keys[:-1]):
        p.start(key, key)
        clock.t += 600 if i == 0 else 30
        p.finish(key, "dropped")
        old = p.elapsed_s() / p.fresh * (p.total - p.done)
        seen.append((p.eta_s(), old, 30.0 * (29 - i)))
    assert seen[0][0] is None and seen[1][0] is None  # ETA ? after one and two candidates
    assert seen[0][1] == 600 * 29 and seen[2][1] > 5 * seen[2][2]  # what the line said before
    for new, _, truth in seen[2:]:
        assert new is not None and abs(new - truth) <= 0.2 * truth, (new, truth)
    assert "ETA ?" in Progress("mine", 30, clock=clock).line()


def test_a_runs_eta_weighs_each_task_left_by_its_own_items() -> None:
    """A run's items are grouped by task (its agents and attempts, as ``ProgressHooks`` groups node ids):
    a big first task's three attempts (5 min each) tell nothing of the other 7 tasks (20 s each), so there is
    no ETA until items of three tasks did their work; then each item left counts its task's median, a task
    not seen yet the median of the tasks' medians, over the items run at once (two workers, each taking the
    next item when free, as xdist's ``-n 2``; a scripted clock)."""
    clock = Clock()
    ids = [f"tasks.jsonl::t{t}::noop[{a}]" for t in range(8) for a in (1, 2, 3)]
    secs = {k: 300.0 if "::t0::" in k else 20.0 for k in ids}
    p = Progress("run", clock=clock, group=lambda k: k.rsplit("::", 1)[0])
    p.set_total(len(ids), ids)
    queue, lanes = list(ids), []
    for _ in range(2):
        key = queue.pop(0)
        p.start(key, key)
        lanes.append((clock.t + secs[key], key))
    seen: list[tuple[float, float | None, float, int]] = []  # (time, new ETA, old ETA, items left)
    while lanes:
        lanes.sort()
        end, key = lanes.pop(0)
        clock.t = end
        p.finish(key, "unsolved")
        seen.append((clock.t, p.eta_s(), p.elapsed_s() / p.fresh * (p.total - p.done), p.total - p.done))
        if queue:
            key = queue.pop(0)
            p.start(key, key)
            lanes.append((clock.t + secs[key], key))
    last = clock.t
    told = [(t, new, old) for t, new, old, left in seen if new is not None and left >= 4]
    assert all(new is None for t, new, _, _ in seen if t < 300), seen  # only t0 (and t1) seen until then
    assert told and all(abs(new - (last - t)) <= 0.25 * (last - t) for t, new, _ in told), (told, last)
    t, _, old = told[0]
    assert old > 3 * (last - t), (old, last - t)  # before: t0's 5 minutes weighed on every item left


def _eta_seen(p: Progress, ids: list[str], secs: dict[str, float]) -> list[tuple[float, float | None, int]]:
    """Items ``ids`` (``secs`` each) run by two workers, each taking the next item when free, as xdist's ``-n 2``
    (a scripted clock): ``(time, ETA, items left)`` after each item finished."""
    clock = p.clock
    assert isinstance(clock, Clock)
    p.set_total(len(ids), ids)
    queue, lanes = list(ids), []
    for _ in range(2):
        key = queue.pop(0)
        p.start(key, key)
        lanes.append((clock.t + secs[key], key))
    seen: list[tuple[float, float | None, int]] = []
    while lanes:
        lanes.sort()
        end, key = lanes.pop(0)
        clock.t = end
        p.finish(key, "unsolved")
        seen.append((clock.t, p.eta_s(), p.total - p.done))
        if queue:
            key = queue.pop(0)
            p.start(key, key)
            lanes.append((clock.t + secs[key], key))
    return seen


def test_a_runs_eta_weighs_each_agents_items_by_that_agents_own() -> None:
    """nu43: a run of oracle, noop and ``sim:0.5`` on 5 tasks said ``ETA 1s`` at 8 of 15 items while the oracle's
    gradings left took a minute or two each: a task's items were one group, its noop and sim items (a second)
    set the median the oracle's items left were weighed by. An item left now counts its task's items of its agent
    (:func:`run_family`), else its agent's on other tasks: every ETA told with two or more items left is between
    0.4 and 2 times the truth (the last oracle item, alone on one worker, is counted at the rate of two); by task
    alone (before) one said 3.5 s for 181 s, under a tenth of it."""
    ids = [f"tasks.jsonl::t{t}::{agent}[1]" for t in range(5) for agent in ("oracle", "noop", "sim:0.5")]
    secs = {k: 90.0 if "::oracle[" in k else 1.0 for k in ids}

    def by_task(k: str) -> str:
        return k.rsplit("::", 1)[0]

    new = _eta_seen(Progress("run", clock=Clock(), group=by_task, family=run_family), ids, secs)
    last = new[-1][0]
    told = [(t, eta) for t, eta, left in new if eta is not None and left >= 2]
    assert told and all(0.4 * (last - t) <= eta <= 2 * (last - t) for t, eta in told), (told, last)
    old = _eta_seen(Progress("run", clock=Clock(), group=by_task), ids, secs)
    assert any(eta is not None and eta < (last - t) / 10 for t, eta, left in old if left >= 2), old
    assert (run_family("tasks.jsonl::t1::sim:0.5[3]"), run_family("ablate.jsonl::v1::t1::noop[1]")) == (
        "sim:0.5", "noop")


def test_heartbeat_lines_at_most_every_n_seconds_while_an_item_runs() -> None:
    """ops40: a heartbeat line is due once no line was written for N seconds while an item is in flight; it
    says how long the newest item has run; never two within N seconds; none while nothing runs."""
    clock = Clock()
    p = Progress("mine", 3, clock=clock)
    p.start("a", "a1 Slow one")
    due = []
    for _ in range(200):
        clock.t += 1
        due.append(p.heartbeat_due(60))
    assert [i + 1 for i, d in enumerate(due) if d] == [60, 120, 180]
    assert p.line(how_long=True).endswith("· running a1 Slow one for 3m20s")
    assert "for" not in p.line()
    p.finish("a", "kept")
    assert not p.periodic_due(every_n=10, every_s=60)  # 20 s since the heartbeat, one item
    clock.t += 100
    assert not p.heartbeat_due(60)  # nothing in flight
    assert heartbeat_s({}) == 60.0 and heartbeat_s({"HOMEFIELD_HEARTBEAT_S": "0.5"}) == 0.5
    for bad in ("soon", "-1", "inf", "nan"):
        with pytest.raises(pytest.UsageError, match="HOMEFIELD_HEARTBEAT_S"):
            heartbeat_s({"HOMEFIELD_HEARTBEAT_S": bad})
    assert on_ci({"CI": "true"}) and on_ci({"CI": "1"}) and not on_ci({"CI": "false"}) and not on_ci({})


def _heartbeats(out: str, kind: str) -> list[int]:
    """The seconds each heartbeat line of ``out`` says its item has run."""
    return [int(m.group(1)) for m in re.finditer(rf"^homefield {kind} 0/1 · .* for (\d+)s$", out, re.M)]


@pytest.mark.slow
def test_a_log_gets_a_heartbeat_while_nothing_finishes(mined: Path, tmp_path: Path) -> None:
    """ops40: in a CI log the line was written only when an item finished, so a log stayed silent while one
    candidate was verified (6.5 min on simonw/llm; CI hosts kill a job silent for 10). With
    ``HOMEFIELD_HEARTBEAT_S=1``: a mine in one process (its item under pytest's output capture) on a terminal
    under ``CI=true`` (plain lines, no redraw), and a run under xdist into a pipe, each write heartbeat lines
    naming the item in flight and how long it has run, at most one a second."""
    repo = copy_mined(mined, tmp_path / "repo")
    tasks = {t["id"]: t["subject"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")}
    first = next(iter(tasks))
    with open(repo / ".homefield.yml", "a", encoding="utf-8") as f:
        f.write('setup_cmd: "sleep 1"\n')  # four test runs of the candidate: over 4 s in flight
    env = {**_env(), "HOMEFIELD_HEARTBEAT_S": "1"}
    began = time.monotonic()
    rc, out = run_on_pty([sys.executable, "-m", "pytest_homefield.cli", "mine", "--stability-runs", "1",
                          "-n", "0", "-k", first], repo, env={**env, "CI": "true"})
    took = time.monotonic() - began
    assert rc == 0, out
    out = re.sub(r"\x1b\[[0-9;]*m", "", out.replace("\r\n", "\n"))
    assert "\rmine " not in out  # under CI the line is printed, never redrawn
    beats = _heartbeats(out, "mine")
    assert len(beats) >= 2, out
    assert re.search(rf"^homefield mine 0/1 · \d+s · ETA \? · running {first} {re.escape(tasks[first])} for \d+s$",
                     out, re.M), out
    assert beats == sorted(set(beats)) and len(beats) <= took + 1, (beats, took)  # never two in one second
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "nap=cmd:sleep 3",
                           "--attempts", "1", "-n", "1", "-k", first, "--sandbox", "none"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    beats = _heartbeats(proc.stdout, "run")
    assert len(beats) >= 2 and beats == sorted(set(beats)), proc.stdout
    assert re.search(rf"^homefield run 0/1 · .* running {first} nap\[1\] .* for \d+s$", proc.stdout, re.M), proc.stdout


@pytest.mark.slow
def test_a_log_gets_a_heartbeat_while_a_mine_scans_history(tmp_path: Path) -> None:
    """ops41: the heartbeat covered items only; a mine's scan of history (before it has candidates: minutes on a
    big repository) wrote nothing, and CI hosts kill a job silent for 10 minutes. The scan is slowed here by a
    ``git`` first on ``PATH`` that sleeps 3 s before ``git log`` (the walk): into a pipe (a log), with
    ``HOMEFIELD_HEARTBEAT_S=1``, ``homefield mine`` (``-k`` selecting no candidate: the scan alone) writes heartbeat
    lines of the items' shape naming the scan, at most one a second, before pytest's header; on a terminal that
    redraws the line, none."""
    repo = build(tmp_path / "repo")
    real, shim = shutil.which("git"), tmp_path / "bin"
    assert real is not None
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\n[ "$1" = log ] && sleep 3\nexec {shlex.quote(real)} "$@"\n')
    (shim / "git").chmod(0o755)
    env = {**_env(), "HOMEFIELD_HEARTBEAT_S": "1", "PATH": f"{shim}:{os.environ['PATH']}"}
    argv = [sys.executable, "-m", "pytest_homefield.cli", "mine", "-n", "0", "-k", "no_candidate_is_named_so"]
    began = time.monotonic()
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - began
    assert proc.returncode == 5, proc.stdout + proc.stderr  # pytest's "no tests ran": every candidate deselected
    beats = [(m.start(), int(m.group(1))) for m in re.finditer(
        r"^homefield mine 0/\? · \d+s · ETA \? · running scan of history \(listing candidates\) for (\d+)s$",
        proc.stdout, re.M)]
    assert len(beats) >= 2, proc.stdout
    seconds = [s for _, s in beats]
    assert seconds == sorted(set(seconds)) and len(seconds) <= took + 1, (seconds, took)  # never two in one second
    assert beats[-1][0] < proc.stdout.index("test session starts"), proc.stdout
    rc, out = run_on_pty(argv, repo, env=env)
    assert rc == 5, out
    assert "running scan of history" not in out, out


def _mine_etas(sizes: dict[str, float] | None, ids: list[str],
               secs: dict[str, float]) -> list[tuple[float, float | None]]:
    """A mine of ``ids`` verified one at a time (``secs`` each, a scripted clock), its items of ``sizes`` (``None``:
    none known): ``(seconds truly left, ETA)`` after each candidate finished with some left."""
    clock = Clock()
    p = Progress("mine", clock=clock, size=None if sizes is None else sizes.get)
    p.set_total(len(ids), ids)
    seen = []
    for n, key in enumerate(ids[:-1]):
        p.start(key, key)
        clock.t += secs[key]
        p.finish(key, "kept" if secs[key] > 10 else "dropped")
        seen.append((sum(secs[k] for k in ids[n + 1:]), p.eta_s()))
    return seen


def test_a_mines_eta_weighs_each_candidate_left_by_its_test_bytes() -> None:
    """r37 on toolz (``--time-budget 8m``): ``ETA 1m13s`` at 7m04s, and the budget then stopped the mine with 2
    candidates left. Cheapest first, the first candidates verified are the small ones, often quick drops (one
    parent run that passes, 6 s here), and their median was taken for the large ones left (40-70 s, kept after
    their runs). Each candidate left now counts its own test bytes at the pace seen (seconds per byte of the
    candidates done): every ETA told is within 0.6 and 1.5 times the truth; by the median (no sizes, as before)
    one said under a fifth of it."""
    ids = [f"c{i}" for i in range(8)]
    sizes = dict(zip(ids, [1500.0, 1800.0, 2000.0, 2200.0, 2500.0, 12000.0, 16000.0, 20000.0], strict=True))
    secs = dict(zip(ids, [6.0, 6.0, 6.0, 6.0, 6.0, 40.0, 55.0, 70.0], strict=True))
    new = _mine_etas(sizes, ids, secs)
    told = [(truth, eta) for truth, eta in new if eta is not None]
    assert len(told) == 5 and all(0.6 * truth <= eta <= 1.5 * truth for truth, eta in told), new
    old = _mine_etas(None, ids, secs)
    assert any(eta is not None and eta < truth / 5 for truth, eta in old), old
    # a candidate smaller than those done counts no less than the quickest one took (its fixed cost)
    clock = Clock()
    p = Progress("mine", clock=clock, size={"a": 1000.0, "b": 1000.0, "c": 1000.0, "d": 10.0}.get)
    p.set_total(4, "abcd")
    for key in "abc":
        p.start(key, key)
        clock.t += 5
        p.finish(key, "dropped")
    assert p.pace() == 15 / 3000 and p.eta_s() == 5.0


#: usr63, martinblech/xmltodict (``mine -n 2``): each candidate in the order verified, ``(test_bytes, seconds,
#: kept)`` from its ``candidates.jsonl`` and ``results.jsonl``.
XMLTODICT = [
    (23373, 45.1, 1), (19262, 45.6, 1), (16713, 40.1, 1), (16043, 43.5, 1), (18802, 52.8, 1), (16049, 5.5, 0),
    (41611, 12.1, 0), (20183, 69.8, 1), (21935, 49.2, 1), (20122, 46.7, 1), (17562, 51.7, 1), (17426, 95.3, 1),
    (15483, 62.3, 1), (12417, 48.9, 1), (11796, 55.9, 1), (9243, 44.4, 1), (14651, 48.4, 1), (14659, 5.5, 0),
    (14675, 5.2, 0), (7924, 39.7, 1), (14663, 50.0, 1), (7394, 43.9, 1), (14025, 48.7, 1), (13372, 41.0, 1),
    (12961, 41.7, 1), (19077, 4.1, 0), (7062, 33.5, 1), (11703, 3.6, 0), (11032, 39.5, 1), (5674, 34.7, 1),
    (6500, 36.5, 1), (9540, 47.8, 1), (5467, 47.0, 1), (9119, 43.2, 1), (8733, 45.6, 1), (7132, 34.1, 1),
    (5453, 30.0, 1), (5138, 29.2, 1), (5012, 28.7, 1), (4507, 29.5, 1), (4193, 25.5, 1), (10890, 3.4, 0),
    (3962, 2.6, 0),
]


def _mine_etas_two_at_once(rows: list[tuple[int, float, int]],
                           sized: bool) -> dict[int, tuple[float, float | None]]:
    """A mine of ``rows`` verified two at a time in their order (``-n 2``, a scripted clock): by candidates done,
    ``(seconds truly left, ETA)``."""
    ids = [f"c{i:02d}" for i in range(len(rows))]
    size = {k: float(r[0]) for k, r in zip(ids, rows, strict=True)}
    secs = {k: r[1] for k, r in zip(ids, rows, strict=True)}
    kept = {k: bool(r[2]) for k, r in zip(ids, rows, strict=True)}
    clock = Clock()
    p = Progress("mine", clock=clock, size=size.get if sized else lambda k: None)
    p.set_total(len(ids), ids)
    queue, running, seen = list(ids), [], []
    for _ in range(2):
        k = queue.pop(0)
        p.start(k, k)
        running.append((clock.t + secs[k], k))
    while running:
        running.sort()
        clock.t, k = running.pop(0)
        p.finish(k, "kept" if kept[k] else "dropped")
        if queue:
            n = queue.pop(0)
            p.start(n, n)
            running.append((clock.t + secs[n], n))
        seen.append((p.done, clock.t, p.eta_s()))
    return {done: (clock.t - t, eta) for done, t, eta in seen}


def test_a_mines_eta_counts_a_fixed_cost_per_candidate() -> None:
    """usr63 on xmltodict (``mine -n 2``): the ETA ran 1.4-2× low (``4m59s`` at 11/43 with 9m09s left, ``3m37s``
    at 22 with 5m07s, ``1m45s`` at 30 with 3m11s, ``48s`` at 35 with 70s): bytes alone, a candidate's seconds in
    proportion to its test bytes, left out its fixed cost (11 KB about 30 s, 40 KB 40-50 s). Replayed on the
    recorded seconds, the new ETA (a line per outcome, fixed cost plus per byte, :meth:`Progress.by_size`) is
    within 0.75 and 1.5 of the seconds left at each of those points, and nearer them, as a factor, than the user's
    line was (the old code on this replay said 5m12s, 3m45s, 1m48s, 55s: 0.52-0.69 of the truth)."""
    new = _mine_etas_two_at_once(XMLTODICT, sized=True)
    shown_vs_left = {11: (4 * 60 + 59, 9 * 60 + 9), 22: (3 * 60 + 37, 5 * 60 + 7), 30: (60 + 45, 3 * 60 + 11),
                     35: (48, 70)}  # what usr63's line said, and the seconds that were truly left
    for done, (shown, left) in shown_vs_left.items():
        truth, eta = new[done]
        assert eta is not None and 0.75 * truth <= eta <= 1.5 * truth, (done, truth, eta)
        assert abs(math.log(eta / truth)) < abs(math.log(shown / left)), (done, truth, eta, shown, left)


def test_a_mines_eta_cheapest_first_is_not_high_near_the_end() -> None:
    """ops64 (eta63 saw the mine ETA 1.4-2.6× high near the end): usr63's xmltodict candidates replayed cheapest first,
    as ``--time-budget`` verifies them, said 1.5-2.7× the seconds left at every point (2.65× at 40 of 43): the seconds
    in proportion to a candidate's bytes at the pace of those done were a floor under every estimate, and that pace
    spread their fixed cost over their bytes, so each larger candidate left was counted that cost over again. The
    floor is now kept for a status whose line is flat alone (it sees no size): in the last third within 0.6 and 1.75
    of the seconds left; toolz's quick drops (:func:`test_a_mines_eta_weighs_each_candidate_left_by_its_test_bytes`)
    still count the large candidates left by their bytes."""
    etas = _mine_etas_two_at_once(sorted(XMLTODICT, key=lambda r: r[0]), sized=True)
    last = [(done, truth, eta) for done, (truth, eta) in etas.items() if done >= 28 and truth > 0]
    assert len(last) == 15, last
    assert all(eta is not None and 0.6 * truth <= eta <= 1.75 * truth for _, truth, eta in last), last


def test_a_runs_flagged_solves_are_counted_solved_and_said_beside_the_count() -> None:
    """cnt62: ``solved N (K flagged)``, the count the report prints (contracts §10)."""
    p = Progress("run", 3, clock=Clock())
    p.finish("x", "solved", flagged=True)
    p.finish("y", "solved")
    p.finish("z", "unsolved")
    assert p.line() == "run 3/3 · solved 2 (1 flagged) · unsolved 1 · 0s"


#: A ``cmd:`` agent writing the fixture's last calculator (it solves each of its three tasks), with a comment that
#: names a pytest internal on the ``neg()`` task only: that solve is flagged ``suspicious`` (``pytest internals``).
_FLAGGING_AGENT = '''import os
from pathlib import Path
text = {calc!r}
if "neg()" in os.environ["HOMEFIELD_PROMPT"]:
    text += "\\n# not a pytest_runtest hook\\n"
Path("calc/__init__.py").write_text(text)
'''


@pytest.mark.slow
def test_a_runs_progress_line_counts_a_flagged_solve_as_its_report_does(mined: Path, tmp_path: Path) -> None:
    """cnt62, end to end: the item of a solve flagged ``suspicious`` is UNSOLVED (a pass/fail line) and the last
    progress line said ``solved 2 · unsolved 1`` of a report counting 3 solved; it says ``solved 3 (1 flagged)``."""
    from helpers.e2e_repo import CALC_4
    repo = copy_mined(mined, tmp_path / "repo")
    script = _FLAGGING_AGENT.format(calc=CALC_4)  # given inline: the agent's sandbox shows it no test folder
    proc = homefield(repo, "run", "--agent", f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(script)}",
                     "--attempts", "1", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (run,) = (repo / ".homefield" / "runs").iterdir()
    records = list(read_jsonl(run / "results.jsonl"))
    assert sorted((r["outcome"], bool(r.get("suspicious"))) for r in records) == [
        ("solved", False), ("solved", False), ("solved", True)], records
    lines = [line for line in proc.stdout.splitlines() if line.startswith("homefield run ")]
    assert re.fullmatch(r"homefield run 3/3 · solved 3 \(1 flagged\) · \d+s", lines[-1]), lines
    report = json.loads((run / "report.json").read_text())
    (agent,) = report["agents"].values()
    assert (agent["solved"], agent["flagged_solves"]) == (3, 1)


def test_an_item_in_flight_past_its_estimate_leaves_no_eta_of_0s() -> None:
    """usr65: humanize's mine of 29 candidates said ``28/29 · 12m00s · ETA 0s · running b239865493e2 … for 1m09s``:
    the last candidate had run past the median of those done (each item in flight counts its estimate less what it
    ran already, never under 0), so the line promised the end now while a test run went on. An item left that has
    overrun its estimate has seconds left nobody can tell: ``ETA ?`` while every item left is one of those."""
    clock = Clock()
    p = Progress("mine", clock=clock)
    keys = ["a", "b", "c", "d"]
    p.set_total(4, keys)
    for key in keys[:3]:
        p.start(key, key)
        clock.t += 30
        p.finish(key, "kept")
    p.start("d", "d")
    clock.t += 10
    assert p.eta_s() == pytest.approx(20.0)  # within its estimate: the rest of it
    clock.t += 60  # 70 s into a candidate whose like took 30
    assert p.eta_s() is None
    assert "ETA ?" in p.line() and "ETA 0s" not in p.line()


def test_a_candidate_larger_than_any_done_is_not_taken_past_the_line_at_the_largest() -> None:
    """eta46: cheapest first (``--time-budget``), the line through the small candidates done carried its slope on to
    candidates many times larger: replayed, xmltodict's ETA was 1.33× the seconds left over the whole mine (geometric
    mean, 68% of its points within 0.67-1.5×), humanize's 2.3× (``benchmarks/mine_eta.py``). A slope holds over the
    sizes it was fitted to: a candidate larger than any of its status done counts as the largest did (0.92×, 88%
    within; a flat line's proportion to size is kept: toolz's quick drops, tested above)."""
    clock = Clock()
    sizes = {"a": 500.0, "b": 1000.0, "c": 2000.0, "big": 40000.0}
    p = Progress("mine", clock=clock, size=sizes.get)
    p.set_total(4, list(sizes))
    for key, took in (("a", 40.0), ("b", 50.0), ("c", 70.0)):
        p.start(key, key)
        clock.t += took
        p.finish(key, "kept")
    fixed, slope = p.line_fit("kept") or (0.0, 0.0)
    assert slope > 0 and p.by_size(40000.0) == pytest.approx(fixed + slope * 2000.0) == p.by_size(2000.0)
    etas = _mine_etas_two_at_once(sorted(XMLTODICT, key=lambda r: r[0]), sized=True)
    ratios = [eta / truth for truth, eta in etas.values() if eta is not None and truth > 0]
    assert 0.8 <= math.exp(statistics.fmean(math.log(r) for r in ratios)) <= 1.25, ratios
