"""``homefield plan`` estimates: grading time from mining, agent time and cost from flags, history or
the assumed per-client table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_homefield.commands.plan import plan_text
from pytest_homefield.records import Task
from pytest_homefield.run.cost import DEFAULTS, assumed_per_run, estimate
from pytest_homefield.settings import Settings, spelled_for
from pytest_homefield.store import write_jsonl_atomic


def task(i: int, commit_s: float, runs: int = 2) -> Task:
    return Task(id=f"{i:012d}", commit=f"{i:040d}", parent="0" * 40, committed_at="", authored_at="",
                mode="commit", subject=f"Task {i}", message="", prompt="", source_files=[], test_files=[],
                test_patch="", gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[],
                verify={"stability_runs": runs, "parent_s": 1.0, "commit_s": commit_s})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    s = Settings(root=tmp_path, attempts=3)
    write_jsonl_atomic(s.tasks_path, [task(1, 4.0).to_dict(), task(2, 8.0).to_dict()])
    return s


@pytest.mark.usefixtures("cli_spelling")
def test_a_claude_agent_without_history_gets_an_assumed_estimate(settings: Settings) -> None:
    settings.agents = ["oracle", "claude:claude-sonnet-4-5", "h=claude:claude-haiku-4-5", "cmd:make fix"]
    oracle, sonnet, haiku, cmd = estimate(settings, [task(1, 4.0), task(2, 8.0)], settings.agents, 6)
    # grading: commit_s / stability_runs, averaged over tasks: (2 + 4) / 2; a model's change is not the
    # reference fix, so it is graded with canary twins: 2 runs at once (nu27)
    assert oracle.grading_s_per_run == 3.0 and sonnet.grading_s_per_run == 6.0
    assert (oracle.agent_s_per_run, oracle.usd_per_run, oracle.basis) == (0.0, 0.0,
                                                                         "exact: a reference agent spends nothing")
    assert (sonnet.agent_s_per_run, sonnet.usd_per_run) == (240.0, 0.50)
    assert sonnet.basis == "assumed (claude default; no earlier attempts)"
    assert sonnet.hours == pytest.approx(6 * 246 / 3600) and sonnet.usd == pytest.approx(3.0)
    assert (haiku.agent_s_per_run, haiku.usd_per_run) == (120.0, 0.15)
    assert cmd.hours is None and cmd.usd is None and "give --seconds-per-run" in cmd.basis


@pytest.mark.usefixtures("cli_spelling")
def test_flags_replace_assumptions_and_history(settings: Settings) -> None:
    run = settings.homefield_dir / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"agents": [{"name": "claude-sonnet-4-5",
                                                           "spec": "claude:claude-sonnet-4-5"}]}))
    write_jsonl_atomic(run / "results.jsonl", [
        {"agent": "claude-sonnet-4-5", "outcome": "solved", "wall_s": 100.0, "test_s": 5.0, "cost_usd": 0.2},
        {"agent": "claude-sonnet-4-5", "outcome": "tests_failed", "wall_s": 300.0, "test_s": 5.0, "cost_usd": 0.4},
        {"agent": "claude-sonnet-4-5", "outcome": "infra", "wall_s": 9999.0, "test_s": 0.0, "cost_usd": 9.0},
    ])
    (hist,) = estimate(settings, [task(1, 4.0)], ["claude:claude-sonnet-4-5"], 3)
    assert (hist.agent_s_per_run, hist.usd_per_run, hist.basis) == (200.0, pytest.approx(0.3),
                                                                    "2 earlier attempts")
    (given,) = estimate(settings, [task(1, 4.0)], ["claude:claude-sonnet-4-5"], 3, cost_per_run=1.25)
    assert given.usd_per_run == 1.25 and given.agent_s_per_run == 200.0
    assert given.basis == "--cost-per-run given"


def test_grading_time_comes_from_earlier_graded_attempts_and_noop_is_never_graded(settings: Settings) -> None:
    # issue 35: plan charged noop the full grading time, and the time at mining was ~2.7x too low
    run = settings.homefield_dir / "runs" / "verify-1"
    run.mkdir(parents=True)
    write_jsonl_atomic(run / "results.jsonl", [
        {"task_id": task(1, 4.0).id, "agent": "oracle", "outcome": "solved", "wall_s": 0.0, "test_s": 5.0},
        {"task_id": task(1, 4.0).id, "agent": "x", "outcome": "tests_failed", "wall_s": 1.0, "test_s": 7.0},
        {"task_id": task(1, 4.0).id, "agent": "noop", "outcome": "empty_patch", "wall_s": 0.0, "test_s": 0.0},
        {"task_id": task(2, 8.0).id, "agent": "x", "outcome": "infra", "wall_s": 1.0, "test_s": 99.0},
    ])
    oracle, noop = estimate(settings, [task(1, 4.0), task(2, 8.0)], ["oracle", "noop"], 3)
    # task 1: mean of its two graded attempts (6.0); task 2: only an infra attempt, so mining's 4.0
    assert oracle.grading_s_per_run == pytest.approx(5.0)
    assert oracle.grading_basis.startswith("earlier graded attempts (1 task), measured at mining (1 task;")
    assert (noop.grading_s_per_run, noop.grading_basis) == (0.0, "exact: an empty patch is not graded")
    assert noop.hours == 0.0


def _graded(settings: Settings, run_id: str, rows: list[tuple[str, str, float, bool]]) -> None:
    """A finished run folder ``run_id`` with one scored grading per row ``(task id, agent, test_s, canaries)``;
    a grading with canaries has its attempt folder's ``canaries.json``, as grading writes it."""
    run = settings.homefield_dir / "runs" / run_id
    recs = []
    for task_id, agent, test_s, canaries in rows:
        recs.append({"run_id": run_id, "task_id": task_id, "agent": agent, "attempt": 1,
                     "outcome": "solved" if agent == "oracle" else "tests_failed", "wall_s": 0.1, "test_s": test_s})
        folder = run / "attempts" / task_id / agent / "1"
        folder.mkdir(parents=True)
        if canaries:
            (folder / "canaries.json").write_text('{"seed": 1, "canaries": []}')
    write_jsonl_atomic(run / "results.jsonl", recs)


def test_a_model_agents_grading_time_counts_the_canary_twin_runs(settings: Settings) -> None:
    """nu27 on prettytable: oracle's gradings took 2.4-3.0 s, the attack agents' (graded with canary twins,
    2 runs at once) 4-9 s, yet every agent was planned at the mean of all gradings of the task. The
    reference fix is planned from gradings without twins, an agent with a model from gradings with them,
    else from the others × 2."""
    t1, t2 = task(1, 4.0), task(2, 8.0)
    _graded(settings, "verify-1", [(t1.id, "oracle", 3.0, False), (t1.id, "attack-x", 7.0, True),
                                   (t2.id, "oracle", 5.0, False)])
    oracle, claude, noop = estimate(settings, [t1, t2], ["oracle", "claude", "noop"], 2)
    assert oracle.grading_s_per_run == pytest.approx((3.0 + 5.0) / 2)
    assert oracle.grading_basis == "earlier graded attempts (2 tasks)"
    assert claude.grading_s_per_run == pytest.approx((7.0 + 2 * 5.0) / 2)  # t1 with twins; t2 oracle's × 2
    assert claude.grading_basis == ("earlier gradings with canary twins (1 task), earlier graded attempts (1 task) "
                                    "× 2: a change other than the reference fix is graded by 2 runs at once")
    assert noop.grading_s_per_run == 0.0
    # nu27: sim:0.5 was planned at oracle's 4.0 s a run, though its misses are empty patches, never graded
    (sim,) = estimate(settings, [t1, t2], ["sim:0.5"], 2)
    assert sim.grading_s_per_run == pytest.approx(0.5 * (3.0 + 5.0) / 2)
    assert sim.grading_basis == ("earlier graded attempts (2 tasks) × 0.5: sim:P applies the fix in that share of "
                                 "its runs")


def test_verifys_time_line_counts_the_attacks_canary_twin_runs(settings: Settings) -> None:
    """nu27 on prettytable: ``verify --attacks --max-tasks 1 -n 2`` said "48 gradings on 1 task, about 2.4s
    each (earlier graded attempts (1 task)): about 57s with 2 workers" from oracle's one grading and took
    1m56s: 47 of the 48 were attacks, graded with canary twins in 4-9 s. The line now says both figures."""
    from pytest_homefield.commands.verify import time_line
    from pytest_homefield.run.cost import graded_seconds_by_task

    t1 = task(1, 4.0)
    _graded(settings, "r1", [(t1.id, "oracle", 2.4, False)])
    runs = settings.homefield_dir / "runs"
    line = time_line([t1], 48, 2, graded_seconds_by_task(runs, canaries=False), attacks=47,
                     canaried=graded_seconds_by_task(runs, canaries=True))
    assert line == ("homefield verify: 48 gradings on 1 task, about 2.4s each for oracle (earlier graded attempts "
                    "(1 task)) and 4.8s for each of 47 attacks, graded with canary twins (earlier graded attempts "
                    "(1 task) × 2: a change other than the reference fix is graded by 2 runs at once): about 1m54s "
                    "with 2 workers, up to 3m48s on a loaded machine (×2.0: an attempt also runs its agent and waits "
                    "for the machine's phase lock and memory, which other sessions set)")
    _graded(settings, "verify-r2", [(t1.id, "attack-x", 6.0, True), (t1.id, "attack-y", 8.0, True)])
    line = time_line([t1], 48, 2, graded_seconds_by_task(runs, canaries=False), attacks=47,
                     canaried=graded_seconds_by_task(runs, canaries=True))
    assert line is not None and line.endswith(
        "and 7.0s for each of 47 attacks, graded with canary twins (earlier gradings with canary twins (1 task)): "
        "about 2m45s with 2 workers, up to 5m31s on a loaded machine (×2.0: an attempt also runs its agent and waits "
        "for the machine's phase lock and memory, which other sessions set)"), line


def test_verifys_time_line_leaves_out_the_attacks_that_end_before_grading() -> None:
    """nu28 on sqlparse: 6 of the 47 attacks (a fifo, a fork bomb, the claims, …) are agent_error before any test
    runs, and the line counted them as gradings with canary twins."""
    from pytest_homefield.agents.attacks import ATTACKS
    from pytest_homefield.commands.verify import planned_gradings, time_line

    ids = ["f::t1::oracle[1]"] + [f"f::t1::attack-{a.name}[1]" for a in ATTACKS]
    ended = {"fifo-in-workspace", "fork-bomb", "claim-infra", "claim-rate-limited", "nested-folders",
             "long-path-writes"}
    assert {a.name for a in ATTACKS if not a.graded} == ended
    assert planned_gradings(ids) == (len(ATTACKS) + 1 - 6, len(ATTACKS) - 6, 6)
    line = time_line([task(1, 4.0)], 42, 2, {}, attacks=41, ungraded=6)
    assert line is not None and line.endswith("which other sessions set); 6 more attack attempts end before "
                                              "grading"), line


@pytest.mark.usefixtures("cli_spelling")
def test_attempt_budget_caps_the_assumed_claude_cost(settings: Settings) -> None:
    settings.attempt_budget = 0.25
    (e,) = estimate(settings, [task(1, 4.0)], ["claude"], 1)
    assert e.usd_per_run == 0.25 and "capped by --attempt-budget" in e.basis


def test_plan_text_before_any_run(settings: Settings) -> None:
    settings.agents = ["oracle", "claude:claude-sonnet-4-5"]
    text = plan_text(settings)
    assert text.splitlines()[0] == "Plan: 2 tasks × 2 agents × 3 attempts = 12 agent runs"
    row = next(line for line in text.splitlines() if line.startswith("claude-sonnet-4-5"))
    # ux67: grade s and hours are the range Total says (they gave its low end only)
    assert row.split()[:7] == ["claude-sonnet-4-5", "6", "240", "6.0-18.0", "0.50", "0.41-0.43", "3.00"]
    assert "?" not in text
    assert "Total: 0.41 hours sequential, up to 0.45 hours with gradings planned from their seconds as measured, " \
           "3.00 USD" in text  # plan66: the grading's high end, its seconds at mining ×3 (6 × 3 × 2 s more)
    # ux67: the line said "measured at mining" four times, the 2 tasks and the load twice each; each fact once now
    grading = next(x for x in text.splitlines() if x.startswith("Grading time per run:"))
    assert grading.startswith(
        "Grading time per run: oracle 3.0-9.0 s, claude-sonnet-4-5 6.0-18.0 s. Low end: oracle: measured at mining "
        "(2 tasks; at a load not recorded, so no bound: grading also runs canaries and the whole hidden test files, a "
        "busier machine at mining ran them slower); claude-sonnet-4-5: as oracle × 2: a change other than the "
        "reference fix is graded by 2 runs at once. High end: each task's seconds at mining as measured ×3, since a "
        "grading runs more than mining's one run of the commit's tests. Assumed figures"), grading
    assert [grading.count(x) for x in ("measured at mining", "2 tasks", "load", "up to")] == [1, 1, 1, 0]
    # issue 32: the power of the paired test, before anything is spent (2 tasks cannot reach p < 0.05)
    assert text.splitlines()[-1] == ("Power to see a gap between two agents (2 tasks × 3 attempts, 50% base rate, "
                                     "exact paired test at alpha 0.05): none: with fewer than 6 tasks no gap can "
                                     "reach p<0.05.")


def test_grading_time_from_mining_is_scaled_to_an_idle_machine_by_the_load_it_was_measured_at(
        settings: Settings) -> None:
    """usr63 on xmltodict: ``homefield plan`` said 7.5 s per oracle grading, "a lower bound", from the mine's timings
    taken at a load average of 25-81, and the gradings took 1.75 s each (432 s planned, 99 s taken). A task's
    ``verify.load_per_cpu`` (the load per CPU its mining runs were timed at) now divides its seconds (over 1), and
    the line says that load; a task mined before it keeps its seconds, which the line no longer calls a bound."""
    loaded = dataclasses.replace(task(1, 22.07, runs=3), verify={"stability_runs": 3, "parent_s": 1.0,
                                                                   "commit_s": 22.07, "load_per_cpu": 12.5})
    idle = dataclasses.replace(task(2, 6.0, runs=3), verify={"stability_runs": 3, "parent_s": 1.0,
                                                               "commit_s": 6.0, "load_per_cpu": 0.4})
    write_jsonl_atomic(settings.tasks_path, [loaded.to_dict(), idle.to_dict()])
    (oracle,) = estimate(settings, [loaded], ["oracle"], 1)
    assert oracle.grading_s_per_run == pytest.approx(22.07 / 3 / 12.5)  # 0.59 s, under the 1.75 s it took; was 7.36
    assert oracle.grading_basis == ("measured at mining (1 task; at a load of 12.5 per CPU, scaled to an idle machine: "
                                    "a lower bound there, grading also runs canaries and the whole hidden test files)")
    (oracle,) = estimate(settings, [loaded, idle, task(3, 9.0, runs=3)], ["oracle"], 1)
    # an idle machine's load (under 1) leaves its seconds as they are; a task without a load keeps its own
    assert oracle.grading_s_per_run == pytest.approx((22.07 / 12.5 + 6.0 + 9.0) / 3 / 3)
    assert oracle.grading_basis == (
        "measured at mining (2 tasks; at a load of 0.4-12.5 per CPU, scaled to an idle machine: a lower bound there, "
        "grading also runs canaries and the whole hidden test files), measured at mining (1 task; at a load not "
        "recorded, so no bound: grading also runs canaries and the whole hidden test files, a busier machine at "
        "mining ran them slower)")
    settings.agents = ["oracle"]
    assert "a lower bound" not in plan_text(settings).replace("a lower bound there", "")


def test_the_default_table_covers_every_built_in_client() -> None:
    kinds = {k for k, *_ in DEFAULTS}
    assert {"oracle", "noop", "sim", "claude", "openai", "aider", "codex", "gemini"} <= kinds
    assert assumed_per_run("claude", "claude-opus-4-5")[:2] == (300.0, 1.50)
    assert assumed_per_run("cmd", "true") == (None, None, "cmd")


def test_cli_flags(settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    from pytest_homefield.cli import main

    subprocess.run(["git", "init", "-q", str(settings.root)], check=True)
    monkeypatch.chdir(settings.root)
    assert main(["plan", "--agent", "claude", "--attempts", "1", "--seconds-per-run", "90",
                 "--cost-per-run", "0.1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("claude "))
    assert row.split()[:7] == ["claude", "2", "90", "6.0-18.0", "0.10", "0.05-0.06", "0.20"]
    assert row.endswith("--seconds-per-run and --cost-per-run given")


def test_plan_power_uses_the_earlier_runs_base_rate(settings: Settings) -> None:
    """issue 32: the power is stated at the solve rate the user's newest earlier run shows (else 50%, said); a
    solve flagged ``suspicious`` (2 here) is one, as the report counts it since sus60 (30% when it counted
    unsolved)."""
    settings.agents = ["oracle", "claude"]
    assert "Base rate: 50% assumed (no earlier run" in plan_text(settings)
    for rid, when, solved in (("old", "2026-01-01T00:00:00+00:00", [1, 1, 1, 1]),
                              ("new", "2026-02-01T00:00:00+00:00", [1, 1, 1, 2, 0, 0, 0, 0, 0, 0])):
        run = settings.root / ".homefield" / "runs" / rid
        run.mkdir(parents=True)
        (run / "meta.json").write_text(json.dumps({"run_id": rid, "created_at": when, "attempts": 1,
                                                   "tasks_digest": "x", "task_ids": []}))
        recs = [{"run_id": rid, "task_id": f"t{i}", "agent": "claude", "attempt": 1,
                 "outcome": "solved" if s else "tests_failed", "suspicious": s == 2} for i, s in enumerate(solved)]
        recs.append({"run_id": rid, "task_id": "t0", "agent": "oracle", "attempt": 2, "outcome": "solved"})
        write_jsonl_atomic(run / "results.jsonl", recs)
    lines = plan_text(settings).splitlines()
    assert lines[-2] == "Base rate: 40% from run new (10 scored attempts of claude)"
    assert "40% base rate" in lines[-1]


def test_a_plan_of_reference_agents_says_so_rather_than_no_earlier_run(settings: Settings) -> None:
    """nu27 on prettytable: ``homefield plan --agent oracle --agent sim:0.5 --agent noop`` after a run of
    those three agents said "no earlier run of these agents": there was one, but reference agents' pass
    rates (100 %, 0 %, P) are no base rate for the power of a comparison between real agents."""
    settings.agents = ["oracle", "sim:0.5", "noop"]
    run = settings.root / ".homefield" / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-02-01T00:00:00+00:00",
                                               "attempts": 1, "tasks_digest": "x", "task_ids": []}))
    write_jsonl_atomic(run / "results.jsonl", [
        {"run_id": "r1", "task_id": "t0", "agent": agent, "attempt": 1, "outcome": outcome}
        for agent, outcome in (("oracle", "solved"), ("sim-0.5", "solved"), ("noop", "empty_patch"))])
    lines = plan_text(settings).splitlines()
    assert lines[-2] == ("Base rate: 50% assumed (every agent of this plan is a reference agent: oracle, noop and "
                         "sim:P, whose pass rates are no agent's; the most noise, so the power below is the least "
                         "it can be)")
    settings.agents = ["oracle", "claude"]  # a real agent without a run of its own: no earlier run of it
    assert plan_text(settings).splitlines()[-2].startswith("Base rate: 50% assumed (no earlier run of these agents")


@pytest.mark.parametrize(("argv", "line"), [
    (["plan", "--agent", "oracle", "--attempts", "0"], "homefield plan: --attempts must be at least 1, got 0"),
    (["plan", "--agent", "oracle", "--att", "-2"], "homefield plan: --att must be at least 1, got -2"),
    (["report", "--alpha", "2"], "homefield report: --alpha must be between 0 and 1, got 2.0"),
])
def test_a_bad_flag_is_named_as_typed(settings: Settings, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], argv: list[str], line: str) -> None:
    """nu19 on andialbrecht/sqlparse: ``homefield plan --attempts 0`` said "--homefield-attempts must be at
    least 1" (an option the user never typed; ``homefield run`` names ``--attempts``), and ``homefield
    report --alpha 2`` printed "--homefield-alpha must be between 0 and 1" without saying which command."""
    import subprocess

    from pytest_homefield.cli import main

    subprocess.run(["git", "init", "-q", str(settings.root)], check=True)
    run = settings.root / ".homefield" / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({"run_id": "r1", "created_at": "2026-12-01T10:00:00+00:00",
                                               "agents": [{"name": "noop", "spec": "noop"}], "attempts": 1,
                                               "task_ids": [], "cut_short": None}))
    monkeypatch.chdir(settings.root)
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [line]


def test_a_plan_of_oracle_and_noop_says_one_attempt_is_the_sanity_check(settings: Settings) -> None:
    """nu32: oracle and noop at the default 3 attempts graded the reference fix three times over; the plan says
    so after its total, as the run's header does."""
    settings.agents = ["oracle", "noop"]
    with spelled_for("cli"):  # homefield plan is a command of the script only (cli.main: spelled_for("cli"))
        lines = plan_text(settings).splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith("Total:"))
    assert lines[total + 1] == ("Oracle and noop make the same change on every attempt: the 2 after the first only "
                                "repeat it (a flaky test alone tells them apart); --attempts 1 is the sanity check at "
                                "1/3 of the grading time")
    settings.agents = ["oracle"]  # nu35: "Oracle make the same change" before
    assert "Oracle makes the same change on every attempt: the 2 after the first" in plan_text(settings)
    settings.agents = ["oracle", "sim:0.5"]  # sim:P draws per attempt
    assert "make the same change" not in plan_text(settings)
    settings.agents, settings.attempts = ["oracle", "noop"], 1
    assert "make the same change" not in plan_text(settings)


def test_a_tasks_grading_counts_the_runs_its_twin_plan_makes(settings: Settings) -> None:
    """rev58: a model's change was estimated at ``RUNS`` (2) × mining's time for every task, but a task whose twin
    plan has a teardown twin makes 3 runs at once and one of sentinels alone 1 (``verify.twin_runs``, mining's
    plan): task 1 (2 s a run, 3 runs) and task 2 (4 s a run, 1 run) are (6 + 4) / 2 = 5 s (before: (4 + 8) / 2)."""
    one, two = task(1, 4.0), task(2, 8.0)
    one.verify["twin_runs"], two.verify["twin_runs"] = 3, 1
    (sonnet,) = estimate(settings, [one, two], ["claude:claude-sonnet-4-5"], 1)
    assert sonnet.grading_s_per_run == pytest.approx(5.0)
    assert sonnet.grading_basis.endswith("a change other than the reference fix is graded by 1-3 runs at once")
    (plain,) = estimate(settings, [task(1, 4.0)], ["claude:claude-sonnet-4-5"], 1)  # mined before it: RUNS
    assert plain.grading_s_per_run == pytest.approx(4.0) and plain.grading_basis.endswith("graded by 2 runs at once")


def test_earlier_gradings_timed_under_load_are_scaled_to_the_load_now(settings: Settings) -> None:
    """ux65 (ops64's leftover): ``homefield verify`` scales earlier gradings' seconds timed on a busier machine
    down to the load now, ``homefield plan`` took them as measured. Now both do, by one helper: a grading timed at a
    load of 4.0 per CPU counts a quarter on an idle machine, half at 2.0; one timed on an idle machine, or without a
    recorded load, as measured; a busier machine now raises none."""
    _graded(settings, "r1", [(task(1, 4.0).id, "oracle", 8.0, False), (task(2, 8.0).id, "oracle", 3.0, False)])
    results = settings.homefield_dir / "runs" / "r1" / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[0]["load_per_cpu"] = 4.0  # task 1's grading: on a busy machine; task 2's: none recorded (idle)
    write_jsonl_atomic(results, rows)
    tasks = [task(1, 4.0), task(2, 8.0)]
    (idle,) = estimate(settings, tasks, ["oracle"], 1, load_now=0.3)
    assert idle.grading_s_per_run == pytest.approx((8.0 / 4 + 3.0) / 2)
    assert idle.grading_basis == "earlier graded attempts (2 tasks; timed at a load of 4.0 per CPU, scaled to 1.0 now)"
    (half,) = estimate(settings, tasks, ["oracle"], 1, load_now=2.0)
    assert half.grading_s_per_run == pytest.approx((8.0 / 2 + 3.0) / 2)
    (busy,) = estimate(settings, tasks, ["oracle"], 1, load_now=6.0)
    assert busy.grading_s_per_run == pytest.approx((8.0 + 3.0) / 2) and busy.grading_basis == (
        "earlier graded attempts (2 tasks)")


def test_the_plan_is_a_range_that_holds_what_more_itertools_gradings_took(settings: Settings) -> None:
    """plan66: ``homefield plan --agent oracle`` on more-itertools' 8 mined tasks said 1.3 s per grading and "0.00
    hours" (its mined seconds ÷ the load per CPU at mining, 2.0-18.4: up to ÷18); the same gradings took 125.5 s in
    all at 2.3 per CPU (r45's verify). As verify's line (eta46), the plan is a range now: its high end takes the mined
    seconds as measured × MINED_TO_GRADED; usr63's xmltodict task (mined at 12.5 per CPU, graded in 1.75 s) stays in
    it too. Not held: the same gradings at 8.5 per CPU took 407.8 s (benchmarks/time_estimates.py): a plan cannot
    know the load its run will meet."""
    from helpers.recorded_timings import MIT_GRADED, mit_tasks

    tasks = mit_tasks()
    write_jsonl_atomic(settings.tasks_path, [t.to_dict() for t in tasks])
    settings.agents, settings.attempts = ["oracle"], 1
    (oracle,) = estimate(settings, tasks, ["oracle"], len(tasks), load_now=1.0)
    took = sum(test_s + host_s for test_s, host_s, _ in MIT_GRADED)
    assert oracle.hours is not None and oracle.hours_high is not None
    assert oracle.hours * 3600 <= took <= oracle.hours_high * 3600, (oracle.hours * 3600, took)
    lines = plan_text(settings).splitlines()
    assert "Total: 0.00 hours (10s) sequential, up to 0.06 hours (3m27s) with gradings planned from their seconds as " \
           "measured, 0.00 USD" in lines
    assert next(x for x in lines if x.startswith("Grading time per run:")).startswith(
        "Grading time per run: 1.3-26.0 s. Low end: measured at mining (8 tasks; at a load of 2.0-18.4 per CPU, scaled "
        "to an idle machine: a lower bound there, grading also runs canaries and the whole hidden test files). High "
        "end: each task's seconds at mining as measured ×3, since a grading runs more than mining's one run of the "
        "commit's tests.")
    assert next(x for x in lines if x.startswith("oracle")).split()[3:6] == ["1.3-26.0", "0.00", "0.00-0.06"]
    xmltodict = dataclasses.replace(task(1, 22.07, runs=3), verify={"stability_runs": 3, "commit_s": 22.07,
                                                                      "load_per_cpu": 12.5})
    (oracle,) = estimate(settings, [xmltodict], ["oracle"], 1, load_now=1.0)
    assert oracle.grading_s_per_run is not None and oracle.grading_s_high is not None
    assert oracle.grading_s_per_run <= 1.75 <= oracle.grading_s_high
