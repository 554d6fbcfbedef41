"""What a report reads from its run folders: ``meta.json``, the results (the last record per key
winning, across files and folders) and each attempt's similarity to the gold patch.

Nothing here computes a statistic; :mod:`.compute` turns these into the report.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.layout import attempt_dir, read_meta, read_own_file, results_path, similarity_path, tries_path
from pytest_homefield.records import NOT_NEEDED, Result, Task, counts_solved
from pytest_homefield.records import load_results as records_load_results
from pytest_homefield.run.twin_grading import CANARIES_FILE
from pytest_homefield.report.family import is_reference_spec, spec_kind
from pytest_homefield.report.similarity import (
    Similarity,
    SimilarityCache,
    changed_lines,
    gold_digest,
    similarity_of_lines,
)
from pytest_homefield.shard import outside_plan, why_outside
from pytest_homefield.store import read_jsonl

__all__ = ["AgentInfo", "Attempt", "Similarities", "agent_infos", "check_same_specs", "claims_by_key",
           "cut_short_by_key", "forged_lines", "retried_by_key", "load_meta",
           "load_results", "merged_results", "owed_attempts", "read_results", "results_read", "results_stamp"]

#: A result's key: (task_id, agent, attempt, variant).
Key = tuple[str, str, int, str]


def load_meta(run_dir: Path) -> dict[str, Any]:
    """The run's ``meta.json`` as a dict, with ``run_id`` defaulting to the folder name.

    A missing file gives ``{"run_id": <folder name>}`` (a report can still be made from the results);
    a file that is not a valid ``meta.json`` raises ``ValueError`` (:class:`RunError`) naming the
    file and field (:func:`pytest_homefield.layout.read_meta`).
    """
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)  # a report needs none of a resume's fields
    meta.setdefault("run_id", run_dir.name)
    return meta


def check_same_specs(metas: Sequence[dict[str, Any]]) -> None:
    """Raise ``ValueError`` when one agent name stands for different specs in two runs (their
    results would be merged as one agent): ``"agent 'x' is 'cmd:a' in run r1 but 'cmd:b' in run r2"``."""
    seen: dict[str, tuple[str, str]] = {}
    for meta in metas:
        for a in meta.get("agents") or []:
            name, spec = a.get("name"), a.get("spec")
            if name in seen and seen[name][0] != spec:
                raise ValueError(f"agent {name!r} is {seen[name][0]!r} in run {seen[name][1]} but {spec!r} in run "
                                 f"{meta.get('run_id')}: report these runs apart, or rename one agent (NAME=SPEC)")
            seen.setdefault(str(name), (str(spec), str(meta.get("run_id"))))


#: results.jsonl path -> ((size in bytes, mtime in ns), its records): what this process read (issue 35:
#: ``homefield report`` counted the finished attempts of its run by reading the file a second time)
_READ: dict[Path, tuple[tuple[int, int], list[Result]]] = {}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def results_stamp(run_dir: Path) -> dict[str, int] | None:
    """``{"bytes": size, "mtime_ns": …}`` of ``run_dir``'s ``results.jsonl`` (:func:`_stamp`), ``None``
    without one: what a kept report records of the results it read (``runs[].results``). Taken before
    they are read, so a line appended meanwhile makes the stamp differ (the report is then computed
    again, never trusted)."""
    stamp = _stamp(results_path(Path(run_dir)))
    return None if stamp is None else {"bytes": stamp[0], "mtime_ns": stamp[1]}


def results_read(path: Path) -> list[Result] | None:
    """The records of ``path`` (every line, :func:`pytest_homefield.records.load_results`) as this process
    last read them, when the file's size and modification time are still those seen then; else ``None``."""
    seen = _READ.get(Path(path))
    return seen[1] if seen is not None and seen[0] == _stamp(path) else None


def read_results(path: Path) -> list[Result]:
    """Every record of the results file ``path`` (:func:`pytest_homefield.records.load_results`), read once per
    process while the file is unchanged (:func:`results_read`; rev58: ``homefield report`` read its run's file to
    pick the run, then again to report on it), and kept for the next caller. Raises as that does."""
    known = results_read(path)
    return known if known is not None else _read_results(path)


def _read_results(path: Path) -> list[Result]:
    stamp = _stamp(path)
    records = records_load_results(path)
    if stamp is not None:
        _READ[path] = (stamp, records)
    return records


def load_results(run_dir: Path) -> list[Result]:
    """The result records of ``<run_dir>/results.jsonl`` (docs/contracts.md §8), one per key
    (task_id, agent, attempt, variant), the last line winning; a torn last line is skipped and a
    record that is not a valid result raises :class:`~pytest_homefield.records.RecordError` naming
    file, line and field. Ordered by the position of each key's winning line. An attempt ``--adaptive``
    did not need (outcome ``not_needed``) is left out: it was never run (:mod:`.adaptive` reads it)."""
    return _winners(run_dir)[0]


def _winners(run_dir: Path) -> tuple[list[Result], dict[Key, float]]:
    """:func:`load_results` of ``run_dir``, and per key the USD of the lines a later line of it replaced (the
    tries ``--resume`` made again, or that an attempt ``--adaptive`` did not need replaced)."""
    by_key: dict[Key, Result] = {}
    tried: dict[Key, float] = {}
    for r in read_results(results_path(Path(run_dir))):
        earlier = by_key.pop(r.key, None)  # re-inserted below, so the order is that of the winning lines
        if earlier is not None and earlier.cost_usd is not None:
            tried[r.key] = tried.get(r.key, 0.0) + earlier.cost_usd
        if r.outcome != NOT_NEEDED:
            by_key[r.key] = r
    return list(by_key.values()), tried


def claims_by_key(run_dirs: Sequence[Path]) -> Counter[Key]:
    """``(task_id, agent, attempt, variant)`` → how many lines of the runs' results record it unscored at the
    agent's own word (``claimed``: a rate limit, or an outage its output reported; docs/contracts.md §8).
    Each was tried again by ``--resume``: a claim buys the attempt another try (atk20 F2)."""
    out: Counter[Key] = Counter()
    for d in run_dirs:
        for r in read_results(results_path(Path(d))):
            if r.claimed and not r.scored:
                out[r.key] += 1
    return out


def cut_short_by_key(run_dirs: Sequence[Path], *, other_than: str | None = None) -> Counter[Key]:
    """``(task_id, agent, attempt, variant)`` → how many of its tries an interrupted session cut short: the
    ``start`` lines of the runs' ``tries.jsonl`` without an ``end`` (docs/contracts.md §4). Each left no
    result line and was made again by ``--resume``, as a claimed retry is (atk23 F3: an agent that hung on
    the attempts it missed had mostly those cut by a CI time limit, and re-rolled 17 of 24 to 71% against an
    honest 17%). A run folder without the file (made before it) counts none; a line without ``variant`` (a
    run's) is of ``base``; an ablation folder's lines name their variant. ``other_than``: a session's
    ``session`` stamp (its start), whose own lines are left out: a session still running has tries whose
    ``end`` is on its way, none cut short (``--adaptive`` decides during it)."""
    out: Counter[Key] = Counter()
    for d in run_dirs:
        for r in read_jsonl(tries_path(Path(d))):
            if other_than is not None and r.get("session") == other_than:
                continue
            try:
                key = (str(r["task_id"]), str(r["agent"]), int(r["attempt"]), str(r.get("variant") or "base"))
            except (KeyError, TypeError, ValueError):
                continue
            out[key] += 1 if r.get("event") == "start" else -1 if r.get("event") == "end" else 0
    return Counter({k: n for k, n in out.items() if n > 0})


def retried_by_key(run_dirs: Sequence[Path]) -> Counter[Key]:
    """:func:`claims_by_key` plus :func:`cut_short_by_key`: the tries of each key that ``--resume`` made
    again without a score, whether the agent claimed an outage or a session was cut short under it."""
    return claims_by_key(run_dirs) + cut_short_by_key(run_dirs)


def owed_attempts(run_dirs: Sequence[Path]) -> dict[str, set[tuple[str, int]]]:
    """``{agent: {(task_id, attempt)}}``: every attempt the runs selected, from their ``meta.json``
    (``task_ids`` × ``agents`` × 1..``attempts``, variant ``base``), less those ``--adaptive`` recorded
    ``not_needed``: what a run owes, whether or not a record of it exists (a skipped attempt has none,
    docs/contracts.md §8). A folder whose ``meta.json`` lacks these fields owes nothing beyond its records."""
    out: dict[str, set[tuple[str, int]]] = {}
    for d in run_dirs:
        meta = load_meta(Path(d))
        task_ids, attempts = meta.get("task_ids"), meta.get("attempts")
        if not isinstance(task_ids, list) or not isinstance(attempts, int):
            continue
        for agent in meta.get("agents") or []:
            if isinstance(agent, dict) and isinstance(agent.get("name"), str):
                out.setdefault(agent["name"], set()).update((str(t), n) for t in task_ids
                                                            for n in range(1, attempts + 1))
        for r in read_results(results_path(Path(d))):
            if r.outcome == NOT_NEEDED and r.variant == "base":
                out.get(r.agent, set()).discard((r.task_id, r.attempt))
    return out


def forged_lines(run_dirs: Sequence[Path]) -> dict[Key, Result]:
    """Every ``base``-variant key that a line of the runs' results records ``forged`` (a canary passed,
    docs/contracts.md §7), with the first such record, whatever line or folder replaced it (gatk58: over several
    unsharded runs the last folder given wins a key, so a second run's record of the same attempt hid the forgery
    from the report and the gate: one forged attempt flags its agent, §10). A line outside its run's plan
    (:func:`~pytest_homefield.shard.why_outside`) is left out, as :func:`merged_results` leaves it."""
    out: dict[Key, Result] = {}
    for d in run_dirs:
        plan = outside_plan(load_meta(Path(d)))
        for r in read_results(results_path(Path(d))):
            if r.outcome == "forged" and r.variant == "base" and why_outside(plan, r.task_id, r.agent,
                                                                              r.attempt) is None:
                out.setdefault(r.key, r)
    return out


def merged_results(run_dirs: Sequence[Path]) -> tuple[dict[Key, tuple[Result, Path]], int, list[str],
                                                       dict[str, float]]:
    """The ``base``-variant results over the union of ``run_dirs``, each with the folder it came from
    (a key present in several folders is taken from the last one given), how many results of
    other (ablation) variants were left out, why each result outside its run's ``meta.json`` plan
    was left out (``run R: task T is not one of its 2 tasks``; :func:`pytest_homefield.shard.why_outside`,
    the rule ``homefield status`` counts them by: lines the run's session could not have written), and per
    agent the USD of the tries a later line of the same key in the same folder replaced (``--resume`` made
    the attempt again: that try spent its cost all the same; the same key in two folders is one try of
    shards, counted once)."""
    merged: dict[Key, tuple[Result, Path]] = {}
    other_variants = 0
    outside: list[str] = []
    tried: dict[str, float] = {}
    for d in run_dirs:
        meta = load_meta(d)
        plan = outside_plan(meta)
        results, replaced = _winners(d)
        for key, usd in replaced.items():
            if key[3] == "base" and why_outside(plan, key[0], key[1], key[2]) is None:
                tried[key[1]] = tried.get(key[1], 0.0) + usd
        for r in results:
            if r.variant != "base":
                other_variants += 1
                continue
            why = why_outside(plan, r.task_id, r.agent, r.attempt)
            if why is not None:
                outside.append(f"run {meta['run_id']}: {why}")
                continue
            merged.pop(r.key, None)
            merged[r.key] = (r, d)
    return merged, other_variants, outside, tried


def order_only_solves(merged: Mapping[Key, tuple[Result, Path]]) -> dict[str, set[str]]:
    """otw64: task id → the FAIL_TO_PASS functions whose one twin was the order twin in the gradings of the solved
    attempts of ``merged`` (:func:`merged_results`; the union of their ``canaries.json`` ``order_only``,
    docs/contracts.md §7: no value twin the parent's code does not tell, and a change returning the expected value
    passes the original and fails that twin as a real fix does, so such a solve is flagged, not caught). Only solved
    attempts' files are read (one each, :func:`~pytest_homefield.layout.read_own_file`); a missing, unreadable or
    malformed one gives nothing, and a task none of whose solves lists one is absent."""
    found: dict[str, set[str]] = {}
    for r, d in merged.values():
        if not counts_solved(r):
            continue
        try:
            data = json.loads(read_own_file(attempt_dir(d, r.task_id, r.agent, r.attempt) / CANARIES_FILE))
        except (OSError, ValueError):
            continue
        names = data.get("order_only") if isinstance(data, dict) else None
        if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
            found.setdefault(r.task_id, set()).update(names)
    return found


@dataclass(frozen=True)
class AgentInfo:
    """What a report says about an agent besides its numbers: spec, marks, model and version."""

    spec: str | None
    simulated: bool
    hinted: bool
    model: str | None
    version: str | None

    @property
    def reference(self) -> bool:
        """A reference agent (``oracle``, ``noop``, ``sim:P``): its pairs are sanity checks, outside the
        Holm family (:mod:`.family`)."""
        return is_reference_spec(self.spec)


def agent_infos(metas: Sequence[dict[str, Any]], results: Sequence[Result]) -> dict[str, AgentInfo]:
    """Every agent of the report: those of each ``meta.json`` in order (``simulated``/``hinted`` from
    meta, else from the spec: ``sim:``, ``openai:``), then any agent seen only in ``results``."""
    out: dict[str, AgentInfo] = {}
    for meta in metas:
        for a in meta.get("agents") or []:
            if not isinstance(a, dict):
                continue
            name = a.get("name")
            if not name or name in out:
                continue
            spec = a.get("spec")
            out[name] = AgentInfo(spec, bool(a.get("simulated", spec_kind(spec) == "sim")),
                                  bool(a.get("hinted", spec_kind(spec) == "openai")),
                                  a.get("model"), a.get("version"))
    for r in results:
        if r.agent not in out:
            out[r.agent] = AgentInfo(None, False, False, r.model, r.agent_version)
    return out


@dataclass
class Attempt:
    """One result with the run folder it came from and its diff similarity (``None``: no diff)."""

    result: Result
    run_dir: Path
    sim: Similarity | None
    f1: float | None


@dataclass
class Similarities:
    """Each attempt's similarity to its task's gold patch: from the run folder's
    :class:`~pytest_homefield.report.similarity.SimilarityCache` when its ``diff.patch`` is unchanged,
    else computed (each gold patch reduced to its changed lines once) and kept there."""

    _caches: dict[Path, SimilarityCache] = field(default_factory=dict)
    #: task id -> (its gold patch's changed lines, computed on the first cache miss; the gold digest)
    _gold: dict[str, tuple[Counter[tuple[str, str]] | None, str]] = field(default_factory=dict)
    _roots: dict[Path, str] = field(default_factory=dict)

    def attempt(self, r: Result, run_dir: Path, task: Task | None) -> Attempt:
        """The :class:`Attempt` of ``r``: similarity of its ``diff.patch`` to the gold patch; the
        record's own ``similarity`` field (F1 only) when the file is missing; neither when neither
        exists or the task (hence the gold patch) is unknown."""
        if task is not None and task.gold_patch:
            # a string path, not attempt_dir()'s Path: thousands of attempts, five joins each (issue 35)
            path = f"{self._root(run_dir)}/{r.task_id}/{r.agent}/{r.attempt}/diff.patch"
            stamp = SimilarityCache.stamp(path)
            if stamp is not None:
                s = self._measured(r, run_dir, task, path, stamp)
                if s is not None:
                    return Attempt(r, run_dir, s, s.f1)
        return Attempt(r, run_dir, None, None if r.similarity is None else float(r.similarity))

    def _root(self, run_dir: Path) -> str:
        """``<run_dir>/attempts`` as a string (:func:`~pytest_homefield.layout.attempt_dir`'s parent)."""
        root = self._roots.get(run_dir)
        if root is None:
            root = self._roots[run_dir] = str(attempt_dir(run_dir, "t", "a", 1).parent.parent.parent)
        return root

    def _measured(self, r: Result, run_dir: Path, task: Task, path: str, stamp: tuple[int, int]) -> Similarity | None:
        cache = self._caches.get(run_dir)
        if cache is None:
            cache = self._caches[run_dir] = SimilarityCache(similarity_path(run_dir))
        gold = self._gold.get(task.id)
        if gold is None:
            gold = self._gold[task.id] = (None, gold_digest(task.gold_patch, task.test_files))
        key = f"{r.task_id}/{r.agent}/{r.attempt}"
        s = cache.get(key, stamp, gold[1])
        if s is None:
            try:
                # never a link, a fifo or a huge file (hatk41: graded code under --sandbox none can swap it)
                patch = read_own_file(Path(path)).decode("utf-8", "replace")
            except OSError:
                return None
            gold_lines = gold[0]
            if gold_lines is None:  # a report whose attempts are all cached never reduces a gold patch (issue 35)
                gold_lines = changed_lines(task.gold_patch, test_files=task.test_files)
                self._gold[task.id] = (gold_lines, gold[1])
            s = similarity_of_lines(changed_lines(patch, test_files=task.test_files), gold_lines)
            cache.put(key, stamp, gold[1], s)
        return s

    def save(self) -> None:
        """Keep what was computed (each run folder's ``similarity.json``)."""
        for cache in self._caches.values():
            cache.save()
