"""Issue 30: the outcome channel the test process cannot rewrite.

Measured on main: a source module the tests import registered an exit handler that, after pytest had
finished, rewrote the outcome file (its path was in the test process's environment) so that every test
passed: a wrong fix was counted ``solved``, with and without the sandbox, and not flagged. The outcomes
now come through a pipe homefield reads as the run goes; only the reporter's events from ``start`` to
its first ``finish`` count, so what the handler writes afterwards changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, Both, Fixture, script_agent

from pytest_homefield.agents.attacks import attack_agent
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_an_exit_handler_rewriting_the_outcomes_is_not_solved(fx: Fixture, task: Task, tmp_path: Path,
                                                             sandbox: str) -> None:
    if sandbox == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    agent = Both(script_agent(tmp_path / "wrong", {"src/calc/__init__.py": WRONG_CALC}),
                             attack_agent("exit-handler-rewrite"))
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",  # type: ignore[arg-type]
                           timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice(sandbox))
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert "_hf_all_passed" in (spec.artifacts / "diff.patch").read_text()  # the handler was shipped
    assert r.outcome == "tests_failed" and r.scored and not r.solved, r
    # the handler did run and wrote its forged session into the channel: none of it counted
    events = (spec.artifacts / "outcomes.jsonl").read_text().splitlines()
    assert events and '"event": "finish"' in events[-1] and '"exitstatus": 0' not in events[-1]
