"""``--adaptive``: attempts in rounds (docs/contracts.md §2, §8; issue 32). No pytest.

Items are collected up front, sorted by attempt (round r = attempt r of every task and agent; stable,
so every xdist worker has the same order). Before an item of round r > 1 starts it waits until every
item of rounds < r of this session (the items collected and selected, in any process) has a record in
``results.jsonl`` written since the session started -- the controller appends each record as the
item's report arrives (:mod:`pytest_homefield.transport`), so a worker that shares the controller's
``.homefield/`` sees it. Then it asks the report package (:class:`.session.RunReports`) whether the
attempt is needed; one that is not is recorded with outcome ``not_needed`` and its reason, and
skipped. Under xdist the items go out with ``--dist load``: each worker takes items in collection
order, so the earliest unfinished item never waits on a later one (``worksteal`` appends stolen
items behind a waiting one, which could wait forever; refused). A wait ends without its round when
a run limit stops the agent (the item is then skipped for it) or when ``results.jsonl`` has not
grown for :func:`stall_seconds` (a worker lost its item); the decision is then made from what is
recorded (valid: the test uses whichever attempt pairs it has).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from pytest_homefield.records import NOT_NEEDED, Result
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl

__all__ = ["AttemptKey", "adaptive_refusal", "wait_for_rounds", "not_needed_result", "stall_seconds", "round_order"]

AttemptKey = tuple[str, str, int]


def round_order(attempt: int | None) -> int:
    """The sort key of an item in an adaptive run: its attempt (round); items of other kinds (``None``)
    sort first."""
    return 0 if attempt is None else int(attempt)


def stall_seconds(timeout_s: float, run_timeout_s: float) -> float:
    """How long (s) an item waits for its earlier rounds with ``results.jsonl`` not growing before it
    decides from what is recorded: twice the longest attempt (agent ``timeout_s`` plus the grading's
    ``run_timeout_s``) plus 300 s of setup (a task environment being built)."""
    return 2.0 * (float(timeout_s) + float(run_timeout_s)) + 300.0


def _since(record: Mapping[str, Any], start: _dt.datetime | None) -> bool:
    if start is None:
        return True
    try:
        when = _dt.datetime.fromisoformat(str(record.get("started_at") or ""))
    except ValueError:
        return True  # no usable time: count it
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return when >= start


def wait_for_rounds(results: Path, keys: Collection[AttemptKey], *, session_start: str,
                    stop: Callable[[], str | None], stall_s: float, poll_s: float = 0.2,
                    stopped: Callable[[str], bool] = lambda agent: False,
                    clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]]:
    """Wait until each of ``keys`` (task id, agent, attempt) has a ``base`` record in ``results`` started
    at or after ``session_start`` (ISO 8601), or belongs to an agent that starts no further attempt
    (``stopped(agent)``: its share of the budget or its rate limit; its records will never come);
    return the records then read (every line, file order). Returns early when ``stop()`` gives a reason
    (the waiting item's own run limit) or when the file has not changed for ``stall_s`` seconds.
    Raises nothing for a missing file (no record yet)."""
    try:
        start: _dt.datetime | None = _dt.datetime.fromisoformat(session_start)
        if start is not None and start.tzinfo is None:
            start = start.replace(tzinfo=_dt.timezone.utc)
    except ValueError:
        start = None
    wanted = set(keys)
    last_size, last_change = -1, clock()
    while True:
        size = results.stat().st_size if results.exists() else 0
        records = list(read_jsonl(results)) if results.exists() else []
        have = {(str(r.get("task_id")), str(r.get("agent")), int(r.get("attempt", 0)))
                for r in records if r.get("variant", "base") == "base" and _since(r, start)}
        missing = {agent for _task, agent, _attempt in wanted - have}
        if stop() or all(stopped(agent) for agent in missing):
            return records
        if size != last_size:
            last_size, last_change = size, clock()
        elif clock() - last_change >= stall_s:
            return records
        sleep(poll_s)


def not_needed_result(run_id: str, task_id: str, agent: str, attempt: int, reason: str, *,
                      now: str | None = None) -> Result:
    """The record of an attempt ``--adaptive`` did not need: outcome ``not_needed`` (not scored, not
    retried), ``error`` = the reason (the look and the pairs that settled it), started and finished
    ``now`` (ISO 8601 UTC; default the current millisecond)."""
    when = now or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
    return Result(run_id=run_id, task_id=task_id, agent=agent, attempt=attempt, outcome=NOT_NEEDED,
                  started_at=when, finished_at=when, error=reason)


def adaptive_refusal(*, shard: str | None, dist: str | None, shared: bool = True) -> str | None:
    """Why ``--adaptive`` cannot run in this session (one line), or ``None``: with ``--shard`` (a pair's
    looks need all its tasks in one run), with an xdist ``--dist`` other than ``load`` (see the module
    docstring), or in a worker that does not share the controller's ``.homefield/`` (it could not read the
    rounds before)."""
    if shard:
        return (f"{option('adaptive')} cannot run with {option('shard')}: a pair's looks need every task in one run "
                f"(run the shards without {option('adaptive')}, or one run with -n)")
    if dist not in (None, "no", "load"):
        return f"{option('adaptive')} needs --dist load under xdist (rounds wait on each other), got --dist {dist}"
    if not shared:
        return (f"{option('adaptive')} needs xdist workers that share the controller's .homefield/ "
                "(local -n workers, not remote hosts)")
    return None
