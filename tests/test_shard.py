"""pytest_homefield.shard: a deterministic split by a hash of each id."""

from __future__ import annotations

import hashlib

import pytest

from pytest_homefield.errors import ConfigError
from pytest_homefield.shard import (
    SPLIT,
    Shard,
    claim_refusal,
    left_out,
    old_split_refusal,
    parse_shard,
    shard_of_id,
    share_refusal,
    split_refusal,
    stated_cut_refusal,
    stated_mismatch,
)



def test_shards_partition_the_ids_by_each_ids_own_hash_whatever_the_selection() -> None:
    """shard38: a task's shard is a function of its id and N alone (sha256 mod N, plus 1), so it is the same in
    every selection that holds it: before, the i-th of the sorted selection went to shard i mod N + 1, and a
    selection of one task fewer moved every later task to another shard."""
    ids = [f"{i:012x}" for i in range(0, 700, 7)]
    parts = [parse_shard(f"{k}/3") for k in (1, 2, 3)]
    chosen = [p.select(ids) for p in parts if p]
    assert set().union(*chosen) == set(ids)
    assert sum(len(c) for c in chosen) == len(ids)
    assert all(chosen)  # roughly equal, not within one: 100 ids over 3 shards
    assert Shard(2, 3).select(reversed(ids)) == chosen[1]  # the file order does not matter
    assert Shard(2, 3).select(ids[1:]) == chosen[1] - {ids[0]}  # nor what else the selection holds
    for i in ids:
        assert shard_of_id(i, 3) == int(hashlib.sha256(i.encode()).hexdigest(), 16) % 3 + 1
        assert Shard(shard_of_id(i, 3), 3).owns(i) and sum(Shard(k, 3).owns(i) for k in (1, 2, 3)) == 1


def test_one_shard_is_everything_and_budget_splits() -> None:
    assert Shard(1, 1).select(["b", "a"]) == {"a", "b"}
    assert Shard(2, 4).split_budget(10.0) == 2.5 and Shard(1, 4).split_budget(None) is None
    assert str(Shard(3, 4)) == "3/4" and parse_shard(None) is None


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_bad_shards_are_one_line_errors(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--homefield-shard .*expected K/N with 1 <= K <= N"):
        parse_shard(text)


def test_a_shard_claims_exactly_its_share_of_what_it_split() -> None:
    """hatk36: a shard's meta.json task_ids are its share of its shard_of; shard38: each by its own id."""
    assert [shard_of_id(f"t{i}", 2) for i in range(8)] == [1, 1, 1, 1, 1, 2, 1, 2]
    repo = ["t5", "t1", "t4", "t2", "t3", "t0", "t7"]  # tasks.jsonl order
    every = repo[:5]  # --max-tasks 5
    mine = sorted(Shard(1, 2).select(every))  # t1 t2 t3 t4
    meta = {"shard": "1/2", "split": SPLIT, "shard_of": every, "task_ids": mine}
    assert share_refusal("s1", meta, repo) is None and claim_refusal("s1", meta) is None
    assert share_refusal("s1", {"shard": None, "task_ids": repo}, repo) is None  # no shard: not checked
    extra = share_refusal("s1", {**meta, "task_ids": [*mine, "t5"]}, repo)
    assert extra == ("s1: its meta.json claims task t5, which is shard 2/2's (a task's shard is its id's sha256 mod 2, "
                     "plus 1), not shard 1/2's")
    assert extra == claim_refusal("s1", {**meta, "task_ids": [*mine, "t5"]})  # no tasks.jsonl needed
    assert share_refusal("s1", {**meta, "task_ids": [*mine, "t0"]}, repo) == (
        "s1: its meta.json claims 5 tasks, not shard 1/2's 4 of the 5 it split (task t0 is not its share)")
    assert "task t1 of its share is not among them" in str(share_refusal("s1", {**meta, "task_ids": mine[1:]}, repo))
    assert "split task zz, which is not in this repository's tasks.jsonl" in str(
        share_refusal("s1", {**meta, "shard_of": [*every, "zz"]}, repo))
    assert "shard_of is not a list" in str(share_refusal("s1", {**meta, "shard_of": "t1"}, repo))
    # the shards of one merge split one selection
    assert split_refusal([("s1", meta), ("s2", {"shard": "2/2", "split": SPLIT, "shard_of": every})]) is None
    assert "s1 and s2 split different selections" in str(
        split_refusal([("s1", meta), ("s2", {"shard": "2/2", "split": SPLIT, "shard_of": repo})]))


def test_a_share_may_be_the_part_a_folder_holds() -> None:
    """hatk37: a probe's verdict judges only its share's tasks that add code (``kept``), named as its verdict line."""
    repo = ["t0", "t1", "t2", "t5"]
    meta = {"shard": "1/2", "split": SPLIT, "shard_of": repo, "task_ids": ["t0", "t1"]}
    assert share_refusal("p", meta, repo, kept=lambda t: t != "t2") is None
    assert share_refusal("p", meta, repo) == ("p: its meta.json claims 2 tasks, not shard 1/2's 3 of the 4 it split "
                                              "(task t2 of its share is not among them)")
    assert share_refusal("p", {**meta, "task_ids": ["t0", "t1", "t2"]}, repo, kept=lambda t: t != "t2",
                         where="its verdict line") == ("p: its verdict line claims 3 tasks, not shard 1/2's 2 of the 4 "
                                                       "it split (task t2 is not its share)")


def test_no_stated_split_puts_another_shards_task_in_a_share() -> None:
    """hatk37 (shard38 closes it): a lone shard stating a crafted ``shard_of`` (a subset of tasks.jsonl whose i-th
    sorted id the old rule gave to it) had another shard's task in its share, with nothing to compare it with. Now
    whatever it states, a task's shard is its id's: refused, with or without tasks.jsonl, alone or not."""
    repo = [f"t{i}" for i in range(8)]
    crafted_split = repo[1:]  # by position, shard 2/2 of it was t2 t4 t6: shard 1/2's tasks
    crafted = {"shard": "2/2", "split": SPLIT, "shard_of": crafted_split, "task_ids": sorted(crafted_split)[1::2]}
    why = "s2: its meta.json claims task t2, which is shard 1/2's"
    assert str(claim_refusal("s2", crafted)).startswith(why)
    assert str(share_refusal("s2", crafted, repo)).startswith(why)


def test_a_shard_split_by_position_is_refused_whatever_its_share() -> None:
    """shard38: a shard's meta.json without ``split: "sha256"`` was made under the split by position; a merge takes
    no shard at that rule's word (a rogue shard would state it to get round the check), so it is refused whole,
    one line saying to run it again; a folder that is no shard passes."""
    repo = ["t0", "t1", "t2", "t3"]
    old = {"shard": "1/2", "shard_of": repo, "task_ids": sorted(repo)[0::2]}  # t0 t2: its share by position
    line = ('s1: a shard split by position, the rule before shard38 (its meta.json has no split: "sha256"); run that '
            "shard again with this homefield")
    assert old_split_refusal("s1", old) == line == claim_refusal("s1", old) == share_refusal("s1", old, repo)
    assert share_refusal("s1", {**old, "split": "position"}, repo) == line
    assert old_split_refusal("s1", {"shard": None}) is None
    assert old_split_refusal("s1", {**old, "split": SPLIT}) is None


@pytest.mark.usefixtures("cli_spelling")
def test_a_shard_leaving_out_tasks_of_its_own_k_is_said() -> None:
    """shard39: a shard stating a smaller ``shard_of`` (t2 dropped) holds exactly its share of it, so
    :func:`share_refusal` (and, all shards stating it, :func:`split_refusal`) takes it; against tasks.jsonl and what
    its meta.json states of --max-tasks and --exclude-memorized, t2 (shard 1/2's by its id) is said missing."""
    repo = [f"t{i}" for i in range(8)]  # shard 1/2: t0 t1 t2 t3 t4 t6; shard 2/2: t5 t7
    honest = {"shard": "1/2", "split": SPLIT, "shard_of": repo, "task_ids": sorted(Shard(1, 2).select(repo))}
    assert left_out([("run s1", honest), ("run s2", {**honest, "shard": "2/2", "task_ids": ["t5", "t7"]})],
                    repo) == []
    smaller = [t for t in repo if t != "t2"]
    rogue = {**honest, "shard_of": smaller, "task_ids": sorted(Shard(1, 2).select(smaller))}
    assert share_refusal("run s1", rogue, repo) is None  # exactly its share of what it states it split
    said = ("incomplete: shard 1/2 left out 1 task(s) of its share of tasks.jsonl (t2): its --max-tasks and "
            "--exclude-memorized keep them, but the selection it split (meta.json shard_of) lacks them (a "
            "pytest_homefield_modify_tasks hook, or a hand)")
    assert left_out([("run s1", rogue)], repo) == [said]
    assert left_out([("run s1", {k: v for k, v in rogue.items() if k != "shard_of"})], repo) == [said]
    assert left_out([("run s1", rogue), ("run s2", {**rogue, "shard": "2/2", "task_ids": ["t5", "t7"]})],
                    repo) == [said]  # all shards stating it: one hand
    assert left_out([("run s1", rogue), ("run s1b", honest)], repo) == []  # another folder of shard 1/2 holds it
    assert left_out([("p", rogue)], repo, kept=lambda t: t != "t2") == []  # a probe: t2 adds no code, not its share
    # what its meta.json states of --max-tasks and --exclude-memorized leaves tasks out, said elsewhere (§10 notes)
    cut = {**honest, "shard_of": repo[:4], "task_ids": ["t0", "t1", "t2", "t3"], "max_tasks": {"n": 4, "of": 8}}
    memo = {**rogue, "excluded_memorized": {"tasks": ["t2"]}}
    assert left_out([("run s1", cut)], repo) == [] and left_out([("run s1", memo)], repo) == []
    assert left_out([("run x", {"shard": None, "task_ids": []}), ("run y", {"shard": "9", "task_ids": []})],
                    repo) == []  # no shard, no K/N: not this check's
    many = [f"u{i}" for i in range(40)]
    none_held = {"shard": "1/2", "split": SPLIT, "shard_of": many, "task_ids": []}
    assert left_out([("run s1", none_held)], many)[0].startswith(
        f"incomplete: shard 1/2 left out {len(Shard(1, 2).select(many))} task(s) of its share of tasks.jsonl (")
    assert " …): " in left_out([("run s1", none_held)], many)[0]


@pytest.mark.usefixtures("cli_spelling")
def test_what_shards_state_of_max_tasks_and_memorized_tasks_is_checked_where_it_can_be() -> None:
    """ops40: a shard's stated ``max_tasks`` and ``excluded_memorized`` were taken at its word by :func:`left_out`.
    Shards of one merge stating different values are said (each split another selection); a stated cut that is
    not one of this tasks.jsonl less its stated memorized tasks (``{"n": 2, "of": 2}`` of 8: the report's note,
    which says a cut only where n < of, said nothing) is said. What stays its word: the ids it states were
    memorized (said by the report's memorization note) and a cut stated with the true ``of`` (said by its
    --max-tasks note)."""
    repo = [f"t{i}" for i in range(8)]  # shard 1/2: t0 t1 t2 t3 t4 t6; shard 2/2: t5 t7
    s1 = {"shard": "1/2", "split": SPLIT, "task_ids": sorted(Shard(1, 2).select(repo))}
    s2 = {**s1, "shard": "2/2", "task_ids": ["t5", "t7"]}
    assert stated_mismatch([("run a", s1), ("run b", s2)]) == [] and stated_cut_refusal([("run a", s1)], repo) == []
    hidden = {**s1, "shard_of": repo[:2], "task_ids": ["t0", "t1"], "max_tasks": {"n": 2, "of": 2}}
    assert left_out([("run a", hidden)], repo) == []  # its share of what it states: no line before
    assert stated_cut_refusal([("run a", hidden)], repo) == [
        "incomplete: run a (shard 1/2) states --max-tasks 2 of 2 tasks, but this repository's tasks.jsonl holds 8 "
        "less the memorized tasks it states it left out: the 6 past its cut are in no rate"]
    true_cut = {**hidden, "max_tasks": {"n": 2, "of": 8}}  # said by the report's --max-tasks note
    memo = {**true_cut, "max_tasks": {"n": 2, "of": 6}, "excluded_memorized": {"tasks": ["t6", "t7"]}}
    assert stated_cut_refusal([("run a", true_cut), ("run m", memo)], repo) == []
    assert stated_mismatch([("run a", true_cut), ("run b", {**s2, "max_tasks": {"n": 2, "of": 8}})]) == []
    assert stated_mismatch([("run a", true_cut), ("run b", s2), ("run c", {"shard": None})]) == [
        "incomplete: the shards state different --max-tasks (run a: 2 of 8, run b: none); each left out what its "
        "own states: run every shard with one --max-tasks"]
    assert stated_mismatch([("run a", memo), ("run b", {**s2, "max_tasks": {"n": 2, "of": 6}})]) == [
        "incomplete: the shards state different memorized tasks left out (meta.json excluded_memorized: run a: t6, "
        "t7, run b: none); run every shard with one --exclude-memorized and probe"]
