"""The report's numbers: one run folder (or several) → one JSON-ready dict (docs/contracts.md §10).

Nothing here renders text; :mod:`.text`, :mod:`.markdown` and :mod:`.html` turn the dict from
:func:`build_report` into output. All statistics come from :mod:`pytest_homefield.report.stats`.

Units: USD for costs, tokens for token counts, seconds for times, fractions in [0, 1] for rates.
Floats are rounded to 6 decimals so that the JSON is stable across platforms.

Keys beyond docs/contracts.md §10 (documented in :func:`build_report`): ``alpha``, ``seed``, ``runs``,
``legend``, ``notes``, ``languages``, ``flagged``, ``similarity``; per agent ``rank``, ``name``,
``model``, ``version``, ``tasks_solved``, ``unscored``, ``attempts_per_task``, ``cost_missing``,
``tokens_missing``, ``errors``, ``similarity_exact``, ``similarity_n``; per comparison those of
``stats.Comparison.to_dict`` (``alpha``, ``attempts``, ``b_c`` = tasks won by a / by b, ``ties``,
``sd_diff``, ``exact``, ``significant``, ``note``); per task ``known`` and ``similarity``; under
``well_specified`` ``excluded`` and ``pass_at_1_ci``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.layout import attempt_dir, read_meta, results_path, similarity_path
from pytest_homefield.probe_records import load_verdict, probe_path
from pytest_homefield.records import OUTCOMES, SCORED_OUTCOMES, UNSCORED_OUTCOMES, Result, Task
from pytest_homefield.records import load_results as records_load_results
from pytest_homefield.report import stats
from pytest_homefield.report.similarity import (
    Similarity,
    SimilarityCache,
    changed_lines,
    gold_digest,
    similarity_of_lines,
)

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "SYMBOLS",
    "build_report",
    "load_meta",
    "load_results",
]

REPORT_SCHEMA_VERSION = 1

#: One character per outcome for the per-task grid (single-width in a terminal); ``·`` = no record.
SYMBOLS: dict[str, str] = {
    "solved": "✓",
    "tests_failed": "✗",
    "regression": "R",
    "empty_patch": "∅",
    "timeout": "T",
    "test_timeout": "t",
    "agent_error": "E",
    "budget_exceeded": "$",
    "infra": "I",
    "rate_limited": "L",
}
MISSING_SYMBOL = "·"

_NDIGITS = 6


# --------------------------------------------------------------------------------------- loading


def load_meta(run_dir: Path) -> dict[str, Any]:
    """The run's ``meta.json`` as a dict, with ``run_id`` defaulting to the folder name.

    A missing file gives ``{"run_id": <folder name>}`` (a report can still be made from the results);
    a file that is not a valid ``meta.json`` raises ``ValueError`` (:class:`RunError`) naming the
    file and field (:func:`pytest_homefield.layout.read_meta`).
    """
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)  # a report needs none of a resume's fields
    meta.setdefault("run_id", run_dir.name)
    return meta


def check_same_specs(metas: Sequence[dict[str, Any]]) -> None:
    """Raise ``ValueError`` when one agent name stands for different specs in two runs (their
    results would be merged as one agent): ``"agent 'x' is 'cmd:a' in run r1 but 'cmd:b' in run r2"``."""
    seen: dict[str, tuple[str, str]] = {}
    for meta in metas:
        for a in meta.get("agents") or []:
            name, spec = a.get("name"), a.get("spec")
            if name in seen and seen[name][0] != spec:
                raise ValueError(f"agent {name!r} is {seen[name][0]!r} in run {seen[name][1]} but {spec!r} in run "
                                 f"{meta.get('run_id')}: report these runs apart, or rename one agent (NAME=SPEC)")
            seen.setdefault(str(name), (str(spec), str(meta.get("run_id"))))


def _load_results(run_dir: Path) -> tuple[list[Result], int]:
    """Results of one run (last line wins per key) and the number of unreadable records (0: a bad
    record raises :class:`~pytest_homefield.records.RecordError` naming file, line and field; a
    torn line is skipped)."""
    by_key: dict[tuple[str, str, int, str], Result] = {}
    for r in records_load_results(results_path(Path(run_dir))):
        by_key.pop(r.key, None)  # re-insert so the order is that of the winning lines
        by_key[r.key] = r
    return list(by_key.values()), 0


def load_results(run_dir: Path) -> list[Result]:
    """The result records of ``<run_dir>/results.jsonl`` (docs/contracts.md §8), one per key
    (task_id, agent, attempt, variant), the last line winning; a torn last line and records that
    are not valid results are skipped. Ordered by the position of each key's winning line."""
    return _load_results(run_dir)[0]


# ------------------------------------------------------------------------------------ helpers


def _r(x: float | None) -> float | None:
    """Round for output; ``None`` and non-finite values become ``None``."""
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), _NDIGITS)


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _percentile(xs: Sequence[float], q: float) -> float | None:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]; ``None`` if empty."""
    if not xs:
        return None
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _is_simulated(spec: str | None) -> bool:
    return bool(spec) and str(spec).split("=", 1)[-1].startswith("sim:")


def _is_hinted(spec: str | None) -> bool:
    return bool(spec) and str(spec).split("=", 1)[-1].startswith("openai:")


@dataclass
class _Attempt:
    """One result with the run folder it came from and its diff similarity (``None``: no diff)."""

    result: Result
    run_dir: Path
    sim: Similarity | None
    f1: float | None


class _Similarities:
    """Each attempt's similarity to its task's gold patch: from the run folder's
    :class:`~pytest_homefield.report.similarity.SimilarityCache` when its ``diff.patch`` is unchanged,
    else computed (each gold patch reduced to its changed lines once) and kept there."""

    def __init__(self) -> None:
        self._caches: dict[Path, SimilarityCache] = {}
        self._gold: dict[str, tuple[Counter[tuple[str, str]], str]] = {}

    def of(self, r: Result, run_dir: Path, task: Task | None) -> tuple[Similarity | None, float | None]:
        """Similarity of the attempt's ``diff.patch`` to the gold patch; falls back to the record's own
        ``similarity`` field (F1 only) when the file is missing; ``(None, None)`` when neither exists
        or the task (hence the gold patch) is unknown."""
        path = attempt_dir(run_dir, r.task_id, r.agent, r.attempt) / "diff.patch"
        if task is not None and task.gold_patch:
            stamp = SimilarityCache.stamp(path)
            if stamp is not None:
                cache = self._caches.get(run_dir)
                if cache is None:
                    cache = self._caches[run_dir] = SimilarityCache(similarity_path(run_dir))
                gold = self._gold.get(task.id)
                if gold is None:
                    gold = self._gold[task.id] = (changed_lines(task.gold_patch, test_files=task.test_files),
                                                  gold_digest(task.gold_patch, task.test_files))
                key = f"{r.task_id}/{r.agent}/{r.attempt}"
                s = cache.get(key, stamp, gold[1])
                if s is None:
                    try:
                        patch = path.read_text(encoding="utf-8", errors="replace")
                    except OSError:
                        patch = None
                    if patch is not None:
                        s = similarity_of_lines(changed_lines(patch, test_files=task.test_files), gold[0])
                        cache.put(key, stamp, gold[1], s)
                if s is not None:
                    return s, s.f1
        if r.similarity is not None:
            return None, float(r.similarity)
        return None, None

    def save(self) -> None:
        """Keep what was computed (each run folder's ``similarity.json``)."""
        for cache in self._caches.values():
            cache.save()


# ------------------------------------------------------------------------------------ report


def display_subject(task: Task) -> str:
    """What a report calls a task: its cleaned title, the first line of its prompt (the subject
    without PR/issue references, URLs and shas: ``Fix rounding (closes #822)`` → ``Fix rounding``;
    for a merge commit, whose generated subject "Merge pull request #12 from a/b" says nothing, the PR
    title). The raw subject when the prompt is empty."""
    first = next((ln.strip() for ln in task.prompt.splitlines() if ln.strip()), "")
    return first or task.subject


def build_report(
    run_dirs: Sequence[Path],
    tasks: Sequence[Task],
    *,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, Any]:
    """Compute the report over the union of ``run_dirs`` (docs/contracts.md §10).

    Each attempt's diff similarity is computed once and kept in its run folder's ``similarity.json``
    (the one file this function writes; :class:`~pytest_homefield.report.similarity.SimilarityCache`).

    Results are keyed by (task_id, agent, attempt, variant); a key present in several run folders is
    taken from the last folder given (the same "last line wins" rule as within one file). Only the
    ``base`` variant is reported. ``tasks`` supplies subject, languages, well-specifiedness and the
    gold patch; task ids in the results but not in ``tasks`` are still reported (``known: false``).

    Shapes and units (per agent, ``agents.<name>``):

    * ``tasks``: tasks with ≥ 1 scored attempt; ``attempts``: all recorded attempts (scored and
      unscored); ``scored``: scored attempts; ``solved``: solved attempts; ``tasks_solved``: tasks
      solved at least once; ``unscored``: {outcome: count} of ``infra``/``rate_limited``.
    * ``pass_at_1``: mean over tasks of solved/scored attempts (Chen et al. unbiased, k = 1);
      ``pass_at_1_ci``: [lo, hi] from ``stats.pass_rate_ci``; ``pass_at_k`` / ``pass_hat_k``:
      {"k": value} for every k ≤ the smallest number of scored attempts on any of its tasks
      (``attempts_per_task`` = [min, max]).
    * ``cost_usd``: USD summed over all attempts that reported a cost (unscored ones included: the
      money was spent), ``None`` if none did; ``cost_partial``: some cost is an estimate;
      ``cost_missing``: attempts without a cost; ``cost_per_solved_usd``: ``cost_usd / solved``
      (USD per solved attempt), ``None`` when nothing was solved or no cost is known.
    * ``input_tokens`` … ``cache_write_tokens``: token sums (``None`` when no attempt reported them).
    * ``wall_s_p50`` / ``wall_s_p95``: seconds, linear-interpolation percentiles of the agent wall
      time over scored attempts.
    * ``outcomes``: {outcome: count} over all attempts, in :data:`OUTCOMES` order, zeros left out.
    * ``touched_tests`` / ``suspicious``: counts of attempts so flagged.
    * ``similarity_mean``: mean edit-F1 of scored attempts' diffs vs the gold patch (``None`` when no
      diff was found); ``similarity_exact``: attempts whose diff equals the gold patch's changed lines;
      ``similarity_n``: scored attempts measured.
    * ``per_language``: {language: pass@1 over the agent's tasks in that language}.
    * ``errors``: up to 3 most common ``error`` lines as [[text, count], …].

    Comparisons: every pair of agents in rank order (``a`` ranked above ``b``, ``delta = a − b`` as a
    fraction, ``ci`` [lo, hi], ``mde`` fraction), each from ``stats.compare`` on the per-task lists of
    scored 0/1 outcomes over the tasks both have scored (``test``: ``mcnemar`` or ``permutation``); the
    p-values of all pairs are Holm-adjusted together (``stats.holm``) and ``verdict``/``significant``
    use ``p_adjusted``. A pair without such a shared task gets ``test: None`` and no p-value.

    Top-level extras: ``alpha``, ``seed``; ``runs`` [{run_id, created_at, attempts, tasks_digest,
    cut_short}]; ``legend`` {outcome: symbol}; ``notes`` [str] (things a reader must know: unscored
    attempts, agents that only errored, missing costs, unequal attempts, unknown tasks, unreadable
    lines); ``languages`` {language: tasks}; ``flagged`` [{task_id, agent, attempt, outcome,
    suspicious, touched_tests}]; ``similarity`` {agent: {mean_f1_solved, mean_f1_unsolved}};
    ``memorization`` (only when an agent of the report was probed or a run left tasks out with
    ``--exclude-memorized``; see :func:`memorization`).
    """
    run_dirs = [Path(d) for d in run_dirs]
    metas = [load_meta(d) for d in run_dirs]
    check_same_specs(metas)
    task_by_id = {t.id: t for t in tasks}
    notes: list[str] = []

    # --- results over the union of the run folders; last folder wins per key
    merged: dict[tuple[str, str, int, str], tuple[Result, Path]] = {}
    other_variants = 0
    for d in run_dirs:
        results, bad = _load_results(d)
        if bad:
            notes.append(f"{d.name}: {bad} unreadable result record(s) skipped.")
        for r in results:
            if r.variant != "base":
                other_variants += 1
                continue
            merged.pop(r.key, None)
            merged[r.key] = (r, d)
    if other_variants:
        notes.append(f"{other_variants} result(s) of ablation variants ignored (only `base` is reported).")

    # --- agents: from meta.json in order, then any agent only seen in results
    agent_info: dict[str, dict[str, Any]] = {}
    for meta in metas:
        for a in meta.get("agents") or []:
            if not isinstance(a, dict):
                continue
            name = a.get("name")
            if not name or name in agent_info:
                continue
            spec = a.get("spec")
            agent_info[name] = {
                "spec": spec,
                "simulated": bool(a.get("simulated", _is_simulated(spec))),
                "hinted": bool(a.get("hinted", _is_hinted(spec))),
                "model": a.get("model"),
                "version": a.get("version"),
            }
    for r, _ in merged.values():
        if r.agent not in agent_info:
            agent_info[r.agent] = {
                "spec": None,
                "simulated": False,
                "hinted": False,
                "model": r.model,
                "version": r.agent_version,
            }

    # --- tasks: in tasks-file order, then unknown ids sorted
    seen_ids = {r.task_id for r, _ in merged.values()}
    task_ids = [t.id for t in tasks if t.id in seen_ids]
    unknown = sorted(seen_ids - set(task_ids))
    task_ids += unknown
    if unknown:
        notes.append(
            f"{len(unknown)} task id(s) in the results are not in the tasks file "
            f"({', '.join(unknown[:5])}{', …' if len(unknown) > 5 else ''}): no subject, language or gold patch."
        )

    # --- attempts grouped by agent and task, with similarity
    by_agent: dict[str, dict[str, list[_Attempt]]] = {name: {} for name in agent_info}
    sims = _Similarities()
    for r, d in merged.values():
        s, f1 = sims.of(r, d, task_by_id.get(r.task_id))
        by_agent[r.agent].setdefault(r.task_id, []).append(_Attempt(r, d, s, f1))
    sims.save()
    for per_task in by_agent.values():
        for lst in per_task.values():
            lst.sort(key=lambda a: a.result.attempt)

    # --- per-agent numbers
    agents: dict[str, dict[str, Any]] = {}
    scored_outcomes: dict[str, dict[str, list[int]]] = {}
    for name, info in agent_info.items():
        per_task = by_agent[name]
        all_attempts = [a for tid in task_ids for a in per_task.get(tid, [])]
        scored = [a for a in all_attempts if a.result.scored]
        outcomes01 = {
            tid: [int(counts_solved(a.result)) for a in per_task[tid] if a.result.scored]
            for tid in task_ids
            if any(a.result.scored for a in per_task.get(tid, []))
        }
        scored_outcomes[name] = outcomes01
        agents[name] = _agent_numbers(name, info, all_attempts, scored, outcomes01, task_by_id, alpha)

    # --- rank: pass@1 high first, then cost per solved low (unknown last), then name
    def rank_key(name: str) -> tuple[Any, ...]:
        a = agents[name]
        p = a["pass_at_1"]
        c = a["cost_per_solved_usd"]
        return (p is None, -(p or 0.0), c is None, c or 0.0, name)

    order = sorted(agents, key=rank_key)
    agents = {name: {"rank": i + 1, **agents[name]} for i, name in enumerate(order)}

    # --- notes about agents
    any_attempt = any(a["attempts"] for a in agents.values())
    for name in order:
        notes.extend(n for n in _agent_notes(name, agents[name]) if any_attempt or "no attempt" not in n)
    unscored_total = Counter[str]()
    for a in agents.values():
        unscored_total.update(a["unscored"])
    if unscored_total:
        parts = ", ".join(f"{k} {v}" for k, v in sorted(unscored_total.items()))
        notes.insert(
            0,
            f"{sum(unscored_total.values())} unscored attempt(s) ({parts}) are reported apart and left out of "
            "every rate; resuming the run retries them.",
        )

    comparisons = _comparisons(order, scored_outcomes, alpha, seed)

    # --- per task
    task_rows: list[dict[str, Any]] = []
    for tid in task_ids:
        t = task_by_id.get(tid)
        task_rows.append(
            {
                "id": tid,
                "subject": display_subject(t) if t else "",
                "well_specified": t.well_specified if t else None,
                "red_by_import_error": bool(t.red_by_import_error) if t else False,
                "languages": list(t.languages) if t else [],
                "known": t is not None,
                "attempts": {n: [a.result.outcome for a in by_agent[n].get(tid, [])] for n in order},
                "similarity": {n: [_r(a.f1) for a in by_agent[n].get(tid, [])] for n in order},
            }
        )
    unsolved_by_all = [
        row["id"]
        for row in task_rows
        if not any(o == "solved" for outs in row["attempts"].values() for o in outs)
        and any(o in SCORED_OUTCOMES for outs in row["attempts"].values() for o in outs)
    ]

    # --- well-specified subset
    ws_ids = {tid for tid in task_ids if task_by_id.get(tid) is not None and task_by_id[tid].well_specified}
    well_specified: dict[str, Any] = {
        "tasks": len(ws_ids),
        "agents": {},
        "pass_at_1_ci": {},
        "excluded": [tid for tid in task_ids if tid not in ws_ids],
    }
    for name in order:
        sub = {tid: v for tid, v in scored_outcomes[name].items() if tid in ws_ids}
        well_specified["agents"][name] = _r(_pass_at(sub, 1)) if sub else None
        well_specified["pass_at_1_ci"][name] = _ci(sub, alpha) if sub else None

    # --- languages
    lang_count: Counter[str] = Counter()
    for tid in task_ids:
        t = task_by_id.get(tid)
        for lang in t.languages if t else []:
            lang_count[lang] += 1
    languages = dict(sorted(lang_count.items(), key=lambda kv: (-kv[1], kv[0])))

    flagged = [
        {
            "task_id": r.task_id,
            "agent": r.agent,
            "attempt": r.attempt,
            "outcome": r.outcome,
            "suspicious": r.suspicious,
            "touched_tests": r.touched_tests,
        }
        for name in order
        for tid in task_ids
        for r in (a.result for a in by_agent[name].get(tid, []))
        if r.suspicious or r.touched_tests
    ]
    reasons = {(r.task_id, r.agent, r.attempt): r.suspicious_reason
               for name in order for tid in task_ids for r in (a.result for a in by_agent[name].get(tid, []))
               if r.suspicious and r.suspicious_reason}
    for f in flagged:
        why = reasons.get((str(f["task_id"]), str(f["agent"]), int(str(f["attempt"]))))
        if why:
            f["reason"] = why
    for name in order:
        n_sus = sum(1 for tid in task_ids for a in by_agent[name].get(tid, [])
                    if a.result.solved and a.result.suspicious)
        if n_sus:
            notes.append(f"{name}: {n_sus} attempt(s) scored solved but flagged suspicious are counted as "
                         "unsolved in pass@1 and every comparison; review them (flagged attempts, diff.patch).")
    sandboxes = _sandbox_counts([a.result for name in order for tid in task_ids for a in by_agent[name].get(tid, [])])

    sim_split = {}
    for name in order:
        atts = [a for tid in task_ids for a in by_agent[name].get(tid, []) if a.result.scored and a.f1 is not None]
        sim_split[name] = {
            "mean_f1_solved": _r(_mean([a.f1 for a in atts if a.result.solved])),  # type: ignore[misc]
            "mean_f1_unsolved": _r(_mean([a.f1 for a in atts if not a.result.solved])),  # type: ignore[misc]
        }

    cut = [(m.get("run_id", d.name), m.get("cut_short")) for m, d in zip(metas, run_dirs, strict=True)]
    cut_reasons = [(rid, why) for rid, why in cut if why]
    if not cut_reasons:
        cut_short = None
    elif len(run_dirs) == 1:
        cut_short = str(cut_reasons[0][1])
    else:
        cut_short = "; ".join(f"{rid}: {why}" for rid, why in cut_reasons)

    memo = memorization(run_dirs, metas, order)
    if memo and memo["excluded"]:
        why = "; ".join(f"{n}: {len(v['tasks'])} flagged (control {v.get('control_n')} "
                        f"{'tasks after ' + str(v['cutoff']) if v.get('cutoff') else 'mismatched pairs'}, "
                        f"95th percentile {_fmt2(v.get('control_p95'))})"
                        for n, v in memo["excluded_by"].items() if v["tasks"])
        notes.insert(0, f"{len(memo['excluded'])} task(s) were left out as memorized (--exclude-memorized: a probe "
                        f"scored them above its control; {why}): {', '.join(memo['excluded'])}.")
    flaky = sorted({(tid, test) for m in metas if isinstance(m.get("flaky_p2p"), dict)
                    for tid, ids in m["flaky_p2p"].items() for test in (ids if isinstance(ids, list) else [])})
    if flaky:
        notes.append(f"{len(flaky)} PASS_TO_PASS id{'s' if len(flaky) != 1 else ''} left out as flaky (found when "
                     "grading oracle; .homefield/flaky.jsonl), for every agent: "
                     + ", ".join(f"{tid} {test}" for tid, test in flaky) + ".")
    extra: dict[str, Any] = {"memorization": memo} if memo else {}

    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "run_ids": [str(m.get("run_id", d.name)) for m, d in zip(metas, run_dirs, strict=True)],
        "cut_short": cut_short,
        "alpha": alpha,
        "seed": seed,
        "runs": [
            {
                "run_id": str(m.get("run_id", d.name)),
                "created_at": m.get("created_at"),
                "attempts": m.get("attempts"),
                "tasks_digest": m.get("tasks_digest"),
                "cut_short": m.get("cut_short"),
            }
            for m, d in zip(metas, run_dirs, strict=True)
        ],
        "notes": notes,
        "legend": {o: SYMBOLS[o] for o in OUTCOMES},
        "agents": agents,
        "comparisons": comparisons,
        "tasks": task_rows,
        "unsolved_by_all": unsolved_by_all,
        "well_specified": well_specified,
        "languages": languages,
        "flagged": flagged,
        "similarity": sim_split,
        **({"sandbox": sandboxes} if sandboxes else {}),
        **extra,
    }


def counts_solved(r: Result) -> bool:
    """Whether an attempt counts as solved in pass@1 and the comparisons: ``solved`` and not flagged
    ``suspicious`` (a suspicious attempt is shown apart, never silently counted; issue 15)."""
    return r.solved and not r.suspicious


def _sandbox_counts(results: Sequence[Result]) -> dict[str, Any]:
    """``{"agents": {agent: {sandbox: attempts}}, "tests": {sandbox: attempts}}`` over results that
    record their sandbox (``{}`` when none does: runs from before the field)."""
    agents: dict[str, Counter[str]] = {}
    tests: Counter[str] = Counter()
    for r in results:
        if r.sandbox is None and r.test_sandbox is None:
            continue
        agents.setdefault(r.agent, Counter())[r.sandbox or "none"] += 1
        if r.test_sandbox:
            tests[r.test_sandbox] += 1
    if not agents:
        return {}
    return {"agents": {n: dict(sorted(c.items())) for n, c in agents.items()}, "tests": dict(sorted(tests.items()))}


def _fmt2(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def memorization(run_dirs: Sequence[Path], metas: Sequence[dict[str, Any]],
                 agents: Sequence[str]) -> dict[str, Any] | None:
    """The memorization section, or ``None`` when there is nothing to say.

    ``agents``: {name: {recites, judged, control, cutoff, control_n, control_p95, flagged [{task_id,
    best, mean}]}} from the latest probe verdict (``.homefield/probe/<name>.jsonl`` beside the runs
    folder) of each agent that has one; ``excluded``: task ids the runs left out with
    ``--exclude-memorized`` (from ``meta.json``), ``excluded_by``: {agent: {tasks, control, cutoff,
    control_n, control_p95}} as frozen when the run started. Scores are in [0, 1].
    """
    out_agents: dict[str, Any] = {}
    for d in run_dirs[:1]:
        homefield_dir = Path(d).parent.parent
        if Path(d).parent.name != "runs":
            break
        for name in agents:
            v = load_verdict(probe_path(homefield_dir, name))
            if v:
                out_agents[name] = {"recites": len(v.get("flagged") or []), "judged": v.get("judged"),
                                    "control": v.get("control"), "cutoff": v.get("cutoff"),
                                    "control_n": v.get("control_n"), "control_p95": v.get("control_p95"),
                                    "flagged": list(v.get("flagged") or [])}
    excluded: set[str] = set()
    excluded_by: dict[str, Any] = {}
    for m in metas:
        e = m.get("excluded_memorized") or {}
        excluded.update(e.get("tasks") or [])
        for name, info in (e.get("by_agent") or {}).items():
            excluded_by.setdefault(name, info)
    if not out_agents and not excluded:
        return None
    return {"agents": out_agents, "excluded": sorted(excluded), "excluded_by": excluded_by}


# ------------------------------------------------------------------------------ agent numbers


def _pass_at(outcomes01: dict[str, list[int]], k: int) -> float | None:
    """Mean over tasks of the unbiased pass@k (``stats.pass_at_k``); ``None`` without tasks."""
    vals = [stats.pass_at_k(len(v), sum(v), k) for v in outcomes01.values() if len(v) >= k]
    return _mean(vals)


def _pass_hat(outcomes01: dict[str, list[int]], k: int) -> float | None:
    """Mean over tasks of pass^k (``stats.pass_hat_k``): all k of k attempts succeed."""
    vals = [stats.pass_hat_k(len(v), sum(v), k) for v in outcomes01.values() if len(v) >= k]
    return _mean(vals)


def _ci(outcomes01: dict[str, list[int]], alpha: float) -> list[float | None] | None:
    """[lo, hi] of the pass@1 confidence interval, ``None`` without tasks."""
    if not outcomes01:
        return None
    lo, hi = stats.pass_rate_ci(outcomes01, alpha=alpha)
    return [_r(lo), _r(hi)]


def _agent_numbers(
    name: str,
    info: dict[str, Any],
    all_attempts: list[_Attempt],
    scored: list[_Attempt],
    outcomes01: dict[str, list[int]],
    task_by_id: dict[str, Task],
    alpha: float,
) -> dict[str, Any]:
    """One ``agents.<name>`` entry (see :func:`build_report` for the keys and units)."""
    results = [a.result for a in all_attempts]
    counts = Counter(r.outcome for r in results)
    n_per_task = [len(v) for v in outcomes01.values()]
    kmax = min(n_per_task) if n_per_task else 0

    costs = [r.cost_usd for r in results if r.cost_usd is not None]
    cost = sum(costs) if costs else None
    solved = sum(1 for r in results if counts_solved(r))

    def tok(field: str) -> int | None:
        vals = [getattr(r, field) for r in results if getattr(r, field) is not None]
        return int(sum(vals)) if vals else None

    walls = [float(a.result.wall_s) for a in scored if a.result.wall_s is not None]
    f1s = [a.f1 for a in scored if a.f1 is not None]
    errors = Counter(r.error.strip()[:160] for r in results if r.error and r.error.strip())

    per_language: dict[str, float | None] = {}
    langs = sorted({lang for tid in outcomes01 if tid in task_by_id for lang in task_by_id[tid].languages})
    for lang in langs:
        sub = {tid: v for tid, v in outcomes01.items() if tid in task_by_id and lang in task_by_id[tid].languages}
        per_language[lang] = _r(_pass_at(sub, 1))

    return {
        "name": name,
        "spec": info["spec"],
        "model": info["model"],
        "version": info["version"],
        "simulated": info["simulated"],
        "hinted": info["hinted"],
        "tasks": len(outcomes01),
        "attempts": len(results),
        "scored": len(scored),
        "solved": solved,
        "tasks_solved": sum(1 for v in outcomes01.values() if any(v)),
        "unscored": {o: counts[o] for o in UNSCORED_OUTCOMES if counts[o]},
        "attempts_per_task": [min(n_per_task), max(n_per_task)] if n_per_task else None,
        "pass_at_1": _r(_pass_at(outcomes01, 1)) if outcomes01 else None,
        "pass_at_1_ci": _ci(outcomes01, alpha),
        "pass_at_k": {str(k): _r(_pass_at(outcomes01, k)) for k in range(1, kmax + 1)},
        "pass_hat_k": {str(k): _r(_pass_hat(outcomes01, k)) for k in range(1, kmax + 1)},
        "cost_usd": _r(cost),
        "cost_partial": any(r.cost_partial for r in results),
        "cost_missing": sum(1 for r in results if r.cost_usd is None),
        "cost_per_solved_usd": _r(cost / solved) if cost is not None and solved else None,
        "input_tokens": tok("input_tokens"),
        "output_tokens": tok("output_tokens"),
        "cache_read_tokens": tok("cache_read_tokens"),
        "cache_write_tokens": tok("cache_write_tokens"),
        "tokens_missing": sum(1 for r in results if r.input_tokens is None and r.output_tokens is None),
        "wall_s_p50": _r(_percentile(walls, 50)),
        "wall_s_p95": _r(_percentile(walls, 95)),
        "outcomes": {o: counts[o] for o in OUTCOMES if counts[o]},
        "touched_tests": sum(1 for r in results if r.touched_tests),
        "suspicious": sum(1 for r in results if r.suspicious),
        "similarity_mean": _r(_mean(f1s)),
        "similarity_exact": sum(1 for a in scored if a.sim is not None and a.sim.exact),
        "similarity_n": len(f1s),
        "per_language": per_language,
        "errors": [[text, n] for text, n in errors.most_common(3)],
    }


def _agent_notes(name: str, a: dict[str, Any]) -> list[str]:
    """Plain-language caveats about one agent's numbers."""
    notes: list[str] = []
    if not a["attempts"]:
        notes.append(f"{name}: no attempt recorded.")
    elif not a["scored"]:
        notes.append(f"{name}: no scored attempt; nothing about it can be compared.")
    elif a["scored"] and a["outcomes"].get("agent_error", 0) == a["scored"]:
        first = f" First error: {a['errors'][0][0]}" if a["errors"] else ""
        notes.append(f"{name}: every scored attempt ended in agent_error ({a['scored']}).{first}")
    if a["simulated"]:
        notes.append(f"{name} is simulated ({a['spec'] or 'sim'}): its results are not a real agent's.")
    if a["hinted"]:
        notes.append(f"{name} is hinted: it was told which files the reference fix touched.")
    apt = a["attempts_per_task"]
    if apt and apt[0] != apt[1]:
        notes.append(
            f"{name}: {apt[0]}–{apt[1]} scored attempts per task; pass@k and pass^k shown for k ≤ {apt[0]}, "
            "pass@1 weights every task equally."
        )
    if a["cost_missing"] and a["cost_usd"] is not None:
        notes.append(
            f"{name}: {a['cost_missing']} of {a['attempts']} attempt(s) reported no cost; the total understates."
        )
    if a["cost_partial"]:
        notes.append(f"{name}: the cost includes estimates from interrupted attempts (marked ~).")
    return notes


# -------------------------------------------------------------------------------- comparisons


def _comparisons(
    order: list[str],
    outcomes: dict[str, dict[str, list[int]]],
    alpha: float,
    seed: int,
) -> list[dict[str, Any]]:
    """Every pair in rank order, Holm-adjusted together; see :func:`build_report`.

    Each row is ``Comparison.to_dict()`` of ``stats.compare`` after ``with_p_adjusted`` (so the verdict
    and ``significant`` follow the Holm-adjusted p), floats rounded; keys beyond docs/contracts.md §10 come from
    there (``alpha``, ``attempts``, ``b_c``, ``ties``, ``sd_diff``, ``exact``, ``significant``, ``note``).
    """
    rows: list[dict[str, Any] | None] = []
    cmps: list[Any] = []
    pending: list[tuple[int, Any]] = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            if not set(outcomes[a]) & set(outcomes[b]):
                rows.append(_not_compared(a, b, alpha))
                continue
            cmp = stats.compare(outcomes[a], outcomes[b], alpha=alpha, seed=seed, names=(a, b))
            pending.append((len(rows), cmp))
            rows.append(None)
            cmps.append(cmp)
    if pending:
        adjusted = stats.holm([cmp.p_value for _, cmp in pending])
        for (i, cmp), p_adj in zip(pending, adjusted, strict=True):
            rows[i] = _rounded(cmp.with_p_adjusted(p_adj).to_dict())
    return [r for r in rows if r is not None]


def _not_compared(a: str, b: str, alpha: float) -> dict[str, Any]:
    """The row of a pair without a task that both agents have scored attempts on."""
    return {
        "a": a,
        "b": b,
        "test": None,
        "n_tasks": 0,
        "delta": None,
        "ci": None,
        "p_value": None,
        "p_adjusted": None,
        "mde": None,
        "verdict": f"{a} vs {b}: not compared (no task with scored attempts from both)",
        "alpha": alpha,
        "significant": False,
        "note": "no shared task",
    }


def _rounded(x: Any) -> Any:
    """Round every float in a JSON-like structure (see :func:`_r`); tuples become lists."""
    if isinstance(x, float):
        return _r(x)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_rounded(v) for v in x]
    return x
