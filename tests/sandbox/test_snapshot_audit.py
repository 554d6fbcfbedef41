"""A snapshot leaks nothing (contracts §7, §9), audited from the agent's side.

One ``homefield run`` (one xdist worker, so the agent is started from inside a worker's test item)
on the repository of :mod:`attack_repo`: later commits, a branch, tags, a note, a stash, reflogs,
a dirty and junk-filled working tree, a real ``.homefield/tasks.jsonl``, and the caller's environment
carrying ``GIT_DIR`` and a variable holding the task's commit. The agent dumps its environment,
working directory, prompt and everything git shows it into ``agent.out`` and copies its workspace
out; the tests then look for anything that names the task or the future.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.attack_repo import Fixture, build, git, task_for

from pytest_homefield.agents.base import render_prompt
from pytest_homefield.records import Task

#: Variables an agent may see (contracts §9), plus those ``sh`` sets itself.
ALLOWED_ENV = {"PATH", "HOME", "USER", "LANG", "TERM", "SHELL", "TMPDIR", "HOMEFIELD_PROMPT", "HOMEFIELD_ATTEMPT",
               "PWD", "OLDPWD", "SHLVL", "_"}
#: Strings that exist only in later commits, the stash, a note, or the user's working tree.
MARKERS = ("FUTURE-MUL-7f3a", "FUTURE-DIV-91c2", "STASHED-WORK-5e1b", "NOTE-ON-C3", "DIRTY-WORKTREE-3d9e",
           "UNTRACKED-NOTE-88aa", "JUNK-PYC", "def sub(", "def mul(", "test_sub", "release one")


@dataclass
class Audit:
    fx: Fixture
    task: Task
    env: dict[str, str]
    out: str  # everything the agent printed
    ws: Path  # a copy of the agent's workspace, taken by the agent
    result: dict


@pytest.fixture
def audit(tmp_path: Path) -> Audit:
    base = tmp_path
    fx = build(base / "repo")
    task = task_for(fx)
    # the user's checkout: a dirty tracked file, an untracked file, and the real task list
    calc = fx.root / "src" / "calc" / "__init__.py"
    calc.write_text(calc.read_text() + "# DIRTY-WORKTREE-3d9e\n")
    (fx.root / "notes.txt").write_text("UNTRACKED-NOTE-88aa\n")
    (fx.root / ".homefield" / "tasks.jsonl").write_text(json.dumps(task.to_dict()) + "\n")
    grab = base / "grab"
    grab.mkdir()
    py = shlex.quote(sys.executable)
    script = "\n".join([
        f"{py} -c 'import json, os; print(json.dumps(dict(os.environ)))'",
        "echo '== pwd'; pwd; ls -a ..",
        "echo '== git'; git rev-list --all; git for-each-ref; git stash list; git reflog --all 2>&1",
        "git log --all --format='%H %P %an <%ae> %ad %cn <%ce> %s %b' 2>&1; git count-objects -v; cat .git/config",
        "git notes list 2>&1; git tag -l; git branch -a",
        "echo '== files'; find . -path ./.git -prune -o -print | sort",
        f"cp -a . {shlex.quote(str(grab))}/ws",
        "echo done",
    ])
    (base / "audit.sh").write_text(script + "\n")
    agent = f"audit=cmd:sh {shlex.quote(str(base / 'audit.sh'))}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOMEFIELD_"))}
    env.update(GIT_DIR=str(fx.root / ".git"), GIT_WORK_TREE=str(fx.root), LEAKY_TASK_COMMIT=fx.c2,
               HOMEFIELD_TASK_ID=task.id)
    # --sandbox none: the audit copies the workspace out to a folder of the test's; what the snapshot
    # holds does not depend on the sandbox (tests/run/test_sandbox_attacks.py covers what else it sees)
    argv = [sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", agent, "--attempts", "1",
            "--run-id", "audit", "-n", "1", "--sandbox", "none", "--", "-p", "no:hypothesispytest", "-p",
            "no:benchmark", "-p", "no:anyio"]
    proc = subprocess.run(argv, cwd=fx.root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = fx.root / ".homefield" / "runs" / "audit"
    (result,) = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    out = (run / "attempts" / task.id / "audit" / "1" / "agent.out").read_text()
    return Audit(fx, task, json.loads(out.split("\n", 1)[0]), out, grab / "ws", result)


@pytest.mark.slow
def test_agent_side_audit(audit: Audit) -> None:
    """One test (the run behind it takes seconds; under xdist a module fixture would run per worker)."""
    assert audit.out.rstrip().endswith("done")
    assert audit.result["outcome"] == "empty_patch", audit.result
    assert (audit.ws / ".git").is_dir()
    check_environment(audit)
    check_nothing_names_the_task_or_the_future(audit)
    check_workspace_is_exactly_the_parent_tree(audit)
    check_workspace_git_holds_one_commit_and_the_parent_tree_only(audit)


def check_environment(audit: Audit) -> None:
    assert set(audit.env) <= ALLOWED_ENV | {k for k in audit.env if k.startswith("LC_")}, sorted(audit.env)
    # a cmd: program runs in a shell itself: its prompt makes no claim about running commands
    assert audit.env["HOMEFIELD_PROMPT"] == render_prompt(audit.task.prompt, allow_shell=False, shell_known=False)
    assert audit.env["HOMEFIELD_ATTEMPT"] == "1"
    assert "Add sub() that subtracts b from a" in audit.env["HOMEFIELD_PROMPT"]


def _secrets(audit: Audit) -> list[str]:
    fx = audit.fx
    secrets = [fx.c1[:7], audit.task.id, str(fx.root), "dev@example.com", *MARKERS]
    secrets += [sha[:10] for sha in (fx.c2, fx.c3, fx.c4, *fx.other_objects)]
    return secrets


def check_nothing_names_the_task_or_the_future(audit: Audit) -> None:
    """Environment, prompt, working directory, ``ls ..`` and every git command the agent ran."""
    hits = [s for s in _secrets(audit) if s in audit.out]
    assert not hits, hits
    pwd = audit.out.split("== pwd\n", 1)[1].splitlines()[0]
    assert not pwd.startswith(str(audit.fx.root))
    assert audit.fx.root not in Path(audit.env["TMPDIR"]).parents


def check_workspace_is_exactly_the_parent_tree(audit: Audit) -> None:
    fx, ws = audit.fx, audit.ws
    expected = set(git(fx.root, "ls-tree", "-r", "--name-only", fx.c1).split())
    files = {str(p.relative_to(ws)) for p in ws.rglob("*") if ".git" not in p.relative_to(ws).parts and p.is_file()}
    assert files == expected  # no .pytest_cache, __pycache__, egg-info, .homefield/, build/, untracked files
    for rel in expected:
        assert (ws / rel).read_text() == git(fx.root, "cat-file", "blob", f"{fx.c1}:{rel}"), rel
    for junk in (".pytest_cache", "src/calc/__pycache__", "src/calc.egg-info", ".homefield", "build", "notes.txt"):
        assert not (ws / junk).exists(), junk


def check_workspace_git_holds_one_commit_and_the_parent_tree_only(audit: Audit) -> None:
    fx, ws = audit.fx, audit.ws
    head = git(ws, "rev-parse", "HEAD").strip()
    assert git(ws, "rev-list", "--all", "--reflog").split() == [head]
    assert git(ws, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
    assert git(ws, "stash", "list").strip() == ""
    stored = set(git(ws, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    assert stored == fx.parent_tree | {head}
    for sha in sorted(fx.other_objects):
        assert subprocess.run(["git", "cat-file", "-e", sha], cwd=ws, capture_output=True).returncode != 0, sha
    gitfiles = sorted(str(p.relative_to(ws / ".git")) for p in (ws / ".git").rglob("*") if p.is_file())
    allowed = re.compile(r"HEAD|config|index|refs/heads/main|objects/pack/pack-[0-9a-f]{40}\.(pack|idx)"
                         r"|objects/[0-9a-f]{2}/[0-9a-f]{38}")
    assert [f for f in gitfiles if not allowed.fullmatch(f)] == [], gitfiles  # no logs, packed-refs, tags, hooks
    assert sum(f.endswith(".pack") for f in gitfiles) == 1
    config = (ws / ".git" / "config").read_text()
    assert "remote" not in config and str(fx.root) not in config
    raw = git(ws, "cat-file", "-p", head)
    assert "Dev" not in raw and "2026" not in raw and "parent" not in raw
