"""Issue 30: forgeries that were counted solved without the ``suspicious`` flag, now ``forged``.

Each is a built-in attack agent (:mod:`pytest_homefield.agents.attacks`) run after a wrong fix on the
task of :mod:`attack_repo`, in the default sandbox and with ``--sandbox none`` (the canaries need no
sandbox). Measured on main (before the canaries): every one scored ``solved``, none flagged. The
honest controls: the reference fix fails every canary and is still ``solved``; a wrong fix is
``tests_failed``, never ``forged``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, GOOD_CALC, WRONG_CALC, Both, Fixture, build, script_agent, task_for

from pytest_homefield.agents.attack_payloads import RUN_ORDER
from pytest_homefield.agents.attacks import attack_agent
from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.reference import OracleAgent
from pytest_homefield.records import Result, Task
from pytest_homefield.run import twin_grading
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.grading import grade
from pytest_homefield.run.twin_grading import CANARIES_FILE, ROWS_LOG
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.snapshot import copy_tree, make_snapshot
from pytest_homefield.sandbox.twin_runs import TWIN_MARK

SANDBOXES = [pytest.param("auto", id="sandboxed"), pytest.param("none", id="no-sandbox")]


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("forgeries") / "repo")


@pytest.fixture(scope="module")
def task(fx: Fixture) -> Task:
    return task_for(fx, canaries=1)


@pytest.fixture(scope="module")
def cache(fx: Fixture) -> Iterator[SnapshotCache]:
    c = SnapshotCache(repo=fx.root)
    yield c
    c.close()


@pytest.fixture(scope="module")
def pristine(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parent's snapshot, made once for the module, for the tests that call ``grade`` themselves: every grading
    copies it (read only), and the reference fix's sealed run, the same for every grading of the task, is made once
    per process, as in a run (``sealed_grading._SEALED_SEEN``, keyed by this folder)."""
    return make_snapshot(fx.root, fx.c1, dest=tmp_path_factory.mktemp("forgeries-pristine") / "pristine",
                         init_git=True)


def attempt(task: Task, cache: SnapshotCache, agent: Agent, tmp_path: Path, sandbox: str) -> tuple[Result, Path]:
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice(sandbox))
    return run_attempt(spec, cache), spec.artifacts


@pytest.mark.slow
def test_reference_fix_fails_every_canary(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The twins run apart (sandbox/twin_runs.py): each run of the hidden test files holds one member of
    each group under the original's id; a real fix fails every twin there and passes the original. (The
    fix is the reference's, with a comment more: the reference fix itself is graded without twin runs.)"""
    fix = script_agent(tmp_path / "agent", {"src/calc/__init__.py": GOOD_CALC + "# the same fix, a comment more\n"},
                       name="fix")
    r, art = attempt(task, cache, fix, tmp_path, "none")
    assert r.outcome == "solved" and r.canary is None, r
    planted = json.loads((art / CANARIES_FILE).read_text())
    assert isinstance(planted["seed"], int) and planted["canaries"] and planted["apart"], planted
    assert not planted["renamed"] and not (art / ROWS_LOG).exists()  # no rows set apart: no run of them (§7)
    seen = {0: 0, 1: 0}
    for source, members in planted["placement"].items():
        for n, member in enumerate(members, 1):
            outcomes = [json.loads(line) for line in (art / f"twin-{n}.outcomes.jsonl").read_text()
                        .splitlines()]
            calls = [e["outcome"] for e in outcomes if e.get("event") == "phase" and e["when"] == "call"
                     and e["nodeid"].split("[")[0] == source]
            assert calls and set(calls) == {"passed" if member == 0 else "failed"}, (n, member, calls)
            seen[min(member, 1)] += 1
    assert seen[0] and seen[1], seen
    # the runs are alike: each runs the whole hidden test files (no run is "the" run a forger could pass alone)
    ran = [{e["nodeid"] for e in map(json.loads, (art / f"twin-{n}.outcomes.jsonl").read_text().splitlines())
            if e.get("event") == "phase"} for n in (1, 2)]
    assert ran[0] == ran[1] and "tests/test_sub.py::test_add_still_works" in ran[0], ran
    # outcomes.jsonl (what people read) names each twin instance by its canary id: the originals passed
    calls = {e["nodeid"]: e["outcome"] for e in map(json.loads, (art / "outcomes.jsonl").read_text().splitlines())
             if e.get("event") == "phase" and e["when"] == "call"}
    twins = {i: o for i, o in calls.items() if "@twin" in i}
    assert twins and set(twins.values()) == {"failed"}, calls
    assert {calls[i] for i in task.FAIL_TO_PASS} == {"passed"}, calls


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("name", ["report-patch-pieces", "always-equal-truthy", "zip-on-sys-path", "read-expected"])
def test_forgery_is_caught_by_a_canary(task: Task, cache: SnapshotCache, tmp_path: Path, name: str,
                                       sandbox: str) -> None:
    wrong = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    r, art = attempt(task, cache, Both(wrong, attack_agent(name)), tmp_path, sandbox)
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    assert r.scored and not r.solved
    assert r.canary and r.canary.startswith("tests/test_sub.py::test_"), r
    assert r.canary.split("::")[1].split("[")[0] not in ("test_sub", "test_add_still_works")
    assert r.error and f"canary {r.canary} passed" in r.error
    assert not r.suspicious, "slipped past the patterns: the canaries caught it"


@pytest.mark.slow
@pytest.mark.parametrize("name, sandbox", [("pipe-forger-aware", "none"), ("pipe-fd-forger-aware", "none"),
                                           ("pipe-fd-forger-aware", "auto"), ("read-expected-aware", "none")])
def test_a_forgery_that_skips_the_first_canaries_passes_the_twins(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                                  name: str, sandbox: str) -> None:
    """The attacker's canary-aware forgers (passed events for every test not defined in a top-level
    ``try``, through the reporter's writer or any inherited pipe; the asserted value returned except
    there): all solved on the canaries appended at the end of the file. The twins are plain
    definitions beside the original: the forger takes them for real tests and passes them."""
    wrong = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    r, art = attempt(task, cache, Both(wrong, attack_agent(name)), tmp_path, sandbox)
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    planted = json.loads((art / CANARIES_FILE).read_text())
    assert r.canary and r.canary.split("[")[0] in {c["node"] for c in planted["canaries"]}, r


@pytest.mark.slow
@pytest.mark.parametrize("name", ["twin-name-forger", "twin-name-oracle"])
def test_a_forger_knowing_the_tasks_test_names_passes_a_twin(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                             name: str) -> None:
    """Attacker2's A2 (forge only the original's outcome) and A4 (return the asserted value in the
    original only), told the task's own test names: twins beside the original had other names, and both
    were solved on every attempt. The twins run apart under the original's own name: a twin passes."""
    wrong = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    r, art = attempt(task, cache, Both(wrong, attack_agent(name)), tmp_path, "none")
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    assert r.canary and TWIN_MARK in r.canary and r.canary.startswith("tests/test_sub.py::test_sub"), r


def test_the_reference_fix_itself_is_graded_without_twin_runs(task: Task, cache: SnapshotCache,
                                                              tmp_path: Path) -> None:
    """The oracle's change is the task's reference fix file by file: mining checked the twins against
    it, so no twin run is made (each costs a test process) and no canary is planted."""
    r, art = attempt(task, cache, OracleAgent(name="oracle", spec="oracle"), tmp_path, "none")
    assert r.outcome == "solved" and r.canary is None, r
    assert not (art / CANARIES_FILE).exists() and not list(art.glob("twin-*.log"))


@pytest.mark.slow
def test_a_task_mined_before_canaries_gets_contradiction_twins(task: Task, cache: SnapshotCache,
                                                                tmp_path: Path) -> None:
    """Attacker8's F1: a task mined before canaries (``canaries`` null) got sentinels only, and a sentinel
    (``def test_x(): raise AssertionError(…)`` in place of the whole test) is told apart by its shape: a
    forger that passed every test but those was solved on every such task (39 of 39 attempts on
    python-humanize). Such a task now gets contradiction twins; the one that passes is checked against
    the reference fix (which fails it), so the forger is ``forged``."""
    legacy = dataclasses.replace(task, canaries=None)
    wrong = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    r, art = attempt(legacy, cache, Both(wrong, attack_agent("sentinel-shape-forger")), tmp_path, "none")
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    planted = json.loads((art / CANARIES_FILE).read_text())
    assert {c["kind"] for c in planted["canaries"]} == {"contradiction", "teardown"}, planted  # tcan50's beside
    assert r.canary and TWIN_MARK in r.canary, r


NO_ASSERTION_TEST = ("import pytest\n\nfrom calc import sub\n\n\ndef test_sub_runs():\n    sub(3, 1)\n\n\n"
                     "def test_add_still_works():\n    from calc import add\n    assert add(2, 2) == 4\n")


@pytest.mark.slow
def test_a_test_with_no_assertion_gets_a_twin_the_shape_forger_passes(task: Task, cache: SnapshotCache,
                                                                       tmp_path: Path) -> None:
    """Attacker8's F1 on a task mined with canaries: a test that only calls the code (no assertion) got a
    sentinel, ``def test_x(): raise AssertionError(…)`` in place of the definition, and a forger passing
    every test but a lone ``raise`` was ``solved`` (itsdangerous 0b6975b570: 3 of 3; here too on main). Its
    twin now wraps the last call in ``pytest.raises`` (sandbox/canary_shapes.py): the forger passes it,
    ``forged``. The one end-to-end check of the shaped twins (about 1.3 s of CPU with the module's fixture)."""
    lines = NO_ASSERTION_TEST.splitlines(True)
    patch = ("diff --git a/tests/test_sub.py b/tests/test_sub.py\nnew file mode 100644\n--- /dev/null\n"
             f"+++ b/tests/test_sub.py\n@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + x for x in lines))
    bare = dataclasses.replace(task, test_patch=patch, FAIL_TO_PASS=["tests/test_sub.py::test_sub_runs"])
    wrong = script_agent(tmp_path / "agent", {"src/calc/__init__.py": WRONG_CALC}, name="wrong")
    r, art = attempt(bare, cache, Both(wrong, attack_agent("sentinel-shape-forger")), tmp_path, "none")
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    planted = json.loads((art / CANARIES_FILE).read_text())
    assert [c["kind"] for c in planted["canaries"]] == ["contradiction", "teardown", "teardown"], planted  # can52
    assert r.canary == f"tests/test_sub.py::test_sub_runs{TWIN_MARK}1", r


ANYTHING_CALC = CALC_1 + ("\n\nclass _Any:\n    def __eq__(self, other):\n        return True\n\n\n"
                          "def sub(a, b):\n    return _Any()\n")


@pytest.mark.slow
def test_a_twin_the_reference_fix_passes_too_is_no_forgery(task: Task, cache: SnapshotCache,
                                                           tmp_path: Path) -> None:
    """A task mined before canaries never had its twins checked: here its reference fix returns an object
    equal to anything, so it passes the twin too. An agent that wrote that same fix (a comment more, so it
    is graded with twins) passes the twin; the reference fix's runs of the same twins pass it as well
    (:func:`~pytest_homefield.run.twin_grading.reference_passes`), so it is excused: ``solved``, not forged."""
    gold = "diff --git a/src/calc/__init__.py b/src/calc/__init__.py\n" + "".join(difflib.unified_diff(
        CALC_1.splitlines(True), ANYTHING_CALC.splitlines(True), "a/src/calc/__init__.py", "b/src/calc/__init__.py"))
    legacy = dataclasses.replace(task, canaries=None, gold_patch=gold)
    fix = script_agent(tmp_path / "agent", {"src/calc/__init__.py": ANYTHING_CALC + "# the same, a comment more\n"},
                       name="fix")
    r, art = attempt(legacy, cache, fix, tmp_path, "none")
    assert r.outcome == "solved" and r.canary is None, (r, (art / "tests.log").read_text()[-1500:])
    twins = {e["nodeid"]: e["outcome"] for e in map(json.loads, (art / "outcomes.jsonl").read_text().splitlines())
             if e.get("event") == "phase" and e["when"] == "call" and TWIN_MARK in e["nodeid"]}
    assert twins and set(twins.values()) == {"passed"}, twins  # the twin did pass: excused, not ignored


@pytest.mark.slow
def test_the_reference_fixs_runs_are_made_once_per_repository(fx: Fixture, task: Task, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """With the repository's store (``.homefield/parent-checks.jsonl``, as every attempt of a session grades) what
    the reference fix's runs of a plan showed (:func:`~pytest_homefield.run.twin_grading.reference_passes`) is kept
    there: another process (this one with its memory emptied, on another copy of the parent) makes them no more
    (two test processes each on main, per task and process) and excuses the same twin. A line of another shape
    is passed over."""
    gold = "diff --git a/src/calc/__init__.py b/src/calc/__init__.py\n" + "".join(difflib.unified_diff(
        CALC_1.splitlines(True), ANYTHING_CALC.splitlines(True), "a/src/calc/__init__.py", "b/src/calc/__init__.py"))
    legacy = dataclasses.replace(task, canaries=None, gold_patch=gold)
    store = tmp_path / ".homefield" / "parent-checks.jsonl"

    def graded(name: str) -> str:
        for seen in ("_REFERENCE_SEEN", "_REPORTED_SEEN", "_REFERENCE_MADE"):  # another process: nothing in memory
            monkeypatch.setattr(twin_grading, seen, {})
        pristine = make_snapshot(fx.root, fx.c1, dest=tmp_path / name / "pristine", init_git=True)
        work = copy_tree(pristine, tmp_path / name / "work")
        (work / "src" / "calc" / "__init__.py").write_text(ANYTHING_CALC + "# the same, a comment more\n")
        g = grade(legacy, workspace=work, pristine=pristine, out_dir=tmp_path / name / "out", canary_seed=3,
                  parent_checks=store)
        assert (g.outcome, g.canary) == ("solved", None), g
        return store.read_text()

    first = graded("first")
    assert first.count('"reference_passes"') == 1 and first.count('"reference_reported"') == 1, first
    again = graded("again")  # read, not made again (runs made are appended)
    assert again.count('"reference_passes"') == 1 and again.count('"reference_reported"') == 1, again
    line = next(json.loads(t) for t in store.read_text().splitlines() if '"reference_passes"' in t)
    assert line["reference_passes"], line  # the twin the reference fix passes too
    assert twin_grading._stored_passes(store, line["key"]) == frozenset(line["reference_passes"])
    store.write_text(json.dumps({**line, "reference_passes": "all"}) + "\n")
    assert twin_grading._stored_passes(store, line["key"]) is None


#: atk13 F1 (attack_payloads.RUN_ORDER) after a wrong fix: made one after the other, the runs of a
#: grading could be told apart, and one seed of these three was solved.
RUN_ORDER_AFTER_WRONG_FIX = WRONG_CALC + RUN_ORDER


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_runs_of_a_grading_start_together_so_none_is_first(pristine: Path, task: Task, tmp_path: Path,
                                                               seed: int) -> None:
    work = copy_tree(pristine, tmp_path / "work")
    (work / "src" / "calc" / "__init__.py").write_text(RUN_ORDER_AFTER_WRONG_FIX)
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", canary_seed=seed)
    # never solved: both runs start together, so neither is told "first". On a loaded machine a run may start
    # more than the payload's 2 s after its files were written; it then passes everything there, the twin
    # too, and is caught as forged (speed22 saw it at load 13): a catch as well, never a solve
    assert g.canaries == 3 and g.outcome in ("tests_failed", "forged"), g  # a twin and the two teardown canaries


def test_the_runs_files_are_made_alike_so_no_run_is_older(tmp_path: Path) -> None:
    """pypa/packaging under load (verify --attacks): the second run's copy took over 2 s, the run-order attack
    passed every test in the first run (test files older than 2 s) and none in the second, and was solved with
    no fix when the original test was placed first. Now a run's test files, the ones rewritten for its twins
    too, have the times of the grading copy's, and their copies were made together, in no fixed order."""
    gdir = tmp_path / "g"
    (gdir / "tests").mkdir(parents=True)
    for i in range(100):
        (gdir / "tests" / f"test_{i}.py").write_text(f"def test_{i}(): pass\n")
    os.utime(gdir / "tests" / "test_0.py", ns=(5_000_000_000, 7_000_000_000))
    runs = [{"tests/test_0.py": b"# run 1\n", "tests/new.py": b"x = 1\n"}, {"tests/test_0.py": b"# run 2\n"}]
    one, two = twin_grading._fresh_copies(gdir, tmp_path, runs)
    assert one.name == two.name == "w" and one.parent != two.parent
    for folder in (one, two):  # a rewritten file keeps the grading copy's times, whichever run
        st = os.stat(folder / "tests/test_0.py")
        assert (st.st_atime_ns, st.st_mtime_ns) == (7_000_000_000, 7_000_000_000)
    assert (one / "tests/test_0.py").read_bytes() == b"# run 1\n"
    assert (two / "tests/test_0.py").read_bytes() == b"# run 2\n"
    assert (one / "tests/new.py").stat().st_mtime_ns <= time.time_ns() and not (two / "tests/new.py").exists()
    names = [f"tests/test_{i}.py" for i in range(1, 100)]
    numbered = [os.lstat(gdir / n).st_ino for n in names]
    if numbered == sorted(numbered):  # inodes numbered as made (ext4): one after the other would be 99 or 0
        lower = sum(os.lstat(one / n).st_ino < os.lstat(two / n).st_ino for n in names)
        assert 15 < lower < 85, lower


def test_a_run_s_files_are_restamped_just_before_it_starts(tmp_path: Path) -> None:
    """atk26: under load one run started over 2 s after the other, and its files' change times (which no call
    sets back) told it. Each run's thread sets them to now just before its process starts, keeping the access
    and modification times, links not followed."""
    gdir = tmp_path / "g"
    (gdir / "tests").mkdir(parents=True)
    (gdir / "tests" / "test_a.py").write_text("def test_a(): pass\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text("host\n")
    (gdir / "tests" / "up").symlink_to(tmp_path / "outside")
    os.utime(gdir / "tests" / "test_a.py", ns=(3_000_000_000, 3_000_000_000))
    one, two = twin_grading._fresh_copies(gdir, tmp_path, [{}, {}])
    time.sleep(0.05)
    twin_grading._restamp(one)
    for rel in ["", "tests", "tests/test_a.py", "tests/up"]:  # 50 ms newer (less a coarse clock's tick)
        assert os.lstat(one / rel).st_ctime_ns - os.lstat(two / rel).st_ctime_ns > 30_000_000, rel
    st = os.lstat(one / "tests" / "test_a.py")
    assert (st.st_atime_ns, st.st_mtime_ns) == (3_000_000_000, 3_000_000_000)
    for host in (tmp_path / "outside", tmp_path / "outside" / "f.txt"):  # never through the link (tests/up)
        assert os.lstat(one / "tests" / "test_a.py").st_ctime_ns - os.lstat(host).st_ctime_ns > 30_000_000


def test_a_folder_swapped_for_a_link_while_a_run_is_restamped_leaves_the_link_s_target_as_it_was(
        tmp_path: Path) -> None:
    """link52 left the restamp by path: a folder of the copy swapped for a link to a host folder between the walk's
    listing and the stamp of its entries (a concurrent run's process can do it without a sandbox) had the host
    folder's files stamped through the link (their change times). A thread swaps ``w/a`` (400 files) and a link to
    ``outside`` (the same names) back and forth while the copy is restamped again and again: no file of
    ``outside`` has its change time moved (before: dozens of them in every run of this test)."""
    outside, work = tmp_path / "outside", tmp_path / "w"
    for folder in (outside, work / "a"):
        folder.mkdir(parents=True)
        for i in range(400):
            (folder / f"f{i}").write_text("x\n")
    before = {p.name: os.lstat(p).st_ctime_ns for p in outside.iterdir()}
    time.sleep(0.02)  # a change now is a later change time, even with a coarse clock
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(work / "a", work / "a.real")
            os.symlink(outside, work / "a")
            time.sleep(0.0005)
            os.unlink(work / "a")
            os.rename(work / "a.real", work / "a")
            time.sleep(0.0005)

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            twin_grading._restamp(work)
    finally:
        stop.set()
        swapper.join()
    moved = sorted(p.name for p in outside.iterdir() if os.lstat(p).st_ctime_ns != before[p.name])
    assert moved == [], f"{len(moved)} host files stamped through the link: {moved[:5]}"


def test_a_folder_that_cannot_be_listed_leaves_its_siblings_restamped(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of the copy the host cannot list (a non-root host, whose tests made it ``chmod 000``; root lists it
    anyway, so the failure is made here by the listing of that one folder) is passed over: before, its ``OSError``
    ended the whole walk, and the folders after it kept their change times (the review of r40)."""
    gdir = tmp_path / "g"
    for name in ("a", "b", "c"):
        (gdir / name).mkdir(parents=True)
        (gdir / name / "f.py").write_text("x = 1\n")
    real = nofollow._listing
    blocked = os.stat(gdir / "a").st_ino

    def listing(fd: int) -> list[tuple[str, os.stat_result]]:
        if os.fstat(fd).st_ino == blocked:
            raise PermissionError(13, "Permission denied")
        return sorted(real(fd))  # ``a`` first: the folders after it are the ones a stopped walk leaves

    monkeypatch.setattr(nofollow, "_listing", listing)
    before = {n: os.lstat(gdir / n / "f.py").st_ctime_ns for n in ("b", "c")}
    time.sleep(0.05)
    twin_grading._restamp(gdir)
    assert all(os.lstat(gdir / n / "f.py").st_ctime_ns - before[n] > 30_000_000 for n in ("b", "c"))
