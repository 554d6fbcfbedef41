"""Why a scored attempt failed, in two kinds a reader acts on differently (issue 35): it *broke existing
tests* (PASS_TO_PASS ids failed, or its change crashed the test process) or it *did not fix* the task
(the hidden FAIL_TO_PASS tests failed and nothing that passed before broke).

Read from the result record: ``regression`` (FAIL_TO_PASS passed, PASS_TO_PASS broke); ``tests_failed``
whose ``error`` grading wrote with ``; K/M PASS_TO_PASS broke`` or as a test process that did not finish
with the change (:func:`pytest_homefield.run.grading.grade`). Other outcomes (timeouts, agent errors,
empty patches, forged) are their own words in the report and get no kind here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pytest_homefield.records import Result

__all__ = ["BROKE", "DID_NOT_FIX", "KIND_WORDS", "failure_kind", "failure_kinds", "kinds_line"]

BROKE = "broke_existing_tests"
DID_NOT_FIX = "did_not_fix"
#: Each kind as the report writes it.
KIND_WORDS = {DID_NOT_FIX: "did not fix", BROKE: "broke existing tests"}

#: What grading writes into a ``tests_failed`` error when the change broke more than the task's tests.
_BROKE_MARKS = ("PASS_TO_PASS broke", "the test process did not finish with this change")


def failure_kind(r: Result) -> str | None:
    """:data:`BROKE`, :data:`DID_NOT_FIX` or ``None`` (solved, or failed another way) for one attempt."""
    if r.outcome == "regression":
        return BROKE
    if r.outcome != "tests_failed":
        return None
    return BROKE if any(m in (r.error or "") for m in _BROKE_MARKS) else DID_NOT_FIX


def failure_kinds(results: Iterable[Result]) -> dict[str, int]:
    """``{kind: attempts}`` over ``results`` in :data:`KIND_WORDS` order, zeros left out."""
    counts = Counter(k for k in map(failure_kind, results) if k)
    return {k: counts[k] for k in KIND_WORDS if counts[k]}


def kinds_line(kinds: dict[str, int]) -> str:
    """``did not fix 3 · broke existing tests 2`` from an agent's ``failure_kinds``."""
    return " · ".join(f"{KIND_WORDS.get(k, k)} {n}" for k, n in kinds.items())
