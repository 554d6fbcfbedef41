"""The environment of a commit, for mining (both states of a candidate) and grading (a task).

Both states of a candidate are tested in the **commit's** environment, so red→green measures the
code change, not a dependency change; grading uses the same commit's environment (the task's
``env`` object keeps the extras and groups), so dependency changes an agent makes are not installed.
"""

from __future__ import annotations

import contextlib
import datetime
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from pytest_homefield.envs.builder import EnvBuildError, Environment, ensure_env
from pytest_homefield.envs.declaration import declaration_at
from pytest_homefield.sandbox.snapshot import git, make_snapshot
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp

__all__ = ["commit_env", "as_of_date", "EnvBuildError"]


def commit_env(repo: Path, commit: str, *, extras: Sequence[str] = (), groups: Sequence[str] = (),
               as_of: bool | str = False, root: Path | None = None, timeout_s: float = 1800,
               work_root: Path | None = None,
               log: Path | None = None, user: Path | None = None, isolated: bool = False) -> Environment:
    """The environment for ``commit``'s declaration (read from git), built from a snapshot of the
    commit only when it is not in the cache yet. ``commit`` may be a tree id (no ``as_of=True`` then) and
    ``repo`` a bare repository of :func:`~pytest_homefield.sandbox.snapshot.unpack` (a grading's private copy of
    the commit's tree); ``user``: the user's repository noted as using the environment (default ``repo``);
    ``isolated``: ``repo`` is a repository homefield made, read with no git configuration outside it
    (:func:`~pytest_homefield.sandbox.snapshot.make_snapshot`'s ``isolated``, hatk43).
    ``as_of``: ``True`` resolves only packages uploaded
    by the end of the commit's committer day (UTC; :func:`as_of_date`), a string is that time itself
    (a task's recorded ``as_of``). Raises :class:`EnvBuildError` (one line) when it
    cannot be built and ``SnapshotError`` for an unknown commit."""
    decl = declaration_at(repo, commit, isolated=isolated)
    when = as_of_date(repo, commit) if as_of is True else (as_of or None)

    @contextlib.contextmanager
    def tree() -> Iterator[Path]:
        where = hf_mkdtemp(dir=work_root)  # owner-named: a killed build's folder is swept
        try:
            yield make_snapshot(repo, commit, dest=where / "t", init_git=False, isolated=isolated)
        finally:
            shutil.rmtree(where, ignore_errors=True)

    return ensure_env(decl, tree, extras=extras, groups=groups, as_of=when, root=root, timeout_s=timeout_s, log=log,
                      user=str(Path(repo if user is None else user).resolve()))


def as_of_date(repo: Path, commit: str) -> str:
    """``YYYY-MM-DDT23:59:59Z``: the end of ``commit``'s committer day in UTC (one environment per
    declaration and day)."""
    stamp = int(git("show", "-s", "--format=%ct", commit, cwd=repo).strip())
    day = datetime.datetime.fromtimestamp(stamp, tz=datetime.timezone.utc).date()
    return f"{day.isoformat()}T23:59:59Z"
