"""Checks before one report is made over several run folders, e.g. the shards of a CI matrix
(docs/contracts.md §4, §10).

* Runs over different task sets (their ``meta.json`` ``tasks_digest`` differ) are refused: paired
  statistics over them would compare different benchmarks.
* A result key (task, agent, attempt, variant) present in two *sharded* runs is reconciled when
  both records have the same outcome (one is kept: the report counts it once) and refused
  otherwise. Keys repeated across unsharded runs keep the documented rule of
  :func:`pytest_homefield.report.build_report`: the last folder given wins.
* Shards ``K/N`` not among the runs are named: ``incomplete: shard 3/4 missing``.

No pytest here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.report.compute import load_meta, load_results
from pytest_homefield.shard import parse_shard

__all__ = ["MergeError", "MergeCheck", "check_runs"]


class MergeError(ValueError):
    """Runs that must not be reported together; the message is one line."""


@dataclass
class MergeCheck:
    """What :func:`check_runs` found: ``reconciled`` keys present in two sharded runs with the same
    outcome, and ``incomplete`` lines (``"incomplete: shard 3/4 missing"``), in shard order."""

    reconciled: int = 0
    incomplete: list[str] = field(default_factory=list)


def check_runs(run_dirs: Sequence[Path]) -> MergeCheck:
    """Check ``run_dirs`` (run folders) can be reported together. Raises :class:`MergeError` for
    different task sets, for sharded runs that disagree on a key, and for shards of different
    counts (``2/3`` beside ``1/4``)."""
    metas = [load_meta(Path(d)) for d in run_dirs]
    digests = {m.get("tasks_digest") for m in metas if m.get("tasks_digest")}
    if len(digests) > 1:
        first = metas[0]
        other = next(m for m in metas if m.get("tasks_digest") and m.get("tasks_digest") != first.get("tasks_digest"))
        raise MergeError(f"homefield report: runs {first['run_id']} and {other['run_id']} are over different task "
                         f"sets (tasks digest {first.get('tasks_digest')} vs {other.get('tasks_digest')}); "
                         "report them apart")
    check = MergeCheck()
    shards = [(m, parse_shard(m.get("shard"), flag=f"meta.json of {m['run_id']}: shard")) for m in metas]
    sharded = [(Path(d), m) for d, (m, s) in zip(run_dirs, shards, strict=True) if s is not None]
    counts = {s.count for _, s in shards if s is not None}
    if len(counts) > 1:
        splits = ", ".join(sorted(str(m.get("shard")) for m, s in shards if s is not None))
        raise MergeError(f"homefield report: the runs are shards of different splits ({splits}); "
                         "report each split apart")
    if counts:
        n = counts.pop()
        present = {s.index for _, s in shards if s is not None}
        check.incomplete = [f"incomplete: shard {k}/{n} missing" for k in range(1, n + 1) if k not in present]
    seen: dict[tuple[str, str, int, str], tuple[str, str]] = {}
    for d, m in sharded:
        for r in load_results(d):
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
