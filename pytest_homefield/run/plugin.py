"""``--homefield``: one pytest item per task × agent × attempt (docs/contracts.md §4, §5, §8).

The controller picks the run id, writes ``meta.json`` and freezes the set of finished attempts
before workers start; every process then collects the same items from ``.homefield/tasks.jsonl``.
Each item runs one attempt in :meth:`RunItem.setup` (snapshot, agent, grading) and appends its
result line. solved → passed; scored, not solved → xfailed shown as ``UNSOLVED``; infra → error;
rate limited or budget spent → skipped.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.registry import AgentSpecError, agent_settings, build_agents
from pytest_homefield.collect import ensure_homefield_dir, is_worker, redirect_collection
from pytest_homefield.mine.pipeline import new_id
from pytest_homefield.records import Result, Task, load_tasks, tasks_digest
from pytest_homefield.report import build_report, render_text, write_reports
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, rate_limit_since, run_attempt, spent_usd
from pytest_homefield.run.bookkeeping import (
    RunError,
    build_meta,
    check_resume,
    done_keys,
    pick_run_id,
    read_meta,
    write_meta,
)
from pytest_homefield.settings import Settings
from pytest_homefield.store import append_jsonl

UNSOLVED_PREFIX = "unsolved: "
BUDGET_SPENT = "budget spent"
RATE_LIMITED = "rate limited"


class RunPlugin:
    """The run mode's pytest hooks; one instance per process, created in ``pytest_configure``."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.results: list[dict[str, Any]] = []
        self.skip_reasons: set[str] = set()
        tasks_path = settings.tasks_path
        if not tasks_path.exists():
            raise pytest.UsageError(f"pytest-homefield: no tasks at {tasks_path}: run `homefield mine` first")
        tasks = load_tasks(tasks_path)
        config.hook.pytest_homefield_modify_tasks(tasks=tasks, config=config)
        if settings.exclude_memorized:
            raise pytest.UsageError("--homefield-exclude-memorized needs probe results; the probe is not built yet")
        if settings.run_max_tasks is not None:
            tasks = tasks[: settings.run_max_tasks]
        self.tasks: list[Task] = tasks
        hook_agents: dict[str, Any] = {}
        for contributed in config.hook.pytest_homefield_agents(config=config):
            items = contributed.values() if isinstance(contributed, dict) else contributed
            for agent in items:
                if agent.name in hook_agents:
                    raise pytest.UsageError(f"pytest-homefield: two hook agents are named {agent.name!r}")
                hook_agents[agent.name] = agent
        specs = list(settings.agents)
        if not specs:
            raise pytest.UsageError("pytest-homefield: no agent given: add --homefield-agent SPEC (e.g. oracle)")
        try:
            self.agents = build_agents(specs, settings, hook_agents)
        except AgentSpecError as exc:
            raise pytest.UsageError(str(exc)) from None
        digest = tasks_digest(tasks_path)
        if is_worker(config):
            wi = config.workerinput  # type: ignore[attr-defined]
            self.run_dir = Path(wi["homefield_run_dir"])
            self.run_id = self.run_dir.name
            self.done = {tuple(k) for k in wi["homefield_done"]}
            self.session_start = wi["homefield_session_start"]
            if wi["homefield_tasks_digest"] != digest:
                raise pytest.UsageError("pytest-homefield: tasks.jsonl changed while the run was starting")
        else:
            runs_root = ensure_homefield_dir(settings.root) / "runs"
            self.session_start = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
            try:
                self.run_id = pick_run_id(runs_root, run_id=settings.run_id, resume=settings.resume, new_id=new_id())
                self.run_dir = runs_root / self.run_id
                if settings.resume:
                    meta = read_meta(self.run_dir)
                    check_resume(meta, agents=self.agents, attempts=settings.attempts, tasks_digest=digest)
                    meta["cut_short"] = None
                    meta.setdefault("resumed_at", []).append(self.session_start)
                else:
                    meta = build_meta(run_id=self.run_id, agents=self.agents, attempts=settings.attempts,
                                      tasks_digest=digest, task_ids=[t.id for t in tasks],
                                      created_at=self.session_start, settings=settings)
            except RunError as exc:
                raise pytest.UsageError(str(exc)) from None
            self.run_dir.mkdir(parents=True, exist_ok=True)
            write_meta(self.run_dir, meta)
            self.done = done_keys(self.run_dir / "results.jsonl") if settings.resume else set()
        self.digest = digest
        self.results_path = self.run_dir / "results.jsonl"
        self._cache: SnapshotCache | None = None
        redirect_collection(config, tasks_path)

    def workerinput(self) -> dict[str, Any]:
        return {
            "homefield_run_dir": str(self.run_dir),
            "homefield_done": sorted(list(k) for k in self.done),
            "homefield_session_start": self.session_start,
            "homefield_tasks_digest": self.digest,
        }

    @property
    def cache(self) -> SnapshotCache:
        if self._cache is None:
            def setup(task: Task) -> str | None:
                cmd = self.config.hook.pytest_homefield_setup_command(task=task, config=self.config)
                return cmd if cmd is not None else (self.settings.setup_cmd or task.setup_cmd)

            self._cache = SnapshotCache(repo=self.settings.root, setup=setup, run_timeout_s=self.settings.run_timeout)
        return self._cache

    # -- collection ---------------------------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path.resolve() == self.settings.tasks_path.resolve():
            return TasksFile.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        n = len(self.tasks) * len(self.agents) * self.settings.attempts
        lines = [
            f"homefield run {self.run_id}: {len(self.tasks)} tasks × {len(self.agents)} agents × "
            f"{self.settings.attempts} attempts = {n} ({len(self.done)} already finished)",
            f"homefield agents: {', '.join(f'{a.name} ({a.spec})' for a in self.agents)}",
            f"homefield results: {self.results_path.relative_to(self.settings.root)}",
        ]
        if self.settings.allow_shell:
            lines.append("homefield: agents may run shell commands (--homefield-allow-shell)")
        return lines

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        if "homefield" not in report.keywords:
            return None
        if report.when == "call" and hasattr(report, "wasxfail") and report.skipped:
            return "unsolved", "u", ("UNSOLVED", {"yellow": True})
        return None

    # -- results on the controller ------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if is_worker(self.config) or "homefield" not in report.keywords:
            return
        if report.skipped and isinstance(report.longrepr, tuple):
            msg = str(report.longrepr[2])
            for reason in (BUDGET_SPENT, RATE_LIMITED):
                if reason in msg:
                    self.skip_reasons.add(msg.split("Skipped: ", 1)[-1])
        if report.when != "teardown":
            return
        for key, value in report.user_properties:
            if key == "homefield.result":
                record = json.loads(str(value))
                self.results.append(record)
                self.config.hook.pytest_homefield_result(result=record, config=self.config)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._cache is not None:
            self._cache.close()
        if is_worker(self.config):
            return
        meta = read_meta(self.run_dir)
        if self.skip_reasons:
            meta["cut_short"] = "; ".join(sorted(self.skip_reasons))
            write_meta(self.run_dir, meta)
        self.report = None
        try:
            self.report = build_report([self.run_dir], load_tasks(self.settings.tasks_path))
        except Exception as exc:  # the report must never lose the run: results are on disk
            self.report_error = f"{type(exc).__name__}: {exc}"
        if self.report is not None:
            write_reports(self.report, self.run_dir)
            failed = fail_under_failures(self.report, self.settings.fail_under)
            self.gate_failures = failed
            if failed and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if is_worker(config):
            return
        tr = terminalreporter
        tr.section("homefield report", sep="=", bold=True)
        report = getattr(self, "report", None)
        if report is None:
            tr.write_line(f"report failed: {getattr(self, 'report_error', 'no results')}", red=True)
            tr.write_line(f"results are kept in {self.results_path}")
            return
        for line, markup in render_text(report, width=tr._tw.fullwidth if hasattr(tr, "_tw") else 100,
                                        verbose=config.get_verbosity() > 0):
            tr.write_line(line, **markup)
        for msg in getattr(self, "gate_failures", []):
            tr.write_line(f"fail-under: {msg}", red=True, bold=True)
        if self.skip_reasons:
            tr.write_line(f"Continue the run with: homefield run --resume --run-id {self.run_id} "
                          "(same agents and attempts)", yellow=True)
        rel = self.run_dir.relative_to(self.settings.root)
        tr.write_line(f"Reports: {rel}/report.md, report.json, report.html")


def fail_under_failures(report: dict[str, Any], gates: list[str]) -> list[str]:
    """Messages for each ``--homefield-fail-under`` gate not met: ``RATE`` applies to every agent,
    ``AGENT=RATE`` to one. Rates are pass@1 fractions in [0, 1]. Raises ``pytest.UsageError`` on a bad
    gate or an unknown agent name."""
    out: list[str] = []
    agents = report.get("agents", {})
    for gate in gates:
        name, _, rate_s = gate.rpartition("=")
        try:
            rate = float(rate_s)
        except ValueError:
            raise pytest.UsageError(f"--homefield-fail-under {gate!r}: expected RATE or AGENT=RATE") from None
        if not 0 <= rate <= 1:
            raise pytest.UsageError(f"--homefield-fail-under {gate!r}: RATE is a fraction between 0 and 1")
        names = [name] if name else list(agents)
        for n in names:
            if n not in agents:
                raise pytest.UsageError(f"--homefield-fail-under {gate!r}: no agent named {n!r} in this run")
            p = agents[n].get("pass_at_1")
            if p is None or p < rate:
                out.append(f"{n} pass@1 {'n/a' if p is None else f'{p:.2f}'} is below {rate:.2f}")
    return out


class TasksFile(pytest.File):
    """``tasks.jsonl`` as a collector: a :class:`TaskNode` per task, in file order."""

    def __init__(self, *, plugin: RunPlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self) -> Any:
        for task in self.plugin.tasks:
            yield TaskNode.from_parent(self, name=task.id, nodeid=f"{self.nodeid}::{task.id}", task=task)


class TaskNode(pytest.Collector):
    """One task: a :class:`RunItem` per agent and attempt not already finished."""

    def __init__(self, *, task: Task, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task

    @property
    def plugin(self) -> RunPlugin:
        return self.parent.plugin  # type: ignore[union-attr,no-any-return]

    def collect(self) -> Any:
        plugin = self.plugin
        for agent in plugin.agents:
            for attempt in range(1, plugin.settings.attempts + 1):
                if (self.task.id, agent.name, attempt) in plugin.done:
                    continue
                name = f"{agent.name}[{attempt}]"
                item = RunItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", agent=agent,
                                           attempt=attempt)
                item.add_marker("homefield")
                yield item


class RunItem(pytest.Item):
    """One attempt. A plain ``pytest.Item``, so the repository's autouse fixtures never wrap it."""

    def __init__(self, *, agent: Agent, attempt: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.attempt = attempt
        self.result: Result | None = None
        self.extra_keyword_matches.update({self.task.id, agent.name, "homefield"})

    @property
    def task(self) -> Task:
        return self.parent.task  # type: ignore[union-attr,no-any-return]

    @property
    def plugin(self) -> RunPlugin:
        return self.parent.plugin  # type: ignore[union-attr,no-any-return]

    def setup(self) -> None:
        plugin = self.plugin
        s = plugin.settings
        limited = rate_limit_since(plugin.results_path, plugin.session_start)
        if limited:
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {limited}")
        if s.budget is not None:
            spent = spent_usd(plugin.results_path)
            if spent >= s.budget:
                raise pytest.skip.Exception(f"{BUDGET_SPENT}: {spent:.2f} of {s.budget:.2f} USD")
        a_settings = agent_settings(s, s.agent_defs.get(self.agent.name))
        test_cmd = self.config.hook.pytest_homefield_test_command(task=self.task, config=self.config)
        spec = AttemptSpec(
            task=self.task, agent=self.agent, attempt=self.attempt, run_id=plugin.run_id, run_dir=plugin.run_dir,
            timeout_s=a_settings.timeout_s, budget_usd=a_settings.budget_usd, allow_shell=s.allow_shell,
            run_timeout_s=s.run_timeout, test_timeout_s=s.test_timeout, test_cmd=test_cmd,
            test_globs=list(s.test_globs), env_passthrough=a_settings.env,
        )
        result = run_attempt(spec, plugin.cache)
        append_jsonl(plugin.results_path, result.to_dict())
        self.result = result
        for key, value in (("task", result.task_id), ("agent", result.agent), ("attempt", result.attempt),
                           ("outcome", result.outcome), ("cost_usd", result.cost_usd),
                           ("input_tokens", result.input_tokens), ("output_tokens", result.output_tokens),
                           ("wall_s", result.wall_s)):
            self.user_properties.append((f"homefield.{key}", value))
        self.user_properties.append(("homefield.result", json.dumps(result.to_dict())))
        if result.outcome == "infra":
            # an error in setup, reported as one line (no traceback: the harness, not code, failed)
            raise pytest.fail.Exception(f"homefield infra error: {result.error or 'infra'}\n"
                                        f"artifacts: {self._artifacts()}", pytrace=False)

    def runtest(self) -> None:
        result = self.result
        assert result is not None
        if result.outcome == "rate_limited":
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {result.error or 'provider unavailable'}")
        if not result.solved:
            raise pytest.xfail.Exception(f"{UNSOLVED_PREFIX}{result.outcome}"
                                         + (f" ({result.error})" if result.error else ""))

    def _artifacts(self) -> Path:
        p = self.plugin
        return p.run_dir / "attempts" / self.task.id / self.agent.name / str(self.attempt)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield: {self.task.id} {self.agent.name}#{self.attempt}"
