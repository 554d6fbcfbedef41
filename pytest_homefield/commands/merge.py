"""``homefield mine --merge DIR…``, ``homefield probe --merge DIR…`` and ``homefield ablate FILE --merge
DIR…``: the folders of N ``--shard K/N`` sessions (from N machines, e.g. a CI matrix's artifacts)
combined into this repository's ``.homefield/``, as one unsharded session would have left it
(docs/contracts.md §2, §4). No pytest session starts and no agent or test runs.

- mine: the shards' mine folders → one mine folder and ``tasks.jsonl`` (:mod:`pytest_homefield.mine.mine_shards`);
- probe: the shards' ``probe/`` folders → ``.homefield/probe/<agent>.jsonl`` judged over every task
  (:mod:`pytest_homefield.probe.probe_shards`);
- ablate: the shards' ablation folders → one ablation folder, its table and slimmer file
  (:mod:`pytest_homefield.ablate.ablate_shards`).

Exit status: 0 merged; 2 refused (different task or candidate sets, shards of different splits, a
key two folders disagree on, a missing shard of a mining split, a shard's records file that is a link, no regular
file or holds a line over :data:`~pytest_homefield.store.MAX_LINE_BYTES`), one line on stderr, nothing
written. Runs are merged by ``homefield report RUN…`` instead (:mod:`pytest_homefield.report.shard_checks`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from pytest_homefield.ablate.ablate_shards import find_ablation_folder, merge_ablations
from pytest_homefield.ablate.render import render_lines
from pytest_homefield.ablate.rules import resolve_rules_file, split_rules
from pytest_homefield.errors import ConfigError, ShardMergeError
from pytest_homefield.layout import new_id
from pytest_homefield.mine.mine_shards import merge_mines
from pytest_homefield.probe.probe_shards import merge_probes
from pytest_homefield.probe.verdicts import verdict_lines
from pytest_homefield.records import load_tasks
from pytest_homefield.settings import resolve_settings
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["run_merge"]

def _mine(ns: argparse.Namespace, root: Path) -> int:
    m = merge_mines([Path(d) for d in ns.merge], root)
    print("\n".join(m.lines(root)))
    return 0


def _probe(ns: argparse.Namespace, root: Path) -> int:
    merges = merge_probes([Path(d) for d in ns.merge], root)
    by_id = {t.id: t for t in load_tasks(root / ".homefield" / "tasks.jsonl")}
    for m in merges:
        shards = ", ".join(s or "unsharded" for _, s in m.sources)
        print(f"merged {plural(len(m.sources), 'probe folder')} of {m.name} ({shards}): "
              f"{plural(len(m.records), 'call')}"
              + (f"; {m.reconciled} present twice with the same result, counted once" if m.reconciled else ""))
        for line, _ in verdict_lines(m.name, m.spec, m.verdict, by_id, m.cost_usd):
            print(line)
        for line in m.verdict.incomplete:
            print(line, file=sys.stderr)
    print(f"Records: .homefield/probe/<agent>.jsonl ({', '.join(m.name for m in merges)})")
    return 0


def _ablate(ns: argparse.Namespace, root: Path) -> int:
    settings = resolve_settings(root, dict(vars(ns)), mode="run")
    if settings.shard:
        raise ConfigError(f"homefield ablate --merge: {option('shard', 'cli')} makes no sense with --merge (the "
                          "merge is every shard)")
    path, rel = resolve_rules_file(ns.rules_file, Path.cwd(), root)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"rules file {path.name} is not UTF-8 text") from None
    picked = [find_ablation_folder(Path(d)) for d in ns.merge]
    for _, why in picked:  # a DIR holding several ablations: say which was taken
        if why:
            print(why)
    session, doc = merge_ablations([folder for folder, _ in picked], settings, rules_rel=rel, rules_text=text,
                                   split=split_rules, new_id=settings.run_id or new_id())
    print(f"homefield ablate: merged {len(ns.merge)} ablation folders into {doc['folder']} ({doc['results']} "
          "attempts)")
    for line, _ in render_lines(doc):
        print(line)
    folder = doc["folder"]
    print(f"Reports: {folder}/report.md, report.json, report.html")
    agents = " ".join(f"{option('agent', 'cli')} {shlex.quote(f'{a.name}={a.spec}')}" for a in session.agents)
    n_all = len(load_tasks(settings.tasks_path))
    first_n = [t.id for t in load_tasks(settings.tasks_path)][: len(session.tasks)] == [t.id for t in session.tasks]
    cut = f" {option('max-tasks', 'cli')} {len(session.tasks)}" if len(session.tasks) < n_all and first_n else ""
    if session.phase == "slim":
        print(f"Measure the slimmer file with: homefield ablate {rel} {agents} {option('attempts', 'cli')} "
              f"{session.settings.attempts}{cut} {option('yes', 'cli')} {option('resume', 'cli')} "
              f"{option('run-id', 'cli')} {session.ablate_id} (per machine: copy {folder} and add "
              f"{option('shard', 'cli')} K/N, then merge the copies)")
    for line in session.incomplete:
        print(line, file=sys.stderr)
    return 0


def run_merge(ns: argparse.Namespace, root: Path) -> int:
    """``--merge`` of ``ns.command`` (``mine``, ``probe`` or ``ablate``) in the repository ``root``;
    returns the exit status."""
    try:
        return {"mine": _mine, "probe": _probe, "ablate": _ablate}[ns.command](ns, root)
    except (ShardMergeError, ConfigError, ValueError, OSError) as exc:
        # a shard's file refused by the store (a link, a fifo, a line without end: satk60) is an OSError or a
        # ValueError naming the file, which no merge step wrapped: one line too, never a traceback
        message = str(exc)
        print(message if message.startswith("homefield ") else f"homefield {ns.command} --merge: {message}",
              file=sys.stderr)
        return 2
