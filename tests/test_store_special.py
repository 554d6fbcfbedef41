"""hatk40: a JSON-lines file of ``.homefield/`` swapped for a fifo (under ``--sandbox none`` graded code runs as the
user and can do it to ``parent-checks.jsonl``, read at every grading, or ``results.jsonl``) is refused at once as
not a regular file. Before: ``read_jsonl`` and :class:`JsonlTail` blocked in ``open`` until a writer came (for ever
in a run: the host stuck), and ``append_jsonl`` wrote the record into the pipe (lost; the next 64 KiB blocked)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_homefield.store import JsonlTail, StoreError, append_jsonl, read_jsonl


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A fifo at ``x.jsonl``, with a writer and a reader that come after 1.5 s so that a blocked call ends."""
    path = tmp_path / "x.jsonl"
    os.mkfifo(path)

    def unblock() -> None:
        time.sleep(1.5)
        with open(path, "wb") as w:
            w.write(b'{"a": 1}\n')

    def drain() -> None:
        time.sleep(1.5)
        with open(path, "rb") as r:
            r.read()

    threads = [threading.Thread(target=f, daemon=True) for f in (unblock, drain)]
    for t in threads:
        t.start()
    yield path
    for t in threads:
        t.join(5)


def _quick(fn: object) -> None:
    start = time.monotonic()
    with pytest.raises(StoreError, match="not a regular file"):
        fn()  # type: ignore[operator]
    assert time.monotonic() - start < 1


def test_reading_a_fifo_is_refused_at_once(fifo: Path) -> None:
    _quick(lambda: list(read_jsonl(fifo)))


def test_following_a_fifo_is_refused_at_once(fifo: Path) -> None:
    _quick(lambda: list(JsonlTail(fifo).new_records()))


def test_appending_to_a_fifo_is_refused(fifo: Path) -> None:
    _quick(lambda: append_jsonl(fifo, {"outcome": "solved"}))


def test_regular_files_and_links_to_them_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    append_jsonl(path, {"a": 1})
    (tmp_path / "link.jsonl").symlink_to(path)
    assert list(read_jsonl(tmp_path / "link.jsonl")) == [{"a": 1}]
    assert list(JsonlTail(path).new_records()) == [{"a": 1}]
    assert list(read_jsonl(tmp_path / "absent.jsonl")) == []
