"""Grading an attempt on a clean copy (docs/contracts.md §7).

After the agent stops, its change is the set of files that differ between its workspace and the
pristine parent tree kept outside the workspace (never the agent's ``.git``). A fresh copy of the
pristine tree receives the agent's changes to non-test files only; then the task's hidden tests
(``test_patch``) are applied, and the FAIL_TO_PASS and PASS_TO_PASS ids decide the outcome. What of the
agent's change is carried is :mod:`pytest_homefield.run.carried`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.errors import PatchError
from pytest_homefield.paths import runnable_tests
from pytest_homefield.pins import make_folder
from pytest_homefield.records import Task
from pytest_homefield.run.carried import (
    carried_changes,
    config_above,
    setup_moved,
    setup_toggles,
)
from pytest_homefield.run.changes import apply_change, capped_diff, render_diff, tree_changes
from pytest_homefield.run.hang_bound import grading_bound
from pytest_homefield.run.originals_run import (
    CONFINED,
    OriginalsChecked,
    after_twins_only,
    originals_due,
    originals_run,
)
from pytest_homefield.run.sealed_grading import (
    SealChecked,
    SealPlan,
    plan_seals,
    reference_laid,
    reference_sealed,
    sealed_forged,
    sealed_ids,
    sealed_run,
)
from pytest_homefield.run.suspicious import SUSPICIOUS_PATTERNS, added_text, is_suspicious, suspicious_reasons
from pytest_homefield.run.twin_grading import (
    CANARIES_FILE,
    EXCUSED_FILE,
    Confirmed,
    ParentSeen,
    apart_runs,
    canary_verdict,
    cleared_swaps,
    confirm_excused,
    excused_note,
    merge_rows,
    merge_runs,
    needs_reference_check,
    parent_checked_seed,
    parent_told,
    plain_checked,
    plain_due,
    reference_due,
    reference_passes,
    reference_plain,
    reference_reported,
    rows_apart_ids,
    rows_files,
    rows_run,
    run_completes,
    twin_options,
    unreported_verdict,
)
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.backends import SandboxBackend
from pytest_homefield.sandbox.canaries import function_id
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.limits import TEST_MEMORY_MB, TEST_WRITE_MB, task_memory_mb
from pytest_homefield.sandbox.pytest_config import Setup, setup_for
from pytest_homefield.sandbox.seal_sites import SEAL_RULES, sealable_sites, withheld_data
from pytest_homefield.sandbox.services import ServiceError, TestNetwork
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree
from pytest_homefield.sandbox.tempdirs import scratch
from pytest_homefield.sandbox.testrun import TestRun, command_python, pytest_setup, pytest_words, run_tests
from pytest_homefield.sandbox.twin_runs import TwinPlan, parent_tests, plan_twins

__all__ = ["Grade", "setup_moves", "tree_changes", "render_diff", "SUSPICIOUS_PATTERNS", "added_text", "is_suspicious",
           "suspicious_reasons", "grade", "control_sound", "parent_hangs", "SPOILED_PRISTINE"]

#: The error (after ``hidden tests: ``) of an attempt whose graded code changed the pristine snapshot of the task's
#: parent, which the host builds its control runs from (``--sandbox none``: the test processes run as the user);
#: the owner of the snapshot's digest finds it after grading (:func:`~pytest_homefield.run.attempt.run_attempt`).
SPOILED_PRISTINE = ("the test process changed the pristine snapshot of the parent the host grades against "
                    "(rebuilt from the host's own pack of the parent tree)")

@dataclass
class Grade:
    """Outcome of grading: ``outcome`` (docs/contracts.md §8), ``touched_tests``, ``suspicious``,
    ``suspicious_reason`` (the reasons of :func:`suspicious_reasons`, ``"; "``-joined),
    ``carried``/``dropped`` paths, ``test_s`` (seconds of the test run), ``error`` (one line), and
    the per-id ``failing`` lists; ``test_sandbox`` the backend that wrapped the hidden tests (``None``
    when they did not run); ``canary``: the id of the first canary that passed (outcome ``forged``; ``sealed:<site
    key>`` for a value the sealed run found unequal, docs/contracts.md §7 "Sealed sites"),
    ``canaries``: how many canaries were planted, ``canary_seed``: their seed; ``twin_hits``: how many
    excusable twin instances passed beside their failing originals and were confirmed (the change gave
    exactly a contradicted value; docs/contracts.md §10), 0 for a ``forged`` attempt; ``checked_s``: seconds of the
    untouched parent's test runs that checked the canary plan (:func:`~.twin_grading.parent_checked_seed`; 0 when
    remembered), counted in ``test_s`` (nu54: they were in the attempt's ``host_s``, "homefield's copies, diff,
    clean-up", 75–85 s of it on jquast/wcwidth's first gradings of a task)."""

    outcome: str
    touched_tests: bool = False
    suspicious: bool = False
    suspicious_reason: str | None = None
    carried: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    test_s: float = 0.0
    error: str | None = None
    failing_f2p: list[str] = field(default_factory=list)
    failing_p2p: list[str] = field(default_factory=list)
    test_sandbox: str | None = None
    canary: str | None = None
    canaries: int = 0
    canary_seed: int | None = None
    twin_hits: int = 0
    checked_s: float = 0.0


def parent_hangs(task: Task) -> bool:
    """Whether mining saw ``task``'s parent hang where the commit's tests finish (``verify.parent_bound``,
    docs/contracts.md §6): a commit that fixes a hang."""
    return isinstance(task.verify, dict) and bool(task.verify.get("parent_bound"))


def control_sound(task: Task, ctl: TestRun, *, reported: bool = False) -> bool:
    """Whether the control run ``ctl`` (the untouched parent with the hidden tests, made when the graded
    change's test process did not finish or reported nothing) shows the environment sound, so that the
    attempt is the change's fault (``tests_failed``, scored) rather than ``infra``. The environment is
    judged, not the parent's code, whose bug is the task's: sound when the run finished (``reported``:
    and reported a test outcome or a collection error); when it was stopped at its bound, only for a
    task whose parent hangs (:func:`parent_hangs`: what mining saw); when it died on the way (a signal,
    ``os._exit``), once it had reported a test outcome: the tests ran there, and the parent's own code
    ended the run, a crash the commit fixes (mining keeps such a task: the test it died in is a
    FAIL_TO_PASS ``error``). Without the last two every failed attempt of such a task whose change also
    ended the test process (``os._exit`` at import, the reporter silenced, or an honest fix that still
    crashes) was ``infra``: never scored (atk30)."""
    if run_completes(ctl):
        return not reported or bool(ctl.outcomes) or ctl.collection_error
    if ctl.timed_out:
        return parent_hangs(task)
    return bool(ctl.outcomes)


def _control_said(ctl: TestRun, done: str = "it does on the untouched parent with the hidden tests") -> str:
    """What a sound control run (:func:`control_sound`) showed, for a grade's ``error``: ``done`` when it
    finished, else that the untouched parent hung as mining saw it (stopped at the task's bound) or that its
    own code ended the run after its tests ran."""
    if run_completes(ctl):
        return done
    if ctl.timed_out:
        return "the untouched parent with the hidden tests hangs there as mined (stopped at the task's bound)"
    return (f"the untouched parent with the hidden tests ran them and ended on the way too "
            f"({ctl.error or 'no finish event'}): its own code stops there")


_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


def _same_file(one: Path, other: Path, rel: str) -> bool:
    """Whether ``rel`` is a regular file of the same bytes in the trees ``one`` and ``other``
    (:func:`nofollow.same_entry`, the execute bit aside: the reference copy is made without it), or absent from both;
    read without following a link: a link, a folder, anything else is never the same."""
    kinds = nofollow.kind_at(one, rel), nofollow.kind_at(other, rel)
    return kinds == (None, None) or kinds == ("file", "file") and nofollow.same_entry(one, other, rel, mode=False)


def is_reference_fix(task: Task, pristine: Path, gdir: Path, carried: Collection[str], *,
                     test_globs: Sequence[str] = (), python: str | None = None, command: str | None = None,
                     workspace: Path | None = None, moved: Collection[str] = ()) -> bool:
    """Whether the grading copy ``gdir`` (``pristine`` plus the ``carried`` changes) holds exactly what grading makes
    of ``task.gold_patch`` applied to ``pristine``: the same changed paths, byte for byte, no link among them.
    Such a change needs no canary run (docs/contracts.md §7): mining checked that the reference fix
    fails every twin, and the verdict is the reference fix's whatever the twins show. The check copies
    only the patch's files (from ``pristine``) into a scratch folder and applies the patch there; a
    patch whose paths it cannot read (quoted, with spaces) or that does not apply is not the reference.
    What grading would carry of the reference fix is asked of the one rule,
    :func:`~pytest_homefield.run.carried.carried_changes` (``test_globs``, ``python`` and ``command``: the
    grading's; ``command`` ``None``: ``task.test_cmd``): a path it drops is the parent's in the reference fix's
    grading copy too, and is compared with ``pristine``. Before one rule there were lists of exceptions, each
    found by an oracle attempt graded with twins: ``tox.ini`` (nu54, jquast/wcwidth: 75 to 85 s of homefield's
    time besides 21 to 40 s of tests), a ``setup.cfg`` pytest section (nub60, python-semver's 5b8bb16cbd12: 20.1 s
    against 0.8 to 3.0 s for the other 19 tasks' oracle attempts), and the files a ``uv run`` command reads as its
    configuration (ref60: ``[tool.uv]``, ``uv.toml``, its env files and runner script were compared as the
    reference fix's while grading held them back). ``moved``: the changes grading carried and then held back as
    they moved pytest's setup (:func:`setup_moves`, gatk48), read in the agent's ``workspace``: when each is a path
    of the patch holding the reference fix's own bytes there (absent alike), the copies before the move were the
    same, so is the move, and they are the parent's in both copies (else none is: not the reference, unless the
    rest says so)."""
    if not task.gold_patch.strip():
        return False
    headers = _DIFF_HEADER.findall(task.gold_patch)
    if not headers or task.gold_patch.count("diff --git ") != len(headers):
        return False
    paths = sorted({p for pair in headers for p in pair})
    if not set(carried) <= set(paths):
        return False
    with scratch(suffix="ref-") as tmp:
        ref = Path(tmp)
        for rel in paths:
            src = pristine / rel
            if os.path.islink(src):
                return False
            if src.is_file():
                (ref / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, ref / rel)
        try:
            apply_patch(ref, task.gold_patch)
        except PatchError:
            return False
        # the reference fix's changes as tree_changes names them (a path in the patch both before and after, whose
        # bytes the patch left alone, e.g. a mode change, is "modified" and compared: equal bytes)
        changes = {rel: ("added" if not os.path.lexists(pristine / rel) else
                         "deleted" if not os.path.lexists(ref / rel) else "modified") for rel in paths}
        held = set(carried_changes(changes, task, pristine, ref, test_globs, python,
                                   task.test_cmd if command is None else command)[1])
        if moved and workspace is not None and all(rel in changes and _same_file(workspace, ref, rel) for rel in moved):
            held |= set(moved)
        # gdir holds the agent's bytes: read no-follow, as the moves above
        return all(_same_file(gdir, pristine if rel in held else ref, rel) for rel in paths)


def _sealed_first(task: Task, pristine: Path, gdir: Path, tmp: Path, test_cmd: str, out_dir: Path,
                  store: Path | None, targets: Sequence[str], hidden: Sequence[str], whole: Setup, *,
                  apart: TwinPlan | None = None, lost: set[str] | None = None, **run: Any) -> SealChecked | None:
    """The sealed run of a grading (:mod:`~pytest_homefield.run.sealed_grading`): the task's sealable sites in
    ``gdir`` that the reference fix passes sealed (the task's ``sealed_sites`` from mining when it recorded them
    under the current rules, ``sealed_rules`` :data:`~.seal_sites.SEAL_RULES`, and ``gdir`` holds no hidden data
    file, else :func:`reference_sealed`, once per task; ``store``: where it is remembered), run on a fresh copy of
    ``gdir``;
    ``None`` when there is no such site (or the reference fix's check could not be made; a task with no sealable
    site in ``gdir`` has no reference check either: the hidden test files are the reference's). A site the
    reference passes that cannot be sealed in ``gdir`` (its files unreadable there) gives ``error`` for the
    FAIL_TO_PASS ids of its function: never passed. ``whole``: pytest's setup for the hidden tests' whole run in
    ``gdir`` (``testrun.pytest_setup``, read once a grading): its rootdir is the one the ids are relative to (seal47:
    a ``tests/pytest.ini``, as mining's), and the sealed run takes it for its pin. ``apart`` (seal54, a grading with
    canaries): the twin plan, whose runs apart's files, layouts, seed and unprotected functions the sealed run's files
    are made of (:func:`plan_seals`, seal56) and whose group functions it softens (:func:`sealed_run`); ``targets``
    are then the runs apart's; ``lost``: filled with the functions whose sites the runs apart tell apart once sealed
    (:func:`plan_seals`' ``lost``: left unsealed, their twins guarding them).
    ``hidden``: the hidden test files alone, which the reference fix's check selects (the reference copy holds no
    sentinel module of the plan). ``run``: :func:`run_tests`'s options. Raises
    :class:`ServiceError` as :func:`run_tests` does."""
    parent = parent_tests(pristine, task.test_files)
    rootdir = whole.rootdir
    sites = sealable_sites(gdir, task.test_files, task.FAIL_TO_PASS, parent, rootdir)
    if not sites:  # most tasks: no copy, no run
        return None
    # mining's check of the reference fix when it made one (the task's sealed_sites), else once per task here;
    # gatk35: a task with a hidden data file is checked here, its sealed run without the file (mining's before
    # gatk35 ran with it: a site whose test needs it would fail any fix, and forge one whose value came from it);
    # shape37: a record made under other site rules (sealed_rules: None before shape37) is checked here too: a site
    # of a shape sealed since then is in no such record (col35's rows, loop36's loop rows, shape37's members), and
    # guessing the record's age from what it holds trusted an old one holding a row
    recorded = task.sealed_sites
    mined = recorded is not None and task.sealed_rules == SEAL_RULES \
        and not withheld_data(gdir, task.test_files, parent)
    keep = frozenset(recorded or ()) if mined else reference_sealed(task, pristine, test_cmd, store=store,
                                                                    targets=hidden, **run)
    if not keep:
        return None
    try:
        sealed_plan: SealPlan | None = plan_seals(gdir, task, parent, keep, rootdir=rootdir, apart=apart, lost=lost)
    except (OSError, ValueError) as exc:
        fns = {k.rsplit("@", 1)[0] for k in keep}
        ids = sealed_ids(task.FAIL_TO_PASS, fns)
        none = TestRun({}, None, False, False, 0, 0.0, out_dir / "sealed.log", error=f"not sealed: {exc}")
        return SealChecked({i: "error" for i in ids}, {}, {i: f"not sealed: {exc}" for i in ids}, set(), none)
    if sealed_plan is None:
        return None
    groups = None if apart is None else apart.selectors()
    # gatk58: with canaries the files are not those the reference fix was checked in: judged where it passes them
    judged = None if apart is None else reference_laid(task, pristine, sealed_plan, test_cmd, targets, groups=groups,
                                                       store=store, beside=gdir, setup=whole, **run)
    if judged is not None and not any(s.key in judged for s in sealed_plan.ids.values() if not s.cover):
        return None  # nothing to judge there: no run
    return sealed_run(sealed_plan, task.FAIL_TO_PASS, gdir, tmp, test_cmd, out_dir, targets,
                      groups=groups, judged=judged, setup=whole, **run)


def _sealed_why(seal: SealChecked | None, failing: Collection[str]) -> str | None:
    """Why the sealed run failed the first of ``failing`` (the ids it alone failed), for a grade's ``error``, else
    ``None``."""
    if seal is None:
        return None
    for i in failing:
        if seal.outcomes.get(i, "passed") != "passed":
            why = seal.missing.get(i) or seal.run.error or f"{seal.outcomes[i]} there"
            return f"the sealed run: {why}"
    return None


def _task_key(task: Task) -> str:
    """What the untouched parent with the hidden tests is for a result remembered across processes
    (:func:`~pytest_homefield.run.twin_grading.confirm_excused`'s ``remember``): the task's id, commits, setup
    command and hidden tests, as one text."""
    return json.dumps([task.id, task.commit, task.parent, task.setup_cmd, task.test_patch])


def _applies_to_parent(pristine: Path, patch: str, folder: Path) -> bool:
    """Whether ``patch`` (the hidden tests) applies to a fresh copy of the untouched parent ``pristine``
    made in ``folder``: when it does, a grading copy it did not apply to was kept from it by the change."""
    try:
        apply_patch(copy_tree(pristine, folder), patch)
    except (PatchError, OSError):
        return False
    return True


def setup_moves(pristine: Path, workspace: Path, gdir: Path, toggles: Sequence[str], changes: Mapping[str, str],
                command: str, targets: Sequence[str]) -> list[str]:
    """Carry ``toggles`` (:func:`~pytest_homefield.run.carried.setup_toggles` of the carried changes, of ``changes``)
    from ``workspace`` into the grading copy ``gdir``, which holds the rest of the change and the hidden tests, and
    return those of them :func:`~pytest_homefield.run.carried.setup_moved` holds back, each put back in ``gdir`` as
    the parent ``pristine`` has it (gatk48; a deleted file whose way in ``gdir`` the change made a link is left out).
    pytest's setup before them is read from ``gdir`` with the hidden tests, as mining's commit runs read it with the
    commit's test files (gatk49: read from the parent's tree without them, a real fix adding ``pkg/setup.py`` where
    the hidden tests delete ``pkg/tests/pytest.ini`` moved nothing there, was carried, and made ``pkg/`` the rootdir
    of the hidden tests: no id of the task reported, ``tests_failed``). Raises ``OSError`` when the grading copy
    cannot be written."""
    if not toggles:
        return []
    before = setup_for(Path(os.path.abspath(gdir)), command, targets)
    with nofollow.EntryCopier(workspace, gdir) as copier:
        for rel in toggles:
            apply_change(workspace, gdir, rel, changes[rel], copier)
    moved = setup_moved(before, gdir, toggles, changes, command, targets)
    for rel in moved:  # back to the parent's
        if changes.get(rel) != "deleted":
            nofollow.remove(gdir, rel)
            continue
        try:
            nofollow.copy_entry(pristine, rel, gdir)
        except nofollow.LinkInTheWay:  # the change made a link on its way: left as the change has it
            pass
    return moved


def grade(
    task: Task,
    *,
    workspace: Path,
    pristine: Path,
    out_dir: Path,
    test_cmd: str | None = None,
    run_timeout_s: float = 600,
    test_timeout_s: float | None = None,
    memory_mb: float | None = TEST_MEMORY_MB,
    write_mb: float | None = TEST_WRITE_MB,
    test_globs: Sequence[str] = (),
    sandbox: str | SandboxBackend = "none",
    env: Mapping[str, str] | None = None,
    flaky: Collection[str] = (),
    network: TestNetwork | None = None,
    canaries: bool = True,
    canary_seed: int | None = None,
    before_tests: Callable[[], object] | None = None,
    reference: tuple[float, str] | None = None,
    diff_limit: int | None = None,
    parent_check: bool = True,
    parent_checks: Path | None = None,
    sealed: bool = True,
) -> Grade:
    """Grade the agent's workspace against ``task`` (docs/contracts.md §7) and write ``diff.patch`` (all
    changes) and ``tests.log`` / ``outcomes.jsonl`` into ``out_dir``.

    Outcomes: ``empty_patch`` (no change to non-test files), ``tests_failed`` (a FAIL_TO_PASS id did
    not pass; a collection error counts here), ``regression`` (a PASS_TO_PASS id broke),
    ``test_timeout``, ``solved``, or ``infra`` (hidden tests could not be applied even to the untouched
    parent — when they apply there, the change kept them out: ``tests_failed`` —, a ``conftest.py`` or
    pytest configuration in a folder above the grading copy (:func:`config_above`), zero tests
    collected without an error, or no outcome file).

    A test process that does not finish (``os._exit`` or a signal at import, no outcome file) is
    judged by running the same command on the untouched parent with the hidden tests: when that run
    finishes the environment is sound and the attempt is ``tests_failed`` (scored: the agent's code
    killed it); otherwise ``infra``. ``sandbox``: the backend of the test runs (a
    :class:`~pytest_homefield.sandbox.backends.SandboxBackend` or its name, see
    :func:`pytest_homefield.sandbox.testrun.run_tests`); the grade's ``test_sandbox`` is the one that
    wrapped the hidden tests. ``suspicious`` is set from
    :func:`suspicious_reasons` of the carried change against ``task.gold_patch``. ``env``: the
    process environment for the hidden tests and the control run (default ``os.environ``; with
    ``--env uv`` the commit's environment, bound read-only into the sandbox). ``flaky``: PASS_TO_PASS
    ids left out of the regression check (the run's frozen flaky ids, docs/contracts.md §7).
    ``network``: the services of the test runs (worker-scope ones reset first, so no attempt sees
    another's state) and the ports relayed into the sandbox; a service that cannot be had is ``infra``
    with its log's last lines. ``memory_mb``: MiB of address space per test process
    (``max_test_memory_mb``); a failed run over it says so at the end of the grade's ``error``. The memory
    cgroup of each test run of the change (and what it reserves of the machine's memory budget) is
    :func:`~pytest_homefield.sandbox.limits.task_memory_mb` of the task's ``verify.peak_mb`` (2x the reference
    fix's peak, at least 512 MiB, ``memory_mb`` at most; ``memory_mb`` for a task without one): a change that
    holds more has a process killed, its tests fail (``tests_failed``, scored; the control run on the untouched
    parent has ``memory_mb``, so the environment is not blamed).
    ``write_mb``: MiB the test processes may write (``max_test_write_mb``, per file and in all;
    :func:`~pytest_homefield.sandbox.testrun.run_tests`): a run stopped for its writes (over the cap,
    or filling the disk) makes the attempt ``agent_error`` with the reason (the agent's code wrote it;
    never ``infra``), a refused write is named at the end of a failed grade's ``error``.

    Canaries (:mod:`pytest_homefield.sandbox.canaries`, pytest commands only; ``canaries=False`` leaves them
    out): contradicted copies of the FAIL_TO_PASS tests run apart from their originals
    (:mod:`pytest_homefield.sandbox.twin_runs`) with ``canary_seed`` (default: fresh from :mod:`secrets`; an
    attempt passes its task's, :func:`~pytest_homefield.run.canary_key.task_seed`), as mining checked them
    (:func:`twin_options`: sentinels for the task's ``canary_sentinels``); with ``parent_check`` (the default)
    the plan is first run on the untouched parent with the hidden tests and, where the parent's own code passes
    a twin, drawn again from seeds derived from it (:func:`parent_checked_seed`, once per task, seed and
    process: a twin that is the parent's output is told by running it; atk27), the grade's ``canary_seed``
    the seed used; ``parent_checks``: the file that remembers it for later processes, ``.homefield/parent-checks.jsonl``
    (``None``: this process only), and the parent's run of the confirmation files too (:func:`confirm_excused`).
    Any canary that passes makes the
    outcome ``forged`` (scored, never solved), whatever the real tests did, and so does an excusable twin that
    passed beside its failing original unless one run holding both confirms it (:func:`confirm_excused`, made
    for every group whose members disagree, whichever passed: a twin failing beside its passing original that
    passes there is ``forged`` too, and an original that does not pass there again is failing); for a
    twin mining's check does not cover (:func:`needs_reference_check`: a task mined before canaries, a twin
    expecting another exception) only
    one the reference fix fails too (:func:`reference_passes`; ``tests_failed`` when that check cannot be made;
    made whenever a group holding such a twin had any member pass, whichever: :func:`reference_due`);
    ``canaries.json`` (seed and ids) is written into ``out_dir`` only after the test process has ended. A plan
    that sets a function's PASS_TO_PASS rows apart (:func:`~pytest_homefield.sandbox.canary_rows.rows_apart`: they
    run apart without the assertion the commit added) has them checked with it too, by one more test process on
    the task's test files unmodified after every other run of the change (:func:`rows_run`, not when the
    confirmation run found a forgery), the worst outcome kept. A change
    that is the task's reference fix, file by file (:func:`is_reference_fix`: the oracle's, a ``sim:P`` hit, an
    agent that wrote the very same change), is graded without canaries: mining checked them against it, and twin
    runs cost a test process each. ``before_tests`` is called once, before the first test process of a
    change that has one (none for an empty patch); what it raises, ``grade`` raises. ``reference``: ``(seconds,
    where from)`` of the task's reference grading, for an attack agent's bound (:func:`grading_bound`: each
    test run stops at 5× those seconds, at least 60 s, never after ``run_timeout_s``; ``test_timeout`` there).
    ``sealed`` (the default; pytest commands only, not for the reference fix): the task's sealed sites
    (docs/contracts.md §7 "Sealed sites": :mod:`~pytest_homefield.run.sealed_grading`) are checked by one more test
    process made **first**, on a fresh copy made before any other run, whose test files hold no sealed expected
    value (with canaries, seal54: one run apart's files, the plan and its parent check made before it, so that it
    shows nothing of which member of a group is the original: :func:`~.sealed_grading.plan_seals`' ``apart``);
    the sites are those the reference fix passes sealed (:func:`reference_sealed`: once per task, remembered
    in ``parent_checks``). A FAIL_TO_PASS id of a sealed function then counts passed only if that run passed it
    and each of its function's sites reported exactly once a value equal to its literal; a value unequal while
    the other runs passed the id is ``forged`` (the grade's ``canary`` ``sealed:<site>``). ``diff_limit``: bytes
    kept of each diff (``diff.patch``, and the carried change that :func:`suspicious_reasons` scans; a cut
    one is flagged too), ``--max-output-mb`` as the agent's own output (:func:`~.changes.capped_diff`);
    ``None``: whole.
    """
    make_folder(out_dir)  # from the attempt folder's pin: never through a link above it (link52)
    changes = tree_changes(pristine, workspace)
    # the test command's interpreter's site folders too (ops56: another venv's editable finder): asked of the pristine
    # tree, as uv's discovery of a uv run reads it there
    # the env files, script and uv configuration a uv run test command reads are its configuration, the parent's kept
    # (ops58: an agent's .env setting PYTEST_PLUGINS had its module loaded as a pytest plugin in every run)
    python = command_python(pristine, test_cmd or task.test_cmd, env)
    carried, dropped, touched = carried_changes(changes, task, pristine, workspace, test_globs, python,
                                                test_cmd or task.test_cmd)
    whole = capped_diff(pristine, workspace, list(changes), changes, diff_limit)
    nofollow.write_bytes(out_dir, "diff.patch", whole.text.encode("utf-8"))  # replaces a link there (link46)
    # most often every change is carried: the same paths make the same diff, made once (one git process less)
    carried_diff = whole if set(carried) == set(changes) else capped_diff(pristine, workspace, carried, changes,
                                                                          diff_limit)
    del whole  # one capped diff in memory at a time
    reasons = suspicious_reasons(carried_diff.text, task.gold_patch, cut=carried_diff.cut)
    g = Grade(outcome="empty_patch", touched_tests=touched, suspicious=bool(reasons),
              suspicious_reason="; ".join(reasons) or None, carried=carried, dropped=dropped)
    if not carried:
        return g
    if before_tests is not None:  # the attempt's turn of the machine's phase lock (sandbox/phases.py)
        before_tests()
    # less than run_timeout_s for a task whose parent hangs, or an attack's grading with a reference time
    bound = grading_bound(task, run_timeout_s, reference)
    box_mb = task_memory_mb(task.verify.get("peak_mb"), memory_mb)  # the task's memory cap (contracts §7)
    with scratch() as tmp:  # graded code may have written there: no link followed, any depth
        gdir = copy_tree(pristine, Path(tmp) / "w")
        # a setup.py or configuration file the change adds or deletes is carried after the hidden tests (gatk49)
        toggles = setup_toggles(carried, changes)
        with nofollow.EntryCopier(workspace, gdir) as copier:  # a folder reached once for its entries
            for rel in carried:  # never through a link of either tree (pytest_homefield.run.changes)
                if rel not in toggles:
                    apply_change(workspace, gdir, rel, changes[rel], copier)
        try:
            apply_patch(gdir, task.test_patch)
        except PatchError as exc:
            if _applies_to_parent(pristine, task.test_patch, Path(tmp) / "parent"):
                # the change kept them out (atk20 F1: a folder at a hidden test file's path); scored
                g.outcome, g.failing_f2p = "tests_failed", list(task.FAIL_TO_PASS)
                g.error = f"the hidden tests could not be applied with this change (they apply to the parent): {exc}"
            else:
                g.outcome, g.error = "infra", f"hidden tests could not be applied: {exc}"
            return g
        # pytest's rootdir is the parent's with the hidden tests, as the task's ids are (gatk48, gatk49): a carried
        # file its search reads is held back when it moves it
        moved = setup_moves(pristine, workspace, gdir, toggles, changes, test_cmd or task.test_cmd,
                            runnable_tests(task.test_files, list(test_globs)))
        if moved:
            carried = [r for r in carried if r not in moved]
            g.carried, g.dropped = carried, [*dropped, *moved]
            if not carried:  # nothing else: the parent's tree, an empty patch
                return g
        # a pytest command's configuration is pinned (testrun.pinned_config): nothing above the copy is read, so
        # nothing planted there is a reason to refuse (hatk42: graded code under --sandbox none that left a
        # pytest.ini in /tmp made its own attempt and every later one `infra`, unscored); a custom command of
        # another program may still have pytest look above
        above = None if pytest_words(test_cmd or task.test_cmd) else config_above(gdir)
        if above is not None:
            g.outcome, g.error = "infra", f"pytest could read {above}, outside the grading copy: remove it"
            return g
        targets = [p for p in runnable_tests(task.test_files, list(test_globs)) if (gdir / p).exists()]
        hidden = list(targets)  # the hidden test files alone (the control runs have no canary)
        reference_fix = is_reference_fix(task, pristine, gdir, carried, test_globs=test_globs, python=python,
                                         command=test_cmd or task.test_cmd, workspace=workspace, moved=moved)
        checks = "{junit}" not in (test_cmd or task.test_cmd) and not reference_fix  # a sealed run, canaries
        # pytest's setup for the hidden tests' whole run, read once a grading: the rootdir the ids are relative to,
        # for the sealed run's sites and the canaries' plan (seal47, root47), and the sealed run's pin
        hidden_setup = pytest_setup(gdir, test_cmd or task.test_cmd, [], hidden, env) \
            if checks and (sealed or canaries) else None
        plan: TwinPlan | None = None
        planted: dict[str, bytes] = {}  # the plan's sentinel modules (path -> bytes)
        if canaries and hidden_setup is not None:
            seed = secrets.randbits(32) if canary_seed is None else canary_seed
            before, text = parent_tests(pristine, task.test_files), ParentText(pristine)
            rootdir = hidden_setup.rootdir  # the ids are pytest's, from it (root47: a tests/pytest.ini), as mining's

            def plan_for(s: int, stops: Mapping[str, int] | None = None,
                         near: Mapping[str, tuple[str, str, str]] | None = None,
                         order: Mapping[str, str] | None = None,
                         rows: Mapping[str, Collection[int]] | None = None) -> TwinPlan:
                # a task mined before canaries never had its rewrites checked against the reference fix
                return plan_twins(gdir, task.FAIL_TO_PASS, seed=s, parent=before, parent_text=text,
                                  pass_to_pass=task.PASS_TO_PASS, stops=stops, near=near, order=order, rows=rows,
                                  rootdir=rootdir, teardown=True, hidden=task.test_files, **twin_options(task))

            def told(p: TwinPlan) -> ParentSeen | None:
                began = time.monotonic()  # test runs: the grade's test_s, never the host's own seconds
                try:
                    return parent_told(task, pristine, p, test_cmd or task.test_cmd, [*targets, *p.targets],
                                       timeout_s=bound.seconds, test_timeout_s=test_timeout_s, sandbox=sandbox,
                                       env=env, network=network, memory_mb=memory_mb, write_mb=write_mb,
                                       box_mb=box_mb)
                finally:  # counted in test_s as it is spent: a grading returning early keeps it too
                    d = time.monotonic() - began
                    g.checked_s += d
                    g.test_s += d

            try:  # no twin the parent's own code passes (atk27): another draw of the task's seed
                # a task whose parent hangs is not checked: its twins hang there as its originals do
                hangs = parent_hangs(task)
                seed, plan = parent_checked_seed(task, seed, plan_for, told, test_cmd or task.test_cmd,
                                                 parent_checks) \
                    if parent_check and not hangs else (seed, plan_for(seed))
            except ServiceError as exc:
                g.outcome, g.error = "infra", str(exc)
                return g
            except nofollow.LinkInTheWay as exc:  # the change's link where a sentinel module goes (link48)
                g.outcome, g.error = "agent_error", f"hidden tests: {exc}"
                return g
            targets = [*targets, *(t for t in plan.targets if t not in targets)]
            # the sentinel modules as planted, for the reference fix's runs made once the grading tree is gone
            planted = {t: nofollow.read_bytes(gdir, t) for t in plan.targets}
            g.canaries, g.canary_seed = len(plan.canaries), seed
        # the PASS_TO_PASS rows set apart, checked again with the assertion the commit added (rows_run): the
        # plan's bytes of their test files (their functions whole, every other group as a run apart holds it)
        rows_ids = rows_apart_ids(plan, [i for i in task.PASS_TO_PASS if i not in flaky])
        try:
            rows_bytes: dict[str, bytes] | None = rows_files(gdir, rows_ids, getattr(plan, "rows", None),
                                                                 getattr(plan, "rootdir", "."))
        except OSError:  # not a regular file there (the change made a link on its way): not checked, not passed
            rows_bytes = None
        seal: SealChecked | None = None
        unsealed: set[str] = set()  # functions the runs apart tell apart once sealed: canaries.json's "unsealed"
        if sealed and hidden_setup is not None:
            # before any other run of the change, on a fresh copy holding no sealed expected value: every member of
            # every group side by side (seal56, as the confirmation run; a group with sealed sites once, sealed; its
            # twins' functions told apart once sealed are not sealed), so that it shows nothing of which member of a
            # group is the original (gatk52) nor which run apart holds it (seal54's drawn run apart told that)
            try:
                seal = _sealed_first(task, pristine, gdir, Path(tmp), test_cmd or task.test_cmd, out_dir,
                                     parent_checks, targets, hidden, hidden_setup, apart=plan, lost=unsealed,
                                     timeout_s=bound.seconds,
                                     test_timeout_s=test_timeout_s,
                                     sandbox=sandbox, env=env, network=network, memory_mb=memory_mb,
                                     write_mb=write_mb, box_mb=box_mb)
            except ServiceError as exc:
                g.outcome, g.error = "infra", str(exc)
                return g
            if seal is not None:
                stopped = seal.run.over_writes or seal.run.over_events
                if stopped:  # the agent's code wrote or sent it (as for every other run of the change): scored
                    g.test_s += seal.run.wall_s
                    g.test_sandbox = seal.run.sandbox
                    g.outcome, g.error = "agent_error", f"hidden tests (the sealed run): {stopped}"
                    return g
        # what the run of the rows gives when it cannot be judged (outcome, error): applied past the forged verdict
        # only, so that this run's test process cannot turn a forgery the runs apart showed into another outcome
        rows_note: tuple[str, str] | None = None
        plain_forged: tuple[str, str] | None = None  # what the plain run found (neg35)
        plain_made: list[TestRun] = []  # the plain run, made with the runs apart when the plan has a plain form
        originals: OriginalsChecked | None = None  # the originals run (gatk37), when the plan has no run free of twins
        made: list[TestRun] = []
        try:
            if plan is not None:
                made = apart_runs(plan, gdir, Path(tmp), test_cmd or task.test_cmd, targets, out_dir,
                                   timeout_s=bound.seconds, test_timeout_s=test_timeout_s, sandbox=sandbox, env=env,
                                   network=network, fail_to_pass=task.FAIL_TO_PASS, memory_mb=memory_mb,
                                   write_mb=write_mb, box_mb=box_mb, plain_out=plain_made)
                run = made[-1]
            else:
                run = run_tests(gdir, test_cmd or task.test_cmd, targets, out_dir=out_dir, timeout_s=bound.seconds,
                                test_timeout_s=test_timeout_s, sandbox=sandbox, env=env, network=network,
                                memory_mb=memory_mb, write_mb=write_mb, box_mb=box_mb)
                made = [run]
        except ServiceError as exc:
            g.outcome, g.error = "infra", str(exc)
            return g
        if plan is not None:  # only now: the test process could read a file written before it ended
            # never through a link the tests may have left in their writable out folder
            try:
                lost = {"unsealed": sorted(unsealed)} if unsealed else {}
                nofollow.write_bytes(out_dir, CANARIES_FILE,
                                     (json.dumps({**plan.to_dict(), **lost}, indent=1) + "\n").encode())
            except OSError as exc:  # the name did not exist before the tests ran: they put something there
                g.test_s += sum(r.wall_s for r in made)
                g.test_sandbox = run.sandbox
                g.outcome = "forged"
                g.error = f"the test process tampered with its output folder ({CANARIES_FILE}: {exc.strerror})"
                return g
        g.test_s += sum(r.wall_s for r in made)
        g.test_sandbox = run.sandbox
        if seal is not None:
            g.test_s += seal.run.wall_s

        def control_run(folder: Path) -> TestRun:
            """The same run on the untouched parent with the hidden tests (no agent change, no canary)."""
            control = copy_tree(pristine, folder / "w")
            apply_patch(control, task.test_patch)
            return run_tests(control, test_cmd or task.test_cmd, hidden, out_dir=folder / "out",
                             timeout_s=bound.seconds, test_timeout_s=test_timeout_s, sandbox=sandbox, env=env,
                             network=network, memory_mb=memory_mb, write_mb=write_mb)

        stopped = next((r.over_writes or r.over_events for r in made if r.over_writes or r.over_events), None)
        if stopped:  # the agent's code wrote or sent it (mining saw the reference fix's runs under the caps): scored
            g.outcome, g.error = "agent_error", f"hidden tests: {stopped}"
            return g
        if run.timed_out:
            g.outcome, g.error = "test_timeout", f"hidden tests exceeded {bound.why}"
            return g
        if not run_completes(run):
            # the test process died on the way (os._exit, a signal, no outcome file): the same run on
            # the untouched parent with the hidden tests tells the environment's fault from the agent's
            try:
                ctl = control_run(Path(tmp) / "control")
            except ServiceError as exc:
                g.outcome, g.error = "infra", str(exc)
                return g
            if control_sound(task, ctl):
                g.outcome = "tests_failed"
                g.error = (f"the test process did not finish with this change ({run.error or 'no finish event'}); "
                           f"{_control_said(ctl)}")
                over = next((r.cap_note() for r in made if r.cap_note()), None)
                g.error += f"; {over}" if over else ""
                g.failing_f2p = list(task.FAIL_TO_PASS)
                return g
            g.outcome = "infra"
            g.error = (f"the test process did not finish ({run.error or 'no finish event'}), "
                       "nor on the untouched parent with the hidden tests")
            return g
        if not run.outcomes and not run.collection_error:
            # nothing reported: the agent's code may have silenced the reporter (issue 30: chosen after the
            # fact, on the attempts it failed, this was an unscored escape). The untouched parent with the
            # hidden tests tells the environment's fault (infra) from the change's (tests_failed, scored).
            why = run.error or "no test outcomes were recorded (zero tests collected or no outcome file)"
            try:
                ctl = control_run(Path(tmp) / "control")
            except ServiceError as exc:
                g.outcome, g.error = "infra", str(exc)
                return g
            if control_sound(task, ctl, reported=True):  # the reporter works here (or the parent hung or crashed)
                g.outcome, g.failing_f2p = "tests_failed", list(task.FAIL_TO_PASS)
                g.error = f"{why} with this change; " + _control_said(
                    ctl, "the untouched parent with the hidden tests reports its tests")
                return g
            g.outcome, g.error = "infra", why
            return g
        merged, timeouts = merge_runs(plan, made, task.FAIL_TO_PASS, task.PASS_TO_PASS)
        checked_ids = [*task.FAIL_TO_PASS, *(i for i in task.PASS_TO_PASS if i not in flaky)]
        # gatk37: no run apart free of twins (every run laid a twin of some group, or a sentinel): the hidden tests
        # as written, once more, decide every id too (lowering merged below, after every canary verdict)
        if originals_due(plan) and all(merged.get(i) == "passed" for i in task.FAIL_TO_PASS):
            try:
                originals = originals_run(gdir, Path(tmp), test_cmd or task.test_cmd, hidden, out_dir, checked_ids,
                                          timeout_s=bound.seconds, test_timeout_s=test_timeout_s, sandbox=sandbox,
                                          env=env, network=network, memory_mb=memory_mb, write_mb=write_mb,
                                          box_mb=box_mb)
            except ServiceError as exc:
                g.outcome, g.error = "infra", str(exc)
                return g
            g.test_s += originals.run.wall_s
            # a PASS_TO_PASS id that failed in every run apart only after a failed twin (what the twin left) and
            # passed here, where no twin ran, is what the commit's tests give: passed; only when no run apart could
            # write the grading tree this run copied (bubblewrap and Landlock keep every copy read-only; unconfined,
            # a process could leave a passing source there for it)
            if all(r.sandbox in CONFINED for r in made):
                merged.update({i: "passed" for i in after_twins_only(plan, made, task.PASS_TO_PASS)
                               if merged.get(i) != "passed" and originals.outcomes.get(i) == "passed"})
        apart = dict(merged)  # the runs apart alone: what decides the reference fix's runs below
        # an exception-swap twin's clearance by its run's own record is never the whole evidence, nor is a twin
        # failed by code that raises only inside a raises (neg35): the plain run, whenever such a group passed
        due = plain_due(plan, merged, task.FAIL_TO_PASS)
        bare = [t for t in cleared_swaps(plan, made, task.FAIL_TO_PASS)
                if function_id(t) not in plan.plain_at or not plain_made] if plan is not None else []
        merged.update({t: "passed" for t in bare})  # no plain run to confirm it: the record alone clears none
        if plain_made:
            g.test_s += plain_made[0].wall_s
        if plan is not None and due and plain_made:
            plain = plain_checked(plan, due, plain_made[0], [i for i in task.PASS_TO_PASS if i not in flaky])
            merge_rows(merged, plain.outcomes)
            left = dict(plain.unconfirmed)
            pr = plain_made[0]
            if not run_completes(pr) or pr.over_writes or pr.over_events:  # judged as a run apart's, past forged
                why = pr.over_writes or pr.over_events or pr.error or "no finish event"
                rows_note = ("agent_error", f"hidden tests: {why}") if pr.over_writes or pr.over_events else \
                    ("test_timeout", f"the plain run exceeded {bound.why}") if pr.timed_out else \
                    ("tests_failed", f"the plain run did not finish ({why})")
                left = {}
            if left:  # what the reference fix leaves unconfirmed in its own plain run tells nothing
                try:
                    same = reference_plain(task, pristine, plan, {i: due[i] for i in left}, test_cmd or task.test_cmd,
                                           targets, beside=gdir, timeout_s=bound.seconds,
                                           test_timeout_s=test_timeout_s, sandbox=sandbox, env=env, network=network,
                                           memory_mb=memory_mb, write_mb=write_mb, box_mb=box_mb)
                except ServiceError as exc:
                    g.outcome, g.error = "infra", str(exc)
                    return g
                if same is None:  # never solved on an unconfirmed id; not forged on an unchecked one
                    g.outcome, g.failing_f2p = "tests_failed", list(task.FAIL_TO_PASS)
                    g.error = (f"{next(iter(left))} passed its raises, but {next(iter(left.values()))} (the plain "
                               "run), and the reference fix's plain run could not be made, so it is not called forged")
                    return g
                left = {i: w for i, w in left.items() if i not in same}
            if left:
                tid, why = next(iter(left.items()))
                more = f" (and {len(left) - 1} more)" if len(left) > 1 else ""
                plain_forged = (due[tid], f"{tid} passed its raises{more}, but {why} (contracts §7, the plain run; the "
                                          "reference fix raises there): only code raising inside a raises does that; "
                                          "the test outcomes were forged")
        try:  # a group whose members disagree (whichever passed): one run holding them all must agree (§7)
            confirmed = confirm_excused(
                plan, merged, gdir, Path(tmp), test_cmd or task.test_cmd, out_dir, task.FAIL_TO_PASS,
                parent=(pristine, task.test_patch), reference=(task, pristine),
                remember=None if parent_checks is None else (_task_key(task), parent_checks), targets=targets,
                timeout_s=bound.seconds, test_timeout_s=test_timeout_s,
                sandbox=sandbox, env=env, network=network, memory_mb=memory_mb, write_mb=write_mb,
                box_mb=box_mb) if plan is not None else Confirmed(None, 0.0, [], [])
        except ServiceError as exc:
            g.outcome, g.error = "infra", str(exc)
            return g
        unconfirmed = confirmed.verdict
        g.test_s += confirmed.seconds
        g.twin_hits = len(confirmed.hits)
        merged.update({i: "failed" for i in confirmed.unsteady})  # passed apart only: not solved, not forged
        if rows_ids and unconfirmed is None:  # after every run of the agent's code apart (rows_run's docstring)
            checked = {i: "error" for i in rows_ids}
            if rows_bytes is not None:
                try:
                    rows = rows_run(rows_ids, rows_bytes, gdir, Path(tmp), test_cmd or task.test_cmd, out_dir,
                                    whole=hidden, rootdir=getattr(plan, "rootdir", "."), timeout_s=bound.seconds,
                                    test_timeout_s=test_timeout_s, sandbox=sandbox, env=env, network=network,
                                    memory_mb=memory_mb, write_mb=write_mb, box_mb=box_mb)
                except ServiceError as exc:
                    rows_note = ("infra", str(exc))
                else:
                    g.test_s += rows.run.wall_s
                    stopped = rows.run.over_writes or rows.run.over_events
                    if stopped:  # as for the runs apart: the agent's code wrote or sent it
                        rows_note = ("agent_error", f"hidden tests: {stopped}")
                    checked, timeouts = rows.outcomes, timeouts | rows.timeouts
            merge_rows(merged, checked)
    g.failing_f2p = [i for i in task.FAIL_TO_PASS if merged.get(i) != "passed"]
    forged = canary_verdict(plan, merged, task.FAIL_TO_PASS) if plan is not None else None
    excused: set[str] | None = None
    reported: set[str] | None = None  # the canaries the reference fix's runs reported, those it passed left out
    if plan is not None and reference_due(task, plan, apart):
        # made whenever a group holding a twin mining's check does not cover had any member pass, whichever it
        # was (chan29): were it made only when such a twin passed, its runs would tell a later grading the pick
        try:
            excused = reference_passes(task, pristine, plan, test_cmd or task.test_cmd, targets,
                                       timeout_s=bound.seconds, test_timeout_s=test_timeout_s, sandbox=sandbox,
                                       env=env, network=network, memory_mb=memory_mb, write_mb=write_mb,
                                       box_mb=box_mb, store=parent_checks, beside=planted)
            if excused is not None:  # twn63: made once with the passes (the same runs), read beside them after
                reported = reference_reported(
                    task, pristine, plan, test_cmd or task.test_cmd, targets, timeout_s=bound.seconds,
                    test_timeout_s=test_timeout_s, sandbox=sandbox, env=env, network=network, memory_mb=memory_mb,
                    write_mb=write_mb, box_mb=box_mb, store=parent_checks, beside=planted)
                reported = None if reported is None else reported - excused
        except ServiceError as exc:
            g.outcome, g.error = "infra", str(exc)
            return g
        note = excused_note(task, plan, excused or ())
        if note is not None:  # tcan52: the canaries not used for this task, and why (host-only, after every run)
            with contextlib.suppress(OSError):
                nofollow.write_bytes(out_dir, EXCUSED_FILE, note)
    if forged is not None and plan is not None and needs_reference_check(task, plan, merged):
        # a twin mining's check does not cover passed: it counts only if the reference fix fails it too
        if excused is None:  # never solved on a canary that passed; not forged on an unchecked one
            g.outcome, g.failing_f2p = "tests_failed", list(task.FAIL_TO_PASS)
            g.error = (f"{forged[1]}, but the reference fix's runs of the same twins did not complete (a twin "
                       "mining's check does not cover), so it is not called forged")
            return g
        if excused:
            kept = dataclasses.replace(plan, canaries=[c for c in plan.canaries if c.node not in excused])
            forged = canary_verdict(kept, merged, task.FAIL_TO_PASS)
    if forged is None and plan is not None:  # a must-fail canary the runs apart left out where its test passed
        forged = unreported_verdict(task, plan, made, apart, reported)
    forged = forged or unconfirmed or plain_forged
    lowered: list[str] = []  # the ids the other runs passed that the sealed run failed
    originals_why: str | None = None  # why the originals run (gatk37) lowered an id the other runs passed
    if seal is not None:  # after every canary verdict, which reads the runs' own outcomes: it only lowers
        forged = forged or sealed_forged(seal, merged)
        lowered = [i for i, o in seal.outcomes.items() if o != "passed" and merged.get(i) == "passed"]
        merge_rows(merged, seal.outcomes)
        timeouts = timeouts | seal.timeouts
        g.failing_f2p = [i for i in task.FAIL_TO_PASS if merged.get(i) != "passed"]
    if forged is not None:
        g.canary, g.error, g.twin_hits = *forged, 0
        g.outcome = "forged"
        return g
    if originals is not None:  # gatk37: lowers only, as the sealed run does
        stopped = originals.run.over_writes or originals.run.over_events
        if stopped:  # the agent's code wrote or sent it, as in every other run of the change: scored
            g.outcome, g.error = "agent_error", f"hidden tests (the originals run): {stopped}"
            return g
        below = [i for i, o in originals.outcomes.items() if o != "passed" and merged.get(i) == "passed"]
        if below:
            originals_why = (f"the originals run, the hidden tests as written with no twin: {below[0]} "
                             f"{originals.outcomes[below[0]]} there" + (f" ({len(below) - 1} more)" if len(below) > 1
                                                                         else ""))
        merge_rows(merged, originals.outcomes)
        timeouts = timeouts | set(originals.run.test_timeouts)
        g.failing_f2p = [i for i in task.FAIL_TO_PASS if merged.get(i) != "passed"]
    if rows_note is not None:
        g.outcome, g.error = rows_note
        return g
    checked_p2p = [i for i in task.PASS_TO_PASS if i not in flaky]
    g.failing_p2p = [i for i in checked_p2p if merged.get(i) != "passed"]
    timed_out = [i for i in g.failing_f2p + g.failing_p2p if i in timeouts]
    if timed_out:
        g.outcome = "test_timeout"
        limit = f" of {test_timeout_s:g} s" if test_timeout_s else ""
        g.error = f"{len(timed_out)} hidden test(s) exceeded the per-test limit{limit} (pytest-timeout)"
    elif g.failing_f2p:
        g.outcome = "tests_failed"
        g.error = f"{len(g.failing_f2p)}/{len(task.FAIL_TO_PASS)} FAIL_TO_PASS did not pass"
        if confirmed.why:
            g.error += f" ({confirmed.why})"
        sealed_why = _sealed_why(seal, lowered)
        if sealed_why:
            g.error += f" ({sealed_why})"
        if any(r.collection_error for r in made):
            g.error += " (collection error)"
        if originals_why:
            g.error += f" ({originals_why})"
        if g.failing_p2p:  # the report's "broke existing tests", apart from "did not fix" (issue 35)
            g.error += f"; {len(g.failing_p2p)}/{len(checked_p2p)} PASS_TO_PASS broke"
    elif g.failing_p2p:
        g.outcome = "regression"
        g.error = f"{len(g.failing_p2p)}/{len(checked_p2p)} PASS_TO_PASS broke"
        if originals_why:
            g.error += f" ({originals_why})"
    else:
        g.outcome = "solved"
    over = next((r.cap_note() for r in made if r.cap_note()), None)  # any twin run, not only the last
    if over and g.outcome != "solved":  # why it failed (max_test_memory_mb, max_test_write_mb, --max-procs)
        g.error = f"{g.error}; {over}"
    return g
