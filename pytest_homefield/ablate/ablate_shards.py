"""``homefield ablate FILE --merge DIR…``: the ablation folders of ``homefield ablate FILE --shard K/N``
sessions combined into one ablation, whose table and slimmer file are those one unsharded ablation
of the same attempts gives (issue 17; docs/contracts.md §4).

Each DIR is an ablation folder (``.homefield/ablate/<ablate_id>/``, the CI artifact), or a folder
holding ``ablate/`` or ``.homefield/ablate/``, whose newest ablation (``meta.json`` ``created_at``) is
taken and named (:func:`find_ablation_folder`). Checks, each a
one-line :class:`~pytest_homefield.errors.ShardMergeError`, made before anything is written: every
folder is an ablation (``meta.json`` kind ``ablate``, ``plan.json``) over this repository's
``tasks.jsonl`` (``tasks_digest``) and of ``FILE`` as it is now (``rules_digest``, ``by_section``),
with the same agents (name and spec), attempts and variants (a frozen slimmer file, when several
folders have one, is the same); the folders are shards of one split; a key (variant, task, agent,
attempt) present in two folders must have the same outcome (it is then counted once). A shard missing from the
split, or a task of ``tasks.jsonl`` a shard's own ``--max-tasks`` keeps whose id's hash is its K and that it left
out of the selection it split (:func:`pytest_homefield.shard.left_out`, shard39), is an ``incomplete`` line.

What is written: a new ablation folder with the layout of any other: ``meta.json`` (``shard`` null,
``merged_from``, ``incomplete``, the union of the shards' task ids in ``tasks.jsonl`` order),
``results.jsonl`` (keys in variant plan order, then tasks in ``tasks.jsonl`` order; each key's lines as
the first folder holding it wrote them, its unscored tries before its last line, so claimed retries stay
counted), ``tries.jsonl`` (every folder's lines, each once: tries an interrupted shard cut short stay
counted), ``variants/`` with every shard's attempt artifacts copied in, ``plan.json``, and the report. With
every shard present and every per-rule attempt in, the slimmer file is decided from the merged table
and frozen, as at the end of an unsharded per-rule phase; while shards are missing the phase stays
``merge``. The merged ablation is then resumed like any other (``--resume --run-id ID``) to
measure the slimmer file, on one machine or again as shards (:mod:`pytest_homefield.ablate.session`).
No pytest here, and no agent runs: agents are the names and specs the shards recorded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.ablate.session import (
    PHASE_MERGE,
    AblationSession,
    done_keys,
    read_frozen_plan,
    read_records,
    seed_of,
    utc_now,
)
from pytest_homefield.ablate.variants import SLIM, Variant, rule_variants
from pytest_homefield.agents.base import Agent
from pytest_homefield.errors import ConfigError, ShardMergeError
from pytest_homefield.layout import HomefieldDir, meta_path, read_json_file, read_meta, tries_path, write_meta
from pytest_homefield.records import Task, load_tasks, tasks_digest
from pytest_homefield.run.attempt import latest_results, result_key
from pytest_homefield.run.flaky import META_KEY as FLAKY_KEY
from pytest_homefield.run.flaky import merged_flaky
from pytest_homefield.sandbox import nofollow
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option
from pytest_homefield.shard import (
    left_out,
    missing_shards,
    old_split_refusal,
    outside_plan,
    parse_shard,
    share_refusal,
    split_refusal,
    stated_cut_refusal,
    stated_mismatch,
)
from pytest_homefield.store import read_jsonl, write_atomic, write_jsonl_atomic
from pytest_homefield.terminal.progress import plural

__all__ = ["RecordedAgent", "find_ablation_folder", "merge_ablations"]

WHAT = "homefield ablate --merge"


@dataclass(frozen=True)
class RecordedAgent:
    """An agent as a shard's ``meta.json`` records it: the merge reads results, it runs nothing."""

    name: str
    spec: str
    simulated: bool = False
    hinted: bool = False


def _created_at(folder: Path) -> str:
    """``meta.json``'s ``created_at`` of ``folder`` (ISO 8601, UTC), ``""`` when it has none (no file, not
    JSON, no such string: the merge's own checks then name what is wrong with the folder)."""
    try:
        meta = read_json_file(meta_path(folder))
    except (OSError, ValueError):
        return ""
    created = meta.get("created_at") if isinstance(meta, dict) else None
    return created if isinstance(created, str) else ""


def find_ablation_folder(path: Path) -> tuple[Path, str | None]:
    """``path`` when it holds ``plan.json``, else the newest ablation under ``path/ablate`` or
    ``path/.homefield/ablate``: the latest ``meta.json`` ``created_at`` (its name only between folders
    without one, or with the same one; a named ablation, ``--run-id zz-old``, sorted after every timestamped
    id and was taken however old: atk17). Returns the folder and, when it was picked among others, one line
    saying which and why. Raises :class:`ShardMergeError` when there is none."""
    if (path / "plan.json").is_file():
        return path, None
    for root in (path / "ablate", path / ".homefield" / "ablate"):
        dirs = [d for d in root.iterdir() if (d / "plan.json").is_file()] if root.is_dir() else []
        if dirs:
            keyed = sorted((_created_at(d), d.name, d) for d in dirs)
            created, _, newest = keyed[-1]
            how = f"created {created}" if created else "no meta.json created_at: the last by name"
            return newest, (f"{WHAT}: {path}: took its newest ablation {newest.name} ({how}; "
                            f"{plural(len(dirs) - 1, 'other')} left)" if len(dirs) > 1 else None)
    raise ShardMergeError(f"{WHAT}: {path} is not an ablation folder (no plan.json) and holds no .homefield/ablate/")


def _load(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    try:  # validated as a resume reads them (RunError names the file and field)
        meta = read_meta(folder, complete=True)
        plan = read_frozen_plan(folder / "plan.json")
    except (OSError, ValueError) as exc:
        raise ShardMergeError(f"{WHAT}: {exc}") from None
    if meta.get("kind") != "ablate":
        raise ShardMergeError(f"{WHAT}: {folder} is not an ablation (meta.json kind {meta.get('kind')!r})")
    return meta, plan


def _variant_entries(folder: Path) -> dict[str, nofollow.Entry]:
    """The entries of the shard ``folder``'s ``variants/`` (its variants' rules files and attempt artifacts) by
    relative path, folders included (:func:`~pytest_homefield.sandbox.nofollow.walk`, no link followed); ``{}`` when
    it has none. A shard folder is whatever its machine or its CI artifact holds (satk58: ``shutil.copytree``
    followed links, and a ``variants/base/notes.md`` linked to a file of the merging machine was copied in as that
    file). Raises :class:`ShardMergeError` (one line) when ``variants`` is a link or no folder, or holds a fifo, a
    socket or a device, or folders nested deeper than the walk goes."""
    kind = nofollow.kind_at(folder, "variants")
    if kind is None:
        return {}
    if kind != "dir":
        raise ShardMergeError(f"{WHAT}: {folder / 'variants'} is a {kind}, not a folder; the folder is damaged")
    try:
        entries = nofollow.walk(folder / "variants", dirs=True)
    except OSError as exc:
        raise ShardMergeError(f"{WHAT}: {folder / 'variants'}: cannot list: {exc.strerror or exc}") from None
    odd = sorted(rel for rel, e in entries.items() if e.kind not in ("dir", "file", "link"))
    if odd:
        raise ShardMergeError(f"{WHAT}: {folder / 'variants' / odd[0]} is no file, folder or symlink (or lies "
                              "deeper than homefield walks); the folder is damaged")
    return entries


def _copy_variants(folder: Path, entries: dict[str, nofollow.Entry], ablate_dir: Path) -> None:
    """Copy ``entries`` (:func:`_variant_entries` of the shard ``folder``) into ``ablate_dir/variants``: folders
    made, regular files copied, a symlink copied as the symlink it is (an agent under ``--sandbox none`` can leave
    one in its attempt folder), never followed on either side; what another shard copied there before is
    replaced. Raises :class:`ShardMergeError` (one line) when an entry cannot be copied (a link or a special file
    put in its place since it was listed)."""
    src, dest = folder / "variants", ablate_dir / "variants"
    dest.mkdir(exist_ok=True)
    try:
        with nofollow.EntryCopier(src, dest) as copier:
            for rel, entry in sorted(entries.items()):
                if entry.kind == "dir":
                    copier.forget()
                    nofollow.make_dirs(dest, rel)
                else:
                    copier.copy(rel)
    except OSError as exc:
        raise ShardMergeError(f"{WHAT}: {src}: cannot copy: {exc.strerror or exc}") from None


def _same(folders: Sequence[Path], values: Sequence[Any], what: str) -> None:
    for d, v in zip(folders, values, strict=True):
        if v != values[0]:
            raise ShardMergeError(f"{WHAT}: {folders[0]} and {d} differ in {what}; merge ablations of one {what}")


def _copy_shares(folders: Sequence[Path], metas: Sequence[dict[str, Any]],
                 repo_ids: Sequence[str]) -> dict[Path, set[str]]:
    """The share of each copy of a merged ablation resumed as a shard (``merged_from`` and ``shard`` K/N): shard K/N
    of the merged ablation's ``task_ids``, the tasks its own sessions ran (hatk37: its other results are the merged
    ablation's, which every copy holds). Raises :class:`ShardMergeError` when such copies are not of one merged
    ablation (their ``merged_from`` or ``task_ids`` differ) or name a task not in ``tasks.jsonl``."""
    out: dict[Path, set[str]] = {}
    first: tuple[Path, Any] | None = None
    known = set(repo_ids)
    for d, m in zip(folders, metas, strict=True):
        if not m.get("merged_from") or m.get("shard") is None:
            continue
        try:
            shard = parse_shard(str(m.get("shard")), flag=f"{WHAT}: {d}: shard")
        except ConfigError as exc:
            raise ShardMergeError(str(exc)) from None
        every = m.get("task_ids")
        if shard is None or not isinstance(every, list) or not all(isinstance(t, str) for t in every):
            raise ShardMergeError(f"{WHAT}: {d}: its meta.json task_ids is not a list of task ids")
        unknown = [t for t in every if t not in known]
        if unknown:
            raise ShardMergeError(f"{WHAT}: {d}: task {unknown[0]} of its meta.json is not in this repository's "
                                  "tasks.jsonl")
        mark = (m.get("merged_from"), every)
        if first is None:
            first = (d, mark)
        elif mark != first[1]:
            raise ShardMergeError(f"{WHAT}: {first[0]} and {d} are not copies of one merged ablation (their meta.json "
                                  "merged_from or task_ids differ); merge the copies of one")
        out[d] = shard.select(every)
    return out


def merge_ablations(sources: Sequence[Path], settings: Settings, *, rules_rel: str, rules_text: str,
                    split: Callable[..., RuleSet], new_id: str) -> tuple[AblationSession, dict[str, Any]]:
    """Merge the ablation folders ``sources`` (module docstring) into ``.homefield/ablate/<new_id>/``
    and write its report (:meth:`AblationSession.finish`); returns the merged session and its report
    document (:func:`pytest_homefield.ablate.render.report_doc`).
    ``rules_rel``: ``FILE`` relative to the repository root; ``rules_text``: its text now;
    ``split``: ``(text, by_section) -> RuleSet`` (:func:`pytest_homefield.ablate.rules.split_rules`).
    Raises :class:`ShardMergeError`."""
    if not sources:
        raise ShardMergeError(f"{WHAT}: give the ablation folders of the shards to merge")
    home = HomefieldDir(settings.root)
    if not home.tasks.exists():
        raise ShardMergeError(f"{WHAT}: no tasks at {home.tasks}: the shards' tasks.jsonl must be here too")
    digest = tasks_digest(home.tasks)
    folders = [find_ablation_folder(Path(s))[0].resolve() for s in sources]
    loaded = [_load(d) for d in folders]
    metas = [m for m, _ in loaded]
    plans = [p for _, p in loaded]
    for d, m in zip(folders, metas, strict=True):
        if m.get("tasks_digest") != digest:
            raise ShardMergeError(f"{WHAT}: {d} ran over another tasks.jsonl (tasks digest {m.get('tasks_digest')}) "
                                  f"than {home.tasks} ({digest}); merge shards of one task set")
    repo_ids = [t.id for t in load_tasks(home.tasks)]
    for d, m in zip(folders, metas, strict=True):  # a shard's tasks are its share (hatk36)
        why = old_split_refusal(str(d), m) if m.get("merged_from") else share_refusal(str(d), m, repo_ids)
        if why:
            raise ShardMergeError(f"{WHAT}: {why}; drop that folder or run that shard again")
    why = split_refusal([(str(d), m) for d, m in zip(folders, metas, strict=True)], repo_ids)
    if why:
        raise ShardMergeError(f"{WHAT}: {why}")
    shares = _copy_shares(folders, metas, repo_ids)
    _same(folders, [m.get("rules_file") for m in metas], "rules file")
    if metas[0].get("rules_file") != rules_rel:
        raise ShardMergeError(f"{WHAT}: the folders ablated {metas[0].get('rules_file')}, not {rules_rel}")
    _same(folders, [bool(m.get("by_section")) for m in metas], option("by-section"))
    rules: RuleSet = split(rules_text, by_section=bool(metas[0].get("by_section")))
    now_digest = hashlib.sha256(rules.render().encode("utf-8")).hexdigest()[:16]
    _same(folders, [m.get("rules_digest") for m in metas], "rules file text")
    if metas[0].get("rules_digest") != now_digest:
        raise ShardMergeError(f"{WHAT}: {rules_rel} changed since the shards ran (rules digest "
                              f"{metas[0].get('rules_digest')} vs {now_digest} now); merge with the file they measured")
    _same(folders, [[(a["name"], a["spec"]) for a in m.get("agents", [])] for m in metas], "agents")
    _same(folders, [int(m.get("attempts", 0)) for m in metas], "attempts")
    _same(folders, [[v for v in p.get("variants", []) if v.get("name") != SLIM] for p in plans], "variants")
    slims = [v for p in plans for v in p.get("variants", []) if v.get("name") == SLIM]
    if any(v != slims[0] for v in slims):
        raise ShardMergeError(f"{WHAT}: the folders froze different slimmer files; merge copies of one merged ablation")
    incomplete = missing_shards([(str(d), m.get("shard")) for d, m in zip(folders, metas, strict=True)], what=WHAT)
    # shard39: a shard's tasks of its K that its --max-tasks keeps but its stated selection lacks, said (copies of a
    # merged ablation hold its task list, checked above)
    incomplete += left_out([(str(d), m) for d, m in zip(folders, metas, strict=True) if not m.get("merged_from")],
                           repo_ids)
    own = [(str(d), m) for d, m in zip(folders, metas, strict=True) if not m.get("merged_from")]
    incomplete += stated_mismatch(own) + stated_cut_refusal(own, repo_ids)  # ops40: what they state, checked
    merged: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    origin: dict[tuple[str, str, int, str], Path] = {}
    history: dict[Path, dict[tuple[str, str, int, str], list[dict[str, Any]]]] = {}
    latest_of: dict[Path, dict[tuple[str, str, int, str], dict[str, Any]]] = {}
    for d, m in zip(folders, metas, strict=True):
        in_plan = outside_plan(m)
        # validated: a bad line raises RecordError naming it
        lines = read_records(d / "results.jsonl")
        by_key = history[d] = {}
        for r in lines:
            by_key.setdefault(result_key(r), []).append(r)
        latest_of[d] = latest_results(lines)
        for key, r in latest_of[d].items():
            why = in_plan(key[0], key[1], key[2])
            if why:
                raise ShardMergeError(f"{WHAT}: {d} has a result its session could not have written ({why}); "
                                      "drop that line or the folder")
            prior = merged.get(key)
            if prior is None:
                merged[key], origin[key] = r, d
            elif prior.get("outcome") != r.get("outcome"):
                task, agent, attempt, variant = key
                raise ShardMergeError(
                    f"{WHAT}: {variant} {task} {agent}#{attempt} is in {origin[key]} ({prior.get('outcome')}) and "
                    f"{d} ({r.get('outcome')}) with different outcomes; drop one of the two folders")
    for d, share in shares.items():  # a copy's result outside its share is the merged ablation's: another has it
        for key, r in latest_of[d].items():
            if key[0] not in share and not any(e != d and latest_of[e].get(key, {}).get("outcome") == r.get("outcome")
                                               for e in folders):
                task, agent, attempt, variant = key
                raise ShardMergeError(
                    f"{WHAT}: {d} has a result its session could not have written ({variant} {task} {agent}#{attempt}: "
                    f"task {task} is not its share {metas[folders.index(d)].get('shard')} of the merged ablation's "
                    "tasks, and no other copy of that ablation holds it); drop that line or the folder")
    all_tasks = load_tasks(home.tasks)
    ids = {str(t) for m in metas for t in m.get("task_ids", [])}
    tasks: list[Task] = [t for t in all_tasks if t.id in ids]
    position = {t.id: n for n, t in enumerate(all_tasks)}
    unknown = sorted({k[0] for k in merged} - set(position))
    if unknown:
        raise ShardMergeError(f"{WHAT}: task {unknown[0]} is not in {home.tasks}")
    variant_order = {v["name"]: n for n, v in enumerate([*plans[0].get("variants", []), *slims[:1]])}
    keys = sorted(merged, key=lambda k: (variant_order.get(k[3], len(variant_order)), position[k[0]], k[1], k[2]))

    ablate_dir = home.ablate / new_id
    if ablate_dir.exists():
        raise ShardMergeError(f"{WHAT}: {ablate_dir} exists; give another {option('run-id')}")
    listings = [_variant_entries(d) for d in folders]  # before anything is written: a refusal leaves nothing
    ablate_dir.mkdir(parents=True)
    for d, entries in zip(folders, listings, strict=True):
        _copy_variants(d, entries, ablate_dir)
    write_jsonl_atomic(ablate_dir / "results.jsonl", (r for k in keys for r in history[origin[k]][k]))
    tries = list(dict.fromkeys(json.dumps(r, sort_keys=True) for d in folders for r in read_jsonl(tries_path(d))))
    if tries:
        write_jsonl_atomic(tries_path(ablate_dir), (json.loads(t) for t in tries))
    start = utc_now()
    meta = {**metas[0], "run_id": new_id, "created_at": start, "task_ids": [t.id for t in tasks],
            "seed": seed_of(new_id), "shard": None, "cut_short": None, "next_phase": None,
            "merged_from": [{"ablate_id": d.name, "shard": m.get("shard")} for d, m in zip(folders, metas,
                                                                                           strict=True)],
            "incomplete": incomplete}
    meta.pop("resumed_at", None)
    meta.pop("session_token", None)
    # each shard froze the flaky ids it read when it started: the merged ablation grades with all of them
    flaky = merged_flaky(metas)
    meta.pop(FLAKY_KEY, None)
    if flaky:
        meta[FLAKY_KEY] = flaky
    write_meta(ablate_dir, meta)
    agents = [cast(Agent, RecordedAgent(a["name"], a["spec"], bool(a.get("simulated")), bool(a.get("hinted"))))
              for a in metas[0].get("agents", [])]
    rules_paths = {str(a["name"]): str(a["rules_path"]) for a in plans[0].get("agents", [])}
    variants: list[Variant] = rule_variants(rules)
    if slims:
        variants.append(Variant(SLIM, tuple(slims[0]["removed"]), rules.render(slims[0]["removed"])))
    merged_settings = dataclasses.replace(settings, attempts=int(metas[0]["attempts"]), shard=None, resume=False)
    session = AblationSession(merged_settings, tasks, agents, rules, rules_rel, rules_paths, ablate_dir, variants,
                              PHASE_MERGE, done_keys(ablate_dir / "results.jsonl"), start, int(meta["seed"]), digest,
                              estimate=dict(plans[0].get("estimate") or {}), incomplete=incomplete, flaky=flaky)
    session._choose_phase()
    for v in session.variants:
        write_atomic(session.variant_file(v.name), v.text)
    session._write_plan()
    doc = session.finish()
    return session, doc
