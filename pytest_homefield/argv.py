"""The ``pytest.main`` argv of a ``homefield`` command that runs one pytest session (docs/contracts.md §2).

``homefield mine``, ``run``, ``probe``, ``verify`` and ``ablate --yes`` translate their flags into
``--homefield-*`` options (:func:`pytest_homefield.settings.cli_to_pytest_args`) and the passthrough
flags (``-n``, ``-k``, ``-x``, ``-v``, ``--junitxml``) into pytest's; :func:`pytest_args` is that
translation, shared by :mod:`pytest_homefield.cli` and :mod:`pytest_homefield.commands.ablate`.

A bad value must be named as the user gave it (issue 35): :func:`check_flags` checks the flags
before any session starts (one line, exit 2), and :func:`as_typed` rewrites the ``--homefield-*``
options a session's own usage errors name into the flag as typed (``--att`` for ``--attempts``), or
the ``.homefield.yml`` key the value came from.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from pathlib import Path

from pytest_homefield.agents.attacks import attack_specs
from pytest_homefield.errors import ConfigError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.settings import (
    CONFIG_NAME,
    FLAGS,
    SETTINGS,
    cli_to_pytest_args,
    load_yaml_config,
    resolve_settings,
)
from pytest_homefield.store import read_jsonl

__all__ = ["pytest_args", "as_typed", "check_flags", "typed_flag"]

#: An option of homefield's session in a message, as either front end spells it (``--homefield-max-tasks``,
#: ``--max-tasks``: a session of the script spells its flags ``--max-tasks``,
#: :func:`pytest_homefield.settings_table.option`).
_PYTEST_OPTION = re.compile(r"(?<![\w-])--(?:homefield-)?([a-z0-9][a-z0-9-]*)")


def typed_flag(flag: str, argv: Sequence[str]) -> str | None:
    """How ``--<flag>`` was typed in ``argv`` (the arguments before ``--``): ``--flag`` itself, or the
    abbreviation argparse took for it (``--att`` for ``--attempts``); ``None`` when not typed."""
    names = [a.split("=", 1)[0] for a in argv if a.startswith("--") and len(a) > 2]
    full = f"--{flag}"
    if full in names:
        return full
    return next((n for n in names if len(n) > 2 and full.startswith(n)), None)


def _yml_value(data: object, dotted: str) -> object:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def as_typed(message: str, argv: Sequence[str], root: Path, *, mode: str = "run") -> str:
    """``message`` with each ``--homefield-<flag>`` (or ``--<flag>``) named as the user gave it: the flag as typed in
    ``argv`` (:func:`typed_flag`), else the ``.homefield.yml`` key (``mode``'s: ``mine`` or ``run``) when
    the file sets it, else ``--<flag>``. Options without a ``homefield`` flag (``--homefield-mine``)
    are left as they are."""
    try:
        data = load_yaml_config(root / CONFIG_NAME)
    except ConfigError:
        data = {}
    flags = {s.flag for s in FLAGS}

    def name(m: re.Match[str]) -> str:
        flag = m.group(1)
        if flag not in flags:
            return m.group(0)
        typed = typed_flag(flag, argv)
        if typed is not None:
            return typed
        keys = [s.yml for s in SETTINGS if s.flag == flag and s.yml and s.mode in (None, mode)]
        key = next((k for k in keys if _yml_value(data, k) is not None), None)
        return f"{CONFIG_NAME} {key}" if key else f"--{flag}"

    return _PYTEST_OPTION.sub(name, message)


def check_flags(ns: argparse.Namespace, command: str, root: Path, argv: Sequence[str]) -> str | None:
    """The one-line reason the flags of ``homefield <command>`` in ``ns`` (typed as ``argv``) and
    ``.homefield.yml`` cannot make a session (the checks of
    :func:`~pytest_homefield.settings.resolve_settings`, with the options named by :func:`as_typed`),
    or ``None`` when they can."""
    mode = "mine" if command == "mine" else "run"
    try:
        resolve_settings(root, vars(ns), mode=mode)
    except ConfigError as exc:
        return as_typed(str(exc), argv, root, mode=mode)
    return None


def _env_kind(ns: argparse.Namespace, root: Path) -> str:
    """``--env`` if given, else ``env`` from ``.homefield.yml`` (``current`` when unreadable)."""
    if getattr(ns, "env", None):
        return str(ns.env)
    try:
        return str(load_yaml_config(root / CONFIG_NAME).get("env") or "current")
    except ConfigError:
        return "current"  # the session reports the bad file itself


def _tasks_have_envs(root: Path) -> bool:
    """Some task of ``.homefield/tasks.jsonl`` was mined with ``--env uv`` (it has an ``env`` object):
    its grading runs in that environment whatever ``--env`` says now."""
    try:
        return any(rec.get("env") for rec in read_jsonl(HomefieldDir(root).tasks))
    except (OSError, ValueError):  # a bad tasks file (a JSON list for a line): the session says so in one line
        return False


def pytest_args(ns: argparse.Namespace, command: str, root: Path, extra: Sequence[str]) -> list[str]:
    """The ``pytest.main`` argv for ``mine`` / ``run`` / ``probe`` / ``verify`` / ``ablate`` from the
    parsed ``homefield`` flags ``ns`` (:func:`pytest_homefield.settings.add_cli_options`), the repository
    ``root`` and the arguments after ``--`` (``extra``, appended unchanged)."""
    mode = {"mine": "--homefield-mine", "probe": "--homefield-probe",
            "ablate": f"--homefield-ablate={getattr(ns, 'rules_file', '')}"}
    # relative to the invocation folder ("." from the top level), so that remote xdist workers
    # (--tx ssh=…//chdir=THEIR_CLONE) take their own clone as rootdir, not this machine's path.
    # The repository's filterwarnings (e.g. ["error"]) are for its tests, which run in their own
    # processes: in homefield's session they would turn a plugin's warning into an INTERNALERROR
    # (also with --keep-addopts)
    # --homefield-front-end=cli: the session's messages name the flags of this script (settings.option, ux65)
    args = [mode.get(command, "--homefield"), "--homefield-front-end=cli", f"--rootdir={os.path.relpath(root)}",
            "-p", "no:cacheprovider", "-o", "console_output_style=count", "-o", "filterwarnings="]
    if not getattr(ns, "keep_addopts", False):
        # homefield's own session runs none of the repository's tests: its addopts stay out
        args += ["-o", "addopts="]
    if _env_kind(ns, root) == "uv" or (command != "mine" and _tasks_have_envs(root)):
        # the repository's conftest.py imports its test dependencies, which live in the task
        # environments, not here; this session only runs homefield's own items
        args.append("--noconftest")
    if command == "verify":
        args += ["--homefield-agent=oracle", "--homefield-attempts=1", "-rN"]
        if getattr(ns, "attacks", False):
            args += [f"--homefield-agent={spec}" for spec in attack_specs(getattr(ns, "sandbox", None))]
            # a declared rate limit is scored at once, as --resume would after its last retry (issue 30)
            args.append("--homefield-max-retries=0")
            if not getattr(ns, "sandbox_network", None):
                args.append("--homefield-sandbox-network=none")
        args += cli_to_pytest_args(ns, "verify")
    else:
        args += cli_to_pytest_args(ns, command)
    if getattr(ns, "numprocesses", None) not in (None, "0"):
        # mining verifies newest first, so that --max-tasks, --stop-after-tasks and --time-budget keep the
        # newest candidates: xdist's load scheduling hands items out in order, a few at a time, where
        # worksteal gives each worker a contiguous half (the second one starts in the middle of history);
        # --adaptive: rounds wait on each other, so items go out in order (pytest_homefield.run.rounds)
        if command == "mine":
            dist = ["--dist", "load", "--maxschedchunk", "1"]
        else:
            dist = ["--dist", "load" if getattr(ns, "adaptive", False) else "worksteal"]
        args += ["-n", str(ns.numprocesses), *dist]
    elif getattr(ns, "numprocesses", None) == "0":
        args += ["-n", "0"]
    if getattr(ns, "keyword", None):
        args += ["-k", ns.keyword]
    if getattr(ns, "exitfirst", False):
        args.append("-x")
    args += ["-v"] * int(getattr(ns, "verbose", 0) or 0)
    if getattr(ns, "junitxml", None):
        args.append(f"--junitxml={ns.junitxml}")
    return args + list(extra)
