"""``homefield ablate FILE``: the plan without ``--yes``, else the ablation through ``pytest.main``.

Without ``--yes`` the plan is printed and nothing else happens: no pytest session, no agent, no file
written. With ``--yes`` the CLI runs ``pytest --homefield-ablate FILE --homefield-yes …`` for base
and the per-rule variants, and, when that session finished every one of those attempts, once more
with ``--homefield-resume`` for the slimmer file. What the plan is made of is the ablation's own
(:mod:`pytest_homefield.ablate.rules`, :mod:`~pytest_homefield.ablate.variants`,
:mod:`~pytest_homefield.ablate.ablate_plan`), shared with the pytest plugin.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_homefield.ablate.ablate_plan import build_plan, plan_lines, workers_from
from pytest_homefield.ablate.rules import load_rules, resolve_rules_file
from pytest_homefield.ablate.variants import agent_rows
from pytest_homefield.argv import pytest_args
from pytest_homefield.errors import ConfigError
from pytest_homefield.layout import HomefieldDir, new_id, newest_run, read_meta
from pytest_homefield.records import load_tasks
from pytest_homefield.settings import resolve_settings
from pytest_homefield.settings_table import option
from pytest_homefield.shard import parse_shard

__all__ = ["run_ablate"]


def run_ablate(ns: argparse.Namespace, root: Path, extra: Sequence[str], plugins: Sequence[object] = ()) -> int:
    """``homefield ablate``: print the plan (exit 0), or run the ablation with ``--yes`` (``plugins``: given
    to ``pytest.main``)."""
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
        status = int(pytest.main(args, plugins=list(plugins)))
        meta = read_meta(ablate_root / str(ns.run_id)) if ns.run_id else {}
    except ValueError as exc:  # RunError: a meta.json that does not validate (one line naming the file)
        print(f"homefield ablate: {exc}", file=sys.stderr)
        return 2
    if status in (0, 1) and meta.get("next_phase") == "slim" and not meta.get("cut_short"):
        print(f"homefield ablate: every per-rule attempt is in; measuring the slimmer file "
              f"({option('resume')} {option('run-id')} {ns.run_id})", flush=True)
        ns.resume = True
        status = int(pytest.main(pytest_args(ns, "ablate", root, extra), plugins=list(plugins)))
    return status
