"""hatk43, ``--sandbox none`` under xdist: hatk41 made a session read ``.homefield/parent-checks.jsonl`` once, when its
cache is made before its first attempt, so that a line graded code appends (``reference_passes`` naming the twins
its always-equal fix passes) is never read in that session. Each xdist worker read it when it joined. A worker that
crashes (graded code under ``--sandbox none`` can kill its own worker, an ancestor) is started again by xdist
(``--max-worker-restart``, four per worker by default) and joins *after* attempts ran: it read the store then, the
forged line with it, and graded the attempts it was given with it. Now the controller's offer carries the lines it
read at the session's start (``checks``) and every worker, first or started again, takes those."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.attack_repo import Fixture, task_for

from pytest_homefield.agents.reference import NoopAgent
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.run import twin_grading
from pytest_homefield.run.session import RunSession, select_tasks
from pytest_homefield.settings import Settings
from pytest_homefield.store import append_jsonl, write_jsonl_atomic


def test_a_worker_joining_after_attempts_reads_no_line_written_since_the_start(fx: Fixture, tmp_path: Path) -> None:
    """The store holds one honest line at the session's start; graded code appends a forged one; a worker joins then
    (one xdist started again): it sees the honest line, never the forged one. Before: ``reference_passes`` of the
    forged line, ``{"twin-1", "twin-2"}``."""
    task = task_for(fx)
    root = tmp_path / "repo"
    shutil.copytree(fx.root, root, symlinks=True)
    write_jsonl_atomic(HomefieldDir(root).tasks, [task.to_dict()])
    store = HomefieldDir(root).parent_checks
    append_jsonl(store, {"key": "k-honest", "reference_passes": []})
    s = Settings(root=root, agents=["noop"], attempts=1, sandbox="none")
    agents = [NoopAgent(name="noop", spec="noop")]
    controller = RunSession.start(s, select_tasks(s), agents, now="2026-03-01T10:00:00+00:00")
    try:
        wi = json.loads(json.dumps(controller.workerinput()))
        append_jsonl(store, {"key": "k-honest", "reference_passes": ["twin-1", "twin-2"]})  # graded code, later
        append_jsonl(store, {"key": "k-new", "reference_passes": ["twin-3"]})
        worker = RunSession.join(s, select_tasks(s), agents, wi)  # a worker xdist started again
        try:
            assert worker.runner._cache is not None
            assert twin_grading._stored_passes(store, "k-honest") == frozenset()
            assert twin_grading._stored_passes(store, "k-new") is None
        finally:
            worker.close()
    finally:
        controller.close()
        controller.release()
