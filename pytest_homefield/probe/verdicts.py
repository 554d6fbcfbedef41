"""The probe's control and verdicts (docs/contracts.md §4: ``.homefield/probe/<agent>.jsonl``; the
file's records and their reader: :mod:`pytest_homefield.probe_records`).

**Control.** With a cutoff date, the control is the tasks authored after it (``authored_at``'s date
later than the cutoff): the model cannot have seen them; only earlier tasks are judged, later ones
are ``memorized: false``. Without a cutoff, the control is one mismatched pair per task
(:func:`mismatched_pairs`, :func:`control_pairs`): the task's prompt with another task's file list, scored
against that other task's gold lines, which no memory can serve. The other task always changes other
files, so the control's question differs from the task's own: a pair of tasks changing the same files gave
the same question twice (10 of the 20 controls of atk17's demo copies), and an endpoint that remembers its
calls could tell the control by the repetition. A task whose every fellow changes the same files has no
control pair, and the verdict says so. Task and control alike are summarised by the best score over their
scored samples.

**Flags** (issue 32). Each judged task gets an exceedance p-value against the control, ``p = (1 +
#{control >= best}) / (n + 1)`` (:func:`exceedance_p`: the rank test of "the task's best score is one more
draw from the control's distribution", valid for any distribution, e.g. Vovk et al. 2005, conformal
p-values), and the tasks are flagged ``memorized`` by Benjamini–Hochberg at the stated false discovery
rate (``--fdr``, default :data:`FDR` = 10 %; :func:`bh_flags` on :func:`bh_adjusted`, the values of
``scipy.stats.false_discovery_control``) whose best score also reaches ``--recite-floor`` (default
:data:`RECITE_FLOOR` = 0.5). The floor is what a flag means whatever the control: the answer holds at
least half the real change's code. Beating the control alone could be bought (atk17 P1): a model that
remembers its calls tells a control (the same prompt again, another task's files) from the real call and
answers it with junk, and a made-up function then beats the whole control on any task it picks (20 of 20
flagged at scores down to 0.13, and ``--exclude-memorized`` left them out for every agent). Answers
written without memory scored at most 0.39 on the demo's tasks, a recitation 1.0. No p-value can be below
``1 / (n + 1)``, so a control of fewer than :func:`min_control` values can reach no FDR at all: then
nothing is flagged and a note says why. (Flagging above the control's 95th percentile, as before, flagged
about 1 unrecited task in 20 by construction, and with a 4-task control a task that was not recited.) A
task without a scored sample, or any task when the control is empty, gets ``None``. ``control_p95``
(:func:`percentile`) is still recorded, as a description of the control.

**Verdict record.** At the end of a probe session the controller rewrites the file atomically: the
same lines in the same order, ``memorized`` filled in on ``task`` lines, then one ``kind:
"verdict"`` line (replacing earlier ones): ``control`` (``"cutoff"`` or ``"mismatched"``),
``cutoff``, ``control_n``, ``control_p95``, ``judged`` (tasks with a scored sample), ``unjudged`` (the
probed tasks and the control's tasks or pairs with no scored sample, and the probed tasks never answered:
each sample a failure scored as an empty answer on its last try, the row's ``unanswered``; a verdict is
*finished* only at 0, since an agent that does not answer — a claimed rate limit, a refusal of exactly
the tasks it remembers — would otherwise get a clean bill), ``flagged``
[{task_id, best, mean}], ``tasks`` {task_id: {best, mean, samples, memorized}}, ``at``,
``tasks_digest`` (of the ``tasks.jsonl`` probed), ``shard`` (``"K/N"`` for a ``--shard`` session,
which judges its shard's tasks only, else ``None``), ``shard_of`` (with ``shard``: the ids the shards split),
``max_tasks`` (with ``shard``, when ``--max-tasks`` cut: ``{n, of}``)
and, for a merge of shards, ``merged_from``
and ``incomplete`` (the ``incomplete: shard K/N missing`` lines).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.probe.prompt import file_listing
from pytest_homefield.probe_records import latest, load_probe
from pytest_homefield.records import Task, display_subject, one_line
from pytest_homefield.settings_table import option
from pytest_homefield.shard import SPLIT
from pytest_homefield.store import write_jsonl_atomic
from pytest_homefield.terminal.progress import plural

__all__ = [
    "FDR",
    "RECITE_FLOOR",
    "SMALL_CONTROL",
    "Verdict",
    "bh_adjusted",
    "bh_flags",
    "control_pairs",
    "exceedance_p",
    "judge",
    "min_control",
    "mismatched_pairs",
    "percentile",
    "verdict_lines",
    "write_verdict",
]

SMALL_CONTROL = 10
QUANTILE = 0.95
#: The default false discovery rate of the probe's flags (``--fdr``).
FDR = 0.10
#: The default best score a flagged task needs (``--recite-floor``; scores in [0, 1]).
RECITE_FLOOR = 0.5


def exceedance_p(best: float, control: Sequence[float]) -> float:
    """The exceedance p-value of a task's best score against the ``control`` scores:
    ``(1 + #{c >= best}) / (n + 1)``, in ``[1 / (n + 1), 1]``. Raises ``ValueError`` for an empty control."""
    if not control:
        raise ValueError("exceedance_p: empty control")
    return (1 + sum(1 for c in control if c >= best)) / (len(control) + 1)


def min_control(fdr: float = FDR) -> int:
    """The fewest control values whose smallest p-value ``1 / (n + 1)`` can reach ``fdr`` (9 at 10 %)."""
    return max(1, math.ceil(1.0 / fdr - 1e-9) - 1)


def bh_flags(best: Sequence[float], control: Sequence[float], fdr: float = FDR) -> list[bool]:
    """Which of the tasks with best scores ``best`` are flagged: Benjamini & Hochberg (1995, JRSS B
    57:289-300) on their :func:`exceedance_p` values at false discovery rate ``fdr``
    (``bh_adjusted(ps) <= fdr``, as ``scipy.stats.false_discovery_control(ps, method="bh") <= fdr``). All
    ``False`` when the control has fewer than :func:`min_control` values or there is no task. Raises
    ``ValueError`` for an ``fdr`` outside (0, 1)."""
    if not 0.0 < fdr < 1.0:
        raise ValueError(f"fdr must be between 0 and 1, got {fdr!r}")
    if not best or len(control) < min_control(fdr):
        return [False] * len(best)
    ps = [exceedance_p(b, control) for b in best]
    return [a <= fdr + 1e-12 for a in bh_adjusted(ps)]


def bh_adjusted(ps: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values of ``ps`` (each in [0, 1]), in their order: for the i-th
    smallest of m, ``min(1, min over j >= i of p_(j) · (m / j))`` (Benjamini & Hochberg 1995; the values
    ``scipy.stats.false_discovery_control(ps, method="bh")`` returns, computed the same way, without
    the second of CPU that importing ``scipy.stats`` costs each probe session). ``[]`` for no value."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):  # from the largest p-value down: the running minimum of p · m / rank
        i = order[rank - 1]
        running = min(running, ps[i] * (m / rank))
        out[i] = running
    return out


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


def mismatched_pairs(task_ids: Sequence[str], shown: Mapping[str, Hashable] | None = None) -> dict[str, str]:
    """Control pairs: each task id → the task whose files and gold lines go with its prompt; the same ids
    (and ``shown``) always give the same pairs. ``shown``: per id, what the control puts in the question
    (its file listing; every id distinct when ``None``): ids showing the same are never paired, or the
    control would ask the task's own question again.

    The ids are laid out sorted within groups of equal ``shown`` (groups in order of their smallest id), and
    with ``m`` the largest group's size the i-th is paired with the (i + m)-th, cyclically: when ``m`` ≤ n/2
    no id meets its own group and every gold is used once (all distinct: ``m`` = 1, each sorted id with the
    next, the last with the first). When one group holds more than half of the ids, its ids are paired in
    turn with the others, and the others with its ids. A group holding every id has no pair (nor has one id)."""
    ids = sorted(set(task_ids))
    key: Mapping[str, Hashable] = shown if shown is not None else {tid: tid for tid in ids}
    groups: dict[Hashable, list[str]] = {}
    for tid in ids:
        groups.setdefault(key[tid], []).append(tid)
    if len(groups) < 2:
        return {}
    m = max(len(g) for g in groups.values())
    if 2 * m <= len(ids):
        laid = [tid for g in groups.values() for tid in g]
        return {tid: laid[(i + m) % len(laid)] for i, tid in enumerate(laid)}
    big = next(g for g in groups.values() if len(g) == m)
    rest = [tid for g in groups.values() if g is not big for tid in g]
    return {**{tid: rest[i % len(rest)] for i, tid in enumerate(big)}, **{tid: big[i] for i, tid in enumerate(rest)}}


def control_pairs(tasks: Sequence[Task]) -> dict[str, str]:
    """:func:`mismatched_pairs` of ``tasks`` (the probed tasks), none paired with a task whose file listing
    (:func:`pytest_homefield.probe.prompt.file_listing`) is its own: the control's question always differs
    from the task's."""
    return mismatched_pairs([t.id for t in tasks], {t.id: file_listing(t.source_files) for t in tasks})


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
    #: with ``shard``: the ids the shards split (the probe's selection: ``tasks.jsonl`` after the hook, cut to
    #: ``--max-tasks``), what ``homefield probe --merge`` checks the shard's tasks against (hatk37)
    shard_of: list[str] | None = None
    #: with ``shard`` and ``--max-tasks`` cutting: ``{n, of}``, as a run's ``meta.json`` (what ``homefield probe
    #: --merge`` derives the shard's share of ``tasks.jsonl`` from, :func:`pytest_homefield.shard.left_out`; shard39)
    max_tasks: dict[str, int] | None = None
    merged_from: list[dict[str, Any]] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    fdr: float = FDR
    #: the best score a flagged task needs (``--recite-floor``)
    floor: float = RECITE_FLOOR
    #: the probed tasks and control entries (a later task, a mismatched pair) with no scored sample
    unjudged: int = 0

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
                "judged": self.judged, "unjudged": self.unjudged, "flagged": self.flagged, "tasks": self.tasks,
                "notes": self.notes,
                "at": at, "tasks_digest": self.tasks_digest, "shard": self.shard, "fdr": self.fdr,
                "recite_floor": self.floor,
                **({"split": SPLIT} if self.shard is not None else {}),
                **({"shard_of": self.shard_of} if self.shard_of is not None else {}),
                **({"max_tasks": self.max_tasks} if self.max_tasks is not None else {}),
                **({"merged_from": self.merged_from, "incomplete": self.incomplete} if self.merged_from else {})}


def _summary(scores: list[float]) -> tuple[float | None, float | None]:
    if not scores:
        return None, None
    return round(max(scores), 6), round(sum(scores) / len(scores), 6)


def judge(agent: str, records: Iterable[dict[str, Any]], tasks: Sequence[Task], *,
          cutoff: str | None = None, fdr: float = FDR, floor: float = RECITE_FLOOR,
          pairs: Mapping[str, str] | None = None) -> Verdict:
    """The verdict for ``agent`` over ``tasks`` from its call ``records`` (see the module docstring).
    ``cutoff`` is a ``YYYY-MM-DD`` date or ``None`` (mismatched-pair control); ``fdr`` the false
    discovery rate of the flags; ``floor`` the best score a flagged task needs; ``pairs`` the control
    pairs of every probed task (:func:`control_pairs`; ``None``: every task has one when there are two):
    a task without one owes no control, and a note names it. Each judged task's row gets its exceedance
    ``p``."""
    calls = latest(records)
    scores: dict[tuple[str, str], list[float]] = {}
    answered: set[str] = set()  # tasks with a sample the agent answered (not a failure scored on its last try)
    for (kind, tid, _), r in calls.items():
        if r.get("score") is not None:
            scores.setdefault((kind, tid), []).append(float(r["score"]))
            if kind == "task" and r.get("outcome") is None:
                answered.add(tid)
    ids = [t.id for t in tasks]
    v = Verdict(agent=agent, control="cutoff" if cutoff else "mismatched", cutoff=cutoff, control_n=0,
                control_p95=None, fdr=fdr, floor=floor)
    if cutoff:
        later = {t.id for t in tasks if _authored_after(t, cutoff)}
        control = [b for tid in ids if tid in later for b in [_summary(scores.get(("task", tid), []))[0]]
                   if b is not None]
    else:
        later = set()
        owing = ids if pairs is None else [tid for tid in ids if tid in pairs]  # a task without a pair: none
        control = [b for tid in owing for b in [_summary(scores.get(("control", tid), []))[0]] if b is not None]
    v.control_n = len(control)
    v.control_p95 = None if not control else round(percentile(control) or 0.0, 6)
    for tid in ids:
        best, mean = _summary(scores.get(("task", tid), []))
        row: dict[str, Any] = {"best": best, "mean": mean, "samples": len(scores.get(("task", tid), []))}
        if tid in later:
            row.update(control=True, memorized=False)
        elif best is not None and tid not in answered:
            # every sample failed until its last try, scored as an empty answer: never memorized by that
            # score, so a model declining exactly the tasks it remembers would look clean; not judged
            row.update(memorized=None, unanswered=True)
        elif best is None or v.control_p95 is None:
            row["memorized"] = None
        else:
            row["p"] = round(exceedance_p(best, control), 6)
        v.tasks[tid] = row
    judged = [tid for tid, row in v.tasks.items() if "p" in row]
    flags = bh_flags([v.tasks[tid]["best"] for tid in judged], control, fdr)
    for tid, flag in zip(judged, flags, strict=True):
        v.tasks[tid]["memorized"] = flag and v.tasks[tid]["best"] >= floor
    under = sum(1 for tid, flag in zip(judged, flags, strict=True) if flag and not v.tasks[tid]["memorized"])
    if under:
        v.notes.append(f"{plural(under, 'task')} beat the control but scored below the recite floor {floor:.2f}: "
                       "not flagged (an answer with less than that share of the real change's code proves no "
                       f"recital; {option('recite-floor')})")
    if cutoff and not control:
        v.notes.append(f"no task authored after {cutoff} has a scored sample: no control, no verdict")
    elif not control:
        v.notes.append("no mismatched control pair has a scored sample: no verdict")
    elif len(control) < min_control(fdr):
        what = f"tasks authored after {cutoff}" if cutoff else "mismatched pairs"
        v.notes.append(f"the control has only {len(control)} {what}: no task can have an exceedance p below "
                       f"1/{len(control) + 1} = {1 / (len(control) + 1):.2f}, above the {fdr:.0%} false discovery "
                       f"rate, so nothing is flagged (at least {min_control(fdr)} are needed)")
    elif judged:
        need = math.ceil(len(judged) / (fdr * (len(control) + 1)) - 1e-9)
        if need > 1:
            v.notes.append(f"with {plural(len(control), 'control value')} and {plural(len(judged), 'task')} judged, "
                           "a task is flagged "
                           f"at a {fdr:.0%} false discovery rate only when at least {need} tasks score above "
                           "the whole control")
    unscored = [tid for tid in ids if tid not in later and v.tasks[tid]["best"] is None]
    if unscored:
        v.notes.append(f"{len(unscored)} task(s) have no scored sample (failed calls are retried with "
                       f"{option('resume')}, "
                       f"at most {option('max-retries')} times)")
    paired = [] if cutoff else [tid for tid in ids if tid in pairs] if pairs is not None else \
        ids if len(ids) >= 2 else []  # the tasks owing a mismatched pair
    unpaired = [] if cutoff or pairs is None else [tid for tid in ids if tid not in pairs]
    if unpaired:
        v.notes.append(f"{plural(len(unpaired), 'task')} without a control pair: every other probed task changes "
                       "the same files, so its control would ask its own question again: " + ", ".join(unpaired[:5])
                       + (" …" if len(unpaired) > 5 else ""))
    no_control = [tid for tid in ids if tid in later and v.tasks[tid]["best"] is None] + \
        [tid for tid in paired if not scores.get(("control", tid))]
    unanswered = [tid for tid, row in v.tasks.items() if row.get("unanswered")]
    if unanswered:
        v.notes.append(f"{plural(len(unanswered), 'task')} never answered (every call failed until its last try, "
                       "scored as an empty answer): not judged, since a model that declines exactly the tasks it "
                       "remembers would otherwise look clean: " + ", ".join(unanswered[:5])
                       + (" …" if len(unanswered) > 5 else ""))
    v.unjudged = len(unscored) + len(no_control) + len(unanswered)
    if v.unjudged:
        v.notes.append(f"incomplete: {v.unjudged} of {len(ids) + len(paired)} tasks and controls have no scored "
                       f"sample: not a finished verdict ({option('exclude-memorized')} refuses it)")
    return v


def verdict_lines(name: str, spec: str, v: Verdict, tasks: dict[str, Task],
                  cost_usd: float) -> list[tuple[str, dict[str, bool]]]:
    """The terminal lines of one agent's verdict: the headline, notes, and each flagged task; each line
    :func:`~pytest_homefield.records.one_line` (a commit subject's control characters as escapes). A task is
    named as the report names it (:func:`~pytest_homefield.records.display_subject`: ``Fix #218: Handle x`` →
    ``Handle x``)."""
    p95 = "n/a" if v.control_p95 is None else f"{v.control_p95:.2f}"
    what = (f"{plural(v.control_n, 'task')} authored after {v.cutoff}" if v.cutoff
            else plural(v.control_n, "mismatched pair"))
    out: list[tuple[str, dict[str, bool]]] = [(
        f"{name} ({spec}) recites {len(v.flagged)} of {plural(v.judged, 'task')}; control {what}, "
        f"95th percentile {p95}; flagged by Benjamini-Hochberg at {v.fdr:.0%} FDR; cost {cost_usd:.4f} USD",
        {"bold": True, "yellow": bool(v.flagged)})]
    for note in v.notes:
        out.append((f"  note: {note}", {"yellow": True}))
    for f in v.flagged:
        subject = display_subject(tasks[f["task_id"]]) if f["task_id"] in tasks else ""
        out.append((f"  memorized {f['task_id']}  best {f['best']:.2f}  mean {f['mean']:.2f}  {subject[:70]}",
                    {"yellow": True}))
    return [(one_line(text), markup) for text, markup in out]  # a subject's ESC sequences shown, not played


def write_verdict(path: Path, verdict: Verdict, at: str) -> None:
    """Rewrite ``path`` atomically: every call line kept in order, ``memorized`` set on ``task`` lines
    from ``verdict``, earlier verdict lines dropped, the new verdict line last."""
    lines = [r for r in load_probe(path) if r.get("kind") != "verdict"]
    for r in lines:
        if r.get("kind") == "task":
            r["memorized"] = (verdict.tasks.get(str(r.get("task_id"))) or {}).get("memorized")
    write_jsonl_atomic(path, [*lines, verdict.to_record(at)])


def now_iso() -> str:
    """Now, UTC, ISO 8601 to the millisecond: a probe's session start and its calls' times, which the stop
    rule compares (:class:`~pytest_homefield.run.runner.RunLimits`; to the second, a rate limit of the
    session before, in the same second, stopped a ``--resume`` at once)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
