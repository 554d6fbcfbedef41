"""End to end on a tiny real repository: mine, run the reference agents, resume, report, JUnit."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.e2e_repo import MINED_STABILITY, copy_mined, homefield
from helpers.shared_repo import built_once

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def tasks(repo: Path) -> list[dict]:
    return list(read_jsonl(repo / ".homefield" / "tasks.jsonl"))


def results(repo: Path) -> list[dict]:
    runs = sorted((repo / ".homefield" / "runs").iterdir())
    return list(read_jsonl(runs[-1] / "results.jsonl"))


def test_mine_finds_the_tasks(mined: Path) -> None:
    ts = tasks(mined)
    subjects = [t["subject"] for t in ts]
    # newest first; the root commit is dropped (root_commit: nothing to change yet), the README commit too
    assert subjects == ["Add neg() returning the negation of a", "Add sub() that subtracts b from a",
                        "Add mul() to multiply two numbers"], subjects
    sub = next(t for t in ts if t["subject"].startswith("Add sub"))
    # the module cannot import at the parent: every id in it is red there (a collection error); test_add_still_works
    # passes there once the missing name is a stub (ms35, contracts §7): excluded, not FAIL_TO_PASS
    assert sorted(sub["FAIL_TO_PASS"]) == ["tests/test_sub.py::test_sub[neg[FAILED]]",
                                           "tests/test_sub.py::test_sub[pos \\u2713]"]  # as pytest prints it
    assert sub["excluded"] == {"tests/test_sub.py::test_add_still_works": "passes_with_stub"}
    assert sub["PASS_TO_PASS"] == []
    neg = ts[0]
    assert neg["FAIL_TO_PASS"] == ["tests/test_neg.py::test_neg"]
    assert neg["PASS_TO_PASS"] == ["tests/test_neg.py::test_add_unchanged"]
    assert neg["prompt"] == "Add neg() returning the negation of a"
    assert "tests/test_sub.py" in sub["test_patch"] and "calc/__init__.py" in sub["gold_patch"]
    assert "tests/" not in sub["gold_patch"]
    assert ".homefield/" in (mined / ".git" / "info" / "exclude").read_text()


def test_mine_is_stable_under_xdist(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    before = {t["id"]: t for t in tasks(repo)}
    proc = homefield(repo, "mine", "--stability-runs", MINED_STABILITY, "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = {t["id"]: t for t in tasks(repo)}
    strip = lambda t: {k: v for k, v in t.items() if k != "verify"}  # noqa: E731
    assert {k: strip(v) for k, v in before.items()} == {k: strip(v) for k, v in after.items()}


def test_run_reference_agents_identically_at_n0_and_n2(mined: Path, tmp_path: Path) -> None:
    """oracle, noop and the seeded sim:0.5 at -n 0 and at -n 2: every attempt recorded with its agent's
    outcome, the JUnit properties, and the same outcomes at both (sim: some solved, some not)."""
    outcomes = []
    for n in ("0", "2"):
        repo = copy_mined(mined, tmp_path / n / "repo")
        junit = tmp_path / f"junit-{n}.xml"
        proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--agent", "sim:0.5", "--attempts",
                         "2", "-n", n, "--junitxml", str(junit))
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
        res = results(repo)
        n_tasks = len(tasks(repo))
        assert len(res) == n_tasks * 3 * 2
        by_agent: dict[str, list[str]] = {}
        for r in res:
            by_agent.setdefault(r["agent"], []).append(r["outcome"])
        assert set(by_agent["oracle"]) == {"solved"}
        assert set(by_agent["noop"]) == {"empty_patch"}
        # an empty patch runs no hidden test: the sandbox line counts the graded attempts' test runs only
        graded = [r for r in res if r["outcome"] != "empty_patch"]
        assert all(r["test_sandbox"] is None for r in res if r["outcome"] == "empty_patch")
        assert all(r["test_sandbox"] for r in graded)
        assert re.search(rf"; test runs \w+ ×{len(graded)}\n", out), out
        assert "UNSOLVED" in out or "unsolved" in out
        root = ET.parse(junit).getroot()
        # the attempt's homefield.* values: `name: value` lines of its <system-out> under xunit2 (issue 33)
        props = {line.split(": ", 1)[0] for out in root.iter("system-out") for line in (out.text or "").splitlines()}
        assert {"homefield.task", "homefield.agent", "homefield.outcome", "homefield.cost_usd",
                "homefield.wall_s"} <= props
        assert not list(root.iter("properties"))
        noop_cases = [c for c in root.iter("testcase") if c.get("name", "").startswith("noop[")]
        assert noop_cases and all(c.find("failure") is not None for c in noop_cases)  # unsolved: red in CI
        assert "homefield report" in out
        outcomes.append(sorted((r["task_id"], r["agent"], r["attempt"], r["outcome"]) for r in res))
    assert outcomes[0] == outcomes[1]
    sim = [o for o in outcomes[0] if o[1] not in ("oracle", "noop")]
    solved = sum(o[3] == "solved" for o in sim)
    assert len(sim) == len(outcomes[0]) // 3 and 0 < solved < len(sim), sim


@pytest.fixture(scope="session")
def noop_run(mined: Path, tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """A copy of the mined fixture with run ``r1``: noop, two attempts of each task (exit status 0), made once
    per test session (shared by xdist workers; read only: the resume tests copy it). noop: what is resumed is
    the bookkeeping, not the grading (its attempts run no hidden tests)."""

    def make(repo: Path) -> None:
        shutil.rmtree(repo.with_name("repo-making"), ignore_errors=True)
        work = copy_mined(mined, repo.with_name("repo-making"))
        proc = homefield(work, "run", "--agent", "noop", "--attempts", "2", "--run-id", "r1")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        work.rename(repo)  # whole or absent: built_once makes it again after a failure

    return built_once(tmp_path_factory, testrun_uid, "e2e-noop-run", make)


def test_resume_runs_only_missing(noop_run: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(noop_run, repo, symlinks=True)
    path = repo / ".homefield" / "runs" / "r1" / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    # keep two finished attempts and a torn third line, as after a crash mid-write
    path.write_text("".join(lines[:2]) + lines[2][:20])
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "2", "--resume", "--run-id", "r1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recs = list(read_jsonl(path))
    keys = [(r["task_id"], r["agent"], r["attempt"]) for r in recs]
    assert len(keys) == len(set(keys)) == len(tasks(repo)) * 2
    assert keys[:2] == [(r["task_id"], r["agent"], r["attempt"]) for r in (json.loads(x) for x in lines[:2])]


def test_resume_with_other_flags_is_an_error(noop_run: Path, tmp_path: Path) -> None:
    """On run ``r1`` of :func:`noop_run` (noop, 2 attempts; it made a run of 1 attempt of its own)."""
    repo = tmp_path / "repo"
    shutil.copytree(noop_run, repo, symlinks=True)
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--resume", "--run-id", "r1")
    assert proc.returncode == 4
    assert "has 2 attempts; flags give 1" in proc.stderr
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "2", "--run-id", "r1")
    assert proc.returncode == 4 and "already exists" in proc.stderr


def test_fail_under_gate(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--fail-under", "noop=0.5")
    assert proc.returncode == 1, proc.stdout
    assert "fail-under: noop pass@1 0.00 is below 0.50" in proc.stdout
    proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "--max-tasks", "1", "--fail-under", "0.9")
    assert proc.returncode == 0, proc.stdout


def test_a_run_with_an_attack_agent_prints_its_report(mined: Path, tmp_path: Path) -> None:
    """Only ``verify --attacks`` replaces the report by its table of attacks: a run that names an attack
    agent itself prints the report as any run does."""
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "run", "--agent", "attack:delete-tests", "--attempts", "1", "--max-tasks", "1", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not printed" not in proc.stdout
    assert re.search(r"^homefield report: \S+ · 1 task · 1 agent", proc.stdout, re.M), proc.stdout[-2000:]


def test_verify_says_how_long_it_will_take_when_collection_ends(mined: Path, tmp_path: Path) -> None:
    """nu22: a verify of simonw/llm ran 27 minutes without a word of how long it would take. From the task's
    time at mining (scaled to an idle machine by the load it was mined at: a lower bound there), then from its earlier
    gradings."""
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "verify", "--max-tasks", "1", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = re.search(r"^homefield verify: 1 grading on 1 task, about \S+ each \((.*)\): about \S+ with 1 worker"
                     r"(?: \(\S+ of it the session's start, measured\))?, "
                     r"up to \S+ on a loaded machine \(×\d+\.\d(?: of \S+, [^:]*)?: .*\)$",
                     proc.stdout, re.M)
    assert line is not None and re.match(r"measured at mining \(1 task; at a load of \d+\.\d per CPU, scaled to an "
                                         r"idle machine: a lower bound there", line.group(1)), proc.stdout
    proc = homefield(repo, "verify", "--max-tasks", "1", "-n", "0")
    assert "each (earlier graded attempts (1 task)): about" in proc.stdout, proc.stdout


def test_select_with_k_and_collect_only(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    tid = tasks(repo)[0]["id"]
    proc = homefield(repo, "run", "--agent", "oracle", "--agent", "noop", "--attempts", "2", "--", "--co", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f".homefield/tasks.jsonl::{tid}::oracle[1]" in proc.stdout
    assert f".homefield/tasks.jsonl::{tid}::noop[2]" in proc.stdout
    # noop: nothing to grade. A named run id: the --co session's run folder may have the same second
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "-k", tid, "--run-id", "sel")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["task_id"] for r in read_jsonl(repo / ".homefield" / "runs" / "sel" / "results.jsonl")] == [tid]


def test_repo_tests_never_collected(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    proc = homefield(repo, "run", "--agent", "noop", "--attempts", "1", "--", "tests")
    assert proc.returncode == 4
    assert "not a homefield node id" in proc.stderr


def test_infra_error_is_one_line_not_a_traceback(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    # a setup command that fails: every attempt is an infra error (pytest: error in setup)
    config = repo / ".homefield.yml"
    config.write_text(config.read_text() + "setup_cmd: 'echo broken env >&2; exit 3'\n")
    proc = homefield(repo, "run", "--agent", "oracle", "--attempts", "1", "--max-tasks", "1", "-n", "0")
    assert proc.returncode == 1, proc.stdout
    assert "homefield infra error: SnapshotError: setup_cmd failed (exit 3, timed out: False): broken env" \
        in proc.stdout
    assert "Traceback" not in proc.stdout and "site-packages/pluggy" not in proc.stdout
    assert "1 error" in proc.stdout


#: A ``cmd:`` agent that fixes every task of the fixture its own way (not the reference fix: graded with its
#: canary twin runs, two test runs at once).
OWN_FIX = ("cmd:printf '\\n\\ndef mul(a, b):\\n    return b * a\\n\\n\\ndef sub(a, b):\\n    return a + -b\\n\\n\\n"
           "def neg(a):\\n    return 0 - a\\n' >> calc/__init__.py")


def test_a_small_memory_budget_still_grades_at_n2(mined: Path, tmp_path: Path) -> None:
    """--max-total-memory-mb of one grading (two twin runs of 384 MiB) at -n 2 (contracts §9, atk25): the
    sandboxes wait for memory in turn, every attempt is solved, and a budget smaller than one grading is
    refused at start in one line. One attempt of each of the three tasks: three gradings for two workers, so that
    both workers grade at once and one grading starts after another ended (two attempts each graded six, 21 s of
    CPU for the same waits; speed36)."""
    repo = copy_mined(mined, tmp_path / "repo")
    caps = ("--max-test-memory-mb", "384", "--max-agent-memory-mb", "384")
    proc = homefield(repo, "run", "--agent", OWN_FIX, "--attempts", "1", "-n", "2", "--max-total-memory-mb", "768",
                     *caps)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = results(repo)
    assert [r["outcome"] for r in res] == ["solved"] * len(tasks(repo)) == ["solved"] * 3, res
    assert len(re.findall("waiting for the machine's memory budget", proc.stderr)) <= 1  # once a minute, if at all
    proc = homefield(repo, "run", "--agent", OWN_FIX, "--max-total-memory-mb", "767", *caps)
    assert proc.returncode == 4
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert lines == ["ERROR: pytest-homefield: --max-total-memory-mb 767 is smaller than the largest set of "
                     "sandboxes that run at once, 768 MiB (a grading's twin test runs and their services: its "
                     "task's memory cap each, or max_test_memory_mb; a test run of max_test_memory_mb; or an "
                     "agent's sandbox and its services): raise it, or lower the caps"]
