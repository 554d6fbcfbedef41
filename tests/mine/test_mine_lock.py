"""Issue 30 follow-up: one mining session per repository at a time. Two sessions would both merge
their tasks into the same ``tasks.jsonl``; the second now exits 2 with one line naming the holder,
before it scans or makes a mine folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.e2e_repo import homefield

HOLD = """
import sys, time
from pathlib import Path
from pytest_homefield.store import FolderLock
lock = FolderLock.take(Path(sys.argv[1]), "mining")
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_mining_session_exits_2_with_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "d", "GIT_AUTHOR_EMAIL": "d@x", "GIT_COMMITTER_NAME": "d",
           "GIT_COMMITTER_EMAIL": "d@x", "PATH": "/usr/bin:/bin"}
    (repo / "a.py").write_text("A = 1\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(repo / ".homefield")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        second = homefield(repo, "mine", "-n", "0", timeout=120)
        lines = [ln for ln in (second.stdout + second.stderr).splitlines() if ln.strip()]
        assert second.returncode == 2 and len(lines) == 1, second.stdout + second.stderr
        head = f"Exit: pytest-homefield: mining in this repository is in use by pid {holder.pid} on "
        assert lines[0].startswith(head), lines
        assert not (repo / ".homefield" / "mine").exists()  # no mine folder was made
    finally:
        holder.kill()
        holder.wait()
