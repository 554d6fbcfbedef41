"""run/flaky.py (contracts §7): PASS_TO_PASS ids the oracle fails at grading are recorded in
``.homefield/flaky.jsonl``, frozen into a run's ``meta.json`` and left out of every agent's
regression check; ``homefield verify`` and ``homefield run`` on a real task."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from helpers.attack_repo import build, cmd_agent, task_for
from helpers.e2e_repo import homefield

from pytest_homefield.agents.reference import NoopAgent, OracleAgent
from pytest_homefield.errors import RunError
from pytest_homefield.layout import HomefieldDir, read_meta
from pytest_homefield.records import Result, Task
from pytest_homefield.run.attempt import AttemptSpec
from pytest_homefield.run.flaky import (
    count_flaky,
    flaky_line,
    flaky_records,
    found_flaky,
    freeze_flaky,
    frozen_flaky,
    merged_flaky,
    read_flaky,
)
from pytest_homefield.run.grading import Grade
from pytest_homefield.run.runner import AttemptRunner
from pytest_homefield.run.session import RunSession, select_tasks
from pytest_homefield.settings import Settings
from pytest_homefield.store import append_jsonl, read_jsonl, write_jsonl_atomic


def _task(i: int, p2p: list[str]) -> Task:
    sha = f"{i:02d}" * 20
    return Task(id=sha[:12], commit=sha, parent="ff" * 20, committed_at=f"2026-01-{i + 1:02d}T00:00:00+00:00",
                authored_at="", mode="commit", subject=f"task {i}", message="", prompt="Do it", source_files=[],
                test_files=[], test_patch="", gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=p2p)


def _line(task_id: str, test_id: str, run_id: str = "r0") -> dict[str, object]:
    return {"schema_version": 1, "task_id": task_id, "test_id": test_id, "run_id": run_id, "agent": "oracle",
            "attempt": 1, "found_at": "2026-03-01T10:00:00.000+00:00"}


def test_only_the_oracle_regression_records_ids() -> None:
    oracle, noop = OracleAgent(name="oracle", spec="oracle"), NoopAgent(name="noop", spec="noop")
    regression = Grade(outcome="regression", failing_p2p=["t::b"])
    assert found_flaky(oracle, regression, [oracle, noop]) == ["t::b"]
    assert found_flaky(noop, regression, [oracle, noop]) == []
    # FAIL_TO_PASS failing too: the environment is broken, single ids say nothing
    broken = Grade(outcome="tests_failed", failing_f2p=["t::a"], failing_p2p=["t::b"])
    assert found_flaky(oracle, broken, [oracle]) == []
    result = Result(run_id="r1", task_id="t1", agent="oracle", attempt=2, outcome="regression",
                    finished_at="2026-03-01T10:00:00.000+00:00")
    assert flaky_records(result, ["t::b"]) == [{**_line("t1", "t::b", "r1"), "attempt": 2}]


def test_an_oracle_regression_beside_another_agent_records_nothing(tmp_path: Path) -> None:
    """attacker9 F3b: in a session with an agent that runs code, the oracle's ``regression`` may be that
    code's doing (a redis ACL its grading set, the machine's load), and a ``flaky.jsonl`` line would
    excuse the id for every later agent: only a session of reference agents records one."""
    oracle = OracleAgent(name="oracle", spec="oracle")

    def regressed(spec: AttemptSpec, cache: object) -> Result:  # the grading's verdict, as run_attempt reports it
        assert spec.graded is not None
        spec.graded(Grade(outcome="regression", failing_p2p=["t::b"]))
        return Result(run_id="r", task_id=spec.task.id, agent=spec.agent.name, attempt=1, outcome="regression")

    appended = {}
    for name, agents in (("mixed", [oracle, cmd_agent("true", "evil")]), ("alone", [oracle])):
        runner = AttemptRunner(Settings(root=tmp_path, sandbox="none"), agents, run_id="r",
                               results=tmp_path / ".homefield" / "r.jsonl", folder=lambda variant: tmp_path,
                               session_start="2026-01-01T00:00:00+00:00", budget_usd=None, attempt=regressed)
        result = runner.run(runner.spec(_task(1, ["t::b"]), oracle, 1))
        appended[name] = [m["record"]["test_id"] for m in runner.messages(result) if m.get("append") == "flaky.jsonl"]
    assert appended == {"mixed": [], "alone": ["t::b"]}


def test_read_flaky_keeps_the_tasks_pass_to_pass_ids(tmp_path: Path) -> None:
    path = tmp_path / "flaky.jsonl"
    tasks = [_task(1, ["t::b", "t::c"]), _task(2, ["t::d"])]
    assert read_flaky(path, tasks) == {}
    t1, t2 = tasks[0].id, tasks[1].id
    for rec in (_line(t1, "t::c"), _line(t1, "t::b"), _line(t1, "t::b", "r1"), _line(t1, "t::gone"),
                _line("other", "t::b")):
        append_jsonl(path, rec)
    with open(path, "a") as fh:
        fh.write('{"task_id": "torn')  # a crashed writer's torn line is skipped
    assert read_flaky(path, tasks) == {t1: ["t::b", "t::c"]}
    meta: dict[str, object] = {"run_id": "r"}
    assert freeze_flaky(meta, path, tasks) == {t1: ["t::b", "t::c"]} and meta["flaky_p2p"] == {t1: ["t::b", "t::c"]}
    nothing: dict[str, object] = {}
    assert freeze_flaky(nothing, path, tasks[1:]) == {} and nothing == {}  # no field when nothing applies
    append_jsonl(path, {"task_id": t2, "test_id": 3})
    with pytest.raises(RunError, match=r"flaky\.jsonl: line 7: field 'test_id' must be a string"):
        read_flaky(path, tasks)
    assert frozen_flaky({}) == {} and frozen_flaky({"flaky_p2p": {t1: ["t::b"]}}) == {t1: ["t::b"]}
    with pytest.raises(RunError, match="field 'flaky_p2p'"):
        frozen_flaky({"flaky_p2p": ["t::b"]})
    assert count_flaky({t1: ["t::b", "t::c"]}) == 2
    assert flaky_line(2) == "2 PASS_TO_PASS ids left out as flaky (found when grading oracle)"


def test_a_run_freezes_the_ids_it_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = HomefieldDir(root)
    tasks = [_task(1, ["t::b", "t::c"]), _task(2, ["t::d"])]
    write_jsonl_atomic(home.tasks, [t.to_dict() for t in tasks])
    agents = [OracleAgent(name="oracle", spec="oracle")]
    s = Settings(root=root, agents=["oracle"], attempts=1, run_id="plain")
    session = RunSession.start(s, select_tasks(s), agents, now="2026-03-01T10:00:00+00:00")
    assert session.flaky == {} and "flaky_p2p" not in read_meta(session.run_dir)  # nothing found: meta as before
    append_jsonl(home.flaky, _line(tasks[0].id, "t::b"))
    s = Settings(root=root, agents=["oracle"], attempts=1, run_id="r")
    session = RunSession.start(s, select_tasks(s), agents, now="2026-03-01T10:00:00+00:00")
    frozen = {tasks[0].id: ["t::b"]}
    assert read_meta(session.run_dir)["flaky_p2p"] == frozen
    assert session.attempt_spec(session.tasks[0], agents[0], 1).flaky_p2p == ["t::b"]
    assert session.attempt_spec(session.tasks[1], agents[0], 1).flaky_p2p == []
    worker = RunSession.join(s, session.tasks, agents, json.loads(json.dumps(session.workerinput())))
    assert worker.flaky == frozen
    # ids found later do not change a resumed run
    append_jsonl(home.flaky, _line(tasks[1].id, "t::d"))
    resumed = RunSession.start(dataclasses.replace(s, resume=True), select_tasks(s), agents,
                               now="2026-03-02T10:00:00+00:00")
    assert resumed.flaky == frozen and read_meta(resumed.run_dir)["flaky_p2p"] == frozen


def test_shards_frozen_ids_merge_into_their_union() -> None:
    metas = [{"flaky_p2p": {"t1": ["a", "b"]}}, {}, {"flaky_p2p": {"t1": ["b", "c"], "t2": ["d"]}}]
    assert merged_flaky(metas) == {"t1": ["a", "b", "c"], "t2": ["d"]}
    assert merged_flaky([{}, {"flaky_p2p": None}]) == {}
    with pytest.raises(RunError, match="flaky_p2p"):
        merged_flaky([{"flaky_p2p": {"t1": "a"}}])


@pytest.mark.slow
def test_verify_records_what_the_oracle_fails_and_runs_leave_it_out(tmp_path: Path) -> None:
    """A task whose PASS_TO_PASS holds an id the reference fix fails at grading (as a flaky test does
    when it fails): ``homefield verify`` records and prints it, a later run leaves it out for every agent."""
    fx = build(tmp_path / "fixture")
    ghost = "tests/test_sub.py::test_only_sometimes"
    task = task_for(fx)
    task = dataclasses.replace(task, PASS_TO_PASS=[*task.PASS_TO_PASS, ghost])
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--no-local", str(fx.root), str(repo)], check=True, capture_output=True)
    home = HomefieldDir(repo)
    home.ensure()
    home.tasks.write_text(json.dumps(task.to_dict()) + "\n")
    proc = homefield(repo, "verify", "-n", "0", "--sandbox", "none")
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:] + proc.stderr[-2000:]  # the task did not pass: said as before
    assert ("homefield verify: recorded 1 PASS_TO_PASS id(s) as flaky in .homefield/flaky.jsonl (oracle failed "
            "them; later runs leave them out of every agent's regression check):") in out, out[-3000:]
    assert f"  {task.id}  {ghost}" in out
    assert "homefield verify: 1 of 1 task no longer pass with the reference fix:" in out
    lines = list(read_jsonl(home.flaky))
    assert [(r["task_id"], r["test_id"], r["agent"]) for r in lines] == [(task.id, ghost, "oracle")]
    assert lines[0]["run_id"].startswith("verify-")
    # a run: the id is left out for every agent, the oracle solves, nothing new is recorded
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "-n", "0", "--sandbox", "none",
                     "--run-id", "r1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert ("homefield: 1 PASS_TO_PASS id left out as flaky (found when grading oracle), "
            "from .homefield/flaky.jsonl") in proc.stdout
    run = home.run_dir("r1")
    assert read_meta(run)["flaky_p2p"] == {task.id: [ghost]}
    outcomes = {r["agent"]: r["outcome"] for r in read_jsonl(run / "results.jsonl")}
    assert outcomes == {"oracle": "solved", "noop": "empty_patch"}
    notes = json.loads((run / "report.json").read_text())["notes"]
    assert f"1 PASS_TO_PASS id left out as flaky (found when grading oracle; .homefield/flaky.jsonl), for every " \
           f"agent: {task.id} {ghost}." in notes
    assert "1 PASS\\_TO\\_PASS id left out as flaky" in (run / "report.md").read_text()
    assert len(list(read_jsonl(home.flaky))) == 1
    # and verify again: the oracle solves it now, nothing is recorded
    proc = homefield(repo, "verify", "-n", "0", "--sandbox", "none")
    assert proc.returncode == 0 and "oracle solves the 1 task" in proc.stdout, proc.stdout[-3000:]
    assert "recorded" not in proc.stdout and len(list(read_jsonl(home.flaky))) == 1
