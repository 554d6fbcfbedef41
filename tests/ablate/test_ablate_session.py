"""The ablation session without pytest: order, folders, resume checks, phases, stop reasons."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from helpers.ablate_repo import N_TASKS, RULES

from pytest_homefield.ablate.ablate_plan import build_plan
from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.ablate.session import PHASE_DONE, PHASE_RULES, PHASE_SLIM, AblationSession, interleaved
from pytest_homefield.agents.registry import build_agents
from pytest_homefield.errors import RunError
from pytest_homefield.records import load_tasks
from pytest_homefield.run.attempt import run_attempt
from pytest_homefield.settings import resolve_settings
from pytest_homefield.store import append_jsonl, read_jsonl


def test_interleaved_order_runs_every_variant_of_a_task_together() -> None:
    variants, tasks, agents = ["base", "rule-1", "rule-2"], ["t1", "t2", "t3", "t4"], ["a", "b"]
    order = interleaved(variants, tasks, agents, 2, seed=7)
    assert order == interleaved(variants, tasks, agents, 2, seed=7)
    assert order != interleaved(variants, tasks, agents, 2, seed=8)
    assert len(order) == len(set(order)) == 3 * 4 * 2 * 2
    block = len(variants) * len(agents)
    for i in range(0, len(order), block):  # one task and one attempt round per block, variants mixed
        chunk = order[i:i + block]
        assert len({(k[1], k[3]) for k in chunk}) == 1 and {k[0] for k in chunk} == set(variants)
    assert [k[3] for k in order] == sorted(k[3] for k in order)  # round 1 before round 2
    assert [k[0] for k in order[:block]] != sorted(k[0] for k in order[:block]) or \
        [k[0] for k in order[block:2 * block]] != sorted(k[0] for k in order[block:2 * block])


def _session(repo: Path, *, resume: bool = False, attempts: int = 1, text: str = RULES,
             budget: float | None = None, agents: Sequence[str] = ("oracle",), max_retries: int = 2) -> AblationSession:
    settings = resolve_settings(repo, {"agent": list(agents), "attempts": attempts, "run_id": "s1", "resume": resume,
                                       "yes": True, "budget": budget, "max_retries": max_retries})
    tasks = load_tasks(settings.tasks_path)
    built = build_agents(settings.agents, settings)
    rules = split_rules(text)
    plan = build_plan(settings, "CLAUDE.md", rules, len(tasks), [(a, a, "CLAUDE.md") for a in agents], 1)
    return AblationSession.start(settings, tasks, built, rules=rules, rules_file="CLAUDE.md",
                                 rules_paths={a: "CLAUDE.md" for a in agents}, plan=plan, new_id="unused")


def _record(s: AblationSession, key: tuple[str, str, str, int], outcome: str, cost: float = 0.0) -> None:
    v, t, a, n = key
    append_jsonl(s.results_path, {"run_id": s.ablate_id, "variant": v, "task_id": t, "agent": a, "attempt": n,
                                  "outcome": outcome, "cost_usd": cost, "finished_at": "2099-01-01T00:00:00+00:00"})


def test_start_writes_the_folder_and_phases_follow_the_results(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    s = _session(repo)
    d = repo / ".homefield" / "ablate" / "s1"
    meta = json.loads((d / "meta.json").read_text())
    plan = json.loads((d / "plan.json").read_text())
    assert meta["kind"] == "ablate" and meta["rules_file"] == "CLAUDE.md" and meta["seed"] == s.seed
    assert [v["name"] for v in plan["variants"]] == ["base", "rule-1", "rule-2", "rule-3"]
    assert plan["agents"] == [{"name": "oracle", "spec": "oracle", "rules_path": "CLAUDE.md"}]
    assert (d / "variants" / "base" / "CLAUDE.md").read_text() == RULES
    assert s.phase == PHASE_RULES and len(s.pending()) == N_TASKS * 4
    # every base/rule attempt scored: rule 1 matters, rules 2 and 3 do not
    for key in s.pending():
        _record(s, key, "empty_patch" if key[0] == "rule-1" else "solved")
    doc = s.finish()
    assert s.phase == PHASE_SLIM and json.loads((d / "meta.json").read_text())["next_phase"] == "slim"
    assert (d / "suggested-CLAUDE.md").read_text().count("- ") == 1
    assert doc["agents"][0]["rules"][0]["verdict"] == "load-bearing"
    s2 = _session(repo, resume=True)
    assert s2.phase == PHASE_SLIM and {k[0] for k in s2.pending()} == {"slim"} and len(s2.pending()) == N_TASKS
    assert [v["name"] for v in json.loads((d / "plan.json").read_text())["variants"]][-1] == "slim"
    for key in s2.pending():
        _record(s2, key, "solved")
    s2.finish()
    s3 = _session(repo, resume=True)
    assert s3.phase == PHASE_DONE and s3.pending() == []


def test_resume_refuses_a_changed_rules_file_or_attempts(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    _session(repo)
    with pytest.raises(RunError, match="changed since ablation s1"):
        _session(repo, resume=True, text=RULES + "- a new rule\n")
    with pytest.raises(RunError, match=r"has 1 attempt; flags give 2"):
        _session(repo, resume=True, attempts=2)
    with pytest.raises(RunError, match="already exists"):
        _session(repo)


def test_an_unscored_attempt_is_run_again_and_the_budget_stops_new_ones(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    s = _session(repo, budget=1.0)
    first, second = s.pending()[:2]
    _record(s, first, "infra")
    _record(s, second, "solved", cost=0.4)
    assert s.stop_reason("oracle") is None
    s2 = _session(repo, resume=True, budget=1.0)
    assert first in s2.pending() and second not in s2.pending()
    _record(s2, first, "solved", cost=0.7)
    assert s2.stop_reason("oracle") == "budget spent: oracle: 1.10 of 1.00 USD"
    _record(s2, s2.pending()[1], "rate_limited")
    assert (s2.stop_reason("oracle") or "").startswith("rate limited")
    assert len(list(read_jsonl(s2.results_path))) == 4


def test_one_agents_claims_stop_only_that_agent_and_its_retries_are_capped(ablate_repo: Path, tmp_path: Path) -> None:
    """atk11 A1, measured on main: in an ablation one agent's rate-limit claim (or a reported cost spending
    the budget) stopped every agent (the honest one: "over 0 tasks"), and ``--max-retries`` capped nothing:
    every ``--resume`` retried the claimed attempt and stopped again."""
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    s = _session(repo, budget=2.0, agents=("noop", "oracle"))
    claimed, spent = [k for k in s.pending() if k[2] == "noop"][:2]
    _record(s, spent, "empty_patch", cost=5.0)
    assert s.stop_reason("noop") == "budget spent: noop: 5.00 of 1.00 USD (its share of 2.00)"
    assert s.stop_reason("oracle") is None
    _record(s, claimed, "rate_limited")
    assert (s.stop_reason("noop") or "").startswith("rate limited") and s.stop_reason("oracle") is None
    for tries in (2, 3):  # --max-retries 1: one retry, then the claimed attempt is not run again
        s2 = _session(repo, resume=True, budget=2.0, agents=("noop", "oracle"), max_retries=1)
        assert (claimed in s2.pending()) == (tries == 2)
        _record(s2, claimed, "rate_limited")
    v, t, a, n = claimed  # the last session started with two tries recorded: its claim was scored, in any worker
    worker = AblationSession.join(s2.settings, s2.tasks, s2.agents, json.loads(json.dumps(s2.workerinput())),
                                  rules=s2.rules)
    assert worker.runner.tries == s2.runner.tries == {(t, a, n, v): 2}
    owed = (len(s2.pending()) + 2) // 2  # all but the scored and the capped attempt are pending
    assert {t.agent: t.incomplete for t in s2.tables()} == {"noop": f"incomplete: 1 of {owed} scored",
                                                             "oracle": f"incomplete: 0 of {owed} scored"}


def test_a_slimmer_file_equal_to_one_variant_reuses_its_results(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    s = _session(repo)
    for key in s.pending():  # rules 1 and 2 matter, only rule 3 can go
        _record(s, key, "empty_patch" if key[0] in ("rule-1", "rule-2") else "solved")
    doc = s.finish()
    assert s.phase == PHASE_DONE and s.slim_alias == "rule-3"
    assert doc["agents"][0]["slim"]["comparison"] is not None


@pytest.mark.usefixtures("cli_spelling")
def test_resume_validates_results_plan_and_the_task_selection(ablate_repo: Path, tmp_path: Path) -> None:
    """Every record read is validated on resume (issue 21): one line naming file, line and field, and
    nothing written (``meta.json`` keeps its bytes)."""
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    s = _session(repo)
    d = repo / ".homefield" / "ablate" / "s1"
    meta = (d / "meta.json").read_bytes()
    good = {"run_id": "s1", "variant": "base", "task_id": s.tasks[0].id, "agent": "oracle", "attempt": 1,
            "outcome": "solved"}
    results = d / "results.jsonl"
    results.write_text(json.dumps(good) + "\n" + json.dumps({**good, "attempt": "1"}) + "\n")
    with pytest.raises(RunError) as err:
        _session(repo, resume=True)
    assert str(err.value) == f"{results}: line 2: field 'attempt' must be an integer, got string '1'"
    assert (d / "meta.json").read_bytes() == meta
    results.write_text(json.dumps(good) + "\n")
    plan = (d / "plan.json").read_text()
    (d / "plan.json").write_text(plan[: len(plan) // 2])
    with pytest.raises(RunError, match=r"plan\.json: not valid JSON \("):
        _session(repo, resume=True)
    (d / "plan.json").write_text(plan)
    settings = resolve_settings(repo, {"agent": ["oracle"], "attempts": 1, "run_id": "s1", "resume": True,
                                       "yes": True})
    fewer = load_tasks(settings.tasks_path)[:1]
    rules = split_rules(RULES)
    with pytest.raises(RunError, match=r"ran \d+ tasks; these flags select 1 \(a changed --max-tasks"):
        AblationSession.start(settings, fewer, build_agents(settings.agents, settings), rules=rules,
                              rules_file="CLAUDE.md", rules_paths={"oracle": "CLAUDE.md"},
                              plan=build_plan(settings, "CLAUDE.md", rules, 1, [("oracle", "oracle", "CLAUDE.md")], 1),
                              new_id="unused")
    assert _session(repo, resume=True).done == {("base", s.tasks[0].id, "oracle", 1)}


def test_flaky_ids_are_frozen_at_the_start_and_reach_every_attempt(ablate_repo: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``.homefield/flaky.jsonl`` (ids the oracle failed while solving) is read when the ablation starts,
    frozen in its ``meta.json`` and handed to every attempt's grading, as a run does; a resume keeps the
    frozen list, and xdist workers get it from the controller."""
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    tasks_path = repo / ".homefield" / "tasks.jsonl"
    records = list(read_jsonl(tasks_path))
    tid, p2p = records[0]["id"], "tests/test_f0.py::test_kept"
    records[0]["PASS_TO_PASS"] = [p2p, "tests/test_f0.py::test_later"]
    tasks_path.write_text("".join(json.dumps(r) + "\n" for r in records))
    flaky = repo / ".homefield" / "flaky.jsonl"
    append_jsonl(flaky, {"schema_version": 1, "task_id": tid, "test_id": p2p})
    append_jsonl(flaky, {"schema_version": 1, "task_id": tid, "test_id": "not/a/pass_to_pass.py::id"})
    s = _session(repo)
    assert s.flaky == {tid: [p2p]}
    assert json.loads((s.ablate_dir / "meta.json").read_text())["flaky_p2p"] == {tid: [p2p]}
    specs = []  # substituted before the session's runner is made (workerinput makes it: its pack, ops41)
    monkeypatch.setattr("pytest_homefield.ablate.session.run_attempt", lambda spec, cache: specs.append(spec) or
                        run_attempt(spec, cache))
    worker = AblationSession.join(s.settings, s.tasks, s.agents, s.workerinput(), rules=s.rules)
    assert worker.flaky == {tid: [p2p]}
    s.run(("base", tid, "oracle", 1))
    assert specs[0].flaky_p2p == [p2p]
    # found later: not in the frozen list of the ablation already under way
    append_jsonl(flaky, {"schema_version": 1, "task_id": tid, "test_id": "tests/test_f0.py::test_later"})
    assert _session(repo, resume=True).flaky == {tid: [p2p]}
