"""Snapshots: a commit's exact tree in a fresh folder, copies of it, patches and setup on top.

A snapshot holds the tree of one commit byte for byte (docs/contracts.md §7): symlinks stay symlinks,
executable bits stay set, and no ``.gitattributes`` effect applies — no ``export-ignore`` /
``export-subst`` (``git archive`` is not used), no end-of-line conversion, no ``ident``
expansion, no smudge filter (Git LFS files stay pointers, as stored). It is checked out from a
temporary index with ``git read-tree`` + ``git checkout-index`` through a git directory whose
``info/attributes`` unsets every conversion attribute. Nothing else ends up in it: caches,
``__pycache__``, ``.pytest_cache``, egg-info or ``.homefield/`` of the user's working tree are not
part of a commit's tree.

With ``init_git`` the folder is also a one-commit git repository (branch ``main``) whose only
objects are that tree's and one commit by ``homefield <homefield@localhost>`` dated
2000-01-01T00:00:00Z with the message ``snapshot``: no history, refs, tags, reflog or hooks, and
nothing that names the original repository or commit.

Git runs as a subprocess with every ``GIT_*`` variable of the caller removed (a caller inside a
git hook has ``GIT_DIR``/``GIT_INDEX_FILE`` set, which would redirect our commands); gitpython
cannot unset inherited variables, so :func:`git` is used instead. Git run over a folder an agent or
a model reply wrote (a workspace, a grading copy, the two sides of a diff) runs through
:func:`inert_git_env`: nothing in that folder is git configuration to it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from pytest_homefield.errors import PatchError, SnapshotError
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.procs import ProcResult, run_process
from pytest_homefield.sandbox.tempdirs import mkdtemp as hf_mkdtemp

__all__ = [
    "RAW_ATTRIBUTES",
    "git",
    "git_env",
    "borrowed_gitdir",
    "inert_git_env",
    "make_snapshot",
    "commit_files",
    "TreePack",
    "PACK_SEALS",
    "tree_of",
    "pack_trees",
    "unpack",
    "copy_tree",
    "apply_patch",
    "patch_bytes",
    "run_setup",
    "setup_error_line",
    "SNAPSHOT_AUTHOR",
    "SNAPSHOT_DATE",
    "SNAPSHOT_MESSAGE",
]

SNAPSHOT_AUTHOR = ("homefield", "homefield@localhost")
#: Fixed author and committer date of a snapshot commit (2000-01-01T00:00:00Z).
SNAPSHOT_DATE = "946684800 +0000"
SNAPSHOT_MESSAGE = "snapshot"

#: Attributes that change file content between the object store and the working tree, each unset: as a git
#: folder's ``info/attributes`` (read before, and over, every ``.gitattributes`` of the tree) git writes and reads a
#: file's bytes as they are (the snapshot's checkout; eval.sh's own git folder, git66).
RAW_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding -export-subst -export-ignore\n"


def git_env(extra: Mapping[str, str] | None = None, *, isolated: bool = False) -> dict[str, str]:
    """The environment for a git subprocess: ``os.environ`` without any ``GIT_*`` variable.

    ``isolated`` also ignores the user's global and system git configuration (for repositories
    we create, so no ``init.templateDir``, ``core.hooksPath`` or ``commit.gpgSign`` applies).
    ``extra`` is added last.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    if isolated:
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    if extra:
        env.update(extra)
    return env


def git(
    *args: str,
    cwd: Path | str,
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    isolated: bool = False,
    check: bool = True,
) -> str:
    """Run ``git args…`` in ``cwd`` and return its stdout (UTF-8, undecodable bytes kept as
    surrogate escapes; trailing newline kept).

    ``env`` adds variables to :func:`git_env`. Raises :class:`SnapshotError` with git's first
    error line when the command fails and ``check`` is true.
    """
    proc = subprocess.run(
        ["git", *args],
        cwd=str(cwd),
        env=git_env(env, isolated=isolated),
        input=input,
        capture_output=True,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        first = next((ln for ln in err if ln.startswith(("fatal:", "error:"))), err[0] if err else "")
        raise SnapshotError(f"git {args[0]} failed ({proc.returncode}): {first}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def _objects_dir(repo: Path, isolated: bool = False) -> Path:
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo, isolated=isolated).strip()
    return Path(common) / "objects"


@contextmanager
def borrowed_gitdir(repo: Path, attributes: str, *, isolated: bool = False) -> Iterator[Path]:
    """A temporary bare git directory that reads ``repo``'s objects through an alternate (nothing
    is copied) and whose ``info/attributes`` is ``attributes`` — the highest-precedence attribute
    source, so it overrides the ``.gitattributes`` of any tree without touching ``repo``. Refs of
    ``repo`` are not visible: pass full object names. Removed on exit. ``isolated``: ``repo`` is a repository
    homefield made (:func:`make_snapshot`'s ``isolated``). Raises :class:`SnapshotError` when ``repo`` is not a git
    repository."""
    objects = _objects_dir(Path(repo), isolated)
    gitdir = hf_mkdtemp()
    try:
        git("init", "-q", "--bare", "--template=", str(gitdir), cwd=gitdir, isolated=True)
        (gitdir / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (gitdir / "objects" / "info" / "alternates").write_text(f"{objects}\n")
        (gitdir / "info").mkdir(exist_ok=True)
        (gitdir / "info" / "attributes").write_text(attributes)
        yield gitdir
    finally:
        shutil.rmtree(gitdir, ignore_errors=True)


#: The configuration of :func:`inert_git_env`'s git directory: no attributes file of the user's either.
_INERT_CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tattributesFile = /dev/null\n"
                 "\tfsmonitor = false\n\thooksPath = /dev/null\n")


@contextmanager
def inert_git_env() -> Iterator[dict[str, str]]:
    """The environment for git run in a folder an agent or a model reply may have written (``cwd`` = that
    folder): ``GIT_DIR`` is a fresh empty bare git directory of ours, outside it, so git never discovers the
    folder's own ``.git`` (its config: filters, ``core.fsmonitor``, diff drivers, hooks) and, the git
    directory being bare, reads no ``.gitattributes`` of the folder either (a bare repository reads only
    its ``info/attributes``, which is absent); system and global configuration are ignored (``isolated``
    of :func:`git_env`), and the config sets ``core.attributesFile`` to ``/dev/null``. So no file the
    agent wrote makes git run a program (attacker9's F1: a reply's ``.gitattributes`` filter ran on
    the host) or convert bytes. For commands that need no repository of their own: ``git apply``
    without ``--index`` and ``git diff --no-index``. The folder is removed on exit."""
    gitdir = hf_mkdtemp()
    try:
        for sub in ("objects", "refs"):
            (gitdir / sub).mkdir()
        (gitdir / "HEAD").write_text("ref: refs/heads/main\n")
        (gitdir / "config").write_text(_INERT_CONFIG)
        yield git_env({"GIT_DIR": str(gitdir)}, isolated=True)
    finally:
        shutil.rmtree(gitdir, ignore_errors=True)


def _fresh_dir(dest: Path | None, prefix: str = "hf-") -> Path:
    """``dest`` created empty (``FileExistsError`` if it exists and is not empty), or a new random
    folder under the temp dir."""
    if dest is None:
        return hf_mkdtemp()
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"snapshot destination is not empty: {dest}")
    return dest


class TreePack:
    """Trees of commits as one git pack (exactly those trees' objects, each once) in a sealed ``memfd`` (a file of no
    name in memory, made ``0400``, whose :data:`PACK_SEALS` forbid every change of its bytes or size to every
    process, root included, through any descriptor), held open by this process, with the pack's SHA-256 in
    memory: what snapshots are built from again once the repository can no longer give them (hatk40: graded code
    under ``--sandbox none`` runs as the user and can remove the repository's objects; hatk43: it could also
    overwrite a pack in an ordinary file through ``/proc/<host pid>/fd``, whatever its mode). Made by
    :func:`pack_trees`, unpacked by :func:`unpack`; :meth:`close` it."""

    def __init__(self, trees: tuple[str, ...], file: IO[bytes], sha256: str, size: int) -> None:
        self.trees = trees
        self.size = size
        self._file = file
        self._sha256 = sha256

    def intact(self) -> bool:
        """Whether the file still holds the pack it was made with (its SHA-256); ``False`` once closed or
        unreadable. Never raises."""
        h = hashlib.sha256()
        try:
            for chunk in self.chunks():
                h.update(chunk)
        except (OSError, ValueError):
            return False
        return h.hexdigest() == self._sha256

    def chunks(self) -> Iterator[bytes]:
        """The pack's ``size`` bytes in pieces of at most 1 MiB, read by offset (the file's position is never
        used, so two readers do not disturb each other). Raises ``OSError``, ``ValueError`` once closed."""
        fd = self._file.fileno()
        at = 0
        while at < self.size:
            chunk = os.pread(fd, min(1 << 20, self.size - at), at)
            if not chunk:
                return
            at += len(chunk)
            yield chunk

    def close(self) -> None:
        """Close the file (its space is freed once no process holds it open)."""
        self._file.close()

    def offer(self) -> dict[str, object]:
        """This pack as another process of this host can take it (:meth:`taken`; JSON-able): ``host`` (this
        boot's id), ``pid`` and ``fd`` (where ``/proc`` shows the file of no name), ``sha256`` and ``size`` (bytes),
        ``trees``. One pack per session (ops41): xdist's controller offers it, each worker takes it rather than
        packing every parent tree again. Raises ``ValueError`` once closed."""
        return {"host": _boot_id(), "pid": os.getpid(), "fd": self._file.fileno(), "sha256": self._sha256,
                "size": self.size, "trees": list(self.trees)}

    @classmethod
    def taken(cls, offer: Mapping[str, object]) -> TreePack:
        """The pack another process of this host offered (:meth:`offer`), opened read-only through ``/proc/<pid>/fd``
        (never a name in a folder) and held open by this process, once it is sealed (:data:`PACK_SEALS`: no process
        can change its bytes after they are checked) and its bytes are the offer's SHA-256: a file changed since it
        was packed, or not sealed (hatk43: any process of the user could change it after this check), another
        host's offer, a file that is not regular (never read: a fifo cannot block) or of another size, is refused.
        Raises :class:`SnapshotError` (one line)."""
        try:
            host, pid, fd = str(offer["host"]), int(str(offer["pid"])), int(str(offer["fd"]))
            sha256, size, trees = str(offer["sha256"]), int(str(offer["size"])), offer["trees"]
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"the offered pack: a bad offer ({exc})") from None
        if not isinstance(trees, (list, tuple)) or not all(isinstance(t, str) for t in trees):
            raise SnapshotError("the offered pack: a bad offer (trees)")
        if host != _boot_id():
            raise SnapshotError("the offered pack is another host's")
        try:
            raw = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise SnapshotError(f"the offered pack cannot be opened ({exc.strerror})") from None
        file = os.fdopen(raw, "rb", buffering=0)
        try:
            st = os.fstat(raw)
            if not stat.S_ISREG(st.st_mode) or st.st_size != size:
                raise SnapshotError("the offered pack is not the file offered (its kind or size differs)")
            if not _sealed(raw):
                raise SnapshotError("the offered pack is not sealed (its bytes could change after they are checked)")
            pack = cls(tuple(trees), file, sha256, size)
            if not pack.intact():
                raise SnapshotError("the offered pack changed since it was made (its SHA-256 differs)")
        except BaseException:
            file.close()
            raise
        return pack


#: The seals of a pack's ``memfd`` (:func:`pack_trees`): no write, no shrinking, no growing, no change of its seals.
#: (Linux's values where this Python's ``fcntl`` lacks them: no ``memfd`` there, :func:`pack_trees` falls back.)
PACK_SEALS: int = (getattr(fcntl, "F_SEAL_WRITE", 8) | getattr(fcntl, "F_SEAL_SHRINK", 2)
                   | getattr(fcntl, "F_SEAL_GROW", 4) | getattr(fcntl, "F_SEAL_SEAL", 1))


def _sealed(fd: int) -> bool:
    """Whether the file of ``fd`` carries every seal of :data:`PACK_SEALS`. Never raises."""
    try:
        return bool(fcntl.fcntl(fd, fcntl.F_GET_SEALS) & PACK_SEALS == PACK_SEALS)
    except (OSError, AttributeError):  # not a memfd (EINVAL); no seals on this system
        return False


def _boot_id() -> str:
    """This boot of this host (``/proc/sys/kernel/random/boot_id``), ``""`` when unreadable."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def tree_of(repo: Path, commit: str, *, isolated: bool = False) -> str:
    """The tree id of ``commit`` (any commit-ish of ``repo``; ``isolated``: ``repo`` is a repository homefield made,
    :func:`make_snapshot`). Raises :class:`SnapshotError` when it names no commit of ``repo``."""
    try:
        return git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{tree}}", cwd=repo,
                   isolated=isolated).strip()
    except SnapshotError as exc:
        raise SnapshotError(f"{commit!r} is not a commit of {repo} ({exc})") from None


def pack_trees(repo: Path, trees: Iterable[str]) -> TreePack:
    """The :class:`TreePack` of ``trees`` (tree ids of ``repo``; an object two trees share is packed once), in a
    ``memfd`` sealed with :data:`PACK_SEALS` once written (its pages are the process's memory, as a file of
    ``/tmp`` on ``tmpfs`` would be); where no sealable ``memfd`` can be made (a seccomp policy refusing
    ``memfd_create``), a file of no name in the temp dir, as before hatk43: not sealed, so no worker takes it
    (:meth:`TreePack.taken`). Raises :class:`SnapshotError` when git fails (a tree ``repo`` does not hold),
    ``OSError``."""
    repo = Path(repo)
    wanted = tuple(dict.fromkeys(trees))
    objects = git("rev-list", "--objects", *wanted, "--", cwd=repo).encode("utf-8", "surrogateescape")
    try:
        out: IO[bytes] = os.fdopen(os.memfd_create("homefield-pack", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING), "w+b")
        sealable = True
    except (OSError, AttributeError):  # refused, or no memfd on this system
        out, sealable = tempfile.TemporaryFile(dir=tempfile.gettempdir()), False
    try:
        h, size = hashlib.sha256(), 0
        with subprocess.Popen(["git", "pack-objects", "-q", "--stdout"], cwd=str(repo), env=git_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as packer:
            assert packer.stdin is not None and packer.stdout is not None and packer.stderr is not None
            feeder = threading.Thread(target=_feed, args=(packer.stdin, objects), daemon=True)
            feeder.start()
            while chunk := packer.stdout.read(1 << 20):
                h.update(chunk)
                out.write(chunk)
                size += len(chunk)
            feeder.join()
            err = packer.stderr.read().decode("utf-8", "replace").strip()
        if packer.returncode != 0:
            raise SnapshotError(f"packing the trees' objects failed: {err.splitlines()[-1] if err else 'git error'}")
        out.flush()
        os.fchmod(out.fileno(), 0o400)
        if sealable:
            fcntl.fcntl(out.fileno(), fcntl.F_ADD_SEALS, PACK_SEALS)
    except BaseException:
        out.close()
        raise
    return TreePack(wanted, out, h.hexdigest(), size)


def unpack(pack: TreePack, dest: Path) -> Path:
    """``dest`` (absent or empty) made a bare git repository holding ``pack``'s objects (indexed by ``git
    index-pack``, which checks every object against its name; the pack streamed, never whole in memory), with
    no refs: :func:`make_snapshot` of one of ``pack.trees`` reads it as it reads the repository. Returns ``dest``.
    Raises :class:`SnapshotError`, ``OSError``."""
    dest = Path(dest)
    git("init", "-q", "--bare", "--template=", str(dest), cwd=dest.parent, isolated=True)
    with subprocess.Popen(["git", "index-pack", "--stdin"], cwd=str(dest), env=git_env({"GIT_DIR": str(dest)},
                                                                                        isolated=True),
                          stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as indexer:
        assert indexer.stdin is not None and indexer.stderr is not None
        feeder = threading.Thread(target=_feed_pack, args=(indexer.stdin, pack), daemon=True)
        feeder.start()
        err = indexer.stderr.read().decode("utf-8", "replace").strip()
        feeder.join()
    if indexer.returncode != 0:
        raise SnapshotError(f"indexing the trees' pack failed: {err.splitlines()[-1] if err else 'git error'}")
    return dest


def _feed_pack(stream: IO[bytes], pack: TreePack) -> None:
    try:
        for chunk in pack.chunks():
            stream.write(chunk)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def make_snapshot(repo: Path, commit: str, *, dest: Path | None = None, init_git: bool = True,
                  isolated: bool = False) -> Path:
    """Write the tree of ``commit`` (any commit-ish of ``repo``, or a tree id) into a fresh folder and return it.

    ``dest``: the folder to use (created; must be empty); default a new random folder under the
    temp dir (``tempfile.mkdtemp``), whose name says nothing about the task or commit.
    ``init_git``: also make it a one-commit git repository (see the module docstring); without
    it the folder holds the files only (faster: objects are read through an alternate instead of
    being copied). ``repo`` may be a bare repository of :func:`unpack`.
    ``isolated``: ``repo`` is a repository homefield made (:func:`unpack`'s): every git command over it reads no
    configuration outside it, neither the user's global nor the system's (hatk43: graded code under ``--sandbox
    none`` runs as the user and can write ``~/.gitconfig``; one git cannot parse made every later snapshot
    ``infra``). Without it git over the user's repository reads the user's configuration (``safe.directory``).

    Raises :class:`SnapshotError` when ``commit`` does not name a commit of ``repo`` or git fails,
    ``FileExistsError`` when ``dest`` is not empty. On error a folder this call created is removed
    (a given empty ``dest`` is left empty).
    """
    repo = Path(repo)
    tree = tree_of(repo, commit, isolated=isolated)
    created = dest is None or not Path(dest).exists()
    dest = _fresh_dir(dest)
    try:
        if init_git:
            _init_snapshot_repo(repo, tree, dest, isolated)
        else:
            with borrowed_gitdir(repo, RAW_ATTRIBUTES, isolated=isolated) as gitdir:
                _checkout(tree, gitdir, dest)
    except BaseException:
        if created:
            shutil.rmtree(dest, ignore_errors=True)
        else:  # the caller's empty folder: empty it again
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        raise
    return dest


#: homefield's own folder: never part of a snapshot, a change or a candidate.
HOMEFIELD_DIR = ".homefield"

_RAW_GIT = ("-c", "core.autocrlf=false", "-c", "core.symlinks=true", "-c", "core.bare=false")


def _checkout(tree: str, gitdir: Path, dest: Path) -> dict[str, str]:
    """Write ``tree`` into ``dest`` through a fresh index in ``gitdir`` (whose ``info/attributes``
    must be :data:`RAW_ATTRIBUTES`); returns the git environment used."""
    env = {"GIT_DIR": str(gitdir), "GIT_WORK_TREE": str(dest), "GIT_INDEX_FILE": str(gitdir / "index")}
    git(*_RAW_GIT, "read-tree", tree, cwd=dest, env=env, isolated=True)
    # a committed .homefield/ (homefield's own records) is never part of a snapshot
    git(*_RAW_GIT, "rm", "-r", "--cached", "--quiet", "--ignore-unmatch", "--", HOMEFIELD_DIR, cwd=dest, env=env,
        isolated=True)
    git(*_RAW_GIT, "checkout-index", "--all", "--force", "--quiet", cwd=dest, env=env, isolated=True)
    return env


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
    except BrokenPipeError:
        pass
    finally:
        stream.close()


def _copy_objects(repo: Path, tree: str, dest: Path, isolated: bool = False) -> None:
    """Copy exactly ``tree``'s objects of ``repo`` into the new repository ``dest`` (one pack; ``isolated``:
    :func:`make_snapshot`'s)."""
    objects = git("rev-list", "--objects", tree, cwd=repo, isolated=isolated).encode("utf-8", "surrogateescape")
    # streamed from the source repository into `index-pack` run in the new one, so git never renames
    # a temporary file across filesystems (a snapshot on a RAM disk, the repository on disk)
    # (the with-block closes the three pipes and reaps git pack-objects, also when index-pack fails)
    with subprocess.Popen(["git", "pack-objects", "-q", "--stdout"], cwd=str(repo), env=git_env(isolated=isolated),
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as packer:
        assert packer.stdin is not None and packer.stdout is not None and packer.stderr is not None
        feeder = threading.Thread(target=_feed, args=(packer.stdin, objects), daemon=True)
        feeder.start()
        indexer = subprocess.run(["git", "index-pack", "--stdin"], cwd=str(dest), env=git_env(isolated=True),
                                 stdin=packer.stdout, capture_output=True)
        packer.stdout.close()
        feeder.join()
        pack_err = packer.stderr.read().decode("utf-8", "replace").strip()
    if packer.returncode != 0 or indexer.returncode != 0:
        err = pack_err or indexer.stderr.decode("utf-8", "replace").strip()
        raise SnapshotError(f"copying the tree's objects failed: {err.splitlines()[-1] if err else 'git error'}")


def _init_snapshot_repo(repo: Path, tree: str, dest: Path, isolated: bool = False) -> None:
    """Make ``dest`` a one-commit repository holding exactly ``tree`` (its objects copied from ``repo``; ``isolated``:
    :func:`make_snapshot`'s) and check it out."""
    git("init", "-q", "--template=", "-b", "main", str(dest), cwd=dest, isolated=True)
    gitdir = dest / ".git"
    (gitdir / "objects" / "pack").mkdir(parents=True, exist_ok=True)
    _copy_objects(repo, tree, dest, isolated)
    info = gitdir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(RAW_ATTRIBUTES)
    env = _checkout(tree, gitdir, dest)
    # stat info for the raw files, while the raw attributes still apply, so `git status` is clean
    git(*_RAW_GIT, "update-index", "-q", "--refresh", cwd=dest, env=env, isolated=True, check=False)
    shutil.rmtree(info)
    name, email = SNAPSHOT_AUTHOR
    who = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": SNAPSHOT_DATE,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": SNAPSHOT_DATE,
    }
    tree = git("write-tree", cwd=dest, isolated=True).strip()  # the tree as checked out (no .homefield/)
    sha = git("commit-tree", "--no-gpg-sign", "-m", SNAPSHOT_MESSAGE, tree, cwd=dest, env=who, isolated=True).strip()
    git("-c", "core.logAllRefUpdates=false", "update-ref", "refs/heads/main", sha, cwd=dest, isolated=True)


def commit_files(dest: Path, rels: Iterable[str]) -> None:
    """Make the snapshot at ``dest`` (:func:`make_snapshot` with ``init_git``, before any agent ran in it: its
    ``.git`` is homefield's) hold the working tree's ``rels`` (relative POSIX paths of regular files) as they
    are now in its one commit: the index takes them (new ones added), the commit is replaced by one of the
    same author, date and message on the new tree, and the objects are packed again from that commit
    alone, so git holds no object of a file it replaced (``git cat-file --batch-all-objects``). An ablation
    writes a variant of a rules file over the snapshot's (aatk49: ``git diff`` showed the rule removed, ``git
    show HEAD:CLAUDE.md`` the whole file). Raises :class:`SnapshotError` when git fails."""
    rels = list(rels)
    info = Path(dest) / ".git" / "info"
    who = {"GIT_AUTHOR_NAME": SNAPSHOT_AUTHOR[0], "GIT_AUTHOR_EMAIL": SNAPSHOT_AUTHOR[1],
           "GIT_AUTHOR_DATE": SNAPSHOT_DATE, "GIT_COMMITTER_NAME": SNAPSHOT_AUTHOR[0],
           "GIT_COMMITTER_EMAIL": SNAPSHOT_AUTHOR[1], "GIT_COMMITTER_DATE": SNAPSHOT_DATE}
    try:
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(RAW_ATTRIBUTES)  # the bytes as they are, as the checkout wrote them
        git(*_RAW_GIT, "update-index", "--add", "--", *rels, cwd=dest, isolated=True)
        tree = git("write-tree", cwd=dest, isolated=True).strip()
        sha = git("commit-tree", "--no-gpg-sign", "-m", SNAPSHOT_MESSAGE, tree, cwd=dest, env=who,
                  isolated=True).strip()
        git("-c", "core.logAllRefUpdates=false", "update-ref", "refs/heads/main", sha, cwd=dest, isolated=True)
        # one pack of what the new commit and the index reach; the old pack (the replaced blobs, tree, commit) goes
        git("-c", "gc.auto=0", "repack", "-a", "-d", "-q", cwd=dest, isolated=True)
        git("prune", "--expire=now", cwd=dest, isolated=True)
    except OSError as exc:
        raise SnapshotError(f"cannot commit {', '.join(rels)} in the snapshot: {exc}") from exc
    finally:
        shutil.rmtree(info, ignore_errors=True)


def copy_tree(src: Path, dest: Path, *, atime_is_mtime: bool = False) -> Path:
    """Copy folder ``src`` to ``dest`` (absent or an empty folder) with symlinks kept as symlinks
    and permission bits kept; returns ``dest``. Every entry is reached by folder descriptor without
    following a link (:func:`pytest_homefield.sandbox.nofollow.copy_tree`): ``src`` may be a tree an
    agent could write to (the pristine snapshot beside the workspaces), and a folder swapped for a
    link meanwhile is copied as the link, never read through. Raises ``FileExistsError`` if ``dest``
    is a non-empty folder, ``OSError`` on copy failures (``EINVAL`` for a fifo, socket or device).
    ``atime_is_mtime``: each file's access time is set to its modification time (the twin runs' copies)."""
    return nofollow.copy_tree(src, dest, atime_is_mtime=atime_is_mtime)


_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def patch_bytes(patch: str) -> bytes:
    """``patch`` as the bytes git reads: UTF-8, its surrogate escapes (``\\udc80``-``\\udcff``, the non-UTF-8
    bytes of a :func:`git` output) written back as those bytes, and any other lone surrogate (a JSON
    ``\\ud800`` in a predictions file or a model's reply: no bytes stand for it) as ``?``. Never raises
    (host29: ``UnicodeEncodeError`` escaped a predictions agent's run as ``agent raised``, unscored ``infra``)."""
    return _LONE_SURROGATE.sub("?", patch).encode("utf-8", "surrogateescape")


def apply_patch(workdir: Path, patch: str) -> None:
    """Apply a ``git diff --binary`` patch (paths ``a/…``/``b/…``) to the files in ``workdir``.

    Works whether or not ``workdir`` is a git repository, and takes nothing from it: git runs with
    :func:`inert_git_env` (no ``.git`` or ``.gitattributes`` of ``workdir`` applies, so the bytes are
    written as the patch says them), never writes through a symlink of ``workdir`` (``git apply``
    refuses a path beyond a symbolic link) nor into a ``.git`` folder. An empty
    patch is a no-op. ``patch`` text that came from :func:`git` may hold surrogate escapes for
    non-UTF-8 bytes; they are written back as the original bytes. Raises :class:`PatchError` with
    git's error lines joined into one line; on error no file is changed (``git apply`` is atomic).
    """
    if not patch.strip():
        return
    with inert_git_env() as env:
        proc = subprocess.run(
            ["git", "apply", "--binary", "--whitespace=nowarn", "-"],
            cwd=str(Path(workdir).resolve()),
            env=env,
            input=patch_bytes(patch),
            capture_output=True,
        )
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith(("error:", "fatal:"))] or lines
        raise PatchError("; ".join(errors)[:500] or f"git apply exited with {proc.returncode}")


#: A command-line tool's closing pointer to its help (GNU's ``Try 'msgfmt --help' for more information.``), which
#: says nothing of what went wrong: the line before it does.
_TRY_HELP = re.compile(r"^Try ['`\"]?[\w.-]+ (?:--help|-h)\b")


def setup_error_line(log_path: Path, *, limit: int = 200) -> str | None:
    """The last non-blank line of a setup log (``setup_cmd``'s stdout and stderr together), stripped and
    cut at ``limit`` characters, for a failed setup's one-line message; when that line only points to a tool's
    ``--help`` (:data:`_TRY_HELP`), the line before it, then that pointer in parentheses (usr46 on
    python-humanize/humanize: ``scripts/generate-translation-binaries.sh`` has no ``#!`` line and brace
    expansion, so under ``sh`` msgfmt got no input, and the mine said only "Try 'msgfmt --help' for more
    information." for 11 candidates). ``None`` when the log is empty or unreadable."""
    try:
        text = Path(log_path).read_text(errors="replace")
    except OSError:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1 and _TRY_HELP.match(lines[-1]):
        return f"{lines[-2]} ({lines[-1]})"[:limit]
    return lines[-1][:limit] if lines else None


def run_setup(
    workdir: Path,
    setup_cmd: str | None,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = 600,
    log_path: Path | None = None,
) -> ProcResult:
    """Run ``setup_cmd`` with ``sh -c`` in ``workdir`` (stdout and stderr together into
    ``log_path`` if given), killing its process group after ``timeout_s`` seconds.

    ``env`` defaults to ``os.environ``. ``setup_cmd`` ``None`` or blank does nothing and returns
    ``ProcResult(exit_code=0, timed_out=False, wall_s=0.0)``. Raises ``FileNotFoundError`` only if
    ``sh`` itself is missing.
    """
    if not setup_cmd or not setup_cmd.strip():
        return ProcResult(exit_code=0, timed_out=False, wall_s=0.0)
    return run_process(
        ["sh", "-c", "exec 2>&1\n" + setup_cmd],
        cwd=workdir,
        env=dict(os.environ if env is None else env),
        timeout_s=timeout_s,
        stdout_path=log_path,
    )
