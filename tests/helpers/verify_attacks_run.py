"""``homefield verify --attacks -n 2`` on the attack fixture's one task (:mod:`helpers.attack_repo`), run once
per test session and shared by xdist workers (:func:`~helpers.shared_repo.built_once`): the command's own
test (tests/commands/test_verify_attacks.py) checks its output and run folder, and the escape-family tests
of tests/run/test_sandbox_attacks.py read the records and artifacts of the attacks it graded in
bubblewrap, instead of grading the same attacks on the same task again one by one (about 1 s of CPU each)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.attack_repo import build, task_for, user_checkout
from helpers.e2e_repo import cli_env
from helpers.shared_repo import built_once
from pytest_homefield.records import Result

__all__ = ["MAX_PROCS", "VerifyAttacksRun", "verify_attacks_once"]

#: ``--max-procs`` of the run: it reaches the xdist workers' sandboxes, and the fork bomb stops under it
MAX_PROCS = 256


@dataclass(frozen=True)
class VerifyAttacksRun:
    """What the command did: the user's checkout it ran in (``repo``), its exit status and output, and its
    run folder (``run``: ``.homefield/runs/verify-*``)."""

    repo: Path
    returncode: int
    stdout: str
    stderr: str

    @property
    def run(self) -> Path:
        """The run folder; raises ``StopIteration`` when the command made none."""
        return next((self.repo / ".homefield" / "runs").glob("verify-*"))

    def attack(self, name: str) -> tuple[Result, Path]:
        """The record of attack ``name`` (its one attempt) and its artifact folder; ``AssertionError`` when the
        run has no record of it."""
        records = [json.loads(line) for line in (self.run / "results.jsonl").read_text().splitlines()]
        found = [r for r in records if r["agent"] == f"attack-{name}"]
        assert len(found) == 1, (name, [r["agent"] for r in records])
        (art,) = self.run.glob(f"attempts/*/attack-{name}/*")
        return Result.from_dict(found[0]), art


def verify_attacks_once(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> VerifyAttacksRun:
    """The command in ``<session temp>/verify-attacks-<uid>/repo`` (a clone of the fixture with its task, as a
    user's checkout), made by the first worker that asks; its status and output kept in ``verify.json``
    beside it. The task's test command blocks anyio's pytest plugin (about 0.2 s of CPU to load, which the
    fixture's NO_PLUGINS leaves on) in each graded test run, and ``cli_env`` blocks it in the controller and
    its workers. ``canaries=1``: as mined with the canary check (a task mined before canaries has a passing
    twin checked against the reference fix, two more test runs)."""

    def make(repo: Path) -> None:
        making = repo.with_name("making")
        shutil.rmtree(making, ignore_errors=True)
        fx = build(making / "fixture")
        task = task_for(fx, canaries=1)
        task = dataclasses.replace(task, test_cmd=task.test_cmd + " -p no:anyio")
        work = user_checkout(fx, task, making / "repo")
        proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "verify", "--attacks", "-n", "2",
                               "--max-procs", str(MAX_PROCS), "--",
                               "-p", "no:hypothesispytest", "-p", "no:benchmark"],
                              cwd=work, env=cli_env(), capture_output=True, text=True, timeout=900)
        (repo.parent / "verify.json").write_text(json.dumps({"returncode": proc.returncode, "stdout": proc.stdout,
                                                             "stderr": proc.stderr}))
        shutil.rmtree(repo, ignore_errors=True)
        work.rename(repo)  # whole or absent: built_once makes it again after a failure

    repo = built_once(tmp_path_factory, testrun_uid, "verify-attacks", make)
    done = json.loads((repo.parent / "verify.json").read_text())
    return VerifyAttacksRun(repo=repo, returncode=done["returncode"], stdout=done["stdout"], stderr=done["stderr"])
