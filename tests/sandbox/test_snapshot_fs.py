"""A snapshot on another filesystem than the repository (e.g. a RAM disk as TMPDIR)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytest_homefield.sandbox.snapshot import make_snapshot


@pytest.mark.skipif(not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat("/tmp").st_dev,
                    reason="needs /dev/shm on its own filesystem")
def test_one_commit_snapshot_across_filesystems(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "f.py").write_text("x = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=repo, check=True, env=env)
    dest_root = Path("/dev/shm") / f"hf-test-{os.getpid()}"
    try:
        snap = make_snapshot(repo, "HEAD", dest=dest_root / "s", init_git=True)
        assert (snap / "f.py").read_text() == "x = 1\n"
        log = subprocess.run(["git", "log", "--oneline"], cwd=snap, capture_output=True, text=True, check=True)
        assert len(log.stdout.splitlines()) == 1
        fsck = subprocess.run(["git", "fsck", "--full"], cwd=snap, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stderr
    finally:
        subprocess.run(["rm", "-rf", str(dest_root)], check=False)
