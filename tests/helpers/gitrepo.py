"""Build small real git repositories with real commits for tests.

    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/mod.py", "x = 1\\n")
    repo.write("tests/test_mod.py", "def test_x(): ...\\n")
    sha = repo.commit("Add mod and its test")
    repo.branch("feature"); ...; repo.checkout("main"); repo.merge("feature", "Merge feature")

Every commit gets a deterministic committer date from an internal clock (one hour apart, from
2024-01-01 UTC), so history order is stable; ``author_date`` / ``committer_date`` override it.
Git runs with a fixed identity and without the user's global or system configuration.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

__all__ = ["GitRepo"]

_START = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="author@example.com",
        GIT_COMMITTER_NAME="Test Committer",
        GIT_COMMITTER_EMAIL="committer@example.com",
    )
    return env


class GitRepo:
    """A git working tree at ``path`` driven through the ``git`` command line."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._clock = _START
        self._env = _git_env()

    @classmethod
    def init(cls, path: Path, branch: str = "main") -> GitRepo:
        """Create ``path`` (parents too) and ``git init`` it with ``branch`` as the first branch."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", branch)
        repo.git("config", "commit.gpgsign", "false")
        return repo

    def git(self, *args: str, input: bytes | None = None) -> str:
        """Run ``git <args>`` in the repository; its stdout, stripped. ``CalledProcessError`` on
        failure (stderr attached)."""
        proc = subprocess.run(
            ["git", *args], cwd=self.path, env=self._env, input=input, capture_output=True, check=True
        )
        return proc.stdout.decode("utf-8", "replace").strip()

    def write(self, path: str, content: str | bytes = "") -> Path:
        """Write a file (parents created) and stage it; returns its absolute path."""
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)
        self.git("add", "--", path)
        return target

    def rm(self, path: str) -> None:
        """Delete a tracked file (or folder, recursively) and stage the deletion."""
        self.git("rm", "-r", "-q", "--", path)

    def mv(self, src: str, dst: str) -> None:
        """Rename a tracked file and stage it (``git mv``; parents of ``dst`` created)."""
        (self.path / dst).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", "--", src, dst)

    def _tick(self) -> str:
        self._clock += timedelta(hours=1)
        return self._clock.isoformat()

    def commit(
        self,
        message: str,
        *,
        author_date: str | datetime | None = None,
        committer_date: str | datetime | None = None,
        allow_empty: bool = False,
    ) -> str:
        """Commit what is staged; returns the full sha. Dates: ISO 8601 strings or datetimes;
        the committer date defaults to the next tick of the clock, the author date to it."""
        when = self._tick() if committer_date is None else str(_iso(committer_date))
        env = dict(self._env, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=_iso(author_date) or when)
        args = ["commit", "-q", "--no-verify", "-m", message]
        if allow_empty:
            args.append("--allow-empty")
        subprocess.run(["git", *args], cwd=self.path, env=env, capture_output=True, check=True)
        return self.head()

    def head(self) -> str:
        """Full sha of ``HEAD``."""
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, start: str | None = None) -> None:
        """Create branch ``name`` (at ``start``, default ``HEAD``) and check it out."""
        self.git("checkout", "-q", "-b", name, *([start] if start else []))

    def checkout(self, ref: str) -> None:
        """Check out an existing branch or commit."""
        self.git("checkout", "-q", ref)

    def merge(self, branch: str, message: str, *, ff: bool = False) -> str:
        """Merge ``branch`` into the current branch (a merge commit unless ``ff``); returns HEAD."""
        env = dict(self._env, GIT_COMMITTER_DATE=self._tick())
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"]
        args = ["merge", "-q", "--ff" if ff else "--no-ff", "-m", message, branch]
        subprocess.run(["git", *args], cwd=self.path, env=env, capture_output=True, check=True)
        return self.head()


def _iso(value: str | datetime | None) -> str | None:
    if isinstance(value, datetime):
        return value.isoformat()
    return value
