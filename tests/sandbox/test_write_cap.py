"""A test run's write cap (``max_test_write_mb``, contracts §7 "Write cap"): its folders (the private one
holding its ``HOME`` and ``TMPDIR``, and its copy without bubblewrap) are watched with the agent's
:class:`~pytest_homefield.sandbox.limits.DiskWatch`; a run that adds more than the cap, or fills their
disk, is stopped and says why (``TestRun.over_writes``). A suite that writes that much for real runs
with the knob raised. (The attacks through a graded attempt: tests/run/test_test_writes.py.)

The runs here are a ``{junit}`` command (a Python script writing ``MiB`` MiB of files into its
``TMPDIR``, then one passing test case): a test process in a few milliseconds of CPU."""

from __future__ import annotations

import contextlib
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.tmpfs import mounted_tmpfs

from pytest_homefield.sandbox.limits import write_cap_note
from pytest_homefield.sandbox.testrun import TestRun, run_tests

SCRIPT = """import os, sys
mb = int(sys.argv[1])
for i in range(mb):
    try:
        with open(os.path.join(os.environ["TMPDIR"], f"blob{i}"), "wb") as f:
            f.write(bytes(1 << 20))
    except OSError as exc:
        print(exc)
        break
with open(sys.argv[2], "w") as f:
    f.write('<testsuite><testcase classname="t" name="test_writes"/></testsuite>')
"""


@pytest.fixture
def stack_tmpfs() -> Iterator[Callable[[Path], Path]]:
    """Mounts a 64 MiB tmpfs at a path for the test (root only: skipped elsewhere)."""
    with contextlib.ExitStack() as stack:
        yield lambda path: stack.enter_context(mounted_tmpfs(path, "64m"))


def writes(tmp_path: Path, mb: int, **kw: object) -> TestRun:
    """A run of :data:`SCRIPT` writing ``mb`` MiB into its ``TMPDIR`` (no sandbox)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "writes.py").write_text(SCRIPT)
    cmd = f"{shlex.quote(sys.executable)} writes.py {mb} {{junit}}"
    return run_tests(work, cmd, [], out_dir=tmp_path / "out", timeout_s=60, sandbox="none", **kw)  # type: ignore[arg-type]


def test_a_suite_writing_past_the_cap_is_stopped_and_the_knob_lets_it_run(tmp_path: Path) -> None:
    over = writes(tmp_path, 6, write_mb=4)
    assert over.over_writes == "the test process wrote over 4 MiB into its folders (max_test_write_mb); stopped"
    assert not over.finished and over.error == over.over_writes
    raised = writes(tmp_path, 6, write_mb=16)
    assert raised.over_writes is None and raised.finished and raised.outcomes == {"t::test_writes": "passed"}


def test_a_run_that_fills_its_disk_is_stopped_as_its_own_doing(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the cap (1024 MiB by default) but on a file system of 80 MiB: the run's folders took what
    the disk lost, so the run filled it (not ``infra``: another writer filling it is not its doing)."""
    disk = mounted_tmpfs(tmp_path / "disk", "80m")
    with disk as root:
        monkeypatch.setattr(tempfile, "tempdir", str(root))  # the run's private folder, HOME and TMPDIR
        r = writes(tmp_path, 100)
    assert r.over_writes is not None and "it filled the disk" in r.over_writes, r
    assert r.over_writes.startswith("the test process's folders grew by "), r


def test_a_suite_making_empty_files_past_the_cap_is_stopped_while_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stack_tmpfs: Callable[[Path], Path]) -> None:
    """atk25: 20,000 empty files (an inode each, next to no bytes; 80 MiB as the walk counts them) grew no used
    byte of their file system (a quiet tmpfs here, that no other writer grows), so the poll never walked the
    run's folders: it ran on (here 30 s more, up to its run timeout for real) while the file system's inodes
    went. The poll counts inodes in use now: stopped at once."""
    import time

    monkeypatch.setattr(tempfile, "tempdir", str(stack_tmpfs(tmp_path / "disk")))
    work = tmp_path / "work"
    work.mkdir()
    (work / "inodes.py").write_text("import os, time\n"
                                    "for d in range(100):\n"
                                    "    os.mkdir(os.path.join(os.environ['TMPDIR'], f'e{d}'))\n"
                                    "    for i in range(200):\n"
                                    "        open(os.path.join(os.environ['TMPDIR'], f'e{d}', str(i)), 'w').close()\n"
                                    "time.sleep(30)\n")
    started = time.monotonic()
    r = run_tests(work, f"{shlex.quote(sys.executable)} inodes.py {{junit}}", [], out_dir=tmp_path / "out",
                  timeout_s=60, sandbox="none", write_mb=4)
    assert r.over_writes == "the test process wrote over 4 MiB into its folders (max_test_write_mb); stopped", r
    assert time.monotonic() - started < 20


def test_a_suite_leaving_folders_nested_past_pythons_recursion_is_stopped_and_cleaned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """atk25: graded code left 3,000 nested folders in its ``TMPDIR`` (its private folder): removing it raised
    ``RecursionError`` out of ``run_tests`` (``shutil.rmtree`` recurses once a level), so its grading raised
    instead of failing. Now the watch stops it (a folder too deep to walk) and the folder is removed."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the run's private folder, HOME and TMPDIR
    work = tmp_path / "work"
    work.mkdir()
    (work / "deep.py").write_text("import os\nos.chdir(os.environ['TMPDIR'])\n"
                                  "for i in range(3000):\n    os.mkdir('a'); os.chdir('a')\n")
    r = run_tests(work, f"{shlex.quote(sys.executable)} deep.py {{junit}}", [], out_dir=tmp_path / "out",
                  timeout_s=60, sandbox="none")
    assert r.over_writes is not None and "cannot walk" in r.over_writes, r
    assert list((tmp_path / "tmp").iterdir()) == [], "the private folder was left"


def test_the_note_names_the_cap_only_for_a_capped_run_whose_write_was_refused() -> None:
    assert write_cap_note(b"OSError: [Errno 27] File too large\n", 1024) == (
        "a test process wrote a file up to the cap of 1024 MiB per file (max_test_write_mb)")
    assert write_cap_note(b"OSError: [Errno 28] No space left on device\n", 4) == (
        "a test process ran out of room (its sandbox's /tmp and /dev/shm hold 4 MiB each; or its disk is full) "
        "(max_test_write_mb)")
    assert write_cap_note(b"OSError: [Errno 27] File too large\n", None) is None
    assert write_cap_note(b"1 failed\n", 4) is None
