"""mine/mine_shards.py (issue 17): ``homefield mine --shard K/N`` on three machines, merged with ``homefield
mine --merge``, equals one unsharded mine; what must not be merged is refused before anything is written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.e2e_repo import MINED_STABILITY, homefield, homefield_in_process

from pytest_homefield.commands.status import status_lines
from pytest_homefield.errors import ShardMergeError
from pytest_homefield.layout import HomefieldDir, write_meta
from pytest_homefield.mine.mine_shards import merge_mines
from pytest_homefield.mine.pipeline import candidates_digest
from pytest_homefield.records import Task
from pytest_homefield.shard import shard_of_id
from pytest_homefield.store import read_jsonl, write_jsonl_atomic


def _tasks(repo: Path) -> list[dict[str, Any]]:
    """tasks.jsonl in file order, without the verification timings."""
    return [{k: v for k, v in t.items() if k != "verify"} for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]


def _only_mine(repo: Path) -> Path:
    (d,) = sorted((repo / ".homefield" / "mine").iterdir())
    return d


@pytest.mark.slow
def test_three_mining_shards_merged_equal_one_mine(mined: Path, tmp_path: Path) -> None:
    # `mined` is the fixture repository mined unsharded (--stability-runs MINED_STABILITY), once per session
    one = _only_mine(mined)
    machines = []
    for k in (1, 2, 3):
        machine = tmp_path / f"machine{k}"
        shutil.copytree(mined, machine, symlinks=True, ignore=shutil.ignore_patterns(".homefield"))
        proc = homefield(machine, "mine", "--stability-runs", MINED_STABILITY, "-n", "0", "--shard", f"{k}/3")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"Shard {k}/3: " in proc.stdout and "homefield mine --merge DIR" in proc.stdout
        assert json.loads((_only_mine(machine) / "meta.json").read_text())["shard"] == f"{k}/3"
        machines.append(machine)
    merged = tmp_path / "merged"
    shutil.copytree(mined, merged, symlinks=True, ignore=shutil.ignore_patterns(".homefield"))
    # the three ways to name a shard: its clone, its .homefield/, its mine folder (the CI artifact)
    sources = [str(machines[0]), str(machines[1] / ".homefield"), str(_only_mine(machines[2]))]
    proc = homefield(merged, "mine", "--merge", *sources)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n_tasks, n_cand = len(_tasks(mined)), len(list(read_jsonl(one / "candidates.jsonl")))
    assert f"Merged 3 mine folders (1/3, 2/3, 3/3): {n_tasks} tasks from {n_cand} candidates; {n_tasks} tasks in " \
        ".homefield/tasks.jsonl" in proc.stdout
    assert "Dropped: 2 commits at the scan, before any test (docs only 1, root commit 1)" in proc.stdout
    assert _tasks(merged) == _tasks(mined)
    assert {t["env_fingerprint"] for t in _tasks(merged)} <= {p.stem for p in (merged / ".homefield/envs").iterdir()}
    new = max((merged / ".homefield" / "mine").iterdir())
    assert list(read_jsonl(new / "candidates.jsonl")) == list(read_jsonl(one / "candidates.jsonl"))
    assert [r["id"] for r in read_jsonl(new / "results.jsonl")] == [c["commit"][:12] for c in
                                                                     read_jsonl(one / "candidates.jsonl")]
    # a shard missing: refused, nothing written
    before = (merged / ".homefield" / "tasks.jsonl").read_bytes()
    proc = homefield_in_process(merged, "mine", "--merge", sources[0], sources[2])  # the merge above: a process
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("homefield mine --merge: incomplete: shard 2/3 missing; nothing written (a task "
                                   "set without a shard's tasks is a different benchmark): merge every shard")
    assert (merged / ".homefield" / "tasks.jsonl").read_bytes() == before


def _folder(root: Path, name: str, shard: str | None, records: list[dict[str, Any]],
            commits: tuple[str, ...] = ("a" * 40, "b" * 40, "c" * 40)) -> Path:
    d = root / name
    d.mkdir(parents=True)
    write_meta(d, {"kind": "mine", "mine_id": name, "shard": shard, "candidate_ids": [c[:12] for c in commits],
                   "candidates_digest": candidates_digest(commits), "max_tasks": None,
                   **({"split": "sha256"} if shard else {})})
    write_jsonl_atomic(d / "candidates.jsonl", [{"commit": r["commit"]} for r in records])
    write_jsonl_atomic(d / "results.jsonl", records)
    write_jsonl_atomic(d / "scan.jsonl", [])
    return d


def _record(commit: str, reason: str | None, seconds: float = 1.0) -> dict[str, Any]:
    day = f"2026-01-0{'abc'.index(commit[0]) + 1}T12:00:00+00:00"
    task = None if reason else Task(
        id=commit[:12], commit=commit, parent="0" * 40, committed_at=day, authored_at=day, mode="commit",
        subject="Add x", message="Add x", prompt="Add x", source_files=["x.py"], test_files=["t.py"],
        test_patch="", gold_patch="", FAIL_TO_PASS=["t.py::x"], PASS_TO_PASS=[],
        verify={"parent_s": seconds}).to_dict()
    return {"commit": commit, "id": commit[:12], "reason": reason, "FAIL_TO_PASS": 0 if reason else 1,
            "seconds": seconds, **({"task": task} if task else {})}


def test_overlaps_agreeing_are_counted_once_disagreeing_refused(tmp_path: Path) -> None:
    b, a, c = "a" * 40, "b" * 40, "c" * 40  # scanned in that order: b (the oldest), a, c
    assert [shard_of_id(x[:12], 2) for x in (a, b, c)] == [1, 2, 1]
    # the split of [a, b, c] by id hash: shard 1/2 {a, c}, 2/2 {b}; a shard given twice (s1 again, timing aside)
    # agrees
    s1 = _folder(tmp_path / "in", "s1", "1/2", [_record(a, None), _record(c, "flaky")])
    s1b = _folder(tmp_path / "in", "s1b", "1/2", [_record(a, None, seconds=9.0)])
    s2 = _folder(tmp_path / "in", "s2", "2/2", [_record(b, None)])
    repo = tmp_path / "repo"
    repo.mkdir()
    m = merge_mines([s1, s1b, s2], repo)
    assert m.reconciled == 1 and [t.id for t in m.tasks] == [a[:12], b[:12]]  # newest commit first
    assert [r["id"] for r in m.records] == [b[:12], a[:12], c[:12]]  # scan order
    assert "Dropped: 1 of 3 candidates verified (flaky 1)" in m.lines(repo)
    s3 = _folder(tmp_path / "in", "s3", "1/2", [_record(a, "reference_fails")])
    with pytest.raises(ShardMergeError, match=rf"candidate {a[:12]} was verified in .*s1 \(kept\) and in .*s3 "
                                              r"\(reference fails\) with different results"):
        merge_mines([s1, s3, s2], repo)
    # hatk36: a shard's word on another shard's candidate was taken (s1 lacking a verdict on it, e.g. its time
    # budget ran out): its candidates and records must be its share of the scan
    s1_short = _folder(tmp_path / "in", "s1-short", "1/2", [_record(c, "flaky")])
    for claims in ([_record(b, None), _record(a, None)], [_record(b, None)] * 1):
        s2_claims = _folder(tmp_path / "in", f"s2-claims-{len(claims)}", "2/2", claims)
        if len(claims) == 1:  # only the record, not the candidate line
            (s2_claims / "results.jsonl").write_text((s2_claims / "results.jsonl").read_text()
                                                     + json.dumps(_record(a, None)) + "\n")
        with pytest.raises(ShardMergeError, match=rf"candidate {a[:12]} is not in shard 2/2's share of the scan"):
            merge_mines([s1_short, s2_claims], repo)
    scan_b = _folder(tmp_path / "in", "scan-b", "2/2", [_record(b, None)])
    _mutate_meta(scan_b, candidate_ids=[a[:12], b[:12], c[:12]])
    with pytest.raises(ShardMergeError, match="record different scans"):
        merge_mines([s1, scan_b], repo)
    assert sorted((repo / ".homefield").glob("mine/*")) == [m.mine_dir]  # the refused merges wrote nothing
    other = _folder(tmp_path / "in", "other", "2/2", [_record(b, None)], commits=(a, b))
    with pytest.raises(ShardMergeError, match="were frozen from different candidates"):
        merge_mines([s1, other], repo)
    four = _folder(tmp_path / "in", "four", "2/4", [_record(b, None)])
    with pytest.raises(ShardMergeError, match=r"shards of different splits \(.*\(1/2\), .*\(2/4\)\)"):
        merge_mines([s1, four], repo)
    old = tmp_path / "in" / "old"
    shutil.copytree(s2, old)
    (old / "meta.json").unlink()
    with pytest.raises(ShardMergeError, match="has no mining meta.json"):
        merge_mines([s1, old], repo)
    with pytest.raises(ShardMergeError, match="is not a mine folder"):
        merge_mines([tmp_path / "nowhere"], repo)
    # shard38: a shard of the split by position (no split in its meta.json) is refused whole, beside shards of the
    # new split or alone
    by_position = tmp_path / "in" / "by-position"
    shutil.copytree(s2, by_position)
    _mutate_meta(by_position, split=None)
    for folders in ([s1, by_position], [by_position]):
        with pytest.raises(ShardMergeError, match=r"by-position: a shard split by position, the rule before shard38 "
                                                  r"\(its meta.json has no split: \"sha256\"\); run that shard again"):
            merge_mines(folders, repo)
    assert sorted((repo / ".homefield").glob("mine/*")) == [m.mine_dir]


def _mutate_meta(d: Path, **changes: Any) -> None:
    meta = json.loads((d / "meta.json").read_text())
    write_meta(d, {**meta, **changes})


def test_crafted_mine_folders_are_refused_in_one_line_and_their_links_never_followed(tmp_path: Path) -> None:
    """atk12 F6: a ``candidates.jsonl`` line without a commit, a ``meta.json`` without (or with a wrong type
    of) ``candidate_ids`` made tracebacks; a symlinked ``envs/*.json`` in the artifact copied any readable
    file into this ``.homefield/envs/``. Each is one line and exit 2 now, and nothing is written."""
    a = "a" * 40
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    secret = tmp_path / "secret"
    secret.write_text("SECRET host file")
    crafted = {
        "no-commit": lambda d: write_jsonl_atomic(d / "candidates.jsonl", [{}]),
        "no-candidate-ids": lambda d: write_meta(d, {k: v for k, v in json.loads((d / "meta.json").read_text()).items()
                                                     if k != "candidate_ids"}),
        "int-candidate-ids": lambda d: _mutate_meta(d, candidate_ids=5),
        "text-max-tasks": lambda d: _mutate_meta(d, max_tasks="3"),
        "linked-env": lambda d: (d.parent.parent / "envs" / "zz-evil.json").symlink_to(secret),
        "env-not-an-object": lambda d: (d.parent.parent / "envs" / "zz-list.json").write_text("[1]"),
        # satk60: the records themselves linked to a host file, or a line without end (sparse: no disk)
        "linked-results": lambda d: (os.replace(d / "results.jsonl", tmp_path / f"{d.name}-results.jsonl"),
                                     (d / "results.jsonl").symlink_to(tmp_path / f"{d.name}-results.jsonl")),
        "endless-line": lambda d: os.truncate(d / "results.jsonl", 100 << 20),
    }
    expected = {"no-commit": "line 1: no 'commit'", "no-candidate-ids": "field 'candidate_ids' is missing",
                "int-candidate-ids": "field 'candidate_ids' must be a list of strings",
                "text-max-tasks": "field 'max_tasks' must be an integer or null",
                "linked-env": "zz-evil.json: not an environment description (a symlink",
                "env-not-an-object": "zz-list.json: not an environment description (not a JSON object)",
                "linked-results": "results.jsonl: a symlink, never followed",
                "endless-line": "results.jsonl: line 2: longer than"}
    for i, (name, craft) in enumerate(crafted.items()):
        d = _folder(tmp_path / name / ".homefield" / "mine", "m1", None, [_record(a, None)])
        (d.parent.parent / "envs").mkdir()
        (d.parent.parent / "envs" / "good.json").write_text('{"python": "3.11"}')
        craft(d)
        # the first through the command's own process, the others through the same main() in this one
        proc = (homefield if i == 0 else homefield_in_process)(repo, "mine", "--merge", str(d))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (name, proc.stderr[-2000:])
        assert proc.stderr.startswith("homefield mine --merge: ") and expected[name] in proc.stderr, (name, proc.stderr)
        assert not (repo / ".homefield" / "envs").exists() and not (repo / ".homefield" / "tasks.jsonl").exists()
    d = _folder(tmp_path / "fine" / ".homefield" / "mine", "m1", None, [_record(a, None)])
    (d.parent.parent / "envs").mkdir()
    (d.parent.parent / "envs" / "good.json").write_text('{"python": "3.11"}')
    m = merge_mines([d], repo)
    assert [t.id for t in m.tasks] == [a[:12]]
    assert (repo / ".homefield" / "envs" / "good.json").read_text() == '{"python": "3.11"}'


@pytest.mark.usefixtures("cli_spelling")
def test_a_shard_leaving_candidates_of_its_share_unverified_makes_the_merge_incomplete(tmp_path: Path) -> None:
    """ops40: ``mine --merge`` checked each shard's candidates and records against its share, but not that the
    share was all there: a shard whose folder lacked a verdict on candidates of its own share (a bound stopped
    it, it was killed, a record removed) was merged as a whole shard, its candidates gone from tasks.jsonl
    unsaid. Each such shard is now a line ``incomplete: shard K/N left out …``, in the summary and in the new
    folder's ``meta.json`` ``incomplete``; a ``max_tasks`` record counts as done only where the shard kept its
    ``--max-tasks`` N."""
    b, a, c = "a" * 40, "b" * 40, "c" * 40  # shard 1/2 {a, c}, 2/2 {b}
    repo = tmp_path / "repo"
    repo.mkdir()
    s2 = _folder(tmp_path / "in", "s2", "2/2", [_record(b, None)])
    whole = _folder(tmp_path / "in", "whole", "1/2", [_record(a, None), _record(c, "flaky")])
    assert merge_mines([whole, s2], repo).incomplete == []
    bound = {"commit": c, "id": c[:12], "reason": "not_verified", "stop": "time_budget"}
    stopped = _folder(tmp_path / "in", "stopped", "1/2", [_record(a, None), bound])
    m = merge_mines([stopped, s2], repo)
    line = (f"incomplete: shard 1/2 left out 1 candidate of its share of the scan ({c[:12]}): 1 not verified at a "
            "bound; mine that shard again (--resume) and merge again")
    assert m.incomplete == [line] and line in m.lines(repo)
    assert json.loads((m.mine_dir / "meta.json").read_text())["incomplete"] == [line]
    # the same shard given twice, one folder whole: nothing left out
    assert merge_mines([stopped, whole, s2], repo).incomplete == []
    lacking = _folder(tmp_path / "in", "lacking", "1/2", [_record(a, None)])  # c neither a candidate nor a record
    assert merge_mines([lacking, s2], repo).incomplete == [
        f"incomplete: shard 1/2 left out 1 candidate of its share of the scan ({c[:12]}): 1 no verification record; "
        "mine that shard again (--resume) and merge again"]
    # --max-tasks 1: shard 1/2 kept a, so c's max_tasks record is its cut; a shard claiming the cut while it kept
    # nothing left c out
    cut = {"commit": c, "id": c[:12], "reason": "max_tasks"}
    for name, first, incomplete in (("cut", _record(a, None), False), ("no-cut", _record(a, "flaky"), True)):
        folder = _folder(tmp_path / "in", name, "1/2", [first, cut])
        other = _folder(tmp_path / "in", f"{name}-s2", "2/2", [_record(b, None)])
        for d in (folder, other):
            _mutate_meta(d, max_tasks=1)
        said = merge_mines([folder, other], repo).incomplete
        assert said == ([f"incomplete: shard 1/2 left out 1 candidate of its share of the scan ({c[:12]}): 1 cut at "
                         "--max-tasks before its N were kept; mine that shard again (--resume) and merge again"]
                        if incomplete else []), said


@pytest.mark.usefixtures("cli_spelling")
def test_status_says_a_merged_mine_is_incomplete_and_why(tmp_path: Path) -> None:
    """ops41: ``homefield status`` said a merged mine whose shard left a candidate of its share unverified
    ``stopped`` (or ``finished``, when that shard's folder had lost the candidate), never the merge's ``incomplete``
    lines; it says ``incomplete`` now, each line of the merged ``meta.json`` under the mine's line, as a run's line
    says it is a subset. A whole merge stays ``finished``."""
    b, a, c = "a" * 40, "b" * 40, "c" * 40  # shard 1/2 {a, c}, 2/2 {b}
    repo = tmp_path / "repo"
    repo.mkdir()
    s2 = _folder(tmp_path / "in", "s2", "2/2", [_record(b, None)])
    whole = _folder(tmp_path / "in", "whole", "1/2", [_record(a, None), _record(c, "flaky")])
    done = merge_mines([whole, s2], repo, now="2026-12-01T10:00:00+00:00").mine_dir
    bound = {"commit": c, "id": c[:12], "reason": "not_verified", "stop": "time_budget"}
    stopped = _folder(tmp_path / "in", "stopped", "1/2", [_record(a, None), bound])
    m = merge_mines([stopped, s2], repo, now="2026-12-02T10:00:00+00:00")
    lacking = _folder(tmp_path / "in", "lacking", "1/2", [_record(a, None)])  # c gone from its candidates too
    gone = merge_mines([lacking, s2], repo, now="2026-12-03T10:00:00+00:00")
    lines = status_lines(HomefieldDir(repo))
    said = ("incomplete: shard 1/2 left out 1 candidate of its share of the scan ({c}): 1 {why}; mine that shard "
            "again (--resume) and merge again")
    assert lines[1:7] == [
        f"  {gone.mine_dir.name}  incomplete (1 line below) · started 2026-12-03 10:00 UTC · 2 of 2 candidates "
        "verified, 2 kept",
        "    " + said.format(c=c[:12], why="no verification record"),
        f"  {m.mine_dir.name}  incomplete (1 line below) · started 2026-12-02 10:00 UTC · 2 of 3 candidates "
        "verified, 2 kept",
        "    " + said.format(c=c[:12], why="not verified at a bound"),
        f"  {done.name}  finished · started 2026-12-01 10:00 UTC · 3 of 3 candidates verified, 2 kept",
        "runs: none in .homefield/runs"], lines


@pytest.mark.slow
def test_mining_shards_stopped_by_a_bound_merge_as_incomplete(mined: Path, tmp_path: Path) -> None:
    """ops40, end to end on the fixture repository: the shard holding two of the three candidates is mined with
    ``--stop-after-tasks 1`` (its second candidate ``not_verified``), the other whole (both reuse the fixture's
    verifications); ``homefield mine --merge`` says the shard left a candidate of its share out and the merged
    folder records it; a shard's record removed by hand is said the same way."""
    ids = [c["commit"][:12] for c in read_jsonl(_only_mine(mined) / "candidates.jsonl")]
    big = max((1, 2), key=lambda k: sum(shard_of_id(i, 2) == k for i in ids))
    share = [i for i in ids if shard_of_id(i, 2) == big]
    assert len(share) == 2, ids
    folders = []
    for k in (1, 2):
        machine = tmp_path / f"machine{k}"
        shutil.copytree(mined, machine, symlinks=True)
        bound = ["--stop-after-tasks", "1"] if k == big else []
        proc = homefield(machine, "mine", "--stability-runs", MINED_STABILITY, "-n", "0", "--shard", f"{k}/2", *bound)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        folders.append(max((machine / ".homefield" / "mine").iterdir()))
    merged = tmp_path / "merged"
    shutil.copytree(mined, merged, symlinks=True, ignore=shutil.ignore_patterns(".homefield"))
    proc = homefield_in_process(merged, "mine", "--merge", *map(str, folders))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = (f"incomplete: shard {big}/2 left out 1 candidate of its share of the scan ({share[1]}): 1 not verified "
            "at a bound; mine that shard again (--resume) and merge again")
    assert line in proc.stdout.splitlines(), proc.stdout
    new = max((merged / ".homefield" / "mine").iterdir())
    assert json.loads((new / "meta.json").read_text())["incomplete"] == [line]
    assert share[1] not in {t["id"] for t in _tasks(merged)}
    # the other shard's record removed by hand (as a killed session leaves it)
    small = folders[2 - big]
    (small / "results.jsonl").write_text("")
    proc = homefield_in_process(merged, "mine", "--merge", *map(str, folders))
    gone = [i for i in ids if shard_of_id(i, 2) != big]
    assert (f"incomplete: shard {3 - big}/2 left out 1 candidate of its share of the scan ({gone[0]}): 1 no "
            "verification record; mine that shard again (--resume) and merge again") in proc.stdout, proc.stdout


def test_a_merge_removes_an_older_copy_the_shards_scan_set_aside(tmp_path: Path) -> None:
    """link52: the shards' one scan set ``d`` aside as ``duplicate_change`` (``same_as`` ``b``); ``tasks.jsonl``
    holds ``d`` from a mine before filter 12. Before, the merge kept it beside ``b`` (one fix counted twice) where one
    mine removes it; now it is removed and said. An older copy whose newer copy is no task stays."""
    b, a, c, d = "a" * 40, "b" * 40, "c" * 40, "d" * 40  # shard 1/2 {a, c}, 2/2 {b}
    repo = tmp_path / "repo"
    old = {**_record(b, None)["task"], "id": d[:12], "commit": d}
    gone = {**_record(b, None)["task"], "id": "e" * 12, "commit": "e" * 40}
    write_jsonl_atomic(repo / ".homefield" / "tasks.jsonl", [old, gone])
    s1 = _folder(tmp_path / "in", "s1", "1/2", [_record(a, None), _record(c, "flaky")])
    s2 = _folder(tmp_path / "in", "s2", "2/2", [_record(b, None)])
    for s in (s1, s2):
        write_jsonl_atomic(s / "scan.jsonl", [
            {"commit": d, "reason": "duplicate_change", "detail": f"the same change as {b[:12]}", "same_as": b},
            {"commit": "e" * 40, "reason": "duplicate_change", "detail": f"the same change as {c[:12]}",
             "same_as": c}])
    m = merge_mines([s1, s2], repo)
    assert sorted(t.id for t in m.tasks) == sorted([a[:12], b[:12], "e" * 12])  # before: d[:12] too
    assert m.removed == [d[:12]]
    assert f"Removed from tasks.jsonl: 1 task ({d[:12]}) that an earlier mine kept" in "\n".join(m.lines(repo))
