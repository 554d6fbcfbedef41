"""Mining glue that knows nothing about pytest: freeze candidates, verify one, build task records,
merge them into ``tasks.jsonl`` (docs/contracts.md §4, §6, §7), and :class:`MineSession`, one
process's view of a mining session.

The controller makes a :class:`MineSession` with :meth:`MineSession.start`: a new
``.homefield/mine/<mine_id>/`` folder and the frozen ``candidates.jsonl`` / ``scan.jsonl``. Each
xdist worker rebuilds it with :meth:`MineSession.join` from :meth:`MineSession.workerinput`.
:meth:`MineSession.verify` checks one candidate and appends its verification record;
:meth:`MineSession.finish` merges the kept tasks into ``tasks.jsonl`` (controller only) and gives
the summary lines. :mod:`pytest_homefield.mine.mine_plugin` only translates for pytest."""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pytest_homefield.envs.builder import EnvBuildError, Environment
from pytest_homefield.envs.stage import commit_env
from pytest_homefield.errors import RecordError, ScanError
from pytest_homefield.layout import (
    HomefieldDir,
    candidates_path,
    partial_mine_note,
    read_meta,
    results_path,
    reused_path,
    scan_path,
    services_dir,
    write_meta,
)
from pytest_homefield.mine.bounds import (
    INTERRUPTED,
    NOT_VERIFIED,
    SETUP_BROKEN,
    STOP_AFTER_TASKS,
    TIME_BUDGET,
    FailFast,
    Stop,
    budget_detail,
    flag_in,
    in_flight_line,
    setup_broken_stop,
    stop_lines,
    stop_meta,
    with_task_bound,
)
from pytest_homefield.mine.compiled import build_recipe, own_compiled_module
from pytest_homefield.mine.cost_order import bytes_of_tests
from pytest_homefield.mine.message_score import message_fields
from pytest_homefield.mine.redgreen import (
    VERIFY_VERSION,
    DeadlineReached,
    diff_lines,
    make_gold_patch,
    make_test_patch,
    own_top_levels,
    root_commits,
    verify_candidate,
)
from pytest_homefield.mine.reuse import (ReuseIndex, earlier_settled, recorded_inputs, reused_record,
                                        reverified_line, verify_inputs, verify_key)
from pytest_homefield.mine.run_journal import RUN_KEY, RunJournal
from pytest_homefield.mine.scan import TOO_LARGE, ScanOptions, ScanResult, format_scan, scan, shallow_note
from pytest_homefield.mine.setup_help import install_hint, module_file
from pytest_homefield.mine.summary import (
    collection_errors_line,
    compiled_changes_line,
    deselected_line,
    drop_summary,
    dropped_line,
    env_summary,
    failing_with_reference_line,
    missing_modules_line,
    network_line,
    service_lines,
    setup_failed_line,
    setup_hint,
    skipped_line,
    vague_line,
)
from pytest_homefield.paths import runnable_tests
from pytest_homefield.records import Task, load_tasks, one_line
from pytest_homefield.sandbox.fingerprint import env_description, env_fingerprint, other_python_note, python_of
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.proccap import load_per_cpu
from pytest_homefield.sandbox.twin_runs import RUNS_KEY
from pytest_homefield.settings import Settings, network_of, option, parse_duration
from pytest_homefield.shard import SPLIT, parse_shard
from pytest_homefield.store import (
    MAX_LINE_BYTES,
    FolderLock,
    JsonlTail,
    dumps,
    own_text,
    read_jsonl,
    write_atomic,
    write_jsonl_atomic,
)
from pytest_homefield.terminal.progress import plural
from pytest_homefield.transport import Message, append_message

__all__ = [
    "scan_options",
    "freeze_candidates",
    "verify_and_record",
    "fit_record",
    "merge_tasks",
    "MergedTasks",
    "ENVIRONMENT_DROPS",
    "environment_drop",
    "backup_path",
    "dropped_tasks_line",
    "removed_lines",
    "candidates_digest",
    "drop_summary",
    "dropped_line",
    "setup_hint",
    "missing_modules_line",
    "network_line",
    "service_lines",
    "MineSession",
    "Verdict",
    "MAX_TASKS_REACHED",
    "env_summary",
    "other_python_note",  # sandbox/fingerprint.py's, used here and named here since nu35
    "python_of",
]


def scan_options(settings: Settings) -> ScanOptions:
    """The :class:`pytest_homefield.mine.scan.ScanOptions` for ``settings``."""
    return ScanOptions.from_settings(settings)


def candidates_digest(commits: Sequence[str]) -> str:
    """SHA-256 (first 16 hex digits) of the candidates' full commit shas in scan order, one a line:
    two mining sessions with the same digest examined the same candidates (same history, HEAD and
    scan filters)."""
    return hashlib.sha256("".join(f"{c}\n" for c in commits).encode()).hexdigest()[:16]


def freeze_candidates(settings: Settings, mine_dir: Path) -> ScanResult:
    """Scan history and write ``candidates.jsonl``, ``scan.jsonl`` (rejected commits with their
    reason) and ``meta.json`` into ``mine_dir``. With ``--shard K/N`` only this shard's candidates
    are frozen (split by task id, ``commit[:12]``, as :class:`pytest_homefield.shard.Shard` splits a
    run). ``meta.json`` (docs/contracts.md §4) says ``shard``, every candidate of the scan before the
    split (``candidate_ids`` in scan order, ``candidates_digest``) and ``max_tasks``, so that shards can
    be merged (:mod:`pytest_homefield.mine.mine_shards`). Each frozen candidate carries its ``verify_key``
    (:func:`pytest_homefield.mine.reuse.verify_key`). Returns the :class:`ScanResult`; raises
    :class:`pytest_homefield.errors.ScanError` when history cannot be scanned."""
    result = scan(settings.root, scan_options(settings))
    candidates = [c.to_dict() for c in result.candidates]
    meta = {"schema_version": 1, "kind": "mine", "mine_id": mine_dir.name,
            "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "shard": None, "candidate_ids": [c["commit"][:12] for c in candidates],
            "candidates_digest": candidates_digest([c["commit"] for c in candidates]),
            "max_tasks": settings.mine_max_tasks, "root_commits": root_commits(settings.root)}
    shard = parse_shard(settings.shard)
    if shard is not None:
        mine = shard.select(c["commit"][:12] for c in candidates)
        candidates = [c for c in candidates if c["commit"][:12] in mine]
        meta["shard"], meta["split"] = str(shard), SPLIT
    if settings.services or settings.test_network != "none":
        meta["services"] = [s.to_dict() for s in settings.services]
        meta["test_network"] = settings.test_network
    write_meta(mine_dir, meta)
    if candidates:
        sandbox, fp = test_sandbox(settings), env_fingerprint(python_of(settings.test_cmd))
        for c in candidates:
            inputs = verify_inputs(c, settings, runnable=_runnable(c, settings.test_globs), sandbox=sandbox,
                                   env_fingerprint=fp)
            c["verify_key"], c["verify_inputs"] = verify_key(inputs), recorded_inputs(inputs)
            # what a --time-budget orders by (cheapest first, mine/cost_order.py); not part of the key
            c["test_bytes"] = bytes_of_tests(settings.root, c["commit"], _runnable(c, settings.test_globs))
    write_jsonl_atomic(candidates_path(mine_dir), candidates)
    write_jsonl_atomic(
        scan_path(mine_dir),
        (
            {"commit": r.commit, "subject": r.subject, "reason": r.reason, "detail": r.detail,
             **({"same_as": r.same_as} if r.same_as else {})}
            for r in result.rejected
        ),
    )
    return result


def test_sandbox(settings: Settings) -> str:
    """``"bwrap"``, ``"landlock"`` or ``"none"`` for the test runs of mining (``settings.sandbox``,
    docs/contracts.md §7). Raises :class:`~pytest_homefield.sandbox.bwrap.BwrapUnavailable` for ``bwrap``
    or ``landlock`` where it does not work."""
    return SandboxChoice(getattr(settings, "sandbox", "auto")).for_tests()


def verify_and_record(candidate: dict[str, Any], settings: Settings, *, test_cmd: str | None = None,
                      setup_cmd: str | None = None, services_log: Path | None = None,
                      deadline: float | None = None) -> dict[str, Any]:
    """Verify one frozen candidate (a ``candidates.jsonl`` record) red→green and return its
    verification record for ``mine/<id>/results.jsonl``: ``commit``, ``id``, ``subject``,
    ``reason`` (``None`` = kept), ``detail``, counts, seconds, the candidate's ``verify_key``, and
    ``task`` (the full task record, docs/contracts.md §6) when kept.

    With ``settings.env == "uv"`` both states run in the commit's environment
    (:func:`pytest_homefield.envs.stage.commit_env`, built or reused); the record then has ``env``
    (``key``, ``built``, ``build_s``) and a build failure is ``setup_failed`` with uv's last line.
    The test runs get ``settings``' services and test-network ports (their logs in ``services_log``);
    a drop whose sandboxed runs could not connect records ``network_hint``. ``deadline``
    (``time.time()``, s; ``--time-budget``): no test run outlives it, and one it cuts raises
    :class:`~pytest_homefield.mine.redgreen.DeadlineReached` (nothing is recorded: not verified, but the runs
    that finished stay in the candidate's :class:`~pytest_homefield.mine.run_journal.RunJournal` under its
    ``verify_key``, read back by its next verification: the record's ``resumed_runs``; the journal is removed
    once the candidate has a verdict). A
    parent run stopped at the bound set by the commit's time (a hang the commit fixes) is the record's
    ``parent_bound`` and the task's ``verify.parent_bound``. The task's ``verify.load_per_cpu``: the machine's load per
    CPU (:func:`~pytest_homefield.sandbox.proccap.load_per_cpu`) while its runs were timed, the mean of the readings
    before and after them (``homefield plan`` scales ``commit_s`` to an idle machine by it)."""
    test_cmd = test_cmd or settings.test_cmd
    setup_cmd = setup_cmd if setup_cmd is not None else settings.setup_cmd
    commit, parent = candidate["commit"], candidate["parent"]
    test_files = list(candidate["test_files"])
    started = time.monotonic()
    environment: Environment | None = None
    base = {"commit": commit, "id": commit[:12], "subject": candidate["subject"]}
    key = str(candidate.get("verify_key") or "")
    journal = RunJournal(HomefieldDir(settings.root).mine_runs, key) if RUN_KEY.match(key) else None
    if journal is not None and settings.reverify:
        journal.remove()  # --reverify: every run made again (and kept again, should this one be stopped too)
    if settings.env == "uv":
        try:
            environment = commit_env(settings.root, commit, extras=settings.env_extras, groups=settings.env_groups,
                                     as_of=settings.env_as_of, timeout_s=max(settings.run_timeout, 1800))
        except EnvBuildError as exc:
            return {**base, "reason": "setup_failed", "detail": f"environment: {exc}", "FAIL_TO_PASS": 0,
                    "PASS_TO_PASS": 0, "excluded": {}, "seconds": round(time.monotonic() - started, 3),
                    "env": {"key": None, "built": False, "build_s": round(time.monotonic() - started, 3),
                            "error": str(exc)}}
    load_then = load_per_cpu()  # verify.load_per_cpu: the mean of this and the reading after the runs
    ver = verify_candidate(
        settings.root,
        commit=commit,
        parent=parent,
        test_files=test_files,
        runnable_tests=_runnable(candidate, settings.test_globs),
        test_cmd=test_cmd,
        setup_cmd=setup_cmd,
        stability_runs=settings.stability_runs,
        run_timeout_s=settings.run_timeout,
        test_timeout_s=settings.test_timeout,
        memory_mb=settings.max_test_memory_mb,
        write_mb=settings.max_test_write_mb,
        sandbox=test_sandbox(settings),
        env=environment.apply() if environment is not None else None,
        network=network_of(settings, services_log, reuse=True),  # the repository's own code only: instances reused
        deadline=deadline,
        journal=journal,
    )
    load = round((load_then + load_per_cpu()) / 2, 2)
    if journal is not None:
        journal.remove()  # a verdict: its runs are in the record now
    record: dict[str, Any] = {
        **base,
        "reason": ver.reason,
        "detail": ver.detail,
        "FAIL_TO_PASS": len(ver.FAIL_TO_PASS),
        "PASS_TO_PASS": len(ver.PASS_TO_PASS),
        "excluded": ver.excluded,
        "red_by_import_error": len(ver.red_by_import_error),
        "seconds": round(time.monotonic() - started, 3),
    }
    if ver.resumed_runs:
        record["resumed_runs"] = ver.resumed_runs
    for name in ("verify_key", "verify_inputs"):
        if candidate.get(name):
            record[name] = candidate[name]
    if ver.missing_modules:
        record["missing_modules"] = ver.missing_modules
    if ver.network_hint:
        record["network_hint"] = ver.network_hint
    if ver.parent_bound:
        record["parent_bound"] = ver.parent_bound
    if ver.skip_reasons:
        record["skip_reasons"] = ver.skip_reasons
    if ver.canaries is not None:
        record["canaries"] = ver.canaries
    if candidate.get("dependency_files"):
        record["dependency_files"] = list(candidate["dependency_files"])
    if environment is not None:
        record["env"] = {"key": environment.key, "built": environment.built, "build_s": environment.build_s}
    if ver.reason is None:
        test_patch = make_test_patch(settings.root, parent, commit, test_files)
        gold_patch = make_gold_patch(settings.root, parent, commit, test_files)
        task = Task(
            id=commit[:12],
            commit=commit,
            parent=parent,
            **message_fields(candidate, test_patch=test_patch, gold_patch=gold_patch,
                             threshold=settings.spec_threshold, hidden=list(ver.FAIL_TO_PASS),
                             test_files=test_files),
            test_files=test_files,
            test_patch=test_patch,
            gold_patch=gold_patch,
            FAIL_TO_PASS=list(ver.FAIL_TO_PASS),
            PASS_TO_PASS=list(ver.PASS_TO_PASS),
            excluded=dict(ver.excluded),
            test_cmd=test_cmd,
            setup_cmd=setup_cmd,
            env_fingerprint=_record_env(settings.root, str(environment.python) if environment is not None
                                        else python_of(test_cmd), [s.to_dict() for s in settings.services]),
            languages=_languages(candidate["source_files"]),
            diff_lines=diff_lines(gold_patch),
            verify={"stability_runs": settings.stability_runs, "parent_s": round(ver.parent_s, 3),
                    "commit_s": round(ver.commit_s, 3), "load_per_cpu": load,
                    **({"parent_bound": ver.parent_bound} if ver.parent_bound else {}),
                    **({"peak_mb": round(ver.peak_mb, 1)} if ver.peak_mb is not None else {}),
                    **({RUNS_KEY: ver.twin_runs} if ver.twin_runs else {})},
            # every FAIL_TO_PASS id only "failed" because its module could not be imported at the parent
            red_by_import_error=len(ver.red_by_import_error) == len(ver.FAIL_TO_PASS),
            env=environment.record() if environment is not None else None,
            services=[s.name for s in settings.services],
            canaries=ver.canaries,
            canary_sentinels=list(ver.canary_sentinels),
            canary_unprotected=list(ver.canary_unprotected),
            canary_order=dict(ver.canary_order) if ver.canaries is not None else None,
            canary_teardown=ver.canary_teardown,
            sealed_sites=list(ver.sealed_sites) if ver.sealed_sites is not None else None,
            sealed_rules=ver.sealed_rules if ver.sealed_sites is not None else None,
            mined_version=VERIFY_VERSION,
        )
        record["task"] = task.to_dict()
    return record


#: The fields a verification record set aside as ``too_large`` keeps (:func:`fit_record`).
_FIT_KEEPS = ("commit", "id", "subject", "FAIL_TO_PASS", "PASS_TO_PASS", "seconds", "verify_key", "verify_inputs",
              "reused_from")


def fit_record(record: dict[str, Any], limit: int | None = None) -> dict[str, Any]:
    """``record``, a candidate's verification record, when its JSON line is at most ``limit`` characters (``None``:
    the line cap of every reader, :data:`~pytest_homefield.store.MAX_LINE_BYTES`); else the candidate set aside, no
    task: ``reason`` ``too_large`` with a detail naming the size, and of ``record`` only its ``commit``, ``id``,
    ``subject``, counts, ``seconds``, ``verify_key`` and ``reused_from``. The scan sets aside a change whose patches
    and message alone are too long (filter 13); this is for what only verification adds (the FAIL_TO_PASS and
    PASS_TO_PASS ids, a degenerate diff the scan's bound let by): a task no line holds is never written (big60:
    ``results.jsonl`` and ``tasks.jsonl`` were then unreadable, or, with the writers' cap, the mine stopped at the
    record). Raises :class:`~pytest_homefield.errors.StoreError` for a record :func:`~pytest_homefield.store.dumps`
    refuses, as the writer would."""
    limit = MAX_LINE_BYTES if limit is None else limit
    chars = len(dumps(record))
    if chars <= limit:
        return record
    out = {k: record[k] for k in _FIT_KEEPS if k in record}
    out.update(reason=TOO_LARGE, excluded={},
               detail=f"its verification record is {chars:,} characters as one JSON line (the task's patches, test "
                      f"ids and message), over the {limit:,} a line may hold: no task")
    return out


def _record_env(root: Path, python: str | None, services: Sequence[Mapping[str, Any]] = ()) -> str:
    """The environment fingerprint (the interpreter's and the ``services``'); its description is kept in
    ``.homefield/envs/<fp>.json`` so that ``homefield verify`` can later say what drifted."""
    fp = env_fingerprint(python, services=services)
    path = HomefieldDir(root).env_file(fp)
    if not path.exists():
        write_atomic(path, json.dumps(env_description(python, services=services), indent=1, sort_keys=True))
    return fp


def _runnable(candidate: dict[str, Any], test_globs: Sequence[str] = ()) -> list[str]:
    """The runnable test modules the commit added or changed (the scan's ``runnable_tests``)."""
    if candidate.get("runnable_tests") is not None:
        return list(candidate["runnable_tests"])
    deleted = set(candidate.get("deleted_files") or [])
    return [p for p in runnable_tests(candidate["test_files"], test_globs) if p not in deleted]


_LANGS = {
    ".py": "python", ".pyi": "python", ".pyx": "python", ".js": "javascript", ".jsx": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust", ".java": "java",
    ".kt": "kotlin", ".scala": "scala", ".rb": "ruby", ".php": "php", ".c": "c", ".h": "c",
    ".cc": "c++", ".cpp": "c++", ".hpp": "c++", ".cs": "c#", ".swift": "swift", ".sh": "shell",
    ".po": "gettext", ".pot": "gettext",  # translation catalogues
}


def _languages(paths: Iterable[str]) -> list[str]:
    langs = {_LANGS.get(Path(p).suffix.lower(), "other") for p in paths}
    return sorted(langs) or ["other"]


class MergedTasks(NamedTuple):
    """What :func:`merge_tasks` wrote: the ``tasks`` now in ``tasks.jsonl`` (newest commit first), the ids of
    ``removed``, the tasks the file held that it removed as older copies of a newer task (sorted), ``dropped``, the
    tasks the file held that this session verified again and dropped (id → the drop reason), and ``backup``, the
    copy of the file as it was before a task it held was removed (``None``: none was, or no backup was asked)."""

    tasks: list[Task]
    removed: list[str]
    dropped: dict[str, str] = {}
    backup: Path | None = None


#: Drop reasons of a candidate that say nothing of its commit (the environment could not run its tests): a task
#: ``tasks.jsonl`` holds is never removed by one, nor by a drop naming modules the environment lacks
#: (:func:`environment_drop`; keep66, usr46: a typo in ``setup_cmd`` re-verified 11 tasks, dropped 6 as
#: ``setup_failed`` and rewrote ``tasks.jsonl`` with 5). ``timeout`` too: a task on file passed its runs within the
#: timeout before, and a busier machine (verify gradings ran 1.4-3.3x slower under load, plan66) is no verdict on it.
ENVIRONMENT_DROPS = ("setup_failed", "timeout")


def environment_drop(record: Mapping[str, Any]) -> bool:
    """Whether the verification ``record`` dropped its candidate for the environment, not for its commit: one of
    :data:`ENVIRONMENT_DROPS`, or a drop whose tests could not import modules (``missing_modules``)."""
    if record.get("task"):
        return False
    return record.get("reason") in ENVIRONMENT_DROPS or bool(record.get("missing_modules"))


def backup_path(tasks_path: Path, mine_id: str) -> Path:
    """``tasks.jsonl.before-<mine_id>`` beside ``tasks_path``: the file as it was before mine ``mine_id`` removed a
    task from it (docs/contracts.md §6)."""
    return tasks_path.with_name(f"{tasks_path.name}.before-{mine_id}")


def merge_tasks(tasks_path: Path, verified: Sequence[dict[str, Any]], *, max_tasks: int | None = None,
                duplicates: Mapping[str, str] | None = None, backup: Path | None = None) -> MergedTasks:
    """Rewrite ``tasks.jsonl`` atomically (raises :class:`~pytest_homefield.records.RecordError`, writing
    nothing, when a record already in it is not valid): tasks verified in this session replace or add records by id;
    a task the file held that this session verified again and dropped on a verdict on its commit (not one of
    :func:`environment_drop`, which keeps it as it was) is removed, and so are the ids of ``duplicates`` (task id →
    the id of the newer copy: commits this session's scan set aside as ``duplicate_change``, a copy of a newer
    commit's change, which a mine before that filter may have kept beside the newer one, one fix counted twice) whose
    newer copy is a task in the file written (gatk50: never before; a mine that verified not the newer copy, or
    dropped it, removed a good task and kept nothing of its fix); all other records are kept unchanged.
    Ordered newest commit first (``committed_at``); ``max_tasks`` keeps the newest N of this
    session's tasks (a task the file held that the cut leaves out stays as it was). A file whose records would not
    change is not written (byte-identical); when a task it held is removed, the file as it was is first copied to
    ``backup`` (when given). Returns what was written (:class:`MergedTasks`)."""
    load_tasks(tasks_path)  # RecordError for a bad record: never write back what did not validate
    before = list(read_jsonl(tasks_path))
    existing = {t["id"]: t for t in before}
    kept = sorted((r["task"] for r in verified if r.get("task")), key=lambda t: (t["committed_at"], t["id"]),
                  reverse=True)
    if max_tasks is not None:
        kept = kept[:max_tasks]
    dropped = {str(r["id"]): str(r.get("reason")) for r in verified
               if r["id"] in existing and not r.get("task") and not environment_drop(r)}
    merged = {i: t for i, t in existing.items() if i not in dropped}
    merged.update({t["id"]: t for t in kept})
    for old, new in (duplicates or {}).items():
        if new in merged and new != old:
            merged.pop(old, None)
    # ties of committed_at broken by id, so that the order never depends on which record came first
    ordered = sorted(merged.values(), key=lambda t: (t.get("committed_at", ""), t.get("id", "")), reverse=True)
    removed = sorted(existing.keys() & (duplicates or {}).keys() - merged.keys())  # their newer copies are tasks now
    wrote_backup: Path | None = None
    if ordered != before or not tasks_path.exists():
        if (dropped or removed) and backup is not None:
            write_atomic(backup, own_text(tasks_path))  # never through a link put in its place
            wrote_backup = backup
        write_jsonl_atomic(tasks_path, ordered)
    return MergedTasks([Task.from_dict(t) for t in ordered], removed, dropped, wrote_backup)


def scan_duplicates(scanned: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The older copies the scan set aside (``scan.jsonl`` records ``duplicate_change`` with ``same_as``) → the id of
    the newer copy each repeats, for :func:`merge_tasks` ``duplicates`` (one mine's and a merge of its shards': the
    shards share one frozen scan, link52); a ``scan.jsonl`` frozen before ``same_as`` was written gives none."""
    return {str(r["commit"])[:12]: str(r["same_as"])[:12] for r in scanned
            if r.get("reason") == "duplicate_change" and isinstance(r.get("same_as"), str) and r["same_as"]}


def removed_duplicates_line(held: Collection[str]) -> str:
    """The summary line of the tasks :func:`merge_tasks` removed as older copies of a newer task (``held``: ids)."""
    return (f"Removed from tasks.jsonl: {plural(len(held), 'task')} ({', '.join(sorted(held))}) that an earlier mine "
            "kept, whose change a newer commit repeats (duplicate change: one fix counted twice); the newer copy is a "
            "task in its place")


MAX_TASKS_REACHED = "max tasks reached"


@dataclass(frozen=True)
class Verdict:
    """One candidate's outcome: its verification ``record``, the ``rejected`` reason as shown when it
    was not kept (``"passes without the change (detail)"``; ``None`` = kept), whether it was
    ``verified`` at all (``False`` once ``--max-tasks`` tasks were kept), and whether its record was
    ``reused`` from an earlier session (no test run)."""

    record: dict[str, Any]
    rejected: str | None
    verified: bool = True
    reused: bool = False


class MineSession:
    """A mining session as seen by one process. ``scan_result`` is the controller's
    :class:`ScanResult` (``None`` in a worker)."""

    def __init__(self, settings: Settings, mine_dir: Path, scan_result: ScanResult | None = None) -> None:
        self.settings = settings
        self.home = HomefieldDir(settings.root)
        self.mine_dir = mine_dir
        self.candidates_path = candidates_path(mine_dir)
        self.results_path = results_path(mine_dir)
        self.scan_result = scan_result
        self._results = JsonlTail(self.results_path)
        self._kept: set[str] = set()
        #: why :meth:`finish` left ``tasks.jsonl`` as it was (a bad record, a failed write), else ``None``
        self.tasks_error: str | None = None
        self.reused_path = reused_path(mine_dir)
        self._reuse: dict[str, dict[str, Any]] | None = None
        #: the controller's mining lock, ``.homefield/.lock`` (:meth:`start`), let go after :meth:`finish`
        self.lock: FolderLock | None = None
        #: ``--time-budget``: no verification starts after this wall-clock time (``time.time()``, s)
        self.deadline: float | None = None
        self.started = time.monotonic()
        self._fail_fast = FailFast(0 if settings.no_fail_fast else settings.fail_fast)
        self._finished = JsonlTail(self.results_path)

    #: ``meta.json``'s ``stopped`` after :meth:`finish` (``None``: every candidate meant to was verified)
    stopped: dict[str, Any] | None = None
    #: tasks kept by this session, after :meth:`finish`
    kept: int = 0
    #: tasks ``tasks.jsonl`` holds after :meth:`finish` (this session's and earlier ones')
    n_tasks: int = 0
    #: candidates a ``-k`` / ``-m`` selected (those with a record), after a selective :meth:`finish`; else ``None``
    selected: int | None = None

    def _record_end(self, kept: int, selection: str = "") -> None:
        """Add ``stopped``, ``kept``, ``selection`` (the ``-k`` / ``-m`` that chose the candidates, ``null`` for
        every one: :func:`~pytest_homefield.layout.partial_mine` reads it) and ``finished_at`` to this session's
        ``meta.json`` (docs/contracts.md §4)."""
        try:
            meta = read_meta(self.mine_dir)
        except (RecordError, ValueError, OSError):
            return  # never hide the summary behind a bad meta.json
        meta.update(stopped=self.stopped, kept=kept, selection=selection or None,
                    finished_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
        write_meta(self.mine_dir, meta)

    @classmethod
    def start(cls, settings: Settings) -> MineSession:
        """The controller's session: a new mine folder with the scan's frozen candidates and, unless
        ``--reverify``, the earlier verification records of the same inputs in ``reused.jsonl``
        (:class:`~pytest_homefield.mine.reuse.ReuseIndex`). ``.homefield/.lock`` is taken for the
        session (:class:`~pytest_homefield.store.FolderLock`): raises
        :class:`~pytest_homefield.store.FolderLocked` (one line) when another session mines here.
        Checks first, before anything is made or
        spent, that ``tasks.jsonl`` holds only valid records (:class:`RecordError`,
        :class:`StoreError`) and that the repository has a commit (:class:`ScanError`). Raises
        :class:`ScanError` (or ``ValueError``, ``OSError``) when history cannot be scanned, leaving no
        mine folder behind."""
        load_tasks(settings.tasks_path)  # a bad tasks file is refused before anything is spent
        if not _has_commits(settings.root):
            raise ScanError(f"{settings.root} has no commits yet: nothing to mine")
        home = HomefieldDir(settings.root)
        # one mining session per repository at a time: both would merge into the same tasks.jsonl
        # .homefield/.lock, not a file beside the mine folders (which people and tools list)
        lock = FolderLock.take(home.path, "mining in this repository")  # FolderLocked: another session mines
        mine_dir = home.new_mine_dir()
        try:
            session = cls(settings, mine_dir, freeze_candidates(settings, mine_dir))
        except (ScanError, ValueError, OSError, KeyboardInterrupt):  # KeyboardInterrupt: a Ctrl-C or SIGTERM (mint46)
            shutil.rmtree(mine_dir, ignore_errors=True)  # leave no empty mine folder behind
            lock.release()
            raise
        session.lock = lock
        if settings.time_budget is not None:  # the budget is for verifying: it starts after the scan
            session.deadline = time.time() + parse_duration(settings.time_budget)
        session.started = time.monotonic()
        reuse: list[dict[str, Any]] = []
        if not settings.reverify:
            keys = [str(c.get("verify_key")) for c in session.candidates() if c.get("verify_key")]
            index = ReuseIndex.load(home, keys=keys, skip=mine_dir)
            reuse = [{**index.records[k], "reused_from": index.sources[k]} for k in dict.fromkeys(keys)
                     if k in index.records]
        write_jsonl_atomic(session.reused_path, reuse)
        return session

    @classmethod
    def join(cls, settings: Settings, workerinput: Mapping[str, Any]) -> MineSession:
        """A worker's session from the controller's :meth:`workerinput`: the mine folder of the same
        id in this worker's own ``.homefield/``, given the controller's frozen candidates when it
        has none (a remote host)."""
        mine_dir = HomefieldDir(settings.root).mine_dir(Path(workerinput["homefield_mine_dir"]).name)
        for key, path in (("homefield_candidates_text", candidates_path(mine_dir)),
                          ("homefield_reused_text", reused_path(mine_dir))):
            text = workerinput.get(key)
            if text is not None and not path.exists():
                HomefieldDir(settings.root).ensure()
                write_atomic(path, str(text))
        session = cls(settings, mine_dir)
        deadline = workerinput.get("homefield_mine_deadline")
        session.deadline = float(deadline) if deadline is not None else None
        return session

    @property
    def collect_path(self) -> Path:
        """``candidates.jsonl``: the file the mining items are collected from (docs/contracts.md §5)."""
        return self.candidates_path

    def close(self) -> None:
        """Nothing to free: a mining session keeps nothing of its own between items (the mode
        contract, :class:`pytest_homefield.modes.ModeSession`)."""

    def workerinput(self) -> dict[str, Any]:
        """What a worker needs to :meth:`join` (JSON-able): the mine folder and the texts of
        ``candidates.jsonl`` and ``reused.jsonl``."""
        return {"homefield_mine_dir": str(self.mine_dir),
                "homefield_candidates_text": self.candidates_path.read_text(encoding="utf-8"),
                "homefield_reused_text": self.reused_path.read_text(encoding="utf-8"),
                "homefield_mine_deadline": self.deadline}

    def candidates(self) -> Iterator[dict[str, Any]]:
        """The frozen candidates (``candidates.jsonl`` records), in file order."""
        return read_jsonl(self.candidates_path)

    @property
    def n_candidates(self) -> int:
        """How many candidates were frozen."""
        return sum(1 for _ in self.candidates())

    def kept_so_far(self) -> int:
        """Kept tasks so far: this process's, and those the controller recorded in ``results.jsonl``
        for every process; each line is read once."""
        self._kept.update(str(r.get("commit")) for r in self._results.new_records() if r.get("task"))
        return len(self._kept)

    def verify(self, candidate: dict[str, Any], name: str) -> Verdict:
        """Verify ``candidate`` (its item is ``name``); the record goes to ``results.jsonl`` through
        the controller (:meth:`messages`). A candidate whose ``verify_key`` has an earlier record
        (:meth:`reusable`) runs no test: that record is reused
        (:func:`~pytest_homefield.mine.reuse.reused_record`). Once ``--max-tasks`` tasks are kept, the
        record says ``reason: max_tasks`` without verifying; once ``--stop-after-tasks`` tasks are kept
        or after the ``--time-budget`` deadline, ``reason: not_verified`` with ``stop`` naming the bound
        (:mod:`pytest_homefield.mine.bounds`)."""
        limit = self.settings.mine_max_tasks
        if limit is not None and self.kept_so_far() >= limit:
            record = {"commit": candidate["commit"], "id": name, "subject": candidate["subject"], "reason": "max_tasks"}
            return Verdict(record, MAX_TASKS_REACHED, verified=False)
        prior = self.reusable().get(str(candidate.get("verify_key")))
        bound = self.bound_reached(fresh=prior is None)
        if bound is not None:
            detail = budget_detail(bound, self.settings)
            record = {"commit": candidate["commit"], "id": name, "subject": candidate["subject"],
                      "reason": NOT_VERIFIED, "stop": bound, "detail": detail}
            return Verdict(record, f"not verified ({detail})", verified=False)
        if prior is not None:
            record = reused_record(candidate, prior, source=str(prior.get("reused_from") or ""),
                                    threshold=self.settings.spec_threshold)
        else:
            try:
                record = verify_and_record(candidate, self.settings, services_log=services_dir(self.mine_dir),
                                           deadline=self.deadline)
            except DeadlineReached as exc:  # in flight at the budget: its runs were killed, not verified
                detail = f"{budget_detail(TIME_BUDGET, self.settings)} in {exc.where}"
                key = str(candidate.get("verify_key") or "")
                held = len(RunJournal(HomefieldDir(self.settings.root).mine_runs, key)) if RUN_KEY.match(key) else 0
                record = {"commit": candidate["commit"], "id": name, "subject": candidate["subject"],
                          "reason": NOT_VERIFIED, "stop": TIME_BUDGET, "detail": detail, "in_flight": True,
                          "runs_kept": held, "cut_in": exc.where}
                if exc.ran_s is not None:
                    record["ran_s"] = round(exc.ran_s, 1)
                return Verdict(record, f"not verified ({detail})", verified=False)
        record = fit_record(record)  # a record no line holds is never sent: too_large, no task (big60)
        if record.get("task"):
            self._kept.add(str(record["commit"]))
        if record["reason"] is None:
            return Verdict(record, None, reused=prior is not None)
        detail = f" ({record['detail']})" if record.get("detail") else ""
        return Verdict(record, f"{record['reason'].replace('_', ' ')}{detail}", reused=prior is not None)

    def bound_reached(self, *, fresh: bool = True) -> str | None:
        """:data:`~pytest_homefield.mine.bounds.STOP_AFTER_TASKS` once ``--stop-after-tasks`` tasks are
        kept, :data:`~pytest_homefield.mine.bounds.TIME_BUDGET` after the deadline for a ``fresh``
        verification (reusing an earlier record takes no time, so the budget never skips one), else ``None``."""
        n = self.settings.stop_after_tasks
        if n is not None and self.kept_so_far() >= n:
            return STOP_AFTER_TASKS
        if fresh and self.deadline is not None and time.time() >= self.deadline:
            return TIME_BUDGET
        return None

    def check_fail_fast(self) -> Stop | None:
        """Read the records finished since the last call (controller): the fail-fast
        :class:`~pytest_homefield.mine.bounds.Stop` when the first K all failed on the same error, and before it the
        :data:`~pytest_homefield.mine.bounds.SETUP_BROKEN` one when setup failed on a candidate ``tasks.jsonl`` holds
        as a task (:func:`~pytest_homefield.mine.bounds.setup_broken_stop`), whatever ``--fail-fast``."""
        stop = None
        for record in self._finished.new_records():
            fail_fast = self._fail_fast.add(record)
            if stop is None and record.get("reason") == "setup_failed" and str(record.get("id")) in self.held_ids:
                stop = setup_broken_stop(record, setup_cmd=self.settings.setup_cmd, test_cmd=self.settings.test_cmd)
            stop = stop or fail_fast
        return stop

    @functools.cached_property
    def held_ids(self) -> frozenset[str]:
        """The ids of the tasks ``tasks.jsonl`` held when this session first asked (before :meth:`finish`)."""
        return frozenset(str(t.get("id")) for t in read_jsonl(self.settings.tasks_path))

    def reusable(self) -> dict[str, dict[str, Any]]:
        """The earlier verification records this session reuses, by ``verify_key`` (``reused.jsonl``,
        read once)."""
        if self._reuse is None:
            self._reuse = {str(r["verify_key"]): r for r in read_jsonl(self.reused_path) if r.get("verify_key")}
        return self._reuse

    def messages(self, verdict: Verdict) -> list[Message]:
        """The message appending ``verdict``'s record to ``mine/<id>/results.jsonl``, written by the
        controller (:mod:`pytest_homefield.transport`)."""
        target = self.results_path.relative_to(self.home.path).as_posix()
        return [append_message(target, verdict.record)]

    def list_summary(self) -> list[str]:
        """``--list-candidates``: the scan's verbose listing, as lines (controller only)."""
        assert self.scan_result is not None, "the scan result is the controller's"
        return format_scan(self.scan_result, verbose=True).splitlines()

    def finish(self, *, verbose: bool = False, stop: Stop | None = None, command: str = "homefield mine",
               selection: str = "", collected: int | None = None, reached: int | None = None) -> list[str]:
        """Merge this session's kept tasks into ``tasks.jsonl`` (the last record per commit wins;
        ``--max-tasks`` keeps the newest) and return the summary lines; ``verbose`` adds a line per
        verified candidate. Controller only. A ``tasks.jsonl`` that cannot be merged (a bad record,
        a failed write) is left as it was: :attr:`tasks_error` says why and the lines name the
        verification records kept.

        ``stop``: why the session ended early (a Ctrl-C, fail-fast; a bound is read from the
        ``not_verified`` records): the first line then counts the candidates verified, the lines say
        how many were not and how to go on (``command``), and ``meta.json`` records it under ``stopped``
        (:func:`~pytest_homefield.mine.bounds.stop_meta`; :attr:`stopped` holds it too).

        ``selection``: the ``-k`` / ``-m`` that chose this mine's items (``"-k 'abc123'"``; ``""``: every frozen
        candidate): the first line then counts the candidates it selected (``collected``, or those with a record when
        more) apart from the frozen ones and says what ``tasks.jsonl`` holds (nu41: a ``-k`` mine of one dropped
        candidate said ``Mined 0 tasks from 18 candidates``, with 7 tasks on file); :attr:`selected` holds the count.
        ``collected``:
        the candidate items the selection kept (``None``: not known), the count's floor (ops43: after a Ctrl-C, those
        never started have no record, and a count of records missed them); ``reached``: how many of them started,
        said when fewer."""
        every = list(read_jsonl(self.results_path))
        records = [r for r in every if r.get("reason") not in ("max_tasks", NOT_VERIFIED)]
        verified = list({r["commit"]: r for r in records}.values())  # the last record per commit wins
        if stop is None or stop.why == INTERRUPTED:
            bound = next((r for r in every if r.get("reason") == NOT_VERIFIED), None)
            if bound is not None and stop is None:
                why = str(bound.get("stop") or TIME_BUDGET)
                stop = Stop(why, budget_detail(why, self.settings))
        n_max = len({r["commit"] for r in every if r.get("reason") == "max_tasks"} - {r["commit"] for r in verified})
        tasks_path = self.settings.tasks_path
        scanned = list(read_jsonl(scan_path(self.mine_dir)))
        duplicates = scan_duplicates(scanned)
        records_line = f"Verification records: {self.results_path.relative_to(self.settings.root)}"
        if stop is not None and stop.why == SETUP_BROKEN:  # the environment broke: tasks.jsonl is left as it was
            return self._broken_setup_end(stop, verified, command, records_line)
        try:
            merged = merge_tasks(tasks_path, verified, max_tasks=self.settings.mine_max_tasks,
                                 duplicates=duplicates, backup=backup_path(tasks_path, self.mine_dir.name))
        except (RecordError, OSError) as exc:  # nothing was written: tasks.jsonl is as it was
            self.tasks_error = str(exc)
            return [f"tasks.jsonl not updated: {exc}", records_line]
        tasks = merged.tasks
        kept = sum(1 for r in verified if r.get("task"))
        n_bound = self.settings.stop_after_tasks
        if stop is not None and n_bound and (stop.why == STOP_AFTER_TASKS or kept >= n_bound):
            # the same bound stops at once: raised, also when a Ctrl-C came after it was reached (nu43, simonw/llm:
            # Ctrl-C while the last candidate in flight finished named the same --stop-after-tasks 3 over 3 kept)
            command = with_task_bound(command, kept + n_bound)
        scan_reasons = [r["reason"] for r in scanned]
        n_cand = self.n_candidates
        examined = self.scan_result.examined if self.scan_result is not None else n_cand + len(scan_reasons)
        # a -k / -m mine's bounds and counts are over the candidates it selected (those with a record: a bound gives
        # every one a record; after a Ctrl-C, those never started have none: the items collected count them), not
        # over every frozen one
        pool = max(collected or 0, len({str(r.get("commit")) for r in every})) if selection else n_cand
        not_verified = pool - len(verified) - n_max
        now = {r["id"] for r in verified}
        partial = stop_lines(stop, n_candidates=pool, n_verified=len(verified), n_not_verified=not_verified,
                             kept=kept, command=command, earlier=sum(1 for t in tasks if t.id not in now),
                             reverify=self.settings.reverify,
                             setup_failed=sum(1 for r in verified if r.get("reason") == "setup_failed"),
                             resumable=[int(r.get("runs_kept") or 0) for r in every if r.get("in_flight")],
                             cheapest=self.settings.time_budget is not None and self.settings.mine_max_tasks is None)
        of = f"{len(verified)} of {n_cand}" if partial else f"{n_cand}"
        cut = in_flight_line(every, first=stop.why if stop is not None else None)
        where = tasks_path.relative_to(self.settings.root)
        if selection:  # -k / -m: this mine's verdicts are on its selected candidates, the file holds others too
            self.selected = pool
            some = f"{len(verified)} of {pool} candidates" if partial else plural(pool, 'candidate')
            short = (f"{reached} reached, {pool - reached} never started; " if reached is not None and reached < pool
                     else "")
            first = (f"Mined {plural(kept, 'task')} from {some} selected by {selection} "
                     f"({short}of {plural(n_cand, 'candidate')} frozen; {plural(examined, 'commit')} examined); "
                     f"{where} holds {plural(len(tasks), 'task')}")
        else:
            first = (f"Mined {plural(kept, 'task')} from {of} candidate{'s' if n_cand != 1 else ''} "
                     f"({plural(examined, 'commit')} examined); {plural(len(tasks), 'task')} in {where}")
        lines = [first, *partial[:1], *([cut] if cut and partial else []), *partial[1:]]
        self.n_tasks = len(tasks)
        self.kept = kept
        self.stopped = stop_meta(stop, n_candidates=pool, n_not_verified=not_verified, command=command,
                                 elapsed_s=time.monotonic() - self.started,
                                 in_flight=[str(r["id"]) for r in every if r.get("in_flight")])
        self._record_end(kept, selection)
        if selection and not partial:  # its selection done, the set as an earlier mine that stopped left it (nu54)
            earlier = partial_mine_note(self.home)
            if earlier:
                lines.append(earlier)
        lines.append(candidates_line(verified, self.candidates(), self.reusable(), tasks,
                                     reverify=flag_in(command, 'reverify')))
        again = reverified_line(verified, earlier_settled(self.home, commits=[str(r["commit"]) for r in verified],
                                                          skip=self.mine_dir))
        if again:
            lines.append(again)
        dropped = dropped_line([r.get("reason") for r in verified], scan_reasons)
        if dropped:
            lines.append(f"Dropped: {dropped}")
        lines += removed_lines(merged, self.settings.root)
        vague = vague_line(tasks, self.settings.spec_threshold)
        if vague:
            lines.append(vague)
        compiled = functools.partial(own_compiled_module, self.settings.root)
        recipe = functools.partial(build_recipe, self.settings.root)
        locate = functools.partial(module_file, self.settings.root)
        dates = {str(c["commit"])[:12]: str(c.get("committed_at") or "") for c in self.candidates()}
        hint = setup_hint(verified, locate=locate, compiled=compiled, recipe=recipe, dates=dates)
        if hint:
            lines.append(hint)
        broken = collection_errors_line(verified, locate=locate, compiled=compiled, recipe=recipe, dates=dates)
        if broken:
            lines.append(broken)
        lines += [line for line in (compiled_changes_line(verified), deselected_line(verified)) if line]
        net = network_line(verified)
        if net:
            lines.append(net)
        lines += service_lines(verified)
        failed = setup_failed_line(verified, locate=locate)
        if failed:
            lines.append(failed)
        python = None if self.settings.env == "uv" else python_of(self.settings.test_cmd)
        skipped = skipped_line(verified, python)
        if skipped:
            lines.append(skipped)
        failing = failing_with_reference_line(verified)
        if failing:
            lines.append(failing)
        missing = missing_modules_line(verified, python, own=own_top_levels(self.settings.root, "HEAD"),
                                       install=lambda lacked: install_hint(self.settings.root, python, lacked))
        if missing:
            lines.append(missing)
        envs = env_summary(verified)
        if envs:
            lines.append(envs[0].upper() + envs[1:])
        shallow = self.scan_result.shallow_skipped if self.scan_result is not None else 0
        if shallow:
            lines.append(f"Note: {shallow_note(shallow)}")
        newest = self.scan_result.newest_authored if self.scan_result is not None else None
        if newest:
            lines.append(f"Note: no commit in the date window: the newest commit was authored on {newest[:10]}, "
                         f"before {option('since')} {self.settings.since} (give an earlier date)")
        if verbose:  # in the scan's order, newest first, as --list-candidates lists them (not as they finished)
            rank = {str(c.get("commit")): k for k, c in enumerate(self.candidates())}
            for r in sorted(verified, key=lambda r: rank.get(str(r.get("commit")), len(rank))):
                status = "task" if r.get("task") else (r.get("reason") or "?").replace("_", " ")
                how = "reused" if r.get("reused_from") else "verified"
                lines.append(f"  {r['id']}  {status:<24} F2P={r.get('FAIL_TO_PASS', 0):<3} {how:<8} "
                             f"{one_line(str(r['subject']), 70)}")
        lines.append(records_line)
        shard = parse_shard(self.settings.shard)
        if shard is not None:
            lines.append(f"Shard {shard}: {n_cand} of the scan's candidates; merge the shards' mine folders with: "
                         f"homefield mine --merge DIR… (this one: {self.mine_dir.relative_to(self.settings.root)})")
        return lines

    def _broken_setup_end(self, stop: Stop, verified: Sequence[dict[str, Any]], command: str,
                          records_line: str) -> list[str]:
        """The end of a mine :data:`~pytest_homefield.mine.bounds.SETUP_BROKEN` stopped: ``tasks.jsonl`` not
        touched (byte-identical; this session's tasks are in its records, reused by the next mine), ``meta.json``
        ``stopped``, and the lines: the failure in one line, then the records."""
        held = len(self.held_ids)
        pool = self.n_candidates
        self.n_tasks, self.kept = held, 0
        self.stopped = stop_meta(stop, n_candidates=pool, n_not_verified=pool - len(verified), command=command,
                                 elapsed_s=time.monotonic() - self.started)
        self._record_end(0)
        return [f"Stopped: {stop.detail}; tasks.jsonl is unchanged ({plural(held, 'task')}): fix the environment "
                f"and mine again ({command})", records_line]


def dropped_tasks_line(dropped: Mapping[str, str]) -> str:
    """The summary line of the tasks :func:`merge_tasks` removed as this mine verified them again and dropped them
    (``dropped``: id → drop reason)."""
    said = ", ".join(f"{i}: {r.replace('_', ' ')}" for i, r in sorted(dropped.items()))
    return (f"Removed from tasks.jsonl: {plural(len(dropped), 'task')} that this mine verified again and dropped "
            f"({said})")


def removed_lines(merged: MergedTasks, root: Path) -> list[str]:
    """The summary lines of the tasks :func:`merge_tasks` removed from ``tasks.jsonl`` (older copies of a newer
    task, tasks dropped on a verdict) and of the backup it kept (its path relative to ``root``); ``[]`` for none."""
    lines = [removed_duplicates_line(merged.removed)] if merged.removed else []
    if merged.dropped:
        lines.append(dropped_tasks_line(merged.dropped))
    if merged.backup is not None:
        lines.append(f"tasks.jsonl as it was before: {merged.backup.relative_to(root)}")
    return lines


def candidates_line(verified: Sequence[dict[str, Any]], candidates: Iterable[dict[str, Any]],
                    reusable: Mapping[str, Any], tasks: Sequence[Task], *, reverify: str | None = None) -> str:
    """``'Candidates: reused 2, verified 3 (…)'``: of this mine's ``verified`` records, those it reused from an
    earlier session and those it verified now; and, when a bound or a ``-k`` left candidates unreached whose
    earlier records (``reusable``, by ``verify_key``) this mine would have reused, how many, and how many of them
    are tasks ``tasks.jsonl`` (``tasks``) keeps: "reused" counts what this mine reached, never what earlier mines
    left on file (nu41, more-itertools: ``Candidates: reused 0`` beside ``2 kept from earlier mines``, the 2 kept
    by a ``--time-budget`` mine that verified cheapest first, unreached by a newest-first ``--stop-after-tasks``
    one). ``reverify``: the flag as the command spells it (default: as the front end in use does)."""
    n_reused = sum(1 for r in verified if r.get("reused_from"))
    line = f"Candidates: reused {n_reused}, verified {len(verified) - n_reused}"
    if n_reused:
        line += f" (earlier verification records of the same inputs; {reverify or option('reverify')} runs them again)"
    reached = {str(r.get("commit")) for r in verified}
    unreached = {str(c["commit"])[:12] for c in candidates
                 if str(c.get("commit")) not in reached and str(c.get("verify_key")) in reusable}
    if unreached:
        held = sum(1 for t in tasks if t.id in unreached)
        of_them = f" ({held} of them {'a task' if held == 1 else 'tasks'} in tasks.jsonl)" if held else ""
        line += (f"; {plural(len(unreached), 'candidate')} this mine did not reach "
                 f"{'has an earlier record' if len(unreached) == 1 else 'have earlier records'}{of_them}, "
                 "reused by a mine that reaches them")
    return line


def _has_commits(root: Path) -> bool:
    """Whether ``HEAD`` of the repository at ``root`` names a commit."""
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd=root,
                          capture_output=True)
    return proc.returncode == 0
