"""lock28: the page cache of the files every sandbox binds read-only outlives a test process (contracts §9).

The phase lock (sandbox/phases.py) keeps an agent from working while an attempt is graded, because live
channels between processes on one kernel (``flock`` on stdlib files) cannot be namespaced. The page cache of
those same files is shared too, and it *keeps* what a process did after the process is gone: a graded test
process evicts a few stdlib files nobody imports, ``idlelib``'s (``posix_fadvise(DONTNEED)``, allowed on a
read-only descriptor), and reads back the ones whose bit is 1; a later sandbox asks, once per file, whether its first
page is cached (``preadv2(RWF_NOWAIT)``: ``EAGAIN`` when it is not; no privilege needed). So a test process
leaves a message to whatever runs after it on the machine: a later grading of the same task (``PAGE_FOLLOWER``
of tests/run/test_cross_grading.py, which needs no overlap), or the next agent, which binds the same interpreter
(the hidden tests, a few bits per file, thousands of files: contracts §9 "state a grading leaves behind",
atk16, which no test pinned). Measured on main (bubblewrap, as root): 15 of
16 16-bit words came through exactly, one with one bit wrong (8 runs); ``mincore`` reads it too, without
disturbing it, where the reader owns the files (a pyenv or venv of the user's own).

Not closed: the page cache is per file, and the files are the machine's (``/usr``, the interpreter, the venv);
closing it needs the sandboxes to read no file another sandbox reads (a private copy of every read-only tree
per attempt, or a VM per attempt). chan29 measured the private copy (contracts §9): on a tmpfs, per grading,
0.28 s for the 670 files a trivial pytest process opens, 2.87 s for the stdlib and the venv's site-packages,
against a 2.3-8.9 s grading of the fixture task; and it would not close this, since ``/usr`` stays shared and
carries the same bits (an 8-bit word through ``/usr/share`` files between two bubblewrap sandboxes). Not built.
xfail(strict=True): it starts passing when a sandbox can no longer read another's leftovers this way.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.testrun import run_tests

#: Sends (``MODE`` "send") or reads (``"recv"``) a word of ``BITS`` bits through the page cache of stdlib
#: files that no test process imports (the last of ``idlelib``'s modules; tests/run/test_cross_grading.py
#: uses the first 34), one file a bit; the reader writes what it read into a failing assertion's message,
#: which the test reads back from the run's log.
CHANNEL = '''
import glob, os

MODE, WORD = __MODE__, __WORD__
STD = os.path.dirname(os.__file__)
FILES = sorted(glob.glob(os.path.join(STD, "idlelib", "*.py")))[-__BITS__:]


def _cached(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)  # once: a miss starts a read-ahead
        return "1"
    except BlockingIOError:
        return "0"
    finally:
        os.close(fd)


def test_channel():
    if MODE == "send":
        for path in FILES:
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        for path, bit in zip(FILES, WORD):
            if bit == "1":
                with open(path, "rb") as fh:
                    fh.read()
    else:
        got = "".join(_cached(p) for p in FILES)
        assert False, "RECEIVED<" + got + ">"
'''


def _run(tmp_path: Path, name: str, mode: str, word: str) -> str:
    work = tmp_path / name / "w"
    (work / "tests").mkdir(parents=True)
    text = CHANNEL.replace("__MODE__", repr(mode)).replace("__WORD__", repr(word)).replace("__BITS__", str(len(word)))
    (work / "tests" / "test_channel.py").write_text(text)
    run = run_tests(work, f"{sys.executable} -m pytest {NO_PLUGINS}", ["tests/test_channel.py"],
                    out_dir=tmp_path / name / "out", sandbox="bwrap", timeout_s=120)
    assert run.finished, run.error
    log = (tmp_path / name / "out" / "tests.log").read_text(errors="replace")
    found = re.findall(r"RECEIVED<([01]+)>", log)
    return found[-1] if found else ""


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="lock28: the page cache of shared read-only files keeps a test process's "
                                       "message for a later sandbox (contracts §9, not closed)")
def test_a_test_process_leaves_nothing_a_later_sandbox_can_read(tmp_path: Path) -> None:
    """Two 16-bit words, each sent by one sandboxed test process that then ends, and read by the next: a
    later sandbox must read noise (16 of the 32 bits right by chance), not the words (here 31 or 32)."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    if len(glob.glob(os.path.join(os.path.dirname(os.__file__), "idlelib", "*.py"))) < 50:
        pytest.skip("the interpreter has no idlelib (a distribution's separate package): no files to signal on")
    got = []
    for n, word in enumerate(("1011001011010010", "0100110100101101")):
        _run(tmp_path, f"send-{n}", "send", word)
        got.append((word, _run(tmp_path, f"recv-{n}", "recv", "0" * len(word))))
    same = sum(a == b for w, g in got for a, b in zip(w, g[:len(w)].ljust(len(w), "?"), strict=True))
    assert same < 28, f"{same} of 32 bits came through: {got}"  # chance: 16 (28 or more: p < 1e-4)
