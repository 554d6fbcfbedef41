"""``homefield verify``: re-run ``oracle`` on every task in the current environment and list the
tasks that no longer pass, with how the environment changed since they were mined (drift)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_homefield.envs.builder import EnvBuildError, resolve_env
from pytest_homefield.envs.declaration import declaration_at
from pytest_homefield.layout import HomefieldDir, new_verify_id, results_path
from pytest_homefield.mine.pipeline import python_of
from pytest_homefield.records import Task, load_tasks
from pytest_homefield.sandbox.fingerprint import env_description, env_fingerprint, fingerprint_diff
from pytest_homefield.store import read_jsonl

__all__ = ["run_verify", "drift_lines", "env_key_changes"]


def drift_lines(root: Path, fingerprint: str, python: str | None = None) -> list[str]:
    """Differences between the environment a task was mined in (``.homefield/envs/<fp>.json``) and
    the current one; ``[]`` when they match or the old description was not kept."""
    if env_fingerprint(python) == fingerprint:
        return []
    try:
        old = json.loads(HomefieldDir(root).env_file(fingerprint).read_text())
    except (OSError, ValueError):
        return [f"environment fingerprint changed ({fingerprint} -> {env_fingerprint(python)}); "
                "the mining environment's description was not kept"]
    return fingerprint_diff(old, env_description(python))


def env_key_changes(root: Path, tasks: Sequence[Task]) -> dict[str, str]:
    """Task id -> ``'environment key <old> -> <new>'`` for every task mined with ``--env uv`` whose
    environment key is different today (another interpreter, or a build rule changed), or the reason
    it cannot be computed. Oracle is re-run on every task anyway; these lines say why one broke."""
    out: dict[str, str] = {}
    for t in tasks:
        if not t.env:
            continue
        try:
            key = resolve_env(declaration_at(root, t.commit), extras=t.env.get("extras") or [],
                              groups=t.env.get("groups") or [], as_of=t.env.get("as_of"))[0]
        except EnvBuildError as exc:
            out[t.id] = f"environment cannot be resolved: {exc}"
            continue
        if key != t.env.get("key"):
            out[t.id] = f"environment key {t.env.get('key')} -> {key}"
    return out


def run_verify(root: Path, pytest_argv: Sequence[str]) -> int:
    """Run oracle once per task through pytest, then print the tasks it did not solve and the drift.
    Returns 0 when every task still passes, 1 otherwise (pytest's own status on usage errors)."""
    home = HomefieldDir(root)
    run_id = new_verify_id()
    code = int(pytest.main([*pytest_argv, f"--homefield-run-id={run_id}"]))
    results = results_path(home.run_dir(run_id))
    if not results.exists():
        return code
    tasks = {t.id: t for t in load_tasks(home.tasks)}
    broken = [r for r in read_jsonl(results) if r.get("outcome") != "solved"]
    changed = env_key_changes(root, list(tasks.values()))
    print()
    if changed:
        print(f"homefield verify: {len(changed)} task(s) were re-validated in a changed environment:")
        for tid, line in changed.items():
            print(f"  {tid}  {line}")
    if not broken:
        print(f"homefield verify: oracle solves all {len(tasks)} tasks in this environment")
        return 0 if code in (0, 1) else code
    print(f"homefield verify: {len(broken)} of {len(tasks)} tasks no longer pass with the reference fix:")
    for r in broken:
        t = tasks.get(r["task_id"])
        print(f"  {r['task_id']}  {r['outcome']:<13} {(t.subject if t else '')[:70]}")
        if t is not None:
            for line in drift_lines(root, t.env_fingerprint, python_of(t.test_cmd))[:12]:
                print(f"      {line}")
    return 1
