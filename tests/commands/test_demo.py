"""``homefield demo`` and the sample history it mines (``examples/sample-project/build_history.py``)."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.demo_run import DemoRun, clean_env
from helpers.e2e_repo import UNUSED_PLUGINS

from pytest_homefield.commands import demo
from pytest_homefield.commands.demo import find_build_history, load_build_history

SCAN_REASONS = {"no_test_change", "docs_only", "dependency_change", "message_too_short"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sample() -> Any:
    return load_build_history()


def test_build_history_is_reproducible(sample: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = sample.build(tmp_path / "a")
    # a hostile user configuration and git variables must not change a single sha
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Someone Else\n[commit]\n\tgpgsign = true\n"
                                     "[init]\n\tdefaultBranch = trunk\n[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Mallory")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2030-01-01T00:00:00Z")
    second = sample.build(tmp_path / "b", python="/opt/other/python")
    assert first == second
    assert len(first) == len(sample.COMMITS) == 16
    # pinned: a change to any file, message, author or date of the history shows here (update the
    # pin, and anything that quotes the sample's task ids, when the change is meant)
    assert first[-1] == "5e4f5c1cddcbc5625b24c4876c96c4b1c83aea81"
    repo = tmp_path / "b"
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True)
    assert status.stdout == ""  # .homefield.yml is uncommitted and excluded
    assert "/opt/other/python -m pytest" in (repo / ".homefield.yml").read_text()
    branch = subprocess.run(["git", "symbolic-ref", "--short", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert branch.stdout.strip() == "main"


def test_build_history_script(tmp_path: Path) -> None:
    script = find_build_history()
    assert script is not None
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "r"), "--no-config"], capture_output=True,
                          text=True, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 17 and lines[-1].startswith("16 commits in ")
    assert not (tmp_path / "r" / ".homefield.yml").exists()
    again = subprocess.run([sys.executable, str(script), str(tmp_path / "r")], capture_output=True, text=True,
                           env=clean_env(), timeout=120)
    assert again.returncode == 2 and "is not empty" in again.stderr


def test_sample_scan_outcomes(sample: Any, tmp_path: Path) -> None:
    """What the scan alone decides (no test runs): the history's rejected commits and candidates."""
    repo = tmp_path / "r"
    shas = sample.build(repo)
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "mine", "--list-candidates", "-v"], cwd=repo,
                          capture_output=True, text=True, env=clean_env(PYTEST_ADDOPTS=UNUSED_PLUGINS), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    expect = {sha[:12]: c.expect for sha, c in zip(shas, sample.COMMITS, strict=True)}
    seen: dict[str, str] = {}
    for line in lines[:-1]:
        sha, rest = line.split(" ", 1)
        rest = rest.split(" ", 1)[1]  # the author date, on candidate and rejected rows alike
        reason = next((r for r in SCAN_REASONS if rest.startswith(r.replace("_", " ") + " ")), "candidate")
        seen[sha] = reason
    assert seen == {sha: (e if e in SCAN_REASONS else "candidate") for sha, e in expect.items()}
    assert lines[-1].startswith("11 candidates from 16 commits; rejected: ")


def test_demo_without_sample_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(demo, "find_build_history", lambda: None)
    assert demo.run_demo(argparse.Namespace(dir=None, numprocesses="auto")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "examples/sample-project/build_history.py" in err


def test_demo_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    assert demo.run_demo(argparse.Namespace(dir=str(tmp_path), numprocesses="0")) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_demo_end_to_end(sample: Any, demo_run: DemoRun) -> None:
    """``homefield demo --dir DIR -n 2`` in a clean environment (helpers/demo_run.py: run once per test
    session; the probe tests then probe the sample it mined)."""
    repo, out, elapsed = demo_run.repo, demo_run.stdout, demo_run.elapsed_s
    assert demo_run.returncode == 0, out[-5000:] + demo_run.stderr[-3000:]
    shas = subprocess.run(["git", "log", "--reverse", "--format=%H"], cwd=repo, capture_output=True,
                          text=True).stdout.split()
    expect = {sha: c.expect for sha, c in zip(shas, sample.COMMITS, strict=True)}

    # mining: every commit ends the way the history says
    hf = repo / ".homefield"
    tasks = _jsonl(hf / "tasks.jsonl")
    assert sorted(t["commit"] for t in tasks) == sorted(s for s, e in expect.items() if e == "task")
    assert len(tasks) == 8
    (mine_dir,) = (hf / "mine").iterdir()
    got = {r["commit"]: r["reason"] or "task" for r in _jsonl(mine_dir / "results.jsonl")}
    got.update({r["commit"]: r["reason"] for r in _jsonl(mine_dir / "scan.jsonl")})
    assert got == expect
    vague = [t for t in tasks if t["subject"] == "Handle edge cases"]
    assert len(vague) == 1 and not vague[0]["well_specified"] and vague[0]["spec_score"] < 0.5
    assert sum(t["well_specified"] for t in tasks) == 7

    # the run: oracle solves everything, noop nothing, the simulated agents something in between
    (run_dir,) = (hf / "runs").iterdir()
    results = _jsonl(run_dir / "results.jsonl")
    assert len(results) == 8 * 4 * 3
    solved = {a: sum(r["solved"] for r in results if r["agent"] == a) for a in ("oracle", "sim-0.7", "sim-0.5", "noop")}
    assert solved["oracle"] == 24 and solved["noop"] == 0
    assert 0 < solved["sim-0.5"] <= solved["sim-0.7"] < 24
    assert {r["outcome"] for r in results if r["agent"] == "noop"} == {"empty_patch"}
    report = json.loads((run_dir / "report.json").read_text())
    assert report["agents"]["oracle"]["pass_at_1"] == 1.0 and report["agents"]["noop"]["pass_at_1"] == 0.0
    assert (run_dir / "report.html").stat().st_size > 1000

    # what the demo prints last
    summary = out[out.index("homefield demo summary"):]
    assert f"report: {run_dir / 'report.html'}" in summary
    assert "mined:  8 tasks from 11 candidates (1 not well specified)" in summary
    # ux33: the candidates dropped apart from the commits the scan set aside (5 of the 16 never were candidates)
    # (ties in the order the verifications finished)
    dropped = next(line.strip() for line in summary.splitlines() if "dropped:" in line)
    assert re.fullmatch(r"dropped: 3 of 11 candidates verified \((reference fails|flaky|passes without change) 1"
                        r"(, (reference fails|flaky|passes without change) 1){2}\); 5 commits at the scan, before any "
                        r"test \(no test change 2, .*\)", dropped), dropped
    assert "oracle   solved 24/24" in summary and "noop     solved  0/24" in summary
    print(summary)
    print(f"demo wall time: {elapsed:.0f} s")
