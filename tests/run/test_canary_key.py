"""Every grading of a task shows the same canary twins (atk12 F1c, docs/contracts.md §7): with twins
drawn afresh per grading, two captured gradings told the original from its twins (the version seen in
both), and attempt 3 was solved with a lookup table. The seed comes from a secret key in the user's
``.homefield/`` and the task. Real git, real pytest, real gradings of a wrong fix (so twins are planted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, Fixture, build, script_agent, task_for, user_checkout

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.canary_key import KEY_BYTES, canary_key
from pytest_homefield.sandbox.modes import SandboxChoice


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("ck") / "repo")


def _canaries(repo: Path, task: Task, tmp_path: Path, attempts: int,
              key: bytes | None = None) -> list[dict[str, object]]:
    """``canaries.json`` of ``attempts`` gradings of a wrong fix of ``task`` in the checkout ``repo``."""
    agent = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    cache = SnapshotCache(repo=repo)
    out = []
    try:
        for n in range(1, attempts + 1):
            spec = AttemptSpec(task=task, agent=agent, attempt=n, run_id="r", run_dir=tmp_path / "runs" / "r",
                               timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"), canary_key=key)
            r = run_attempt(spec, cache)
            assert r.outcome == "tests_failed", r
            out.append(json.loads((spec.artifacts / "canaries.json").read_text()))
    finally:
        cache.close()
    return out


@pytest.mark.slow
def test_every_grading_of_a_task_shows_the_same_twins(fx: Fixture, tmp_path: Path) -> None:
    """Two attempts at one task: the same seed and the same twins (names, sources, run order); the key
    is the user's (0600, in ``.homefield/``); another checkout's key draws other twins."""
    task = task_for(fx, canaries=1)
    repo = user_checkout(fx, task, tmp_path / "user")
    first, second = _canaries(repo, task, tmp_path / "a", attempts=2)
    assert first["canaries"] and first == second, (first, second)
    key = repo / ".homefield" / "canary.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(canary_key(repo)) == KEY_BYTES
    other = user_checkout(fx, task, tmp_path / "other")
    (elsewhere,) = _canaries(other, task, tmp_path / "b", attempts=1)
    assert elsewhere["seed"] != first["seed"]



@pytest.mark.slow
def test_a_worker_grades_with_the_key_its_controller_sent(fx: Fixture, tmp_path: Path) -> None:
    """An ssh host with a key of its own still shows the controller's twins when the attempt carries the
    controller's key (``AttemptSpec.canary_key``, sent in ``workerinput``): one task, one set of twins."""
    task = task_for(fx, canaries=1)
    controller, host = (user_checkout(fx, task, tmp_path / n) for n in ("controller", "host"))
    (ref,) = _canaries(controller, task, tmp_path / "a", attempts=1)
    (own,) = _canaries(host, task, tmp_path / "b", attempts=1)
    (sent,) = _canaries(host, task, tmp_path / "c", attempts=1, key=canary_key(controller))
    assert own["seed"] != ref["seed"] and sent == ref
