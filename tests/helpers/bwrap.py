"""Whether the real bubblewrap works on this machine, for tests that run both with and without it; a
stand-in agent for the sandbox choice; an agent's sandbox and a graded test run for probe programs."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_homefield.sandbox import proccap
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe, python_paths
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.testrun import run_tests


def bwrap_works() -> bool:
    """True when :func:`~pytest_homefield.sandbox.bwrap.probe` finds a working bubblewrap."""
    try:
        probe()
    except BwrapUnavailable:
        return False
    return True


def skip_without_memory_cgroup_bwrap() -> None:
    """Skip the calling test unless test runs get a memory cgroup in bubblewrap here (root with cgroup v1
    memory, or a delegated v2 subtree), saying which is missing."""
    if proccap.memory_root() is None:
        pytest.skip("needs a writable memory cgroup (root with cgroup v1 memory, or a delegated v2 subtree)")
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


class ProcessAgent:
    """An agent that starts a program (``process``) and runs commands when ``shell`` is true: what the
    sandbox choice (:class:`~pytest_homefield.sandbox.modes.SandboxChoice`) asks of an agent."""

    name = "a"
    process = True

    def __init__(self, shell: bool) -> None:
        self.shell = shell

    def runs_commands(self, allow_shell: bool) -> bool:
        return self.shell


#: pytest options of a graded test run in these tests: none of the machine's plugins.
PLAIN = "-p no:hypothesispytest -p no:xdist -p no:benchmark -p no:cacheprovider -p no:anyio"


def bwrap_or_skip() -> str:
    """The path of a working bubblewrap (:func:`~pytest_homefield.sandbox.bwrap.probe`); skips the calling test,
    saying why, where there is none."""
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


@dataclass
class AgentSandbox:
    """An agent's bubblewrap sandbox made in ``tmp_path`` (its ``ws``, ``tmp`` and ``home`` folders; no network;
    the running Python read-only), in which a test runs Python programs as the agent would run commands."""

    backend: BwrapBackend
    box: AgentBox
    env: dict[str, str]
    tmp_path: Path

    @property
    def ws(self) -> Path:
        return self.box.workspace

    def argv(self, program: str, *args: str) -> list[str]:
        """The command running ``python -c program args…`` in the sandbox."""
        return self.backend.wrap_agent([sys.executable, "-c", program, *args], self.env, self.box).argv

    def run(self, program: str, *args: str, name: str = "agent", timeout_s: float = 60) -> int:
        """Run ``program`` in the sandbox through the reaper (``run_process``) to its end: its exit status; its
        output in ``tmp_path/<name>.out`` and ``.err``."""
        return run_process(self.argv(program, *args), cwd=self.ws, env=self.env, timeout_s=timeout_s,
                           stdout_path=self.tmp_path / f"{name}.out",
                           stderr_path=self.tmp_path / f"{name}.err").exit_code

    @contextlib.contextmanager
    def holding(self, program: str) -> Iterator[tuple[str, list[int]]]:
        """Run ``program`` in the sandbox in a thread, as the agent (:meth:`run`), until it printed its first line:
        ``(that line, stripped; "" if none came within 60 s, [its exit status once it ended])``. On exit the file
        ``release`` is made in the workspace (the program's cue to end) and the thread joined (90 s at most)."""
        out = self.tmp_path / "agent.out"
        codes: list[int] = []
        agent = threading.Thread(target=lambda: codes.append(self.run(program)))
        agent.start()
        try:
            end = time.time() + 60
            while not (out.exists() and out.read_text().endswith("\n")) and agent.is_alive() and time.time() < end:
                time.sleep(0.05)
            yield (out.read_text().strip() if out.exists() else ""), codes
        finally:
            (self.ws / "release").write_text("")
            agent.join(90)

    def says(self, program: str, *args: str) -> str:
        """What ``program`` wrote to stdout, once it exited 0 (asserted, its stderr shown otherwise)."""
        assert self.run(program, *args) == 0, (self.tmp_path / "agent.err").read_text()
        return (self.tmp_path / "agent.out").read_text()


#: The uids the tests' sandboxes lease when each runs under a host uid of its own (:func:`own_uids`).
TEST_UIDS = "1900000000:16"


def own_uids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sandbox the calling test builds runs under a host uid of its own (:mod:`~pytest_homefield.sandbox.
    host_uids`, :data:`TEST_UIDS`); skips where that cannot be: not root, no ``setpriv``, or a bubblewrap that
    cannot close a sandbox to further user namespaces."""
    from pytest_homefield.sandbox import host_uids
    from pytest_homefield.sandbox.bwrap import userns_args

    monkeypatch.setenv(host_uids.ENV, TEST_UIDS)
    if host_uids.pool() is None or "--disable-userns" not in userns_args(bwrap_or_skip()):
        pytest.skip("a host uid per sandbox needs root, setpriv and a bubblewrap with --disable-userns")


def default_uids(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default (``HOMEFIELD_SANDBOX_UIDS`` unset): as root, every sandbox the calling test builds runs under a
    host uid of its own from the default pool (satk52); skips where that is not the default: not root, no
    ``setpriv``, an account holding a uid of the pool, or a bubblewrap that cannot close a sandbox to further user
    namespaces."""
    from pytest_homefield.sandbox import host_uids
    from pytest_homefield.sandbox.bwrap import userns_args

    monkeypatch.delenv(host_uids.ENV, raising=False)
    if host_uids.pool() is None or "--disable-userns" not in userns_args(bwrap_or_skip()):
        pytest.skip("no host uid per sandbox by default here: needs root, setpriv, a free default pool and a "
                    "bubblewrap with --disable-userns")


def agent_sandbox(tmp_path: Path) -> AgentSandbox:
    """An :class:`AgentSandbox` in ``tmp_path``; skips the calling test where bubblewrap does not work."""
    backend = BwrapBackend(bwrap_or_skip())
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=python_paths([sys.executable]), network=False,
                   agent="a")
    return AgentSandbox(backend, box, {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}, tmp_path)


def graded_says(tmp_path: Path, program: str) -> list[str]:
    """The lines ``program`` (run with Python by the one test of a graded test run in bubblewrap, ``run_tests``)
    wrote to stdout, read from the run's log; skips the calling test where bubblewrap does not work."""
    bwrap_or_skip()
    work = tmp_path / "w"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_probe.py").write_text(
        "import subprocess, sys\n\n\ndef test_probe():\n"
        f"    out = subprocess.run([sys.executable, '-c', {program!r}], capture_output=True, text=True).stdout\n"
        "    print(''.join('\\nSAYS' + line for line in out.splitlines()))\n    assert False\n")
    run = run_tests(work, f"{sys.executable} -m pytest -s {PLAIN}", ["tests/test_probe.py"], out_dir=tmp_path / "out",
                    sandbox="bwrap")
    log = run.log_path.read_text()
    said = [line[4:] for line in log.splitlines() if line.startswith("SAYS")]
    assert said, log[-3000:]
    return said
