"""Flaky PASS_TO_PASS ids, found when grading the oracle (docs/contracts.md §7).

Mining runs a PASS_TO_PASS id in the first stability run of each state only, so one that fails now
and then can reach ``tasks.jsonl``. Grading catches it: when the ``oracle`` agent (the reference
fix) passes every FAIL_TO_PASS id but fails PASS_TO_PASS ids (outcome ``regression``) in a session
whose agents are all reference agents (oracle, noop, ``sim:P``: ``homefield verify``, ``homefield
run --agent oracle``), those ids are appended to ``.homefield/flaky.jsonl`` (:func:`found_flaky`,
:func:`flaky_records`; written by the controller like a result line), one line per task id and test
id with where it was seen::

    {"schema_version": 1, "task_id": "…", "test_id": "tests/t.py::test_x", "run_id": "…",
     "agent": "oracle", "attempt": 1, "found_at": "2026-12-01T12:00:00.000+00:00"}

A run reads the file when it starts (:func:`read_flaky`) and freezes what it read in its
``meta.json`` (``flaky_p2p``: {task id: [test ids]}), so ``--resume`` grades as the run began;
grading then leaves those ids out of the regression check for every agent, as ids that were never
PASS_TO_PASS. Nothing already written is rewritten: a result graded before an id was found keeps
its outcome. No pytest here.

Why only such sessions: a line there excuses an id for every agent of every later run, so nothing an
agent wrote may cause one. In a session with any other agent, that agent's code runs on this machine
beside the oracle's grading (before it in the same process, or at once in another worker) and can make
a PASS_TO_PASS id fail there (attacker9 F3b: a redis ``ACL`` its tests set survived into the
oracle's grading; it no longer can, grading's service instances are fresh, but the load it puts on
the machine, or a shared ``/tmp`` under ``--sandbox none``, stays). A second oracle grading that fails
too would not serve: a flaky id passes again more often than not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.reference import NoopAgent, OracleAgent, SimAgent
from pytest_homefield.errors import RecordError, RunError, StoreError
from pytest_homefield.records import Result, Task
from pytest_homefield.run.grading import Grade
from pytest_homefield.store import read_jsonl_lines

__all__ = ["META_KEY", "found_flaky", "flaky_records", "read_flaky", "freeze_flaky", "frozen_flaky", "merged_flaky",
           "count_flaky", "flaky_line"]

#: The ``meta.json`` field holding a run's frozen flaky ids, {task id: [test ids]}.
META_KEY = "flaky_p2p"


def found_flaky(agent: Agent, grade: Grade, session: Sequence[Agent]) -> list[str]:
    """The PASS_TO_PASS ids ``grade`` shows flaky: those the oracle failed while it passed every
    FAIL_TO_PASS id (outcome ``regression``) in a session whose agents (``session``) are all reference
    agents; ``[]`` for any other agent or outcome (a broken environment fails FAIL_TO_PASS too, and
    says nothing about single ids), and in a session with any other agent (whose code may have caused
    the failure, see the module docstring)."""
    if not isinstance(agent, OracleAgent) or grade.outcome != "regression" \
            or not all(isinstance(a, (OracleAgent, NoopAgent, SimAgent)) for a in session):
        return []
    return list(grade.failing_p2p)


def flaky_records(result: Result, test_ids: Iterable[str]) -> list[dict[str, Any]]:
    """The ``flaky.jsonl`` lines for ``test_ids`` found in ``result``'s attempt."""
    return [{"schema_version": 1, "task_id": result.task_id, "test_id": t, "run_id": result.run_id,
             "agent": result.agent, "attempt": result.attempt, "found_at": result.finished_at} for t in test_ids]


def read_flaky(path: Path, tasks: Iterable[Task]) -> dict[str, list[str]]:
    """{task id: sorted test ids} of ``flaky.jsonl`` for ``tasks``, keeping only ids that are in the
    task's PASS_TO_PASS; ``{}`` when the file does not exist. Torn lines are skipped. Raises
    :class:`RunError` (``"<path>: line N: …"``) for a line without string ``task_id`` and ``test_id``,
    or a file that cannot be read."""
    p2p = {t.id: set(t.PASS_TO_PASS) for t in tasks}
    found: dict[str, set[str]] = {}
    try:
        for n, rec in read_jsonl_lines(path):
            for name in ("task_id", "test_id"):
                if not isinstance(rec.get(name), str):
                    raise RunError(f"{path}: line {n}: field '{name}' must be a string")
            tid, test = rec["task_id"], rec["test_id"]
            if test in p2p.get(tid, ()):
                found.setdefault(tid, set()).add(test)
    except (RecordError, StoreError) as exc:
        raise RunError(str(exc)) from None
    return {tid: sorted(ids) for tid, ids in sorted(found.items())}


def freeze_flaky(meta: dict[str, Any], path: Path, tasks: Iterable[Task]) -> dict[str, list[str]]:
    """What a new run or ablation grades with: :func:`read_flaky` of ``path`` for ``tasks``, also
    stored in ``meta`` (its ``meta.json``, not yet written) under :data:`META_KEY` when there is any
    (no field otherwise). A resumed one reads its own with :func:`frozen_flaky`. Raises as
    :func:`read_flaky`."""
    flaky = read_flaky(path, tasks)
    if flaky:
        meta[META_KEY] = flaky
    return flaky


def frozen_flaky(meta: Mapping[str, Any]) -> dict[str, list[str]]:
    """A run's frozen flaky ids from its ``meta.json`` (``{}`` for a run that froze none). Raises
    :class:`RunError` when the field is not {str: [str]}."""
    value = meta.get(META_KEY) or {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, list)
                                              and all(isinstance(i, str) for i in v) for k, v in value.items()):
        raise RunError(f"meta.json: field '{META_KEY}' must be an object of test id lists")
    return {k: list(v) for k, v in value.items()}


def merged_flaky(metas: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The frozen flaky ids of several shards' ``meta.json`` as one: per task, the sorted union (each
    shard froze what ``flaky.jsonl`` held when it started). Raises :class:`RunError` as
    :func:`frozen_flaky`."""
    union: dict[str, set[str]] = {}
    for meta in metas:
        for task_id, test_ids in frozen_flaky(meta).items():
            union.setdefault(task_id, set()).update(test_ids)
    return {task_id: sorted(ids) for task_id, ids in sorted(union.items())}


def count_flaky(flaky: Mapping[str, Iterable[str]]) -> int:
    """How many test ids ``flaky`` leaves out, over all tasks."""
    return sum(len(list(v)) for v in flaky.values())


def flaky_line(n: int) -> str:
    """``"2 PASS_TO_PASS ids left out as flaky (found when grading oracle)"``."""
    return f"{n} PASS_TO_PASS id{'s' if n != 1 else ''} left out as flaky (found when grading oracle)"
