"""JSON-lines files that survive crashes and concurrent xdist workers (docs/contracts.md §4).

* :func:`append_jsonl` appends one record with a single ``write()`` under an exclusive ``flock``,
  then flushes and fsyncs, so a reader sees whole lines or a torn last line only. A short write or
  a failed write/fsync (a full disk: ``ENOSPC``) truncates the file back to its size before the
  append and raises :class:`StoreError`: the file is left exactly as it was.
* :func:`read_jsonl` skips a torn (unparseable) line; :func:`read_jsonl_lines` gives line numbers
  and, with ``strict=True``, raises :class:`RecordError` naming the file and line of any line that
  is not a JSON object.
* :func:`write_atomic` / :func:`write_jsonl_atomic` replace a file through a temp file and
  ``os.replace``.
* :class:`JsonlTail` follows a file that others append to, reading each line once.
* Every reader and writer here opens the file without following a link as its last component and refuses
  anything but a regular file (:class:`StoreError`, one line); the folders above may be links.
* :class:`FolderLock` is an exclusive ``flock`` on a session folder's ``.lock``: a second session on
  the same run (or mine, or ablation) folder is refused with :class:`FolderLocked`.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import socket
import stat
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from pytest_homefield.errors import RecordError, StoreError
from pytest_homefield.pins import folder_below, open_in_pinned

__all__ = ["StoreError", "RecordError", "NotOwnFile", "open_own", "open_own_file", "own_text", "append_jsonl",
           "lock_holder", "read_jsonl", "read_jsonl_lines", "read_jsonl_tail", "write_atomic", "write_jsonl_atomic",
           "dumps", "record_line", "JsonlTail", "FolderLock", "FolderLocked", "LOCK_FILE", "MAX_LINE_BYTES"]

#: The longest line :func:`read_jsonl_lines` reads (characters, the line end aside; its UTF-8 bytes are at least as
#: many): a line without end from another machine's file (a shard given to ``--merge``, a run folder given to
#: ``homefield report``) is refused with this much of it in memory. The writers (:func:`append_jsonl`,
#: :func:`write_jsonl_atomic`) refuse a longer record by the same count (:func:`record_line`), so every line written
#: is read back (big60: a task whose test patch held a 65 MiB text fixture was written, then no command could read
#: ``tasks.jsonl``); mining sets such a candidate aside first, ``too_large`` (docs/contracts.md §7).
MAX_LINE_BYTES = 64 << 20


def dumps(record: Any) -> str:
    """One-line JSON of ``record`` (UTF-8 kept readable, keys in insertion order). Raises
    :class:`StoreError` for a number JSON has no spelling for (``NaN``, ``Infinity``: Python's own
    extension, which other readers refuse) instead of writing it."""
    try:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:
        raise StoreError(f"a record holds a number JSON cannot hold ({exc}); not written") from None


#: The fields that name a record in :func:`record_line`'s refusal, the first one it has.
_NAMING_FIELDS = ("id", "task_id", "commit", "kind", "event")


def record_line(record: Any, path: Path | str, *, index: int | None = None) -> str:
    """:func:`dumps` of ``record`` when :func:`read_jsonl_lines` reads that line back: at most
    :data:`MAX_LINE_BYTES` characters (the reader's count). Raises :class:`StoreError` naming ``path`` and the record
    (its ``id``, ``task_id``, ``commit``, ``kind`` or ``event``, and ``index``, its place among the records written
    together, from 1) for a longer one (``"<path>: record 2 (id '0123abcd4567') is 67,109,999 characters as one
    JSON line, over the 67,108,864 a line may hold (store.MAX_LINE_BYTES): not written, the file is left as it
    was"``) and for a record :func:`dumps` refuses."""
    try:
        line = dumps(record)
    except StoreError as exc:
        raise StoreError(f"{path}: {exc}") from None
    if len(line) <= MAX_LINE_BYTES:
        return line
    named = next((f"{k} {str(record[k])[:40]!r}" for k in _NAMING_FIELDS
                  if isinstance(record, dict) and isinstance(record.get(k), (str, int))), "")
    what = " ".join(filter(None, ["record" if index is None else f"record {index}", named and f"({named})"]))
    raise StoreError(f"{path}: {what} is {len(line):,} characters as one JSON line, over the {MAX_LINE_BYTES:,} a "
                     "line may hold (store.MAX_LINE_BYTES): not written, the file is left as it was")


class NotOwnFile(OSError):
    """The entry where homefield keeps one of its own files is not one: a symlink as the last component (``errno``
    ``ELOOP``, ``strerror`` ``"a symlink, never followed"``) or not a regular file (``EINVAL``, ``"not a regular
    file"``: a fifo, socket, device or folder); ``filename``: the path, and ``str()`` is one line,
    ``"<path>: <strerror>"``."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename is not None else str(self.strerror)


def open_own(path: Path | str, flags: int, mode: int = 0o644, *, blocking: bool = True) -> int:
    """``os.open`` of ``path``, a file homefield writes itself (in ``.homefield/``, a run's or an attempt's folder),
    that never blocks on a fifo, never opens a fifo, socket or device and never follows a link as the last
    component (the folders above may be links: a linked ``.homefield`` folder is used; below a folder pinned by
    :func:`~pytest_homefield.pins.pinned`, an attempt's, no folder on the way from the pin is followed
    either, link48): the descriptor of a regular file, close-on-exec. With ``O_CREAT`` a dangling link is refused,
    never made a file (so an append or a write never lands outside the folder: fix45, link46). The descriptor is
    switched to blocking reads and writes unless ``blocking=False`` (then a read that would wait raises
    ``BlockingIOError``). This is the one opener of
    homefield's own files: :func:`_open_regular` (this module's readers and appenders), ``layout.read_own_file``,
    the agent's and services' output files and the proxy's log. Raises ``FileNotFoundError``, :class:`NotOwnFile`
    (a link, not a regular file; hatk40: under ``--sandbox none`` graded code swapped ``.homefield/`` files for
    fifos, and the host blocked in ``open``), ``OSError``."""
    how = flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = open_in_pinned(path, how, mode)  # below a pinned folder (an attempt's): no link on the way (link48)
        if fd is None:
            fd = os.open(path, how, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotOwnFile(errno.ELOOP, "a symlink, never followed", str(path)) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotOwnFile(errno.EINVAL, "not a regular file", str(path))
        if blocking:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


_MODES = {"rb": os.O_RDONLY, "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND}


def open_own_file(path: Path | str, mode: str, *, buffering: int = -1) -> BinaryIO:
    """A binary file object of :func:`open_own` (``mode``: ``"rb"``, ``"wb"``: created or emptied, ``"ab"``: created
    or appended to, ``O_APPEND``), for a file homefield writes in a folder another program can write in too (an
    attempt's ``agent.out``, ``proxy.log``, a service's log, a test run's log: link46; before, ``open(path, "ab")``
    followed a link graded code put there under ``--sandbox none`` and wrote homefield's output into the file it
    named). Raises ``FileNotFoundError``, :class:`NotOwnFile`, ``OSError``."""
    fd = open_own(path, _MODES[mode])
    try:
        return cast(BinaryIO, os.fdopen(fd, mode, buffering=buffering))
    except BaseException:
        os.close(fd)
        raise


def own_text(path: Path | str) -> str:
    """The text of the file ``path`` read by :func:`open_own_file` (undecodable bytes replaced): an agent's output
    file read back (``agent.out``, a client's log), never through a link put in its place, never a fifo or device
    (link46). Raises ``FileNotFoundError``, :class:`NotOwnFile`, ``OSError``."""
    with open_own_file(path, "rb") as f:
        return f.read().decode(errors="replace")


def _open_regular(path: Path, flags: int, mode: int = 0o644, *, blocking: bool = True) -> int:
    """:func:`open_own` with its refusal as :class:`StoreError` naming the file (``"<path>: a symlink, never
    followed"``, ``"<path>: not a regular file"``): every file of this module is one homefield writes itself, so
    none is a link of the user's (fix45: under ``--sandbox none`` graded code could link a run's ``results.jsonl``
    to another file: its lines were read as the run's records and homefield's were appended there, outside
    ``.homefield``). Raises ``FileNotFoundError``, :class:`StoreError`, ``OSError``."""
    try:
        return open_own(path, flags, mode, blocking=blocking)
    except NotOwnFile as exc:
        raise StoreError(f"{path}: {exc.strerror}") from None


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one line to ``path`` atomically with respect to other writers.

    Creates parent folders. A torn line left by a crashed writer is terminated first so that the
    new record starts on its own line. Raises :class:`StoreError` when the line cannot be written
    whole (full disk, I/O error): the file is then truncated back to its size before the call; and,
    the file untouched, for a record :func:`dumps` refuses (``NaN``, ``Infinity``) or whose line is longer than
    any reader reads (:func:`record_line`: over :data:`MAX_LINE_BYTES`).
    """
    data = (record_line(record, path) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    except StoreError:
        raise
    except OSError as exc:
        raise StoreError(f"{path}: cannot open for appending: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size:
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    data = b"\n" + data
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(28, f"short write ({written} of {len(data)} bytes)")
                os.fsync(fd)
            except OSError as exc:
                try:
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                except OSError:
                    pass
                raise StoreError(f"{path}: cannot append a record: {exc.strerror or exc} "
                                 "(the file is left as it was)") from None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def read_jsonl_lines(path: Path, *, strict: bool = False) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number from 1, record)`` for each JSON-object line of ``path``; a missing file
    yields nothing; blank lines are skipped.

    ``strict=False``: a line that is not valid JSON (a torn write) is skipped; a valid JSON line that
    is not an object raises :class:`RecordError`. ``strict=True``: any line that is not a JSON object
    raises :class:`RecordError` (``"<path>: line N: …"``). Either way a line over :data:`MAX_LINE_BYTES`
    raises :class:`RecordError` once that much of it is read (satk60: a sparse shard file of one line without
    end was read whole, the host's memory with it).
    """
    try:
        fh = os.fdopen(_open_regular(path, os.O_RDONLY), encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return
    except StoreError:
        raise
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with fh:
        n = 0
        while line := fh.readline(MAX_LINE_BYTES + 1):
            n += 1
            if len(line) > MAX_LINE_BYTES and not line.endswith("\n"):
                raise RecordError(f"{path}: line {n}: longer than {MAX_LINE_BYTES} bytes, not a record")
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                if not strict:
                    continue
                raise RecordError(f"{path}: line {n}: not valid JSON (truncated or garbage)") from None
            if not isinstance(rec, dict):
                raise RecordError(f"{path}: line {n}: a record must be a JSON object, got "
                                 f"{type(rec).__name__}")
            yield n, rec


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the records of a JSON-lines file; a missing file yields nothing.

    Lines that are not valid JSON (a torn write from a crash) are skipped; a JSON line that is not
    an object raises :class:`RecordError`.
    """
    for _, rec in read_jsonl_lines(path):
        yield rec


def read_jsonl_tail(path: Path, max_bytes: int) -> list[dict[str, Any]]:
    """The JSON-object lines of the last ``max_bytes`` bytes of ``path`` (read whole when it is no larger; else a
    line cut by that start is left out), in file order: a bounded read, in memory at most ``max_bytes`` bytes
    whatever the file holds. ``path`` is a file homefield writes (``.homefield/parent-checks.jsonl``): opened without
    following a link as its last component (a linked ``.homefield`` folder is read), regular files only, never
    blocking (fix44: a link to a fifo or to a special file that waits could hold the host at a session's start), and
    read to the size it had when opened, no further. A missing file gives ``[]``; a line that is not valid JSON or
    not an object is skipped. Raises :class:`StoreError` (a link, not a regular file, unreadable, a read that would
    wait)."""
    try:
        fd = _open_regular(path, os.O_RDONLY, blocking=False)
    except FileNotFoundError:
        return []
    except StoreError:
        raise
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - max_bytes)
        if start:
            os.lseek(fd, start - 1, os.SEEK_SET)  # whether the byte before the start ends a line: the first is whole
        want = size - start + (1 if start else 0)
        chunks: list[bytes] = []
        while want > 0 and (chunk := os.read(fd, min(1 << 20, want))):
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks)
    except BlockingIOError:
        raise StoreError(f"{path}: cannot read: a read that would wait") from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # up to the first newline: the rest of a cut line (empty when the start was a line's)
    out: list[dict[str, Any]] = []
    for line in lines:
        if line.strip():
            try:
                rec = json.loads(line.decode("utf-8", "surrogateescape"))
            except ValueError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
    return out


class JsonlTail:
    """Follow a JSON-lines file that this and other processes append to (:func:`append_jsonl`):
    each :meth:`new_records` call yields the records appended since the previous call, so a file is
    read once in total instead of once per question. Only whole lines (ending in ``\\n``) are
    consumed; a torn line is left for later and, once :func:`append_jsonl` terminates it, skipped as
    :func:`read_jsonl` skips it; a valid JSON line that is not an object raises :class:`RecordError`
    (``"<path>: line N: …"``), as :func:`read_jsonl` does. A file that shrank (replaced) is read
    again from its start."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._line = 0

    def new_records(self) -> Iterator[dict[str, Any]]:
        """The records appended since the last call, in file order; nothing for a missing file."""
        try:
            fh = os.fdopen(_open_regular(self.path, os.O_RDONLY), "rb")
        except FileNotFoundError:
            return
        except StoreError:
            raise
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read: {exc.strerror or exc}") from None
        with fh:
            size = os.fstat(fh.fileno()).st_size
            if size < self._offset:
                self._offset = self._line = 0
            fh.seek(self._offset)
            data = fh.read(size - self._offset)
        end = data.rfind(b"\n") + 1
        self._offset += end
        for line in data[:end].split(b"\n")[:-1]:
            self._line += 1
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line.decode("utf-8"))
            except ValueError:  # UnicodeDecodeError, json.JSONDecodeError: a torn write
                continue
            if not isinstance(rec, dict):
                raise RecordError(f"{self.path}: line {self._line}: a record must be a JSON object, got "
                                  f"{type(rec).__name__}")
            yield rec


def write_atomic(path: Path, text: str, *, below: Path | None = None) -> None:
    """Replace ``path`` with ``text`` (UTF-8) via a temp file in the same folder and ``os.replace``
    (:func:`_replace_in`). ``below``: a folder above ``path`` (``.homefield/``) from which the folders down to
    ``path``'s are made and entered without following a link (:func:`~pytest_homefield.pins.folder_below`; link52: a
    worker's artifact written on the controller); ``None``: by path. Raises :class:`StoreError` (``path``
    unchanged) when it cannot be written (``…: a symlink on the way, never followed``)."""
    try:
        if below is not None:
            below.mkdir(parents=True, exist_ok=True)  # .homefield/ itself as given (a link to it is used)
            fd = folder_below(below, path.parent, create=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        link = below is not None and exc.errno in (errno.ELOOP, errno.ENOTDIR)
        why = "a symlink on the way, never followed" if link else exc.strerror
        raise StoreError(f"{path}: cannot write: {why or exc}") from None
    try:
        _replace_in(fd, path, text.encode("utf-8"))
    finally:
        os.close(fd)


def _replace_in(fd: int, path: Path, data: bytes) -> None:
    """Replace the entry ``path.name`` of the folder ``fd`` (``path``'s, open) with ``data``: a new temp file beside
    it (``O_EXCL | O_NOFOLLOW``, mode 0o666 & ~umask), written, synced and renamed over it. The temp file is removed
    on any exception (a Ctrl-C's ``KeyboardInterrupt`` too), which is raised again; an ``OSError`` as
    :class:`StoreError` (``<path>: cannot write: … (the file is left as it was)``)."""
    tmp = f".{path.name[:40]}.{os.urandom(6).hex()}.tmp"
    try:
        f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(f, view):]
            os.fsync(f)
        finally:
            os.close(f)
        os.replace(tmp, path.name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException as exc:
        try:
            os.unlink(tmp, dir_fd=fd)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, StoreError):
            raise StoreError(f"{path}: cannot write: {exc.strerror or exc} (the file is left as it was)") from None
        raise


def write_jsonl_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write all ``records`` as JSON lines, replacing ``path`` atomically. Raises :class:`StoreError`, ``path`` left
    as it was, for a record whose line no reader would read back (:func:`record_line`: over
    :data:`MAX_LINE_BYTES`; big60) or that :func:`dumps` refuses, and when the file cannot be written."""
    write_atomic(path, "".join(record_line(r, path, index=i) + "\n" for i, r in enumerate(records, 1)))


#: The lock file of a session folder (``.homefield/runs/<id>/.lock``, …): left in place, never deleted.
LOCK_FILE = ".lock"


class FolderLocked(StoreError):
    """Another live process holds a session folder's lock; ``str(err)`` is one line naming its pid,
    host and start time."""


class _Held:
    """One open lock file of this process and how many :class:`FolderLock` objects share it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.count = 0


#: The locks this process holds, by the lock file's real path (a second session of the same process,
#: as in-process tests make, shares the first one's lock instead of refusing itself).
_held: dict[str, _Held] = {}


def _drop(key: str) -> None:
    held = _held.get(key)
    if held is None:
        return
    held.count -= 1
    if held.count <= 0:
        del _held[key]
        os.close(held.fd)  # closing the only descriptor releases the flock


class FolderLock:
    """An exclusive ``flock`` on ``<folder>/.lock``, held for a session by the process that runs it (the
    controller; xdist workers take none). The kernel releases it when the process dies, so a crashed
    session never needs manual cleanup. The file holds who took it, one JSON line
    ``{"pid": int, "host": str, "since": ISO 8601 UTC}``; it is opened with ``O_NOFOLLOW`` and
    ``O_CLOEXEC`` (no program the session starts inherits the lock).

    :meth:`take` creates the folder when missing. :meth:`release` (or the object's collection) lets it
    go; the same process may take one folder's lock more than once (they share it)."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self._release = weakref.finalize(self, _drop, key)

    @classmethod
    def take(cls, folder: Path, what: str) -> FolderLock:
        """Lock ``folder`` for a session of ``what`` (``"run r1"``, for the message). Raises
        :class:`FolderLocked` (one line: ``pytest-homefield: <what> is in use by pid N on HOST since
        T``) when another process holds it, :class:`StoreError` when the lock file cannot be opened."""
        path = folder / LOCK_FILE
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the lock file: {exc.strerror or exc}") from None
        key = os.path.realpath(path)
        held = _held.get(key)
        if held is not None:
            os.close(fd)
            held.count += 1
            return cls(path, key)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # BlockingIOError: another process holds it
            holder = _holder(fd)
            os.close(fd)
            raise FolderLocked(f"pytest-homefield: {what} is in use by {holder} ({path}): wait for that "
                               "session to end, or stop it") from None
        since = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        data = (dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since}) + "\n").encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
        except OSError:
            pass  # the lock holds without its note (a full disk); the message then says less
        held = _held[key] = _Held(fd)
        held.count = 1
        return cls(path, key)

    def release(self) -> None:
        """Let the lock go (once; later calls do nothing)."""
        self._release()


def _holder(fd: int) -> str:
    """``pid N on HOST since T`` from a lock file's note, or ``another process`` when it has none."""
    try:
        note = json.loads(os.pread(fd, 4096, 0).decode("utf-8", errors="replace") or "null")
    except (OSError, ValueError):
        note = None
    if not isinstance(note, dict) or not isinstance(note.get("pid"), int):
        return "another process"
    return f"pid {note['pid']} on {note.get('host') or '?'} since {note.get('since') or '?'}"


def lock_holder(folder: Path) -> str | None:
    """Who holds ``<folder>/.lock`` (:class:`FolderLock`) now: ``pid N on HOST since T`` (or ``another
    process``, ``this process``), ``None`` when nobody does or there is no lock file: a session in
    progress, for ``homefield status`` and the report's choice of run.

    Read-only: on Linux it looks the file's inode up in ``/proc/locks`` (so a session taking the lock
    at that moment never meets a probe); elsewhere it tries a shared lock without waiting and lets it
    go at once. Never raises."""
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if os.path.realpath(path) in _held:
            return "this process"
        st = os.fstat(fd)
        try:
            with open("/proc/locks", encoding="ascii", errors="replace") as f:
                table = f.read()
        except OSError:
            table = None
        if table is not None:
            key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
            held = any("FLOCK" in line and key in line.split() for line in table.splitlines())
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                held = False
            except OSError:
                held = True
        return _holder(fd) if held else None
    finally:
        os.close(fd)  # also lets go of a probe's shared lock
