"""``--homefield-probe``: one pytest item per (task, agent, sample), plus the control calls
(docs/contracts.md §4, §5).

Node ids: ``.homefield/tasks.jsonl::<task_id>::probe-<agent>[<sample>]`` for a task's own prompt,
``.homefield/tasks.jsonl::<task_id>::control-<agent>[<sample>]`` for the mismatched control pair
that starts from the task's prompt (only without ``--homefield-cutoff``). The controller freezes the
answered calls before workers start (resume); each item makes one text-only call
(:meth:`pytest_homefield.agents.base.Completer.complete`), scores it and appends its record to
``.homefield/probe/<agent>.jsonl``. At the end the controller judges every agent against its
control and writes the verdicts (:mod:`.verdicts`). An answered call passes; ``rate_limited`` is
skipped (and stops later calls of that agent); other failures are errors and are retried by
``--homefield-resume``.

With ``--homefield-shard K/N`` the session probes only shard K's tasks (the tasks after
``--max-tasks``, split by id as a run splits them: :class:`pytest_homefield.shard.Shard`); the
control pairs are still drawn over every probed task, so each call is the one an unsharded probe
makes. Its verdict line says ``shard``: it judges this shard's tasks only, and
``--exclude-memorized`` refuses it until the shards are merged (``homefield probe --merge``,
:mod:`pytest_homefield.probe.merge`).
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.agents.base import Completion, can_complete
from pytest_homefield.agents.registry import agent_settings, build_agents, hook_agents
from pytest_homefield.collect import is_worker, mark_item, redirect_collection
from pytest_homefield.errors import AgentSpecError, RecordError, RunError, StoreError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.probe.plan import plan_lines
from pytest_homefield.probe.prompt import added_lines, probe_prompt
from pytest_homefield.probe.similarity import code_tokens, token_similarity
from pytest_homefield.probe.verdicts import (
    ANSWER_CHARS,
    Verdict,
    judge,
    mismatched_pairs,
    now_iso,
    verdict_lines,
    write_verdict,
)
from pytest_homefield.probe_records import done_keys, load_probe, probe_path
from pytest_homefield.records import RATE_LIMITED, Task, load_tasks, tasks_digest
from pytest_homefield.settings import Settings
from pytest_homefield.shard import parse_shard
from pytest_homefield.store import append_jsonl, write_atomic

__all__ = ["ProbePlugin", "ProbeItem"]


class ProbePlugin:
    """The probe mode's pytest hooks; one instance per process, created in ``pytest_configure``."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        tasks_path = settings.tasks_path
        if not tasks_path.exists():
            raise pytest.UsageError(f"pytest-homefield: no tasks at {tasks_path}: run `homefield mine` first")
        try:
            tasks = load_tasks(tasks_path)
        except (RecordError, StoreError) as exc:
            raise pytest.UsageError(f"pytest-homefield: {exc}") from None
        config.hook.pytest_homefield_modify_tasks(tasks=tasks, config=config)
        if settings.run_max_tasks is not None:
            tasks = tasks[: settings.run_max_tasks]
        if not tasks:
            raise pytest.UsageError(f"pytest-homefield: no tasks to probe: {tasks_path} holds none "
                                    "(run `homefield mine`, or widen --since)")
        self.shard = parse_shard(settings.shard)
        in_shard = self.shard.select(t.id for t in tasks) if self.shard else {t.id for t in tasks}
        if not settings.agents:
            raise pytest.UsageError("pytest-homefield: no agent given: add --homefield-agent SPEC")
        try:
            self.agents = build_agents(list(settings.agents), settings,
                                       hook_agents(config.hook.pytest_homefield_agents(config=config)))
        except (AgentSpecError, RunError) as exc:
            raise pytest.UsageError(str(exc)) from None
        for agent in self.agents:
            if not can_complete(agent):
                raise pytest.UsageError(
                    f"pytest-homefield: agent {agent.name!r} ({agent.spec}) cannot answer a plain prompt; the probe "
                    "needs claude, openai:, cmd:, oracle, noop or a hook agent with a complete() method")
        self.cutoff = (_dt.date.fromisoformat(str(settings.cutoff)[:10]).isoformat() if settings.cutoff else None)
        self.gold: dict[str, str] = {t.id: added_lines(t.gold_patch, t.source_files or None) for t in tasks}
        probed = [t for t in tasks if code_tokens(self.gold[t.id])]
        self.tasks: list[Task] = [t for t in probed if t.id in in_shard]  # this session's (shard's) tasks
        if self.shard is not None and not in_shard:
            raise pytest.UsageError(f"pytest-homefield: no tasks to probe: shard {self.shard} of {len(tasks)} "
                                    "task(s) is empty")
        probed_ids = {t.id for t in probed}
        self.skipped = [t.id for t in tasks if t.id in in_shard and t.id not in probed_ids]
        self.by_id = {t.id: t for t in probed}
        # over every probed task, so that a shard's control calls are those of the unsharded probe
        self.pairs = {} if self.cutoff else mismatched_pairs([t.id for t in probed])
        self.digest = tasks_digest(tasks_path)
        hf = settings.homefield_dir
        if is_worker(config):
            wi = config.workerinput  # type: ignore[attr-defined]
            self.done = {name: {tuple(k) for k in keys} for name, keys in wi["homefield_probe_done"].items()}
            self.session_start = wi["homefield_session_start"]
            if wi["homefield_tasks_digest"] != self.digest:
                raise pytest.UsageError("pytest-homefield: tasks.jsonl changed while the probe was starting")
        else:
            HomefieldDir(settings.root).ensure()
            self.session_start = now_iso()
            self.done = {}
            for agent in self.agents:
                path = probe_path(hf, agent.name)
                try:
                    calls = [r for r in load_probe(path) if r.get("kind") in ("task", "control")]
                except (RecordError, StoreError) as exc:  # a bad record: refused before any call is made
                    raise pytest.UsageError(f"pytest-homefield: {exc}") from None
                if calls and not settings.resume:
                    raise pytest.UsageError(
                        f"pytest-homefield: {path.relative_to(settings.root)} already holds {len(calls)} probe "
                        f"calls of agent {agent.name!r}: add --homefield-resume to continue it, or delete the file")
                specs = {r.get("spec") for r in calls} - {agent.spec}
                if specs:
                    raise pytest.UsageError(
                        f"pytest-homefield: agent {agent.name!r} was probed as {', '.join(sorted(map(str, specs)))}; "
                        f"this probe uses {agent.spec}: rename it with NAME=SPEC")
                self.done[agent.name] = done_keys(path) if settings.resume else set()
        redirect_collection(config, tasks_path)

    def resume_hint(self) -> str:
        """The command continuing this probe."""
        agents = " ".join(f"--agent {a.spec if a.name == a.spec else f'{a.name}={a.spec}'}" for a in self.agents)
        return f"homefield probe {agents} --resume"

    def workerinput(self) -> dict[str, Any]:
        return {
            "homefield_probe_done": {name: sorted(list(k) for k in keys) for name, keys in self.done.items()},
            "homefield_session_start": self.session_start,
            "homefield_tasks_digest": self.digest,
        }

    # -- collection ---------------------------------------------------------------------------
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path.resolve() == self.settings.tasks_path.resolve():
            return ProbeTasksFile.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = plan_lines(self.settings.homefield_dir, [(a.name, a.spec) for a in self.agents],
                           [t.id for t in self.tasks], self.settings.samples, self.cutoff, self.done)
        if self.shard is not None:
            lines.append(f"homefield probe shard {self.shard}: {len(self.tasks)} of the {len(self.by_id)} probed "
                         "tasks (the probe has no budget to split)")
        if self.skipped:
            lines.append(f"homefield probe: {len(self.skipped)} task(s) add no code and are not probed: "
                         + ", ".join(self.skipped[:5]))
        probe_dir = (self.settings.homefield_dir / "probe").relative_to(self.settings.root)
        lines.append(f"homefield probe records: {probe_dir}/")
        return lines

    # -- verdicts on the controller -----------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if is_worker(self.config):
            return
        self.verdicts: list[tuple[Any, Verdict, float]] = []
        at = now_iso()
        for agent in self.agents:
            path = probe_path(self.settings.homefield_dir, agent.name)
            records = load_probe(path)
            if not records:
                continue
            verdict = judge(agent.name, records, self.tasks, cutoff=self.cutoff)
            verdict.shard = str(self.shard) if self.shard else None
            verdict.tasks_digest = self.digest
            write_verdict(path, verdict, at)
            cost = sum(float(r.get("cost_usd") or 0.0) for r in records if r.get("kind") in ("task", "control"))
            self.verdicts.append((agent, verdict, cost))
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.verdicts:
            session.exitstatus = pytest.ExitCode.OK  # a resumed probe with every call answered: judged again
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if is_worker(config):
            return
        tr = terminalreporter
        tr.section("homefield probe", sep="=", bold=True)
        for agent, v, cost in getattr(self, "verdicts", []):
            for line, markup in verdict_lines(agent.name, agent.spec, v, self.by_id, cost):
                tr.write_line(line, **markup)
        flagged = any(v.flagged for _, v, _ in getattr(self, "verdicts", []))
        if self.shard is not None:
            tr.write_line(f"Shard {self.shard}: the verdict judges this shard's tasks only; merge the shards' "
                          ".homefield/probe/ folders with: homefield probe --merge DIR…", yellow=True)
        elif flagged:
            tr.write_line("Leave the flagged tasks out of a run with: homefield run --exclude-memorized --agent …")
        tr.write_line(f"Records: {(self.settings.homefield_dir / 'probe').relative_to(self.settings.root)}/"
                      f"<agent>.jsonl; continue an interrupted probe with --resume")


def _rate_limit_marker(path: Path) -> Path:
    """``<agent>.jsonl.rate-limited``: written when a call of this session was rate limited."""
    return path.with_name(path.name + ".rate-limited")


class ProbeTasksFile(pytest.File):
    """``tasks.jsonl`` as the probe's collector: a :class:`ProbeTaskNode` per probed task."""

    def __init__(self, *, plugin: ProbePlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self) -> Any:
        for task in self.plugin.tasks:
            yield ProbeTaskNode.from_parent(self, name=task.id, nodeid=f"{self.nodeid}::{task.id}", task=task)


class ProbeTaskNode(pytest.Collector):
    """One task: a probe item per agent and sample, then the control items starting from its prompt."""

    def __init__(self, *, task: Task, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task

    def collect(self) -> Any:
        plugin: ProbePlugin = self.parent.plugin  # type: ignore[union-attr]
        kinds = [("task", "probe", self.task.id)]
        if self.task.id in plugin.pairs:
            kinds.append(("control", "control", plugin.pairs[self.task.id]))
        for kind, prefix, gold_id in kinds:
            for agent in plugin.agents:
                for sample in range(1, plugin.settings.samples + 1):
                    if (kind, self.task.id, sample) in plugin.done.get(agent.name, set()):
                        continue
                    name = f"{prefix}-{agent.name}[{sample}]"
                    item = ProbeItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", agent=agent,
                                                 kind=kind, sample=sample, gold_id=gold_id, plugin=plugin)
                    mark_item(item)
                    yield item


class ProbeItem(pytest.Item):
    """One text-only call. A plain ``pytest.Item``: the repository's autouse fixtures never wrap it."""

    def __init__(self, *, agent: Any, kind: str, sample: int, gold_id: str, plugin: ProbePlugin,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.agent = agent
        self.kind = kind
        self.sample = sample
        self.gold_id = gold_id
        self.plugin = plugin
        self.record: dict[str, Any] | None = None
        self.extra_keyword_matches.update({self.task.id, agent.name, "homefield", "probe", kind})

    @property
    def task(self) -> Task:
        return self.parent.task  # type: ignore[union-attr,no-any-return]

    def setup(self) -> None:
        plugin = self.plugin
        path = probe_path(plugin.settings.homefield_dir, self.agent.name)
        stop = _rate_limit_marker(path)
        try:
            marker = json.loads(stop.read_text())
        except (OSError, ValueError):
            marker = {}
        if marker.get("since") == plugin.session_start:  # a rate limit earlier in this session stops the agent
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {marker.get('error') or 'provider unavailable'}")
        gold_task = plugin.by_id[self.gold_id]
        prompt = probe_prompt(self.task.prompt, gold_task.source_files)
        a_settings = agent_settings(plugin.settings, plugin.settings.agent_defs.get(self.agent.name))
        started_at = now_iso()
        t0 = time.monotonic()
        try:
            c = self.agent.complete(prompt, timeout_s=a_settings.timeout_s, gold_answer=plugin.gold[self.task.id])
        except Exception as exc:  # a hook agent's bug is an infra error of this call, never a lost session
            c = Completion(outcome="infra", error=f"{type(exc).__name__}: {exc}"[:300])
        wall = c.wall_s or (time.monotonic() - t0)
        score = None if c.outcome else round(token_similarity(c.text, plugin.gold[self.gold_id]), 6)
        record: dict[str, Any] = {
            "schema_version": 1, "kind": self.kind, "task_id": self.task.id, "sample": self.sample,
            "agent": self.agent.name, "spec": self.agent.spec,
            **({"gold_task_id": self.gold_id} if self.kind == "control" else {}),
            "score": score, "outcome": c.outcome, "cost_usd": c.cost_usd, "input_tokens": c.input_tokens,
            "output_tokens": c.output_tokens, "cache_read_tokens": c.cache_read_tokens,
            "cache_write_tokens": c.cache_write_tokens, "model": c.model, "wall_s": round(wall, 3),
            "started_at": started_at, "finished_at": now_iso(), "error": c.error,
            "answer": c.text[:ANSWER_CHARS], "memorized": None,
        }
        try:
            append_jsonl(path, record)
        except StoreError as exc:  # a full disk: the file is left as it was; --resume makes the call again
            self.session.shouldstop = f"homefield: {exc}"
            raise pytest.fail.Exception(f"homefield: {exc}; the probe stops here: free space, then "
                                        f"{plugin.resume_hint()}", pytrace=False) from None
        if c.outcome == "rate_limited":
            write_atomic(stop, json.dumps({"since": plugin.session_start, "error": c.error}))
        self.record = record
        for key in ("kind", "task_id", "sample", "agent", "score", "outcome", "cost_usd", "input_tokens",
                    "output_tokens"):
            self.user_properties.append((f"homefield.{key}", record[key]))
        self.user_properties.append(("homefield.probe", json.dumps(record)))
        if c.outcome not in (None, "rate_limited"):
            raise pytest.fail.Exception(f"homefield probe call failed ({c.outcome}): {c.error or c.outcome}",
                                        pytrace=False)

    def runtest(self) -> None:
        assert self.record is not None
        if self.record["outcome"] == "rate_limited":
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {self.record['error'] or 'provider unavailable'}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield probe: {self.task.id} {self.agent.name}#{self.sample} ({self.kind})"
