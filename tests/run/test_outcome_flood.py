"""atk19, the outcome channel flooded by the graded code (contracts §7 "The outcome channel"): the agent's
change to the module the hidden tests import writes well-formed phase events, with the reporter's own pid,
into the channel at import. Before: up to 64 MiB per run were held on the host as bytes, text, lines and
dicts (1.76 GB per attempt over two twin runs; with ``-n 8`` enough to get workers killed, ``infra`` for
every attempt on the machine). Now each event is read as it comes into its id's outcome fields, and a run
that sends more than one run may is over the cap: the attempt is ``agent_error``, scored, never ``infra``,
never solved (the caps are set low here so that the suite stays fast)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, script_agent
from helpers.bwrap import bwrap_works

from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox import outcomes
from pytest_homefield.sandbox.modes import SandboxChoice

#: The flood: 1,000 blocks of 100 events, each of a made-up id of the hidden test file (about 20 MiB).
FLOOD = '''
import json, os
_env = dict(v.split(b"=", 1) for v in open("/proc/self/environ", "rb").read().split(b"\\0") if b"=" in v)
_fd = int(_env.get(b"HOMEFIELD_OUTCOMES_FD", b"-1"))
_line = json.dumps({"event": "phase", "nodeid": "tests/test_calc.py::test_made_up_%d", "when": "call",
                    "outcome": "passed", "xfail": False, "duration": 0.0, "message": None, "subtest": False,
                    "timeout": False, "pid": os.getpid()}) + "\\n"
for _block in range(1000 if _fd > 2 else 0):
    _data = "".join(_line % (_block * 100 + _i) for _i in range(100)).encode()
    while _data:
        _data = _data[os.write(_fd, _data):]
'''


@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_a_flood_of_outcome_events_is_a_scored_agent_error(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outcomes, "MAX_EVENT_IDS", 2000)
    agent = script_agent(tmp_path / "agent", {"src/calc/__init__.py": f"{FLOOD}\n\n{WRONG_CALC}"})
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, sandbox=SandboxChoice("bwrap", "none"))
    r = run_attempt(spec, cache)
    assert r.scored and not r.solved and r.outcome == "agent_error", r
    # the first test process of the agent's code is a run apart: the fixture's column row -5 is sealable (col35), but
    # the function's twin deranges that column, so its sealed text differs between the runs apart and it is not sealed
    # in this grading (seal54): no sealed run
    assert r.error == ("hidden tests: the test process reported over 2000 test ids, the most one "
                       "test run may report; nothing after that counted"), r
