"""Copies of the project under benchmark found by their content, wherever and however they were installed
(docs/contracts.md §9; atk15 F1–F1f).

A name or an install format says nothing certain: an egg (zipped or a folder), an ``*.egg-info`` with a
``lib/`` layout, an environment anywhere under ``/usr``, pip's VCS checkout ``<venv>/src/<name>/``, a
second clone on ``PYTHONPATH`` and a wheel of a ``setup.py``-only project all escaped the name-based
search (:mod:`.project_copies`). What every one of them holds is the same bytes as the repository:

* **the leak** (:func:`leak`, once per process and repository, and only in a process that matches a walk:
  a local xdist worker that adopted its controller's masks for every root computes none): the git blob
  ids of the ``*.py`` files written after the oldest task's parent up to HEAD (``git log --raw <base>..HEAD``
  new sides and ``git ls-tree -r HEAD``), less every blob of the base's tree (the agent has those) and the empty blob.
  The base is the merge base of the ``parent`` commits of ``.homefield/tasks.jsonl``; with no task
  recorded yet (mining) it is unknown and the leak is HEAD's ``*.py`` blobs;
* **the walk** (:func:`content_copies`): every read-only root a sandbox shows, walked once per process
  with ``os.scandir`` whatever the repository (``/proc``, ``/sys``, ``/dev``, ``.git`` folders and
  homefield's own temp folders pruned; symlinks never followed; nothing in a protected folder matched).
  A ``*.py`` file whose size is a leak blob's size is hashed as git would; a zip archive (``.egg``,
  ``.zip``, ``.whl``, ``.pyz``) is matched by its central directory's
  (size, CRC-32) per member and a candidate member is read to confirm; a ``.git`` entry is asked
  (``git cat-file --batch-check``, one process each) whether it holds the repository's HEAD or root commit;
* **the mask** (:func:`mask_of`): a matched ``*.py`` → the top-level entry holding it below its
  ``sys.path``-like root (the path less its longest suffix that is a repository path of the blob: a
  package folder, a module and its ``__pycache__`` bytecode, a folder egg whole); a matched archive → the
  archive; a matching git folder → its whole work tree (history and hidden tests too).

A dependency that merely ships a file identical to one the agent already has is not masked, nor is a
git checkout of another project, nor a file of an interpreter's standard library (:func:`stdlib_of`:
Python 3.11's ``tomllib`` holds hukkin/tomli's files; its ``site-packages`` is searched as before).

Cost (``benchmarks/copies.py``, this machine): the first sandbox of a process walks ``/usr`` (about 119,000
entries, 20,781 ``*.py`` files) in 0.4–0.8 s of CPU; later sandboxes 0.2 ms; another repository in the
same process 8 ms (the walk does not depend on the repository). Only 50–411 of those files pass the size
filter, so hashing is a few milliseconds and no cache across sessions is kept: it would have to
``stat`` every file again to be sound, which is most of the walk. Within a session the controller's masks
go to its local xdist workers (:func:`found_so_far`, :func:`adopt`): the same file system, the same
repository; a ``homefield run -n 2`` walked three times, now once (``strace``: one process opens the
walked folders), 0.6–0.9 s less CPU in all. Bubblewrap's probe masks nothing (speed25): a process walks
when it first builds a sandbox that shows a task, or, on a controller, before it starts its local workers
(:func:`~.bwrap.system_masks`), so a session that grades nothing (reference agents with empty patches)
walks nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.protected import protected

__all__ = ["Leak", "leak", "mask_of", "content_copies", "found_so_far", "adopt", "stdlib_of", "ZIP_SUFFIXES",
           "PRUNED"]

#: Archives Python imports from (``zipimport``) or pip installs: searched member by member.
ZIP_SUFFIXES = (".egg", ".zip", ".whl", ".pyz")
#: Folders never walked (nothing of a project's is in them; ``/proc`` would loop).
PRUNED = ("/proc", "/sys", "/dev")
#: homefield's own temp folders (:mod:`.tempdirs`): the copies under test and the workspaces, never masked.
_OWN_TEMP = re.compile(r"^hf-\d+\.\d+-")
_SUFFIXES = (".py", *ZIP_SUFFIXES)
#: Never masked, nor a folder holding one (with this interpreter's prefixes): a repository that commits
#: a file at ``lib/python3.11/site-packages/x.py`` must not hide the system from its own test runs.
_KEPT = ("/", "/usr", "/usr/local", "/usr/lib", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_EMPTY_BLOBS = ("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
                "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813")


@dataclass(frozen=True)
class Leak:
    """What of a repository no sandbox may show: ``blobs`` (blob id → the repository paths it had, e.g.
    ``("textkit/core.py",)``), ``sizes`` (their sizes in bytes), ``members`` ((size, CRC-32) of each),
    ``commits`` (HEAD and the root commits: a git folder holding one is the repository's), ``algo``
    (``sha1`` or ``sha256``, the repository's object format)."""

    blobs: dict[str, tuple[str, ...]]
    sizes: frozenset[int]
    members: frozenset[tuple[int, int]]
    commits: tuple[str, ...]
    algo: str = "sha1"

    def blob_id(self, data: bytes) -> str:
        """The git blob id of ``data`` in the repository's object format."""
        return hashlib.new(self.algo, b"blob %d\0" % len(data) + data).hexdigest()


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes | None:
    """``git -C repo ARGS``: :func:`_run_git`."""
    return _run_git("-C", str(repo), *args, stdin=stdin)


def _run_git(*args: str, stdin: bytes | None = None) -> bytes | None:
    """``git ARGS`` (no ``GIT_*`` of this environment, any owner's folder): its stdout, ``None`` on failure."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", "-c", "safe.directory=*", *args], input=stdin, capture_output=True, env=env,
                          check=False)
    return proc.stdout if proc.returncode == 0 else None


def _task_base(repo: Path) -> str | None:
    """The merge base of the ``parent`` commits recorded in ``repo/.homefield/tasks.jsonl`` (the oldest
    task's parent, or an ancestor of it when the parents lie on different branches); ``None`` when no
    task is recorded or git cannot tell."""
    parents: set[str] = set()
    try:
        with open(repo / ".homefield" / "tasks.jsonl", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    parent = json.loads(line).get("parent")
                except (ValueError, AttributeError):
                    continue
                if isinstance(parent, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", parent):
                    parents.add(parent)
    except OSError:
        return None
    if not parents:
        return None
    out = _git(repo, "merge-base", "--octopus", *sorted(parents))
    return out.decode().strip() or None if out else None


def _tree_blobs(repo: Path, rev: str) -> dict[str, str]:
    """``path → blob id`` of every file of ``rev``'s tree."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", rev) or b""
    blobs: dict[str, str] = {}
    for entry in out.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            blobs[os.fsdecode(path)] = parts[2].decode()
    return blobs


@functools.lru_cache(maxsize=16)
def leak(repo: Path) -> Leak:
    """The leak of ``repo`` (module docstring). Empty when ``repo`` is no git repository with a commit."""
    head = _tree_blobs(repo, "HEAD")
    paths: dict[str, set[str]] = {}
    for path, blob in head.items():
        if path.endswith(".py"):
            paths.setdefault(blob, set()).add(path)
    base = _task_base(repo)
    if base is not None:
        log = _git(repo, "log", "--raw", "-z", "--format=", "--no-renames", "--no-abbrev", f"{base}..HEAD") or b""
        fields = iter(log.split(b"\0"))
        for meta in fields:  # ":<mode> <mode> <old> <new> <status>" then the path (commits may be apart by a newline)
            parts = meta.strip().split()
            if not parts or not parts[0].startswith(b":"):
                continue
            name = os.fsdecode(next(fields, b""))
            if len(parts) >= 4 and name.endswith(".py") and parts[3].strip(b"0"):
                paths.setdefault(parts[3].decode(), set()).add(name)
        for blob in _tree_blobs(repo, base).values():
            paths.pop(blob, None)
    for empty in _EMPTY_BLOBS:
        paths.pop(empty, None)
    roots = (_git(repo, "rev-list", "--max-parents=0", "HEAD") or b"").decode().split()
    head_sha = (_git(repo, "rev-parse", "HEAD") or b"").decode().strip()
    algo = "sha256" if len(head_sha) == 64 else "sha1"
    sizes: set[int] = set()
    members: set[tuple[int, int]] = set()
    if paths:
        batch = _git(repo, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in paths).encode()) or b""
        pos = 0
        while pos < len(batch):
            nl = batch.index(b"\n", pos)
            header = batch[pos:nl].split()
            size = int(header[2]) if len(header) == 3 else 0
            data = batch[nl + 1:nl + 1 + size]
            pos = nl + 1 + size + (1 if len(header) == 3 else 0)
            sizes.add(size)
            members.add((size, zlib.crc32(data)))
    return Leak({b: tuple(sorted(p)) for b, p in paths.items()}, frozenset(sizes), frozenset(members),
                tuple(x for x in [head_sha, *roots] if x), algo)


def mask_of(path: str, repo_paths: Iterable[str]) -> list[str]:
    """What to mask for the file ``path`` whose content is a repository file at one of ``repo_paths``:
    the path less the longest suffix (whole components) it shares with one of them is its root
    (``…/site-packages``, a clone's folder, a folder egg), and the first component below the root is
    the copy: a package folder, or a module file with its ``__pycache__/<stem>.*.pyc``. A root that is a
    folder egg (``*.egg``) is masked whole (its ``EGG-INFO`` too)."""
    parts = path.split("/")
    shared = 1
    for rel in repo_paths:
        rp = rel.split("/")
        k = 0
        while k < min(len(rp), len(parts) - 1) and rp[-1 - k] == parts[-1 - k]:
            k += 1
        shared = max(shared, k)
    root = "/".join(parts[:-shared]) or "/"
    if root.endswith(".egg"):
        return [root]
    top = os.path.join(root, parts[-shared])
    if shared > 1:
        return [top]
    stem = parts[-1][:-len(".py")] if parts[-1].endswith(".py") else parts[-1]
    cache = os.path.join(root, "__pycache__")
    try:
        pyc = [os.path.join(cache, n) for n in os.listdir(cache) if n.startswith(stem + ".") and n.endswith(".pyc")]
    except OSError:
        pyc = []
    return [top, *sorted(pyc)]


#: The end of central directory record (without its comment) and a central directory file header up to
#: its three variable lengths, as :mod:`zipfile` reads them (``structEndArchive``, ``structCentralDir``).
_END = struct.Struct("<4s4H2LH")
_CENTRAL = struct.Struct("<4s12x3L3H")


@functools.lru_cache(maxsize=256)
def _member_sums(path: str) -> frozenset[tuple[int, int]] | None:
    """``(size, CRC-32)`` of every member of the archive at ``path``, read from its central directory with
    :mod:`struct` alone (the same end record and the same bytes :mod:`zipfile` would find, without building a
    ``ZipInfo`` per member: a 15,000-member ``src.zip`` of a JDK under ``/usr`` took 60 ms of CPU in every
    session, now under 10); ``None`` when it cannot tell (zip64, a short or unsigned record, an unreadable
    file): then :func:`_zip_members` decides. A pre-filter only: an archive none of whose sums is a leak
    member's holds no leak blob, whatever its names."""
    try:
        with open(path, "rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            tail_at = max(0, end - (1 << 16) - _END.size)  # zipfile._EndRecData reads as far back
            fh.seek(tail_at)
            tail = fh.read()
            at = len(tail) - _END.size
            if not (at >= 0 and tail[at:at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
                at = tail.rfind(b"PK\x05\x06")  # zipfile's order: no comment first, then the last record
            if at < 0 or len(tail) - at < _END.size or (at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07"):
                return None
            entries, size, offset = _END.unpack_from(tail, at)[4:7]
            start = tail_at + at - size  # where zipfile reads it, data prepended to the archive or not
            if 0xFFFF in (entries,) or 0xFFFFFFFF in (size, offset) or start < 0:
                return None
            fh.seek(start)
            central = fh.read(size)
    except OSError:
        return None
    sums: set[tuple[int, int]] = set()
    pos, n = 0, len(central)
    while pos < n:
        if n - pos < 46:
            return None
        sig, crc, _, file_size, name_len, extra_len, comment_len = _CENTRAL.unpack_from(central, pos)
        if sig != b"PK\x01\x02" or file_size == 0xFFFFFFFF:
            return None
        sums.add((file_size, crc))
        pos += 46 + name_len + extra_len + comment_len
    return frozenset(sums)


@functools.lru_cache(maxsize=256)
def _zip_members(path: str) -> tuple[tuple[str, int, int], ...]:
    """``(name, size, CRC-32)`` of each ``*.py`` member of the archive at ``path`` (its central directory
    only); ``()`` when it is no readable zip."""
    try:
        with zipfile.ZipFile(path) as zf:
            return tuple((i.filename, i.file_size, i.CRC) for i in zf.infolist() if i.filename.endswith(".py"))
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError, NotImplementedError, EOFError, zlib.error):
        return ()


def _zip_holds(path: str, lk: Leak) -> bool:
    """Whether the archive at ``path`` has a ``*.py`` member whose content is a leak blob: its central
    directory's (size, CRC-32) first (:func:`_member_sums`, then :mod:`zipfile` only when one matches), the
    member read only when they match."""
    sums = _member_sums(path)
    if sums is not None and sums.isdisjoint(lk.members):
        return False
    candidates = [name for name, size, crc in _zip_members(path) if (size, crc) in lk.members]
    if not candidates:
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            return any(lk.blob_id(zf.read(name)) in lk.blobs for name in candidates)
    except (OSError, zipfile.BadZipFile, ValueError, RuntimeError, NotImplementedError, EOFError, zlib.error,
            KeyError):
        return False


def _holds_commit(git_entry: str, commits: Sequence[str]) -> bool:
    """Whether the git folder (or ``gitdir:`` file) ``git_entry`` stores one of ``commits``."""
    out = _run_git(f"--git-dir={git_entry}", "cat-file", "--batch-check",
                   stdin="".join(f"{c}\n" for c in commits).encode())
    return out is not None and any(b" commit " in line for line in out.splitlines())


def _matched_py(path: str, size: int, leaks: Sequence[Leak]) -> tuple[str, ...] | None:
    """The repository paths of the leak blob whose content the file at ``path`` (``size`` bytes) has."""
    if not any(size in lk.sizes for lk in leaks):
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(size + 1)
    except OSError:
        return None
    for lk in leaks:
        found = lk.blobs.get(lk.blob_id(data))
        if found:
            return found
    return None


@dataclass(frozen=True)
class _Index:
    """What a walk of one root saw that could be a copy, whatever the repository: ``pys`` (path, size)
    of the ``*.py`` files, ``zips`` the archives, ``trees`` the folders holding a ``.git`` entry."""

    pys: tuple[tuple[str, int], ...]
    zips: tuple[str, ...]
    trees: tuple[str, ...]

    def below(self, root: str) -> _Index:
        """The part of the index under ``root`` (a folder inside the walked one)."""
        return _Index(tuple(p for p in self.pys if _under(p[0], root)), tuple(z for z in self.zips if _under(z, root)),
                      tuple(t for t in self.trees if _under(t, root) or _under(root, t)))


def _walk(root: str) -> _Index:
    """The :class:`_Index` of ``root`` (a folder or a file, resolved): ``os.scandir`` without following
    symlinks, :data:`PRUNED`, homefield's own temp folders and ``.git`` folders not descended into."""
    pys: list[tuple[str, int]] = []
    zips: list[str] = []
    trees: list[str] = []
    try:
        st = os.stat(root)
    except OSError:
        return _Index((), (), ())
    if stat.S_ISREG(st.st_mode):
        return _Index(((root, st.st_size),) if root.endswith(".py") else (),
                      (root,) if root.endswith(ZIP_SUFFIXES) else (), ())
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for e in it:
                    name = e.name
                    if e.is_dir(follow_symlinks=False):  # a folder egg too
                        if name == ".git":
                            trees.append(folder)
                        elif e.path not in PRUNED and not _OWN_TEMP.match(name):
                            stack.append(e.path)
                    elif name.endswith(_SUFFIXES) and e.is_file(follow_symlinks=False):
                        if name.endswith(".py"):
                            pys.append((e.path, e.stat(follow_symlinks=False).st_size))
                        else:
                            zips.append(e.path)
                    elif name == ".git":  # a gitdir: file (a worktree, a submodule)
                        trees.append(folder)
        except OSError:
            continue
    return _Index(tuple(pys), tuple(zips), tuple(trees))


def _masks(index: _Index, leaks: Sequence[Leak], hidden: Sequence[str]) -> list[str]:
    """The masks of the copies ``index`` holds (module docstring); nothing inside the ``hidden`` folders
    (the protected ones: never shown anyway)."""
    commits = [c for lk in leaks for c in lk.commits]
    out = [t for t in index.trees if not any(_under(t, h) for h in hidden)
           and commits and _holds_commit(os.path.join(t, ".git"), commits)]
    sizes = frozenset().union(*(lk.sizes for lk in leaks))
    for path, size in index.pys:
        if size in sizes and not any(_under(path, m) for m in [*out, *hidden]) and stdlib_of(path) is None:
            found = _matched_py(path, size, leaks)
            out += mask_of(path, found) if found else []
    out += [z for z in index.zips if not any(_under(z, h) for h in hidden) and any(_zip_holds(z, lk) for lk in leaks)]
    return out


#: root → its walk, for this process (the walk does not depend on the repository).
_INDEXES: dict[str, _Index] = {}
#: (root, repositories) → the masks under it (a sandbox is built for every agent and test run).
_MASKS: dict[tuple[str, tuple[Path, ...]], tuple[str, ...]] = {}


def found_so_far() -> list[list[Any]]:
    """The masks this process has found, to hand to a process of the same session on the same machine
    (a local xdist worker, :func:`adopt`): ``[[root, [repository, ...], [mask, ...]], ...]``, JSON-able.
    A worker would walk the same roots of the same file system for the same repositories and find the
    same copies (0.3–0.5 s of CPU each, ``/usr`` here), so the controller's walk serves them all."""
    return [[root, [str(r) for r in repos], list(masks)] for (root, repos), masks in _MASKS.items()]


def adopt(found: Iterable[Sequence[Any]]) -> None:
    """Take the masks another process of this machine found (:func:`found_so_far`'s shape) as this
    process's own; a root it did not search is walked here as before."""
    for root, repos, masks in found:
        _MASKS.setdefault((str(root), tuple(Path(r) for r in repos)), tuple(str(m) for m in masks))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


#: The folders of a standard library that hold installed distributions, not the interpreter's own modules.
_SITE_NAMES = ("site-packages", "dist-packages")


@functools.lru_cache(maxsize=1024)
def _holds_os(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "os.py"))


def stdlib_of(path: str) -> str | None:
    """The standard library folder of an interpreter that holds the file at ``path`` (a resolved path), else
    ``None``: a folder ``<prefix>/lib/python3.X`` (or ``lib64``) holding ``os.py``, as
    :func:`~pytest_homefield.sandbox.bwrap.is_prefix` tells a prefix, with ``path`` outside its
    ``site-packages`` and ``dist-packages`` (installed distributions live there, copies of the project too).

    Never masked (docs/contracts.md §9): an interpreter cannot run without its standard library, and
    it may hold a version of the project's own files. Python 3.11's ``tomllib/_types.py`` and
    ``tomllib/_re.py`` are byte for byte files hukkin/tomli wrote in 2022: masking them broke every test
    run of tomli (pytest reads ``pyproject.toml`` with ``tomllib``), each a ``setup failed``."""
    parts = path.split("/")
    for i in range(len(parts) - 2, 0, -1):
        if parts[i].startswith("python3") and parts[i - 1] in ("lib", "lib64"):
            folder = "/".join(parts[:i + 1])
            if _holds_os(folder):
                return None if parts[i + 1] in _SITE_NAMES else folder
    return None


def _index_of(root: str) -> _Index:
    walked = next((k for k in _INDEXES if _under(root, k)), None)
    if walked is None:
        _INDEXES[root] = _walk(root)
        return _INDEXES[root]
    return _INDEXES[walked] if walked == root else _INDEXES[walked].below(root)


def content_copies(roots: Iterable[Path | str], repos: Iterable[Path] | None = None,
                   skip: Iterable[Path | str] = ()) -> list[str]:
    """The masks (resolved paths, sorted) of the copies of ``repos`` (default: the protected ones) found
    by content under ``roots`` (module docstring). A root that is or lies in one of ``skip`` (the run's
    own folders: its workspace, the copy under test), in a protected folder or in homefield's own temp
    folders is not searched. Each root is walked once per process whatever the repository (a root
    inside one already walked takes that walk's part below it) and matched once per repository set.
    A mask that is or holds a system folder or this interpreter's prefix (:data:`_KEPT`) is dropped.
    ``[]`` when no repository is protected."""
    repo_list = tuple(Path(r) for r in (protected() if repos is None else repos))
    if not repo_list:
        return []
    reals = [os.path.realpath(r) for r in repo_list]
    skipped = [os.path.realpath(s) for s in skip] + reals
    wanted = sorted({os.path.realpath(r) for r in roots})
    # PRUNED are not descended into; a root bound inside one (a folder of /dev/shm) is searched
    wanted = [r for r in wanted if not any(_under(r, s) for s in skipped) and r not in PRUNED
              and not any(_OWN_TEMP.match(c) for c in r.split("/"))]
    searched = [r for r in wanted if not any(w != r and _under(r, w) for w in wanted)]  # a root in another: with it
    if any((root, repo_list) not in _MASKS for root in searched):
        # the leak only when a root is to be matched: a local worker that adopted its controller's masks for
        # every root asks the repository nothing (six git processes and every new *.py blob, per worker)
        leaks = [lk for lk in (leak(r) for r in repo_list) if lk.blobs or lk.commits]
        if not leaks:
            return []
    out: set[str] = set()
    for root in searched:
        key = (root, repo_list)
        if key not in _MASKS:
            _MASKS[key] = tuple(_masks(_index_of(root), leaks, reals))
        # a mask above the root (the root lies in a copy: a clone's src/ on PYTHONPATH) is the root itself
        out.update(m if _under(m, root) else root for m in _MASKS[key] if _under(m, root) or _under(root, m))
    kept = [*_KEPT, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)]
    return sorted(m for m in out if not any(_under(k, m) for k in kept))
