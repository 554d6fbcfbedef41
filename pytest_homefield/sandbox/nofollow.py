"""Host-side file work inside a folder an agent controlled, never following the agent's links (issue 30).

After an agent ran, its workspace is the agent's: any folder in it may have become a symlink to a
host folder (the user's repository, ``$HOME``), between two of our calls too. A path such as
``workspace / "docs/CLAUDE.md"`` then reads, writes or deletes a file outside the workspace. Every
function here takes the trusted ``root`` (a folder homefield made) and a relative path inside it,
and reaches the entry one component at a time from a folder file descriptor: each folder opened
with ``O_DIRECTORY | O_NOFOLLOW`` relative to the one before (``dir_fd``), the last component with
``O_NOFOLLOW`` (or ``lstat``, ``readlink``, ``unlink`` relative to its folder's descriptor). A symlink
anywhere on the way is never followed: :class:`LinkInTheWay` is raised instead (a symlink as the last
component is read as a link, never through). So nothing outside ``root`` is read, written or
deleted, whatever the agent swaps in meanwhile (the descriptor pins the folder already reached).

Writes replace the directory entry (a temp file in the same folder, then ``rename`` relative to
the folder's descriptor), so they never write through a link or a second hard link either. Files
that are not regular (fifo, socket, device) are never opened for reading (``O_NONBLOCK`` plus an
``fstat`` check), so a named pipe cannot block the host.

Removing a whole tree homefield made that an agent or graded code wrote in (a workspace, its temp
folder, a snapshot cache, a test run's private folder) is :func:`remove_tree`: by descriptor too, and
with one descriptor and no recursion however deep the folders go (``shutil.rmtree`` recurses once a
level, and 3,000 nested folders made it raise ``RecursionError``, which its ``ignore_errors`` does not
catch: atk25). An agent's folders get :func:`restore_access` first, once its
processes are gone: the owner's permissions it took away (``chmod 000``) are given back, so that the
host can read, count, grade and remove what it left.

Linux semantics (``O_NOFOLLOW`` on the last component makes ``open`` fail with ``ELOOP``; on an
intermediate component ``O_NOFOLLOW | O_DIRECTORY`` fails with ``ELOOP`` or ``ENOTDIR``): POSIX.1-2008
``openat(2)``; Python exposes it as ``os.open(name, flags, dir_fd=fd)``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pytest_homefield.pins import descend, folder_fd

__all__ = ["LinkInTheWay", "Entry", "rel_parts", "still_at", "opened_dir", "open_folder", "lstat", "kind_at",
           "read_bytes", "read_tail", "read_link", "write_in_place",
           "write_bytes", "make_dirs", "remove", "remove_tree", "rmdir", "walk", "same_entry", "copy_entry",
           "EntryCopier", "copy_tree", "copy_trees", "restore_access", "MAX_DEPTH"]

#: Folders nested deeper than this are refused (each level holds one descriptor while it is walked).
MAX_DEPTH = 256
#: The order in which :func:`copy_trees` makes an entry in its destinations (seeded from the OS).
_RANDOM = random.SystemRandom()

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class LinkInTheWay(OSError):
    """A component of a path below ``root`` is a symlink (or not a folder): the path was not followed."""


@dataclass(frozen=True)
class Entry:
    """One entry of a tree: ``kind`` ``"file"`` (regular), ``"link"`` (symlink, never followed),
    ``"other"`` (fifo, socket, device, or a folder nested deeper than :data:`MAX_DEPTH`) or ``"dir"``
    (only from :func:`walk` with ``dirs=True``); ``mode`` the
    ``st_mode`` of ``lstat``; ``size`` in bytes."""

    kind: str
    mode: int
    size: int


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"


def rel_parts(rel: str | PurePosixPath) -> tuple[str, ...]:
    """The components of ``rel`` (POSIX, relative). Raises ``ValueError`` for an absolute path, a
    ``..`` component, or an empty one."""
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts:
        raise ValueError(f"path {str(rel)!r} must be relative and stay inside its folder")
    return tuple(part for part in p.parts if part != ".")


def _open_root(root: Path | str) -> int:
    # the root is homefield's own folder; its last component must not be a link either; at or below a pinned folder
    # (pins.pinned: an attempt's) it is reached from the pin's descriptor (link48)
    try:
        fd = folder_fd(root)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkInTheWay(exc.errno, f"not a folder (a symlink is never followed): {root}") from None
        raise
    return os.open(os.fspath(root), _DIR_FLAGS) if fd is None else fd


def still_at(root: Path | str, rel: str | PurePosixPath, fd: int) -> bool:
    """Whether ``root/rel``, reached one component at a time without following a link (and never through a pin), is
    still the folder ``fd`` holds (same device and inode): ``False`` when a component of it was swapped for a link,
    another folder or removed since ``fd`` was opened."""
    try:
        sub = os.open(os.fspath(root), _DIR_FLAGS)
        for name in rel_parts(rel):
            nxt = _open_sub(sub, name, name)
            os.close(sub)
            sub = nxt
    except OSError:
        return False
    try:
        a, b = os.fstat(sub), os.fstat(fd)
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    finally:
        os.close(sub)


def _open_sub(fd: int, name: str, rel: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LinkInTheWay(exc.errno, f"not a folder (a symlink is never followed): {rel}") from None
        raise


@contextmanager
def opened_dir(root: Path | str, rel: str | PurePosixPath = "", *, create: bool = False,
               made: list[str] | None = None) -> Iterator[int]:
    """A descriptor of the folder ``root/rel``, reached one component at a time without following
    a symlink; closed on exit. ``create``: make missing folders (mode 0o777 & ~umask), appending each
    one made to ``made`` (relative POSIX paths, outermost first). Raises :class:`LinkInTheWay` when a
    component is a symlink or not a folder, ``FileNotFoundError`` when one is missing (without
    ``create``)."""
    fd = _open_dir(root, rel, create=create, made=made)
    try:
        yield fd
    finally:
        os.close(fd)


def open_folder(root: Path | str, rel: str | PurePosixPath = "") -> int:
    """The descriptor of :func:`opened_dir` (without ``create``), for the caller to close (or to hand to
    :func:`pinned`). Raises as :func:`opened_dir`."""
    return _open_dir(root, rel)


def _open_dir(root: Path | str, rel: str | PurePosixPath = "", *, create: bool = False,
              made: list[str] | None = None) -> int:
    """:func:`opened_dir`'s descriptor, for the caller to close."""
    return descend(_open_root(root), rel_parts(rel), create=create, made=made, enter=_open_sub)


def _split(rel: str | PurePosixPath) -> tuple[str, str]:
    parts = rel_parts(rel)
    if not parts:
        raise ValueError("an entry's path cannot be empty")
    return "/".join(parts[:-1]), parts[-1]


def lstat(root: Path | str, rel: str | PurePosixPath) -> os.stat_result | None:
    """``lstat`` of ``root/rel`` (a symlink as itself), or ``None`` when it is absent or a component
    on the way is a symlink or not a folder (then nothing is there as far as ``root`` goes)."""
    folder, name = _split(rel)
    try:
        with opened_dir(root, folder) as fd:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, LinkInTheWay):
        return None


def kind_at(root: Path | str, rel: str | PurePosixPath) -> str | None:
    """``file``, ``link``, ``dir`` or ``other`` of the entry ``root/rel`` (:func:`lstat`: a symlink as itself);
    ``None`` when it is absent or behind a link."""
    st = lstat(root, rel)
    return None if st is None else _kind(st.st_mode)


def _open_file(fd: int, name: str, rel: str) -> int:
    """A read descriptor of the regular file ``name`` in folder ``fd``; ``OSError`` otherwise."""
    try:
        f = os.open(name, _READ_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LinkInTheWay(exc.errno, f"a symlink, not a file: {rel}") from None
        raise
    mode = os.fstat(f).st_mode
    if not stat.S_ISREG(mode):
        os.close(f)
        raise OSError(errno.EINVAL, f"not a regular file ({_kind(mode)}): {rel}")
    os.set_blocking(f, True)
    return f


def _read_all(f: int, limit: int | None) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(f, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if limit is not None and total > limit:
            raise OSError(errno.EFBIG, f"file larger than {limit} bytes")
        chunks.append(chunk)


def read_bytes(root: Path | str, rel: str | PurePosixPath, *, limit: int | None = None) -> bytes:
    """The content of the regular file ``root/rel``. Raises :class:`LinkInTheWay` (a symlink on the
    way or as the file), ``FileNotFoundError``, ``OSError`` (``EINVAL``: not a regular file; ``EFBIG``:
    over ``limit`` bytes)."""
    folder, name = _split(rel)
    with opened_dir(root, folder) as fd:
        f = _open_file(fd, name, str(rel))
        try:
            return _read_all(f, limit)
        finally:
            os.close(f)


def read_tail(path: Path | str, max_bytes: int) -> bytes:
    """The last ``max_bytes`` bytes of the regular file ``path``, whose folder is homefield's own but
    whose entry a sandboxed process could replace (a test run's log in its read-write output
    folder): a symlink there is refused (:class:`LinkInTheWay`), a fifo or device is never opened for
    reading (``OSError`` ``EINVAL``), so it cannot lead the host to another file or block it."""
    p = Path(path)
    with opened_dir(p.parent) as fd:
        f = _open_file(fd, p.name, p.name)
        try:
            size = os.fstat(f).st_size
            if size > max_bytes:
                os.lseek(f, size - max_bytes, os.SEEK_SET)
            return _read_all(f, max_bytes)
        finally:
            os.close(f)


def read_link(root: Path | str, rel: str | PurePosixPath) -> str:
    """The target of the symlink ``root/rel`` (text, surrogate escapes kept). Raises
    :class:`LinkInTheWay`, ``FileNotFoundError``, ``OSError`` (``EINVAL``: not a symlink)."""
    folder, name = _split(rel)
    with opened_dir(root, folder) as fd:
        return os.readlink(name, dir_fd=fd)


def _replace_at(fd: int, name: str, data: bytes, mode: int, sync: bool = False) -> None:
    tmp = f".{name[:40]}.hf-{os.getpid()}-{os.urandom(4).hex()}.tmp"
    f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(f, view):]
            os.fchmod(f, stat.S_IMODE(mode))
            if sync:
                os.fsync(f)
        finally:
            os.close(f)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=fd)
        except OSError:
            pass
        raise


def write_bytes(root: Path | str, rel: str | PurePosixPath, data: bytes, *, mode: int = 0o644,
                make_parents: bool = False, sync: bool = False) -> list[str]:
    """Make ``root/rel`` a regular file holding ``data`` with permission bits ``mode``: written to a
    temp file in its folder and renamed over the entry (a symlink or hard link there is replaced,
    never written through). ``make_parents``: create missing folders. ``sync``: the data is on disk
    (``fsync``) before the rename. Returns the folders made
    (relative, outermost first). Raises :class:`LinkInTheWay`, ``FileNotFoundError`` (a missing
    folder without ``make_parents``), ``IsADirectoryError`` when ``rel`` is a folder."""
    folder, name = _split(rel)
    made: list[str] = []
    with opened_dir(root, folder, create=make_parents, made=made) as fd:
        _replace_at(fd, name, data, mode, sync)
    return made


def write_in_place(root: Path | str, rel: str | PurePosixPath, data: bytes, *,
                   times_ns: tuple[int, int] | None = None) -> None:
    """Write ``data`` into the regular file ``root/rel`` in place (``O_TRUNC``: its inode kept; made with mode
    0o666 & ~umask when absent), its folder reached one component at a time without following a link, the file
    itself ``O_NOFOLLOW`` (link52: a fresh copy of a grading tree holds the links graded code left there, and a
    write by path went through them). Only for a file no other path names (a copy's own file, made by
    :func:`copy_trees`: one link to its inode). ``times_ns``: ``(atime, mtime)`` set on it after the write.
    Raises :class:`LinkInTheWay` (a symlink on the way or as the file), ``FileNotFoundError`` (a missing folder),
    ``OSError`` (``EINVAL``: not a regular file, nothing written)."""
    folder, name = _split(rel)
    with opened_dir(root, folder) as fd:
        try:
            f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666,
                        dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LinkInTheWay(exc.errno, f"a symlink, never followed: {rel}") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(f).st_mode):
                raise OSError(errno.EINVAL, f"not a regular file: {rel}")
            os.ftruncate(f, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(f, view):]
            if times_ns is not None:
                os.utime(f, ns=times_ns)
        finally:
            os.close(f)


def make_dirs(root: Path | str, rel: str | PurePosixPath) -> list[str]:
    """Create the folder ``root/rel`` and its missing parents; returns those made (outermost first).
    Raises :class:`LinkInTheWay`."""
    made: list[str] = []
    with opened_dir(root, rel, create=True, made=made):
        pass
    return made


def _rmtree_at(parent: int, name: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise OSError(errno.ELOOP, f"folders nested deeper than {MAX_DEPTH}")
    fd = _open_sub(parent, name, name)
    try:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        for child, is_dir in entries:
            if is_dir:
                _rmtree_at(fd, child, depth + 1)
            else:
                os.unlink(child, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _remove_at(fd: int, name: str) -> bool:
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        _rmtree_at(fd, name)
    else:
        os.unlink(name, dir_fd=fd)
    return True


def remove(root: Path | str, rel: str | PurePosixPath) -> bool:
    """Remove the entry ``root/rel``: a file or symlink (the link itself), or a folder with
    everything in it (walked by descriptors, links inside removed as links). Returns whether
    something was removed: ``False`` when it is absent or a component on the way is a symlink or
    not a folder (nothing there as far as ``root`` goes)."""
    folder, name = _split(rel)
    try:
        with opened_dir(root, folder) as fd:
            return _remove_at(fd, name)
    except (FileNotFoundError, LinkInTheWay):
        return False


def remove_tree(path: Path | str) -> None:
    """Remove the folder ``path`` and everything in it, as ``shutil.rmtree(path, ignore_errors=True)`` does
    (an entry that cannot be removed is left, nothing raised; ``path`` left as it is when it is a link), but
    holding one folder descriptor at a time and no recursion, so that any depth is removed: it goes down
    through the first subfolder of each folder (``O_DIRECTORY | O_NOFOLLOW``, relative to the one before),
    removes the files and links of each folder it enters, and comes back up through ``..`` to remove it.
    For a tree no process writes any more (an agent's, after its reaper reaped every process of it): ``..``
    is then the folder it came down from. A folder it cannot enter, even after giving the owner's access
    back, is left with what holds it."""
    try:
        fd = _open_root(path)
    except OSError:  # absent, or a link or a file where the folder was: left, as rmtree leaves it
        return
    names: list[str] = []  # the folders it went down through, from path
    levels = [_clear_files(fd)]  # per level: the subfolders still to remove
    try:
        while True:
            if levels[-1]:
                child = _enter(fd, levels[-1][-1])
                if child is None:
                    levels[-1].pop()
                    continue
                os.close(fd)
                fd = child
                names.append(levels[-1].pop())
                levels.append(_clear_files(fd))
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            levels.pop()
            with contextlib.suppress(OSError):
                os.rmdir(names.pop(), dir_fd=fd)
    except OSError:  # ``..`` could not be opened: what is left stays
        pass
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _enter(fd: int, name: str) -> int | None:
    """A descriptor of the subfolder ``name`` of ``fd`` (its owner's access given back when it lacked it), else
    ``None``."""
    if os.geteuid() != 0:  # a folder without the owner's write access keeps its entries
        _give_back(fd, name, True)
    for _ in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            if not _give_back(fd, name, True):
                return None
    return None


def _clear_files(fd: int) -> list[str]:
    """Unlink every entry of folder ``fd`` that is not a folder (links as links); its subfolders."""
    try:
        with os.scandir(fd) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError:
        return []
    for name, is_dir in entries:
        if not is_dir:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=fd)
    return [name for name, is_dir in entries if is_dir]


def rmdir(root: Path | str, rel: str | PurePosixPath) -> bool:
    """Remove the empty folder ``root/rel`` (never a link's target). Returns ``False`` when it is
    absent, not an empty folder, or not reachable without following a link."""
    folder, name = _split(rel)
    try:
        with opened_dir(root, folder) as fd:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                return False
            os.rmdir(name, dir_fd=fd)
            return True
    except OSError:
        return False


def walk(root: Path | str, *, skip_dir: Callable[[str], bool] = lambda name: False,
         skip: Callable[[str], bool] = lambda name: False, dirs: bool = False) -> dict[str, Entry]:
    """Every entry under ``root`` that is not a folder, by relative POSIX path, in no set order:
    files, symlinks (never followed: a link to a folder is one entry) and other kinds. Folders
    are walked by descriptor; a folder whose name ``skip_dir`` accepts is not entered, an entry whose
    name ``skip`` accepts is left out. A folder nested deeper than :data:`MAX_DEPTH` is not entered
    either: it is one entry of kind ``"other"``. ``dirs``: each folder entered is listed too, as an
    entry of kind ``"dir"`` (size 0). Raises what ``open``/``scandir`` raise on ``root``."""
    out: dict[str, Entry] = {}
    fd = _open_root(root)
    try:
        _walk_at(fd, "", skip_dir, skip, out, 0, dirs)
    finally:
        os.close(fd)
    return out


def _walk_at(fd: int, prefix: str, skip_dir: Callable[[str], bool], skip: Callable[[str], bool],
             out: dict[str, Entry], depth: int, dirs: bool = False) -> None:
    for name, st in sorted(_listing(fd)):
        rel = f"{prefix}{name}"
        kind = _kind(st.st_mode)
        if kind == "dir":
            if skip_dir(name):
                continue
            if depth >= MAX_DEPTH:  # not entered: listed as one entry of its own kind
                out[rel] = Entry("other", st.st_mode, st.st_size)
                continue
            try:
                sub = _open_sub(fd, name, rel)
            except (LinkInTheWay, FileNotFoundError):
                # swapped for a link (or removed) since the listing: never followed; listed as it is now
                now = _lstat_at(fd, name)
                if now is not None and _kind(now.st_mode) != "dir" and not skip(name):
                    out[rel] = Entry(_kind(now.st_mode), now.st_mode, now.st_size)
                continue
            if dirs:
                out[rel] = Entry("dir", st.st_mode, 0)
            try:
                _walk_at(sub, f"{rel}/", skip_dir, skip, out, depth + 1, dirs)
            finally:
                os.close(sub)
        elif not skip(name):
            out[rel] = Entry(kind, st.st_mode, st.st_size)


def _lstat_at(fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


#: The owner's permissions :func:`restore_access` gives back: read, write and search on a folder, read on a file.
_DIR_ACCESS, _FILE_ACCESS = 0o700, 0o400
_O_PATH = getattr(os, "O_PATH", 0)


def restore_access(root: Path | str, *, files: bool = True) -> list[str]:
    """Give the owner back read, write and search (``u+rwx``) on every folder and read (``u+r``) on every
    regular file under ``root`` (and on ``root``) that lacks them; other bits are kept. Returns the relative
    paths changed (``"."`` for ``root``), in no set order.

    For an agent's folders after its processes are gone, before anything reads them: a folder it made
    unreadable (``chmod 000``, or write-only ``chmod 300``) was skipped by the disk watch (anything written
    into it went uncounted, past ``--max-workspace-mb``), made grading raise (``PermissionError``: ``infra``,
    never scored) and was left in the temp folder by ``shutil.rmtree`` (atk19, as a user other than root).
    Each entry is reached by descriptor: ``O_PATH | O_NOFOLLOW`` pins it (a symlink is never followed, its
    mode never changed) and the mode is set through ``/proc/self/fd``; a folder is entered after its mode is
    given back, no deeper than :data:`MAX_DEPTH`. Entries of another owner, and any that cannot be changed,
    are left as they are. ``files=False``: folders only (what a walk needs to see every entry). Raises
    nothing for an entry; ``OSError`` when ``root`` itself cannot be opened."""
    changed: list[str] = []
    if _give_back(None, os.fspath(root), True):
        changed.append(".")

    def give_back(at: int, name: str, rel: str, st: os.stat_result) -> None:
        if stat.S_ISDIR(st.st_mode):  # the listing's lstat chooses; _give_back checks the entry it pinned
            if st.st_mode & _DIR_ACCESS != _DIR_ACCESS and _give_back(at, name, True):
                changed.append(rel)
        elif files and stat.S_ISREG(st.st_mode) and not st.st_mode & _FILE_ACCESS and _give_back(at, name, False):
            changed.append(rel)

    fd = _open_root(root)
    try:
        _each_at(fd, "", 0, give_back)
    finally:
        os.close(fd)
    return changed


def _give_back(dir_fd: int | None, name: str, is_dir: bool) -> bool:
    """Add the owner's access to the folder (``is_dir``) or regular file ``name`` (relative to ``dir_fd``)
    when it lacks it; whether it was changed. Never follows a link (``O_PATH | O_NOFOLLOW``)."""
    want = _DIR_ACCESS if is_dir else _FILE_ACCESS
    if not _O_PATH:  # not Linux: no descriptor that pins an entry without opening it
        return False
    try:
        fd = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        kind_ok = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode)
        if not kind_ok or st.st_uid != os.geteuid() or st.st_mode & want == want:
            return False
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) | want)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _each_at(fd: int, prefix: str, depth: int, act: Callable[[int, str, str, os.stat_result], None]) -> None:
    """``act(fd, name, rel, st)`` for each entry of folder ``fd`` (``st``: its listing's lstat, ``rel``: ``prefix``
    and its name), a folder's before the walk enters it: with ``O_NOFOLLOW`` from ``fd`` (one swapped for a link
    since the listing is not entered), no deeper than :data:`MAX_DEPTH`. A folder that cannot be listed (a non-root
    host: the tests' chmod 000) or entered is passed over, its siblings still walked; ``act`` raises nothing."""
    try:
        listing = _listing(fd)
    except OSError:
        return
    for name, st in listing:
        rel = f"{prefix}{name}"
        act(fd, name, rel, st)
        if not stat.S_ISDIR(st.st_mode) or depth >= MAX_DEPTH:
            continue
        try:
            sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:  # swapped for a link (ELOOP/ENOTDIR) or removed since the listing: not entered
            continue
        try:
            _each_at(sub, rel + "/", depth + 1, act)
        finally:
            os.close(sub)


def restamp(root: Path | str) -> None:
    """Set the change time of every entry under ``root`` (and of ``root``) to now, keeping its access and
    modification times. Each entry is reached by descriptor: stamped through its folder's (``utimensat`` with
    ``AT_SYMLINK_NOFOLLOW``: a link itself, never its target), a folder entered with ``O_NOFOLLOW`` from its
    parent's (one swapped for a link since the listing is not entered), no deeper than :data:`MAX_DEPTH` (link52:
    by path, a folder swapped for a link between a walk's listing and the stamps had the link's target's files
    stamped, their change times moved). Raises nothing for an entry; ``OSError`` when ``root`` cannot be opened."""
    fd = _open_root(root)
    try:
        st = os.fstat(fd)
        os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
        _each_at(fd, "", 0, _stamp)
    finally:
        os.close(fd)


def _stamp(fd: int, name: str, rel: str, st: os.stat_result) -> None:
    """:func:`restamp`'s act on the entry ``name`` of folder ``fd`` (``st``: its lstat): its change time now."""
    with contextlib.suppress(OSError):
        os.utime(name, ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=fd, follow_symlinks=False)


def _listing(fd: int) -> list[tuple[str, os.stat_result]]:
    """``(name, lstat)`` of each entry of folder ``fd`` (one removed meanwhile left out)."""
    out: list[tuple[str, os.stat_result]] = []
    with os.scandir(fd) as it:
        for e in it:
            try:
                out.append((e.name, e.stat(follow_symlinks=False)))
            except FileNotFoundError:
                continue
    return out


def _chunks(f: int) -> Iterator[bytes]:
    while True:
        chunk = os.read(f, _CHUNK)
        if not chunk:
            return
        yield chunk


def same_entry(a_root: Path | str, b_root: Path | str, rel: str | PurePosixPath, *, mode: bool = True) -> bool:
    """Whether ``rel`` is the same entry under both roots: symlinks with the same target, or regular
    files with the same owner-execute bit (``mode`` ``False``: whatever it is) and content (compared in 1 MiB chunks,
    sizes first). Anything else (absent, a link on the way, another kind, a fifo) is not the same."""
    folder, name = _split(rel)
    try:
        with opened_dir(a_root, folder) as da, opened_dir(b_root, folder) as db:
            sa = os.stat(name, dir_fd=da, follow_symlinks=False)
            sb = os.stat(name, dir_fd=db, follow_symlinks=False)
            kind = _kind(sa.st_mode)
            if kind != _kind(sb.st_mode):
                return False
            if kind == "link":
                return os.readlink(name, dir_fd=da) == os.readlink(name, dir_fd=db)
            if kind != "file" or mode and (sa.st_mode & stat.S_IXUSR) != (sb.st_mode & stat.S_IXUSR) \
                    or sa.st_size != sb.st_size:
                return False
            fa = _open_file(da, name, str(rel))
            try:
                fb = _open_file(db, name, str(rel))
                try:
                    while True:
                        x, y = _read_exact(fa, _CHUNK), _read_exact(fb, _CHUNK)
                        if x != y:
                            return False
                        if not x:
                            return True
                finally:
                    os.close(fb)
            finally:
                os.close(fa)
    except OSError:  # absent, a link on the way, swapped meanwhile: not the same
        return False


def _read_exact(f: int, n: int) -> bytes:
    """``n`` bytes from ``f``, fewer only at its end."""
    parts: list[bytes] = []
    while n > 0:
        chunk = os.read(f, n)
        if not chunk:
            break
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _copy_data(f: int, out: int, size: int) -> None:
    """Copy all of ``f`` to ``out``: in the kernel (``sendfile``) when it can, else by reads and writes."""
    try:
        offset = 0
        while True:
            sent = os.sendfile(out, f, offset, max(size - offset, _CHUNK))
            if sent == 0:
                return
            offset += sent
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EXDEV) or offset:
            raise
    for chunk in _chunks(f):
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view):]


def _copy_file(src_fd: int, dest_fds: Sequence[int], name: str, rel: str, dest_name: str | None = None,
               atime_is_mtime: bool = False) -> None:
    """Copy file ``name`` of ``src_fd`` into each folder of ``dest_fds`` in turn (one source read per
    destination, in the order given), permission bits and modification time kept."""
    f = _open_file(src_fd, name, rel)
    try:
        st = os.fstat(f)
        for dest_fd in dest_fds:
            out = os.open(dest_name or name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                          0o600, dir_fd=dest_fd)
            try:
                os.lseek(f, 0, os.SEEK_SET)
                _copy_data(f, out, st.st_size)
                os.fchmod(out, stat.S_IMODE(st.st_mode))
                os.utime(out, ns=(st.st_mtime_ns if atime_is_mtime else st.st_atime_ns, st.st_mtime_ns))
            finally:
                os.close(out)
    finally:
        os.close(f)


def copy_entry(src_root: Path | str, rel: str | PurePosixPath, dest_root: Path | str) -> None:
    """Copy the file or symlink ``src_root/rel`` to ``dest_root/rel`` (permission bits kept, a link
    as a link), replacing whatever is there (a folder with its content); missing folders are made.
    Neither side follows a symlink on the way (:class:`LinkInTheWay`). Raises ``OSError``
    (``EINVAL``) for a folder or a special file at ``src_root/rel``."""
    with EntryCopier(src_root, dest_root) as copier:
        copier.copy(rel)


def _copy_entry_at(sfd: int, dfd: int, name: str, rel: str) -> None:
    """:func:`copy_entry` of ``name`` from folder ``sfd`` to folder ``dfd`` (``rel``: its path, for errors)."""
    st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
    kind = _kind(st.st_mode)
    if kind not in ("file", "link"):
        raise OSError(errno.EINVAL, f"not a regular file or symlink ({kind}): {rel}")
    tmp = f".{name[:40]}.hf-{os.getpid()}-{os.urandom(4).hex()}.tmp"
    if kind == "link":
        os.symlink(os.readlink(name, dir_fd=sfd), tmp, dir_fd=dfd)
    else:
        _copy_file(sfd, [dfd], name, rel, dest_name=tmp)
    try:
        try:
            existing = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            _rmtree_at(dfd, name)
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        os.unlink(tmp, dir_fd=dfd)
        raise


class EntryCopier:
    """:func:`copy_entry` for many entries between one pair of roots (host30: 100,000 files left by an agent
    took the host about 87 s, each copy reaching both folders again from the roots, one ``open`` per path
    component). The two folder descriptors of the last entry's folder are kept, reached as
    :func:`copy_entry` reaches them (no link followed, missing destination folders made), and used again
    while the next entries are in the same folder; any other folder is reached afresh. Call :meth:`forget`
    before changing ``dest_root`` by other means (a removal could take a kept folder away); a copy itself
    only replaces an entry inside the kept folder, never the folder. A context manager: the descriptors are
    closed on exit. Raises as :func:`copy_entry`."""

    def __init__(self, src_root: Path | str, dest_root: Path | str) -> None:
        self.src_root, self.dest_root = src_root, dest_root
        self._folder: str | None = None
        self._fds: tuple[int, int] | None = None

    def __enter__(self) -> EntryCopier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.forget()

    def forget(self) -> None:
        """Close the kept descriptors: the next copy reaches its folders from the roots."""
        fds, self._fds, self._folder = self._fds, None, None
        if fds is not None:
            os.close(fds[0])
            os.close(fds[1])

    def copy(self, rel: str | PurePosixPath) -> None:
        """Copy ``src_root/rel`` to ``dest_root/rel`` as :func:`copy_entry` does; after a failure the kept
        folders are forgotten (:meth:`forget`)."""
        folder, name = _split(rel)
        if self._fds is None or self._folder != folder:
            self.forget()
            sfd = _open_dir(self.src_root, folder)
            try:
                dfd = _open_dir(self.dest_root, folder, create=True)
            except BaseException:
                os.close(sfd)
                raise
            self._fds, self._folder = (sfd, dfd), folder
        try:
            _copy_entry_at(self._fds[0], self._fds[1], name, str(rel))
        except BaseException:
            self.forget()
            raise


def copy_tree(src: Path | str, dest: Path | str, *, atime_is_mtime: bool = False) -> Path:
    """Copy folder ``src`` into ``dest`` (absent or an empty folder): folders, regular files and
    symlinks (as symlinks), permission bits and modification times kept; every entry reached by
    descriptor without following a link. A file's access time is the source's as it was before the
    copy read it, or with ``atime_is_mtime`` its modification time (so that copies of one tree made at
    different times, or of a tree some were read from, cannot be told by access times). Returns ``dest``.
    Raises ``FileExistsError`` when ``dest`` is a folder that is not empty, ``OSError`` (``EINVAL``) for a
    special file (fifo, socket, device) in ``src``, ``OSError`` (``ELOOP``)
    for folders nested deeper than :data:`MAX_DEPTH`."""
    return copy_trees(src, [dest], atime_is_mtime=atime_is_mtime)[0]


def copy_trees(src: Path | str, dests: Sequence[Path | str], *, atime_is_mtime: bool = False) -> list[Path]:
    """Copy folder ``src`` into every folder of ``dests`` at once, as :func:`copy_tree` copies it into one:
    entry by entry, each entry made in every destination before the next, **in a fresh random order of the
    destinations for each entry** (:mod:`secrets`). So no copy is older than another: an entry's change time
    and inode are within a few microseconds of its copies', and which copy got it first is a coin toss per
    entry (the canary twin runs of a grading, issue 30: copies made one after the other let a test process
    tell the older copy by its files' age, and pass every test there and none in the other). Returns
    ``dests`` as paths. Raises as :func:`copy_tree`."""
    paths = [Path(d) for d in dests]
    for d in paths:
        d.mkdir(parents=True, exist_ok=True)
    sfd = _open_root(src)
    dfds: list[int] = []
    try:
        for d in paths:
            dfds.append(_open_root(d))
            if os.listdir(dfds[-1]):
                raise FileExistsError(f"copy destination is not empty: {d}")
        _copy_dir(sfd, dfds, "", 0, atime_is_mtime)
        mode = stat.S_IMODE(os.fstat(sfd).st_mode)
        for dfd in _shuffled(dfds):
            os.fchmod(dfd, mode)
    finally:
        for dfd in dfds:
            os.close(dfd)
        os.close(sfd)
    return paths


def _shuffled(fds: list[int]) -> list[int]:
    """``fds`` in a fresh random order (itself when there is one)."""
    if len(fds) < 2:
        return fds
    out = list(fds)
    _RANDOM.shuffle(out)
    return out


def _copy_dir(sfd: int, dfds: list[int], prefix: str, depth: int, atime_is_mtime: bool = False) -> None:
    if depth > MAX_DEPTH:
        raise OSError(errno.ELOOP, f"folders nested deeper than {MAX_DEPTH}: {prefix}")
    for name, st in _listing(sfd):
        rel = f"{prefix}{name}"
        kind = _kind(st.st_mode)
        order = _shuffled(dfds)
        if kind == "dir":
            try:
                s2 = _open_sub(sfd, name, rel)
            except LinkInTheWay:  # swapped for a link since the listing: copied as the link it is now
                target = os.readlink(name, dir_fd=sfd)
                for dfd in order:
                    os.symlink(target, name, dir_fd=dfd)
                continue
            except FileNotFoundError:  # removed since the listing
                continue
            subs: list[int] = []
            try:
                for dfd in order:
                    os.mkdir(name, 0o700, dir_fd=dfd)
                    subs.append(_open_sub(dfd, name, rel))
                _copy_dir(s2, subs, f"{rel}/", depth + 1, atime_is_mtime)
                mode = stat.S_IMODE(os.fstat(s2).st_mode)
                for d2 in _shuffled(subs):
                    os.fchmod(d2, mode)
            finally:
                for d2 in subs:
                    os.close(d2)
                os.close(s2)
        elif kind == "link":
            target = os.readlink(name, dir_fd=sfd)
            for dfd in order:
                os.symlink(target, name, dir_fd=dfd)
        elif kind == "file":
            _copy_file(sfd, order, name, rel, atime_is_mtime=atime_is_mtime)
        else:
            raise OSError(errno.EINVAL, f"not a regular file, folder or symlink ({kind}): {rel}")
