"""store.py: JSON-lines appends that survive crashes and concurrent writers; atomic replacement."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest
from helpers.tmpfs import mounted_tmpfs

from pytest_homefield import store
from pytest_homefield.store import (
    JsonlTail,
    RecordError,
    StoreError,
    append_jsonl,
    dumps,
    read_jsonl,
    read_jsonl_lines,
    write_atomic,
    write_jsonl_atomic,
)


def test_dumps_is_one_readable_line() -> None:
    assert dumps({"a": "é\nb", "n": 1}) == '{"a":"é\\nb","n":1}'


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_record_json_cannot_hold_is_refused_and_the_file_kept(tmp_path: Path, number: float) -> None:
    """atk9 F6, measured on main: ``{"cost_usd": Infinity}`` was appended as it was, a line other JSON
    readers refuse."""
    path = tmp_path / "results.jsonl"
    append_jsonl(path, {"i": 1})
    with pytest.raises(StoreError, match=r"results\.jsonl: a record holds a number JSON cannot hold"):
        append_jsonl(path, {"cost_usd": number})
    with pytest.raises(StoreError):
        write_jsonl_atomic(tmp_path / "w.jsonl", [{"cost_usd": number}])
    assert path.read_text() == '{"i":1}\n' and not (tmp_path / "w.jsonl").exists()


def test_append_creates_parents_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "r1" / "results.jsonl"
    append_jsonl(path, {"i": 1})
    append_jsonl(path, {"i": 2, "s": "ü"})
    assert path.read_text(encoding="utf-8") == '{"i":1}\n{"i":2,"s":"ü"}\n'
    assert list(read_jsonl(path)) == [{"i": 1}, {"i": 2, "s": "ü"}]


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert list(read_jsonl(tmp_path / "absent.jsonl")) == []


def test_torn_last_line_is_skipped_and_terminated_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"i":1}\n{"i":2,"trunc', encoding="utf-8")  # a writer died mid-line
    assert list(read_jsonl(path)) == [{"i": 1}]
    append_jsonl(path, {"i": 3})
    assert path.read_text(encoding="utf-8") == '{"i":1}\n{"i":2,"trunc\n{"i":3}\n'
    assert list(read_jsonl(path)) == [{"i": 1}, {"i": 3}]


def test_unparseable_and_blank_lines_are_skipped_a_non_object_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"i":1}\n\n   \nnot json\n{"i":2}\n', encoding="utf-8")
    assert list(read_jsonl(path)) == [{"i": 1}, {"i": 2}]
    path.write_text('{"i":1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"line 2: a record must be a JSON object, got list$"):
        list(read_jsonl(path))


def _writer(path: str, worker: int, n: int) -> None:
    pad = "x" * 20_000  # far above PIPE_BUF: a non-atomic append would interleave
    for i in range(n):
        append_jsonl(Path(path), {"worker": worker, "i": i, "pad": pad})


def test_concurrent_appends_from_processes_keep_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 25)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 100
    records = [json.loads(line) for line in lines]  # every line parses: no torn or interleaved write
    for w in range(4):
        assert [r["i"] for r in records if r["worker"] == w] == list(range(25))


def test_write_atomic_replaces_with_ordinary_permissions(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "meta.json"
    write_atomic(path, "one")
    write_atomic(path, "two ü")
    assert path.read_text(encoding="utf-8") == "two ü"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in path.parent.iterdir()] == ["meta.json"]  # no temp file left


def test_failed_replace_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tasks.jsonl"
    write_jsonl_atomic(path, [{"id": "a"}])

    def broken_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk went away"):
        write_jsonl_atomic(path, [{"id": "b"}])
    assert list(read_jsonl(path)) == [{"id": "a"}]
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.jsonl"]


@pytest.mark.parametrize("below", [False, True], ids=["by-path", "below"])
def test_a_ctrl_c_mid_write_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            below: bool) -> None:
    """r39 review: ``write_atomic(…, below=…)`` removed its temp file on ``OSError`` only, so a Ctrl-C between the
    temp file's write and its rename left ``.tasks.jsonl.<hex>.tmp`` behind (by path it was removed)."""
    path = tmp_path / "sub" / "tasks.jsonl"
    write_atomic(path, "old\n", below=tmp_path if below else None)

    def interrupted(fd: int) -> None:  # the Ctrl-C comes while the data is synced
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(path, "new\n", below=tmp_path if below else None)
    monkeypatch.undo()
    assert path.read_text() == "old\n" and [p.name for p in path.parent.iterdir()] == ["tasks.jsonl"]


def test_write_jsonl_atomic_writes_every_record(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_jsonl_atomic(path, iter([{"a": 1}, {"b": [1, 2]}]))
    assert path.read_text(encoding="utf-8") == '{"a":1}\n{"b":[1,2]}\n'
    write_jsonl_atomic(path, [])
    assert path.read_text(encoding="utf-8") == ""


# -- following a file others append to ----------------------------------------------------------


def test_tail_yields_each_record_once_in_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = JsonlTail(path)
    assert list(tail.new_records()) == []  # missing file
    append_jsonl(path, {"n": 1})
    append_jsonl(path, {"n": 2})
    assert list(tail.new_records()) == [{"n": 1}, {"n": 2}]
    assert list(tail.new_records()) == []
    append_jsonl(path, {"n": 3})  # another writer, later
    assert list(tail.new_records()) == [{"n": 3}]


def test_tail_waits_for_a_whole_line_and_skips_a_torn_one(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = JsonlTail(path)
    with open(path, "wb") as fh:
        fh.write(b'{"n": 1}\n{"n": 2')  # a writer mid-line (or crashed)
    assert list(tail.new_records()) == [{"n": 1}]
    append_jsonl(path, {"n": 3})  # terminates the torn line first
    assert list(tail.new_records()) == [{"n": 3}]


def test_tail_rereads_a_replaced_shorter_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = JsonlTail(path)
    for n in range(3):
        append_jsonl(path, {"n": n})
    assert len(list(tail.new_records())) == 3
    path.write_text('{"n": 9}\n')
    assert list(tail.new_records()) == [{"n": 9}]


def test_tail_names_file_and_line_of_a_record_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    tail = JsonlTail(path)
    path.write_text('{"n": 1}\n{"torn": \n')
    assert list(tail.new_records()) == [{"n": 1}]  # a torn line is skipped, as read_jsonl skips it
    with open(path, "a") as fh:
        fh.write("[1, 2]\n")
    with pytest.raises(RecordError) as err:
        list(tail.new_records())
    assert str(err.value) == f"{path}: line 3: a record must be a JSON object, got list"


# --- whole or nothing on a short write or a full disk (issue 21) ---

def test_short_write_truncates_back_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.jsonl"
    append_jsonl(path, {"a": 1})
    before = path.read_bytes()
    real_write = os.write

    def short(fd: int, data: bytes) -> int:  # what a nearly full disk does: part of the buffer
        return real_write(fd, data[: len(data) // 2])

    monkeypatch.setattr(store.os, "write", short)
    with pytest.raises(StoreError) as err:
        append_jsonl(path, {"b": "x" * 5000})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert str(err.value) == (f"{path}: cannot append a record: short write (2504 of 5009 bytes) "
                              "(the file is left as it was)")
    append_jsonl(path, {"c": 3})  # the next append starts on a clean line
    assert list(read_jsonl(path)) == [{"a": 1}, {"c": 3}]


def test_enospc_on_write_truncates_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"a":1}\n{"torn":')  # a torn tail from an old crash, then the disk is full
    before = path.read_bytes()

    def full(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.os, "write", full)
    with pytest.raises(StoreError,
                       match=r"cannot append a record: No space left on device \(the file is left as it was\)$"):
        append_jsonl(path, {"b": 2})
    monkeypatch.undo()
    assert path.read_bytes() == before


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Path:
    """A real 64 KiB tmpfs (root only); unmounted afterwards."""
    with mounted_tmpfs(tmp_path / "tiny", "64k") as mnt:
        yield mnt


def test_a_really_full_filesystem_loses_nothing(tiny_fs: Path) -> None:
    path = tiny_fs / "results.jsonl"
    record = {"key": "v" * 3000}
    written = 0
    # the kernel writes what fits (a short write), then refuses (ENOSPC): both leave the file whole
    with pytest.raises(StoreError, match=r"cannot append a record: (short write|No space left on device)"):
        for _ in range(100):
            append_jsonl(path, record)
            written += 1
    assert 0 < written < 100
    recs = list(read_jsonl_lines(path, strict=True))  # every line whole: nothing torn
    assert len(recs) == written and all(r == record for _, r in recs)
    assert path.read_bytes().endswith(b"\n")
    (tiny_fs / "filler").unlink(missing_ok=True)
    with pytest.raises(StoreError, match=r"cannot write: No space left on device"):
        write_atomic(tiny_fs / "meta.json", "x" * 200_000)
    assert not [p for p in tiny_fs.iterdir() if p.name.startswith(".meta.json")]  # no temp file left


def test_strict_reading_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2\n')
    assert [r for _, r in read_jsonl_lines(path)] == [{"a": 1}]  # torn: skipped when not strict
    with pytest.raises(RecordError) as err:
        list(read_jsonl_lines(path, strict=True))
    assert str(err.value) == f"{path}: line 3: not valid JSON (truncated or garbage)"
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(RecordError) as err:
        list(read_jsonl(path))
    assert str(err.value) == f"{path}: line 2: a record must be a JSON object, got list"
