"""ablate --shard K/N and ablate --merge (issue 17): three shards (separate .homefield/ folders) run base
and the per-rule variants, their merge decides the slimmer file, three shards measure it on copies of
the merged ablation, and merging those gives the same results and report as one unsharded ablation of
the same scripted agent. Bad merges are one line."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers.ablate_repo import write_agent
from helpers.e2e_repo import homefield, homefield_in_process

from pytest_homefield.ablate.ablate_shards import merge_ablations
from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.errors import ShardMergeError
from pytest_homefield.layout import tries_path
from pytest_homefield.report.runs import claims_by_key, cut_short_by_key
from pytest_homefield.run.attempt import result_key
from pytest_homefield.settings import resolve_settings
from pytest_homefield.shard import Shard
from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow

#: Three tasks, one attempt: base + 3 rules = 12 attempts, then 3 for the slimmer file.
FLAGS = ("--attempts", "1", "--max-tasks", "3", "--yes", "--sandbox", "none", "-n", "0")
#: What differs between two ablations of the same attempts: ids, folders, times.
VOLATILE = ("ablate_id", "folder", "suggested", "wall_s", "test_s", "started_at", "finished_at", "run_id")


def _mask(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _mask(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [_mask(v) for v in doc]
    return doc


def _outcomes(folder: Path) -> list[tuple[str, str, str, int, str]]:
    return sorted((r["variant"], r["task_id"], r["agent"], r["attempt"], r["outcome"])
                  for r in read_jsonl(folder / "results.jsonl"))


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def _three_shards(ablate_repo: Path, tmp_path: Path) -> list[Path]:
    """Shards 1/3 to 3/3 of a two-task ``noop`` ablation of ``CLAUDE.md``, each on a copy of ``ablate_repo`` (a
    machine of its own under ``tmp_path``): their ablation folders, in order."""
    folders = []
    for k in (1, 2, 3):
        machine = _copy(ablate_repo, tmp_path / f"machine{k}")
        proc = homefield(machine, "ablate", "CLAUDE.md", "--agent", "noop", "--attempts", "1", "--max-tasks", "2",
                         "--yes", "--sandbox", "none", "-n", "0", "--shard", f"{k}/3", "--run-id", f"s{k}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        folders.append(machine / ".homefield" / "ablate" / f"s{k}")
    return folders


def test_three_ablation_shards_merged_equal_one_ablation(ablate_repo: Path, tmp_path: Path) -> None:
    agent = f"cmd:{sys.executable} -S {write_agent(tmp_path)} CLAUDE.md"
    one = _copy(ablate_repo, tmp_path / "one")
    proc = homefield(one, "ablate", "CLAUDE.md", "--agent", agent, *FLAGS, "--run-id", "one")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    single = one / ".homefield" / "ablate" / "one"
    ids = [t["id"] for t in read_jsonl(ablate_repo / ".homefield" / "tasks.jsonl")][:3]
    machines = []
    for k in (1, 2, 3):
        machine = _copy(ablate_repo, tmp_path / f"machine{k}")
        proc = homefield(machine, "ablate", "CLAUDE.md", "--agent", agent, *FLAGS, "--shard", f"{k}/3",
                         "--budget", "3", "--run-id", f"s{k}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"homefield shard {k}/3: 1 of the tasks; budget 3.00 USD split evenly over 3 shards: 1.00 USD here" \
            in proc.stdout
        assert f"Shard {k}/3 is done; merge the shards' ablation folders with: homefield ablate CLAUDE.md --merge" \
            in proc.stdout
        folder = machine / ".homefield" / "ablate" / f"s{k}"
        assert {o[1] for o in _outcomes(folder)} == Shard(k, 3).select(ids) and len(_outcomes(folder)) == 4
        meta = json.loads((folder / "meta.json").read_text())
        assert (meta["shard"], meta["next_phase"]) == (f"{k}/3", "merge")  # no slimmer file from one shard
        machines.append(machine)
    merged = _copy(ablate_repo, tmp_path / "merged")
    proc = homefield(merged, "ablate", "CLAUDE.md", "--merge", str(machines[0]), str(machines[1] / ".homefield"),
                     str(machines[2] / ".homefield" / "ablate" / "s3"), "--run-id", "m")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "merged 3 ablation folders into .homefield/ablate/m (12 attempts)" in proc.stdout
    assert "--resume --run-id m" in proc.stdout and "--max-tasks 3" in proc.stdout
    m = merged / ".homefield" / "ablate" / "m"
    plan = json.loads((m / "plan.json").read_text())
    assert plan["phase"] == "slim" and plan["variants"][-1]["name"] == "slim"
    assert plan["variants"] == json.loads((single / "plan.json").read_text())["variants"]
    # hatk36: a shard's meta.json was taken at its word: s2 claiming s1's task (its task_ids and lines of it)
    # had them merged as its own when s1 was not among the folders
    s1, s2 = (machines[k] / ".homefield" / "ablate" / f"s{k + 1}" for k in (0, 1))
    s2_meta, s2_results = s2 / "meta.json", s2 / "results.jsonl"
    meta_text, results_text = s2_meta.read_text(), s2_results.read_text()
    meta2 = json.loads(meta_text)
    assert meta2["shard_of"] == ids  # the --max-tasks 3 tasks the shards split
    s1_task = next(iter(Shard(1, 3).select(ids)))
    s2_results.write_text(results_text + "".join(json.dumps({**r, "run_id": "s2"}) + "\n"
                                                 for r in read_jsonl(s1 / "results.jsonl")))
    merge_settings = resolve_settings(merged, {}, mode="run")
    claims = f"{re.escape(str(s2))}: its meta.json claims task {s1_task}, which is shard 1/3's"
    # shard38: a shard of the split by position (no split: "sha256") is refused whole, its share exact or not
    by_position = f"{re.escape(str(s2))}: a shard split by position, the rule before shard38"
    for forged, why in (({**meta2, "task_ids": [*meta2["task_ids"], s1_task]}, claims),
                        ({k: v for k, v in meta2.items() if k != "shard_of"}
                         | {"task_ids": [*meta2["task_ids"], s1_task]}, claims),
                        ({k: v for k, v in meta2.items() if k != "split"}, by_position)):
        s2_meta.write_text(json.dumps(forged))
        with pytest.raises(ShardMergeError, match=why):
            merge_ablations([s2, machines[2] / ".homefield" / "ablate" / "s3"], merge_settings, rules_rel="CLAUDE.md",
                            rules_text=(merged / "CLAUDE.md").read_text(), split=split_rules, new_id="claim")
        assert not (merged / ".homefield" / "ablate" / "claim").exists()  # nothing merged
    s2_meta.write_text(meta_text)
    s2_results.write_text(results_text)
    # the slimmer file measured as shards, each machine on a copy of the merged ablation
    for k, machine in enumerate(machines, start=1):
        _copy(m, machine / ".homefield" / "ablate" / "m")
        proc = homefield(machine, "ablate", "CLAUDE.md", "--agent", agent, *FLAGS, "--shard", f"{k}/3", "--resume",
                         "--run-id", "m")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "phase slim, 1 attempt to run (12 already finished)" in proc.stdout
    final = _copy(ablate_repo, tmp_path / "final")
    settings = resolve_settings(final, {}, mode="run")
    sources = [machine / ".homefield" / "ablate" / "m" for machine in machines]
    session, doc = merge_ablations(sources, settings, rules_rel="CLAUDE.md",
                                   rules_text=(final / "CLAUDE.md").read_text(), split=split_rules, new_id="f")
    assert session.phase == "done" and _outcomes(session.ablate_dir) == _outcomes(single)
    assert _mask(doc) == _mask(json.loads((single / "report.json").read_text())) | {"incomplete": [], "shard": None}
    assert (session.ablate_dir / "suggested-CLAUDE.md").read_text() == (single / "suggested-CLAUDE.md").read_text()
    # hatk37: a copy resumed as a shard was not share-checked: copy 2/3 with a slimmer-file line of copy 1/3's task
    # (copy 1's own line absent: its attempt unscored) had it merged as that task's measurement
    one_results, two_results = (sources[k] / "results.jsonl" for k in (0, 1))
    one_text, two_text = one_results.read_text(), two_results.read_text()
    mine = next(r for r in read_jsonl(one_results) if r["variant"] == "slim")
    assert mine["task_id"] in Shard(1, 3).select(ids)
    one_results.write_text("".join(json.dumps(r) + "\n" for r in read_jsonl(one_results)
                                   if (r["variant"], r["task_id"]) != ("slim", mine["task_id"])))
    two_results.write_text(two_text + json.dumps({**mine, "outcome": "solved", "solved": True}) + "\n")
    with pytest.raises(ShardMergeError, match=rf"{re.escape(str(sources[1]))} has a result its session could not have "
                                              rf"written \(slim {mine['task_id']} cmd#1: task {mine['task_id']} is not "
                                              "its share 2/3 of the merged ablation's tasks"):
        merge_ablations(sources, settings, rules_rel="CLAUDE.md", rules_text=(final / "CLAUDE.md").read_text(),
                        split=split_rules, new_id="claim2")
    assert not (final / ".homefield" / "ablate" / "claim2").exists()
    one_results.write_text(one_text)
    two_results.write_text(two_text)
    # a missing shard: said, and no slimmer file decided from part of the tasks
    session, doc = merge_ablations(sources[:1] + sources[2:], settings, rules_rel="CLAUDE.md",
                                   rules_text=(final / "CLAUDE.md").read_text(), split=split_rules, new_id="part")
    assert doc["incomplete"] == ["incomplete: shard 2/3 missing"] and "shard 2/3 missing" in (
        session.ablate_dir / "report.md").read_text()
    # a shard's history is carried (int24): a claimed retry before a key's last line and a try an interrupted
    # session cut short stay counted in the merged ablation, so the rule labels still see them
    results, tries = sources[0] / "results.jsonl", tries_path(sources[0])
    rows, before = list(read_jsonl(results)), tries.read_bytes() if tries.exists() else b""
    claimed = {**rows[0], "outcome": "rate_limited", "scored": False, "solved": False, "claimed": True}
    cut = {"task_id": rows[1]["task_id"], "agent": rows[1]["agent"], "attempt": rows[1]["attempt"],
           "variant": rows[1]["variant"], "event": "start", "session": "cut"}
    results.write_text("".join(json.dumps(r) + "\n" for r in [claimed, *rows]))
    tries.write_bytes(before + (json.dumps(cut) + "\n").encode())
    session, _ = merge_ablations(sources, settings, rules_rel="CLAUDE.md",
                                 rules_text=(final / "CLAUDE.md").read_text(), split=split_rules, new_id="hist")
    out = session.ablate_dir
    assert claims_by_key([out])[result_key(rows[0])] == 1
    assert cut_short_by_key([out]) == Counter({(cut["task_id"], cut["agent"], cut["attempt"], cut["variant"]): 1})
    assert len(list(read_jsonl(out / "results.jsonl"))) == len(list(read_jsonl(single / "results.jsonl"))) + 1
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tries.write_bytes(before)
    # the same key with another outcome in two folders, another rules text, another task set: refused
    results = sources[1] / "results.jsonl"
    rows = list(read_jsonl(results))
    flipped = next(r for r in rows if r["task_id"] in Shard(1, 3).select(ids))
    results.write_text("".join(json.dumps(r) + "\n" for r in rows)
                       + json.dumps({**flipped, "outcome": "tests_failed" if flipped["solved"] else "solved"}) + "\n")
    with pytest.raises(ShardMergeError, match=f"{flipped['variant']} {flipped['task_id']} cmd#1 is in .* with "
                                              "different outcomes; drop one of the two folders"):
        merge_ablations(sources, settings, rules_rel="CLAUDE.md", rules_text=(final / "CLAUDE.md").read_text(),
                        split=split_rules, new_id="bad")
    # atk17 M1: a line past --attempts (or for a task not the folder's) was counted: base 0 % -> 75 %
    results.write_text("".join(json.dumps(r) + "\n" for r in rows) + json.dumps({**rows[0], "attempt": 7}) + "\n")
    with pytest.raises(ShardMergeError, match=r"has a result its session could not have written \(attempt 7 of "):
        merge_ablations(sources, settings, rules_rel="CLAUDE.md", rules_text=(final / "CLAUDE.md").read_text(),
                        split=split_rules, new_id="bad1")
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ShardMergeError, match="CLAUDE.md changed since the shards ran"):
        merge_ablations(sources[:1], settings, rules_rel="CLAUDE.md", rules_text="- one other rule\n",
                        split=split_rules, new_id="bad2")
    (final / ".homefield" / "tasks.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in list(read_jsonl(final / ".homefield" / "tasks.jsonl"))[:-1]))
    with pytest.raises(ShardMergeError, match="ran over another tasks.jsonl"):
        merge_ablations(sources, settings, rules_rel="CLAUDE.md", rules_text=(final / "CLAUDE.md").read_text(),
                        split=split_rules, new_id="bad3")


@pytest.mark.slow
def test_an_ablation_shard_holding_no_task_is_merged_as_that_shard(ablate_repo: Path, tmp_path: Path) -> None:
    """shard39: split by each id's hash, shard 1/3 of the first two tasks holds none. Before, such an ablation shard
    was refused (exit 4, "ablate them as fewer shards"), so a CI matrix job failed and the merge said that shard
    was missing. Now it runs nothing, exits 0 and leaves its folder and meta (no task), which the merge counts as
    that shard; the share check still refuses it claiming another shard's task."""
    ids = [t["id"] for t in read_jsonl(ablate_repo / ".homefield" / "tasks.jsonl")][:2]
    assert not Shard(1, 3).select(ids) and Shard(2, 3).select(ids) and Shard(3, 3).select(ids)
    folders = _three_shards(ablate_repo, tmp_path)
    meta = json.loads((folders[0] / "meta.json").read_text())
    assert (meta["shard"], meta["task_ids"], meta["shard_of"], meta["next_phase"]) == ("1/3", [], ids, "merge")
    assert meta["max_tasks"] == {"n": 2, "of": 8}  # as a run's: what a merge derives each share of tasks.jsonl from
    assert not list(read_jsonl(folders[0] / "results.jsonl"))
    merged = _copy(ablate_repo, tmp_path / "merged")
    proc = homefield_in_process(merged, "ablate", "CLAUDE.md", "--merge", *map(str, folders), "--run-id", "m")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "merged 3 ablation folders into .homefield/ablate/m (8 attempts)" in proc.stdout, proc.stdout
    m = merged / ".homefield" / "ablate" / "m"
    merged_meta = json.loads((m / "meta.json").read_text())
    assert merged_meta["incomplete"] == [] and sorted(merged_meta["task_ids"]) == sorted(ids)
    assert json.loads((m / "plan.json").read_text())["phase"] == "slim"  # every shard in: the slimmer file decided
    settings = resolve_settings(merged, {}, mode="run")
    rules = (merged / "CLAUDE.md").read_text()
    _, doc = merge_ablations(folders[1:], settings, rules_rel="CLAUDE.md", rules_text=rules, split=split_rules,
                             new_id="part")  # without the empty shard: it is missing
    assert doc["incomplete"] == ["incomplete: shard 1/3 missing"]
    # every shard stating a smaller selection (s2's one task dropped, and its lines): each holds exactly its share of
    # it, so the merge took it whole and decided the slimmer file without that task; now said, the phase stays merge
    dropped = next(iter(Shard(2, 3).select(ids)))
    texts = {d: (d / "meta.json").read_text() for d in folders}
    for d in folders:
        shard_meta = json.loads(texts[d])
        (d / "meta.json").write_text(json.dumps({**shard_meta, "shard_of": [i for i in ids if i != dropped],
                                                 "task_ids": [i for i in shard_meta["task_ids"] if i != dropped]}))
    s2_results = folders[1] / "results.jsonl"
    s2_text = s2_results.read_text()
    s2_results.write_text("".join(json.dumps(r) + "\n" for r in read_jsonl(s2_results) if r["task_id"] != dropped))
    session, doc = merge_ablations(folders, settings, rules_rel="CLAUDE.md", rules_text=rules, split=split_rules,
                                   new_id="dropped")
    assert [line[:80] for line in doc["incomplete"]] == [
        f"incomplete: shard 2/3 left out 1 task(s) of its share of tasks.jsonl ({dropped}): "[:80]]
    assert session.phase == "merge"  # no slimmer file decided over part of the tasks
    for d, meta_text in texts.items():
        (d / "meta.json").write_text(meta_text)
    s2_results.write_text(s2_text)
    # the empty shard claiming shard 2/3's task (with its result lines) is refused, one line, nothing merged
    foreign = next(iter(Shard(2, 3).select(ids)))
    (folders[0] / "meta.json").write_text(json.dumps({**meta, "task_ids": [foreign]}))
    (folders[0] / "results.jsonl").write_text((folders[1] / "results.jsonl").read_text())
    with pytest.raises(ShardMergeError, match=rf"claims task {foreign}, which is shard 2/3's"):
        merge_ablations([folders[0], folders[2]], settings, rules_rel="CLAUDE.md", rules_text=rules,
                        split=split_rules, new_id="claim")
    assert not (merged / ".homefield" / "ablate" / "claim").exists()


def test_a_shards_variants_are_copied_without_following_a_link(ablate_repo: Path, tmp_path: Path) -> None:
    """satk58: ``ablate --merge`` copied each shard's ``variants/`` with ``shutil.copytree``, which follows links: a
    shard folder (a CI job's artifact, whoever wrote it) holding ``variants/base/notes.md`` linked to a file of the
    merging machine, or ``variants`` linked to one of its folders, had that file's bytes copied into this
    ``.homefield/ablate/`` (every other file of a shard is read without following a link: ``meta.json``,
    ``plan.json``, the JSON-lines files, a mine's ``envs/``). Now nothing is followed: a link inside is copied as
    the link it is (an agent under ``--sandbox none`` can leave one in its attempt folder), and ``variants`` that
    is a link, or a fifo inside, is refused, one line, nothing written; a shard's own files are copied as before."""
    folders = _three_shards(ablate_repo, tmp_path)
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE KEY of the merging machine\n")
    merged = _copy(ablate_repo, tmp_path / "merged")
    settings = resolve_settings(merged, {}, mode="run")
    rules = (merged / "CLAUDE.md").read_text()

    def merge(new_id: str) -> Path:
        merge_ablations(folders, settings, rules_rel="CLAUDE.md", rules_text=rules, split=split_rules, new_id=new_id)
        return merged / ".homefield" / "ablate" / new_id

    base = folders[1] / "variants" / "base"
    attempts = sorted(p.relative_to(folders[1] / "variants") for p in base.rglob("agent.out"))
    assert attempts  # the shard's attempt artifacts, copied in
    (base / "notes.md").write_text("the shard's own note\n")
    own = merge("own")
    assert (own / "variants" / "base" / "notes.md").read_text() == "the shard's own note\n"
    assert all((own / "variants" / rel).read_bytes() == (folders[1] / "variants" / rel).read_bytes()
               for rel in attempts)
    (base / "notes.md").unlink()
    (base / "notes.md").symlink_to(secret)
    linked = merge("linked_file") / "variants" / "base" / "notes.md"
    assert linked.is_symlink() and os.readlink(linked) == str(secret)  # the link as it is, nothing read through it
    (base / "notes.md").unlink()
    os.mkfifo(base / "pipe")
    with pytest.raises(ShardMergeError, match=r"variants/base/pipe is no file, folder or symlink"):
        merge("fifo")
    (base / "pipe").unlink()
    shutil.rmtree(folders[2] / "variants")
    (folders[2] / "variants").symlink_to(secret.parent)
    with pytest.raises(ShardMergeError, match=r"variants is a link, not a folder"):
        merge("linked_folder")
    assert not (merged / ".homefield" / "ablate" / "fifo").exists()
    assert not (merged / ".homefield" / "ablate" / "linked_folder").exists()
    leaked = [p for p in (merged / ".homefield").rglob("*")
              if p.is_file() and not p.is_symlink() and b"PRIVATE KEY" in p.read_bytes()]
    assert leaked == []
