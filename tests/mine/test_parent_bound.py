"""Mining's slow paths (issue 35): targeted reruns name a module that failed to import as a path (its
ids would make pytest abort the run, exit 4, and cost a full rerun); parent runs are bounded by 5× the
commit run's time (with a floor; parent run 1 by a probe until the commit's time is known), and a parent
that hangs past the bound while the commit's tests finish is red for the hanging tests: the commit that
fixes a hang is a task, and says so. The time budget cuts a verification in flight."""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.redgreen import (
    DeadlineReached,
    _cut_short,
    _targets,
    classify_runs,
    unreached,
    verify_candidate,
)
from pytest_homefield.sandbox import memory_budget
from pytest_homefield.sandbox.memory_budget import reserve
from pytest_homefield.sandbox.proccap import memory_capped
from pytest_homefield.sandbox.testrun import TestRun


def test_targets_name_a_broken_module_as_a_path() -> None:
    select = ["t/test_a.py::x", "t/test_b.py::y", "t/test_a.py::z[1]"]
    assert _targets(select, set()) == select
    assert _targets(select, {"t/test_a.py"}) == ["t/test_a.py", "t/test_b.py::y"]


def test_targets_are_paths_of_the_tree_from_pytests_rootdir() -> None:
    """root47: with a ``tests/pytest.ini`` pytest reports ``test_a.py::x``; the run starts at the tree's top."""
    select = ["test_a.py::x", "test_b.py::y"]
    assert _targets(select, set(), ".") == select
    assert _targets(select, {"test_a.py"}, "tests") == ["tests/test_a.py", "tests/test_b.py::y"]


# -- a parent run stopped at its bound: the pure classification ------------------------------------

def _run(outcomes: dict[str, str], *, timed_out: bool = False, collected: int | None = None,
         selected: frozenset[str] | None = None) -> TestRun:
    return TestRun(outcomes=dict(outcomes), exit_code=None if timed_out else 0, timed_out=timed_out,
                   collection_error=False, collected=len(outcomes) if collected is None else collected,
                   wall_s=1.0, log_path=Path(os.devnull), selected=selected)


GREEN = {"t.py::ok": "passed", "t.py::hang": "passed", "t.py::after": "passed"}


def test_a_run_cut_short_observes_only_what_it_reported() -> None:
    """The hanging test reported ``error`` (its call never ended): red. The test after it never ran:
    not observed, so neither PASS_TO_PASS nor FAIL_TO_PASS ('unfinished'), and not a timeout."""
    cut = _cut_short(_run({"t.py::ok": "passed", "t.py::hang": "error"}, timed_out=True, collected=3))
    assert not cut.timed_out and cut.selected == {"t.py::ok", "t.py::hang"}
    v = classify_runs([cut], [_run(GREEN)])
    assert (v.reason, v.FAIL_TO_PASS, v.PASS_TO_PASS) == (None, ["t.py::hang"], ["t.py::ok"]), v
    assert v.excluded == {"t.py::after": "unfinished"}
    assert unreached([cut], [_run(GREEN)]) == ["t.py::after"]
    # a later parent run that reached it settles it (passing at the parent: PASS_TO_PASS)
    later = _run({"t.py::after": "passed", "t.py::hang": "error"}, timed_out=True, selected=frozenset(GREEN))
    v = classify_runs([cut, _cut_short(later)], [_run(GREEN)])
    assert (v.FAIL_TO_PASS, v.PASS_TO_PASS, v.excluded) == (["t.py::hang"], ["t.py::after", "t.py::ok"], {})
    # the same runs, not cut short, are a timeout
    assert classify_runs([_run({"t.py::hang": "error"}, timed_out=True)], [_run(GREEN)]).reason == "timeout"


def test_a_run_cut_while_collecting_counts_every_test_as_failing() -> None:
    """A hang at import (nothing reported, nothing collected) is like a module that cannot be imported."""
    cut = _cut_short(_run({}, timed_out=True, collected=0))
    assert cut.collection_error and cut.selected is None
    v = classify_runs([cut], [_run(GREEN)])
    assert v.reason is None and v.FAIL_TO_PASS == sorted(GREEN) and v.PASS_TO_PASS == []


def test_a_targeted_run_cut_short_keeps_its_own_selection() -> None:
    cut = _cut_short(_run({"t.py::hang": "error"}, timed_out=True, selected=frozenset({"t.py::hang", "t.py::after"})))
    assert cut.selected == {"t.py::hang"}


# -- a parent run stopped at its bound: a real commit that fixes an infinite loop -------------------

RETRY = """import time


def retry(fn, attempts):
    \"\"\"Call fn until it returns True, at most attempts times; whether it did.\"\"\"
    n = 0
    while n {op} attempts:
        if fn():
            return True
        n += 1
        time.sleep(0.01)
    return False
"""


@pytest.fixture(scope="module")
def hang_fix(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, str, str]:
    """A repository whose last commit fixes an infinite loop: ``retry(fn, -1)`` loops for ever at the
    parent (sleeping, so it costs no CPU) and returns False at the commit. Its test file runs a passing
    test, the hanging one, then one the hang keeps from running."""
    repo = GitRepo.init(tmp_path_factory.mktemp("hang") / "r")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/retry.py", RETRY.format(op="!="))
    repo.write("tests/test_retry.py", "from pkg.retry import retry\n\n\ndef test_retry_succeeds():\n"
                                      "    assert retry(lambda: True, 3)\n")
    parent = repo.commit("Add retry")
    repo.write("pkg/retry.py", RETRY.format(op="<"))
    repo.write("tests/test_retry.py", "from pkg.retry import retry\n\n\ndef test_retry_succeeds():\n"
                                      "    assert retry(lambda: True, 3)\n\n\n"
                                      "def test_retry_negative_attempts():\n"
                                      "    assert retry(lambda: False, -1) is False\n\n\n"
                                      "def test_retry_gives_up():\n    assert retry(lambda: False, 2) is False\n")
    commit = repo.commit("retry: stop for attempts below one instead of looping for ever")
    return repo, parent, commit


@pytest.mark.slow
def test_a_commit_that_fixes_a_hang_is_a_task(hang_fix: tuple[GitRepo, str, str], tmp_path: Path) -> None:
    """Parent run 1 is cut at the probe (3 s); commit run 1 takes well under a second, so the bound
    (5× that, at least 1 s) is below the probe: the parent hangs (under load parent run 1 is made again
    under the bound, and hangs there). The hanging test is FAIL_TO_PASS;
    the one the hang kept from running is run by parent run 2 (before the hanging one, cut at the bound
    again) and is PASS_TO_PASS; the record says why. Wall ≈ 3 s + 1–3 s of hangs + 5 short runs."""
    repo, parent, commit = hang_fix
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_retry.py"],
                         runnable_tests=["tests/test_retry.py"], test_cmd=f"{shlex.quote(sys.executable)} -m pytest "
                         f"{NO_PLUGINS}", setup_cmd=None, stability_runs=2, run_timeout_s=100, parent_floor_s=1.0,
                         parent_probe_s=3.0, log_dir=tmp_path / "logs")
    assert v.reason is None, v
    assert v.FAIL_TO_PASS == ["tests/test_retry.py::test_retry_negative_attempts"], v
    assert v.PASS_TO_PASS == ["tests/test_retry.py::test_retry_gives_up", "tests/test_retry.py::test_retry_succeeds"]
    # the probe (3 s), or under load (commit run 1 over 0.6 s) parent run 1 again at the bound
    assert v.parent_bound is not None and v.parent_bound.startswith("parent run 1 stopped at "), v.parent_bound
    assert "s (5× commit run 1's " in v.parent_bound, v.parent_bound
    assert "(2 parent runs)" in v.parent_bound and v.parent_bound in v.detail, v.detail
    assert v.canaries is not None  # checked like any task


def test_the_time_budget_cuts_a_verification_in_flight(hang_fix: tuple[GitRepo, str, str], tmp_path: Path) -> None:
    """``deadline``: the parent run that hangs is killed at it, and the candidate is not verified."""
    repo, parent, commit = hang_fix
    started = time.monotonic()
    with pytest.raises(DeadlineReached, match="parent run 1"):
        verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_retry.py"],
                         runnable_tests=["tests/test_retry.py"], test_cmd=f"{shlex.quote(sys.executable)} -m pytest "
                         f"{NO_PLUGINS}", setup_cmd=None, run_timeout_s=100, deadline=time.time() + 1.5)
    assert time.monotonic() - started < 10
    with pytest.raises(DeadlineReached, match="setup at the parent"):  # nothing starts after it
        verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_retry.py"],
                         runnable_tests=["tests/test_retry.py"], test_cmd="true", setup_cmd=None,
                         deadline=time.time() - 1)


@pytest.mark.slow
def test_a_module_that_cannot_import_at_the_parent_keeps_reruns_targeted(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "def f():\n    return 1\n")
    repo.write("tests/test_f.py", "from pkg import f\n\n\ndef test_f():\n    assert f() == 2\n")
    parent = repo.commit("Start the package with f")
    repo.write("pkg/__init__.py", "def f():\n    return 2\n")
    repo.write("pkg/h.py", "def h():\n    return 3\n")
    repo.write("tests/test_h.py", "from pkg.h import h\n\n\ndef test_h():\n    assert h() == 3\n")
    commit = repo.commit("Make f return two and add h")
    tests = ["tests/test_f.py", "tests/test_h.py"]
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=2, log_dir=tmp_path / "logs")
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_f.py::test_f", "tests/test_h.py::test_h"], v
    runs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert "parent-2" in runs and not [r for r in runs if r.endswith("-full")], runs  # no full rerun


# -- parent run 1 cut at the probe in a slow suite: what the probe reported is kept ------------------

SLOW_TESTS = "".join(f"\n\ndef test_slow_{k}():\n    time.sleep(0.6)\n    assert half(4) == 2\n" for k in range(8))


THIRD = "\n\ndef test_third_is_whole():\n    assert third(7) == 2\n"


@pytest.mark.slow
def test_a_probe_cut_in_a_slow_suite_keeps_what_it_reported(tmp_path: Path) -> None:
    """Eight tests of 0.6 s each and one the commit fixes, run first: parent run 1 is cut at the probe (2.5 s),
    having seen it fail; commit run 1 takes about 5 s, so the bound (5× that) is above the probe: a slow suite,
    not a hang. Parent run 1 goes on from where the probe stopped (``parent-1-rest``): the tests the probe
    reported are not run again (before: ``parent-1-bounded`` ran all nine again, the probe's seconds thrown
    away). The test in progress when the probe was killed reported ``error``: it is run again, and is
    PASS_TO_PASS."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "def half(n):\n    return n // 2\n\n\ndef third(n):\n    return n / 3\n")
    repo.write("tests/test_pkg.py", "import time\n\nfrom pkg import half, third\n" + SLOW_TESTS)
    parent = repo.commit("Add half and third")
    repo.write("pkg/__init__.py", "def half(n):\n    return n // 2\n\n\ndef third(n):\n    return n // 3\n")
    repo.write("tests/test_pkg.py", "import time\n\nfrom pkg import half, third\n" + THIRD + SLOW_TESTS)
    commit = repo.commit("third: floor division, so that third(7) is the whole number 2")
    tests = ["tests/test_pkg.py"]
    logs = tmp_path / "logs"
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=2, run_timeout_s=100, parent_probe_s=2.5, log_dir=logs)
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_pkg.py::test_third_is_whole"], v
    assert v.PASS_TO_PASS == [f"tests/test_pkg.py::test_slow_{k}" for k in range(8)], v
    assert v.parent_bound is None, v.parent_bound  # slow, not hung
    runs = sorted(p.name for p in logs.iterdir())
    assert "parent-1-rest" in runs and "parent-1-bounded" not in runs, runs
    events = [json.loads(line) for line in (logs / "parent-1-rest" / "outcomes.jsonl").read_text().splitlines()]
    rest = {e["nodeid"] for e in events if e.get("event") == "phase"}
    assert "tests/test_pkg.py::test_slow_7" in rest and "tests/test_pkg.py::test_third_is_whole" not in rest, rest


def _slow_suite(tmp_path: Path, *, fixed: bool) -> tuple[GitRepo, str, str]:
    """Eight tests of 0.6 s each, then one more the commit adds. ``fixed``: the commit fixes what it tests (red at
    the parent); else it passes at the parent too. Either way the commit's tests take 1.5 s each, so that its
    run 1 is slower than the parent's (a fixture of the commit's, say)."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "PAUSE = 0.6\n\n\ndef half(n):\n    return n // 2\n\n\ndef third(n):\n"
                                  "    return n / 3\n")
    slow = SLOW_TESTS.replace("time.sleep(0.6)", "time.sleep(PAUSE)")
    repo.write("tests/test_pkg.py", "import time\n\nfrom pkg import PAUSE, half, third\n" + slow)
    parent = repo.commit("Add half and third")
    repo.write("pkg/__init__.py", "PAUSE = 1.5\n\n\ndef half(n):\n    return n // 2\n\n\ndef third(n):\n"
                                  f"    return n {'//' if fixed else '/'} 3\n")
    repo.write("tests/test_pkg.py", "import time\n\nfrom pkg import PAUSE, half, third\n" + slow
               + ("\n\ndef test_third_is_whole():\n    assert third(7) == 2\n" if fixed else
                  "\n\ndef test_third_of_nine():\n    assert third(9) == 3\n"))
    commit = repo.commit("third: floor division" if fixed else "Test third of nine")
    return repo, parent, commit


@pytest.mark.slow
def test_a_probe_cut_with_nothing_failing_decides_passes_without_change_early(tmp_path: Path) -> None:
    """perf46 (nu43 on simonw/llm: two candidates that pass without change took 739 s and 944 s, commit run 1 in
    full made before the parent's tests were all run). Parent run 1 is cut at the probe (2.5 s) with nothing
    failing; commit run 1 (about 14 s) is cut at its cap (5× which covers the parent at the probe's pace), so its
    bound is above what the parent needs; the parent runs once more in full, passes, and the candidate is dropped
    as passes_without_change with no commit run made in full (before: ``commit-1`` in full, then
    ``parent-1-rest``). The same verdict the whole schedule reaches."""
    repo, parent, commit = _slow_suite(tmp_path, fixed=False)
    tests = ["tests/test_pkg.py"]
    logs = tmp_path / "logs"
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=3, run_timeout_s=100, parent_probe_s=2.5, log_dir=logs)
    assert v.reason == "passes_without_change", v
    assert v.detail.startswith("no test failed in 1 parent run: all 9 passed"), v.detail
    runs = sorted(p.name for p in logs.iterdir())
    assert runs == ["commit-1-capped", "parent-1", "parent-1-again-rest"], runs
    capped = [json.loads(line) for line in (logs / "commit-1-capped" / "outcomes.jsonl").read_text().splitlines()]
    assert sum(e.get("event") == "phase" and e.get("when") == "call" for e in capped) < 9, capped  # cut
    # perf47: the parent's run after the capped one runs only what its probe did not report (before: all nine again)
    assert _called(logs / "parent-1") | _called(logs / "parent-1-again-rest") == {
        f"tests/test_pkg.py::test_slow_{k}" for k in range(8)} | {"tests/test_pkg.py::test_third_of_nine"}
    assert not _called(logs / "parent-1") & _called(logs / "parent-1-again-rest")


def _called(log: Path) -> set[str]:
    """The ids whose call phase a run's ``outcomes.jsonl`` reports passed (the probe's last test, killed, did not)."""
    events = [json.loads(line) for line in (log / "outcomes.jsonl").read_text().splitlines()]
    return {e["nodeid"] for e in events if e.get("event") == "phase" and e.get("when") == "call"
            and e.get("outcome") == "passed"}


@pytest.mark.slow
def test_a_probe_cut_with_nothing_failing_keeps_a_task_red_later(tmp_path: Path) -> None:
    """The same schedule when the parent's run in full fails (the fixed test comes after what the probe saw): that
    run is parent run 1, commit run 1 is made in full, and the task is kept as the whole schedule keeps it."""
    repo, parent, commit = _slow_suite(tmp_path, fixed=True)
    tests = ["tests/test_pkg.py"]
    logs = tmp_path / "logs"
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=2, run_timeout_s=100, parent_probe_s=2.5, log_dir=logs)
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_pkg.py::test_third_is_whole"], v
    assert v.PASS_TO_PASS == [f"tests/test_pkg.py::test_slow_{k}" for k in range(8)], v
    assert v.parent_bound is None, v.parent_bound
    runs = sorted(p.name for p in logs.iterdir())
    assert {"commit-1-capped", "parent-1-again-rest", "commit-1", "parent-2"} <= set(runs), runs
    assert "parent-1-rest" not in runs and "parent-1-bounded" not in runs and "parent-1-again" not in runs, runs
    assert not _called(logs / "parent-1") & _called(logs / "parent-1-again-rest")  # perf47: the rest alone


@pytest.mark.slow
@pytest.mark.parametrize("why", ["unaddressable", "over_max_selected"])
def test_a_rest_the_parent_cannot_select_is_run_as_the_whole_files(tmp_path: Path, why: str) -> None:
    """perf47's fall-backs: the ids the probe collected and did not report are run alone (``parent-1-again-rest``),
    unless there are over :data:`MAX_SELECTED` of them (2100 quick ones after the slow tests: no rest run) or that
    run cannot address one of them (the last test's id drawn from its process, a parametrize id of the process id as
    a timestamp or a random seed would be: the rest run names an id its own collection never makes); then the whole
    files run (``parent-1-again``), whose outcomes stand. The verdict is the one the whole schedule reaches; without
    the fall-back (removed, tried) the rest's outcome was missing and the schedule went on to a full commit run."""
    repo, parent, commit = _slow_suite(tmp_path, fixed=False)
    extra = ("\n\nimport os\n\n\n@pytest.mark.parametrize('n', [9], ids=[f'pid{os.getpid()}'])\n"
             "def test_drawn(n):\n    assert half(n) == 4\n") if why == "unaddressable" else (
             "\n\n@pytest.mark.parametrize('n', range(2100))\ndef test_many(n):\n    assert half(2 * n) == n\n")
    text = (repo.path / "tests" / "test_pkg.py").read_text()
    repo.write("tests/test_pkg.py", text.replace("import time\n", "import time\n\nimport pytest\n", 1) + extra)
    commit = repo.commit("Test half of more numbers")
    tests = ["tests/test_pkg.py"]
    logs = tmp_path / "logs"
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=3, run_timeout_s=100 if why == "unaddressable" else 30,
                         parent_probe_s=2.5 if why == "unaddressable" else 3.5,  # 2109 tests take a while to collect
                         log_dir=logs)
    runs = sorted(p.name for p in logs.iterdir())
    rest = ["parent-1-again-rest"] if why == "unaddressable" else []
    assert runs == ["commit-1-capped", "parent-1", "parent-1-again", *rest], (runs, v)
    assert v.reason == "passes_without_change", v
    n = 10 if why == "unaddressable" else 2109
    assert v.detail.startswith(f"no test failed in 1 parent run: all {n} passed"), v.detail
    whole = _called(logs / "parent-1-again")
    assert whole >= {f"tests/test_pkg.py::test_slow_{k}" for k in range(8)} and len(whole) >= n - 4, len(whole)
    if rest:
        drawn = {i for i in whole if "test_drawn" in i}
        assert len(drawn) == 1 and not drawn & _called(logs / "parent-1-again-rest"), drawn


def _hold_the_budget(mb: int, seconds: float, ready: Any) -> None:
    """Another homefield process (another session's sandbox) holding ``mb`` MiB of a 100 MiB budget."""
    memory_budget.configure(100)
    with reserve(mb):
        ready.set()
        time.sleep(seconds)


@pytest.mark.slow
@pytest.mark.skipif(not memory_capped("bwrap"), reason="no memory cgroup here: a run reserves no memory")
def test_the_time_budget_bounds_a_wait_for_the_machines_memory(hang_fix: tuple[GitRepo, str, str]) -> None:
    """nu48: a ``--time-budget`` mine of more-itertools (8m, ``-n 2``, a machine other homefield sessions shared)
    kept a candidate that finished at 9m54s: a test run that started before the deadline waited for the machine's
    memory budget (held by the other sessions' sandboxes) before its timeout's clock started, so neither the wait
    nor the run after it was cut. Now the wait is bounded by the deadline too, and a run's time is what is left
    after it: here another process holds the budget for 20 s, and the verification stops at the deadline (2 s)."""
    repo, parent, commit = hang_fix
    ready = multiprocessing.get_context("fork").Event()
    holder = multiprocessing.get_context("fork").Process(target=_hold_the_budget, args=(80, 20.0, ready), daemon=True)
    before = memory_budget._BUDGET[0], memory_budget._FLOOR[0]
    memory_budget.configure(100)
    holder.start()
    try:
        assert ready.wait(30)
        started = time.monotonic()
        with pytest.raises(DeadlineReached):
            verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_retry.py"],
                             runnable_tests=["tests/test_retry.py"], test_cmd=f"{shlex.quote(sys.executable)} -m "
                             f"pytest {NO_PLUGINS}", setup_cmd=None, run_timeout_s=100, sandbox="bwrap",
                             memory_mb=60, deadline=time.time() + 2)
        assert time.monotonic() - started < 10  # before: 20 s of waiting, then the run
    finally:
        holder.kill()
        holder.join(10)
        memory_budget._BUDGET[0], memory_budget._FLOOR[0] = before
