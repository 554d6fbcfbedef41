"""Run folders: ids, ``meta.json``, resume bookkeeping (docs/contracts.md §4, §8). No pytest here."""

from __future__ import annotations

import json
import platform
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield import __version__
from pytest_homefield.records import SCORED_OUTCOMES
from pytest_homefield.run.attempt import latest_results
from pytest_homefield.store import read_jsonl, write_atomic

__all__ = ["RunError", "pick_run_id", "build_meta", "check_resume", "done_keys", "read_meta", "write_meta"]


class RunError(ValueError):
    """A usage error about runs (missing, mismatched); one line."""


def read_meta(run_dir: Path) -> dict[str, Any]:
    """``meta.json`` of a run; ``{}`` when absent."""
    try:
        return dict(json.loads((run_dir / "meta.json").read_text()))
    except FileNotFoundError:
        return {}


def write_meta(run_dir: Path, meta: dict[str, Any]) -> None:
    """Write ``meta.json`` atomically (controller only)."""
    write_atomic(run_dir / "meta.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")


def newest_run(runs_root: Path) -> str | None:
    """The run whose ``meta.json`` has the newest ``created_at`` (never the lexicographically last
    name, so named runs do not shadow newer ones). ``homefield verify`` runs (``verify-…``) are
    skipped: they check the environment, they are not agent runs."""
    best: tuple[str, str] | None = None
    for d in runs_root.iterdir() if runs_root.is_dir() else []:
        if d.name.startswith("verify-"):
            continue
        meta = read_meta(d)
        if meta:
            key = (str(meta.get("created_at", "")), d.name)
            if best is None or key > best:
                best = key
    return best[1] if best else None


def pick_run_id(runs_root: Path, *, run_id: str | None, resume: bool, new_id: str) -> str:
    """Choose the run id. ``--resume`` without an id takes the newest run; a given id that exists
    without ``--resume`` is an error (never overwrite a run)."""
    if resume:
        rid = run_id or newest_run(runs_root)
        if rid is None or not (runs_root / rid / "meta.json").exists():
            raise RunError(f"--homefield-resume: no run {'named ' + repr(rid) if rid else 'to resume'} "
                           f"in {runs_root}")
        return rid
    if run_id:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", run_id):
            raise RunError(f"--homefield-run-id {run_id!r} must match [A-Za-z0-9_.-]+")
        if (runs_root / run_id).exists():
            raise RunError(f"run {run_id!r} already exists: add --homefield-resume to continue it, or pick another id")
        return run_id
    return new_id


def build_meta(*, run_id: str, agents: Sequence[Any], attempts: int, tasks_digest: str, task_ids: Sequence[str],
               created_at: str, settings: Any) -> dict[str, Any]:
    """The ``meta.json`` document: agents (name, spec, version, model, simulated, hinted), attempts,
    tasks digest and ids, versions, created_at, limits, ``cut_short`` (``None`` until a run is cut)."""
    import pytest  # heavy (about 0.2 s): `homefield report` reads run folders through this module

    def _version(a: Any) -> str | None:
        try:
            return a.version()  # type: ignore[no-any-return]
        except Exception:
            return None

    return {
        "schema_version": 1,
        "run_id": run_id,
        "created_at": created_at,
        "agents": [
            {"name": a.name, "spec": a.spec, "version": _version(a), "model": getattr(a, "model", None),
             "simulated": bool(getattr(a, "simulated", False)), "hinted": bool(getattr(a, "hinted", False))}
            for a in agents
        ],
        "attempts": attempts,
        "tasks_digest": tasks_digest,
        "task_ids": list(task_ids),
        "versions": {"pytest-homefield": __version__, "pytest": pytest.__version__,
                     "python": platform.python_version(), "platform": sys.platform},
        "limits": {"timeout_s": settings.timeout, "budget_usd": settings.budget,
                   "attempt_budget_usd": settings.attempt_budget, "allow_shell": settings.allow_shell},
        "cut_short": None,
    }


def check_resume(meta: dict[str, Any], *, agents: Sequence[Any], attempts: int, tasks_digest: str) -> None:
    """Raise :class:`RunError` when the flags of a resumed run differ from its ``meta.json``."""
    old = [(a["name"], a["spec"]) for a in meta.get("agents", [])]
    new = [(a.name, a.spec) for a in agents]
    if old != new:
        raise RunError(f"--homefield-resume: agents differ from run {meta.get('run_id')}: run has "
                       f"{', '.join(f'{n}={s}' for n, s in old)}; flags give {', '.join(f'{n}={s}' for n, s in new)}")
    if int(meta.get("attempts", attempts)) != attempts:
        raise RunError(f"--homefield-resume: run {meta.get('run_id')} has {meta.get('attempts')} attempts; "
                       f"flags give {attempts}")
    if meta.get("tasks_digest") and meta["tasks_digest"] != tasks_digest:
        raise RunError(f"--homefield-resume: tasks.jsonl changed since run {meta.get('run_id')} started "
                       f"(digest {meta['tasks_digest']} -> {tasks_digest}); start a new run")


def done_keys(results_path: Path) -> set[tuple[str, str, int]]:
    """(task_id, agent, attempt) of finished, scored attempts (variant ``base``): never redone."""
    return {
        (t, a, n)
        for (t, a, n, v), r in latest_results(read_jsonl(results_path)).items()
        if v == "base" and r.get("outcome") in SCORED_OUTCOMES
    }
