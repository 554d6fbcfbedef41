"""``homefield probe --merge`` takes no number a shard file states that homefield can recompute (atk17 M1,
read on main: a crafted shard line with ``score: 1.0`` and any answer was counted as written, and so could
flag any task), and no call its shard's session could not have made; a probe call's score is that of the
answer its record keeps, so the merge can recompute it. Shards made by the real ``homefield probe
--shard K/2`` on the ablation repository (eight tasks, eight source files), then tampered with."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.e2e_repo import homefield

from probe.conftest import RECITER, UNBOXED, reciter_spec
from pytest_homefield.errors import ShardMergeError
from pytest_homefield.probe.probe_shards import merge_probes
from pytest_homefield.probe.prompt import added_lines
from pytest_homefield.probe.similarity import code_tokens, token_similarity
from pytest_homefield.probe_records import load_probe, probe_path
from pytest_homefield.records import load_tasks
from pytest_homefield.shard import Shard
from pytest_homefield.store import read_jsonl, write_jsonl_atomic

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shards(ablate_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """The repository and the probe folders of its two shards (``--samples 1``: a task call and a control
    call per task)."""
    base = tmp_path_factory.mktemp("trust")
    repo = base / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    spec = reciter_spec(repo)
    folders = []
    for k in (1, 2):
        machine = base / f"machine{k}"
        shutil.copytree(repo, machine, symlinks=True)
        proc = homefield(machine, "probe", *UNBOXED, "--agent", spec, "--samples", "1", "-n", "0", "--shard", f"{k}/2")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        folders.append(machine / ".homefield" / "probe")
    return repo, folders


def _gold(repo: Path, task_id: str) -> str:
    task = next(t for t in load_tasks(repo / ".homefield" / "tasks.jsonl") if t.id == task_id)
    return added_lines(task.gold_patch, task.source_files or None)


def _tampered(folder: Path, dest: Path, edit: Any) -> Path:
    """A copy of the probe folder ``folder`` at ``dest`` whose file's call lines are ``edit(lines)``; the
    verdict line stays last."""
    shutil.copytree(folder, dest)
    path = dest / "reciter.jsonl"
    lines = list(read_jsonl(path))
    calls, verdict = lines[:-1], lines[-1]
    assert verdict["kind"] == "verdict"
    write_jsonl_atomic(path, [*edit(calls), verdict])
    return dest


def _merge_refused(repo: Path, sources: list[Path], dest: Path, match: str) -> None:
    shutil.copytree(repo, dest, symlinks=True)
    with pytest.raises(ShardMergeError, match=match):
        merge_probes(sources, dest)
    assert not probe_path(dest / ".homefield", "reciter").exists()  # nothing written


def test_honest_shards_merge_with_every_score_recomputed(shards: tuple[Path, list[Path]], tmp_path: Path) -> None:
    repo, folders = shards
    dest = tmp_path / "merged"
    shutil.copytree(repo, dest, symlinks=True)
    (m,) = merge_probes(folders, dest)
    assert len(m.records) == 16 and m.verdict.unjudged == 0
    calls = {(r["kind"], r["task_id"]): r["score"] for f in folders for r in load_probe(f / "reciter.jsonl")
             if r["kind"] != "verdict"}
    assert {(r["kind"], r["task_id"]): r["score"] for r in m.records} == calls


def test_a_score_its_answer_does_not_earn_is_refused(shards: tuple[Path, list[Path]], tmp_path: Path) -> None:
    """The line a crafter writes to flag a task: its answer kept, its score set to 1.0."""
    repo, folders = shards
    crafted: dict[str, Any] = {}

    def forge(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = next(r for r in calls if r["kind"] == "task")
        assert first["score"] < 1.0
        crafted.update(first)
        return [{**r, "score": 1.0} if r is first else r for r in calls]

    bad = _tampered(folders[1], tmp_path / "bad", forge)
    right = round(token_similarity(crafted["answer"], _gold(repo, crafted["task_id"])), 6)
    _merge_refused(repo, [folders[0], bad], tmp_path / "merged",
                   rf"{re.escape(str(bad / 'reciter.jsonl'))}: task call {crafted['task_id']} reciter#1 stores score "
                   rf"1.0, but its answer scores {right} against the gold lines of {crafted['task_id']}: a score is "
                   "recomputed")


def _foreign_task(calls: list[dict[str, Any]], other: list[dict[str, Any]], repo: Path) -> list[dict[str, Any]]:
    """A call of a task of the other shard (sample 2: no key the other shard has), scored as it scores."""
    task = next(r for r in other if r["kind"] == "task")
    answer = _gold(repo, task["task_id"])
    return [*calls, {**task, "sample": 2, "answer": answer, "score": 1.0}]


def _own_gold_control(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A control scored against its own task's gold (the real call again): the gold recited scores 1.0."""
    control = next(r for r in calls if r["kind"] == "control")
    task = next(r for r in calls if r["kind"] == "task" and r["task_id"] == control["task_id"])
    return [{**r, "gold_task_id": r["task_id"], "answer": task["answer"], "score": task["score"]}
            if r is control else r for r in calls]


@pytest.mark.parametrize(("tamper", "why"), [
    ("foreign", r"task call \w+ reciter#2 is not one of the 5 tasks its verdict judged"),
    ("agent", r"task call \w+ reciter#1 is agent 'other''s"),
    ("control", r"control call \w+ reciter#1 has no other task of tasks.jsonl as its gold_task_id \('\w+'\)"),
])
def test_a_call_its_shard_could_not_have_made_is_refused(shards: tuple[Path, list[Path]], tmp_path: Path,
                                                         tamper: str, why: str) -> None:
    repo, folders = shards
    other = [r for r in read_jsonl(folders[0] / "reciter.jsonl") if r["kind"] != "verdict"]

    def edit(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if tamper == "foreign":
            return _foreign_task(calls, other, repo)
        if tamper == "agent":
            first = next(r for r in calls if r["kind"] == "task")
            return [{**r, "agent": "other"} if r is first else r for r in calls]
        return _own_gold_control(calls)

    bad = _tampered(folders[1], tmp_path / "bad", edit)
    _merge_refused(repo, [folders[0], bad], tmp_path / "merged",
                   rf"{re.escape(str(bad / 'reciter.jsonl'))}: {why}: its session could not have written it")


def test_the_answer_a_record_keeps_is_the_answer_scored(ablate_repo: Path, tmp_path: Path) -> None:
    """An answer longer than the record keeps: the gold after 18 000 characters of comments. Main scored the
    whole text (1.0) and kept the comments only, a score no one could recompute from the record."""
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    task = load_tasks(repo / ".homefield" / "tasks.jsonl")[0]  # --max-tasks 1: the newest
    gold = added_lines(task.gold_patch, task.source_files or None)
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({task.prompt.strip(): "# thinking it over\n" * 1000 + gold}))
    spec = f"long=cmd:{sys.executable} -S {RECITER} {answers}"
    proc = homefield(repo, "probe", *UNBOXED, "--agent", spec, "--samples", "1", "--max-tasks", "1",
                     "--cutoff", "2026-12-31", "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (call,) = [r for r in load_probe(probe_path(repo / ".homefield", "long")) if r["kind"] == "task"]
    assert call["score"] == round(token_similarity(call["answer"], gold), 6)
    assert call["answer"] == ("# thinking it over\n" * 1000)[: len(call["answer"])]


def _claiming(shards: tuple[Path, list[Path]], dest: Path, *, shift: bool) -> tuple[Path, str]:
    """A copy of shard 2/2's folder whose verdict claims a task of shard 1/2, with a call of it (sample 2, no key
    shard 1 has) reciting the gold: its ``tasks`` that task more (``shift`` False), or (``shift``) its ``shard_of``
    the repository's tasks but the first (sorted), whose share by position (the rule before shard38, the odd places
    of its sorted ids) is shard 1/2's tasks but that one, and its ``tasks`` and calls those. Returns the folder and
    the task claimed."""
    repo, folders = shards
    every = [t.id for t in load_tasks(repo / ".homefield" / "tasks.jsonl")]
    probed = {t.id for t in load_tasks(repo / ".homefield" / "tasks.jsonl") if code_tokens(_gold(repo, t.id))}
    theirs = [r for r in read_jsonl(folders[0] / "reciter.jsonl") if r["kind"] == "task"]
    first = sorted(every)[0]
    split = [t for t in every if t != first]
    by_position = set(sorted(split)[1::2])
    target = next(r for r in theirs if r["task_id"] != first and (not shift or r["task_id"] in by_position))
    shutil.copytree(folders[1], dest)
    path = dest / "reciter.jsonl"
    lines = list(read_jsonl(path))
    calls, verdict = lines[:-1], lines[-1]
    forged = {**target, "sample": 2, "answer": _gold(repo, target["task_id"]), "score": 1.0}
    blank = {"best": None, "mean": None, "samples": 0, "memorized": None}
    if shift:
        share = {t for t in by_position if t in probed}
        assert target["task_id"] in share
        calls = [r for r in calls if r["task_id"] in share]
        verdict = {**verdict, "shard_of": split, "tasks": {t: verdict["tasks"].get(t, blank) for t in sorted(share)}}
    else:
        verdict = {**verdict, "tasks": {**verdict["tasks"], target["task_id"]: blank}}
    write_jsonl_atomic(path, [*calls, forged, verdict])
    return dest, target["task_id"]


@pytest.mark.parametrize("shift", [False, True], ids=["its-tasks", "its-split"])
def test_a_shard_verdict_claiming_another_shards_task_is_refused(shards: tuple[Path, list[Path]], tmp_path: Path,
                                                                 shift: bool) -> None:
    """hatk37: a shard's verdict line was taken at its word for the tasks it judged, and so for the calls the
    merge took from it: shard 2/2 claiming a task of shard 1/2 (in its ``tasks``, or by a ``shard_of`` of its own
    that puts it in its share) had its crafted call of that task counted (the gold recited: the task flagged)."""
    repo, folders = shards
    bad, task = _claiming(shards, tmp_path / "bad", shift=shift)
    why = rf"its verdict line claims task {task}, which is shard 1/2's \(a task's shard is its id's sha256 mod 2"
    _merge_refused(repo, [folders[0], bad], tmp_path / "merged", why)


def test_a_lone_shard_stating_a_crafted_split_is_refused(shards: tuple[Path, list[Path]], tmp_path: Path) -> None:
    """hatk37: a lone shard states the selection it split (``shard_of``), which a merge cannot derive on its own
    (the modify-tasks hook, the memorized tasks left out, ``--max-tasks``): one whose crafted ``shard_of`` put
    another shard's task in its share by position was refused only beside a shard of the real split. shard38: a
    task's shard is its id's (sha256 mod N, plus 1), so no stated split puts it in another share."""
    repo, _ = shards
    bad, task = _claiming(shards, tmp_path / "bad", shift=True)
    _merge_refused(repo, [bad], tmp_path / "merged",
                   rf"{re.escape(str(bad / 'reciter.jsonl'))}: its verdict line claims task {task}, which is shard "
                   "1/2's")


def test_a_shard_verdict_of_the_split_by_position_is_refused(shards: tuple[Path, list[Path]], tmp_path: Path) -> None:
    """shard38: a verdict line without ``split: "sha256"`` was made under the split by position, whose share rests on
    the selection it states: refused whole, beside shards of the new split too, one line saying to run it again."""
    repo, folders = shards
    dest = tmp_path / "old"
    shutil.copytree(folders[1], dest)
    lines = list(read_jsonl(dest / "reciter.jsonl"))
    assert lines[-1]["split"] == "sha256"
    write_jsonl_atomic(dest / "reciter.jsonl", [*lines[:-1], {k: v for k, v in lines[-1].items() if k != "split"}])
    _merge_refused(repo, [folders[0], dest], tmp_path / "merged",
                   rf"{re.escape(str(dest / 'reciter.jsonl'))}: a shard split by position, the rule before shard38 "
                   r"\(its verdict line has no split: \"sha256\"\); run that shard again")


def test_each_shard_verdict_keeps_the_split_it_judged_a_share_of(shards: tuple[Path, list[Path]]) -> None:
    """The verdict of ``--shard K/N`` keeps ``shard_of`` (the probe's selection); its ``tasks`` are exactly its
    share of it that adds code."""
    repo, folders = shards
    every = [t.id for t in load_tasks(repo / ".homefield" / "tasks.jsonl")]
    for k, folder in enumerate(folders, start=1):
        verdict = list(read_jsonl(folder / "reciter.jsonl"))[-1]
        assert verdict["shard"] == f"{k}/2" and verdict["shard_of"] == every
        assert set(verdict["tasks"]) == {t for t in Shard(k, 2).select(every) if code_tokens(_gold(repo, t))}
