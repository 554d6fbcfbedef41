"""The probe's plan line: how many calls a probe session makes and what they would cost, before any
is made. The cost estimate is the mean ``cost_usd`` of the agent's earlier answered probe calls; a
reference agent's (``oracle`` recites the gold lines, ``noop`` answers nothing: no model) is exactly 0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_homefield.probe_records import latest, load_probe, probe_path
from pytest_homefield.report.family import is_reference_spec
from pytest_homefield.terminal.progress import plural

__all__ = ["call_keys", "plan_lines"]


def call_keys(task_ids: Sequence[str], samples: int, pairs: Mapping[str, str]) -> list[tuple[str, str, int]]:
    """(kind, task_id, sample) of every call a session makes for one agent: ``task`` calls for each
    task and sample, plus ``control`` calls for each task with a mismatched pair in ``pairs``
    (:func:`pytest_homefield.probe.verdicts.control_pairs`; empty with a cutoff)."""
    keys = [("task", tid, s) for tid in task_ids for s in range(1, samples + 1)]
    keys += [("control", tid, s) for tid in task_ids if tid in pairs for s in range(1, samples + 1)]
    return keys


def plan_lines(homefield_dir: Path, agents: Iterable[tuple[str, str]], task_ids: Sequence[str], samples: int,
               cutoff: str | None, done: Mapping[str, set[tuple[str, str, int]]] | None = None,
               pairs: Mapping[str, str] | None = None) -> list[str]:
    """One line for the whole probe, then one per agent (name, spec): calls to make, calls already
    answered (``done`` per agent name), and the estimated USD (``?`` without history; exactly 0 for a
    reference agent, :func:`~pytest_homefield.report.family.is_reference_spec`). ``pairs``: the
    control pairs (:func:`pytest_homefield.probe.verdicts.control_pairs`; none with a cutoff)."""
    agents = list(agents)
    pairs = {} if cutoff or pairs is None else pairs
    keys = call_keys(task_ids, samples, pairs)
    n_task = len(task_ids) * samples
    unpaired = sum(1 for tid in task_ids if tid not in pairs)
    what = (f"control: tasks authored after {cutoff}" if cutoff
            else f"+ {len(keys) - n_task} control calls on mismatched prompt/file pairs"
            + (f" ({plural(unpaired, 'task')} without a pair: every other task changes the same files)"
               if unpaired else ""))
    lines = [f"Probe plan: {plural(len(task_ids), 'task')} × {plural(len(agents), 'agent')} × "
             f"{plural(samples, 'sample')} = {plural(n_task * len(agents), 'call')} {what}; "
             f"{plural(len(keys) * len(agents), 'call')} in all"]
    for name, spec in agents:
        finished = (done or {}).get(name, set())
        todo = [k for k in keys if k not in finished]
        costs = [float(r["cost_usd"]) for r in latest(load_probe(probe_path(homefield_dir, name))).values()
                 if r.get("score") is not None and r.get("cost_usd") is not None]
        if is_reference_spec(spec):
            est = "0.00 USD (exact: a reference agent answers without a model)"
        elif costs:
            mean = sum(costs) / len(costs)
            est = f"~{mean * len(todo):.2f} USD ({mean:.4f} USD/call from {plural(len(costs), 'earlier call')})"
        else:
            est = "cost ? USD (no earlier probe call of this agent)"
        lines.append(f"  {name} ({spec}): {plural(len(todo), 'call')} to make, {len(keys) - len(todo)} already "
                     f"answered; {est}")
    return lines
