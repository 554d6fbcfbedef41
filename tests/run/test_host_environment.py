"""hatk39: what of the host's environment graded code reads. An agent's own processes get a fixed set of
variables and their passthrough list (contracts §9); its code, run by the hidden tests, got the host's whole
environment (every variable but a few of pytest's and homefield's): the user's API keys and tokens, read from
inside the test sandbox. Now a test run gets the variables of :data:`~pytest_homefield.sandbox.testrun.TEST_ENV_NAMES`
(and ``LC_*``, ``PYTHON*``, ``CONDA_*``, and those the user names in ``HOMEFIELD_TEST_ENV``) and what homefield
sets, nothing else of the host's."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, cmd_agent, writes_calc
from helpers.bwrap import bwrap_works

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

SECRET = "hf-secret-7c1e0a9b"

#: A wrong fix whose sub() fails with what its test process sees of the host's environment: the secret's
#: value (``None`` when it is not there) and whether ``PATH`` and ``LANG`` reached it (so the channel works).
TELLS_THE_ENV = CALC_1 + (
    "\n\ndef sub(a, b):\n"
    "    import os\n"
    "    raise ValueError('ENV[%s|%s|%s|%s]' % (os.environ.get('HF_HOST_API_TOKEN'), 'PATH' in os.environ,\n"
    "                                           os.environ.get('LANG'), os.environ.get('HF_NAMED_URL')))\n"
)


def _attempt(task: Task, cache: SnapshotCache, tmp_path: Path, sandbox: str) -> tuple[str, str]:
    agent = cmd_agent("echo \"agent[$HF_HOST_API_TOKEN]\"; " + writes_calc(TELLS_THE_ENV))
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"))
    r = run_attempt(spec, cache)
    assert r.outcome == "tests_failed", r
    return (spec.artifacts / "agent.out").read_text(), (spec.artifacts / "tests.log").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [
    pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no bwrap")), "none"])
def test_graded_code_reads_no_secret_of_the_hosts_environment(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                              sandbox: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the test log said ``ENV[hf-secret-…|True|C.UTF-8|…]`` (the agent's own program saw nothing of it,
    its passthrough list being empty). Now ``ENV[None|True|C.UTF-8|…]``: the locale, ``PATH`` and what the user
    names in ``HOMEFIELD_TEST_ENV`` still reach the tests, the token does not."""
    monkeypatch.setenv("HF_HOST_API_TOKEN", SECRET)
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("HF_NAMED_URL", "redis://127.0.0.1:7/0")
    monkeypatch.setenv("HOMEFIELD_TEST_ENV", "HF_NAMED_URL")
    out, log = _attempt(task, cache, tmp_path, sandbox)
    assert "agent[]" in out, out  # contracts §9: the agent's program never had it
    assert "ENV[" in log, log[-2000:]
    assert SECRET not in log, log[-2000:]
    assert "ENV[None|True|C.UTF-8|redis://127.0.0.1:7/0]" in log, log[-2000:]
