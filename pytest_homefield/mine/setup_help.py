"""How to install what the tests miss (issue 35 item 6): the command that installs the repository's
test dependencies into the test command's Python, named from its ``pyproject.toml`` (the extra as it
is spelled there: ``tests``, not ``test``; or a dependency group, which needs pip ≥ 25.1)."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomllib

__all__ = ["install_hint", "extra_of", "group_of", "pip_version", "PIP_GROUP_MIN"]

#: The first pip with ``pip install --group`` (PEP 735 dependency groups): 25.1.
PIP_GROUP_MIN = (25, 1)
#: Names a repository's test dependencies go by, in the order they are preferred.
TEST_NAMES = ("test", "tests", "testing", "dev")


def _first(names: Mapping[str, Any] | None) -> str | None:
    if not isinstance(names, Mapping):
        return None
    return next((n for n in TEST_NAMES if n in names), None)


def _pyproject(root: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        return data
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def extra_of(root: Path) -> str | None:
    """The optional-dependencies extra of ``root/pyproject.toml`` holding test dependencies
    (:data:`TEST_NAMES`, as spelled there), or ``None``."""
    project = _pyproject(root).get("project")
    return _first(project.get("optional-dependencies") if isinstance(project, dict) else None)


def group_of(root: Path) -> str | None:
    """The PEP 735 dependency group of ``root/pyproject.toml`` holding test dependencies, or ``None``."""
    return _first(_pyproject(root).get("dependency-groups"))


def pip_version(python: str) -> tuple[int, int] | None:
    """``(major, minor)`` of ``python -m pip``, ``None`` when it has none or cannot be asked (20 s)."""
    try:
        out = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"pip (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def install_hint(root: Path, python: str | None) -> str | None:
    """``"e.g. /venv/bin/python -m pip install -e '.[tests]'"``: how to install the repository's test
    dependencies into ``python``, from its extra (preferred) or dependency group; a group's command says
    when that pip is older than 25.1 (no ``--group`` option there). ``None`` when ``pyproject.toml`` names
    neither or ``python`` is unknown."""
    if python is None:
        return None
    py = shlex.quote(python)
    extra = extra_of(root)
    if extra is not None:
        return f"e.g. {py} -m pip install -e {shlex.quote(f'.[{extra}]')} (the extra is {extra!r})"
    group = group_of(root)
    if group is None:
        return None
    hint = f"e.g. {py} -m pip install --group {group}"
    version = pip_version(python)
    if version is not None and version < PIP_GROUP_MIN:
        hint += (f" (--group needs pip ≥ 25.1, that Python has pip {version[0]}.{version[1]}: "
                 f"{py} -m pip install -U pip first)")
    return hint
