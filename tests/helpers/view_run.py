"""A real run with two agents for the viewer's tests: ``homefield run`` of the REAL claude CLI (against
the scripted Anthropic API, tests/helpers/fakeapi) and ``oracle`` on one task of the mined e2e
fixture repository, one attempt each, so a task page has two agents' diffs and an attempt page a
claude transcript with its tool calls (Read, then Edit).

The claude CLI is ``$HOMEFIELD_CLAUDE_BIN`` or ``.ci/node``'s; :func:`find_claude` is ``None`` without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.claude_cli import find_claude
from helpers.e2e_repo import cli_env, copy_mined
from helpers.fakeapi import anthropic_server

__all__ = ["MODEL", "SCRIPT", "find_claude", "claude_and_oracle_run"]

MODEL = "claude-sonnet-4-5"

#: The claude attempt on the newest task ("Add neg() returning the negation of a"): read the module,
#: add ``neg`` after ``sub``, say so.
SCRIPT = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "calc/__init__.py"}}],
     "usage": {"input_tokens": 1000, "output_tokens": 50}},
    {"tool_calls": [{"name": "Edit", "input": {"file_path": "calc/__init__.py",
                                               "old_string": "def sub(a, b):\n    return a - b\n",
                                               "new_string": "def sub(a, b):\n    return a - b\n\n\n"
                                                             "def neg(a):\n    return 0 - a\n"}}],
     "usage": {"input_tokens": 1100, "output_tokens": 60}},
    {"text": "Added neg(a), which returns the negation of a.", "usage": {"input_tokens": 1200, "output_tokens": 10}},
]


def claude_and_oracle_run(mined: Path, dest: Path, claude: str) -> tuple[Path, str]:
    """A copy of ``mined`` at ``dest`` with run ``view-e2e``: agents ``claude:MODEL`` (the real CLI
    ``claude`` against the scripted server, its network the server's port only) and ``oracle``, the
    newest task, one attempt each. Returns the repository and the run's stdout; raises
    ``AssertionError`` with the run's output when it fails."""
    repo = copy_mined(mined, dest)
    with anthropic_server(SCRIPT) as server:
        port = server.url.rsplit(":", 1)[1]
        env = {**cli_env(), "HOMEFIELD_CLAUDE_BIN": claude, "ANTHROPIC_BASE_URL": server.url,
               "ANTHROPIC_API_KEY": "test-key"}
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", f"claude:{MODEL}", "--agent", "oracle",
             "--attempts", "1", "--max-tasks", "1", "-n", "0", "--run-id", "view-e2e",
             "--sandbox-network", f"loopback:{port}"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return repo, proc.stdout
