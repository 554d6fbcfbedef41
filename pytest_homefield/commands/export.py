"""``homefield export``: the mined tasks for other harnesses (SWE-bench).

``--format swe-bench`` (default) writes a swebench 5 task repository
(:mod:`pytest_homefield.export.taskrepo`) into ``--out DIR`` (default ``.homefield/export/swe-bench``),
with the flat instance file ``instances/<split>.jsonl``; ``--format swe-bench-json`` writes the same
instances as one JSON array to ``--out FILE`` (default ``.homefield/export/swe-bench-json/<split>.json``),
alone in its folder. Exit status: 0 written, 2 for bad input (no tasks file, no tasks, unknown format,
no task the harness can grade) with one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.envs.declaration import Declaration, declaration_at
from pytest_homefield.errors import ConfigError
from pytest_homefield.export.swebench import FORMATS, instances, repo_name, upstream_url, write_instances
from pytest_homefield.export.taskrepo import RUN_TIMEOUT_S, clone_url, python_version, write_task_repo
from pytest_homefield.layout import HomefieldDir, partial_mine_note
from pytest_homefield.records import EMPTY_TREES, Task, load_tasks
from pytest_homefield.run.eval_undo import undo_lines
from pytest_homefield.run.hang_bound import grading_bound
from pytest_homefield.sandbox.limits import TEST_MEMORY_MB
from pytest_homefield.sandbox.snapshot import git
from pytest_homefield.settings import resolve_settings
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["add_export_arguments", "format_name", "run_export"]


def format_name(value: str) -> str:
    """``--format``'s value as :data:`FORMATS` spells it when it names one with other case, ``-`` or ``_``
    (``swebench``, ``SWE_bench-json``); else ``value`` itself, which argparse then refuses naming the choices."""
    def key(name: str) -> str:
        return name.lower().replace("-", "").replace("_", "")

    return next((f for f in FORMATS if key(f) == key(value)), value)


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    """The ``export`` subcommand's flags."""
    p.add_argument("--format", choices=FORMATS, default="swe-bench", type=format_name,
                   help="swe-bench: a swebench 5 task repository with a flat instances/<split>.jsonl (default); "
                        "swe-bench-json: one JSON array")
    p.add_argument("--out", default=None, help="folder (swe-bench) or file (swe-bench-json) to write (default: "
                                               ".homefield/export/<format>[/<split>.json])")
    p.add_argument("--split", default="test", help="split name (default: test)")
    p.add_argument("--dataset", default=None, help="dataset name in sweb.yaml and task.yaml (default: the repository "
                                                   "name, e.g. llm-homefield)")
    p.add_argument("--repo-name", default=None,
                   help="owner/name for repo and instance_id (default: from the origin remote, else the folder)")


def eval_time_limit(task: Task, run_timeout_s: float) -> tuple[float, str]:
    """The time limit of ``task``'s exported ``eval.sh``: ``(s, why)`` of the bound homefield grades it with
    (:func:`~pytest_homefield.run.hang_bound.grading_bound`: ``run_timeout_s``, or the task's own bound when its
    parent hangs)."""
    bound = grading_bound(task, run_timeout_s)
    return bound.seconds, bound.why


def _origin_url(root: Path) -> str | None:
    import git  # heavy third-party import, deferred

    try:
        return str(git.Repo(root).remote("origin").url)
    except (ValueError, git.GitError):
        return None


def _declaration(root: Path) -> Any:
    def read(task: Task) -> tuple[Declaration, list[str], list[str]]:
        try:
            decl = declaration_at(root, task.parent)
        except Exception:  # noqa: BLE001 - an unknown commit: the Dockerfile installs nothing declared
            decl = Declaration({})
        env = task.env or {}
        extras = list(env.get("extras") or decl.default_extras())
        groups = list(env.get("groups") or decl.default_groups())
        return decl, extras, groups

    return read


def _undo(root: Path, test_globs: Sequence[str]) -> Any:
    """``lines(task)``: the undo step of the task's ``eval.sh`` (:func:`undo_lines`), from the file paths
    of its base tree (none when git cannot list them: the step then undoes by name only)."""
    def lines(task: Task) -> str:
        try:
            out = git("ls-tree", "-r", "-z", "--name-only", "--full-tree", task.parent, cwd=root)
        except Exception:  # noqa: BLE001 - an unknown commit
            out = ""
        return undo_lines(task, [p for p in out.split("\0") if p], test_globs, python_version(task)[0])

    return lines


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
    remote = _origin_url(root)
    if ns.repo_name:
        repo, guessed = ns.repo_name, None
    else:
        repo, guessed = repo_name(root, remote)
    try:
        settings = resolve_settings(root, {}, mode="run")
        specs, test_globs = settings.services, list(settings.test_globs)
        memory_mb: float | None = settings.max_test_memory_mb
        run_timeout_s = settings.run_timeout
    except ConfigError:
        specs, test_globs, memory_mb, run_timeout_s = (), [], TEST_MEMORY_MB, RUN_TIMEOUT_S
    rows = instances(tasks, repo, specs)
    dataset = ns.dataset or f"{repo.rsplit('/', 1)[-1]}-homefield"
    json_out = ns.format == "swe-bench-json"
    folder = None if json_out else (Path(ns.out) if ns.out else home.export / "swe-bench")
    out = Path(ns.out) if ns.out else home.export / "swe-bench-json" / f"{ns.split}.json"
    if json_out and out.is_dir():
        print(f"homefield export: --out {out} is a folder: give a file name", file=sys.stderr)
        return 2
    if folder is not None and folder.exists() and not folder.is_dir():
        print(f"homefield export: --out {folder} is a file: give a folder for the swebench 5 task repository",
              file=sys.stderr)
        return 2
    try:
        done = write_task_repo(folder, list(zip(tasks, rows, strict=True)), split=ns.split, dataset=dataset,
                               repo_url=clone_url(remote), declaration=_declaration(root),
                               undo=_undo(root, test_globs), memory_mb=memory_mb,
                               time_limit=lambda task: eval_time_limit(task, run_timeout_s))
    except OSError as exc:  # /proc, a read-only place, a full disk: one line
        print(f"homefield export: cannot write {folder}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for task_id, why in done.left_out.items():
        print(f"homefield export: left out task {task_id}: {why}", file=sys.stderr)
    if not done.instances:
        print("homefield export: no task left to export", file=sys.stderr)
        return 2
    if json_out:
        try:
            write_instances(done.instances, out, ns.format)
        except OSError as exc:  # /proc, a read-only place, a full disk: one line, nothing half-written
            print(f"homefield export: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"homefield export: wrote {plural(len(done.instances), 'SWE-bench instance')} of {repo} to {out}")
    else:
        assert folder is not None and done.flat is not None
        print(f"homefield export: wrote {plural(len(done.instances), 'SWE-bench instance')} of {repo} to {folder} "
              f"(swebench 5 task repository; flat instances: {done.flat})")
        print(f"  Check it: swebench dataset check {folder}")
    if guessed:
        print(f"  Note: {guessed}")
    if done.replaced:
        old, new = next(iter(done.replaced.items()))
        print(f"  Note: removed {len(done.replaced)} task folder(s) of an earlier export that held the same tasks "
              f"under another name ({old} -> {new}{', …' if len(done.replaced) > 1 else ''})")
    if not json_out and (remote is None or clone_url(remote) is None):  # the notes of the Dockerfiles: none in JSON
        upstream = clone_url(upstream_url(root, remote))
        print("  Note: no network remote to clone in the Dockerfiles: build with --build-arg REPO_URL=<url>"
              + (f" (perhaps {upstream}, if it holds every base commit)" if upstream else ""))
    if done.guessed_python and not json_out:
        n = len(done.guessed_python)
        print(f"  Note: {plural(n, 'task')} {'has' if n == 1 else 'have'} no recorded Python (mined without "
              f"{option('env')} uv): {'its' if n == 1 else 'their'} Dockerfile{'' if n == 1 else 's'} "
              f"use{'s' if n == 1 else ''} this interpreter's, {sys.version_info[0]}.{sys.version_info[1]}")
    for note in done.whitespace_notes():
        print(f"  Note: {note}")
    print("  These are your private tasks: keep the file out of public repositories and datasets, or the "
          "tasks stop measuring what models have not seen.")
    print(f"  Grade another harness's patches here: homefield run {option('agent', 'cli')} preds:PREDICTIONS_FILE")
    if any(t.services for t in tasks):
        print("  Some tasks need services (their instances' homefield_services note says which): a SWE-bench "
              "image must start them before the tests.")
    return 0
