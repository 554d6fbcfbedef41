"""Run bookkeeping: the run id, the ``meta.json`` document, resume checks (docs/contracts.md §4, §8).
Paths and reading/writing ``meta.json`` belong to :mod:`pytest_homefield.layout`. No pytest hooks here
(pytest is imported only for its version)."""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield import __version__
from pytest_homefield.capabilities import capabilities_of
from pytest_homefield.errors import RunError
from pytest_homefield.layout import meta_path, newest_run
from pytest_homefield.records import NOT_NEEDED, SCORED_OUTCOMES, load_results
from pytest_homefield.run.attempt import latest_results
from pytest_homefield.run.retries import spent, unscored_tries
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["pick_run_id", "build_meta", "check_resume", "done_keys"]


def pick_run_id(runs_root: Path, *, run_id: str | None, resume: bool, new_id: str) -> str:
    """Choose the run id in ``runs_root`` (:attr:`pytest_homefield.layout.HomefieldDir.runs`).
    ``--resume`` without an id takes the newest run; a given id that exists without ``--resume`` is
    an error (never overwrite a run). Raises :class:`RunError`."""
    if resume:
        rid = run_id or newest_run(runs_root)
        if rid is None or not meta_path(runs_root / rid).exists():
            raise RunError(f"{option('resume')}: no run {'named ' + repr(rid) if rid else 'to resume'} "
                           f"in {runs_root}")
        return rid
    if run_id:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", run_id):
            raise RunError(f"{option('run-id')} {run_id!r} must match [A-Za-z0-9_.-]+")
        if (runs_root / run_id).exists():
            raise RunError(f"run {run_id!r} already exists: add {option('resume')} to continue it, or pick another id")
        return run_id
    return new_id


def _services_meta(settings: Any) -> dict[str, Any]:
    """``services`` (the ``services:`` entries) and ``test_network`` for ``meta.json``, when either is set."""
    services = [s.to_dict() for s in getattr(settings, "services", ())]
    network = getattr(settings, "test_network", "none") or "none"
    return {"services": services, "test_network": network} if services or network != "none" else {}


def build_meta(*, run_id: str, agents: Sequence[Any], attempts: int, tasks_digest: str, task_ids: Sequence[str],
               created_at: str, settings: Any, sandbox: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``meta.json`` document: agents (name, spec, version, model, simulated, hinted), attempts,
    tasks digest and ids, versions, created_at, limits, ``sandbox`` (mode, network, per agent and for
    the test runs, when given), ``cut_short`` (``None`` until a run is cut)."""

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
             "simulated": capabilities_of(a).simulated, "hinted": capabilities_of(a).hinted}
            for a in agents
        ],
        "attempts": attempts,
        "tasks_digest": tasks_digest,
        "task_ids": list(task_ids),
        "versions": {"pytest-homefield": __version__, "pytest": pytest.__version__,
                     "python": platform.python_version(), "platform": sys.platform},
        "limits": {"timeout_s": settings.timeout, "budget_usd": settings.budget,
                   "attempt_budget_usd": settings.attempt_budget, "allow_shell": settings.allow_shell},
        **({"sandbox": sandbox} if sandbox is not None else {}),
        **_services_meta(settings),
        "cut_short": None,
    }


def check_resume(meta: dict[str, Any], *, agents: Sequence[Any], attempts: int, tasks_digest: str,
                 task_ids: Sequence[str] | None = None) -> None:
    """Raise :class:`RunError` when the flags of a resumed run differ from its ``meta.json``: other
    agents or specs, another attempt count, a changed ``tasks.jsonl`` or another selection of tasks
    (``--max-tasks``)."""
    old = [(a["name"], a["spec"]) for a in meta.get("agents", [])]
    new = [(a.name, a.spec) for a in agents]
    if old != new:
        raise RunError(f"{option('resume')}: agents differ from run {meta.get('run_id')}: run has "
                       f"{', '.join(f'{n}={s}' for n, s in old)}; flags give {', '.join(f'{n}={s}' for n, s in new)}")
    if int(meta.get("attempts", attempts)) != attempts:
        raise RunError(f"{option('resume')}: run {meta.get('run_id')} has "
                       f"{plural(int(meta.get('attempts') or 0), 'attempt')}; "
                       f"flags give {attempts}")
    if meta.get("tasks_digest") and meta["tasks_digest"] != tasks_digest:
        raise RunError(f"{option('resume')}: tasks.jsonl changed since run {meta.get('run_id')} started "
                       f"(digest {meta['tasks_digest']} -> {tasks_digest}); start a new run")
    if task_ids is not None and list(meta.get("task_ids", task_ids)) != list(task_ids):
        old_n, new_n = len(meta.get("task_ids", [])), len(task_ids)
        raise RunError(f"{option('resume')}: run {meta.get('run_id')} ran {plural(old_n, 'task')}; these flags select "
                       f"{new_n} (a changed {option('max-tasks')} or task filter); resume with the same selection "
                       "or start a new run")


def done_keys(results_path: Path, max_retries: int | None = None) -> set[tuple[str, str, int]]:
    """(task_id, agent, attempt) of finished, scored attempts and of those ``--adaptive`` did not need
    (variant ``base``): never redone. With
    ``max_retries``, also the attempts recorded unscored more than ``max_retries`` times (tried
    ``1 + max_retries`` times: ``--max-retries`` is spent, docs/contracts.md §8; the rule of every mode:
    :mod:`pytest_homefield.run.retries`)."""
    done = {
        (t, a, n)
        for (t, a, n, v), r in latest_results(r.to_dict() for r in load_results(results_path)).items()
        if v == "base" and r.get("outcome") in (*SCORED_OUTCOMES, NOT_NEEDED)
    }
    if max_retries is not None:
        done |= {(t, a, n) for t, a, n, v in spent(unscored_tries(results_path), max_retries) if v == "base"}
    return done
