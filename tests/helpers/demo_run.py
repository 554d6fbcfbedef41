"""``homefield demo`` run once per test session, as a user runs it (README command 1), shared by the
demo's end-to-end test (tests/commands/test_demo.py) and the probe tests, whose fixture repository is
the sample history the demo mines (tests/probe/conftest.py): the sample is mined once, not twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.shared_repo import built_once

__all__ = ["DemoRun", "clean_env", "demo_once"]


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the outer pytest's, homefield's and coverage's variables (a user's shell);
    the user's full set of installed pytest plugins stays loaded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOMEFIELD_", "COV_CORE_"))}
    env.update(extra)
    return env


@dataclass(frozen=True)
class DemoRun:
    """What ``homefield demo --dir REPO -n 2`` did: its exit status, output and wall time (s)."""

    repo: Path
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float


def demo_once(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> DemoRun:
    """The demo in ``<session temp>/demo-<uid>/repo``, run by the first xdist worker that asks (the others
    wait); its status and output are kept in ``demo.json`` beside the repository."""
    def make(repo: Path) -> None:
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "demo", "--dir", str(repo), "-n", "2"],
                              capture_output=True, text=True, env=clean_env(), timeout=380)
        (repo.parent / "demo.json").write_text(json.dumps({
            "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "elapsed_s": time.monotonic() - start}))
        # a demo that stopped before mining finished leaves no tasks.jsonl: fail here, with its output
        assert (repo / ".homefield" / "tasks.jsonl").exists(), proc.stdout[-5000:] + proc.stderr[-3000:]

    repo = built_once(tmp_path_factory, testrun_uid, "demo", make)
    done = json.loads((repo.parent / "demo.json").read_text())
    return DemoRun(repo=repo, returncode=done["returncode"], stdout=done["stdout"], stderr=done["stderr"],
                   elapsed_s=done["elapsed_s"])
