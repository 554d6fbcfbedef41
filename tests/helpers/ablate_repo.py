"""A tiny real git repository for ablation tests: eight tasks "Add fN() returning 2·N", a rules file
whose first rule a scripted agent needs, and that agent (a ``cmd:`` script)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from helpers.e2e_repo import git
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.store import write_jsonl_atomic

#: Eight tasks: the fewest that let one load-bearing rule of three reach significance after Holm's
#: correction (an exact McNemar test of 8 discordant tasks: p = 2 · 0.5^8 = 0.008 < 0.05 / 3; seven is
#: ablate/plan.min_tasks_for's minimum), so each attempt the ablation tests run is one they need.
N_TASKS = 8

RULES = """# Rules for agents

- KEY RULE: put each new function fN in its own module calc/fN.py.
- Prefer short, plain names.

- Keep lines under 100 characters.
"""

#: The scripted agent: solves a task only when its rules file (``$1``, default CLAUDE.md) holds "KEY RULE";
#: appends one line per call to ``$2`` when given (a spy). Standard library only: tests start it with
#: ``python -S`` (no site-packages initialisation in each call).
AGENT = '''import os, pathlib, re, sys
rules = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "CLAUDE.md")
if len(sys.argv) > 2:
    with open(sys.argv[2], "a") as fh:
        fh.write("ran\\n")
text = rules.read_text() if rules.exists() else ""
if "KEY RULE" in text:
    n = int(re.search(r"f(\\d+)\\(\\)", os.environ["HOMEFIELD_PROMPT"]).group(1))
    pathlib.Path(f"calc/f{n}.py").write_text(f"def f{n}():\\n    return {2 * n}\\n")
'''


def build(dest: Path) -> Path:
    """Create the repository in ``dest`` (must not exist); returns it. The root commit is docs only
    (not a task); each later commit is a task."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    (dest / "calc").mkdir()
    (dest / "calc" / "__init__.py").write_text("")
    (dest / "CLAUDE.md").write_text("# Old rules\n\n- An older rule the history had.\n")
    (dest / "README.md").write_text("# calc\n")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "Start the calc package docs", date="2026-01-01T12:00:00+00:00")
    for n in range(1, N_TASKS + 1):
        (dest / "calc" / f"f{n}.py").write_text(f"def f{n}():\n    return {2 * n}\n")
        (dest / "tests").mkdir(exist_ok=True)
        (dest / "tests" / f"test_f{n}.py").write_text(
            f"from calc.f{n} import f{n}\n\n\ndef test_f{n}():\n    assert f{n}() == {2 * n}\n")
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", f"Add f{n}() returning {n} times two",
            date=f"2026-01-{n + 1:02d}T12:00:00+00:00")
    (dest / "CLAUDE.md").write_text(RULES)
    git(dest, "commit", "-q", "-am", "Rules for agents", date="2026-01-20T12:00:00+00:00")
    (dest / ".homefield.yml").write_text(f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n')
    return dest


def write_tasks(repo: Path) -> list[Task]:
    """Write ``.homefield/tasks.jsonl`` for the eight task commits (newest first) without mining them: each
    commit's one test is FAIL_TO_PASS (its module is missing at the parent). Returns the tasks."""
    shas = git(repo, "rev-list", "--reverse", "HEAD").split()
    tasks = []
    for parent, commit in zip(shas, shas[1:], strict=False):
        message = git(repo, "log", "-1", "--format=%B", commit)
        if not message.startswith("Add f"):
            continue
        n = int(message.split("(")[0][5:])
        tests = [f"tests/test_f{n}.py"]
        tasks.append(Task(
            id=commit[:12], commit=commit, parent=parent, committed_at=f"2026-01-{n + 1:02d}T12:00:00+00:00",
            authored_at=f"2026-01-{n + 1:02d}T12:00:00+00:00", mode="commit", subject=message.splitlines()[0],
            message=message, prompt=clean_prompt(message), source_files=[f"calc/f{n}.py"], test_files=tests,
            test_patch=make_test_patch(repo, parent, commit, tests),
            gold_patch=make_gold_patch(repo, parent, commit, tests),
            FAIL_TO_PASS=[f"tests/test_f{n}.py::test_f{n}"], PASS_TO_PASS=[],
            test_cmd=f"{shlex.quote(sys.executable)} -m pytest --disable-plugin-autoload",
        ))
    tasks.reverse()
    write_jsonl_atomic(repo / ".homefield" / "tasks.jsonl", [t.to_dict() for t in tasks])
    (repo / ".git" / "info" / "exclude").write_text("/.homefield/\n")
    return tasks


def write_agent(folder: Path) -> Path:
    """The scripted agent as a file in ``folder``; returns its path."""
    path = folder / "rules_agent.py"
    path.write_text(AGENT)
    return path
