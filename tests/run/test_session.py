"""The run session without pytest items: task selection, agents, run ids, resume, stop policy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import build, cmd_agent, task_for

from pytest_homefield.agents.base import AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.reference import NoopAgent, OracleAgent
from pytest_homefield.agents.registry import hook_agents, make_agents
from pytest_homefield.errors import RunError
from pytest_homefield.layout import HomefieldDir, read_meta, write_meta
from pytest_homefield.records import Result, Task
from pytest_homefield.report.finish import RUN_REPORTS
from pytest_homefield.run.runner import RunLimits
from pytest_homefield.run.session import (
    RunSession,
    fail_under_failures,
    memorized_exclusion,
    select_tasks,
    selection,
)
from pytest_homefield.settings import Settings
from pytest_homefield.shard import shard_of_id
from pytest_homefield.store import append_jsonl, write_jsonl_atomic
from pytest_homefield.transport import ControllerWriter

START = "2026-03-01T10:00:00+00:00"


def _task(i: int) -> Task:
    sha = f"{i:02d}" * 20
    return Task(id=sha[:12], commit=sha, parent="ff" * 20, committed_at=f"2026-01-{i + 1:02d}T00:00:00+00:00",
                authored_at="", mode="commit", subject=f"task {i}", message="", prompt="Do it", source_files=[],
                test_files=[], test_patch="", gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_jsonl_atomic(HomefieldDir(root).tasks, [_task(i).to_dict() for i in range(3)])
    return root


def _settings(root: Path, **kw: Any) -> Settings:
    s = Settings(root=root, agents=["noop", "oracle"], attempts=2)
    for k, v in kw.items():
        setattr(s, k, v)
    return s


def _agents() -> list[Any]:
    return [NoopAgent(name="noop", spec="noop"), OracleAgent(name="oracle", spec="oracle")]


def _result(task: str, agent: str, attempt: int, outcome: str, cost: float | None = None,
            finished: str = "2026-03-01T10:00:05+00:00", error: str | None = None) -> dict[str, Any]:
    return Result(run_id="r", task_id=task, agent=agent, attempt=attempt, outcome=outcome, cost_usd=cost,
                  finished_at=finished, error=error).to_dict()


# -- tasks and agents ---------------------------------------------------------------------------


def test_select_tasks_applies_the_hook_then_max_tasks(repo: Path) -> None:
    seen: list[int] = []

    def modify(tasks: list[Task]) -> None:
        seen.append(len(tasks))
        tasks.reverse()

    tasks = select_tasks(_settings(repo, run_max_tasks=2), modify)
    assert seen == [3]
    assert [t.subject for t in tasks] == ["task 2", "task 1"]


def test_select_tasks_errors(tmp_path: Path, repo: Path) -> None:
    with pytest.raises(RunError, match=r"^pytest-homefield: no tasks at .*tasks\.jsonl: run `homefield mine` first$"):
        select_tasks(_settings(tmp_path))
    assert [t.subject for t in select_tasks(_settings(repo), exclude=[_task(1).id])] == ["task 0", "task 2"]


def test_an_empty_selection_says_why_in_one_line(repo: Path) -> None:
    """Exit 5 with no message was the old answer (issue 21): each way of selecting nothing says so."""
    every = [_task(i).id for i in range(3)]
    with pytest.raises(RunError, match=r"^pytest-homefield: no tasks to run: --homefield-exclude-memorized "
                                       r"leaves out all 3$"):
        select_tasks(_settings(repo), exclude=every)
    with pytest.raises(RunError, match=r"^pytest-homefield: no tasks to run: .*tasks\.jsonl holds none"):
        select_tasks(_settings(repo), lambda tasks: tasks.clear())
    # shard38: each id's shard is its sha256 mod N, plus 1; a shard holding none of the tasks is no error (its
    # session leaves its folder for the merge), where the split by position refused it
    for n in (2, 3, 4):
        parts = [select_tasks(_settings(repo, shard=f"{k}/{n}")) for k in range(1, n + 1)]
        assert sorted(t.id for p in parts for t in p) == sorted(every)
        assert all(shard_of_id(t.id, n) == k for k, p in enumerate(parts, start=1) for t in p)
    empty = next(f"{k}/4" for k in range(1, 5) if k not in {shard_of_id(i, 4) for i in every[:2]})
    assert select_tasks(_settings(repo, run_max_tasks=2, shard=empty)) == []


def test_exclusion_needs_a_probe_and_is_frozen_for_a_resumed_run(repo: Path) -> None:
    agents = _agents()
    assert memorized_exclusion(_settings(repo), agents) == {}
    # reference agents need no probe; any other agent does
    assert memorized_exclusion(_settings(repo, exclude_memorized=True), agents) == {"tasks": [], "by_agent": {}}
    other = [CommandAgent(name="m", spec="cmd:x", command="x", settings=AgentSettings())]
    with pytest.raises(RunError, match="^--homefield-exclude-memorized: no probe results for agent 'm'"):
        memorized_exclusion(_settings(repo, exclude_memorized=True), other)
    frozen = {"tasks": [_task(1).id], "by_agent": {"m": {"tasks": [_task(1).id]}}}
    s = _settings(repo, run_id="r", exclude_memorized=True)
    session = RunSession.start(s, select_tasks(s, exclude=frozen["tasks"]), agents, now=START, excluded=frozen)
    assert read_meta(session.run_dir)["excluded_memorized"] == frozen
    worker = RunSession.join(s, session.tasks, agents, json.loads(json.dumps(session.workerinput())))
    assert worker.excluded == frozen and [t.id for t in worker.tasks] == [t.id for t in session.tasks]
    # resuming keeps the frozen set, even for an agent that has no probe at all
    assert memorized_exclusion(_settings(repo, run_id="r", resume=True, exclude_memorized=True), other) == frozen


def test_hook_agents_by_name_and_duplicates() -> None:
    a, b = NoopAgent(name="a", spec="noop"), OracleAgent(name="b", spec="oracle")
    assert hook_agents([[a], {"x": b}]) == {"a": a, "b": b}
    with pytest.raises(RunError, match="two hook agents are named 'a'"):
        hook_agents([[a], [NoopAgent(name="a", spec="noop")]])


def test_make_agents_needs_one(repo: Path) -> None:
    with pytest.raises(RunError, match=r"no agent given: add --homefield-agent SPEC \(e\.g\. oracle\)"):
        make_agents(_settings(repo, agents=[]), {})
    assert [a.name for a in make_agents(_settings(repo), {})] == ["noop", "oracle"]


# -- run id, meta.json, resume, workers -----------------------------------------------------------


def test_start_writes_meta_and_a_worker_joins(repo: Path) -> None:
    s = _settings(repo)
    tasks = select_tasks(s)
    session = RunSession.start(s, tasks, _agents(), now=START)
    assert session.run_dir == HomefieldDir(repo).run_dir(session.run_id)
    meta = read_meta(session.run_dir)
    assert meta["run_id"] == session.run_id and meta["created_at"] == START
    assert meta["task_ids"] == [t.id for t in tasks] and meta["attempts"] == 2
    assert [a["name"] for a in meta["agents"]] == ["noop", "oracle"] and meta["cut_short"] is None
    assert session.done == set() and session.n_attempts == 12
    assert "/.homefield/" in (repo / ".git" / "info" / "exclude").read_text()
    wi = json.loads(json.dumps(session.workerinput()))  # travels to workers as JSON-able data
    worker = RunSession.join(s, tasks, _agents(), wi)
    assert (worker.run_id, worker.run_dir, worker.session_start, worker.done) == \
        (session.run_id, session.run_dir, START, set())
    # a worker grades with the controller's canary key, whatever its host has (a task's twins are one)
    key = (repo / ".homefield" / "canary.key").read_bytes()
    assert worker.attempt_spec(tasks[0], worker.agents[0], 1).canary_key == key


def test_join_refuses_changed_tasks(repo: Path) -> None:
    s = _settings(repo)
    session = RunSession.start(s, select_tasks(s), _agents(), now=START)
    write_jsonl_atomic(s.tasks_path, [_task(9).to_dict()])
    with pytest.raises(RunError, match="tasks.jsonl changed while the run was starting"):
        RunSession.join(s, select_tasks(s), _agents(), session.workerinput())


def test_named_run_is_never_overwritten(repo: Path) -> None:
    s = _settings(repo, run_id="mine")
    RunSession.start(s, select_tasks(s), _agents(), now=START)
    with pytest.raises(RunError, match="run 'mine' already exists: add --homefield-resume"):
        RunSession.start(s, select_tasks(s), _agents(), now=START)
    with pytest.raises(RunError, match=r"must match \[A-Za-z0-9_.-\]\+"):
        RunSession.start(_settings(repo, run_id="a/b"), select_tasks(s), _agents())


def test_resume_skips_scored_attempts_and_reopens_the_run(repo: Path) -> None:
    s = _settings(repo, run_id="k")
    tasks = select_tasks(s)
    first = RunSession.start(s, tasks, _agents(), now=START)
    t0 = tasks[0].id
    append_jsonl(first.results_path, _result(t0, "noop", 1, "empty_patch"))
    append_jsonl(first.results_path, _result(t0, "noop", 2, "infra"))  # unscored: redone
    meta = read_meta(first.run_dir)
    write_meta(first.run_dir, {**meta, "cut_short": "budget spent: 1.00 of 1.00 USD"})
    later = "2026-03-02T10:00:00+00:00"
    resumed = RunSession.start(_settings(repo, resume=True), tasks, _agents(), now=later)  # newest run
    assert resumed.run_id == "k"
    assert resumed.done == {(t0, "noop", 1)}
    assert [(a.name, n) for a, n in resumed.pending(tasks[0])] == [("noop", 2), ("oracle", 1), ("oracle", 2)]
    meta = read_meta(resumed.run_dir)
    assert meta["cut_short"] is None and meta["resumed_at"] == [later] and meta["created_at"] == START


def test_resume_errors(repo: Path) -> None:
    s = _settings(repo, resume=True)
    with pytest.raises(RunError, match="^--homefield-resume: no run to resume in "):
        RunSession.start(s, select_tasks(s), _agents())
    RunSession.start(_settings(repo, run_id="k"), select_tasks(s), _agents(), now=START)
    with pytest.raises(RunError, match="agents differ from run k"):
        RunSession.start(_settings(repo, resume=True, run_id="k"), select_tasks(s), _agents()[:1])
    with pytest.raises(RunError, match="run k has 2 attempts; flags give 3"):
        RunSession.start(_settings(repo, resume=True, run_id="k", attempts=3), select_tasks(s), _agents())


# -- stop policy ---------------------------------------------------------------------------------


def test_budget_counts_the_last_record_per_attempt(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    limits = RunLimits(path, budget_usd=0.05, since_iso=START)
    assert limits.stop_reason("a") is None
    append_jsonl(path, _result("t", "a", 1, "infra", cost=0.04))
    append_jsonl(path, _result("t", "a", 1, "solved", cost=0.02))  # the retry replaces the first line
    append_jsonl(path, _result("t", "a", 2, "solved", cost=0.02))
    assert limits.stop_reason("a") is None and limits.spent_usd("a") == pytest.approx(0.04)
    append_jsonl(path, _result("t", "a", 3, "solved", cost=None))  # unknown cost counts 0
    append_jsonl(path, _result("u", "a", 1, "solved", cost=0.02))  # e.g. from another worker
    assert limits.stop_reason("a") == "budget spent: a: 0.06 of 0.05 USD"


def test_budget_includes_earlier_sessions_and_no_budget_never_stops(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    append_jsonl(path, _result("t", "a", 1, "solved", cost=5.0, finished="2020-01-01T00:00:00+00:00"))
    assert RunLimits(path, budget_usd=5.0, since_iso=START).stop_reason("a") == "budget spent: a: 5.00 of 5.00 USD"
    assert RunLimits(path, budget_usd=None, since_iso=START).stop_reason("a") is None


def test_rate_limit_counts_only_this_session_and_wins_over_budget(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    limits = RunLimits(path, budget_usd=0.01, since_iso=START)
    append_jsonl(path, _result("t", "a", 1, "rate_limited", finished="2026-02-01T00:00:00+00:00", error="old"))
    assert limits.stop_reason("a") is None
    append_jsonl(path, _result("t", "a", 2, "rate_limited", error="429 slow down"))
    append_jsonl(path, _result("t", "a", 3, "rate_limited", error="second"))
    append_jsonl(path, _result("t", "a", 4, "solved", cost=1.0))
    assert limits.stop_reason("a") == "rate limited: 429 slow down"
    append_jsonl(tmp_path / "other.jsonl", _result("t", "a", 1, "rate_limited"))
    assert RunLimits(tmp_path / "other.jsonl", budget_usd=None, since_iso=START).stop_reason("a") == \
        "rate limited: rate limited"


# -- end of session --------------------------------------------------------------------------------


def test_finish_records_cut_short_and_writes_reports(repo: Path) -> None:
    s = _settings(repo, run_id="f", budget=0.01)
    session = RunSession.start(s, select_tasks(s), _agents(), now=START)
    append_jsonl(session.results_path, {**_result(session.tasks[0].id, "noop", 1, "empty_patch", cost=0.02),
                                        "run_id": "f"})
    session.note_skip("Skipped: budget spent: 0.02 of 0.01 USD")
    session.note_skip("Skipped: something else")
    end = session.finish(RUN_REPORTS)
    assert read_meta(session.run_dir)["cut_short"] == "budget spent: 0.02 of 0.01 USD"
    assert end.report is not None and end.gate_failures == []
    assert {p.name for p in session.run_dir.iterdir()} >= {"report.md", "report.json", "report.html"}
    assert session.gate_failures(end.report) == []
    s.fail_under = ["noop=0.5"]
    assert session.gate_failures(end.report) == ["noop pass@1 0.00 is below 0.50"]


@pytest.mark.usefixtures("cli_spelling")
def test_a_run_of_the_first_max_tasks_says_its_task_set_is_partial(repo: Path) -> None:
    """nu20: ``--max-tasks 2`` of 3 tasks reported "2 tasks" as if it were the whole task set; it is frozen in
    ``meta.json`` (a resume keeps it) and said in the run's header and first among the report's notes."""
    s = _settings(repo, run_id="m", run_max_tasks=2)
    chosen = selection(s)
    assert chosen.cut_from == 3 and len(chosen.tasks) == 2
    assert selection(_settings(repo, run_max_tasks=3)).cut_from is None  # nothing cut off
    assert selection(_settings(repo)).cut_from is None
    session = RunSession.start(s, chosen.tasks, _agents(), now=START, cut_from=chosen.cut_from)
    assert read_meta(session.run_dir)["max_tasks"] == {"n": 2, "of": 3}
    note = "the task set is partial: --max-tasks 2 ran the first 2 of the 3 tasks in tasks.jsonl (newest first)"
    end = session.finish(RUN_REPORTS)
    assert end.report is not None and end.report["notes"][0].startswith(note), end.report["notes"]
    assert note in (session.run_dir / "report.md").read_text()
    resumed = RunSession.start(_settings(repo, run_id="m", run_max_tasks=2, resume=True), chosen.tasks, _agents())
    assert resumed.max_tasks == {"n": 2, "of": 3} and read_meta(resumed.run_dir)["max_tasks"] == {"n": 2, "of": 3}
    whole = RunSession.start(_settings(repo, run_id="w"), select_tasks(_settings(repo)), _agents(), now=START)
    assert "max_tasks" not in read_meta(whole.run_dir) and whole.max_tasks is None


def test_fail_under_errors() -> None:
    report = {"agents": {"a": {"pass_at_1": 0.5}}}
    assert fail_under_failures(report, ["0.5", "a=0.4"]) == []
    with pytest.raises(RunError, match="expected RATE or AGENT=RATE"):
        fail_under_failures(report, ["high"])
    with pytest.raises(RunError, match="RATE is a fraction between 0 and 1"):
        fail_under_failures(report, ["2"])
    with pytest.raises(RunError, match="no agent named 'b' in this run"):
        fail_under_failures(report, ["b=0.1"])


@pytest.mark.slow
def test_run_attempt_appends_the_result_the_limits_then_see(tmp_path: Path) -> None:
    fx = build(tmp_path / "repo")
    task = task_for(fx)
    s = _settings(fx.root, agents=["payer"], attempts=1, budget=0.03, run_id="one")
    agent = cmd_agent("""echo '{"cost_usd": 0.03}'""", name="payer")
    setups: list[str] = []
    session = RunSession.start(s, [task], [agent], setup_command=lambda t: setups.append(t.id) or None)
    try:
        assert session.stop_reason(agent) is None
        result = session.run_attempt(task, agent, 1)
        assert not session.results_path.exists()  # workers never write results.jsonl: the controller does
        assert session.stop_reason(agent) == "budget spent: payer: 0.03 of 0.03 USD"  # counted at once, locally
        ControllerWriter(session.home.path).deliver(session.messages(result))
    finally:
        session.close()
    assert (result.outcome, result.cost_usd, result.run_id) == ("empty_patch", 0.03, "one")
    assert setups == [task.id]  # the hook was asked once, when the snapshot was built
    lines = session.results_path.read_text().splitlines()
    assert [json.loads(line)["outcome"] for line in lines] == ["empty_patch"]
    assert session.artifacts(task, agent, 1).is_dir()
    assert session.stop_reason(agent) == "budget spent: payer: 0.03 of 0.03 USD"


def test_resume_names_a_changed_shard_before_the_task_selection_it_changes(repo: Path) -> None:
    s = _settings(repo, run_id="sh", shard="1/2")
    RunSession.start(s, select_tasks(s), _agents(), now=START)
    again = _settings(repo, run_id="sh", resume=True)
    with pytest.raises(RunError, match=r"^--homefield-resume: run sh is shard 1/2; flags give none$"):
        RunSession.start(again, select_tasks(again), _agents(), now=START)
    meta = read_meta(HomefieldDir(repo).run_dir("sh"))
    assert meta["shard"] == "1/2" and "resumed_at" not in meta  # nothing written by the refused resume
    assert meta["split"] == "sha256"


def test_a_shard_of_the_split_by_position_is_not_resumed(repo: Path) -> None:
    """shard38: a shard run made under the split by position (no ``split`` in its meta.json) holds another split's
    share: its resume is refused, one line, nothing written."""
    s = _settings(repo, run_id="old", shard="1/2")
    RunSession.start(s, select_tasks(s), _agents(), now=START)
    run_dir = HomefieldDir(repo).run_dir("old")
    write_meta(run_dir, {k: v for k, v in read_meta(run_dir).items() if k != "split"})
    again = _settings(repo, run_id="old", shard="1/2", resume=True)
    with pytest.raises(RunError, match=r'^--homefield-resume: run old: a shard split by position, the rule before '
                                       r'shard38 \(its meta.json has no split: "sha256"\); run that shard again'):
        RunSession.start(again, select_tasks(again), _agents(), now=START)
    assert "resumed_at" not in read_meta(run_dir)
