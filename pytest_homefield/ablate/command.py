"""``homefield ablate FILE``: the plan without ``--yes``, else the ablation through ``pytest.main``.

Without ``--yes`` the plan is printed and nothing else happens: no pytest session, no agent, no file
written. With ``--yes`` the CLI runs ``pytest --homefield-ablate FILE --homefield-yes …`` for base
and the per-rule variants, and, when that session finished every one of those attempts, once more
with ``--homefield-resume`` for the slimmer file. The helpers here are shared with the pytest plugin.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_homefield.ablate.plan import AblationPlan, make_plan, merged_history, plan_lines
from pytest_homefield.ablate.rules import RuleSet, split_rules
from pytest_homefield.ablate.variants import rules_path_for
from pytest_homefield.agents.registry import parse_spec
from pytest_homefield.argv import pytest_args
from pytest_homefield.errors import AgentSpecError, ConfigError
from pytest_homefield.layout import HomefieldDir, new_id, newest_run, read_meta
from pytest_homefield.records import load_tasks
from pytest_homefield.settings import Settings, resolve_settings
from pytest_homefield.shard import parse_shard

__all__ = ["resolve_rules_file", "load_rules", "agent_rows", "workers_from", "build_plan", "run_cli"]


def resolve_rules_file(arg: str, cwd: Path, root: Path) -> tuple[Path, str]:
    """The rules file ``arg`` (relative to ``cwd``, or absolute) as ``(absolute path, POSIX path relative
    to the repository root)``. Raises ``ValueError`` (one line) when it is missing, not a regular
    file, or outside the repository."""
    path = Path(arg)
    path = (path if path.is_absolute() else cwd / path)
    if not path.is_file():
        raise ValueError(f"rules file {arg!r} not found (looked at {path})")
    resolved = path.resolve()
    try:
        rel = resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        raise ValueError(f"rules file {arg!r} is outside the repository {root}") from None
    if rel.startswith(".homefield/") or rel.startswith(".git/"):
        raise ValueError(f"rules file {arg!r} must be a file of the repository, not under .homefield/ or .git/")
    return resolved, rel


def load_rules(path: Path, *, by_section: bool) -> RuleSet:
    """Read (UTF-8) and split the rules file. Raises ``ValueError`` when it is not UTF-8 or has no rules."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"rules file {path.name} is not UTF-8 text") from None
    rules = split_rules(text, by_section=by_section)
    if not rules.rules:
        what = "no ## sections" if by_section else "no rules (list items or paragraphs)"
        raise ValueError(f"rules file {path.name} has {what}: nothing to ablate")
    return rules


def agent_rows(settings: Settings, rel: str, agents: Sequence[tuple[str, str]] | None = None,
               registered: Sequence[str] = ()) -> list[tuple[str, str, str]]:
    """``(name, spec, rules path in the snapshot)`` per ``--agent``. ``agents``: built ``(name, spec)``
    pairs in ``--agent`` order, when known; else names and specs come from parsing the specs. Raises
    ``ValueError`` when no agent is given or a spec is bad."""
    if not settings.agents:
        raise ValueError("no agent given: add --agent SPEC (e.g. claude:claude-sonnet-4-5)")
    rows = []
    for i, text in enumerate(settings.agents):
        try:
            p = parse_spec(text, named=settings.agent_defs, registered=list(registered))
            path = rules_path_for(text, rel, settings.agent_defs, registered)
        except AgentSpecError as exc:
            raise ValueError(str(exc)) from None
        spec = str(settings.agent_defs[p.arg]["spec"]) if p.kind == "named" and p.arg else p.spec
        name = agents[i][0] if agents else p.name
        rows.append((name, agents[i][1] if agents else spec, path))
    names = [r[0] for r in rows]
    if len(set(names)) != len(names):
        raise ValueError("two agents share a name: rename one with NAME=SPEC")
    return rows


def workers_from(value: object) -> int:
    """Workers for ``-n VALUE`` (``auto``/``logical`` = CPUs; none or 0 = 1)."""
    if value in (None, "", 0, "0"):
        return 1
    if str(value) in ("auto", "logical"):
        return os.cpu_count() or 1
    try:
        return max(1, int(str(value)))
    except ValueError:
        return 1


def build_plan(settings: Settings, rel: str, rules: RuleSet, n_tasks: int, rows: list[tuple[str, str, str]],
               workers: int) -> AblationPlan:
    """The :class:`AblationPlan` with history from ``.homefield/runs`` and ``.homefield/ablate``. Raises
    ``ValueError`` for a negative ``--cost-per-run``."""
    if settings.cost_per_run is not None and settings.cost_per_run < 0:
        raise ValueError(f"--cost-per-run must not be negative, got {settings.cost_per_run}")
    return make_plan(rules_file=rel, rules=rules, n_tasks=n_tasks, agents=rows, attempts=settings.attempts,
                     workers=workers, history=merged_history(HomefieldDir(settings.root)),
                     seconds_per_run=settings.seconds_per_run, cost_per_run=settings.cost_per_run,
                     budget_usd=_shard_budget(settings))


def _shard_budget(settings: Settings) -> float | None:
    """The ``--budget`` (USD) of this session: with ``--shard K/N`` its even part."""
    shard = parse_shard(settings.shard)
    return shard.split_budget(settings.budget) if shard else settings.budget


def run_cli(ns: argparse.Namespace, root: Path, extra: Sequence[str]) -> int:
    """``homefield ablate``: print the plan (exit 0), or run the ablation with ``--yes``."""
    flags = dict(vars(ns))
    try:
        settings = resolve_settings(root, flags, mode="run")
        path, rel = resolve_rules_file(ns.rules_file, Path.cwd(), root)
        rules = load_rules(path, by_section=settings.by_section)
        if not settings.tasks_path.exists():
            raise ValueError(f"no tasks at {settings.tasks_path}: run `homefield mine` first")
        tasks = load_tasks(settings.tasks_path)
        if settings.run_max_tasks is not None:
            tasks = tasks[: settings.run_max_tasks]
        shard = parse_shard(settings.shard)
        if shard is not None:  # the plan of this shard's part, as the session selects it
            mine = shard.select(t.id for t in tasks)
            tasks = [t for t in tasks if t.id in mine]
        unknown = [a for a in settings.agents if re.fullmatch(r"[A-Za-z0-9_.-]+", a)
                   and a not in ("oracle", "noop", "claude") and a not in settings.agent_defs]
        rows = agent_rows(settings, rel, registered=unknown)  # bare names may be conftest hook agents
    except (ConfigError, ValueError) as exc:
        print(f"homefield ablate: {exc}", file=sys.stderr)
        return 2
    if not settings.yes:
        plan = build_plan(settings, rel, rules, len(tasks), rows, workers_from(ns.numprocesses))
        print("\n".join(plan_lines(plan, will_run=False)))
        return 0
    ablate_root = HomefieldDir(root).ablate
    try:
        if not settings.run_id:
            ns.run_id = newest_run(ablate_root) if settings.resume else new_id()
        args = pytest_args(ns, "ablate", root, extra)
        status = int(pytest.main(args))
        meta = read_meta(ablate_root / str(ns.run_id)) if ns.run_id else {}
    except ValueError as exc:  # RunError: a meta.json that does not validate (one line naming the file)
        print(f"homefield ablate: {exc}", file=sys.stderr)
        return 2
    if status in (0, 1) and meta.get("next_phase") == "slim" and not meta.get("cut_short"):
        print(f"homefield ablate: every per-rule attempt is in; measuring the slimmer file "
              f"(--resume --run-id {ns.run_id})", flush=True)
        ns.resume = True
        status = int(pytest.main(pytest_args(ns, "ablate", root, extra)))
    return status
