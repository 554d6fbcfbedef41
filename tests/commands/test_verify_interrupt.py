"""An interrupted ``homefield verify`` says how many tasks it graded, never that oracle solves "all" (nu18 on
pypa/packaging: Ctrl-C after 2 of 8 said "oracle solves all 2 selected tasks (of 26)"); a ``-k`` selection
run to its end is no interruption (a first fix, comparing the graded ids with the plan, fired on it)."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.attack_repo import build, task_for, user_checkout
from helpers.e2e_repo import cli_env

from pytest_homefield.agents.attacks import ATTACKS
from pytest_homefield.commands.verify import oracle_line
from pytest_homefield.records import Task

#: A pytest plugin for the verify session: SIGINT to its own process once the first attempt has finished,
#: as a Ctrl-C at that moment would (the signal arrives before the next item starts, whatever the timing).
STOPPER = """\
import os
import signal


def pytest_runtest_logfinish(nodeid, location):
    os.kill(os.getpid(), signal.SIGINT)
"""


def test_the_oracle_line_says_all_only_of_a_session_run_to_its_end() -> None:
    assert oracle_line(3, 3, 3, False) == "homefield verify: oracle solves all 3 tasks in this environment"
    assert oracle_line(1, 3, 1, False) == ("homefield verify: oracle solves the 1 selected task (of 3) in this "
                                           "environment")
    assert oracle_line(2, 26, 8, True) == ("homefield verify: interrupted: 2 of 8 tasks graded; oracle solved each "
                                           "of them")
    assert oracle_line(0, 26, None, True) == "homefield verify: interrupted: 0 of 26 tasks graded"
    # exc35: the tasks graded are those any agent's attempt was graded on, the attacks' verdict's count too
    assert oracle_line(2, 26, 3, True, oracle=1) == ("homefield verify: interrupted: 2 of 3 tasks graded; oracle "
                                                     "graded 1 of them and solved each")


def _stopped_verify(tmp_path: Path, copies: int, *args: str) -> tuple[Path, Task, subprocess.CompletedProcess[str]]:
    """``homefield verify ARGS -n 0`` on a repository of ``copies`` copies of one task, stopped by Ctrl-C
    (:data:`STOPPER`) once its first attempt has finished: (the repository, the task, the process)."""
    fx = build(tmp_path / "fixture")
    task = task_for(fx, canaries=1)
    task = dataclasses.replace(task, test_cmd=task.test_cmd + " -p no:anyio")
    repo = user_checkout(fx, task, tmp_path / "repo", copies=copies)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "hf_stopper.py").write_text(STOPPER)
    env = cli_env()
    env["PYTHONPATH"] = str(plugins) + ((":" + env["PYTHONPATH"]) if env.get("PYTHONPATH") else "")
    # SIGINT back to its default in the child: a suite started with it ignored (``.ci/run &``) passes that on
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "verify", *args, "-n", "0", "--",
                           "-p", "hf_stopper"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return repo, task, proc


@pytest.mark.slow
def test_an_interrupted_verify_says_how_many_it_graded(tmp_path: Path) -> None:
    repo, task, proc = _stopped_verify(tmp_path, 3)
    out = proc.stdout
    assert "homefield verify: interrupted: 1 of 3 tasks graded; oracle solved each of them" in out, out[-3000:]
    assert "oracle solves" not in out and proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    # lbl35: it stops as homefield mine does, with its own lines: none of pytest's "!!! KeyboardInterrupt !!!"
    # banner or its traceback line (modes.ModePlugin.pytest_runtestloop, the one mechanism of both)
    both = out + proc.stderr
    assert "KeyboardInterrupt" not in both and "Traceback" not in both and "!!!" not in both, both[-3000:]
    assert "Interrupted: the attempts that were running were stopped and not recorded" in out, out[-3000:]
    assert out.rstrip().splitlines()[-1].startswith("homefield verify: interrupted: "), out[-3000:]
    # -k: one task of three selected and graded to the end: not an interruption
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "verify", "-n", "0", "-k", f"{task.id}-2"],
                          cwd=repo, env=cli_env(), capture_output=True, text=True, timeout=300)
    assert "homefield verify: oracle solves the 1 selected task (of 3) in this environment" in proc.stdout, \
        proc.stdout[-3000:]
    assert proc.returncode == 0


@pytest.mark.slow
def test_an_interrupted_verify_attacks_says_how_many_attacks_never_ran(tmp_path: Path) -> None:
    """nu21: an interrupted ``verify --attacks`` printed "caught K of K attacks"; the attack attempts it never
    ran went unmentioned. The session's collection gives the plan: stopped after its first attempt, it says
    how many never ran and exits as interrupted."""
    _, _, proc = _stopped_verify(tmp_path, 1, "--attacks")
    out = proc.stdout
    heads = [line for line in out.splitlines() if line.startswith("homefield verify: ") and "attack" in line]
    assert heads and heads[0].startswith("homefield verify: interrupted: "), out[-3000:]
    never = re.search(r"; (\d+) of (\d+) attack attempts never ran: no verdict on them$", heads[0])
    # the first attempt was oracle's or one attack's: every other attack attempt never ran
    assert never and int(never[2]) >= len(ATTACKS) // 2 and int(never[1]) >= int(never[2]) - 1, heads[0]
    assert "caught 0 of 0" not in out and "caught 0 of the 0" not in out, out[-3000:]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]


def test_the_time_line_is_gradings_times_seconds_over_workers() -> None:
    from helpers.report_tasks import plain_task

    from pytest_homefield.commands.verify import time_line

    task = dataclasses.replace(plain_task("t1"), verify={"stability_runs": 2, "commit_s": 80.0})
    assert time_line([task], 46, 2, {}) == ("homefield verify: 46 gradings on 1 task, about 40s each (measured at "
                                            "mining (1 task; at a load not recorded, so no bound: grading also runs "
                                            "canaries and the whole hidden test files, a busier machine at mining ran "
                                            "them slower)): about 15m20s with 2 workers, up to 1h32m on a "
                                            "loaded machine (×2.0 of 46m00s, its seconds at mining as measured ×3, "
                                            "since a grading runs more than mining's one run of the commit's tests: "
                                            "an attempt also runs its agent and waits for the machine's phase lock "
                                            "and memory, which other sessions set)")
    line = time_line([task], 46, 1, {"t1": [10.0, 20.0]})
    assert str(line).endswith("about 15s each (earlier graded attempts (1 task)): about 11m30s with 1 worker, up to "
                              "23m00s on a loaded machine (×2.0: an attempt also runs its agent and waits for the "
                              "machine's phase lock and memory, which other sessions set)")
    assert "about 0.6s each" in str(time_line([task], 46, 2, {"t1": [0.6]}))  # under 10 s: tenths
    assert time_line([plain_task("t2")], 46, 2, {}) is None  # nothing known: no guess


def test_the_estimate_counts_the_sessions_start_and_no_idle_worker() -> None:
    """ops48: a verify of one grading at ``-n 2`` said "about 2s …, up to 4s" and took 11.9 s: 8.4 s went before the
    line (pytest, the run's folder, the xdist workers, collection) and the grading's 4.3 s were halved over a worker
    that had none. The line counts the session's start as measured (``startup_s``, in both ends) and shares the
    gradings among no more workers than there are gradings; the pace says it again so."""
    from helpers.report_tasks import plain_task

    from pytest_homefield.commands.verify import Pace, time_estimate

    said = time_estimate([plain_task("t1")], 1, 2, {"t1": [4.0]}, startup_s=8.0)
    assert said is not None
    line, e = said
    assert line.endswith("about 4.0s each (earlier graded attempts (1 task)): about 12s with 2 workers (8s of it the "
                         "session's start, measured), up to 16s on a loaded machine (×2.0: an attempt also runs its "
                         "agent and waits for the machine's phase lock and memory, which other sessions set)"), line
    assert (e.first_s, e.last_s) == (12.0, 16.0)
    pace = Pace(4, 0.0, lambda: 5.0, e)
    assert pace.done(False, 9.0) == ("homefield verify: 1 of 4 attempts ended in 9s; about 5s more by the progress "
                                     "line's ETA (14s in all; said at the start: about 12s, up to 16s)")
    assert "about 2m00s with 2 workers, up to" in str(time_estimate([plain_task("t1")], 60, 2, {"t1": [4.0]}))
    # under a second of start-up is not named (it would read "0s of it the session's start"), but counted
    quick = time_estimate([plain_task("t1")], 1, 1, {"t1": [4.0]}, startup_s=0.7)
    assert quick is not None and "session's start" not in quick[0] and quick[1].first_s == 4.7, quick


def test_the_process_age_is_the_time_since_the_process_started() -> None:
    """:func:`process_age` in a process that slept 1.5 s after its start says at least that, and not much more."""
    code = ("import time; time.sleep(1.5); from pytest_homefield.commands.verify import process_age; "
            "print(process_age())")
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    took = time.monotonic() - began
    assert 1.5 <= float(out.stdout) <= took + 0.1


def test_the_estimate_is_a_range_whose_high_end_is_the_load_seen() -> None:
    """ops41: ``verify --attacks`` said about half of what it took under load (10-16 min a task): the line counted the
    gradings' test runs and host work alone, not the agents' work and the waits for the machine's phase lock and
    memory. It gives a range now: that figure, and that figure × the load (:data:`LOADED`, or what the tasks'
    earlier attempts took in all over their test runs and host work when more)."""
    from pytest_homefield.commands.verify import LOADED, Estimate

    assert LOADED == 2.0
    idle = Estimate.of(600.0, [])
    assert (idle.low_s, idle.high_s, idle.measured, idle.took) == (600.0, 1200.0, 0, None)
    assert idle.words(2) == ("about 10m00s with 2 workers, up to 20m00s on a loaded machine (×2.0: an attempt also "
                             "runs its agent and waits for the machine's phase lock and memory, which other sessions "
                             "set)")
    calm = [{"test_s": 10.0, "host_s": 2.0, "wall_s": 1.0, "wait_s": 0.0}] * 3  # an earlier session on an idle machine
    assert Estimate.of(600.0, calm).factor == LOADED  # says nothing of this one's load
    loaded = [{"test_s": 10.0, "host_s": 2.0, "wall_s": 6.0, "wait_s": 18.0},  # 36 s in all for 12 s of grading
              {"test_s": 0.0, "wall_s": 500.0},  # ended before grading: not a grading's measure
              {"test_s": 4.0, "host_s": None, "wall_s": 2.0, "wait_s": -1.0}]  # a bad field counts as nothing
    e = Estimate.of(600.0, loaded)
    assert e.measured == 2 and e.took == pytest.approx((36.0 + 6.0) / 16.0) and e.high_s == pytest.approx(600 * 42 / 16)
    assert e.words(1) == ("about 10m00s with 1 worker, up to 26m15s on a loaded machine (×2.6: what the 2 earlier "
                          "attempts of these tasks took in all, agents and waits included, over their test runs and "
                          "host work)")


def test_the_pace_is_the_progress_lines_eta_said_after_the_first_graded_attack_and_each_quarter() -> None:
    """exc35 (tomli: "about 9m50s", 63m52s taken, 4155 s of it waiting for the machine's phase lock and memory, which
    no estimate made before the session can know): as attempts end, the time left is said again. ops43: by the
    progress line's ETA (each attempt left at its task's median so far, over the attempts run at once), not a second
    ETA of its own (elapsed over attempts ended, times those left), which counted the quick oracle attempt as one
    more attack: here 6m20s in all at the half, of 7m10s (oracle 10 s, then 7 attacks of 60 s, one at a time)."""
    from pytest_homefield.commands.verify import Estimate, Pace
    from pytest_homefield.terminal.progress import Progress

    now = [1000.0]  # the clock, in seconds

    def clock() -> float:
        return now[0]
    progress = Progress("run", clock=clock, name="verify", group=lambda key: key.rsplit("::", 1)[0])
    keys = ["f::t1::oracle[1]"] + [f"f::t1::attack-a{n}[1]" for n in range(7)]
    progress.set_total(len(keys), keys)
    pace = Pace(len(keys), clock(), progress.eta_s, Estimate.of(300.0, [], (0.5, 2.0)))
    said = []
    for key, took in zip(keys, [10.0] + [60.0] * 7, strict=True):
        progress.start(key, key)
        now[0] += took
        progress.finish(key, "unsolved")
        said.append(pace.done("attack" in key, now[0]))
    start = "; said at the start: about 5m00s, up to 10m00s)"
    assert said == [None,
                    "homefield verify: 2 of 8 attempts ended in 1m10s; about 3m30s more by the progress line's ETA "
                    f"(4m40s in all{start}", None,
                    "homefield verify: 4 of 8 attempts ended in 3m10s; about 4m00s more by the progress line's ETA "
                    f"(7m10s in all{start}", None,
                    "homefield verify: 6 of 8 attempts ended in 5m10s; about 2m00s more by the progress line's ETA "
                    f"(7m10s in all{start}", None, None]
    blind = Pace(4, 0.0)  # no progress line (none registered): no figure of its own either
    assert [blind.done(True, 5.0), blind.done(False, 9.0)] == [
        "homefield verify: 1 of 4 attempts ended in 5s; no ETA yet (the progress line's: ETA ?)",
        "homefield verify: 2 of 4 attempts ended in 9s; no ETA yet (the progress line's: ETA ?)"]


def test_the_high_end_scales_with_the_machines_load_now(tmp_path: Path) -> None:
    """ops43: ``verify --attacks`` on pluggy under load 10-15 on 2 CPUs took ×3.1 its one-figure estimate, above the
    range's ×2: the high end is also the load average over the CPUs this process may use (:func:`machine_load`, read
    from ``os.getloadavg``, the affinity and the cgroup's CPU quota, v2 or v1, its folders found through
    ``mountinfo`` as the sandboxes' cgroups are: ops46), when that is more."""
    from pytest_homefield.commands.verify import Estimate, machine_load

    crowded = Estimate.of(600.0, [], (13.4, 2.0))
    assert crowded.factor == pytest.approx(6.7) and crowded.high_s == pytest.approx(4020.0)
    assert crowded.words(2) == ("about 10m00s with 2 workers, up to 1h07m on a loaded machine (×6.7: the machine's "
                                "load average is 13.4 on 2 CPUs now: each process wanting a CPU gets about 1/6.7 of "
                                "one)")
    took = [{"test_s": 10.0, "host_s": 2.0, "wall_s": 6.0, "wait_s": 18.0}]  # ×3 in all
    assert Estimate.of(600.0, took, (5.0, 2.0)).factor == pytest.approx(3.0)  # the earlier attempts' ×3 wins
    assert Estimate.of(600.0, [], (1.0, 2.0)).factor == 2.0  # an idle machine: LOADED
    assert Estimate.of(600.0, [], (9.0, 0.0)).factor == 2.0  # CPUs not measured: no load figure
    affinity = float(len(os.sched_getaffinity(0)))
    # (proc/self/cgroup, [(mount root, mount point under tmp, fs type, super options)], files, CPUs)
    v2 = ("/", "cg", "cgroup2", "rw,nsdelegate")
    cases = {"v2-quota": ("0::/a/b\n", [v2], {"cg/a/b/cpu.max": "150000 100000\n"}, min(affinity, 1.5)),
             "v2-max": ("0::/a\n", [v2], {"cg/a/cpu.max": "max 100000\n"}, affinity),
             # a quota above this process's own cgroup bounds it too (it read its own "max" and stopped)
             "v2-parent-quota": ("0::/a/b\n", [v2], {"cg/a/b/cpu.max": "max 100000\n",
                                                     "cg/a/cpu.max": "100000 100000\n"}, 1.0),
             # mounted elsewhere than /sys/fs/cgroup, and a cgroup namespace whose root is this cgroup
             "v2-elsewhere": ("0::/\n", [("/", "mnt/unified", "cgroup2", "rw")],
                              {"mnt/unified/cpu.max": "120000 100000\n"}, min(affinity, 1.2)),
             "v1-quota": ("4:cpu,cpuacct:/c\n1:memory:/c\n",
                          [("/", "cpu,cpuacct", "cgroup", "rw,cpu,cpuacct"), ("/", "memory", "cgroup", "rw,memory")],
                          {"cpu,cpuacct/c/cpu.cfs_quota_us": "50000\n", "cpu,cpuacct/c/cpu.cfs_period_us": "100000\n"},
                          1.0),  # half a CPU is never under one
             # a container's v1 hierarchy: its cgroup is the mount's root, mounted as "cpu"
             "v1-container": ("4:cpu,cpuacct:/docker/x\n", [("/docker/x", "cpu", "cgroup", "rw,cpu,cpuacct")],
                              {"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1.0),
             "v1-none": ("4:cpu:/\n", [("/", "cpu", "cgroup", "rw,cpu")],
                         {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, affinity),
             "none": ("", [], {}, affinity)}
    for name, (cgroup, mounts, files, cpus) in cases.items():
        root, proc = tmp_path / name, tmp_path / name / "proc"
        (proc / "self").mkdir(parents=True)
        (proc / "self" / "cgroup").write_text(cgroup)
        (proc / "self" / "mountinfo").write_text("".join(
            f"{30 + i} 25 0:{30 + i} {mroot} {root / point} rw,nosuid shared:9 - {fstype} {fstype} {options}\n"
            for i, (mroot, point, fstype, options) in enumerate(mounts)))
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        load, got = machine_load(proc)
        assert got == pytest.approx(cpus) and load == pytest.approx(os.getloadavg()[0], abs=2.0), name
    assert machine_load()[1] >= 1.0


def test_the_high_end_scales_by_the_load_now_over_the_load_its_seconds_were_timed_at() -> None:
    """ops46 (ops43's pluggy verify): its gradings' seconds were timed at load 10-17 on 2 CPUs and the session
    started at load 14.7, so the high end said ×7.3 ("up to 1h12m" of 9m50s) where it took ×2.3 (22m35s): the
    load was counted twice. Each record now keeps the load per CPU it ran at (``load_per_cpu``), and the high
    end scales by the load per CPU now over then; a record without it counts as an idle machine, as before."""
    from pytest_homefield.commands.verify import Estimate

    def records(n: int, load: float | None) -> list[dict[str, float]]:  # ×2.3 in all: 13 s of work, 16.9 s more
        return [{"test_s": 10.0, "host_s": 3.0, "wall_s": 4.9, "wait_s": 12.0,
                 **({"load_per_cpu": load} if load is not None else {})} for _ in range(n)]
    now = (14.7, 2.0)
    timed_loaded = Estimate.of(590.0, records(50, 7.0), now)
    assert timed_loaded.then == pytest.approx(7.0) and timed_loaded.scaled == pytest.approx(1.05)
    assert timed_loaded.factor == pytest.approx(2.3)  # what the attempts took in all wins: ×7.35 before
    assert timed_loaded.words(2).startswith("about 9m50s with 2 workers, up to 22m36s on a loaded machine (×2.3: what")
    assert Estimate.of(590.0, records(50, None), now).factor == pytest.approx(7.35)  # old records: as before
    assert Estimate.of(590.0, records(50, 0.4), now).factor == pytest.approx(7.35)  # timed on an idle machine
    half = Estimate.of(590.0, records(25, 7.0) + records(25, None), now)  # weighted by their seconds: 4.0
    assert half.then == pytest.approx(4.0) and half.factor == pytest.approx(2.3)
    quiet = Estimate.of(590.0, records(5, 1.5), (30.0, 2.0))  # much busier now than then: ×10
    assert quiet.factor == pytest.approx(10.0)
    assert quiet.words(2).endswith("(×10.0: the machine's load average is 30.0 on 2 CPUs now: each process wanting "
                                   "a CPU gets about 1/15.0 of one, against 1/1.5 when these tasks' earlier "
                                   "gradings were timed)")




@pytest.mark.slow
def test_a_verify_says_the_progress_lines_eta_on_lines_of_their_own(tmp_path: Path) -> None:
    """ops43: in a real session (oracle and three attacks, one process, into a pipe) the pace lines say the progress
    line's ETA once it counted the attempt that ended (the pace is said after pytest's ``logfinish``, which counts
    it), each on a line of its own: a log read ``uuhomefield verify: 12 of 50 attempts ended in 3m40s; at that pace
    …`` after pytest's letters."""
    fx = build(tmp_path / "fixture")
    task = task_for(fx, canaries=1)
    task = dataclasses.replace(task, test_cmd=task.test_cmd + " -p no:anyio",
                               verify={"stability_runs": 1, "commit_s": 1.0})  # as mined: the start line's figure
    repo = user_checkout(fx, task, tmp_path / "repo")
    picked = "(oracle and not twin) or delete-tests or decoy-hidden or conftest-hookwrapper"
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "verify", "--attacks", "-n", "0",
                           "--sandbox", "none", "-k", picked],
                          cwd=repo, env=cli_env(), capture_output=True, text=True, timeout=600)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    # the session's start is named where it took a second or more (a quick start on an idle machine: not)
    start = re.search(r"^homefield verify: 4 gradings on 1 task, .*: about (\S+) with 1 worker(?: \(\S+ of it the "
                      r"session's start, measured\))?, up to (\S+) on a loaded machine "
                      r"\(×\d+\.\d(?: of \S+, [^:]*)?: .*\)$", out, re.M)
    assert start, out[-3000:]
    paces = re.findall(r"^homefield verify: (\d) of 4 attempts ended in \S+; about \S+ more by the progress line's "
                       rf"ETA \(\S+ in all; said at the start: about {start[1]}, up to {start[2]}\)$", out, re.M)
    assert paces == ["1", "2", "3"], out[-3000:]
    assert "at that pace" not in out and "uhomefield" not in out, out[-3000:]


def test_the_low_end_scales_down_when_the_machine_is_less_loaded_now_than_when_its_gradings_were_timed() -> None:
    """ops64 (more-itertools: "about 2m12s", took 45 s): the earlier gradings' seconds were timed under load and the
    estimate said them as they were on a quieter machine. Now the low end is scaled by the load per CPU now over
    then when that is under 1; the high end is the seconds as measured (eta46: the same gradings took longer at a
    lower load, so the eased high end said under half)."""
    from pytest_homefield.commands.verify import Estimate

    timed_busy = [{"test_s": 10.0, "host_s": 1.0, "wall_s": 1.0, "wait_s": 0.0, "load_per_cpu": 3.0}] * 4
    quiet = Estimate.of(132.0, timed_busy, (2.0, 2.0))  # load per CPU 1.0 now, 3.0 then
    assert quiet.eased == pytest.approx(1 / 3) and quiet.base_s == pytest.approx(44.0)
    assert quiet.first_s == pytest.approx(44.0) and quiet.high_s == pytest.approx(264.0)
    assert quiet.words(1) == ("about 44s with 1 worker (its gradings' seconds ×0.33: timed at a load of 3.0 per "
                              "CPU, 1.0 now), up to 4m24s on a loaded machine (×2.0 of 2m12s, its gradings' seconds "
                              "as measured: an attempt also runs its agent and waits for the machine's phase lock and "
                              "memory, which other sessions set)")
    assert Estimate.of(132.0, timed_busy, (0.0, 0.0)).first_s == 132.0  # the load now not measured: as measured
    assert Estimate.of(132.0, timed_busy, (9.0, 2.0)).first_s == 132.0  # busier now: the high end alone


def test_the_range_holds_what_more_itertools_verifies_took_loaded_and_idle() -> None:
    """eta46: the first verify of more-itertools said "about 7s" and took 77 s (load 2.3 per CPU at -n 2, 6 s of
    start-up); again on a quieter machine (0.6-3.0 per CPU) it took 106 s. Its figures were the mined seconds ÷ the
    load per CPU at mining (up to ÷18), which that load never slowed them by. A verify after r45's (its gradings
    timed at 2.3 per CPU) on an idle machine eased them to 1/2.3 at both ends and took 106 s. The range now holds
    each session's time."""
    from helpers.recorded_timings import MIT_GRADED, mit_tasks

    from pytest_homefield.commands.verify import time_estimate

    tasks = mit_tasks()
    for machine, took in (((4.6, 2.0), 77.0), ((1.2, 2.0), 106.0), ((0.4, 2.0), 106.0)):
        first = time_estimate(tasks, 8, 2, {}, machine=machine, startup_s=6.0)
        assert first is not None and first[1].first_s <= took <= first[1].last_s, (machine, took, first[0])
    graded = {f"t{i}": [test_s + host_s] for i, (test_s, host_s, _) in enumerate(MIT_GRADED)}
    earlier = [{"test_s": t, "host_s": h, "wall_s": 0.02, "wait_s": 0.0, "load_per_cpu": load}
               for t, h, load in MIT_GRADED]
    for machine, took in (((0.4, 2.0), 106.0), ((4.6, 2.0), 77.0)):
        again = time_estimate(tasks, 8, 2, graded, earlier=earlier, machine=machine, startup_s=6.0)
        assert again is not None and again[1].first_s <= took <= again[1].last_s, (machine, took, again[0])


def test_a_first_verify_scales_its_mined_seconds_from_the_load_they_were_timed_at() -> None:
    """usr66 on jd/tenacity: a first verify of 27 tasks at -n 2 at a load of 19.0 on 2 CPUs said "about 7s …, up to
    18m45s on a loaded machine (×9.5 of 1m58s, its seconds at mining as measured ×3 …)" and took 38.8 s: the high
    end scaled seconds timed at 4.1-14.2 per CPU by the whole load now, as if they were timed on an idle machine. It
    scales them by the load now over the load they were timed at (at least :data:`LOADED`)."""
    from helpers.recorded_timings import tenacity_tasks

    from pytest_homefield.commands.verify import LOADED, time_estimate

    said = time_estimate(tenacity_tasks(), 27, 2, {}, machine=(19.0, 2.0), startup_s=1.0)
    assert said is not None and said[1].first_s <= 38.8 <= said[1].last_s, said[0]
    assert said[1].high_s <= LOADED * said[1].planned_s * 1.01, said[0]
    assert "when these tasks' seconds at mining were timed" not in said[0]  # ×2.0, the allowance, not the load


@pytest.mark.xfail(strict=True, reason="eta46: a verify of the demo's 8 tasks at load 4.7 per CPU took 16.3 s; its "
                   "line said 9-13 s: each grading took 2.4x its earlier gradings' seconds (timed at 2.5 per CPU), "
                   "where the load per CPU now over then is 1.9 and LOADED 2.0, and the session's end (its reports, "
                   "about 1 s) is not counted. plan66: their product (20.5 s) would hold it but said 594 s of a "
                   "more-itertools run that took 254 s (benchmarks/time_estimates.py), so the more of the two stays")
def test_the_range_holds_a_demo_verify_on_a_machine_busier_than_its_gradings_were() -> None:
    """eta46, measured: the demo (``homefield demo``) after its run (oracle's gradings 0.7-1.2 s each at 2.5 per CPU),
    verified at ``-n 2`` with the machine's load average at 9.4 on 2 CPUs and 6 s of start-up."""
    from helpers.recorded_timings import DEMO_ETA46
    from helpers.report_tasks import plain_task

    from pytest_homefield.commands.verify import time_estimate

    tasks = [plain_task(f"t{i}") for i in range(len(DEMO_ETA46))]
    earlier = [{"test_s": s, "host_s": 0.0, "wall_s": 0.015, "wait_s": 0.0, "load_per_cpu": 2.47} for s in DEMO_ETA46]
    said = time_estimate(tasks, 8, 2, {f"t{i}": [s] for i, s in enumerate(DEMO_ETA46)}, earlier=earlier,
                         machine=(9.4, 2.0), startup_s=6.0)
    assert said is not None and said[1].first_s <= 16.3 <= said[1].last_s, said[0]


def test_a_busier_machine_raises_the_high_end_by_the_more_of_the_allowance_and_the_load_ratio_not_both() -> None:
    """plan66: more-itertools' oracle run at -n 2 started at a load of 21.9 on 2 CPUs after r45's verify timed its
    gradings at 2.3 per CPU (the load ratio 4.7) and took 254 s, each grading 3.25x its history: the range as
    verify's line makes it holds that, up to 299 s; the allowance times the load ratio (eta46's open question) said up
    to 594 s, 2.3x what it took. The demo eta46 verified (2.4x, the ratio 1.9) stays a strict xfail above."""
    from helpers.recorded_timings import MIT_GRADED
    from helpers.report_tasks import plain_task

    from pytest_homefield.commands.verify import time_estimate

    tasks = [plain_task(f"t{i}") for i in range(len(MIT_GRADED))]
    earlier = [{"test_s": t, "host_s": h, "wall_s": 0.0, "wait_s": 0.0, "load_per_cpu": load}
               for t, h, load in MIT_GRADED]
    said = time_estimate(tasks, 8, 2, {f"t{i}": [t + h] for i, (t, h, _) in enumerate(MIT_GRADED)},
                         earlier=earlier, machine=(21.9, 2.0), startup_s=4.4)
    assert said is not None and said[1].first_s <= 254.0 <= said[1].last_s <= 1.5 * 254.0, said[0]
