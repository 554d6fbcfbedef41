"""An agent's stdout and stderr through pipes, each written to a file with a cap (docs/contracts.md §9).

:class:`Pump` is one thread that reads both pipes of a command started by
:func:`pytest_homefield.sandbox.procs.run_process` and hands the bytes to a :class:`CappedSink` per
stream: the command never holds a host file (``readlink /proc/self/fd/1`` is a pipe), and a flood
of output costs the run folder at most the cap plus a marker line per stream.
"""

from __future__ import annotations

import os
import selectors
import threading
from pathlib import Path
from typing import Any

from pytest_homefield.spelling import spell
from pytest_homefield.store import open_own_file

__all__ = ["TAIL_KEEP", "CappedSink", "Pump"]


#: Bytes of a capped stream's end kept after the cut (at most half the cap): the usage line a
#: ``cmd:`` agent prints last, claude's ``result`` line.
TAIL_KEEP = 256 * 1024


class CappedSink:
    """A file written from a pipe with at most ``cap`` bytes of the stream: the first
    ``cap - keep`` bytes as they come, and at the end, when more came, a marker line naming the
    bytes cut followed by the last ``keep`` bytes from their first line start (``keep`` =
    min(:data:`TAIL_KEEP`, cap / 2)). The file never exceeds ``cap`` plus the marker line. A write
    error (a full disk) stops the writing; the rest counts as cut. ``append``: the file is opened for
    appending (``O_APPEND``: what others append to it meanwhile is kept, and not counted); ``why``: the
    setting named at the end of the marker line. The file is opened without following a link as its last
    component and must be a regular file (:func:`~pytest_homefield.store.open_own_file`: link46; raises
    :class:`~pytest_homefield.store.NotOwnFile`), so output never lands in a file another program linked there."""

    def __init__(self, path: Path, cap: int, name: str | None = None, *, append: bool = False,
                 why: str = spell("max-output-mb", "cli")) -> None:
        self.path, self.cap, self.name, self.why = path, max(int(cap), 0), name or path.name, why
        self.keep = min(TAIL_KEEP, self.cap // 2)
        self._head_left = self.cap - self.keep
        self._tail = bytearray()
        self.cut = 0
        self._file: Any = open_own_file(path, "ab" if append else "wb", buffering=0)  # never through a link

    def write(self, data: bytes) -> None:
        """Take the next ``data`` of the stream."""
        if self._head_left > 0 and self._file is not None:
            n = min(len(data), self._head_left)
            self._head_left -= n
            self._put(data[:n])
            data = data[n:]
        if not data:
            return
        self._tail += data
        extra = len(self._tail) - self.keep
        if extra > 0:
            self.cut += extra
            del self._tail[:extra]

    def _put(self, data: bytes) -> None:
        try:
            self._file.write(data)
        except (OSError, ValueError):  # ENOSPC, …: keep reading the pipe, write nothing more
            self._file = None

    def close(self) -> None:
        """Write the marker and the tail (when the stream was cut) and close the file."""
        if self._file is None:
            return
        tail = bytes(self._tail)
        if self.cut:
            nl = tail.find(b"\n")
            if 0 <= nl < len(tail) - 1:
                self.cut += nl + 1
                tail = tail[nl + 1:]
            self._put(f"\n[homefield: {self.cut} bytes of {self.name} cut here; it keeps at most {self.cap} bytes "
                      f"({self.why})]\n".encode())
        if tail and self._file is not None:
            self._put(tail)
        if self._file is not None:
            self._file.close()
        self._file = None


class Pump:
    """One thread reading a command's stdout and stderr pipes into :class:`CappedSink` files (or
    draining them when no file was asked for)."""

    def __init__(self, sinks: list[CappedSink | None], read_ends: list[int], write_ends: list[int]) -> None:
        self.sinks, self.read_ends, self.write_ends = sinks, read_ends, write_ends
        self._thread = threading.Thread(target=self._run, name="hf-agent-output", daemon=True)
        self._stop = threading.Event()
        self._done = False

    @classmethod
    def open(cls, stdout_path: Path | None, stderr_path: Path | None, cap: int) -> Pump:
        sinks: list[CappedSink | None] = []
        reads: list[int] = []
        writes: list[int] = []
        try:
            for path in (stdout_path, stderr_path):
                sinks.append(CappedSink(path, cap) if path is not None else None)
                r, w = os.pipe()
                reads.append(r)
                writes.append(w)
        except BaseException:  # a refused file (a link: link46): nothing left open
            for sink in sinks:
                if sink is not None:
                    sink.close()
            for fd in reads + writes:
                os.close(fd)
            raise
        return cls(sinks, reads, writes)

    def start(self) -> None:
        for w in self.write_ends:  # the command holds the only write ends now: EOF when it is gone
            os.close(w)
        self.write_ends = []
        self._thread.start()

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for fd, sink in zip(self.read_ends, self.sinks, strict=True):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, sink)
        live = len(self.read_ends)
        while live and not self._stop.is_set():
            for key, _ in sel.select(timeout=0.2):
                try:
                    data = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(key.fd)
                    live -= 1
                elif key.data is not None:
                    key.data.write(data)
        sel.close()

    def finish(self, wait_s: float = 5.0) -> int:
        """Wait for the end of both streams (at most ``wait_s`` s: the reaper has killed every writer),
        close everything; the bytes cut. Safe to call twice."""
        if not self._done:
            self._done = True
            if self._thread.is_alive():
                self._thread.join(wait_s)
                self._stop.set()
                self._thread.join()
            self.close()
        return sum(s.cut for s in self.sinks if s is not None)

    def close(self) -> None:
        for fd in self.read_ends + self.write_ends:
            try:
                os.close(fd)
            except OSError:
                pass
        self.read_ends, self.write_ends = [], []
        for sink in self.sinks:
            if sink is not None:
                sink.close()
