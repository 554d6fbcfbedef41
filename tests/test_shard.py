"""pytest_homefield.shard: a deterministic split by id."""

from __future__ import annotations

import pytest

from pytest_homefield.errors import ConfigError
from pytest_homefield.shard import Shard, parse_shard, share_refusal, split_refusal


def test_shards_partition_the_ids_evenly_whatever_the_order() -> None:
    ids = [f"{i:012x}" for i in range(0, 700, 7)]
    parts = [parse_shard(f"{k}/3") for k in (1, 2, 3)]
    chosen = [p.select(ids) for p in parts if p]
    assert set().union(*chosen) == set(ids)
    assert sum(len(c) for c in chosen) == len(ids)
    assert max(map(len, chosen)) - min(map(len, chosen)) <= 1
    assert Shard(2, 3).select(reversed(ids)) == chosen[1]  # the file order does not matter


def test_one_shard_is_everything_and_budget_splits() -> None:
    assert Shard(1, 1).select(["b", "a"]) == {"a", "b"}
    assert Shard(2, 4).split_budget(10.0) == 2.5 and Shard(1, 4).split_budget(None) is None
    assert str(Shard(3, 4)) == "3/4" and parse_shard(None) is None


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_bad_shards_are_one_line_errors(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--homefield-shard .*expected K/N with 1 <= K <= N"):
        parse_shard(text)


def test_a_shard_claims_exactly_its_share_of_what_it_split() -> None:
    """hatk36: a shard's meta.json task_ids are its share of its shard_of (or of tasks.jsonl's selection)."""
    repo = ["t5", "t1", "t4", "t2", "t3", "t0"]  # tasks.jsonl order
    every = repo[:5]  # --max-tasks 5
    mine = sorted(Shard(1, 2).select(every))  # t1 t3 t5
    meta = {"shard": "1/2", "shard_of": every, "task_ids": mine}
    assert share_refusal("s1", meta, repo) is None
    assert share_refusal("s1", {"shard": None, "task_ids": repo}, repo) is None  # no shard: not checked
    extra = share_refusal("s1", {**meta, "task_ids": [*mine, "t2"]}, repo)
    assert extra == "s1: its meta.json claims 4 tasks, not shard 1/2's 3 of the 5 it split (task t2 is not its share)"
    assert "task t0 is not its share" in str(share_refusal("s1", {**meta, "task_ids": [*mine, "t0"]}, repo))
    assert "task t1 of its share is not among them" in str(share_refusal("s1", {**meta, "task_ids": mine[1:]}, repo))
    assert "split task zz, which is not in this repository's tasks.jsonl" in str(
        share_refusal("s1", {**meta, "shard_of": [*every, "zz"]}, repo))
    assert "shard_of is not a list" in str(share_refusal("s1", {**meta, "shard_of": "t1"}, repo))
    # a shard from before shard_of: the selection is tasks.jsonl's, less the memorized, cut to max_tasks
    old = {"shard": "1/2", "task_ids": mine, "max_tasks": {"n": 5, "of": 6}}
    assert share_refusal("s1", old, repo) is None
    assert share_refusal("s1", {k: v for k, v in old.items() if k != "max_tasks"}, repo) is not None  # t0 shifts it
    gone = {"shard": "1/2", "excluded_memorized": {"tasks": ["t0"]}, "task_ids": mine}
    assert share_refusal("s1", gone, repo) is None
    # the shards of one merge split one selection
    assert split_refusal([("s1", meta), ("s2", {"shard": "2/2", "shard_of": every})]) is None
    assert "s1 and s2 split different selections" in str(
        split_refusal([("s1", meta), ("s2", {"shard": "2/2", "shard_of": repo})]))


def test_a_share_may_be_the_part_a_folder_holds() -> None:
    """hatk37: a probe's verdict judges only its share's tasks that add code (``kept``), named as its verdict line."""
    repo = ["t0", "t1", "t2", "t3"]
    meta = {"shard": "1/2", "shard_of": repo, "task_ids": ["t0"]}
    assert share_refusal("p", meta, repo, kept=lambda t: t != "t2") is None
    assert share_refusal("p", meta, repo) == ("p: its meta.json claims 1 tasks, not shard 1/2's 2 of the 4 it split "
                                              "(task t2 of its share is not among them)")
    assert share_refusal("p", {**meta, "task_ids": ["t0", "t1"]}, repo, kept=lambda t: t != "t2",
                         where="its verdict line") == ("p: its verdict line claims 2 tasks, not shard 1/2's 1 of the 4 "
                                                       "it split (task t1 is not its share)")


def test_every_shards_split_is_compared_a_stated_one_with_a_derived_one() -> None:
    """hatk37: a shard made before ``shard_of`` splits the selection derived for it; a crafted ``shard_of`` beside it
    (one that puts another shard's task in its share) was compared with nothing and taken at its word."""
    repo = ["t0", "t1", "t2", "t3"]
    old = {"shard": "1/2", "task_ids": sorted(Shard(1, 2).select(repo))}
    crafted_split = repo[1:]
    crafted = {"shard": "2/2", "shard_of": crafted_split, "task_ids": sorted(Shard(2, 2).select(crafted_split))}
    assert share_refusal("s2", crafted, repo) is None  # alone, its own split is all there is to check it by
    assert split_refusal([("s1", old), ("s2", crafted)]) is None  # main: only the stated splits compared
    assert split_refusal([("s1", old), ("s2", crafted)], repo) == (
        "s1 and s2 split different selections of tasks (meta.json shard_of); merge the shards of one split")
    assert split_refusal([("s1", old), ("s2", {**crafted, "shard_of": repo,
                                               "task_ids": sorted(Shard(2, 2).select(repo))})], repo) is None
