"""Issue 30, the graded test process's writes (contracts §7 "Write cap"): code the agent wrote runs in
the hidden tests' process at import time. Each attack is a ``cmd:`` agent whose change (a wrong fix of
the task of :mod:`attack_repo` plus a few lines at the top of the module the tests import) makes the
test process write; it goes through ``run_attempt`` with ``max_test_write_mb`` set low (4 MiB) so that
the suite stays fast.

Before the cap: the test process wrote without bound (200 MiB into bubblewrap's unsized ``/tmp``, that
is RAM; a sparse gibibyte; thousands of files into its ``TMPDIR``; its copy of the workspace with
``--sandbox none``, up to filling the disk, after which other attempts' writes failed as ``infra``),
and the attempt was scored as if nothing had happened. Now each write is refused at the cap (the sized
tmpfs, ``RLIMIT_FSIZE``: a failed attempt whose error names the cap) or the run is stopped (the watch
of its folders: ``agent_error`` with the reason), never ``infra``, never solved.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, script_agent
from helpers.bwrap import bwrap_works

from pytest_homefield.records import Result, Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

#: MiB the hidden tests may write here (1024 by default).
CAP_MB = 4.0
CAP = "(max_test_write_mb)"


BWRAP = pytest.param("bwrap", id="sandboxed", marks=pytest.mark.skipif(not bwrap_works(), reason="no bwrap"))
NONE = pytest.param("none", id="no-sandbox")


def attack(task: Task, cache: SnapshotCache, tmp_path: Path, sandbox: str, body: str) -> Result:
    """One attempt of an agent shipping a wrong ``sub`` and ``body`` (Python, run when the tests import
    ``calc``), its hidden tests capped at :data:`CAP_MB`."""
    source = f"import os\nimport tempfile\n\n{body}\n\n{WRONG_CALC}"
    agent = script_agent(tmp_path / "agent", {"src/calc/__init__.py": source})
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice(sandbox, "none"), test_write_mb=CAP_MB)
    r = run_attempt(spec, cache)
    assert r.scored and not r.solved and r.outcome != "infra", r
    assert r.test_sandbox == sandbox, r
    return r


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [BWRAP])
def test_a_200_mib_file_in_tmp_is_cut_at_the_cap(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                 sandbox: str) -> None:
    """Before: 200 MiB written (bubblewrap's ``/tmp`` an unsized tmpfs: the machine's memory). Now: the
    tmpfs holds 4 MiB, and no file grows past 4 MiB (``RLIMIT_FSIZE``; without a sandbox ``/tmp`` is the
    host's and that is its bound: the sparse file below)."""
    big = Path("/tmp") / f"hf-writes-{uuid.uuid4().hex}.bin"
    body = f"with open({str(big)!r}, 'wb') as f:\n    for _ in range(200):\n        f.write(bytes(1 << 20))"
    try:
        r = attack(task, cache, tmp_path, sandbox, body)
        assert r.outcome == "tests_failed" and r.error is not None and r.error.endswith(CAP), r
    finally:
        big.unlink(missing_ok=True)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [BWRAP, NONE])
def test_many_small_files_are_stopped_or_refused(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                 sandbox: str) -> None:
    """5,000 files of 1 KiB in ``TMPDIR`` (20 MiB counted: a block each). Before: all written. Now: in
    bubblewrap the 4 MiB tmpfs refuses them (a failed attempt saying why); without a sandbox ``TMPDIR``
    is the run's own folder, watched: the run is stopped, ``agent_error``."""
    body = ("d = tempfile.mkdtemp()\nfor i in range(5000):\n"
            "    with open(os.path.join(d, str(i)), 'wb') as f:\n        f.write(b'x' * 1024)")
    r = attack(task, cache, tmp_path, sandbox, body)
    assert r.error is not None
    if sandbox == "bwrap":
        assert r.outcome == "tests_failed" and "ran out of room" in r.error and r.error.endswith(CAP), r
    else:
        assert r.outcome == "agent_error", r
        # the first test process of the agent's code is a run apart: the fixture's sealable row -5 is in a column its
        # twin deranges, so seal54 leaves it unsealed in this grading (no sealed run)
        assert r.error == f"hidden tests: the test process wrote over {CAP_MB:g} MiB into its " \
                          f"folders {CAP}; stopped", r


@pytest.mark.slow
def test_a_sparse_file_past_the_per_file_cap_is_refused(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """Before: a sparse gibibyte in ``TMPDIR`` (the same in the host's ``/tmp`` without a sandbox). Now:
    ``RLIMIT_FSIZE`` refuses it (``EFBIG``; the same in bubblewrap, the reaper sets it for both)."""
    body = "with open(os.path.join(tempfile.gettempdir(), 'table.bin'), 'wb') as f:\n    f.truncate(1 << 30)"
    r = attack(task, cache, tmp_path, "none", body)
    assert r.outcome == "tests_failed" and r.error is not None, r
    assert r.error.endswith(f"a test process wrote a file up to the cap of {CAP_MB:g} MiB per file {CAP}"), r


def test_a_loop_filling_the_workspace_copy_is_stopped(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """With ``--sandbox none`` the copy under test is writable (bubblewrap binds it read-only). Before: the
    loop wrote on (here it stops at 16 MiB; unbounded, it filled the disk). Now: the watch of the copy
    stops the run, ``agent_error``."""
    body = ("here = os.path.dirname(os.path.abspath(__file__))\nfor i in range(16):\n"
            "    with open(os.path.join(here, f'fill{i}.bin'), 'wb') as f:\n        f.write(bytes(1 << 20))")
    r = attack(task, cache, tmp_path, "none", body)
    assert r.outcome == "agent_error" and r.error is not None and CAP in r.error, r
