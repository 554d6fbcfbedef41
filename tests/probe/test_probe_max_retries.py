"""Issue 30 in the memorization probe: nothing scored at the agent's word. Measured on main: ``homefield
probe`` refused ``--max-retries``, and a call the agent answered with a declared rate limit was made again
by every ``--resume``, for ever: its task stayed without a scored sample, so the verdict was never
finished (``unjudged``) and ``--exclude-memorized`` refused it, as long as the agent kept declaring. Now a
call is retried at most ``--max-retries`` times, then scored as the empty answer the agent gave (outcome
``agent_error``), by the rule of a run (pytest_homefield/run/retries.py); homefield's own failure stays
unscored and is not made again. A task never answered is not judged (``unanswered``): the verdict says so
and stays unfinished."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.claims import DECLARE_RATE_LIMIT
from helpers.e2e_repo import homefield

from pytest_homefield.probe.session import resume_state
from pytest_homefield.probe_records import load_probe, load_verdict, probe_path
from pytest_homefield.store import append_jsonl


@pytest.mark.slow
def test_a_declared_rate_limit_is_scored_once_the_retries_are_spent(ablate_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    # one task, judged (authored before the cutoff): one call per session
    args = ["probe", "--agent", f"liar=cmd:{DECLARE_RATE_LIMIT}", "--samples", "1", "--max-tasks", "1",
            "--cutoff", "2026-12-31", "--max-retries", "1", "--sandbox", "none", "-n", "0"]
    path = probe_path(repo / ".homefield", "liar")
    unjudged, outs = [], []
    for session in range(3):  # 1 + --max-retries sessions make the call, a third has nothing left to make
        proc = homefield(repo, *args, *(["--resume"] if session else []))
        assert proc.returncode == (1 if session == 1 else 0), proc.stdout[-3000:] + proc.stderr[-2000:]
        unjudged.append((load_verdict(path) or {}).get("unjudged"))
        outs.append(proc.stdout)
    calls = [(r["outcome"], r["score"], r["error"]) for r in load_probe(path) if r["kind"] == "task"]
    assert calls == [("rate_limited", None, "429 too many requests"),
                     ("agent_error", 0.0, "rate limited 2 times (--max-retries 1): 429 too many requests")]
    assert "homefield probe call failed (agent_error): rate limited 2 times" in outs[1], outs[1][-3000:]
    # scored once the retries are spent (no call made for ever), but never answered: not judged clean, so the
    # verdict stays unfinished (a model declining exactly what it remembers would otherwise get a clean bill)
    assert unjudged == [1, 1, 1]
    assert "1 task never answered" in outs[2], outs[2][-3000:]


def test_a_call_tried_unanswered_past_the_retries_is_not_made_again(tmp_path: Path) -> None:
    path = tmp_path / "probe" / "a.jsonl"
    for kind, task, score, outcome in [("task", "t1", None, "infra"), ("task", "t1", None, "infra"),
                                       ("task", "t2", None, "rate_limited"), ("control", "t2", 0.25, None),
                                       ("task", "t3", None, "timeout"), ("task", "t3", 0.5, None)]:
        append_jsonl(path, {"schema_version": 1, "kind": kind, "task_id": task, "sample": 1, "agent": "a",
                            "spec": "cmd:x", "score": score, "outcome": outcome})
    done, tries = resume_state(path, max_retries=1)
    assert tries == {("task", "t1", 1): 2, ("task", "t2", 1): 1, ("task", "t3", 1): 1}
    # answered (t3 on its retry, t2's control), or tried 1 + 1 times unanswered (t1): never made again
    assert done == {("task", "t1", 1), ("control", "t2", 1), ("task", "t3", 1)}
    assert resume_state(path, max_retries=2)[0] == {("control", "t2", 1), ("task", "t3", 1)}
