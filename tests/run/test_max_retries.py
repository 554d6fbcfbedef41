"""Issue 30: nothing scored at the agent's word. Measured on main: a ``cmd:`` agent that printed
``{"outcome": "rate_limited"}`` on every attempt it could not solve was never scored on those tasks
(``--resume`` retried them for ever), so it ranked 100% against an honest agent of equal skill at 33%.
An unscored attempt is now retried at most ``--max-retries`` times; a rate limit (and, atk9 F5, an infra
the agent's own output claimed) on its last try is scored ``agent_error``, an infra homefield established
on its last try stays unscored but is never retried, and the report ranks on the tasks whose attempts are
all scored."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield

from pytest_homefield.records import Result
from pytest_homefield.run.bookkeeping import done_keys
from pytest_homefield.run.retries import cap_retries, could_kill_worker, crash_result, unscored_tries
from pytest_homefield.store import append_jsonl, read_jsonl


def _result(task: str, outcome: str, attempt: int = 1, error: str | None = None) -> Result:
    return Result(run_id="r", task_id=task, agent="a", attempt=attempt, outcome=outcome, error=error,
                  started_at="2026-01-01T00:00:00+00:00", finished_at="2026-01-01T00:00:01+00:00")


def test_the_last_try_of_a_rate_limit_is_scored_and_an_exhausted_infra_is_done(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    for outcome in ("rate_limited", "infra", "rate_limited"):  # t1: three unscored tries
        append_jsonl(results, _result("t1", outcome, error="429").to_dict())
    append_jsonl(results, _result("t2", "infra").to_dict())  # t2: one
    append_jsonl(results, _result("t3", "solved").to_dict())
    tries = unscored_tries(results)
    assert tries == {("t1", "a", 1, "base"): 3, ("t2", "a", 1, "base"): 1}
    assert done_keys(results) == {("t3", "a", 1)}  # without a cap: unscored attempts are redone
    assert done_keys(results, 2) == {("t1", "a", 1), ("t3", "a", 1)}  # t1 was tried 1 + 2 times
    assert done_keys(results, 0) == {("t1", "a", 1), ("t2", "a", 1), ("t3", "a", 1)}
    capped = cap_retries(_result("t2", "rate_limited", error="429 too many requests"), tries, 1)
    assert capped.outcome == "agent_error" and capped.scored and not capped.solved
    assert capped.error == "rate limited 2 times (--max-retries 1): 429 too many requests"
    assert cap_retries(_result("t2", "rate_limited"), tries, 2).outcome == "rate_limited"  # a retry is left
    assert cap_retries(_result("t2", "infra"), tries, 1).outcome == "infra"  # the environment's: unscored
    claimed = dataclasses.replace(_result("t2", "infra", error="API Error: 500"), claimed=True)  # the agent's word
    assert cap_retries(claimed, tries, 2) == claimed
    assert cap_retries(claimed, tries, 1).error == "reported infra 2 times (--max-retries 1): API Error: 500"
    assert cap_retries(_result("t9", "rate_limited"), {}, 0).error == "rate limited 1 time (--max-retries 0)"


#: An agent that solves the mul task only; on the others it makes a wrong change and, with ``--liar``,
#: declares a rate limit instead of failing.
AGENT = '''import os, sys
prompt = os.environ["HOMEFIELD_PROMPT"].lower()
with open("calc/__init__.py", "a") as f:
    if "mul" in prompt:
        f.write("\\n\\ndef mul(a, b):\\n    return a * b\\n")
        sys.exit(0)
    f.write("\\n\\ndef sub(a, b):\\n    return 0\\n\\n\\ndef neg(a):\\n    return a\\n")
if "--liar" in sys.argv:
    print('{"outcome": "rate_limited", "error": "429 rate limit reached"}')
'''


@pytest.mark.slow
def test_a_declared_rate_limit_is_scored_once_the_retries_are_spent(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    agents = ["--agent", f"honest=cmd:{sys.executable} {script}",
              "--agent", f"liar=cmd:{sys.executable} {script} --liar"]
    proc = homefield(repo, "run", *agents, "--attempts", "1", "--run-id", "r", "--max-retries", "0", "-n", "0",
                     "--sandbox", "none")
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-2000:]
    run_dir = repo / ".homefield" / "runs" / "r"
    liar = [r for r in read_jsonl(run_dir / "results.jsonl") if r["agent"] == "liar"]
    assert sorted(r["outcome"] for r in liar) == ["agent_error", "agent_error", "solved"]
    assert all(r["error"].startswith("rate limited 1 time (--max-retries 0): 429") for r in liar
               if r["outcome"] == "agent_error")
    report = json.loads((run_dir / "report.json").read_text())
    rates = {name: a["pass_at_1"] for name, a in report["agents"].items()}
    assert rates["liar"] == rates["honest"] == pytest.approx(1 / 3, abs=1e-3), rates


#: An agent whose change kills the xdist worker that grades it (the first ancestor of the test process
#: started by execnet), as graded code run without a sandbox can: before, the attempt was never recorded
#: and ``--resume`` redid it for ever.
KILLER = '''with open("calc/__init__.py", "a") as f:
    f.write("""
def _kill_the_grader():
    import os, signal, sys
    if "pytest" not in sys.modules:
        return
    pid = os.getppid()
    for _ in range(8):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            pid_stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return
        if b"exec(eval(sys.stdin.readline()))" in cmd and os.readlink(f"/proc/{pid}/cwd") == "@REPO@":
            os.kill(pid, signal.SIGKILL)  # the run's own worker: never the suite's, whose cwd is elsewhere
            return
        pid = int(pid_stat.rsplit(")", 1)[1].split()[1])


_kill_the_grader()
""")
'''


@pytest.mark.slow
def test_an_attempt_whose_worker_dies_is_recorded_and_scored_once_the_retries_are_spent(
        mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    script = tmp_path / "killer.py"
    script.write_text(KILLER.replace("@REPO@", str(repo.resolve())))
    args = ["run", "--agent", f"killer=cmd:{sys.executable} {script}", "--attempts", "1", "--run-id", "r",
            "--max-retries", "1", "-n", "2", "--sandbox", "none", "--max-tasks", "1"]
    results = repo / ".homefield" / "runs" / "r" / "results.jsonl"
    first = homefield(repo, *args)
    assert "crashed" in first.stdout, first.stdout[-3000:]
    (line,) = read_jsonl(results)
    assert (line["outcome"], line["claimed"], line["scored"]) == ("infra", True, False), line
    assert line["error"].startswith("its xdist worker died while running it"), line
    # hatk37: xdist's own report of the crashed item (its worker no longer has it) ends the try, not refused
    assert not (repo / ".homefield" / "refused.jsonl").exists(), first.stdout[-3000:]
    tries = [r["event"] for r in read_jsonl(results.with_name("tries.jsonl"))]
    assert tries == ["start", "end"], tries
    again = homefield(repo, *args, "--resume")  # its last try: scored as the agent's failure
    assert "crashed" in again.stdout, again.stdout[-3000:]
    last = list(read_jsonl(results))[-1]
    assert (last["outcome"], last["scored"], last["solved"]) == ("agent_error", True, False), last
    assert last["error"].startswith("reported infra 2 times (--max-retries 1): its xdist worker died"), last
    done = homefield(repo, *args, "--resume")  # spent: not run again
    assert "(1 finished before;" in done.stdout and len(list(read_jsonl(results))) == 2, done.stdout[-3000:]


def test_the_crash_record_names_the_attempt_of_a_run_or_an_ablation() -> None:
    tries = {("t1", "a", 2, "no-rule-3"): 1}
    bare = {"agents": {"a": "none"}, "tests": "none"}
    run = crash_result(".homefield/tasks.jsonl::t1::a[2]", run_id="r", tries=tries, max_retries=1, now="N",
                       sandbox=bare, agents={"a"})
    assert run is not None and (run.key, run.outcome, run.claimed, run.started_at) == \
        (("t1", "a", 2, "base"), "infra", True, "N")
    ablation = crash_result(".homefield/ablate/x/plan.json::no-rule-3::t1::a[2]", run_id="x", tries=tries,
                            max_retries=1, sandbox=bare, agents={"a"})
    assert ablation is not None and ablation.key == ("t1", "a", 2, "no-rule-3")
    assert (ablation.outcome, ablation.scored) == ("agent_error", True)  # its one retry was spent
    assert crash_result(".homefield/mine/m/candidates.jsonl::abc", run_id="r", tries={}, max_retries=2,
                        sandbox=bare, agents={"a"}) is None
    assert crash_result(".homefield/tasks.jsonl::t1::z[2]", run_id="r", tries={}, max_retries=2,
                        sandbox=bare, agents={"a"}) is None  # no agent of this session
    # in bubblewrap's PID namespace (agent and test runs) its code cannot signal the worker: the machine's
    boxed = {"agents": {"a": "bwrap", "b": "none"}, "tests": "bwrap"}
    assert not could_kill_worker(boxed, "a") and could_kill_worker(boxed, "b")
    assert could_kill_worker({"agents": {"a": "bwrap"}, "tests": "landlock"}, "a")
    machine = crash_result(".homefield/tasks.jsonl::t1::a[2]", run_id="r", tries={("t1", "a", 2, "base"): 5},
                           max_retries=1, sandbox=boxed, agents={"a", "b"})
    assert machine is not None and (machine.outcome, machine.claimed, machine.scored) == ("infra", False, False)
