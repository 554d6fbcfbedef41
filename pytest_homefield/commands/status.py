"""``homefield status``: the mines, runs, ablations and memorization probes of this repository, in progress
or finished, their folders, and which run ``homefield report`` picks (issue 35). Reads ``.homefield/`` only;
runs nothing.

A session is *in progress* while its folder's lock is held (:class:`pytest_homefield.store.FolderLock`:
``runs/<id>/.lock`` for a run; ``.homefield/.lock`` for mining, which belongs to the newest mine
folder). Example::

    mines (.homefield/mine):
      20261202-101500-ab12  in progress (pid 4242 on box since …) · started … · 34 of 100 candidates verified, 12 kept
      20261201-090000-cd34  finished · started … · 100 of 100 candidates verified, 31 kept
      20261130-080000-ef12  incomplete (1 line below) · started … · 37 of 38 candidates verified, 9 kept
        incomplete: shard 2/3 left out 1 candidate of its share of the scan (9f3c2a1b7e04): 1 not verified at a …
    runs (.homefield/runs):
      20261202-110000-ef56  in progress … · 3 of 8 attempts finished
      20261201-120000-gh78  started 2026-12-01 12:00 UTC · oracle, noop · 8 of 8 attempts finished
    verify runs (homefield verify; homefield report VERIFY_ID reports on one):
      verify-20261201-130000-ij90  started 2026-12-01 13:00 UTC · oracle, attack-daemon · 4 of 4 attempts finished
    ablations (.homefield/ablate):
      20261203-080000-kl12  started 2026-12-03 08:00 UTC · claude · 40 of 80 attempts finished · in progress (…) ·
        rules CLAUDE.md, 5 variants   (one line)
    probes (.homefield/probe):
      claude  40 calls, 40 scored · last call 2026-12-03 09:00 UTC · 2 of 20 tasks flagged memorized
    homefield report picks 20261201-120000-gh78 (the newest finished run): .homefield/runs/20261201-120000-gh78

A run's finished attempts are those inside its ``meta.json`` plan; results outside it are said on the run's
line, not counted (:class:`pytest_homefield.report.which.RunSummary`). An ablation is summed up as a run
(its lock ``ablate/<id>/.lock``), its plan tasks × agents × attempts × the variants of its ``plan.json``; a
probe file by its calls (a retried call once, its last line), its verdict line when one was written after its
last call (else ``no verdict yet``: a session probing now, or one stopped before its end). The lines are
omitted when there is no ablation or no probe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pytest_homefield.errors import RecordError
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import one_line
from pytest_homefield.report.which import RunSummary, pick_run, run_summaries, run_summary
from pytest_homefield.settings_table import option
from pytest_homefield.store import lock_holder, read_jsonl, read_jsonl_lines
from pytest_homefield.terminal.progress import plural

__all__ = ["MineSummary", "ablation_summaries", "mine_summaries", "probe_lines", "run_status", "status_lines"]


@dataclass
class MineSummary:
    """One mine folder at a glance: ``candidates`` its frozen candidates (``candidates.jsonl``),
    ``verified`` the distinct candidates with a verification record (a ``not_verified`` record, which a bound
    such as ``--time-budget`` writes for each candidate it left, is none: ref28 on more-itertools said "37 of
    37 candidates verified" of a mine that verified 12), ``kept`` those kept as tasks, ``running`` who holds
    the mining lock when this is the session mining now, ``stopped`` what stopped it early (``meta.json``
    ``stopped.detail``: ``time budget 8m reached``), else ``None``; ``incomplete`` the ``incomplete: shard K/N left
    out …`` lines of a ``mine --merge`` whose shards left candidates of their shares unverified (``meta.json``
    ``incomplete``, ops40), each said under the mine's line (ops41: status said such a mine ``finished``)."""

    mine_id: str
    folder: Path
    created_at: str
    shard: str | None
    candidates: int
    verified: int
    kept: int
    running: str | None
    stopped: str | None = None
    incomplete: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """``finished · 100 of 100 candidates verified, 31 kept`` (``in progress (pid …)`` while mining;
        ``stopped`` when it ended before verifying every candidate, with what stopped it when known:
        ``stopped (time budget 8m reached)``; ``incomplete (N lines below)`` for a merged mine whose shards left
        candidates out, :attr:`incomplete`, as a run's line says it is a subset)."""
        state = (f"in progress ({self.running})" if self.running
                 else f"incomplete ({plural(len(self.incomplete), 'line')} below)" if self.incomplete
                 else "finished" if self.verified >= self.candidates
                 else f"stopped ({self.stopped})" if self.stopped else "stopped")
        when = self.created_at[:16].replace("T", " ") + " UTC" if self.created_at else "unknown time"
        shard = f" · shard {self.shard}" if self.shard else ""
        return (f"{state} · started {when}{shard} · {self.verified} of {plural(self.candidates, 'candidate')} "
                f"verified, {self.kept} kept")


def mine_summaries(home: HomefieldDir) -> list[MineSummary]:
    """Every mine folder of ``home``, newest ``created_at`` first; the newest is in progress while
    ``.homefield/.lock`` is held. A folder without a readable ``meta.json`` is left out."""
    out = []
    for d in home.mine_dirs():
        try:
            meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            continue
        said = meta.get("incomplete")
        incomplete = [one_line(str(x)) for x in said] if isinstance(said, list) else []
        candidates = 0
        verdicts: dict[str, bool] = {}
        try:  # fix45: a file that is a link (never followed) or no regular file is said, never a traceback
            candidates = sum(1 for _ in read_jsonl(d / "candidates.jsonl"))
            for r in read_jsonl(d / "results.jsonl"):
                if isinstance(r, dict) and r.get("reason") != "not_verified":  # a bound left it: not verified
                    verdicts[str(r.get("id") or "")] = bool(r.get("task"))  # a kept candidate carries its task
        except (OSError, ValueError) as exc:  # StoreError, RecordError: one line naming the file
            incomplete.append(f"not read: {one_line(str(exc))}")
        stopped = meta.get("stopped")
        why = stopped.get("detail") if isinstance(stopped, dict) else None
        out.append(MineSummary(d.name, d, str(meta.get("created_at") or ""), meta.get("shard"), candidates,
                               len(verdicts), sum(verdicts.values()), None, str(why) if why else None, incomplete))
    out.sort(key=lambda m: (m.created_at, m.mine_id), reverse=True)
    if out:
        out[0].running = lock_holder(home.path)
    return out


def ablation_summaries(home: HomefieldDir) -> list[tuple[RunSummary, str]]:
    """Every ablation folder of ``home`` (``ablate/<id>/``) as a run's summary (its plan multiplied by the
    variants of its ``plan.json``) with ``rules FILE, K variants``, newest ``created_at`` first; a folder
    without a readable ``meta.json`` is left out."""
    out = []
    for d in sorted(home.ablate.iterdir()) if home.ablate.is_dir() else []:
        summary = run_summary(d) if d.is_dir() else None
        if summary is None:
            continue
        try:
            plan = json.loads((d / "plan.json").read_text(encoding="utf-8"))
            variants = plan.get("variants") if isinstance(plan, dict) else None
            n = len(variants) if isinstance(variants, list) else 0
        except (OSError, ValueError):
            n = 0
        summary.planned *= n
        try:
            rules = json.loads((d / "meta.json").read_text(encoding="utf-8")).get("rules_file")
        except (OSError, ValueError, AttributeError):
            rules = None
        out.append((summary, f"rules {rules or '?'}, {plural(n, 'variant')}"))
    return sorted(out, key=lambda x: (x[0].created_at, x[0].run_id), reverse=True)


def probe_lines(home: HomefieldDir) -> list[str]:
    """One line per probe file of ``home`` (``probe/<agent>.jsonl``, by agent name): ``AGENT  N calls, S
    scored · last call T · F of J tasks flagged memorized`` (the verdict's ``flagged`` and
    ``judged``, ``, K unjudged`` when some are), or ``· no verdict yet (a probe in progress, or one stopped
    before its end: homefield probe --resume finishes it)`` when no verdict line follows the last call.
    No record is checked (``homefield probe`` refuses a bad one when it reads the file); a file that is not JSON
    lines of objects is ``unreadable: <why>``."""
    lines = []
    for path in sorted(home.probe.glob("*.jsonl")) if home.probe.is_dir() else []:
        calls: dict[tuple[str, str, str], dict[str, object]] = {}
        verdict: dict[str, object] | None = None
        try:
            records = [r for _, r in read_jsonl_lines(path)]
        except (RecordError, OSError) as exc:
            lines.append(f"  {one_line(path.stem)}  unreadable: {one_line(str(exc))}")
            continue
        for r in records:
            if r.get("kind") in ("task", "control"):
                calls[(str(r["kind"]), str(r.get("task_id")), str(r.get("sample")))] = r
                verdict = None  # a call after a verdict: that verdict is not this file's last word
            elif r.get("kind") == "verdict":
                verdict = r
        last = max((str(r.get("finished_at") or r.get("started_at") or "") for r in calls.values()), default="")
        text = (f"  {one_line(path.stem)}  {plural(len(calls), 'call')}, "
                f"{sum(r.get('score') is not None for r in calls.values())} scored")
        if last:
            text += f" · last call {last[:16].replace('T', ' ')} UTC"
        if verdict is None:
            text += (" · no verdict yet (a probe in progress, or one stopped before its end: homefield probe "
                     f"{option('resume', 'cli')} finishes it)")
        else:
            flagged, judged, unjudged = verdict.get("flagged"), verdict.get("judged"), verdict.get("unjudged")
            text += (f" · {len(flagged) if isinstance(flagged, list) else '?'} of "
                     f"{plural(judged if isinstance(judged, int) else 0, 'task')} flagged memorized")
            text += f", {unjudged} unjudged" if isinstance(unjudged, int) and unjudged else ""
        lines.append(one_line(text))  # a record's time string as the terminal may show it
    return lines


def status_lines(home: HomefieldDir) -> list[str]:
    """What ``homefield status`` prints (see the module docstring); folders relative to the repository."""
    def rel(p: Path) -> str:
        try:
            return str(p.relative_to(home.root))
        except ValueError:
            return str(p)

    lines = []
    mines = mine_summaries(home)
    lines.append(f"mines ({rel(home.mine)}):" if mines else f"mines: none in {rel(home.mine)}")
    for m in mines:
        lines.append(f"  {m.mine_id}  {m.describe()}")
        lines += [f"    {x}" for x in m.incomplete]
    runs: list[RunSummary] = run_summaries(home.runs)
    lines.append(f"runs ({rel(home.runs)}):" if runs else f"runs: none in {rel(home.runs)}")
    lines += [f"  {r.run_id}  {r.describe()}" for r in runs]
    verifies = sorted((v for d in (home.runs.iterdir() if home.runs.is_dir() else [])
                       if d.name.startswith("verify-") for v in [run_summary(d)] if v is not None),
                      key=lambda v: (v.created_at, v.run_id), reverse=True)
    if verifies:  # never picked by homefield report (contracts §4), reported on by name
        lines.append("verify runs (homefield verify; homefield report VERIFY_ID reports on one):")
        lines += [f"  {v.run_id}  {v.describe()}" for v in verifies]
    ablations = ablation_summaries(home)
    if ablations:
        lines.append(f"ablations ({rel(home.ablate)}):")
        lines += [f"  {a.run_id}  {a.describe()} · {what}" for a, what in ablations]
    probes = probe_lines(home)
    if probes:
        lines.append(f"probes ({rel(home.probe)}):")
        lines += probes
    picked, running = pick_run(runs)
    if picked is not None:
        s = next(r for r in runs if r.run_id == picked)
        why = "every run is in progress: the newest" if s.running else "the newest finished run"
        lines.append(f"homefield report picks {picked} ({why}): {rel(home.run_dir(picked))}")
        lines += running
    return lines


def run_status(root: Path) -> int:
    """Print :func:`status_lines` for the repository at ``root``; 0."""
    for line in status_lines(HomefieldDir(root)):
        print(line)
    return 0
