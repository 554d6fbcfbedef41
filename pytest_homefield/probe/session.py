"""One process's view of a probe, without pytest (docs/contracts.md §4, §5).

:class:`ProbeSession` holds what the probe plugin's hooks need: the agents (each must answer a plain
prompt), the tasks the run would select (:func:`pytest_homefield.run.session.selection`: the hook,
``--max-tasks``, ``--shard``) of which those whose gold patch adds code are probed, the control pairs
(drawn over every probed task, so that a shard's calls are the unsharded probe's), the calls already
answered (``--resume``) and the session start. The controller makes it with :meth:`ProbeSession.start`
(refusing a probe file that already holds calls without ``--resume``, or calls made with another
spec); each xdist worker rebuilds it with :meth:`ProbeSession.join`. :meth:`ProbeSession.call` makes one
text-only call and scores it; its record reaches ``probe/<agent>.jsonl`` through the controller
(:meth:`ProbeSession.messages`, :mod:`pytest_homefield.transport`), and :meth:`ProbeSession.finish`
judges every agent on the controller. Usage errors are :class:`RunError` (one line).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import Agent, Completion, can_complete
from pytest_homefield.agents.registry import agent_settings, build_agents, hook_agents
from pytest_homefield.errors import RecordError, RunError, StoreError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.probe.call_sandbox import ProbeSandboxes
from pytest_homefield.probe.prompt import gold_lines, probe_prompt
from pytest_homefield.probe.similarity import ANSWER_CHARS, call_score, code_tokens
from pytest_homefield.probe.verdicts import Verdict, control_pairs, judge, now_iso, write_verdict
from pytest_homefield.probe_records import call_key, done_keys, load_probe, probe_path
from pytest_homefield.records import NAME_CHARS, Task, agent_words, tasks_digest
from pytest_homefield.run.retries import count_tries, last_try_error, spent
from pytest_homefield.run.runner import RunLimits
from pytest_homefield.run.session import TaskSelection
from pytest_homefield.sandbox.backends import SandboxHook
from pytest_homefield.sandbox.modes import runs_process
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.store import FolderLock
from pytest_homefield.transport import Message, append_message

__all__ = ["ProbeSession", "CallKey", "probe_agents", "resume_state"]

#: (kind, task_id, sample): one call of one agent
CallKey = tuple[str, str, int]


def resume_state(path: Path, max_retries: int) -> tuple[set[CallKey], dict[CallKey, int]]:
    """From one agent's probe file: the calls ``--resume`` never makes again (answered, or tried
    unanswered more than ``max_retries`` times) and the unanswered tries per call (the one retry rule of
    every mode, :mod:`pytest_homefield.run.retries`). Raises :class:`RecordError` for a bad record."""
    calls = [r for r in load_probe(path) if r.get("kind") in ("task", "control")]
    tries = count_tries(calls, call_key, lambda r: r.get("score") is None)
    return done_keys(path) | spent(tries, max_retries), tries


def probe_agents(settings: Settings, contributions: Any = ()) -> list[Agent]:
    """The ``--homefield-agent`` agents (hook agents from the ``pytest_homefield_agents`` results
    ``contributions``), each able to answer a plain prompt. Raises :class:`RunError` (one line) and
    :class:`pytest_homefield.errors.AgentSpecError`."""
    if not settings.agents:
        raise RunError(f"pytest-homefield: no agent given: add {option('agent')} SPEC")
    agents = build_agents(list(settings.agents), settings, hook_agents(contributions))
    for agent in agents:
        if not can_complete(agent):
            raise RunError(
                f"pytest-homefield: agent {agent.name!r} ({agent.spec}) cannot answer a plain prompt; the probe "
                "needs claude, openai:, cmd:, oracle, noop or a hook agent with a complete() method")
    return agents


class ProbeSession:
    """The probe as seen by one process. Build it with :meth:`start` (controller) or :meth:`join`
    (xdist worker). ``tasks`` is this session's (shard's) probed tasks, ``by_id`` every probed task,
    ``skipped`` the ids of this shard's tasks that add no code, ``done`` the answered calls per agent
    name, ``tries`` the unanswered tries per call and agent name before this session (``--max-retries``),
    ``session_start`` (ISO 8601) the controller's start."""

    def __init__(self, settings: Settings, chosen: TaskSelection, agents: list[Agent], *,
                 done: Mapping[str, set[CallKey]], session_start: str, sandbox_hook: SandboxHook | None = None,
                 tries: Mapping[str, Mapping[CallKey, int]] | None = None) -> None:
        self.settings = settings
        self.agents = agents
        #: the sandbox of the calls of agents that start a program (as a run's attempts)
        self.sandboxes = ProbeSandboxes(settings, sandbox_hook)
        self.shard = chosen.shard
        #: with ``--shard``: the ids the shards split, kept in the verdict (what a merge checks; hatk37)
        self.shard_of = [t.id for t in chosen.every] if chosen.shard else None
        #: with ``--shard`` and ``--max-tasks`` cutting: ``{n, of}``, kept in the verdict as ``max_tasks`` (shard39)
        self.max_tasks = ({"n": int(settings.run_max_tasks), "of": chosen.cut_from}
                          if chosen.shard and chosen.cut_from is not None and settings.run_max_tasks is not None
                          else None)
        in_shard = {t.id for t in chosen.tasks}
        self.cutoff = (_dt.date.fromisoformat(str(settings.cutoff)[:10]).isoformat() if settings.cutoff else None)
        self.fdr = float(settings.fdr)
        self.recite_floor = float(settings.recite_floor)
        #: the gold patch's added lines of every selected task (the control scores against another task's)
        self.gold: dict[str, str] = {t.id: gold_lines(t) for t in chosen.every}
        probed = [t for t in chosen.every if code_tokens(self.gold[t.id])]
        self.tasks: list[Task] = [t for t in probed if t.id in in_shard]  # this session's (shard's) tasks
        probed_ids = {t.id for t in probed}
        self.skipped = [t.id for t in chosen.every if t.id in in_shard and t.id not in probed_ids]
        self.by_id = {t.id: t for t in probed}
        # over every probed task, so that a shard's control calls are those of the unsharded probe
        self.pairs = {} if self.cutoff else control_pairs(probed)
        self.digest = tasks_digest(settings.tasks_path)
        self.done = {name: set(keys) for name, keys in done.items()}
        self.tries = {name: dict(keys) for name, keys in (tries or {}).items()}
        self.session_start = session_start
        #: per agent name, the run's stop rule over its probe file (a rate limit it reported in this session)
        self._limits: dict[str, RunLimits] = {}
        #: the ``probe/`` folder's lock (the controller's, set by :meth:`start`; ``None`` in a worker)
        self.lock: FolderLock | None = None

    @classmethod
    def start(cls, settings: Settings, chosen: TaskSelection, agents: list[Agent],
              sandbox_hook: SandboxHook | None = None) -> ProbeSession:
        """The controller's session: the calls already answered (or whose ``--max-retries`` is spent) and
        the unanswered tries, per agent (:func:`resume_state`). Raises :class:`RunError`
        (before any call is made) for an agent that must be confined where bubblewrap does not work
        (:meth:`ProbeSandboxes.check`), a bad probe record, a probe file that already holds calls
        without ``--resume``, and calls made with another spec under the same agent name; raises
        :class:`~pytest_homefield.store.FolderLocked` (one line naming the pid and host) when another
        session probes in this repository: the ``probe/`` folder is locked for the session
        (:class:`~pytest_homefield.store.FolderLock`, let go by :meth:`release`), as a run's folder is
        (hatk34: a second ``homefield probe --resume`` beside a running one made every call again, paid
        twice, and each session rewrote the probe file with a verdict of its own)."""
        ProbeSandboxes(settings, sandbox_hook).check(agents)
        HomefieldDir(settings.root).ensure()
        lock = FolderLock.take(HomefieldDir(settings.root).probe, "the memorization probe of this repository")
        try:
            session = cls._start(settings, chosen, agents, sandbox_hook)
        except BaseException:
            lock.release()
            raise
        session.lock = lock
        return session

    @classmethod
    def _start(cls, settings: Settings, chosen: TaskSelection, agents: list[Agent],
               sandbox_hook: SandboxHook | None) -> ProbeSession:
        """:meth:`start` once the ``probe/`` folder is locked."""
        done: dict[str, set[CallKey]] = {}
        tries: dict[str, dict[CallKey, int]] = {}
        for agent in agents:
            path = probe_path(settings.homefield_dir, agent.name)
            try:
                calls = [r for r in load_probe(path) if r.get("kind") in ("task", "control")]
            except (RecordError, StoreError) as exc:  # a bad record: refused before any call is made
                raise RunError(f"pytest-homefield: {exc}") from None
            if calls and not settings.resume:
                raise RunError(
                    f"pytest-homefield: {path.relative_to(settings.root)} already holds {len(calls)} probe "
                    f"calls of agent {agent.name!r}: add {option('resume')} to continue it, or delete the file")
            specs = {r.get("spec") for r in calls} - {agent.spec}
            if specs:
                raise RunError(
                    f"pytest-homefield: agent {agent.name!r} was probed as {', '.join(sorted(map(str, specs)))}; "
                    f"this probe uses {agent.spec}: rename it with NAME=SPEC")
            if settings.resume:
                done[agent.name], tries[agent.name] = resume_state(path, settings.max_retries)
        return cls(settings, chosen, agents, done=done, session_start=now_iso(), sandbox_hook=sandbox_hook,
                   tries=tries)

    @classmethod
    def join(cls, settings: Settings, chosen: TaskSelection, agents: list[Agent],
             workerinput: Mapping[str, Any], sandbox_hook: SandboxHook | None = None) -> ProbeSession:
        """A worker's session from the controller's :meth:`workerinput`. Raises :class:`RunError`
        when ``tasks.jsonl`` changed since the controller read it."""
        done = {name: {(str(k), str(t), int(n)) for k, t, n in keys}
                for name, keys in workerinput["homefield_probe_done"].items()}
        tries = {name: {(str(k), str(t), int(n)): int(c) for k, t, n, c in keys}
                 for name, keys in workerinput.get("homefield_probe_tries", {}).items()}
        session = cls(settings, chosen, agents, done=done, session_start=str(workerinput["homefield_session_start"]),
                      sandbox_hook=sandbox_hook, tries=tries)
        if workerinput["homefield_tasks_digest"] != session.digest:
            raise RunError("pytest-homefield: tasks.jsonl changed while the probe was starting")
        return session

    def workerinput(self) -> dict[str, Any]:
        """What a worker needs to :meth:`join` (JSON-able: answered calls, unanswered tries, session start,
        tasks digest, the text of ``tasks.jsonl`` for :meth:`~pytest_homefield.run.session.RunSession.prepare_worker`:
        a remote worker's host has none, ops63)."""
        return {
            "homefield_tasks_text": self.settings.tasks_path.read_text(encoding="utf-8"),
            "homefield_probe_done": {name: sorted(list(k) for k in keys) for name, keys in self.done.items()},
            "homefield_probe_tries": {name: sorted([*k, c] for k, c in keys.items())
                                      for name, keys in self.tries.items()},
            "homefield_session_start": self.session_start,
            "homefield_tasks_digest": self.digest,
        }

    @property
    def collect_path(self) -> Path:
        """``tasks.jsonl``: the file the probe's items are collected from (docs/contracts.md §5)."""
        return self.settings.tasks_path

    def close(self) -> None:
        """Nothing to free: a probe call makes no snapshot (the mode contract)."""

    def release(self) -> None:
        """Let the ``probe/`` folder's lock go (the controller, at the end; idempotent; nothing in a worker)."""
        if self.lock is not None:
            self.lock.release()

    def resume_hint(self) -> str:
        """The command continuing this probe."""
        agents = " ".join(f"{option('agent', 'cli')} {a.spec if a.name == a.spec else f'{a.name}={a.spec}'}"
                          for a in self.agents)
        return f"homefield probe {agents} {option('resume', 'cli')}"

    def record_path(self, agent: str) -> Path:
        """``.homefield/probe/<agent>.jsonl``."""
        return probe_path(self.settings.homefield_dir, agent)

    # -- calls ------------------------------------------------------------------------------------
    def limits(self, agent: str) -> RunLimits:
        """The stop rule of runs and ablations (:class:`~pytest_homefield.run.runner.RunLimits`, no budget)
        over ``agent``'s probe file: one rule for every mode, so one agent's claim stops that agent only."""
        if agent not in self._limits:
            self._limits[agent] = RunLimits(self.record_path(agent), budget_usd=None, since_iso=self.session_start)
        return self._limits[agent]

    def stop_reason(self, agent: str) -> str | None:
        """``"rate limited: <error>"`` once a call of ``agent`` (a name) was rate limited in this session
        (in this process, or in another: its record appended by the controller), else ``None``."""
        return self.limits(agent).stop_reason(agent)

    def call(self, task: Task, agent: Any, kind: str, sample: int, gold_id: str) -> dict[str, Any]:
        """Make one text-only call of ``agent`` with ``task``'s prompt and the files of ``gold_id``
        (itself for ``kind`` ``task``, the paired task for ``control``), score the answer against
        ``gold_id``'s added lines, and return its record (docs/contracts.md §4). An agent that starts a
        program is given ``sandbox=`` (:class:`ProbeSandboxes`). Never raises for the
        agent's failures (an exception is an ``infra`` outcome, the agent's claim). The agent's failure on
        the call's last try (``--max-retries`` unanswered tries already recorded) is scored as an empty
        answer, outcome ``agent_error`` (:func:`~pytest_homefield.run.retries.last_try_error`): declaring a
        rate limit cannot keep a call out of the verdict; homefield's own ``infra`` stays unscored."""
        prompt = probe_prompt(task.prompt, self.by_id[gold_id].source_files)
        a_settings = agent_settings(self.settings, self.settings.agent_defs.get(agent.name))
        started_at = now_iso()
        t0 = time.monotonic()
        # an agent that starts a program answers inside the sandbox of a run's attempt (docs/contracts.md §9)
        confined = {"sandbox": self.sandboxes} if runs_process(agent) else {}
        try:
            c = agent.complete(prompt, timeout_s=a_settings.timeout_s, gold_answer=self.gold[task.id], **confined)
        except Exception as exc:  # a hook agent's bug is an infra error of this call, never a lost session
            c = Completion(outcome="infra", error=f"{type(exc).__name__}: {exc}"[:300])
        wall = c.wall_s or (time.monotonic() - t0)
        outcome, error = c.outcome, c.error
        last = None if not outcome or c.established else last_try_error(
            outcome, error, self.tries.get(agent.name, {}).get((kind, task.id, sample), 0), self.settings.max_retries)
        if last is not None:  # the agent's failure on its last try: scored as the empty answer it gave
            outcome, error = "agent_error", last
        scored = c.outcome is None or last is not None
        answer = c.text[:ANSWER_CHARS]  # what the record keeps is what is scored: a merge recomputes it
        score = call_score(answer, c.outcome, self.gold[gold_id]) if scored else None
        record = {
            "schema_version": 1, "kind": kind, "task_id": task.id, "sample": sample,
            "agent": agent.name, "spec": agent.spec,
            **({"gold_task_id": gold_id} if kind == "control" else {}),
            "score": score, "outcome": outcome, "cost_usd": c.cost_usd, "input_tokens": c.input_tokens,
            "output_tokens": c.output_tokens, "cache_read_tokens": c.cache_read_tokens,
            "cache_write_tokens": c.cache_write_tokens,
            # the agent's words, as in a result record (contracts §8): one line, no control character, no key
            "model": None if c.model is None else agent_words(c.model, NAME_CHARS), "wall_s": round(wall, 3),
            "started_at": started_at, "finished_at": now_iso(), "error": None if error is None else agent_words(error),
            "answer": answer, "memorized": None,
        }
        self.limits(agent.name).add(record)  # counted at once in this process, as a run's attempt
        return record

    def messages(self, record: dict[str, Any]) -> list[Message]:
        """What the item posts for the controller to write: the call's record (appended to
        ``probe/<agent>.jsonl``, where every process's :meth:`stop_reason` reads it)."""
        home = self.settings.homefield_dir
        path = self.record_path(str(record["agent"]))
        return [append_message(path.relative_to(home).as_posix(), record)]

    # -- the end ----------------------------------------------------------------------------------
    def finish(self) -> list[tuple[Agent, Verdict, float]]:
        """The controller's end: judge every agent with answered calls against its control, rewrite its
        probe file with the verdict line (:func:`~pytest_homefield.probe.verdicts.write_verdict`), and
        return ``(agent, verdict, USD spent on its calls)`` per judged agent. A ``--shard`` session whose
        shard probes no task (by id hash a shard may hold none, or only tasks adding no code) writes every
        agent's verdict over no task, its file one verdict line: what ``homefield probe --merge`` counts as
        that shard (shard39; before, such a shard was refused, and its merge said it was missing)."""
        verdicts: list[tuple[Agent, Verdict, float]] = []
        at = now_iso()
        for agent in self.agents:
            path = self.record_path(agent.name)
            records = load_probe(path)
            if not records and (self.shard is None or self.tasks):
                continue  # no call made: nothing to judge (a shard holding no task is judged: the merge counts it)
            verdict = judge(agent.name, records, self.tasks, cutoff=self.cutoff, fdr=self.fdr,
                            floor=self.recite_floor, pairs=self.pairs)
            verdict.shard = str(self.shard) if self.shard else None
            if not self.tasks:  # a shard holding no probed task: its verdict line is what the merge counts
                verdict.notes = [f"shard {self.shard} holds no probed task (a task's shard is its id's hash): "
                                 "nothing to judge here; merge it with the other shards (homefield probe --merge)"]
            verdict.shard_of = self.shard_of
            verdict.max_tasks = self.max_tasks
            verdict.tasks_digest = self.digest
            write_verdict(path, verdict, at)
            cost = sum(float(r.get("cost_usd") or 0.0) for r in records if r.get("kind") in ("task", "control"))
            verdicts.append((agent, verdict, cost))
        return verdicts
