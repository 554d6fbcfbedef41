"""hatk43, ``--sandbox none`` (graded code runs as the user): git run by the host over its own repositories (the bare
repository it unpacks its pack of the parent trees into, a snapshot's one-commit repository) read the user's global
git configuration, which graded code can write (``~/.gitconfig``: the user's ``HOME`` is in every ancestor's
``/proc/<pid>/environ``). A configuration git cannot parse made every later snapshot's build fail: the attempt after
a spoiling one, and the first of every task not built yet, ``infra`` "cannot extract the parent tree" (``fatal: bad
config line 1``), retried by ``--resume`` and never scored. Now every git command over a repository homefield made
runs isolated (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``): nothing outside the repository is git
configuration to it. (Git over the user's own repository still reads the user's configuration, ``safe.directory``
among it; it runs before the session's first attempt, :meth:`SnapshotCache.keep`.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers.attack_repo import (
    CALC_1,
    CALC_3,
    GOOD_CALC,
    WRONG_CALC,
    Fixture,
    task_for,
    unsandboxed_attempt,
    writes_calc,
)

from pytest_homefield.envs.declaration import declaration_at
from pytest_homefield.errors import SnapshotError
from pytest_homefield.run.attempt import SnapshotCache
from pytest_homefield.run.grading import SPOILED_PRISTINE
from pytest_homefield.sandbox.snapshot import make_snapshot


@pytest.mark.slow
def test_graded_code_that_breaks_the_users_git_config_leaves_later_snapshots_built(
        fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attempt 1 (a wrong fix) spoils the pristine snapshot and writes a ``~/.gitconfig`` git cannot parse:
    ``agent_error`` (hatk39). Before: attempt 2 (the reference fix) was ``infra`` "cannot extract the parent tree:
    git rev-parse failed (128): fatal: bad config line 1 …", and so was the first snapshot of another parent; now
    ``solved``, both snapshots built."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the host's HOME (a test must not write root's own ~/.gitconfig)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    task = task_for(fx)
    other = dataclasses.replace(task, id="other-parent-config", parent=fx.c3)
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task, other])
        spoiler = writes_calc(WRONG_CALC + "\n\nimport glob\n"
                              f"for d in glob.glob({str(cache.root)!r} + '/*/s/src/calc'):\n"
                              "    with open(d + '/__init__.py', 'a') as f:\n"
                              "        f.write('\\n# spoiled\\n')\n"
                              f"with open({str(home / '.gitconfig')!r}, 'w') as f:\n"
                              "    f.write('[core\\n\\tbroken\\n')\n")
        first = unsandboxed_attempt(task, cache, spoiler, 1, tmp_path / "run")
        assert first == ("agent_error", f"hidden tests: {SPOILED_PRISTINE}"), first
        assert (home / ".gitconfig").read_text().startswith("[core\n")
        second = unsandboxed_attempt(task, cache, writes_calc(GOOD_CALC), 2, tmp_path / "run")
        assert second[0] == "solved", second
        assert (cache.checked_pristine(task)[0] / "src" / "calc" / "__init__.py").read_text() == CALC_1
        assert (cache.checked_pristine(other)[0] / "src" / "calc" / "__init__.py").read_text() == CALC_3
    finally:
        cache.close()


def test_the_env_source_is_read_with_no_git_config_outside_it(fx: Fixture, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``--env uv``: the declaration files and the build tree of a commit's environment are read from the cache's own
    repository (:meth:`SnapshotCache.env_source`) with ``isolated`` (``grading_env``): a ``~/.gitconfig`` git cannot
    parse changes neither. Not isolated, ``ls-tree`` fails on it (and ``cat-file``, run apart, dropped each
    declaration file it could not read, silently: another environment)."""
    task = task_for(fx)
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task], envs=True)
        source, tree = cache.env_source(task.commit)
        home = tmp_path / "home"
        home.mkdir()
        (home / ".gitconfig").write_text("[core\n\tbroken\n")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
        with pytest.raises(SnapshotError, match="bad config"):
            declaration_at(source, tree)
        assert set(declaration_at(source, tree, isolated=True).files) == {"pyproject.toml"}
        snap = make_snapshot(source, tree, dest=tmp_path / "t", init_git=False, isolated=True)
        assert (snap / "src" / "calc" / "__init__.py").read_text() == GOOD_CALC
    finally:
        cache.close()
