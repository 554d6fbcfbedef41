"""pytest_homefield/plugin.py: how a session is named to another that waits for it (contracts §9); the run
mode's report side, imported when first used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest_homefield
from pytest_homefield.plugin import LazyRunReports, _session_name
from pytest_homefield.report.finish import RUN_REPORTS


def test_a_session_is_named_by_its_command_never_its_arguments() -> None:
    """ux30: another session's waiting line showed this one's whole command line (paths, tokens): the CLI's
    sessions are named by their subcommand, pytest's by their mode's flag."""
    token = "x=cmd:API_KEY=s3cret ./agent.sh"
    assert _session_name(["/usr/local/bin/homefield", "run", "--agent", token], "--homefield") == "homefield run"
    assert _session_name(["/src/pytest_homefield/__main__.py", "verify", "--attacks"], "--homefield") == \
        "homefield verify"
    assert _session_name(["/venv/bin/pytest", "--homefield-probe", f"--homefield-agent={token}", "/home/u/repo"],
                         "--homefield-probe") == "pytest --homefield-probe"
    assert _session_name(["/usr/local/bin/homefield", "--agent=s3cret"], "--homefield") == "homefield"
    assert _session_name([], "") == "python"


#: The child of :func:`test_the_run_modes_report_side_is_imported_when_first_used`.
_LAZY = """
import json, sys
from pytest_homefield.plugin import LazyRunReports

reports = LazyRunReports()
before = sorted(m for m in sys.modules if m.startswith("pytest_homefield.report"))
reports.not_needed([], [("a", None)], "a", 1, looks=3, alpha=0.05, margin=0.1)
print(json.dumps([before, "pytest_homefield.report.finish" in sys.modules]))
"""


def test_the_run_modes_report_side_is_imported_when_first_used(tmp_path: Path) -> None:
    """speed32: a run's xdist worker imported the whole report package (26 modules) for ``RUN_REPORTS``, which
    it uses only under ``--adaptive``; the entry point's stand-in imports it at the first call and answers as
    ``RUN_REPORTS`` does."""
    proc = subprocess.run([sys.executable, "-c", _LAZY], capture_output=True, text=True, timeout=60,
                          cwd=Path(pytest_homefield.__file__).parent.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == [[], True]
    lazy = LazyRunReports()
    results = [{"task_id": t, "agent": "a", "attempt": 1, "outcome": "solved"} for t in ("t1", "t2")]
    for looks in (1, 3):
        assert lazy.not_needed(results, [("a", None)], "a", 2, looks=looks, alpha=0.05, margin=0.1) == \
            RUN_REPORTS.not_needed(results, [("a", None)], "a", 2, looks=looks, alpha=0.05, margin=0.1)
    assert lazy.finish(tmp_path / "run", tmp_path / "tasks.jsonl") == RUN_REPORTS.finish(tmp_path / "run",
                                                                                       tmp_path / "tasks.jsonl")


def test_a_tx_session_without_n_gets_xdists_bound_on_restarts() -> None:
    """ops64: xdist bounds crashed workers' restarts only with ``-n`` (4 per worker); ``--tx`` workers alone were
    replaced without end. :func:`bound_restarts` gives them the same bound, and leaves any other session as it is."""
    from types import SimpleNamespace

    from pytest_homefield.plugin import bound_restarts

    def option(**kw: object) -> SimpleNamespace:
        return SimpleNamespace(**{"tx": [], "numprocesses": None, "maxworkerrestart": None, "dist": "load", **kw})
    remote = option(tx=["ssh=host//python=p", "3*popen", "x*popen"])
    assert bound_restarts(remote) == 20 and remote.maxworkerrestart == "20"  # 1 + 3 + 1 workers
    for kept in (option(tx=["popen"] * 2, numprocesses=2), option(tx=["popen"], maxworkerrestart="0"),
                 option(tx=["popen"], dist="no"), option()):
        before = vars(kept).copy()
        assert bound_restarts(kept) is None and vars(kept) == before
