"""The originals run of a grading (docs/contracts.md §7 "The originals run", gatk37): the hidden test files whole,
every test as the commit wrote it, no twin, no sentinel, no sealed site -- what a user running the tests sees.

Each run apart (:mod:`~pytest_homefield.sandbox.twin_runs`) holds one member of every group, drawn per group; with
two groups or more a seed often lays every run with a twin of some group (two groups: half the seeds), and with a
real fix a twin fails. A test process can tell that a test failed before (pytest's ``Session.testsfailed``, its
reports, a body that stopped short), which no test does on the commit's own tests with a real fix: code that fixes a
FAIL_TO_PASS test only once a test failed before it in its process, or breaks a PASS_TO_PASS test unless one did
(the id then passes in one run apart and fails after a twin in the other, which ``TwinPlan.merge`` excuses), was
``solved`` on those seeds with the bug not fixed, never ``forged``. A plan whose runs apart hold no run free of every
twin and sentinel (:func:`originals_due`, a property of the plan, not of what the runs showed) is therefore judged by
one more run, made after the runs apart on a fresh copy of the grading tree, that selects the hidden test files
alone: each FAIL_TO_PASS and checked PASS_TO_PASS id takes the worse of its outcome there and its outcome apart
(:func:`originals_run`). It only lowers (after every canary verdict): a process telling it from the runs apart gains
nothing, since what passes it is what passes on the commit's own tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pytest_homefield.run.twin_grading import TWIN_LOG_BYTES, _fresh_copy, _tail, run_completes
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.canaries import function_id
from pytest_homefield.sandbox.testrun import LOG_FILE, OUTCOMES_FILE, TestRun, pytest_setup, run_tests
from pytest_homefield.sandbox.twin_runs import TwinPlan

__all__ = ["ORIGINALS_LOG", "ORIGINALS_OUTCOMES", "CONFINED", "OriginalsChecked", "originals_due", "originals_run",
           "after_twins_only"]

#: The originals run's log tail and events, in the attempt's folder (when one was made).
ORIGINALS_LOG = "originals.log"
ORIGINALS_OUTCOMES = "originals.outcomes.jsonl"
#: The test sandboxes that keep a run's copy read-only (``sandbox/testrun.py``): only when every run apart had one
#: may the originals run pass an id the runs apart failed (:func:`after_twins_only`): unconfined, a process there
#: could write the grading tree the originals run copies.
CONFINED = ("bwrap", "landlock")


class OriginalsChecked(NamedTuple):
    """What the originals run found: ``outcomes`` (each id asked → its outcome there; ``"error"`` when not
    reported, or for every id when the run did not finish or was stopped) and the ``run`` itself."""

    outcomes: dict[str, str]
    run: TestRun


def originals_due(plan: TwinPlan | None) -> bool:
    """Whether ``plan``'s runs apart hold no run free of twins and sentinels: every run holds a twin of some group
    (no run whose every group is laid as its original), or the plan has a sentinel (in every run). ``False``
    without a plan or a group (one group: the run holding its original holds no twin)."""
    if plan is None or not plan.canaries:
        return False
    if any(c.kind == "sentinel" for c in plan.canaries):
        return True
    if not plan.placement:
        return False
    return not any(all(members[r] == 0 for members in plan.placement.values()) for r in range(len(plan.runs)))


def originals_run(gdir: Path, tmp: Path, test_cmd: str, targets: Sequence[str], out_dir: Path,
                  ids: Sequence[str], **run: Any) -> OriginalsChecked:
    """One test process on a fresh copy of ``gdir`` (the grading tree: the carried change and the hidden tests,
    no twin) selecting ``targets`` (the hidden test files alone); its log tail and events kept in ``out_dir`` as
    :data:`ORIGINALS_LOG` and :data:`ORIGINALS_OUTCOMES`. ``ids``: what to read from it. ``run``:
    :func:`~pytest_homefield.sandbox.testrun.run_tests`'s options. Raises ``ServiceError`` as it does."""
    setup = pytest_setup(gdir, test_cmd, targets, env=run.get("env"))  # read once, for its files and its pin (twin43)
    folder = _fresh_copy(gdir, tmp, {}, targets=targets, test_cmd=test_cmd,  # softened as the runs apart (twin37)
                         setup=setup)
    into = tmp / "originals-out"
    try:
        made = run_tests(folder, test_cmd, list(targets), out_dir=into, setup=setup, **run)
    finally:
        nofollow.remove_tree(folder.parent)
    for name, source in ((ORIGINALS_LOG, LOG_FILE), (ORIGINALS_OUTCOMES, OUTCOMES_FILE)):
        with contextlib.suppress(OSError):
            nofollow.write_bytes(out_dir, name, _tail(into / source, TWIN_LOG_BYTES))
    done = run_completes(made) and not (made.over_writes or made.over_events)
    return OriginalsChecked({i: made.outcomes.get(i, "error") if done else "error" for i in ids}, made)


def after_twins_only(plan: TwinPlan | None, made: Sequence[TestRun], ids: Collection[str]) -> list[str]:
    """The ids of ``ids`` reported in a run of ``made`` (the runs apart, in ``plan``'s order) that did not pass
    there only after a failed twin: in each run where one did not pass, a twin instance that did not pass was
    reported before it (in the order its process reported). A twin stops at its contradicted site, so what the rest
    of its body undoes (a module setting put back) stays for every later test of its process; with a twin in every
    run apart such an id failed everywhere, and ``TwinPlan.merge`` (which excuses it where it passed in another run)
    left it ``regression`` for a real fix (gatk36, not closed). The originals run, free of twins, decides it then,
    when every run apart was :data:`CONFINED`. Empty without a plan."""
    if plan is None:
        return []
    want = set(ids)
    seen: set[str] = set()
    blamed: set[str] = set()  # failed at least once with no failed twin before it
    for r, run in enumerate(made):
        after = False
        blind = plan.blinded(r)
        for t, o in run.outcomes.items():
            tid = plan.home(t)
            source = function_id(tid)
            if source in blind:  # ut64: its class's tearDown contradicted there
                continue
            j = plan.placement[source][r] if source in plan.placement and tid not in plan.kept.get(source, ()) else 0
            if j:
                after = after or o != "passed"
                continue
            if tid in want:
                seen.add(tid)
                if o != "passed" and not after:
                    blamed.add(tid)
    return sorted(seen - blamed)
