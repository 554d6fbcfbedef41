"""The one retry rule of every mode that calls an agent: run, ablate and probe (docs/contracts.md §8,
issue 30 "nothing scored at the agent's word").

A *try* is one recorded line that was not scored: a run's or an ablation's attempt recorded ``infra``
or ``rate_limited``, a probe call recorded without a score. ``--resume`` retries an unscored key at most
``--max-retries`` times (1 + M tries in all). On its last try a failure at the agent's word (every
``rate_limited``, an ``infra`` its own output claimed, and in a probe any call it did not answer) is
scored as a failure, with the error ``<what> N times (--max-retries M): <its error>``
(:func:`last_try_error`); a failure homefield established itself (the snapshot, the sandbox, the agent's
program could not be started) stays unscored on its last try and is never retried again
(:func:`spent`). The modes differ only in their keys and in what "scored as a failure" writes: a run's
and an ablation's attempt becomes ``agent_error`` (:func:`cap_retries`), a probe call gets the score of
an empty answer (:meth:`pytest_homefield.probe.session.ProbeSession.call`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from pytest_homefield.records import UNSCORED_OUTCOMES, Result, load_results
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["TryKey", "count_tries", "spent", "last_try_error", "unscored_tries", "cap_retries", "crash_result",
           "could_kill_worker", "WORKER_DIED"]

#: (task_id, agent, attempt, variant) of a run's or an ablation's attempt (:attr:`Result.key`)
TryKey = tuple[str, str, int, str]

_K = TypeVar("_K", bound=Hashable)
_R = TypeVar("_R")

#: how the error of a scored last try names the failure (other outcomes: their name, ``_`` as a space)
_WHAT = {"rate_limited": "rate limited", "infra": "reported infra"}


def count_tries(records: Iterable[_R], key: Callable[[_R], _K], unscored: Callable[[_R], bool]) -> dict[_K, int]:
    """``key(record)`` → how many of ``records`` are ``unscored``: the tries ``--max-retries`` counts."""
    out: dict[_K, int] = {}
    for r in records:
        if unscored(r):
            k = key(r)
            out[k] = out.get(k, 0) + 1
    return out


def spent(tries: Mapping[_K, int], max_retries: int) -> set[_K]:
    """The keys tried more than ``max_retries`` times (``1 + max_retries`` tries: ``--max-retries`` is
    spent): never tried again, whatever their last line says."""
    return {k for k, n in tries.items() if n > max_retries}


def last_try_error(outcome: str, error: str | None, prior: int, max_retries: int) -> str | None:
    """The error of the scored failure an unscored ``outcome`` of the agent's (with its ``error``)
    becomes when ``prior`` unscored tries are already recorded and ``prior >= max_retries`` (this is
    the last try): ``rate limited 3 times (--max-retries 2): <error>``, ``reported infra 1 time
    (--max-retries 0)``, ``agent error 2 times (…): …``. ``None`` while a retry is left."""
    if prior < max_retries:
        return None
    what = _WHAT.get(outcome, outcome.replace("_", " "))
    why = f"{what} {plural(prior + 1, 'time')} ({option('max-retries', 'cli')} {max_retries})"
    return f"{why}: {error}" if error else why


def unscored_tries(results_path: Path) -> dict[TryKey, int]:
    """:attr:`Result.key` (every variant) → how many unscored records (``infra``, ``rate_limited``)
    ``results_path`` (a run's or an ablation's ``results.jsonl``) holds for it. Raises
    :class:`~pytest_homefield.errors.RecordError` for a bad line (:func:`load_results`)."""
    return count_tries(load_results(results_path), lambda r: r.key, lambda r: r.outcome in UNSCORED_OUTCOMES)


def cap_retries(result: Result, tries: Mapping[TryKey, int], max_retries: int) -> Result:
    """``result`` scored as a failure when it is the agent's claim of an unscored outcome (every
    ``rate_limited``; an ``infra`` read from its own output, ``Result.claimed``) with ``max_retries``
    unscored tries already recorded for its key (``tries``, :func:`unscored_tries`): outcome
    ``agent_error``, error from :func:`last_try_error`. Any other result is returned as it is; an
    ``infra`` homefield established on its last try stays unscored and is never redone (:func:`spent`)."""
    claim = result.outcome == "rate_limited" or (result.outcome == "infra" and result.claimed)
    error = last_try_error(result.outcome, result.error, tries.get(result.key, 0), max_retries) if claim else None
    if error is None:
        return result
    return dataclasses.replace(result, outcome="agent_error", claimed=False, error=error)


#: the error of an attempt whose xdist worker died while running it
WORKER_DIED = ("its xdist worker died while running it (killed by a signal or crashed: without a sandbox, "
               "graded code can kill it)")
#: a run's attempt ``…tasks.jsonl::<task>::<agent>[<n>]``, an ablation's ``…plan.json::<variant>::<task>::<agent>[<n>]``
_RUN_NODEID = re.compile(r"(?:plan\.json::(?P<variant>[^:]+))?::(?P<task>[^:]+)::(?P<agent>[A-Za-z0-9_.-]+)"
                         r"\[(?P<attempt>[0-9]+)\]$")


def crash_result(nodeid: str, *, run_id: str, tries: Mapping[TryKey, int], max_retries: int,
                 sandbox: Mapping[str, object], agents: Collection[str], now: str | None = None) -> Result | None:
    """The record of a run's or an ablation's attempt (``nodeid``, docs/contracts.md §5) whose xdist
    worker died while running it: ``infra`` with the error :data:`WORKER_DIED`, ``claimed`` when the
    attempt's code could have killed it (:func:`could_kill_worker` of the session's ``sandbox`` summary:
    graded code run without a sandbox can kill its worker on the tasks it fails, which left them
    unrecorded and retried for ever). A claim's last try is scored as ``agent_error``
    (:func:`cap_retries`); otherwise it is the machine's, retried at most ``max_retries`` times and never
    scored. ``now``: ISO 8601 UTC (default: this millisecond). ``None`` for a node id that is no
    attempt of one of ``agents``."""
    m = _RUN_NODEID.search(nodeid)
    if m is None or m["agent"] not in agents:
        return None
    when = now or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    result = Result(run_id=run_id, task_id=m["task"], agent=m["agent"], attempt=int(m["attempt"]), outcome="infra",
                    started_at=when, finished_at=when, error=WORKER_DIED,
                    claimed=could_kill_worker(sandbox, m["agent"]), variant=m["variant"] or "base")
    return cap_retries(result, tries, max_retries)


def could_kill_worker(sandbox: Mapping[str, object], agent: str) -> bool:
    """Whether the code of ``agent``'s attempts could signal the xdist worker, from a session's
    ``meta.json`` ``sandbox`` (:func:`~pytest_homefield.run.runner.sandbox_summary`): unless both the
    agent and the test runs are in bubblewrap's own PID namespace (Landlock scopes signals only from
    its ABI 6, and a sandbox hook is the user's), it could."""
    agents = sandbox.get("agents")
    backend = agents.get(agent, "none") if isinstance(agents, Mapping) else "none"
    return not (str(backend).startswith("bwrap") and str(sandbox.get("tests", "none")).startswith("bwrap"))
