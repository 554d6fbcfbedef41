"""xdist over ssh (issue 17): two remote workers on a real OpenSSH server on 127.0.0.1 plus one local
worker; each remote worker has its own clone (no shared ``.homefield/``), results and artifacts come
back to the controller, and a SIGKILL of a remote worker mid-run followed by ``--resume`` loses
nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.e2e_repo import UNUSED_PLUGINS, cli_env, git
from helpers.sshd import HOST_ALIAS, start_sshd

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def _env() -> dict[str, str]:
    return cli_env()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """A real OpenSSH server on 127.0.0.1 (:func:`helpers.sshd.start_sshd`), stopped after the test."""
    sshd = start_sshd(tmp_path / "sshd")
    yield sshd
    sshd.stop()


def _cli(repo: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``homefield ARGS`` run in ``repo`` (:func:`_env`), its output captured."""
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def _remote_python(tmp_path: Path, claude: Path | None = None) -> Path:
    """The remote interpreter: this one, seeing this checkout, and (ssh passes no environment) blocking the unused
    plugins as cli_env does for the local processes; with ``claude``, a machine whose ``HOMEFIELD_CLAUDE_BIN``
    points there (a path with no claude CLI)."""
    python = tmp_path / "python.sh"
    bin_line = "" if claude is None else f"export HOMEFIELD_CLAUDE_BIN='{claude}'\n"
    python.write_text(f"#!/bin/sh\nexport PYTHONPATH='{os.environ.get('PYTHONPATH', '')}'\n"
                      f"export PYTEST_ADDOPTS='{UNUSED_PLUGINS}'\n{bin_line}exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    return python


def _tx(server: Any, python: Path, chdir: Path) -> str:
    """The ``--tx`` of a worker over ``server`` with ``python``, starting in ``chdir``."""
    return f"ssh={HOST_ALIAS}//ssh_config={server.config}//python={python}//chdir={chdir.resolve()}"


def test_two_remote_workers_and_one_local_then_kill_and_resume(mined: Path, tmp_path: Path, server: Any) -> None:
    repo = tmp_path / "controller"
    shutil.copytree(mined, repo, symlinks=True)
    shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
    hosts = []
    for name in ("host1", "host2"):  # "the repository at the same commit", without .homefield/
        host = tmp_path / name
        git(tmp_path, "clone", "-q", str(mined), str(host))
        shutil.copy(mined / ".homefield.yml", host / ".homefield.yml")
        hosts.append(host.resolve())
    python = _remote_python(tmp_path)
    log = tmp_path / "agents.log"
    # the agent's parent is its reaper (issue 21); the reaper's parent is the worker. Each attempt
    # lasts up to 3 s, until the test has killed a remote worker (then the rest run at full speed).
    stop = tmp_path / "stop"
    agent = (f"w=cmd:W=$(cut -d' ' -f4 /proc/$PPID/stat); echo ran-by-$W; "
             f"echo \"$W $(readlink /proc/$W/cwd)\" >> {log}; "
             f"i=0; while [ ! -e {stop} ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done")
    tx = [arg for host in hosts for arg in ("--tx", _tx(server, python, host))]
    # the agent logs its worker's pid outside the workspace, which the default sandbox hides
    cmd = [sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", agent, "--attempts", "2",
           "--sandbox", "none", "--run-id", "r1", "--", *tx, "--tx", "popen", "--dist", "load"]
    proc = subprocess.Popen(cmd, cwd=repo, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    killed = None
    deadline = time.monotonic() + 240
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        for line in log.read_text().splitlines() if log.exists() else []:
            pid, _, cwd = line.partition(" ")
            if Path(cwd) in hosts:
                os.kill(int(pid), signal.SIGKILL)  # the remote worker, mid-attempt
                killed = (int(pid), Path(cwd))
                stop.touch()
                break
        time.sleep(0.2)
    out, _ = proc.communicate(timeout=300)
    assert killed is not None, out
    assert "crashed" in out or "worker" in out, out
    run = repo / ".homefield" / "runs" / "r1"
    first = list(read_jsonl(run / "results.jsonl"))
    # the attempt in flight is recorded by the controller as its worker's death: an unscored try
    # (claimed: without a sandbox the agent's code could have killed it), redone by --resume
    died = [r for r in first if r["outcome"] == "infra" and r["error"].startswith("its xdist worker died")]
    assert len(died) == 1 and died[0]["claimed"] and not died[0]["scored"], first
    keys = [(r["task_id"], r["agent"], r["attempt"]) for r in first if r not in died]
    n_items = 2 * len((repo / ".homefield" / "tasks.jsonl").read_text().splitlines())
    assert len(keys) == len(set(keys)) == n_items - 1, out  # nothing else is lost
    assert (died[0]["task_id"], died[0]["agent"], died[0]["attempt"]) not in keys
    # who ran what: each attempt's agent.out (on the controller) names its worker's pid
    workers = {int(p): Path(c) for p, _, c in (ln.partition(" ") for ln in log.read_text().splitlines())}
    ran_in = set()
    for task, agent_name, attempt in keys:
        art = run / "attempts" / task / agent_name / str(attempt)
        text = (art / "agent.out").read_text()  # readable on the controller, wherever it ran
        pid = int(text.split("ran-by-")[1].split()[0])
        ran_in.add(workers[pid])
        if workers[pid] in hosts:  # written on the remote clone, copied back with the report
            assert (workers[pid] / ".homefield/runs/r1/attempts" / task / agent_name / str(attempt)
                    / "agent.out").read_text() == text
    assert repo.resolve() in ran_in and ran_in & set(hosts), (ran_in, out)
    assert not (hosts[0] / ".homefield/runs/r1/results.jsonl").exists()  # only the controller writes
    # resume: the lost attempt runs again, nothing finished runs twice
    proc2 = _cli(repo, "run", "--agent", agent, "--attempts", "2", "--sandbox", "none", "--run-id", "r1", "--resume",
                 "-n", "0", timeout=300)
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    after = list(read_jsonl(run / "results.jsonl"))
    assert after[: len(first)] == first
    keys2 = [(r["task_id"], r["agent"], r["attempt"]) for r in after if r not in died]
    assert len(keys2) == len(set(keys2)) == n_items
    assert keys2[: len(keys)] == keys


def test_a_remote_worker_without_the_client_stops_the_run_at_once(mined: Path, tmp_path: Path, server: Any) -> None:
    """nu19 left it, nu20 fixed it: the controller cannot check a remote worker's machine for an agent's client
    (``--tx ssh=…``), so on a worker without it every attempt of the agent was ``infra``, one by one, to the end
    of the run. The worker now stops the run at its first item: one line naming the worker, its host and the
    agent's install command, exit 4, nothing recorded, the run resumable."""
    repo = tmp_path / "controller"
    shutil.copytree(mined, repo, symlinks=True)
    shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
    host = tmp_path / "host1"
    git(tmp_path, "clone", "-q", str(mined), str(host))
    shutil.copy(mined / ".homefield.yml", host / ".homefield.yml")
    missing = tmp_path / "no-claude-here"
    tx = _tx(server, _remote_python(tmp_path, missing), host)  # the remote machine: no claude CLI
    proc = _cli(repo, "run", "--agent", "fast=claude:claude-haiku-4-5", "--attempts", "2", "--sandbox", "none",
                "--run-id", "r", "--", "--tx", tx, "--dist", "load", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out
    assert _claude_missing(missing, "run") in out, out
    assert "Continue the run with: homefield run --resume --run-id r" in out, out
    run = repo / ".homefield" / "runs" / "r"
    assert not list(read_jsonl(run / "results.jsonl")) if (run / "results.jsonl").exists() else True
    assert json.loads((run / "meta.json").read_text())["cut_short"].startswith("client missing on worker gw0")


def _remote_without_claude(mined: Path, tmp_path: Path, server: Any) -> tuple[Path, Path, str]:
    """The controller's copy of ``mined`` (no runs, a ``CLAUDE.md``) and the ``--tx`` of a remote worker whose machine
    has no claude CLI where ``HOMEFIELD_CLAUDE_BIN`` points: ``(controller, missing, tx)``. An ablation's and a
    probe's workers read the controller's ``.homefield/`` (its plan, variants, tasks) at its path, so the worker
    starts in the controller's folder, as on a shared file system."""
    repo = tmp_path / "controller"
    shutil.copytree(mined, repo, symlinks=True)
    shutil.rmtree(repo / ".homefield" / "runs", ignore_errors=True)
    (repo / "CLAUDE.md").write_text("# Rules\n\n- Keep functions short.\n- Write a test for each fix.\n")
    missing = tmp_path / "no-claude-here"
    return repo, missing, _tx(server, _remote_python(tmp_path, missing), repo)


def _claude_missing(missing: Path, what: str) -> str:
    return (f"ERROR: pytest-homefield: client missing on worker gw0 (host {socket.gethostname()}): agent 'fast': "
            f"cannot start {missing}: no such executable (install the Claude Code CLI: npm i -g "
            "@anthropic-ai/claude-code, or set HOMEFIELD_CLAUDE_BIN to its path); install it there, or leave "
            f"that worker out of --tx; the {what} stopped")


def test_a_remote_worker_without_the_client_stops_an_ablation_at_once(mined: Path, tmp_path: Path, server: Any) -> None:
    """ops62: a run's remote worker refused at its first item (nu20), an ablation's did not: on a worker without
    the agent's client each attempt of every variant was ``infra``, one by one (measured before: exit 1, 6 infra
    attempts: 2 tasks, 3 variants). Now the same line, exit 4, no result recorded, ``--resume`` goes on."""
    repo, missing, tx = _remote_without_claude(mined, tmp_path, server)
    proc = _cli(repo, "ablate", "CLAUDE.md", "--yes", "--agent", "fast=claude:claude-haiku-4-5", "--attempts", "1",
                "--max-tasks", "2", "--sandbox", "none", "--", "--tx", tx, "--dist", "load", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out
    assert _claude_missing(missing, "ablation") in out, out
    assert "Continue the ablation with: homefield ablate CLAUDE.md --yes --resume" in out, out
    (folder,) = (repo / ".homefield" / "ablate").iterdir()
    results = folder / "results.jsonl"
    assert not (results.exists() and list(read_jsonl(results))), out
    assert json.loads((folder / "meta.json").read_text())["cut_short"].startswith("client missing on worker gw0")


def test_a_remote_worker_without_the_client_stops_a_probe_at_once(mined: Path, tmp_path: Path, server: Any) -> None:
    """ops62: as for an ablation, a probe's remote worker without the agent's client made each call ``infra``, one
    by one (measured before: exit 1, both calls ``infra``), and the controller wrote a verdict. Now the same
    line, exit 4, no call recorded, no verdict written."""
    repo, missing, tx = _remote_without_claude(mined, tmp_path, server)
    proc = _cli(repo, "probe", "--agent", "fast=claude:claude-haiku-4-5", "--samples", "1", "--max-tasks", "2",
                "--", "--tx", tx, "--dist", "load", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 4, out
    assert _claude_missing(missing, "probe") in out, out
    assert "Continue the probe with: homefield probe --agent fast=claude:claude-haiku-4-5 --resume" in out, out
    records = repo / ".homefield" / "probe" / "fast.jsonl"
    assert not (records.exists() and records.read_text().strip()), records.read_text()


def _controller(ablate_repo: Path, tmp_path: Path, server: Any) -> tuple[Path, Path, str]:
    """The controller's copy of ``ablate_repo``, a remote host's clone of it (the repository at the same commit,
    without ``.homefield/``: no tasks, no plan, no variants) and the ``--tx`` of a worker there:
    ``(controller, host, tx)``."""
    repo = tmp_path / "controller"
    shutil.copytree(ablate_repo, repo, symlinks=True)
    host = tmp_path / "host1"
    git(tmp_path, "clone", "-q", str(repo), str(host))
    return repo, host, _tx(server, _remote_python(tmp_path), host)


def _ablated(repo: Path, host: Path, tx: str, rules: str = "CLAUDE.md") -> str:
    """An oracle's ablation of ``rules`` (2 tasks, 1 attempt) over the remote worker ``tx``, checked: exit 0, each
    attempt of each variant solved and recorded on the controller alone, and it ran on ``host`` too. Its output."""
    proc = _cli(repo, "ablate", rules, "--yes", "--agent", "oracle", "--attempts", "1", "--max-tasks", "2",
                "--sandbox", "none", "--", "--tx", tx, "--dist", "load")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    (folder,) = (repo / ".homefield" / "ablate").iterdir()
    results = list(read_jsonl(folder / "results.jsonl"))
    variants = json.loads((folder / "plan.json").read_text())["variants"]
    assert len(variants) >= 3 and len(results) == 2 * len(variants), results  # 2 tasks x each variant
    assert all(r["outcome"] == "solved" for r in results), results
    assert (host / ".homefield" / "ablate" / folder.name).is_dir()  # it ran there, in its own folder
    assert not (host / ".homefield" / "ablate" / folder.name / "results.jsonl").exists()  # only the controller
    return out


def _probe(repo: Path, tx: str) -> tuple[int, str]:
    """An oracle's probe (1 sample, 2 tasks) over the remote worker ``tx``: its exit status and output."""
    proc = _cli(repo, "probe", "--agent", "oracle", "--samples", "1", "--max-tasks", "2", "--", "--tx", tx,
                "--dist", "load")
    return proc.returncode, proc.stdout + proc.stderr


def test_an_ablation_on_a_remote_worker_without_the_controllers_folder(
        ablate_repo: Path, tmp_path: Path, server: Any) -> None:
    """ops63 (found by ops62): an ablation's remote worker that does not share the controller's folder read the
    tasks, plan and variants at the controller's path, failed at start-up, and xdist replaced it again and again
    (85 replacements in 200 s, no end). Now it is sent what it needs, as a run's worker is: the ablation ends,
    every attempt recorded on the controller, some run on the remote host."""
    out = _ablated(*_controller(ablate_repo, tmp_path, server))
    assert "replacing crashed worker" not in out, out


@pytest.mark.parametrize("given", ["relative", "absolute"])
def test_an_ablation_of_a_rules_file_the_remote_host_lacks(
        ablate_repo: Path, tmp_path: Path, server: Any, given: str) -> None:
    """ux63 (ops63 left it): an ablation's remote worker read the rules file from its own checkout, so a rules
    file not committed (absent from the host's clone), or given by an absolute path (the controller's, outside
    the host's repository), made the worker fail at start-up and the session end. Now the worker is sent the
    rules file's text and path, as it is the plan and the variants: the ablation ends, each attempt solved."""
    repo, host, tx = _controller(ablate_repo, tmp_path, server)
    rules = repo / "RULES.md"  # untracked: the host's clone has none
    rules.write_text((repo / "CLAUDE.md").read_text())
    _ablated(repo, host, tx, str(rules) if given == "absolute" else "RULES.md")
    assert not (host / "RULES.md").exists()


def test_a_probe_on_a_remote_worker_without_the_controllers_folder(
        ablate_repo: Path, tmp_path: Path, server: Any) -> None:
    """ops63: as for an ablation, a probe's remote worker without the controller's ``.homefield/`` (its tasks)
    failed at start-up and was replaced without end. Now it is sent the tasks, as a run's worker is."""
    repo, host, tx = _controller(ablate_repo, tmp_path, server)
    code, out = _probe(repo, tx)
    assert "replacing crashed worker" not in out, out
    assert code == 0, out
    calls = [r for r in read_jsonl(repo / ".homefield" / "probe" / "oracle.jsonl") if r["kind"] != "verdict"]
    assert len(calls) >= 2 and all(r["error"] is None and r["score"] is not None for r in calls), calls
    assert (host / ".homefield" / "tasks.jsonl").read_bytes() == (repo / ".homefield" / "tasks.jsonl").read_bytes()


def test_a_remote_worker_that_fails_at_start_up_ends_the_session(
        ablate_repo: Path, tmp_path: Path, server: Any) -> None:
    """ops63: a worker that fails at start-up (here: its host's ``tasks.jsonl`` differs from the controller's) was
    replaced by xdist without end when no ``-n`` bounds its restarts. Now the session ends at once: one line naming
    the worker and its error, exit 4, no worker replaced."""
    repo, host, tx = _controller(ablate_repo, tmp_path, server)
    (host / ".homefield").mkdir()
    (host / ".homefield" / "tasks.jsonl").write_text("")  # not the controller's: join refuses it
    code, out = _probe(repo, tx)
    assert code == 4, out
    assert "replacing crashed worker" not in out, out
    assert "pytest-homefield: xdist worker gw0 (--tx ssh=" in out and "failed at start-up: " in out, out


def test_a_remote_worker_that_crashes_after_start_up_is_restarted_a_bounded_number_of_times(
        ablate_repo: Path, tmp_path: Path, server: Any) -> None:
    """ops64: a ``--tx`` worker alone (no ``-n``) that crashes once it is ready (here: in collection, every time) was
    replaced by xdist without end, its ``--max-worker-restart`` unbounded without ``-n``. Now the session has xdist's
    bound with ``-n`` (4 per worker), then stops with one line saying why."""
    repo, _, tx = _controller(ablate_repo, tmp_path, server)
    crash = tmp_path / "crash"  # a plugin only the remote worker loads: it dies in collection
    crash.mkdir()
    (crash / "crash_in_collection.py").write_text("import os\n\n\ndef pytest_collection(session):\n"
                                                  "    os._exit(3)\n")
    python = tmp_path / "python.sh"
    python.write_text(python.read_text().replace(
        "export PYTHONPATH='", f"export PYTHONPATH='{crash}:").replace(
        "export PYTEST_ADDOPTS='", "export PYTEST_ADDOPTS='-p crash_in_collection "))
    proc = _cli(repo, "run", "--agent", "oracle", "--sandbox", "none", "--", "--tx", tx, "--dist", "load",
                timeout=180)  # endless before
    out = proc.stdout + proc.stderr
    assert out.count("replacing crashed worker") == 4, out
    assert ("pytest-homefield: 5 xdist workers crashed after start-up, more than the 4 restarts a --tx session "
            "without -n is allowed") in out, out
    assert proc.returncode != 0, out
