"""Probe records, the control, and the verdicts (docs/contracts.md §4: ``.homefield/probe/<agent>.jsonl``).

**Records.** One JSON line per probe call, appended by the controller from the report of the item
that made it (:mod:`pytest_homefield.transport`):
``kind`` ``"task"`` (the task's own prompt, files and gold lines) or ``"control"`` (the task's prompt
with the files and gold lines of ``gold_task_id``), ``task_id``, ``sample`` (from 1), ``agent``,
``spec``, ``score`` (token similarity in [0, 1], ``None`` when unscored), ``outcome`` (``None`` when
answered, else ``timeout``/``agent_error``/``budget_exceeded``/``infra``/``rate_limited``: unscored,
retried on resume), ``cost_usd`` (USD), ``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
``cache_write_tokens``, ``model``, ``wall_s`` (s), ``started_at``, ``finished_at``, ``error``,
``answer`` (first :data:`ANSWER_CHARS` characters) and ``memorized`` (``None`` until the control is
known). A repeated (kind, task_id, sample) is a retry: the last line wins.

**Control.** With a cutoff date, the control is the tasks authored after it (``authored_at``'s date
later than the cutoff): the model cannot have seen them; only earlier tasks are judged, later ones
are ``memorized: false``. Without a cutoff, the control is one mismatched pair per task
(:func:`mismatched_pairs`): the task's prompt with another task's file list, scored against that
other task's gold lines, which no memory can serve. Task and control alike are summarised by the
best score over their scored samples. A judged task is ``memorized`` when its best score exceeds the
control's 95th percentile (:func:`percentile`); a task without a scored sample, or any task when the
control is empty, gets ``None``. Fewer than :data:`SMALL_CONTROL` control values are reported as a
rough percentile.

**Verdict record.** At the end of a probe session the controller rewrites the file atomically: the
same lines in the same order, ``memorized`` filled in on ``task`` lines, then one ``kind:
"verdict"`` line (replacing earlier ones): ``control`` (``"cutoff"`` or ``"mismatched"``),
``cutoff``, ``control_n``, ``control_p95``, ``judged`` (tasks with a scored sample), ``flagged``
[{task_id, best, mean}], ``tasks`` {task_id: {best, mean, samples, memorized}}, ``at``,
``tasks_digest`` (of the ``tasks.jsonl`` probed), ``shard`` (``"K/N"`` for a ``--shard`` session,
which judges its shard's tasks only, else ``None``) and, for a merge of shards, ``merged_from``
and ``incomplete`` (the ``incomplete: shard K/N missing`` lines).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.errors import ProbeError, RecordError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import SCHEMA_VERSION, Task, json_type
from pytest_homefield.store import read_jsonl_lines, write_jsonl_atomic

__all__ = [
    "ANSWER_CHARS",
    "SMALL_CONTROL",
    "Verdict",
    "ProbeError",
    "done_keys",
    "judge",
    "latest",
    "load_probe",
    "check_probe_record",
    "load_verdict",
    "mismatched_pairs",
    "percentile",
    "probe_path",
    "verdict_lines",
    "write_verdict",
]

ANSWER_CHARS = 4000
SMALL_CONTROL = 10
QUANTILE = 0.95


def probe_path(homefield_dir: Path, agent: str) -> Path:
    """``<.homefield>/probe/<agent>.jsonl`` (:meth:`HomefieldDir.probe_file`) for the ``.homefield``
    folder ``homefield_dir``."""
    return HomefieldDir(homefield_dir.parent).probe_file(agent)


def percentile(values: Sequence[float], q: float = QUANTILE) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by linear interpolation between order statistics,
    definition 7 of R. J. Hyndman and Y. Fan, *Sample Quantiles in Statistical Packages* (The
    American Statistician 50(4), 1996) — numpy's default: ``x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋])``
    with ``h = (n − 1)·q`` over the sorted values. ``None`` for no values."""
    xs = sorted(values)
    if not xs:
        return None
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def mismatched_pairs(task_ids: Sequence[str]) -> dict[str, str]:
    """Control pairs: each task id → the task whose files and gold lines go with its prompt. Ids are
    sorted and each is paired with the next (the last with the first), so no task is paired with
    itself and every gold answer is used once; the same ids always give the same pairs. Fewer than
    two tasks give no pairs."""
    ids = sorted(set(task_ids))
    if len(ids) < 2:
        return {}
    return {tid: ids[(i + 1) % len(ids)] for i, tid in enumerate(ids)}


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


def latest(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Call records keyed by (kind, task_id, sample); the last line wins. Verdict lines are skipped."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in records:
        if r.get("kind") in ("task", "control"):
            out[(str(r["kind"]), str(r.get("task_id", "")), int(r.get("sample", 0)))] = r
    return out


def done_keys(path: Path) -> set[tuple[str, str, int]]:
    """(kind, task_id, sample) of the calls already answered (scored): never made again."""
    return {k for k, r in latest(load_probe(path)).items() if r.get("score") is not None}


def _authored_after(task: Task, cutoff: str) -> bool:
    return task.authored_at[:10] > cutoff


@dataclass
class Verdict:
    """The outcome of judging one agent's probe (see the module docstring). Scores in [0, 1]."""

    agent: str
    control: str
    cutoff: str | None
    control_n: int
    control_p95: float | None
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    tasks_digest: str = ""
    shard: str | None = None
    merged_from: list[dict[str, Any]] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    @property
    def judged(self) -> int:
        """Tasks that got a verdict (true or false) against the control."""
        return sum(1 for t in self.tasks.values() if t["memorized"] is not None and not t.get("control"))

    @property
    def flagged(self) -> list[dict[str, Any]]:
        """[{task_id, best, mean}] of the memorized tasks, highest best score first."""
        rows = [{"task_id": tid, "best": t["best"], "mean": t["mean"]}
                for tid, t in self.tasks.items() if t["memorized"]]
        return sorted(rows, key=lambda r: (-r["best"], r["task_id"]))

    def to_record(self, at: str) -> dict[str, Any]:
        return {"schema_version": 1, "kind": "verdict", "agent": self.agent, "control": self.control,
                "cutoff": self.cutoff, "control_n": self.control_n, "control_p95": self.control_p95,
                "judged": self.judged, "flagged": self.flagged, "tasks": self.tasks, "notes": self.notes,
                "at": at, "tasks_digest": self.tasks_digest, "shard": self.shard,
                **({"merged_from": self.merged_from, "incomplete": self.incomplete} if self.merged_from else {})}


def _summary(scores: list[float]) -> tuple[float | None, float | None]:
    if not scores:
        return None, None
    return round(max(scores), 6), round(sum(scores) / len(scores), 6)


def judge(agent: str, records: Iterable[dict[str, Any]], tasks: Sequence[Task], *,
          cutoff: str | None = None) -> Verdict:
    """The verdict for ``agent`` over ``tasks`` from its call ``records`` (see the module docstring).
    ``cutoff`` is a ``YYYY-MM-DD`` date or ``None`` (mismatched-pair control)."""
    calls = latest(records)
    scores: dict[tuple[str, str], list[float]] = {}
    for (kind, tid, _), r in calls.items():
        if r.get("score") is not None:
            scores.setdefault((kind, tid), []).append(float(r["score"]))
    ids = [t.id for t in tasks]
    v = Verdict(agent=agent, control="cutoff" if cutoff else "mismatched", cutoff=cutoff, control_n=0,
                control_p95=None)
    if cutoff:
        later = {t.id for t in tasks if _authored_after(t, cutoff)}
        control = [b for tid in ids if tid in later for b in [_summary(scores.get(("task", tid), []))[0]]
                   if b is not None]
    else:
        later = set()
        control = [b for tid in ids for b in [_summary(scores.get(("control", tid), []))[0]] if b is not None]
    v.control_n = len(control)
    v.control_p95 = None if not control else round(percentile(control) or 0.0, 6)
    for tid in ids:
        best, mean = _summary(scores.get(("task", tid), []))
        row: dict[str, Any] = {"best": best, "mean": mean, "samples": len(scores.get(("task", tid), []))}
        if tid in later:
            row.update(control=True, memorized=False)
        elif best is None or v.control_p95 is None:
            row["memorized"] = None
        else:
            row["memorized"] = best > v.control_p95
        v.tasks[tid] = row
    if cutoff and not control:
        v.notes.append(f"no task authored after {cutoff} has a scored sample: no control, no verdict")
    elif not control:
        v.notes.append("no mismatched control pair has a scored sample: no verdict")
    elif len(control) < SMALL_CONTROL:
        what = f"tasks authored after {cutoff}" if cutoff else "mismatched pairs"
        v.notes.append(f"the control has only {len(control)} {what} (fewer than {SMALL_CONTROL}): "
                       "its 95th percentile is rough")
    unscored = [tid for tid in ids if tid not in later and v.tasks[tid]["best"] is None]
    if unscored:
        v.notes.append(f"{len(unscored)} task(s) have no scored sample (failed calls are retried with --resume)")
    return v


def verdict_lines(name: str, spec: str, v: Verdict, tasks: dict[str, Task],
                  cost_usd: float) -> list[tuple[str, dict[str, bool]]]:
    """The terminal lines of one agent's verdict: the headline, notes, and each flagged task."""
    p95 = "n/a" if v.control_p95 is None else f"{v.control_p95:.2f}"
    what = f"{v.control_n} tasks authored after {v.cutoff}" if v.cutoff else f"{v.control_n} mismatched pairs"
    out: list[tuple[str, dict[str, bool]]] = [(
        f"{name} ({spec}) recites {len(v.flagged)} of {v.judged} tasks; control {what}, "
        f"95th percentile {p95}; cost {cost_usd:.4f} USD", {"bold": True, "yellow": bool(v.flagged)})]
    for note in v.notes:
        out.append((f"  note: {note}", {"yellow": True}))
    for f in v.flagged:
        subject = tasks[f["task_id"]].subject if f["task_id"] in tasks else ""
        out.append((f"  memorized {f['task_id']}  best {f['best']:.2f}  mean {f['mean']:.2f}  {subject[:70]}",
                    {"yellow": True}))
    return out


def write_verdict(path: Path, verdict: Verdict, at: str) -> None:
    """Rewrite ``path`` atomically: every call line kept in order, ``memorized`` set on ``task`` lines
    from ``verdict``, earlier verdict lines dropped, the new verdict line last."""
    lines = [r for r in load_probe(path) if r.get("kind") != "verdict"]
    for r in lines:
        if r.get("kind") == "task":
            r["memorized"] = (verdict.tasks.get(str(r.get("task_id"))) or {}).get("memorized")
    write_jsonl_atomic(path, [*lines, verdict.to_record(at)])


def load_verdict(path: Path) -> dict[str, Any] | None:
    """The last verdict line of a probe file, or ``None`` (no file, or no finished session)."""
    found = None
    for r in load_probe(path):
        if r.get("kind") == "verdict":
            found = r
    return found


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


#: Agent kinds that need no probe results for ``--exclude-memorized``: they are no model and have no memory.
REFERENCE_KINDS = ("oracle", "noop", "sim")


def excluded_for_run(homefield_dir: Path, agents: Sequence[Any]) -> dict[str, Any]:
    """What ``--exclude-memorized`` drops for a run of ``agents`` (objects with ``name`` and ``spec``):
    every task flagged ``memorized`` in the latest verdict of any of them, for all agents, so that
    comparisons stay paired.

    Returns ``{"tasks": [task_id, …] sorted, "by_agent": {name: {"tasks": [...], "control": …,
    "control_n": …, "control_p95": …, "cutoff": …}}}``. Reference agents (``oracle``, ``noop``,
    ``sim:P``) without probe results are skipped. Raises :class:`ProbeError` naming the agent when
    another agent has no finished probe, or its probe was made with a different spec.
    """
    flagged: set[str] = set()
    by_agent: dict[str, Any] = {}
    for agent in agents:
        path = probe_path(homefield_dir, agent.name)
        verdict = load_verdict(path)
        kind = str(agent.spec).split(":", 1)[0]
        if verdict is None:
            if kind in REFERENCE_KINDS:
                continue
            if path.exists():
                raise ProbeError(f"--homefield-exclude-memorized: the probe of agent {agent.name!r} did not finish: "
                                 f"run `homefield probe --agent {agent.spec} --resume` first")
            raise ProbeError(f"--homefield-exclude-memorized: no probe results for agent {agent.name!r}: "
                             f"run `homefield probe --agent {agent.spec}` first")
        if verdict.get("shard") or verdict.get("incomplete"):
            what = f"is shard {verdict['shard']} only" if verdict.get("shard") else "is a merge with shards missing"
            raise ProbeError(f"--homefield-exclude-memorized: the probe of agent {agent.name!r} {what}: merge every "
                             "shard's .homefield/probe/ folder with `homefield probe --merge DIR…` first")
        specs = {r.get("spec") for r in load_probe(path) if r.get("kind") in ("task", "control")}
        if specs - {agent.spec}:
            raise ProbeError(f"--homefield-exclude-memorized: agent {agent.name!r} was probed as "
                             f"{', '.join(sorted(str(s) for s in specs))}, the run uses {agent.spec}")
        ids = sorted(f["task_id"] for f in verdict.get("flagged") or [])
        flagged.update(ids)
        by_agent[agent.name] = {"tasks": ids, "control": verdict.get("control"), "cutoff": verdict.get("cutoff"),
                                "control_n": verdict.get("control_n"), "control_p95": verdict.get("control_p95")}
    return {"tasks": sorted(flagged), "by_agent": by_agent}
