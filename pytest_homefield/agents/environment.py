"""The environment an agent process gets (docs/contracts.md §9), and each adapter's passthrough list.

An agent sees only ``PATH``, ``HOME``, ``USER``, ``LANG``, ``LC_*``, ``TERM``, ``SHELL``, a
per-attempt ``TMPDIR``, ``HOMEFIELD_PROMPT``, ``HOMEFIELD_ATTEMPT``, and the names on its
passthrough list that are set. Nothing names the task, its commit or its parent; no ``PYTEST_*``
variable and no other ``HOMEFIELD_*`` variable is ever passed (pytest's own variables would leak the
item's node id, which holds the task id).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_homefield.agents.base import AgentSettings

__all__ = [
    "BASE_NAMES",
    "DEFAULT_PASSTHROUGH",
    "FORBIDDEN_PREFIXES",
    "agent_passthrough",
    "build_agent_env",
    "check_passthrough",
]

#: Variables copied from the source environment when set (plus every ``LC_*``).
BASE_NAMES = ("PATH", "HOME", "USER", "LANG", "TERM", "SHELL")

#: Default passthrough per adapter kind (docs/contracts.md §9): credentials and endpoints only.
DEFAULT_PASSTHROUGH: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR"),
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "cmd": (),
}

#: Prefixes no passthrough list may name: they carry pytest's and homefield's own state.
FORBIDDEN_PREFIXES = ("PYTEST_", "HOMEFIELD_")

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_passthrough(names: Iterable[str]) -> None:
    """Validate a user's passthrough list (``agents.<n>.env``).

    Raises ``ValueError`` naming the first entry that is not a variable name or that starts with
    ``PYTEST_`` / ``HOMEFIELD_`` (those are never passed; see :func:`build_agent_env`).
    """
    for name in names:
        if not _NAME_RE.match(name):
            raise ValueError(f"agent env entry {name!r} is not an environment variable name")
        if name.upper().startswith(FORBIDDEN_PREFIXES):
            raise ValueError(
                f"agent env entry {name!r}: PYTEST_* and HOMEFIELD_* variables are never passed to agents")


def agent_passthrough(kind: str, settings: AgentSettings | None = None) -> list[str]:
    """The passthrough list of an adapter ``kind`` (``claude``, ``openai``, ``cmd``; others get
    none) followed by ``settings.env``, without duplicates, in that order."""
    names = list(DEFAULT_PASSTHROUGH.get(kind, ()))
    for name in settings.env if settings else ():
        if name not in names:
            names.append(name)
    return names


def build_agent_env(
    *,
    prompt: str,
    attempt: int,
    tmpdir: Path,
    passthrough: Sequence[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one attempt (docs/contracts.md §9).

    * ``prompt``: the rendered prompt, exported as ``HOMEFIELD_PROMPT``;
    * ``attempt``: attempt number from 1, exported as ``HOMEFIELD_ATTEMPT``;
    * ``tmpdir``: the attempt's own temporary folder (created if missing), exported as ``TMPDIR``;
    * ``passthrough``: extra names copied from ``source`` when set there; names starting with
      ``PYTEST_`` or ``HOMEFIELD_`` are skipped (validate lists with :func:`check_passthrough`);
    * ``source``: the environment to copy from (default ``os.environ``).

    Returns a new dict holding exactly those variables. Raises ``OSError`` if ``tmpdir`` cannot
    be created.
    """
    src = os.environ if source is None else source
    env = {name: src[name] for name in BASE_NAMES if name in src}
    env.update({k: v for k, v in src.items() if k.startswith("LC_")})
    for name in passthrough:
        if name in src and not name.upper().startswith(FORBIDDEN_PREFIXES):
            env[name] = src[name]
    tmpdir = Path(tmpdir)
    tmpdir.mkdir(parents=True, exist_ok=True)
    env["TMPDIR"] = str(tmpdir)
    env["HOMEFIELD_PROMPT"] = prompt
    env["HOMEFIELD_ATTEMPT"] = str(attempt)
    return env
