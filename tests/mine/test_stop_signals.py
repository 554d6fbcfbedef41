"""An interrupted mine keeps what it did (mint46, mine/stop_signals.py). r45 on more-itertools
(``homefield mine --first-parent --merges -n 1``): a Ctrl-C sent twice (``pkill -INT``, then ``timeout``) printed a
traceback and wrote no ``tasks.jsonl``; a SIGTERM exited 143 at once, also with no summary and no ``tasks.jsonl``.

Each case: a real ``homefield mine`` of a repository of two merged branches (the newer one's test is quick, the
older one's hangs at import after writing its pid), the signals sent once the quick candidate's record is in
``results.jsonl`` and the hanging test run has started (its pid file exists); then the summary ends the output with no
traceback, the exit status is 2, ``tasks.jsonl`` holds the quick task, no test run is left alive, and the next mine
reuses the finished record (``reused 1, verified 0``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import cli_env, homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def _repo(path: Path, pids: Path) -> GitRepo:
    """Two merged branches: ``slow`` (older) adds ``f1`` with a test module that writes its pid into ``pids/`` and
    sleeps 120 s at import; ``quick`` (newer) adds ``f2`` and its quick test."""
    repo = GitRepo.init(path)
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.write("tests/__init__.py", "")
    repo.commit("Start the package with an empty module")
    hang = (f"import os, pathlib, time\n\npathlib.Path({str(pids)!r}, str(os.getpid())).touch()\n"
            "time.sleep(120)\n")
    for n, branch in ((1, "slow"), (2, "quick")):
        repo.branch(branch)
        repo.checkout(branch)
        repo.write(f"pkg/f{n}.py", f"def f{n}():\n    return {n}\n")
        repo.write(f"tests/test_f{n}.py", f"{hang if n == 1 else ''}from pkg.f{n} import f{n}\n\n\n"
                                          f"def test_f{n}():\n    assert f{n}() == {n}\n")
        repo.commit(f"Add function f{n} returning the number {n}")
        repo.checkout("main")
        repo.merge(branch, f"Merge branch {branch}: function f{n} returning {n}")
    return repo


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(what: str, ready: object, deadline: float) -> None:
    while time.monotonic() < deadline and not ready():  # type: ignore[operator]
        time.sleep(0.05)
    assert ready(), what  # type: ignore[operator]


#: pytest's last line (``=== 1 passed in 3.35s ===``): a signal sent once it is read lands in the session's end.
_STATS = re.compile(r"^=+ .* in [0-9.]+s(?: \([0-9:]+\))? =+$")


@pytest.mark.parametrize(("workers", "sigs", "late", "group", "name"), [
    ("0", [signal.SIGTERM], None, False, "SIGTERM"),
    # pkill -INT, then timeout's SIGINT to the process group while the session ends
    ("1", [signal.SIGINT], signal.SIGINT, True, "Ctrl-C"),
    # back to back: pending at once, Python runs the handlers in signal number order, SIGINT's first; on a busy
    # machine SIGTERM's may run before SIGINT arrives (CI, r46): the first handled names the stop, the second changes
    # nothing
    ("1", [signal.SIGTERM, signal.SIGINT], None, False, "Ctrl-C|SIGTERM"),
    ("2", [signal.SIGTERM], signal.SIGTERM, True, "SIGTERM"),
], ids=["n0-term", "n1-int-then-int-at-the-end", "n1-term-int", "n2-term-then-term-at-the-end"])
def test_an_interrupted_mine_keeps_what_it_did(tmp_path: Path, workers: str, sigs: list[int], late: int | None,
                                               group: bool, name: str) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    repo = _repo(tmp_path / "repo", pids)
    args = ["mine", "--first-parent", "--merges", "--stability-runs", "1", "--sandbox", "none", "-n", workers]
    proc = subprocess.Popen([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo.path, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 150
        results = repo.path / ".homefield" / "mine"
        _wait_for("the quick candidate was never verified",
                  lambda: any(any(read_jsonl(r)) for r in results.glob("*/results.jsonl")), deadline)
        _wait_for("the hanging test run never started", lambda: any(pids.iterdir()), deadline)
        send = os.killpg if group else os.kill
        for sig in sigs:  # back to back
            send(proc.pid, sig)
        assert proc.stdout is not None
        out = ""
        for line in proc.stdout:  # to the end (the file's own buffer: communicate() would read past it)
            out += line
            if late is not None and _STATS.match(line.strip()):  # pytest's last line read: the session ends now
                send(proc.pid, late)
                late = None
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 2, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert out.rstrip().splitlines()[-1].startswith("Verification records: .homefield/mine/"), (proc.returncode, out)
    said = [n for n in name.split("|") if f"Interrupted: {n}; 1 of 2 candidates not verified: tasks.jsonl is partial "
            "(1 task from the 1 verified)." in out]
    assert len(said) == 1, out
    name = said[0]
    assert f"Continue with: homefield {shlex.join(args)}" in out, out
    assert [t["subject"] for t in read_jsonl(repo.path / ".homefield" / "tasks.jsonl")] == \
        ["Merge branch quick: function f2 returning 2"]
    left = [int(p.name) for p in pids.iterdir() if _alive(int(p.name))]
    assert not left, f"test runs left alive: {left}"
    (mine_dir,) = results.iterdir()
    assert json.loads((mine_dir / "meta.json").read_text())["stopped"]["detail"] == name
    # -n 0: the newest first, its record reused, then the bound: nothing runs
    again = homefield(repo.path, *args[:-1], "0", "--stop-after-tasks", "1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Candidates: reused 1, verified 0" in again.stdout, again.stdout
