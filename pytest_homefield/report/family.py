"""Which comparisons are hypotheses and which are sanity checks: the Holm family (issue 32).

A report compares every pair of agents, but not every pair is a question the user asks. The reference
agents -- ``oracle`` (applies the real fix), ``noop`` (changes nothing) and ``sim:P`` (the real fix with
probability P) -- bound the comparisons: they check the tasks and the harness, they are not candidates.
Putting their pairs into the Holm family only inflates it (in the demo, sim-0.5 vs noop at p = 0.016
became "no detectable difference after Holm" because the oracle pairs were in the family).

So the **family** is the pairs of two non-reference agents; Holm's step-down (:func:`.stats.holm`) runs
over them alone and every adjusted p carries the family size. A pair with a reference agent is a
**sanity check**: decided by its own p, never adjusted, and labelled so (:meth:`.stats.Comparison.as_sanity_check`).
No pytest, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pytest_homefield.records import split_agent_name
from pytest_homefield.report.stats import Comparison, holm

__all__ = ["COST_REPORTED", "MEASURED_COST_KINDS", "REFERENCE_KINDS", "adjust_family", "cost_measured",
           "is_reference_spec", "spec_kind"]

#: The agent kinds whose capabilities are ``modelless`` (:mod:`pytest_homefield.agents.reference`:
#: ``oracle``, ``noop``, ``sim:P``); ``tests/report/test_family.py`` keeps this in step with
#: ``pytest_homefield.agents.registry.KINDS`` (not imported here: it loads every agent kind).
REFERENCE_KINDS: frozenset[str] = frozenset({"oracle", "noop", "sim"})


def spec_kind(spec: str | None) -> str:
    """The kind of the agent spec ``spec`` (``NAME=KIND:ARG``, ``KIND:ARG`` or ``KIND``) as
    :func:`pytest_homefield.agents.registry.parse_spec` reads it (:func:`~pytest_homefield.records.split_agent_name`:
    a leading ``NAME=`` only when its ``=`` comes before the first ``:``; ratk54: ``cmd:python agent.py
    --context=oracle`` was read as ``oracle``); ``""`` for ``None``."""
    return split_agent_name(str(spec or ""))[1].partition(":")[0]


def is_reference_spec(spec: str | None) -> bool:
    """Whether the agent spec ``spec`` (``NAME=KIND:ARG`` or ``KIND:ARG``, :func:`spec_kind`) is of a reference
    kind; ``False`` for ``None`` (an agent seen only in results)."""
    return spec_kind(spec) in REFERENCE_KINDS


#: The agent kinds whose cost homefield measures itself (docs/contracts.md §8 ``cost_usd``): the reference
#: agents (no model: ``0`` by construction). Every other cost is the agent's own report: a ``cmd:`` agent's
#: usage line, claude's ``result`` line (the CLI's stdout, which any process it starts can write), a recipe's
#: client output, and an ``openai:`` server's ``usage`` counts, which homefield's client prices from
#: ``.homefield.yml`` but cannot check (the server is the model under test: ratk54, a server saying it used no
#: tokens was first of every tie on cost per solved).
MEASURED_COST_KINDS: frozenset[str] = REFERENCE_KINDS

#: The label of a cost homefield did not measure, wherever it is shown (docs/contracts.md §10).
COST_REPORTED = "reported by the agent"


def cost_measured(spec: str | None) -> bool:
    """Whether homefield measures the cost of the agent ``spec`` itself (:data:`MEASURED_COST_KINDS`);
    ``False`` for ``None`` (an agent seen only in results). A cost that is not measured is shown labelled
    :data:`COST_REPORTED` and never decides an order (atk23: a ``cmd:`` agent claiming $0 won the ranking's
    cost tie-break)."""
    return spec_kind(spec) in MEASURED_COST_KINDS


def adjust_family(comparisons: Sequence[Comparison], references: Collection[str]) -> list[Comparison]:
    """``comparisons`` in their order, each Holm-adjusted over the family (the pairs where neither agent
    is in ``references``, the names of the reference agents; :meth:`.stats.Comparison.with_p_adjusted`
    with ``family`` = its size) or marked a sanity check (:meth:`.stats.Comparison.as_sanity_check`).

    Known value (issue 32): of the demo's six pairs (oracle, A, B, C) with p(A, C) = 2/1024 and
    p(B, C) = 2/128, Holm over the three pairs without oracle gives B vs C an adjusted
    ``max(3 * 2/1024, 2 * 2/128) = 0.031`` (``tests/report/test_family.py``).
    """
    refs = set(references)
    in_family = [i for i, c in enumerate(comparisons) if c.a not in refs and c.b not in refs]
    adjusted = holm([comparisons[i].p_value for i in in_family])
    out = [c.as_sanity_check() for c in comparisons]
    for i, p in zip(in_family, adjusted, strict=True):
        out[i] = comparisons[i].with_p_adjusted(p, family=len(in_family))
    return out
