"""The report's answer on top (issue 35): one sentence that the text, Markdown and HTML reports print
under their title, before any table.

    alpha beats bravo by +12 pp pass@1 (62% vs 50%, p=0.003, Holm-adjusted over 10 pairs); reference
    agents as expected (oracle 100%, noop 0%); 100 tasks × 5 attempts; cost known for 5 of 5 agents.

Its parts, in order, each from the :class:`~.model.Report` alone:

* the comparison: the best-ranked agent that is not a reference agent (``oracle``, ``noop``, ``sim:P``:
  :func:`.family.is_reference_spec`) against the next one, with Δ pass@1, both rates, the p the verdict
  uses and the Holm family's size (with ``; NAME incomplete: k of n scored`` for an agent with unscored
  attempts); when that gap is not significant, that no agent is detectably better,
  with the smallest gap the tasks could detect (MDE); with one such agent, its pass@1 and CI; when the
  verdict rests on an agent's claims (``at_their_word``, docs/contracts.md §10) or on solves its twin hits
  may have bought (``twin_hits``), or on solves flagged ``suspicious`` (``flagged``), that there is none; when
  no agent is detectably better and the leader's lead would reverse or tie with its doubtful attempts counted
  as failed (its ``counted_pass_at_1``), no leader, but what the order rests on (:func:`_lead_rests_on`);
* when any graded attempt ran its hidden tests without a sandbox (``test_sandbox`` ``none``: ``--sandbox
  none``, or no sandbox worked on the machine), how many, and that their verdicts can be bought: there
  the tests run as the user, so any agent's code can read the answers (docs/contracts.md §9);
* the reference agents' sanity line: ``oracle`` is expected to solve every task and ``noop`` none
  (``sim:P`` agents have no expected rate and are left out of it); when both are as expected but their
  comparison is not significant (too few tasks: its row says "no detectable difference"), it says so;
  an ``oracle`` whose every miss is at a task whose PASS_TO_PASS id its run found flaky says that instead of
  "check the tasks" (ux67);
* tasks × attempts per task;
* whether cost is known (for how many agents).
"""

from __future__ import annotations

from pytest_homefield.records import SCORED_OUTCOMES
from pytest_homefield.report.family import COST_REPORTED, is_reference_spec, spec_kind
from pytest_homefield.report.fmt import fmt_ci, fmt_p, fmt_pct, fmt_pp
from pytest_homefield.report.model import AgentSummary, ComparisonRow, Report
from pytest_homefield.terminal.progress import plural

__all__ = ["headline", "headline_parts"]

#: What a reference agent's pass@1 should be, by the spec's kind.
_EXPECTED = {"oracle": 1.0, "noop": 0.0}


def _kind(a: AgentSummary) -> str:
    return spec_kind(a.spec)


def _pair(rep: Report, a: str, b: str) -> ComparisonRow | None:
    return next((c for c in rep.comparisons if {c.a, c.b} == {a, b} and c.test is not None), None)


def _comparison(rep: Report) -> str | None:
    """Who beats whom (see the module docstring); ``None`` without any non-reference agent."""
    # a forged agent is not ranked and has no comparison (docs/contracts.md §8)
    ranked = [a for a in rep.agents.values()
              if not is_reference_spec(a.spec) and a.pass_at_1 is not None and not a.forged]
    if not ranked:
        return None
    top = ranked[0]
    if len(ranked) == 1:
        return f"{top.name} solves {fmt_pct(top.pass_at_1)} of tasks (95% CI {fmt_ci(top.pass_at_1_ci)}" \
               f"{_incomplete([top])}); no other agent to compare with"
    nxt = ranked[1]
    c = _pair(rep, top.name, nxt.name)
    if c is None or c.delta is None:
        return f"{top.name} and {nxt.name} share no scored task: not compared"
    p = c.p_value if c.p_adjusted is None else c.p_adjusted
    fam = f", Holm-adjusted over {c.family} pairs" if c.family and c.family > 1 else ""
    rates = f"{fmt_pct(top.pass_at_1)} vs {fmt_pct(nxt.pass_at_1)}{_incomplete([top, nxt])}"
    if c.at_their_word:  # the verdict would change were the claimed retries counted as failed (atk20 F2)
        whose = " and ".join(f"{n}'s" for n in c.at_their_word)
        return (f"No verdict between {top.name} and {nxt.name} ({rates} pass@1): it rests on {whose} word, "
                "claims of rate limits or outages that homefield cannot check")
    if c.twin_hits:  # the verdict would change were the twin hits' possible lucky solves counted as failed (atk22)
        whose = " and ".join(f"{n}'s" for n in c.twin_hits)
        return (f"No verdict between {top.name} and {nxt.name} ({rates} pass@1): it may rest on luck; {whose} code "
                "passed contradicted twins of hidden tests exactly, as code that picks one version of each test "
                "does")
    if c.flagged:  # the verdict would change were the solves flagged suspicious counted as failed (sus60)
        whose = " and ".join(f"{n}'s" for n in c.flagged)
        return (f"No verdict between {top.name} and {nxt.name} ({rates} pass@1): it rests on flagged solves, "
                f"{whose} solves flagged suspicious by a pattern list that decides no count")
    if c.significant:
        beaten = sum(1 for o in ranked[1:] if (x := _pair(rep, top.name, o.name)) is not None and x.significant)
        others = f", and {beaten - 1} more of the {len(ranked) - 1} others" if beaten > 1 else ""
        return f"{top.name} beats {nxt.name} by {fmt_pp(c.delta)} pass@1 ({rates}, p={fmt_p(p)}{fam}){others}"
    mde = "" if c.mde is None else _detectable(c.n_tasks, c.mde)
    if round(100 * c.delta) == 0:  # "leads by 0 pp" read as a lead (more-itertools: every attack at 0%)
        if fmt_pct(top.pass_at_1) == fmt_pct(nxt.pass_at_1) and not (top.incomplete or nxt.incomplete):
            return (f"No agent is detectably better: {top.name} and {nxt.name} tie at {fmt_pct(top.pass_at_1)} "
                    f"pass@1 (p={fmt_p(p)}{fam}){mde}")
        # a tie on the shared tasks between different rates (an agent that stopped itself at its first failure,
        # which left the ranking unscored: xatk31): each rate, and each label, as wherever pass@1 appears
        return (f"No agent is detectably better: {top.name} and {nxt.name} tie on the {c.n_tasks} tasks both "
                f"scored (pass@1 {rates}, p={fmt_p(p)}{fam}){mde}")
    doubts = _lead_rests_on(top, nxt)
    if doubts:  # the lead, not a verdict, would reverse or tie with them counted as failed: name no leader (cnt62)
        return (f"No agent is detectably better, and the order of {top.name} and {nxt.name} ({rates} pass@1, "
                f"p={fmt_p(p)}{fam}) rests on {doubts}: counted as failed, they leave {top.name} at "
                f"{fmt_pct(top.counted_pass_at_1)}{mde}")
    return (f"No agent is detectably better: {top.name} leads {nxt.name} by {fmt_pp(c.delta)} pass@1 "
            f"({rates}, p={fmt_p(p)}{fam}){mde}")


def _lead_rests_on(top: AgentSummary, nxt: AgentSummary) -> str | None:
    """What ``top``'s lead over ``nxt`` rests on, when counting ``top``'s doubtful attempts as failed (its
    ``counted_pass_at_1``: its retries at its word or after an interrupted try, its solves flagged ``suspicious``,
    its twin hits' possible lucky solves, as the report counts them, docs/contracts.md §10) leaves it no more than
    ``nxt``'s pass@1 as recorded (a lead rounding to 0 pp or less: reversed or tied), e.g. ``"alpha's flagged
    solves (3 solves flagged suspicious by a pattern list that decides no count)"``; ``None`` when the lead stands
    (or ``top`` has no doubtful attempt). ``nxt``'s own doubts counted failed only widen the lead. Both rates are
    over the same tasks (the ranking's task set), so their difference is the comparison's Δ."""
    counted, theirs = top.counted_pass_at_1, nxt.pass_at_1
    if counted is None or theirs is None or round(100 * (counted - theirs)) > 0:
        return None
    parts = []
    if top.at_its_word:
        parts.append(f"{top.name}'s retried attempts (tried again after its own claims of a rate limit or an "
                     "outage, which homefield cannot check, or after an interrupted try)")
    if top.flagged_solves:
        parts.append(f"{top.name}'s flagged solves ({plural(top.flagged_solves, 'solve')} flagged suspicious by a "
                     "pattern list that decides no count)")
    if top.twin_hits:
        parts.append(f"{top.name}'s twin hits (its code passed contradicted twins of hidden tests exactly, as code "
                     "that picks one version of each test does)")
    return " and ".join(parts) or None


def _incomplete(agents: list[AgentSummary]) -> str:
    """``'; NAME incomplete: k of n scored'`` for each of ``agents`` with unscored attempts (their pass@1 is
    over the tasks whose attempts are all scored: issue 30 has the label go wherever pass@1 appears), else
    ``''``."""
    return "".join(f"; {a.name} {a.incomplete}" for a in agents if a.incomplete)


def _detectable(n_tasks: int, mde: float) -> str:
    """``'; these 40 tasks detect gaps of about 25 pp'``, or when the minimum detectable effect (a fraction)
    rounds to 100 points or more: ``'; too few tasks (4) to detect any gap: add tasks'``."""
    if round(100 * mde) >= 100:
        return f"; too few tasks ({n_tasks}) to detect any gap: add tasks"
    return f"; these {n_tasks} tasks detect gaps of about {fmt_pp(mde).lstrip('+')}"


def _graded_under(rep: Report, backend: str) -> tuple[str, bool] | None:
    """How many graded attempts ran their test runs under ``backend`` (``'3 of 24 graded attempts'``, or
    ``'every graded attempt'``) and whether that is every one; ``None`` when none did (or the runs do not
    record it)."""
    tests = rep.sandbox.tests if rep.sandbox is not None else {}
    n, total = tests.get(backend, 0), sum(tests.values())
    if not n:
        return None
    return ("every graded attempt" if n == total else f"{n} of {total} graded attempts"), n == total


def _unsandboxed(rep: Report) -> str | None:
    """``'3 of 24 graded attempts ran the hidden tests without a sandbox, where any agent's code can read
    the answers: their verdicts can be bought'``; ``None`` when every graded attempt had one (or the
    runs do not record it)."""
    share = _graded_under(rep, "none")
    if share is None:
        return None
    which, every = share
    return (f"{which} ran the hidden tests without a sandbox, where any agent's code can read the answers: "
            f"{'these verdicts' if every else 'their verdicts'} can be bought")


def _sanity(rep: Report) -> str | None:
    """``reference agents as expected (oracle 100%, noop 0%)`` or what is off; ``None`` without any."""
    refs = [a for a in rep.agents.values() if _kind(a) in _EXPECTED]  # sim:P has no expected rate
    if not refs:
        return None
    seen = ", ".join(f"{a.name} {fmt_pct(a.pass_at_1)}" for a in refs)
    off = [a for a in refs if a.pass_at_1 is not None and abs(a.pass_at_1 - _EXPECTED[_kind(a)]) > 1e-9]
    if not off:
        pair = next((c for a in refs for b in refs if a is not b and (c := _pair(rep, a.name, b.name)) is not None
                     and _kind(a) != _kind(b)), None)
        if pair is not None and not pair.significant:  # its table row says "no detectable difference" (nu21)
            return (f"reference agents as expected ({seen}), though {pair.n_tasks} task"
                    f"{'s are' if pair.n_tasks != 1 else ' is'} too few for even that gap to be significant")
        return f"reference agents as expected ({seen})"
    why = {a.name: w for a in off if (w := _missed_on_flaky(rep, a)) is not None}
    said = [f"{a.name} solves {fmt_pct(a.pass_at_1)}: {why[a.name]}" for a in off if a.name in why]
    rest = [a for a in off if a.name not in why]
    if rest:
        said.append("check the tasks: " + ", ".join(f"{a.name} solves {fmt_pct(a.pass_at_1)}, expected "
                                                    f"{fmt_pct(_EXPECTED[_kind(a)])}" for a in rest))
    return "; ".join(said)


def _missed_on_flaky(rep: Report, a: AgentSummary) -> str | None:
    """``'its one miss is a test this run found flaky (later runs leave it out)'`` when every task an ``oracle``
    agent missed (a scored attempt not solved) is one whose PASS_TO_PASS id this report's runs recorded flaky
    (``rep.found_flaky``), else ``None``. ux67 (usr66 on jd/tenacity): "Check the tasks: oracle solves 96%" over a
    timing test the same run had just recorded in ``.homefield/flaky.jsonl`` sent the user to tasks that were fine."""
    if _kind(a) != "oracle" or not rep.found_flaky:
        return None
    found = {tid for tid, _ in rep.found_flaky}
    missed = [t.id for t in rep.tasks for o in t.attempts.get(a.name, [])
              if o in SCORED_OUTCOMES and o != "solved"]
    if not missed or not set(missed) <= found:
        return None
    if len(missed) == 1:
        return "its one miss is a test this run found flaky (later runs leave it out)"
    return f"its {len(missed)} misses are tests this run found flaky (later runs leave them out)"


def _size(rep: Report) -> str:
    """``100 tasks × 5 attempts`` (a range when agents differ)."""
    ks = [a.attempts_per_task for a in rep.agents.values() if a.attempts_per_task]
    n = len(rep.tasks)
    if not ks:
        return f"{n} task{'s' if n != 1 else ''}, no scored attempt"
    lo, hi = min(k[0] for k in ks), max(k[1] for k in ks)
    att = f"{lo}" if lo == hi else f"{lo}–{hi}"
    return f"{n} task{'s' if n != 1 else ''} × {att} attempt{'s' if hi != 1 else ''}"


def _cost(rep: Report) -> str:
    """``cost known for 3 of 5 agents``, ``no cost data``, ``cost known`` (every agent), with ``(reported by the
    agent)`` when every known cost is the agent's own report, ``(K reported by the agent)`` when some are."""
    agents = list(rep.agents.values())
    known = sum(1 for a in agents if a.cost_usd)
    if not known:
        return "no cost data"
    reported = sum(1 for a in agents if a.cost_usd and a.cost_reported)
    said = "cost known" if known == len(agents) else f"cost known for {known} of {len(agents)} agents"
    if not reported:
        return said
    return said + (f" ({COST_REPORTED})" if reported == known else f" ({reported} {COST_REPORTED})")


def headline_parts(report: Report) -> list[str]:
    """The headline's clauses in order (empty when the report has no attempt yet)."""
    if not report.agents or not any(a.attempts for a in report.agents.values()):
        return []
    return [p for p in (_comparison(report), _unsandboxed(report), _sanity(report),
                        _size(report), _cost(report)) if p]


def headline(report: Report) -> str:
    """The one sentence (``""`` without attempts): :func:`headline_parts` joined by ``; ``, ending in a
    full stop; capitalised unless it starts with an agent's name (kept as it is spelled)."""
    parts = headline_parts(report)
    if not parts:
        return ""
    text = "; ".join(parts)
    if not any(text.startswith(f"{name} ") for name in report.agents):
        text = text[0].upper() + text[1:]
    return text + "."
