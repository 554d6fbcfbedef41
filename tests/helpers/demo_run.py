"""``homefield demo`` run once per test session, as a user runs it (README command 1), shared by the
demo's end-to-end test (tests/commands/test_demo.py) and the probe tests, whose fixture repository is
the sample history the demo mines (tests/probe/conftest.py): the sample is mined once, not twice.

The demo is the suite's longest piece of work (about 60 s of CPU) and its steps are partly serial
(building the history, each session's start, the report). :class:`BackgroundDemo` starts it when the
session starts, in a thread of an xdist worker, while both workers run other tests: the worker that
later asks for ``demo_run`` waits for it only if it is still running (the file lock of
:func:`~helpers.shared_repo.built_once`), instead of one worker running it while the other waits idle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.shared_repo import built_once

__all__ = ["BackgroundDemo", "DemoRun", "clean_env", "demo_once"]


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


def demo_once(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str, env: dict[str, str] | None = None
              ) -> DemoRun:
    """The demo in ``<session temp>/demo-<uid>/repo``, run by the first xdist worker that asks (the others
    wait); its status and output are kept in ``demo.json`` beside the repository. ``env``: the demo's
    environment (default :func:`clean_env` now); a :class:`BackgroundDemo` takes it before any test runs,
    as a test may change ``os.environ`` (``monkeypatch.setenv``) while the demo starts."""
    demo_env = clean_env() if env is None else env

    def make(repo: Path) -> None:
        start = time.monotonic()
        # the timeout only stops a hung demo: started in the background, it shares the CPU with the suite
        proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "demo", "--dir", str(repo), "-n", "2"],
                              capture_output=True, text=True, env=demo_env, cwd=repo.parent, timeout=900)
        (repo.parent / "demo.json").write_text(json.dumps({
            "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "elapsed_s": time.monotonic() - start}))
        # a demo that stopped before mining finished leaves no tasks.jsonl: fail here, with its output
        assert (repo / ".homefield" / "tasks.jsonl").exists(), proc.stdout[-5000:] + proc.stderr[-3000:]

    repo = built_once(tmp_path_factory, testrun_uid, "demo", make)
    done = json.loads((repo.parent / "demo.json").read_text())
    return DemoRun(repo=repo, returncode=done["returncode"], stdout=done["stdout"], stderr=done["stderr"],
                   elapsed_s=done["elapsed_s"])


class BackgroundDemo:
    """:func:`demo_once` in a daemon thread of this process, started by :meth:`start`; :meth:`join` waits
    for it (a session finalizer: the thread holds the demo's file lock, and another xdist worker may be
    waiting for the result). The demo's work happens in child processes, so the thread does not compete
    with the tests for the GIL. A failure in the thread is not lost: the demo folder then has no
    ``tasks.jsonl``, and the ``demo_run`` fixture runs the demo again and fails with its output."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> None:
        self.env = clean_env()  # now, before any test's monkeypatch
        tmp_path_factory.getbasetemp()  # made here, not in two threads at once
        self.thread = threading.Thread(target=self._run, args=(tmp_path_factory, testrun_uid),
                                       name="homefield-demo", daemon=True)

    def _run(self, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> None:
        try:
            demo_once(tmp_path_factory, testrun_uid, self.env)
        except Exception:  # reported by the demo_run fixture, which makes it again
            pass

    def start(self) -> BackgroundDemo:
        self.thread.start()
        return self

    def join(self) -> None:
        self.thread.join()
