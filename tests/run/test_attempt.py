"""run/attempt.py without pytest around it: the snapshot cache, the tree digest, one attempt from
agent to result record (an unscored outcome read from the agent's own output is its claim), and the
run's spend / rate-limit bookkeeping over ``results.jsonl``."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, GOOD_CALC, Fixture
from helpers.claims import DECLARE_RATE_LIMIT
from helpers.fakeapi.openai_chat import openai_chat_server

from pytest_homefield.agents.base import AgentContext, AgentResult, AgentSettings
from pytest_homefield.agents.cmd_agent import CommandAgent
from pytest_homefield.agents.openai_compat import OpenAIAgent
from pytest_homefield.agents.reference import OracleAgent
from pytest_homefield.errors import SnapshotError
from pytest_homefield.records import Result, Task
from pytest_homefield.run.attempt import (
    AttemptSpec,
    SnapshotCache,
    latest_results,
    run_attempt,
    tree_digest,
)
from pytest_homefield.run.retries import cap_retries
from pytest_homefield.run.runner import RunLimits
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.store import append_jsonl

CALC = "src/calc/__init__.py"


class FnAgent:
    """An agent whose ``run`` is a Python function of the context (a real object of the protocol)."""

    simulated = False
    hinted = False

    def __init__(self, fn: Callable[[AgentContext], AgentResult], name: str = "fn") -> None:
        self.name, self.spec, self.fn = name, f"test:{name}", fn

    def version(self) -> str | None:
        return "fn 1"

    def run(self, ctx: AgentContext) -> AgentResult:
        return self.fn(ctx)


def _spec(task: Task, agent: object, tmp_path: Path, **kw: object) -> AttemptSpec:
    return AttemptSpec(task=task, agent=agent, attempt=1, run_id="r1", run_dir=tmp_path / "run",  # type: ignore[arg-type]
                       timeout_s=60, run_timeout_s=120, **kw)  # type: ignore[arg-type]


# -- the snapshot cache ---------------------------------------------------------------------------

def test_pristine_is_built_once_and_workspaces_are_fresh_copies(cache: SnapshotCache, task: Task) -> None:
    snap = cache.pristine(task)
    assert cache.pristine(task) == snap
    assert (snap / CALC).read_text() == CALC_1 and (snap / ".git").is_dir()
    assert task.id not in str(snap) and task.commit[:7] not in str(snap)
    w1, w2 = cache.workspace(task), cache.workspace(task)
    assert w1 != w2 and (w1 / CALC).read_text() == CALC_1
    (w1 / CALC).write_text("changed")
    assert (w2 / CALC).read_text() == CALC_1 and (snap / CALC).read_text() == CALC_1


def test_a_tampered_pristine_is_rebuilt(cache: SnapshotCache, task: Task) -> None:
    snap = cache.pristine(task)
    assert cache.checked_pristine(task) == (snap, False)
    (snap / CALC).write_text(GOOD_CALC)  # an agent with a shell wrote beside its workspace
    rebuilt, changed = cache.checked_pristine(task)
    assert changed and rebuilt != snap
    assert (rebuilt / CALC).read_text() == CALC_1


def test_setup_cmd_runs_in_the_snapshot_and_its_failure_names_the_last_line(fx: Fixture, task: Task) -> None:
    ok = SnapshotCache(repo=fx.root, setup=lambda t: "echo built > SETUP_DONE")
    try:
        assert (ok.pristine(task) / "SETUP_DONE").read_text() == "built\n"
    finally:
        ok.close()
    bad = SnapshotCache(repo=fx.root, setup=lambda t: "echo first; echo 'no such tool' >&2; exit 4")
    try:
        with pytest.raises(SnapshotError, match=r"^setup_cmd failed \(exit 4, timed out: False\): no such tool$"):
            bad.pristine(task)
    finally:
        bad.close()


def test_unknown_parent_is_a_snapshot_error(cache: SnapshotCache, task: Task) -> None:
    with pytest.raises(SnapshotError, match="cannot extract the parent tree"):
        cache.pristine(dataclasses.replace(task, id="000000000000", parent="0" * 40))


def test_close_removes_every_snapshot(fx: Fixture, task: Task) -> None:
    c = SnapshotCache(repo=fx.root)
    snap = c.pristine(task)
    c.close()
    assert not snap.exists() and not c.root.exists()


def test_tree_digest_sees_content_mode_links_and_empty_folders(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    d0 = tree_digest(tmp_path)
    assert tree_digest(tmp_path) == d0
    steps = [
        lambda: (tmp_path / "a.txt").write_text("y"),
        lambda: os.chmod(tmp_path / "a.txt", 0o755),
        lambda: os.symlink("a.txt", tmp_path / "l"),
        lambda: (tmp_path / "empty").mkdir(),
        lambda: (tmp_path / ".git").mkdir() or (tmp_path / ".git" / "HEAD").write_text("ref"),
    ]
    seen = {d0}
    for step in steps:
        step()
        d = tree_digest(tmp_path)
        assert d not in seen
        seen.add(d)


# -- run_attempt ----------------------------------------------------------------------------------

def test_oracle_attempt_is_solved_and_recorded(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    spec = _spec(task, OracleAgent(name="oracle", spec="oracle"), tmp_path)
    r = run_attempt(spec, cache)
    assert isinstance(r, Result)
    assert (r.outcome, r.task_id, r.agent, r.attempt, r.variant) == ("solved", task.id, "oracle", 1, "base")
    assert r.run_id == "r1"
    assert r.agent_version is not None and r.wall_s is not None and r.test_s > 0
    assert r.started_at <= r.finished_at
    # ops46: the machine's load over its CPUs while it ran, what verify's estimate scales its seconds by
    from pytest_homefield.sandbox.proccap import machine_load
    load, cpus = machine_load()
    assert r.load_per_cpu is not None and abs(r.load_per_cpu - load / cpus) < 4.0, (r.load_per_cpu, load, cpus)
    assert Result.from_dict(r.to_dict()).load_per_cpu == r.load_per_cpu
    art = spec.artifacts
    assert art == tmp_path / "run" / "attempts" / task.id / "oracle" / "1"
    assert "+def sub(a, b):" in (art / "diff.patch").read_text()
    assert (art / "tests.log").exists()


def test_the_agent_sees_the_prompt_env_and_limits(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def look(ctx: AgentContext) -> AgentResult:
        seen.update(prompt=ctx.prompt, cwd=ctx.workspace, env=ctx.env, timeout=ctx.timeout_s,
                    shell=ctx.allow_shell, hints=ctx.hint_files, seed=ctx.seed)
        return AgentResult(cost_usd=0.25, input_tokens=10, output_tokens=5, turns=2, model="m")

    r = run_attempt(_spec(task, FnAgent(look), tmp_path, allow_shell=True, budget_usd=1.0), cache)
    assert r.outcome == "empty_patch"
    assert (r.cost_usd, r.input_tokens, r.output_tokens, r.turns, r.model) == (0.25, 10, 5, 2, "m")
    assert task.prompt.strip() in str(seen["prompt"]) and "You may run shell commands" in str(seen["prompt"])
    assert seen["timeout"] == 60 and seen["shell"] is True and seen["hints"] == []
    env = seen["env"]
    assert isinstance(env, dict)
    assert not any(task.id in v or task.commit in v or task.parent in v for v in env.values())
    assert not Path(str(seen["cwd"])).exists()  # the workspace is removed after grading


def test_an_agent_that_raises_is_infra(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    def boom(ctx: AgentContext) -> AgentResult:
        raise RuntimeError("adapter bug\nsecond line")

    spec = _spec(task, FnAgent(boom), tmp_path)
    r = run_attempt(spec, cache)
    assert (r.outcome, r.error) == ("infra", "agent raised: RuntimeError: adapter bug")
    assert "Traceback" in (spec.artifacts / "agent.err").read_text()


def test_a_terminal_agent_outcome_is_kept_with_its_diff(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    def slow(ctx: AgentContext) -> AgentResult:
        (ctx.workspace / CALC).write_text(GOOD_CALC)
        return AgentResult(outcome="timeout", error="stopped after 60 s")

    spec = _spec(task, FnAgent(slow), tmp_path)
    r = run_attempt(spec, cache)
    assert (r.outcome, r.error, r.test_s) == ("timeout", "stopped after 60 s", 0.0)
    assert "+def sub(a, b):" in (spec.artifacts / "diff.patch").read_text()  # not graded, kept for audit
    assert not (spec.artifacts / "tests.log").exists()


def test_writing_into_the_pristine_copy_is_flagged_and_graded_clean(cache: SnapshotCache, task: Task,
                                                                     tmp_path: Path) -> None:
    def tamper(ctx: AgentContext) -> AgentResult:
        (cache.pristine(task) / "tests" / "test_add.py").write_text("")  # beside the workspace
        (ctx.workspace / CALC).write_text(GOOD_CALC)
        return AgentResult()

    r = run_attempt(_spec(task, FnAgent(tamper), tmp_path), cache)
    assert r.outcome == "solved" and r.suspicious
    assert r.error == "the pristine snapshot changed during the attempt (rebuilt for grading)"


def test_a_snapshot_failure_is_infra(fx: Fixture, task: Task, tmp_path: Path) -> None:
    c = SnapshotCache(repo=fx.root, setup=lambda t: "exit 3")
    try:
        r = run_attempt(_spec(task, OracleAgent(name="oracle", spec="oracle"), tmp_path), c)
    finally:
        c.close()
    assert r.outcome == "infra" and not r.claimed  # homefield's own: never scored, also on the last try
    assert cap_retries(r, {}, 0) == r
    assert r.error is not None and r.error.startswith("SnapshotError: setup_cmd failed (exit 3")


#: The agent's own output saying the provider failed: a built-in recipe's helper (aider's reads the
#: client's stdout, which holds the model's reply); a plain ``cmd:`` agent's rate limit is helpers.claims'.
RECIPE_INFRA = """echo '{"outcome": "infra", "error": "litellm.InternalServerError: OpenAIException (500)"}'"""


@pytest.mark.parametrize("kind", ["openai-server-500", "recipe-infra", "cmd-rate-limited"])
def test_an_unscored_outcome_from_the_agent_is_a_claim(cache: SnapshotCache, task: Task, tmp_path: Path,
                                                       kind: str) -> None:
    """atk9 F5, measured on main: an ``openai:`` server answering HTTP 500 (the server is the model under
    test) and a recipe's ``{"outcome": "infra"}`` (read from the model's own text) were ``infra``, never
    scored after ``--max-retries``. Now each is the agent's claim: unscored while retries are left, then
    ``agent_error`` (scored), as a ``cmd:`` agent's declared rate limit always was."""
    none = SandboxChoice("none", "shared")
    if kind == "openai-server-500":
        with openai_chat_server([{"error": {"status": 500, "message": "Internal Server Error"}}]) as server:
            agent: object = OpenAIAgent(name="o", spec="openai:m", model="m",
                                        settings=AgentSettings(base_url=server.url + "/v1"))
            r = run_attempt(_spec(task, agent, tmp_path, sandbox=none), cache)
    else:
        command = RECIPE_INFRA if kind == "recipe-infra" else DECLARE_RATE_LIMIT
        agent = CommandAgent(name="c", spec="cmd:x", command=command, settings=AgentSettings(),
                             trust_infra=kind == "recipe-infra")
        r = run_attempt(_spec(task, agent, tmp_path, sandbox=none), cache)
    assert r.outcome == ("rate_limited" if kind == "cmd-rate-limited" else "infra") and not r.scored, r
    last = cap_retries(r, {r.key: 2}, 2)
    assert last.outcome == "agent_error" and last.scored, last
    assert r.claimed and not last.claimed, r
    assert cap_retries(r, {r.key: 1}, 2) == r  # a retry is left: unscored
    what = "rate limited" if kind == "cmd-rate-limited" else "reported infra"
    assert (last.error or "").startswith(f"{what} 3 times (--max-retries 2): "), last.error


def test_a_reported_cost_that_is_not_a_number_is_dropped(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    """atk9 F6, measured on main: a usage line ``{"cost_usd": Infinity}`` was recorded as it was (and spent
    the whole ``--budget``); results.jsonl then held ``Infinity``, which is not JSON."""
    agent = CommandAgent(name="c", spec="cmd:x", settings=AgentSettings(), command=(
        """echo '{"cost_usd": Infinity, "input_tokens": 1e400, "output_tokens": 12, "turns": NaN}'"""))
    r = run_attempt(_spec(task, agent, tmp_path, sandbox=SandboxChoice("none", "shared")), cache)
    assert (r.outcome, r.cost_usd, r.input_tokens, r.output_tokens, r.turns) == ("empty_patch", None, None, 12, None)
    path = tmp_path / "results.jsonl"
    append_jsonl(path, r.to_dict())
    assert "Infinity" not in path.read_text() and "NaN" not in path.read_text()


def test_a_reported_cost_is_believed_only_up_to_the_per_attempt_cap(cache: SnapshotCache, task: Task,
                                                                     tmp_path: Path) -> None:
    """atk11 G2, measured on main: a usage line ``{"cost_usd": 1e300}`` (finite) was recorded as it was and
    spent the agent's share of ``--budget`` at the task it chose: its later attempts never ran."""
    agent = CommandAgent(name="c", spec="cmd:x", settings=AgentSettings(), command="""echo '{"cost_usd": 1e300}'""")
    r = run_attempt(_spec(task, agent, tmp_path, sandbox=SandboxChoice("none", "shared")), cache)
    assert (r.outcome, r.cost_usd, r.scored) == ("agent_error", 1000.0, True), r
    assert r.error == "reported cost 1e+300 USD is over the per-attempt cap of 1000 USD", r.error
    honest = CommandAgent(name="c", spec="cmd:x", settings=AgentSettings(), command="""echo '{"cost_usd": 999.5}'""")
    r = run_attempt(_spec(task, honest, tmp_path, sandbox=SandboxChoice("none", "shared")), cache)
    assert (r.outcome, r.cost_usd) == ("empty_patch", 999.5), r


def test_every_agents_numbers_are_held_to_what_a_record_may_hold(cache: SnapshotCache, task: Task,
                                                                   tmp_path: Path) -> None:
    """xatk31: only the usage-line readers checked a number; an adapter that made its own (``openai:`` priced a
    server's negative count at -2000 USD, claude summed per-model counts past 2^63-1, an agent of a conftest's
    ``pytest_homefield_agents`` hook returns what it likes) reached ``results.jsonl`` as it was. Where the record
    is made, every agent's cost is a finite number >= 0 and each count an integer from 0 to 2^63-1, else null."""
    said = AgentResult(cost_usd=-2000.0, input_tokens=-1, output_tokens=2**64, cache_read_tokens=7,
                       cache_write_tokens=True, turns=-3)  # type: ignore[arg-type]
    r = run_attempt(_spec(task, FnAgent(lambda ctx: said), tmp_path, sandbox=SandboxChoice("none", "shared")), cache)
    assert (r.outcome, r.cost_usd, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens,
            r.turns) == ("empty_patch", None, None, None, 7, None, None), r


def test_a_retried_attempt_starts_with_clean_artifacts(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    spec = _spec(task, FnAgent(lambda ctx: AgentResult()), tmp_path)
    spec.artifacts.mkdir(parents=True)
    (spec.artifacts / "stale.txt").write_text("from the earlier try")
    run_attempt(spec, cache)
    assert not (spec.artifacts / "stale.txt").exists()


# -- results.jsonl bookkeeping --------------------------------------------------------------------

def test_latest_results_spent_and_rate_limits(tmp_path: Path) -> None:
    def limits(since: str) -> RunLimits:  # the run's spend and rate-limit bookkeeping (run/session.py)
        return RunLimits(path, budget_usd=None, since_iso=since)

    def rate_limit_since(since: str) -> str | None:
        reason = limits(since).stop_reason("a")
        return reason.removeprefix("rate limited: ") if reason else None

    path = tmp_path / "results.jsonl"
    empty = limits("2026-01-01")
    empty.refresh()
    assert empty.spent_usd("a") == 0.0 and rate_limit_since("2026-01-01") is None
    rows = [
        {"task_id": "t", "agent": "a", "attempt": 1, "cost_usd": 0.5, "outcome": "rate_limited",
         "finished_at": "2026-01-01T10:00:00+00:00", "error": "429 from the provider"},
        {"task_id": "t", "agent": "a", "attempt": 1, "cost_usd": 0.25, "outcome": "solved",
         "finished_at": "2026-01-01T11:00:00+00:00"},  # the retry's record replaces the first as the result
        {"task_id": "t", "agent": "b", "attempt": 1, "cost_usd": None, "outcome": "solved"},
        {"task_id": "t", "agent": "a", "attempt": 1, "variant": "v2", "cost_usd": 1.0, "outcome": "rate_limited",
         "finished_at": "2026-01-02T09:00:00+00:00"},
    ]
    for row in rows:
        append_jsonl(path, row)
    latest = latest_results(rows)
    assert set(latest) == {("t", "a", 1, "base"), ("t", "b", 1, "base"), ("t", "a", 1, "v2")}
    assert latest[("t", "a", 1, "base")]["outcome"] == "solved"
    spent = limits("2026-01-01")
    spent.refresh()
    assert spent.spent_usd("a") == 1.75 and spent.spent_usd("b") == 0.0  # but both tries spent (xatk31)
    assert rate_limit_since("2026-01-01T09:00:00+00:00") == "429 from the provider"
    assert rate_limit_since("2026-01-01T12:00:00+00:00") == "rate limited"
    assert rate_limit_since("2026-01-03") is None


def test_every_try_of_a_retried_attempt_spends_the_budget(tmp_path: Path) -> None:
    """xatk31: the budget counted the last record of each attempt only, so a try that spent its cost and then
    claimed a rate limit (a recipe's helper reads it from the client's output, which holds the model's reply)
    spent nothing once ``--resume`` tried it again: four tries of 9 USD each under a 10 USD share, then a cheap
    one, left the agent at 0.01 USD spent, free to go on. Each line is a try that ran and spent; the same line
    counted twice (the worker adds its result, then reads it back from the file) is one."""
    path = tmp_path / "results.jsonl"
    tries = [{"task_id": "t", "agent": "a", "attempt": 1, "cost_usd": 9.0, "outcome": "rate_limited",
              "started_at": f"2026-01-0{day}T10:00:00+00:00", "finished_at": f"2026-01-0{day}T10:05:00+00:00"}
             for day in (1, 2, 3, 4)]
    tries.append({"task_id": "t", "agent": "a", "attempt": 1, "cost_usd": 0.01, "outcome": "agent_error",
                  "started_at": "2026-01-05T10:00:00+00:00", "finished_at": "2026-01-05T10:05:00+00:00"})
    for row in tries:
        append_jsonl(path, row)
    limits = RunLimits(path, budget_usd=20.0, since_iso="2026-01-06", agents=2)
    limits.add(tries[-1])  # the worker's own count of its last result, before it reads the file
    limits.refresh()  # which holds that result too
    assert limits.spent_usd("a") == pytest.approx(36.01)
    assert limits.stop_reason("a") == "budget spent: a: 36.01 of 10.00 USD (its share of 20.00)"


@pytest.mark.slow
def test_the_hosts_own_seconds_are_recorded(cache: SnapshotCache, task: Task, tmp_path: Path) -> None:
    """host30 (host29's "Left"): an agent leaving 100,000 empty files was scored after 91.7 s of which its
    ``wall_s`` was 1.8 s and ``test_s`` 2.7 s, and no figure showed the rest. ``host_s`` is that rest: the
    attempt's seconds less the agent's, the test runs' and the waits. An agent leaving 600 empty files (and
    the fix) gets a ``host_s`` that, with the other three, adds up to the attempt's time measured from outside."""
    def flood(ctx: AgentContext) -> AgentResult:
        (ctx.workspace / CALC).write_text(GOOD_CALC)
        for i in range(600):
            folder = ctx.workspace / "flood" / f"d{i // 200}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i}").touch()
        return AgentResult()

    started = time.monotonic()
    r = run_attempt(_spec(task, FnAgent(flood), tmp_path, sandbox=SandboxChoice("none", "shared")), cache)
    elapsed = time.monotonic() - started
    assert r.outcome in ("solved", "tests_failed") and r.test_s > 0, r
    assert r.host_s > 0, r
    assert abs(r.wall_s + r.test_s + r.wait_s + r.host_s - elapsed) < 0.25, (r, elapsed)
    assert Result.from_dict(r.to_dict()).host_s == r.host_s
