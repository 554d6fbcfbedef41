"""``homefield mine --merge DIR…``: the mine folders of ``homefield mine --shard K/N`` sessions (one
per machine) combined into one ``tasks.jsonl``, equal to what one unsharded mining session of the
same candidates writes (docs/contracts.md §4).

Each DIR is a mine folder (``.homefield/mine/<mine_id>/``, the CI artifact), or a ``.homefield/``
folder or a repository holding one, whose newest mine folder is taken. A shard's ``tasks.jsonl``
alone is not enough: it says neither which shard it is nor which candidates were dropped.

Checks, each a one-line :class:`~pytest_homefield.errors.ShardMergeError`: every folder has the
``meta.json`` of a mining session (older sessions lack one: mine them again); all were frozen from
the same candidates (``candidates_digest``: the same history, HEAD and scan filters); all are shards
of one split; a candidate verified in two folders must have the same verification result (kept or
the same drop reason, the same FAIL_TO_PASS / PASS_TO_PASS and exclusions; seconds and the
verification timings aside): it is then counted once. A split with shards missing is refused
(``incomplete: shard 2/3 missing``) and nothing is written: a partial ``tasks.jsonl`` would quietly
become a smaller benchmark. A shard whose folders lack a verdict on candidates of its own share (a bound
stopped it, it was killed, a record was removed) is merged and said: ``incomplete: shard K/N left out …``
(:func:`left_out_candidates`), in the summary and the new folder's ``meta.json`` ``incomplete``.

What is written: a new mine folder (``meta.json`` with ``merged_from``, ``candidates.jsonl`` in scan
order, ``results.jsonl`` one record per candidate in scan order, ``scan.jsonl`` from the first folder),
the shards' ``envs/<fingerprint>.json`` files this ``.homefield/`` lacks (when a DIR is inside a
``.homefield/``; regular files that hold a JSON object, read without following a link), and
``tasks.jsonl`` through :func:`pytest_homefield.mine.pipeline.merge_tasks` (tasks of the merged
candidates replace or add records by id, tasks dropped on a verdict are removed (the file as it was kept beside it,
``tasks.jsonl.before-<mine id>``; a drop for the environment keeps the task), and so are the older copies the scan
set aside as ``duplicate_change`` once their newer copy is a task, as one mine does, link52; others are kept;
newest commit first, ties by id; the shards' ``--max-tasks`` keeps the newest N of the merged tasks, which are the
N an unsharded session keeps, since each of them is among the newest N of its own shard).
No pytest here.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.errors import RecordError, ShardMergeError
from pytest_homefield.layout import HomefieldDir, candidates_path, read_meta, results_path, scan_path, write_meta
from pytest_homefield.mine.bounds import NOT_VERIFIED
from pytest_homefield.mine.pipeline import (
    MergedTasks,
    backup_path,
    dropped_line,
    merge_tasks,
    removed_lines,
    scan_duplicates,
)
from pytest_homefield.mine.redgreen import root_commits
from pytest_homefield.records import Task, check_meta, load_tasks
from pytest_homefield.sandbox import nofollow
from pytest_homefield.settings_table import option
from pytest_homefield.shard import Shard, missing_shards, old_split_refusal, parse_shard
from pytest_homefield.store import read_jsonl, read_jsonl_lines, write_atomic, write_jsonl_atomic
from pytest_homefield.terminal.progress import plural

__all__ = ["MineMerge", "find_mine_folder", "merge_mines", "comparable", "left_out_candidates"]

WHAT = "homefield mine --merge"

#: Fields of a verification record that measure time, not the result: left out when two shards'
#: records of one candidate are compared.
TIMING = ("seconds",)
TASK_TIMING = ("verify",)


@dataclass
class MineMerge:
    """What :func:`merge_mines` did: the new mine folder, the tasks now in ``tasks.jsonl``, the
    verification records merged (scan order), the candidates verified in two folders with the same
    result (``reconciled``), and the folders it read (``sources``: mine folder, shard label)."""

    mine_dir: Path
    tasks: list[Task]
    records: list[dict[str, Any]]
    reconciled: int = 0
    sources: list[tuple[Path, str | None]] = field(default_factory=list)
    #: ``incomplete: shard K/N left out …`` per shard with candidates of its share none of its folders verified
    #: (:func:`left_out_candidates`); also the new folder's ``meta.json`` ``incomplete``
    incomplete: list[str] = field(default_factory=list)
    #: what the merge into ``tasks.jsonl`` removed and backed up (:class:`~pytest_homefield.mine.pipeline.MergedTasks`:
    #: ``removed``, older copies of a newer task, the scan's ``same_as``; ``dropped``, tasks dropped on a verdict)
    merged: MergedTasks | None = None

    @property
    def removed(self) -> list[str]:
        """The ids ``tasks.jsonl`` held that the merge removed as older copies of a newer task."""
        return self.merged.removed if self.merged is not None else []

    def lines(self, root: Path) -> list[str]:
        """The summary as printed."""
        kept = sum(1 for r in self.records if r.get("task"))
        shards = ", ".join(f"{s}" if s else "unsharded" for _, s in self.sources)
        out = [f"Merged {plural(len(self.sources), 'mine folder')} ({shards}): {plural(kept, 'task')} from "
               f"{plural(len(self.records), 'candidate')}; {plural(len(self.tasks), 'task')} in "
               f"{HomefieldDir(root).tasks.relative_to(root)}"]
        out += self.incomplete
        scan_reasons = [r.get("reason") for r in read_jsonl(scan_path(self.mine_dir))]
        dropped = dropped_line([r.get("reason") for r in self.records], scan_reasons)
        if dropped:
            out.append(f"Dropped: {dropped}")
        if self.merged is not None:
            out += removed_lines(self.merged, root)
        if self.reconciled:
            out.append(f"{self.reconciled} candidate(s) verified in two folders with the same result, counted once")
        out.append(f"Verification records: {results_path(self.mine_dir).relative_to(root)}")
        return out


def find_mine_folder(path: Path) -> Path:
    """The mine folder ``path`` names: itself when it holds ``candidates.jsonl``, else the newest mine
    folder under ``path/mine`` or ``path/.homefield/mine``. Raises :class:`ShardMergeError` when
    there is none."""
    if candidates_path(path).is_file():
        return path
    for mine in (path / "mine", path / ".homefield" / "mine"):
        dirs = sorted(d for d in mine.iterdir() if candidates_path(d).is_file()) if mine.is_dir() else []
        if dirs:
            return dirs[-1]  # mine ids are UTC timestamps: the last name is the newest session
    raise ShardMergeError(f"homefield mine --merge: {path} is not a mine folder (no candidates.jsonl) and holds "
                          "no .homefield/mine/ folder")


def comparable(record: Mapping[str, Any]) -> dict[str, Any]:
    """A verification record without its timings (:data:`TIMING`, and the task's ``verify``), for
    comparing two shards' records of one candidate."""
    out = {k: v for k, v in record.items() if k not in TIMING}
    if isinstance(out.get("task"), dict):
        out["task"] = {k: v for k, v in out["task"].items() if k not in TASK_TIMING}
    return out


def _same_repository(root: Path, folders: Sequence[Path], metas: Sequence[Mapping[str, Any]]) -> None:
    """Raise :class:`ShardMergeError` when a folder's ``meta.json`` ``root_commits`` share none with the
    repository at ``root``: it was mined from another repository, whose tasks would fail here as
    ``infra``. Folders mined before ``root_commits`` was recorded are not checked."""
    here: list[str] | None = None
    for d, m in zip(folders, metas, strict=True):
        theirs = m.get("root_commits")
        if not isinstance(theirs, list) or not theirs:
            continue
        here = root_commits(root) if here is None else here
        if here and not set(here) & {str(c) for c in theirs}:
            raise ShardMergeError(f"homefield mine --merge: {d} was mined from another repository (root commit "
                                  f"{str(theirs[0])[:12]}, here {here[0][:12]}): merge it into that repository")


def _verified(mine_dir: Path) -> dict[str, dict[str, Any]]:
    """The folder's verification records by candidate id; the last record per candidate wins; records
    of candidates never verified (``--max-tasks`` reached) are left out, as the session's own end does."""
    out: dict[str, dict[str, Any]] = {}
    for r in read_jsonl(results_path(mine_dir)):
        if r.get("reason") not in ("max_tasks", NOT_VERIFIED) and r.get("id"):
            out[str(r["id"])] = r
    return out


#: The types :func:`merge_mines` relies on in a mine folder's ``meta.json``.
_META_TYPES = {"candidates_digest": "str", "candidate_ids": "list[str]"}
_OPTIONAL_META_TYPES = {"max_tasks": "int | None", "shard": "str | None"}
#: An ``envs/<fingerprint>.json`` larger than this is not an environment description.
ENV_FILE_LIMIT = 4 << 20


def _check_meta(d: Path, meta: Mapping[str, Any]) -> None:
    """Raise :class:`ShardMergeError` (one line) unless ``meta`` has the fields the merge reads, of their types."""
    fields = {**_META_TYPES, **{k: v for k, v in _OPTIONAL_META_TYPES.items() if k in meta}}
    try:
        check_meta(dict(meta), fields)
    except RecordError as exc:
        raise ShardMergeError(f"{WHAT}: {d / 'meta.json'}: {exc}; the folder is damaged") from None


def _env_files(mine_dir: Path) -> dict[str, str]:
    """The ``envs/<fingerprint>.json`` files of the ``.homefield/`` holding ``mine_dir`` (none when it is
    not in one), by fingerprint: regular files read without following a link (a link in a crafted
    artifact would copy any readable file into this ``.homefield/``), each a JSON object. Raises
    :class:`ShardMergeError` (one line) for any other."""
    if mine_dir.parent.name != "mine":
        return {}
    home = mine_dir.parent.parent
    try:
        names = sorted(e.name for e in os.scandir(home / "envs") if e.name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise ShardMergeError(f"{WHAT}: {home / 'envs'}: cannot list: {exc.strerror or exc}") from None
    out: dict[str, str] = {}
    for name in names:
        try:
            text = nofollow.read_bytes(home, f"envs/{name}", limit=ENV_FILE_LIMIT).decode("utf-8")
            if not isinstance(json.loads(text), dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            why = (exc.strerror or exc) if isinstance(exc, OSError) else exc
            raise ShardMergeError(f"{WHAT}: {home / 'envs' / name}: not an environment description "
                                  f"({why}); the folder is damaged") from None
        out[name[:-len(".json")]] = text
    return out


def left_out_candidates(folders: Sequence[Path], metas: Sequence[Mapping[str, Any]],
                        verified: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``incomplete: shard K/N left out M candidate(s) of its share of the scan (ID, …): …`` for each shard among
    the mine folders (``folders``, their ``metas``; folders that are no shard are left out) whose share of the
    scan (:meth:`~pytest_homefield.shard.Shard.select` of ``candidate_ids``: by each id's sha256, nothing the
    shard states) holds candidates no folder verified (``verified``: the merged records by candidate id) and no
    folder of that shard cut at ``--max-tasks``: a ``max_tasks`` record counts only where that shard's folders
    kept its ``--max-tasks`` N tasks (ops40: before, a shard's folder lacking candidates of its share, or their
    records, was merged as if the shard had verified them all). The line says why, as far as the folder tells:
    ``not verified at a bound`` (its ``not_verified`` records: ``--time-budget``, ``--stop-after-tasks``),
    ``no verification record`` (interrupted, killed, or a record removed), ``cut at --max-tasks before its N were
    kept``."""
    shares: dict[Shard, set[str]] = {}
    bounded: dict[Shard, set[str]] = {}
    cut: dict[Shard, set[str]] = {}
    for d, m in zip(folders, metas, strict=True):
        label = parse_shard(m.get("shard"), flag=f"{d}: shard")
        if label is None:
            continue
        shares.setdefault(label, set()).update(label.select(str(i) for i in m["candidate_ids"]))
        for r in read_jsonl(results_path(d)):
            if r.get("reason") == NOT_VERIFIED:
                bounded.setdefault(label, set()).add(str(r.get("id")))
            elif r.get("reason") == "max_tasks":
                cut.setdefault(label, set()).add(str(r.get("id")))
    order = {str(c): n for n, c in enumerate(metas[0]["candidate_ids"])} if metas else {}
    limit = metas[0].get("max_tasks") if metas else None
    out = []
    for shard in sorted(shares, key=lambda s: s.index):
        share = shares[shard]
        kept = sum(1 for c in share if c in verified and verified[c].get("task"))
        fair_cut = cut.get(shard, set()) if isinstance(limit, int) and kept >= limit else set()
        gone = sorted(share - set(verified) - fair_cut, key=lambda c: order.get(c, len(order)))
        if not gone:
            continue
        why = Counter("not verified at a bound" if c in bounded.get(shard, ()) else
                      f"cut at {option('max-tasks')} before its N were kept" if c in cut.get(shard, ()) else
                      "no verification record" for c in gone)
        shown = ", ".join(gone[:5]) + (" …" if len(gone) > 5 else "")
        reasons = ", ".join(f"{why[w]} {w}" for w in sorted(why, key=lambda w: -why[w]))
        out.append(f"incomplete: shard {shard} left out {plural(len(gone), 'candidate')} of its share of the scan "
                   f"({shown}): {reasons}; mine that shard again ({option('resume')}) and merge again")
    return out


def _status(record: Mapping[str, Any]) -> str:
    return "kept" if record.get("task") else str(record.get("reason") or "?").replace("_", " ")


def merge_mines(sources: Sequence[Path], root: Path, *, now: str | None = None) -> MineMerge:
    """Merge the mine folders ``sources`` (module docstring) into ``root``'s ``.homefield/``: a new
    mine folder and ``tasks.jsonl``. ``now``: ``created_at`` of the new folder (ISO 8601, UTC;
    default the current second). Raises :class:`ShardMergeError` (one line) before anything is
    written."""
    if not sources:
        raise ShardMergeError("homefield mine --merge: give the mine folders of the shards to merge")
    folders = [find_mine_folder(Path(s)) for s in sources]
    metas = []
    for d in folders:
        try:
            meta = read_meta(d)
        except ValueError as exc:
            raise ShardMergeError(f"homefield mine --merge: {exc}") from None
        if meta.get("kind") != "mine" or "candidates_digest" not in meta:
            raise ShardMergeError(f"homefield mine --merge: {d} has no mining meta.json (mined before shards were "
                                  "recorded?): mine it again")
        _check_meta(d, meta)
        metas.append(meta)
    first = metas[0]
    for d, m in zip(folders, metas, strict=True):
        if m["candidates_digest"] != first["candidates_digest"]:
            raise ShardMergeError(
                f"homefield mine --merge: {folders[0]} and {d} were frozen from different candidates (digest "
                f"{first['candidates_digest']} vs {m['candidates_digest']}: another HEAD, {option('since')} or "
                "filter); merge each apart")
        if m.get("max_tasks") != first.get("max_tasks"):
            raise ShardMergeError(f"homefield mine --merge: {folders[0]} and {d} were mined with different "
                                  f"{option('max-tasks')} ({first.get('max_tasks')} vs {m.get('max_tasks')})")
        if m["candidate_ids"] != first["candidate_ids"]:  # the split; the digest is over the commits, not these
            raise ShardMergeError(f"homefield mine --merge: {folders[0]} and {d} record different scans "
                                  "(meta.json candidate_ids); merge each apart")
    for d, m in zip(folders, metas, strict=True):
        old = old_split_refusal(str(d), m)
        if old is not None:  # shard38: its share rests on the split it states
            raise ShardMergeError(f"homefield mine --merge: {old}")
    labels = [(d.name, m.get("shard")) for d, m in zip(folders, metas, strict=True)]
    missing = missing_shards(labels, what="homefield mine --merge")
    if missing:
        raise ShardMergeError(f"homefield mine --merge: {'; '.join(missing)}; nothing written (a task set "
                              "without a shard's tasks is a different benchmark): merge every shard")
    merged: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    reconciled = 0
    candidates: dict[str, dict[str, Any]] = {}
    for d, m in zip(folders, metas, strict=True):
        label = parse_shard(m.get("shard"), flag=f"{d}: shard")  # missing_shards read it: a K/N or None
        share = label.select(str(i) for i in m["candidate_ids"]) if label is not None else None
        for n, c in read_jsonl_lines(candidates_path(d)):
            if not isinstance(c.get("commit"), str) or not c["commit"]:
                raise ShardMergeError(f"{WHAT}: {candidates_path(d)}: line {n}: no 'commit'; the folder is damaged")
            if share is not None and c["commit"][:12] not in share:  # hatk36: a shard's word on another's candidate
                raise ShardMergeError(f"{WHAT}: {candidates_path(d)}: line {n}: candidate {c['commit'][:12]} is not "
                                      f"in shard {label}'s share of the scan; drop that folder or mine that shard "
                                      "again")
            candidates.setdefault(c["commit"][:12], c)
        for cid, r in _verified(d).items():
            if share is not None and cid not in share:
                raise ShardMergeError(f"{WHAT}: {results_path(d)}: candidate {cid} is not in shard {label}'s share of "
                                      "the scan; drop that folder or mine that shard again")
            prior = merged.get(cid)
            if prior is None:
                merged[cid], origin[cid] = r, d
            elif comparable(prior) == comparable(r):
                reconciled += 1
            else:
                raise ShardMergeError(
                    f"homefield mine --merge: candidate {cid} was verified in {origin[cid]} ({_status(prior)}) and "
                    f"in {d} ({_status(r)}) with different results; drop one of the two folders")
    for cid, r in merged.items():  # a task record that would not load is refused before anything is written
        if r.get("task") is not None:
            try:
                Task.from_dict(r["task"])
            except (RecordError, TypeError) as exc:
                raise ShardMergeError(f"{WHAT}: {origin[cid]}: candidate {cid}: task record: {exc}") from None
    load_tasks(HomefieldDir(root).tasks)  # RecordError for a bad tasks.jsonl here: nothing is written
    _same_repository(root, folders, metas)
    order = [str(i) for i in first["candidate_ids"]]
    position = {cid: n for n, cid in enumerate(order)}
    unknown = sorted(set(candidates) - set(position))
    if unknown:
        raise ShardMergeError(f"homefield mine --merge: candidate {unknown[0]} is not in the scan the folders "
                              "record; the folders are damaged")
    incomplete = left_out_candidates(folders, metas, merged)
    home = HomefieldDir(root)
    envs = {fp: text for d in folders for fp, text in _env_files(d).items()}  # all read before anything is written
    mine_dir = home.new_mine_dir()
    created = now or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    write_meta(mine_dir, {**first, "mine_id": mine_dir.name, "created_at": created, "shard": None,
                          "merged_from": [{"mine_id": d.name, "shard": m.get("shard")}
                                          for d, m in zip(folders, metas, strict=True)],
                          **({"incomplete": incomplete} if incomplete else {})})
    write_jsonl_atomic(candidates_path(mine_dir), (candidates[c] for c in sorted(candidates, key=position.__getitem__)))
    records = [merged[c] for c in sorted(merged, key=position.__getitem__)]
    write_jsonl_atomic(results_path(mine_dir), records)
    write_jsonl_atomic(scan_path(mine_dir), read_jsonl(scan_path(folders[0])))
    for fp, text in envs.items():  # the environments the tasks were verified in, for `homefield verify`
        if not home.env_file(fp).exists():
            write_atomic(home.env_file(fp), text)
    # the older copies the shards' one scan set aside, removed once their newer copy is a task, as one mine does
    duplicates = scan_duplicates(read_jsonl(scan_path(mine_dir)))
    merged_tasks = merge_tasks(home.tasks, records, max_tasks=first.get("max_tasks"), duplicates=duplicates,
                               backup=backup_path(home.tasks, mine_dir.name))
    return MineMerge(mine_dir, merged_tasks.tasks, records, reconciled,
                     [(d, m.get("shard")) for d, m in zip(folders, metas, strict=True)], incomplete, merged_tasks)
