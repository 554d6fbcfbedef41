"""The sealed run of a grading (docs/contracts.md §7 "Sealed sites", issue 30): the expected value never enters
the test process.

:func:`~pytest_homefield.run.grading.grade` plans it (:func:`plan_seals`: the task's sealable sites,
:mod:`~pytest_homefield.sandbox.seal_sites`, less those the reference fix does not pass sealed:
:func:`reference_sealed`), makes it **first**, on a fresh copy of the grading tree made before any other run of
the grading (:func:`sealed_run`: one test process selecting what the other runs select, the hidden test files
whole, holding no hidden data file of the commit, the channel comparing each seal report of a function with sealed
sites with its site's literal on the host), and then lowers what the other runs gave
(:func:`sealed_forged`, :func:`~pytest_homefield.run.twin_grading.merge_rows`): a FAIL_TO_PASS id of a sealed
function counts passed only if pytest passed it there **and** every sealed site of its function reported exactly
once a value equal to the literal. A value unequal while the test passes where the value can be read is
``forged`` (the code behaves differently when the expected value is not visible); an opaque or missing report is
a failure. The run's log tail and events are kept as :data:`SEALED_LOG` and :data:`SEALED_OUTCOMES`. With canaries
(seal56) its files lay out every member of every group side by side as the confirmation run does, a group with
sealed sites once, sealed (:func:`~pytest_homefield.sandbox.seal_apart.sealed_together`): it shows nothing of which
member of a group is the original (gatk52), nor which run apart holds it (seal54 held one run apart's files, drawn
from the plan's seed, :func:`sealed_pick`: each run apart learnt whether it was that run; kept as the fallback where
the members cannot be laid side by side).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pytest_homefield.errors import PatchError
from pytest_homefield.records import Task
from pytest_homefield.run.twin_grading import (
    TWIN_LOG_BYTES,
    _fresh_copy,
    _tail,
    cached_sites,
    files_digest,
    reference_copy,
    reference_key,
    run_completes,
    selecting,
)
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.backends import SandboxBackend
from pytest_homefield.sandbox.canaries import function_id
from pytest_homefield.sandbox.outcomes import SealScope
from pytest_homefield.sandbox.seal_apart import sealed_in_run, sealed_together, unchecked_files
from pytest_homefield.sandbox.seal_sites import (
    SEAL_RULES,
    SealSite,
    item_reports,
    passing_sites,
    row_reports,
    sealable_sites,
    sealed_files,
    withheld_data,
)
from pytest_homefield.sandbox.tempdirs import scratch
from pytest_homefield.sandbox.testrun import LOG_FILE, OUTCOMES_FILE, TestRun, pytest_setup, run_tests
from pytest_homefield.sandbox.twin_runs import TwinPlan, parent_tests

__all__ = ["SEALED_LOG", "SEALED_OUTCOMES", "SealPlan", "SealChecked", "plan_seals", "sealed_pick", "sealed_run",
           "judge_sealed", "sealed_forged", "reference_laid", "reference_sealed", "sealed_ids"]

#: The sealed run's log tail and counted events, in the attempt's folder.
SEALED_LOG = "sealed.log"
SEALED_OUTCOMES = "sealed.outcomes.jsonl"


@dataclass
class SealPlan:
    """A sealed run's plan: ``files`` (test file → its sealed bytes, a withheld data file's empty ones) and ``ids``
    (site id → :class:`SealSite`); ``withheld``: the hidden data files it holds empty
    (:func:`~pytest_homefield.sandbox.seal_sites.withheld_data`)."""

    files: dict[str, bytes]
    ids: dict[str, SealSite]
    withheld: frozenset[str] = frozenset()
    #: seal56: the function ids of the group members its files lay side by side
    #: (:func:`~pytest_homefield.sandbox.seal_apart.sealed_together`), softened as the confirmation run's are
    members: tuple[str, ...] = ()

    @property
    def functions(self) -> list[str]:
        """The function ids with a sealed site (a judged one: no cover, hole41), sorted."""
        return sorted({s.function for s in self.ids.values() if not s.cover})

    def expected(self) -> dict[str, Any]:
        """Site id → its literal's value, or the :class:`~pytest_homefield.sandbox.seal_kinds.SealCheck` of a site
        of another kind (:meth:`SealSite.expectation`): what the host judges the seal reports with."""
        return {sid: s.expectation() for sid, s in self.ids.items()}

    @property
    def columns(self) -> dict[str, list[str]]:
        """Function id → the site ids of its sealed parametrize column's rows (col35, ``SealSite.decorated``): judged
        by function, since the sealed run's ids of its items hold the rows' site ids, not the original ids (loop38: and
        its loops' rows, each reported once by every item there). A loop or assigned table's rows in another function
        are not here: its items keep their ids, so they are judged per id with its plain sites (each FAIL_TO_PASS id
        reporting each row once: a function run once per item of a parametrized fixture reported each row once per
        item, "reported twice" in all, and was never sealed)."""
        tables = {s.function for s in self.ids.values() if s.decorated}
        out: dict[str, list[str]] = {}
        for sid, s in self.ids.items():
            if s.function in tables and not s.cover:
                out.setdefault(s.function, []).append(sid)
        return out


def plan_seals(root: Path, task: Task, parent: Mapping[str, bytes | None],
               keep: Collection[str] | None = None, *, rootdir: str | None = ".",
               apart: TwinPlan | None = None, lost: set[str] | None = None
               ) -> SealPlan | None:
    """The sealed run of ``task``'s sealable sites in ``root`` (a tree with the hidden tests applied; ``parent``:
    :func:`~pytest_homefield.sandbox.twin_runs.parent_tests` of the task's test files), only those whose key is in
    ``keep`` when given; ``None`` when there is none. ``rootdir``: pytest's rootdir for the task's whole run in
    ``root``, the ids' paths relative to it (seal47: :func:`~pytest_homefield.sandbox.seal_sites.sealable_sites`).
    ``apart`` (seal54, seal56, a grading with canaries): the twin plan, whose runs apart's files
    (:attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.runs`), ``layouts``, ``seed`` and ``unprotected`` functions
    (sealed whatever their twins, alt56) the sealed run's files are made of: the sealed run's files lay
    out every member of every group side by side, a group with sealed sites once, sealed
    (:func:`~pytest_homefield.sandbox.seal_apart.sealed_together`; its ``members`` in :attr:`SealPlan.members`), less
    the sites of the functions the runs tell apart once sealed
    (:func:`~pytest_homefield.sandbox.seal_apart.told_apart`, and the covers of those alone); where the members
    cannot be laid side by side, the files of the run drawn by :func:`sealed_pick` with the sites sealed in them
    (seal54). No file of it shows what tells a group's original from its twin, nor which run apart holds it.
    ``lost`` (a set, filled in place): the function ids whose sites this plan leaves unsealed because the runs apart
    tell them apart once sealed (their twins guard them; the grading's ``canaries.json`` ``unsealed``, rev58), also
    when that leaves no site and the plan is ``None``.
    ``OSError``/``ValueError`` as :func:`~pytest_homefield.sandbox.seal_sites.sealed_files` raises them."""
    sites = sealable_sites(root, task.test_files, task.FAIL_TO_PASS, parent, rootdir)
    members: tuple[str, ...] = ()
    if keep is not None:  # hole41: a cover with a site it covers
        sites = [s for s in sites if (s.key in keep if not s.cover else any(k in keep for k in s.covering))]
    read: dict[str, tuple[str, str]] = {}  # each test file read once, by sealed_files, for every round here
    while True:
        if not any(not s.cover for s in sites):
            return None
        files, ids = sealed_files(root, sites, task.test_files, read)
        if apart is None:
            break
        runs, seed = apart.runs, apart.seed
        texts = {p: read[p] for p in sorted({s.path for s in ids.values()})}
        told, laid = sealed_together(texts, ids, runs, apart.layouts, seed, apart.unprotected)
        if laid is not None:
            files, members = laid
            break
        if not told:  # seal56: the members cannot be laid side by side: one run apart's files, drawn (seal54)
            told, placed = sealed_in_run(texts, ids, runs, sealed_pick(seed, len(runs)))
            if placed is not None:
                files = placed
                break
        if lost is not None:
            lost |= told
        kept = {s.key for s in sites if not s.cover and s.function not in told}
        sites = [s for s in sites if (s.key in kept if not s.cover else any(k in kept for k in s.covering))]
    if apart is not None:  # gatk57: no teardown check a teardown twin contradicts (its original told the runs apart)
        files = unchecked_files(files)
    # gatk35: no hidden data file of the commit in the run (its values are whatever a decoder makes of it)
    withheld = withheld_data(root, task.test_files, parent)
    return SealPlan({**withheld, **files}, ids, frozenset(withheld), members)


def sealed_pick(seed: int, runs: int) -> int:
    """The run apart (from 0, in :attr:`~pytest_homefield.sandbox.twin_runs.TwinPlan.runs`' order) whose files the
    sealed run holds (seal54): drawn uniformly from the plan's seed alone, apart from the planner's and the plain
    run's draws (:func:`~pytest_homefield.sandbox.twin_runs.plain_pick`)."""
    return random.Random(f"{seed}:sealed").randrange(max(1, runs))


def sealed_ids(fail_to_pass: Sequence[str], functions: Collection[str]) -> list[str]:
    """The ids of ``fail_to_pass`` whose function is one of ``functions``."""
    fs = set(functions)
    return [i for i in fail_to_pass if function_id(i) in fs]


class SealChecked(NamedTuple):
    """What a sealed run found. ``outcomes``: each FAIL_TO_PASS id of a sealed function → ``"passed"`` (pytest
    passed it and each of its function's sites reported exactly once an equal value), else its outcome there or
    ``"failed"`` (``"error"`` when not reported or the run did not complete); ``unequal``: id → the key of a site
    it reported unequal; ``missing``: id → why it did not pass for its seals (a site unreported, reported twice, or
    opaque); ``timeouts``: ids pytest-timeout failed, or every one when the run hit its timeout; ``run``: the
    test run."""

    outcomes: dict[str, str]
    unequal: dict[str, str]
    missing: dict[str, str]
    timeouts: set[str]
    run: TestRun
    #: the ids of ``outcomes`` judged by their function's sealed column (col35): ``unequal`` names the first row
    #: unequal for each, forged only when the other runs passed every id of that function
    columns: frozenset[str] = frozenset()


def _why_not(got: Sequence[str]) -> str:
    """Why a site's reports ``got`` (verdicts) do not pass it: none, or the first that is not ``equal``."""
    bad = [v for v in got if v != "equal"]
    if not got or not bad:
        return "not reported" if not got else "reported twice"
    return {"opaque": "no value to compare (opaque)",
            "loose": "a value unequal to the expected one, converted by its own protocol"}.get(
        bad[0], "a value unequal to the expected one")


def judge_sealed(plan: SealPlan, fail_to_pass: Sequence[str], made: TestRun) -> SealChecked:
    """:class:`SealChecked` of the sealed run ``made`` of ``plan``. With a data file withheld (``plan.withheld``) a
    value unequal is a failure, never ``forged``: the run's inputs were not the other runs' but for the expected
    value (a fixture reading the file may have set up what a real fix's value depends on, where the reference
    fix's does not), so the difference cannot be put down to the value's visibility (gatk35)."""
    whole = run_completes(made)
    columns = plan.columns
    by_fn: dict[str, list[str]] = {}
    for sid, s in plan.ids.items():
        if s.function not in columns and not s.cover:  # hole41: a cover is never judged
            by_fn.setdefault(s.function, []).append(sid)
    outcomes: dict[str, str] = {}
    unequal: dict[str, str] = {}
    missing: dict[str, str] = {}
    for i in sealed_ids(fail_to_pass, by_fn):
        reports = made.seal_reports.get(i, {})
        for sid in by_fn[function_id(i)]:
            got = reports.get(sid, [])
            if "unequal" in got and i not in unequal and not plan.withheld:
                unequal[i] = plan.ids[sid].key
            # a plain site may be reported more than once, each equal (r40's CI: a retry wrapper's softened first
            # attempt reaches it, then its retry; a real fix of soft40's retried test was tests_failed); a loop's row
            # exactly once per id (loop38: twice in one id and none in another fails both)
            once = plan.ids[sid].column is not None
            if (got != ["equal"] if once else not got or any(v != "equal" for v in got)) and i not in missing:
                missing[i] = f"{plan.ids[sid].key}: " + _why_not(got) + (
                    " (the run held no hidden data file)" if plan.withheld and "unequal" in got else "")
        said = made.outcomes.get(i, "error") if whole else "error"
        outcomes[i] = said if said != "passed" else "failed" if i in missing else "passed"
    timeouts = set(outcomes) if made.timed_out else {i for i in outcomes if i in made.test_timeouts}
    judged = _judge_columns(plan, columns, fail_to_pass, made, whole)
    for i, (said, key, why, late) in judged.items():
        outcomes[i] = said
        if key is not None:
            unequal[i] = key
        if why is not None:
            missing[i] = why
        if late or made.timed_out:
            timeouts.add(i)
    return SealChecked(outcomes, unequal, missing, timeouts, made, frozenset(judged))


def _judge_columns(plan: SealPlan, columns: Mapping[str, Sequence[str]], fail_to_pass: Sequence[str],
                   made: TestRun, whole: bool) -> dict[str, tuple[str, str | None, str | None, bool]]:
    """Each FAIL_TO_PASS id of a function with a sealed column (``columns``: function → its rows' site ids) → (its
    outcome in the sealed run ``made``, the key of the first row reported unequal or ``None``, why it did not pass
    for its seals or ``None``, whether an item of the function hit pytest-timeout). Judged by function (col35): the
    sealed run's ids of its items are not the original ids; ``"passed"`` only when pytest passed every item of the
    function there (:func:`~pytest_homefield.sandbox.seal_sites.column_passed`) and each row was reported exactly
    once in all, equal (:func:`~pytest_homefield.sandbox.seal_sites.row_reports`; loop38: a loop's row once by every
    item, :func:`~pytest_homefield.sandbox.seal_sites.item_reports`); else its worst item's outcome,
    ``"failed"`` for a seal that did not pass, ``"error"`` when no item ran or the run did not complete."""
    out: dict[str, tuple[str, str | None, str | None, bool]] = {}
    for fn, sids in sorted(columns.items()):
        items = {i: o for i, o in made.outcomes.items() if function_id(i) == fn}
        key = why = None
        for sid in sorted(sids, key=lambda x: plan.ids[x].row or 0):
            # loop38: a loop's row beside the sealed column is reported once by every item of the function
            each = item_reports(sid, fn, made.outcomes, made.seal_reports) if not plan.ids[sid].decorated \
                else [tuple(row_reports(sid, made.seal_reports))]
            for got in each:
                if "unequal" in got and key is None:
                    key = plan.ids[sid].key
                if list(got) != ["equal"] and why is None:
                    why = f"{plan.ids[sid].key}: " + _why_not(got)
        bad = [o for o in items.values() if o != "passed"]
        if not whole or not items or "error" in bad:
            said = "error"
        elif bad:
            said = "failed" if "failed" in bad else bad[0]
        else:
            said = "failed" if why is not None else "passed"
        late = any(i in made.test_timeouts for i in items)
        for i in sealed_ids(fail_to_pass, [fn]):
            out[i] = (said, key, why, late)
    return out


def sealed_run(plan: SealPlan, fail_to_pass: Sequence[str], gdir: Path, tmp: Path, test_cmd: str, out_dir: Path,
               targets: Sequence[str], *, groups: Sequence[str] | None = None, judged: Collection[str] | None = None,
               **run: Any) -> SealChecked:
    """The sealed run (module docstring): one test process on a fresh copy of ``gdir``
    (:func:`~pytest_homefield.run.twin_grading._fresh_copy`) holding ``plan.files``, selecting ``targets`` (what the
    grading's other runs select, the hidden test files whole: gatk35, a test sees the state the tests before it
    leave as in every other run; ``plan.functions`` alone left out what a real fix's value relied on, and it was
    ``forged``), its channel comparing the seal reports with ``plan.expected()`` as they arrive; its log tail and
    events kept in
    ``out_dir`` as :data:`SEALED_LOG` and :data:`SEALED_OUTCOMES`. ``run``: :func:`run_tests`'s options. Made by
    :func:`~pytest_homefield.run.grading.grade` before any other run of the change, so that nothing a run with the
    expected values in its files leaves behind reaches it. Raises :class:`ServiceError` as :func:`run_tests`
    does. ``groups`` (seal54: a plan made with the runs apart's files, :func:`plan_seals`' ``apart``): the plan's
    group functions (:meth:`~pytest_homefield.sandbox.twin_runs.TwinPlan.selectors`); the run's files are then
    softened as a run apart's are, ``plan.members`` named too (seal56: it holds twins, every member of a group side
    by side as the confirmation run: unsoftened, a failed twin left the state its body resets, and the next test of
    a real fix failed there, r40's CI), else written as they are. A run with ``groups`` or ``plan.members`` holds
    canaries and drops the configuration's ``-k``/``-m``/``--deselect`` (:func:`~.twin_grading.selecting`, mark58);
    one with neither keeps them (ops60), as every run holding no canary. ``judged``: the keys of the sites judged
    (gatk58: those the reference fix passes in these very files, :func:`reference_laid`); ``None``: every site."""
    folder = _fresh_copy(gdir, tmp, plan.files, soft=groups is not None, targets=targets, test_cmd=test_cmd,
                         tests=[*(groups or ()), *plan.members], setup=run.get("setup"))
    into = tmp / "sealed-out"
    try:
        columns = plan.columns
        tests = {i: [sid for sid, s in plan.ids.items() if s.function == function_id(i) and not s.cover]
                 for i in sealed_ids(fail_to_pass, [f for f in plan.functions if f not in columns])}
        repeats = {sid: 2 * s.items for sid, s in plan.ids.items() if s.items}  # loop38: once per item
        # with canaries its members are laid side by side under drawn names, selected with the whole files: the
        # configuration's -k and -m dropped, as in every run holding canaries (mark58); holding none (no plan's
        # groups, no members: canaries off, the reference's check) it keeps them, as mining's runs deciding the
        # FAIL_TO_PASS ids (ops60: a user's addopts = -m "not slow" ran the slow tests here, and only here)
        made = run_tests(folder, test_cmd, list(targets), out_dir=into,
                         seals=SealScope(plan.expected(), tests, columns, repeats),
                         **(selecting(run) if groups is not None or plan.members else run))
    finally:
        nofollow.remove_tree(folder.parent)
    for name, source in ((SEALED_LOG, LOG_FILE), (SEALED_OUTCOMES, OUTCOMES_FILE)):
        with contextlib.suppress(OSError):
            nofollow.write_bytes(out_dir, name, _tail(into / source, TWIN_LOG_BYTES))
    if judged is not None:
        plan = dataclasses.replace(plan, ids={sid: site for sid, site in plan.ids.items()
                                              if site.key in judged or site.cover})  # a cover is never judged
    return judge_sealed(plan, fail_to_pass, made)


def sealed_forged(checked: SealChecked, merged: Mapping[str, str]) -> tuple[str, str] | None:
    """``(sealed:<site key>, one-line error)`` of the first id that reported a value unequal to its site's literal
    in the sealed run while ``merged`` (the other runs, where the value is in the test file) passed it, else
    ``None``."""
    for i, key in sorted(checked.unequal.items()):
        # a column's row is no one id: every id of its function passed in the other runs
        alike = [j for j in merged if function_id(j) == function_id(i)] if i in checked.columns else [i]
        if merged.get(i) == "passed" and all(merged.get(j) == "passed" for j in alike):
            return (f"sealed:{key}", f"{i} passed where its expected value was in the test file, but at the sealed "
                                     f"site {key} (the expected value in no file of the run) its value differed")
    return None


#: What :func:`reference_laid` found per task, files and selection, for this process.
_LAID_SEEN: dict[str, frozenset[str]] = {}


def reference_laid(task: Task, pristine: Path, plan: SealPlan, test_cmd: str, targets: Sequence[str], *,
                   sandbox: str | SandboxBackend, groups: Sequence[str] | None = None, store: Path | None = None,
                   beside: Path | None = None, **run: Any) -> frozenset[str] | None:
    """The keys of ``plan``'s sites the **reference fix** passes in ``plan``'s own files (:func:`sealed_run` of the
    same plan, ``groups`` and ``targets`` on ``pristine`` plus ``gold_patch`` and ``test_patch``; nothing of the
    agent's). With canaries the sealed run's files are not the hidden tests mining and :func:`reference_sealed` ran
    sealed: they lay every member of a group side by side (seal56), or hold one run apart's (seal54), so a sealed
    test reading what the tests before it left (a registry each member of an earlier group appends to) gives
    another value there with any code (gatk58: "2 items" for the literal "1 item", and a real fix was ``forged``,
    seeds 0 and 1). A site the reference fix does not pass there is not judged in that grading. ``None`` when the
    check could not be made (a patch does not apply, the run did not complete): every site is judged then, as
    before. Once per task, files and selection: remembered for this process, and with ``store`` for later ones
    (a line ``{"key", "sealed_sites"}``). ``beside``: the grading tree, whose targets the reference tree lacks (the
    plan's sentinel modules beside a FAIL_TO_PASS file that is not Python, ``canaries._sentinel_module``) are copied
    from it, never through a link (missing, pytest found no file there and the check passed no site). ``run``:
    :func:`run_tests`'s options. Raises :class:`ServiceError` as :func:`run_tests` does."""
    name = sandbox if isinstance(sandbox, str) else sandbox.name
    key = reference_key(task, pristine, store, test_cmd, name, sorted(targets), files_digest(plan.files),
                        sorted(groups or ()), list(plan.members), sorted(plan.ids))

    def make() -> frozenset[str] | None:
        with scratch(suffix="seallaid-") as tmp:
            try:
                ref = reference_copy(task, pristine, Path(tmp) / "w", beside=beside, targets=targets)
            except (PatchError, OSError):
                return None
            checked = sealed_run(plan, task.FAIL_TO_PASS, ref, Path(tmp), test_cmd, Path(tmp) / "out", targets,
                                 groups=groups, sandbox=sandbox, **run)
            if not run_completes(checked.run):
                return None
            return frozenset(passing_sites(plan.ids, task.FAIL_TO_PASS, checked.run.outcomes,
                                           checked.run.seal_reports))
    return cached_sites(_LAID_SEEN, store, f"sealed-laid-{SEAL_RULES}", "sealed_sites", key, make)


#: What :func:`reference_sealed` found per task key, for this process.
_SEALED_SEEN: dict[str, frozenset[str]] = {}


def reference_sealed(task: Task, pristine: Path, test_cmd: str, *, sandbox: str | SandboxBackend,
                     targets: Sequence[str], store: Path | None = None, **run: Any) -> frozenset[str] | None:
    """The keys of ``task``'s sealable sites the reference fix passes sealed: its sealed run (:func:`sealed_run` on
    ``pristine`` plus ``gold_patch`` and ``test_patch``, in a scratch folder) passed every FAIL_TO_PASS id of the
    site's function and each reported the site exactly once with a value equal to the literal. A site it fails,
    or reports opaque, is not sealed. Empty when there is no sealable site; ``None`` when the check could not be
    made (a patch does not apply, the run did not complete): nothing is sealed then. Once per task: remembered for
    this process, and with ``store`` (``.homefield/parent-checks.jsonl``) for later ones (a line ``{"key",
    "sealed_sites"}``). ``run``: :func:`run_tests`'s options. Raises :class:`ServiceError` as :func:`run_tests`
    does."""
    name = sandbox if isinstance(sandbox, str) else sandbox.name
    key = reference_key(task, pristine, store, test_cmd, name, sorted(targets))

    def make() -> frozenset[str] | None:
        with scratch(suffix="sealcheck-") as tmp:
            try:
                ref = reference_copy(task, pristine, Path(tmp) / "w")
                # pytest's setup for the whole run of the hidden tests: its rootdir the one the ids are relative to
                # (seal47), as grading reads them; the sealed run's pin
                whole = pytest_setup(ref, test_cmd, [], targets, run.get("env"))
                plan = plan_seals(ref, task, parent_tests(pristine, task.test_files), rootdir=whole.rootdir)
            except (PatchError, OSError, ValueError):
                return None
            if plan is None:
                return frozenset()
            checked = sealed_run(plan, task.FAIL_TO_PASS, ref, Path(tmp), test_cmd, Path(tmp) / "out", targets,
                                 sandbox=sandbox, **{**run, "setup": whole})
            if not run_completes(checked.run):
                return None
            return frozenset(passing_sites(plan.ids, task.FAIL_TO_PASS, checked.run.outcomes,
                                           checked.run.seal_reports))
    return cached_sites(_SEALED_SEEN, store, f"sealed-{SEAL_RULES}", "sealed_sites", key, make)
