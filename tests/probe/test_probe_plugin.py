"""End to end on the 8-task sample repository: ``homefield probe`` with a scripted agent that recites
three fixes, with and without a cutoff, at -n 0 and -n 2; SIGKILL and resume; hook agents; plan."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.e2e_repo import cli_env, homefield, homefield_in_process

from probe.conftest import CUTOFF, MEMORIZED, UNBOXED, Probed, copy_probed, reciter_spec, slow_flag
from pytest_homefield.probe_records import load_verdict, probe_path
from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def calls(repo: Path, agent: str = "reciter") -> list[dict]:
    return [r for r in read_jsonl(probe_path(repo / ".homefield", agent)) if r["kind"] != "verdict"]


def task_ids(repo: Path) -> list[str]:
    return [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl")]


def check_verdict(repo: Path, out: str, cutoff: str | None) -> dict:
    """The reciter's verdict flags exactly :data:`MEMORIZED`; the printed headline matches it."""
    verdict = load_verdict(probe_path(repo / ".homefield", "reciter"))
    assert verdict is not None, out
    assert sorted(f["task_id"] for f in verdict["flagged"]) == sorted(MEMORIZED), out
    assert all(f["best"] == 1.0 and f["mean"] == 1.0 for f in verdict["flagged"])
    if cutoff:
        later = [t["id"] for t in read_jsonl(repo / ".homefield" / "tasks.jsonl") if t["authored_at"][:10] > cutoff]
        assert verdict["control"] == "cutoff" and verdict["control_n"] == len(later) == 4
        assert f"recites 3 of 4 tasks; control 4 tasks authored after {cutoff}" in out
    else:
        assert verdict["control"] == "mismatched" and verdict["control_n"] == 8
        assert "recites 3 of 8 tasks; control 8 mismatched pairs" in out
    assert f"95th percentile {verdict['control_p95']:.2f}" in out
    # issue 32: flags by Benjamini-Hochberg at the stated --fdr 0.3 (three recited tasks: p = 1/9 or 1/5 each)
    assert "flagged by Benjamini-Hochberg at 30% FDR" in out and "score above the whole control" in out
    for r in calls(repo):
        if r["kind"] == "task":
            assert r["memorized"] is (r["task_id"] in MEMORIZED)
    return verdict


def test_no_control_call_asks_its_task_question_again(probed: Probed) -> None:
    """atk17: on main, the control of a task paired with one changing the same files (the demo's two wrap()
    commits) sent the same question as the task's own call. Each control's files now differ from its task's."""
    files = {t["id"]: t["source_files"] for t in read_jsonl(probed.repo / ".homefield" / "tasks.jsonl")}
    controls = [r for r in calls(probed.repo) if r["kind"] == "control"]
    assert len(controls) == 8
    assert [(r["task_id"], r["gold_task_id"]) for r in controls if files[r["task_id"]] == files[r["gold_task_id"]]] \
        == []
    assert sorted(r["gold_task_id"] for r in controls) == sorted(files)  # every gold once


@pytest.mark.parametrize("n", ["0", "2"])
def test_probe_flags_exactly_the_recited_tasks(request: pytest.FixtureRequest, tmp_path: Path, n: str) -> None:
    """Without a cutoff (mismatched pairs), then with one (the resumed probe re-judges the same
    answers against the tasks authored after the cutoff, making no new call). At -n 0 the first probe
    is the session's shared one (:func:`probe.conftest.probed`: the same command), on a copy."""
    tasks_before = (request.getfixturevalue("sample_mined") / ".homefield" / "tasks.jsonl").read_bytes()
    samples = 2 if n == "2" else 1
    references = ["--agent", "oracle", "--agent", "noop"] if n == "2" else []
    if n == "0":
        probed: Probed = request.getfixturevalue("probed")
        repo, spec, out = copy_probed(probed, tmp_path / "repo"), probed.spec, probed.out
    else:
        repo = request.getfixturevalue("repo")
        spec = reciter_spec(repo)
        proc = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, *references, "--samples",
                         str(samples), "-n", n)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
    ids = task_ids(repo)
    assert len(ids) == 8
    check_verdict(repo, out, None)
    records = calls(repo)
    assert len(records) == 8 * samples * 2  # every task's own prompt, and its mismatched pair
    keys = [(r["kind"], r["task_id"], r["sample"]) for r in records]
    assert len(keys) == len(set(keys))
    controls = {r["task_id"]: r["gold_task_id"] for r in records if r["kind"] == "control"}
    assert sorted(controls) == sorted(controls.values()) == sorted(ids)
    assert all(k != v for k, v in controls.items())
    for r in records:
        assert r["cost_usd"] == 0.001 and r["model"] == "reciter-1" and r["input_tokens"] > 0
        assert r["spec"].startswith("cmd:") and r["outcome"] is None
    if references:
        oracle = load_verdict(probe_path(repo / ".homefield", "oracle"))
        noop = load_verdict(probe_path(repo / ".homefield", "noop"))
        assert oracle is not None and noop is not None
        assert len(oracle["flagged"]) == 8 and noop["flagged"] == []

    proc = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", str(samples), "-n", n,
                     "--cutoff", CUTOFF, "--resume")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    check_verdict(repo, out, CUTOFF)
    assert len(calls(repo)) == 8 * samples * 2  # nothing called again
    assert (repo / ".homefield" / "tasks.jsonl").read_bytes() == tasks_before  # probing never changes tasks


def test_exclude_memorized_end_to_end(repo: Path, probed: Probed, tmp_path: Path) -> None:
    """Refused before any probe (``repo``); then on a copy of the session's probe (:func:`probe.conftest.probed`,
    ``--samples 1 -n 0``): a run leaves the flagged tasks out, says so, and keeps that task set on resume."""
    spec = probed.spec
    run_args = ["--agent", spec, "--agent", "oracle", "--attempts", "1", "--exclude-memorized"]
    missing = homefield(repo, "run", *run_args, "-n", "0")
    assert missing.returncode == 4
    assert "no probe results for agent 'reciter'" in missing.stdout + missing.stderr
    assert len((missing.stdout + missing.stderr).strip().splitlines()) <= 2  # one line (plus pytest's prefix)
    repo = copy_probed(probed, tmp_path / "probed")
    kept = sorted(set(task_ids(repo)) - set(MEMORIZED))
    # -n 0: the subject is which tasks the run keeps and says it left out, not xdist (speed23)
    proc = homefield(repo, "run", *run_args, "-n", "0", "--run-id", "r1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    results = list(read_jsonl(repo / ".homefield" / "runs" / "r1" / "results.jsonl"))
    assert sorted({r["task_id"] for r in results}) == kept and len(results) == len(kept) * 2
    assert {r["outcome"] for r in results if r["agent"] == "oracle"} == {"solved"}
    meta = json.loads((repo / ".homefield" / "runs" / "r1" / "meta.json").read_text())
    assert meta["excluded_memorized"]["tasks"] == sorted(MEMORIZED)
    assert "3 task(s) left out as memorized (probe of reciter)" in out
    assert "3 task(s) were left out as memorized" in out  # the report's note
    report = homefield(repo, "report", "r1", "--format", "md")
    assert "## Memorization probe" in report.stdout and "reciter recites 3 of 8 tasks" in report.stdout
    assert "3 task(s) were left out as memorized" in report.stdout
    as_json = homefield_in_process(repo, "report", "r1", "--format", "json")  # main() here: md above had a process
    assert json.loads(as_json.stdout)["memorization"]["excluded"] == sorted(MEMORIZED)

    # an interrupted run: drop the results of one task (both agents' attempts, so the resume has to run
    # that task again); meanwhile a new probe verdict flags that very task
    lines = (repo / ".homefield" / "runs" / "r1" / "results.jsonl").read_text().splitlines()
    left = [ln for ln in lines if json.loads(ln)["task_id"] != kept[0]]
    assert len(left) == len(lines) - 2
    (repo / ".homefield" / "runs" / "r1" / "results.jsonl").write_text("\n".join(left) + "\n")
    path = probe_path(repo / ".homefield", "reciter")
    records = list(read_jsonl(path))
    verdict = records[-1]
    verdict["flagged"].append({"task_id": kept[0], "best": 0.9, "mean": 0.9})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    resumed = homefield(repo, "run", *run_args, "-n", "0", "--run-id", "r1", "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    results = list(read_jsonl(repo / ".homefield" / "runs" / "r1" / "results.jsonl"))
    assert sorted({r["task_id"] for r in results}) == kept and len(results) == len(kept) * 2  # same task set
    assert [r["task_id"] for r in results[len(left):]] == [kept[0]] * 2  # run again, not left out
    assert json.loads((repo / ".homefield" / "runs" / "r1" / "meta.json").read_text())["excluded_memorized"][
        "tasks"] == sorted(MEMORIZED)
    plan = homefield_in_process(repo, "plan", "--agent", spec, "--attempts", "1", "--exclude-memorized")
    assert f"Plan: {len(kept) - 1} tasks" in plan.stdout  # a new run would use the newest verdict


def test_sigkill_then_resume_loses_and_redoes_nothing(repo: Path) -> None:
    spec = reciter_spec(repo, sleep_s=0.1)  # 32 calls: at least 3 s, the kill comes after 7
    path = probe_path(repo / ".homefield", "reciter")
    env = cli_env()
    argv = [sys.executable, "-m", "pytest_homefield.cli", "probe", *UNBOXED, "--agent", spec, "--samples", "2",
            "-n", "0"]
    proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(read_jsonl(path))) < 7 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    slow_flag(repo).unlink()  # the same agent spec from here on, answering without the pause
    before = path.read_text().splitlines()
    assert 7 <= len(before) < 32, "the probe was not cut in the middle"
    assert load_verdict(path) is None
    again = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "2", "-n", "0")
    assert again.returncode == 4 and "add --resume" in again.stdout + again.stderr
    resumed = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "2", "-n", "0",
                        "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = path.read_text().splitlines()
    # the records written before the kill are kept as they were (only ``memorized`` is filled in); each call once
    def strip(lines: list[str]) -> list[dict]:
        out = []
        for ln in lines:
            try:
                out.append({k: v for k, v in json.loads(ln).items() if k != "memorized"})
            except ValueError:
                pass  # a line torn by the kill
        return out

    assert strip(after)[: len(strip(before))] == strip(before)
    keys = [(r["kind"], r["task_id"], r["sample"]) for r in calls(repo)]
    assert len(keys) == len(set(keys)) == 32
    verdict = load_verdict(path)
    assert verdict is not None and sorted(f["task_id"] for f in verdict["flagged"]) == sorted(MEMORIZED)
    done = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "2", "--resume", "-n", "0")
    assert done.returncode == 0, done.stdout + done.stderr  # nothing left to call: judged again
    assert "0 calls to make, 32 already answered" in done.stdout
    assert len(calls(repo)) == 32


def test_hook_agent_and_agents_that_cannot_answer(repo: Path) -> None:
    (repo / "conftest.py").write_text(
        "import pytest\n"
        "from pytest_homefield.agents.base import Completion\n\n"
        "class Echo:\n"
        "    name = 'echo'\n    spec = 'echo'\n    simulated = False\n    hinted = False\n"
        "    def version(self): return None\n"
        "    def run(self, ctx): raise NotImplementedError\n"
        "    def complete(self, prompt, *, timeout_s, gold_answer=''):\n"
        "        return Completion(text=gold_answer if 'slugify' in prompt else 'x = 1', cost_usd=0.5)\n\n"
        "@pytest.hookimpl(optionalhook=True)\n"
        "def pytest_homefield_agents(config):\n    return [Echo()]\n")
    proc = homefield(repo, "probe", "--agent", "echo", "--samples", "1", "--max-tasks", "4", "-n", "0")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = calls(repo, "echo")
    assert len(records) == 8 and all(r["cost_usd"] == 0.5 for r in records)
    assert "recites" in proc.stdout
    bad = homefield(repo, "probe", "--agent", "sim:0.5")
    assert bad.returncode == 4 and "'sim-0.5' (sim:0.5) cannot answer a plain prompt" in bad.stdout + bad.stderr


def test_plan_counts_calls_before_anything_is_spent(repo: Path) -> None:
    spec = reciter_spec(repo)
    plan = homefield(repo, "plan", "--probe", "--agent", spec, "--samples", "3")
    assert plan.returncode == 0, plan.stderr
    assert "Probe plan: 8 tasks × 1 agent × 3 samples = 24 calls + 24 control calls" in plan.stdout
    assert "48 calls in all" in plan.stdout and "48 calls to make, 0 already answered" in plan.stdout
    assert "cost ? USD" in plan.stdout
    assert not (repo / ".homefield" / "probe").exists()
    probed = homefield(repo, "probe", *UNBOXED, "--fdr", "0.3", "--agent", spec, "--samples", "1", "--cutoff", CUTOFF,
                       "-n", "0")
    assert probed.returncode == 0, probed.stdout + probed.stderr
    check_verdict(repo, probed.stdout, CUTOFF)
    assert {r["kind"] for r in calls(repo)} == {"task"} and len(calls(repo)) == 8  # a cutoff needs no control call
    plan = homefield_in_process(repo, "plan", "--probe", "--agent", spec, "--samples", "3", "--cutoff", CUTOFF)
    assert "= 24 calls control: tasks authored after 2024-01-15; 24 calls in all" in plan.stdout
    assert "16 calls to make, 8 already answered; ~0.02 USD (0.0010 USD/call from 8 earlier calls)" in plan.stdout


def test_a_rate_limit_stops_the_agent_and_resume_retries(repo: Path) -> None:
    limited = 'cmd:echo \'{"outcome": "rate_limited", "error": "HTTP 429 slow down"}\''
    proc = homefield(repo, "probe", "--agent", f"busy={limited}", "--samples", "1", "--max-tasks", "3", "-n", "0",
                     "--", "-rs")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "6 skipped" in out and "SKIPPED [5]" in out and "rate limited: HTTP 429 slow down" in out, out
    assert [(r["outcome"], r["error"]) for r in calls(repo, "busy")] == [("rate_limited", "HTTP 429 slow down")]
    again = homefield(repo, "probe", "--agent", f"busy={limited}", "--samples", "1", "--max-tasks", "3", "-n", "0",
                      "--resume")
    assert "6 calls to make, 0 already answered" in again.stdout  # the unanswered call is retried


def test_a_cmd_agent_without_bubblewrap_is_refused_as_a_run_is(repo: Path, tmp_path: Path) -> None:
    """contracts §9 (atk9 F2): a probe's ``cmd:`` agent runs in bubblewrap, so under ``--sandbox auto``
    where it does not work (``HOMEFIELD_BWRAP`` names no program; no Landlock either) the probe stops with
    a run's one line before any call."""
    spy = tmp_path / "spy"
    env = {**cli_env(), "HOMEFIELD_BWRAP": str(tmp_path / "no" / "bwrap"), "HOMEFIELD_LANDLOCK": "off"}
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "probe", "--agent", f"cmd:touch {spy}",
                           "--samples", "1", "--max-tasks", "1", "-n", "0"], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    refusal = [ln for ln in proc.stderr.splitlines() if "bubblewrap" in ln]
    assert proc.returncode == 4 and len(refusal) == 1, proc.stdout[-2000:] + proc.stderr
    assert refusal[0].startswith("ERROR: pytest-homefield: agent 'cmd' can run commands, but bubblewrap (bwrap) is "
                                 "not installed")
    assert not spy.exists() and not (repo / ".homefield" / "probe").exists()
