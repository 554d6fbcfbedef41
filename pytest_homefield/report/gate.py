"""``--fail-if-worse-than RUN_ID``: the regression gate against a baseline run (docs/contracts.md §2).

An agent present in the candidate runs and in the baseline run fails the gate when its pass@1 on
the tasks both have scored is lower than the baseline's **and** the *one-sided* paired test of
"the candidate is worse" rejects at ``alpha`` after Holm's adjustment across every agent gated
(issue 32). The test is the report's (:func:`pytest_homefield.report.stats.compare`, its
``p_worse``): exact McNemar ``P(Bin(b + c, 1/2) <= b)`` with one attempt per task, the paired
sign-flip permutation test otherwise; tasks are the unit. A lower pass@1 that is not significant
passes, and says so. An agent with a ``forged`` attempt (a canary passed) fails the gate whatever
its numbers: a lucky guess on one task does not buy a verdict (docs/contracts.md §8).

Why one-sided: the gate asks one question, "worse?", so a two-sided p tested at alpha spends only
alpha/2 on it (issue 32's example: 30 tasks x 1 attempt, the candidate loses 10 and wins 3: two-sided
p 0.092 passed, one-sided exact p 0.046 fails at 0.05). Why Holm: with several candidate agents, each
tested at alpha, some agent fails by chance far more often than alpha. No pytest here.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.records import SCORED_OUTCOMES, counts_solved, counts_solved_flagged_failed, flagged_solve
from pytest_homefield.report import stats
from pytest_homefield.report.picks import picked_outcomes
from pytest_homefield.report.runs import forged_lines, load_results, owed_attempts, retried_by_key
from pytest_homefield.report.verdicts import fmt_num
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import plural

__all__ = ["GateError", "GateLine", "worse_than", "gate_summary", "outcomes_by_agent", "forged_by_agent",
           "baseline_runs", "owed_outcomes"]


class GateError(ValueError):
    """The gate cannot be evaluated (no such baseline run, no agent in common); one line."""


@dataclass(frozen=True)
class GateLine:
    """One agent's comparison: pass@1 (fractions) of the candidate and the baseline on ``n_tasks``
    shared tasks, ``delta`` = candidate − baseline, the test's one-sided ``p_value`` of "the candidate
    is worse" and its ``p_adjusted`` (Holm over the ``family`` agents gated), and whether the gate fails
    (``worse``: ``delta < 0`` and ``p_adjusted < alpha``)."""

    agent: str
    candidate: float
    baseline: float
    delta: float
    p_value: float
    test: str
    n_tasks: int
    alpha: float
    baseline_run: str
    worse: bool
    p_adjusted: float = 1.0
    family: int = 1
    #: the candidate's attempts scored ``forged`` (a canary passed): any fails the gate, whatever the
    #: test says (docs/contracts.md §8: its solved attempts are not trusted)
    forged: int = 0
    #: the candidate's attempts on the compared tasks that the run owed but did not score (unscored, or
    #: skipped and never recorded): each counted as a failure (atk11 G1)
    unscored: int = 0
    #: the candidate's scored attempts on the compared tasks that ``--resume`` tried again after its own
    #: claims (a rate limit, an outage its output reported) or after a try an interrupted session cut short:
    #: each counted as a failure (atk20 F2, atk23 F3)
    retried: int = 0
    #: the candidate's solved attempts on the compared tasks counted as failed for its twin hits (solves a
    #: content picker may have won by luck: ``report/picks.py``, atk22)
    picked: int = 0
    #: the candidate's solves on the compared tasks flagged ``suspicious``: each counted as a failure (the report
    #: counts them solved and withholds what rests on them; a pass/fail gate cannot withhold itself, sus60)
    flagged: int = 0

    @property
    def method(self) -> str:
        """The test and the family, for the summary and the JUnit property ``homefield.gate.test``:
        ``one-sided exact McNemar, Holm over 2 agents, alpha 0.05``."""
        name = "exact McNemar" if self.test == "mcnemar" else "paired sign-flip permutation"
        return (f"one-sided {name}, Holm over {self.family} agent{'s' if self.family != 1 else ''}, "
                f"alpha {self.alpha:g}")

    @property
    def too_few(self) -> bool:
        """Whether ``n_tasks`` are too few for the one-sided exact test to reach ``p < alpha`` even when
        every shared task is lost (``0.5 ** n >= alpha``: 4 tasks or fewer at 0.05): the gate cannot fail
        on the test then, only on a forged attempt."""
        return 0.5 ** self.n_tasks >= self.alpha

    @property
    def text(self) -> str:
        verdict = f"FORGED on {plural(self.forged, 'attempt')}: the gate fails" if self.forged else \
            "WORSE: the gate fails" if self.worse else ("not significantly worse" if self.delta < 0 else "not worse")
        if self.too_few and not self.forged:  # issue 35: say so rather than a p no loss could make small
            verdict += (f" (too few tasks ({self.n_tasks}) for an interval: no loss can reach p<{fmt_num(self.alpha)}, "
                        "so the gate cannot fail on them)")
        holm = f", Holm-adjusted p={self.p_adjusted:.3g} over {self.family} agents" if self.family > 1 else ""
        unscored = f"; {plural(self.unscored, 'unscored attempt')} counted as failed" if self.unscored else ""
        if self.retried:
            unscored += (f"; {plural(self.retried, 'attempt')} tried again after its own claims (a rate limit or "
                         "an outage homefield cannot check) or after an interrupted try, counted as failed")
        if self.picked:
            unscored += (f"; {plural(self.picked, 'solve')} counted as failed for its twin hits (its code passed "
                         "contradicted twins of hidden tests exactly)")
        if self.flagged:
            unscored += (f"; {plural(self.flagged, 'solve')} flagged suspicious counted as failed (a pattern list's "
                         "hint: the report counts them solved and withholds what rests on them)")
        return (f"gate {self.agent}: pass@1 {self.candidate:.2f} vs {self.baseline:.2f} in baseline "
                f"{self.baseline_run} on {self.n_tasks} shared tasks (delta {self.delta:+.2f}, {self.test} "
                f"one-sided p={self.p_value:.3g}{holm}, alpha={self.alpha:g}{unscored}): {verdict}")


def gate_summary(lines: Sequence[GateLine]) -> str:
    """One line naming the test, the family and the verdict: ``gate: fail (a worse than base; one-sided
    exact McNemar, Holm over 2 agents, alpha 0.05)``; ``gate: pass (...)``."""
    if not lines:
        return "gate: no agent compared"
    worse = [g.agent for g in lines if g.worse]
    head = f"fail ({', '.join(worse)} worse than {lines[0].baseline_run}; " if worse else "pass ("
    return f"gate: {head}{lines[0].method})"


def outcomes_by_agent(run_dirs: Sequence[Path], *, counted_failed: Container[Any] = frozenset(),
                      value: Callable[[Any], int] | None = None,
                      flagged_failed: bool = True) -> dict[str, dict[str, list[int]]]:
    """``{agent: {task_id: [0/1 per scored attempt]}}`` over ``run_dirs`` (variant ``base``; the last
    folder wins per key, as in the report); an attempt whose key is in ``counted_failed`` is 0, and so is a solve
    flagged ``suspicious`` (:func:`~pytest_homefield.records.counts_solved_flagged_failed`: a pass/fail gate has
    no "no verdict", so it takes the reading a verdict of the report must survive, as for claimed retries) unless
    ``flagged_failed`` is false (the baseline's side: its flagged solves are solves, as its report counts them,
    :func:`~pytest_homefield.records.counts_solved`; fatk60). ``value``: each scored attempt's number instead (a
    :class:`~pytest_homefield.records.Result` → int)."""
    return _by_agent(_merged(run_dirs), counted_failed=counted_failed, value=value, flagged_failed=flagged_failed)


def _by_agent(records: Iterable[Any], *, counted_failed: Container[Any] = frozenset(),
              value: Callable[[Any], int] | None = None,
              flagged_failed: bool = True) -> dict[str, dict[str, list[int]]]:
    """:func:`outcomes_by_agent` over ``records`` (:func:`_merged`'s), read once by a caller that needs them."""
    solved = counts_solved_flagged_failed if flagged_failed else counts_solved
    out: dict[str, dict[str, list[int]]] = {}
    for r in records:
        if r.outcome in SCORED_OUTCOMES:
            out.setdefault(r.agent, {}).setdefault(r.task_id, []).append(
                value(r) if value is not None else 0 if r.key in counted_failed else int(solved(r)))
    return out


def owed_outcomes(run_dirs: Sequence[Path]) -> tuple[dict[str, dict[str, list[int]]], dict[str, dict[str, int]],
                                                      dict[str, dict[str, int]]]:
    """The candidate's side of the gate: :func:`outcomes_by_agent` with a 0 for every attempt the runs
    owed (:func:`~pytest_homefield.report.runs.owed_attempts`: ``meta.json`` tasks × agents × attempts)
    that has no scored record, and ``{agent: {task_id: such attempts}}``. An agent cannot leave a task
    out of the comparison by claiming a rate limit or spending its budget share (atk11 G1). Nor can it
    re-roll one: a scored attempt that ``--resume`` tried again after the agent's own claims
    (:func:`~pytest_homefield.report.runs.claims_by_key`) counts 0 too, and the third value is
    ``{agent: {task_id: such attempts}}`` (atk20 F2: a claim after each failure bought 67% against 38%)."""
    claims = retried_by_key(run_dirs)  # claimed retries and tries cut short (atk23 F3)
    scored = [r for r in _merged(run_dirs) if r.outcome in SCORED_OUTCOMES]
    out = outcomes_by_agent(run_dirs, counted_failed=claims)
    retried: dict[str, dict[str, int]] = {}
    for r in scored:
        if r.key in claims:
            retried.setdefault(r.agent, {})[r.task_id] = retried.get(r.agent, {}).get(r.task_id, 0) + 1
    done = {(r.agent, r.task_id, r.attempt) for r in scored}
    missing: dict[str, dict[str, int]] = {}
    for agent, keys in owed_attempts(run_dirs).items():
        for task_id, attempt in sorted(keys):
            if (agent, task_id, attempt) not in done:
                out.setdefault(agent, {}).setdefault(task_id, []).append(0)
                missing.setdefault(agent, {})[task_id] = missing.get(agent, {}).get(task_id, 0) + 1
    return out, missing, retried


def _merged(run_dirs: Sequence[Path]) -> list[Any]:
    merged = {}
    for d in run_dirs:
        for r in load_results(Path(d)):
            if r.variant == "base":
                merged[r.key] = r
    return list(merged.values())


def forged_by_agent(run_dirs: Sequence[Path]) -> dict[str, int]:
    """``{agent: attempts scored forged}`` over ``run_dirs``: every key a line of any folder records ``forged``
    (:func:`~pytest_homefield.report.runs.forged_lines`), whatever later line or folder won it (gatk58: the last
    folder's record of the same attempt hid it, and the gate passed a forger)."""
    out: dict[str, int] = {}
    for _task, agent, _attempt, _variant in forged_lines(run_dirs):
        out[agent] = out.get(agent, 0) + 1
    return out


def baseline_runs(baseline_dir: Path) -> list[Path]:
    """The run folders of a baseline: ``baseline_dir`` itself when it is a run folder (has a
    ``meta.json``), else the run folders directly inside it (the shards of a CI baseline, downloaded
    into one folder), sorted by name. Raises :class:`GateError` when there is neither."""
    if (baseline_dir / "meta.json").exists():
        return [baseline_dir]
    inner = sorted(d for d in baseline_dir.iterdir() if (d / "meta.json").exists()) if baseline_dir.is_dir() else []
    if not inner:
        raise GateError(f"{option('fail-if-worse-than')}: no baseline run {baseline_dir.name!r} in "
                        f"{baseline_dir.parent}")
    return inner


def worse_than(candidate_dirs: Sequence[Path], baseline_dir: Path, *, alpha: float = 0.05) -> list[GateLine]:
    """One :class:`GateLine` per agent of both the candidate runs and the baseline
    (:func:`baseline_runs`), in the candidate's agent order, on the tasks the baseline scored and the
    candidate selected; a candidate attempt owed but not scored counts as failed (:func:`owed_outcomes`).
    Each line has the one-sided p of "worse" (:attr:`.stats.Comparison.p_worse`), Holm-adjusted across
    all of them (:func:`.stats.holm`). Raises :class:`GateError` when there is no such baseline or no
    agent is shared. An agent with a ``forged`` attempt in the candidate runs fails whatever its numbers
    (docs/contracts.md §8)."""
    base_id = baseline_dir.name
    cand, missing, retried = owed_outcomes(candidate_dirs)
    # the baseline as its report counts it, a flagged solve solved: counting it failed lowered the bar (fatk60)
    base = outcomes_by_agent(baseline_runs(baseline_dir), flagged_failed=False)
    shared = [a for a in cand if a in base]
    if not shared:
        raise GateError(f"{option('fail-if-worse-than')} {base_id}: no agent scored in both runs "
                        f"(this run: {', '.join(cand) or 'none'}; baseline: {', '.join(base) or 'none'})")
    found = []
    merged = _merged(candidate_dirs)
    hits = _by_agent(merged, value=lambda r: int(r.twin_hits))  # twin hits per scored attempt
    picked: dict[str, int] = {}
    flagged: dict[str, int] = {}  # agent -> its flagged solves on the compared tasks (sus60)
    for agent in shared:
        tasks = sorted(set(cand[agent]) & set(base[agent]))
        if not tasks:
            raise GateError(f"{option('fail-if-worse-than')} {base_id}: agent {agent} has no task scored in both runs")
        a = {t: cand[agent][t] for t in tasks}
        b = {t: base[agent][t] for t in tasks}
        a, _, flipped = picked_outcomes(a, hits.get(agent, {}), [b])  # atk22: twin hits' possible lucky solves
        picked[agent] = flipped
        flagged[agent] = sum(flagged_solve(r) for r in merged
                             if r.outcome in SCORED_OUTCOMES and r.agent == agent and r.task_id in b)  # b: tasks
        cmp = stats.compare(a, b, alpha=alpha, names=(agent, f"{agent}@{base_id}"))
        pa = sum(sum(v) / len(v) for v in a.values()) / len(tasks)
        pb = sum(sum(v) / len(v) for v in b.values()) / len(tasks)
        found.append((agent, pa, pb, cmp, len(tasks), sum(missing.get(agent, {}).get(t, 0) for t in tasks),
                      sum(retried.get(agent, {}).get(t, 0) for t in tasks)))
    adjusted = stats.holm([cmp.p_worse for *_, cmp, _, _, _ in found])
    forged = forged_by_agent(candidate_dirs)
    return [GateLine(agent, pa, pb, cmp.delta, cmp.p_worse, cmp.test, n, alpha, base_id,
                     worse=(cmp.delta < 0 and p_adj < alpha) or forged.get(agent, 0) > 0, p_adjusted=p_adj,
                     family=len(found), forged=forged.get(agent, 0), unscored=unscored, retried=again,
                     picked=picked[agent], flagged=flagged[agent])
            for (agent, pa, pb, cmp, n, unscored, again), p_adj in zip(found, adjusted, strict=True)]
