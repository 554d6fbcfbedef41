"""fix44: a session reads ``.homefield/parent-checks.jsonl`` at its start (:func:`twin_grading.read_checks`, hatk41).
Under ``--sandbox none`` graded code runs as the user and can make it a link (to a fifo, to a file it wrote, to a
special file whose read waits). The store is read without following a link as its last component (a linked
``.homefield`` folder is read), regular files only, never blocking, to the size it had when opened; a store refused is
read as empty and the session says so in one line. Before: a link was followed (its target's lines were taken) and
the descriptor was switched back to blocking reads; a refused store was read as empty in silence."""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from helpers.attack_repo import Fixture, task_for

from pytest_homefield.agents.reference import NoopAgent
from pytest_homefield.layout import HomefieldDir
from pytest_homefield.run import twin_grading
from pytest_homefield.run.session import RunSession, select_tasks
from pytest_homefield.sandbox import phases
from pytest_homefield.settings import Settings
from pytest_homefield.store import StoreError, append_jsonl, read_jsonl_tail, write_jsonl_atomic

HONEST = {"key": "k", "reference_passes": ["twin-1"]}


@pytest.fixture
def deadline() -> Iterator[None]:
    """A hang fails the test in 20 s instead of holding the suite (SIGALRM raises in the main thread)."""
    def fire(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("blocked: the store's read did not return")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def writer_fifo(tmp_path: Path) -> Iterator[Path]:
    """A fifo with a writer that opens it (and keeps it open, writing a line then nothing) after 0.5 s: a reader that
    follows a link to it and reads blocking waits for ever."""
    path = tmp_path / "elsewhere" / "pipe"
    path.parent.mkdir()
    os.mkfifo(path)
    stop = threading.Event()

    def write() -> None:
        fd = os.open(path, os.O_WRONLY)  # waits for a reader (none when the store is refused: unblocked below)
        try:
            os.write(fd, b'{"key": "k", "reference_passes": ["forged"]}\n')
            stop.wait(30)
        except OSError:  # the reader gone (EPIPE)
            pass
        finally:
            os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    yield path
    stop.set()
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # for the writer still waiting in open, until it ends
    try:
        thread.join(5)
        assert not thread.is_alive()
    finally:
        os.close(reader)


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "repo" / ".homefield" / "parent-checks.jsonl"
    store.parent.mkdir(parents=True, exist_ok=True)
    return store


def _said(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("homefield: ")]


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "link-to-file"])
def test_a_store_not_a_regular_file_of_its_own_is_read_as_empty_in_one_line(
        kind: str, tmp_path: Path, writer_fifo: Path, deadline: None, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path)
    if kind == "fifo":
        os.mkfifo(store)
    elif kind == "link-to-fifo":
        store.symlink_to(writer_fifo)
    else:
        target = tmp_path / "elsewhere" / "forged.jsonl"
        append_jsonl(target, {"key": "k", "reference_passes": ["forged"]})
        store.symlink_to(target)
    try:
        twin_grading.read_checks(store)
        assert twin_grading.checks_read(store) == []
        assert twin_grading._stored_passes(store, "k") is None
    finally:
        twin_grading.forget_checks(store)
    said = _said(capsys.readouterr().err)
    assert len(said) == 1, said
    assert str(store) in said[0] and "its checks are made again" in said[0]
    assert ("symlink" in said[0]) == kind.startswith("link"), said[0]


def test_a_regular_store_in_a_linked_homefield_folder_is_read(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    real = tmp_path / "kept" / ".homefield"
    real.mkdir(parents=True)
    append_jsonl(real / "parent-checks.jsonl", HONEST)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".homefield").symlink_to(real)
    store = tmp_path / "repo" / ".homefield" / "parent-checks.jsonl"
    assert read_jsonl_tail(store, 1 << 20) == [HONEST]
    try:
        twin_grading.read_checks(store)
        assert twin_grading._stored_passes(store, "k") == frozenset({"twin-1"})
    finally:
        twin_grading.forget_checks(store)
    assert _said(capsys.readouterr().err) == []


def test_the_tail_is_read_to_the_size_it_had_when_opened(tmp_path: Path) -> None:
    """Bounded by the file's size: a cut first line is left out, a missing file is empty, a link is refused."""
    store = _store(tmp_path)
    for i in range(40):
        append_jsonl(store, {"key": f"k{i}", "reference_passes": []})
    size = store.stat().st_size
    whole = read_jsonl_tail(store, size)
    assert [r["key"] for r in whole] == [f"k{i}" for i in range(40)]
    tail = read_jsonl_tail(store, size // 2)
    assert tail == whole[-len(tail):] and 0 < len(tail) < 40
    assert read_jsonl_tail(store.with_name("absent.jsonl"), 100) == []
    store.with_name("link.jsonl").symlink_to(store)
    with pytest.raises(StoreError, match="symlink"):
        read_jsonl_tail(store.with_name("link.jsonl"), 100)


def test_a_session_whose_store_links_to_a_fifo_starts_and_says_one_line(
        fx: Fixture, tmp_path: Path, writer_fifo: Path, deadline: None, capsys: pytest.CaptureFixture[str]) -> None:
    """The session's start (its cache made before the first attempt reads the store) returns; one line says why the
    store was read as empty."""
    task = task_for(fx)
    root = tmp_path / "repo"
    shutil.copytree(fx.root, root, symlinks=True)
    write_jsonl_atomic(HomefieldDir(root).tasks, [task.to_dict()])
    store = HomefieldDir(root).parent_checks
    store.unlink(missing_ok=True)
    store.symlink_to(writer_fifo)
    s = Settings(root=root, agents=["noop"], attempts=1, sandbox="none")
    lines: list[str] = []
    phases.set_notice(lines.append, "homefield run")  # as the plugin does: the terminal, past pytest's capture
    session = RunSession.start(s, select_tasks(s), [NoopAgent(name="noop", spec="noop")],
                               now="2026-03-01T10:00:00+00:00")
    try:
        session.runner.cache  # noqa: B018 - made for its side effect: the store read
        assert twin_grading.checks_read(store) == []
    finally:
        phases.set_notice(None)
        session.close()
        session.release()
    said = [line for line in _said("\n".join(lines)) if "parent-checks.jsonl" in line]
    assert len(said) == 1 and "symlink" in said[0], said
    assert _said(capsys.readouterr().err) == []  # said once, there
