"""The memorization probe's record file, ``.homefield/probe/<agent>.jsonl`` (docs/contracts.md §4), as
every layer reads it: the probe writes it (:mod:`pytest_homefield.probe`), a run with
``--exclude-memorized`` and the report read its verdict line.

**Records.** One JSON line per probe call, appended by the controller from the report of the item
that made it (:mod:`pytest_homefield.transport`):
``kind`` ``"task"`` (the task's own prompt, files and gold lines) or ``"control"`` (the task's prompt
with the files and gold lines of ``gold_task_id``), ``task_id``, ``sample`` (from 1), ``agent``,
``spec``, ``score`` (token similarity in [0, 1], ``None`` when unscored), ``outcome`` (``None`` when
answered, else ``timeout``/``agent_error``/``budget_exceeded``/``infra``/``rate_limited``: unscored,
retried on resume; or ``agent_error`` with a score: the last try, below), ``cost_usd`` (USD),
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``, ``model``, ``wall_s``
(s), ``started_at``, ``finished_at``, ``error``,
``answer`` (the first :data:`pytest_homefield.probe.similarity.ANSWER_CHARS` characters, what was scored)
and ``memorized`` (``None`` until the control is known). A repeated (kind, task_id, sample) is a retry: the
last line wins.
An unanswered call is retried by ``--resume`` at most ``--max-retries`` times; on its last try the agent's
failure is scored as the empty answer it gave (outcome ``agent_error``, the error saying how many times it
failed; :mod:`pytest_homefield.run.retries`), homefield's own ``infra`` stays unscored and is not retried.

The verdict line's fields: :mod:`pytest_homefield.probe.verdicts`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_homefield.errors import RecordError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import SCHEMA_VERSION, json_type
from pytest_homefield.store import read_jsonl_lines

__all__ = ["probe_path", "check_probe_record", "load_probe", "call_key", "latest", "done_keys", "load_verdict"]


def probe_path(homefield_dir: Path, agent: str) -> Path:
    """``<.homefield>/probe/<agent>.jsonl`` (:meth:`HomefieldDir.probe_file`) for the ``.homefield``
    folder ``homefield_dir``."""
    return HomefieldDir(homefield_dir.parent).probe_file(agent)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


#: field -> (check, description) of a call record (``kind`` ``task`` or ``control``)
_CALL_FIELDS: dict[str, tuple[Any, str]] = {
    "task_id": (lambda v: isinstance(v, str), "a string"),
    "sample": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "an integer at least 1"),
    "agent": (lambda v: isinstance(v, str), "a string"),
    "spec": (lambda v: isinstance(v, str), "a string"),
    "score": (lambda v: v is None or (_num(v) and 0 <= v <= 1), "a number in [0, 1] or null"),
    "outcome": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "cost_usd": (lambda v: v is None or _num(v), "a number or null"),
}


#: the call fields without which a record cannot be keyed (kind, task_id, sample); the others are
#: checked when present
_REQUIRED = ("task_id", "sample")


def check_probe_record(r: dict[str, Any]) -> None:
    """Raise :class:`RecordError` (``"field 'X' …"``) unless ``r`` is a valid probe record:
    ``schema_version`` 1, ``kind`` ``task``/``control`` with :data:`_CALL_FIELDS` of their types
    (``task_id`` and ``sample`` required; ``gold_task_id``, when given, a string), or ``kind``
    ``verdict`` with ``flagged`` a list of ``{task_id, …}`` objects."""
    version = r.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise RecordError(f"field 'schema_version' is {version!r}; this version of homefield reads "
                          f"{SCHEMA_VERSION} only")
    kind = r.get("kind")
    if kind == "verdict":
        flagged = r.get("flagged", [])
        if not isinstance(flagged, list) or not all(isinstance(f, dict) and isinstance(f.get("task_id"), str)
                                                    for f in flagged):
            raise RecordError(f"field 'flagged' must be a list of {{task_id, …}} objects, got {json_type(flagged)}")
        return
    if kind not in ("task", "control"):
        raise RecordError(f"field 'kind' is {kind!r}; expected task, control or verdict")
    for name, (check, what) in _CALL_FIELDS.items():
        if name not in r:
            if name in _REQUIRED:
                raise RecordError(f"field '{name}' is missing")
            continue
        if not check(r[name]):
            raise RecordError(f"field '{name}' must be {what}, got {json_type(r[name])}")
    if kind == "control" and "gold_task_id" in r and not isinstance(r["gold_task_id"], str):
        got = json_type(r.get("gold_task_id"))
        raise RecordError(f"field 'gold_task_id' must be a string on a control record, got {got}")


def load_probe(path: Path) -> list[dict[str, Any]]:
    """Every record of a probe file in file order, each checked (:func:`check_probe_record`). A line
    that is not valid JSON is a torn append and is skipped (docs/contracts.md §4); any other bad line
    raises :class:`RecordError` ``"<path>: line N: field 'X' …"``. A missing file gives ``[]``."""
    out: list[dict[str, Any]] = []
    for n, r in read_jsonl_lines(path):
        try:
            check_probe_record(r)
        except RecordError as exc:
            raise RecordError(f"{path}: line {n}: {exc}") from None
        out.append(r)
    return out


def call_key(record: dict[str, Any]) -> tuple[str, str, int]:
    """(kind, task_id, sample) of a call record: a repeated key is a retry."""
    return (str(record["kind"]), str(record.get("task_id", "")), int(record.get("sample", 0)))


def latest(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Call records keyed by :func:`call_key`; the last line wins. Verdict lines are skipped."""
    return {call_key(r): r for r in records if r.get("kind") in ("task", "control")}


def done_keys(path: Path) -> set[tuple[str, str, int]]:
    """(kind, task_id, sample) of the calls already answered (scored): never made again."""
    return {k for k, r in latest(load_probe(path)).items() if r.get("score") is not None}


def load_verdict(path: Path) -> dict[str, Any] | None:
    """The last verdict line of a probe file, or ``None`` (no file, or no finished session)."""
    found = None
    for r in load_probe(path):
        if r.get("kind") == "verdict":
            found = r
    return found
