"""One process's view of a run, without pytest (docs/contracts.md §4, §5, §8).

:class:`RunSession` holds what the run plugin's hooks need: the tasks, the agents, the run id and
folder, the attempts already finished (never redone on ``--resume``) and the stop policy
(:class:`RunLimits`). The controller makes one with :meth:`RunSession.start` (picks the run id,
checks a resumed run, writes ``meta.json``); each xdist worker rebuilds the same view with
:meth:`RunSession.join` from :meth:`RunSession.workerinput`. :mod:`pytest_homefield.run.run_plugin`
only turns its answers into pytest items and outcomes, and :class:`RunError` into
``pytest.UsageError``.
"""

from __future__ import annotations

import datetime as _dt
import secrets
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pytest_homefield.agents.base import Agent
from pytest_homefield.errors import ConfigError, ProbeError, RecordError, ResultsUnreadable, RunError, StoreError
from pytest_homefield.layout import (
    HomefieldDir,
    attempt_dir,
    new_id,
    partial_mine,
    read_meta,
    results_path,
    write_meta,
)
from pytest_homefield.records import INTERRUPTED, Result, Task, load_tasks, tasks_digest
from pytest_homefield.run.attempt import AttemptSpec
from pytest_homefield.run.bookkeeping import build_meta, check_resume, done_keys, pick_run_id
from pytest_homefield.run.canary_key import canary_key
from pytest_homefield.run.flaky import freeze_flaky, frozen_flaky
from pytest_homefield.run.memorized import excluded_for_run
from pytest_homefield.run.retries import TryKey, unscored_tries
from pytest_homefield.run.runner import AttemptRunner, SandboxHook, check_sandbox, sandbox_summary, stopped_for
from pytest_homefield.sandbox.services import failure_lines
from pytest_homefield.settings import Settings, parse_gate
from pytest_homefield.settings_table import option
from pytest_homefield.shard import SPLIT, Shard, old_split_refusal, parse_shard
from pytest_homefield.store import FolderLock, read_jsonl, write_atomic
from pytest_homefield.transport import Message

__all__ = [
    "RunSession",
    "RunEnd",
    "INTERRUPTED",
    "TaskSelection",
    "select_tasks",
    "selection",
    "memorized_exclusion",
    "check_gates",
    "fail_under_failures",
]

AttemptKey = tuple[str, str, int]


@dataclass(frozen=True)
class TaskSelection:
    """The tasks of a session (:func:`selection`): ``every`` is what the shards split (``tasks.jsonl``
    after the hook, the memorized ids left out and ``--max-tasks``), ``tasks`` this ``shard``'s part of
    it in the same order (``every`` itself without ``--shard``)."""

    every: list[Task]
    tasks: list[Task]
    shard: Shard | None = None
    #: how many tasks ``--max-tasks`` chose from (``None`` when it cut none off)
    cut_from: int | None = None


def selection(settings: Settings, modify: Callable[[list[Task]], None] = lambda tasks: None,
              exclude: Collection[str] = (), *, verb: str = "run") -> TaskSelection:
    """The tasks of a run, an ablation or a probe: ``tasks.jsonl`` in file order, changed in place by
    ``modify`` (the ``pytest_homefield_modify_tasks`` hook), without the ids in ``exclude`` (the tasks
    ``--homefield-exclude-memorized`` leaves out: :func:`memorized_exclusion`), then cut to
    ``--max-tasks`` (``cut_from``: how many there were, when it cut any off), then to this ``--shard``
    (:class:`pytest_homefield.shard.Shard`: the split is over the ``--max-tasks`` tasks, by id hash). Raises
    :class:`RunError` when there is no ``tasks.jsonl``, a record in it is bad (file, line, field), or none
    is selected (``no tasks to <verb>: …``). A shard whose part is empty is no error (shard38: split by each id's
    hash, a shard of a few tasks may hold none; its session runs nothing and leaves its folder, so a merge finds
    every shard)."""
    tasks_path = settings.tasks_path
    if not tasks_path.exists():
        raise RunError(f"pytest-homefield: no tasks at {tasks_path}: run `homefield mine` first")
    try:
        tasks = load_tasks(tasks_path)
    except (RecordError, StoreError) as exc:
        raise RunError(f"pytest-homefield: {exc}") from None
    modify(tasks)
    if not tasks:
        raise RunError(f"pytest-homefield: no tasks to {verb}: {tasks_path} holds none "
                       f"(run `homefield mine`, or widen {option('since', 'cli')})")
    gone = set(exclude)
    tasks = [t for t in tasks if t.id not in gone]
    if not tasks:
        raise RunError(f"pytest-homefield: no tasks to {verb}: {option('exclude-memorized')} leaves out all "
                       f"{len(gone)}")
    cut_from = len(tasks) if settings.run_max_tasks is not None and settings.run_max_tasks < len(tasks) else None
    if settings.run_max_tasks is not None:
        tasks = tasks[: settings.run_max_tasks]
    shard = parse_shard(settings.shard)
    if shard is None:
        return TaskSelection(tasks, tasks, cut_from=cut_from)
    mine = shard.select(t.id for t in tasks)
    part = [t for t in tasks if t.id in mine]
    return TaskSelection(tasks, part, shard, cut_from)


def select_tasks(settings: Settings, modify: Callable[[list[Task]], None] = lambda tasks: None,
                 exclude: Collection[str] = ()) -> list[Task]:
    """The run's tasks: this shard's part of :func:`selection` (which raises :class:`RunError`)."""
    return selection(settings, modify, exclude).tasks


def memorized_exclusion(settings: Settings, agents: Sequence[Agent]) -> dict[str, Any]:
    """What ``--homefield-exclude-memorized`` leaves out (controller only):
    :func:`pytest_homefield.run.memorized.excluded_for_run` for ``agents`` (``{"tasks": [...],
    "by_agent": {...}}``), ``{}`` without the flag. A resumed run keeps the exclusion frozen in its
    ``meta.json``, whatever the probe says now. Raises :class:`RunError` (one line naming the agent)
    when an agent has no finished probe."""
    home = HomefieldDir(settings.root)
    if settings.resume:
        rid = settings.run_id or home.newest_run()
        frozen = read_meta(home.run_dir(rid)).get("excluded_memorized") if rid else None
        if frozen is not None or not settings.exclude_memorized:
            return dict(frozen or {})
    if not settings.exclude_memorized:
        return {}
    try:
        return excluded_for_run(home.path, agents)
    except (ProbeError, RecordError, StoreError) as exc:
        raise RunError(str(exc)) from None


def check_gates(gates: Iterable[str], agents: Iterable[Agent]) -> None:
    """Check each ``--homefield-fail-under`` gate before anything is spent (not after the run): a
    valid ``RATE`` or ``AGENT=RATE`` (:func:`pytest_homefield.settings.parse_gate`) naming one of
    ``agents``. Raises :class:`RunError`, one line naming the gate."""
    names = [a.name for a in agents]
    for gate in gates:
        try:
            gate_agent, _ = parse_gate(gate)
        except ConfigError as exc:
            raise RunError(str(exc)) from None
        if gate_agent and gate_agent not in names:
            raise RunError(f"{option('fail-under')} {gate!r}: no agent named {gate_agent!r} in this run "
                           f"(agents: {', '.join(names)})")


class FinishedReport(Protocol):
    """A run's report as its session ends (the report package's
    :class:`pytest_homefield.report.finish.FinishedReport`)."""

    report: dict[str, Any] | None
    error: str
    write_error: str | None

    def text(self, width: int, verbose: bool) -> list[tuple[str, dict[str, bool]]]: ...


class GateVerdict(Protocol):
    """One agent's line of the regression gate (:class:`pytest_homefield.report.gate.GateLine`)."""

    @property
    def agent(self) -> str: ...

    @property
    def worse(self) -> bool: ...

    @property
    def text(self) -> str: ...

    @property
    def method(self) -> str:
        """The test and its Holm family, e.g. ``one-sided exact McNemar, Holm over 2 agents, alpha 0.05``."""
        ...


class RunReports(Protocol):
    """What a run asks of the report package at its end, given by the caller
    (:data:`pytest_homefield.report.finish.RUN_REPORTS`, passed in by the entry point): ``run/`` sits
    below ``report/`` in the package's layering and builds, writes and renders no report itself.

    ``finish(run_dir, tasks_path)`` builds and writes the run's report and never raises;
    ``worse_than(candidates, baseline, alpha=…)`` is ``--fail-if-worse-than``'s verdict per agent and
    raises ``ValueError`` (one line) when it cannot be evaluated; ``not_needed(...)`` is ``--adaptive``'s
    decision for one attempt."""

    def finish(self, run_dir: Path, tasks_path: Path) -> FinishedReport: ...

    def worse_than(self, candidates: Sequence[Path], baseline: Path, *, alpha: float) -> Sequence[GateVerdict]: ...

    def not_needed(self, results: Sequence[Mapping[str, Any]], agents: Sequence[tuple[str, str | None]], agent: str,
                   attempt: int, *, looks: int, alpha: float, margin: float, run_dir: Path | None = None,
                   session: str | None = None) -> str | None:
        """``--adaptive``: why attempt ``attempt`` of ``agent`` is not needed given the recorded ``results``
        (dicts of ``results.jsonl``) and the run's ``agents`` (name, spec), or ``None`` (run it);
        ``looks`` = ``--attempts``, ``margin`` a fraction; ``run_dir``: the run folder whose ``tries.jsonl``
        says which tries earlier sessions (not ``session``, this one's stamp) cut short."""
        ...


@dataclass
class RunEnd:
    """What the controller has at the end of a session: the ``report`` (``None`` when it could not be
    built: ``error`` says why, the results stay on disk) and the ``--homefield-fail-under`` gates not
    met."""

    report: dict[str, Any] | None = None
    error: str = "no results"
    gate_failures: list[str] = field(default_factory=list)
    #: why ``meta.json`` or the report files could not be written (a full disk), else ``None``
    write_error: str | None = None
    #: the report as terminal lines with markup, ``text(width, verbose)`` (rendered by the report package)
    text: Callable[[int, bool], list[tuple[str, dict[str, bool]]]] = lambda width, verbose: []


class RunSession:
    """The run as seen by one process. Build it with :meth:`start` (controller) or :meth:`join`
    (xdist worker). ``setup_command`` maps a task to a setup command overriding the configured one
    (the ``pytest_homefield_setup_command`` hook; ``None`` = no override). ``sandbox_hook`` is the
    ``pytest_homefield_sandbox`` hook (``None`` when nothing implements it); with it, agent programs
    are wrapped by the hook and bubblewrap is not required.

    Results reach ``results.jsonl`` through the controller (:mod:`pytest_homefield.transport`):
    :meth:`run_attempt` returns the result and :meth:`messages` the messages to post with the
    item's report. ``token`` identifies the controller's session; a worker whose own run folder's
    ``meta.json`` carries it shares the controller's filesystem (``shared``), so its artifacts are
    already in place; otherwise they travel too. With ``--shard K/N`` a ``--budget`` is this
    shard's part (:meth:`Shard.split_budget`)."""

    def __init__(self, settings: Settings, tasks: list[Task], agents: list[Agent], *, run_id: str,
                 session_start: str, tasks_digest: str, done: set[AttemptKey],
                 setup_command: Callable[[Task], str | None] = lambda task: None,
                 sandbox_hook: SandboxHook | None = None, token: str = "", shared: bool = True,
                 excluded: Mapping[str, Any] | None = None,
                 flaky: Mapping[str, Sequence[str]] | None = None,
                 tries: Mapping[TryKey, int] | None = None, canary_key: bytes | None = None,
                 pack_offer: Mapping[str, Any] | None = None) -> None:
        self.settings = settings
        self.shard: Shard | None = parse_shard(settings.shard)
        self.budget_usd = self.shard.split_budget(settings.budget) if self.shard else settings.budget
        self.token = token
        self.shared = shared
        self.home = HomefieldDir(settings.root)
        self.tasks = tasks
        self.agents = agents
        self.run_id = run_id
        self.run_dir = self.home.run_dir(run_id)
        self.results_path = results_path(self.run_dir)
        self.session_start = session_start
        self.tasks_digest = tasks_digest
        self.done = done
        #: unscored tries recorded per attempt before this session (``--max-retries``, contracts §8)
        self.tries: dict[TryKey, int] = dict(tries or {})
        self.excluded: dict[str, Any] = dict(excluded or {})
        #: the attempts of this process: snapshots, limits, the frozen flaky ids, the attempt settings
        self.runner = AttemptRunner(settings, agents, run_id=run_id, results=self.results_path,
                                    folder=lambda variant: self.run_dir, session_start=session_start,
                                    budget_usd=self.budget_usd, setup_command=setup_command,
                                    sandbox_hook=sandbox_hook, flaky=flaky, shared=shared, tries=self.tries,
                                    canary_key=canary_key, tasks=tasks, pack_offer=pack_offer)
        self.skip_reasons: set[str] = set()
        #: ``meta.json`` ``max_tasks`` (``{"n": N, "of": M}``: ``--max-tasks`` cut the task set), controller only
        self.max_tasks: dict[str, Any] | None = None
        #: a resumed run whose every attempt is already recorded (set by :meth:`start`)
        self.nothing_to_resume = False
        #: the run folder's lock (the controller's, set by :meth:`start`; ``None`` in a worker)
        self.lock: FolderLock | None = None

    @property
    def flaky(self) -> dict[str, list[str]]:
        """The run's frozen flaky PASS_TO_PASS ids, {task id: [test ids]} (:mod:`pytest_homefield.run.flaky`)."""
        return self.runner.flaky

    @classmethod
    def start(cls, settings: Settings, tasks: list[Task], agents: list[Agent], *, now: str | None = None,
              setup_command: Callable[[Task], str | None] = lambda task: None,
              sandbox_hook: SandboxHook | None = None,
              excluded: Mapping[str, Any] | None = None, cut_from: int | None = None,
              shard_of: Sequence[str] | None = None, dry: bool = False) -> RunSession:
        """The controller's session: pick the run id (a new one, ``--homefield-run-id``, or the run to
        resume), check a resumed run against its ``meta.json`` and clear its ``cut_short``, write
        ``meta.json``, and read the finished attempts when resuming (all before ``meta.json`` is
        written, so a bad record changes nothing). The ``--homefield-fail-under`` gates are checked
        first (:func:`check_gates`). ``now`` is the session start (ISO 8601, UTC; default the current
        second). ``excluded``: the memorized tasks left out (:func:`memorized_exclusion`), frozen into a
        new run's ``meta.json`` as ``excluded_memorized``. ``cut_from``: how many tasks ``--max-tasks``
        chose from (:attr:`TaskSelection.cut_from`), frozen into a new run's ``meta.json`` as ``max_tasks``
        ``{"n": N, "of": M}`` so that its report says the task set is partial. ``shard_of``: the ids a
        ``--shard`` split (:attr:`TaskSelection.every`), frozen into a new shard's ``meta.json`` as ``shard_of``:
        what a merge checks the shard's ``task_ids`` against (hatk36). The flaky PASS_TO_PASS ids of
        ``.homefield/flaky.jsonl`` are read and frozen into a new run's ``meta.json`` as ``flaky_p2p``
        (a resumed run keeps its own). Raises :class:`RunError`: also for a bad
        ``results.jsonl`` line or a write that failed (one line naming the file), and when an agent or
        the test runs need bubblewrap and it does not work here (:meth:`check_sandbox`). The run folder
        is locked (:class:`~pytest_homefield.store.FolderLock`) for the session, until :meth:`release`;
        raises :class:`~pytest_homefield.store.FolderLocked` (one line naming the pid and host) when
        another session holds it (a ``--resume`` of a run still in progress). ``dry`` (pytest's ``--collect-only``):
        everything but the writes: no run folder, no lock, no ``meta.json`` (rev58: each ``--collect-only`` left a
        run folder holding no result, nu56); the session's attempts are collected as a run's would be."""
        check_gates(settings.fail_under, agents)
        check_sandbox(settings, agents, hooked=sandbox_hook is not None)
        home = HomefieldDir(settings.root)
        home.ensure()
        start = now or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
        digest = tasks_digest(settings.tasks_path)
        run_id = pick_run_id(home.runs, run_id=settings.run_id, resume=settings.resume, new_id=new_id())
        run_dir = home.run_dir(run_id)
        if dry:
            return cls._start(settings, tasks, agents, run_id=run_id, start=start, digest=digest,
                              setup_command=setup_command, sandbox_hook=sandbox_hook, excluded=excluded,
                              cut_from=cut_from, shard_of=shard_of, dry=True)
        created = not run_dir.exists()
        lock = FolderLock.take(run_dir, f"run {run_id}")  # FolderLocked: another session runs it
        try:
            session = cls._start(settings, tasks, agents, run_id=run_id, start=start, digest=digest,
                                 setup_command=setup_command, sandbox_hook=sandbox_hook, excluded=excluded,
                                 cut_from=cut_from, shard_of=shard_of)
        except BaseException:
            lock.release()
            if created:  # nothing but the lock file: no empty run folder for --resume to find
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
        session.lock = lock
        return session

    @classmethod
    def _start(cls, settings: Settings, tasks: list[Task], agents: list[Agent], *, run_id: str, start: str,
               digest: str, setup_command: Callable[[Task], str | None], sandbox_hook: SandboxHook | None,
               excluded: Mapping[str, Any] | None, cut_from: int | None = None,
               shard_of: Sequence[str] | None = None, dry: bool = False) -> RunSession:
        """:meth:`start` once the run folder is locked: check and write ``meta.json`` (``dry``: not written, nor the
        folder made), read the attempts done."""
        home = HomefieldDir(settings.root)
        run_dir = home.run_dir(run_id)
        shard = parse_shard(settings.shard)
        token = secrets.token_hex(8)
        try:
            if settings.resume:
                meta = read_meta(run_dir, complete=True)
                if meta.get("shard") != (str(shard) if shard else None):  # before the task selection it changes
                    raise RunError(f"{option('resume')}: run {run_id} is shard {meta.get('shard') or 'none'}; "
                                   f"flags give {shard or 'none'}")
                old = old_split_refusal(f"{option('resume')}: run {run_id}", meta)
                if old is not None:  # shard38: its tasks are another split's share
                    raise RunError(old)
                check_resume(meta, agents=agents, attempts=settings.attempts, tasks_digest=digest,
                             task_ids=[t.id for t in tasks])
                meta["cut_short"] = None
                meta.setdefault("resumed_at", []).append(start)
                flaky = frozen_flaky(meta)
            else:
                meta = build_meta(run_id=run_id, agents=agents, attempts=settings.attempts, tasks_digest=digest,
                                  task_ids=[t.id for t in tasks], created_at=start, settings=settings,
                                  sandbox=sandbox_summary(settings, agents, hooked=sandbox_hook is not None))
                if excluded:
                    meta["excluded_memorized"] = dict(excluded)
                if cut_from is not None and settings.run_max_tasks is not None:
                    meta["max_tasks"] = {"n": settings.run_max_tasks, "of": cut_from}
                partial = partial_mine(home)  # the saved report says so too, as of the run's start (mine48)
                if partial is not None:
                    meta["partial_mine"] = partial
                flaky = freeze_flaky(meta, home.flaky, tasks)
                meta["shard"] = str(shard) if shard else None
                if shard:
                    meta["split"] = SPLIT
                if shard and shard_of is not None:
                    meta["shard_of"] = list(shard_of)
            if settings.adaptive and "adaptive" not in meta:  # the design of the looks (issue 32)
                meta["adaptive"] = {"looks": settings.attempts, "alpha": settings.alpha,
                                    "margin": settings.adaptive_margin / 100.0}
            meta["session_token"] = token
            try:
                done = done_keys(results_path(run_dir), settings.max_retries) if settings.resume else set()
                tries = unscored_tries(results_path(run_dir)) if settings.resume else {}
            except StoreError as exc:  # the run's records cannot be read: no usage error (link46)
                raise ResultsUnreadable(f"pytest-homefield: {exc}") from None
            if not dry:
                run_dir.mkdir(parents=True, exist_ok=True)
                write_meta(run_dir, meta)
        except ResultsUnreadable:
            raise
        except (RecordError, StoreError) as exc:
            raise RunError(str(exc)) from None
        session = cls(settings, tasks, agents, run_id=run_id, session_start=start, tasks_digest=digest, done=done,
                      setup_command=setup_command, sandbox_hook=sandbox_hook, token=token, excluded=excluded,
                      flaky=flaky, tries=tries)
        session.nothing_to_resume = settings.resume and session.n_attempts - len(done) <= 0
        session.max_tasks = meta.get("max_tasks") if isinstance(meta.get("max_tasks"), dict) else None
        return session

    @staticmethod
    def prepare_worker(settings: Settings, workerinput: Mapping[str, Any]) -> None:
        """Before a worker reads its tasks: write the controller's ``tasks.jsonl`` (sent in
        ``workerinput``) into this worker's ``.homefield/`` when it has none (a remote host has the
        repository but not the controller's ``.homefield/``). An existing file is never replaced;
        :meth:`join` refuses it when it differs."""
        text = workerinput.get("homefield_tasks_text")
        if text is not None and not settings.tasks_path.exists():
            HomefieldDir(settings.root).ensure()
            write_atomic(settings.tasks_path, str(text))

    @classmethod
    def join(cls, settings: Settings, tasks: list[Task], agents: list[Agent], workerinput: Mapping[str, Any],
             *, setup_command: Callable[[Task], str | None] = lambda task: None,
             sandbox_hook: SandboxHook | None = None) -> RunSession:
        """A worker's session from the controller's :meth:`workerinput`. Raises :class:`RunError` when
        ``tasks.jsonl`` changed since the controller read it."""
        digest = tasks_digest(settings.tasks_path)
        if workerinput["homefield_tasks_digest"] != digest:
            raise RunError("pytest-homefield: tasks.jsonl changed while the run was starting "
                           f"(or this host's {settings.tasks_path} differs from the controller's)")
        run_id = Path(workerinput["homefield_run_dir"]).name
        token = str(workerinput.get("homefield_session_token", ""))
        try:
            shared = read_meta(HomefieldDir(settings.root).run_dir(run_id)).get("session_token") == token
        except ValueError:
            shared = False
        session = cls(settings, tasks, agents, run_id=run_id,
                   session_start=workerinput["homefield_session_start"], tasks_digest=digest,
                   done={(str(t), str(a), int(n)) for t, a, n in workerinput["homefield_done"]},
                   setup_command=setup_command, sandbox_hook=sandbox_hook, token=token, shared=shared,
                   excluded=workerinput.get("homefield_excluded"), flaky=workerinput.get("homefield_flaky"),
                   tries={(str(t), str(a), int(n), str(v)): int(c)
                          for t, a, n, v, c in workerinput.get("homefield_tries", [])},
                   canary_key=bytes.fromhex(str(workerinput["homefield_canary_key"])),
                   pack_offer=workerinput.get("homefield_pack"))
        session.runner.take_offer()  # before any attempt of the session (xdist schedules after every worker joined)
        return session

    def workerinput(self) -> dict[str, Any]:
        """What a worker needs to :meth:`join` (JSON-able: run folder, finished attempts, session
        start, tasks digest, the session token, the memorized tasks left out, the frozen flaky ids, the unscored
        tries per attempt, the text of ``tasks.jsonl`` for :meth:`prepare_worker`, and the canary key in hex:
        every worker grades with the controller's, so a task's twins are the same on every host), and the pack of the
        tasks' parent trees, made once here before any worker starts, that each worker of this host takes rather
        than packing them itself (:meth:`AttemptRunner.pack_offer`, ops41)."""
        return {
            "homefield_pack": self.runner.pack_offer(),
            "homefield_excluded": self.excluded,
            "homefield_flaky": self.flaky,
            "homefield_run_dir": str(self.run_dir),
            "homefield_done": sorted(list(k) for k in self.done),
            "homefield_tries": sorted([*k, c] for k, c in self.tries.items()),
            "homefield_session_start": self.session_start,
            "homefield_tasks_digest": self.tasks_digest,
            "homefield_session_token": self.token,
            "homefield_tasks_text": self.settings.tasks_path.read_text(encoding="utf-8"),
            "homefield_canary_key": canary_key(self.settings.root).hex(),
        }

    @property
    def collect_path(self) -> Path:
        """``tasks.jsonl``: the file the run's items are collected from (docs/contracts.md §5)."""
        return self.settings.tasks_path

    @property
    def n_attempts(self) -> int:
        """Tasks × agents × attempts (finished ones included)."""
        return len(self.tasks) * len(self.agents) * self.settings.attempts

    def pending(self, task: Task) -> Iterator[tuple[Agent, int]]:
        """``(agent, attempt)`` for ``task`` not finished yet, agents in order, attempts from 1."""
        for agent in self.agents:
            for attempt in range(1, self.settings.attempts + 1):
                if (task.id, agent.name, attempt) not in self.done:
                    yield agent, attempt

    def artifacts(self, task: Task, agent: Agent, attempt: int) -> Path:
        """The attempt's artifacts folder."""
        return attempt_dir(self.run_dir, task.id, agent.name, attempt)

    def stop_reason(self, agent: Agent) -> str | None:
        """Why no further attempt of ``agent`` may start (:meth:`AttemptRunner.stop_reason`), or ``None``."""
        return self.runner.stop_reason(agent)

    def attempt_spec(self, task: Task, agent: Agent, attempt: int, *, test_cmd: str | None = None) -> AttemptSpec:
        """The :class:`AttemptSpec` of one attempt (:meth:`AttemptRunner.spec`); ``test_cmd``
        overrides the task's test command."""
        return self.runner.spec(task, agent, attempt, test_cmd=test_cmd)

    def sandbox_summary(self) -> dict[str, Any]:
        """:func:`~pytest_homefield.run.runner.sandbox_summary` of this run."""
        return self.runner.sandbox_summary()

    def run_attempt(self, task: Task, agent: Agent, attempt: int, *, test_cmd: str | None = None) -> Result:
        """Run and grade one attempt (:meth:`AttemptRunner.run`); never raises for agent, snapshot or
        grading failures (they are outcomes). Its line is written by the controller from
        :meth:`messages`."""
        return self.runner.run(self.attempt_spec(task, agent, attempt, test_cmd=test_cmd))

    def messages(self, result: Result) -> list[Message]:
        """What the item posts for the controller to write (:meth:`AttemptRunner.messages`): the
        artifacts when this worker does not share the controller's ``.homefield/``, the result line,
        the flaky ids the oracle's grading found."""
        return self.runner.messages(result)

    def note_skip(self, message: str) -> None:
        """Remember a skipped item's message when it stopped for the budget or a rate limit (the
        run is then cut short)."""
        reason = stopped_for(message)
        if reason is not None:
            self.skip_reasons.add(reason)

    def interrupt(self) -> None:
        """Note a Ctrl-C: the run is cut short and :meth:`finish` builds no report."""
        self.skip_reasons.add(INTERRUPTED)

    @property
    def interrupted(self) -> bool:
        """True after :meth:`interrupt`."""
        return INTERRUPTED in self.skip_reasons

    def close(self) -> None:
        """Delete this process's snapshots."""
        self.runner.close()

    def release(self) -> None:
        """Let the run folder's lock go (the controller, once its report is written; idempotent)."""
        if self.lock is not None:
            self.lock.release()

    def service_failures(self) -> list[str]:
        """One line per ``services:`` entry that could not be had in this run, with the number of
        attempts it left ``infra`` (:func:`~pytest_homefield.sandbox.services.failure_lines`)."""
        last = {(r.get("task_id"), r.get("agent"), r.get("attempt"), r.get("variant")): r
                for r in read_jsonl(self.results_path)}  # the last line of an attempt wins (a retry)
        return failure_lines((r.get("error") for r in last.values() if r.get("outcome") == "infra"),
                             "attempt", "infra")

    def finish(self, reports: RunReports) -> RunEnd:
        """The controller's end of the session: record ``cut_short`` in ``meta.json`` when attempts
        were skipped for the budget or a rate limit, and have ``reports`` (the report package) build the
        report over the run folder and write ``report.{md,json,html}``. A report that cannot be built
        gives ``RunEnd(report=None, error=…)``: the results are on disk. The gates are checked apart
        (:meth:`gate_failures`), so that a bad gate leaves the report in hand. After a Ctrl-C
        (:meth:`interrupt`) no report is built (``homefield report`` builds it later from the results
        kept). A file that cannot be written (a full disk) is left as it was and named in
        ``RunEnd.write_error``."""
        end = RunEnd()
        if self.skip_reasons:
            try:
                meta = read_meta(self.run_dir)
                meta["cut_short"] = "; ".join(sorted(self.skip_reasons))
                write_meta(self.run_dir, meta)
            except (OSError, RunError) as exc:  # a full disk: meta.json is left as it was
                end.write_error = str(exc)
        if self.interrupted:
            end.error = "interrupted (homefield report builds it from the results kept)"
            self.release()
            return end  # Ctrl-C means stop; the report can be built any time later
        try:
            finished = reports.finish(self.run_dir, self.settings.tasks_path)  # the report package writes it
        finally:
            self.release()
        end.report, end.error, end.text = finished.report, finished.error, finished.text
        end.write_error = finished.write_error or end.write_error
        return end

    def gate_failures(self, report: Mapping[str, Any]) -> list[str]:
        """:func:`fail_under_failures` of ``report`` for ``--homefield-fail-under``. Raises
        :class:`RunError` for a bad gate."""
        return fail_under_failures(report, self.settings.fail_under)


def fail_under_failures(report: Mapping[str, Any], gates: Iterable[str]) -> list[str]:
    """Messages for each ``--homefield-fail-under`` gate not met: ``RATE`` applies to every agent,
    ``AGENT=RATE`` to one. Rates are pass@1 fractions in [0, 1]; an agent whose report is
    ``incomplete`` (an attempt of the run unscored or never run) does not meet any, nor one whose pass@1
    with the attempts tried again at its word, or its solves flagged ``suspicious``, counted as failed
    (``counted_pass_at_1``) is below the rate.
    Raises :class:`RunError` on a bad gate or an unknown agent name."""
    out: list[str] = []
    agents = report.get("agents", {})
    for gate in gates:
        name, _, rate_s = gate.rpartition("=")
        try:
            rate = float(rate_s)
        except ValueError:
            raise RunError(f"{option('fail-under')} {gate!r}: expected RATE or AGENT=RATE") from None
        if not 0 <= rate <= 1:
            raise RunError(f"{option('fail-under')} {gate!r}: RATE is a fraction between 0 and 1")
        names = [name] if name else list(agents)
        for n in names:
            if n not in agents:
                raise RunError(f"{option('fail-under')} {gate!r}: no agent named {n!r} in this run")
            p, incomplete = agents[n].get("pass_at_1"), agents[n].get("incomplete")
            if p is None or p < rate:
                out.append(f"{n} pass@1 {'n/a' if p is None else f'{p:.2f}'} is below {rate:.2f}")
            elif incomplete:  # a pass@1 over the attempts the agent let run is no pass (atk11 G2)
                out.append(f"{n} pass@1 {p:.2f} is not over every attempt ({incomplete}): not passing {rate:.2f}")
            elif (counted := agents[n].get("counted_pass_at_1")) is not None and counted < rate:  # atk20 F2, atk22
                why = [f"{what} ({agents[n][k]})" for k, what in (
                    ("at_its_word", "rests on its word"), ("twin_hits", "rests on solves its twin hits may have won"))
                    if agents[n].get(k)]
                if flagged := agents[n].get("flagged_solves"):
                    why.append(f"rests on {flagged} solve(s) flagged suspicious")
                out.append(f"{n} pass@1 {p:.2f} {' and '.join(why)}: not passing {rate:.2f}")
    return out
