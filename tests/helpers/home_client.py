"""A recipe client whose install is the user's home (satk61): what a confined agent cannot be given."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.e2e_repo import git
from pytest_homefield.records import Task
from pytest_homefield.store import write_jsonl_atomic


def home_prefixed_aider(home: Path) -> None:
    """``home/bin/aider`` whose ``#!`` interpreter ``home/bin/python3.11`` was installed with ``--prefix=$HOME``
    (``home/lib/python3.11``): a shell under a Python's name, running the client's script on the host."""
    (home / "lib" / "python3.11").mkdir(parents=True)
    (home / "lib" / "python3.11" / "os.py").write_text("")
    (home / "bin").mkdir()
    python = home / "bin" / "python3.11"
    shutil.copy2(Path(shutil.which("sh") or "/bin/sh").resolve(), python)
    client = home / "bin" / "aider"
    client.write_text(f"#!{python}\necho edited > done.txt\n")
    client.chmod(0o755)


def tiny_repo(repo: Path, n_tasks: int) -> Path:
    """``repo``: a real git repository of one commit (a test file, a ``CLAUDE.md`` of two rules) whose
    ``.homefield/tasks.jsonl`` holds ``n_tasks`` hand-written tasks (shas that name no commit: nothing may
    start them). Returns ``repo``."""
    repo.mkdir(parents=True)
    (repo / "test_a.py").write_text("def test_a():\n    pass\n")
    (repo / "CLAUDE.md").write_text("# Rules\n\n- Keep it short.\n- Name things plainly.\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a")
    tasks = [Task(id=f"{i:012d}", commit=f"{i:040d}", parent="0" * 40, committed_at="", authored_at="",
                  mode="commit", subject=f"Add f{i}", message=f"Add f{i}", prompt=f"Add f{i}() returning {i}.",
                  source_files=["a.py"], test_files=["test_a.py"], test_patch="",
                  gold_patch=(f"diff --git a/a.py b/a.py\n--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,2 @@\n"
                              f"+def f{i}():\n+    return {i}\n"),
                  FAIL_TO_PASS=["test_a.py::test_a"], PASS_TO_PASS=[]).to_dict() for i in range(1, n_tasks + 1)]
    (repo / ".homefield").mkdir()
    write_jsonl_atomic(repo / ".homefield" / "tasks.jsonl", tasks)
    return repo
