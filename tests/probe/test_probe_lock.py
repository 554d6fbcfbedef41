"""A second probe session beside a running one (hatk34): refused, as a second session on a run is."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.attack_repo import build, task_for, user_checkout
from helpers.e2e_repo import cli_env, homefield

from pytest_homefield.probe_records import probe_path
from pytest_homefield.store import read_jsonl


@pytest.mark.slow
def test_a_second_probe_session_is_refused_while_one_runs(tmp_path: Path) -> None:
    """Before: ``homefield probe --resume`` started beside a running probe of the same agent made every call
    again (2 samples: 4 calls paid for 2, each answered twice in the probe file) and each session rewrote the
    file with a verdict of its own (the first session's dropped a line the other had just appended). Now the
    ``probe/`` folder is locked for a session: the second exits 2 with one line naming the holder, and
    after the first one ends a resume finds every call answered."""
    fx = build(tmp_path / "fx")
    repo = user_checkout(fx, task_for(fx), tmp_path / "repo")
    started, release = tmp_path / "started", tmp_path / "release"
    # each call waits for ``release``, made once the second session has ended: under load a second session
    # slower to start than a fixed sleep found the first one done (failed at load 20)
    agent = (f"slow=cmd:touch {started}; while [ ! -e {release} ]; do sleep 0.05; done; "
             "echo 'def sub(a, b): return a - b'")
    argv = [sys.executable, "-m", "pytest_homefield.cli", "probe", "--sandbox", "none", "--agent", agent,
            "--samples", "2", "-n", "0"]
    first = subprocess.Popen(argv, cwd=repo, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the first probe made no call"
        second = homefield(repo, "probe", "--sandbox", "none", "--agent", agent, "--samples", "2", "-n", "0",
                           "--resume")
        release.touch()
        out, _ = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, out
    assert second.returncode == 2, second.stdout + second.stderr
    assert "the memorization probe of this repository is in use by pid" in second.stdout + second.stderr
    records = list(read_jsonl(probe_path(repo / ".homefield", "slow")))
    assert [(r["kind"], r["sample"]) for r in records if r["kind"] != "verdict"] == [("task", 1), ("task", 2)]
    again = homefield(repo, "probe", "--sandbox", "none", "--agent", agent, "--samples", "2", "-n", "0", "--resume")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "0 calls to make, 2 already answered" in again.stdout, again.stdout
