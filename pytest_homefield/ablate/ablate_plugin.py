"""``--homefield-ablate FILE``: one pytest item per (variant, task, agent, attempt) (issue 14;
docs/contracts.md §2, §4, §5).

Without ``--homefield-yes`` the plugin prints the plan in the terminal summary, collects nothing,
keeps xdist from starting workers, and the session exits 0: no agent starts. With it, the
controller builds the :class:`~pytest_homefield.ablate.session.AblationSession` (ablation folder,
``plan.json``, variants) before workers start; every process collects the same items from
``plan.json`` in the session's seeded interleaved order, node ids
``.homefield/ablate/<ablate_id>/plan.json::<variant>::<task_id>::<agent>[<attempt>]``. Outcomes map
as in runs: solved → passed, scored and not solved → ``UNSOLVED`` (xfailed), infra → error, rate
limited or budget spent → skipped. The table is printed by ``pytest_terminal_summary``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.ablate.ablate_plan import build_plan, plan_lines, workers_from
from pytest_homefield.ablate.render import render_lines
from pytest_homefield.ablate.rules import load_rules, parse_rules, resolve_rules_file
from pytest_homefield.ablate.session import AblationSession, Key
from pytest_homefield.ablate.variants import UserFiles, agent_rows
from pytest_homefield.agents.registry import hook_agents, make_agents
from pytest_homefield.collect import is_worker, mark_item, redirect_collection, variant_key
from pytest_homefield.errors import AgentSpecError, RunError
from pytest_homefield.layout import HomefieldDir, new_id, tries_path
from pytest_homefield.modes import ModeFile, ModePlugin
from pytest_homefield.records import Result
from pytest_homefield.run.retries import crash_result
from pytest_homefield.run.run_plugin import (
    AttemptItem,
    forward_report,
    refuse_unstartable,
    refused_line,
    refused_reasons,
    sandbox_hook,
    setup_command_hook,
    stop_refused,
    unsolved_status,
    worker_refusal,
)
from pytest_homefield.run.runner import sandbox_summary
from pytest_homefield.run.session import RunSession, selection
from pytest_homefield.run.tries_log import TryLog
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.store import FolderLocked, append_jsonl
from pytest_homefield.terminal.progress import plural
from pytest_homefield.transport import REFUSED_ATTR, Scope, post


class PlanFile(ModeFile):
    """``plan.json`` as a collector: the session's pending attempts, in its order."""

    plugin: AblatePlugin

    def collect(self) -> Any:
        for key in self.plugin.order:
            variant, task, agent, attempt = key
            name = f"{variant}::{task}::{agent}[{attempt}]"
            item = AblateItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}", key=key)
            mark_item(item)
            yield item


class AblatePlugin(ModePlugin):
    """The ablate mode's hooks; one instance per process, created in ``pytest_configure``."""

    collector = PlanFile

    def __init__(self, config: pytest.Config, settings: Settings, rules_arg: str) -> None:
        super().__init__(config, settings)
        self.session: AblationSession | None = None
        self._order_set: set[tuple[str, str, str, int]] | None = None  # :attr:`order`, for message_scope
        self.doc: dict[str, Any] | None = None
        self.report_error = ""
        self.user_files: UserFiles | None = None
        #: (unchanged, changed) of :meth:`UserFiles.check` at the end of the session
        self.user_check: tuple[list[str], list[str]] | None = None
        self._tries: TryLog | None = None  # the ablation's tries.jsonl, once the session is made
        try:
            if is_worker(config):  # the controller's file, wherever it is (ux63: a remote host may lack it)
                sent = config.workerinput  # type: ignore[attr-defined]
                rel = str(sent["homefield_rules_file"])
                self.rules = parse_rules(str(sent["homefield_rules_text"]), Path(rel).name,
                                         by_section=settings.by_section)
            else:
                path, rel = resolve_rules_file(rules_arg, config.invocation_params.dir, settings.root)
                self.rules = load_rules(path, by_section=settings.by_section)
        except ValueError as exc:
            raise pytest.UsageError(f"--homefield-ablate: {exc}") from None
        try:
            if is_worker(config) and settings.yes:  # a remote host lacks the controller's tasks.jsonl (ops63)
                RunSession.prepare_worker(settings, config.workerinput)  # type: ignore[attr-defined]
            hooked = hook_agents(config.hook.pytest_homefield_agents(config=config))
            self.agents = make_agents(settings, hooked)
            if settings.yes and not is_worker(config):  # up60: once, before the ablation's folder, as a run does
                refuse_unstartable(self.agents, config, settings)
            #: why this (remote) worker runs nothing (:func:`~pytest_homefield.run.run_plugin.worker_refusal`)
            self.refusal = worker_refusal(self.agents, config, settings) if settings.yes else None
            chosen = selection(settings, lambda ts: config.hook.pytest_homefield_modify_tasks(tasks=ts,
                                                                                               config=config))
            tasks = chosen.tasks
            if not tasks and chosen.shard is None:  # a shard may hold none (by id hash): it runs nothing (shard39)
                raise RunError("--homefield-ablate: no tasks to run")
            rows = agent_rows(settings, rel, [(a.name, a.spec) for a in self.agents], registered=list(hooked))
        except (RunError, AgentSpecError, ValueError) as exc:
            raise pytest.UsageError(str(exc)) from None
        workers = workers_from(getattr(config.option, "numprocesses", None))
        try:
            self.plan = build_plan(settings, rel, self.rules, len(tasks), rows, workers)
        except ValueError as exc:
            raise pytest.UsageError(f"--homefield-ablate: {exc}") from None
        self.plan_only = not settings.yes
        if self.plan_only:
            if hasattr(config.option, "dist"):
                config.option.dist = "no"  # start no xdist worker: nothing runs
            return
        rules_paths = {name: path for name, _, path in rows}
        try:
            if is_worker(config):
                self.session = AblationSession.join(settings, tasks, self.agents, config.workerinput,  # type: ignore[attr-defined]
                                                    rules=self.rules, setup_command=setup_command_hook(config),
                                                    sandbox_hook=sandbox_hook(config))
            else:
                # the user's files at the paths the variants are written to, hashed before any attempt
                self.user_files = UserFiles.take(settings.root, [rel, *rules_paths.values()])
                HomefieldDir(settings.root).ensure()
                self.session = AblationSession.start(settings, tasks, self.agents, rules=self.rules, rules_file=rel,
                                                     rules_paths=rules_paths, plan=self.plan, new_id=new_id(),
                                                     setup_command=setup_command_hook(config),
                                                     sandbox_hook=sandbox_hook(config),
                                                     shard_of=[t.id for t in chosen.every] if chosen.shard else None,
                                                     cut_from=chosen.cut_from)
        except FolderLocked as exc:  # another session runs this ablation: exit 2, one line
            pytest.exit(str(exc), returncode=2)
        except (RunError, OSError) as exc:
            raise pytest.UsageError(str(exc)) from None
        self.order = self.session.pending()
        redirect_collection(config, self.session.collect_path)

    def active(self) -> AblationSession | None:
        return self.session

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """xdist, on the controller: the worker running ``crashitem`` died; its attempt is recorded as a
        run's is (:func:`~pytest_homefield.run.retries.crash_result`)."""
        s = self.session
        if s is None:
            return
        result = crash_result(crashitem, run_id=s.ablate_id, tries=s.tries, max_retries=self.settings.max_retries,
                              sandbox=sandbox_summary(self.settings, self.agents), agents={a.name for a in self.agents})
        if result is not None:
            append_jsonl(s.results_path, result.to_dict())

    # -- tries (atk23 F3, as the run plugin logs them): a variant's attempt an interruption cuts short leaves
    # no line, yet --resume makes it again
    def _try_event(self, nodeid: str, event: str) -> None:
        """On the controller (or the only process), the ablation's ``tries.jsonl`` line for ``nodeid``, with its
        variant (:class:`~pytest_homefield.run.tries_log.TryLog`)."""
        s = self.session
        if self.is_worker or s is None:
            return
        if self._tries is None:
            self._tries = TryLog(tries_path(s.ablate_dir), s.session_start)
        self._tries.event(nodeid, event, variant=True)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._try_event(nodeid, "start")

    def message_scope(self, nodeid: str) -> Scope | None:
        """The item ``nodeid`` (``<plan>::<variant>::<task>::<agent>[<n>]``) of a key this session left to run
        (:attr:`order`): its records and folder (:meth:`~pytest_homefield.run.runner.AttemptRunner.scope`)."""
        key = variant_key(nodeid)
        if self.session is None or key is None:
            return None
        if self._order_set is None:
            self._order_set = set(self.order)
        if key not in self._order_set:
            return None
        variant, task, agent, attempt = key
        return self.session.runner.scope(task, agent, attempt, variant)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not getattr(report, REFUSED_ATTR, None):  # hatk37: a report of an item its worker is not running
            self._try_event(report.nodeid, "end")
        super().pytest_runtest_logreport(report)  # the mode's own bookkeeping of the report (the hook rule)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.session is not None:
            self.session.release()  # the ablation folder's lock, should the session end before its finish

    def resume_hint(self) -> str | None:
        """The command continuing this ablation (same agents and attempts)."""
        s = self.session
        return None if s is None else (f"homefield ablate {s.rules_file} {option('yes', 'cli')} "
                                       f"{option('resume', 'cli')} {option('run-id', 'cli')} {s.ablate_id}")

    def item_subject(self, nodeid: str) -> str:
        """The task's subject for the item ``nodeid`` (``""`` when unknown)."""
        parts = nodeid.split("::")
        if self.session is None or len(parts) < 4:
            return ""
        task = next((t for t in self.session.tasks if t.id == parts[2]), None)
        return task.subject if task else ""

    def item_label(self, nodeid: str) -> str:
        """``<variant> <task> <agent>[<attempt>] <subject>`` for the progress line."""
        return " ".join(nodeid.split("::")[1:] + [self.item_subject(nodeid)]).strip()

    def expected_items(self) -> int:
        """This session's attempts (none in plan-only mode)."""
        return 0 if self.plan_only or self.session is None else len(self.order)

    # -- plan only --------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if not self.plan_only:
            return None
        session.items = []
        session.testscollected = 0
        return True

    # -- collection -------------------------------------------------------------------------------
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if self.plan_only or self.session is None:
            return []
        s = self.session
        lines = [f"homefield ablate {s.ablate_id}: phase {s.phase}, {plural(len(self.order), 'attempt')} to run "
                 f"({len(s.done)} already finished)"]
        if s.shard is not None:
            budget = self.settings.budget
            lines.append(f"homefield shard {s.shard}: {len(s.tasks)} of the tasks"
                         + ("; it holds none (a task's shard is its id's hash): it runs nothing, and its folder "
                            "counts as that shard in the merge" if not s.tasks else "")
                         + (f"; budget {budget:.2f} USD split evenly over {s.shard.count} shards: "
                            f"{s.budget_usd:.2f} USD here" if budget is not None and s.budget_usd is not None else ""))
        if not s.done:
            lines += plan_lines(self.plan, will_run=True)
        lines.append(f"homefield results: {s.results_path.relative_to(self.settings.root)}")
        sb = sandbox_summary(self.settings, self.agents, hooked=s.sandbox_hook is not None)
        lines += [sb[k] for k in ("unenforced", "no_proc_cap", "no_memory_cap", "no_cpu_share") if sb.get(k)]
        return lines

    def status(self, report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        return unsolved_status(report)

    def on_report(self, report: pytest.TestReport) -> None:
        if self.session is not None:
            forward_report(self.config, report, self.session.note_skip)

    def _refused(self) -> list[str]:
        """The workers' refusals that stopped the ablation (controller only)."""
        return [] if self.session is None else refused_reasons(self.session.skip_reasons)

    def finish(self, session: pytest.Session) -> None:
        if self.plan_only:
            if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
                session.exitstatus = pytest.ExitCode.OK
            return
        if self.session is None:
            return
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # nothing left to run: the table is still printed
        try:
            self.doc = self.session.finish()
        except Exception as exc:  # the table must never lose the results: they are on disk
            self.report_error = f"{type(exc).__name__}: {exc}"
        finally:
            self.session.release()
        if self.user_files is not None:
            self.user_check = self.user_files.check()
            if self.user_check[1]:  # the user's file changed during the session: an error, whatever ran
                session.exitstatus = USER_FILE_CHANGED
        if self._refused() and session.exitstatus != USER_FILE_CHANGED:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # as the controller's own refusal: exit 4 (ops62)

    def write_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        if self.plan_only:
            tr.section("homefield ablate: plan", sep="=", bold=True)
            for line in plan_lines(self.plan, will_run=False):
                tr.write_line(line)
            return
        s = self.session
        if s is None:
            return
        tr.section("homefield ablation", sep="=", bold=True)
        for why in self._refused():
            tr.write_line(refused_line(why, "ablation"), red=True, bold=True)
        if self.doc is None:
            tr.write_line(f"table failed: {self.report_error or 'no results'}", red=True)
            tr.write_line(f"results are kept in {s.results_path}")
            self._write_user_check(tr)
            return
        width = tr._tw.fullwidth if hasattr(tr, "_tw") else 120
        for line, markup in render_lines(self.doc, width=width):
            tr.write_line(line, **markup)
        rel = s.ablate_dir.relative_to(self.settings.root)
        tr.write_line(f"Reports: {rel}/report.md, report.json, report.html")
        self._write_user_check(tr)
        cmd = (f"homefield ablate {s.rules_file} {option('yes', 'cli')} {option('resume', 'cli')} "
               f"{option('run-id', 'cli')} {s.ablate_id} (same agents and attempts)")
        if s.skip_reasons:
            tr.write_line(f"Continue the ablation with: {cmd}", yellow=True)
        elif s.phase == "slim":
            tr.write_line(f"Measure the slimmer file with: {cmd}", yellow=True)
        elif s.phase == "merge":
            tr.write_line(f"Shard {s.shard} is done; merge the shards' ablation folders with: homefield ablate "
                          f"{s.rules_file} --merge DIR… (each DIR a .homefield/ablate/<id>/ folder)", yellow=True)

    def _write_user_check(self, tr: Any) -> None:
        """What the comparison of the user's files (:class:`UserFiles`) found: "your FILE was not
        changed" with the hashes, or one red ``CHANGED:`` line per file (the session then exits
        :data:`USER_FILE_CHANGED`)."""
        if self.user_check is None or self.session is None:
            return
        same, changed = self.user_check
        name = Path(self.session.rules_file).name
        if not changed:
            tr.write_line(f"your {name} was not changed: " + "; ".join(same))
            return
        for line in changed:
            tr.write_line(f"CHANGED: {line} (homefield writes only its snapshots; find what else wrote it)", red=True)


#: The exit status of an ablation session during which a user's file it checks changed (pytest's
#: "internal error": the session's own check failed; ``homefield ablate`` then stops there).
USER_FILE_CHANGED = int(pytest.ExitCode.INTERNAL_ERROR)


class AblateItem(AttemptItem):
    """One attempt of one variant. A plain ``pytest.Item``: the repository's fixtures never wrap it."""

    def __init__(self, *, key: Key, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key
        self.result: Result | None = None
        self.extra_keyword_matches.update({key[0], key[1], key[2], "homefield"})

    @property
    def plugin(self) -> AblatePlugin:
        return self.parent.plugin  # type: ignore[union-attr,no-any-return]

    def setup(self) -> None:
        session = self.plugin.session
        assert session is not None
        stop_refused(self, self.plugin.refusal)  # this (remote) worker lacks a client: nothing runs or is recorded
        reason = session.stop_reason(self.key[2])
        if reason:
            raise pytest.skip.Exception(reason)
        task = next(t for t in session.tasks if t.id == self.key[1])
        test_cmd = self.config.hook.pytest_homefield_test_command(task=task, config=self.config)
        result = self.result = session.run(self.key, test_cmd=test_cmd)
        post(self, session.messages(result))  # the controller appends the line (pytest_homefield.transport)
        for k, v in (("variant", result.variant), ("task", result.task_id), ("agent", result.agent),
                     ("attempt", result.attempt), ("outcome", result.outcome), ("cost_usd", result.cost_usd),
                     ("wall_s", result.wall_s)):
            self.user_properties.append((f"homefield.{k}", v))
        self.user_properties.append(("homefield.result", json.dumps(result.to_dict())))
        if result.outcome == "infra":
            raise pytest.fail.Exception(f"homefield infra error: {result.error or 'infra'}", pytrace=False)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        v, t, a, n = self.key
        return self.path, None, f"homefield: {v} {t} {a}#{n}"
