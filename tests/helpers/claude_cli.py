"""The real Claude Code CLI for the tests that run it (installed by ``.ci/install-claude.sh``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["find_claude"]

REPO = Path(__file__).resolve().parents[2]


def find_claude() -> str | None:
    """The CLI binary: ``$HOMEFIELD_CLAUDE_BIN`` or the local install folder, else ``None``."""
    local = REPO / ".ci/node/node_modules/.bin/claude"
    for candidate in (os.environ.get("HOMEFIELD_CLAUDE_BIN"), str(local)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None
