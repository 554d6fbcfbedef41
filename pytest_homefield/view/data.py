"""The runs a site shows, loaded once: the report, the tasks, every attempt's result and folder.

:func:`load_site` reads the run folders as ``homefield report`` does (:func:`pytest_homefield.report.compute_report`,
:func:`pytest_homefield.report.runs.merged_results`: the ``base`` variant, the last record of a key
winning, a key in several runs taken from the last run given) and orders the attempts as the run
page shows them: tasks in the report's order, agents in rank order, attempts by number. Raises
``ValueError`` (``RecordError``, ``RunError``) naming the file for a bad record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield import __version__
from pytest_homefield.layout import HomefieldDir, attempt_dir
from pytest_homefield.records import Result, Task
from pytest_homefield.report.compute import REPORT_FORMAT, REPORT_SCHEMA_VERSION, compute_report
from pytest_homefield.report.model import Report
from pytest_homefield.report.runs import load_meta, merged_results, results_stamp
from pytest_homefield.sandbox import nofollow

__all__ = ["AttemptRef", "SiteData", "load_site", "saved_report"]


@dataclass(frozen=True)
class AttemptRef:
    """One attempt: its result record, the folder of its artifacts, and the run's ``meta.json``."""

    result: Result
    folder: Path
    meta: dict[str, Any]

    @property
    def key(self) -> tuple[str, str, int]:
        return self.result.task_id, self.result.agent, self.result.attempt


@dataclass
class SiteData:
    """Everything the pages read: ``report`` (docs/contracts.md §10), ``tasks`` by id, ``attempts`` in
    page order, ``by_task`` (task id → agent → attempts), each agent's ``specs``, and ``metas`` (one
    ``meta.json`` per run folder, in the order given)."""

    report: Report
    tasks: dict[str, Task]
    attempts: list[AttemptRef]
    metas: list[dict[str, Any]]
    specs: dict[str, str] = field(default_factory=dict)
    by_task: dict[str, dict[str, list[AttemptRef]]] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """Agent names in rank order."""
        return list(self.report.agents)

    def flagged(self, ref: AttemptRef) -> bool:
        """Flagged as the report flags: suspicious, touched tests, or forged."""
        r = ref.result
        return r.suspicious or r.touched_tests or r.outcome == "forged"


#: The largest ``report.json`` :func:`saved_report` reads (bytes); a larger one is computed again.
SAVED_REPORT_LIMIT = 64 << 20


def saved_report(run_dir: Path, newer_than: float = 0.0) -> Report | None:
    """The run's ``report.json`` (written at the run's end and by ``homefield report``) when it is the
    report this homefield would compute now, else ``None`` (then it is computed again): its
    ``made_by`` names this version and :data:`~pytest_homefield.report.compute.REPORT_FORMAT` (a report
    an older homefield wrote keeps that version's wording), its ``schema_version`` is this one, it
    covers this run alone, its ``runs[0].results`` stamp (size and mtime in ns) is that of the
    ``results.jsonl`` now, and it is at least as new as ``newer_than`` (the tasks file's mtime, s) and as
    every probe file beside the runs folder (``.homefield/probe/*.jsonl``: a probe after the run gives the
    report its memorization verdicts). One that cannot be read is computed again too, and so is one that is no
    regular file of the run folder's own, or over :data:`SAVED_REPORT_LIMIT` bytes (satk60: a run folder may come
    from another machine, a CI shard's artifact; a ``report.json`` linked to a host file was read, ``/dev/zero``
    without end, and a fifo there held ``homefield view`` for good): read without following a link, never
    waiting (:func:`~pytest_homefield.sandbox.nofollow.read_bytes`)."""
    try:
        if Path(run_dir).parent.name == "runs":
            probes = HomefieldDir(Path(run_dir).parent.parent.parent).probe
            newer_than = max([newer_than, *(p.stat().st_mtime for p in probes.glob("*.jsonl"))])
        if (st := nofollow.lstat(run_dir, "report.json")) is None or st.st_mtime < newer_than:
            return None
        doc = json.loads(nofollow.read_bytes(run_dir, "report.json", limit=SAVED_REPORT_LIMIT))
        runs = doc.get("runs") or []
        if (doc.get("made_by") != {"homefield": __version__, "format": REPORT_FORMAT}
                or doc.get("schema_version") != REPORT_SCHEMA_VERSION or len(runs) != 1
                or runs[0].get("results") is None or runs[0]["results"] != results_stamp(run_dir)):
            return None
        return Report.from_dict(doc)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def load_site(run_dirs: Sequence[Path], tasks: Sequence[Task], *, tasks_mtime: float | None = None) -> SiteData:
    """The site's data over ``run_dirs`` (one or more ``.homefield/runs/<id>/``) and the tasks of
    ``tasks.jsonl``. With ``tasks_mtime`` (s) and one run, the run's saved report is used when it is
    fresh (:func:`saved_report`), else the report is computed. Raises ``ValueError`` naming the file of
    a bad record."""
    report = saved_report(run_dirs[0], tasks_mtime) if tasks_mtime is not None and len(run_dirs) == 1 else None
    report = report or compute_report(list(run_dirs), list(tasks))
    metas = [load_meta(d) for d in run_dirs]
    meta_of = {Path(d): m for d, m in zip(run_dirs, metas, strict=True)}
    merged = merged_results(list(run_dirs))[0]
    specs: dict[str, str] = {}
    for m in metas:
        for a in m.get("agents") or []:
            if isinstance(a, dict) and a.get("name"):
                specs.setdefault(str(a["name"]), str(a.get("spec") or ""))
    by_task: dict[str, dict[str, list[AttemptRef]]] = {}
    for (tid, agent, n, _variant), (r, run_dir) in merged.items():
        ref = AttemptRef(r, attempt_dir(run_dir, tid, agent, n), meta_of.get(Path(run_dir), {}))
        by_task.setdefault(tid, {}).setdefault(agent, []).append(ref)
    rank = {name: i for i, name in enumerate(report.agents)}
    order = [t.id for t in report.tasks] + sorted(set(by_task) - {t.id for t in report.tasks})
    attempts: list[AttemptRef] = []
    for tid in order:
        agents = by_task.get(tid, {})
        for agent in sorted(agents, key=lambda a: (rank.get(a, len(rank)), a)):
            agents[agent].sort(key=lambda ref: ref.result.attempt)
            attempts += agents[agent]
    return SiteData(report=report, tasks={t.id: t for t in tasks}, attempts=attempts, metas=metas, specs=specs,
                    by_task=by_task)
