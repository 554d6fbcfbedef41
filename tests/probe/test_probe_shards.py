"""probe --shard K/N and probe --merge (issue 17): three probe shards (separate .homefield/ folders)
merged give the same calls and the same verdict as one unsharded probe of the scripted reciter; a
shard's verdict, or an incomplete merge, is refused by --exclude-memorized; bad merges are one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers.e2e_repo import homefield, homefield_in_process

from probe.conftest import MEMORIZED, UNBOXED, Probed, copy_probed, reciter_spec
from pytest_homefield.errors import ProbeError, ShardMergeError
from pytest_homefield.probe.probe_shards import merge_probes
from pytest_homefield.probe_records import load_verdict, probe_path
from pytest_homefield.run.memorized import excluded_for_run
from pytest_homefield.shard import Shard
from pytest_homefield.store import read_jsonl, write_jsonl_atomic

pytestmark = pytest.mark.slow

#: What differs between two probes of the same answers: times.
TIMING = ("wall_s", "started_at", "finished_at", "at")


def _calls(repo: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(r["kind"], r["task_id"], r["sample"]): {k: v for k, v in r.items() if k not in TIMING}
            for r in read_jsonl(probe_path(repo / ".homefield", "reciter")) if r["kind"] != "verdict"}


def _verdict(repo: Path) -> dict[str, Any]:
    v = load_verdict(probe_path(repo / ".homefield", "reciter"))
    assert v is not None
    return {k: v for k, v in v.items() if k not in TIMING + ("merged_from", "incomplete", "notes")}


def test_three_probe_shards_merged_equal_one_probe(repo: Path, probed: Probed, tmp_path: Path) -> None:
    """The unsharded probe is the session's (:func:`probe.conftest.probed`: ``--samples 1 -n 0``, the
    shards' flags), on a copy; the shards use its reciter spec."""
    one = copy_probed(probed, tmp_path / "one")
    spec = probed.spec  # the answers file sits beside the shared probe, outside every .homefield/
    ids = [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]
    machines = []
    for k in (1, 2, 3):
        machine = tmp_path / f"machine{k}"
        shutil.copytree(repo, machine, symlinks=True)
        proc = homefield(machine, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "1", "-n", "0",
                         "--shard", f"{k}/3")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        mine = Shard(k, 3).select(ids)
        assert f"homefield probe shard {k}/3: {len(mine)} of the 8 probed tasks" in proc.stdout
        assert "merge the shards' .homefield/probe/ folders with: homefield probe --merge" in proc.stdout
        assert {key[1] for key in _calls(machine)} == mine
        verdict = load_verdict(probe_path(machine / ".homefield", "reciter"))
        assert verdict is not None and verdict["shard"] == f"{k}/3"
        machines.append(machine)
    agent = [SimpleNamespace(name="reciter", spec=spec.split("=", 1)[1])]
    with pytest.raises(ProbeError, match="is shard 1/3 only: merge every shard's"):
        excluded_for_run(machines[0] / ".homefield", agent)
    merged = tmp_path / "merged"
    shutil.copytree(repo, merged, symlinks=True)
    # the three ways to name a shard: its clone, its .homefield/, its probe folder (the CI artifact)
    sources = [str(machines[0]), str(machines[1] / ".homefield"), str(machines[2] / ".homefield" / "probe")]
    proc = homefield(merged, "probe", "--merge", *sources)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "merged 3 probe folders of reciter (1/3, 2/3, 3/3): 16 calls" in proc.stdout
    assert "recites 3 of 8 tasks; control 8 mismatched pairs" in proc.stdout
    assert _calls(merged) == _calls(one)
    assert _verdict(merged) == _verdict(one)
    assert sorted(f["task_id"] for f in _verdict(merged)["flagged"]) == sorted(MEMORIZED)
    memorized = excluded_for_run(merged / ".homefield", agent)
    assert memorized["tasks"] == sorted(MEMORIZED)
    # a missing shard is said, in the output and in the verdict, which --exclude-memorized then refuses
    partial = tmp_path / "partial"
    shutil.copytree(repo, partial, symlinks=True)
    (m,) = merge_probes([Path(sources[0]), Path(sources[2])], partial)
    assert m.verdict.incomplete == ["incomplete: shard 2/3 missing"] and m.verdict.judged == len(
        Shard(1, 3).select(ids) | Shard(3, 3).select(ids))
    with pytest.raises(ProbeError, match="is a merge with shards missing"):
        excluded_for_run(partial / ".homefield", agent)
    # the same call with another answer (scored as it scores) in two copies of a shard: refused with one line,
    # nothing written
    twin = tmp_path / "twin"
    shutil.copytree(machines[0] / ".homefield" / "probe", twin)
    lines = list(read_jsonl(twin / "reciter.jsonl"))
    first = next(r for r in lines if r["kind"] == "task" and r["score"])
    write_jsonl_atomic(twin / "reciter.jsonl", [{**r, "answer": "", "score": 0.0} if r is first else r for r in lines])
    before = probe_path(merged / ".homefield", "reciter").read_bytes()
    with pytest.raises(ShardMergeError, match=rf"task call {first['task_id']} reciter#1 is in .* with different "
                                              "results; drop one of the two folders"):
        merge_probes([*(Path(s) for s in sources), twin], merged)
    assert probe_path(merged / ".homefield", "reciter").read_bytes() == before
    # shards of another tasks.jsonl: refused
    (merged / ".homefield" / "tasks.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in list(read_jsonl(merged / ".homefield" / "tasks.jsonl"))[:-1]))
    with pytest.raises(ShardMergeError, match="probed another tasks.jsonl"):
        merge_probes([Path(sources[0])], merged)



def test_a_probe_shard_holding_no_task_is_merged_as_that_shard(ablate_repo: Path, tmp_path: Path) -> None:
    """shard39: split by each id's hash, shard 1/3 of the ablation repository's first two tasks holds none (the
    cheapest repository to probe). Before, such a probe shard was
    refused (exit 4, "probe them as fewer shards"), so a CI matrix job failed and the merge said that shard was
    missing. Now it makes no call, exits 0 and leaves its verdict line over no task, which the merge counts as
    that shard; the share check still refuses it claiming another shard's task."""
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    ids = [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")][:2]
    assert not Shard(1, 3).select(ids) and Shard(2, 3).select(ids) and Shard(3, 3).select(ids)
    spec = reciter_spec(repo)  # the answers file beside repo, outside every machine's .homefield/
    machines = []
    for k in (1, 2, 3):
        machine = tmp_path / f"machine{k}"
        shutil.copytree(repo, machine, symlinks=True)
        proc = homefield(machine, "probe", *UNBOXED, "--agent", spec, "--samples", "1", "-n", "0",
                         "--max-tasks", "2", "--shard", f"{k}/3")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        machines.append(machine / ".homefield" / "probe")
    empty = list(read_jsonl(machines[0] / "reciter.jsonl"))
    assert [(r["kind"], r["shard"], r["tasks"], r["shard_of"], r["max_tasks"]) for r in empty] == [
        ("verdict", "1/3", {}, ids, {"n": 2, "of": 8})]
    assert "shard 1/3 holds no probed task" in empty[0]["notes"][0]
    merged = tmp_path / "merged"
    shutil.copytree(repo, merged, symlinks=True)
    proc = homefield_in_process(merged, "probe", "--merge", *map(str, machines))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "merged 3 probe folders of reciter (1/3, 2/3, 3/3)" in proc.stdout, proc.stdout
    verdict = load_verdict(probe_path(merged / ".homefield", "reciter"))
    assert verdict is not None and verdict["incomplete"] == [] and sorted(verdict["tasks"]) == sorted(ids)
    partial = tmp_path / "partial"
    shutil.copytree(repo, partial, symlinks=True)
    (m,) = merge_probes(machines[1:], partial)  # without the empty shard: it is missing
    assert m.verdict.incomplete == ["incomplete: shard 1/3 missing"]
    # every shard's verdict stating a smaller selection (shard 2/3's one task dropped, and its calls): each judged
    # exactly its share of it, so the merge took it whole; now said, and --exclude-memorized refuses the verdict
    dropped = next(iter(Shard(2, 3).select(ids)))
    texts = {d: (d / "reciter.jsonl").read_text() for d in machines}
    for d in machines:
        lines = list(read_jsonl(d / "reciter.jsonl"))
        write_jsonl_atomic(d / "reciter.jsonl", [
            {**r, "shard_of": [i for i in ids if i != dropped],
             "tasks": {t: row for t, row in r["tasks"].items() if t != dropped}} if r["kind"] == "verdict" else r
            for r in lines if r["kind"] == "verdict" or r["task_id"] != dropped])
    cut = tmp_path / "cut"
    shutil.copytree(repo, cut, symlinks=True)
    (m,) = merge_probes(machines, cut)
    assert [line[:80] for line in m.verdict.incomplete] == [
        f"incomplete: shard 2/3 left out 1 task(s) of its share of tasks.jsonl ({dropped}): "[:80]]
    for d, text in texts.items():
        (d / "reciter.jsonl").write_text(text)
    # the empty shard's verdict claiming shard 2/3's task (with that task's calls) is refused, one line
    foreign = next(iter(Shard(2, 3).select(ids)))
    calls = [r for r in read_jsonl(machines[1] / "reciter.jsonl") if r["kind"] != "verdict"]
    write_jsonl_atomic(machines[0] / "reciter.jsonl", [*calls, {**empty[0], "tasks": {foreign: {"memorized": None}}}])
    before = probe_path(partial / ".homefield", "reciter").read_bytes()
    with pytest.raises(ShardMergeError, match=rf"claims task {foreign}, which is shard 2/3's"):
        merge_probes([machines[0], machines[2]], partial)
    assert probe_path(partial / ".homefield", "reciter").read_bytes() == before  # nothing written
