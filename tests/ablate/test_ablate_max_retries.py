"""Issue 30 in an ablation: nothing scored at the agent's word. Measured on main: an agent that declared a
rate limit on the variant it failed (its rules file without the rule it needs) was tried again by each
``--resume`` and left ``rate_limited`` on the last try too: never scored, so that rule's comparison kept
the task out and the agent's table stayed "incomplete". Now the last try is scored ``agent_error``, as a
run's is: one retry rule for every mode (pytest_homefield/run/retries.py)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers.ablate_repo import write_agent
from helpers.claims import DECLARE_RATE_LIMIT
from helpers.e2e_repo import homefield

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def test_a_declared_rate_limit_is_scored_once_the_retries_are_spent(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    # the rules agent solves its task with the key rule; without it (variant rule-1) it declares a rate limit
    liar = (f"liar=cmd:{sys.executable} -S {write_agent(tmp_path)} CLAUDE.md; "
            f"grep -q 'KEY RULE' CLAUDE.md || {DECLARE_RATE_LIMIT}")
    args = ["ablate", "CLAUDE.md", "--agent", liar, "--attempts", "1", "--max-tasks", "1", "--yes", "--run-id", "a",
            "--max-retries", "1", "--sandbox", "none", "-n", "0"]
    folder = repo / ".homefield" / "ablate" / "a"
    seen = []
    for session in range(2):  # 1 + --max-retries sessions
        proc = homefield(repo, *args, *(["--resume"] if session else []))
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        table = json.loads((folder / "report.json").read_text())["agents"][0]
        seen.append((table["incomplete"], table["rules"][0]["without_rule"]))
    rule1 = [(r["outcome"], r["error"]) for r in read_jsonl(folder / "results.jsonl") if r["variant"] == "rule-1"]
    assert rule1 == [("rate_limited", "429 too many requests"),
                     ("agent_error", "rate limited 2 times (--max-retries 1): 429 too many requests")]
    # the first session's table says it is not over every attempt; the second's counts the claim as failed
    assert seen == [("incomplete: 3 of 4 scored", None), (None, 0.0)], seen
