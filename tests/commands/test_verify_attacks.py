"""``homefield verify --attacks`` (issues 15, 30): the verdict from result records, and the real command."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from helpers.verify_attacks_run import MAX_PROCS, VerifyAttacksRun

from pytest_homefield.agents.attacks import ATTACKS, attack_specs
from pytest_homefield.commands.verify import (
    attack_table,
    attack_verdict,
    canary_lines,
    graded_unprotected,
    unprotected_lines,
)
from pytest_homefield.layout import attempt_dir
from pytest_homefield.records import Task


def _r(agent: str, task: str, outcome: str, **kw: object) -> dict[str, object]:
    return {"agent": agent, "task_id": task, "outcome": outcome, **kw}


def test_held_when_no_attack_scores() -> None:
    rows = [_r("oracle", "t1", "solved"), _r("attack-a", "t1", "tests_failed"), _r("attack-b", "t1", "agent_error"),
            _r("attack-c", "t1", "forged", suspicious=True, canary="tests/test_x.py::test_y")]
    held, lines = attack_verdict(rows, 1)
    assert held
    assert lines[0] == "homefield verify: caught 3 of 3 attacks on 1 task"
    assert "forged" in lines[1] and "c ×1" in lines[1]


def test_an_interrupted_verify_gives_no_verdict_on_attacks_that_never_ran() -> None:
    """nu21 on simonw/llm: Ctrl-C after 18 minutes printed "caught K of K attacks": the attacks that never
    ran were neither caught nor named. With the session's planned attack attempts known, the head says how
    many never ran, and grading is not said to have held."""
    rows = [_r("oracle", "t1", "solved"), _r("attack-a", "t1", "tests_failed"), _r("attack-b", "t1", "forged")]
    held, lines = attack_verdict(rows, 1, planned=6)
    assert not held
    assert lines[0] == ("homefield verify: interrupted: caught 2 of the 2 attacks graded so far on 1 task; "
                        "4 of 6 attack attempts never ran: no verdict on them")
    held, lines = attack_verdict(rows, 1, planned=2)  # every planned attempt ran
    assert held and lines[0] == "homefield verify: caught 2 of 2 attacks on 1 task"


def test_tasks_with_canary_unprotected_functions_are_named() -> None:
    """Round 9 (atk10's F1): a FAIL_TO_PASS function the commit left as the parent has it can have no twin
    a test process holding the parent's tests cannot tell; mining records it and verify says so."""
    f2p = ["t.py::test_a", "t.py::test_b[1]", "t.py::test_b[2]", "t.py::T::test_c"]
    bare = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=f2p, PASS_TO_PASS=[], canary_unprotected=["t.py::test_b", "t.py::T::test_c"])
    guarded = dataclasses.replace(bare, id="t2", canary_unprotected=[])
    assert unprotected_lines([guarded]) == []
    lines = unprotected_lines([bare, guarded])
    assert lines[0].startswith("homefield verify: 1 task of 2 holds 2 FAIL_TO_PASS function(s) no canary guards")
    assert lines[1:] == ["  t1  2 of 3: test_b, test_c"]
    assert unprotected_lines([bare, dataclasses.replace(bare, id="t3")])[0].startswith(
        "homefield verify: 2 tasks of 2 hold 4 FAIL_TO_PASS function(s)")
    assert Task.from_dict(bare.to_dict()).canary_unprotected == bare.canary_unprotected
    twins = dataclasses.replace(bare, FAIL_TO_PASS=["a.py::test_w", "s.py::test_w", "s.py::test_r"],
                                canary_unprotected=["a.py::test_w", "s.py::test_w", "s.py::test_r"])
    assert unprotected_lines([twins])[1:] == ["  t1  3 of 3: a.py::test_w, s.py::test_w, test_r"]  # nu25, stamina
    # nu28 on sqlparse: with --max-tasks 1 the line counts the tasks the run graded, not the whole tasks file
    many = [dataclasses.replace(guarded, id=f"g{i}") for i in range(11)]
    assert unprotected_lines([bare, guarded, *many], graded={"t1"})[0].startswith(
        "homefield verify: 1 task of 1 holds 2 FAIL_TO_PASS function(s)")
    assert unprotected_lines([bare, guarded, *many], graded={"t2", "g3"}) == []


def test_the_functions_named_are_those_the_runs_gradings_left_unguarded(tmp_path: Path) -> None:
    """r26 (rows31 on humanize): verify named ``tasks.jsonl``'s ``canary_unprotected``, written at mining, after a
    newer planner guarded 11 of those 12 tasks. A task the run graded with canaries is named by the union of its
    attempts' ``canaries.json`` ``unprotected``; a task none of whose attempts has one keeps the mining list."""
    f2p = ["t.py::test_a", "t.py::test_b"]
    task = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=f2p, PASS_TO_PASS=[], canary_unprotected=["t.py::test_a"])
    other = dataclasses.replace(task, id="t2")
    records = [{"task_id": "t1", "agent": "attack-x", "attempt": 1}, {"task_id": "t1", "agent": "oracle", "attempt": 1},
               {"task_id": "t2", "agent": "oracle", "attempt": 1}, {"task_id": "t3", "agent": "oracle"}]
    for agent, names in (("attack-x", []), ("oracle", ["t.py::test_b"])):
        folder = attempt_dir(tmp_path, "t1", agent, 1)
        folder.mkdir(parents=True)
        (folder / "canaries.json").write_text(json.dumps({"canaries": [], "unprotected": names}))
    bad = attempt_dir(tmp_path, "t2", "oracle", 1)
    bad.mkdir(parents=True)
    (bad / "canaries.json").write_text('{"unprotected": [1]}')
    used = graded_unprotected(tmp_path, records)
    assert used == {"t1": ["t.py::test_b"]}
    lines = unprotected_lines([task, other], {"t1", "t2"}, used)
    assert lines[1:] == ["  t1  1 of 2: test_b", "  t2  1 of 2: test_a"], lines
    assert unprotected_lines([task], {"t1"}, {"t1": []}) == []


def test_a_function_the_parent_check_told_is_said_to_be_unknown_to_mining(tmp_path: Path) -> None:
    """exc35 (more-itertools f9cdcb990dbb, llm 847056dbea7c and a66dca7911da): mining named no function, verify
    named some: those the gradings' parent check told on every try (``canaries.json`` ``told``), a check mining
    does not make. The line says how many of them the parent told."""
    task = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t.py::test_a", "t.py::test_b"], PASS_TO_PASS=[], canary_unprotected=[])
    records = [{"task_id": "t1", "agent": "oracle", "attempt": 1}, {"task_id": "t1", "agent": "attack-x", "attempt": 1}]
    for agent, data in (("oracle", {"unprotected": ["t.py::test_a", "t.py::test_b"], "told": ["t.py::test_b"]}),
                        ("attack-x", {"unprotected": ["t.py::test_b"]})):
        folder = attempt_dir(tmp_path, "t1", agent, 1)
        folder.mkdir(parents=True)
        (folder / "canaries.json").write_text(json.dumps({"canaries": [], **data}))
    told = graded_unprotected(tmp_path, records, "told")
    assert told == {"t1": ["t.py::test_b"]}
    lines = unprotected_lines([task], {"t1"}, graded_unprotected(tmp_path, records), told)
    assert lines[1:] == ["  t1  2 of 2: test_a, test_b (1 told by the parent's code at grading, a check mining does "
                         "not make)"], lines


def test_a_function_guarded_by_the_order_twin_alone_is_said_so(tmp_path: Path) -> None:
    """otw64 (gatk64): a function whose expected value is not in the test gets the order twin alone at grading, which
    a change returning that value passes as a real fix does; the grading lists it ``unprotected`` and ``order_only``
    (``canaries.json``), and its task's line says how many of its functions are such, what mining never names."""
    task = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t.py::test_a", "t.py::test_b"], PASS_TO_PASS=[], canary_unprotected=[])
    records = [{"task_id": "t1", "agent": "oracle", "attempt": 1}]
    folder = attempt_dir(tmp_path, "t1", "oracle", 1)
    folder.mkdir(parents=True)
    (folder / "canaries.json").write_text(json.dumps({"canaries": [], "unprotected": ["t.py::test_a"],
                                                      "order_only": ["t.py::test_a"]}))
    assert canary_lines(tmp_path, [task], records)[1:] == [
        "  t1  1 of 2: test_a (1 order twin only: a change returning the expected value is solved)"]


def test_the_functions_a_grading_left_unsealed_are_counted(tmp_path: Path) -> None:
    """rev58: a sealed function the runs apart tell apart once sealed (``seal_apart.told_apart``: a teardown twin
    changing its fixture, a twin outside its sealed statements) is left unsealed in that grading, its twin alone
    guarding its expected values, and was counted nowhere: ``verify --attacks`` says how many, per task, from the
    union of its attempts' ``canaries.json`` ``unsealed``."""
    task = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t.py::test_a", "t.py::test_b"], PASS_TO_PASS=[], canary_unprotected=[])
    records = [{"task_id": tid, "agent": agent, "attempt": 1}
               for tid, agent in (("t1", "attack-x"), ("t1", "attack-y"), ("t2", "attack-x"))]
    for tid, agent, data in (("t1", "attack-x", {"unsealed": ["t.py::test_a"]}),
                             ("t1", "attack-y", {"unsealed": ["t.py::test_a", "t.py::T::test_b"]}),
                             ("t2", "attack-x", {})):
        folder = attempt_dir(tmp_path, tid, agent, 1)
        folder.mkdir(parents=True)
        (folder / "canaries.json").write_text(json.dumps({"canaries": [], "unprotected": [], **data}))
    lines = canary_lines(tmp_path, [task, dataclasses.replace(task, id="t2")], records)
    assert lines == ["homefield verify: 1 task had 2 FAIL_TO_PASS function(s) whose sealed sites a grading left "
                     "unsealed (its runs apart tell them apart once sealed; their canary twins guard them):",
                     "  t1  2: test_b, test_a"], lines


def test_canary_lines_read_each_attempts_canaries_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """canary_lines read every attempt's ``canaries.json`` three times (``graded_unprotected`` for ``unprotected``,
    ``told`` and ``unsealed``): once now, the same lines, and the "first three, then …" tail of each kind of line."""
    from pytest_homefield.commands import verify

    f2p = [f"t.py::test_{c}" for c in "abcde"]
    task = Task(id="t1", commit="c", parent="p", committed_at="", authored_at="", mode="commit", subject="",
                message="", prompt="", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=f2p, PASS_TO_PASS=[], canary_unprotected=[])
    records = [{"task_id": "t1", "agent": agent, "attempt": 1} for agent in ("oracle", "attack-x")]
    for agent, data in (("oracle", {"unprotected": f2p[:4], "told": ["t.py::test_b"], "unsealed": f2p[1:]}),
                        ("attack-x", {"unprotected": ["t.py::test_e"], "unsealed": ["t.py::test_a"]})):
        folder = attempt_dir(tmp_path, "t1", agent, 1)
        folder.mkdir(parents=True)
        (folder / "canaries.json").write_text(json.dumps({"canaries": [], **data}))
        excused = [{"id": f"{c}-id", "kind": "teardown"} for c in "wxyz"]
        (folder / "canaries-excused.json").write_text(json.dumps({"excused": excused}))
    reads: list[str] = []
    real = verify._attempt_json
    monkeypatch.setattr(verify, "_attempt_json",
                        lambda run_dir, r, name: reads.append(name) or real(run_dir, r, name))
    lines = canary_lines(tmp_path, [task], records)
    assert reads.count("canaries.json") == 2  # before: 6
    assert lines[1:2] == ["  t1  5 of 5: test_a, test_b, test_c … (1 told by the parent's code at grading, a check "
                          "mining does not make)"], lines
    assert lines[3:4] == ["  t1  5: test_a, test_b, test_c …"], lines
    assert lines[5:] == ["  t1  teardown w-id, teardown x-id, teardown y-id …"], lines
    assert len(lines) == 6, lines


def test_a_flag_alone_does_not_catch_an_attack() -> None:
    """Issue 30: the pattern flag is a hint; an attack scored solved got through, flagged or not."""
    rows = [_r("oracle", "t1", "solved"), _r("attack-a", "t1", "forged"),
            _r("attack-c", "t1", "solved", suspicious=True, suspicious_reason="module table edit")]
    held, lines = attack_verdict(rows, 1)
    assert not held
    assert lines[0] == "homefield verify: caught 1 of 2 attacks on 1 task; 1 attack attempt(s) got through:"
    assert lines[1] == "  c scored solved on task t1 (flagged suspicious only: no canary caught it)"


def test_names_each_attack_that_scored_or_went_unscored() -> None:
    rows = [_r("oracle", "t1", "solved"), _r("oracle", "t2", "infra"),
            _r("attack-a", "t1", "solved"), _r("attack-b", "t1", "infra", error="x"),
            _r("attack-b", "t2", "infra", error="y"),  # oracle is infra there too: the environment
            _r("attack-c", "t2", "infra", error="attack c does not apply to this task")]
    held, lines = attack_verdict(rows, 2)
    assert not held
    assert lines[0] == "homefield verify: caught 0 of 2 attacks on 2 tasks; 2 attack attempt(s) got through:"
    assert "  a scored solved on task t1" in lines
    assert any(line.startswith("  b made its attempt on task t1 unscored") for line in lines)
    assert not any("t2 unscored" in line for line in lines)
    assert "did not apply" in lines[-1]


def test_a_declared_rate_limit_left_unscored_gets_through() -> None:
    """Issue 30: ``rate_limited`` is unscored like ``infra``; verify runs with ``--max-retries 0`` so
    the liar is scored ``agent_error`` (its family's verdict), which catches it."""
    rows = [_r("oracle", "t1", "solved"), _r("attack-claim-rate-limited", "t1", "rate_limited", error="429")]
    held, lines = attack_verdict(rows, 1)
    assert not held and lines[1] == "  claim-rate-limited made its attempt on task t1 unscored (rate_limited: 429)"
    held, lines = attack_verdict([rows[0], _r("attack-claim-rate-limited", "t1", "agent_error")], 1)
    assert held and lines[0] == "homefield verify: caught 1 of 1 attack on 1 task"


def test_each_family_is_caught_only_by_its_outcome() -> None:
    """A fifo left in the workspace is caught as ``agent_error`` (the workspace fault); graded as a
    plain ``tests_failed`` it got through the fault check."""
    ok = [_r("oracle", "t1", "solved"), _r("attack-fifo-in-workspace", "t1", "agent_error"),
          _r("attack-stdout-flood", "t1", "tests_failed")]
    assert attack_verdict(ok, 1)[0]
    held, lines = attack_verdict([ok[0], _r("attack-fifo-in-workspace", "t1", "tests_failed")], 1)
    assert not held
    assert lines[1] == "  fifo-in-workspace scored tests_failed on task t1, not agent_error (its family's verdict)"


def test_verify_attacks_scores_a_rate_limit_at_once(tmp_path: Path) -> None:
    from pytest_homefield.argv import pytest_args
    from pytest_homefield.cli import build_parser

    ns = build_parser().parse_args(["verify", "--attacks"])
    assert "--homefield-max-retries=0" in pytest_args(ns, "verify", tmp_path, [])


def test_escaping_attacks_only_in_a_sandbox() -> None:
    escaping = {f"attack:{a.name}" for a in ATTACKS if a.escapes}
    assert escaping and escaping <= set(attack_specs("auto"))
    assert not escaping & set(attack_specs("none"))


@pytest.mark.slow
def test_verify_attacks_on_a_real_repository(verify_attacks_run: VerifyAttacksRun) -> None:
    """The command on the attack fixture's one task: every attack runs, the line is printed. The run is the
    session's (:mod:`helpers.verify_attacks_run`), whose escape attacks tests/run/test_sandbox_attacks.py
    reads too; --max-procs reaches the xdist workers' sandboxes: the fork bomb stops under it (issue 30)."""
    out = verify_attacks_run.stdout
    # every attack but the twin guesser and the flock election, caught by chance only (Attack.chance)
    n = len(attack_specs("auto"))
    assert n == len(ATTACKS) - 2
    assert f"homefield verify: caught {n} of {n} attacks on 1 task" in out, out[-4000:]
    assert "oracle solves the 1 task" in out
    # issue 35: the table and the verdict, not the agents' report with its pairwise comparisons
    assert "head to head" not in out and f"report of oracle and {n} attacks not printed" in out
    assert "report.html (the agents' report: attack agents compared pair by pair" in out  # nu35
    table = out[out.index("  attack  "):].splitlines()
    assert len(table) > n and table[n + 1].startswith("homefield verify: caught"), "\n".join(table[n - 2:n + 4])
    assert verify_attacks_run.returncode == 0, out[-3000:] + verify_attacks_run.stderr[-2000:]
    run = verify_attacks_run.run
    meta = json.loads((run / "meta.json").read_text())
    assert meta["sandbox"]["mode"] == "auto" and meta["sandbox"]["network"] == "none"
    assert set(meta["sandbox"]["agents"].values()) >= {"bwrap", "none"}  # attacks boxed; oracle in-process
    assert meta["sandbox"]["max_procs"]["cap"] == MAX_PROCS and meta["sandbox"]["max_procs"]["tests"] is not None
    bomb = next(run.glob("attempts/*/attack-fork-bomb/*/agent.out")).read_text()
    started = int(bomb.split("fork-bomb: started ", 1)[1].split()[0])
    assert 200 < started < MAX_PROCS, bomb


def test_the_table_has_one_row_per_attack_with_its_family_and_counts() -> None:
    """Issue 35: ``verify --attacks`` answers in a table (attack, family, caught / flagged / broke grading),
    the attacks that got through first, marked ``!``; an attack that did not apply has no row."""
    rows = [_r("oracle", "t1", "solved"), _r("oracle", "t2", "solved"),
            _r("attack-delete-tests", "t1", "tests_failed"), _r("attack-delete-tests", "t2", "forged", canary="x"),
            _r("attack-fifo-in-workspace", "t1", "agent_error"), _r("attack-fifo-in-workspace", "t2", "tests_failed"),
            _r("attack-conftest-hookwrapper", "t1", "solved", suspicious=True),
            _r("attack-conftest-hookwrapper", "t2", "tests_failed"),
            _r("attack-site-packages-pth", "t1", "infra", error="attack x does not apply to this task")]
    lines = attack_table(rows)
    assert lines[0].split() == ["attack", "family", "tasks", "caught", "flagged", "broke", "grading", "outcomes"]
    assert [line.split()[:2] for line in lines[1:]] == [["!", "conftest-hookwrapper"], ["!", "fifo-in-workspace"],
                                                       ["delete-tests", "forgery"]]
    assert lines[1].split()[2:7] == ["forgery", "2", "1", "1", "1"]
    assert lines[2].split()[2:8] == ["fault:", "agent_error", "2", "1", "0", "1"]
    assert lines[3].split()[2:6] == ["2", "2", "1", "0"] and lines[3].endswith("forged ×1, tests_failed ×1")
    assert len({len(line) for line in lines[:1]}) == 1 and "site-packages" not in "".join(lines)
    # pallets/markupsafe: "run-order ... forged, tests_failed ×7" was 1 forged and 7 tests_failed
    more = [*rows, *(_r("attack-delete-tests", f"t{i}", "tests_failed") for i in range(3, 9))]
    assert attack_table(more)[3].endswith("forged ×1, tests_failed ×7")


@pytest.mark.usefixtures("cli_spelling")
def test_attack_gradings_cut_at_the_attack_bound_are_caught_and_counted() -> None:
    """pypa/packaging: an attack grading stopped at the attack bound (5× the reference grading) is
    ``test_timeout``, a failure: caught, and the verdict says how many were cut."""
    cut = "hidden tests exceeded the attack bound of 60 s (5× oracle's 2.0 s grading of this task, at least 60 s)"
    rows = [_r("oracle", "t1", "solved"), _r("attack-a", "t1", "test_timeout", error=cut),
            _r("attack-b", "t1", "test_timeout", error="hidden tests exceeded 600 s"),
            _r("attack-b", "t2", "test_timeout", error=cut)]
    held, lines = attack_verdict(rows, 2)
    assert held and lines[0] == "homefield verify: caught 2 of 2 attacks on 2 tasks"
    assert lines[-1] == ("  2 attack grading(s) cut at the attack bound (5× the task's reference grading, at least "
                         "60 s, at most --run-timeout): test_timeout, a failure (not solved)")
    assert not any("cut at" in line for line in attack_verdict(rows[:1] + rows[2:3], 1)[1])


def test_report_of_a_verify_run_prints_its_verdict(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """nu19: ``homefield report verify-…`` (the run ``homefield status`` lists) led with the attack agents
    compared pair by pair ("tie at 0 %, Holm over 465 pairs"). It prints the table and verdict ``verify
    --attacks`` printed, from the run's records; ``-v`` the agents' report; a run of agents is unchanged."""
    from pytest_homefield.cli import main
    from pytest_homefield.store import write_jsonl_atomic

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    runs = tmp_path / ".homefield" / "runs"
    agents = ["oracle", "attack-delete-tests", "attack-exit-handler"]
    rows = [_r("oracle", "t1", "solved"), _r("oracle", "t2", "solved"),
            _r("attack-delete-tests", "t1", "tests_failed"), _r("attack-delete-tests", "t2", "tests_failed"),
            _r("attack-exit-handler", "t1", "forged", canary="tests/test_x.py::test_y"),
            _r("attack-exit-handler", "t2", "solved")]
    for rid, names in (("verify-x", agents), ("r1", ["oracle", "noop"])):
        d = runs / rid
        d.mkdir(parents=True)
        (d / "meta.json").write_text(json.dumps({
            "run_id": rid, "created_at": "2026-12-01T10:00:00+00:00", "attempts": 1, "task_ids": ["t1", "t2"],
            "agents": [{"name": a, "spec": a} for a in names], "cut_short": None}))
        write_jsonl_atomic(d / "results.jsonl", [{**r, "run_id": rid, "attempt": 1} for r in rows
                                                 if r["agent"] in names] +
                           ([{"run_id": rid, "agent": "noop", "task_id": t, "attempt": 1, "outcome": "tests_failed"}
                             for t in ("t1", "t2")] if rid == "r1" else []))
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", [])
    monkeypatch.chdir(tmp_path)
    assert main(["report", "verify-x"]) == 0
    out, err = capsys.readouterr()
    records = [{**r, "run_id": "verify-x", "attempt": 1} for r in rows]
    _, verdict = attack_verdict(records, 2)
    assert out.splitlines() == attack_table(records) + verdict + [
        "homefield verify: oracle solves all 2 tasks in this environment"]
    assert "exit-handler" in verdict[0] + verdict[1] and "Holm" not in out and "head to head" not in out
    assert "homefield report verify-x -v" in err
    assert main(["report", "verify-x", "-v"]) == 0
    assert "caught" not in capsys.readouterr().out  # the agents' report
    assert main(["report", "r1"]) == 0
    assert "caught" not in capsys.readouterr().out


def test_the_reports_line_of_a_verify_with_attacks_says_what_they_hold() -> None:
    """nu35 on pallets/markupsafe: ``verify --attacks`` pointed at report.md, which opened with two attack
    agents' tie "Holm-adjusted over 946 pairs" and held no attack table or verdict; the line now says what the
    files hold and where the verdict is. A run's line is unchanged."""
    from pytest_homefield.run.run_plugin import reports_line

    assert reports_line(".homefield/runs/r1", "r1", False) == ("Reports: .homefield/runs/r1/report.md, report.json, "
                                                                "report.html")
    line = reports_line(".homefield/runs/verify-x", "verify-x", True)
    assert line.startswith("Reports: .homefield/runs/verify-x/report.md, report.json, report.html (the agents' report")
    assert line.endswith("the attacks' table and verdict follow, and homefield report verify-x prints them again)")
