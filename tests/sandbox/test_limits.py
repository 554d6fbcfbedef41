"""Issue 30, caps on side effects: the workspace check, the disk watch and the capped output file,
as plain objects (sandbox/limits.py, sandbox/streams.py)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox.limits import (
    ENTRY_BYTES,
    MIB,
    AgentFolders,
    Baseline,
    DiskWatch,
    Unwalkable,
    WriteLimits,
    check_folders,
    filled_by,
)
from pytest_homefield.sandbox.streams import CappedSink

SMALL = WriteLimits(output_bytes=4096, file_bytes=MIB, total_bytes=2 * MIB)


def _folders(tmp_path: Path) -> AgentFolders:
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    (ws / "src").mkdir()
    (ws / "src" / "mod.py").write_text("x = 1\n")
    return AgentFolders(ws, tmpdir=tmp, home=home)


def test_a_clean_tree_has_no_fault(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    (folders.workspace / "link").symlink_to("/dev/zero")  # a link is never followed: not a device here
    assert check_folders(folders, SMALL, Baseline.measure(folders, SMALL)) is None


@pytest.mark.parametrize("where", ["workspace", "tmpdir"])
def test_a_named_pipe_is_a_fault_naming_it(tmp_path: Path, where: str) -> None:
    folders = _folders(tmp_path)
    base = folders.workspace / "src" if where == "workspace" else folders.tmpdir
    assert base is not None
    os.mkfifo(base / "pipe")
    fault = check_folders(folders, SMALL)
    assert fault is not None and "named pipe" in fault.reason
    assert fault.reason.count("pipe") == 2 and ("src/pipe" if where == "workspace" else "TMPDIR/pipe") in fault.reason


def test_a_socket_is_a_fault(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    path = folders.workspace / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        fault = check_folders(folders, SMALL)
    assert fault is not None and "socket at s.sock" in fault.reason


def test_a_sparse_gibibyte_counts_by_its_apparent_size_and_is_never_read(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    big = folders.workspace / "big.bin"
    with open(big, "wb") as f:
        f.truncate(1 << 30)
    started = time.monotonic()
    fault = check_folders(folders, WriteLimits())
    assert time.monotonic() - started < 1.0
    assert fault is not None and "big.bin holds 1073741824 bytes, over the 50 MiB per file" in fault.reason


def test_the_total_counts_what_was_added_to_every_folder(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    (folders.workspace / "seed.bin").write_bytes(b"s" * (3 * MIB // 2))
    baseline = Baseline.measure(folders, SMALL)
    # the snapshot's own bytes are not the agent's: a 1.5 MiB file already there is no fault, and
    # the 2 MiB of room come on top of it
    assert check_folders(folders, SMALL, baseline) is None
    assert check_folders(folders, SMALL) is not None
    assert folders.home is not None and folders.tmpdir is not None
    (folders.workspace / "a.bin").write_bytes(b"a" * (MIB - 1))
    (folders.home / "b.bin").write_bytes(b"b" * (MIB - 1))
    assert check_folders(folders, SMALL, baseline) is None
    (folders.tmpdir / "c.bin").write_bytes(b"c" * 4096)
    fault = check_folders(folders, SMALL, baseline)
    assert fault is not None and "over 2 MiB more than the snapshot" in fault.reason
    (folders.tmpdir / "c.bin").unlink()
    (folders.workspace / "seed.bin").write_bytes(b"t" * (3 * MIB // 2))  # the same size, rewritten by the agent
    fault = check_folders(folders, SMALL, baseline)
    assert fault is not None and "seed.bin holds 1572864 bytes" in fault.reason


def test_the_disk_watch_stops_a_writer_over_the_total_and_walks_only_on_growth(tmp_path: Path) -> None:
    folders = _folders(tmp_path)
    watch = DiskWatch(folders, SMALL, Baseline.measure(folders, SMALL))
    assert watch() is None and watch.stopped is None
    with open(folders.workspace / "flood.bin", "wb") as f:
        for _ in range(3):
            f.write(b"z" * MIB)
        f.flush()
        os.fsync(f.fileno())
    reason = watch()
    assert reason is not None and "over 2 MiB" in reason and watch.stopped == reason


def test_empty_folders_and_links_count_toward_the_total(tmp_path: Path) -> None:
    """Attacker8's F2: empty folders (and symlinks) had no ``st_size`` to count, so 70,000 of them filled
    a 400 MB file system under every cap. Each entry now counts at least a block and an inode."""
    folders = _folders(tmp_path)
    baseline = Baseline.measure(folders, SMALL)
    n = SMALL.total_bytes // ENTRY_BYTES // 2
    for k in range(n):  # half the room in folders, half in links: nothing holds a byte of data
        (folders.workspace / f"d{k}").mkdir()
        (folders.workspace / f"l{k}").symlink_to("x" * 200)
    assert check_folders(folders, SMALL, baseline) is None
    (folders.workspace / "one-more").mkdir()
    fault = check_folders(folders, SMALL, baseline)
    assert fault is not None and "over 2 MiB more than the snapshot" in fault.reason


def test_a_full_disk_is_the_agents_fault_only_when_its_folders_filled_it(tmp_path: Path) -> None:
    """When the file system of the attempt runs out of room, the agent is to blame (``agent_error``,
    scored) only if its folders grew by at least half of what the file system lost; a disk that
    another writer filled stays the host's (``infra``)."""
    folders = _folders(tmp_path)
    baseline = Baseline.measure(folders, SMALL)
    with open(folders.workspace / "fill.bin", "wb") as f:
        f.truncate(60 * MIB)  # 60 MiB counted (its apparent size), no disk used by this test
    why = filled_by(folders, baseline, 100 * MIB, MIB)
    assert why is not None and "grew by 60 MiB" in why and "filled the disk" in why
    assert filled_by(folders, baseline, 1000 * MIB, MIB) is None  # 999 MiB lost, 60 of them the agent's
    assert filled_by(folders, baseline, 100 * MIB, 80 * MIB) is None  # not nearly full
    assert filled_by(folders, baseline, None, MIB) is None


def _sink(tmp_path: Path, chunks: list[bytes], cap: int) -> bytes:
    sink = CappedSink(tmp_path / "agent.out", cap)
    for c in chunks:
        sink.write(c)
    sink.close()
    return (tmp_path / "agent.out").read_bytes()


def test_a_stream_under_the_cap_is_written_as_it_came(tmp_path: Path) -> None:
    data = [b"line %d\n" % i for i in range(100)]
    assert _sink(tmp_path, data, 4096) == b"".join(data)


def test_a_stream_over_the_cap_keeps_its_head_a_marker_and_its_last_lines(tmp_path: Path) -> None:
    lines = [b"%06d\n" % i for i in range(20000)] + [b'{"cost_usd": 0.5}\n']
    text = _sink(tmp_path, lines, 4096)
    head = text.split(b"\n", 1)[0]
    marker = text.split(b"[homefield: ")[1].split(b"\n")[0]
    tail = text.rsplit(b"]\n", 1)[1]
    assert head == b"000000"
    assert b"cut here" in marker and b"keeps at most 4096 bytes" in marker
    cut = int(marker.split(b" ")[0])
    marker_line = len(b"[homefield: ") + len(marker) + 2  # the newline before and after
    assert len(text) <= 4096 + marker_line
    assert tail.endswith(b'{"cost_usd": 0.5}\n') and tail.startswith(b"0")  # from a line start
    assert len(text) - marker_line + cut == sum(len(x) for x in lines)


def test_an_unwalkable_folder_is_quoted_whole_when_short_and_cut_with_a_mark_when_long() -> None:
    short, long = Unwalkable("a/b", "why"), Unwalkable("x" * 61, "why")
    assert (short.shown, str(short)) == ("a/b", "why: a/b")  # no "…" after a path quoted whole
    assert long.shown == "x" * 60 + "…" and str(long) == "why: " + long.shown


def test_a_tasks_memory_cap_is_twice_its_peak_at_least_the_floor_never_above_the_ceiling() -> None:
    """mem27 (contracts §7): max(512, 2 × ``verify.peak_mb``) MiB, at most ``max_test_memory_mb``; the ceiling for a
    task without a peak (mined before peaks were kept, no memory cgroup) or with one homefield never writes."""
    from pytest_homefield.sandbox.limits import task_memory_mb

    assert task_memory_mb(100.0, 4096) == 512.0
    assert task_memory_mb(900.5, 4096) == 1801.0
    assert task_memory_mb(3000, 4096) == 4096.0
    assert task_memory_mb(100.0, 300) == 300.0  # the user's ceiling holds, even under the floor
    for odd in (None, 0, -5.0, "100", True):
        assert task_memory_mb(odd, 4096) == 4096  # type: ignore[arg-type]
    assert task_memory_mb(100.0, None) is None  # no cap at all stays none
