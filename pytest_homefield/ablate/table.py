"""The per-rule effect table of an ablation (issue 14), from the same paired tests as the report.

For one agent, each rule's effect is ``pass@1(base) − pass@1(without the rule)`` over the tasks both
variants attempted, tested with :func:`pytest_homefield.report.stats.compare` (exact McNemar with one
attempt per task, else the exact paired sign-flip test; the CI inverts the same test). The p-values
of one agent's rules are Holm-adjusted together (:func:`~pytest_homefield.report.stats.holm`), and
the label uses the adjusted p at ``alpha``:

* **load-bearing**: removing the rule hurts (adjusted p < alpha, effect > 0);
* **harmful**: removing the rule helps (adjusted p < alpha, effect < 0);
* **no detectable effect**: otherwise, with the smallest effect this task set could have detected
  (``mde``: :func:`label_gap`, 80 % simulated power of the same test at alpha / rules);
* **no verdict: it rests on the agent's claims** (:data:`AT_ITS_WORD`): the label would change were the
  attempts ``--resume`` tried again after the agent's own claims (a rate limit, an outage its output
  reported) counted as failed, in base or in the variant without the rule (docs/contracts.md §10: a
  claim after each failure re-rolls an attempt, atk20 F2);
* **no verdict: it rests on retried attempts (the agent's claims, or tries an interrupted session cut
  short)** (:data:`RETRIED`): as :data:`AT_ITS_WORD`, where some of those attempts were made again after a
  try an interrupted session cut short (the ablation's ``tries.jsonl``, docs/contracts.md §4: an agent that
  hangs on what it misses has mostly those cut, and ``--resume`` re-rolls them, atk23 F3);
* **no verdict: it may rest on luck (twin hits)** (:data:`PICKED`): the label would change were two solves
  per attempt with a twin hit counted as failed (:mod:`pytest_homefield.report.picks`: code that passes
  one version of each hidden test by content, unable to tell which is real, atk22), in base or in the
  variant;
* **no verdict: it rests on flagged solves** (:data:`FLAGGED`): the label would change were the solves flagged
  ``suspicious`` counted as failed, in base or in the variant (docs/contracts.md §10: a flagged solve counts
  solved, the flag is a pattern list's hint; sus60).

Each agent's table also states its power (``label_gap``): the smallest rule effect labelled right at
least 80 % of the time at its task count, attempts and base pass@1 (issue 32).

The slimmer file (every rule that is load-bearing for no agent removed) is compared with base by the
same test on its own (not part of the Holm family: it is one further question, asked afterwards).
Only scored attempts count (``infra`` and ``rate_limited`` are left out, as in the report).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.ablate.tokens import count_tokens, tokenizer_name
from pytest_homefield.ablate.variants import BASE, SLIM, Variant
from pytest_homefield.records import (
    SCORED_OUTCOMES,
    UNSCORED_OUTCOMES,
    counts_solved,
    counts_solved_flagged_failed,
    flagged_solve,
)
from pytest_homefield.report.picks import picked_outcomes
from pytest_homefield.report.power import detectable_gap
from pytest_homefield.report.stats import Comparison, compare, holm, pass_rate
from pytest_homefield.run.attempt import latest_results, result_key

__all__ = ["LOAD_BEARING", "HARMFUL", "NO_EFFECT", "NO_DATA", "AT_ITS_WORD", "RETRIED", "PICKED", "FLAGGED",
           "RuleEffect",
           "AgentTable",
           "AgentEntry",
           "RuleRow",
           "rule_effects", "label_for", "label_gap", "outcomes_by_variant", "build_tables", "slim_keep",
           "tables_to_dict"]

LOAD_BEARING = "load-bearing"
HARMFUL = "harmful"
NO_EFFECT = "no detectable effect"
NO_DATA = "no data"
AT_ITS_WORD = "no verdict: it rests on the agent's claims"
RETRIED = "no verdict: it rests on retried attempts (the agent's claims, or tries an interrupted session cut short)"
#: The label of a rule whose label would change were the solves flagged ``suspicious`` counted as failed.
FLAGGED = "no verdict: it rests on flagged solves"
PICKED = "no verdict: it may rest on luck (twin hits)"

Outcomes = Mapping[str, Sequence[int]]

#: A result's key: (task, agent, attempt, variant).
Key = tuple[str, str, int, str]


def label_for(cmp: Comparison) -> str:
    """The label of a rule from its comparison base − without (decided by the adjusted p if set)."""
    if cmp.significant and cmp.delta > 0:
        return LOAD_BEARING
    if cmp.significant and cmp.delta < 0:
        return HARMFUL
    return NO_EFFECT


def rule_effects(base: Outcomes, without: Mapping[int, Outcomes], *, alpha: float = 0.05,
                 seed: int = 0) -> dict[int, Comparison]:
    """``{rule number: Comparison(base − without rule), Holm-adjusted across the rules given}``.

    ``base`` and each ``without[n]``: task id → list of 0/1 scored outcomes. A rule with no task
    shared with base is left out of the result (and of the Holm family)."""
    raw: dict[int, Comparison] = {}
    for number, outcomes in without.items():
        if not outcomes or not base:
            continue
        try:
            raw[number] = compare(base, outcomes, alpha=alpha, seed=seed, names=("with", "without"))
        except ValueError:  # no shared task with scored attempts
            continue
    adjusted = holm([c.p_value for c in raw.values()])
    level = alpha / max(1, len(raw))  # Holm's first step: what a rule's effect must beat at the least
    out = {}
    for (n, c), p in zip(raw.items(), adjusted, strict=True):
        gap = label_gap(c.n_tasks, _attempts(c), _rate(base, without[n]), level)
        out[n] = dataclasses.replace(c.with_p_adjusted(p, family=len(raw)), mde=gap)
    return out


def _attempts(c: Comparison) -> int:
    return max(1, round(sum(c.attempts) / 2))


def _rate(*outcomes: Outcomes) -> float:
    """Pooled solve rate ``(successes + 1) / (attempts + 2)`` over ``outcomes``."""
    solved = sum(sum(v) for o in outcomes for v in o.values())
    tried = sum(len(v) for o in outcomes for v in o.values())
    return (solved + 1) / (tried + 2)


def label_gap(n_tasks: int, attempts: int, base_rate: float, level: float) -> float:
    """The smallest rule effect (fraction) labelled right at least 80 % of the time with ``n_tasks``
    tasks × ``attempts`` attempts around ``base_rate``: the 80 %-power gap of the report's exact paired
    test (:func:`pytest_homefield.report.power.detectable_gap`, simulated) at ``level`` = alpha / rules,
    the threshold of Holm's first step, so a conservative bound (issue 32)."""
    return detectable_gap(max(1, n_tasks), attempts=max(1, attempts), base_rate=base_rate, alpha=level)


def outcomes_by_variant(records: Iterable[Mapping[str, Any]], *, claims_failed: bool = False,
                        field: str = "", cut: Collection[Key] = (),
                        flagged_failed: bool = False) -> dict[str, dict[str, dict[str, list[int]]]]:
    """``{agent: {variant: {task: [0/1, …]}}}`` from result records (the last record per (task, agent,
    attempt, variant) wins; only scored outcomes; a solve flagged ``suspicious`` is 1, as in the report:
    :func:`~pytest_homefield.records.counts_solved`). ``flagged_failed``: a solve flagged ``suspicious`` is 0
    (the reading a label must survive, :data:`FLAGGED`). ``claims_failed``: an attempt with an earlier line
    recorded unscored at the agent's word (``claimed``: tried again by ``--resume`` after its claim) is 0,
    and so is one of ``cut`` (task, agent, attempt, variant: a try of it an interrupted session cut short).
    ``field``: each attempt's integer ``field`` (``twin_hits``) instead of 0/1, 0 where it is missing."""
    lines = [dict(r) for r in records]
    claimed = {result_key(r) for r in lines
               if r.get("claimed") and r.get("outcome") in UNSCORED_OUTCOMES} | set(cut) if claims_failed else set()
    out: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    solved = counts_solved_flagged_failed if flagged_failed else counts_solved
    for key, r in sorted(latest_results(lines).items()):
        task, agent, _attempt, variant = key
        if r.get("outcome") in SCORED_OUTCOMES:
            if field:
                out[agent][variant][task].append(int(r.get(field) or 0))
            else:
                out[agent][variant][task].append(1 if solved(r) and key not in claimed else 0)
    return out


def _picked(outcomes: Mapping[str, Mapping[str, Sequence[int]]], hits: Mapping[str, Mapping[str, Sequence[int]]]
            ) -> dict[str, dict[str, list[int]]]:
    """One agent's ``{variant: {task: [0/1, …]}}`` with two solves per attempt with a twin hit counted as
    failed in each variant (:func:`~pytest_homefield.report.picks.picked_outcomes`), those on the tasks the
    other variants solve least first."""
    return {v: picked_outcomes(o, hits.get(v, {}), [x for w, x in outcomes.items() if w != v])[0]
            for v, o in outcomes.items()}


@dataclass
class RuleEffect:
    """One row: the rule (``number``, ``label`` = number and first words, ``kind``), its token cost,
    pass@1 ``with_rule`` (base) and ``without_rule`` (fractions; ``None`` without data), the
    comparison (``effect`` = base − without, ``ci``, ``p``, ``p_adjusted``, ``mde``, ``n_tasks``) and
    the ``verdict`` label."""

    number: int
    label: str
    kind: str
    tokens: int
    tokens_approximate: bool
    with_rule: float | None = None
    without_rule: float | None = None
    effect: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    p_adjusted: float | None = None
    mde: float | None = None
    n_tasks: int = 0
    test: str = ""
    verdict: str = NO_DATA


@dataclass
class SlimResult:
    """The slimmer file against base: the rules it ``removed``, its tokens saved, and the comparison
    (``None`` until its attempts have run)."""

    removed: list[int]
    tokens_saved: int
    with_rules: float | None = None
    slim: float | None = None
    comparison: dict[str, Any] | None = None
    sentence: str = ""


@dataclass
class AgentTable:
    """One agent's table: base pass@1 over ``base_tasks`` tasks, the rows, the slimmer file's result and
    the power of its labels (``label_gap``)."""

    agent: str
    base_pass: float | None
    base_tasks: int
    attempts: int
    rows: list[RuleEffect] = field(default_factory=list)
    slim: SlimResult | None = None
    #: the smallest rule effect labelled right >= 80 % of the time (:func:`label_gap`), fraction
    label_gap: float | None = None
    #: ``incomplete: k of n scored`` when some of the agent's attempts of the rules phase were not scored
    #: (unscored, or skipped by a stop and never recorded: atk11 A1), else ``None``
    incomplete: str | None = None


def build_tables(records: Iterable[Mapping[str, Any]], rules: RuleSet, agents: Sequence[str], *,
                 slim: Variant | None = None, attempts: int = 1, alpha: float = 0.05,
                 cut: Collection[Key] = ()) -> list[AgentTable]:
    """The table of every agent in ``agents`` from the ablation's result records; ``cut``: the (task, agent,
    attempt, variant) with a try an interrupted session cut short (:func:`.runs.cut_short_by_key` of the
    ablation's folder)."""
    records = list(records)  # read again: with claimed retries counted as failed, and for the twin hits
    by = outcomes_by_variant(records)
    counted = outcomes_by_variant(records, claims_failed=True, cut=cut)
    # the flagged solves counted failed with the agent's other doubts (claims and cut tries, then the twin hits' picks
    # among the solves left), as the report reads them (fatk60: each apart left a label standing that both moved)
    flagged_out = outcomes_by_variant(records, claims_failed=True, cut=cut, flagged_failed=True)
    latest = latest_results([dict(r) for r in records])
    scored = {k for k, r in latest.items() if r.get("outcome") in SCORED_OUTCOMES}
    flagged_agents = {r.get("agent") for r in latest.values() if flagged_solve(r)}
    cut_agents = {k[1] for k in cut if k in scored}
    hits = outcomes_by_variant(records, field="twin_hits")
    tables: list[AgentTable] = []
    for agent in agents:
        variants = by.get(agent, {})
        base = variants.get(BASE, {})
        without = {r.number: variants.get(f"rule-{r.number}", {}) for r in rules.rules}
        effects = rule_effects(base, without, alpha=alpha)
        picked_out = _picked(variants, hits.get(agent, {})) \
            if any(h for v in hits.get(agent, {}).values() for t in v.values() for h in t) else {}
        doubted = flagged_out.get(agent, {}) if agent in flagged_agents else {}
        if doubted and picked_out:
            doubted = _picked(doubted, hits.get(agent, {}))
        # the readings a verdict must survive, in the order of the labels' precedence: the slimmer file's too
        readings = ((RETRIED if agent in cut_agents else AT_ITS_WORD, counted.get(agent, {})),
                    (PICKED, picked_out), (FLAGGED, doubted))
        # each reading's label and the rules whose label it changes
        moved = [(label, _changed(effects, base, without, out, alpha) if out else set()) for label, out in readings]
        table = AgentTable(agent, pass_rate(base) if base else None, len(base), attempts)
        if base:
            table.label_gap = label_gap(len(base), attempts, _rate(base), alpha / max(1, len(rules.rules)))
        for r in rules.rules:
            tok = count_tokens(r.text)
            row = RuleEffect(r.number, r.label, r.kind, tok.tokens, tok.approximate,
                             with_rule=pass_rate(base) if base else None,
                             without_rule=pass_rate(without[r.number]) if without[r.number] else None)
            cmp = effects.get(r.number)
            if cmp is not None:
                row.effect, row.ci, row.p, row.p_adjusted = cmp.delta, cmp.ci, cmp.p_value, cmp.p_adjusted
                row.mde, row.n_tasks, row.test = cmp.mde, cmp.n_tasks, cmp.test
                row.verdict = next((label for label, rules_moved in moved if r.number in rules_moved), label_for(cmp))
            table.rows.append(row)
        if slim is not None:
            saved = sum(row.tokens for row in table.rows if row.number in slim.removed)
            res = SlimResult(list(slim.removed), saved)
            slim_out = variants.get(SLIM, {})
            if slim_out and base:
                try:
                    c = compare(base, slim_out, alpha=alpha, names=("full file", "slimmer file"))
                except ValueError:
                    c = None
                if c is not None:
                    res.with_rules, res.slim = pass_rate(base), pass_rate(slim_out)
                    res.comparison = c.to_dict()
                    res.sentence = c.verdict
                    held = _slim_held(c, base, slim_out, readings, alpha)
                    if held is not None:  # fatk60: "slimmer file beats full file" bought by flagged solves
                        res.sentence = held
                        res.comparison.update(significant=False, verdict=held)
            table.slim = res
        tables.append(table)
    return tables


def _changed(effects: Mapping[int, Comparison], base: Outcomes, without: Mapping[int, Outcomes],
             counted: Mapping[str, Outcomes], alpha: float) -> set[int]:
    """The rules whose label changes when the agent's outcomes are ``counted`` (``{variant: {task: [0/1]}}``:
    :func:`outcomes_by_variant` with ``claims_failed``, or :func:`_picked`), in base (the variants as
    recorded) or in the variants (base as recorded); empty when counting changes nothing."""
    c_base = counted.get(BASE, {})
    c_without = {n: counted.get(f"rule-{n}", {}) for n in without}
    if c_base == base and c_without == without:
        return set()
    labels = {n: label_for(c) for n, c in effects.items()}
    out: set[int] = set()
    for alt in (rule_effects(c_base, without, alpha=alpha), rule_effects(base, c_without, alpha=alpha)):
        out |= {n for n, label in labels.items() if n not in alt or label_for(alt[n]) != label}
    return out


def _slim_held(c: Comparison, base: Outcomes, slim_out: Outcomes,
               readings: Sequence[tuple[str, Mapping[str, Outcomes]]], alpha: float) -> str | None:
    """The slimmer file's sentence when its comparison with the full file (``c``, base − slim) would change
    label (:func:`label_for`: which file wins, or neither) were ``readings``' outcomes (``(label, {variant: {task:
    [0/1]}})``: claimed retries, twin hits, flagged solves, each counted failed) read in base or in the slimmer
    file, the other as recorded: ``LABEL; with them counted as failed: VERDICT`` for the first such reading, as a
    rule's row is labelled (fatk60: a slimmer file solving 8 more tasks with 8 flagged solves "beat" the full
    file, p=0.0078); ``None`` when every reading leaves the label."""
    for label, counted in readings:
        c_base, c_slim = counted.get(BASE, {}), counted.get(SLIM, {})
        if not counted or (c_base == base and c_slim == slim_out):  # {}: no twin hit, nothing to read
            continue
        for alt_base, alt_slim in ((c_base, slim_out), (base, c_slim)):
            try:
                alt: Comparison | None = compare(alt_base, alt_slim, alpha=alpha, names=("full file", "slimmer file"))
            except ValueError:
                alt = None
            if alt is None or label_for(alt) != label_for(c):
                return label + ("" if alt is None else f"; with them counted as failed: {alt.verdict}")
    return None


def slim_keep(tables: Sequence[AgentTable]) -> set[int]:
    """Rules to keep in the slimmer file: those load-bearing for at least one agent, and those whose label rests on
    flagged solves (:data:`FLAGGED`: the file drops no rule on a pattern list's word, ratk48)."""
    return {row.number for t in tables for row in t.rows if row.verdict in (LOAD_BEARING, FLAGGED)}


class RuleRow(TypedDict):
    """A :class:`RuleEffect` as JSON (``ci`` as ``[lo, hi]``)."""

    number: int
    label: str
    kind: str
    tokens: int
    tokens_approximate: bool
    with_rule: float | None
    without_rule: float | None
    effect: float | None
    ci: list[float] | None
    p: float | None
    p_adjusted: float | None
    mde: float | None
    n_tasks: int
    test: str
    verdict: str


class SlimEntry(TypedDict):
    """A :class:`SlimResult` as JSON (``comparison``: :meth:`Comparison.to_dict`)."""

    removed: list[int]
    tokens_saved: int
    with_rules: float | None
    slim: float | None
    comparison: dict[str, Any] | None
    sentence: str


class AgentEntry(TypedDict):
    """An :class:`AgentTable` as JSON: one ``agents[]`` entry of the ablation report."""

    agent: str
    base_pass_at_1: float | None
    base_tasks: int
    attempts: int
    tokenizer: str
    rules: list[RuleRow]
    slim: SlimEntry | None
    #: absent from ablations written before issue 32
    label_gap: float | None
    #: ``incomplete: k of n scored`` (:attr:`AgentTable.incomplete`), ``None`` when every attempt was scored;
    #: absent from ablations written before atk11
    incomplete: str | None


def tables_to_dict(tables: Sequence[AgentTable]) -> list[AgentEntry]:
    """JSON primitives of the tables (``ci`` as ``[lo, hi]``)."""
    return [
        {"agent": t.agent, "base_pass_at_1": t.base_pass, "base_tasks": t.base_tasks, "attempts": t.attempts,
         "tokenizer": tokenizer_name(), "rules": [_rule_row(r) for r in t.rows],
         "slim": None if t.slim is None else _slim_entry(t.slim), "label_gap": t.label_gap,
         "incomplete": t.incomplete}
        for t in tables
    ]


def _slim_entry(s: SlimResult) -> SlimEntry:
    return SlimEntry(removed=s.removed, tokens_saved=s.tokens_saved, with_rules=s.with_rules, slim=s.slim,
                     comparison=s.comparison, sentence=s.sentence)


def _rule_row(r: RuleEffect) -> RuleRow:
    return RuleRow(number=r.number, label=r.label, kind=r.kind, tokens=r.tokens,
                   tokens_approximate=r.tokens_approximate, with_rule=r.with_rule, without_rule=r.without_rule,
                   effect=r.effect, ci=list(r.ci) if r.ci is not None else None, p=r.p, p_adjusted=r.p_adjusted,
                   mde=r.mde, n_tasks=r.n_tasks, test=r.test, verdict=r.verdict)
