"""``homefield export``: the mined tasks as SWE-bench instances for other harnesses.

Writes ``.homefield/export/<format>-<split>.jsonl`` (or ``.json``) unless ``--out`` is given, and says
where. Exit status: 0 written, 2 for bad input (no tasks file, no tasks, unknown format) with one
line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_homefield.errors import ConfigError
from pytest_homefield.export.swebench import FORMATS, instances, repo_slug, write_instances
from pytest_homefield.layout import HomefieldDir, partial_mine_note
from pytest_homefield.records import EMPTY_TREES, load_tasks
from pytest_homefield.settings import resolve_settings

__all__ = ["add_export_arguments", "run_export"]


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    """The ``export`` subcommand's flags."""
    p.add_argument("--format", choices=FORMATS, default="swe-bench",
                   help="swe-bench: JSON lines (default); swe-bench-json: one JSON array")
    p.add_argument("--out", default=None, help="file to write (default: .homefield/export/<format>-<split>.jsonl)")
    p.add_argument("--split", default="test", help="split name, used in the default file name (default: test)")
    p.add_argument("--repo-name", default=None,
                   help="owner/name for repo and instance_id (default: from the origin remote, else the folder)")


def _origin_url(root: Path) -> str | None:
    import git  # heavy third-party import, deferred

    try:
        return str(git.Repo(root).remote("origin").url)
    except (ValueError, git.GitError):
        return None


def run_export(root: Path, ns: argparse.Namespace) -> int:
    """Export every task of ``root/.homefield/tasks.jsonl``; returns the exit status."""
    home = HomefieldDir(root)
    tasks_path = home.tasks
    if not tasks_path.exists():
        print(f"homefield export: no tasks at {tasks_path}: run `homefield mine` first", file=sys.stderr)
        return 2
    try:
        tasks = load_tasks(tasks_path)
    except (ValueError, OSError) as exc:  # RecordError, StoreError: one line naming file, line and field
        print(f"homefield export: {exc}", file=sys.stderr)
        return 2
    if not tasks:
        print(f"homefield export: {tasks_path} holds no tasks", file=sys.stderr)
        return 2
    roots = [t for t in tasks if t.parent in EMPTY_TREES]
    tasks = [t for t in tasks if t.parent not in EMPTY_TREES]
    if roots:
        print(f"homefield export: left out {len(roots)} task(s) mined from a root commit "
              f"({', '.join(t.id for t in roots)}): a SWE-bench instance needs a base commit", file=sys.stderr)
    if not tasks:
        print(f"homefield export: {tasks_path} holds no task with a base commit", file=sys.stderr)
        return 2
    partial = partial_mine_note(home)
    if partial:
        print(f"homefield export: {partial}", file=sys.stderr)
    repo = ns.repo_name or repo_slug(root, _origin_url(root))
    suffix = ".json" if ns.format == "swe-bench-json" else ".jsonl"
    out = Path(ns.out) if ns.out else home.export / f"{ns.format}-{ns.split}{suffix}"
    try:
        specs = resolve_settings(root, {}, mode="run").services
    except ConfigError:
        specs = ()
    if out.is_dir():
        print(f"homefield export: --out {out} is a folder: give a file name", file=sys.stderr)
        return 2
    try:
        write_instances(instances(tasks, repo, specs), out, ns.format)
    except OSError as exc:  # /proc, a read-only place, a full disk: one line, nothing half-written
        print(f"homefield export: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"homefield export: wrote {len(tasks)} SWE-bench instances of {repo} to {out}")
    print("  These are your private tasks: keep the file out of public repositories and datasets, or the "
          "tasks stop measuring what models have not seen.")
    print("  Grade another harness's patches here: homefield run --agent preds:PREDICTIONS_FILE")
    if any(t.services for t in tasks):
        print("  Some tasks need services (their instances' homefield_services note says which): a SWE-bench "
              "image must start them before the tests.")
    return 0
