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

from pytest_homefield.store import JsonlTail, StoreError, append_jsonl, read_jsonl, read_jsonl_lines


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


def test_regular_files_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    append_jsonl(path, {"a": 1})
    assert list(read_jsonl(path)) == [{"a": 1}]
    assert list(JsonlTail(path).new_records()) == [{"a": 1}]
    assert list(read_jsonl(tmp_path / "absent.jsonl")) == []


USER_FILE = '{"run_id": "r", "task_id": "t0", "agent": "a", "attempt": 1, "outcome": "solved"}\n'


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """``runs/r/results.jsonl``, a link to a user's file outside ``.homefield`` holding a forged record."""
    target = tmp_path / "user-file.jsonl"
    target.write_text(USER_FILE)
    path = tmp_path / ".homefield" / "runs" / "r" / "results.jsonl"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    return path, target


def test_a_linked_file_is_never_read(linked: tuple[Path, Path]) -> None:
    """fix45: before, the link was followed: the user's file read as the run's records."""
    path, _ = linked
    for read in (lambda: list(read_jsonl(path)), lambda: list(read_jsonl_lines(path)),
                 lambda: list(JsonlTail(path).new_records())):
        with pytest.raises(StoreError) as err:
            read()
        assert str(err.value) == f"{path}: a symlink, never followed"


def test_a_linked_file_is_never_appended_to(linked: tuple[Path, Path]) -> None:
    """fix45: before, the record was appended to the link's target (a write outside ``.homefield``)."""
    path, target = linked
    with pytest.raises(StoreError, match="a symlink, never followed"):
        append_jsonl(path, {"outcome": "solved"})
    assert target.read_text() == USER_FILE and path.is_symlink()


def test_a_dangling_link_is_never_made_a_file(tmp_path: Path) -> None:
    """fix45: before, ``O_CREAT`` through a dangling link made its target, wherever it pointed."""
    path = tmp_path / "tries.jsonl"
    path.symlink_to(tmp_path / "elsewhere" / ".." / "made.jsonl")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(StoreError, match="a symlink, never followed"):
        append_jsonl(path, {"event": "start"})
    assert not (tmp_path / "made.jsonl").exists()
    assert list(read_jsonl(tmp_path / "absent" / "x.jsonl")) == []


def test_a_linked_homefield_folder_is_used(tmp_path: Path) -> None:
    """The user's link, kept: ``.homefield`` (or a folder in it, such as ``runs``) linked elsewhere; only a link as
    the file's own last component is refused."""
    real = tmp_path / "disk" / "homefield"
    real.mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".homefield").symlink_to(real)
    path = tmp_path / "repo" / ".homefield" / "runs" / "r" / "results.jsonl"
    tail = JsonlTail(path)
    append_jsonl(path, {"a": 1})
    append_jsonl(path, {"a": 2})
    assert list(read_jsonl(path)) == [{"a": 1}, {"a": 2}]
    assert list(tail.new_records()) == [{"a": 1}, {"a": 2}]
    assert (real / "runs" / "r" / "results.jsonl").read_text() == '{"a":1}\n{"a":2}\n'


def test_report_refuses_a_run_whose_results_are_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """fix45, ``homefield report`` (``--resume`` reads the same file): before, a run's ``results.jsonl`` linked to a
    file the graded code wrote was read as the run's records (a forged ``solved``, exit 0). Now one line naming the
    file, exit 2."""
    import json
    import subprocess

    from pytest_homefield.cli import main
    from pytest_homefield.store import write_jsonl_atomic

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run = tmp_path / ".homefield" / "runs" / "r"
    run.mkdir(parents=True)
    (run / "meta.json").write_text(json.dumps({
        "run_id": "r", "created_at": "2026-12-01T10:00:00+00:00", "agents": [{"name": "a", "spec": "a"}],
        "attempts": 1, "task_ids": ["t0"], "cut_short": None}))
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", [])
    forged = tmp_path / "forged.jsonl"
    forged.write_text(USER_FILE)
    (run / "results.jsonl").symlink_to(forged)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "r", "--format", "json"]) == 2
    out, err = capsys.readouterr()
    assert err == f"homefield report: {run / 'results.jsonl'}: a symlink, never followed\n"
    assert "solved" not in out and "Traceback" not in err
    assert forged.read_text() == USER_FILE


def test_a_line_without_end_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """satk60: a JSON-lines file from another machine (a shard's ``results.jsonl`` or probe file given to
    ``--merge`` or ``homefield report RUN…``) of one line with no end was read whole into memory: a sparse file
    costs no disk, and the host's memory went with its size (before: 300 MiB of line, a reader's peak RSS 600+ MiB).
    A line over :data:`~pytest_homefield.store.MAX_LINE_BYTES` is now refused naming the file and line, the reader
    holding at most that much of it; the records before it were read. The peak is the child's own (``VmHWM``:
    ``ru_maxrss`` carries the forking pytest worker's over, 214 and 235 MiB seen in the lead's runs)."""
    import subprocess
    import sys

    path = tmp_path / "results.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"a": 1}\n')
        fh.truncate(1 << 30)  # a sparse line of NUL bytes, no newline: 1 GiB, a whole read's peak 2 GiB+
    code = ("import sys\nfrom pathlib import Path\nfrom pytest_homefield.store import read_jsonl_lines\n"
            "got = []\ntry:\n    for n, r in read_jsonl_lines(Path(sys.argv[1])):\n        got.append(r)\n"
            "except ValueError as exc:\n    print('refused:', exc)\n"
            "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
            "print(got, int(hwm.split()[1]) // 1024)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 2, proc.stdout + proc.stderr
    assert lines[0].startswith(f"refused: {path}: line 2: longer than"), lines
    got, peak_mib = lines[1].rsplit(" ", 1)
    assert got == "[{'a': 1}]" and int(peak_mib) < 300, lines


@pytest.mark.slow
def test_a_record_written_is_a_record_read_back_whatever_its_size(tmp_path: Path) -> None:
    """satk61, big60: the writers wrote a record whose line is over :data:`~pytest_homefield.store.MAX_LINE_BYTES`
    (64 MiB), which every reader since satk60 refuses (before: ``write_jsonl_atomic`` of a task whose ``test_patch``
    held 64 MiB + 1 KiB wrote it, and ``read_jsonl`` then said ``refused: …: line 1: longer than …``: a mined
    ``tasks.jsonl`` unreadable by every command). Now both writers refuse such a record naming the file and the
    record, the file left as it was byte for byte, and a line of exactly the cap is written and read back."""
    import subprocess
    import sys

    # in a process of its own: a 64 MiB record here would raise this process's peak RSS, which a child started
    # later inherits (ru_maxrss), and test_a_line_without_end_is_refused_in_bounded_memory measures its child's
    code = ("import sys\nfrom pathlib import Path\nfrom pytest_homefield.store import MAX_LINE_BYTES, StoreError, "
            "append_jsonl, dumps, read_jsonl, write_jsonl_atomic\npath = Path(sys.argv[1])\n"
            "write_jsonl_atomic(path, [{'id': 't0'}])\nbefore = path.read_bytes()\n"
            "big = {'id': 't1', 'test_patch': '+' + 'x' * (MAX_LINE_BYTES + 1024)}\n"
            "for write in (lambda r: write_jsonl_atomic(path, [{'id': 't0'}, r]), lambda r: append_jsonl(path, r)):\n"
            "    try:\n        write(big)\n        print('written')\n"
            "    except StoreError as exc:\n        print('refused:', str(exc).split(' is ')[0])\n"
            "    print(path.read_bytes() == before)\n"
            "pad = MAX_LINE_BYTES - len(dumps({'id': 't2', 'p': ''}))\n"
            "append_jsonl(path, {'id': 't2', 'p': 'y' * pad})\n"
            "print([r['id'] for r in read_jsonl(path)])\n")
    path = tmp_path / "tasks.jsonl"
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [f"refused: {path}: record 2 (id 't1')", "True",
                                        f"refused: {path}: record (id 't1')", "True", "['t0', 't2']"], proc.stdout


def test_the_writers_cap_is_the_readers_to_the_character(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """big60: a record is written when, and only when, :func:`~pytest_homefield.store.read_jsonl_lines` reads its line
    back: at most :data:`~pytest_homefield.store.MAX_LINE_BYTES` characters, as the reader counts them (non-ASCII
    text is more bytes than characters, and is read back). The cap made 100 here (read at each call, by the reader
    and the writers alike); the full-size case is the slow test above."""
    from pytest_homefield import store
    from pytest_homefield.store import StoreError, append_jsonl, dumps, read_jsonl, write_jsonl_atomic

    monkeypatch.setattr(store, "MAX_LINE_BYTES", 100)
    path = tmp_path / "r.jsonl"
    for fill in ("x", "é", "\u2028"):  # one byte, two, three (a line separator JSON leaves raw: no line end here)
        record = {"id": fill, "p": ""}
        record["p"] = fill * (100 - len(dumps(record)))
        write_jsonl_atomic(path, [record])
        append_jsonl(path, record)
        assert list(read_jsonl(path)) == [record, record], fill
        before = path.read_bytes()
        over = {**record, "p": record["p"] + fill}
        with pytest.raises(StoreError, match=r": record 2 \(id '[^']+'\) is 101 characters as one JSON line, over "):
            write_jsonl_atomic(path, [record, over])
        assert path.read_bytes() == before
        with pytest.raises(StoreError, match=r": record \(id '[^']+'\) is 101 .*: not written, the file is left as"):
            append_jsonl(path, over)
        assert path.read_bytes() == before
