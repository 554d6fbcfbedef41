"""Issue 30 follow-up: the test process writes only a private, fresh folder, never the attempt's
artifacts folder. Code the hidden tests import (the agent's) finds its writable folder from pytest's
``-o cache_dir=…`` argument and tries to replace the files beside it (``diff.patch``, ``tests.log``),
plant ``grading.err``, and leave links to a host file and a fifo for the host to follow. On the code
before the fix each of these landed in the artifacts folder."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_works

from pytest_homefield.sandbox.testrun import read_junit, run_tests

PY = shlex.quote(sys.executable)
CMD = f"{PY} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio -p no:xdist"

#: What the agent's module does at import: everything it can reach from the writable folder.
ATTACK = """
import os, sys
arg = next(a for a in sys.argv if a.startswith("cache_dir="))
out = os.path.dirname(arg.split("=", 1)[1])
target = os.environ.get("HF_HOST_FILE") or {host!r}
for name in ("../diff.patch", "grading.err", "../grading.err"):
    try:
        with open(os.path.join(out, name), "w") as fh:
            fh.write("forged by the agent")
    except OSError:
        pass
for name, dest in (("tests.log", target), ("leak", target), ("outcomes.jsonl", "/dev/zero"), ("junit.xml", target)):
    path = os.path.join(out, name)
    try:
        os.unlink(path)
    except OSError:
        pass
    os.symlink(dest, path)
os.mkfifo(os.path.join(out, "pipe"))
VALUE = 1
"""


@pytest.mark.parametrize("sandbox", [
    pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no bwrap")), "none"])
def test_the_tests_cannot_touch_the_artifacts_folder(tmp_path: Path, sandbox: str) -> None:
    host = tmp_path / "host-secret.txt"
    host.write_text("the user's own file\n")
    proj = tmp_path / "p"
    (proj / "tests").mkdir(parents=True)
    (proj / "agentcode.py").write_text(ATTACK.format(host=str(host)))
    (proj / "tests" / "test_a.py").write_text("from agentcode import VALUE\n\ndef test_a():\n    assert VALUE == 1\n")
    art = tmp_path / "runs" / "r" / "attempt"
    art.mkdir(parents=True)
    (art.parent / "diff.patch").write_text("the real diff\n")
    (art / "diff.patch").write_text("the real diff\n")
    run = run_tests(proj, CMD, ["tests/test_a.py"], out_dir=art, sandbox=sandbox, timeout_s=60)
    assert run.outcomes == {"tests/test_a.py::test_a": "passed"}, run.log_path.read_text()[-2000:]
    assert (art.parent / "diff.patch").read_text() == "the real diff\n"
    assert (art / "diff.patch").read_text() == "the real diff\n"
    assert host.read_text() == "the user's own file\n"
    assert sorted(p.name for p in art.iterdir()) == ["diff.patch", "outcomes.jsonl", "tests.log"]
    assert sorted(p.name for p in art.parent.iterdir()) == ["attempt", "diff.patch"]
    for entry in art.iterdir():
        assert stat.S_ISREG(entry.lstat().st_mode), entry  # no link, no fifo left for the host
    assert "the user's own file" not in (art / "tests.log").read_text()
    assert run.log_path == art / "tests.log"


def test_a_junit_file_is_read_without_following_a_link(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.xml")
    assert not read_junit(tmp_path / "junit.xml").found  # before: parsed /dev/zero, which never ends
    assert not read_junit(tmp_path / "fifo.xml").found  # before: blocked on the fifo


@pytest.mark.skipif(not bwrap_works(), reason="no bwrap")
def test_no_host_path_in_the_test_sandboxs_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: bubblewrap's PID 1 command line listed every bound host path (the grading copy, the out
    folder), and its environment (``/proc/1/environ``) was the user's whole one: secrets, ``PWD`` (atk30).
    Now its options are in a memfd behind ``--args`` and it runs with no environment."""
    monkeypatch.setenv("HOMEFIELD_PROBE_SECRET", "s3cr3t-of-the-host")
    monkeypatch.setenv("PWD", str(tmp_path))
    proj = tmp_path / "p"
    (proj / "tests").mkdir(parents=True)
    (proj / "tests" / "test_c.py").write_text(
        "def test_c():\n    for n in ('cmdline', 'environ'):\n"
        "        print(n.upper(), open('/proc/1/' + n, 'rb').read().replace(b'\\0', b' ').decode())\n")
    run = run_tests(proj, f"{CMD} -s", ["tests/test_c.py"], out_dir=tmp_path / "out", sandbox="bwrap", timeout_s=60)
    assert run.outcomes == {"tests/test_c.py::test_c": "passed"}, run.log_path.read_text()[-2000:]
    lines = run.log_path.read_text().splitlines()
    line = next(x for x in lines if "CMDLINE" in x)
    assert "--args" in line, line
    for host in (str(tmp_path), os.path.realpath(tmp_path), "--ro-bind", "--bind"):
        assert host not in line, (host, line)
    environ = next(x for x in lines if x.startswith("ENVIRON"))
    assert environ.strip() == "ENVIRON", environ  # before: the host's, s3cr3t-of-the-host and PWD among it


def test_the_tests_output_goes_through_a_capped_pipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test command's stdout is a pipe read into a capped file (as the agent's, sandbox/streams.py):
    a test that floods it leaves its log's head, a marker naming the bytes cut and its end."""
    from pytest_homefield.sandbox import testrun

    monkeypatch.setattr(testrun, "LOG_CAP_BYTES", 64 * 1024)
    work = tmp_path / "w"
    work.mkdir()
    (work / "test_flood.py").write_text("import os\n\n\ndef test_flood():\n"
                                        "    assert os.readlink('/proc/self/fd/1').startswith('pipe:')\n"
                                        "    print('x' * 1023 + '\\n', end='', flush=True) or None\n"
                                        "    for _ in range(400):\n        print('y' * 1023, flush=True)\n"
                                        "    print('THE END', flush=True)\n")
    run = run_tests(work, CMD + " -s -p no:cacheprovider", ["test_flood.py"], out_dir=tmp_path / "out")
    assert run.outcomes == {"test_flood.py::test_flood": "passed"}, run.error
    log = run.log_path.read_bytes()
    assert len(log) < 80 * 1024 and b"bytes of tests.log cut here" in log and b"THE END" in log, len(log)
