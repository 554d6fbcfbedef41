"""The ``--homefield-*`` options (docs/contracts.md §2), declared once for pytest and the ``homefield`` CLI.

Each :class:`Opt` is one pytest option ``--homefield-<name>`` and one CLI flag ``--<name>`` on
the subcommands listed in ``commands``. :func:`add_pytest_options` registers them with pytest;
:func:`cli_to_pytest_args` turns parsed CLI values back into pytest arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Opt", "OPTIONS", "MODE_OPTIONS", "add_pytest_options", "flags_from_pytest", "cli_to_pytest_args"]


@dataclass(frozen=True)
class Opt:
    """One option: ``name`` (``since``), ``kind`` (``str``/``int``/``float``/``bool``/``list``),
    ``help`` text with its unit and default, and the CLI subcommands that accept it."""

    name: str
    kind: str
    help: str
    commands: tuple[str, ...]

    @property
    def dest(self) -> str:
        """The key in the flags mapping (``max-source-files`` -> ``max_source_files``)."""
        return self.name.replace("-", "_")


_M = ("mine",)
_R = ("run", "plan", "verify")
_MR = ("mine", "run", "verify")

OPTIONS: tuple[Opt, ...] = (
    Opt("since", "str", "only commits authored on or after this date (YYYY-MM-DD)", _M),
    Opt("until", "str", "only commits authored before this date (YYYY-MM-DD)", _M),
    Opt("paths", "list", "only commits touching these path globs (repeatable)", _M),
    Opt("first-parent", "bool", "walk the mainline only", _M),
    Opt("merges", "bool", "also take each first-parent merge as one candidate (a whole PR)", _M),
    Opt("max-commits", "int", "examine at most N commits, newest first", _M),
    Opt("max-source-files", "int", "reject commits changing more source files (default 10)", _M),
    Opt("max-diff-lines", "int", "reject commits whose source diff has more added+removed lines", _M),
    Opt("min-message-words", "int", "reject commits whose message has fewer words (default 3)", _M),
    Opt("max-tasks", "int", "mine: keep the newest N tasks; run: run the first N tasks", ("mine", "run", "plan")),
    Opt("stability-runs", "int", "runs per state when verifying a candidate (default 3)", _M),
    Opt("list-candidates", "bool", "scan history and list candidates; run no tests", _M),
    Opt("test-timeout", "float", "seconds per test (pytest-timeout, when installed)", _MR),
    Opt("run-timeout", "float", "seconds per test-command run (default 600)", _MR),
    Opt("agent", "list", "agent spec, repeatable: oracle, noop, sim:P, cmd:SHELL, claude[:MODEL], "
        "openai:MODEL, a name from .homefield.yml, any of them as NAME=SPEC", ("run", "plan")),
    Opt("attempts", "int", "attempts per task and agent (default 3)", ("run", "plan")),
    Opt("timeout", "float", "seconds per agent attempt (default 900)", ("run",)),
    Opt("budget", "float", "USD for the whole run; no attempt starts once spent", ("run",)),
    Opt("attempt-budget", "float", "USD per attempt (claude --max-budget-usd)", ("run",)),
    Opt("allow-shell", "bool", "let agents run shell commands (default: edit-only)", ("run",)),
    Opt("base-url", "str", "base URL of an OpenAI-compatible server for openai: agents", ("run",)),
    Opt("api-key", "str", "API key for openai: agents", ("run",)),
    Opt("resume", "bool", "continue a run: only missing attempts and unscored ones run", ("run",)),
    Opt("run-id", "str", "the run id (default: a new UTC timestamp id; with --resume: the newest run)", ("run",)),
    Opt("fail-under", "list", "exit non-zero if pass@1 is below RATE (0-1) for every agent, or "
        "AGENT=RATE (repeatable)", ("run",)),
)

#: Mode options: the plugin is inert unless one is given.
MODE_OPTIONS = {"homefield": "run agents on the mined tasks", "homefield_mine": "mine tasks from history"}


def add_pytest_options(parser: Any) -> None:
    """Register the mode options and every :data:`OPTIONS` entry on a pytest ``Parser``."""
    group = parser.getgroup("homefield", "pytest-homefield: a benchmark from your git history")
    group.addoption("--homefield", action="store_true", default=False, help=MODE_OPTIONS["homefield"])
    group.addoption("--homefield-mine", action="store_true", default=False, help=MODE_OPTIONS["homefield_mine"])
    for opt in OPTIONS:
        kwargs: dict[str, Any] = {"dest": f"homefield_{opt.dest}", "help": opt.help}
        if opt.kind == "bool":
            kwargs.update(action="store_true", default=False)
        elif opt.kind == "list":
            kwargs.update(action="append", default=[], metavar=opt.dest.upper())
        else:
            kwargs.update(type={"str": str, "int": int, "float": float}[opt.kind], default=None,
                          metavar=opt.dest.upper())
        group.addoption(f"--homefield-{opt.name}", **kwargs)


def flags_from_pytest(option: Any) -> dict[str, Any]:
    """``{dest: value}`` of every homefield option on pytest's ``config.option`` namespace."""
    return {opt.dest: getattr(option, f"homefield_{opt.dest}", None) for opt in OPTIONS}


def add_cli_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the options that ``command`` accepts to an argparse subparser as ``--<name>``."""
    for opt in OPTIONS:
        if command not in opt.commands:
            continue
        if opt.kind == "bool":
            parser.add_argument(f"--{opt.name}", action="store_true", default=False, help=opt.help)
        elif opt.kind == "list":
            parser.add_argument(f"--{opt.name}", action="append", default=[], help=opt.help)
        else:
            parser.add_argument(f"--{opt.name}", type={"str": str, "int": int, "float": float}[opt.kind],
                                default=None, help=opt.help)


def cli_to_pytest_args(ns: argparse.Namespace, command: str) -> list[str]:
    """The ``--homefield-*`` pytest arguments for the CLI values in ``ns`` that were given."""
    args: list[str] = []
    for opt in OPTIONS:
        if command not in opt.commands:
            continue
        value = getattr(ns, opt.dest, None)
        if opt.kind == "bool":
            if value:
                args.append(f"--homefield-{opt.name}")
        elif opt.kind == "list":
            for v in value or []:
                args.append(f"--homefield-{opt.name}={v}")
        elif value is not None:
            args.append(f"--homefield-{opt.name}={value}")
    return args


def join_flags(values: Sequence[str]) -> list[str]:
    """Split comma-separated entries of a repeatable option (``--paths a,b --paths c``)."""
    out: list[str] = []
    for v in values:
        out.extend(p for p in (x.strip() for x in v.split(",")) if p)
    return out
