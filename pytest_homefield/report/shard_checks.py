"""Checks before one report is made over several run folders, e.g. the shards of a CI matrix
(docs/contracts.md §4, §10).

* Runs over different task sets (their ``meta.json`` ``tasks_digest`` differ) are refused: paired
  statistics over them would compare different benchmarks.
* A result key (task, agent, attempt, variant) present in two *sharded* runs is reconciled when
  both records have the same outcome (one is kept: the report counts it once) and refused
  otherwise. Keys repeated across unsharded runs keep the documented rule of
  :func:`pytest_homefield.report.build_report`: the last folder given wins.
* Shards ``K/N`` not among the runs are named: ``incomplete: shard 3/4 missing``; and so is each task of
  this repository's ``tasks.jsonl`` whose id's hash is a present shard's K that the shard left out though its
  own ``--max-tasks`` and ``--exclude-memorized`` keep it (:func:`pytest_homefield.shard.left_out`, shard39:
  ``incomplete: shard 3/3 left out 1 task(s) of its share of tasks.jsonl (ID): …``); and shards stating
  different ``--max-tasks`` or memorized tasks left out, or a cut that is not one of this ``tasks.jsonl``
  (:func:`pytest_homefield.shard.stated_mismatch`, :func:`pytest_homefield.shard.stated_cut_refusal`, ops40).
* Each run's records must be within its own plan (:func:`pytest_homefield.shard.outside_plan`: its
  ``meta.json`` tasks, agents and attempts), or the runs are refused.
* A shard's plan must be its share (hatk36): its ``tasks_digest`` this repository's, its ``task_ids``
  exactly shard K/N of the tasks it split (:func:`pytest_homefield.shard.share_refusal`), and the shards
  one split (:func:`pytest_homefield.shard.split_refusal`), or the runs are refused.

No pytest here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.errors import MergeError, ShardMergeError
from pytest_homefield.report.runs import load_meta, load_results
from pytest_homefield.shard import (
    claim_refusal,
    left_out,
    missing_shards,
    outside_plan,
    share_refusal,
    split_refusal,
    stated_cut_refusal,
    stated_mismatch,
)

__all__ = ["MergeError", "MergeCheck", "check_runs"]


@dataclass
class MergeCheck:
    """What :func:`check_runs` found: ``reconciled`` keys present in two sharded runs with the same
    outcome, and ``incomplete`` lines (``"incomplete: shard 3/4 missing"``), in shard order."""

    reconciled: int = 0
    incomplete: list[str] = field(default_factory=list)


def check_runs(run_dirs: Sequence[Path], repo_ids: Sequence[str] | None = None,
               repo_digest: str | None = None) -> MergeCheck:
    """Check ``run_dirs`` (run folders) can be reported together. Raises :class:`MergeError` for
    different task sets, for sharded runs that disagree on a key, and for shards of different
    counts (``2/3`` beside ``1/4``), and for a record outside its run's plan; and for a sharded run over
    another ``tasks.jsonl`` than ``repo_digest`` (this repository's) or whose tasks are not its share of
    ``repo_ids`` (this repository's task ids, in file order; ``None``: not checked), when there are
    several runs, or one shard over this ``tasks.jsonl`` (hatk37)."""
    metas = [load_meta(Path(d)) for d in run_dirs]
    digests = {m.get("tasks_digest") for m in metas if m.get("tasks_digest")}
    if len(digests) > 1:
        first = metas[0]
        other = next(m for m in metas if m.get("tasks_digest") and m.get("tasks_digest") != first.get("tasks_digest"))
        raise MergeError(f"homefield report: runs {first['run_id']} and {other['run_id']} are over different task "
                         f"sets (tasks digest {first.get('tasks_digest')} vs {other.get('tasks_digest')}); "
                         "report them apart")
    for m in metas:  # shard38: every shard's tasks are its K's, lone or not, over whatever tasks.jsonl
        why = claim_refusal(f"run {m['run_id']}", m)
        if why:
            raise MergeError(f"homefield report: {why}; report it apart or run that shard again")
    checked = []  # the shards checked against this repository's tasks.jsonl
    for m in metas:  # a merge of shards (one run alone is reported over its own meta, whatever tasks.jsonl is now)
        if m.get("shard") is None or repo_ids is None:
            continue
        if len(metas) < 2 and (repo_digest is None or m.get("tasks_digest") != repo_digest):
            continue  # hatk37: a lone shard of this tasks.jsonl is checked too (its claims beyond its own shard_of)
        checked.append((f"run {m['run_id']}", m))
        if repo_digest is not None and m.get("tasks_digest") != repo_digest:
            raise MergeError(f"homefield report: run {m['run_id']} is shard {m.get('shard')} of another tasks.jsonl "
                             f"(tasks digest {m.get('tasks_digest')}, this repository's {repo_digest}); report it "
                             "where it ran")
        why = share_refusal(f"run {m['run_id']}", m, repo_ids)
        if why:
            raise MergeError(f"homefield report: {why}; report it apart or run that shard again")
    why = split_refusal([(f"run {m['run_id']}", m) for m in metas], repo_ids)
    if why:
        raise MergeError(f"homefield report: {why}")
    check = MergeCheck()
    try:
        check.incomplete = missing_shards([(str(m["run_id"]), m.get("shard")) for m in metas],
                                          what="homefield report")
    except ShardMergeError as exc:
        raise MergeError(str(exc)) from None
    check.incomplete += left_out(checked, repo_ids or ())  # shard39: a task of its K it left out, said
    # ops40: what the shards state of --max-tasks and --exclude-memorized, checked where it can be
    check.incomplete += stated_mismatch([(f"run {m['run_id']}", m) for m in metas])
    check.incomplete += stated_cut_refusal(checked, repo_ids or ())
    seen: dict[tuple[str, str, int, str], tuple[str, str]] = {}
    for d, m in zip(run_dirs, metas, strict=True):
        merging, sharded = len(run_dirs) > 1, m.get("shard") is not None
        if not (merging or sharded):
            continue
        in_plan = outside_plan(m)
        for r in load_results(Path(d)):
            why = in_plan(r.task_id, r.agent, r.attempt) if merging else None
            if why:
                raise MergeError(f"homefield report: run {m['run_id']} has a result its session could not have "
                                 f"written ({why}); report the runs apart or drop that line")
            if not sharded:
                continue
            prior = seen.get(r.key)
            if prior is None:
                seen[r.key] = (m["run_id"], r.outcome)
            elif prior[1] == r.outcome:
                check.reconciled += 1
            else:
                task, agent, attempt, _ = r.key
                raise MergeError(f"homefield report: {task} {agent}#{attempt} is in runs {prior[0]} ({prior[1]}) and "
                                 f"{m['run_id']} ({r.outcome}) with different outcomes; drop one of the two runs")
    return check
