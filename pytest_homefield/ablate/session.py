"""One process's view of an ablation, without pytest (issue 14; docs/contracts.md §4, §5, §8).

The folder ``.homefield/ablate/<ablate_id>/`` has a run's layout plus the variants::

    meta.json            as a run's, plus kind "ablate", rules_file, rules_digest, by_section, seed
    plan.json            the frozen plan: rules, variants (name, removed, digest), agents and the path
                         each reads its rules from, task ids, attempts, seed, estimate; the file the
                         pytest items are collected from
    results.jsonl        one line per finished attempt, ``variant`` set
    variants/<variant>/<file name>                 the text the attempts of that variant saw
    variants/<variant>/attempts/<task>/<agent>/<n>/ the attempt's artifacts
    report.md, report.json, report.html, suggested-<file name>

Phases: first base and one variant per rule (``rules``); when every one of those attempts is
finished and scored, the slimmer file (``slim``), decided from the table then and frozen in
``plan.json``; then ``done``. A session runs the attempts of its phase that are not finished yet,
so ``--resume`` never redoes a finished attempt, and retries unscored ones.

Shards (``--shard K/N``): a session runs base and the per-rule variants on its shard's tasks (split
by id as a run splits them); its ``meta.json`` says ``shard``, a ``--budget`` is split evenly, and
once its per-rule attempts are in, its phase is ``merge``: the slimmer file is decided from every
task's results, after ``homefield ablate FILE --merge DIR…`` (:mod:`pytest_homefield.ablate.ablate_shards`)
made one ablation of the shards (also ``merge`` while shards are missing). That merged ablation
measures the slimmer file on one machine with ``--resume --run-id``, or again sharded: each machine
resumes a copy of it with ``--shard K/N`` and the copies are merged once more. Order: a seeded
interleaving in rounds of one attempt each, tasks shuffled, and every (variant, agent) of a task
shuffled and run together, so drift over time falls on all variants alike.

What a run does is reused, not copied: the run's :class:`~pytest_homefield.run.runner.AttemptRunner`
runs each attempt with the settings a run's attempt gets (the agent's limits, the sandbox and its
hook, the commit's environment, the frozen flaky ids) and stops at the budget or a rate limit; the
ablation adds only the variant's rules file around the agent
(:class:`~pytest_homefield.ablate.variants.RulesFileAgent`) and the variant's folder as the
attempt's ``run_dir``. Results reach ``results.jsonl`` through the controller
(:mod:`pytest_homefield.transport`), as a run's do. A ``RunSession`` itself is not used: it owns a
``runs/<run_id>`` folder and one item per (task, agent, attempt), where an ablation has its own
folder and a variant in every key.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import random
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.ablate.ablate_plan import AblationPlan
from pytest_homefield.ablate.render import render_html, render_json, render_markdown, report_doc
from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.ablate.table import AgentTable, build_tables, slim_keep
from pytest_homefield.ablate.variants import SLIM, RulesFileAgent, Variant, rule_variants, slim_variant
from pytest_homefield.agents.base import Agent
from pytest_homefield.errors import RecordError, RunError, StoreError
from pytest_homefield.layout import HomefieldDir, read_json_file, read_meta, write_meta
from pytest_homefield.records import SCORED_OUTCOMES, Result, Task, load_results, tasks_digest
from pytest_homefield.report.runs import cut_short_by_key
from pytest_homefield.run.attempt import latest_results, run_attempt
from pytest_homefield.run.bookkeeping import build_meta, check_resume, pick_run_id
from pytest_homefield.run.flaky import freeze_flaky, frozen_flaky
from pytest_homefield.run.retries import TryKey, spent, unscored_tries
from pytest_homefield.run.runner import AttemptRunner, SandboxHook, check_sandbox, stopped_for
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.shard import SPLIT, Shard, old_split_refusal, parse_shard
from pytest_homefield.store import FolderLock, read_jsonl, write_atomic
from pytest_homefield.transport import Message

__all__ = ["AblationSession", "Key", "PHASE_RULES", "PHASE_SLIM", "PHASE_DONE", "PHASE_MERGE", "interleaved"]

PHASE_RULES, PHASE_SLIM, PHASE_DONE, PHASE_MERGE = "rules", "slim", "done", "merge"

#: (variant, task id, agent name, attempt from 1)
Key = tuple[str, str, str, int]


def interleaved(variants: Sequence[str], task_ids: Sequence[str], agents: Sequence[str], attempts: int,
                seed: int) -> list[Key]:
    """Every key in the seeded interleaved order (module docstring); the same on every process."""
    rng = random.Random(seed)
    order: list[Key] = []
    for attempt in range(1, attempts + 1):
        tasks = list(task_ids)
        rng.shuffle(tasks)
        for task in tasks:
            combos = [(v, a) for v in variants for a in agents]
            rng.shuffle(combos)
            order += [(v, task, a, attempt) for v, a in combos]
    return order


def seed_of(ablate_id: str) -> int:
    """The ablation's shuffle seed: the first 32 bits of SHA-256 of its id (the same on every machine)."""
    return int(hashlib.sha256(ablate_id.encode()).hexdigest()[:8], 16)


def read_records(results: Path) -> list[dict[str, Any]]:
    """The ablation's result records, every line validated (:func:`pytest_homefield.records.load_results`:
    a torn line is skipped, any other bad line raises :class:`RecordError` naming file, line and field)."""
    load_results(results)
    return list(read_jsonl(results))


def done_keys(results: Path, max_retries: int | None = None) -> set[Key]:
    """Keys ``(variant, task_id, agent, attempt)`` of the scored attempts in ``results``; with
    ``max_retries``, also those recorded unscored more than ``max_retries`` times (``--max-retries`` is
    spent: the rule of a run, :mod:`pytest_homefield.run.retries`; docs/contracts.md §8)."""
    records = read_records(results)
    done = {(v, t, a, n) for (t, a, n, v), r in latest_results(records).items() if r.get("outcome") in SCORED_OUTCOMES}
    if max_retries is not None:
        done |= {(v, t, a, n) for t, a, n, v in spent(unscored_tries(results), max_retries)}
    return done


def read_frozen_plan(path: Path) -> dict[str, Any]:
    """A resumed ablation's ``plan.json`` (``{}`` when absent). Raises :class:`RunError` (one line
    naming the file) when it cannot be read or is not a JSON object with a list of ``variants``."""
    plan = read_json_file(path)
    if plan is None:
        return {}
    variants = plan.get("variants", []) if isinstance(plan, dict) else None
    if not isinstance(variants, list) or not all(
            isinstance(v, dict) and isinstance(v.get("name"), str) and isinstance(v.get("removed", []), list)
            for v in variants):
        raise RunError(f"{path}: field 'variants' must be a list of {{name, removed}} objects")
    return dict(plan)


def utc_now() -> str:
    """Now, UTC, ISO 8601 to the millisecond."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class AblationSession:
    """The ablation as one process sees it. Build with :meth:`start` (controller) or :meth:`join`
    (xdist worker, from :meth:`workerinput`)."""

    settings: Settings
    tasks: list[Task]
    agents: list[Agent]
    rules: RuleSet
    rules_file: str
    rules_paths: dict[str, str]
    ablate_dir: Path
    variants: list[Variant]
    phase: str
    done: set[Key]
    session_start: str
    seed: int
    digest: str
    slim_alias: str | None = None
    estimate: dict[str, Any] = field(default_factory=dict)
    setup_command: Callable[[Task], str | None] = lambda task: None
    skip_reasons: set[str] = field(default_factory=set)
    shard: Shard | None = None
    incomplete: list[str] = field(default_factory=list)
    #: frozen flaky PASS_TO_PASS ids, {task id: [test ids]}, left out of every variant's regression check
    #: (``meta.json`` ``flaky_p2p``, as a run freezes them: pytest_homefield.run.flaky)
    flaky: dict[str, list[str]] = field(default_factory=dict)
    #: the ``pytest_homefield_sandbox`` hook (``None`` when nothing implements it): it wraps every agent
    sandbox_hook: SandboxHook | None = None
    #: unscored tries per (task, agent, attempt, variant) before this session (``--max-retries``, run/retries.py)
    tries: dict[TryKey, int] = field(default_factory=dict)
    #: on a worker: the controller's pack of the tasks' parent trees (``workerinput`` ``homefield_pack``, ops41)
    pack_offer: dict[str, Any] | None = None
    _runner: AttemptRunner | None = None
    #: the ablation folder's lock (the controller's, set by :meth:`start`; ``None`` in a worker)
    lock: FolderLock | None = None

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def start(cls, settings: Settings, tasks: list[Task], agents: list[Agent], *, rules: RuleSet, rules_file: str,
              rules_paths: Mapping[str, str], plan: AblationPlan, new_id: str,
              setup_command: Callable[[Task], str | None] = lambda task: None,
              sandbox_hook: SandboxHook | None = None, shard_of: Sequence[str] | None = None,
              cut_from: int | None = None) -> AblationSession:
        """The controller's session: refuse agents or test runs that need bubblewrap where it does not
        work, as a run does (:func:`~pytest_homefield.run.runner.check_sandbox`; not with a
        ``sandbox_hook``), pick the ablation id (new, ``--run-id``, or the one to resume), lock its
        folder for the session (:class:`~pytest_homefield.store.FolderLock`: raises
        :class:`~pytest_homefield.store.FolderLocked` when another session holds it), check a
        resumed one against its ``meta.json`` (agents, attempts, tasks, the rules file's text and
        splitting), write ``meta.json``, the variants and ``plan.json``, and choose the phase. ``shard_of``:
        the ids a ``--shard`` split, frozen into a new shard's ``meta.json`` (what a merge checks its
        ``task_ids`` against, hatk36); ``cut_from``: how many tasks ``--max-tasks`` chose from
        (:attr:`~pytest_homefield.run.session.TaskSelection.cut_from`), frozen into a new ablation's ``meta.json``
        as ``max_tasks`` ``{n, of}``, as a run's (what a merge derives a shard's share of ``tasks.jsonl`` from,
        :func:`pytest_homefield.shard.left_out`; shard39). Raises :class:`RunError`."""
        check_sandbox(settings, agents, hooked=sandbox_hook is not None)
        root = HomefieldDir(settings.root).ablate
        ablate_id = pick_run_id(root, run_id=settings.run_id, resume=settings.resume, new_id=new_id)
        created = not (root / ablate_id).exists()
        lock = FolderLock.take(root / ablate_id, f"ablation {ablate_id}")
        try:
            session = cls._start(settings, tasks, agents, rules=rules, rules_file=rules_file,
                                 rules_paths=rules_paths, plan=plan, ablate_id=ablate_id,
                                 setup_command=setup_command, sandbox_hook=sandbox_hook, shard_of=shard_of,
                                 cut_from=cut_from)
        except BaseException:
            lock.release()
            if created:  # nothing but the lock file
                shutil.rmtree(root / ablate_id, ignore_errors=True)
            raise
        session.lock = lock
        return session

    @classmethod
    def _start(cls, settings: Settings, tasks: list[Task], agents: list[Agent], *, rules: RuleSet, rules_file: str,
               rules_paths: Mapping[str, str], plan: AblationPlan, ablate_id: str,
               setup_command: Callable[[Task], str | None], sandbox_hook: SandboxHook | None,
               shard_of: Sequence[str] | None = None, cut_from: int | None = None) -> AblationSession:
        """:meth:`start` once the ablation's folder is locked."""
        root = HomefieldDir(settings.root).ablate
        start = utc_now()
        digest = tasks_digest(settings.tasks_path)
        text = rules.render()
        rules_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        ablate_dir = root / ablate_id
        frozen: dict[str, Any] = {}
        shard = parse_shard(settings.shard)
        if settings.resume:
            meta = read_meta(ablate_dir, complete=True)
            if meta.get("kind") != "ablate":
                raise RunError(f"{option('resume')}: {ablate_dir} is not an ablation")
            if meta.get("rules_digest") != rules_digest or bool(meta.get("by_section")) != rules.by_section:
                raise RunError(f"{option('resume')}: {rules_file} (or {option('by-section')}) changed since ablation "
                               f"{ablate_id} started; start a new ablation")
            # a merged ablation may be resumed as shards (the slimmer file measured per machine): each
            # selects its part of the merged ablation's tasks
            as_shard = shard is not None and bool(meta.get("merged_from"))
            if meta.get("shard") != (str(shard) if shard else None) and not as_shard:
                raise RunError(f"{option('resume')}: ablation {ablate_id} is shard {meta.get('shard') or 'none'}; "
                               f"flags give {shard or 'none'}")
            old = None if as_shard else old_split_refusal(f"{option('resume')}: ablation {ablate_id}", meta)
            if old is not None:  # shard38: its tasks are another split's share
                raise RunError(old)
            expected = dict(meta)
            if as_shard and shard is not None:
                part = shard.select(str(t) for t in meta.get("task_ids", []))
                expected["task_ids"] = [t for t in meta.get("task_ids", []) if t in part]
            check_resume(expected, agents=agents, attempts=settings.attempts, tasks_digest=digest,
                         task_ids=[t.id for t in tasks])
            meta["shard"] = str(shard) if shard else None
            if shard:
                meta["split"] = SPLIT
            meta["cut_short"] = None
            meta.setdefault("resumed_at", []).append(start)
            frozen = read_frozen_plan(ablate_dir / "plan.json")
            flaky = frozen_flaky(meta)
        else:
            meta = build_meta(run_id=ablate_id, agents=agents, attempts=settings.attempts, tasks_digest=digest,
                              task_ids=[t.id for t in tasks], created_at=start, settings=settings)
            meta.update(kind="ablate", rules_file=rules_file, rules_digest=rules_digest,
                        by_section=rules.by_section, seed=seed_of(ablate_id), shard=str(shard) if shard else None)
            if shard:
                meta["split"] = SPLIT
            if shard and shard_of is not None:
                meta["shard_of"] = list(shard_of)
            if cut_from is not None and settings.run_max_tasks is not None:
                meta["max_tasks"] = {"n": settings.run_max_tasks, "of": cut_from}
            flaky = freeze_flaky(meta, HomefieldDir(settings.root).flaky, tasks)
        try:
            # before meta.json is written: a bad record changes nothing
            done = done_keys(ablate_dir / "results.jsonl", settings.max_retries)
            tries = unscored_tries(ablate_dir / "results.jsonl")
            ablate_dir.mkdir(parents=True, exist_ok=True)
            write_meta(ablate_dir, meta)
        except (RecordError, StoreError) as exc:
            raise RunError(str(exc)) from None
        variants = rule_variants(rules)
        session = cls(settings, tasks, agents, rules, rules_file, dict(rules_paths), ablate_dir, variants,
                      PHASE_RULES, done, start, int(meta.get("seed", seed_of(ablate_id))), digest,
                      setup_command=setup_command, shard=shard, flaky=flaky, sandbox_hook=sandbox_hook,
                      tries=tries)
        frozen_slim = next((v for v in frozen.get("variants", []) if v.get("name") == SLIM), None)
        if frozen_slim is not None:
            session.variants.append(Variant(SLIM, tuple(frozen_slim["removed"]),
                                            rules.render(frozen_slim["removed"])))
        session.estimate = plan.to_dict()
        session._choose_phase()
        for v in session.variants:
            write_atomic(session.variant_file(v.name), v.text)
        session._write_plan()
        return session

    @classmethod
    def join(cls, settings: Settings, tasks: list[Task], agents: list[Agent], workerinput: Mapping[str, Any], *,
             rules: RuleSet, setup_command: Callable[[Task], str | None] = lambda task: None,
             sandbox_hook: SandboxHook | None = None) -> AblationSession:
        """A worker's session: the controller's frozen variants (read back from ``variants/``) and
        choices. The ablation's folder is this host's ``.homefield/ablate/<ablate_id>/`` (the controller's on a shared
        file system; a remote host's own, where its attempts' files are made and sent back), its ``plan.json`` (the
        file the items are collected from) written there from the controller's text when missing, the variants'
        texts the controller's (ops63: a remote worker read them at the controller's path, failed at start-up and
        was replaced without end). Raises :class:`RunError` when ``tasks.jsonl`` changed since the controller
        read it."""
        digest = tasks_digest(settings.tasks_path)
        if workerinput["homefield_tasks_digest"] != digest:
            raise RunError("pytest-homefield: tasks.jsonl changed while the ablation was starting "
                           f"(or this host's {settings.tasks_path} differs from the controller's)")
        ablate_dir = HomefieldDir(settings.root).ablate / Path(workerinput["homefield_ablate_dir"]).name
        plan = ablate_dir / "plan.json"
        if not plan.exists():
            ablate_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(plan, str(workerinput["homefield_plan_text"]))
        rules_file = str(workerinput["homefield_rules_file"])
        variants = [Variant(v["name"], tuple(v["removed"]), str(v["text"])) for v in workerinput["homefield_variants"]]
        session = cls(settings, tasks, agents, rules, rules_file, dict(workerinput["homefield_rules_paths"]),
                   ablate_dir, variants, str(workerinput["homefield_phase"]),
                   {(str(v), str(t), str(a), int(n)) for v, t, a, n in workerinput["homefield_done"]},
                   str(workerinput["homefield_session_start"]), int(workerinput["homefield_seed"]), digest,
                   slim_alias=workerinput.get("homefield_slim_alias"), setup_command=setup_command,
                   shard=parse_shard(settings.shard), flaky=dict(workerinput.get("homefield_flaky") or {}),
                   sandbox_hook=sandbox_hook,
                   tries={(str(t), str(a), int(n), str(v)): int(c)
                          for t, a, n, v, c in workerinput.get("homefield_tries", [])},
                   pack_offer=workerinput.get("homefield_pack"))
        session.runner.take_offer()  # before any attempt of the session (xdist schedules after every worker joined)
        return session

    def workerinput(self) -> dict[str, Any]:
        """What a worker needs to :meth:`join` (JSON-able: with the variants' texts, the rules file's text and path
        relative to the repository (the worker splits that text, never reads its own checkout's file: ux63), the
        text of ``plan.json`` and of ``tasks.jsonl`` for
        :meth:`~pytest_homefield.run.session.RunSession.prepare_worker`, which a remote worker's host lacks,
        ops63), with the pack of the tasks' parent trees the workers of this host take rather
        than each packing them (:meth:`AttemptRunner.pack_offer`, ops41)."""
        return {
            "homefield_pack": self.runner.pack_offer(),
            "homefield_ablate_dir": str(self.ablate_dir),
            "homefield_plan_text": self.plan_path.read_text(encoding="utf-8"),
            "homefield_tasks_text": self.settings.tasks_path.read_text(encoding="utf-8"),
            "homefield_rules_file": self.rules_file,
            "homefield_rules_text": self.rules.render(),  # a remote host may lack the file (ux63)
            "homefield_rules_paths": self.rules_paths,
            "homefield_variants": [{"name": v.name, "removed": list(v.removed), "text": v.text}
                                   for v in self.variants],
            "homefield_phase": self.phase,
            "homefield_done": sorted(list(k) for k in self.done),
            "homefield_session_start": self.session_start,
            "homefield_seed": self.seed,
            "homefield_tasks_digest": self.digest,
            "homefield_slim_alias": self.slim_alias,
            "homefield_flaky": self.flaky,
            "homefield_tries": sorted([*k, c] for k, c in self.tries.items()),
        }

    # -- paths -------------------------------------------------------------------------------------
    @property
    def ablate_id(self) -> str:
        return self.ablate_dir.name

    @property
    def results_path(self) -> Path:
        return self.ablate_dir / "results.jsonl"

    @property
    def plan_path(self) -> Path:
        """``plan.json``: the file the items are collected from (docs/contracts.md §5)."""
        return self.ablate_dir / "plan.json"

    @property
    def collect_path(self) -> Path:
        """:attr:`plan_path` (the mode contract's name for it)."""
        return self.plan_path

    def variant_file(self, variant: str) -> Path:
        """``variants/<variant>/<rules file name>``: the text the variant's attempts saw."""
        return self.ablate_dir / "variants" / variant / Path(self.rules_file).name

    @property
    def suggested_path(self) -> Path:
        """``suggested-<rules file name>``: the slimmer file."""
        return self.ablate_dir / f"suggested-{Path(self.rules_file).name}"

    # -- phases ------------------------------------------------------------------------------------
    def _keys(self, variants: Sequence[str]) -> list[Key]:
        return interleaved(variants, [t.id for t in self.tasks], [a.name for a in self.agents],
                           self.settings.attempts, self.seed)

    def _rule_variant_names(self) -> list[str]:
        return [v.name for v in self.variants if v.name != SLIM]

    def tables(self) -> list[AgentTable]:
        """The per-agent tables from the results so far."""
        slim = self.slim_variant
        records: list[dict[str, Any]] = read_records(self.results_path)
        if self.slim_alias:  # the slimmer file is one rule's variant: its results are the slim ones
            records += [{**r, "variant": SLIM} for r in records if r.get("variant") == self.slim_alias]
        tables = build_tables(records, self.rules, [a.name for a in self.agents], slim=slim,
                              attempts=self.settings.attempts, cut=cut_short_by_key([self.ablate_dir]))
        owed = self._keys(self._rule_variant_names())  # skipped attempts have no record, yet they count
        scored = done_keys(self.results_path)
        for table in tables:
            mine = [k for k in owed if k[2] == table.agent]
            k = sum(1 for key in mine if key in scored)
            table.incomplete = f"incomplete: {k} of {len(mine)} scored" if k < len(mine) else None
        return tables

    @property
    def slim_variant(self) -> Variant | None:
        return next((v for v in self.variants if v.name == SLIM), None)

    @property
    def rules_complete(self) -> bool:
        """Every base and per-rule attempt is finished and scored."""
        return all(k in self.done for k in self._keys(self._rule_variant_names()))

    def _choose_phase(self) -> None:
        if not self.rules_complete:
            self.phase = PHASE_RULES
            return
        slim = self.slim_variant
        if slim is None and (self.shard is not None or self.incomplete):
            self.phase = PHASE_MERGE  # the slimmer file is decided over every task's results, after the merge
            return
        if slim is None:
            slim = slim_variant(self.rules, slim_keep(self.tables()))
            if slim is None:
                self.phase = PHASE_DONE
                return
            self.variants.append(slim)
        if len(slim.removed) == 1:
            self.slim_alias = f"rule-{slim.removed[0]}"
            self.phase = PHASE_DONE
            return
        self.phase = PHASE_SLIM if any(k not in self.done for k in self._keys([SLIM])) else PHASE_DONE

    def pending(self) -> list[Key]:
        """This session's attempts still to run, in order."""
        if self.phase == PHASE_RULES:
            keys = self._keys(self._rule_variant_names())
        elif self.phase == PHASE_SLIM:
            keys = self._keys([SLIM])
        else:
            keys = []
        return [k for k in keys if k not in self.done]

    def _write_plan(self) -> None:
        doc = {
            "schema_version": 1,
            "ablate_id": self.ablate_id,
            "rules_file": self.rules_file,
            "by_section": self.rules.by_section,
            "seed": self.seed,
            "attempts": self.settings.attempts,
            "phase": self.phase,
            "rules": [{"number": r.number, "kind": r.kind, "label": r.label, "lines": [r.start + 1, r.end],
                       "heading": r.heading} for r in self.rules.rules],
            "variants": [v.to_dict() for v in self.variants],
            "agents": [{"name": a.name, "spec": a.spec, "rules_path": self.rules_paths[a.name]} for a in self.agents],
            "task_ids": [t.id for t in self.tasks],
            "estimate": self.estimate,
        }
        write_atomic(self.plan_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")

    # -- running -----------------------------------------------------------------------------------
    @property
    def runner(self) -> AttemptRunner:
        """This process's :class:`~pytest_homefield.run.runner.AttemptRunner` (made on first use): a
        run's attempts, each variant's in ``variants/<variant>/``, stopped by this session's
        :attr:`budget_usd` (split among the agents) and each agent's own rate limit."""
        if self._runner is None:
            self._runner = AttemptRunner(
                self.settings, self.agents, run_id=self.ablate_id, results=self.results_path,
                folder=lambda variant: self.ablate_dir / "variants" / variant, session_start=self.session_start,
                budget_usd=self.budget_usd, setup_command=self.setup_command, sandbox_hook=self.sandbox_hook,
                flaky=self.flaky, tries=self.tries, tasks=self.tasks, pack_offer=self.pack_offer,
                attempt=run_attempt)  # looked up at first use: a test substitutes it
        return self._runner

    @property
    def budget_usd(self) -> float | None:
        """The ``--budget`` (USD) this session may spend: with ``--shard K/N`` its even part."""
        return self.shard.split_budget(self.settings.budget) if self.shard else self.settings.budget

    def stop_reason(self, agent: str) -> str | None:
        """Why no further attempt of ``agent`` (a name) may start: the run's one stop rule
        (:class:`~pytest_homefield.run.runner.RunLimits`) over this ablation's ``results.jsonl``
        (``"rate limited: …"`` after that agent's rate limit in this session, ``"budget spent: <agent>: S
        of B USD …"`` once its share of ``--budget`` is spent), else ``None``: one agent's claims stop no
        other (atk11 A1)."""
        return self.runner.limits.stop_reason(agent)

    def run(self, key: Key, *, test_cmd: str | None = None) -> Result:
        """Run and grade one attempt with its variant's text as the agent's rules file
        (:meth:`AttemptRunner.run`). Never raises for agent, snapshot or grading failures; its line
        is written by the controller from :meth:`messages`."""
        variant, task_id, agent_name, attempt = key
        task = next(t for t in self.tasks if t.id == task_id)
        agent = next(a for a in self.agents if a.name == agent_name)
        text = next(v.text for v in self.variants if v.name == variant)
        reads = RulesFileAgent(agent, self.rules_paths[agent.name], text, also=[self.rules_file])
        spec = self.runner.spec(task, reads, attempt, variant=variant, test_cmd=test_cmd)  # type: ignore[arg-type]
        return self.runner.run(spec)

    def messages(self, result: Result) -> list[Message]:
        """What the item posts for the controller to write: the result line (``results.jsonl``)."""
        return self.runner.messages(result)

    def note_skip(self, message: str) -> None:
        """Remember a skipped item's message when it stopped for the budget or a rate limit (the
        ablation is then cut short)."""
        reason = stopped_for(message)
        if reason is not None:
            self.skip_reasons.add(reason)

    def close(self) -> None:
        """Delete this process's snapshots."""
        if self._runner is not None:
            self._runner.close()

    def release(self) -> None:
        """Let the ablation folder's lock go (the controller, at the end; idempotent)."""
        if self.lock is not None:
            self.lock.release()

    # -- the end -----------------------------------------------------------------------------------
    def finish(self) -> dict[str, Any]:
        """The controller's end of a session: ``cut_short`` in ``meta.json`` when attempts were skipped,
        the tables, the slimmer file (``suggested-<name>``) once the per-rule results are complete, and
        ``report.{md,json,html}``. Returns the report document (:func:`report_doc`)."""
        meta = read_meta(self.ablate_dir)
        if self.skip_reasons:
            meta["cut_short"] = "; ".join(sorted(self.skip_reasons))
        self.done = done_keys(self.results_path)
        slim_before = self.slim_variant
        if self.phase != PHASE_DONE or slim_before is None:
            self._choose_phase()
        slim = self.slim_variant
        if slim is not None:
            write_atomic(self.variant_file(SLIM), slim.text)
            write_atomic(self.suggested_path, slim.text)
            if slim_before is None:
                self._write_plan()  # freeze the slimmer file for the next session
        meta["next_phase"] = self.phase if self.phase != PHASE_DONE else None
        write_meta(self.ablate_dir, meta)
        tables = self.tables()
        doc = report_doc(self, tables)
        write_atomic(self.ablate_dir / "report.md", render_markdown(doc))
        write_atomic(self.ablate_dir / "report.json", render_json(doc))
        write_atomic(self.ablate_dir / "report.html", render_html(doc))
        return doc

