"""``--shard K/N``: a deterministic split of a run's (or a mining session's) work by task, so N
machines with no shared state each take one part (docs/contracts.md §2, §4).

The split is by a hash of each id alone, never by position in a file or selection: id ``t`` belongs to
shard ``int(sha256(t)) mod N + 1`` (:func:`shard_of_id`; shard38, before: the sorted selection's i-th id to shard
``i mod N + 1``, so a shard's share depended on the selection it stated, which a merge could not recompute). A
task's shard is a function of its id and N only: every machine computes the same parts, whatever selection it
split, and a merge checks each task a shard claims against its K without trusting anything the shard states.
The parts are disjoint and cover every id; their sizes are only roughly equal (binomial). All attempts of a task
stay in one shard, so its snapshot cache stays warm. A shard's ``meta.json`` (a probe: its verdict line) says
``split: "sha256"`` (:data:`SPLIT`); a shard without it was split by position and is refused by every merge
(:func:`old_split_refusal`): run it again.
:func:`missing_shards` is the check every merge of shard folders shares (runs, mining, probe,
ablation): one split, and which of its shards are absent; :func:`outside_plan` the check of each record
a merge takes (runs, ablation): within its own folder's tasks, agents and attempts. No pytest here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.errors import ConfigError, ShardMergeError
from pytest_homefield.spelling import spell

__all__ = ["Shard", "parse_shard", "missing_shards", "outside_plan", "share_refusal", "split_refusal", "SPLIT",
           "shard_of_id", "old_split_refusal", "claim_refusal", "left_out", "stated_mismatch", "stated_cut_refusal"]

#: The ``split`` a shard's ``meta.json`` (a probe: its verdict line) records: the split by the sha256 of each id.
SPLIT = "sha256"


def shard_of_id(task_id: str, count: int) -> int:
    """The shard (1 … ``count``) id ``task_id`` belongs to: the SHA-256 of its UTF-8 bytes, read as a big-endian
    integer, mod ``count``, plus 1. Never Python's ``hash()`` (salted per process)."""
    digest = hashlib.sha256(task_id.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest, "big") % count + 1


def old_split_refusal(name: str, meta: Mapping[str, Any], *, where: str = "its meta.json") -> str | None:
    """Why the folder ``name`` of a ``--shard K/N`` session (``meta``) cannot be merged for its split, one line,
    else ``None``: a shard whose ``meta`` lacks ``split: "sha256"`` (:data:`SPLIT`) was made under the split by
    position (before shard38), whose shares depended on a selection the shard states; a merge takes no shard at
    that word (a rogue shard would state the old rule to get round the check of its share), so it is refused
    whole, with or beside shards of the new split. A folder that is no shard (``shard`` null) passes."""
    if meta.get("shard") is None or meta.get("split") == SPLIT:
        return None
    return (f"{name}: a shard split by position, the rule before shard38 ({where} has no split: \"{SPLIT}\"); "
            "run that shard again with this homefield")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1 ≤ index ≤ count)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def select(self, ids: Iterable[str]) -> set[str]:
        """The ids of ``ids`` that belong to this shard (:func:`shard_of_id`: each by its own id alone)."""
        return {i for i in ids if self.owns(i)}

    def owns(self, task_id: str) -> bool:
        """Whether id ``task_id`` belongs to this shard (:func:`shard_of_id`)."""
        return shard_of_id(task_id, self.count) == self.index

    def split_budget(self, budget_usd: float | None) -> float | None:
        """This shard's part of a whole-run budget: ``budget_usd / count`` (USD; ``None`` stays)."""
        return None if budget_usd is None else budget_usd / self.count


def parse_shard(text: str | None, *, flag: str | None = None) -> Shard | None:
    """``"K/N"`` → :class:`Shard`; ``None`` → ``None``. Raises :class:`ConfigError` (one line naming
    ``flag``, default the shard option as the front end in use spells it) unless ``1 ≤ K ≤ N``."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ConfigError(f"{flag or spell('shard')} {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return Shard(int(m.group(1)), int(m.group(2)))


def missing_shards(labels: Iterable[tuple[str, str | None]], *, what: str = "homefield") -> list[str]:
    """``incomplete: shard K/N missing`` for each shard of the split that none of the folders is.

    ``labels``: ``(folder name, "K/N" or None)`` per folder to merge (``None``: not a shard, left
    out of the check). Raises :class:`ShardMergeError` (one line, starting with ``what``) when the
    folders are shards of different splits (``2/3`` beside ``1/4``) or a label is not ``K/N``."""
    shards = [(name, parse_shard(label, flag=f"{name}: shard")) for name, label in labels if label is not None]
    counts = {s.count for _, s in shards if s is not None}
    if len(counts) > 1:
        splits = ", ".join(f"{name} ({s})" for name, s in shards)
        raise ShardMergeError(f"{what}: the folders are shards of different splits ({splits}); one split at a time")
    if not counts:
        return []
    n = counts.pop()
    present = {s.index for _, s in shards if s is not None}
    return [f"incomplete: shard {k}/{n} missing" for k in range(1, n + 1) if k not in present]


def outside_plan(meta: Mapping[str, Any]) -> Callable[[str, str, int], str | None]:
    """The check of a folder's result records against its ``meta.json`` plan (``task_ids``, ``agents``
    names, ``attempts``; a field the meta lacks checks nothing): called with a record's ``(task_id, agent,
    attempt)``, it says why its session could not have written it, else ``None``. A merge takes each record
    at its folder's word: lines appended to a shard's ``results.jsonl`` for another shard's tasks, or past
    ``--attempts``, were counted (atk17 M1: one agent 31 % → 77 %, first in the ranking; an ablation's base
    0 % → 75 %)."""
    raw_tasks, raw_agents, attempts = meta.get("task_ids"), meta.get("agents"), meta.get("attempts")
    tasks = {str(t) for t in raw_tasks} if isinstance(raw_tasks, list) else None
    agents = ({str(a.get("name")) for a in raw_agents if isinstance(a, Mapping)}
              if isinstance(raw_agents, list) else None)

    def why(task_id: str, agent: str, attempt: int) -> str | None:
        if tasks is not None and task_id not in tasks:
            return f"task {task_id} is not one of its {len(tasks)} tasks"
        if agents is not None and agent not in agents:
            return f"agent {agent!r} is not one of its agents"
        if isinstance(attempts, int) and not 1 <= attempt <= attempts:
            return f"attempt {attempt} of {agent} is outside its {spell('attempts')} {attempts}"
        return None

    return why


def why_outside(plan: Callable[[str, str, int], str | None] | None, task: object, agent: object,
                attempt: object) -> str | None:
    """Why a result record's ``(task_id, agent, attempt)`` is outside ``plan`` (:func:`outside_plan`; ``None``:
    no plan, nothing is), else ``None``; an attempt that is not a number is outside. What ``homefield status``
    counts and ``homefield report`` leaves out, one rule."""
    if plan is None:
        return None
    if not isinstance(attempt, int) or isinstance(attempt, bool):
        return f"attempt {attempt!r} of {agent} is not a number"
    return plan(str(task), str(agent), attempt)


def _split_ids(meta: Mapping[str, Any], repo_ids: Sequence[str]) -> list[str] | None:
    """The ids a shard's session split (``meta.json`` ``shard_of``); for a folder without it (made before hatk36,
    or with it removed; one made before shard38 is refused first, :func:`old_split_refusal`), this repository's
    selection as the session made it: ``tasks.jsonl`` without the frozen ``excluded_memorized`` tasks, cut to its
    ``max_tasks`` ``n``. ``None``: ``shard_of`` is not a list of ids."""
    every = meta.get("shard_of")
    if every is None:
        excluded = meta.get("excluded_memorized")
        gone = {str(t) for t in excluded.get("tasks") or ()} if isinstance(excluded, Mapping) else set()
        out = [i for i in repo_ids if i not in gone]
        cut = meta.get("max_tasks")
        n = cut.get("n") if isinstance(cut, Mapping) else None
        return out[:n] if isinstance(n, int) and not isinstance(n, bool) else out
    if not isinstance(every, list) or not all(isinstance(t, str) for t in every):
        return None
    return list(every)


def _stated_shard(name: str, meta: Mapping[str, Any]) -> Shard | str | None:
    """The :class:`Shard` the folder ``name``'s ``meta`` states (``shard: "K/N"``); ``None`` for a folder that is
    no shard; the one-line refusal when ``shard`` is no ``K/N``."""
    try:
        return parse_shard(None if meta.get("shard") is None else str(meta["shard"]), flag=f"{name}: shard")
    except ConfigError as exc:
        return str(exc)


def claim_refusal(name: str, meta: Mapping[str, Any], *, where: str = "its meta.json") -> str | None:
    """Why the folder ``name`` of a ``--shard K/N`` session (``meta``) claims a task no shard K/N holds, one phrase,
    else ``None``: it was split by position (:func:`old_split_refusal`), or a task of its ``task_ids`` belongs to
    another shard (:func:`shard_of_id`). Needs nothing but the folder: no ``tasks.jsonl``, no stated selection
    (shard38: a lone shard stating a crafted ``shard_of`` had another shard's task counted). A folder that is no
    shard passes; a ``task_ids`` that is not a list of ids is :func:`share_refusal`'s."""
    shard = _stated_shard(name, meta)
    if not isinstance(shard, Shard):
        return shard
    old = old_split_refusal(name, meta, where=where)
    if old is not None:
        return old
    claimed = meta.get("task_ids")
    claims = claimed if isinstance(claimed, list) else []
    foreign = sorted(t for t in claims if isinstance(t, str) and not shard.owns(t))
    if foreign:
        return (f"{name}: {where} claims task {foreign[0]}, which is shard {shard_of_id(foreign[0], shard.count)}/"
                f"{shard.count}'s (a task's shard is its id's sha256 mod {shard.count}, plus 1), not shard {shard}'s")
    return None


def share_refusal(name: str, meta: Mapping[str, Any], repo_ids: Sequence[str], *,
                  kept: Callable[[str], bool] | None = None, where: str = "its meta.json") -> str | None:
    """Why the folder ``name`` of a ``--shard K/N`` session (its ``meta.json`` ``meta``) is not that shard of
    this repository's tasks (``repo_ids``: ``tasks.jsonl``'s ids), one phrase, else ``None`` (hatk36): the ids
    it split (:func:`_split_ids`) are tasks of ``tasks.jsonl`` and its ``task_ids`` are exactly its share of
    them (:meth:`Shard.select`: each task's shard is its id's, so no stated split puts another shard's task in its
    share; shard38), and it was split so (:func:`claim_refusal`). A folder that is no shard (``shard`` null) is not
    checked. Before, a merge
    took a shard's ``task_ids`` at its word: a shard claiming another shard's task (or one ``--max-tasks``
    left out) had that task's lines counted as its own wherever the other shard lacked them. ``kept``: which ids
    of the share the folder holds (a probe judges only the tasks whose gold patch adds code; ``None``: all);
    ``where``: what stated ``meta`` in the phrase (a probe's: ``its verdict line``, whose ``tasks`` are given as
    ``task_ids``)."""
    shard = _stated_shard(name, meta)
    if not isinstance(shard, Shard):
        return shard
    claim = claim_refusal(name, meta, where=where)
    if claim is not None:
        return claim
    every = _split_ids(meta, repo_ids)
    if every is None:
        return f"{name}: {where} shard_of is not a list of task ids"
    known = set(repo_ids)
    unknown = [t for t in every if t not in known]
    if unknown:
        return f"{name}: shard {shard} split task {unknown[0]}, which is not in this repository's tasks.jsonl"
    claimed = meta.get("task_ids")
    if not isinstance(claimed, list) or not all(isinstance(t, str) for t in claimed):
        return f"{name}: {where} task_ids is not a list of task ids"
    want = {t for t in shard.select(every) if kept is None or kept(t)}
    extra, missing = sorted(set(claimed) - want), sorted(want - set(claimed))
    if extra or missing:
        which = f"task {extra[0]} is not its share" if extra else f"task {missing[0]} of its share is not among them"
        return (f"{name}: {where} claims {len(set(claimed))} tasks, not shard {shard}'s {len(want)} of the "
                f"{len(every)} it split ({which})")
    return None


def split_refusal(metas: Sequence[tuple[str, Mapping[str, Any]]], repo_ids: Sequence[str] | None = None) -> str | None:
    """Why the shard folders ``(name, meta)`` did not split one selection of tasks (each shard's share is then its
    own word), one phrase, else ``None``. With ``repo_ids`` (``tasks.jsonl``'s ids) every shard's split is compared,
    a shard made before ``shard_of`` by the selection :func:`_split_ids` derives for it (hatk37: before, only the
    stated ones were, so a crafted ``shard_of`` beside such a shard was its own word); without, only the stated."""
    kept = [(name, _split_ids(m, repo_ids) if repo_ids is not None else m.get("shard_of")) for name, m in metas
            if m.get("shard") is not None and (repo_ids is not None or "shard_of" in m)]
    for name, every in kept[1:]:
        if every != kept[0][1]:
            return (f"{kept[0][0]} and {name} split different selections of tasks (meta.json shard_of); merge "
                    "the shards of one split")
    return None


def left_out(metas: Sequence[tuple[str, Mapping[str, Any]]], repo_ids: Sequence[str], *,
             kept: Callable[[str], bool] | None = None) -> list[str]:
    """``incomplete: shard K/N left out …`` for each shard among the folders ``(name, meta)`` (folders that are no
    shard, or whose ``shard`` is no ``K/N``, are left out) that holds (``task_ids``, over every folder of that K)
    less than its share of the selection this repository's ``tasks.jsonl`` (``repo_ids``) gives by what its
    ``meta.json`` states of how it was made: without its ``excluded_memorized`` tasks, cut to its ``max_tasks``
    ``n`` (:func:`_split_ids` with no ``shard_of``). Its ``shard_of`` is not trusted here: a lone shard (or
    all shards, made by one hand) stating a smaller one left tasks of its K out unsaid (shard39). A
    ``pytest_homefield_modify_tasks`` hook that drops tasks leaves them out too; the line names it. ``kept``:
    which ids of a share a folder holds (a probe judges only the tasks whose gold patch adds code; ``None``: all)."""
    expected: dict[Shard, set[str]] = {}
    held: dict[Shard, set[str]] = {}
    for name, meta in metas:
        shard = _stated_shard(name, meta)
        if not isinstance(shard, Shard):
            continue
        every = _split_ids({k: v for k, v in meta.items() if k != "shard_of"}, repo_ids) or []
        expected.setdefault(shard, set()).update(t for t in shard.select(every) if kept is None or kept(t))
        claimed = meta.get("task_ids")
        held.setdefault(shard, set()).update(t for t in (claimed if isinstance(claimed, list) else ())
                                             if isinstance(t, str))
    order = {t: n for n, t in enumerate(repo_ids)}
    out = []
    for shard in sorted(expected, key=lambda s: (s.count, s.index)):
        gone = sorted(expected[shard] - held[shard], key=lambda t: order.get(t, len(order)))
        if gone:
            shown = ", ".join(gone[:5]) + (" …" if len(gone) > 5 else "")
            out.append(f"incomplete: shard {shard} left out {len(gone)} task(s) of its share of tasks.jsonl "
                       f"({shown}): its {spell('max-tasks')} and {spell('exclude-memorized')} keep them, but the "
                       "selection it split (meta.json shard_of) lacks them (a pytest_homefield_modify_tasks hook, "
                       "or a hand)")
    return out


def _stated_cut(meta: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """``(n, of)`` of what ``meta`` states of ``--max-tasks`` (``max_tasks: {"n": N, "of": M}``); ``None`` for
    what it does not state as a number."""
    cut = meta.get("max_tasks")
    n, of = (cut.get("n"), cut.get("of")) if isinstance(cut, Mapping) else (None, None)
    return (n if isinstance(n, int) and not isinstance(n, bool) else None,
            of if isinstance(of, int) and not isinstance(of, bool) else None)


def _stated_excluded(meta: Mapping[str, Any]) -> frozenset[str]:
    """The memorized tasks ``meta`` states it left out (``excluded_memorized.tasks``)."""
    excluded = meta.get("excluded_memorized")
    tasks = excluded.get("tasks") if isinstance(excluded, Mapping) else None
    return frozenset(str(t) for t in tasks) if isinstance(tasks, list) else frozenset()


def stated_mismatch(metas: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """``incomplete: the shards state different …`` when the shards among the folders ``(name, meta)`` (folders
    that are no shard, or whose ``shard`` is no ``K/N``, are left out) do not all state the same ``--max-tasks``
    (``max_tasks`` ``n`` and ``of``) or the same memorized tasks left out (``excluded_memorized`` ``tasks``): one
    line per value, naming each folder's (ops40). Each shard's share is derived from what it states
    (:func:`left_out`), so shards stating different values split different selections, and a task one of them cut
    or excluded is in no rate of the merge though the others' word keeps it."""
    shards = [(name, m) for name, m in metas if isinstance(_stated_shard(name, m), Shard)]
    out = []
    cuts = [(name, _stated_cut(m)) for name, m in shards]
    if len({c for _, c in cuts}) > 1:
        said = ", ".join(f"{name}: {'none' if n is None else f'{n} of {of}'}" for name, (n, of) in cuts)
        out.append(f"incomplete: the shards state different {spell('max-tasks')} ({said}); each left out what its own "
                   f"states: run every shard with one {spell('max-tasks')}")
    excluded = [(name, _stated_excluded(m)) for name, m in shards]
    if len({e for _, e in excluded}) > 1:
        said = ", ".join(f"{name}: {', '.join(sorted(e)[:3]) + (' …' if len(e) > 3 else '') if e else 'none'}"
                         for name, e in excluded)
        out.append(f"incomplete: the shards state different memorized tasks left out (meta.json "
                   f"excluded_memorized: {said}); run every shard with one {spell('exclude-memorized')} and probe")
    return out


def stated_cut_refusal(metas: Sequence[tuple[str, Mapping[str, Any]]], repo_ids: Sequence[str]) -> list[str]:
    """``incomplete: NAME (shard K/N) states --max-tasks N of M tasks, but …`` for each shard among the folders
    ``(name, meta)`` whose stated ``--max-tasks`` cut (``max_tasks`` ``{"n", "of"}``) is not one of this
    repository's ``tasks.jsonl`` (``repo_ids``) less the memorized tasks it states it left out: its ``n`` is
    below their count and its ``of`` is not that count (ops40: a shard stating ``{"n": 2, "of": 2}`` of 8 tasks
    held the share of the first 2 with no line, and the report's ``--max-tasks`` note, which says a cut only
    where ``n < of``, said nothing). A shard stating no cut that holds less is :func:`left_out`'s."""
    out = []
    for name, meta in metas:
        shard = _stated_shard(name, meta)
        if not isinstance(shard, Shard):
            continue
        n, of = _stated_cut(meta)
        gone = _stated_excluded(meta)
        count = sum(1 for t in repo_ids if t not in gone)
        if n is not None and n < count and of != count:
            out.append(f"incomplete: {name} (shard {shard}) states {spell('max-tasks')} {n} of {of} tasks, but this "
                       f"repository's tasks.jsonl holds {count} less the memorized tasks it states it left out: "
                       f"the {count - n} past its cut are in no rate")
    return out
