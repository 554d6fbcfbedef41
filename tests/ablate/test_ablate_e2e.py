"""End to end on a real eight-task repository with a scripted agent that needs the rules file's first rule:
the plan starts nothing; an ablation at -n 2 killed with SIGKILL and resumed at -n 0 loses and redoes
nothing and finds the rule (the -n 0 path from the start: tests/ablate/test_ablate_shards.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.ablate_repo import N_TASKS, RULES, write_agent
from helpers.e2e_repo import cli_env, homefield

from pytest_homefield.report.runs import cut_short_by_key
from pytest_homefield.store import read_jsonl

EXPECTED_SLIM = "# Rules for agents\n\n- KEY RULE: put each new function fN in its own module calc/fN.py.\n"
TOTAL = N_TASKS * 4 + N_TASKS  # base + 3 rules, then the slimmer file; one attempt each


@pytest.fixture
def repo(ablate_repo: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(ablate_repo, dest, symlinks=True)
    return dest


def _agent(tmp_path: Path, spy: Path | None = None) -> str:
    script = write_agent(tmp_path)
    return f"cmd:{sys.executable} -S {script} CLAUDE.md" + (f" {spy}" if spy else "")


#: The scripted agent is a file outside the workspace (and the spy writes outside it), which the default
#: sandbox hides from agents: these tests accept the risk, as a user with a local script would.
NO_SANDBOX = ("--sandbox", "none")


def _clean_env() -> dict[str, str]:
    return cli_env()


@pytest.mark.slow
def test_without_yes_only_the_plan_is_printed_and_no_agent_starts(repo: Path, tmp_path: Path) -> None:
    spy = tmp_path / "spy.log"
    agent = _agent(tmp_path, spy)
    proc = homefield(repo, "ablate", "CLAUDE.md", *NO_SANDBOX, "--agent", agent, "--attempts", "2",
                     "--cost-per-run", "0.5",
                     "-n", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"3 rules, {N_TASKS} tasks, 1 agent, 2 attempts each, 4 variants" in proc.stdout
    assert N_TASKS == 8 and "Agent runs: 64 (+ up to 16" in proc.stdout and "$32.00" in proc.stdout  # 8 × 2 × 4 × $0.50
    assert "Nothing run." in proc.stdout
    # the same through pytest itself, with xdist asked for
    proc = subprocess.run([sys.executable, "-m", "pytest", "--homefield-ablate", "CLAUDE.md", "--homefield-agent",
                           agent, "-n", "2", "-p", "no:cacheprovider", "-o", "addopts="], cwd=repo,
                          env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "homefield ablate: plan" in proc.stdout and "Nothing run." in proc.stdout
    assert not spy.exists(), "an agent ran without --yes"
    assert not (repo / ".homefield" / "ablate").exists()


def _keys(results: Path) -> list[tuple[str, str, str, int]]:
    return [(r["variant"], r["task_id"], r["agent"], r["attempt"]) for r in read_jsonl(results)]


def _check_finished(repo: Path, ablate_dir: Path, stdout: str) -> None:
    keys = _keys(ablate_dir / "results.jsonl")
    assert len(keys) == len(set(keys)) == TOTAL
    assert {k[0] for k in keys} == {"base", "rule-1", "rule-2", "rule-3", "slim"}
    lines = [ln for ln in stdout.splitlines() if ln.strip().startswith(("1 ", "2 ", "3 "))]
    assert "KEY RULE" in lines[-3] and "load-bearing" in lines[-3] and "+100" in lines[-3]
    assert all("no detectable effect" in ln for ln in lines[-2:])
    assert "pass@1 100% vs 100% with the full file" in stdout
    assert "your CLAUDE.md was not changed" in stdout
    for name in ("report.md", "report.json", "report.html"):
        assert (ablate_dir / name).stat().st_size > 0
    assert "**load-bearing**" in (ablate_dir / "report.md").read_text()
    assert (ablate_dir / "suggested-CLAUDE.md").read_text() == EXPECTED_SLIM
    assert (ablate_dir / "variants" / "rule-1" / "CLAUDE.md").read_text() == RULES.replace(
        "- KEY RULE: put each new function fN in its own module calc/fN.py.\n", "")
    assert (repo / "CLAUDE.md").read_bytes() == RULES.encode()  # the user's file, byte for byte
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert status.splitlines() == ["?? .homefield.yml"], status  # the fixture's own untracked config only


@pytest.mark.slow
def test_sigkill_at_n2_then_resume_loses_and_redoes_nothing(repo: Path, tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    args = [sys.executable, "-m", "pytest_homefield.cli", "ablate", "CLAUDE.md", *NO_SANDBOX, "--agent", agent,
            "--attempts", "1",
            "--yes", "--run-id", "k", "-n", "2"]
    proc = subprocess.Popen(args, cwd=repo, env=_clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    results = repo / ".homefield" / "ablate" / "k" / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and sum(1 for _ in read_jsonl(results)) < 8:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller and its xdist workers, mid-ablation
    proc.wait()
    before = list(read_jsonl(results))
    assert 8 <= len(before) < N_TASKS * 4, "the ablation finished its first phase before it could be killed"
    # int24: the controller logged each try's start and first report, as a run's does (atk23 F3); a start
    # without an end is a try the kill cut short (at most one per worker), whatever variant it was of
    folder = repo / ".homefield" / "ablate" / "k"
    killed = list(read_jsonl(folder / "tries.jsonl"))
    assert sum(t["event"] == "start" for t in killed) >= len(before), killed
    assert {t["variant"] for t in killed} >= {r["variant"] for r in before} and len({t["session"] for t in killed}) == 1
    cut = cut_short_by_key([folder])
    assert len(cut) <= 2 and all(k[3] in {"base", "rule-1", "rule-2", "rule-3"} for k in cut), cut
    # the controller appends a try's result line, then its end: a kill between the two leaves a start without
    # an end beside a result, counted as cut (the safe side, contracts §4), at most one (one controller write)
    with_result = {k for k in cut if (k[0], k[3]) in {(r["task_id"], r["variant"]) for r in before}}
    assert len(with_result) <= 1, cut
    # the interleaved order: the first finished attempts already mix variants
    assert len({r["variant"] for r in before}) >= 2
    # resumed at -n 0 (the ablation in one process): it finds the rule the agent needs, with node ids per attempt
    proc2 = homefield(repo, "ablate", "CLAUDE.md", *NO_SANDBOX, "--agent", agent, "--attempts", "1", "--yes",
                      "--resume",
                      "--run-id", "k", "-n", "0", "-v", timeout=900)
    assert proc2.returncode == 0, proc2.stdout[-3000:] + proc2.stderr
    assert "measuring the slimmer file" in proc2.stdout
    after = list(read_jsonl(results))
    assert after[: len(before)] == before  # earlier lines untouched, none redone
    resumed = list(read_jsonl(folder / "tries.jsonl"))[len(killed):]
    assert sum(t["event"] == "end" for t in resumed) == len(after) - len(before)  # each resumed try ended once
    assert {t["session"] for t in resumed}.isdisjoint({t["session"] for t in killed})
    assert cut_short_by_key([folder]) == cut  # the cut tries stay counted; every one was made again
    assert {(k[0], k[3]) for k in cut if k not in with_result} <= {(r["task_id"], r["variant"])
                                                                    for r in after[len(before):]}
    done_before = {(r["variant"], r["task_id"]) for r in before}
    for r in after[len(before):]:  # contracts §5: one node id per attempt, its verdict as the agent earned it
        node = f".homefield/ablate/k/plan.json::{r['variant']}::{r['task_id']}::cmd[1]"
        verdict = "PASSED" if r["outcome"] == "solved" else "UNSOLVED"
        assert f"{node} {verdict}" in proc2.stdout, node
        assert (r["variant"], r["task_id"]) not in done_before
    assert all(r["outcome"] != "solved" for r in after if r["variant"] == "rule-1")  # without the KEY RULE
    assert all(r["outcome"] == "solved" for r in after if r["variant"] in ("base", "rule-2", "rule-3", "slim"))
    _check_finished(repo, repo / ".homefield" / "ablate" / "k", proc2.stdout)
