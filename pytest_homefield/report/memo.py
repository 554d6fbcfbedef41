"""The report's memorization section: the probe verdicts of its agents and the tasks its runs left out
with ``--exclude-memorized`` (README "Has the model simply seen these fixes?")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.probe_records import load_verdict, probe_path
from pytest_homefield.report.model import Memorization, ProbeSummary

__all__ = ["memorization"]


def memorization(run_dirs: Sequence[Path], metas: Sequence[dict[str, Any]],
                 agents: Sequence[str]) -> Memorization | None:
    """The memorization section, or ``None`` when there is nothing to say.

    ``agents``: {name: :class:`ProbeSummary`} from the latest probe verdict
    (``.homefield/probe/<name>.jsonl`` beside the runs folder of the first run) of each agent that
    has one; ``excluded``: task ids the runs left out with ``--exclude-memorized`` (from
    ``meta.json``), ``excluded_by``: {agent: {tasks, control, cutoff, control_n, control_p95}} as
    frozen when the run started. Scores are in [0, 1]. Raises ``RecordError`` for a bad probe file.
    """
    probed: dict[str, ProbeSummary] = {}
    for d in run_dirs[:1]:
        if Path(d).parent.name != "runs":
            break
        homefield_dir = Path(d).parent.parent
        for name in agents:
            v = load_verdict(probe_path(homefield_dir, name))
            if v:
                probed[name] = ProbeSummary(len(v.get("flagged") or []), v.get("judged"), v.get("control"),
                                            v.get("cutoff"), v.get("control_n"), v.get("control_p95"),
                                            list(v.get("flagged") or []))
    excluded: set[str] = set()
    excluded_by: dict[str, dict[str, object]] = {}
    for m in metas:
        e = m.get("excluded_memorized") or {}
        excluded.update(e.get("tasks") or [])
        for name, info in (e.get("by_agent") or {}).items():
            excluded_by.setdefault(name, info)
    if not probed and not excluded:
        return None
    return Memorization(probed, sorted(excluded), excluded_by)
