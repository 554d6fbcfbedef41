"""JSON-lines files that survive crashes and concurrent xdist workers (docs/contracts.md §4).

* :func:`append_jsonl` appends one record with a single ``write()`` under an exclusive ``flock``,
  then flushes and fsyncs, so a reader sees whole lines or a torn last line only.
* :func:`read_jsonl` ignores a torn (unparseable) last line.
* :func:`write_atomic` / :func:`write_jsonl_atomic` replace a file through a temp file and
  ``os.replace``.
* :class:`JsonlTail` follows a file that others append to, reading each line once.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["append_jsonl", "read_jsonl", "write_atomic", "write_jsonl_atomic", "dumps", "JsonlTail"]


def dumps(record: Any) -> str:
    """One-line JSON of ``record`` (UTF-8 kept readable, keys in insertion order)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one line to ``path`` atomically with respect to other writers.

    Creates parent folders. A torn line left by a crashed writer is terminated first so that the
    new record starts on its own line.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (dumps(record) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size:
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    data = b"\n" + data
            os.write(fd, data)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON-lines file; a missing file yields nothing.

    Lines that are not valid JSON objects (a torn write from a crash) are skipped.
    """
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                yield rec


class JsonlTail:
    """Follow a JSON-lines file that this and other processes append to (:func:`append_jsonl`):
    each :meth:`new_records` call yields the records appended since the previous call, so a file is
    read once in total instead of once per question. Only whole lines (ending in ``\\n``) are
    consumed; a torn line is left for later and, once :func:`append_jsonl` terminates it, skipped as
    :func:`read_jsonl` skips it. A file that shrank (replaced) is read again from its start."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def new_records(self) -> Iterator[dict[str, Any]]:
        """The records appended since the last call, in file order; nothing for a missing file."""
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return
        with fh:
            size = os.fstat(fh.fileno()).st_size
            if size < self._offset:
                self._offset = 0
            fh.seek(self._offset)
            data = fh.read(size - self._offset)
        end = data.rfind(b"\n") + 1
        self._offset += end
        for line in data[:end].splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(rec, dict):
                yield rec


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) via a temp file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; give the file ordinary permissions
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_jsonl_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write all ``records`` as JSON lines, replacing ``path`` atomically."""
    write_atomic(path, "".join(dumps(r) + "\n" for r in records))
