"""``homefield envs [--prune]``: list the uv environments in the user cache; ``--prune`` removes
those no task of this repository's ``.homefield/tasks.jsonl`` uses (and leftovers of killed builds).
Starts no pytest session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_homefield.envs.builder import cache_root, list_envs, prune_envs
from pytest_homefield.records import load_tasks
from pytest_homefield.terminal.progress import plural

__all__ = ["run_envs", "format_envs"]


def format_envs(envs: list[dict[str, Any]], used: set[str]) -> list[str]:
    """One line per environment: key, python, size in MB, build seconds, whether a task uses it, how."""
    lines = []
    for e in envs:
        mb = int(e.get("bytes", 0)) / 1e6
        mark = "used" if e.get("key") in used else "-"
        lines.append(f"  {e.get('key')}  python {e.get('python')}  {mb:7.1f} MB  built in {e.get('build_s')} s  "
                     f"{mark:<4}  {e.get('how')}")
    return lines


def run_envs(root: Path | None, *, prune: bool) -> int:
    """Print the environments (and prune them with ``prune``); returns 0."""
    cache = cache_root()
    tasks_path = root / ".homefield" / "tasks.jsonl" if root is not None else None
    used = {str(t.env["key"]) for t in load_tasks(tasks_path) if t.env} if tasks_path and tasks_path.exists() \
        else set()
    if prune:
        removed = prune_envs(cache, keep=sorted(used), user=str(root.resolve()) if root is not None else None)
        print(f"homefield envs: removed {len(removed)} from {cache} (kept the {len(used)} this repository's tasks "
              "use, those another repository has used and those in use by a running process)")
        for name in removed:
            print(f"  removed {name}")
    envs = list_envs(cache)
    print(f"homefield envs: {plural(len(envs), 'environment')} in {cache}")
    for line in format_envs(envs, used):
        print(line)
    return 0
