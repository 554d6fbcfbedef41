"""The probe file ``.homefield/probe/<agent>.jsonl`` read back (docs/contracts.md §4): each record
checked, and the agent's latest verdict.

The probe (:mod:`pytest_homefield.probe`) writes these files and documents their records in
:mod:`pytest_homefield.probe.verdicts`; the report reads the verdicts too, so the reader lives here,
below both.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pytest_homefield.errors import RecordError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import SCHEMA_VERSION, json_type
from pytest_homefield.store import read_jsonl_lines

__all__ = ["check_probe_record", "load_probe", "load_verdict", "probe_path"]


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


def load_verdict(path: Path) -> dict[str, Any] | None:
    """The last verdict line of a probe file, or ``None`` (no file, or no finished session)."""
    found = None
    for r in load_probe(path):
        if r.get("kind") == "verdict":
            found = r
    return found
