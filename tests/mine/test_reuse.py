"""Incremental and resumable mining (issue 18, contracts §7): the verification key, the index of
earlier records, and end to end with a spy test command — re-mining an unchanged repository runs no
test, one new commit verifies one candidate, and SIGKILL at three moments followed by the same
command gives the tasks of an uninterrupted mine, verifying again only what was in flight."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import cli_env
from helpers.gitrepo import GitRepo
from helpers.shared_repo import built_once

from pytest_homefield.envs.declaration import KEY_VERSION
from pytest_homefield.layout import HomefieldDir, candidates_path, results_path, reused_path
from pytest_homefield.mine.pipeline import MineSession
from pytest_homefield.mine.redgreen import VERIFY_VERSION
from pytest_homefield.mine.reuse import (
    INPUT_CHARS,
    NOT_RECORDED,
    REPORTER_DIGEST,
    ReuseIndex,
    inputs_differ,
    recorded_inputs,
    reporter_digest,
    reused_record,
    reverified_line,
    verify_inputs,
    verify_key,
)
from pytest_homefield.sandbox.testrun import TEST_ENV_VAR
from pytest_homefield.settings import resolve_settings
from pytest_homefield.store import append_jsonl, read_jsonl

# -- the key ------------------------------------------------------------------------------------------


def _cand(commit: str = "a" * 40, **kw: Any) -> dict[str, Any]:
    return {"commit": commit, "parent": "b" * 40, "test_files": ["tests/test_x.py"], "subject": "Add x to y",
            "message": "Add x to y\n\nbody", "committed_at": "2024-01-01T00:00:00+00:00",
            "authored_at": "2024-01-01T00:00:00+00:00", "source_files": ["pkg/x.py"], **kw}


def _key(tmp_path: Path, cand: dict[str, Any] | None = None, *, runnable: tuple[str, ...] = ("tests/test_x.py",),
         sandbox: str = "none", fp: str = "f" * 16, **flags: Any) -> str:
    s = resolve_settings(tmp_path, flags, mode="mine")
    return verify_key(verify_inputs(cand or _cand(), s, runnable=runnable, sandbox=sandbox, env_fingerprint=fp))


def test_the_key_changes_with_every_verification_input(tmp_path: Path) -> None:
    base = _key(tmp_path)
    assert base == _key(tmp_path) and re.fullmatch(r"[0-9a-f]{24}", base)
    changed = [
        _key(tmp_path, _cand("c" * 40)),
        _key(tmp_path, _cand(parent="d" * 40)),
        _key(tmp_path, _cand(test_files=["tests/test_x.py", "tests/data.txt"])),
        _key(tmp_path, runnable=()),
        _key(tmp_path, sandbox="bwrap"),
        _key(tmp_path, fp="e" * 16),
        _key(tmp_path, stability_runs=2),
        _key(tmp_path, run_timeout=60.0),
        _key(tmp_path, test_timeout=5.0),
        _key(tmp_path, max_test_memory_mb=2048.0),
        _key(tmp_path, max_test_write_mb=64.0),
        _key(tmp_path, max_procs=64),
    ]
    (tmp_path / ".homefield.yml").write_text("test_cmd: python -m pytest -x\n")
    changed.append(_key(tmp_path))
    (tmp_path / ".homefield.yml").write_text("setup_cmd: make\n")
    changed.append(_key(tmp_path))
    assert base not in changed and len(set(changed)) == len(changed)
    assert _key(tmp_path / "x", max_test_write_mb=1024.0) == _key(tmp_path / "x")  # the default: keys made before it
    assert _key(tmp_path / "x", max_procs=512) == _key(tmp_path / "x")
    # what only the prompt depends on is not a verification input
    assert _key(tmp_path / "x", _cand(subject="Other words here", message="Other words here")) == \
        _key(tmp_path / "x")
    s = resolve_settings(tmp_path, {}, mode="mine")
    inputs = verify_inputs(_cand(), s, runnable=[], sandbox="none", env_fingerprint="")
    assert inputs["verify_version"] == VERIFY_VERSION
    assert inputs["reporter"] == REPORTER_DIGEST and re.fullmatch(r"[0-9a-f]{12}", REPORTER_DIGEST)
    assert verify_key({**inputs, "reporter": "0" * 12}) != verify_key(inputs)  # a changed reporter verifies again
    # with --env uv, environments read or built another way (KEY_VERSION) verify again: a declaration that
    # gained requirements/tests.txt (pallets-eco/blinker) was reused as dropped without pytest-asyncio
    uv = verify_inputs(_cand(), resolve_settings(tmp_path, {"env": "uv"}, mode="mine"), runnable=[], sandbox="none",
                       env_fingerprint="")
    assert uv["env"]["key_version"] == KEY_VERSION and "key_version" not in inputs["env"]


def _record(commit: str, key: str, **kw: Any) -> dict[str, Any]:
    return {"commit": commit, "id": commit[:12], "subject": "s", "reason": "passes_without_change", "detail": "",
            "FAIL_TO_PASS": 0, "PASS_TO_PASS": 0, "excluded": {}, "red_by_import_error": 0, "seconds": 1.5,
            "verify_key": key, **kw}


def test_the_index_takes_settled_records_newest_session_last(tmp_path: Path) -> None:
    home = HomefieldDir(tmp_path)
    old, new, current = home.new_mine_dir(), home.new_mine_dir(), home.new_mine_dir()
    os.utime(old, (1, 1))
    os.utime(new, (2, 2))
    append_jsonl(results_path(old), _record("a" * 40, "k1", detail="old"))
    append_jsonl(results_path(old), _record("b" * 40, "k2"))
    append_jsonl(results_path(new), _record("a" * 40, "k1", detail="new"))
    append_jsonl(results_path(new), _record("c" * 40, "k3", reason="max_tasks"))  # never verified
    append_jsonl(results_path(new), _record("d" * 40, "k4", reason=None))  # kept, but no task: not usable
    append_jsonl(results_path(new), _record("d" * 40, "k6", reason=None, task={"id": "x"}))  # an invalid task
    append_jsonl(results_path(new), {"commit": "e" * 40, "reason": "flaky"})  # before keys existed
    append_jsonl(results_path(new), _record("9" * 40, "k7", reason="setup_failed"))  # the environment's, not settled
    append_jsonl(results_path(current), _record("f" * 40, "k5"))
    index = ReuseIndex.load(home, skip=current)
    assert sorted(index.records) == ["k1", "k2"] and index.records["k1"]["detail"] == "new"
    assert index.sources == {"k1": new.name, "k2": old.name}
    assert sorted(ReuseIndex.load(home, keys=["k2", "k5"]).records) == ["k2", "k5"]


def test_a_reused_task_keeps_the_verification_and_takes_the_prompt_from_this_scan() -> None:
    task = {"id": "a" * 12, "commit": "a" * 40, "parent": "b" * 40, "committed_at": "2024-01-01T00:00:00+00:00",
            "authored_at": "2024-01-01T00:00:00+00:00", "mode": "commit", "subject": "Old subject words",
            "message": "Old subject words", "prompt": "Old subject words", "source_files": ["pkg/x.py"],
            "test_files": ["tests/test_x.py"], "test_patch": "diff --git a/tests/test_x.py b/tests/test_x.py\n",
            "gold_patch": "diff --git a/pkg/x.py b/pkg/x.py\n", "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": ["t::b"],
            "excluded": {"t::c": "flaky"}, "verify": {"stability_runs": 3, "parent_s": 1.0, "commit_s": 2.0}}
    prior = _record("a" * 40, "k1", reason=None, FAIL_TO_PASS=1, task=task, reused_from="older")
    rec = reused_record(_cand(prompt="Add x to y"), prior, source="m1")
    assert rec["reused_from"] == "m1" and rec["verify_key"] == "k1" and rec["seconds"] == 1.5
    assert rec["subject"] == "Add x to y" and rec["task"]["prompt"] == "Add x to y"
    assert rec["task"]["FAIL_TO_PASS"] == ["t::a"] and rec["task"]["excluded"] == {"t::c": "flaky"}
    assert rec["task"]["verify"] == task["verify"] and rec["task"]["schema_version"] == 1


def _one_task_repo(path: Path) -> GitRepo:
    """A repository of two commits, the second a task (``X`` made 2, with its test)."""
    repo = GitRepo.init(path)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/x.py", "X = 1\n")
    repo.commit("Start the package here")
    repo.write("pkg/x.py", "X = 2\n")
    repo.write("tests/test_x.py", "from pkg.x import X\n\ndef test_x():\n    assert X == 2\n")
    repo.commit("Make X two with a test")
    return repo


def test_reverify_reuses_nothing(tmp_path: Path) -> None:
    repo = _one_task_repo(tmp_path / "r")
    s = resolve_settings(repo.path, {"sandbox": "none"}, mode="mine")
    first = MineSession.start(s)
    [cand] = list(first.candidates())
    append_jsonl(first.results_path, _record(cand["commit"], cand["verify_key"]))
    again = MineSession.start(s)
    assert [r["verify_key"] for r in read_jsonl(reused_path(again.mine_dir))] == [cand["verify_key"]]
    verdict = again.verify(cand, cand["commit"][:12])
    assert verdict.reused and verdict.record["reused_from"] == first.mine_dir.name
    forced = MineSession.start(resolve_settings(repo.path, {"sandbox": "none", "reverify": True}, mode="mine"))
    assert list(read_jsonl(reused_path(forced.mine_dir))) == []
    # a worker on another host gets the reused records with the candidates
    info = json.loads(json.dumps(again.workerinput()))
    shutil.rmtree(again.mine_dir)
    worker = MineSession.join(s, info)
    assert candidates_path(worker.mine_dir).exists() and list(worker.reusable()) == [cand["verify_key"]]


# -- why a candidate was verified again (why66) -------------------------------------------------------------


def test_the_recorded_inputs_are_flat_and_a_long_one_is_its_digest(tmp_path: Path) -> None:
    s = resolve_settings(tmp_path, {}, mode="mine")
    many = [f"tests/test_{i}.py" for i in range(40)]
    inputs = verify_inputs(_cand(test_files=many), s, runnable=["tests/test_x.py"], sandbox="none",
                           env_fingerprint="e" * 16)
    rec = recorded_inputs(inputs)
    assert rec["env.fingerprint"] == "e" * 16 and rec["env.env"] == inputs["env"]["env"] and "env" not in rec
    assert rec["runnable"] == ["tests/test_x.py"] and rec["reporter"] == REPORTER_DIGEST
    assert re.fullmatch(r"sha256:[0-9a-f]{12}", rec["test_files"]) and len(json.dumps(many)) > INPUT_CHARS
    assert len(json.dumps(rec)) < 1000
    other = recorded_inputs({**inputs, "reporter": "0" * 12, "test_files": [*many, "tests/test_40.py"],
                             "env": {**inputs["env"], "fingerprint": "d" * 16}})
    assert inputs_differ(rec, other) == ["test_files", "env.fingerprint", "reporter"]
    assert inputs_differ(rec, {k: v for k, v in rec.items() if k != "sandbox"}) == ["sandbox"]
    assert inputs_differ(rec, dict(rec)) == []


def test_the_line_names_the_inputs_that_differ_from_the_earlier_mine() -> None:
    """more-itertools, r45: 8 candidates verified again (27 minutes) under keys that differed in the reporter
    alone (a merge 34 s before the re-run); nothing on file said so."""
    base = {"commit": "a" * 40, "stability_runs": 3, "env.fingerprint": "e" * 16, "reporter": "e3382eb10390"}
    earlier = {c * 40: _record(c * 40, f"old{c}", verify_inputs={**base, "commit": c * 40}) for c in "abc"}
    earlier["d" * 40] = _record("d" * 40, "oldd")  # recorded before records kept their inputs
    now = [_record(c * 40, f"new{c}", verify_inputs={**base, "commit": c * 40, "reporter": "aa8e91fae0f8"})
           for c in "ab"]
    now.append(_record("c" * 40, "newc", verify_inputs={**base, "commit": "c" * 40, "stability_runs": 2,
                                                        "reporter": "aa8e91fae0f8"}))
    now.append(_record("d" * 40, "newd", verify_inputs=base))
    now.append(_record("e" * 40, "newe", verify_inputs=base))  # no earlier record: not counted
    now.append(_record("f" * 40, "oldf", reused_from="m0"))  # reused
    earlier["f" * 40] = _record("f" * 40, "oldf")
    line = reverified_line(now, earlier)
    assert line == ("Verified again: 4 of 5 candidates an earlier mine settled, under other verification inputs: "
                    "reporter (3: e3382eb10390 -> aa8e91fae0f8, homefield's outcome reporter changed: a newer "
                    f"homefield); stability_runs (1: 3 -> 2); {NOT_RECORDED} (1)"), line
    assert reverified_line(now[-1:], earlier) is None and reverified_line(now, {}) is None
    # a bound left it unverified: neither verified again nor counted
    assert reverified_line([_record("a" * 40, "newa", reason="not_verified")], earlier) is None


@pytest.mark.slow
def test_a_mine_records_its_inputs_and_says_what_made_it_verify_again(tmp_path: Path) -> None:
    """The frozen candidate and its verification record carry the inputs of the key; a second mine whose
    ``stability_runs`` differ verifies the commit again and its summary names the input."""
    repo = _one_task_repo(tmp_path / "r")
    records = []
    for runs in (1, 2):
        s = resolve_settings(repo.path, {"sandbox": "none", "stability_runs": runs, "test_cmd":
                                         f"{sys.executable} -m pytest {NO_PLUGINS}"}, mode="mine")
        session = MineSession.start(s)
        [cand] = list(session.candidates())
        assert cand["verify_inputs"]["stability_runs"] == runs and cand["verify_inputs"]["commit"] == cand["commit"]
        verdict = session.verify(cand, cand["commit"][:12])
        assert not verdict.reused and verdict.record["verify_inputs"] == cand["verify_inputs"]
        append_jsonl(session.results_path, verdict.record)
        records.append(verdict.record)
        lines = session.finish()
    assert [r["reason"] for r in records] == [None, None], records
    assert (f"Verified again: 1 of 1 candidates an earlier mine settled, under other verification inputs: "
            "stability_runs (1: 1 -> 2)") in lines, lines


# -- end to end with a spy test command -----------------------------------------------------------------

N_TASKS = 3


def _history(root: Path, n: int = N_TASKS) -> GitRepo:
    """``n`` candidates that are tasks (``f<i>`` added with its test) and one that passes without its
    change, each with its own test file so the spy log names the candidate."""
    repo = GitRepo.init(root)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/base.py", "BASE = 1\n")
    repo.commit("Start the package with a base")
    for i in range(1, n + 1):
        _add_task(repo, i)
        if i == 2:
            repo.write("pkg/base.py", '"""Base."""\nBASE = 1\n')
            repo.write("tests/test_f0.py", "from pkg.base import BASE\n\ndef test_base():\n    assert BASE == 1\n")
            repo.commit("Document the base module properly")
    return repo


def _add_task(repo: GitRepo, i: int) -> str:
    repo.write(f"pkg/f{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    repo.write(f"tests/test_f{i}.py", f"def test_ok():\n    pass\n\ndef test_f{i}():\n    from pkg.f{i} import f{i}\n"
                                      f"    assert f{i}(1) == {i + 1}\n")
    return repo.commit(f"Add function f{i} with its test")


SPY_ENV = "HF_SPY_LOG"


def _configure(repo: Path, base: Path) -> None:
    """``.homefield.yml`` (uncommitted, excluded) whose test command is a spy: it logs its arguments
    to the file named by ``$HF_SPY_LOG``, then runs pytest. One script per ``base`` folder, so that
    two repositories configured from the same base have the same ``test_cmd``."""
    spy = base / "spy.sh"
    if not spy.exists():
        spy.write_text(f'#!/bin/sh\necho "$*" >> "${SPY_ENV}"\n'
                       f'exec {shlex.quote(sys.executable)} -m pytest {NO_PLUGINS} "$@"\n')
    (repo / ".homefield.yml").write_text(
        f"test_cmd: sh {shlex.quote(str(spy))}\nmine:\n  stability_runs: 1\n")
    with open(repo / ".git" / "info" / "exclude", "a") as fh:
        fh.write(".homefield.yml\n")


#: A mine that a test kills runs at -n 2 (candidates in flight in two workers); the others at -n 0 (:func:`_mine`).
MINE = ("mine", "-n", "2", "--sandbox", "none")


def _env(spy_log: Path) -> dict[str, str]:
    """:func:`cli_env` (this machine's unused pytest plugins blocked) with the spy's log, its variable named for
    the test commands (they get only the host variables named: sandbox/testrun.py ``TEST_ENV_NAMES``)."""
    env = cli_env()
    env[SPY_ENV] = str(spy_log)
    env[TEST_ENV_VAR] = SPY_ENV
    return env


def _mine(repo: Path, spy_log: Path, *extra: str) -> str:
    """:data:`MINE` at -n 0; returns its output."""
    args = ["mine", "-n", "0", "--sandbox", "none", *extra]
    proc = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=_env(spy_log),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _spied(spy_log: Path, start: int = 0) -> list[str]:
    """Candidates (``f<i>``) of the spy log's lines from ``start``, one per test-command run."""
    lines = spy_log.read_text().splitlines()[start:] if spy_log.exists() else []
    return [m.group(1) for line in lines if (m := re.search(r"tests/test_(f\d+)\.py", line))]


def _tasks(repo: Path) -> list[dict[str, Any]]:
    """tasks.jsonl without its timing fields (and the load they were timed at)."""
    out = []
    for t in read_jsonl(HomefieldDir(repo).tasks):
        t["verify"] = {k: v for k, v in t["verify"].items() if not k.endswith("_s") and k != "load_per_cpu"}
        out.append(t)
    return out


@pytest.fixture(scope="session")
def mined(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> tuple[Path, Path, str]:
    """A fresh mine of the history: (repository, spy log, output), once per test session, shared by xdist
    workers (:func:`~helpers.shared_repo.built_once`; a module fixture mined it again in each worker that
    ran one of this file's two tests: 8 s of CPU). Its spy script lies beside the repository, and a test
    that configures another repository from the same folder gets the same ``test_cmd``."""

    def make(repo: Path) -> None:
        (repo.parent / "spy.log").unlink(missing_ok=True)  # a failed attempt's runs
        _configure(_history(repo).path, repo.parent)
        (repo.parent / "mine.out").write_text(_mine(repo, repo.parent / "spy.log"))

    repo = built_once(tmp_path_factory, testrun_uid, "reuse-mined", make)
    return repo, repo.parent / "spy.log", (repo.parent / "mine.out").read_text()


@pytest.mark.slow
def test_remining_runs_no_test_and_one_new_commit_verifies_one(mined: tuple[Path, Path, str],
                                                                tmp_path: Path) -> None:
    first_repo, first_log, out = mined
    assert set(_spied(first_log)) == {f"f{i}" for i in range(N_TASKS + 1)}
    assert f"Mined {N_TASKS} tasks from {N_TASKS + 1} candidates" in out, out
    assert f"Candidates: reused 0, verified {N_TASKS + 1}" in out
    repo = tmp_path / "repo"
    shutil.copytree(first_repo, repo, symlinks=True)
    spy_log = tmp_path / "spy.log"
    before = _tasks(repo)
    out = _mine(repo, spy_log)
    assert not spy_log.exists(), "re-mining an unchanged repository ran the test command"
    assert f"Candidates: reused {N_TASKS + 1}, verified 0" in out and f"Mined {N_TASKS} tasks" in out
    assert "Verified again" not in out, out  # the same inputs: nothing verified again, nothing to explain
    assert _tasks(repo) == before
    _add_task(GitRepo(repo), N_TASKS + 1)
    out = _mine(repo, spy_log)
    assert f"Candidates: reused {N_TASKS + 1}, verified 1 " in out, out
    assert set(_spied(spy_log)) == {f"f{N_TASKS + 1}"}
    newest = HomefieldDir(repo).mine_dirs()[-1]
    fresh = [r["id"] for r in read_jsonl(results_path(newest)) if not r.get("reused_from")]
    assert len(fresh) == 1 and len(_tasks(repo)) == N_TASKS + 1


def _kill_when(proc: subprocess.Popen[str], ready: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, "mining ended before the moment to kill it"
        assert time.monotonic() < deadline, "the moment to kill never came"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.mark.slow
def test_sigkill_at_three_moments_then_the_same_command(mined: tuple[Path, Path, str], tmp_path: Path) -> None:
    reference_repo, _, _ = mined
    root = tmp_path
    repo = _history(root / "repo")
    spy_log = root / "spy.log"
    _configure(repo.path, reference_repo.parent)  # the reference's test_cmd
    home = HomefieldDir(repo.path)
    n_cand = N_TASKS + 1

    def records(d: Path) -> list[dict[str, Any]]:
        return list(read_jsonl(results_path(d)))

    # the moments: 1. a candidate in flight, none finished; 2. two finished; 3. one more finished
    moments = [
        lambda d, start: d is not None and len(_spied(spy_log, start)) > 0 and not records(d),
        lambda d, start: d is not None and len(records(d)) >= 2,
        lambda d, start: d is not None and sum(1 for r in records(d) if not r.get("reused_from")) >= 1,
    ]
    in_flight: set[str] = set()
    runs_by_session: list[set[str]] = []
    for moment in moments:
        known = set(home.mine_dirs())
        start = len(spy_log.read_text().splitlines()) if spy_log.exists() else 0
        proc = subprocess.Popen([sys.executable, "-m", "pytest_homefield.cli", *MINE], cwd=repo.path, env=_env(spy_log),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)

        def session(known: set[Path] = known) -> Path | None:
            new = [d for d in home.mine_dirs() if d not in known and candidates_path(d).exists()]
            return new[0] if new else None

        _kill_when(proc, lambda: moment(session(), start))  # noqa: B023
        d = session()
        assert d is not None
        done = {r["id"] for r in records(d)}
        ids = {c["commit"][:12]: c for c in read_jsonl(candidates_path(d))}
        spied = set(_spied(spy_log, start))
        runs_by_session.append(spied)
        # in flight: test runs started, no record received
        in_flight |= {f for f in spied if not any(f"tests/test_{f}.py" in c["test_files"] and i in done
                                                  for i, c in ids.items())}
    start = len(spy_log.read_text().splitlines())
    out = _mine(repo.path, spy_log)
    runs_by_session.append(set(_spied(spy_log, start)))
    assert f"Mined {N_TASKS} tasks from {n_cand} candidates" in out, out
    assert _tasks(repo.path) == _tasks(reference_repo)
    verified_twice = {f for f in set().union(*runs_by_session)
                      if sum(1 for s in runs_by_session if f in s) > 1}
    assert in_flight, "no candidate was in flight at any kill"
    assert verified_twice <= in_flight, (verified_twice, in_flight)
    assert len(verified_twice) <= len(in_flight)


@pytest.mark.parametrize("name", ["homefield_reporter.py", "homefield_seal.py", "homefield_stub.py"])
def test_the_reporter_digest_changes_with_each_module_a_test_run_loads(tmp_path: Path, name: str) -> None:
    """A verification is reused only while what its test runs loaded from ``_reporter/`` is unchanged: the outcome
    reporter, the seal call (a sealed run decides ``sealed_sites``) and mining's stub of missing names (it decides
    ``passes_with_stub``; ms35 noted a change to the stub alone kept the old records)."""
    from pytest_homefield.sandbox.testrun import REPORTER_DIR

    copy = tmp_path / "r"
    copy.mkdir()
    for p in REPORTER_DIR.glob("*.py"):
        (copy / p.name).write_bytes(p.read_bytes())
    assert reporter_digest(copy) == REPORTER_DIGEST
    (copy / name).write_bytes((copy / name).read_bytes() + b"\n# changed\n")
    assert reporter_digest(copy) != REPORTER_DIGEST
