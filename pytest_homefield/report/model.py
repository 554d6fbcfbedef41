"""The report as typed records: what :func:`.compute.compute_report` builds and every renderer reads.

:meth:`Report.to_dict` gives the report JSON (docs/contracts.md §10) with its keys in their documented
order; :meth:`Report.from_dict` reads that JSON back (what ``homefield run`` keeps and a renderer may
be handed) without changing a value, so ``Report.from_dict(d).to_dict() == d``. It trusts its input:
it is the reader of this module's own output, not a validator.

Units: USD for costs, tokens for token counts, seconds for times, fractions in [0, 1] for rates;
floats are already rounded to 6 decimals by :mod:`.compute`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast

__all__ = [
    "AgentSummary",
    "ComparisonRow",
    "Flagged",
    "MadeBy",
    "Memorization",
    "ProbeSummary",
    "Report",
    "RunInfo",
    "SandboxCounts",
    "SimilaritySplit",
    "TaskRow",
    "WellSpecified",
    "as_report",
]

#: A JSON object as the report writes it (``json.loads`` of the report gives these).
JsonObject = Mapping[str, Any]

_R = TypeVar("_R", bound="_Record")


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _plain(x: object) -> object:
    """JSON primitives of ``x``: records through their ``to_dict``, tuples as lists, containers copied."""
    if type(x) in _LEAVES:  # most values: answered before the isinstance checks (issue 35)
        return x
    if isinstance(x, _Record):
        return x.to_dict()
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


@dataclass
class _Record:
    """A dataclass written as one JSON object: its fields in declaration order, the ones named in
    ``OPTIONAL`` left out while ``None``."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, object]:
        """The JSON object (fresh containers: changing it leaves the record alone)."""
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None and f.name in self.OPTIONAL:
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_dict(cls: type[_R], d: JsonObject) -> _R:
        """The record of a JSON object written by :meth:`to_dict` (values kept as they are)."""
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{n: d[n] for n in names if n in d or n not in cls.OPTIONAL})


@dataclass
class AgentSummary(_Record):
    """One agent's numbers, ``agents.<name>`` (keys and units: :func:`.compute.compute_report`)."""

    rank: int
    name: str
    spec: str | None
    model: str | None
    version: str | None
    simulated: bool
    hinted: bool
    tasks: int
    attempts: int
    scored: int
    solved: int
    tasks_solved: int
    unscored: dict[str, int]
    attempts_per_task: list[int] | None
    pass_at_1: float | None
    pass_at_1_ci: list[float | None] | None
    pass_at_k: dict[str, float | None]
    pass_hat_k: dict[str, float | None]
    cost_usd: float | None
    cost_partial: bool
    cost_missing: int
    cost_per_solved_usd: float | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    tokens_missing: int
    wall_s_p50: float | None
    wall_s_p95: float | None
    outcomes: dict[str, int]
    touched_tests: int
    suspicious: int
    similarity_mean: float | None
    similarity_exact: int
    similarity_n: int
    per_language: dict[str, float | None]
    #: up to 3 most common error lines, ``[text, count]`` each
    errors: list[list[str | int]]
    #: p50/p95 of the attempts' ``host_s`` (s homefield spent outside the agent and the test runs), over the
    #: scored attempts that have it; ``None`` (left out of the JSON) when none does (records made before it)
    host_s_p50: float | None = None
    host_s_p95: float | None = None
    #: ``incomplete: k of n scored`` when some of the agent's n recorded attempts were not scored (its
    #: pass@1 is over the tasks whose attempts are all scored), else ``None`` (left out of the JSON)
    incomplete: str | None = None
    #: ``forged on K attempts: its S solved attempts are not trusted`` when a canary passed in K of its
    #: attempts (docs/contracts.md §8): the agent is then left out of the ranking (``rank`` 0) and the
    #: comparisons, and fails the gate; else ``None`` (left out of the JSON)
    forged: str | None = None
    #: ``K attempts tried again at its word: counted as failed, pass@1 P%`` when ``--resume`` tried K of its
    #: scored attempts again after its own claims (a rate limit, an outage its output reported: atk20 F2),
    #: else ``None`` (left out of the JSON)
    at_its_word: str | None = None
    #: ``K attempts passed a contradicted twin exactly: S solves counted as failed, pass@1 P%`` when K of its
    #: scored attempts had twin hits (a sign of a content picker, docs/contracts.md §10, ``report/picks.py``),
    #: else ``None`` (left out of the JSON)
    twin_hits: str | None = None
    #: ``reported by the agent`` when its cost is the agent's own report, not measured by homefield
    #: (:func:`.family.cost_measured`): shown beside every cost of it, never a tie-break; else ``None``
    cost_reported: str | None = None
    #: its pass@1 (fraction) with those attempts counted as failed, beside ``at_its_word``, ``twin_hits`` or
    #: ``flagged_solves`` (all it has)
    counted_pass_at_1: float | None = None
    #: scored attempts that failed, by kind (:mod:`.kinds`: ``did_not_fix``, ``broke_existing_tests``);
    #: ``None`` (left out of the JSON) when none did
    failure_kinds: dict[str, int] | None = None
    #: the agent's first error in task and attempt order, ``[task_id, attempt, text]``; ``None`` without one
    first_error: list[str | int] | None = None
    #: of its ``solved``, the solves flagged ``suspicious`` (counted solved, the flag a hint: docs/contracts.md
    #: §10); ``None`` (left out of the JSON) when it has none
    flagged_solves: int | None = None

    OPTIONAL = frozenset({"incomplete", "forged", "at_its_word", "twin_hits", "counted_pass_at_1", "failure_kinds",
                          "first_error", "cost_reported", "host_s_p50", "host_s_p95", "flagged_solves"})

    @property
    def tags(self) -> list[str]:
        """Marks shown beside the name: ``sim`` (simulated, ``sim:P``), ``hinted`` (told the files)."""
        return [t for t, on in (("sim", self.simulated), ("hinted", self.hinted)) if on]

    @property
    def only_errors(self) -> bool:
        """No scored attempt, or every scored attempt ended in ``agent_error``."""
        return not self.scored or self.outcomes.get("agent_error", 0) == self.scored


@dataclass
class ComparisonRow(_Record):
    """One pair, ``comparisons[]``: ``a`` ranked above ``b``, ``delta = a − b`` (fraction), ``ci``
    [lo, hi]. A pair without a shared scored task has ``test`` ``None`` and none of ``attempts`` …
    ``exact`` (the keys are left out). ``family``: how many pairs ``p_adjusted`` was Holm-adjusted over;
    ``sanity``: a pair with a reference agent, decided unadjusted (both left out when unset, and
    absent from reports written before issue 32). ``at_their_word``: when the verdict would change were
    the attempts either agent had tried again after its own unscored claims counted as failed (a rate
    limit or an outage its output reported), {agent: such attempts} and the ``verdict`` says "no verdict"
    (``significant`` false); the verdict so counted is ``counted_failed``; both left out otherwise.
    ``twin_hits``: likewise, {agent: its solved attempts counted as failed for its twin hits} when that
    changes the verdict (``report/picks.py``). ``flagged``: likewise, {agent: its solves flagged ``suspicious``}
    when counting them failed changes the verdict (a flagged solve counts solved; no pattern decides a verdict)."""

    OPTIONAL = frozenset({"attempts", "b_c", "ties", "sd_diff", "exact", "family", "sanity", "at_their_word",
                          "twin_hits", "counted_failed", "flagged"})

    a: str
    b: str
    test: str | None
    n_tasks: int
    delta: float | None
    ci: list[float | None] | None
    p_value: float | None
    p_adjusted: float | None
    mde: float | None
    verdict: str
    alpha: float
    attempts: list[float | None] | None = None
    b_c: list[int] | None = None
    ties: int | None = None
    sd_diff: float | None = None
    exact: bool | None = None
    significant: bool = False
    note: str = ""
    family: int | None = None
    sanity: bool | None = None
    at_their_word: dict[str, int] | None = None
    twin_hits: dict[str, int] | None = None
    counted_failed: str | None = None
    flagged: dict[str, int] | None = None


@dataclass
class TaskRow(_Record):
    """One task, ``tasks[]``: outcomes, ``suspicious`` flags (one per outcome: the attempt was flagged
    ``suspicious``; a solve so flagged is counted solved and has its own grid mark) and edit-F1 per
    attempt, per agent in rank order."""

    id: str
    subject: str
    well_specified: bool | None
    red_by_import_error: bool
    languages: list[str]
    known: bool
    attempts: dict[str, list[str]]
    suspicious: dict[str, list[bool]]
    similarity: dict[str, list[float | None]]


@dataclass
class WellSpecified(_Record):
    """``well_specified``: pass@1 (and its CI) of each agent over the well-specified tasks only."""

    tasks: int
    agents: dict[str, float | None]
    pass_at_1_ci: dict[str, list[float | None] | None]
    excluded: list[str]


@dataclass
class Flagged(_Record):
    """One attempt flagged ``suspicious`` or ``touched_tests``, or ``forged`` (``canary``: the canary
    test that passed), ``flagged[]``."""

    OPTIONAL = frozenset({"reason", "canary"})

    task_id: str
    agent: str
    attempt: int
    outcome: str
    suspicious: bool
    touched_tests: bool
    reason: str | None = None
    canary: str | None = None


@dataclass
class SimilaritySplit(_Record):
    """``similarity.<agent>``: mean edit-F1 of scored attempts, solved and not solved."""

    mean_f1_solved: float | None
    mean_f1_unsolved: float | None


@dataclass
class RunInfo(_Record):
    """One run folder of the report, ``runs[]``: values as its ``meta.json`` has them, and ``results``
    (``{"bytes": int, "mtime_ns": int}`` of its ``results.jsonl`` as the report read it; only in the
    report a run folder keeps, :attr:`Report.made_by`)."""

    OPTIONAL = frozenset({"results"})

    run_id: str
    created_at: str | None
    attempts: int | None
    tasks_digest: str | None
    cut_short: str | None
    results: dict[str, int] | None = None


@dataclass
class MadeBy(_Record):
    """``made_by``: what wrote the report a run folder keeps (``report.json``): the ``homefield`` version
    and the report ``format`` (:data:`.compute.REPORT_FORMAT`). With ``runs[].results`` it tells the
    viewer whether the kept report is still the one this version would compute (docs/contracts.md §10)."""

    homefield: str
    format: int


@dataclass
class SandboxCounts(_Record):
    """``sandbox``: attempts per sandbox, for each agent's process and for the test runs."""

    agents: dict[str, dict[str, int]]
    tests: dict[str, int]


@dataclass
class ProbeSummary(_Record):
    """``memorization.agents.<name>``: the agent's latest probe verdict; ``flagged`` entries as the
    probe wrote them (``{task_id, best, mean}``, scores in [0, 1])."""

    recites: int
    judged: int | None
    control: str | None
    cutoff: str | None
    control_n: int | None
    control_p95: float | None
    flagged: list[dict[str, object]]


@dataclass
class Memorization(_Record):
    """``memorization``: probe verdicts of the report's agents, and the tasks the runs left out with
    ``--exclude-memorized`` (``excluded_by`` as ``meta.json`` froze it: ``{agent: {tasks, control,
    cutoff, control_n, control_p95}}``)."""

    agents: dict[str, ProbeSummary]
    excluded: list[str]
    excluded_by: dict[str, dict[str, object]]

    @classmethod
    def from_dict(cls, d: JsonObject) -> Memorization:
        return cls({n: ProbeSummary.from_dict(v) for n, v in d["agents"].items()}, d["excluded"], d["excluded_by"])


@dataclass
class Report(_Record):
    """The whole report (docs/contracts.md §10 and the extras documented in :mod:`.compute`)."""

    OPTIONAL = frozenset({"sandbox", "memorization", "incomplete", "made_by", "found_flaky"})

    schema_version: int
    run_ids: list[str]
    cut_short: str | None
    alpha: float
    seed: int
    runs: list[RunInfo]
    notes: list[str]
    legend: dict[str, str]
    agents: dict[str, AgentSummary]
    comparisons: list[ComparisonRow]
    tasks: list[TaskRow]
    unsolved_by_all: list[str]
    well_specified: WellSpecified
    languages: dict[str, int]
    flagged: list[Flagged]
    similarity: dict[str, SimilaritySplit]
    sandbox: SandboxCounts | None = None
    memorization: Memorization | None = None
    #: the ``incomplete: shard K/N missing`` lines of ``homefield report`` over shards
    incomplete: list[str] | None = None
    #: who wrote the report a run folder keeps (``compute_report(..., stamp=True)``), else ``None``
    made_by: MadeBy | None = None
    #: the ``[task id, test id]`` PASS_TO_PASS ids this report's runs recorded flaky (``.homefield/flaky.jsonl``
    #: lines of their run ids), ``None`` when none (ux67: the headline says oracle's miss is one of them)
    found_flaky: list[list[str]] | None = None
    #: keys some caller added that this model does not know, kept in place at the end
    extra: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        out = super().to_dict()
        extra = out.pop("extra")
        out.update(cast("dict[str, object]", extra))
        return out

    @classmethod
    def from_dict(cls, d: JsonObject) -> Report:
        known = {f.name for f in dataclasses.fields(cls)}
        sandbox, memo = d.get("sandbox"), d.get("memorization")
        return cls(
            schema_version=d["schema_version"],
            run_ids=d["run_ids"],
            cut_short=d["cut_short"],
            alpha=d["alpha"],
            seed=d["seed"],
            runs=[RunInfo.from_dict(r) for r in d["runs"]],
            notes=d["notes"],
            legend=d["legend"],
            agents={n: AgentSummary.from_dict(a) for n, a in d["agents"].items()},
            comparisons=[ComparisonRow.from_dict(c) for c in d["comparisons"]],
            tasks=[TaskRow.from_dict(t) for t in d["tasks"]],
            unsolved_by_all=d["unsolved_by_all"],
            well_specified=WellSpecified.from_dict(d["well_specified"]),
            languages=d["languages"],
            flagged=[Flagged.from_dict(f) for f in d["flagged"]],
            similarity={n: SimilaritySplit.from_dict(s) for n, s in d["similarity"].items()},
            sandbox=None if sandbox is None else SandboxCounts.from_dict(sandbox),
            memorization=None if memo is None else Memorization.from_dict(memo),
            incomplete=d.get("incomplete"),
            made_by=None if d.get("made_by") is None else MadeBy.from_dict(d["made_by"]),
            found_flaky=d.get("found_flaky"),
            extra={k: v for k, v in d.items() if k not in known},
        )


def as_report(report: Report | JsonObject) -> Report:
    """``report`` itself, or the :class:`Report` of a report dict (:meth:`Report.from_dict`)."""
    return report if isinstance(report, Report) else Report.from_dict(report)
