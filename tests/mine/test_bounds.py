"""mine/bounds.py and the bounds of a mining session without pytest items (issue 35): the
--stop-after-tasks and --time-budget skips, fail-fast on the first K alike collection errors, the summary
and meta.json of a mine that stopped early, the note plan/run/export print; the ETA counting fresh
verifications only; the status line cut to the terminal's width in columns."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.layout import HomefieldDir, partial_mine_note, read_meta, write_meta
from pytest_homefield.mine.bounds import (
    FAIL_FAST,
    INTERRUPTED,
    NOT_VERIFIED,
    STOP_AFTER_TASKS,
    TIME_BUDGET,
    FailFast,
    Stop,
    continue_command,
    failure_signature,
    in_flight_line,
    stop_lines,
    stop_meta,
    with_task_bound,
)
from pytest_homefield.mine.pipeline import MineSession
from pytest_homefield.mine.reuse import ReuseIndex
from pytest_homefield.records import Task
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import spelled_for
from pytest_homefield.store import append_jsonl, write_jsonl_atomic
from pytest_homefield.terminal.progress import Progress, cut_to_width, display_width


def _task(sha: str, day: int) -> dict[str, Any]:
    return Task(id=sha[:12], commit=sha, parent="ff" * 20, committed_at=f"2026-01-{day:02d}T00:00:00+00:00",
                authored_at="", mode="commit", subject=f"subject {day}", message="", prompt="", source_files=[],
                test_files=[], test_patch="", gold_patch="", FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[]).to_dict()


def _session(root: Path, *shas: str, **kw: Any) -> MineSession:
    s = Settings(root=root)
    for k, v in kw.items():
        setattr(s, k, v)
    mine_dir = HomefieldDir(root).new_mine_dir()
    write_meta(mine_dir, {"schema_version": 1, "kind": "mine", "mine_id": mine_dir.name,
                          "created_at": "2026-12-02T10:00:00+00:00"})
    write_jsonl_atomic(mine_dir / "candidates.jsonl", [{"commit": c, "subject": f"S {c[:2]}"} for c in shas])
    write_jsonl_atomic(mine_dir / "reused.jsonl", [])
    write_jsonl_atomic(mine_dir / "scan.jsonl", [])
    return MineSession(s, mine_dir)


def _kept(session: MineSession, sha: str, day: int) -> None:
    append_jsonl(session.results_path, {"commit": sha, "id": sha[:12], "subject": "K", "reason": None,
                                        "FAIL_TO_PASS": 1, "task": _task(sha, day), "verify_key": "k" + sha[:3]})


def test_an_interrupted_reverify_counts_the_tasks_earlier_mines_left_and_says_what_going_on_reruns(
        tmp_path: Path) -> None:
    """Seen on python-hyper/h11: Ctrl-C 50 s into ``mine --reverify`` said "tasks.jsonl is partial (2 tasks
    from the 9 verified)" over a tasks.jsonl that still held 64 tasks of the earlier mine, and "the 9
    verified are reused" of a command (``--reverify``) that reuses nothing."""
    shas = [f"{i}{i}" * 20 for i in range(1, 5)]
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", [_task(s, 10 + i) for i, s in enumerate(shas)])
    session = _session(tmp_path, *shas, reverify=True)
    _kept(session, shas[0], 4)
    lines = session.finish(stop=Stop(INTERRUPTED, "Ctrl-C"), command="homefield mine --reverify")
    assert lines[0] == "Mined 1 task from 1 of 4 candidates (4 commits examined); 4 tasks in .homefield/tasks.jsonl"
    assert lines[1] == ("Interrupted: Ctrl-C; 3 of 4 candidates not verified: tasks.jsonl is partial (1 task from "
                        "the 1 verified, 3 kept from earlier mines).")
    assert lines[2] == ("Continue with: homefield mine --reverify  (--reverify runs all 4 again; without it the 1 "
                        "verified now are reused, and so are earlier records of the other 3)")


def test_the_summary_names_flags_as_the_command_spells_them(tmp_path: Path) -> None:
    """nu20: ``pytest --homefield-mine`` said "--reverify runs them again", a flag pytest does not have."""
    shas = [f"{i}{i}" * 20 for i in range(1, 4)]
    session = _session(tmp_path, *shas, reverify=True)
    _kept(session, shas[0], 4)
    append_jsonl(session.results_path, {"commit": shas[1], "id": shas[1][:12], "subject": "R",
                                        "reason": "passes_without_change", "reused_from": "m0"})
    lines = session.finish(stop=Stop(INTERRUPTED, "Ctrl-C"), command="pytest --homefield-mine --homefield-reverify")
    assert lines[2].startswith("Continue with: pytest --homefield-mine --homefield-reverify  (--homefield-reverify "
                               "runs all 3 again; "), lines
    assert "Candidates: reused 1, verified 1 (earlier verification records of the same inputs; "\
           "--homefield-reverify runs them again)" in lines, lines
    fail_fast = stop_lines(Stop(FAIL_FAST, "x"), n_candidates=3, n_verified=2, n_not_verified=1, kept=0,
                           command="pytest --homefield-mine")
    assert fail_fast[1].endswith("or mine on with --homefield-no-fail-fast."), fail_fast
    # a setup_failed record is never reused (the environment's failure, mine/reuse.py NOT_SETTLED): not counted so
    bounded = stop_lines(Stop(INTERRUPTED, "Ctrl-C"), n_candidates=5, n_verified=3, n_not_verified=2, kept=1,
                         command="homefield mine", setup_failed=2)
    assert bounded[1] == ("Continue with: homefield mine  (the 1 verified is reused, not run again; the 2 dropped "
                          "as setup failed are verified again)"), bounded
    # candidates the time budget cut in flight: their finished test runs are read back too (0 runs: nothing said)
    cut = stop_lines(Stop(TIME_BUDGET, "time budget 1m reached"), n_candidates=5, n_verified=1, n_not_verified=4,
                     kept=1, command="homefield mine", resumable=[3, 0, 1])
    assert cut[1] == ("Continue with: homefield mine  (the 1 verified is reused, not run again; so are the 4 "
                      "finished test runs of 2 of the 3 stopped in flight)"), cut
    every = stop_lines(Stop(TIME_BUDGET, "time budget 1m reached"), n_candidates=5, n_verified=1, n_not_verified=4,
                       kept=1, command="homefield mine", resumable=[3, 1])
    assert every[1].endswith("so are the 4 finished test runs of the 2 stopped in flight)"), every


def test_stop_after_tasks_leaves_the_rest_unverified_and_the_summary_says_so(tmp_path: Path) -> None:
    a, b, c = "aa" * 20, "bb" * 20, "cc" * 20
    session = _session(tmp_path, a, b, c, stop_after_tasks=1)
    _kept(session, a, 3)
    verdict = session.verify({"commit": b, "subject": "S bb"}, b[:12])
    assert not verdict.verified
    assert verdict.record == {"commit": b, "id": b[:12], "subject": "S bb", "reason": NOT_VERIFIED,
                              "stop": "stop_after_tasks", "detail": "--stop-after-tasks 1 reached"}
    append_jsonl(session.results_path, verdict.record)
    lines = session.finish(command="homefield mine --stop-after-tasks 1")
    assert lines[0].startswith("Mined 1 task from 1 of 3 candidates")
    assert lines[1] == ("Stopped: --stop-after-tasks 1 reached; 2 of 3 candidates not verified: tasks.jsonl is "
                        "partial (1 task from the 1 verified).")
    # the same bound would reuse the 1 task and stop at once (seen on pypa/packaging): it is raised by N
    assert lines[2] == "Continue with: homefield mine --stop-after-tasks 2  (the 1 verified is reused, not run again)"
    stopped = read_meta(session.mine_dir)["stopped"]
    assert (stopped["why"], stopped["not_verified"], stopped["candidates"]) == ("stop_after_tasks", 2, 3)
    note = partial_mine_note(HomefieldDir(tmp_path))
    assert note is not None and "2 of 3 candidates not verified" in note and "homefield mine --stop" in note
    assert stopped["continue"] == "homefield mine --stop-after-tasks 2"
    # a not-verified record is never reused by a later session
    assert "kbb" not in ReuseIndex.load(HomefieldDir(tmp_path)).records


def test_time_budget_skips_fresh_verifications_only(tmp_path: Path) -> None:
    a, b = "aa" * 20, "bb" * 20
    session = _session(tmp_path, a, b, time_budget="20m")
    session.deadline = time.time() - 1  # the budget is spent
    # an earlier record of the same inputs costs nothing: reused after the deadline too
    prior = {"commit": b, "id": b[:12], "subject": "S bb", "reason": "passes_without_change",
             "verify_key": "kb", "reused_from": "m0"}
    write_jsonl_atomic(session.reused_path, [prior])
    verdict = session.verify({"commit": a, "subject": "S aa", "verify_key": "ka"}, a[:12])
    assert (verdict.verified, verdict.record["reason"], verdict.record["detail"]) == \
        (False, NOT_VERIFIED, "time budget 20m reached")
    assert session.verify({"commit": b, "subject": "S bb", "verify_key": "kb"}, b[:12]).reused
    worker = MineSession.join(session.settings, session.workerinput())
    assert worker.deadline == session.deadline  # every worker stops at the same time


def test_an_interrupted_session_says_how_much_is_left_and_records_it(tmp_path: Path) -> None:
    shas = [f"{i}{i}" * 20 for i in range(1, 5)]
    session = _session(tmp_path, *shas)
    _kept(session, shas[0], 4)
    lines = session.finish(stop=Stop(INTERRUPTED, "Ctrl-C"), command="homefield mine -n 2")
    assert lines[0].startswith("Mined 1 task from 1 of 4 candidates")
    assert lines[1].startswith("Interrupted: Ctrl-C; 3 of 4 candidates not verified: tasks.jsonl is partial")
    assert lines[2].startswith("Continue with: homefield mine -n 2")
    assert read_meta(session.mine_dir)["stopped"]["why"] == INTERRUPTED
    # a mine that verified everything records stopped: null, and no note is printed after it
    done = _session(tmp_path, shas[0])
    _kept(done, shas[0], 4)
    assert "Interrupted" not in " ".join(done.finish(stop=Stop(INTERRUPTED, "Ctrl-C")))
    meta = read_meta(done.mine_dir)
    meta["created_at"] = "2026-12-02T11:00:00+00:00"
    write_meta(done.mine_dir, meta)
    assert meta["stopped"] is None and partial_mine_note(HomefieldDir(tmp_path)) is None


def _broken(sha: str, module: str = "numpy") -> dict[str, Any]:
    return {"commit": sha, "id": sha[:12], "reason": "reference_fails", "missing_modules": [module],
            "detail": f"collection errors at the parent and at the commit: t.py (No module named '{module}')"}


def test_fail_fast_needs_the_first_k_to_fail_alike() -> None:
    ff = FailFast(3)
    assert ff.add(_broken("a" * 40)) is None and ff.add(_broken("b" * 40)) is None
    stop = ff.add(_broken("c" * 40))
    assert stop is not None and stop.why == FAIL_FAST and "No module named 'numpy'" in stop.detail
    assert ff.add(_broken("d" * 40)) is None  # once
    mixed = FailFast(2)
    assert mixed.add(_broken("a" * 40)) is None and mixed.add(_broken("b" * 40, "yaml")) is None
    assert FailFast(2).add({"reason": NOT_VERIFIED}) is None  # skips are not verdicts
    kept_first = FailFast(2)
    assert kept_first.add({"reason": None}) is None and kept_first.add(_broken("b" * 40)) is None
    assert FailFast(0).add(_broken("a" * 40)) is None


def test_failure_signature() -> None:
    assert failure_signature({"reason": "passes_without_change"}) is None
    assert failure_signature({"reason": "reference_fails", "detail": "1 red test(s) do not pass"}) is None
    assert failure_signature({"reason": "reference_fails", "detail": "collection errors at the parent and at "
                              "the commit: a.py, b.py (ImportError: cannot import name 'x')"}) == \
        "ImportError: cannot import name 'x'"
    assert failure_signature({"reason": "setup_failed", "detail": "setup_cmd failed"}) == "setup_cmd failed"
    nested = ("collection errors at the parent and at the commit: t/a.py (ImportError: cannot import name "
              "'Mapping' from 'collections' (/usr/lib/python3.11/collections/__init__.py))")
    assert failure_signature({"reason": "reference_fails", "detail": nested}) == \
        "ImportError: cannot import name 'Mapping' from 'collections' (/usr/lib/python3.11/collections/__init__.py)"


def test_check_fail_fast_reads_the_finished_records(tmp_path: Path) -> None:
    session = _session(tmp_path, fail_fast=2)
    append_jsonl(session.results_path, _broken("a" * 40))
    assert session.check_fail_fast() is None
    append_jsonl(session.results_path, _broken("b" * 40))
    assert session.check_fail_fast() is not None
    off = _session(tmp_path, fail_fast=2, no_fail_fast=True)
    for sha in ("a" * 40, "b" * 40):
        append_jsonl(off.results_path, _broken(sha))
    assert off.check_fail_fast() is None


def test_continue_command() -> None:
    assert continue_command(["/venv/bin/homefield", "mine", "--since", "2024-01-01", "-n", "2"]) == \
        "homefield mine --since 2024-01-01 -n 2"
    assert continue_command(["/x/pytest"], ["--homefield-mine", "-n", "2"]) == "pytest --homefield-mine -n 2"


@pytest.mark.parametrize(("command", "expected"), [
    ("homefield mine -n 2 --stop-after-tasks 5 --since 2026-01-01",
     "homefield mine -n 2 --since 2026-01-01 --stop-after-tasks 10"),
    ("homefield mine --stop-after-tasks=5 -n 2", "homefield mine -n 2 --stop-after-tasks 10"),
    ("homefield mine -n 2", "homefield mine -n 2 --stop-after-tasks 10"),  # the bound came from .homefield.yml
    ("homefield mine --stop-after-tasks 5 -- -p no:cov", "homefield mine --stop-after-tasks 10 -- -p no:cov"),
    ("pytest --homefield-mine --homefield-stop-after-tasks 5 -n 2",
     "pytest --homefield-mine -n 2 --homefield-stop-after-tasks 10"),
])
def test_with_task_bound_raises_the_bound_the_same_command_would_stop_at(command: str, expected: str) -> None:
    assert with_task_bound(command, 10) == expected


@pytest.mark.parametrize("fresh", [True, False])
def test_eta_counts_fresh_items_only(fresh: bool) -> None:
    now = [0.0]
    p = Progress("mine", 100, clock=lambda: now[0])
    for i in range(34):  # reused: instant
        p.finish(f"r{i}", "dropped", fresh=False)
    assert p.eta_s() is None and "ETA ?" in p.line()
    for i in range(3):  # three candidates (ops40: no ETA until three did their work), 22 s each, one at a time
        p.start(f"f{i}", f"f{i}")
        now[0] += 22.0
        p.finish(f"f{i}", "kept", fresh=fresh)
    eta = p.eta_s()
    assert eta is None if not fresh else eta == pytest.approx(22.0 * 63)


def test_line_is_cut_to_the_terminal_width_in_columns() -> None:
    p = Progress("mine", 10)
    p.start("x", "9f3c2a1b7e04 修复 naturaldelta 的月份计算 " * 4)
    for width in (40, 80, 81):
        line = p.line(width)
        assert display_width(line) <= width - 1 and line.endswith("…")
    assert cut_to_width("abc", 10) == "abc" and display_width("漢字") == 4


def test_the_live_line_is_padded_in_columns_not_characters() -> None:
    # pytest's rewrite(erase=True) pads by characters: a line with wide characters then wraps
    from types import SimpleNamespace

    from pytest_homefield.terminal.hooks import ProgressHooks

    tr = SimpleNamespace(_tw=SimpleNamespace(fullwidth=60))
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: tr))
    hooks = ProgressHooks(config, "mine", label_for=str, subject_for=str)  # type: ignore[arg-type]
    for label in ("9f3c2a1b7e04 修复月份计算", "9f3c2a1b7e04 " + "修复" * 40, "short"):
        hooks.progress.in_flight = {"x": label}
        assert display_width(hooks._padded()) == 59


def test_verifications_the_budget_cut_are_named_and_recorded() -> None:
    """Records marked ``in_flight`` (their runs killed at the budget) are named in one summary line and
    listed in ``meta.json``'s ``stopped``; a budget that cut none adds nothing."""
    cut = [{"id": f"{n:012d}", "subject": f"Fix case {n}", "reason": NOT_VERIFIED, "stop": TIME_BUDGET,
            "in_flight": True} for n in range(7)]
    skipped = {"id": "b" * 12, "subject": "Never started", "reason": NOT_VERIFIED, "stop": TIME_BUDGET}
    line = in_flight_line([*cut[:2], skipped])
    assert line == ("Stopped mid-verification at the time budget (2, their test runs killed; not verified): "
                    "000000000000 Fix case 0; 000000000001 Fix case 1")
    assert in_flight_line(cut).endswith("000000000004 Fix case 4; and 2 more")  # type: ignore[union-attr]
    assert in_flight_line([skipped]) is None
    # nu39: --stop-after-tasks stopped the mine first, the budget then cut the one still in flight
    assert in_flight_line(cut[:1], first=STOP_AFTER_TASKS) == (
        "Then, at the time budget, stopped mid-verification (1, their test runs killed; not verified): "
        "000000000000 Fix case 0")
    assert in_flight_line(cut[:1], first=TIME_BUDGET) == in_flight_line(cut[:1])
    long = {**cut[0], "subject": "Make the parser accept every kind of marker that PEP 508 allows in requirements"}
    assert in_flight_line([long]) == ("Stopped mid-verification at the time budget (1, their test runs killed; not "
                                      "verified): 000000000000 Make the parser accept every kind of marker that PEP "
                                      "508 al…")  # cut, and says so
    stop = Stop(TIME_BUDGET, "time budget 2m reached")
    meta = stop_meta(stop, n_candidates=9, n_not_verified=3, command="homefield mine", elapsed_s=121,
                     in_flight=["000000000000"])
    assert meta is not None and meta["in_flight"] == ["000000000000"] and meta["elapsed"] == "2m01s"
    assert "in_flight" not in (stop_meta(stop, n_candidates=9, n_not_verified=3, command="homefield mine",
                                         elapsed_s=1) or {})


def test_the_in_flight_line_says_how_long_each_cut_run_went_and_when_it_may_hang() -> None:
    """nu43 on astanin/python-tabulate (--time-budget 8m, -n 2): the two cheapest candidates' commit runs hung
    (older code under wcwidth 0.9 loops in a test) and held both workers for the whole budget; the line named
    them only, so nothing said they hung nor that run_timeout (600 s) is all that bounds such a run."""
    hung = [{"id": f"{n:012d}", "subject": f"Fix case {n}", "reason": NOT_VERIFIED, "stop": TIME_BUDGET,
             "in_flight": True, "cut_in": "commit run 1", "ran_s": 471.9 + n} for n in range(2)]
    with spelled_for("cli"):  # the mine summary's line, as the homefield script spells it (ux65)
        line = in_flight_line(hung)
    assert line == ("Stopped mid-verification at the time budget (2, their test runs killed; not verified): "
                    "000000000000 Fix case 0 (commit run 1 killed after 7m51s); 000000000001 Fix case 1 (commit run 1 "
                    "killed after 7m52s). A test run killed after 7m52s may hang in this environment (an older commit "
                    "under newer packages): nothing but run_timeout bounds it (600 s unless --run-timeout or "
                    ".homefield.yml sets it); a lower run_timeout stops such a run sooner and leaves the budget to "
                    "the other candidates"), line
    brief = [{**hung[0], "ran_s": 12.0}]  # a run the budget merely caught: its time, no hint
    assert in_flight_line(brief) == ("Stopped mid-verification at the time budget (1, their test runs killed; not "
                                     "verified): 000000000000 Fix case 0 (commit run 1 killed after 12s)")


def test_a_k_mine_neither_hides_a_partial_mine_nor_reads_as_the_whole_set(tmp_path: Path) -> None:
    """nu54 on the demo: a mine stopped at ``--stop-after-tasks 2`` with 9 of 11 candidates not verified, then a
    ``-k`` mine of one of them: plan and run printed no note, the 8 others still never verified. And nu52 on arrow:
    a ``-k`` mine stopped by its budget read ``the task set is partial: mine M stopped (…) with 1 of 1 candidate
    not verified``, as if of the whole set. A ``-k`` mine done with its selection leaves the note to the mine
    before it; one that stopped is named with its selection."""
    shas = [f"{i}{i}" * 20 for i in range(1, 5)]

    def dated(session: MineSession, hour: int) -> None:
        meta = read_meta(session.mine_dir)
        meta["created_at"] = f"2026-12-02T{hour:02d}:00:00+00:00"
        write_meta(session.mine_dir, meta)

    first = _session(tmp_path, *shas)
    _kept(first, shas[0], 4)
    first.finish(stop=Stop(STOP_AFTER_TASKS, "--stop-after-tasks 1 reached"), command="homefield mine")
    dated(first, 10)
    picked = _session(tmp_path, *shas)
    _kept(picked, shas[2], 2)
    lines = picked.finish(command="homefield mine -k 333333", selection="-k 333333", collected=1)
    dated(picked, 11)
    assert lines[0].startswith("Mined 1 task from 1 candidate selected by -k 333333"), lines
    # its own summary says so too: a -k mine's "tasks.jsonl holds 2 tasks" read as the whole set
    assert lines[1] == (f"Note: the task set is partial: mine {first.mine_dir.name} stopped (--stop-after-tasks 1 "
                        "reached) with 3 of 4 candidates not verified; continue with: homefield mine"), lines
    meta = read_meta(picked.mine_dir)
    assert (meta["stopped"], meta["selection"]) == (None, "-k 333333")
    note = partial_mine_note(HomefieldDir(tmp_path))
    assert note is not None and note.startswith(f"Note: the task set is partial: mine {first.mine_dir.name} "
                                                "stopped (--stop-after-tasks 1 reached) with 3 of 4 candidates"), note
    cut = _session(tmp_path, *shas, time_budget="90s")
    append_jsonl(cut.results_path, {"commit": shas[1], "id": shas[1][:12], "subject": "S", "reason": NOT_VERIFIED,
                                    "stop": TIME_BUDGET, "detail": "time budget 90s reached"})
    cut.finish(command="homefield mine -k 222222 --time-budget 90s", selection="-k 222222", collected=1)
    dated(cut, 12)
    assert partial_mine_note(HomefieldDir(tmp_path)) == (
        f"Note: the task set is partial: mine {cut.mine_dir.name} (-k 222222) stopped (time budget 90s reached) "
        "with 1 of the 1 candidate it selected not verified; continue with: homefield mine -k 222222 "
        "--time-budget 90s")
    whole = _session(tmp_path, shas[0])
    _kept(whole, shas[0], 4)
    whole.finish(command="homefield mine")
    dated(whole, 13)
    assert read_meta(whole.mine_dir)["selection"] is None and partial_mine_note(HomefieldDir(tmp_path)) is None
