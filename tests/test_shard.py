"""pytest_homefield.shard: a deterministic split by id."""

from __future__ import annotations

import pytest

from pytest_homefield.errors import ConfigError
from pytest_homefield.shard import Shard, parse_shard


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
