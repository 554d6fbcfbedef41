"""aatk49: graded code in the default sandbox cannot change the ``--env uv`` environment that later gradings use,
nor the environment cache's notes (``.users/``) or build logs: the environment is bound read-only into every test
run. With ``--sandbox none`` it can (docs/contracts.md §9 "Residual risk"): a strict xfail here shows it.

The graded code (the right fix, whose import then tries every write) writes a ``.pth`` into the environment's
``site-packages`` (one ``import`` line that would fail every later test run in it), a file beside the
environment's interpreter, a note under ``.users/`` and a line in the environment's ``build.log``; each write
is recorded in a file of the grading copy's ``/tmp`` that the test never reads, so what counts is the cache
on disk afterwards: byte for byte as before, and the next attempt (the same fix, harmless) solved."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from helpers.attack_repo import cmd_agent
from helpers.env_repo import build_env_repo, build_find_links, offline_env

from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice

pytestmark = pytest.mark.slow

DOUBLE = "from hfdep import double as _double\n\n\ndef double(x):\n    return _double(x)\n"

POISON = '''
import glob as _g, os as _o, sys as _s
for _path, _text in [
    *((_p + "/zz_aatk49.pth", "import aatk49_missing_module\\n")
      for _p in _g.glob(_s.prefix + "/lib/python*/site-packages")),
    (_s.prefix + "/bin/aatk49", "x\\n"),
    (_o.path.dirname(_s.prefix) + "/.users/" + _o.path.basename(_s.prefix) + "/aatk49", "/\\n"),
    (_s.prefix + "/build.log", "poisoned\\n"),
]:
    try:
        with open(_path, "a") as _f:
            _f.write(_text)
    except OSError:
        pass
'''


def _tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            p = Path(dirpath, name)
            if not p.is_symlink() and not name.endswith(".lock"):
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


#: Why the ``none`` case cannot be closed by construction (ops52, docs/contracts.md §9): each defence needs something
#: the graded code cannot write, and under ``--sandbox none`` it runs as the user, with the user's every right.
NONE_REASON = (
    "--sandbox none: graded code runs as the user, so nothing homefield can keep is out of its reach: read-only "
    "modes it chmods back (it owns the files); a digest or build marker of the environment, on disk, it rewrites "
    "with the environment (the user's file: hatk43, no record the next session reads is the user's and not its); "
    "a digest in the homefield process's memory holds for that session only (each xdist worker would take its "
    "baseline after another's attempt may have poisoned it) and is as sound as the code checking it, whose "
    "modules not yet imported are the user's files on disk, as is the interpreter; a fresh copy or rebuild "
    "per run comes from the cache, uv's wheel cache or homefield's own code, all the user's files too. Only "
    "another uid or a mount namespace (bubblewrap, Landlock: the bwrap case) makes the cache read-only to it (§9)")


@pytest.mark.parametrize("mode", ["bwrap", pytest.param("none", marks=pytest.mark.xfail(
    strict=True, reason=NONE_REASON))])
def test_graded_code_in_the_sandbox_leaves_the_environment_cache_as_it_was(mode: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if mode == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    repo = build_env_repo(tmp_path / "repo")
    parent, commit = repo.git("rev-list", "--reverse", "HEAD").split()[:2]
    env = offline_env(build_find_links(tmp_path / "links"), tmp_path / "cache")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    tests = ["tests/test_double.py"]
    task = Task(id=commit[:12], commit=commit, parent=parent, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject="Double numbers",
                message="Double numbers with the hfdep package", prompt="Add hfproj.double.double using hfdep.",
                source_files=["hfproj/double.py", "pyproject.toml"], test_files=tests,
                test_patch=make_test_patch(repo.path, parent, commit, tests),
                gold_patch=make_gold_patch(repo.path, parent, commit, tests),
                FAIL_TO_PASS=["tests/test_double.py::test_double"], PASS_TO_PASS=[],
                test_cmd="python -m pytest -p no:cacheprovider", env={"extras": [], "groups": ["test"]})
    cache = SnapshotCache(repo=repo.path)
    root = Path(env["XDG_CACHE_HOME"]) / "pytest-homefield" / "envs"

    def attempt(text: str, n: int) -> tuple[str, str | None]:
        command = f"cat > hfproj/double.py <<'HF_EOF'\n{text}HF_EOF\n"
        spec = AttemptSpec(task=task, agent=cmd_agent(command), attempt=n, run_id="r", run_dir=tmp_path / "run",
                           timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice(mode, "none"), env_kind="uv")
        r = run_attempt(spec, cache)
        return r.outcome, r.error

    try:
        cache.keep([task], envs=True)
        first = attempt(DOUBLE, 1)  # builds the environment
        assert first == ("solved", None), first
        before = _tree_digest(root)
        assert any(k.endswith("build.log") for k in before) and any(k.startswith(".users/") for k in before)
        second = attempt(DOUBLE + POISON, 2)
        assert second == ("solved", None), second
        assert _tree_digest(root) == before
        third = attempt(DOUBLE, 3)
        assert third == ("solved", None), third
    finally:
        cache.close()
