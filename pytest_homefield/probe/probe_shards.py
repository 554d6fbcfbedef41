"""``homefield probe --merge DIR…``: the probe folders of ``homefield probe --shard K/N`` sessions
combined into this repository's ``.homefield/probe/``, judged once over every task, as one unsharded
probe of the same calls would be (docs/contracts.md §4).

Each DIR is a probe folder (a shard's ``.homefield/probe/``, the CI artifact), or a ``.homefield/``
folder or a repository holding one. Every ``<agent>.jsonl`` in it is one agent's shard; agents are
merged apart. Every line is validated as a probe reads it
(:func:`pytest_homefield.probe.verdicts.load_probe`: a bad line is one
:class:`~pytest_homefield.errors.RecordError` naming file, line and field). Checks, each a one-line
:class:`~pytest_homefield.errors.ShardMergeError`, all made before anything is written: each file
ends with a verdict line (its session finished); every verdict was made over this repository's
``tasks.jsonl`` (``tasks_digest``) with the same ``cutoff``, and an agent's calls have one spec;
the files are shards of one split; every call is one its shard could have made (:func:`check_call`:
the file's agent, a task its verdict judged, a control's ``gold_task_id`` another task of
``tasks.jsonl``) and its ``score`` is the one its ``answer`` gets against the gold
(:func:`pytest_homefield.probe.similarity.call_score`, recomputed: a number written into a shard
file is never taken as it stands); a call key (kind, task, sample) present in two folders must
have the same score and outcome (then it is counted once). Shards missing from the split are said
(``incomplete: shard 3/3 missing``), and so is a task of ``tasks.jsonl`` a shard's own ``--max-tasks`` (its
verdict's ``max_tasks``) keeps whose id's hash is its K and that its verdict did not judge
(:func:`pytest_homefield.shard.left_out`, shard39); the merged verdict records them: ``--exclude-memorized``
refuses such a verdict, as it refuses a single shard's.

The merged file has the call lines in ``tasks.jsonl`` order (task calls, then control calls, samples
ascending), then the verdict of :func:`pytest_homefield.probe.verdicts.judge` over the union of the
shards' judged tasks. An existing ``.homefield/probe/<agent>.jsonl`` that is not one of the folders
given is never overwritten. No pytest here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.errors import ShardMergeError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.probe.prompt import gold_lines
from pytest_homefield.probe.similarity import call_score, code_tokens
from pytest_homefield.probe.verdicts import (
    FDR,
    RECITE_FLOOR,
    Verdict,
    control_pairs,
    judge,
    now_iso,
    write_verdict,
)
from pytest_homefield.probe_records import latest, load_probe, load_verdict
from pytest_homefield.records import Task, load_tasks, tasks_digest
from pytest_homefield.settings_table import option
from pytest_homefield.shard import (
    left_out,
    missing_shards,
    share_refusal,
    split_refusal,
    stated_cut_refusal,
    stated_mismatch,
)
from pytest_homefield.store import write_jsonl_atomic

__all__ = ["ProbeMerge", "check_call", "find_probe_folder", "merge_probes"]

WHAT = "homefield probe --merge"


@dataclass
class ProbeMerge:
    """One agent's merge: its ``name`` and ``spec``, the merged ``verdict``, the call ``records``
    written, the cost of those calls (USD), the keys found in two folders with the same result
    (``reconciled``) and the folders read (``sources``: folder, shard label)."""

    name: str
    spec: str
    verdict: Verdict
    records: list[dict[str, Any]]
    cost_usd: float
    reconciled: int = 0
    sources: list[tuple[Path, str | None]] = field(default_factory=list)


def find_probe_folder(path: Path) -> Path:
    """``path/.homefield/probe`` or ``path/probe`` when it exists, else ``path`` itself (a probe folder).
    Raises :class:`ShardMergeError` when the folder holds no ``<agent>.jsonl``."""
    for folder in (path / ".homefield" / "probe", path / "probe", path):
        if folder.is_dir() and any(folder.glob("*.jsonl")):
            return folder
    raise ShardMergeError(f"{WHAT}: {path} holds no probe records (<agent>.jsonl, or .homefield/probe/)")


def _order(tasks: Sequence[Task]) -> dict[str, int]:
    return {t.id: n for n, t in enumerate(tasks)}


def check_call(path: Path, agent: str, r: dict[str, Any], judged: set[str] | None, by_id: dict[str, Task],
               gold: dict[str, str]) -> None:
    """Refuse (:class:`ShardMergeError`, one line naming ``path``, the call's kind, task and sample) a call
    record ``r`` of ``agent``'s shard file ``path`` that its session could not have written: another
    agent's, a task outside the tasks its verdict ``judged`` (``None``: not checked), a task not in
    ``by_id`` (``tasks.jsonl``), a control without another task's ``gold_task_id``; or whose ``score`` is
    not the one its ``answer`` and ``outcome`` get against the gold lines (:func:`call_score`, 6 places).
    ``gold``: the gold lines per task id, filled as needed."""
    kind, task, sample = str(r["kind"]), str(r["task_id"]), r["sample"]
    where = f"{WHAT}: {path}: {kind} call {task} {agent}#{sample}"
    gold_id = str(r.get("gold_task_id")) if kind == "control" else task
    why = (f"is agent {r.get('agent')!r}'s" if r.get("agent") != agent
           else f"is not one of the {len(judged)} tasks its verdict judged" if judged is not None and task not in judged
           else "is not a task of tasks.jsonl" if task not in by_id
           else f"has no other task of tasks.jsonl as its gold_task_id ({r.get('gold_task_id')!r})"
           if gold_id not in by_id or (kind == "control" and gold_id == task)
           else "has an answer that is not a string" if not isinstance(r.get("answer", ""), str) else None)
    if why:
        raise ShardMergeError(f"{where} {why}: its session could not have written it; drop that line or the folder")
    if r.get("score") is None:
        return
    if gold_id not in gold:
        gold[gold_id] = gold_lines(by_id[gold_id])
    score = call_score(str(r.get("answer") or ""), r.get("outcome"), gold[gold_id])
    if abs(score - float(r["score"])) > 1e-6:
        raise ShardMergeError(f"{where} stores score {r['score']}, but its answer scores {score} against the gold "
                              f"lines of {gold_id}: a score is recomputed, never taken as written; drop that line "
                              "or the folder")


def merge_probes(sources: Sequence[Path], root: Path) -> list[ProbeMerge]:
    """Merge the probe folders ``sources`` (module docstring) into ``root``'s ``.homefield/probe/``;
    returns one :class:`ProbeMerge` per agent, by name. Raises :class:`ShardMergeError`."""
    if not sources:
        raise ShardMergeError(f"{WHAT}: give the probe folders of the shards to merge")
    home = HomefieldDir(root)
    if not home.tasks.exists():
        raise ShardMergeError(f"{WHAT}: no tasks at {home.tasks}: the shards' tasks.jsonl must be here too")
    digest = tasks_digest(home.tasks)
    all_tasks = load_tasks(home.tasks)
    position = _order(all_tasks)
    by_id = {t.id: t for t in all_tasks}
    gold: dict[str, str] = {}
    repo_ids = [t.id for t in all_tasks]

    def adds_code(task_id: str) -> bool:  # a probe judges only the tasks whose gold patch adds code
        if task_id not in gold:
            gold[task_id] = gold_lines(by_id[task_id])
        return bool(code_tokens(gold[task_id]))

    folders = [find_probe_folder(Path(s)).resolve() for s in sources]
    agents = sorted({p.stem for d in folders for p in d.glob("*.jsonl")})
    plans = []
    for name in agents:
        files = [(d, d / f"{name}.jsonl") for d in folders if (d / f"{name}.jsonl").is_file()]
        verdicts = []
        for _, path in files:
            v = load_verdict(path)
            if v is None:
                raise ShardMergeError(f"{WHAT}: {path} has no verdict line (its probe did not finish): continue it "
                                      f"with `homefield probe {option('resume', 'cli')}` on its machine")
            if v.get("tasks_digest") != digest:
                raise ShardMergeError(f"{WHAT}: {path} probed another tasks.jsonl (tasks digest "
                                      f"{v.get('tasks_digest') or 'unknown'}) than {home.tasks} ({digest}); "
                                      "merge shards of one task set")
            verdicts.append(v)
        for (_, path), v in zip(files, verdicts, strict=True):  # its tasks are its share (hatk37)
            why = share_refusal(str(path), {"shard": v.get("shard"), "shard_of": v.get("shard_of"),
                                            **({"split": v["split"]} if "split" in v else {}),
                                            "task_ids": list(v.get("tasks") or {})}, repo_ids, kept=adds_code,
                                where="its verdict line")
            if why:
                raise ShardMergeError(f"{WHAT}: {why}; drop that folder or probe that shard again")
        why = split_refusal([(str(path), {"shard": v.get("shard"), **({"shard_of": v["shard_of"]}
                                                                      if "shard_of" in v else {})})
                             for (_, path), v in zip(files, verdicts, strict=True)], repo_ids)
        if why:
            raise ShardMergeError(f"{WHAT}: {why}")
        cutoffs = {v.get("cutoff") for v in verdicts}
        if len(cutoffs) > 1:
            raise ShardMergeError(f"{WHAT}: the shards of agent {name!r} used different cutoffs "
                                  f"({', '.join(sorted(str(c) for c in cutoffs))})")
        incomplete = missing_shards([(str(path), v.get("shard")) for (_, path), v in zip(files, verdicts, strict=True)],
                                    what=WHAT)
        # shard39: a task of its K that its --max-tasks keeps but its stated selection lacks, said
        incomplete += left_out([(str(path), {"shard": v.get("shard"), "max_tasks": v.get("max_tasks"),
                                             "task_ids": list(v.get("tasks") or {})})
                                for (_, path), v in zip(files, verdicts, strict=True)], repo_ids, kept=adds_code)
        stated = [(str(path), {"shard": v.get("shard"), "max_tasks": v.get("max_tasks")})
                  for (_, path), v in zip(files, verdicts, strict=True)]
        incomplete += stated_mismatch(stated) + stated_cut_refusal(stated, repo_ids)  # ops40
        merged: dict[tuple[str, str, int], dict[str, Any]] = {}
        origin: dict[tuple[str, str, int], Path] = {}
        reconciled = 0
        specs: set[str] = set()
        for (_, path), v in zip(files, verdicts, strict=True):
            shard_tasks = v.get("tasks")
            judged_here = set(shard_tasks) if isinstance(shard_tasks, dict) else None
            for key, r in latest(load_probe(path)).items():  # every line validated (RecordError names it)
                check_call(path, name, r, judged_here, by_id, gold)
                specs.add(str(r.get("spec")))
                prior = merged.get(key)
                if prior is None:
                    merged[key], origin[key] = r, path
                elif (prior.get("score"), prior.get("outcome")) == (r.get("score"), r.get("outcome")):
                    reconciled += 1
                else:
                    kind, task, sample = key
                    raise ShardMergeError(
                        f"{WHAT}: {kind} call {task} {name}#{sample} is in {origin[key]} (score {prior.get('score')}) "
                        f"and {path} (score {r.get('score')}) with different results; drop one of the two folders")
        if len(specs) > 1:
            raise ShardMergeError(f"{WHAT}: agent {name!r} was probed as {', '.join(sorted(specs))} in different "
                                  "shards; merge shards of one agent spec")
        judged = {tid for v in verdicts for tid in (v.get("tasks") or {})}
        tasks = [t for t in all_tasks if t.id in judged]
        keys = sorted(merged, key=lambda k: (position[k[1]], k[0] != "task", k[2]))
        records = [merged[k] for k in keys]
        verdict = judge(name, records, tasks, cutoff=verdicts[0].get("cutoff"),
                        fdr=float(verdicts[0].get("fdr") or FDR),
                        floor=float(verdicts[0].get("recite_floor") or RECITE_FLOOR), pairs=control_pairs(tasks))
        verdict.tasks_digest = digest
        verdict.merged_from = [{"folder": str(path.parent), "shard": v.get("shard")}
                               for (_, path), v in zip(files, verdicts, strict=True)]
        verdict.incomplete = incomplete
        verdict.notes += incomplete
        target = home.probe_file(name)
        if target.exists() and target.resolve().parent not in folders and any(
                r.get("kind") in ("task", "control") for r in load_probe(target)):
            raise ShardMergeError(f"{WHAT}: {target} already holds probe calls of agent {name!r}: delete it, or give "
                                  f"{target.parent} as one of the folders")
        cost = sum(float(r.get("cost_usd") or 0.0) for r in records)
        plans.append((target, ProbeMerge(name, specs.pop() if specs else "", verdict, records, cost, reconciled,
                                         [(p.parent, v.get("shard")) for (_, p), v in zip(files, verdicts,
                                                                                          strict=True)])))
    at = now_iso()
    home.ensure()
    for target, m in plans:
        write_jsonl_atomic(target, m.records)
        write_verdict(target, m.verdict, at)
    return [m for _, m in plans]
