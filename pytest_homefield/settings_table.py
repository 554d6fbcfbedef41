"""The settings table, declared once: flag, pytest option, ``.homefield.yml`` key, type and default
(docs/contracts.md §2 and §3); the light half of :mod:`pytest_homefield.settings`.

The table is the :class:`Settings` dataclass itself. Each field declared with :func:`setting` is
one setting: its annotation is the type, its default the built-in default, and :func:`setting`'s
arguments give the rest (``help``, the CLI subcommands offering it, the yml key, a value check).
:data:`SETTINGS` lists them as :class:`Setting` records, in declaration order (the order of
``--help``). From that one table this module derives

- the pytest options ``--homefield-<flag>`` (:func:`add_pytest_options`, :func:`flags_from_pytest`),
- the ``homefield`` CLI flags ``--<flag>`` (:func:`add_cli_options`, :func:`cli_to_pytest_args`);

:mod:`pytest_homefield.settings` derives the rest from it (the yml schema, the resolution flag >
``.homefield.yml`` > default, the value checks) and re-exports every name here.

This module is what the pytest entry point imports in every pytest run, also plain ``pytest`` with no
homefield option (issue lazy29): it imports only the standard library and the ground module
``layout`` (with ``records``, ``store``, ``errors``), never an agent, a sandbox, a stage, yaml, git or scipy
(tests/test_plugin_inert.py holds it to that). So nothing here validates a value: the checks that
need the sandbox's or the agents' parsers live in :mod:`pytest_homefield.settings`.

:class:`ScanSettings` holds the scan filters (the ``mine.*`` keys the scan reads and
``test_globs``); :class:`Settings` extends it, and :class:`pytest_homefield.mine.scan.ScanOptions`
extends it with the start revision, so the scan's fields and defaults come from the same table.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import re
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_homefield.layout import HomefieldDir
from pytest_homefield.spelling import FRONT_ENDS, front_end, spell, spelled_for

if TYPE_CHECKING:  # the type of a field only: the table imports no sandbox code
    from pytest_homefield.sandbox.services import ServiceSpec

__all__ = [
    "ENV_KINDS",
    "CHECKS",
    "OPENAI_MAX_TOKENS",
    "Setting",
    "ScanSettings",
    "Settings",
    "SETTINGS",
    "FLAGS",
    "MODE_OPTIONS",
    "setting",
    "add_pytest_options",
    "flags_from_pytest",
    "add_cli_options",
    "cli_to_pytest_args",
    "join_flags",
    "FRONT_ENDS",
    "front_end",
    "spelled_for",
    "option",
    "pytest_help",
]

#: The default of ``--max-tokens``: the same value as :data:`pytest_homefield.agents.base.OPENAI_MAX_TOKENS`
#: (not imported: the table stays light; tests/test_settings_table.py checks that the two agree).
OPENAI_MAX_TOKENS = 4096

#: Mode options: the plugin is inert unless one is given. Their helps, as every setting's, name a setting's flag
#: ``--<flag>``; :func:`add_pytest_options` spells it ``--homefield-<flag>`` (:func:`pytest_help`).
MODE_OPTIONS = {"homefield": "run agents on the mined tasks", "homefield_mine": "mine tasks from history",
                "homefield_ablate": "measure each rule of the rules file FILE (CLAUDE.md, AGENTS.md): the plan; "
                                    "with --yes, the ablation",
                "homefield_probe": "memorization probe: can the agent recite each task's fix from its message?"}

#: The value checks :func:`~pytest_homefield.settings.resolve_settings` applies, in this order: ``min1``
#: (an int at least 1),
#: ``count`` (an int at least 1 when set), ``positive`` (a finite number above 0 when set: ``nan``
#: and ``inf`` are refused), ``date`` (``YYYY-MM-DD`` or ISO 8601 when set; the yml may also give a
#: YAML date), ``shard`` (``K/N`` with 1 ≤ K ≤ N when set), ``fraction`` (strictly between 0 and 1),
#: ``gates`` (each ``RATE`` or ``AGENT=RATE`` with RATE in [0, 1],
#: :func:`~pytest_homefield.settings.parse_gate`), ``network``
#: (``allowlist``, ``shared``, ``none`` or ``loopback:PORT[,PORT…]``,
#: :func:`~pytest_homefield.sandbox.modes.parse_network`), ``hosts`` (each ``--allow-host`` entry,
#: :func:`~pytest_homefield.sandbox.modes.parse_hosts`), ``min0`` (an int at least 0),
#: ``test_network`` (``none`` or ``loopback:PORT[,PORT…]``,
#: :func:`~pytest_homefield.sandbox.services.parse_test_network`), ``duration`` (``None`` or a
#: :func:`~pytest_homefield.settings.parse_duration` text).
CHECKS = ("min1", "count", "positive", "date", "shard", "fraction", "gates", "network", "hosts", "min0",
          "test_network", "duration")
#: How test runs get their Python: ``current`` (the ``python`` on ``PATH``), ``uv`` (an environment
#: per dependency declaration, :mod:`pytest_homefield.envs`).
ENV_KINDS = ("current", "uv")

_META = "homefield"
_T = TypeVar("_T")


@dataclass(frozen=True)
class _Decl:
    help: str
    commands: tuple[str, ...]
    flag: str | None
    yml: str | None
    mode: str | None
    check: str | None
    yml_also: tuple[type, ...]
    choices: tuple[str, ...] = ()


def setting(
    default: _T,
    *,
    help: str = "",
    commands: tuple[str, ...] = (),
    flag: str | None = None,
    yml: str | None = None,
    mode: str | None = None,
    check: str | None = None,
    yml_also: tuple[type, ...] = (),
    choices: tuple[str, ...] = (),
) -> _T:
    """Declare one :class:`Settings` field (use as its default).

    ``commands``: the ``homefield`` subcommands offering the flag; empty means no flag and no
    pytest option. ``flag``: the flag's name when it differs from the field's name with ``-`` for
    ``_`` (field ``agents``, flag ``agent``). ``yml``: the dotted ``.homefield.yml`` key, or
    ``None``. ``mode``: ``"mine"`` or ``"run"`` when the setting is resolved only in that mode
    (two fields may share a flag that way). ``check``: one of :data:`CHECKS`. ``yml_also``: types
    the yml accepts besides the field's own (a scalar for a list is read as a one-item list).
    ``choices``: the values a ``str`` setting may take (checked by :func:`~pytest_homefield.settings.resolve_settings`).
    A list default is copied per instance.
    """
    if check is not None and check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
    decl = _Decl(help, commands, (flag or "") if commands else None, yml, mode, check, yml_also, choices)
    metadata = {_META: decl}
    if isinstance(default, list):
        items = list(default)
        out: Any = field(default_factory=lambda: list(items), metadata=metadata)
    else:
        out = field(default=default, metadata=metadata)
    return typing.cast(_T, out)


_M = ("mine",)
_R = ("run", "plan", "verify")
_MR = ("mine", "run", "verify")
_A = ("ablate",)
_RA = ("run", "ablate")
#: the commands that start agents' programs in a sandbox (docs/contracts.md §9)
_AGENT_BOX = ("run", "verify", "ablate", "probe")
_MAX_TASKS: dict[str, Any] = {
    "help": "mine: keep the newest N tasks; run, verify, ablate, probe: the first N tasks of tasks.jsonl (newest "
            "first)",
    "commands": ("mine", "run", "plan", "ablate", "probe", "verify"),
    "flag": "max-tasks",
}


@dataclass(kw_only=True)
class ScanSettings:
    """The scan's filters (contracts §2 ``mine.*`` keys, §7).

    ``since``/``until``: ``YYYY-MM-DD`` or ISO 8601 (no offset means UTC), on the author date; both
    inclusive (a date-only ``until`` covers that whole day). ``paths``: globs (see
    :mod:`pytest_homefield.paths`). ``max_commits``: cap on commits inside the date window,
    newest first. ``max_source_files`` / ``max_diff_lines``: ``None`` means no limit.
    ``min_message_words``: 0 disables. ``test_globs``: extra test patterns.
    """

    since: str | None = setting(None, help="only commits authored on or after this date (YYYY-MM-DD)",
                                commands=_M, yml="mine.since", check="date")
    until: str | None = setting(None, help="only commits authored before this date (YYYY-MM-DD)",
                                commands=_M, yml="mine.until", check="date")
    paths: list[str] = setting([], help="only commits touching these path globs (repeatable)",
                               commands=_M, yml="mine.paths")
    first_parent: bool = setting(False, help="walk the mainline only", commands=_M, yml="mine.first_parent")
    merges: bool = setting(False, help="also take each first-parent merge as one candidate (a whole PR)",
                           commands=_M, yml="mine.merges")
    max_commits: int | None = setting(None, help="examine at most N commits, newest first",
                                      commands=_M, yml="mine.max_commits", check="count")
    max_source_files: int | None = setting(10, help="reject commits changing more source files (default 10)",
                                           commands=_M, yml="mine.max_source_files", check="count")
    max_diff_lines: int | None = setting(
        None, help="reject commits whose source diff has more added+removed lines",
        commands=_M, yml="mine.max_diff_lines", check="count")
    min_message_words: int = setting(3, help="reject commits whose message has fewer words (default 3)",
                                     commands=_M, yml="mine.min_message_words")
    test_globs: list[str] = setting([], help="extra test-file patterns (added to the defaults)", yml="test_globs")
    # the scan keeps dependency-changing commits when each commit gets its own environment
    env: str = setting("current", help="test environment: current (the python on PATH) or uv (one per "
                       "dependency declaration, built with uv)", commands=_MR, yml="env",
                       choices=ENV_KINDS)


@dataclass(kw_only=True)
class Settings(ScanSettings):
    """Every resolved setting (flag > yml > default). Units: seconds, USD.

    ``root`` is the repository's top level; ``agent_defs`` the named agents (the ready recipes,
    overridden by the yml's ``agents``), ``prices`` the yml's ``prices``: neither is a flag.
    """

    root: Path
    # mining
    mine_max_tasks: int | None = setting(None, yml="mine.max_tasks", mode="mine", check="count", **_MAX_TASKS)
    run_max_tasks: int | None = setting(None, yml="run.max_tasks", mode="run", check="count", **_MAX_TASKS)
    stability_runs: int = setting(3, help="runs per state when verifying a candidate (default 3)",
                                  commands=_M, yml="mine.stability_runs", check="min1")
    spec_threshold: float = setting(0.5, help="spec_score at or above which a task's prompt counts as well "
                                    "specified (default 0.5; lower it for a repository with terse messages)",
                                    commands=_M, yml="spec_threshold", check="fraction")
    list_candidates: bool = setting(False, help="scan history and list candidates; run no tests", commands=_M)
    reverify: bool = setting(False, help="verify every candidate again (reuse no earlier verification record)",
                             commands=_M)
    stop_after_tasks: int | None = setting(
        None, help="verify newest first and verify no more once N tasks are kept (a partial mine: the "
        "same command with a higher N goes on)", commands=_M, yml="mine.stop_after_tasks", check="count")
    time_budget: str | None = setting(
        None, help="verify the cheapest candidates first (smallest test files) and start no verification "
        "after DURATION (90s, 20m, 1h30m; a partial mine: the same command goes on)", commands=_M,
        yml="mine.time_budget", yml_also=(int, float),
        check="duration")
    fail_fast: int = setting(8, help="stop when the first K verified candidates all fail on the same collection "
                             "error (default 8; 0: never)", commands=_M, yml="mine.fail_fast", check="min0")
    no_fail_fast: bool = setting(False, help="go on although the first candidates all fail on the same collection "
                                 "error (--fail-fast 0)", commands=_M)
    # test running
    test_cmd: str = setting("python -m pytest", help="test runner command", yml="test_cmd")
    setup_cmd: str | None = setting(None, help="run once per fresh snapshot before tests", yml="setup_cmd")
    test_timeout: float | None = setting(None, help="seconds per test (pytest-timeout, when installed)",
                                         commands=_MR + _A, yml="test_timeout", check="positive")
    run_timeout: float = setting(600.0, help="seconds per test-command run (default 600)",
                                 commands=_MR + _A, yml="run_timeout", check="positive")
    env_extras: list[str] = setting([], help="with --env uv: optional-dependency extras to install "
                                    "(default: test or tests when declared)", commands=_MR,
                                    yml="env_extras")
    env_groups: list[str] = setting([], help="with --env uv: dependency groups to install (default: test, "
                                    "tests or dev when declared)", commands=_MR,
                                    yml="env_groups")
    env_as_of: bool = setting(False, help="with --env uv: resolve only packages uploaded by the commit's day "
                              "(uv --exclude-newer), so old commits get the versions of their time",
                              commands=_MR, yml="env_as_of")
    # the same default as sandbox/limits.py TEST_MEMORY_MB (not imported: settings stay light)
    max_test_memory_mb: float = setting(4096.0, help="MiB of address space per test process (RLIMIT_AS) in "
                                        "mining and grading, and of memory for all of a test run's processes (a "
                                        "memory cgroup, where one can be made); a test over it fails "
                                        "(MemoryError, or killed by the kernel), and the run says so (default 4096)",
                                        commands=_MR + _A, yml="max_test_memory_mb",
                                        check="positive")
    # the same default as sandbox/limits.py TEST_WRITE_MB
    max_test_write_mb: float = setting(1024.0, help="MiB a test process may write in mining and grading: per "
                                       "file (RLIMIT_FSIZE), in its sandbox's /tmp and /dev/shm, and added to its "
                                       "copy, HOME and TMPDIR; a run over it is stopped (default 1024)",
                                       commands=_MR + _A, yml="max_test_write_mb", check="positive")
    # the same default as sandbox/proccap.py DEFAULT_MAX_PROCS
    max_procs: int = setting(512, help="processes and threads each sandbox may hold at once (an agent's, every "
                             "test run's): a pids cgroup, or RLIMIT_NPROC in bubblewrap's user namespace; a "
                             "fork past it fails (EAGAIN) inside (default 512)",
                             commands=_MR + _A + ("probe",), yml="max_procs", check="min1")
    # the same default as sandbox/proccap.py DEFAULT_AGENT_MEMORY_MB
    max_agent_memory_mb: float = setting(4096.0, help="MiB of memory (RAM and swap) an agent's sandbox may hold "
                                         "in all, a memory cgroup of its own where one can be made; past it the "
                                         "kernel kills a process inside, and the attempt is agent_error "
                                         "(default 4096)", commands=_MR + _A + ("probe",),
                                         yml="max_agent_memory_mb", check="positive")
    max_total_memory_mb: float | None = setting(
        None, help="MiB the memory caps of the sandboxes running at once on this machine may sum to, for every "
        "homefield process of the user (xdist workers, other sessions): a sandbox waits until its cap fits "
        "(default: the machine's memory less an eighth, at least 2 GiB)", commands=_MR + _A + ("probe",),
        yml="max_total_memory_mb", check="positive")
    # running
    agents: list[str] = setting(
        [], help="agent spec, repeatable: oracle, noop, sim:P, cmd:SHELL, claude[:MODEL], "
        "openai:MODEL, a name from .homefield.yml, any of them as NAME=SPEC",
        commands=("run", "plan", "ablate", "probe"), flag="agent")
    attempts: int = setting(3, help="attempts per task and agent (default 3)",
                            commands=("run", "plan", "ablate"), yml="run.attempts", check="min1")
    timeout: float = setting(900.0, help="seconds per agent attempt or probe call (default 900)",
                             commands=("run", "ablate", "probe"),
                             yml="run.timeout", check="positive")
    budget: float | None = setting(None, help="USD for the whole run; no attempt starts once spent",
                                   commands=_RA, yml="run.budget_usd", check="positive")
    attempt_budget: float | None = setting(None, help="USD per attempt (claude --max-budget-usd)",
                                           commands=_RA, yml="run.attempt_budget_usd", check="positive")
    seconds_per_run: float | None = setting(
        None, help="plan, ablate: agent seconds per run to assume (default: earlier attempts, else the client's "
        "assumed default)", commands=("plan", "ablate"), yml="ablate.seconds_per_run", check="positive")
    cost_per_run: float | None = setting(
        None, help="plan, ablate: agent USD per run to assume (default: earlier attempts, else the client's assumed "
        "default)", commands=("plan", "ablate"), yml="ablate.cost_per_run")
    allow_shell: bool = setting(False, help="let agents run shell commands (default: edit-only)",
                                commands=_RA, yml="run.allow_shell")
    sandbox: str = setting("auto", help="auto (default: bubblewrap where it works, else Landlock where it works; "
                           "agents that run commands are refused without either), bwrap (always), landlock "
                           "(always) or none (accept the risk): agents and test runs",
                           commands=_MR + _A + ("probe",), yml="run.sandbox",
                           choices=("auto", "bwrap", "landlock", "none"))
    sandbox_network: str = setting("allowlist", help="network inside an agent's sandbox: allowlist (default; only "
                                   "the agent's provider, e.g. the Anthropic API or ANTHROPIC_BASE_URL, and "
                                   "--allow-host, through a filtering proxy; enforced by bubblewrap and Landlock "
                                   "only), shared (the host's, loopback included), none (local cmd: agents) or "
                                   "loopback:PORT[,PORT...] (only those ports of this machine's 127.0.0.1, e.g. a "
                                   "local model server); test runs never have one",
                                   commands=_AGENT_BOX, yml="run.sandbox_network",
                                   check="network")
    test_network: str = setting("none", help="ports of this machine's 127.0.0.1 that test runs may reach besides "
                                "the services': none (default) or loopback:PORT[,PORT...] (servers you run "
                                "yourself)", commands=_MR + _A, yml="test_network", check="test_network")
    allow_hosts: list[str] = setting([], help="with --sandbox-network allowlist: also let agents reach HOST, "
                                     "HOST:PORT, *.DOMAIN[:PORT] or a URL's host (repeatable; no port: 443 and 80)",
                                     commands=_AGENT_BOX, flag="allow-host", yml="run.allow_hosts",
                                     yml_also=(str,), check="hosts")
    max_output_mb: float = setting(5.0, help="MiB kept of an agent's stdout and of its stderr each (agent.out, "
                                   "agent.err; the rest is cut with a marker line, the last lines kept; default 5)",
                                   commands=_AGENT_BOX, yml="run.max_output_mb", check="positive")
    max_file_mb: float = setting(50.0, help="MiB per file an agent may write; a bigger file, a named pipe, socket or "
                                 "device in its folders is agent_error (default 50)",
                                 commands=_AGENT_BOX, yml="run.max_file_mb", check="positive")
    max_workspace_mb: float = setting(500.0, help="MiB an agent may add to its workspace, TMPDIR and HOME in all "
                                      "(over it: stopped, agent_error; default 500)",
                                      commands=_AGENT_BOX, yml="run.max_workspace_mb",
                                      check="positive")
    attacks: bool = setting(False, help="run the built-in attack agents on every task and check that grading holds",
                            commands=("verify",))
    base_url: str | None = setting(None, help="base URL of an OpenAI-compatible server for openai: agents",
                                   commands=("run", "ablate", "probe"))
    api_key: str | None = setting(None, help="API key for openai: agents", commands=("run", "ablate", "probe"))
    preds_partial: bool = setting(False, help="preds: agents: ignore prediction ids that match no task (default: "
                                  "exit 2, as SWE-bench refuses them)", commands=("run",))
    preds_policy: str = setting("last", help="preds: agents, several predictions of one instance: last (default, "
                                "SWE-bench's), first, or attempts (the n-th is attempt n)", commands=("run",),
                                choices=("last", "first", "attempts"))
    max_tokens: int | None = setting(
        OPENAI_MAX_TOKENS, help=f"openai: agents: the most tokens a reply may have, sent as max_tokens (default "
        f"{OPENAI_MAX_TOKENS}; agents.<name>.max_tokens: null sends no cap)", commands=("run", "ablate", "probe"))
    temperature: float | None = setting(None, help="openai: agents: the sampling temperature, 0 to 2 (default: "
                                        "the server's)", commands=("run", "ablate", "probe"))
    stop: list[str] = setting([], help="openai: agents: a stop sequence (repeatable; default none)",
                              commands=("run", "ablate", "probe"))
    exclude_memorized: bool = setting(
        False, help="leave out every task the probe flagged memorized for any agent of the run (needs "
        "`homefield probe` results for each agent that is not oracle/noop/sim)",
        commands=("run", "plan"), yml="run.exclude_memorized")
    resume: bool = setting(False, help="continue a run (or a probe, an ablation): only missing attempts and unscored "
                           "ones run", commands=("run", "ablate", "probe"))
    run_id: str | None = setting(
        None, help="the run id (default: a new UTC timestamp id; with --resume: the newest run)",
        commands=_RA)
    fail_under: list[str] = setting(
        [], help="exit non-zero if pass@1 is below RATE (0-1) for every agent, or AGENT=RATE (repeatable)",
        commands=("run",), yml="run.fail_under", yml_also=(str, int, float), check="gates")
    junit_unsolved: str = setting(
        "failure", help="--junitxml: write an unsolved attempt as a <failure> with its outcome (default) or as "
        "skip (pytest's xfail <skipped>, counted green by CI)", commands=_RA, yml="run.junit_unsolved",
        choices=("failure", "skip"))
    # ablation (issue 14)
    by_section: bool = setting(False, help="ablate: remove whole ## sections instead of single rules",
                               commands=_A, yml="ablate.by_section")
    yes: bool = setting(False, help="ablate: actually run (without it only the plan is printed)", commands=_A)
    # probing
    samples: int = setting(3, help="probe: samples per task and agent (default 3)", commands=("probe", "plan"),
                           yml="probe.samples", check="min1")
    cutoff: str | None = setting(
        None, help="probe: the model's training cutoff (YYYY-MM-DD); tasks authored after it are the control "
        "(default: mismatched prompt/file pairs)", commands=("probe", "plan"), yml="probe.cutoff", check="date")
    fdr: float = setting(0.10, help="probe: false discovery rate of the memorized flags (Benjamini-Hochberg, "
                         "default 0.10)", commands=("probe",), yml="probe.fdr", check="fraction")
    recite_floor: float = setting(
        0.5, help="probe: the best score a task needs to be flagged memorized, whatever the control (default 0.5: "
        "at least half the real change's code tokens; answers written without memory scored at most 0.39)",
        commands=("probe",), yml="probe.recite_floor", check="fraction")
    # scale-out (issue 17)
    shard: str | None = setting(
        None, help="only shard K of N (K/N): tasks (mine: candidates) split by a hash of each id, the same on every "
        "machine; a --budget is split evenly; merge the shards with --merge (runs: homefield report)",
        commands=("mine", "run", "probe", "ablate"), check="shard")
    fail_if_worse_than: str | None = setting(
        None, help="exit non-zero when an agent's pass@1 is lower than in run RUN_ID with the paired test "
        "significant at --alpha", commands=("run", "report"), yml="run.fail_if_worse_than")
    alpha: float = setting(0.05, help="significance level of --fail-if-worse-than (default 0.05)",
                           commands=("run", "report"), yml="run.alpha", check="fraction")
    max_retries: int = setting(2, help="times --resume retries an attempt (probe: a call) that was not scored "
                               "(rate_limited, infra); after that the agent's failure is scored (agent_error) and "
                               "homefield's own infra stays unscored, never retried (default 2)",
                               commands=(*_RA, "probe"), yml="run.max_retries", check="min0")
    adaptive: bool = setting(False, help="run attempts in rounds and stop spending on pairs of agents whose "
                             "verdict is settled (group-sequential test, a look after each round; reference "
                             "agents run round 1 only)", commands=("run",), yml="run.adaptive")
    adaptive_margin: float = setting(10.0, help="with --adaptive: the gap in points that matters; a pair whose "
                                     "interval lies within +-MARGIN stops for futility (default 10)",
                                     commands=("run",), yml="run.adaptive_margin", check="positive")
    # named agents and prices from the yml (validated by _check_agents / _check_prices)
    agent_defs: dict[str, dict[str, Any]] = field(default_factory=dict)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the yml's ``services`` (validated by :func:`~pytest_homefield.sandbox.services.parse_services`)
    services: tuple[ServiceSpec, ...] = ()

    @property
    def homefield_dir(self) -> Path:
        """``<root>/.homefield`` (:class:`pytest_homefield.layout.HomefieldDir`)."""
        return HomefieldDir(self.root).path

    @property
    def tasks_path(self) -> Path:
        """``<root>/.homefield/tasks.jsonl``."""
        return HomefieldDir(self.root).tasks


# --- the table ---------------------------------------------------------------------------------

_KINDS: dict[Any, str] = {str: "str", int: "int", float: "float", bool: "bool", list[str]: "list"}
_PY_TYPES: dict[str, type] = {"str": str, "int": int, "float": float}


@dataclass(frozen=True)
class Setting:
    """One declared setting (a :class:`Settings` field made with :func:`setting`).

    ``name``: the :class:`Settings` attribute. ``kind``: ``str``/``int``/``float``/``bool``/``list``
    (of str), from the annotation; ``nullable``: the annotation allows ``None`` (then the yml
    accepts ``null``). ``default``: the built-in default. ``flag``: ``max-source-files`` (CLI
    ``--max-source-files``, pytest ``--homefield-max-source-files``) or ``None``. ``yml``: the dotted
    key or ``None``. Other fields as in :func:`setting`.
    """

    name: str
    kind: str
    nullable: bool
    default: Any
    help: str
    commands: tuple[str, ...]
    flag: str | None
    yml: str | None
    mode: str | None
    check: str | None
    yml_also: tuple[type, ...]
    choices: tuple[str, ...] = ()

    @property
    def dest(self) -> str | None:
        """The key in the flags mapping (``max-source-files`` -> ``max_source_files``)."""
        return None if self.flag is None else self.flag.replace("-", "_")

    @property
    def pytest_option(self) -> str | None:
        """``--homefield-<flag>``, or ``None`` without a flag."""
        return None if self.flag is None else f"--homefield-{self.flag}"

    @property
    def yml_types(self) -> Any:
        """The :data:`~pytest_homefield.settings.SCHEMA` leaf: ``[str]`` for a list of strings, else a tuple of
        accepted types (a ``[str]`` inside the tuple accepts a list of strings)."""
        if self.kind == "list":
            return ([str], *self.yml_also) if self.yml_also else [str]
        base: tuple[Any, ...] = (int, float) if self.kind == "float" else (_KINDS_BACK[self.kind],)
        also = (*self.yml_also, datetime.date) if self.check == "date" else self.yml_also
        return (*base, *also, *((type(None),) if self.nullable else ()))


_KINDS_BACK: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


#: The annotations a setting may have, as written in the class body (``from __future__ import annotations``
#: keeps them as text): each part of a ``|`` union. Read as text so that the table evaluates no other
#: field's annotation (``services`` names a sandbox type, imported for type checking only).
_ANNOTATIONS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "list[str]": list[str],
                                "None": None}


def _kind(annotation: str) -> tuple[str, bool]:
    """``(kind, nullable)`` of a setting's annotation text (``"int | None"`` -> ``("int", True)``). Raises
    ``TypeError`` for anything but ``str``, ``int``, ``float``, ``bool`` or ``list[str]``, optionally ``| None``."""
    parts = [part.strip() for part in annotation.split("|")]
    rest = [_ANNOTATIONS.get(part, part) for part in parts if part != "None"]
    if len(rest) != 1 or rest[0] not in _KINDS or any(part not in _ANNOTATIONS for part in parts):
        raise TypeError(f"a setting must be str, int, float, bool or list[str] (optionally | None), got {annotation}")
    return _KINDS[rest[0]], len(rest) < len(parts)


def _table() -> tuple[Setting, ...]:
    out = []
    for f in dataclasses.fields(Settings):
        decl = f.metadata.get(_META)
        if decl is None:
            continue
        kind, nullable = _kind(str(f.type))
        factory = f.default_factory
        default = factory() if callable(factory) else f.default
        flag = None if decl.flag is None else (decl.flag or f.name.replace("_", "-"))
        if decl.check is not None and flag is None:
            raise TypeError(f"setting {f.name}: a check names the flag, so it needs commands")
        out.append(Setting(f.name, kind, nullable, default, decl.help, decl.commands, flag, decl.yml,
                           decl.mode, decl.check, decl.yml_also, decl.choices))
    return tuple(out)


#: Every declared setting, in declaration order.
SETTINGS: tuple[Setting, ...] = _table()

#: The settings that own a flag: the first declared per flag name (``max-tasks`` is shared by
#: ``mine_max_tasks`` and ``run_max_tasks``), in declaration order.
FLAGS: tuple[Setting, ...] = tuple(
    s for i, s in enumerate(SETTINGS) if s.flag is not None and all(t.flag != s.flag for t in SETTINGS[:i]))


# --- flags -------------------------------------------------------------------------------------

def option(flag: str, front: str | None = None) -> str:
    """How a message names the option of the setting whose flag is ``flag`` for the front end in use
    (:func:`~pytest_homefield.spelling.front_end`): ``--attempts`` under the ``homefield`` script,
    ``--homefield-attempts`` under ``pytest --homefield`` (ux65: a run's header said ``--attempts 1`` to a user of
    pytest, which has no such option). Raises ``KeyError`` for a flag no setting has (a message naming an option
    that does not exist). ``front``: a front end to spell for instead of the one in use (``"cli"`` for a text
    kept in a record, or a ``homefield <command>`` line, :func:`~pytest_homefield.spelling.spell`)."""
    found = next((s for s in FLAGS if s.flag == flag), None)
    if found is None:
        raise KeyError(f"no setting has the flag --{flag}")
    return spell(flag, front)


def pytest_help(text: str) -> str:
    """A help text of the table (which names a setting's flag ``--<flag>``, the ``homefield`` script's spelling)
    as ``pytest --help`` shows it: each setting's flag spelled ``--homefield-<flag>`` (opt46: ``pytest --help``
    said ``with --env uv``, an option pytest does not know); other options (``uv --exclude-newer``) as they are."""
    flags = {s.flag for s in FLAGS}
    return _HELP_FLAG.sub(lambda m: option(m.group(1), "pytest") if m.group(1) in flags else m.group(0), text)


#: An option named in a help text: ``--`` and a lowercase name, not inside a longer word (``uv --exclude-newer``).
_HELP_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def add_pytest_options(parser: Any) -> None:
    """Register the mode options and every flag of :data:`FLAGS` on a pytest ``Parser``, their helps spelled for
    pytest (:func:`pytest_help`)."""
    group = parser.getgroup("homefield", "pytest-homefield: a benchmark from your git history")
    for name in MODE_OPTIONS:
        kind: dict[str, Any] = {"metavar": "FILE", "default": None} if name == "homefield_ablate" else \
            {"action": "store_true", "default": False}
        group.addoption(f"--{name.replace('_', '-')}", help=pytest_help(MODE_OPTIONS[name]), **kind)
    # which front end the session's messages name options for (:func:`option`): the homefield script passes ``cli``
    group.addoption("--homefield-front-end", choices=FRONT_ENDS, default=None, help=argparse.SUPPRESS)
    for s in FLAGS:
        kwargs: dict[str, Any] = {"dest": f"homefield_{s.dest}", "help": pytest_help(s.help)}
        if s.kind == "bool":
            kwargs.update(action="store_true", default=False)
        elif s.kind == "list":
            kwargs.update(action="append", default=[], metavar=str(s.dest).upper())
        else:
            kwargs.update(type=_PY_TYPES[s.kind], default=None, metavar=str(s.dest).upper())
        group.addoption(s.pytest_option, **kwargs)


def flags_from_pytest(option: Any) -> dict[str, Any]:
    """``{dest: value}`` of every homefield option on pytest's ``config.option`` namespace."""
    return {str(s.dest): getattr(option, f"homefield_{s.dest}", None) for s in FLAGS}


def _cli_help(s: Setting, command: str) -> str:
    """The help under ``homefield <command>``. A flag shared by modes has one help with a part per
    mode (``mine: …; run: …``): only the part of the command's mode is shown (``plan`` plans a run)."""
    parts = dict(p.split(": ", 1) for p in s.help.split("; ") if p.split(": ", 1)[0] in ("mine", "run"))
    if len(parts) < 2:
        return s.help
    return parts["mine" if command == "mine" else "run"]


def add_cli_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the flags that ``command`` accepts to an argparse subparser as ``--<flag>``."""
    for s in FLAGS:
        if command not in s.commands:
            continue
        text = _cli_help(s, command)
        if s.kind == "bool":
            parser.add_argument(f"--{s.flag}", action="store_true", default=False, help=text)
        elif s.kind == "list":
            parser.add_argument(f"--{s.flag}", action="append", default=[], help=text)
        else:
            parser.add_argument(f"--{s.flag}", type=_PY_TYPES[s.kind], default=None, help=text)


def cli_to_pytest_args(ns: argparse.Namespace, command: str) -> list[str]:
    """The ``--homefield-*`` pytest arguments for the CLI values in ``ns`` that were given."""
    args: list[str] = []
    for s in FLAGS:
        if command not in s.commands:
            continue
        value = getattr(ns, str(s.dest), None)
        if s.kind == "bool":
            if value:
                args.append(str(s.pytest_option))
        elif s.kind == "list":
            for v in value or []:
                args.append(f"{s.pytest_option}={v}")
        elif value is not None:
            args.append(f"{s.pytest_option}={value}")
    return args


def join_flags(values: Sequence[str]) -> list[str]:
    """Split comma-separated entries of a repeatable option (``--paths a,b --paths c``)."""
    out: list[str] = []
    for v in values:
        out.extend(p for p in (x.strip() for x in v.split(",")) if p)
    return out


