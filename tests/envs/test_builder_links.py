"""link48 (issue 30, contracts §9 "host-side file work never follows the agent's links"): an environment is built by
the project's own build (its PEP 517 backend, its ``setup.py``: code from the repository's history), which runs as
the user and knows where the environment is being made. Before, ``envs/builder`` copied uv's log into
``<env>/build.log`` with ``shutil.copyfile`` and wrote its marker ``homefield-env.json`` with ``open(…, "w")``: a
link the build left at either name made the host write the log or the marker into the file it named. Now both
replace their entries (:func:`~pytest_homefield.sandbox.nofollow.write_bytes`), never writing through a link."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.env_repo import build_find_links, offline_env, pyproject
from helpers.gitrepo import GitRepo
from helpers.wheels import BACKEND_SOURCE

from pytest_homefield.envs.builder import MARKER, release_envs
from pytest_homefield.envs.stage import commit_env

pytestmark = pytest.mark.slow

#: the in-tree backend, planting a link to ``HF_BACKEND_PLANT`` at the marker's and the log's names of every
#: environment being built in the cache (where uv is building it: the ``.<key>.tmp-*`` folders)
PLANTING_BACKEND = BACKEND_SOURCE + '''

_real_build_wheel = build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import glob
    victim = os.environ.get("HF_BACKEND_PLANT")
    if victim:
        root = os.path.join(os.environ["XDG_CACHE_HOME"], "pytest-homefield", "envs")
        for d in glob.glob(os.path.join(root, ".*.tmp-*")):
            if os.path.isdir(d) and not os.path.islink(d):
                for name in ("build.log", "homefield-env.json"):
                    if not os.path.lexists(os.path.join(d, name)):
                        os.symlink(victim, os.path.join(d, name))
    return _real_build_wheel(wheel_directory, config_settings, metadata_directory)
'''

USER_TEXT = "the user's own file\n"


def test_the_build_log_and_marker_are_never_written_through_a_link_the_build_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the user's file (the links' target) held the environment's marker (``homefield-env.json``'s JSON)
    after the build. Now it is as it was; the environment is built, its ``build.log`` and marker its own files."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("_build/hfbackend.py", PLANTING_BACKEND)
    repo.write("pyproject.toml", pyproject([]))
    repo.write("hfproj/__init__.py", "def add(a, b):\n    return a + b\n")
    repo.commit("Initial project with add")
    for k, v in offline_env(build_find_links(tmp_path / "links"), tmp_path / "cache").items():
        monkeypatch.setenv(k, v)
    victim = tmp_path / "user.txt"
    victim.write_text(USER_TEXT)
    monkeypatch.setenv("HF_BACKEND_PLANT", str(victim))
    try:
        env = commit_env(repo.path, repo.git("rev-parse", "HEAD").strip())
        assert env.built
        assert victim.read_text() == USER_TEXT  # before: the marker's JSON (the build log before it)
        for name in ("build.log", MARKER):
            assert (env.path / name).is_file() and not (env.path / name).is_symlink()
        assert "$ " in (env.path / "build.log").read_text()  # uv's commands, as before
    finally:
        release_envs()
