"""ops62: a ``cmd:`` agent's program (the first word of its command) is checked once, before anything runs, like a
missing client (:func:`~pytest_homefield.agents.cmd_agent.program_missing`, contracts §8): before, no ``cmd:``
command was checked, and a program not on the agent's ``PATH`` was the shell's "not found" at each attempt, an
empty patch graded as the agent's. A shell line whose program only the shell resolves is not checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env
from helpers.home_client import tiny_repo

from pytest_homefield.agents.cmd_agent import program_missing

PATH = "/usr/bin:/bin"


@pytest.mark.parametrize("command", [
    "ls -l",  # on PATH
    "echo hi; nosuch-ops62",  # a builtin first: the rest of the line is the shell's
    "if true; then nosuch-ops62; fi",  # a keyword
    "exec nosuch-ops62",  # a builtin
    "W=$(nosuch-ops62) nosuch-ops62",  # shell syntax in the first word: not checked
    "\"$HOMEFIELD_X\" run",
    "~/bin/agent",
    "./agent.sh --fast",  # relative to the attempt's workspace
    "python 'unbalanced",  # shlex cannot read it
    "/bin/sh -c 'exit 0'",  # an absolute executable
])
def test_a_command_the_shell_can_start_or_that_only_the_shell_resolves_passes(command: str) -> None:
    assert program_missing(command, {"PATH": PATH}) is None


def test_a_program_not_found_is_named(tmp_path: Path) -> None:
    assert program_missing("nosuch-ops62 --fast", {"PATH": PATH}) == (
        "cannot start nosuch-ops62: not found on the agent's PATH (the program of its cmd: command)")
    script = tmp_path / "agent"
    script.write_text("#!/bin/sh\nexit 0\n")  # not executable
    assert program_missing(f"{script} -x", {"PATH": PATH}) == (
        f"cannot start {script}: no such executable file (the program of its cmd: command)")
    script.chmod(0o755)
    assert program_missing(f"{script} -x", {"PATH": PATH}) is None
    assert program_missing("agent -x", {"PATH": f"{tmp_path}:{PATH}"}) is None  # found on the agent's PATH


def test_a_run_refuses_a_cmd_agent_whose_program_is_not_found_once(tmp_path: Path) -> None:
    repo = tiny_repo(tmp_path / "repo", 3)
    env = {**cli_env(), "PATH": f"{os.path.dirname(sys.executable)}:{PATH}"}
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", "a=cmd:nosuch-ops62 --x",
                           "--agent", "b=cmd:echo hi; true", "--attempts", "1", "-n", "0"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("ERROR:")]
    assert (proc.returncode, errors) == (4, [
        "ERROR: pytest-homefield: agent 'a': cannot start nosuch-ops62: not found on the agent's PATH (the program of "
        "its cmd: command); nothing was run"]), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (repo / ".homefield" / "runs").exists()
