"""The repository's pytest configuration is for its own tests, not for homefield's items: a per-test
``timeout`` (pytest-timeout) and ``filterwarnings = error`` in the repository's ``pytest.ini`` leave
an attempt that takes longer than the timeout and warns on the way as it is (found on tox-dev/filelock,
whose ``timeout = 20`` killed 24 of 38 candidate verifications)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, copy_mined

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow

#: A conftest agent (in homefield's own process) slower than the repository's 0.3 s per-test timeout,
#: that warns while it works.
CONFTEST = '''
import time, warnings
import pytest
from pytest_homefield.agents.base import AgentResult


class SlowWarner:
    name, spec, simulated, hinted = "slow-warner", "conftest", False, False

    def version(self):
        return None

    def run(self, ctx):
        time.sleep(0.8)
        warnings.warn("an agent library's deprecation", DeprecationWarning)
        return AgentResult()


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_agents(config):
    return [SlowWarner()]
'''


def test_the_repositorys_timeout_and_filterwarnings_do_not_reach_homefield_items(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    (repo / "pytest.ini").write_text("[pytest]\ntimeout = 0.3\nfilterwarnings =\n    error\n")  # untracked
    (repo / "conftest.py").write_text(CONFTEST)
    tid = next(iter(read_jsonl(repo / ".homefield" / "tasks.jsonl")))["id"]
    # plain pytest, as a user runs the plugin without the homefield command (which also clears filterwarnings)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--homefield", "--homefield-agent=slow-warner",
                           "--homefield-attempts=1", "--homefield-run-id=cfg", "-p", "no:cacheprovider", "-n", "0",
                           "-k", tid], cwd=repo, env=cli_env(), capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert "Timeout" not in out and "DeprecationWarning" in out, out[-3000:]  # warned, shown, not an error
    results = list(read_jsonl(repo / ".homefield" / "runs" / "cfg" / "results.jsonl"))
    assert [(r["task_id"], r["outcome"]) for r in results] == [(tid, "empty_patch")], out[-3000:]
    assert proc.returncode == 0, out[-3000:]
