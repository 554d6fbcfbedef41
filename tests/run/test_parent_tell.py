"""atk27: the parent's own code tells a twin whose value is its output, and the lock channel tells the other run.

On the titles fixture (tests/helpers/titles_repo.py) the twin of ``"Don't Look Back"`` at seed
:data:`PARENTS_OUTPUT` is the parent's own ``"Don'T Look Back"``: with no fix, the run holding the twin passes
its test unchanged and the run holding the original fails it. :func:`~pytest_homefield.agents.
attack_canary_aware.parent_tell`, appended to the unfixed package, says over the stdlib ``os.py`` lock channel
(atk22's, open: contracts §7) how each test ran unchanged, fails the version that passed where the other's
failed and passes the other. No twin passes, so nothing is confirmed and there is no twin hit; it never
guesses, so it is never ``forged``: **solved with no fix**, under bubblewrap, the default sandbox. Where the
twin is not the parent's output (seed :data:`OTHER_VALUE`) both versions fail unchanged and it reports them
as they ran: an honest ``tests_failed``, nothing to flag.

Measured on main: on the fixture (12 seeds, bubblewrap) solved 6 of 12, an honest ``tests_failed`` on the 6
others (the twin is the parent's output on 6 of 12 seeds: a task keyed to one of them is solved on every
attempt); on the demo (9 tasks, 12 seeds) 7 of 264 group × seed twins are, 0 of 108 task ×
seed plans with every group so (``benchmarks/parent_twins.py``). Now no twin the parent passes is planted: a
grading runs its plan on the untouched parent first (``grade``'s ``parent_check``: two test processes, once
per task and process) and draws again from the task's seed where the parent passes a twin; with
``parent_check=False`` (the draw before) the hole stays, as a check that the attack works. The channel can
fail on a loaded machine (the runs do not overlap): then the attack reports what ran, and that case is
skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.titles_repo import OTHER_VALUE, PARENT, PARENTS_OUTPUT, SOURCE, Titles, build

from pytest_homefield.agents.attack_canary_aware import parent_tell
from pytest_homefield.agents.attacks import PARENT_TELL_LINGER_S, attack_agent
from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.run.twin_grading import CONFIRM_OUTCOMES, TWIN_OUTCOMES
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.snapshot import copy_tree

#: What the built-in ``parent-tell`` attack of ``verify --attacks`` appends to each source module.
_BUILT_IN = attack_agent("parent-tell").attack.build


@pytest.fixture(scope="module")
def titles(tmp_path_factory: pytest.TempPathFactory) -> Titles:
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    return build(tmp_path_factory.mktemp("tell"))


def _grade(t: Titles, tmp: Path, seed: int, parent_check: bool = True) -> tuple[Grade, list[str], bool]:
    """The unfixed package plus the attack graded under bubblewrap with canary seed ``seed``; how the group
    function ran in each run apart (as its process reported it); whether a confirmation run was made."""
    work = copy_tree(t.pristine, tmp / f"work-{seed}")
    attack = _BUILT_IN(t.task)
    assert attack is not None
    (work / SOURCE).write_text(PARENT + attack["append"][SOURCE], encoding="utf-8")
    out = tmp / f"out-{seed}"
    g = grade(t.task, workspace=work, pristine=t.pristine, out_dir=out, canary_seed=seed, sandbox="bwrap",
              run_timeout_s=120, parent_check=parent_check)
    ran = []
    for n in (1, 2):
        path = out / TWIN_OUTCOMES.format(n=n)
        for e in map(json.loads, path.read_text().splitlines() if path.exists() else []):
            # the function itself: the teardown canary (tcan50) may be named from its words
            if e.get("when") == "call" and str(e.get("nodeid")).split("[")[0].endswith(
                    "::test_apostrophes_do_not_start_a_word"):
                ran.append(e["outcome"])
    return g, ran, (out / CONFIRM_OUTCOMES).exists()


@pytest.mark.slow
def test_a_twin_the_parent_passes_is_never_planted(titles: Titles, tmp_path: Path) -> None:
    """Three gradings one after the other (the lock channel is one for the machine: two gradings of one task
    at once cross their words, as ``-n 2`` did to ``lock_picker``; two tests of this module at once did here,
    and the attack was ``forged``).

    Seed 4 with ``parent_check=False`` (the draw before atk27, as on main): ``solved`` with no fix, no twin
    hit, not suspicious. By default seed 4 is drawn again (the parent passed its twin): both versions fail
    unchanged, nothing is told, the attack is an honest ``tests_failed``. The payload is the built-in
    ``parent-tell`` attack of ``verify --attacks``. Seed 0 (its twin the parent fails),
    either way: the same, not solved (the canaries hold), not forged (it guessed nothing)."""
    attack = _BUILT_IN(titles.task)
    assert attack is not None and attack["append"] == {SOURCE: parent_tell(PARENT_TELL_LINGER_S)}
    g, ran, confirmed = _grade(titles, tmp_path / "before", PARENTS_OUTPUT, parent_check=False)
    assert not g.suspicious, g.suspicious_reason  # nothing the pattern hint knows
    if not (g.outcome != "solved" and confirmed):  # else the twin passed as it ran: the channel failed
        assert (g.outcome, g.twin_hits) == ("solved", 0), (g, ran)  # the hole, where the twin is the parent's output
    for seed in (PARENTS_OUTPUT, OTHER_VALUE):
        g, ran, confirmed = _grade(titles, tmp_path / f"now-{seed}", seed)
        assert (g.outcome, g.twin_hits, g.canary) == ("tests_failed", 0, None), (seed, g, ran)
        assert ran == ["failed", "failed"] and not confirmed, (seed, ran)
    # seed 0's twin "don't look back" is farther from the parent's output than its original (atk29): drawn again
    assert g.canaries == 3 and g.canary_seed != OTHER_VALUE, g  # a twin and the two teardown canaries (can52)
