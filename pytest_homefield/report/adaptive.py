"""``--adaptive``: which pairs of agents are settled after each round, and which attempts are not needed
(issue 32; docs/contracts.md §2, §8, §10).

Round r is attempt r of every task and agent. After round r (look r of K = ``--attempts``) each pair of
non-reference agents (:mod:`.family`) is analysed on its attempt pairs of rounds ``<= r``
(:func:`.sequential.look_stats`) and is **settled** at the first look where

* the group-sequential sign test rejects (``difference``), or
* it is futile (:func:`.sequential.futile`: its repeated interval lies inside ``+-margin``, or the
  conditional power under the current trend is below 20 %) -- ``futility``;

a pair still open after look K stopped because its ``attempts`` are exhausted. An attempt (task, agent,
round r) is **not needed** when every pair involving the agent is settled at a look before r; a
reference agent (``oracle``, ``noop``, ``sim:P``) is a sanity check, not a hypothesis, and runs round 1
only. An agent in no pair (the only candidate of a run) runs every round. The decision for an attempt
is a function of the recorded results alone, so every xdist worker, a resumed session and the report
reach the same one. No pytest.

Nothing is settled at an agent's word, nor on a pattern list's flag (docs/contracts.md §10). Four kinds of
attempt are read both as recorded and counted as failed: an attempt tried again after the agent's own claim (a
rate limit or an outage its output reported, ``claimed``: atk20 F2) or after a try an interrupted session cut
short (``cut``: a ``start`` without an ``end`` in ``tries.jsonl``, atk23 F3) counts as failed, and
:data:`.picks.SOLVES_PER_HIT` solved attempts per attempt with twin hits (atk22: solves a content picker may
have won by luck) count as failed, those on the tasks the pair's other agent solves least first
(:func:`.picks.picked_outcomes`), and a solve flagged ``suspicious`` counts as failed (sus60: the flag is a
pattern list's hint; it decides no count, but a look that rests on flagged solves settles nothing). A pair is
settled only where **every** reading settles it the same way (the same kind, a difference in the same
direction): as recorded, each of its two agents so counted with the other as recorded (the report's readings),
and both so counted. One reading with both counted would not be enough: counting lowers both agents at once, so
it can hide a difference bought by one of them (the liar's bought wins and the honest agent's real ones both
vanish) or make one (the honest agent counted down below the liar); each agent counted alone is the reading that
undoes exactly what that agent may have bought, in either direction. Else the pair is not settled, ``why`` ``no
verdict: it rests on NAME's word …``, ``… NAME's retried attempts …``, ``… it may rest on luck (NAME's twin hits
…)`` or ``… it rests on NAME's flagged solves …``, and its attempts go on (atk23: a liar claiming a rate limit
after each miss made its pair with an equal honest agent "difference" at look 2 of 3, +40 pts, repeated
p=0.0007, and round 3 not needed for either; counted as failed the two tie). A run's own session reads only the
tries earlier sessions cut short (an ``end`` of its own may still be on its way when a worker decides:
``tries.jsonl`` ``session``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_homefield.records import NOT_NEEDED, SCORED_OUTCOMES, counts_solved, flagged_solve
from pytest_homefield.report.family import COST_REPORTED, cost_measured, is_reference_spec
from pytest_homefield.report.picks import SOLVES_PER_HIT, picked_outcomes
from pytest_homefield.report.sequential import Look, futile, look_stats

__all__ = ["PairStop", "adaptive_notes", "adaptive_pairs", "adaptive_section", "latest", "not_needed_reason", "savings"]

Record = Mapping[str, Any]


Key = tuple[str, str, int]


def latest(results: Iterable[Record]) -> dict[tuple[str, str, int], Record]:
    """The last record per (task id, agent, attempt) of variant ``base`` (a retry's line wins)."""
    out: dict[tuple[str, str, int], Record] = {}
    for r in results:
        if r.get("variant", "base") == "base":
            out[(str(r["task_id"]), str(r["agent"]), int(r["attempt"]))] = r
    return out


def claimed_keys(results: Iterable[Record]) -> set[Key]:
    """(task id, agent, attempt) of variant ``base`` with an unscored record at the agent's own word
    (``claimed``): attempts ``--resume`` tried again on its claim."""
    return {(str(r["task_id"]), str(r["agent"]), int(r["attempt"])) for r in results
            if r.get("variant", "base") == "base" and r.get("claimed") and r.get("outcome") not in SCORED_OUTCOMES}


def counted_failed(last: Mapping[Key, Record], claimed: set[Key]) -> dict[Key, Record]:
    """``last`` with every scored record of a ``claimed`` key read as a failure (the report's rule for
    a verdict on the agent's word, docs/contracts.md §10)."""
    return {k: ({**r, "outcome": "agent_error"} if k in claimed and r.get("outcome") in SCORED_OUTCOMES else r)
            for k, r in last.items()}


def _solved(r: Record | None) -> int | None:
    """1 for an attempt the report counts solved (a flagged solve too: ``records.counts_solved``), 0 for
    another scored one, ``None`` for none or an unscored one."""
    if r is None or r.get("outcome") not in SCORED_OUTCOMES:
        return None
    return int(counts_solved(r))


def pair_rounds(last: Mapping[tuple[str, str, int], Record], a: str, b: str, rounds: int) -> list[list[int]]:
    """``x = solved_A - solved_B`` of each task's attempt pair in rounds 1 .. ``rounds`` (only tasks where
    both attempts are scored), one list per round."""
    tasks = sorted({t for (t, ag, _n) in last if ag in (a, b)})
    out: list[list[int]] = []
    for n in range(1, rounds + 1):
        xs = []
        for t in tasks:
            sa, sb = _solved(last.get((t, a, n))), _solved(last.get((t, b, n)))
            if sa is not None and sb is not None:
                xs.append(sa - sb)
        out.append(xs)
    return out


@dataclass(frozen=True)
class PairStop:
    """One pair's sequential verdict: ``look`` (1-based) where it stopped or the last look analysed,
    ``why`` (``difference``, ``futility: <reason>``, ``attempts exhausted`` or ``open``), the
    :class:`.sequential.Look` there (``None`` before any attempt pair)."""

    a: str
    b: str
    look: int
    why: str
    stats: Look | None

    @property
    def settled(self) -> bool:
        """Stopped before its attempts ran out (a difference or futility)."""
        return self.why == "difference" or self.why.startswith("futility")

    def to_dict(self) -> dict[str, Any]:
        """JSON primitives for the report's ``adaptive.pairs[]`` (docs/contracts.md §10)."""
        s = self.stats
        return {"a": self.a, "b": self.b, "look": self.look, "why": self.why,
                "delta": s.delta if s else None, "ci": list(s.ci) if s else None, "p": s.p if s else None,
                "pairs": s.pairs if s else 0, "anytime_valid": True}


def _stop(a: str, b: str, rounds: list[list[int]], looks: int, alpha: float, margin: float,
          with_p: bool = True) -> PairStop:
    if not any(rounds):
        return PairStop(a, b, 0, "open", None)
    stats = look_stats(rounds, looks, alpha, with_p=with_p)
    for lk in stats:
        if lk.rejects:
            return PairStop(a, b, lk.look, "difference", lk)
        why = futile(lk, margin)
        if why:
            return PairStop(a, b, lk.look, f"futility: {why}", lk)
    last = stats[-1]
    return PairStop(a, b, last.look, "attempts exhausted" if last.look >= looks else "open", last)


def adaptive_pairs(results: Iterable[Record], agents: Sequence[tuple[str, str | None]], *, looks: int,
                   through: int | None = None, alpha: float = 0.05, margin: float = 0.10,
                   with_p: bool = True, cut: Collection[Key] = ()) -> list[PairStop]:
    """:class:`PairStop` of each pair of non-reference ``agents`` (``(name, spec)`` in run order), analysed
    over rounds 1 .. ``through`` (default: ``looks``, every round). ``margin`` is a fraction (0.10 = 10
    points); ``with_p=False`` skips the repeated p (:func:`.sequential.look_stats`); ``cut``: the (task id,
    agent, attempt) with a try an interrupted session cut short (:func:`.runs.cut_short_by_key`). A pair
    settled as recorded but not the same way in another reading (the module docstring) is not settled."""
    raw = list(results)
    last = latest(raw)
    claimed = claimed_keys(raw)
    cuts = set(cut)
    names = [n for n, spec in agents if not is_reference_spec(spec)]
    upto = looks if through is None else min(through, looks)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            stop = _pair_stop(last, a, b, upto, looks, alpha, margin, with_p)
            if stop.settled:
                stop = _unless_every_reading(stop, last, claimed, cuts, upto, looks, alpha, margin, with_p)
            out.append(stop)
    return out


def _unless_every_reading(stop: PairStop, last: Mapping[Key, Record], claimed: set[Key], cuts: set[Key],
                          upto: int, looks: int, alpha: float, margin: float, with_p: bool) -> PairStop:
    """``stop`` when every reading of its pair (each agent with its retried attempts, twin hits and flagged solves
    counted,
    the other as recorded, then both counted) settles it the same way, else the pair unsettled with why."""
    a, b = stop.a, stop.b
    whose = {n: _what_counts(last, n, claimed, cuts, upto) for n in (a, b)}
    counted_agents = [n for n in (a, b) if any(whose[n])]
    subsets = [[n] for n in counted_agents] + ([counted_agents] if len(counted_agents) == 2 else [])
    for subset in subsets:
        reading = dict(last)
        for n in subset:
            reading = _counted(reading, n, b if n == a else a, claimed | cuts, upto)
        other = _pair_stop(reading, a, b, upto, looks, alpha, margin, with_p)
        if not _same_verdict(stop, other):
            return PairStop(a, b, stop.look, _no_verdict(subset, whose, other), stop.stats)
    return stop


def _what_counts(last: Mapping[Key, Record], agent: str, claimed: set[Key], cuts: set[Key],
                 upto: int) -> tuple[bool, bool, bool, bool]:
    """Whether ``agent`` has, in rounds ``<= upto``, a scored attempt tried again after its claims, one
    tried again after a cut try, one with twin hits, a solve flagged ``suspicious``."""
    mine = [(k, r) for k, r in last.items() if k[1] == agent and k[2] <= upto and r.get("outcome") in SCORED_OUTCOMES]
    return (any(k in claimed for k, _ in mine), any(k in cuts for k, _ in mine),
            any(int(r.get("twin_hits") or 0) > 0 for _, r in mine), any(flagged_solve(r) for _, r in mine))


def _their(names: Sequence[str]) -> str:
    return " and ".join(f"{n}'s" for n in names)


def _no_verdict(subset: Sequence[str], whose: Mapping[str, tuple[bool, bool, bool, bool]], other: PairStop) -> str:
    """The ``why`` of a pair that one reading (``subset`` counted) does not settle as recorded."""
    claims = [n for n in subset if whose[n][0] and not whose[n][1]]
    retried = [n for n in subset if whose[n][1]]
    picked = [n for n in subset if whose[n][2]]
    flagged = [n for n in subset if whose[n][3]]
    parts = []
    if claims:
        parts.append(f"it rests on {_their(claims)} word (attempts tried again after its claims")
    if retried:
        parts.append(f"it rests on {_their(retried)} retried attempts (tried again after its claims or after a try "
                     "an interrupted session cut short")
    if picked:
        parts.append(f"it may rest on luck ({_their(picked)} code passed contradicted twins exactly, "
                     f"{SOLVES_PER_HIT} solves per such attempt")
    if flagged:
        parts.append(f"it rests on {_their(flagged)} flagged solves (solves flagged suspicious, which a pattern list "
                     "flags and no pattern decides")
    return "no verdict: " + "), and ".join(parts) + f"; counted as failed: {other.why} at look {other.look})"


def _counted(last: Mapping[Key, Record], agent: str, opponent: str, retried: set[Key], upto: int) -> dict[Key, Record]:
    """``last`` with ``agent``'s scored attempts of rounds ``<= upto`` counted as the report counts them: each
    in ``retried`` and each solve flagged ``suspicious`` failed, then :data:`.picks.SOLVES_PER_HIT` solved ones per
    attempt with twin hits failed, on the tasks ``opponent`` solves least first (:func:`.picks.picked_outcomes`)."""
    out = counted_failed(last, {k for k, r in last.items() if k[1] == agent and k[2] <= upto
                                and (k in retried or flagged_solve(r))})
    mine: dict[str, list[Key]] = {}
    theirs: dict[str, list[int]] = {}
    for k in sorted(out, key=lambda k: (k[0], k[2])):
        r = out[k]
        if k[2] > upto or r.get("outcome") not in SCORED_OUTCOMES:
            continue
        if k[1] == agent:
            mine.setdefault(k[0], []).append(k)
        elif k[1] == opponent:
            theirs.setdefault(k[0], []).append(int(counts_solved(r)))
    hits = {t: [int(last[k].get("twin_hits") or 0) for k in ks] for t, ks in mine.items()}
    if not any(h for v in hits.values() for h in v):
        return out
    outcomes = {t: [int(counts_solved(out[k])) for k in ks] for t, ks in mine.items()}
    picked, _hits, _flipped = picked_outcomes(outcomes, hits, [theirs])
    for t, ks in mine.items():
        for k, was, now in zip(ks, outcomes[t], picked[t], strict=True):
            if was and not now:
                out[k] = {**out[k], "outcome": "agent_error"}
    return out


def _pair_stop(last: Mapping[Key, Record], a: str, b: str, upto: int, looks: int, alpha: float, margin: float,
               with_p: bool) -> PairStop:
    rounds = pair_rounds(last, a, b, upto)
    while rounds and not rounds[-1]:  # a round not run yet is no look
        rounds.pop()
    return _stop(a, b, rounds, looks, alpha, margin, with_p)


def _same_verdict(x: PairStop, y: PairStop) -> bool:
    """Whether two readings of a pair settle it the same way: both a difference in the same direction,
    or both futile."""
    if x.why == "difference" and y.why == "difference":
        return x.stats is not None and y.stats is not None and (x.stats.delta > 0) == (y.stats.delta > 0)
    return x.why.startswith("futility") and y.why.startswith("futility")


def not_needed_reason(results: Iterable[Record], agents: Sequence[tuple[str, str | None]], agent: str,
                      attempt: int, *, looks: int, alpha: float = 0.05, margin: float = 0.10,
                      cut: Collection[Key] = ()) -> str | None:
    """Why attempt ``attempt`` of ``agent`` is not needed (docs/contracts.md §8), or ``None`` (run it):
    ``"reference agent: round 1 only"``, or ``"settled at look L: A vs B (difference), ..."`` when every
    pair involving ``agent`` is settled at a look before ``attempt`` (L: the last of those looks)."""
    if attempt <= 1:
        return None
    spec = dict(agents).get(agent)
    if is_reference_spec(spec):
        return "reference agent: round 1 only"
    mine = [p for p in adaptive_pairs(results, agents, looks=looks, through=attempt - 1, alpha=alpha, margin=margin,
                                      with_p=False, cut=cut)
            if agent in (p.a, p.b)]
    if not mine or not all(p.settled for p in mine):
        return None
    return (f"settled at look {max(p.look for p in mine)}: "
            + ", ".join(f"{p.a} vs {p.b} ({p.why})" for p in mine))


def savings(results: Iterable[Record]) -> dict[str, tuple[int, float | None]]:
    """Per agent: (attempts recorded ``not_needed``, USD they would have cost at the agent's mean recorded
    USD per scored attempt, ``None`` when no scored attempt has a cost)."""
    last = latest(results)
    skipped: dict[str, int] = {}
    costs: dict[str, list[float]] = {}
    for (_t, agent, _n), r in last.items():
        if r.get("outcome") == NOT_NEEDED:
            skipped[agent] = skipped.get(agent, 0) + 1
        elif r.get("outcome") in SCORED_OUTCOMES and r.get("cost_usd") is not None:
            costs.setdefault(agent, []).append(float(r["cost_usd"]))
    return {a: (k, (k * sum(costs[a]) / len(costs[a])) if costs.get(a) else None) for a, k in skipped.items()}


def adaptive_section(results: Iterable[Record], meta: Mapping[str, Any],
                     cut: Collection[Key] = ()) -> dict[str, Any] | None:
    """The report's ``adaptive`` object (docs/contracts.md §10) for a run whose ``meta.json`` has
    ``adaptive`` (``{"looks", "alpha", "margin"}``), else ``None``: ``looks``, ``alpha``, ``margin``
    (fraction), ``pairs`` [:meth:`PairStop.to_dict`] and ``saved`` {agent: {attempts, usd}}; ``cut`` as
    :func:`adaptive_pairs`'s."""
    cfg = meta.get("adaptive")
    if not isinstance(cfg, Mapping):
        return None
    raw = list(results)
    looks, alpha, margin = int(cfg.get("looks", 1)), float(cfg.get("alpha", 0.05)), float(cfg.get("margin", 0.1))
    agents = [(str(a.get("name")), a.get("spec")) for a in meta.get("agents", []) if isinstance(a, Mapping)]
    pairs = adaptive_pairs(raw, agents, looks=looks, alpha=alpha, margin=margin, cut=cut)
    specs = dict(agents)
    return {"looks": looks, "alpha": alpha, "margin": margin, "pairs": [p.to_dict() for p in pairs],
            "saved": {a: {"attempts": k, "usd": usd,
                          **({"cost_reported": COST_REPORTED} if usd is not None and not cost_measured(specs.get(a))
                             else {})}
                      for a, (k, usd) in savings(raw).items()}}


def adaptive_notes(section: Mapping[str, Any] | None) -> list[str]:
    """One note per pair (when and why it stopped, its anytime-valid interval and repeated p) and one for
    what was saved; ``[]`` without ``--adaptive``."""
    if not section:
        return []
    looks = section["looks"]
    out = []
    for p in section["pairs"]:
        if p["ci"] is None:
            out.append(f"adaptive: {p['a']} vs {p['b']}: no attempt pair scored yet")
            continue
        lo, hi = (round(100 * v) for v in p["ci"])
        if str(p["why"]).startswith("no verdict"):
            out.append(f"adaptive: {p['a']} vs {p['b']} at look {p['look']} of {looks}: {p['why']}; as recorded "
                       f"{100 * p['delta']:+.0f} pts over {p['pairs']} attempt pairs")
            continue
        out.append(f"adaptive: {p['a']} vs {p['b']} stopped at look {p['look']} of {looks} ({p['why']}): "
                   f"{100 * p['delta']:+.0f} pts over {p['pairs']} attempt pairs, anytime-valid "
                   f"{100 * (1 - section['alpha']):.0f}% interval [{lo:+d}, {hi:+d}] pts, repeated p={p['p']:.3g} "
                   "(group-sequential, valid after the looks; the fixed-design p of the comparison does not "
                   "account for them)")
    saved = section["saved"]
    if saved:
        parts = [f"{a} {v['attempts']}" + ("" if v["usd"] is None else f" (~{v['usd']:.2f} USD"
                                             + (f", {v['cost_reported']})" if v.get("cost_reported") else ")"))
                 for a, v in saved.items()]
        out.append(f"adaptive: attempts not needed: {', '.join(parts)}")
    return out
