"""The machine's memory budget (sandbox/memory_budget.py, contracts §9, issue 30 atk25): each sandbox reserves its
memory cap from one budget shared by every homefield process of the user before it starts, so the caps of the
sandboxes running at once never sum past it. Real processes, real open file description locks, real reapers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.line_log import append_line

from pytest_homefield.sandbox import memory_budget
from pytest_homefield.sandbox.memory_budget import BudgetTooSmall, BudgetWaitExpired, MemoryBudget, reserve
from pytest_homefield.sandbox.phases import phase_folder, set_notice
from pytest_homefield.sandbox.procs import run_process, spawn_process, stop_process

CTX = multiprocessing.get_context("fork")
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


@pytest.fixture
def budget() -> Iterator[MemoryBudget]:
    """A budget of 100 MiB in this test's own phase folder (conftest: ``HOMEFIELD_PHASE_DIR``)."""
    before = memory_budget._BUDGET[0], memory_budget._FLOOR[0]
    memory_budget.configure(100)
    yield MemoryBudget()
    memory_budget._BUDGET[0], memory_budget._FLOOR[0] = before


def _reserver(log: str, mb: int, hold_s: float, times: int) -> None:
    memory_budget.configure(100)
    for _ in range(times):
        with reserve(mb) as got:
            start = time.monotonic()
            time.sleep(hold_s)
            append_line(log, f"{mb} {start} {time.monotonic()} {got.wait_s}")


def _intervals(log: Path) -> list[tuple[int, float, float, float]]:
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(int(m), float(a), float(b), float(w)) for m, a, b, w in rows]


def _start(target: Any, *args: Any) -> Any:
    proc = CTX.Process(target=target, args=args, daemon=True)
    proc.start()
    return proc


def _most_at_once(rows: list[tuple[int, float, float, float]]) -> int:
    """The largest sum of MiB held at one moment."""
    return max(sum(m for m, a, b, _ in rows if a <= t < b) for _, t, _, _ in rows)


def test_two_reservers_past_the_budget_take_turns(tmp_path: Path, budget: MemoryBudget) -> None:
    """60 + 60 MiB on a budget of 100: never both at once, the one that waited says how long; 40 + 40 + 20 fit
    together and run at once."""
    log = tmp_path / "log"
    procs = [_start(_reserver, str(log), 60, 0.4, 2) for _ in range(2)]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    rows = _intervals(log)
    assert len(rows) == 4
    assert _most_at_once(rows) == 60  # before: each sandbox capped, not their sum (120 of 100)
    assert max(w for *_, w in rows) > 0.2
    log2 = tmp_path / "log2"
    procs = [_start(_reserver, str(log2), mb, 0.8, 1) for mb in (40, 40, 20)]
    for p in procs:
        p.join(30)
    assert _most_at_once(_intervals(log2)) == 100


def _hold_until_killed(mb: int, ready: Any) -> None:
    memory_budget.configure(100)
    with reserve(mb):
        ready.set()
        time.sleep(600)


def test_a_killed_reserver_gives_its_memory_back(budget: MemoryBudget) -> None:
    """Nothing is counted in a file: the kernel drops a SIGKILLed process's locks, and the next reservation
    gets the memory at once."""
    ready = CTX.Event()
    proc = _start(_hold_until_killed, 80, ready)
    assert ready.wait(30)
    assert budget.held_mb() == 80
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert budget.held_mb() == 0
    with reserve(100) as got:
        assert got.mb == 100 and got.wait_s < 1


@pytest.mark.usefixtures("cli_spelling")
def test_a_reservation_larger_than_the_budget_is_refused_not_waited_for(budget: MemoryBudget) -> None:
    with pytest.raises(BudgetTooSmall, match="needs 101 MiB of memory, more than the machine's budget of 100 MiB"):
        with reserve(101):
            pass
    with pytest.raises(BudgetTooSmall, match="--max-total-memory-mb 50 is smaller than .* 8192 MiB"):
        memory_budget.configure(50, memory_budget.largest_mb(4096, 4096, 0, 2))
    memory_budget.configure(None, 10**7)  # the default on a machine smaller than one grading: one at a time
    assert memory_budget.budget_mb() == 10**7


def test_the_largest_reservation_of_a_run_is_its_largest_tasks_twins_or_one_ceiling_run(budget: MemoryBudget) -> None:
    """mem27: a run whose tasks' caps are 512 MiB (``verify.peak_mb``) holds at most 2 × 512 for a grading's twins,
    4096 for a control run or an agent: ``--max-total-memory-mb 6000`` is accepted (before: 8192 asked, refused);
    services stay at ``max_test_memory_mb`` each; without task caps, the twins of the ceiling."""
    assert memory_budget.largest_mb(4096, 4096, 0, 2, task_mb=512) == 4096
    assert memory_budget.largest_mb(4096, 1024, 0, 2, task_mb=512) == 4096  # a control run, mining's run
    assert memory_budget.largest_mb(4096, 4096, 1, 2, task_mb=3000) == 2 * (3000 + 4096)
    assert memory_budget.largest_mb(4096, 4096, 0, 2) == 8192
    memory_budget.configure(6000, memory_budget.largest_mb(4096, 4096, 0, 2, task_mb=512))


def test_the_default_budget_leaves_homefield_and_the_system_an_eighth() -> None:
    assert memory_budget.default_budget_mb(24105) == 24105 - 3013  # this machine: 20.6 GiB
    assert memory_budget.default_budget_mb(8192) == 8192 - 2048  # at least 2 GiB
    total = memory_budget.machine_mb()
    assert total is not None and 0 < total <= int(Path("/proc/meminfo").read_text().split()[1]) // 1024


def test_the_reaper_keeps_the_reservation_the_command_never_sees_it(tmp_path: Path, budget: MemoryBudget) -> None:
    """Like the phase lock's: the reaper of a command run under a reservation inherits its descriptor (so it
    lasts until the command's last process is reaped, homefield killed or not), the command does not; a
    nested reservation of the same thread reserves nothing more."""
    out = tmp_path / "fds"
    with reserve(30):
        with reserve(30) as inner:
            assert inner.mb == 0
        assert budget.held_mb() == 30
        run_process(["sh", "-c", 'ls -l /proc/$PPID/fd; echo SELF; ls -l /proc/self/fd'], cwd=tmp_path, env=ENV,
                    timeout_s=30, stdout_path=out)
        service = spawn_process(["sleep", "30"], cwd=tmp_path, env=ENV, stdout_path=tmp_path / "svc",
                                hold_memory=True)
        try:
            held = [os.readlink(f"/proc/{service.pid}/fd/{n}") for n in os.listdir(f"/proc/{service.pid}/fd")]
        finally:
            stop_process(service, grace_s=0)
    reaper, _, command = out.read_text().partition("SELF")
    memory = str(phase_folder() / memory_budget.BUDGET_FILE)
    assert memory in reaper and memory not in command
    assert memory in held
    assert budget.held_mb() == 0


def _grading(log: str, cap: int, runs: int) -> None:
    """A grading's twin runs as grading makes them (twin_grading.apart_runs): one reservation of every run's
    cap, then a thread per run, each drawing its cap for its command."""
    memory_budget.configure(3 * cap)

    def one() -> None:
        with reserve(cap):
            start = time.monotonic()
            time.sleep(0.3)
            append_line(log, f"{cap} {start} {time.monotonic()} 0")

    with reserve(runs * cap, shared=True):
        threads = [threading.Thread(target=one) for _ in range(runs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def test_the_twins_reserve_together(tmp_path: Path, budget: MemoryBudget) -> None:
    """Three gradings of two twin runs each at a budget of 3 caps: reserving each run apart, each grading could
    hold one run's cap and wait for ever for a second (3 held, 3 waiting); reserved together they take turns
    and all finish, never more than the budget held."""
    log = tmp_path / "log"
    procs = [_start(_grading, str(log), 25, 2) for _ in range(3)]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    rows = _intervals(log)
    assert len(rows) == 6
    assert _most_at_once(rows) <= 75


def test_drawing_past_the_reservation_is_homefields_error(budget: MemoryBudget) -> None:
    errors: list[BaseException] = []

    def one() -> None:
        try:
            with reserve(60):
                time.sleep(0.2)
        except RuntimeError as exc:
            errors.append(exc)

    with reserve(100, shared=True):
        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(errors) == 1 and "do not fit" in str(errors[0])


def _wait_half_a_second(lines: list[str]) -> float:
    """Seconds :func:`reserve` waited for 50 MiB while a process held 80 of the budget's 100 MiB until it was
    killed 0.5 s later; what was said goes to ``lines``."""
    set_notice(lines.append)
    ready = CTX.Event()
    proc = _start(_hold_until_killed, 80, ready)
    try:
        assert ready.wait(30)
        threading.Timer(0.5, os.kill, (proc.pid, signal.SIGKILL)).start()
        with reserve(50) as got:
            assert got.wait_s > 0.3
    finally:
        set_notice(None)
        proc.join(10)
    assert memory_budget.waited_s() >= got.wait_s
    return got.wait_s


def test_a_wait_for_memory_says_so_once(budget: MemoryBudget, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_budget, "SAY_MEMORY_AFTER_S", 0.2)
    lines: list[str] = []
    _wait_half_a_second(lines)
    assert len(lines) == 2
    assert lines[0].startswith("homefield: waiting for the machine's memory budget: 50 MiB asked, 80 of 100 MiB")
    assert lines[1].startswith("homefield: got 50 MiB of the machine's memory budget after")


def test_a_short_wait_for_memory_says_nothing(budget: MemoryBudget) -> None:
    """nu36: every wait for memory held by sandboxes was said at once, two lines however short (20 waits said in 4
    sessions on a shared machine, 16 of them of 0-4 s); a wait shorter than SAY_MEMORY_AFTER_S is counted, not
    said."""
    lines: list[str] = []
    _wait_half_a_second(lines)
    assert lines == []


def test_two_threads_of_one_process_take_turns(tmp_path: Path, budget: MemoryBudget) -> None:
    """Two sandboxes of one process (threads, each reserving for its own command) wait for each other as
    two processes do; only a shared reservation is drawn from by other threads."""
    log = tmp_path / "log"
    threads = [threading.Thread(target=_reserver, args=(str(log), 60, 0.3, 1)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _most_at_once(_intervals(log)) == 60


def test_a_wait_for_memory_stops_at_its_deadline_and_holds_nothing(budget: MemoryBudget) -> None:
    """``until`` (a mine's ``--time-budget`` deadline, nu48): the wait for memory another process holds ends there
    with :class:`BudgetWaitExpired`, holding nothing; memory free at once is had whatever the deadline."""
    ready = CTX.Event()
    proc = _start(_hold_until_killed, 80, ready)
    try:
        assert ready.wait(30)
        started = time.monotonic()
        with pytest.raises(BudgetWaitExpired):
            with reserve(40, until=time.time() + 0.3):
                pytest.fail("reserved past another process's 80 of 100 MiB")
        assert 0.25 < time.monotonic() - started < 5
        assert budget.held_mb() == 80
        with reserve(20, until=time.time() - 1) as got:  # free: no wait, so no deadline to meet
            assert got.mb == 20 and budget.held_mb() == 100
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(10)


def test_a_run_reserves_what_each_tasks_grading_makes_at_once(tmp_path: Path, budget: MemoryBudget) -> None:
    """rev58: the check at start counted ``RUNS`` runs for every task, but a task whose twin plan has a teardown twin
    (tdtwin56) makes one run more at once (``verify.twin_runs``, mining's plan): ``--max-total-memory-mb 1100``
    passed for a task of three runs of 512 MiB (before: 2 × 512 = 1024 asked), and its grading's reservation of
    1536 MiB could never be had. A task mined before the count was recorded counts one run more than ``RUNS``."""
    from pytest_homefield.plugin import _budget_memory
    from pytest_homefield.records import Task
    from pytest_homefield.settings import Settings
    from pytest_homefield.store import write_jsonl_atomic

    def record(i: int, verify: dict[str, Any]) -> dict[str, Any]:
        return Task(id=f"{i:012d}", commit=f"{i:040d}", parent="0" * 40, committed_at="", authored_at="",
                    mode="commit", subject="t", message="", prompt="", source_files=[], test_files=[], test_patch="",
                    gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[], verify=verify).to_dict()

    settings = Settings(root=tmp_path, max_test_memory_mb=512, max_agent_memory_mb=512, max_total_memory_mb=1100)
    write_jsonl_atomic(settings.tasks_path, [record(1, {"peak_mb": 100.0, "twin_runs": 2}),
                                             record(2, {"peak_mb": 100.0, "twin_runs": 3})])
    with pytest.raises(pytest.UsageError, match="smaller than .* 1536 MiB"):
        _budget_memory(settings, run=True)
    settings.max_total_memory_mb = 1536
    _budget_memory(settings, run=True)
    settings.max_total_memory_mb = 1100
    write_jsonl_atomic(settings.tasks_path, [record(1, {"peak_mb": 100.0})])  # mined before it was recorded
    with pytest.raises(pytest.UsageError, match="smaller than .* 1536 MiB"):
        _budget_memory(settings, run=True)


def test_a_task_mined_before_the_count_counts_the_runs_of_its_plan(tmp_path: Path, budget: MemoryBudget) -> None:
    """rev60: for a task whose record has no ``verify.twin_runs`` the check at start counted ``RUNS`` + 1 runs (3 ×
    512 MiB: ``--max-total-memory-mb 1100`` refused), though its grading makes 2 (no teardown twin, no ``raises``).
    With a budget given it reads the twin plan of the task's test files at its commit: 1100 holds it; a task whose
    test holds a ``raises`` (an exception-swap twin's plain run) counts 3, and one whose commit cannot be read 3."""
    from helpers.gitrepo import GitRepo

    from pytest_homefield.plugin import _budget_memory
    from pytest_homefield.records import Task
    from pytest_homefield.settings import Settings
    from pytest_homefield.store import write_jsonl_atomic

    repo = GitRepo.init(tmp_path)
    repo.write("tests/test_a.py", "from a import f\n\n\ndef test_a():\n    assert f() == 1\n")
    repo.write("tests/test_b.py", "import pytest\n\nfrom a import f\n\n\ndef test_b():\n    assert f() == 1\n"
               "    with pytest.raises(ValueError):\n        f(2)\n")
    commit = repo.commit("Add the tests")

    def record(test: str, commit: str = commit) -> dict[str, Any]:
        return Task(id=f"{test[-4]}{commit[:11]}", commit=commit, parent="0" * 40, committed_at="", authored_at="",
                    mode="commit", subject="t", message="", prompt="", source_files=[], test_files=[test],
                    test_patch="", gold_patch="", FAIL_TO_PASS=[f"{test}::{test[-9:-3]}"], PASS_TO_PASS=[],
                    verify={"peak_mb": 100.0}).to_dict()

    settings = Settings(root=tmp_path, max_test_memory_mb=512, max_agent_memory_mb=512, max_total_memory_mb=1100)
    write_jsonl_atomic(settings.tasks_path, [record("tests/test_a.py")])
    _budget_memory(settings, run=True)  # before: refused, "smaller than … 1536 MiB"
    for refused in (record("tests/test_b.py"), record("tests/test_a.py", "1" * 40)):
        write_jsonl_atomic(settings.tasks_path, [record("tests/test_a.py"), refused])
        with pytest.raises(pytest.UsageError, match="smaller than .* 1536 MiB"):
            _budget_memory(settings, run=True)



def test_a_local_worker_takes_its_controllers_largest_set(tmp_path: Path, budget: MemoryBudget) -> None:
    """mend60A: a worker of this machine is handed the controller's largest set (``XdistHooks``,
    ``homefield_largest_mb``) and reads no task (before, each worker read every test file of a task recorded before
    its runs count and planned its twins again, only to repeat the controller's answer): the figure given is the one
    checked, and returned; none given, it is found here from the tasks, as the controller finds it."""
    from pytest_homefield.plugin import _budget_memory
    from pytest_homefield.records import Task
    from pytest_homefield.settings import Settings
    from pytest_homefield.store import write_jsonl_atomic

    task = Task(id="0" * 12, commit="1" * 40, parent="0" * 40, committed_at="", authored_at="", mode="commit",
                subject="t", message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[], verify={"peak_mb": 100.0, "twin_runs": 3})
    settings = Settings(root=tmp_path, max_test_memory_mb=512, max_agent_memory_mb=512, max_total_memory_mb=1100)
    write_jsonl_atomic(settings.tasks_path, [task.to_dict()])
    with pytest.raises(pytest.UsageError, match="smaller than .* 1536 MiB"):
        _budget_memory(settings, run=True)  # found here: 3 runs of 512 MiB
    assert _budget_memory(settings, run=True, largest_mb=1000.5) == 1000.5  # the tasks not read
    settings.max_total_memory_mb = 1536
    assert _budget_memory(settings, run=True) == 1536
