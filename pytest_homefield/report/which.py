"""Which run a report is about, and which others there are: printed by ``homefield report`` so a report
picked by default (the newest run) is never mistaken for the comparison the user read before."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.errors import RecordError
from pytest_homefield.layout import newest_run, read_own_file
from pytest_homefield.report.runs import read_results, results_read
from pytest_homefield.settings_table import option
from pytest_homefield.shard import outside_plan, why_outside
from pytest_homefield.store import lock_holder, read_jsonl
from pytest_homefield.terminal.progress import plural

__all__ = ["RunSummary", "pick_run", "run_summaries", "run_summary", "which_run_lines"]


@dataclass
class RunSummary:
    """One run folder at a glance: ``planned`` = tasks × agents × attempts of its ``meta.json``, ``finished`` =
    distinct attempts in its results (the last line of a key wins) within that plan (``plan``:
    :func:`pytest_homefield.shard.outside_plan` of the meta, the check ``homefield report`` refuses a run by;
    ``outside`` counts the others), counted from ``results_file`` when first asked (picking a run counts the
    newest idle runs' until one holds a result, nu56; the other runs' lines count the report's own run from the
    records the report read: :func:`.runs.results_read`, issue 35). atk17: lines appended to a shard's results
    showed as "48 of 16 attempts finished"."""

    run_id: str
    created_at: str
    agents: list[str]
    planned: int
    cut_short: str | None
    #: who holds the run folder's lock (a session running it now: ``pid N on HOST since T``), else ``None``
    running: str | None = None
    results_file: Path | None = None
    plan: Callable[[str, str, int], str | None] | None = field(default=None, repr=False)
    _counts: tuple[int, int, str | None] | None = field(default=None, repr=False)
    #: why ``results_file`` could not be read (one line: a link, never followed; not a regular file; fix45), else
    #: ``None``: the run is then described with 0 finished and that reason, never a traceback
    unreadable: str | None = field(default=None, repr=False)
    #: count from the records, read and kept for the report that follows (:func:`default_run`: ``homefield report``
    #: and ``view`` read the run picked again), else from the JSON lines alone (``homefield status``: cheaper)
    keep: bool = field(default=False, repr=False)

    def _count(self) -> tuple[int, int, str | None]:
        if self._counts is None:
            try:
                self._counts = (0, 0, None) if self.results_file is None else _count_finished(self.results_file,
                                                                                               self.plan, self.keep)
            except (OSError, ValueError) as exc:  # StoreError, RecordError: one line naming the file
                self._counts, self.unreadable = (0, 0, None), " ".join(str(exc).split())
        return self._counts

    @property
    def finished(self) -> int:
        """Distinct (task, agent, attempt, variant) keys of ``results_file`` within the plan (0 without one)."""
        return self._count()[0]

    @property
    def outside(self) -> tuple[int, str | None]:
        """Distinct keys of ``results_file`` outside the plan, and why the first is (``(0, None)``: none)."""
        return self._count()[1:]

    @property
    def when(self) -> str:
        """``2026-12-01 15:02 UTC`` from ``created_at`` (ISO 8601, UTC)."""
        return self.created_at[:16].replace("T", " ") + " UTC" if self.created_at else "unknown time"

    def describe(self) -> str:
        """``started 2026-12-01 15:02 UTC · oracle, noop · 8 of 8 attempts finished``; past four agents the
        first three and how many more (a ``homefield verify --attacks`` run has 41)."""
        agents = ", ".join(self.agents[:3]) + (f" and {len(self.agents) - 3} more agents" if len(self.agents) > 4
                                               else "".join(f", {a}" for a in self.agents[3:]))
        text = f"started {self.when} · {agents or 'no agents'} · {self.finished} of " \
               f"{plural(self.planned, 'attempt')} finished"
        if self.running:
            text += f" · in progress ({self.running})"
        elif self.finished < self.planned:
            text += f" (a subset: -k, {option('max-tasks')}, stopped or cut short)"
        if self.cut_short:
            text += f" · cut short: {self.cut_short}"
        n, why = self.outside
        if self.unreadable:
            text += f" · results not read: {self.unreadable}"
        if n:
            text += (f" · {plural(n, 'result')} outside its plan, not counted ({why}): lines its session could "
                     "not have written, which homefield report leaves out (and refuses in a merge)")
        return text


def run_summaries(runs_root: Path, keep: bool = False) -> list[RunSummary]:
    """Every agent run under ``runs_root`` (``verify-…`` runs left out), newest ``created_at`` first,
    each with the session running it now, if any (:func:`pytest_homefield.store.lock_holder`); ``keep``: as
    :attr:`RunSummary.keep`."""
    out = [s for d in (runs_root.iterdir() if runs_root.is_dir() else []) if not d.name.startswith("verify-")
           for s in [run_summary(d, keep)] if s is not None]
    return sorted(out, key=lambda s: (s.created_at, s.run_id), reverse=True)


def run_summary(d: Path, keep: bool = False) -> RunSummary | None:
    """The run in folder ``d`` at a glance (a ``verify-…`` run too), ``None`` when its ``meta.json`` is
    missing or not JSON."""
    try:
        meta = json.loads(read_own_file(d / "meta.json"))  # never a link, a fifo or a huge file (hatk41)
    except (OSError, ValueError):
        return None
    agents = [str(a.get("name")) for a in meta.get("agents", [])]
    planned = len(meta.get("task_ids", [])) * len(agents) * int(meta.get("attempts") or 0)
    return RunSummary(run_id=d.name, created_at=str(meta.get("created_at") or ""), agents=agents,
                      planned=planned, cut_short=meta.get("cut_short"), running=lock_holder(d),
                      results_file=d / "results.jsonl", plan=outside_plan(meta), keep=keep)


def _count_finished(path: Path, plan: Callable[[str, str, int], str | None] | None,
                    keep: bool = False) -> tuple[int, int, str | None]:
    """Distinct result keys of ``path`` within ``plan`` (:func:`pytest_homefield.shard.outside_plan`; ``None``:
    all), those outside it, and why the first of those (in file order) is: from the records this process
    already read (unchanged since), else with ``keep`` read and kept (:func:`~.runs.read_results`: the report on the
    run picked reads them no more), else (or for a file holding a bad record) from its JSON lines (no record
    checks: a summary of another run never fails on it; an attempt that is not a number is outside)."""
    try:  # with keep parsed and kept (read_results: the records already read, else read now): the report on the run
        # picked takes them from there (rev58: it read the file again)
        known = read_results(path) if keep else results_read(path)
    except RecordError:  # a bad record: counted from the JSON lines, with no record checks, as before
        known = None
    keys = list(dict.fromkeys([r.key for r in known] if known is not None else
                              [(r.get("task_id"), r.get("agent"), r.get("attempt"), r.get("variant"))
                               for r in read_jsonl(path)]))
    inside, first = 0, None
    for task, agent, attempt, _ in keys:
        why = why_outside(plan, task, agent, attempt)
        inside += why is None
        first = first or why
    return inside, len(keys) - inside, first


def pick_run(summaries: Sequence[RunSummary]) -> tuple[str | None, list[str]]:
    """The run ``homefield report`` reports on by default: the newest one no session is running that holds a
    result (else the newest no session is running; the newest of all when every run is in progress), and one
    line per newer run in progress (``run r2 (started …) is in progress: 3 of 8 attempts finished; homefield
    report r2 reports on it as it is``) or passed over for holding none (``run r3 (started …) holds no result
    (…); homefield report r3 reports on it``: nu56 on Suor/funcy, a ``pytest --homefield … -k … --collect-only``
    to check a selection left a run of 0 attempts that ``homefield report`` and ``status`` then picked over the
    57 attempts of the run before it). ``summaries`` newest first (:func:`run_summaries`); ``(None, [])``
    without runs."""
    if not summaries:
        return None, []
    idle = [s for s in summaries if not s.running]
    chosen = next((s for s in idle if s.finished), idle[0] if idle else summaries[0])
    lines = [f"run {s.run_id} (started {s.when}) is in progress: {s.finished} of {plural(s.planned, 'attempt')} "
             f"finished; homefield report {s.run_id} reports on it as it is"
             if s.running else
             f"run {s.run_id} (started {s.when}) holds no result (0 of {plural(s.planned, 'attempt')} finished: "
             f"a --collect-only, or stopped before any attempt); homefield report {s.run_id} reports on it"
             for s in summaries if s.created_at >= chosen.created_at and s is not chosen
             and (s.running or not s.finished)]
    return chosen.run_id, lines


def default_run(runs_root: Path) -> tuple[str | None, list[str], list[RunSummary] | None]:
    """``(run id, lines, summaries)``: the run ``homefield report`` and ``homefield view`` take without a run id
    (:func:`pick_run` of :func:`run_summaries`, newest first) and its lines about newer runs passed over;
    ``(None, [], None)`` when ``runs_root`` holds no run. Raises ``ValueError``
    (:class:`~pytest_homefield.layout.RunError`) for a ``meta.json`` that cannot be read, as
    :func:`~pytest_homefield.layout.newest_run`."""
    if newest_run(runs_root) is None:
        return None, [], None
    summaries = run_summaries(runs_root, keep=True)  # the run picked is read next: its records kept (rev58)
    picked, lines = pick_run(summaries)
    for s in summaries:  # the others are only described (which_run_lines): counted from their JSON lines
        s.keep = s.run_id == picked
    return picked, lines, summaries


def which_run_lines(runs_root: Path, chosen: Sequence[str], *, by_default: bool, others: int = 5,
                    summaries: Sequence[RunSummary] | None = None) -> list[str]:
    """What the report is about: the chosen run(s) with their agents, time and completeness, then (when
    the newest was picked by default, or there are others) up to ``others`` other recent runs and how
    to report on them. ``summaries``: :func:`run_summaries` of ``runs_root`` when the caller has them."""
    summaries = run_summaries(runs_root) if summaries is None else summaries
    by_id = {s.run_id: s for s in summaries}
    lines = []
    for rid in chosen:
        s = by_id.get(rid) or run_summary(runs_root / rid)  # a verify-… run is not among the summaries
        how = " (the newest run; give a RUN_ID for another)" if by_default else ""
        lines.append(f"Report on run {rid}{how}: {s.describe() if s else 'no meta.json'}")
    others_all = [s for s in summaries if s.run_id not in set(chosen)]
    rest = others_all[:others]
    if rest:
        lines.append("Other recent runs (homefield report RUN_ID, or several ids to report on them together):")
        lines += [f"  {s.run_id}  {s.describe()}" for s in rest]
        left = len(others_all) - len(rest)
        if left > 0:
            lines.append(f"  … and {plural(left, 'older run')} in {runs_root}")
    return lines
