"""``--homefield-probe``: one pytest item per (task, agent, sample), plus the control calls
(docs/contracts.md §4, §5).

Node ids: ``.homefield/tasks.jsonl::<task_id>::probe-<agent>[<sample>]`` for a task's own prompt,
``.homefield/tasks.jsonl::<task_id>::control-<agent>[<sample>]`` for the mismatched control pair
that starts from the task's prompt (only without ``--homefield-cutoff``). The controller freezes the
answered calls before workers start (resume); each item makes one text-only call
(:meth:`pytest_homefield.agents.base.Completer.complete`) and scores it; its record travels with the
item's report and the controller appends it to ``.homefield/probe/<agent>.jsonl``
(:mod:`pytest_homefield.transport`). At the end the controller judges every agent against its
control and writes the verdicts (:mod:`.verdicts`). An answered call passes; ``rate_limited`` is
skipped (and stops later calls of that agent); other failures are errors and are retried by
``--homefield-resume``. The work is done by :class:`pytest_homefield.probe.session.ProbeSession`;
the hooks here only translate it for pytest.

With ``--homefield-shard K/N`` the session probes only shard K's tasks (the tasks after
``--max-tasks``, split by each id's hash as a run splits them: :class:`pytest_homefield.shard.Shard`); the
control pairs are still drawn over every probed task, so each call is the one an unsharded probe
makes. Its verdict line says ``shard``: it judges this shard's tasks only, and
``--exclude-memorized`` refuses it until the shards are merged (``homefield probe --merge``,
:mod:`pytest_homefield.probe.probe_shards`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.collect import is_worker, mark_item, redirect_collection
from pytest_homefield.errors import AgentSpecError, RunError
from pytest_homefield.modes import ModeFile, ModePlugin
from pytest_homefield.probe.probe_plan import plan_lines
from pytest_homefield.probe.session import ProbeSession, probe_agents
from pytest_homefield.probe.verdicts import (
    Verdict,
    verdict_lines,
)
from pytest_homefield.records import RATE_LIMITED, Task
from pytest_homefield.run.run_plugin import (
    refuse_unstartable,
    refused_line,
    refused_reasons,
    sandbox_hook,
    stop_refused,
    worker_refusal,
)
from pytest_homefield.run.session import RunSession, selection
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.store import FolderLocked
from pytest_homefield.transport import Scope, post

__all__ = ["ProbePlugin", "ProbeItem"]


class ProbeTasksFile(ModeFile):
    """``tasks.jsonl`` as the probe's collector: a :class:`ProbeTaskNode` per probed task."""

    plugin: ProbePlugin

    def collect(self) -> Any:
        for task in self.plugin.session.tasks:
            yield ProbeTaskNode.from_parent(self, name=task.id, nodeid=f"{self.nodeid}::{task.id}", task=task)


class ProbePlugin(ModePlugin):
    """The probe mode's pytest hooks over one :class:`ProbeSession`; one instance per process, created
    in ``pytest_configure``. Raises ``pytest.UsageError`` for the session's :class:`RunError`."""

    collector = ProbeTasksFile

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        super().__init__(config, settings)
        self.verdicts: list[tuple[Any, Verdict, float]] = []
        #: the skip reasons of this session's calls (controller): a worker's refusal among them stops the probe
        self.skip_reasons: set[str] = set()
        try:
            if is_worker(config):  # a remote host lacks the controller's .homefield/: its tasks.jsonl (ops63)
                RunSession.prepare_worker(settings, config.workerinput)  # type: ignore[attr-defined]
            agents = probe_agents(settings, config.hook.pytest_homefield_agents(config=config))
            if not is_worker(config):  # up60: once, before the probe's folder, not call by call (text-only: no shell)
                refuse_unstartable(agents, config, settings, allow_shell=False)
            #: why this (remote) worker makes no call (:func:`~pytest_homefield.run.run_plugin.worker_refusal`)
            self.refusal = worker_refusal(agents, config, settings, allow_shell=False)
            chosen = selection(settings, lambda ts: config.hook.pytest_homefield_modify_tasks(tasks=ts, config=config),
                               verb="probe")
            hook = sandbox_hook(config)
            if is_worker(config):
                self.session = ProbeSession.join(settings, chosen, agents, config.workerinput,  # type: ignore[attr-defined]
                                                 sandbox_hook=hook)
            else:
                self.session = ProbeSession.start(settings, chosen, agents, sandbox_hook=hook)
        except FolderLocked as exc:  # another session probes in this repository: exit 2, one line
            pytest.exit(str(exc), returncode=2)
        except (RunError, AgentSpecError) as exc:
            raise pytest.UsageError(str(exc)) from None
        redirect_collection(config, self.session.collect_path)

    def active(self) -> ProbeSession:
        return self.session

    def resume_hint(self) -> str:
        """The command continuing this probe."""
        return self.session.resume_hint()

    def message_scope(self, nodeid: str) -> Scope | None:
        """The call item ``nodeid`` (``<file>::<task>::probe-<agent>[<sample>]`` or ``control-…``, docs/contracts.md
        §5) of a call this session left to make: its one record in ``probe/<agent>.jsonl``, by kind, task,
        agent and sample (a control's ``gold_task_id`` its pair's); else ``None``."""
        parts = nodeid.split("::")
        s = self.session
        if len(parts) != 3 or not parts[2].endswith("]"):
            return None
        task_id = parts[1]
        named, _, sample = parts[2][:-1].rpartition("[")
        prefix, _, agent = named.partition("-")
        kind = {"probe": "task", "control": "control"}.get(prefix)
        if kind is None or not sample.isdigit() or sample != str(int(sample)):
            return None
        n = int(sample)
        if agent not in {a.name for a in s.agents} or task_id not in {t.id for t in s.tasks}:
            return None
        if not 1 <= n <= self.settings.samples or (kind, task_id, n) in s.done.get(agent, set()):
            return None
        if kind == "control" and task_id not in s.pairs:
            return None
        key: dict[str, object] = {"kind": kind, "task_id": task_id, "agent": agent, "sample": n}
        if kind == "control":
            key["gold_task_id"] = s.pairs[task_id]
        home = self.settings.homefield_dir
        return Scope(appends={s.record_path(agent).relative_to(home).as_posix(): key},
                     label=f"{kind} call {task_id} {agent}#{n}")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.session.release()  # the probe folder's lock, should the session end before its finish

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.session
        lines = plan_lines(self.settings.homefield_dir, [(a.name, a.spec) for a in s.agents],
                           [t.id for t in s.tasks], self.settings.samples, s.cutoff, s.done, s.pairs)
        if s.shard is not None:
            lines.append(f"homefield probe shard {s.shard}: {len(s.tasks)} of the {len(s.by_id)} probed "
                         "tasks (the probe has no budget to split)"
                         + ("; it holds none (a task's shard is its id's hash): no call, a verdict line over no "
                            "task for the merge" if not s.tasks else ""))
        if s.skipped:
            lines.append(f"homefield probe: {len(s.skipped)} task(s) add no code and are not probed: "
                         + ", ".join(s.skipped[:5]))
        probe_dir = (self.settings.homefield_dir / "probe").relative_to(self.settings.root)
        lines.append(f"homefield probe records: {probe_dir}/")
        return lines

    # -- verdicts on the controller -----------------------------------------------------------
    def on_report(self, report: pytest.TestReport) -> None:
        if report.skipped and isinstance(report.longrepr, tuple) and "homefield" in report.keywords:
            self.skip_reasons.add(str(report.longrepr[2]).split("Skipped: ", 1)[-1])

    def finish(self, session: pytest.Session) -> None:
        if refused_reasons(self.skip_reasons):  # a worker lacks a client: no verdict rewritten, exit 4 (ops62)
            self.session.release()
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        try:
            self.verdicts = self.session.finish()
        finally:
            self.session.release()
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.verdicts:
            session.exitstatus = pytest.ExitCode.OK  # a resumed probe with every call answered: judged again

    def write_summary(self, terminalreporter: Any) -> None:
        tr, s = terminalreporter, self.session
        tr.section("homefield probe", sep="=", bold=True)
        refused = refused_reasons(self.skip_reasons)
        for why in refused:
            tr.write_line(refused_line(why, "probe"), red=True, bold=True)
        if refused:
            tr.write_line(f"Continue the probe with: {self.resume_hint()}", yellow=True)
            return
        for agent, v, cost in self.verdicts:
            for line, markup in verdict_lines(agent.name, agent.spec, v, s.by_id, cost):
                tr.write_line(line, **markup)
        flagged = any(v.flagged for _, v, _ in self.verdicts)
        if s.shard is not None:
            tr.write_line(f"Shard {s.shard}: the verdict judges this shard's tasks only; merge the shards' "
                          ".homefield/probe/ folders with: homefield probe --merge DIR…", yellow=True)
        elif flagged:
            tr.write_line(f"Leave the flagged tasks out of a run with: homefield run "
                          f"{option('exclude-memorized', 'cli')} {option('agent', 'cli')} …")
        tr.write_line(f"Records: {(self.settings.homefield_dir / 'probe').relative_to(self.settings.root)}/"
                      f"<agent>.jsonl; continue an interrupted probe with {option('resume')}")


class ProbeTaskNode(pytest.Collector):
    """One task: a probe item per agent and sample, then the control items starting from its prompt."""

    def __init__(self, *, task: Task, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task

    def collect(self) -> Any:
        plugin: ProbePlugin = self.parent.plugin  # type: ignore[union-attr]
        session = plugin.session
        kinds = [("task", "probe", self.task.id)]
        if self.task.id in session.pairs:
            kinds.append(("control", "control", session.pairs[self.task.id]))
        for kind, prefix, gold_id in kinds:
            for agent in session.agents:
                for sample in range(1, plugin.settings.samples + 1):
                    if (kind, self.task.id, sample) in session.done.get(agent.name, set()):
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
        session = self.plugin.session
        stop_refused(self, self.plugin.refusal)  # this (remote) worker lacks a client: no call, nothing recorded
        reason = session.stop_reason(self.agent.name)
        if reason:  # a rate limit earlier in this session stops the agent
            raise pytest.skip.Exception(reason)
        record = self.record = session.call(self.task, self.agent, self.kind, self.sample, self.gold_id)
        post(self, session.messages(record))  # the controller appends it (pytest_homefield.transport)
        for key in ("kind", "task_id", "sample", "agent", "score", "outcome", "cost_usd", "input_tokens",
                    "output_tokens"):
            self.user_properties.append((f"homefield.{key}", record[key]))
        self.user_properties.append(("homefield.probe", json.dumps(record)))
        if record["outcome"] not in (None, "rate_limited"):
            raise pytest.fail.Exception(f"homefield probe call failed ({record['outcome']}): "
                                        f"{record['error'] or record['outcome']}", pytrace=False)

    def runtest(self) -> None:
        assert self.record is not None
        if self.record["outcome"] == "rate_limited":
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {self.record['error'] or 'provider unavailable'}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield probe: {self.task.id} {self.agent.name}#{self.sample} ({self.kind})"
