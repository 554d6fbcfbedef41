"""atk25's victim, in miniature (issue 30, contracts §9): in a cgroup of 512 MiB standing for the machine, two
sandboxes capped at 384 MiB each run at once; one holds 300 MiB in a ``memfd`` (nobody's resident memory), the
other, honest, a process of 250 MiB. Past the machine's memory the kernel's OOM killer picks by resident memory:
it killed the honest process, and its sandbox's cgroup counted the kill (homefield then blamed the honest run's
own cap). With a budget of the machine's 512 MiB the second sandbox waits for the first: nobody is killed."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import proccap

#: The homefield side, run in the cgroup standing for the machine: both sandboxes at once (a thread each),
#: their memory cgroups made under its own (``proccap.memory_root``), reserved from a budget of ``argv[1]`` MiB.
HOMEFIELD = r"""
import json, os, sys, threading, time
from pytest_homefield.sandbox import memory_budget, proccap
from pytest_homefield.sandbox.procs import run_process

memory_budget.configure(float(sys.argv[1]))
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
HOG = ("import os, time\nfd = os.memfd_create('hog')\nfor _ in range(300):\n    os.write(fd, b'x' * (1 << 20))\n"
       "time.sleep(3)\n")
HONEST = "b = bytearray(250 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint('done', flush=True)\n"
results = {}

def run(name, code, delay):
    time.sleep(delay)
    res = run_process(proccap.marked([sys.executable, "-c", code]), cwd="/", env=ENV, timeout_s=60,
                      box_memory=384 << 20)
    results[name] = [res.exit_code, res.oom_kills]

threads = [threading.Thread(target=run, args=("hog", HOG, 0)), threading.Thread(target=run, args=("honest", HONEST, 1))]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(results))
"""


def _machine(budget_mb: int, tmp_path: Path) -> dict[str, list[int]]:
    root = proccap.memory_root()
    assert root is not None
    machine = root / f"test-machine-{os.getpid()}-{time.monotonic_ns()}"  # not homefield-: no sandbox's cgroup
    machine.mkdir()
    try:
        (machine / "memory.limit_in_bytes").write_text(str(512 << 20))
        env = {**os.environ, "HOMEFIELD_PHASE_DIR": str(tmp_path / f"phases-{budget_mb}")}
        proc = subprocess.run([sys.executable, "-c", f"open({str(machine / 'cgroup.procs')!r}, 'w').write("
                               f"str(__import__('os').getpid()))\nexec({HOMEFIELD!r})", str(budget_mb)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout.splitlines()[-1]))
    finally:
        for _ in range(50):
            with contextlib.suppress(OSError):
                machine.rmdir()
                break
            time.sleep(0.1)


@pytest.mark.skipif(proccap.memory_root() is None, reason="needs a writable memory cgroup (root, cgroup v1 or a "
                                                          "delegated v2 subtree)")
def test_the_budget_keeps_the_honest_sandbox_alive(tmp_path: Path) -> None:
    unbounded = _machine(100_000, tmp_path)  # before: the caps summed past the machine
    assert unbounded["honest"][1] >= 1, unbounded  # the kernel killed the honest process in its own sandbox
    assert unbounded["hog"] == [0, 0], unbounded
    bounded = _machine(512, tmp_path)  # the machine's memory: the second sandbox waits for the first
    assert bounded == {"hog": [0, 0], "honest": [0, 0]}, bounded
