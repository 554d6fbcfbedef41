"""atk27: a twin whose contradicted value is the parent's own output is no twin hit (contracts §7, §8).

A twin that keeps its value's relation to the call's input (``sandbox/canary_io.py``: the input's words
recased) can be exactly what the parent's code returns: ``str.title()`` makes ``"don't look back"``
``"Don'T Look Back"``, the bug the commit fixes, and on half the seeds the twin of ``"Don't Look Back"``
is that text. Every change that leaves the parent's behaviour there (a comment, a fix of another part of
the task) fails the original and passes that twin, apart and in the confirmation run alike, so it was a
confirmed **twin hit**, and the report counts two solves of the agent as failed per attempt with one
(``report/picks.py``): honest agents paid for the planner's draw. On the demo's titlecase task
(091319e41154, 12 seeds) 7 of 12 attempts changing only a comment had a hit, 6 of 12 fixing only its
small words. Now a grading checks its plan on the untouched parent before the agent's runs and draws again
where the parent passes a twin (``parent_check``, the default: no such twin is planted, which also closes
``parent_tell``, tests/run/test_parent_tell.py); and a confirmed hit is checked against the parent too: the
same confirmation files on the untouched parent with the hidden tests (no code of the agent's); a twin the
parent passes there beside its failing original is the parent's output, not a pick, and counts for nothing
(the tests of it grade with ``parent_check=False``, the draw before atk27). A wrong value the parent does
not give is still a hit.

Real git, real pytest, real gradings (``grade`` with a fixed canary seed: seed 4's twin is the parent's
``"Don'T Look Back"``, seed 0's ``"don't look back"``). Checked on main: the comment-only change at seed 4
had ``twin_hits == 1``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from helpers.titles_repo import F2P, OTHER_VALUE, P2P, PARENT, PARENTS_OUTPUT, SOURCE, TEST, TESTS, Titles, build

from pytest_homefield.records import Result
from pytest_homefield.run import twin_grading
from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.run.twin_grading import (
    CANARIES_FILE,
    CONFIRM_OUTCOMES,
    CONFIRM_PARENT_OUTCOMES,
    PARENT_TRIES,
    ParentSeen,
    parent_checked_seed,
)
from pytest_homefield.sandbox.canaries import Canary
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.snapshot import copy_tree
from pytest_homefield.sandbox.twin_runs import TwinPlan, plan_twins
from pytest_homefield.view.attempt_page import render_attempt
from pytest_homefield.view.common import Nav
from pytest_homefield.view.data import AttemptRef

#: a real fix that is not the reference's bytes (the reference fix gets no canaries at all)
OTHER_FIX = "def titlecase(s):\n    return ' '.join(w[:1].upper() + w[1:].lower() for w in s.split(' '))\n"
#: an honest change that leaves the parent's behaviour: the parent's output, and a twin that is it
COMMENT_ONLY = "# TODO: words after an apostrophe\n" + PARENT
#: honest wrong code giving a contradicted value the parent does not give (seed 0's twin)
LOWER = "def titlecase(s):\n    return s.lower()\n"


@pytest.fixture(scope="module")
def titles(tmp_path_factory: pytest.TempPathFactory) -> Titles:
    return build(tmp_path_factory.mktemp("titles"))


def _calls(path: Path) -> dict[str, str]:
    """The call outcomes of a run's events; of a confirmation run's, its members' (it runs the hidden test files
    whole, gatk35: ``test_plain_words``, no member, left out)."""
    return {e["nodeid"]: e["outcome"] for e in map(json.loads, path.read_text().splitlines())
            if e.get("event") == "phase" and e.get("when") == "call"
            and not e["nodeid"].endswith("::test_plain_words")}


def _grade(t: Titles, tmp: Path, text: str, seed: int, parent_check: bool = False,
           store: Path | None = None) -> tuple[Grade, Path]:
    """``text`` as the agent's ``titlecase`` graded with canary seed ``seed``; without ``parent_check`` the
    seed's twin is planted whatever the parent does with it (the draw a grading made before atk27). ``store``:
    the ``parent_checks`` file (``.homefield/parent-checks.jsonl``)."""
    work = copy_tree(t.pristine, tmp / f"work-{seed}")
    (work / SOURCE).write_text(text, encoding="utf-8")
    out = tmp / f"out-{seed}"
    return grade(t.task, workspace=work, pristine=t.pristine, out_dir=out, canary_seed=seed, run_timeout_s=120,
                 parent_check=parent_check, parent_checks=store), out


def test_the_seeds_draw_what_the_tests_say(titles: Titles, tmp_path: Path) -> None:
    root = copy_tree(titles.pristine, tmp_path / "g")
    (root / TEST).write_text(TESTS)
    hows = {seed: [c.how for c in plan_twins(root, F2P, seed=seed, parent={TEST: None}, pass_to_pass=P2P,
                                             parent_text=ParentText(titles.pristine)).canaries]
            for seed in (PARENTS_OUTPUT, OTHER_VALUE)}
    assert hows[PARENTS_OUTPUT] == ['expected "Don\'t Look Back" -> "Don\'T Look Back" (the input\'s words, '
                                    'recased or reseparated)'], hows
    assert hows[OTHER_VALUE] == ['expected "Don\'t Look Back" -> "don\'t look back" (the input\'s words, '
                                 'recased or reseparated)'], hows


@pytest.fixture(scope="module")
def comment_only(titles: Titles, tmp_path_factory: pytest.TempPathFactory) -> tuple[Grade, Path, Path]:
    """:data:`COMMENT_ONLY` graded at seed 4 (the parent's output as the twin) with a store of its own and nothing
    in this process's memory of the parent's runs: (grade, output folder, store). Shared by the two tests that
    read it (each graded it on its own: 4 test processes more); the store is read only, a test that adds to it
    copies it."""
    tmp = tmp_path_factory.mktemp("comment-only")
    store = tmp / ".homefield" / "parent-checks.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(twin_grading, "_PARENT_GIVES", {})
        g, out = _grade(titles, tmp, COMMENT_ONLY, PARENTS_OUTPUT, store=store)
    return g, out, store


@pytest.mark.slow
def test_the_parents_own_output_is_no_twin_hit(titles: Titles, comment_only: tuple[Grade, Path, Path]) -> None:
    """On main: ``tests_failed`` with ``twin_hits == 1`` (two of the agent's solves counted as failed)."""
    g, out, _ = comment_only
    assert (g.outcome, g.canary) == ("tests_failed", None), g
    assert (out / CONFIRM_OUTCOMES).exists()  # the twin passed beside its failing original, and was confirmed
    assert g.twin_hits == 0, g
    parent = _calls(out / CONFIRM_PARENT_OUTCOMES)  # the same files on the parent: it passed the twin too
    assert sorted(parent.values()) == ["failed", "passed"], parent
    r = Result(run_id="r", task_id=titles.task.id, agent="a", attempt=1, outcome=g.outcome, error=g.error)
    page = render_attempt(AttemptRef(r, out, {}), titles.task, None, Nav("../index.html"))[0]
    # the members' 1 failed and 1 passed, and test_plain_words (the files run whole there, gatk35)
    assert "confirmation run on the untouched parent: 1 failed, 2 passed" in page, page


@pytest.mark.slow
def test_the_parents_run_of_the_confirmation_files_is_made_once_per_repository(
        titles: Titles, comment_only: tuple[Grade, Path, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With the repository's store (``.homefield/parent-checks.jsonl``, as every attempt of a session grades)
    the parent's run of the confirmation files is kept there: another process (this one with its memory
    emptied, on another copy of the parent) runs it no more, and gets the same ids, log and events, so the
    same grade and the same artifacts. On main every session and every xdist worker ran it again (one test
    process each per task). A store line of another shape is passed over."""
    first, out1, made = comment_only  # graded with an empty memory and the store
    assert (first.outcome, first.twin_hits) == ("tests_failed", 0), first
    store = tmp_path / ".homefield" / "parent-checks.jsonl"
    store.parent.mkdir()
    shutil.copyfile(made, store)
    kept = [json.loads(line) for line in store.read_text().splitlines() if "gives" in json.loads(line)]
    assert len(kept) == 1 and len(kept[0]["gives"]) == 1 and kept[0]["gives"][0].startswith(F2P[0]), kept
    monkeypatch.setattr(twin_grading, "_PARENT_GIVES", {})  # another process: nothing in memory
    moved = dataclasses.replace(titles, pristine=copy_tree(titles.pristine, tmp_path / "other-pristine"))
    again, out2 = _grade(moved, tmp_path / "again", COMMENT_ONLY, PARENTS_OUTPUT, store=store)
    assert (again.outcome, again.twin_hits, again.canary) == (first.outcome, first.twin_hits, first.canary), again
    assert store.read_text().count('"gives"') == 1  # read, not run again (a run made would be appended)
    for name in (CONFIRM_PARENT_OUTCOMES, "confirm-parent.log"):
        assert (out2 / name).read_bytes() == (out1 / name).read_bytes(), name
    assert sorted(_calls(out2 / CONFIRM_PARENT_OUTCOMES).values()) == ["failed", "passed"]
    # a line of another shape (ids not texts, a log that is not base64) is passed over
    line = kept[0]  # the parent's run's line (gatk58's sealed-run reference checks append lines of their own after it)
    assert twin_grading._stored_gives(store, line["key"]) is not None
    for bad in ({"gives": [1]}, {"log": "not base64!"}):
        store.write_text(json.dumps({**line, **bad}) + "\n")
        assert twin_grading._stored_gives(store, line["key"]) is None, bad


@pytest.mark.slow
def test_a_value_the_parent_does_not_give_is_still_a_hit(titles: Titles, tmp_path: Path) -> None:
    """``s.lower()`` gives seed 0's twin, which the parent's ``"Don'T Look Back"`` fails: a hit, as before."""
    g, out = _grade(titles, tmp_path, LOWER, OTHER_VALUE)
    assert (g.outcome, g.canary, g.twin_hits) == ("tests_failed", None, 1), g
    assert sorted(_calls(out / CONFIRM_PARENT_OUTCOMES).values()) == ["failed", "failed"]


@pytest.mark.slow
def test_no_twin_passed_no_parent_run(titles: Titles, tmp_path: Path) -> None:
    g, out = _grade(titles, tmp_path, COMMENT_ONLY, OTHER_VALUE)
    assert (g.outcome, g.twin_hits) == ("tests_failed", 0), g
    assert not (out / CONFIRM_OUTCOMES).exists() and not (out / CONFIRM_PARENT_OUTCOMES).exists()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [PARENTS_OUTPUT, OTHER_VALUE])
@pytest.mark.parametrize("parent_check", [True, False])
def test_a_real_fix_is_solved(titles: Titles, tmp_path: Path, seed: int, parent_check: bool) -> None:
    g, _ = _grade(titles, tmp_path, OTHER_FIX, seed, parent_check)
    assert (g.outcome, g.twin_hits, g.canary) == ("solved", 0, None), g


@pytest.mark.slow
def test_no_twin_the_parent_passes_is_planted(titles: Titles, tmp_path: Path) -> None:
    """By default a grading checks its plan on the untouched parent first (two test processes, once per task
    and process) and draws again from the task's seed where the parent passes a twin: seed 4's
    ``"Don'T Look Back"`` is never planted, so nothing passes unchanged and there is nothing to excuse. Seed
    0's plan, which the parent fails but whose twin ``"don't look back"`` is farther from the parent's output
    than its original (atk29's nearness), is drawn again: a twin as near the parent's value as the original."""
    g, out = _grade(titles, tmp_path, COMMENT_ONLY, PARENTS_OUTPUT, parent_check=True)
    assert (g.outcome, g.twin_hits, g.canary) == ("tests_failed", 0, None), g
    assert g.canary_seed != PARENTS_OUTPUT
    planted = json.loads((out / CANARIES_FILE).read_text())
    assert planted["seed"] == g.canary_seed and "-> \"Don'T Look Back\"" not in planted["canaries"][0]["how"], planted
    assert not (out / CONFIRM_OUTCOMES).exists()
    kept, out = _grade(titles, tmp_path / "kept", COMMENT_ONLY, OTHER_VALUE, parent_check=True)
    assert kept.canary_seed != OTHER_VALUE, kept
    planted = json.loads((out / CANARIES_FILE).read_text())
    assert "(as near the parent's" in planted["canaries"][0]["how"], planted


def _seen(told: set[str] | None) -> ParentSeen | None:
    """A :func:`parent_told` answer telling ``told`` (``None``: no check made), its originals stopping nowhere."""
    return None if told is None else ParentSeen(told, {})


def test_the_parent_check_draws_again_and_remembers(titles: Titles) -> None:
    """:func:`parent_checked_seed` over plans of one contradiction twin: the task's seed, then seeds derived from
    it until the parent passes no twin; every try told: the first with the fewest (the task's own here); a
    check that cannot be made: the task's seed. A check made is remembered (asked again, nothing runs); one
    that could not be made is made again. A try whose plan has the members of one checked before is not run."""
    def plan_for(s: int, stops: Mapping[str, int], near: Mapping[str, tuple[str, str, str]]) -> TwinPlan:
        return TwinPlan(seed=s, canaries=[Canary(f"{F2P[0]}@twin1", F2P[0], "contradiction", f"expected x -> {s}")])

    def checker(answers: list[set[str] | None]) -> tuple[list[int], Callable[[TwinPlan], ParentSeen | None]]:
        asked: list[int] = []

        def told(plan: TwinPlan) -> ParentSeen | None:
            asked.append(plan.seed)
            return _seen(answers[min(len(asked), len(answers)) - 1])
        return asked, told

    for name, answers, tries, pick in (("clean-third", [{F2P[0]}, {F2P[0]}, set()], 3, 2),
                                       ("all-told", [{F2P[0]}], PARENT_TRIES, 0), ("no-check", [None], 1, 0)):
        task = dataclasses.replace(titles.task, id=f"atk27-{name}")
        asked, told = checker(answers)
        seed, plan = parent_checked_seed(task, 5, plan_for, told, "pytest")
        assert len(asked) == tries and asked[0] == 5 and len(set(asked)) == tries, (name, asked)
        assert seed == asked[pick] and plan.seed == seed, (name, seed, asked)
        again = parent_checked_seed(task, 5, plan_for, told, "pytest")
        assert again[0] == seed and again[1].seed == seed, name
        assert len(asked) == (tries + 1 if name == "no-check" else tries), (name, asked)
    # every try drawing the same members (one variant keeps the relation to the input): asked once, not 8 times
    asked, told = checker([{F2P[0]}])
    seed, plan = parent_checked_seed(dataclasses.replace(titles.task, id="atk28-same"), 5,
                                     lambda s, stops, near: dataclasses.replace(plan_for(0, stops, near), seed=s),
                                     told, "pytest")
    assert asked == [5] and seed == 5, asked


def test_a_parent_check_made_once_serves_every_process_of_the_repository(titles: Titles, tmp_path: Path) -> None:
    """The check is kept in ``.homefield/parent-checks.jsonl`` (``store``): another process (here: this one with
    its memory emptied) asks nothing and plants the same seed, also for a check whose every try was told (the
    fewest: try 0). A check that could not be made is not kept; a line naming no try of 0-7 is passed over; and
    another canary seed (a new ``canary.key``) is another key. On main every xdist worker and every session
    checked every task again: 2 test processes each, 15% of the suite's CPU."""
    def plan_for(s: int, stops: Mapping[str, int], near: Mapping[str, tuple[str, str, str]]) -> TwinPlan:
        return TwinPlan(seed=s, canaries=[Canary(f"{F2P[0]}@twin1", F2P[0], "contradiction", f"expected x -> {s}")])

    store = tmp_path / ".homefield" / "parent-checks.jsonl"
    for name, answers, made in (("third", [{F2P[0]}, {F2P[0]}, set()], True), ("all-told", [{F2P[0]}], True),
                                ("no-check", [None], False)):
        task = dataclasses.replace(titles.task, id=f"atk27-store-{name}")
        asked: list[int] = []

        def told(plan: TwinPlan, answers: list[set[str] | None] = answers,
                 asked: list[int] = asked) -> ParentSeen | None:
            asked.append(plan.seed)
            return _seen(answers[min(len(asked), len(answers)) - 1])

        seed, _ = parent_checked_seed(task, 7, plan_for, told, "pytest", store)
        first = len(asked)
        twin_grading._PARENT_SEEDS.clear()  # another process: nothing remembered but the file
        again, plan = parent_checked_seed(task, 7, plan_for, told, "pytest", store)
        assert (again, plan.seed) == (seed, seed), name
        assert len(asked) == (first if made else 2 * first), (name, asked)
        twin_grading._PARENT_SEEDS.clear()
        before = len(asked)
        parent_checked_seed(task, 8, plan_for, told, "pytest", store)
        assert asked[before] == 8, (name, asked)  # another seed: checked anew
    lines = [json.loads(x) for x in store.read_text().splitlines()]
    # third, all-told: seeds 7 and 8
    assert len(lines) == 4 and all(set(x) == {"key", "try", "stops", "told", "near", "farther"} for x in lines), lines
    assert [x["try"] for x in lines[:2]] == [2, 0], lines
    # the function every try told (atk29): listed unprotected in the plan used, also when read back
    assert [x["told"] for x in lines] == [[], [], [F2P[0]], [F2P[0]]], lines  # third: 7, 8; all-told: 7, 8
    twin_grading._PARENT_SEEDS.clear()
    all_told = dataclasses.replace(titles.task, id="atk27-store-all-told")
    read_back = parent_checked_seed(all_told, 7, plan_for, lambda p: pytest.fail("checked again"), "pytest", store)[1]
    # exc35: and as told in canaries.json, which mining's unprotected never holds (it makes no parent check)
    assert (read_back.unprotected, read_back.to_dict()["told"]) == ([F2P[0]], [F2P[0]])
    with store.open("a") as fh:  # a line naming no try is passed over: the one before it stands
        fh.write(json.dumps({"key": lines[0]["key"], "try": 99}) + "\n")
    twin_grading._PARENT_SEEDS.clear()
    task = dataclasses.replace(titles.task, id="atk27-store-third")
    assert parent_checked_seed(task, 7, plan_for, lambda p: pytest.fail("checked again"), "pytest", store)[0] \
        == twin_grading._try_seed(7, 2)

    # another planner (an older or newer homefield drawing another first plan for the same task and seed): its
    # check stands not on this one's, it is made anew (before r26 the stored try, stops and told of the old
    # planner's plans were applied to the new planner's)
    def other_planner(s: int, stops: Mapping[str, int], near: Mapping[str, tuple[str, str, str]]) -> TwinPlan:
        return TwinPlan(seed=s, canaries=[Canary(f"{F2P[0]}@twin1", F2P[0], "contradiction", f"expected y -> {s}")])

    twin_grading._PARENT_SEEDS.clear()
    asked = []
    assert parent_checked_seed(task, 7, other_planner, lambda p: asked.append(p.seed) or _seen(set()), "pytest",
                               store)[0] == 7 and asked == [7]


@pytest.mark.parametrize("seed, told", [(PARENTS_OUTPUT, {F2P[0].split("[")[0]}), (OTHER_VALUE, {F2P[0]})])
def test_the_parent_check_is_one_test_process(titles: Titles, tmp_path: Path, seed: int, told: set[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`parent_told` runs the plan's twins beside their originals in one test process on the parent (the
    confirmation run's files): the parent's own code has no forger to keep apart, and one process is half the
    plan's two runs. It tells seed 4's twin (``"Don'T Look Back"``, the parent's output) and seed 0's
    (``"don't look back"``: by nearness alone, atk29, :attr:`ParentSeen.farther`)."""
    root = copy_tree(titles.pristine, tmp_path / "g")
    (root / TEST).write_text(TESTS)
    plan = plan_twins(root, F2P, seed=seed, parent={TEST: None}, pass_to_pass=P2P,
                      parent_text=ParentText(titles.pristine))
    runs: list[list[str]] = []
    real = twin_grading.run_tests

    def counted(workdir: Path, test_cmd: str, targets: Sequence[str], **kw: Any) -> Any:
        runs.append(list(targets))
        return real(workdir, test_cmd, targets, **kw)

    monkeypatch.setattr(twin_grading, "run_tests", counted)  # the real runs, counted
    found = twin_grading.parent_told(titles.task, titles.pristine, plan, titles.task.test_cmd, [TEST], timeout_s=120,
                                     test_timeout_s=None, sandbox="none", env=None, network=None)
    assert found is not None and found.told == told, found
    assert found.farther == (told if seed == OTHER_VALUE else set()), found  # the parent's passing is no nearness
    assert found.near == {F2P[0]: ("==", repr("Don'T Look Back"), repr("Don't Look Back"))}, found
    assert len(runs) == 1, runs


@pytest.mark.slow
def test_the_parent_checks_runs_are_test_time_not_the_hosts(titles: Titles, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """nu54, jquast/wcwidth: an attempt's first grading of a task checked its plan with test runs on the untouched
    parent (up to :data:`PARENT_TRIES`), whose seconds were in no ``test_s``: they fell into the attempt's ``host_s``
    ("homefield's copies, diff, clean-up"), 75–85 s of it, and the report's host p95 read 55 s for the oracle. Now
    the grade counts them (``checked_s``) in ``test_s``; a check remembered costs nothing."""
    monkeypatch.setattr(twin_grading, "_PARENT_SEEDS", {})  # another process: nothing checked yet
    monkeypatch.setattr(twin_grading, "_PARENT_GIVES", {})
    g, _ = _grade(titles, tmp_path / "cold", OTHER_FIX, PARENTS_OUTPUT, parent_check=True)
    assert g.outcome == "solved" and g.canary_seed != PARENTS_OUTPUT, g  # the parent told seed 4's twin: checked
    assert g.checked_s > 0.05 and g.test_s > g.checked_s, g
    warm, _ = _grade(titles, tmp_path / "warm", OTHER_FIX, PARENTS_OUTPUT, parent_check=True)
    assert (warm.canary_seed, warm.checked_s) == (g.canary_seed, 0.0), warm
