"""--shard K/N (issue 17): three shards run separately (separate .homefield/ folders) and reported
together give the same per-task outcomes and the same report as one run of the same seeded sim:
agents, whether a shard runs at -n 0 or at -n 2 inside."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield, homefield_in_process
from helpers.reports import mask
from helpers.shared_repo import built_once

from pytest_homefield.shard import Shard
from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow

AGENTS = ("--agent", "sim:0.5", "--agent", "noop", "--attempts", "2")


def outcomes(run: Path) -> list[tuple[str, str, int, str]]:
    return sorted((r["task_id"], r["agent"], r["attempt"], r["outcome"]) for r in read_jsonl(run / "results.jsonl"))


@pytest.fixture(scope="session")
def one_run(mined: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """A copy of ``mined`` with one unsharded run ``one`` of :data:`AGENTS` at -n 0: the reference both
    parametrizations compare their shards with (read only), made once per test session."""

    def make(repo: Path) -> None:
        building = repo.with_name("building")  # moved into place only once the run succeeded
        shutil.rmtree(building, ignore_errors=True)
        copy_mined(mined, building)
        proc = homefield(building, "run", *AGENTS, "--run-id", "one", "-n", "0")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        building.rename(repo)

    return built_once(tmp_path_factory, testrun_uid, "shards-one-run", make)


#: -n of each shard's run: one shard goes through xdist, the others run in-process, and all three
#: merged must equal the one unsharded run at -n 0 (so the outcomes at -n 0 and -n 2 agree too).
SHARD_N = {1: "0", 2: "2", 3: "0"}


def test_three_shards_merged_equal_one_run(mined: Path, one_run: Path, tmp_path: Path) -> None:
    one = one_run
    merged = copy_mined(mined, tmp_path / "merged")
    shard_tasks = []
    ids = [json.loads(line)["id"] for line in (one / ".homefield" / "tasks.jsonl").read_text().splitlines()]
    for k in (1, 2, 3):
        machine = copy_mined(mined, tmp_path / f"machine{k}")
        proc = homefield(machine, "run", *AGENTS, "--shard", f"{k}/3", "--run-id", f"s{k}", "-n", SHARD_N[k],
                         "--budget", "9")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        mine = Shard(k, 3).select(ids)
        assert f"homefield shard {k}/3: {len(mine)} of the tasks; budget 9.00 USD split evenly over 3 shards: " \
            "3.00 USD here" in proc.stdout
        assert {o[0] for o in outcomes(machine / ".homefield" / "runs" / f"s{k}")} == mine
        run = machine / ".homefield" / "runs" / f"s{k}"
        assert json.loads((run / "meta.json").read_text())["shard"] == f"{k}/3"
        shard_tasks.append({o[0] for o in outcomes(run)})
        shutil.copytree(run, merged / ".homefield" / "runs" / f"s{k}")  # the CI artifact
    assert len(set().union(*shard_tasks)) == sum(map(len, shard_tasks)) == len(ids)  # disjoint, complete
    single = one / ".homefield" / "runs" / "one"
    assert sorted(o for k in (1, 2, 3) for o in outcomes(merged / ".homefield/runs" / f"s{k}")) == outcomes(single)
    proc = homefield(merged, "report", "s1", "s2", "s3", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report.pop("incomplete") == []
    assert mask(report) == mask(json.loads((single / "report.json").read_text()))
    # a missing shard is said, not silently reported as the whole (the report above ran in a process of its own;
    # these in this one, through the same main())
    proc = homefield_in_process(merged, "report", "s1", "s3", "--format", "json")
    assert proc.returncode == 0 and "incomplete: shard 2/3 missing" in proc.stderr
    assert json.loads(proc.stdout)["incomplete"] == ["incomplete: shard 2/3 missing"]
    # shard38: split by each id's hash, shard 2/3 of these 3 tasks holds none: its run made its folder (no results)
    # and the merge above counted it as that shard
    assert json.loads((merged / ".homefield/runs/s2/meta.json").read_text())["task_ids"] == []
    assert [len(t) for t in shard_tasks] == [1, 0, 2]
    # atk17 M1: a line a shard's session could not have written (another shard's task, an attempt past
    # --attempts) is refused, not counted: appended to s3's results, it lifted an agent from #2 to #1
    s3_results = merged / ".homefield/runs/s3/results.jsonl"
    kept = s3_results.read_text()
    s1_line = json.loads((merged / ".homefield/runs/s1/results.jsonl").read_text().splitlines()[0])
    for forged in ({**s1_line, "run_id": "s3"}, {**json.loads(kept.splitlines()[0]), "attempt": 7}):
        s3_results.write_text(kept + json.dumps(forged) + "\n")
        proc = homefield_in_process(merged, "report", "s1", "s2", "s3")
        assert proc.returncode == 2 and "run s3 has a result its session could not have written" in proc.stderr, \
            proc.stdout + proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    s3_results.write_text(kept)
    # hatk36: a shard's meta.json was taken at its word: s3 claiming s1's task (its task_ids and a line of it)
    # had that line counted, s1 absent (report s2 s3: exit 0, the task "solved" by s3's word)
    s3_meta = merged / ".homefield/runs/s3/meta.json"
    meta_text = s3_meta.read_text()
    s3 = json.loads(meta_text)
    assert s3["shard_of"] == ids and s3["split"] == "sha256"  # what the shards split and how, kept by each
    claimed = {**s1_line, "run_id": "s3", "outcome": "solved", "solved": True}
    s3_results.write_text(kept + json.dumps(claimed) + "\n")
    for meta in ({**s3, "task_ids": [*s3["task_ids"], s1_line["task_id"]]},  # its word, kept since the shard ran
                 {k: v for k, v in s3.items() if k != "shard_of"} | {"task_ids": [*s3["task_ids"], s1_line["task_id"]]},
                 # …or its selection too, beside s2's
                 {**s3, "task_ids": sorted(Shard(3, 3).select([*ids, "zz"])), "shard_of": [*ids, "zz"]}):
        s3_meta.write_text(json.dumps(meta))
        for runs in (("s3",), ("s2", "s3"), ("s1", "s2", "s3")):
            proc = homefield_in_process(merged, "report", *runs)
            assert proc.returncode == 2, (runs, meta.get("shard_of"), proc.stdout + proc.stderr)
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            whys = ("which is shard 1/3's", "not in this repository", "split different selections")
            assert "run s3" in proc.stderr and any(w in proc.stderr for w in whys), proc.stderr
    s3_results.write_text(kept)
    s3_meta.write_text(json.dumps({**s3, "task_ids": s3["task_ids"][1:]}))  # less than its share: refused too
    proc = homefield_in_process(merged, "report", "s1", "s2", "s3")
    assert proc.returncode == 2 and "of its share is not among them" in proc.stderr, proc.stderr
    s3_meta.write_text(json.dumps({k: v for k, v in s3.items() if k != "shard_of"}))  # no shard_of: tasks.jsonl's
    proc = homefield_in_process(merged, "report", "s1", "s2", "s3")
    assert proc.returncode == 0, proc.stderr  # its share checked against tasks.jsonl: it is
    # shard38: a shard of the split by position (no split: "sha256" in its meta.json) is refused, one line, even
    # with its share exact: a rogue shard would state that rule to get round the check of its tasks
    s3_meta.write_text(json.dumps({k: v for k, v in s3.items() if k != "split"}))
    for runs in (("s3",), ("s1", "s2", "s3")):
        proc = homefield_in_process(merged, "report", *runs)
        assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
            'homefield report: run s3: a shard split by position, the rule before shard38 (its meta.json has no '
            'split: "sha256"); run that shard again with this homefield; report it apart or run that shard again'], \
            proc.stderr
    s3_meta.write_text(meta_text)
    # shard39: shards stating a smaller selection (one of s3's tasks dropped from every shard_of, s3's task_ids and
    # results) hold exactly their shares of it: taken, the task unsaid, alone or merged. Now said, as a missing shard
    dropped = s3["task_ids"][0]
    run_files = {k: merged / f".homefield/runs/s{k}/meta.json" for k in (1, 2, 3)}
    run_texts = {k: m.read_text() for k, m in run_files.items()}
    for k, m in run_files.items():
        one_meta = json.loads(run_texts[k])
        m.write_text(json.dumps({**one_meta, "shard_of": [i for i in ids if i != dropped],
                                 "task_ids": [i for i in one_meta["task_ids"] if i != dropped]}))
    s3_results.write_text("".join(ln + "\n" for ln in kept.splitlines() if json.loads(ln)["task_id"] != dropped))
    said = f"incomplete: shard 3/3 left out 1 task(s) of its share of tasks.jsonl ({dropped}): "
    for runs, missing in ((("s3",), ["incomplete: shard 1/3 missing", "incomplete: shard 2/3 missing"]),
                          (("s1", "s2", "s3"), [])):
        proc = homefield_in_process(merged, "report", *runs, "--format", "json")
        assert proc.returncode == 0 and said in proc.stderr, (runs, proc.stderr)
        assert [line[:len(said)] for line in json.loads(proc.stdout)["incomplete"]] == [*missing, said]
    for k, m in run_files.items():
        m.write_text(run_texts[k])
    s3_results.write_text(kept)
    # ops40: every shard stating --max-tasks 1 "of 1" (the first task of tasks.jsonl's 3; shard_of, task_ids and
    # results cut to it, as such a session writes them) held exactly its share: the report's --max-tasks note,
    # which says a cut only where n < of, said nothing, and no line said the other two tasks were in no rate
    result_files = {k: merged / f".homefield/runs/s{k}/results.jsonl" for k in (1, 2, 3)}
    result_texts = {k: f.read_text() if f.exists() else None for k, f in result_files.items()}  # a shard may hold none
    for k, m in run_files.items():
        m.write_text(json.dumps({**json.loads(run_texts[k]), "shard_of": ids[:1], "max_tasks": {"n": 1, "of": 1},
                                 "task_ids": sorted(Shard(k, 3).select(ids[:1]))}))
        result_files[k].write_text("".join(ln + "\n" for ln in (result_texts[k] or "").splitlines()
                                           if json.loads(ln)["task_id"] == ids[0]))
    owner = next(k for k in (1, 2, 3) if Shard(k, 3).owns(ids[0]))
    for runs in (("s1", "s2", "s3"), (f"s{owner}",)):  # merged, and the shard holding the task alone
        proc = homefield_in_process(merged, "report", *runs, "--format", "json")
        said = [line for line in json.loads(proc.stdout)["incomplete"] if "states --max-tasks" in line]
        assert proc.returncode == 0 and len(said) == len(runs), (runs, proc.stderr)
        assert said[0].endswith("states --max-tasks 1 of 1 tasks, but this repository's tasks.jsonl holds 3 less the "
                                "memorized tasks it states it left out: the 2 past its cut are in no rate"), said
    # shards stating different cuts (one's cut keeps every task: the same selection) are said too
    for k, m in run_files.items():
        wider = {**json.loads(run_texts[k]), "max_tasks": {"n": 9, "of": 3}}
        m.write_text(run_texts[k] if k != 3 else json.dumps(wider))
        text = result_texts[k]
        result_files[k].write_text(text) if text is not None else result_files[k].unlink()
    proc = homefield_in_process(merged, "report", "s1", "s2", "s3", "--format", "json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["incomplete"] == [
        "incomplete: the shards state different --max-tasks (run s1: none, run s2: none, run s3: 9 of 3); each left "
        "out what its own states: run every shard with one --max-tasks"], proc.stderr
    for k, m in run_files.items():
        m.write_text(run_texts[k])
    # hatk37: a lone shard stating a split of its own (tasks.jsonl less some tasks) whose share by position (the
    # rule before shard38: the sorted selection's i-th id to shard i mod 3 + 1) holds another shard's task was
    # taken at its word (alone, nothing to compare it with): s1 claiming a task of s3; shard38: a task's shard
    # is its id's, whatever split a shard states
    s1_meta, s1_results = (merged / ".homefield/runs/s1" / n for n in ("meta.json", "results.jsonl"))
    s1_meta_text, s1_text = s1_meta.read_text(), s1_results.read_text()
    s3_line = json.loads(kept.splitlines()[0])
    target = s3_line["task_id"]
    crafted_split = next(split for j in range(len(ids))
                         for split in [[i for i in ids if i not in [x for x in sorted(ids) if x != target][:j]]]
                         if sorted(split).index(target) % 3 == 0)
    share = set(sorted(crafted_split)[0::3])
    s1_meta.write_text(json.dumps({**json.loads(s1_meta_text), "shard_of": crafted_split,
                                   "task_ids": [i for i in ids if i in share]}))
    s1_results.write_text("".join(ln + "\n" for ln in s1_text.splitlines() if json.loads(ln)["task_id"] in share)
                          + json.dumps({**s3_line, "run_id": "s1", "outcome": "solved", "solved": True}) + "\n")
    proc = homefield_in_process(merged, "report", "s1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"run s1: its meta.json claims task {target}, which is shard 3/3's" in proc.stderr, proc.stderr
    s1_meta.write_text(s1_meta_text)
    s1_results.write_text(s1_text)
    # shards of another tasks.jsonl than this repository's (all three the same): refused, one line
    metas = {k: merged / f".homefield/runs/s{k}/meta.json" for k in (1, 2, 3)}
    texts = {k: m.read_text() for k, m in metas.items()}
    for k, m in metas.items():
        m.write_text(json.dumps({**json.loads(texts[k]), "tasks_digest": "other"}))
    proc = homefield_in_process(merged, "report", "s1", "s2", "s3")
    assert proc.returncode == 2 and "is shard 1/3 of another tasks.jsonl" in proc.stderr, proc.stderr
    for k, m in metas.items():
        m.write_text(texts[k])
    # a run over another task set is refused with one line
    meta = merged / ".homefield/runs/s3/meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "tasks_digest": "other"}))
    proc = homefield_in_process(merged, "report", "s1", "s2", "s3")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        proc.stderr.strip().splitlines()[0]] and "are over different task sets" in proc.stderr


def test_run_gate_against_a_baseline_goes_into_junit(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    assert homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--run-id", "base", "-n", "0").returncode == 0
    junit = tmp_path / "j.xml"
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--fail-if-worse-than", "base",
                     "--junitxml", str(junit), "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # e2e_repo: 3 tasks (its root commit is dropped)
    assert "gate noop: pass@1 0.00 vs 0.00 in baseline base on 3 shared tasks" in proc.stdout
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["homefield.gate"] == "pass"
    assert props["homefield.gate.test"] == "one-sided exact McNemar, Holm over 1 agent, alpha 0.05"
    assert "gate: pass (one-sided exact McNemar, Holm over 1 agent, alpha 0.05)" in proc.stdout
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--fail-if-worse-than", "nope",
                     "--junitxml", str(junit), "-n", "0")
    assert proc.returncode == 1 and "gate error: --fail-if-worse-than: no baseline run 'nope'" in proc.stdout
    props = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert props["homefield.gate"].startswith("error: ")
