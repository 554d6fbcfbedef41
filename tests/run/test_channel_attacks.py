"""Issue 30: the outcome channel the test process cannot rewrite.

Measured on main: a source module the tests import registered an exit handler that, after pytest had
finished, rewrote the outcome file (its path was in the test process's environment) so that every test
passed: a wrong fix was counted ``solved``, with and without the sandbox, and not flagged. The outcomes
now come through a pipe homefield reads as the run goes; only the reporter's events from ``start`` to
its first ``finish`` count, so what the handler writes afterwards changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.attack_repo import WRONG_CALC, Both, Fixture, script_agent

from pytest_homefield.agents.attacks import attack_agent
from pytest_homefield.records import Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.modes import SandboxChoice


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_an_exit_handler_rewriting_the_outcomes_is_not_solved(fx: Fixture, task: Task, tmp_path: Path,
                                                             sandbox: str) -> None:
    if sandbox == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    agent = Both(script_agent(tmp_path / "wrong", {"src/calc/__init__.py": WRONG_CALC}),
                             attack_agent("exit-handler-rewrite"))
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",  # type: ignore[arg-type]
                           timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice(sandbox))
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert "_hf_all_passed" in (spec.artifacts / "diff.patch").read_text()  # the handler was shipped
    assert r.outcome == "tests_failed" and r.scored and not r.solved, r
    # the handler did run and wrote its forged session into the channel: none of it counted
    events = (spec.artifacts / "outcomes.jsonl").read_text().splitlines()
    assert events and '"event": "finish"' in events[-1] and '"exitstatus": 0' not in events[-1]


#: Appended to a wrong fix: at import, into every inherited write-only pipe (the outcome channel), a line
#: nested past the JSON decoder (atk14 A2) and a passed event for a made-up id holding a lone surrogate (A5).
POISON = r'''
import fcntl as _f, json as _j, os as _o, stat as _st
for _n in _o.listdir("/proc/self/fd"):
    try:
        _fd = int(_n)
        if _fd > 2 and _st.S_ISFIFO(_o.fstat(_fd).st_mode) and _f.fcntl(_fd, _f.F_GETFL) & _o.O_ACCMODE == _o.O_WRONLY:
            _ev = {"event": "phase", "nodeid": "tests/test_calc.py::test_add[\x00\ud800]", "when": "call",
                   "outcome": "passed", "pid": _o.getpid()}
            _o.write(_fd, b"[" * 200000 + b"\n" + _j.dumps(_ev).encode() + b"\n")
    except OSError:
        pass
'''


@pytest.mark.slow
def test_a_line_the_host_cannot_decode_leaves_the_attempt_scored(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """atk14 A2/A5: one nested line in the channel made the host's parse raise ``RecursionError``: the
    attempt was ``infra``, blamed on homefield, never scored. The lines are ignored; the wrong fix is
    ``tests_failed``, scored, its record plain UTF-8."""
    agent = script_agent(tmp_path / "poison", {"src/calc/__init__.py": WRONG_CALC + POISON})
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",
                           timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none"))
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert r.outcome == "tests_failed" and r.scored and not r.claimed, r
    assert "_fd > 2" in (spec.artifacts / "diff.patch").read_text()  # the payload was shipped
    json.dumps(r.to_dict(), ensure_ascii=False).encode("utf-8")


#: A wrong fix whose exit handler rewrites the ``{junit}`` file of a custom command (its path is in argv) with XML.
JUNIT_REWRITE = WRONG_CALC + r'''

def _rewrite_junit():
    import sys
    for arg in sys.argv:
        if arg.startswith("--junitxml="):
            with open(arg.split("=", 1)[1], "w") as f:
                f.write(XML)


import atexit
atexit.register(_rewrite_junit)
'''


@pytest.mark.parametrize("xml", [
    pytest.param('<testsuite><testcase name="x"><error message="collection failure"> </error></testcase></testsuite>',
                 id="blank-collection-failure"),
    pytest.param('<?xml version="1.0" encoding="bogus"?><testsuite/>', id="unknown-encoding"),
    pytest.param('<?xml version="1.0" encoding="cp932"?><testsuite/>', id="multi-byte-encoding"),
])
def test_a_junit_file_the_host_cannot_read_leaves_the_attempt_scored(fx: Fixture, task: Task, tmp_path: Path,
                                                                     xml: str) -> None:
    """atk19: under a ``{junit}`` test command (the file is the test process's to write, contracts §7), XML that
    made the host's parse raise (``IndexError`` for a collection failure with a blank text, ``LookupError`` for an
    unknown encoding, ``ValueError`` for a multi-byte one) failed grading: the attempt ``infra``, homefield's own
    failure, never scored (each 2 of 2 attempts with no fix). Now the first is read as a collection failure and
    the others as no file (the untouched parent's run then tells): the attempt is ``tests_failed``."""
    import dataclasses

    junit_task = dataclasses.replace(task, test_cmd=task.test_cmd + " --junitxml={junit}")
    agent = script_agent(tmp_path / "a", {"src/calc/__init__.py": f"XML = {xml!r}\n" + JUNIT_REWRITE})
    cache = SnapshotCache(repo=fx.root)
    try:
        spec = AttemptSpec(task=junit_task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",
                           timeout_s=60, run_timeout_s=120)
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert r.outcome == "tests_failed" and r.scored, r
