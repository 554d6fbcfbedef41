"""What ``--exclude-memorized`` leaves out of a run (docs/contracts.md §2, §4): every task the latest
probe verdict of one of the run's agents flagged as memorized (:mod:`pytest_homefield.probe_records`),
for all agents, so that comparisons stay paired.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.agents.registry import kind_capabilities
from pytest_homefield.errors import ProbeError
from pytest_homefield.probe_records import load_probe, load_verdict, probe_path
from pytest_homefield.settings_table import option

__all__ = ["excluded_for_run"]

def excluded_for_run(homefield_dir: Path, agents: Sequence[Any]) -> dict[str, Any]:
    """What ``--exclude-memorized`` drops for a run of ``agents`` (objects with ``name`` and ``spec``):
    every task flagged ``memorized`` in the latest verdict of any of them, for all agents, so that
    comparisons stay paired.

    Returns ``{"tasks": [task_id, …] sorted, "by_agent": {name: {"tasks": [...], "control": …,
    "control_n": …, "control_p95": …, "cutoff": …}}}``. Agents of a kind with no model behind it
    (capabilities ``modelless``: ``oracle``, ``noop``, ``sim:P``) without probe results are skipped.
    Raises :class:`ProbeError` naming the agent when another agent has no finished probe (a verdict with
    an ``unjudged`` task or control is not finished: atk11 P1), or its probe was made with a different spec.
    """
    flagged: set[str] = set()
    by_agent: dict[str, Any] = {}
    for agent in agents:
        path = probe_path(homefield_dir, agent.name)
        verdict = load_verdict(path)
        if verdict is None:
            caps = kind_capabilities(str(agent.spec))
            if caps is not None and caps.modelless:
                continue
            if path.exists():
                raise ProbeError(f"{option('exclude-memorized')}: the probe of agent {agent.name!r} did not finish: "
                                 f"run `homefield probe {option('agent', 'cli')} {agent.spec} "
                                 f"{option('resume', 'cli')}` first")
            raise ProbeError(f"{option('exclude-memorized')}: no probe results for agent {agent.name!r}: "
                             f"run `homefield probe {option('agent', 'cli')} {agent.spec}` first")
        if verdict.get("shard") or verdict.get("incomplete"):
            what = f"is shard {verdict['shard']} only" if verdict.get("shard") else "is a merge with shards missing"
            raise ProbeError(f"{option('exclude-memorized')}: the probe of agent {agent.name!r} {what}: merge every "
                             "shard's .homefield/probe/ folder with `homefield probe --merge DIR…` first")
        if verdict.get("unjudged", 1):  # an older verdict does not say: judge it again
            raise ProbeError(f"{option('exclude-memorized')}: the probe of agent {agent.name!r} left "
                             f"{verdict.get('unjudged', 'some')} task(s) or control(s) without a scored sample: "
                             "not a finished verdict; continue it with `homefield probe "
                             f"{option('resume', 'cli')}` (same agents)")
        specs = {r.get("spec") for r in load_probe(path) if r.get("kind") in ("task", "control")}
        if specs - {agent.spec}:
            raise ProbeError(f"{option('exclude-memorized')}: agent {agent.name!r} was probed as "
                             f"{', '.join(sorted(str(s) for s in specs))}, the run uses {agent.spec}")
        ids = sorted(f["task_id"] for f in verdict.get("flagged") or [])
        flagged.update(ids)
        by_agent[agent.name] = {"tasks": ids, "control": verdict.get("control"), "cutoff": verdict.get("cutoff"),
                                "control_n": verdict.get("control_n"), "control_p95": verdict.get("control_p95")}
    return {"tasks": sorted(flagged), "by_agent": by_agent}
