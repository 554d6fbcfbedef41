"""hatk41, ``--sandbox none`` with ``--env uv`` (graded code runs as the user): the commit's environment of a
grading was found from the repository itself (its declaration files read with ``git ls-tree``/``cat-file`` of the
task's commit, the build's tree checked out of its objects), so graded code that hid the repository's objects made
every later grading of the session ``infra`` ("grading failed: git ls-tree failed"), retried by ``--resume`` and
unscored for good. Now the snapshot cache packs the task's commit tree with the parent trees before the session's
first attempt (:meth:`SnapshotCache.keep` with ``envs``) and every grading's environment is found from that
host-private copy (:meth:`SnapshotCache.env_source`), its ``as_of`` day read then too."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.attack_repo import cmd_agent
from helpers.env_repo import build_env_repo, build_find_links, offline_env

from pytest_homefield.envs.stage import as_of_date
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

pytestmark = pytest.mark.slow

DOUBLE = "from hfdep import double as _double\n\n\ndef double(x):\n    return _double(x)\n"


@dataclass
class World:
    repo: Path
    parent: str
    commit: str
    env: dict[str, str]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """The env repository (its second commit needs ``hfdep``, which only the commit's environment has) and an
    offline uv with a private environment cache."""
    repo = build_env_repo(tmp_path / "repo")
    parent, commit = repo.git("rev-list", "--reverse", "HEAD").split()[:2]
    env = offline_env(build_find_links(tmp_path / "links"), tmp_path / "cache")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    objects = repo.path / ".git" / "objects"
    yield World(repo.path, parent, commit, env)
    if not objects.exists() and Path(str(objects) + ".hidden").exists():
        os.rename(str(objects) + ".hidden", objects)


def _task(w: World) -> Task:
    tests = ["tests/test_double.py"]
    return Task(id=w.commit[:12], commit=w.commit, parent=w.parent, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject="Double numbers",
                message="Double numbers with the hfdep package", prompt="Add hfproj.double.double using hfdep.",
                source_files=["hfproj/double.py", "pyproject.toml"], test_files=tests,
                test_patch=make_test_patch(w.repo, w.parent, w.commit, tests),
                gold_patch=make_gold_patch(w.repo, w.parent, w.commit, tests),
                FAIL_TO_PASS=["tests/test_double.py::test_double"], PASS_TO_PASS=[],
                test_cmd="python -m pytest -p no:cacheprovider", env={"extras": [], "groups": ["test"]})


def _writes(text: str) -> str:
    return f"cat > hfproj/double.py <<'HF_EOF'\n{text}HF_EOF\n"


def _attempt(task: Task, cache: SnapshotCache, command: str, n: int, run_dir: Path) -> tuple[str, str | None]:
    spec = AttemptSpec(task=task, agent=cmd_agent(command), attempt=n, run_id="r", run_dir=run_dir,
                       timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none"), env_kind="uv")
    r = run_attempt(spec, cache)
    return r.outcome, r.error


def test_gradings_after_graded_code_hid_the_repository_objects_find_their_environment(world: World,
                                                                                      tmp_path: Path) -> None:
    """Attempt 1's graded code (the right fix, whose import hides the repository's objects) is graded in the
    commit's environment (``hfdep`` installed): solved. Before: attempt 2 (the same fix, harmless) was ``infra``
    (the environment's declaration read from the hidden objects); now solved, its environment found from the
    host's pack of the commit's tree."""
    task = _task(world)
    objects = world.repo / ".git" / "objects"
    hide = (f"import os\nif os.path.isdir({str(objects)!r}):\n"
            f"    os.rename({str(objects)!r}, {str(objects) + '.hidden'!r})\n")
    cache = SnapshotCache(repo=world.repo)
    try:
        cache.keep([task], envs=True)  # what the runner does before the first attempt of the session
        first = _attempt(task, cache, _writes(DOUBLE + hide), 1, tmp_path / "run")
        assert first == ("solved", None), first
        assert not objects.exists()  # the repository cannot give the commit's declaration any more
        second = _attempt(task, cache, _writes(DOUBLE), 2, tmp_path / "run")
        assert second == ("solved", None), second
    finally:
        cache.close()


def test_the_as_of_day_is_read_before_the_first_attempt(world: World) -> None:
    """A grading limited to packages of the commit's day (``--env-as-of``) takes that day from what
    :meth:`SnapshotCache.keep` read, the repository's objects hidden since."""
    task = _task(world)
    objects = world.repo / ".git" / "objects"
    cache = SnapshotCache(repo=world.repo)
    try:
        cache.keep([task], envs=True)
        day = as_of_date(world.repo, world.commit)
        os.rename(objects, str(objects) + ".hidden")
        source, tree = cache.env_source(world.commit)
        assert (source.exists(), cache.as_of(world.commit)) == (True, day)
        assert not str(source).startswith(str(world.repo))
    finally:
        cache.close()
