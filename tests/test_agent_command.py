"""The cmd: adapter: environment, usage line, exit codes and killing a whole process tree."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from fakeapi.workspace import FIXED, make_calc_repo

from pytest_homefield.agents.base import AgentContext, AgentSettings
from pytest_homefield.agents.command import CommandAgent, parse_usage_line
from pytest_homefield.agents.environment import build_agent_env

PY = shlex.quote(sys.executable)


def run(tmp_path: Path, command: str, *, timeout_s: float = 30, prompt: str = "fix add") -> tuple:
    ws = tmp_path / "ws"
    if not ws.exists():
        make_calc_repo(ws, git=False)
    agent = CommandAgent(name="cmd", spec=f"cmd:{command}", command=command, settings=AgentSettings())
    source = {**os.environ, "PYTEST_CURRENT_TEST": "leak", "HOMEFIELD_TASK": "leak"}
    env = build_agent_env(prompt=prompt, attempt=3, tmpdir=tmp_path / "tmp", passthrough=agent.passthrough,
                          source=source)
    ctx = AgentContext(workspace=ws, prompt=prompt, env=env, timeout_s=timeout_s, artifacts=tmp_path / "art")
    return agent.run(ctx), ws, tmp_path / "art"


def test_edits_workspace_with_prompt_from_env(tmp_path: Path) -> None:
    cmd = ("test \"$HOMEFIELD_PROMPT\" = 'fix add' && sed -i 's/a - b/a + b/' calc.py && "
           "env > \"$TMPDIR/seen.env\" && echo '{\"cost_usd\": 0.25, \"input_tokens\": 1000, \"output_tokens\": 20}'")
    res, ws, art = run(tmp_path, cmd)
    assert (ws / "calc.py").read_text() == FIXED
    assert res.outcome is None and res.exit_code == 0 and res.error is None
    assert (res.cost_usd, res.input_tokens, res.output_tokens) == (0.25, 1000, 20)
    assert res.cache_read_tokens is None
    seen = (tmp_path / "tmp" / "seen.env").read_text()
    assert "HOMEFIELD_ATTEMPT=3" in seen and "leak" not in seen
    assert (art / "agent.out").read_text().endswith('"output_tokens": 20}\n')


def test_nonzero_exit_is_recorded_not_failed(tmp_path: Path) -> None:
    res, _, art = run(tmp_path, "echo working; echo 'oops' >&2; exit 3")
    assert res.outcome is None
    assert res.exit_code == 3
    assert res.error == "exit 3: oops"
    assert res.cost_usd is None
    assert (art / "agent.err").read_text() == "oops\n"


def test_usage_line_must_be_last(tmp_path: Path) -> None:
    res, _, _ = run(tmp_path, "echo '{\"cost_usd\": 1}'; echo done")
    assert res.cost_usd is None


def test_reported_outcome(tmp_path: Path) -> None:
    line = json.dumps({"outcome": "rate_limited", "error": "429 from provider", "input_tokens": 5})
    res, _, _ = run(tmp_path, f"echo {shlex.quote(line)}; exit 1")
    assert res.outcome == "rate_limited" and res.error == "429 from provider" and res.input_tokens == 5


@pytest.mark.parametrize(
    "line,expected",
    [
        ('{"cost_usd": 0.5, "input_tokens": 10, "output_tokens": 2, "model": "m", "turns": 4}',
         {"cost_usd": 0.5, "input_tokens": 10, "output_tokens": 2, "model": "m", "turns": 4}),
        ('{"cost_usd": "cheap", "input_tokens": -1, "output_tokens": true, "outcome": "solved"}', {}),
        ('[1, 2]', {}),
        ("Tokens: 1.0k sent", {}),
        ('{"cache_read_tokens": 7, "cache_write_tokens": 8, "outcome": "infra"}',
         {"cache_read_tokens": 7, "cache_write_tokens": 8, "outcome": "infra"}),
    ],
)
def test_parse_usage_line(line: str, expected: dict) -> None:
    assert parse_usage_line(line) == expected


def _alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


CHILD = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "if len(sys.argv) > 1: os.setsid()\n"
    "open(os.environ['TMPDIR'] + '/child%s.pid' % len(sys.argv), 'w').write(str(os.getpid()))\n"
    "time.sleep(120)\n"
)


def test_timeout_kills_children_that_ignore_sigterm(tmp_path: Path) -> None:
    (tmp_path / "child.py").write_text(CHILD)
    child = f"{PY} {shlex.quote(str(tmp_path / 'child.py'))}"
    # one child in the agent's process group, one that escaped into its own session
    cmd = f"trap '' TERM; {child} & {child} escape & sleep 120; wait"
    start = time.monotonic()
    res, _, _ = run(tmp_path, cmd, timeout_s=2.5)
    assert res.outcome == "timeout"
    assert res.exit_code is None
    assert time.monotonic() - start < 15
    pids = [int((tmp_path / "tmp" / f"child{n}.pid").read_text()) for n in (1, 2)]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in pids if _alive(p)]


def test_complete_is_not_available() -> None:
    agent = CommandAgent(name="x", spec="cmd:true", command="true", settings=AgentSettings())
    with pytest.raises(NotImplementedError, match="cmd: agents cannot answer"):
        agent.complete("hi", timeout_s=1)
    assert agent.version() is None and agent.simulated is False and agent.hinted is False
