"""The report's numbers: one run folder (or several) → one :class:`~.model.Report` (docs/contracts.md §10).

Nothing here renders text; :mod:`.text`, :mod:`.markdown` and :mod:`.html` render the report through
the tables of :mod:`.tables`. All statistics come from :mod:`pytest_homefield.report.stats`, the
sentences about a comparison from :mod:`.verdicts`, the notes from :mod:`.notes`.

Units: USD for costs, tokens for token counts, seconds for times, fractions in [0, 1] for rates.
Floats are rounded to 6 decimals so that the JSON is stable across platforms.

Keys beyond docs/contracts.md §10 (documented in :func:`compute_report`): ``alpha``, ``seed``, ``runs``,
``legend``, ``notes``, ``languages``, ``flagged``, ``similarity``; per agent ``rank``, ``name``,
``model``, ``version``, ``tasks_solved``, ``unscored``, ``attempts_per_task``, ``cost_missing``,
``tokens_missing``, ``errors``, ``similarity_exact``, ``similarity_n``; per comparison those of
``stats.Comparison.to_dict`` (``alpha``, ``attempts``, ``b_c`` = tasks won by a / by b, ``ties``,
``sd_diff``, ``exact``, ``significant``, ``note``); per task ``known``, ``suspicious`` and ``similarity``; under
``well_specified`` ``excluded`` and ``pass_at_1_ci``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from pytest_homefield import __version__
from pytest_homefield.layout import max_tasks_note, mde_path, partial_mine_line, results_path
from pytest_homefield.records import (
    MAX_COUNT,
    OUTCOMES,
    SCORED_OUTCOMES,
    UNSCORED_OUTCOMES,
    Result,
    Task,
    counts_solved,
    display_subject,
    flagged_solve,
)
from pytest_homefield.report import notes as say
from pytest_homefield.report import stats
from pytest_homefield.report.adaptive import adaptive_notes, adaptive_section
from pytest_homefield.report.family import COST_REPORTED, adjust_family, cost_measured
from pytest_homefield.report.kinds import failure_kinds
from pytest_homefield.report.memo import memorization
from pytest_homefield.report.model import (
    AgentSummary,
    ComparisonRow,
    Flagged,
    MadeBy,
    Report,
    RunInfo,
    SandboxCounts,
    SimilaritySplit,
    TaskRow,
    WellSpecified,
)
from pytest_homefield.report.picks import picked_outcomes
from pytest_homefield.report.power import KeptGaps
from pytest_homefield.report.runs import (
    AgentInfo,
    Attempt,
    Similarities,
    agent_infos,
    check_same_specs,
    claims_by_key,
    cut_short_by_key,
    forged_lines,
    load_meta,
    merged_results,
    order_only_solves,
    owed_attempts,
    results_stamp,
)
from pytest_homefield.report.verdicts import not_compared
from pytest_homefield.store import read_jsonl
from pytest_homefield.terminal.progress import plural

__all__ = [
    "REPORT_FORMAT",
    "REPORT_SCHEMA_VERSION",
    "SYMBOLS",
    "build_report",
    "compute_report",
    "counts_solved",
    "display_subject",
]

REPORT_SCHEMA_VERSION = 1
#: The report's format: raise it when what a report says changes for the same results (a verdict's
#: wording, a note, a number) without a new key; a kept ``report.json`` of another format (or another
#: homefield version, ``made_by``) is computed again by the viewer (docs/contracts.md §10).
REPORT_FORMAT = 7

#: One character per outcome for the per-task grid (single-width in a terminal); ``·`` = no record.
SYMBOLS: dict[str, str] = {
    "solved": "✓",
    "tests_failed": "✗",
    "regression": "R",
    "empty_patch": "∅",
    "missing": "?",
    "timeout": "T",
    "test_timeout": "t",
    "agent_error": "E",
    "budget_exceeded": "$",
    "forged": "F",
    "infra": "I",
    "rate_limited": "L",
}
MISSING_SYMBOL = "·"

_NDIGITS = 6

#: 0/1 per scored attempt, by task id: the input of every statistic.
Outcomes01 = dict[str, list[int]]


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


# ------------------------------------------------------------------------------------ report


def build_report(run_dirs: Sequence[Path], tasks: Sequence[Task], *, alpha: float = 0.05,
                 seed: int = 0, stamp: bool = False) -> dict[str, Any]:
    """The report JSON (docs/contracts.md §10) as a dict: ``compute_report(...).to_dict()``."""
    return compute_report(run_dirs, tasks, alpha=alpha, seed=seed, stamp=stamp).to_dict()


def compute_report(
    run_dirs: Sequence[Path],
    tasks: Sequence[Task],
    *,
    alpha: float = 0.05,
    seed: int = 0,
    stamp: bool = False,
) -> Report:
    """The :class:`~.model.Report` over the union of ``run_dirs`` (docs/contracts.md §10).

    Each attempt's diff similarity is computed once and kept in its run folder's ``similarity.json``
    (:class:`~pytest_homefield.report.similarity.SimilarityCache`), and each simulated minimum detectable
    effect in the first run folder's ``mde.json`` (:class:`~.power.KeptGaps`), with this report's
    comparisons and pass@1 intervals (a second report of the same results then imports no numpy): the
    two files this function writes.

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
      money was spent; so is each try ``--resume`` made again, xatk31), ``None`` if none did;
      ``cost_partial``: some cost is an estimate;
      ``cost_missing``: attempts without a cost; ``cost_per_solved_usd``: ``cost_usd / solved``
      (USD per solved attempt), ``None`` when nothing was solved or no cost is known; ``cost_reported``:
      ``reported by the agent`` when the agent has a cost homefield did not measure (:func:`.family.cost_measured`).
    * ``input_tokens`` … ``cache_write_tokens``: token sums (``None`` when no attempt reported them).
    * ``wall_s_p50`` / ``wall_s_p95``: seconds, linear-interpolation percentiles of the agent wall
      time over scored attempts.
    * ``host_s_p50`` / ``host_s_p95``: the same of the attempts' ``host_s`` (homefield's own seconds outside
      the agent and the test runs), over the scored attempts that recorded one (``None`` without any).
    * ``outcomes``: {outcome: count} over all attempts, in :data:`OUTCOMES` order, zeros left out.
    * ``touched_tests`` / ``suspicious``: counts of attempts so flagged.
    * ``similarity_mean``: mean edit-F1 of scored attempts' diffs vs the gold patch (``None`` when no
      diff was found); ``similarity_exact``: attempts whose diff equals the gold patch's changed lines;
      ``similarity_n``: scored attempts measured.
    * ``per_language``: {language: pass@1 over the agent's tasks in that language}.
    * ``errors``: up to 3 most common ``error`` lines as [[text, count], …]; ``first_error``: the first
      one in task-file and attempt order, ``[task_id, attempt, text]`` (left out without one).
    * ``failure_kinds``: scored failed attempts by kind, ``{did_not_fix, broke_existing_tests}``
      (:mod:`.kinds`; left out when there is none).

    Comparisons: every pair of agents in rank order (``a`` ranked above ``b``, ``delta = a − b`` as a
    fraction, ``ci`` [lo, hi], ``mde`` fraction), each from ``stats.compare`` on the per-task lists of
    scored 0/1 outcomes over the tasks both have scored (``test``: ``mcnemar`` or ``permutation``); the
    p-values of the pairs of non-reference agents are Holm-adjusted together (``stats.holm``; ``family``
    = their number) and ``verdict``/``significant`` use ``p_adjusted``; a pair with a reference agent
    (``oracle``, ``noop``, ``sim:P``) is a sanity check (``sanity: true``, ``p_adjusted`` ``None``,
    decided by its own p; :mod:`.family`). A pair without such a shared task gets ``test: None`` and no p-value.

    Top-level extras: ``alpha``, ``seed``; ``runs`` [{run_id, created_at, attempts, tasks_digest,
    cut_short}]; ``legend`` {outcome: symbol}; ``notes`` [str] (things a reader must know: unscored
    attempts, agents that only errored, missing costs, unequal attempts, unknown tasks, unreadable
    lines); ``languages`` {language: tasks}; ``flagged`` [{task_id, agent, attempt, outcome,
    suspicious, touched_tests}]; ``similarity`` {agent: {mean_f1_solved, mean_f1_unsolved}};
    ``memorization`` (only when an agent of the report was probed or a run left tasks out with
    ``--exclude-memorized``; see :func:`memorization`).

    ``stamp`` (the report a run folder keeps, ``report.json``): ``made_by`` {homefield, format} and each
    run's ``runs[].results`` (:func:`results_stamp`), so that the viewer can tell whether the kept report
    is the one it would compute; left out otherwise (the JSON of the same results is then the same
    wherever and whenever it is computed).
    """
    run_dirs = [Path(d) for d in run_dirs]
    stamps = [results_stamp(d) for d in run_dirs] if stamp else [None] * len(run_dirs)
    metas = [load_meta(d) for d in run_dirs]
    check_same_specs(metas)
    task_by_id = {t.id: t for t in tasks}
    notes: list[str] = []

    merged, other_variants, outside, tried_usd = merged_results(run_dirs)
    # gatk58: a forged line flags its agent whatever later line or folder won its key (the numbers stay the winner's)
    forged_seen = forged_lines(run_dirs)
    hidden_forged = [r for k, r in forged_seen.items() if k not in merged or merged[k][0].outcome != "forged"]
    forged_keys = Counter(k[1] for k in forged_seen)
    if other_variants:
        notes.append(say.other_variants(other_variants))
    if outside:
        notes.append(say.outside_plan(outside))
    infos = agent_infos(metas, [r for r, _ in merged.values()])

    # --- tasks: in tasks-file order, then unknown ids sorted
    seen_ids = {r.task_id for r, _ in merged.values()}
    task_ids = [t.id for t in tasks if t.id in seen_ids]
    unknown = sorted(seen_ids - set(task_ids))
    task_ids += unknown
    if unknown:
        notes.append(say.unknown_tasks(unknown))
    if bare := [t for t in tasks if t.id in seen_ids and t.canary_unprotected]:
        notes.append(say.unprotected([t.id for t in bare], sum(len(t.canary_unprotected) for t in bare)))
    if ordered := order_only_solves(merged):
        notes.append(say.order_only(sorted(ordered), sum(len(f) for f in ordered.values())))

    # --- attempts grouped by agent and task, with similarity
    by_agent: dict[str, dict[str, list[Attempt]]] = {name: {} for name in infos}
    sims = Similarities()
    for r, d in merged.values():
        by_agent[r.agent].setdefault(r.task_id, []).append(sims.attempt(r, d, task_by_id.get(r.task_id)))
    sims.save()
    for per_task in by_agent.values():
        for lst in per_task.values():
            lst.sort(key=lambda a: a.result.attempt)

    def attempts_of(name: str) -> list[Attempt]:
        return [a for tid in task_ids for a in by_agent[name].get(tid, [])]

    # --- per-agent numbers, ranked: pass@1 high first, then cost per solved low (only among agents whose costs
    # homefield measured, all known), then name
    # the ranking's tasks: those whose attempts are all scored, for every agent with a scored attempt (an
    # agent with none is not ranked and leaves the others' tasks alone) (docs/contracts.md §10)
    rankable = [n for n in infos if any(a.result.scored for lst in by_agent[n].values() for a in lst)]
    partial = [tid for tid in task_ids if any(not a.result.scored for n in rankable for a in by_agent[n].get(tid, []))]
    if partial:
        notes.append(say.partial_tasks(partial))
    ranked_ids = [tid for tid in task_ids if tid not in set(partial)]
    scored_outcomes = {name: {tid: [int(counts_solved(a.result)) for a in by_agent[name][tid] if a.result.scored]
                              for tid in ranked_ids if any(a.result.scored for a in by_agent[name].get(tid, []))}
                       for name in infos}
    # what an earlier report of these runs computed: simulated gaps, comparisons and intervals (issue 35)
    kept = KeptGaps(mde_path(Path(run_dirs[0]))) if run_dirs else None
    unranked = {name: _agent_summary(name, info, attempts_of(name), scored_outcomes[name], task_by_id, alpha, kept,
                                     tried_usd=tried_usd.get(name))
                for name, info in infos.items()}
    owed = owed_attempts(run_dirs)  # a skipped attempt has no record, yet it counts (atk11 G2)
    for summary in unranked.values():
        recorded = {(a.result.task_id, a.result.attempt) for a in attempts_of(summary.name)}
        n = len(owed.get(summary.name, set()) | recorded)
        if summary.scored < n:
            summary.incomplete = f"incomplete: {summary.scored} of {n} scored"
        n_forged = forged_keys[summary.name]
        if n_forged:  # one forged attempt and none of its solved ones is trusted (docs/contracts.md §8)
            trusted = f"{plural(summary.solved, 'solved attempt')} {'is' if summary.solved == 1 else 'are'} not trusted"
            summary.forged = f"forged on {plural(n_forged, 'attempt')}: its {trusted}"

    for summary in unranked.values():
        if summary.cost_usd is not None and not cost_measured(summary.spec):
            summary.cost_reported = COST_REPORTED

    def tie(name: str) -> tuple[bool, bool, float]:
        p = unranked[name].pass_at_1
        return (unranked[name].forged is not None, p is None, -(p or 0.0))

    # a tie breaks on cost per solved only where every agent of the tie has a cost homefield measured for every
    # attempt (a cost the agent reported decides no order: atk23, a cmd: agent claiming $0; nor does a sum with
    # attempts left out: a server that omits its usage, or a record read with an unbelievable cost, would be
    # cheaper by what it hid), else on the name
    measured_ties = {t for t in map(tie, unranked)
                     if all(unranked[n].cost_reported is None and unranked[n].cost_per_solved_usd is not None
                            and not unranked[n].cost_missing for n in unranked if tie(n) == t)}

    def rank_key(name: str) -> tuple[bool, bool, float, float, str]:
        c = unranked[name].cost_per_solved_usd if tie(name) in measured_ties else None
        return (*tie(name), c or 0.0, name)

    order = sorted(unranked, key=rank_key)
    agents = {name: unranked[name] for name in order}
    for i, a in enumerate(agents.values()):
        a.rank = 0 if a.forged else i + 1

    # --- notes about agents
    any_attempt = any(a.attempts for a in agents.values())
    for a in agents.values():
        notes.extend(n for n in say.agent_notes(a) if any_attempt or "no attempt" not in n)
    # attempts tried again at the agent's word (atk20 F2), or after a try an interrupted session cut short
    # (atk23 F3): their agent's outcomes with them counted as failed
    claims, cuts = claims_by_key(run_dirs), cut_short_by_key(run_dirs)
    at_its_word: dict[str, Outcomes01] = {}
    retried: dict[str, int] = {}  # agent -> its scored attempts tried again at its word or after a cut
    retried_why: dict[str, str] = {}  # agent -> why a verdict resting on them is none, when cuts are among them
    for a in agents.values():
        again = [x.result for x in attempts_of(a.name)
                 if x.result.scored and (claims[x.result.key] or cuts[x.result.key])]
        if again:
            retried[a.name] = len(again)
            tried = {r.key for r in again}
            at_its_word[a.name] = {tid: [0 if x.result.key in tried else int(counts_solved(x.result))
                                         for x in by_agent[a.name][tid] if x.result.scored]
                                   for tid in scored_outcomes[a.name]}
            strict_p1 = _r(_pass_at(at_its_word[a.name], 1))
            n_cut = sum(cuts[r.key] for r in again)
            notes.append(say.retried_at_its_word(a.name, len(again), sum(claims[r.key] for r in again),
                                                 sum(counts_solved(r) for r in again),
                                                 sum(counts_solved(x.result) for x in attempts_of(a.name)),
                                                 strict_p1, cut=n_cut))
            a.counted_pass_at_1 = strict_p1
            how = "at its word" if not n_cut else "at its word or after an interrupted try"
            a.at_its_word = (f"{plural(len(again), 'attempt')} tried again {how}: counted as failed, "
                             f"pass@1 {'n/a' if strict_p1 is None else f'{round(100 * strict_p1)}%'}")
            if n_cut:
                retried_why[a.name] = (f"it rests on {a.name}'s retried attempts ({len(again)} tried again after "
                                       "its claims of a rate limit or an outage, or after a try an interrupted "
                                       "session cut short, neither of which homefield can score)")
    # twin hits (atk22): solves a content picker may have won by luck, counted as failed (report/picks.py)
    picked: dict[str, Outcomes01] = {}
    flips: dict[str, int] = {}  # agent -> its solved attempts so counted as failed
    # agent with a twin hit -> (its twin hits per task and scored attempt, the other agents' outcomes)
    twin_hits: dict[str, tuple[dict[str, list[int]], list[Outcomes01]]] = {}
    for a in agents.values():
        hits = {tid: [x.result.twin_hits for x in by_agent[a.name][tid] if x.result.scored]
                for tid in scored_outcomes[a.name]}
        if not any(h for v in hits.values() for h in v):
            continue
        base = at_its_word.get(a.name, scored_outcomes[a.name])
        others = [scored_outcomes[n] for n in agents if n != a.name]
        twin_hits[a.name] = (hits, others)
        picked[a.name], n_hit, flips[a.name] = picked_outcomes(base, hits, others)
        strict_p1 = _r(_pass_at(picked[a.name], 1))
        notes.append(say.twin_hits(a.name, n_hit, flips[a.name], strict_p1))
        a.counted_pass_at_1 = strict_p1
        a.twin_hits = (f"{plural(n_hit, 'attempt')} passed a contradicted twin exactly: "
                       f"{plural(flips[a.name], 'solve')} counted as failed, pass@1 "
                       f"{'n/a' if strict_p1 is None else f'{round(100 * strict_p1)}%'}")
    # solves flagged ``suspicious`` (sus60): counted solved, the flag a pattern list's hint; the pass@1 a pass/fail
    # line must survive (``counted_pass_at_1``, ``--fail-under``) counts them failed, with the other doubts
    # agent -> its outcomes with its flagged solves counted failed, with its other doubts (the reading a verdict must
    # survive: fatk60, each doubt apart left "picker beats plain" standing on 2 flagged solves and a twin hit)
    flagged_failed: dict[str, Outcomes01] = {}
    flagged_n: dict[str, int] = {}  # agent -> its flagged solves among its scored attempts
    for a in agents.values():
        marks = {tid: [flagged_solve(x.result) for x in by_agent[a.name][tid] if x.result.scored]
                 for tid in scored_outcomes[a.name]}
        if not any(m for v in marks.values() for m in v):
            continue
        flagged_n[a.name] = sum(m for v in marks.values() for m in v)
        doubted = at_its_word.get(a.name, scored_outcomes[a.name])
        doubted = {tid: [0 if m else v for v, m in zip(doubted[tid], marks[tid], strict=True)] for tid in marks}
        if a.name in twin_hits:  # the twin hits' solves among those the flags leave (fatk60: picked first, they fell
            # on flagged solves, already failed, and cost nothing: 80% for a 60%), as the adaptive looks count them
            doubted = picked_outcomes(doubted, *twin_hits[a.name])[0]
        a.counted_pass_at_1 = _r(_pass_at(doubted, 1))
        flagged_failed[a.name] = doubted
    unscored_total = Counter[str]()
    for a in agents.values():
        unscored_total.update(a.unscored)
    if unscored_total:
        notes.insert(0, say.unscored(unscored_total))

    compared = [n for n in order if not agents[n].forged]
    references = {n for n, info in infos.items() if info.reference}
    comparisons = _comparisons(compared, scored_outcomes, alpha, seed, references=references, kept=kept)
    # a verdict that changes with an agent's claimed retries, or its twin hits' possible lucky solves, counted
    # as failed is withheld (atk20 F2, atk22), one agent at a time, the others as recorded; and so is one that
    # changes with its solves flagged ``suspicious`` counted as failed (sus60: a flagged solve counts solved, the
    # flag a pattern list's hint that a forger spells past and an honest fix trips; so no pattern decides a count,
    # and none may buy a verdict)
    for counted_by, key, count in ((at_its_word, "at_their_word", retried), (picked, "twin_hits", flips),
                                   (flagged_failed, "flagged", flagged_n)):
        for name, strict in counted_by.items():
            if name in compared:
                alt = _comparisons(compared, {**scored_outcomes, name: strict}, alpha, seed, references=references,
                                   kept=kept)
                comparisons = [_unless_counted(row, other, name, count[name], key,
                                               retried_why.get(name) if key == "at_their_word" else None)
                               for row, other in zip(comparisons, alt, strict=True)]

    # --- per task
    task_rows = [_task_row(tid, task_by_id.get(tid), {n: by_agent[n].get(tid, []) for n in order}) for tid in task_ids]
    # a task solved by no agent (a flagged solve counts solved, §10)
    unsolved_by_all = [
        tid
        for tid in task_ids
        if not any(counts_solved(a.result) for n in order for a in by_agent[n].get(tid, []))
        and any(a.result.outcome in SCORED_OUTCOMES for n in order for a in by_agent[n].get(tid, []))
    ]

    # --- well-specified subset
    ws_ids = {tid for tid in task_ids if task_by_id.get(tid) is not None and task_by_id[tid].well_specified}
    ws_outcomes = {name: {tid: v for tid, v in scored_outcomes[name].items() if tid in ws_ids} for name in order}
    well_specified = WellSpecified(
        tasks=len(ws_ids),
        agents={name: _r(_pass_at(sub, 1)) if sub else None for name, sub in ws_outcomes.items()},
        pass_at_1_ci={name: _ci(sub, alpha, kept) if sub else None for name, sub in ws_outcomes.items()},
        excluded=[tid for tid in task_ids if tid not in ws_ids],
    )
    if kept is not None:
        kept.save()

    # --- languages
    lang_count: Counter[str] = Counter()
    for tid in task_ids:
        t = task_by_id.get(tid)
        for lang in t.languages if t else []:
            lang_count[lang] += 1
    languages = dict(sorted(lang_count.items(), key=lambda kv: (-kv[1], kv[0])))

    # --- flagged attempts, sandboxes, similarity by outcome
    results = [a.result for name in order for a in attempts_of(name)]
    flagged = [Flagged(r.task_id, r.agent, r.attempt, r.outcome, r.suspicious, r.touched_tests,
                       r.suspicious_reason if r.suspicious and r.suspicious_reason else None,
                       r.canary if r.outcome == "forged" else None)
               for r in [*results, *(r for r in hidden_forged if r.agent in agents)]
               if r.suspicious or r.touched_tests or r.outcome == "forged"]
    suspicious_by = Counter(r.agent for r in results if r.solved and r.suspicious)
    for a in agents.values():
        n_forged = forged_keys[a.name]
        if n_forged:
            notes.append(say.forged(a.name, n_forged))
        n_sus = suspicious_by[a.name]
        if n_sus:
            notes.append(say.suspicious_solved(a.name, n_sus))
    sandboxes = _sandbox_counts(results)
    similarity = {name: _similarity_split([a for a in attempts_of(name) if a.result.scored and a.f1 is not None])
                  for name in order}

    run_ids = [str(m.get("run_id", d.name)) for m, d in zip(metas, run_dirs, strict=True)]
    cut_reasons = [(rid, m.get("cut_short")) for rid, m in zip(run_ids, metas, strict=True) if m.get("cut_short")]
    cut_short = None
    if cut_reasons:
        cut_short = (str(cut_reasons[0][1]) if len(run_dirs) == 1
                     else "; ".join(f"{rid}: {why}" for rid, why in cut_reasons))

    memo = memorization(run_dirs, metas, order)
    memo_note = say.memorized(memo) if memo else None
    if memo_note:
        notes.insert(0, memo_note)
    # --max-tasks N: the first N of tasks.jsonl only, said first (nu20: a run of 2 of 6 read as the whole set)
    max_notes = list(dict.fromkeys(c for m in metas if (c := max_tasks_note(m.get("max_tasks")))))
    # a task set from a mine a bound or Ctrl-C stopped, as of the run's start (mine48: only the run's header said it)
    mine_notes = list(dict.fromkeys(c for m in metas if (c := partial_mine_line(m.get("partial_mine")))))
    notes[:0] = [c.removeprefix("Note: ") for c in [*mine_notes, *max_notes]]
    flaky = sorted({(tid, test) for m in metas if isinstance(m.get("flaky_p2p"), dict)
                    for tid, ids in m["flaky_p2p"].items() for test in (ids if isinstance(ids, list) else [])})
    if flaky:
        notes.append(say.flaky(flaky))
    found = sorted({(str(r.get("task_id")), str(r.get("test_id")))
                    for home in dict.fromkeys(Path(d).parent.parent / "flaky.jsonl" for d in run_dirs)
                    for r in read_jsonl(home) if r.get("run_id") in run_ids})
    if found:
        notes.append(say.found_flaky(found))
    # --adaptive (issue 32): when and why each pair stopped, its anytime-valid interval, what was saved
    adaptive = next((sec for d, m in zip(run_dirs, metas, strict=True)
                     if (sec := adaptive_section(read_jsonl(results_path(Path(d))), m,
                                                 cut={k[:3] for k in cut_short_by_key([Path(d)])})) is not None),
                    None)
    notes.extend(adaptive_notes(adaptive))

    return Report(
        schema_version=REPORT_SCHEMA_VERSION,
        run_ids=run_ids,
        cut_short=cut_short,
        alpha=alpha,
        seed=seed,
        runs=[RunInfo(rid, m.get("created_at"), m.get("attempts"), m.get("tasks_digest"), m.get("cut_short"), st)
              for rid, m, st in zip(run_ids, metas, stamps, strict=True)],
        notes=notes,
        legend={o: SYMBOLS[o] for o in OUTCOMES if o in SYMBOLS},  # not_needed: never in a table
        agents=agents,
        comparisons=comparisons,
        tasks=task_rows,
        unsolved_by_all=unsolved_by_all,
        well_specified=well_specified,
        languages=languages,
        flagged=flagged,
        similarity=similarity,
        sandbox=sandboxes,
        memorization=memo,
        extra={"adaptive": adaptive} if adaptive else {},
        made_by=MadeBy(__version__, REPORT_FORMAT) if stamp else None,
        found_flaky=[[tid, test] for tid, test in found] or None,
    )


def _task_row(tid: str, t: Task | None, attempts: dict[str, list[Attempt]]) -> TaskRow:
    """One ``tasks[]`` row: ``attempts`` by agent in rank order."""
    return TaskRow(
        id=tid,
        subject=display_subject(t) if t else "",
        well_specified=t.well_specified if t else None,
        red_by_import_error=bool(t.red_by_import_error) if t else False,
        languages=list(t.languages) if t else [],
        known=t is not None,
        attempts={n: [a.result.outcome for a in atts] for n, atts in attempts.items()},
        suspicious={n: [bool(a.result.suspicious) for a in atts] for n, atts in attempts.items()},
        similarity={n: [_r(a.f1) for a in atts] for n, atts in attempts.items()},
    )


def _similarity_split(measured: Sequence[Attempt]) -> SimilaritySplit:
    """Mean edit-F1 of the ``measured`` scored attempts, solved and not (as every rate counts them: a solve flagged
    ``suspicious`` is not, :func:`~pytest_homefield.records.counts_solved`)."""
    return SimilaritySplit(_r(_mean([a.f1 for a in measured if a.f1 is not None and counts_solved(a.result)])),
                           _r(_mean([a.f1 for a in measured if a.f1 is not None and not counts_solved(a.result)])))


def _sandbox_counts(results: Sequence[Result]) -> SandboxCounts | None:
    """Attempts per sandbox over results that record their sandbox (``None`` when none does: runs
    from before the field)."""
    agents: dict[str, Counter[str]] = {}
    tests: Counter[str] = Counter()
    for r in results:
        if r.sandbox is None and r.test_sandbox is None:
            continue
        agents.setdefault(r.agent, Counter())[r.sandbox or "none"] += 1
        if r.test_sandbox:
            tests[r.test_sandbox] += 1
    if not agents:
        return None
    return SandboxCounts({n: dict(sorted(c.items())) for n, c in agents.items()}, dict(sorted(tests.items())))


# ------------------------------------------------------------------------------ agent numbers


def _pass_at(outcomes01: Outcomes01, k: int) -> float | None:
    """Mean over tasks of the unbiased pass@k (``stats.pass_at_k``, once per distinct (attempts,
    successes): a 1,000-task report asks for 25,000 of them); ``None`` without tasks."""
    counts = Counter((len(v), sum(v)) for v in outcomes01.values() if len(v) >= k)
    return _mean_counted({nc: stats.pass_at_k(nc[0], nc[1], k) for nc in counts}, counts)


def _pass_hat(outcomes01: Outcomes01, k: int) -> float | None:
    """Mean over tasks of pass^k (``stats.pass_hat_k``): all k of k attempts succeed."""
    counts = Counter((len(v), sum(v)) for v in outcomes01.values() if len(v) >= k)
    return _mean_counted({nc: stats.pass_hat_k(nc[0], nc[1], k) for nc in counts}, counts)


def _mean_counted(values: dict[tuple[int, int], float], counts: Counter[tuple[int, int]]) -> float | None:
    """The mean over tasks of ``values[(n, c)]``, each counted ``counts[(n, c)]`` times, summed in the
    tasks' order of first appearance (as the per-task list would be, up to float rounding)."""
    total = sum(counts.values())
    return sum(values[nc] * m for nc, m in counts.items()) / total if total else None


def _ci(outcomes01: Outcomes01, alpha: float, kept: KeptGaps | None) -> list[float | None] | None:
    """[lo, hi] of the pass@1 confidence interval, ``None`` without tasks."""
    if not outcomes01:
        return None
    lo, hi = stats.pass_rate_ci(outcomes01, alpha=alpha, kept=kept)
    return [_r(lo), _r(hi)]


def _agent_summary(name: str, info: AgentInfo, all_attempts: list[Attempt], outcomes01: Outcomes01,
                   task_by_id: dict[str, Task], alpha: float, kept: KeptGaps | None = None, *,
                   tried_usd: float | None = None) -> AgentSummary:
    """One ``agents.<name>`` entry, ranked 0 until :func:`compute_report` ranks it (see there for the
    keys and units); ``tried_usd``: the cost (USD) of the agent's tries that ``--resume`` made again
    (:func:`~pytest_homefield.report.runs.merged_results`), counted in its cost."""
    results = [a.result for a in all_attempts]
    scored = [a for a in all_attempts if a.result.scored]
    counts = Counter(r.outcome for r in results)
    n_per_task = [len(v) for v in outcomes01.values()]
    kmax = min(n_per_task) if n_per_task else 0
    costs = [r.cost_usd for r in results if r.cost_usd is not None] + ([tried_usd] if tried_usd is not None else [])
    cost = sum(costs) if costs else None
    solved = sum(1 for r in results if counts_solved(r))

    def tok(values: list[int | None]) -> int | None:
        known = [v for v in values if v is not None]
        # at most what one record holds: summed unbounded, the agent's words passed every int64 reader (xatk31)
        return min(int(sum(known)), MAX_COUNT) if known else None

    walls = [float(a.result.wall_s) for a in scored if a.result.wall_s is not None]
    hosts = [float(a.result.host_s) for a in scored if a.result.host_s]  # 0: a record made before host_s
    f1s = [a.f1 for a in scored if a.f1 is not None]
    errors = Counter(r.error.strip()[:160] for r in results if r.error and r.error.strip())
    langs = sorted({lang for tid in outcomes01 if tid in task_by_id for lang in task_by_id[tid].languages})
    per_language = {lang: _r(_pass_at({tid: v for tid, v in outcomes01.items()
                                       if tid in task_by_id and lang in task_by_id[tid].languages}, 1))
                    for lang in langs}
    return AgentSummary(
        rank=0,
        name=name,
        spec=info.spec,
        model=info.model,
        version=info.version,
        simulated=info.simulated,
        hinted=info.hinted,
        tasks=len(outcomes01),
        attempts=len(results),
        scored=len(scored),
        solved=solved,
        tasks_solved=sum(1 for v in outcomes01.values() if any(v)),
        unscored={o: counts[o] for o in UNSCORED_OUTCOMES if counts[o]},
        attempts_per_task=[min(n_per_task), max(n_per_task)] if n_per_task else None,
        pass_at_1=_r(_pass_at(outcomes01, 1)) if outcomes01 else None,
        pass_at_1_ci=_ci(outcomes01, alpha, kept),
        pass_at_k={str(k): _r(_pass_at(outcomes01, k)) for k in range(1, kmax + 1)},
        pass_hat_k={str(k): _r(_pass_hat(outcomes01, k)) for k in range(1, kmax + 1)},
        cost_usd=_r(cost),
        cost_partial=any(r.cost_partial for r in results),
        cost_missing=sum(1 for r in results if r.cost_usd is None),
        cost_per_solved_usd=_r(cost / solved) if cost is not None and solved else None,
        input_tokens=tok([r.input_tokens for r in results]),
        output_tokens=tok([r.output_tokens for r in results]),
        cache_read_tokens=tok([r.cache_read_tokens for r in results]),
        cache_write_tokens=tok([r.cache_write_tokens for r in results]),
        tokens_missing=sum(1 for r in results if r.input_tokens is None and r.output_tokens is None),
        wall_s_p50=_r(_percentile(walls, 50)),
        wall_s_p95=_r(_percentile(walls, 95)),
        host_s_p50=_r(_percentile(hosts, 50)),
        host_s_p95=_r(_percentile(hosts, 95)),
        outcomes={o: counts[o] for o in OUTCOMES if counts[o]},
        touched_tests=sum(1 for r in results if r.touched_tests),
        suspicious=sum(1 for r in results if r.suspicious),
        flagged_solves=sum(1 for r in results if flagged_solve(r)) or None,
        similarity_mean=_r(_mean(f1s)),
        similarity_exact=sum(1 for a in scored if a.sim is not None and a.sim.exact),
        similarity_n=len(f1s),
        per_language=per_language,
        errors=[[text, n] for text, n in errors.most_common(3)],
        failure_kinds=failure_kinds(r for r in results if r.scored) or None,
        first_error=_first_error(results),
    )


def _first_error(results: Sequence[Result]) -> list[str | int] | None:
    """``[task_id, attempt, text]`` of the first result with an error line (up to 300 characters)."""
    for r in results:
        if r.error and r.error.strip():
            return [r.task_id, r.attempt, r.error.strip()[:300]]
    return None


# -------------------------------------------------------------------------------- comparisons


def _comparisons(order: list[str], outcomes: dict[str, Outcomes01], alpha: float, seed: int,
                 references: Collection[str] = (), kept: KeptGaps | None = None) -> list[ComparisonRow]:
    """Every pair in rank order; see :func:`compute_report`.

    Each row is ``stats.compare`` after :func:`.family.adjust_family`: the pairs of two agents not in
    ``references`` are Holm-adjusted together (the verdict and ``significant`` follow the adjusted p,
    ``family`` is their number), a pair with a reference agent is a sanity check (``sanity``, unadjusted);
    floats rounded. A pair without a task both agents have scored attempts on gets a row without a test
    (``test`` ``None``, ``note`` "no shared task").
    """
    rows: list[ComparisonRow | None] = []
    pending: list[tuple[int, stats.Comparison]] = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            if not set(outcomes[a]) & set(outcomes[b]):
                rows.append(ComparisonRow(a, b, None, 0, None, None, None, None, None, not_compared(a, b), alpha,
                                          significant=False, note="no shared task"))
                continue
            pending.append((len(rows), stats.compare(outcomes[a], outcomes[b], alpha=alpha, seed=seed, names=(a, b),
                                                        kept=kept)))
            rows.append(None)
    if pending:
        decided = adjust_family([cmp for _, cmp in pending], references)
        for (i, _), cmp in zip(pending, decided, strict=True):
            rows[i] = _row(cmp)
    return [r for r in rows if r is not None]


def _side(row: ComparisonRow) -> str | None:
    """Which agent of ``row`` its verdict names the winner (``None``: no detectable difference)."""
    if not row.significant or not row.delta:
        return None
    return row.a if row.delta > 0 else row.b


def _unless_counted(row: ComparisonRow, counted: ComparisonRow, name: str, n: int, key: str,
                    why: str | None = None) -> ComparisonRow:
    """``row`` as it is when its verdict is that of ``counted`` (the same pair with ``n`` of ``name``'s
    attempts counted as failed: docs/contracts.md §10), else "no verdict", with what counting them would say.
    ``key``: ``at_their_word`` (the attempts tried again after its own unscored claims: atk20 F2, claiming a
    rate limit after each failure bought a 67% against the 38% of the same agent without the claims) or
    ``twin_hits`` (solved attempts counted for its twin hits, :mod:`.picks`: atk22, code that passes one
    version of each hidden test by content, unable to tell which is real, is solved by luck as often as it
    hits a twin) or ``flagged`` (its solves flagged ``suspicious``, counted solved: a pattern list decides no
    verdict, sus60). A pair without ``name`` is weighed too: its Holm adjustment is over a family holding
    ``name``'s pairs, whose p ``name`` bought (atk23: a liar's re-rolled wins took Holm's first steps and
    left "h1 beats h2" at adjusted p=0.031, 0.094 with them counted as failed). A row already withheld keeps
    its text and, when it names ``name``, gains its count under ``key``. ``why``: the reason to give instead
    of the key's own (retried attempts among which an interrupted session cut tries short, atk23 F3)."""
    if row.test is None:
        return row
    if row.at_their_word is not None or row.twin_hits is not None or row.flagged is not None:  # already withheld
        if name not in (row.a, row.b):
            return row
        grown: dict[str, Any] = {key: {**(getattr(row, key) or {}), name: n}}
        return dataclasses.replace(row, **grown)
    if _side(row) == _side(counted):
        return row
    if key == "at_their_word":
        why = why or (f"it rests on {name}'s word ({plural(n, 'attempt')} tried again after claims of a rate limit "
                      "or an outage that homefield cannot check)")
        what = "it" if n == 1 else "them"
    elif key == "flagged":
        why = (f"it rests on flagged solves ({name}'s {plural(n, 'solve')} flagged suspicious by a pattern list, "
               "which a forger spells past and an honest fix can trip)")
        what = "it" if n == 1 else "them"
    else:
        why = (f"it may rest on luck ({name}'s code passed contradicted twins of hidden tests exactly, as code "
               "that picks one version of each test by content does)")
        what = f"{plural(n, 'solve')} of its"
    keyed: dict[str, Any] = {key: {name: n}}
    return dataclasses.replace(row, significant=False, counted_failed=counted.verdict, **keyed,
                               verdict=f"{row.a} vs {row.b}: no verdict, {why}. With {what} counted as failed: "
                                       f"{counted.verdict}")


def _row(c: stats.Comparison) -> ComparisonRow:
    """The report's row of a comparison, every float rounded (:func:`_r`)."""
    return ComparisonRow(
        a=c.a,
        b=c.b,
        test=c.test,
        n_tasks=c.n_tasks,
        delta=_r(c.delta),
        ci=[_r(c.ci[0]), _r(c.ci[1])],
        p_value=_r(c.p_value),
        p_adjusted=_r(c.p_adjusted),
        mde=_r(c.mde),
        verdict=c.verdict,
        alpha=round(float(c.alpha), _NDIGITS),
        attempts=[_r(c.attempts[0]), _r(c.attempts[1])],
        b_c=[c.wins[0], c.wins[1]],
        ties=c.n_tasks - c.wins[0] - c.wins[1],
        sd_diff=_r(c.sd_diff),
        exact=c.exact,
        significant=c.significant,
        note=c.note,
        family=c.family,
        sanity=c.sanity,
    )
