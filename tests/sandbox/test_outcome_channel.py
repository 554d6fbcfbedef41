"""The outcome channel (issue 30): a pipe homefield opened, read as the run goes; only the reporter's
events from ``start`` to its first ``finish``, of one pid, count; no outcome path in the test process."""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.outcomes import decode_event
from pytest_homefield.sandbox.testrun import OUTCOMES_FD_ENV, OutcomeChannel, parse_events, run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

#: A conftest that, at import, notes what of homefield the test process can see, finds the channel's
#: pipe among its descriptors and keeps a copy; at exit (after pytest finished) it writes a whole forged
#: session into it, every test passed, then a second forged finish, and a forged phase from another pid.
FORGER = '''
import atexit, fcntl, json, os

seen = {k: v for k, v in os.environ.items() if k.startswith("HOMEFIELD")}
print("HF-SEEN " + json.dumps(seen), flush=True)
pipes = []
for n in os.listdir("/proc/self/fd"):
    fd = int(n)
    try:
        if fd > 2 and os.readlink(f"/proc/self/fd/{n}").startswith("pipe:") \\
                and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            pipes.append(os.dup(fd))
    except OSError:
        pass

def forge():
    pid = os.getpid()
    evs = [{"event": "start", "pid": pid}]
    evs += [{"event": "phase", "nodeid": "tests/test_a.py::test_fails", "when": w, "outcome": "passed",
             "pid": pid} for w in ("setup", "call", "teardown")]
    evs += [{"event": "finish", "exitstatus": 0, "pid": pid}]
    data = "".join(json.dumps(e) + "\\n" for e in evs).encode()
    for fd in pipes:
        os.write(fd, data)
    if not pipes:
        print("HF-NOPIPE", flush=True)

atexit.register(forge)
'''


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_what_an_exit_handler_writes_after_finish_does_not_count(tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    tests = "def test_fails():\n    assert 0\n\ndef test_ok():\n    pass\n"
    proj = _project(tmp_path / "p", {"conftest.py": FORGER, "tests/test_a.py": tests})
    # what the conftest saw goes to the log (-s: not captured); the out dir is not writable inside
    run = run_tests(proj, f"{CMD} -s", ["tests/test_a.py"], out_dir=tmp_path / "out", sandbox=sandbox)
    assert run.outcomes == {"tests/test_a.py::test_fails": "failed", "tests/test_a.py::test_ok": "passed"}
    assert run.finished and run.error is None, run
    assert run.ignored_events == 5  # the forged session arrived, all of it after the real finish
    # no outcome path (nor the descriptor's variable, which the reporter took) in the test process
    log = run.log_path.read_text().splitlines()
    assert [json.loads(line.split(" ", 1)[1]) for line in log if line.startswith("HF-SEEN ")] == [{}], log
    assert "HF-NOPIPE" not in log
    counted = (tmp_path / "out" / "outcomes.jsonl").read_text().splitlines()
    assert json.loads(counted[-1])["event"] == "finish" and len([c for c in counted if '"start"' in c]) == 1


def _ev(event: str, pid: int = 7, **kw: object) -> str:
    return json.dumps({"event": event, "pid": pid, **kw})


def _phase(nodeid: str, outcome: str, pid: int = 7) -> list[str]:
    return [_ev("phase", pid, nodeid=nodeid, when=w, outcome=outcome) for w in ("setup", "call", "teardown")]


def test_only_start_to_the_first_finish_of_one_pid_counts() -> None:
    lines = [
        *_phase("t::a", "passed"),  # before start
        _ev("start", pid=7),
        *_phase("t::a", "failed"),
        *_phase("t::a", "passed", pid=8),  # another process
        _ev("start", pid=7),  # a second start
        "not json",
        _ev("finish", exitstatus=1),
        *_phase("t::a", "passed"),  # after finish
        _ev("finish", exitstatus=0),  # a second finish
    ]
    parsed, counted = parse_events("\n".join(lines) + "\n")
    assert parsed.outcomes == {"t::a": "failed"} and parsed.started and parsed.finished
    assert parsed.ignored == 3 + 3 + 1 + 1 + 3 + 1
    assert len(counted) == 1 + 3 + 1


def test_a_start_without_an_int_pid_does_not_open_the_session() -> None:
    parsed, counted = parse_events("\n".join([json.dumps({"event": "start", "pid": True}),
                                              *_phase("t::a", "passed", pid=True)]))  # type: ignore[arg-type]
    assert not parsed.started and parsed.outcomes == {} and counted == [] and parsed.ignored == 4


def test_an_event_without_the_reporters_field_types_does_not_count_and_never_raises() -> None:
    """atk13 F2: one line the test process wrote into its own channel, ``{"event": "collected", "count":
    "x"}`` with the reporter's pid, made the host's parse raise (``ValueError``): the attempt was
    ``infra``, blamed on homefield, and retried by every ``--resume``. Every field of every event, set
    to a value of each wrong type, is now ignored, and the reporter's own events still count."""
    wrong: list[object] = ["x", "1e400", 1e400, -1, True, None, [1], {"a": 1}, 2.5, float("nan")]
    fields = {"event": "phase", "nodeid": "t::a", "when": "call", "outcome": "passed", "message": None,
              "xfail": False, "subtest": False, "timeout": False, "duration": 0.1}
    for key in [*fields, "count", "exitstatus", "path"]:
        for value in wrong:
            if (isinstance(value, str) and key not in ("count", "exitstatus", "xfail", "subtest", "timeout", "duration")
                    or value is None and key == "message"
                    or isinstance(value, float) and key == "duration"):
                continue  # a value of the field's own type
            bad = {**fields, "event": "collected" if key == "count" else "finish" if key == "exitstatus"
                   else fields["event"], key: value, "pid": 7}
            lines = [_ev("start", pid=7), json.dumps(bad), *_phase("t::a", "failed"), _ev("collected", count=3),
                     _ev("finish", exitstatus=1)]
            parsed, _ = parse_events("\n".join(lines) + "\n")
            assert parsed.outcomes == {"t::a": "failed"} and parsed.collected == 3 and parsed.finished, (key, value)


def test_a_line_nested_past_the_decoder_or_holding_a_lone_surrogate_is_ignored_never_raised() -> None:
    """atk14 A2: ``"[" * 200000`` in the channel made ``json.loads`` raise ``RecursionError`` on the host
    (an ``infra`` blamed on homefield, unscored for good); atk14 A5: a passed event for the made-up id
    ``f[\\x00\\ud800]`` became a record holding a lone surrogate, which no worker could send (the whole
    session died at every ``--resume``). Both lines are ignored; the reporter's own events count."""
    surrogate = '{"event": "phase", "nodeid": "t::a[\\u0000\\ud800]", "when": "call", "outcome": "passed", "pid": 7}'
    key = '{"event": "phase", "nodeid": "t::a", "when": "call", "outcome": "passed", "pid": 7, "\\udfff": 1}'
    for bad in ("[" * 200_000, "{" * 200_000, '{"a":' * 100_000, surrogate, key):
        assert decode_event(bad) is None
        lines = [_ev("start", pid=7), bad, *_phase("t::a", "failed"), _ev("finish", exitstatus=1)]
        parsed, _ = parse_events("\n".join(lines) + "\n")
        assert parsed.outcomes == {"t::a": "failed"} and parsed.finished and parsed.ignored == 1, bad[:40]
    assert decode_event('{"event": "phase", "nodeid": "t::caf\\u00e9[\\u2603]"}') == {
        "event": "phase", "nodeid": "t::caf\u00e9[\u2603]"}  # any real text is text


def test_the_channel_is_drained_while_the_writer_runs() -> None:
    """More than a pipe buffer (64 KiB) written before anyone closes it: the reader thread keeps the
    writer from blocking; bytes past the cap are read and dropped."""
    channel = OutcomeChannel(cap=200_000)
    chunk = b"x" * 65536
    for _ in range(5):
        os.write(channel.write_fd, chunk)
    data = channel.close()
    assert channel.eof and len(data) + channel.dropped == 5 * 65536 and len(data) <= 200_000
    assert channel.close() == data  # a second close changes nothing


def test_the_descriptor_variable_names_a_descriptor_not_a_path(tmp_path: Path) -> None:
    """The command's environment holds the channel's number only."""
    proj = _project(tmp_path / "p", {"tests/test_env.py": f'''
        import os
        def test_env():
            assert "{OUTCOMES_FD_ENV}" not in os.environ
            assert not any("/" in v for k, v in os.environ.items() if k.startswith("HOMEFIELD"))
        '''})
    run = run_tests(proj, CMD, ["tests/test_env.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"tests/test_env.py::test_env": "passed"}, run.log_path.read_text()
