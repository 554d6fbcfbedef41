"""store.py: JSON-lines appends that survive crashes and concurrent writers; atomic replacement."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from pytest_homefield.store import JsonlTail, append_jsonl, dumps, read_jsonl, write_atomic, write_jsonl_atomic


def test_dumps_is_one_readable_line() -> None:
    assert dumps({"a": "é\nb", "n": 1}) == '{"a":"é\\nb","n":1}'


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


def test_unparseable_blank_and_non_object_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"i":1}\n\n   \nnot json\n[1, 2]\n"text"\n{"i":2}\n', encoding="utf-8")
    assert list(read_jsonl(path)) == [{"i": 1}, {"i": 2}]


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

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk went away"):
        write_jsonl_atomic(path, [{"id": "b"}])
    assert list(read_jsonl(path)) == [{"id": "a"}]
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.jsonl"]


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
