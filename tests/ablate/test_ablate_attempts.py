"""An ablation's attempts are a run's attempts (issue 29): the same attempt settings reach every variant,
so a conftest's ``pytest_homefield_sandbox`` hook wraps each agent process, ``env: uv`` grades in the
commit's environment, and a ``cmd:`` agent on a machine without bubblewrap is refused before anything
starts, as a run is. Each at ``-n 0`` and ``-n 2``."""

from __future__ import annotations

import fcntl
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.ablate_repo import write_agent
from helpers.e2e_repo import cli_env
from helpers.env_repo import build_env_repo, build_find_links, offline_env
from helpers.gitrepo import GitRepo

from pytest_homefield.envs.builder import release_envs
from pytest_homefield.envs.stage import commit_env
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.store import read_jsonl, write_jsonl_atomic

pytestmark = pytest.mark.slow

WORKERS = [pytest.param("0", id="n0"), pytest.param("2", id="n2")]

#: One rule: base and one variant per task, and no session for the slimmer file (it is the variant).
RULES = "# Rules\n\n- KEY RULE: put each new function fN in its own module calc/fN.py.\n"

#: A conftest whose sandbox hook logs each call (agent, purpose, the argv's program) and runs the
#: program under ``env`` with a marker variable: what a podman or docker hook does, minus the container.
#: The commit of the ``--env uv`` task: it adds the ``hfdep`` dependency (tests/helpers/env_repo.py).
SUBJECT = "Double numbers with the hfdep package"

HOOK_CONFTEST = '''import json, os

def pytest_homefield_sandbox(argv, ctx):
    with open(os.environ["HF_HOOK_LOG"], "a") as fh:
        fh.write(json.dumps({"agent": ctx.agent, "purpose": ctx.purpose, "pid": os.getpid()}) + "\\n")
    return ["env", "HF_WRAPPED=yes", *argv]
'''


def _homefield(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo,
                          env={**cli_env(), **(env or {})}, capture_output=True, text=True, timeout=600)


@pytest.fixture
def repo(ablate_repo: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "repo"
    shutil.copytree(ablate_repo, dest, symlinks=True)
    return dest


@pytest.mark.parametrize("workers", WORKERS)
def test_the_sandbox_hook_wraps_every_agent_process_of_an_ablation(repo: Path, tmp_path: Path, workers: str) -> None:
    """The agent reads its rules from a script outside the workspace, which bubblewrap would hide: through
    the hook it runs and solves the base variant's tasks."""
    (repo / "conftest.py").write_text(HOOK_CONFTEST)
    (repo / "RULES.md").write_text(RULES)
    log = tmp_path / "hook.log"
    agent = f"cmd:{sys.executable} -S {write_agent(tmp_path)} RULES.md"
    proc = _homefield(repo, "ablate", "RULES.md", "--agent", agent, "--attempts", "1", "--max-tasks", "2",
                      "--yes", "--run-id", "h", "-n", workers, env={"HF_HOOK_LOG": str(log)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    results = list(read_jsonl(repo / ".homefield" / "ablate" / "h" / "results.jsonl"))
    assert sorted((r["variant"], r["outcome"]) for r in results) == [("base", "solved")] * 2 + \
        [("rule-1", "empty_patch")] * 2
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    agent_calls = [c for c in calls if c["purpose"] == "agent"]
    assert len(agent_calls) == len(results), (calls, results)  # one agent process per attempt, each wrapped
    assert {c["agent"] for c in agent_calls} == {"cmd"}
    # the hook wraps the hidden tests' runs too (issue 29: test runs go through the sandbox backend)
    assert {c["purpose"] for c in calls} == {"agent", "tests"}
    graded = [r for r in results if r["outcome"] != "empty_patch"]  # an empty patch is never graded
    assert {r["sandbox"] for r in results} == {"hook"} and {r["test_sandbox"] for r in graded} == {"hook"}
    if workers == "2":  # the workers called the hook, not the controller
        assert len({c["pid"] for c in calls}) >= 2


def _env_task(repo: GitRepo, subject: str) -> Task:
    """The task of the commit ``subject`` without an ``env`` object (mined without ``--env uv``)."""
    log = repo.git("log", "--format=%H %P %s")
    commit, parent = next(line.split()[:2] for line in log.splitlines() if line.endswith(subject))
    tests = ["tests/test_double.py"]
    return Task(
        id=commit[:12], commit=commit, parent=parent, committed_at="2024-01-01T01:00:00+00:00",
        authored_at="2024-01-01T01:00:00+00:00", mode="commit", subject=subject, message=subject,
        prompt=clean_prompt(subject), source_files=["hfproj/double.py", "pyproject.toml"], test_files=tests,
        test_patch=make_test_patch(repo.path, parent, commit, tests),
        gold_patch=make_gold_patch(repo.path, parent, commit, tests),
        FAIL_TO_PASS=["tests/test_double.py::test_double"], PASS_TO_PASS=[], test_cmd="python -m pytest",
    )


@pytest.fixture(scope="session")
def uv_offline(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> dict[str, str]:
    """uv offline with a local wheel folder and one cache for every worker of the test session, with the
    environment of the task's commit built in it before any ablation starts: each ablation then finds
    it built (two processes of one session that both build it can wait on each other's lock)."""
    shared = tmp_path_factory.getbasetemp().parent / f"uv-offline-{testrun_uid}"
    shared.mkdir(exist_ok=True)
    env = offline_env(shared / "links", shared / "cache")
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "built").exists():
            shutil.rmtree(shared / "links", ignore_errors=True)
            build_find_links(shared / "links")
            git = _env_repo(shared / "repo")
            with pytest.MonkeyPatch.context() as mp:
                for name, value in env.items():
                    mp.setenv(name, value)
                commit_env(git.path, _env_task(git, SUBJECT).commit)
            release_envs()
            (shared / "built").touch()
    return env


def _env_repo(dest: Path) -> GitRepo:
    """The ``--env uv`` fixture repository with a rules file committed after its history."""
    git = build_env_repo(dest)
    git.write("CLAUDE.md", RULES)
    git.commit("Rules for agents")
    return git


@pytest.mark.parametrize("workers", WORKERS)
def test_an_ablation_with_env_uv_grades_in_the_commits_environment(tmp_path: Path, uv_offline: dict[str, str],
                                                                   workers: str) -> None:
    """The task needs ``hfdep``, which only the commit's environment has: graded in this environment the
    oracle's patch fails to import it; with ``env: uv`` (``.homefield.yml``) every variant solves it."""
    git = _env_repo(tmp_path / "repo")
    repo = git.path
    task = _env_task(git, SUBJECT)
    assert task.env is None
    write_jsonl_atomic(repo / ".homefield" / "tasks.jsonl", [task.to_dict()])
    (repo / ".git" / "info" / "exclude").write_text("/.homefield/\n/.homefield.yml\n")
    (repo / ".homefield.yml").write_text("env: uv\n")
    proc = _homefield(repo, "ablate", "CLAUDE.md", "--agent", "oracle", "--attempts", "1", "--yes", "--run-id", "u",
                      "-n", workers, env=uv_offline)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    results = list(read_jsonl(repo / ".homefield" / "ablate" / "u" / "results.jsonl"))
    assert sorted(r["variant"] for r in results) == ["base", "rule-1"]
    assert {r["outcome"] for r in results} == {"solved"}, [(r["variant"], r["outcome"], r["error"]) for r in results]


def test_the_commits_environment_is_what_solves_it(tmp_path: Path) -> None:
    """The control of the test above: the same ablation without ``env: uv`` grades in this environment,
    where ``hfdep`` is missing, and no attempt is solved."""
    git = _env_repo(tmp_path / "repo")
    repo = git.path
    write_jsonl_atomic(repo / ".homefield" / "tasks.jsonl", [_env_task(git, SUBJECT).to_dict()])
    (repo / ".git" / "info" / "exclude").write_text("/.homefield/\n")
    proc = _homefield(repo, "ablate", "CLAUDE.md", "--agent", "oracle", "--attempts", "1", "--yes", "--run-id", "c",
                      "-n", "0")
    results = list(read_jsonl(repo / ".homefield" / "ablate" / "c" / "results.jsonl"))
    assert results and all(r["outcome"] != "solved" for r in results), proc.stdout[-3000:]


@pytest.mark.parametrize("workers", WORKERS)
def test_an_ablation_of_a_cmd_agent_without_bubblewrap_is_refused_as_a_run_is(repo: Path, tmp_path: Path,
                                                                               workers: str) -> None:
    """``--sandbox auto`` where bubblewrap does not work (``HOMEFIELD_BWRAP`` names no program): the run
    and the ablation of a ``cmd:`` agent both stop with the same one line before any agent starts, and
    the ablation writes no folder."""
    spy = tmp_path / "spy.log"
    agent = f"cmd:{sys.executable} -S {write_agent(tmp_path)} CLAUDE.md {shlex.quote(str(spy))}"
    no_bwrap = {"HOMEFIELD_BWRAP": str(tmp_path / "no" / "bwrap"), "HOMEFIELD_LANDLOCK": "off"}  # no sandbox
    run = _homefield(repo, "run", "--agent", agent, "--attempts", "1", "-n", workers, env=no_bwrap)
    ablate = _homefield(repo, "ablate", "CLAUDE.md", "--agent", agent, "--attempts", "1", "--yes", "--run-id", "b",
                        "-n", workers, env=no_bwrap)
    refusal = [ln for ln in run.stderr.splitlines() if "bubblewrap" in ln]
    assert run.returncode == 4 and len(refusal) == 1, run.stdout[-2000:] + run.stderr
    assert refusal[0].startswith("ERROR: pytest-homefield: agent 'cmd' can run commands, but bubblewrap (bwrap) is "
                                 "not installed")
    assert ablate.returncode == run.returncode, ablate.stdout[-3000:] + ablate.stderr[-2000:]
    assert [ln for ln in ablate.stderr.splitlines() if "bubblewrap" in ln] == refusal
    assert not spy.exists(), "an agent started"
    assert not (repo / ".homefield" / "ablate").exists() and not (repo / ".homefield" / "runs").exists()
