"""hatk39, ``--sandbox none`` (where graded code runs as the user): the graded code that spoils what the host
grades against is scored, whatever it did to the host's means of rebuilding it. hatk34's check after grading
*rebuilt* the pristine snapshot to tell whether it changed, inside the grading's ``try``: a wrong fix that removed
the snapshot cache's folder (any process of the user can list ``/tmp/hf-*``) made that rebuild raise, ``infra``
"grading failed", homefield's own and never a claim, so ``--resume`` retried it and then left it unscored for
good. Now the host compares the snapshot with the digest in its memory without rebuilding it: a change is the
graded code's (``agent_error``); the rebuild comes later, for the attempts after it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, Fixture, cmd_agent, writes_calc

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.grading import SPOILED_PRISTINE
from pytest_homefield.sandbox.modes import SandboxChoice


def _fix_that_runs(cache: SnapshotCache, code: str, fix: str = WRONG_CALC) -> str:
    """A ``cmd:`` agent's command writing ``fix`` followed by ``code`` (run at import, in the test process)."""
    return writes_calc(fix + "\n\nimport os, shutil\nROOT = " + repr(str(cache.root)) + "\n" + code)


@pytest.mark.slow
def test_graded_code_that_removes_the_snapshot_cache_is_scored(task: Task, cache: SnapshotCache,
                                                               tmp_path: Path) -> None:
    """Before: ``infra`` ("grading failed: FileNotFoundError ..."), never scored. Now ``agent_error``, the spoiled
    snapshot's reason; the next attempt of the session gets a cache folder again."""
    agent = cmd_agent(_fix_that_runs(cache, "shutil.rmtree(ROOT, ignore_errors=True)\n"))
    _scored_spoiled(task, cache, agent, tmp_path)


@pytest.mark.slow
def test_graded_code_that_spoils_the_snapshot_and_what_it_is_rebuilt_from_is_scored(
        fx: Fixture, task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """A wrong fix that changes the pristine snapshot's module (a comment: the control run still runs) and hides
    the repository's objects (a later rebuild from them was the hole hatk40 closed: tests/run/test_private_pack.py):
    grading ends as it would, and the check after it rebuilt the snapshot to tell, which raised. Before:
    ``infra`` ("grading failed: SnapshotError ..."). Now ``agent_error``: whether it changed is told from the
    digest alone."""
    objects = fx.root / ".git" / "objects"
    code = ("import glob\n"
            "for d in glob.glob(ROOT + '/*/s/src/calc'):\n"
            "    with open(d + '/__init__.py', 'a') as f:\n"
            "        f.write('\\n# spoiled\\n')\n"
            f"os.rename({str(objects)!r}, {str(objects) + '.hidden'!r})\n")
    try:
        _scored_spoiled(task, cache, cmd_agent(_fix_that_runs(cache, code)), tmp_path, rebuilt=False)
    finally:
        os.rename(str(objects) + ".hidden", objects)
    assert "# spoiled" not in (cache.checked_pristine(task)[0] / "src" / "calc" / "__init__.py").read_text()


def _scored_spoiled(task: Task, cache: SnapshotCache, agent: object, tmp_path: Path, rebuilt: bool = True) -> None:
    """The attempt of ``agent`` is ``agent_error`` for the spoiled snapshot; with ``rebuilt`` the snapshot is then
    built again for the attempts after it."""
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",  # type: ignore[arg-type]
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"))
    r = run_attempt(spec, cache)
    assert r.scored and r.outcome == "agent_error", (r.outcome, r.error)
    assert r.error == f"hidden tests: {SPOILED_PRISTINE}", r.error
    if rebuilt:
        snap = cache.checked_pristine(task)[0]  # rebuilt for the attempts after it
        assert (snap / "src" / "calc" / "__init__.py").is_file()
