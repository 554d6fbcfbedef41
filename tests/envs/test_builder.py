"""envs/builder with the real uv, offline (a local --find-links folder of wheels built here):
build then reuse, uv's last line on failure, one build for concurrent workers, SIGKILL safety."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.env_repo import build_env_repo, build_find_links, offline_env

from pytest_homefield.envs.builder import (
    MARKER,
    EnvBuildError,
    Environment,
    _locked_unless,
    cache_root,
    list_envs,
    prune_envs,
    release_envs,
    uv_error,
)
from pytest_homefield.envs.stage import commit_env

pytestmark = pytest.mark.slow

_ENSURE = """
import json, sys
from pathlib import Path
from pytest_homefield.envs.stage import commit_env
e = commit_env(Path(sys.argv[1]), sys.argv[2])
print(json.dumps({"key": e.key, "built": e.built}))
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    base = tmp_path_factory.mktemp("envs")
    repo = build_env_repo(base / "repo")
    commits = repo.git("rev-list", "--reverse", "HEAD").split()
    return {"repo": repo.path, "commits": commits, "links": build_find_links(base / "links")}


@pytest.fixture
def offline(world: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = offline_env(Path(str(world["links"])), tmp_path / "cache")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


def test_build_then_reuse_and_list_and_prune(world: dict[str, object], offline: dict[str, str]) -> None:
    repo, commits = Path(str(world["repo"])), list(world["commits"])  # type: ignore[call-overload]
    env = commit_env(repo, commits[1])
    assert env.built and env.build_s > 0
    assert env.path.parent == cache_root() and (env.path / MARKER).is_file()
    assert env.record() == {"key": env.key, "how": "uv pip install pyproject.toml + groups test + project --no-deps"
                                                   " (its code removed)",
                            "python": "3.11.7" if sys.version_info[:2] == (3, 11) else env.python_version,
                            "extras": [], "groups": ["test"]}
    probe = ("import importlib.metadata as m, importlib.util as u, hfdep, pytest; "
             "print(hfdep.double(4), m.version('hfproj'), u.find_spec('hfproj'))")
    out = subprocess.run([str(env.python), "-c", probe], capture_output=True, text=True, cwd="/")
    # the dependency and pytest are installed; the project's metadata is, its code is not (the snapshot's is used)
    assert out.stdout.split() == ["8", "0.1", "None"], out.stderr
    again = commit_env(repo, commits[1])
    assert (again.key, again.built, again.build_s) == (env.key, False, 0.0)
    assert [e["key"] for e in list_envs()] == [env.key]
    assert prune_envs(keep=[env.key]) == []
    assert prune_envs() == []  # in use by this process (a shared lock until exit)
    release_envs()
    assert prune_envs(user="/elsewhere/other-repo") == []  # another repository (this one, existing) used it
    assert prune_envs(user=str(repo.resolve())) == [env.key] and list_envs() == []
    assert not (cache_root() / ".users" / env.key).exists()


def test_unresolvable_dependency_gives_uvs_last_line(world: dict[str, object], offline: dict[str, str]) -> None:
    repo, commits = Path(str(world["repo"])), list(world["commits"])  # type: ignore[call-overload]
    with pytest.raises(EnvBuildError) as info:
        commit_env(repo, commits[2])
    msg = str(info.value)
    assert "hfmissing" in msg and "\n" not in msg, msg
    assert [p.name for p in cache_root().iterdir() if not p.name.endswith(".lock")] == []  # nothing left


def test_three_workers_build_one_env_once(world: dict[str, object], offline: dict[str, str]) -> None:
    repo, commits = str(world["repo"]), list(world["commits"])  # type: ignore[call-overload]
    env = {**os.environ, **offline}
    procs = [subprocess.Popen([sys.executable, "-c", _ENSURE, repo, commits[1]], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-500:] for o in outs]
    results = [json.loads(o[0]) for o in outs]
    assert len({r["key"] for r in results}) == 1
    assert sorted(r["built"] for r in results) == [False, False, True]
    assert len(list_envs()) == 1


def test_sigkill_during_a_build_leaves_nothing_reusable(world: dict[str, object], offline: dict[str, str],
                                                        tmp_path: Path) -> None:
    repo, commits = str(world["repo"]), list(world["commits"])  # type: ignore[call-overload]
    started = tmp_path / "backend-started"
    env = {**os.environ, **offline, "HF_BACKEND_SLEEP": "120", "HF_BACKEND_STARTED": str(started)}
    proc = subprocess.Popen([sys.executable, "-c", _ENSURE, repo, commits[1]], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 180
    while not started.exists():  # the project's own build has begun: the environment is half made
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    root = cache_root()
    assert _processes_using(root.parent.parent) == []  # uv and the backend (its cache is beside) died with it
    names = [p.name for p in root.iterdir()]
    assert any(".tmp-" in n for n in names) and not any(len(n) == 16 for n in names), names
    assert list_envs() == []
    fresh = commit_env(Path(repo), commits[1])  # a later run builds afresh and clears the leftover
    assert fresh.built
    assert not any(".tmp-" in p.name for p in root.iterdir())


def _processes_using(path: Path) -> list[str]:
    """Command lines of live processes that name ``path`` (zombies have an empty one)."""
    time.sleep(0.5)
    found = []
    for cmd in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmd.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in text:
            found.append(text[:200])
    return found


def test_uv_error_keeps_the_error_and_its_last_cause() -> None:
    out = ("Using Python 3.11.7 environment at: /x\nerror: No solution found when resolving dependencies\n"
           "  cause: Because hfmissing was not found in the cache, we can conclude that your requirements are "
           "unsatisfiable.\n\nhint: Packages were unavailable because the network was disabled.\n")
    assert uv_error(out) == ("No solution found when resolving dependencies: Because hfmissing was not found in "
                             "the cache, we can conclude that your requirements are unsatisfiable.")
    assert uv_error("one\ntwo\nhint: no\n") == "two" and uv_error("") == ""


def test_uv_error_reads_the_older_format_too() -> None:
    """uv before about 0.8 (0.6.7 is the lowest the package allows) marks errors with ``×`` and
    causes with ``╰─▶``, and wraps them onto indented lines (its own output, as printed)."""
    out = ("Using Python 3.11.7 environment at: v\n"
           "  \u00d7 No solution found when resolving dependencies:\n"
           "  \u2570\u2500\u25b6 Because hfmissing was not found in the cache and x depends on hfmissing,\n"
           "      we can conclude that your requirements are unsatisfiable.\n\n"
           "      hint: Packages were unavailable because the network was disabled. When\n"
           "      the network is disabled, registry packages may only be read from the\n      cache.\n")
    assert uv_error(out) == ("No solution found when resolving dependencies: Because hfmissing was not found in "
                             "the cache and x depends on hfmissing, we can conclude that your requirements are "
                             "unsatisfiable.")
    assert uv_error("  \u00d7 Failed to build `x`\n  \u251c\u2500\u25b6 first\n  \u2570\u2500\u25b6 last\n") \
        == "Failed to build `x`: last"


def test_a_waiter_takes_the_environment_another_process_finished_and_holds(tmp_path: Path) -> None:
    """Seen mining pallets-eco/blinker with ``--env uv -n 2``: a worker waited for the exclusive lock of a
    key the other worker was building; the builder finished and at once took its shared lock (in use)
    for the rest of its session, and the blocking ``flock`` waited for ever (the mine stuck at 20 of 22).
    Now the waiter takes the finished environment without the lock; and it gives up, one line, after its
    timeout when the holder never finishes it."""
    lock = tmp_path / ".k1.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
                               "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        env = Environment(key="k1", path=tmp_path / "k1", python_version="3", interpreter=sys.executable, how="x")
        calls: list[float] = []

        def ready() -> Environment | None:  # finished by the holder after a few looks
            calls.append(time.monotonic())
            return env if len(calls) >= 3 else None

        start = time.monotonic()
        with _locked_unless(tmp_path, "k1", ready, timeout_s=30) as got:
            assert got is env
        assert time.monotonic() - start < 10
        with pytest.raises(EnvBuildError, match="another process held it for 0.5 s without finishing it"):
            with _locked_unless(tmp_path, "k1", lambda: None, timeout_s=0.5):
                pass
    finally:
        holder.kill()
        holder.wait()
    with _locked_unless(tmp_path, "k1", lambda: None, timeout_s=1) as got:  # free: the lock, to build
        assert got is None
