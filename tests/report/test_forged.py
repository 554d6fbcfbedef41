"""A ``forged`` attempt (issue 30) in the report: scored, never solved, counted apart with its canary."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pytest_homefield.layout import attempt_dir
from pytest_homefield.records import Result, Task
from pytest_homefield.report import build_report, render_html, render_markdown, render_text_plain

CANARY = "tests/test_m.py::test_value_sign[neg]"


def _task(tid: str) -> Task:
    return Task(id=tid, commit=tid * 3, parent="0" * 40, committed_at="2025-01-01T00:00:00+00:00",
                authored_at="2025-01-01T00:00:00+00:00", mode="commit", subject=f"task {tid}", message="m",
                prompt="p", source_files=["src/m.py"], test_files=["tests/test_m.py"], test_patch="", gold_patch="",
                FAIL_TO_PASS=["tests/test_m.py::test_value"], PASS_TO_PASS=[])


def test_forged_attempts_are_scored_unsolved_and_name_their_canary(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    rows = [Result(run_id="r", task_id="t1", agent="cheat", attempt=1, outcome="forged", canary=CANARY,
                   error=f"canary {CANARY} passed"),
            Result(run_id="r", task_id="t2", agent="cheat", attempt=1, outcome="solved"),
            Result(run_id="r", task_id="t1", agent="honest", attempt=1, outcome="solved"),
            Result(run_id="r", task_id="t2", agent="honest", attempt=1, outcome="solved")]
    assert rows[0].scored and not rows[0].solved
    (run / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in rows))
    (run / "meta.json").write_text(json.dumps({"run_id": "r", "agents": [{"name": "cheat", "spec": "x"},
                                                                        {"name": "honest", "spec": "y"}]}))
    report = build_report([run], [_task("t1"), _task("t2")])
    cheat = report["agents"]["cheat"]
    assert cheat["outcomes"] == {"solved": 1, "forged": 1} and cheat["pass_at_1"] == 0.5 and cheat["scored"] == 2
    assert report["flagged"] == [{"task_id": "t1", "agent": "cheat", "attempt": 1, "outcome": "forged",
                                  "suspicious": False, "touched_tests": False, "canary": CANARY}]
    assert any(n.startswith("cheat: 1 attempt(s) forged") for n in report["notes"])
    md = render_markdown(report)
    assert "Canary passed" in md and CANARY in md and "forged" in md
    html = render_html(report)
    assert "Canary passed" in html and CANARY in html
    assert "forged" in render_text_plain(report, verbose=False)


def test_tasks_no_canary_guards_are_noted(tmp_path: Path) -> None:
    """Round 9 (atk10's F1): a FAIL_TO_PASS function the commit left as the parent has it has no twin a
    test process cannot tell; a solve there is not checked against forgery, and the report says so."""
    run = _run(tmp_path / "run", [Result(run_id="r", task_id=t, agent="a", attempt=1, outcome="solved")
                                  for t in ("t1", "t2")])
    bare = dataclasses.replace(_task("t1"), canary_unprotected=["tests/test_m.py::test_value"])
    notes = build_report([run], [bare, _task("t2")])["notes"]
    assert [n for n in notes if "no canary guards" in n] == [
        "1 task(s) hold 1 FAIL_TO_PASS function(s) no canary guards (a sentinel only, where no expected value could "
        "be contradicted, or a test the commit left as the parent has it): a forger that no-ops only those is not "
        "caught there (homefield verify --attacks -k 't1' names them)."]
    assert not any("no canary guards" in n for n in build_report([run], [_task("t1"), _task("t2")])["notes"])


def test_the_unguarded_note_selects_its_tasks_for_the_attacks_that_name_the_functions(tmp_path: Path) -> None:
    """nu56 on Suor/funcy: the note sent a reader to ``homefield verify --attacks``, every attack on every task (950
    gradings for 19 tasks, 4 of which hold such functions; 10 graded in 13 minutes); its ``-k`` now selects those
    tasks, up to five (more: the command as before)."""
    ids = [f"t{i}" for i in range(1, 8)]
    run = _run(tmp_path / "run", [Result(run_id="r", task_id=t, agent="a", attempt=1, outcome="solved")
                                  for t in ids])
    bare = {"t2", "t5"}
    tasks = [dataclasses.replace(_task(t), canary_unprotected=["tests/test_m.py::test_value"]) if t in bare
             else _task(t) for t in ids]
    [note] = [n for n in build_report([run], tasks)["notes"] if "no canary guards" in n]
    assert note.startswith("2 task(s) hold 2 FAIL_TO_PASS") and "(homefield verify --attacks -k 't2 or t5' names" \
        in note, note
    every = [dataclasses.replace(_task(t), canary_unprotected=["tests/test_m.py::test_value"]) for t in ids]
    [note] = [n for n in build_report([run], every)["notes"] if "no canary guards" in n]
    assert "(homefield verify --attacks names them)" in note, note


def test_solves_where_the_order_twin_alone_guarded_a_function_are_noted(tmp_path: Path) -> None:
    """otw64 (gatk64): a function whose expected value is not in the test (a hidden data file, module constant or
    fixture) has the order twin alone at grading, which a change returning that value passes as a real fix does;
    mining never names it (its check plans no order twin). The solved attempts' ``canaries.json`` ``order_only``
    does, and the report notes those tasks; a failed attempt's file, or a solve with none, is not counted."""
    rows = [Result(run_id="r", task_id=t, agent="a", attempt=1, outcome=o)
            for t, o in (("t1", "solved"), ("t2", "tests_failed"), ("t3", "solved"))]
    run = _run(tmp_path / "run", rows)
    assert not any("only the order twin" in n for n in build_report([run], [_task(t) for t in ("t1", "t2", "t3")])
                   ["notes"])
    for tid in ("t1", "t2"):
        folder = attempt_dir(run, tid, "a", 1)
        folder.mkdir(parents=True)
        listed = ["tests/test_m.py::test_value"]
        (folder / "canaries.json").write_text(json.dumps({"canaries": [], "unprotected": listed, "order_only": listed}))
    notes = build_report([run], [_task(t) for t in ("t1", "t2", "t3")])["notes"]
    assert [n for n in notes if "only the order twin" in n] == [
        "1 task(s) were solved where 1 FAIL_TO_PASS function(s) had only the order twin (the parent's code tells "
        "every value twin, or the expected value is beside the test, in a data file, module or fixture): a change that "
        "returns the expected value without fixing anything is solved there too (homefield verify --attacks -k 't1' "
        "names them)."], notes


def _run(folder: Path, rows: list[Result]) -> Path:
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in rows))
    agents = sorted({r.agent for r in rows})
    (folder / "meta.json").write_text(json.dumps({"run_id": folder.name,
                                                  "agents": [{"name": a, "spec": a} for a in agents]}))
    return folder


def test_a_forged_attempt_flags_its_agent_out_of_the_ranking_and_the_gate(tmp_path: Path) -> None:
    """A lucky guess of the twins on one task buys nothing: the agent with one forged attempt is not
    ranked (rank 0, last), not compared, labelled in every format, and fails the gate whatever its numbers."""
    from pytest_homefield.report.gate import gate_summary, worse_than

    ids = [f"t{i}" for i in range(6)]
    lucky = [Result(run_id="c", task_id=t, agent="lucky", attempt=1, outcome="solved") for t in ids[:5]]
    lucky.append(Result(run_id="c", task_id="t5", agent="lucky", attempt=1, outcome="forged", canary=CANARY))
    honest = [Result(run_id="c", task_id=t, agent="honest", attempt=1, outcome="solved" if i < 2 else "tests_failed")
              for i, t in enumerate(ids)]
    cand = _run(tmp_path / "c", lucky + honest)
    report = build_report([cand], [_task(t) for t in ids])
    flag = "forged on 1 attempt: its 5 solved attempts are not trusted"
    assert report["agents"]["lucky"]["forged"] == flag and report["agents"]["lucky"]["rank"] == 0
    assert report["agents"]["honest"]["rank"] == 1 and "forged" not in report["agents"]["honest"]
    assert list(report["agents"]) == ["honest", "lucky"] and report["comparisons"] == []
    for text in (render_markdown(report), render_html(report), render_text_plain(report, verbose=False)):
        assert flag in text
    base = _run(tmp_path / "b", [dataclasses.replace(r, run_id="b", outcome="solved", canary=None) for r in lucky])
    (g,) = worse_than([cand], base)
    assert g.forged == 1 and g.worse and "FORGED on 1 attempt: the gate fails" in g.text
    assert gate_summary([g]).startswith("gate: fail (lucky worse than b")


def test_an_invented_canary_id_stays_one_cell_of_the_markdown_table(tmp_path: Path) -> None:
    """atk15: a forged attempt's canary id is the test process's text (any visible characters): a ``|``
    or a backtick in it split the flagged table's row and closed its code span early in report.md."""
    canary = "tests/test_m.py::test_value[a|b`c``d]"
    run = _run(tmp_path / "run", [Result(run_id="r", task_id="t1", agent="cheat", attempt=1, outcome="forged",
                                         canary=canary, error="canary passed")])
    md = render_markdown(build_report([run], [_task("t1")]))
    head = next(line for line in md.splitlines() if "Canary passed" in line)
    row = next(line for line in md.splitlines() if line.startswith("| `t1`") and "forged" in line)
    assert row.replace("\\|", "").count("|") == head.count("|"), (head, row)
    assert "``` tests/test_m.py::test_value[a\\|b`c``d] ```" in row, row


def test_a_forged_attempt_a_later_run_repeats_still_flags_its_agent(tmp_path: Path) -> None:
    """gatk58: over several unsharded runs a key's last folder wins (``merged_results``), so a ``forged`` attempt
    that a later run given after it recorded again (the same agent, task and attempt: a second run of the same
    benchmark, reported together) vanished: the agent ranked, compared, unflagged, its solves trusted, and the gate
    passed it. A forged line in any folder given now flags its agent, in the report and the gate, whatever replaced
    it; the numbers stay the last folder's."""
    from pytest_homefield.report.gate import forged_by_agent, worse_than

    ids = ["t1", "t2"]
    first = _run(tmp_path / "r1", [Result(run_id="r1", task_id="t1", agent="cheat", attempt=1, outcome="forged",
                                          canary=CANARY),
                                   Result(run_id="r1", task_id="t2", agent="cheat", attempt=1, outcome="solved")])
    again = _run(tmp_path / "r2", [Result(run_id="r2", task_id=t, agent="cheat", attempt=1, outcome="solved")
                                   for t in ids])
    report = build_report([first, again], [_task(t) for t in ids])
    cheat = report["agents"]["cheat"]
    assert cheat["outcomes"] == {"solved": 2}  # the numbers: the last folder's, as documented
    assert cheat.get("forged") == "forged on 1 attempt: its 2 solved attempts are not trusted", cheat
    assert cheat["rank"] == 0 and any(n.startswith("cheat: 1 attempt(s) forged") for n in report["notes"])
    assert [(f["task_id"], f["canary"]) for f in report["flagged"]] == [("t1", CANARY)]
    assert forged_by_agent([first, again]) == {"cheat": 1}
    base = _run(tmp_path / "b", [Result(run_id="b", task_id=t, agent="cheat", attempt=1, outcome="solved")
                                 for t in ids])
    (g,) = worse_than([first, again], base)
    assert g.forged == 1 and g.worse


def test_the_report_reads_each_results_file_once_for_its_forged_lines(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """rev58's read-once: ``forged_lines`` parsed every run's results.jsonl again (``_read_results``) right after
    ``merged_results`` had read it (``read_results``, kept while the file is unchanged). One parse per file, the
    same forged attempt flagged."""
    import pytest_homefield.report.runs as runs

    first = _run(tmp_path / "r1", [Result(run_id="r1", task_id="t1", agent="cheat", attempt=1, outcome="forged",
                                          canary=CANARY)])
    again = _run(tmp_path / "r2", [Result(run_id="r2", task_id="t1", agent="cheat", attempt=1, outcome="solved")])
    reads: list[object] = []
    real = runs.records_load_results
    monkeypatch.setattr(runs, "records_load_results", lambda path: reads.append(path) or real(path))
    report = build_report([first, again], [_task("t1")])
    assert [(f["task_id"], f["canary"]) for f in report["flagged"]] == [("t1", CANARY)]
    assert sorted(map(str, reads)) == [str(first / "results.jsonl"), str(again / "results.jsonl")]  # before: each twice
