"""The attempts of one session in one process, for a run and an ablation alike (docs/contracts.md §4,
§7, §8, §9).

:class:`AttemptRunner` is everything an attempt needs that does not depend on the mode: the snapshot
cache, the stop policy (:class:`RunLimits`), the frozen flaky PASS_TO_PASS ids, the one builder of
attempt settings (:meth:`AttemptRunner.spec`: the agent's limits, the sandbox and its hook, the
commit's environment), :meth:`AttemptRunner.run` and the messages its results become for the
controller (:meth:`AttemptRunner.messages`, written by :mod:`pytest_homefield.transport`). A run
(:class:`pytest_homefield.run.session.RunSession`) and an ablation
(:class:`pytest_homefield.ablate.session.AblationSession`) each hold one; an ablation adds only its
variant's rules file around the agent and the variant's folder. Before either starts anything,
:func:`check_sandbox` refuses agents or test runs that need bubblewrap where it does not work.
No pytest here.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.agents.attacks import AttackAgent
from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.registry import agent_settings
from pytest_homefield.errors import RunError
from pytest_homefield.layout import HomefieldDir, attempt_dir, services_dir
from pytest_homefield.records import BUDGET_SPENT, CLIENT_MISSING, RATE_LIMITED, Result, Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, result_key, run_attempt
from pytest_homefield.run.flaky import flaky_records, found_flaky
from pytest_homefield.run.hang_bound import attack_reference
from pytest_homefield.run.retries import TryKey, cap_retries
from pytest_homefield.sandbox.backends import Sandboxes, SandboxHook
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.limits import WriteLimits
from pytest_homefield.sandbox.modes import CONFINED_BACKENDS, SandboxChoice, runs_process, unenforced_note
from pytest_homefield.sandbox.proccap import (
    cap_by,
    cpu_shared,
    memory_capped,
    no_cap_note,
    no_cpu_share_note,
    no_memory_cap_note,
)
from pytest_homefield.settings import Settings, network_of
from pytest_homefield.store import JsonlTail
from pytest_homefield.transport import Message, Scope, append_message, artifact_messages

__all__ = [
    "BUDGET_SPENT",
    "RATE_LIMITED",
    "AttemptRunner",
    "AttemptFn",
    "RunLimits",
    "SandboxHook",
    "check_sandbox",
    "confined_by",
    "sandbox_summary",
    "stopped_for",
]

#: What runs one attempt: :func:`pytest_homefield.run.attempt.run_attempt`.
AttemptFn = Callable[[AttemptSpec, SnapshotCache], Result]


def stopped_for(message: str) -> str | None:
    """The stop reason (``budget spent: …``, ``rate limited: …`` or ``client missing on worker …``) of a
    skipped attempt item's message (``…Skipped: <reason>``), ``None`` for a skip of any other kind."""
    if BUDGET_SPENT in message or RATE_LIMITED in message or CLIENT_MISSING in message:
        return message.split("Skipped: ", 1)[-1]
    return None


def _at(stamp: object) -> _dt.datetime:
    """An ISO 8601 time as an aware datetime (any precision; naive counts as UTC); the earliest time for
    one that cannot be read (an old record then never counts as this session's)."""
    try:
        at = _dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return _dt.datetime.min.replace(tzinfo=_dt.timezone.utc)
    return at if at.tzinfo else at.replace(tzinfo=_dt.timezone.utc)


class RunLimits:
    """Whether another attempt of an agent may start (docs/contracts.md §2, §8): not after a
    ``rate_limited`` result of that agent finished at or after ``since_iso`` (this session's start),
    and not once that agent's spending (every record: each try of a retried attempt spent its cost, partial
    estimates included; a record is known by its key and its start and finish times, so the one the worker
    adds and then reads back counts once) reaches its share of ``budget_usd`` (USD; ``None`` = no budget): an
    even split among ``agents`` of them (at least 1). Both are the agent's own reports, so neither stops
    another agent (atk9 F5b, F6). Counting the last record per attempt only let a try that spent and then
    claimed a rate limit spend nothing once ``--resume`` tried it again (xatk31).

    Totals are kept in memory and fed from ``results.jsonl`` through a :class:`JsonlTail`, so each
    line is read once per process, and results appended by other xdist workers and by earlier
    sessions of a resumed run count, as they must."""

    def __init__(self, results: Path, *, budget_usd: float | None, since_iso: str, agents: int = 1) -> None:
        self.budget_usd = budget_usd
        self.agents = max(1, agents)
        self.since_iso = since_iso
        self._tail = JsonlTail(results)
        self._cost: dict[tuple[Any, ...], float] = {}  # (task, agent, attempt, variant, started, finished) -> USD
        self._rate_limited: dict[str, str] = {}  # agent name -> error of its first limit this session

    def add(self, record: Mapping[str, Any]) -> None:
        """Count one result record (a ``results.jsonl`` line)."""
        key = result_key(record) + (record.get("started_at"), record.get("finished_at"))
        self._cost[key] = float(record.get("cost_usd") or 0.0)
        if record.get("outcome") == "rate_limited" and _at(record.get("finished_at")) >= _at(self.since_iso):
            self._rate_limited.setdefault(str(record.get("agent", "")), str(record.get("error") or "rate limited"))

    def refresh(self) -> None:
        """Count the lines appended to ``results.jsonl`` since the last call."""
        for record in self._tail.new_records():
            self.add(record)

    def spent_usd(self, agent: str) -> float:
        """USD spent so far by ``agent``'s records counted."""
        return sum(usd for key, usd in self._cost.items() if key[1] == agent)

    def rate_limited(self, agent: str) -> str | None:
        """The error of the first ``rate_limited`` result counted from ``agent`` (a name), else ``None``.
        Does not :meth:`refresh`."""
        return self._rate_limited.get(agent)

    def stop_reason(self, agent: str) -> str | None:
        """``"rate limited: <error>"`` (a limit ``agent`` reported), ``"budget spent: <agent>: S of B USD
        (its share of T)"`` or ``None`` (start the attempt), after :meth:`refresh`. The one stop rule of
        every mode (a run, an ablation): an agent's own claims stop that agent only (atk9 F5b, F6; atk11 A1)."""
        self.refresh()
        limited = self.rate_limited(agent)
        if limited is not None:
            return f"{RATE_LIMITED}: {limited}"
        if self.budget_usd is None:
            return None
        share, spent = self.budget_usd / self.agents, self.spent_usd(agent)
        if spent < share:
            return None
        whole = f" (its share of {self.budget_usd:.2f})" if self.agents > 1 else ""
        return f"{BUDGET_SPENT}: {agent}: {spent:.2f} of {share:.2f} USD{whole}"


def sandbox_summary(settings: Settings, agents: Sequence[Agent], *, hooked: bool = False) -> dict[str, Any]:
    """``meta.json`` ``sandbox`` (docs/contracts.md §4): ``mode``, ``network``, per agent the sandbox its
    attempts get (``bwrap``, ``landlock``, ``hook``, ``none``, or ``refused: …``) and the test runs' (``tests``);
    ``allow_hosts`` (the ``--allow-host`` entries) and ``unenforced`` (the one-line note of
    :func:`~pytest_homefield.sandbox.modes.unenforced_note`, or ``None``) under ``allowlist``; ``max_procs``,
    the process cap (``cap``: ``--max-procs``; per agent and for ``tests`` how it is enforced here:
    ``pids cgroup``, ``RLIMIT_NPROC`` or ``None``, :func:`~pytest_homefield.sandbox.proccap.cap_by`) and
    ``no_proc_cap``, the header's line when a sandbox has none (else ``None``); ``max_memory_mb``, the memory
    cgroups (``agents``: ``--max-agent-memory-mb``, ``tests``: ``max_test_memory_mb``; ``cgroup``, per agent and for
    ``tests``, whether its sandbox gets one here, :func:`~pytest_homefield.sandbox.proccap.memory_capped`) and
    ``no_memory_cap``, the header's line when a sandbox gets none (else ``None``); ``cpu_cgroup`` (per agent
    under ``agents`` and for ``tests``, whether its sandbox gets a cpu cgroup of its own here,
    :func:`~pytest_homefield.sandbox.proccap.cpu_shared`) and ``no_cpu_share``, the header's line when a
    sandbox gets none (else ``None``)."""
    choice = _choice(settings)
    per_agent: dict[str, str] = {}
    for a in agents:
        try:
            backend = choice.for_agent(a, settings.allow_shell)
        except BwrapUnavailable as exc:
            backend = "none" if hooked else f"refused: {exc}"
        per_agent[a.name] = "hook" if hooked and runs_process(a) else backend
    try:
        tests = choice.for_tests()
    except BwrapUnavailable as exc:
        tests = f"refused: {exc}"
    out: dict[str, Any] = {"mode": choice.mode, "network": choice.network, "agents": per_agent, "tests": tests}
    boxed = {**{f"agent {n}": b for n, b in per_agent.items()}, "test runs": tests}
    out["max_procs"] = {"cap": settings.max_procs, "agents": {n: cap_by(b) for n, b in per_agent.items()},
                        "tests": cap_by(tests)}
    out["no_proc_cap"] = no_cap_note(boxed)
    out["max_memory_mb"] = {"agents": settings.max_agent_memory_mb, "tests": settings.max_test_memory_mb,
                            "cgroup": {"agents": {n: memory_capped(b) for n, b in per_agent.items()},
                                       "tests": memory_capped(tests)}}
    out["no_memory_cap"] = no_memory_cap_note(boxed)
    out["cpu_cgroup"] = {"agents": {n: cpu_shared(b) for n, b in per_agent.items()}, "tests": cpu_shared(tests)}
    out["no_cpu_share"] = no_cpu_share_note(boxed)
    if choice.allowlist:
        out["allow_hosts"] = list(choice.allow_hosts)
        out["unenforced"] = unenforced_note(choice.network, {a.name: per_agent[a.name] for a in agents
                                                             if runs_process(a)})
    return out


def _choice(settings: Settings) -> SandboxChoice:
    """The session's :class:`SandboxChoice`: ``--sandbox``, ``--sandbox-network``, ``--allow-host``."""
    return SandboxChoice(settings.sandbox, settings.sandbox_network, tuple(settings.allow_hosts))


def check_sandbox(settings: Settings, agents: Sequence[Agent], *, hooked: bool = False) -> None:
    """Raise :class:`RunError` (one line) when an agent or the test runs need a sandbox (bubblewrap or
    Landlock) that does not work here; a sandbox hook (``hooked``) wraps the agents instead. A run and an
    ablation call it on the controller before they write or start anything."""
    if hooked:
        return
    choice = _choice(settings)
    try:
        for a in agents:
            choice.for_agent(a, settings.allow_shell)
        choice.for_tests()
    except BwrapUnavailable as exc:
        raise RunError(f"pytest-homefield: {exc}") from None


def confined_by(settings: Settings, allow_shell: bool | None = None) -> Callable[[Agent], bool]:
    """Whether an agent's attempts run under bubblewrap or Landlock (``--sandbox`` as
    :meth:`~pytest_homefield.sandbox.modes.SandboxChoice.for_agent` resolves it, probing once per process, as the
    attempt's :attr:`~pytest_homefield.agents.base.AgentContext.sandbox` will say, a hook's fallback included);
    ``False`` where the sandbox it needs does not work (:func:`check_sandbox` refuses that). For the run-wide
    client check (:func:`~pytest_homefield.agents.registry.unstartable`): a client whose install needs the home
    is refused once, before anything runs, not attempt by attempt (satk61). ``allow_shell``: whether the agent
    may run shell commands (``None``: ``--allow-shell``; a probe's text-only call passes ``False``)."""
    choice = _choice(settings)
    shell = settings.allow_shell if allow_shell is None else allow_shell

    def confined(agent: Agent) -> bool:
        try:
            return choice.for_agent(agent, shell) in CONFINED_BACKENDS
        except BwrapUnavailable:
            return False
    return confined


class AttemptRunner:
    """Runs the attempts of one session (a run or an ablation) in this process.

    ``run_id`` is the session's id (each result's ``run_id``); ``results`` its ``results.jsonl``,
    which only the controller writes, from :meth:`messages`; ``folder(variant)`` the folder whose
    ``attempts/`` holds that variant's artifacts (a run: its run folder; an ablation:
    ``variants/<variant>/``). ``session_start`` (ISO 8601) and ``budget_usd`` (USD, ``None`` = no
    budget; a shard's part) are the stop policy's (:class:`RunLimits`). ``setup_command`` maps a task
    to the ``pytest_homefield_setup_command`` hook's command (``None``: ``setup_cmd``);
    ``sandbox_hook`` is the ``pytest_homefield_sandbox`` hook (``None`` when nothing implements it);
    ``flaky`` the session's frozen flaky PASS_TO_PASS ids ({task id: [test ids]}); ``shared`` whether
    this process shares the controller's ``.homefield/`` (otherwise the artifacts travel with the
    result); ``attempt`` the function that runs one attempt (:func:`run_attempt`); ``tries`` the
    unscored tries already recorded per (task, agent, attempt, variant) before this session
    (``--max-retries``, :func:`~pytest_homefield.run.retries.cap_retries`; ``None``: no cap); ``canary_key``
    the controller's canary key, sent to a worker (``None``: the repository's own); ``tasks`` the session's
    tasks, whose parent trees the snapshot cache packs before the first attempt (:meth:`SnapshotCache.keep`);
    ``pack_offer`` on a worker the controller's pack of them (:meth:`pack_offer`), taken instead when intact."""

    def __init__(self, settings: Settings, agents: Sequence[Agent], *, run_id: str, results: Path,
                 folder: Callable[[str], Path], session_start: str, budget_usd: float | None,
                 setup_command: Callable[[Task], str | None] = lambda task: None,
                 sandbox_hook: SandboxHook | None = None, flaky: Mapping[str, Sequence[str]] | None = None,
                 shared: bool = True, attempt: AttemptFn = run_attempt,
                 tries: Mapping[TryKey, int] | None = None, canary_key: bytes | None = None,
                 tasks: Sequence[Task] = (), pack_offer: Mapping[str, Any] | None = None) -> None:
        self.settings = settings
        #: on a worker: the controller's pack of the tasks' parent trees (:meth:`pack_offer`), ``None`` elsewhere
        self.offered = pack_offer
        #: the controller's canary key, on a worker (every attempt's :attr:`AttemptSpec.canary_key`)
        self.canary_key = canary_key
        #: unscored tries recorded per (task, agent, attempt, variant) before this session (``None``: no
        #: cap): a rate limit on the last allowed try is scored (run/retries.py cap_retries)
        self.tries = None if tries is None else dict(tries)
        self.agents = list(agents)
        self.tasks = list(tasks)
        self.run_id = run_id
        self.results = results
        self.folder = folder
        self.home = HomefieldDir(settings.root)
        self.setup_command = setup_command
        self.sandbox_hook = sandbox_hook
        #: the session's frozen flaky PASS_TO_PASS ids, {task id: [test ids]} (pytest_homefield.run.flaky)
        self.flaky: dict[str, list[str]] = {k: list(v) for k, v in (flaky or {}).items()}
        self.shared = shared
        self.attempt = attempt
        self.limits = RunLimits(results, budget_usd=budget_usd, since_iso=session_start, agents=len(self.agents))
        self._found_flaky: dict[tuple[str, str, int, str], list[str]] = {}
        self._cache: SnapshotCache | None = None
        self._sandboxes: Sandboxes | None = None

    @property
    def cache(self) -> SnapshotCache:
        """This process's snapshot cache, made on first use (before the first attempt), with the parent trees of
        :attr:`tasks` packed (hatk40: no attempt's code can spoil what a later snapshot is built from)."""
        if self._cache is None:
            self._cache = SnapshotCache(repo=self.settings.root, setup=self._setup_cmd,
                                        run_timeout_s=self.settings.run_timeout)
            self._cache.keep(self.tasks, offer=self.offered, envs=self.settings.env == "uv")
        return self._cache

    def take_offer(self) -> None:
        """On a worker given the controller's pack (:attr:`offered`): make :attr:`cache` now, taking the pack (or,
        refused, packing the trees itself), when the worker joins the session rather than at its first attempt:
        xdist schedules no item before every worker has collected, so no attempt of the session has run yet, and
        no graded code (``--sandbox none``) can have changed the pack or the repository's objects it is taken or
        made from (ops41 took it at the first attempt, after other workers' attempts). Nothing without an offer.
        Never raises."""
        if self.offered is not None:
            self.cache  # noqa: B018 - made for its side effect: the pack taken now

    def pack_offer(self) -> dict[str, Any] | None:
        """The pack of the tasks' parent trees this process's cache made (:attr:`cache`, made now when it was not) as
        a worker of this host takes it (:meth:`SnapshotCache.offer`), for the controller's ``workerinput``: one
        pack per session, made before any worker starts, not one per worker (ops41). ``None`` without one (each worker
        then packs the trees itself, as before). Never raises."""
        try:
            return self.cache.offer()
        except (OSError, ValueError):  # the pack closed or unreadable: the workers pack for themselves
            return None

    @property
    def sandboxes(self) -> Sandboxes:
        """The sandbox backends of this session's attempts, chosen once (one probe of bubblewrap) on
        first use and passed to every attempt."""
        if self._sandboxes is None:
            self._sandboxes = Sandboxes.choose(_choice(self.settings), self.sandbox_hook)
        return self._sandboxes

    def _setup_cmd(self, task: Task) -> str | None:
        cmd = self.setup_command(task)
        return cmd if cmd is not None else (self.settings.setup_cmd or task.setup_cmd)

    def sandbox_summary(self) -> dict[str, Any]:
        """:func:`sandbox_summary` of these agents."""
        return sandbox_summary(self.settings, self.agents, hooked=self.sandbox_hook is not None)

    def stop_reason(self, agent: Agent) -> str | None:
        """Why no further attempt of ``agent`` may start (:meth:`RunLimits.stop_reason`: its own rate limit
        or share of the budget), or ``None``."""
        return self.limits.stop_reason(agent.name)

    def spec(self, task: Task, agent: Agent, attempt: int, *, variant: str = "base",
             test_cmd: str | None = None) -> AttemptSpec:
        """The :class:`AttemptSpec` of one attempt: the agent's limits (flags, then ``.homefield.yml``
        ``agents.<name>``), the sandbox with the hook, the commit's environment (``--env``), the
        frozen flaky ids of ``task``, the caps on what the agent writes; ``test_cmd`` overrides the task's
        test command."""
        s = self.settings
        a = agent_settings(s, s.agent_defs.get(agent.name))
        return AttemptSpec(
            task=task, agent=agent, attempt=attempt, run_id=self.run_id, run_dir=self.folder(variant),
            timeout_s=a.timeout_s, budget_usd=a.budget_usd, allow_shell=s.allow_shell,
            run_timeout_s=s.run_timeout, test_timeout_s=s.test_timeout, test_memory_mb=s.max_test_memory_mb,
            test_write_mb=s.max_test_write_mb,
            test_cmd=test_cmd,
            test_globs=list(s.test_globs), env_passthrough=a.env, variant=variant,
            sandbox=self.sandboxes.choice, sandbox_hook=self.sandbox_hook, sandboxes=self.sandboxes,
            env_kind=s.env, env_extras=list(s.env_extras), env_groups=list(s.env_groups), env_as_of=s.env_as_of,
            flaky_p2p=list(self.flaky.get(task.id, ())), network=network_of(s, services_dir(self.folder("base"))),
            limits=WriteLimits.from_mb(s.max_output_mb, s.max_file_mb, s.max_workspace_mb),
            canary_key=self.canary_key,
            # an attack's grading stops at a multiple of the task's reference grading (pypa/packaging: four
            # attacks held a worker for the whole run timeout, 40 of 51 minutes of a verify --attacks)
            grading_reference=attack_reference(task, self.results) if isinstance(agent, AttackAgent) else None,
        )

    def run(self, spec: AttemptSpec) -> Result:
        """Run and grade one attempt (:attr:`attempt`); never raises for agent, snapshot or grading
        failures (they are outcomes). The result counts at once towards this process's limits; its
        line is written by the controller from :meth:`messages`."""
        found: list[str] = []
        spec.graded = lambda g: found.extend(found_flaky(spec.agent, g, self.agents))
        result = self.attempt(spec, self.cache)
        if found:
            self._found_flaky[result.key] = found
        if self.tries is not None:  # a rate limit on its last try is scored, and stops no provider
            result = cap_retries(result, self.tries, self.settings.max_retries)
        self.limits.add(result.to_dict())
        return result

    def messages(self, result: Result) -> list[Message]:
        """What the item posts for the controller to write: the attempt's artifacts when this
        process does not share the controller's ``.homefield/`` (size-capped), then its result line
        (``results.jsonl``), then the flaky PASS_TO_PASS ids the oracle's grading found
        (``flaky.jsonl``, :mod:`pytest_homefield.run.flaky`)."""
        out: list[Message] = []
        home = self.home.path
        if not self.shared:
            folder = attempt_dir(self.folder(result.variant), result.task_id, result.agent, result.attempt)
            out += artifact_messages(folder, home)
        out.append(append_message(self.results.relative_to(home).as_posix(), result.to_dict()))
        flaky_target = self.home.flaky.relative_to(home).as_posix()
        out += [append_message(flaky_target, r) for r in flaky_records(result, self._found_flaky.pop(result.key, ()))]
        return out

    def scope(self, task_id: str, agent: str, attempt: int, variant: str = "base") -> Scope:
        """What the item of the key ``(task_id, agent, attempt, variant)`` may send (:meth:`messages`, read
        on the controller, hatk36): its result line and its flaky lines, each carrying this key and run id,
        and files in its attempt folder (sent only by a worker that does not share ``.homefield/``)."""
        home = self.home.path
        key: dict[str, object] = {"task_id": task_id, "agent": agent, "attempt": attempt, "run_id": self.run_id}
        folder = attempt_dir(self.folder(variant), task_id, agent, attempt)
        return Scope(appends={self.results.relative_to(home).as_posix(): {**key, "variant": variant},
                              self.home.flaky.relative_to(home).as_posix(): key},
                     folder=folder.relative_to(home).as_posix(), label=f"{task_id} {agent}#{attempt}")

    def close(self) -> None:
        """Delete this process's snapshots."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None
