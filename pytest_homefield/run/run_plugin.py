"""``--homefield``: one pytest item per task × agent × attempt (docs/contracts.md §4, §5, §8).

The controller picks the run id, writes ``meta.json`` and freezes the set of finished attempts
before workers start; every process then collects the same items from ``.homefield/tasks.jsonl``.
Each item runs one attempt in :meth:`RunItem.setup` (snapshot, agent, grading) and posts its
result line, which the controller appends (:mod:`pytest_homefield.transport`). solved → passed;
scored, not solved → xfailed shown as ``UNSOLVED``; infra → error; rate limited or budget spent →
skipped. The work is done by :class:`pytest_homefield.run.session.RunSession`;
the hooks here only translate it for pytest.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest.junitxml import xml_key  # pytest's own stash key of the JUnit writer (no public accessor)

from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.predictions import check_predictions
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, same_change_line
from pytest_homefield.agents.registry import hook_agents, make_agents, unstartable
from pytest_homefield.collect import attempt_key, is_worker, mark_item, redirect_collection, xfail_reason
from pytest_homefield.errors import (
    AgentSpecError,
    PredictionsSpecError,
    RecordError,
    ResultsUnreadable,
    RunError,
    StoreError,
)
from pytest_homefield.layout import (
    VERIFY_PREFIX,
    HomefieldDir,
    max_tasks_note,
    partial_mine_note,
    tries_path,
)
from pytest_homefield.modes import ModeFile, ModePlugin
from pytest_homefield.records import (
    CLIENT_MISSING,
    RATE_LIMITED,
    UNSOLVED_PREFIX,
    Result,
    Task,
    display_subject,
    load_tasks,
    one_line,
)
from pytest_homefield.run.attempt import SandboxContext
from pytest_homefield.run.flaky import count_flaky, flaky_line
from pytest_homefield.run.one_change import one_change_line
from pytest_homefield.run.retries import crash_result
from pytest_homefield.run.rounds import (
    adaptive_refusal,
    not_needed_result,
    round_order,
    stall_seconds,
    wait_for_rounds,
)
from pytest_homefield.run.runner import SandboxHook, confined_by
from pytest_homefield.run.session import (
    RunEnd,
    RunReports,
    RunSession,
    memorized_exclusion,
    selection,
)
from pytest_homefield.run.tries_log import TryLog
from pytest_homefield.sandbox.fingerprint import other_python_note
from pytest_homefield.settings import Settings, option
from pytest_homefield.store import FolderLocked, append_jsonl
from pytest_homefield.terminal.junit import add_gate_case
from pytest_homefield.terminal.progress import plural
from pytest_homefield.transport import REFUSED_ATTR, Scope, post

__all__ = ["HEADER_AGENTS", "header_agent_lines", "RunPlugin", "TasksFile", "TaskNode", "RunItem", "AttemptItem",
           "unsolved_status", "UNSOLVED_PREFIX", "forward_report", "setup_command_hook", "sandbox_hook",
           "selected_none_note", "reports_line", "refuse_unstartable", "worker_refusal", "stop_refused",
           "refused_reasons", "refused_line"]


def selected_none_note(keyword: str, markexpr: str, n_tasks: int, cut: Any, ids: Sequence[str] = ()) -> str:
    """One line for a run or verify whose ``-k`` / ``-m`` (``keyword``, ``markexpr``; ``""`` when not
    given) selected no attempt (pytest's exit 5, which stays): the expressions, among how many tasks
    (``n_tasks``, after ``--max-tasks``) and, when ``cut`` (``meta.json`` ``max_tasks``, ``{"n": N, "of": M}``)
    says ``--max-tasks N`` kept the newest N of M, that an older task is never reached that way (nu32:
    ``verify --max-tasks 3 -k <the 8th task>`` ran nothing and said only that the task set was partial).
    ``ids``: the task ids of ``tasks.jsonl`` in its order (newest first); a ``-k`` of one word (a task id or a
    part of one, as pytest matches it: case aside) is looked up in them, and the line says which task it
    names and the ``--max-tasks`` that reaches it, or that no task id holds it."""
    given = [f"{flag} {expr!r}" for flag, expr in (("-k", keyword), ("-m", markexpr)) if expr]
    what = " and ".join(given) if given else "the selection (-k, -m, --lf or node ids)"
    verb = "select" if len(given) > 1 else "selects"
    word = keyword.strip() if re.fullmatch(r"[\w.-]+", keyword.strip()) and not markexpr else ""
    hits = [i for i, t in enumerate(ids, 1) if word and word.lower() in t.lower()]
    if max_tasks_note(cut) is not None:
        n, of = cut["n"], cut["of"]
        cap = option("max-tasks")
        head = (f"{what} {verb} none of the {plural(n, 'task')} {cap} {n} kept (the newest {n} of the {of} "
                "in tasks.jsonl)")
        if hits:
            task = ids[hits[0] - 1]
            which = f"task {task} is" if word.lower() == task.lower() else f"{word!r} is in task {task},"
            return (f"{head}: {which} number {hits[0]} of the {len(ids)} (newest first): {cap} {hits[0]} "
                    f"reaches it, or leave {cap} out")
        if word and ids:
            return f"{head}; no task id in tasks.jsonl holds {word!r}"
        return f"{head}: raise {cap} or leave it out to reach an older task"
    line = f"{what} {verb} none of the {plural(n_tasks, 'task')} of this run"
    return f"{line}; no task id in tasks.jsonl holds {word!r}" if word and ids and not hits else line


def forward_report(config: pytest.Config, report: pytest.TestReport, note_skip: Callable[[str], None]) -> None:
    """On the controller, for an attempt item's report: a skip reason goes to ``note_skip`` (budget or
    rate-limit stops), and the result record at teardown to the ``pytest_homefield_result`` hook.
    Shared by the run and ablation modes."""
    if "homefield" not in report.keywords:
        return
    if report.skipped and isinstance(report.longrepr, tuple):
        note_skip(str(report.longrepr[2]))
    if report.when != "teardown":
        return
    for key, value in report.user_properties:
        if key == "homefield.result":
            config.hook.pytest_homefield_result(result=json.loads(str(value)), config=config)


class TasksFile(ModeFile):
    """``tasks.jsonl`` as a collector: a :class:`TaskNode` per task, in file order."""

    plugin: RunPlugin

    def collect(self) -> Any:
        for task in self.plugin.session.tasks:
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
        for agent, attempt in self.plugin.session.pending(self.task):
            name = f"{agent.name}[{attempt}]"
            item = RunItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", agent=agent, attempt=attempt)
            mark_item(item)
            yield item


def setup_command_hook(config: pytest.Config) -> Callable[[Task], str | None]:
    """The ``pytest_homefield_setup_command`` hook as a function of the task (``None``: no override)."""

    def setup_command(task: Task) -> str | None:
        cmd: str | None = config.hook.pytest_homefield_setup_command(task=task, config=config)
        return cmd

    return setup_command


def sandbox_hook(config: pytest.Config) -> SandboxHook | None:
    """The ``pytest_homefield_sandbox`` hook as a function, or ``None`` when nothing implements it."""
    if not config.pluginmanager.hook.pytest_homefield_sandbox.get_hookimpls():
        return None

    def hook(argv: list[str], ctx: SandboxContext) -> list[str] | None:
        wrapped: list[str] | None = config.hook.pytest_homefield_sandbox(argv=argv, ctx=ctx)
        return wrapped

    return hook


#: Agents named one by one in the session header; past this the header names the first three of each group and
#: counts the rest (``homefield verify --attacks`` runs 50 agents: two lines of 3,000 characters before), ``-v``
#: names them all.
HEADER_AGENTS = 6


def _first_names(names: list[str]) -> str:
    """``a, b, c and 46 more`` (all of ``names`` when at most four)."""
    return ", ".join(names) if len(names) <= 4 else ", ".join(names[:3]) + f" and {len(names) - 3} more"


def header_agent_lines(agents: list[tuple[str, str]], sandboxes: dict[str, str], tests: str,
                       verbose: bool) -> tuple[str, str]:
    """The header's ``(agents, sandbox)`` texts: ``agents`` (name, spec) in run order, ``sandboxes`` agent name →
    its sandbox (``bwrap``, ``none``: ``MODE[:detail]``), ``tests`` the test runs'. Up to :data:`HEADER_AGENTS`
    agents (or with ``verbose``) every agent is named, ``oracle (oracle), …`` and ``oracle none, …``; more are
    grouped by sandbox, each group naming its first three: ``oracle none; attack-a, attack-b, attack-c and 46
    more bwrap``."""
    mode = {n: v.split(":")[0] for n, v in sandboxes.items()}
    tests = tests.split(":")[0]
    if verbose or len(agents) <= HEADER_AGENTS:
        return (", ".join(f"{n} ({spec})" for n, spec in agents),
                ", ".join(f"{n} {m}" for n, m in mode.items()) + f"; test runs {tests}")
    groups: dict[str, list[str]] = {}
    for n, m in mode.items():
        groups.setdefault(m, []).append(n)
    return (f"{_first_names([f'{n} ({spec})' for n, spec in agents])} agents (-v names them all)",
            "; ".join(f"{_first_names(names)} {m}" for m, names in groups.items()) + f"; test runs {tests}")


def worker_refusal(agents: Sequence[Agent], config: pytest.Config, settings: Settings, *,
                   allow_shell: bool | None = None) -> str | None:
    """In an xdist worker: ``client missing on worker gw1 (host H): agent 'x': cannot start …`` when an agent's
    client is not installed on this worker's machine (or cannot be sandboxed there: :func:`refuse_unstartable`'s
    check, ``allow_shell`` as there), else ``None``; ``None`` on the controller or the only process. The
    controller checks its own machine before anything is spent (:func:`refuse_unstartable`) but cannot see a
    remote worker's (``--tx ssh=…``): that worker stops the session at its first item instead (a run's
    :meth:`RunItem.setup`, an ablation's and a probe's item the same: :func:`stop_refused`), where every attempt
    (or probe call) of the agent there was ``infra``, one by one, to the end of the session (ops62: ablate and
    probe were still so)."""
    if not is_worker(config):
        return None
    lines = unstartable(agents, os.environ, confined_by(settings, allow_shell))
    if not lines:
        return None
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    workerid = getattr(config, "workerinput", {}).get("workerid", "?")
    return (f"{CLIENT_MISSING} {workerid} (host {socket.gethostname()}): {lines[0]}{more}; "
            "install it there, or leave that worker out of --tx")


def stop_refused(item: pytest.Item, refusal: str | None) -> None:
    """In a worker that refused (:func:`worker_refusal`): stop the session at ``item``, skipped with the refusal
    (its controller notes it: :func:`refused_reasons`); nothing is run or recorded. Nothing when ``refusal`` is
    ``None``."""
    if refusal:
        item.session.shouldstop = refusal
        raise pytest.skip.Exception(refusal)


def refused_reasons(reasons: Iterable[str]) -> list[str]:
    """The workers' refusals (:func:`worker_refusal`) among a session's skip ``reasons``, sorted."""
    return sorted(r for r in reasons if r.startswith(CLIENT_MISSING))


def refused_line(why: str, what: str = "run") -> str:
    """The controller's line for a worker's refusal ``why``: ``ERROR: pytest-homefield: …; the run stopped``."""
    return f"ERROR: pytest-homefield: {why}; the {what} stopped"


def refuse_unstartable(agents: Sequence[Agent], config: pytest.Config, settings: Settings, *,
                       allow_shell: bool | None = None) -> None:
    """Raise :class:`RunError` (exit 4, one line, nothing written) when an agent's client is not installed here,
    or its install needs the home and its attempts are sandboxed (:func:`~.runner.confined_by`, with
    ``allow_shell``), and every xdist worker is local (``--tx`` names only ``popen``): its every attempt would be
    ``infra``. A run's controller calls it before its run folder is made (a remote worker checks its own machine:
    :func:`worker_refusal`), an ablation's before its folder (up60), a probe's before its first call, with
    ``allow_shell=False`` (a probe call is text-only: up60; before, each call was ``infra`` one by one)."""
    remote = [tx for tx in (config.getoption("tx", None) or []) if not str(tx).startswith("popen")]
    lines = [] if remote else unstartable(agents, os.environ, confined_by(settings, allow_shell))
    if lines:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        raise RunError(f"pytest-homefield: {lines[0]}{more}; nothing was run")


class RunPlugin(ModePlugin):
    """The run mode's pytest hooks over one :class:`RunSession`; one instance per process, created in
    ``pytest_configure``. Raises ``pytest.UsageError`` for the session's :class:`RunError`."""

    collector = TasksFile

    def __init__(self, config: pytest.Config, settings: Settings, reports: RunReports) -> None:
        super().__init__(config, settings)
        self.reports = reports
        #: the line saying -k / -m selected no attempt (:func:`selected_none_note`), once the session ended so
        self.selected_none: str | None = None
        self._tries: TryLog | None = None  # the run's tries.jsonl, once the session is made
        self._planned: tuple[set[str], set[str]] | None = None  # task ids and agent names, for message_scope
        #: pytest's ``--collect-only`` on the controller: the attempts are collected, no run folder is made (rev58)
        self.dry = bool(config.getoption("collectonly", False)) and not is_worker(config)
        if settings.adaptive:  # before the run folder is made (issue 32)
            why = adaptive_refusal(shard=settings.shard, dist=config.getoption("dist", None))
            if why:
                raise pytest.UsageError(why)
        try:
            if is_worker(config):
                RunSession.prepare_worker(settings, config.workerinput)  # type: ignore[attr-defined]
            agents = make_agents(settings, hook_agents(config.hook.pytest_homefield_agents(config=config)))
            wi: dict[str, Any] = getattr(config, "workerinput", {})
            #: why this worker runs nothing (:func:`worker_refusal`), ``None`` on the controller
            self.refusal = worker_refusal(agents, config, settings)
            if is_worker(config):
                excluded = dict(wi.get("homefield_excluded") or {})
            else:
                refuse_unstartable(agents, config, settings)
                excluded = memorized_exclusion(settings, agents)
            chosen = selection(settings, lambda ts: config.hook.pytest_homefield_modify_tasks(tasks=ts, config=config),
                               exclude=excluded.get("tasks", ()))
            tasks = chosen.tasks
            self.preds_lines = [] if is_worker(config) else check_predictions(
                agents, lambda: {t.id for t in load_tasks(settings.tasks_path)} | {t.id for t in tasks},
                [t.id for t in tasks], partial=settings.preds_partial, attempts=settings.attempts)
            if is_worker(config):
                self.session = RunSession.join(settings, tasks, agents, wi, setup_command=setup_command_hook(config),
                                               sandbox_hook=sandbox_hook(config))
            else:
                self.session = RunSession.start(settings, tasks, agents, setup_command=setup_command_hook(config),
                                                sandbox_hook=sandbox_hook(config), excluded=excluded,
                                                cut_from=chosen.cut_from,
                                                shard_of=[t.id for t in chosen.every] if chosen.shard else None,
                                                dry=self.dry)
        except PredictionsSpecError as exc:  # a preds: file that is unreadable or names unknown ids: exit 2
            pytest.exit(str(exc), returncode=2)
        except (RunError, AgentSpecError) as exc:
            raise pytest.UsageError(str(exc)) from None
        except (FolderLocked, ResultsUnreadable) as exc:  # another session runs this run; its records unread: 2
            pytest.exit(str(exc), returncode=2)
        if settings.adaptive and is_worker(config):
            why = adaptive_refusal(shard=None, dist=None, shared=self.session.shared)
            if why:
                raise pytest.UsageError(why)
        self.end = RunEnd()
        self.gate_lines: list[str] = []
        if settings.fail_if_worse_than and not is_worker(config) and not self.dry:
            config.pluginmanager.register(BaselineGate(self), "homefield-baseline-gate")
        redirect_collection(config, self.session.collect_path)

    def active(self) -> RunSession:
        return self.session

    def resume_hint(self) -> str:
        """The command continuing this run (same agents and attempts); for a ``homefield verify``, which
        has no ``--resume`` (it starts a new ``verify-…`` run each time), the same verify command, with its
        ``--max-tasks`` (nu35 on more-itertools: a Ctrl-C'd ``verify --attacks --max-tasks 1`` said "Verify
        again with: homefield verify --attacks", which grades all 9 tasks, hours where the first took 20 min),
        and its ``-k`` / ``-m`` (nu43 on tabulate: a Ctrl-C'd ``verify --attacks -k e6a24aa6e00c`` said "Verify
        again with: homefield verify --attacks", which grades all 7 tasks: about 1 h 30 m a task under load)."""
        if self.verifying:
            cut = getattr(self.settings, "run_max_tasks", None)
            opt = getattr(getattr(self, "config", None), "option", None)
            chosen = [f" {flag} {shlex.quote(expr)}" for flag, expr in
                      (("-k", str(getattr(opt, "keyword", "") or "")), ("-m", str(getattr(opt, "markexpr", "") or "")))
                      if expr]
            return ("homefield verify" + (f" {option('attacks', 'cli')}" if self.settings.attacks else "")
                    + (f" {option('max-tasks', 'cli')} {cut}" if cut is not None else "") + "".join(chosen))
        return f"homefield run {option('resume', 'cli')} {option('run-id', 'cli')} {self.session.run_id}"

    def _continue_line(self, tail: str = "") -> str:
        """``Continue the run with: homefield run --resume --run-id R`` (``tail`` after the command), or for
        a verify run ``Verify again with: homefield verify`` (it starts afresh)."""
        if self.verifying:
            return f"Verify again with: {self.resume_hint()}"
        return f"Continue the run with: {self.resume_hint()}{tail}"

    # -- names for people (progress line, verbose lines, JUnit) --------------------------------
    def item_subject(self, nodeid: str) -> str:
        """The task's cleaned title for the attempt item ``nodeid`` (``""`` when unknown)."""
        parts = nodeid.split("::")
        task = self._task_by_id().get(parts[1]) if len(parts) >= 3 else None
        return display_subject(task) if task else ""

    def item_label(self, nodeid: str) -> str:
        """``<task> <agent>[<attempt>] <subject>`` for the progress line."""
        parts = nodeid.split("::")
        return " ".join(parts[1:] + [self.item_subject(nodeid)]).strip()

    @property
    def verifying(self) -> bool:
        """Whether this session is a ``homefield verify`` (its run id is ``verify-…``)."""
        return self.session.run_id.startswith(VERIFY_PREFIX)

    def selected_line(self, nodeids: list[str]) -> str:
        """What a ``homefield verify`` runs, once collection (``-k``, ``-m``, node ids) chose its items:
        ``homefield verify verify-…: 2 attempts (2 tasks × oracle), of 8 (-k, -m or node ids)``."""
        tasks = {n.split("::")[1] for n in nodeids if n.count("::") >= 2}
        agents = list(dict.fromkeys(n.split("::")[2].split("[")[0] for n in nodeids if n.count("::") >= 2))
        full = self.expected_items()
        shown = ", ".join(agents[:3]) + (f" and {len(agents) - 3} more agents" if len(agents) > 3 else "")
        return (f"homefield verify {self.session.run_id}: {plural(len(nodeids), 'attempt')} "
                f"({plural(len(tasks), 'task')} × {shown or 'no agent'})"
                + (f", of {full} (-k, -m or node ids)" if len(nodeids) < full else ""))

    def expected_items(self) -> int:
        """Items collected without -k/-m/node ids: tasks × agents × attempts not already finished."""
        return int(self.session.n_attempts) - len(self.session.done)

    def _task_by_id(self) -> dict[str, Task]:
        if not hasattr(self, "_tasks_by_id"):
            self._tasks_by_id = {t.id: t for t in self.session.tasks}
        return self._tasks_by_id

    @pytest.hookimpl(trylast=True)
    def item_order(self, item: pytest.Item) -> tuple[int, ...]:
        """``--adaptive``: the items in rounds (attempt 1 of every task and agent, then attempt 2, ...; the
        sort is stable, so every xdist worker has the same order)."""
        if self.settings.adaptive:
            return (round_order(item.attempt if isinstance(item, RunItem) else None),)
        return ()

    def not_needed(self, item: RunItem) -> str | None:
        """``--adaptive``: wait for the rounds before ``item``'s (:func:`.rounds.wait_for_rounds`), then why
        its attempt is not needed (the report package's decision), or ``None``."""
        s, st = self.session, self.settings
        keys = {(i.task.id, i.agent.name, i.attempt) for i in item.session.items
                if isinstance(i, RunItem) and i.attempt < item.attempt}
        agents = {a.name: a for a in s.agents}
        records = wait_for_rounds(s.results_path, keys, session_start=s.session_start,
                                  stop=lambda: s.stop_reason(item.agent),
                                  stopped=lambda name: name in agents and s.stop_reason(agents[name]) is not None,
                                  stall_s=stall_seconds(st.timeout, st.run_timeout))
        return self.reports.not_needed(records, [(a.name, a.spec) for a in s.agents], item.agent.name, item.attempt,
                                       looks=st.attempts, alpha=st.alpha, margin=st.adaptive_margin / 100.0,
                                       run_dir=s.run_dir, session=s.session_start)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:  # one outside the test loop (collection)
        self.session.interrupt()

    def on_interrupt(self) -> bool:
        """A Ctrl-C in the test loop (``homefield run``/``verify``) ends the session as the run's own stop
        (:meth:`~pytest_homefield.modes.ModePlugin.pytest_runtestloop`): the attempts running were stopped and
        not recorded, the summary says so and how to go on."""
        self.session.interrupt()
        return True

    def message_scope(self, nodeid: str) -> Scope | None:
        """The attempt item ``nodeid`` (``<file>::<task>::<agent>[<n>]``) of a key this session left to run
        (a task, agent and attempt of its plan not done when it started): its records and folder
        (:meth:`~pytest_homefield.run.runner.AttemptRunner.scope`); else ``None``."""
        key = attempt_key(nodeid)
        s = self.session
        if key is None or not 1 <= key[2] <= self.settings.attempts or key in s.done:
            return None
        if self._planned is None:
            self._planned = ({t.id for t in s.tasks}, {a.name for a in s.agents})
        if key[0] not in self._planned[0] or key[1] not in self._planned[1]:
            return None
        return s.runner.scope(*key)

    # -- tries (atk23 F3): an attempt an interruption cuts short leaves no line, yet --resume makes it again
    def _try_event(self, nodeid: str, event: str) -> None:
        """On the controller (or the only process), the run's ``tries.jsonl`` line for ``nodeid``
        (:class:`~pytest_homefield.run.tries_log.TryLog`)."""
        if is_worker(self.config):
            return
        if self._tries is None:
            self._tries = TryLog(tries_path(self.session.run_dir), self.session.session_start)
        self._tries.event(nodeid, event)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._try_event(nodeid, "start")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not getattr(report, REFUSED_ATTR, None):  # hatk37: a report of an item its worker is not running
            self._try_event(report.nodeid, "end")
        super().pytest_runtest_logreport(report)  # the mode's own bookkeeping of the report

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """xdist, on the controller: the worker running ``crashitem`` died. Its attempt is recorded
        (:func:`~pytest_homefield.run.retries.crash_result`): a try ``--max-retries`` counts, scored on the last."""
        s = self.session
        result = crash_result(crashitem, run_id=s.run_id, tries=s.tries, max_retries=self.settings.max_retries,
                              sandbox=s.sandbox_summary(), agents={a.name for a in s.agents})
        if result is not None:
            append_jsonl(s.results_path, result.to_dict())

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.session.release()  # the run folder's lock, should the session end before its finish

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.session
        before = f"{len(s.done)} finished before" if s.done else "none finished before"
        if self.verifying:  # what it runs is counted once collected (selected_line): -k may leave tasks out
            head = (f"homefield verify {s.run_id}: {plural(self.settings.attempts, 'attempt')} per task and agent "
                    "on the tasks selected below")
        else:
            head = (f"homefield run {s.run_id}: {plural(len(s.tasks), 'task')} × {plural(len(s.agents), 'agent')} × "
                    f"{plural(self.settings.attempts, 'attempt')} = {plural(s.n_attempts, 'attempt')} ({before}; -k, "
                    "-m or node ids may select fewer)")
        sb = s.sandbox_summary()
        named, boxed = header_agent_lines([(a.name, a.spec) for a in s.agents], sb["agents"], sb["tests"],
                                          config.option.verbose > 0)
        lines = [
            head,
            f"homefield agents: {named}",
            f"homefield results: {s.results_path.relative_to(self.settings.root)}",
        ]
        partial = partial_mine_note(HomefieldDir(self.settings.root))
        if partial:
            lines.append(f"homefield: {partial}")
        twice = None if is_worker(config) else one_change_line(s.tasks, self.settings.test_globs)  # mine48, link52
        if twice:
            lines.append(f"homefield: {twice}")
        cut = max_tasks_note(s.max_tasks)
        if cut:
            lines.append(f"homefield: {cut}")
        if s.shard is not None:
            lines.append(f"homefield shard {s.shard}: {len(s.tasks)} of the tasks"
                         + (f"; budget {self.settings.budget:.2f} USD split evenly over {s.shard.count} shards: "
                            f"{s.budget_usd:.2f} USD here" if s.budget_usd is not None else ""))
        same = [a.name for a in s.agents if isinstance(a, (OracleAgent, NoopAgent))]
        again = same_change_line(same, self.settings.attempts) \
            if len(same) == len(s.agents) else None
        if again and not self.verifying:
            lines.append(f"homefield: {again}")
        if not is_worker(config):  # the tasks' test command runs with another environment than homefield's
            cmds = dict.fromkeys(t.test_cmd or self.settings.test_cmd for t in s.tasks)
            other = next((n for n in (other_python_note(c, env=self.settings.env) for c in cmds) if n), None)
            if other:
                lines.append(other)
        if self.settings.allow_shell:
            lines.append(f"homefield: agents may run shell commands ({option('allow-shell')})")
        lines.append(f"homefield sandbox ({sb['mode']}, network {sb['network']}): {boxed}")
        if sb.get("unenforced"):
            lines.append(sb["unenforced"])
        lines += [sb[k] for k in ("no_proc_cap", "no_memory_cap", "no_cpu_share") if sb.get(k)]
        if s.excluded.get("tasks"):
            lines.append(f"homefield: {len(s.excluded['tasks'])} task(s) left out as memorized (probe of "
                         f"{', '.join(n for n, v in s.excluded['by_agent'].items() if v['tasks'])})")
        if s.flaky:
            lines.append(f"homefield: {flaky_line(count_flaky(s.flaky))}, "
                         f"from {s.home.flaky.relative_to(self.settings.root)}")
        lines.extend(self.preds_lines)
        return lines

    def status(self, report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        return unsolved_status(report)

    # -- results on the controller ------------------------------------------------------------
    def on_report(self, report: pytest.TestReport) -> None:
        forward_report(self.config, report, self.session.note_skip)

    def finish(self, session: pytest.Session) -> None:
        self.end = RunEnd() if self.dry else self.session.finish(self.reports)  # --collect-only: no report to build
        if self.session.nothing_to_resume and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK
        elif (session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and not self.session.tasks
              and self.settings.shard is not None):
            # shard38: split by each id's hash, a shard may hold no task; its folder is made, its job succeeds
            session.exitstatus = pytest.ExitCode.OK
        elif session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:  # -k / -m chose no attempt: exit 5 stays
            opt = self.config.option
            try:
                ids = [t.id for t in load_tasks(self.settings.tasks_path)]
            except (RecordError, StoreError, OSError):  # read at the start; a file changed since names no task
                ids = []
            self.selected_none = selected_none_note(str(getattr(opt, "keyword", "") or ""),
                                                    str(getattr(opt, "markexpr", "") or ""),
                                                    len(self.session.tasks), self.session.max_tasks, ids)
        if self.end.report is None:
            return
        if self.end.write_error and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # results are whole; the reports are not
        try:
            self.end.gate_failures = self.session.gate_failures(self.end.report)
        except RunError as exc:
            raise pytest.UsageError(str(exc)) from None
        if self.end.gate_failures and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _refused(self) -> list[str]:
        """The workers' refusals that stopped the run (:func:`worker_refusal`), controller only."""
        return refused_reasons(self.session.skip_reasons)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        super().pytest_sessionfinish(session, exitstatus)
        if not self.is_worker and self._refused():
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # as the controller's own refusal: exit 4

    def write_summary(self, terminalreporter: Any) -> None:
        tr, s, report = terminalreporter, self.session, self.end.report
        tr.section("homefield report", sep="=", bold=True)
        if self.selected_none:
            tr.write_line(f"homefield: {self.selected_none}", yellow=True, bold=True)
        if s.nothing_to_resume:
            tr.write_line(f"nothing to resume: every attempt of run {s.run_id} is already recorded", green=True)
        for why in self._refused():
            tr.write_line(refused_line(why), red=True, bold=True)
        if self.dry:
            tr.write_line("--collect-only: no run made, nothing recorded")
            return
        if report is None and s.interrupted:
            tr.write_line("Interrupted: the attempts that were running were stopped and not recorded; "
                          f"results so far are in {s.results_path.relative_to(self.settings.root)}", yellow=True)
            tr.write_line(self._continue_line(), yellow=True)
            return
        if report is None:
            tr.write_line(f"report failed: {self.end.error}", red=True)
            tr.write_line(f"results are kept in {s.results_path}")
            return
        width = tr._tw.fullwidth if hasattr(tr, "_tw") else 100
        attacked = [n for n in report.get("agents", {}) if str(n).startswith("attack-")]
        # verify --attacks: its table says it (issue 35); a run with attack agents prints its report
        if self.settings.attacks and attacked and self.config.get_verbosity() <= 0:
            tr.write_line(f"report of oracle and {plural(len(attacked), 'attack')} not printed "
                          f"(homefield verify {option('attacks', 'cli')} -v prints it)")
        else:
            for line, markup in self.end.text(width, self.config.get_verbosity() > 0):
                tr.write_line(line, **markup)
        for line in self.session.service_failures():  # said once, not per attempt (issue 31)
            tr.write_line(line, yellow=True)
        for line in self.gate_lines:
            tr.write_line(line, red="WORSE" in line or "gate error" in line, bold=True)
        for msg in self.end.gate_failures:
            tr.write_line(f"fail-under: {msg}", red=True, bold=True)
        if s.skip_reasons:
            tr.write_line(self._continue_line(" (same agents and attempts)"), yellow=True)
        if self.end.write_error:
            tr.write_line(f"reports not saved: {self.end.write_error}", red=True)
            return
        rel = s.run_dir.relative_to(self.settings.root)
        tr.write_line(reports_line(str(rel), s.run_id, bool(self.settings.attacks and attacked)))
        tr.write_line(f"See each attempt: homefield view {s.run_id}")  # the last line (issue 34)


def reports_line(rel: str, run_id: str, attacks: bool) -> str:
    """The line naming a run's saved reports (``rel``: its folder from the repository's root). For a ``verify
    --attacks`` run (``attacks``) it says what they hold (nu35 on pallets/markupsafe: report.md, 410 KB, opened
    with "No agent is detectably better: attack-pipe-fd-forger-aware and attack-sentinel-shape-forger tie at 33%
    pass@1 (p=1, Holm-adjusted over 946 pairs)", and neither it nor report.html holds the attacks' table or the
    verdict) and where the verdict is: below, and again from ``homefield report RUN_ID``."""
    line = f"Reports: {rel}/report.md, report.json, report.html"
    if not attacks:
        return line
    return (f"{line} (the agents' report: attack agents compared pair by pair, which says nothing of whether "
            f"grading held; the attacks' table and verdict follow, and homefield report {run_id} prints them again)")


class BaselineGate:
    """``--homefield-fail-if-worse-than RUN_ID`` (:meth:`RunReports.worse_than`):
    checked before JUnit XML is written, so the verdict is its ``homefield.gate`` property
    (``pass``, ``fail: <agents> worse than <run> (<test and family>)`` or ``error: <why>``), the test and
    its Holm family are ``homefield.gate.test``, and the verdict is also the test case ``homefield`` /
    ``gate`` (:func:`~pytest_homefield.terminal.junit.add_gate_case`); a failed gate makes the exit status 1."""

    def __init__(self, plugin: RunPlugin) -> None:
        self.plugin = plugin

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        p = self.plugin
        baseline = str(p.settings.fail_if_worse_than)
        method = ""
        try:
            lines = p.reports.worse_than([p.session.run_dir], p.session.home.run_dir(baseline),
                                         alpha=p.settings.alpha)
        except ValueError as exc:  # the report package's GateError: no such baseline, no agent in common
            p.gate_lines, verdict = [f"gate error: {exc}"], f"error: {exc}"
        else:
            p.gate_lines = [g.text for g in lines]
            worse = [g.agent for g in lines if g.worse]
            method = lines[0].method if lines else ""
            verdict = f"fail: {', '.join(worse)} worse than {baseline} ({method})" if worse else "pass"
            p.gate_lines.append(f"gate: {verdict}" if worse else f"gate: pass ({method})")
        xml = session.config.stash.get(xml_key, None)
        if xml is not None:
            xml.add_global_property("homefield.gate", verdict)
            if method:  # the test and the family (issue 32)
                xml.add_global_property("homefield.gate.test", method)
            add_gate_case(session.config, verdict, p.gate_lines)  # a test case of its own (issue 33)
        if verdict != "pass" and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def unsolved_status(report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """``pytest_report_teststatus`` of an attempt item: an xfail (not solved) is shown as ``u`` /
    ``UNSOLVED``; ``None`` (pytest's own status) for everything else."""
    if "homefield" not in report.keywords:
        return None
    if report.when == "call" and hasattr(report, "wasxfail") and report.skipped:
        return "unsolved", "u", ("UNSOLVED", {"yellow": True})
    return None


class AttemptItem(pytest.Item):
    """What an attempt item of a run or an ablation reports from its ``result`` (a :class:`Result`
    set in setup): solved passes, ``rate_limited`` is skipped with the reason, anything else is
    ``UNSOLVED`` (an xfail whose report carries only its reason), a solve flagged ``suspicious`` too
    (``unsolved: suspicious (solved, flagged: REASON)``): a pass/fail channel has no "no verdict", so it takes the
    reading a verdict of the report must survive (docs/contracts.md §10), as the gate does."""

    result: Result | None

    def runtest(self) -> None:
        result = self.result
        assert result is not None
        if result.outcome == "rate_limited":
            raise pytest.skip.Exception(f"{RATE_LIMITED}: {result.error or 'provider unavailable'}")
        if result.solved and result.suspicious:
            # counted solved in the report's rates, but a pass/fail line cannot withhold itself (contracts §10): the
            # gate counts it failed, and so do the terminal's item line and the JUnit XML (ratk48: "PASSED"); the
            # progress line, a count, counts it solved as the report does (terminal/hooks.py, cnt62)
            raise pytest.xfail.Exception(f"{UNSOLVED_PREFIX}suspicious (solved, flagged: "
                                         f"{result.suspicious_reason or 'suspicious'})")
        if not result.solved:
            raise pytest.xfail.Exception(f"{UNSOLVED_PREFIX}{result.outcome}"
                                         + (f" ({result.error})" if result.error else ""))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """An unsolved attempt reports its reason only (:func:`pytest_homefield.collect.xfail_reason`)."""
        reason = xfail_reason(excinfo)
        return reason if reason is not None else super().repr_failure(excinfo, style)


class RunItem(AttemptItem):
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
        session = self.plugin.session
        stop_refused(self, self.plugin.refusal)  # this (remote) worker lacks a client: the run stops, nothing recorded
        reason = session.stop_reason(self.agent)
        if reason:
            raise pytest.skip.Exception(reason)
        if self.plugin.settings.adaptive and self.attempt > 1:
            why = self.plugin.not_needed(self)
            reason = session.stop_reason(self.agent)  # a limit met while the round before ran
            if reason:
                raise pytest.skip.Exception(reason)
            if why:
                post(self, session.messages(not_needed_result(session.run_id, self.task.id, self.agent.name,
                                                              self.attempt, why)))
                raise pytest.skip.Exception(f"not needed: {why}")
        test_cmd = self.config.hook.pytest_homefield_test_command(task=self.task, config=self.config)
        result = self.result = session.run_attempt(self.task, self.agent, self.attempt, test_cmd=test_cmd)
        post(self, session.messages(result))  # the controller appends the line (pytest_homefield.transport)
        for key, value in (("task", result.task_id), ("subject", display_subject(self.task)), ("agent", result.agent),
                           ("attempt", result.attempt), ("outcome", result.outcome), ("cost_usd", result.cost_usd),
                           ("input_tokens", result.input_tokens), ("output_tokens", result.output_tokens),
                           ("wall_s", result.wall_s)):
            if value is not None:  # JUnit would write a missing count as the string "None"
                self.user_properties.append((f"homefield.{key}", value))
        self.user_properties.append(("homefield.result", json.dumps(result.to_dict())))
        if result.outcome == "infra":
            # an error in setup, reported as one line (no traceback: the harness, not code, failed)
            raise pytest.fail.Exception(f"homefield infra error: {result.error or 'infra'}\n"
                                        f"task: {self.task.id} {one_line(display_subject(self.task))}\n"
                                        f"artifacts: {session.artifacts(self.task, self.agent, self.attempt)}",
                                        pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield: {self.task.id} {self.agent.name}#{self.attempt}"

