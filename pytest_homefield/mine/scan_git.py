"""The candidate scan's git side (:mod:`.scan`): its processes and the parsing of their output.

- :func:`stream` runs one ``git log`` and yields its stdout as git writes it, :func:`spooled` once git has
  written all of it (to a temporary file: less CPU when the walk is read whole); :func:`commits` turns a
  walk's stream (``git log -z --raw`` with :data:`LOG_FORMAT`) into :class:`Commit` records, one C-level
  match per commit, with :func:`commits_by_tokens` for a stream of another shape.
- :func:`read_blobs` reads manifest versions through one ``git cat-file --batch``; :func:`diff_lines`
  counts a gold patch's lines through one ``git log --no-walk --stdin --numstat``.
- :func:`open_repo`, :func:`resolve_commit`, :func:`tree_paths` and :func:`shallow_commits` answer the
  scan's questions about the repository.

Which commits become candidates, and why the others do not, is :mod:`.scan_rules`' and :mod:`.scan`'s.
Errors: :class:`~pytest_homefield.errors.ScanError` with git's first stderr line.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
import tempfile
from collections.abc import Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import git

from pytest_homefield.change_id import ChangeIdError, log_ids
from pytest_homefield.errors import ScanError
from pytest_homefield.paths import TEST, Classifier

__all__ = [
    "COMMON_ARGS",
    "blob_sizes",
    "LOG_FORMAT",
    "Commit",
    "commits",
    "commits_by_tokens",
    "diff_lines",
    "first_error_line",
    "open_repo",
    "read_blobs",
    "resolve_commit",
    "shallow_commits",
    "spooled",
    "stream",
    "tree_paths",
]

_RS = b"\x1e"
#: The walk's ``--format``: sha, parents, author date, committer date, raw message: five NUL-terminated header fields.
LOG_FORMAT = "%x1e%H%x00%P%x00%aI%x00%cI%x00%B"
_HEADER_FIELDS = 5
COMMON_ARGS = ["-z", "--no-renames", "--root", "--no-color", "--no-show-signature", "--no-ext-diff",
           "--encoding=UTF-8"]


@dataclass
class Commit:
    """One commit of a walk: ISO 8601 dates, the raw message (trailing newlines stripped), and ``entries``
    the ``--raw`` diff lines and paths, alternating (paths decoded with surrogateescape)."""

    sha: str
    parents: list[str]
    authored_at: str
    committed_at: str
    message: str
    entries: list[str]  # raw diff lines and paths, alternating (paths decoded with surrogateescape)

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()


#: git flushes its output after every commit when it writes to a pipe: some 12,000 writes (and as many
#: reads here) for pytest's 13,000 commits. The stream is read whole, so git may fill its buffer first:
#: reading alone, that halved the reader's CPU (0.065 -> 0.03 s); in a scan, whose parsing keeps the pipe
#: full most of the time, the gain is within the noise (issue 35).
_BUFFERED = {"GIT_FLUSH": "0"}


def stream(
    repo: git.Repo, args: Sequence[str], stdin: IO[bytes] | None = None
) -> Generator[bytes, None, None]:
    """Chunks of ``git log <args>`` stdout as git writes them. Closing the generator early stops
    git; a failing git raises :class:`ScanError` with git's first stderr line."""
    proc = repo.git.log(*args, as_process=True, istream=stdin, env=_BUFFERED)
    finished = False
    try:
        read = proc.stdout.read1
        while chunk := read(1 << 16):
            yield chunk
        finished = True
        proc.wait()
    except git.GitCommandError as exc:
        raise ScanError(f"git log failed: {first_error_line(exc)}") from None
    finally:
        if not finished:
            proc.proc.terminate()
            proc.stdout.close()
            proc.stderr.close()
            proc.proc.wait()


#: Bytes of a spooled walk handed to the parser at a time.
_SPOOL_CHUNK = 1 << 20


def spooled(repo: git.Repo, args: Sequence[str]) -> Generator[bytes, None, None]:
    """Chunks of ``git log <args>`` output, read once git has exited: git writes its whole output
    (``--output``) to a temporary file (some 0.7 KB per commit: 9 MB for pytest's 13,110 non-merge commits),
    which is then read back. For a walk that is read to its end anyway: the parser running while git walks,
    on two cores shared with other work, costs 8-9 % more CPU than after it, and git's file costs git 2-8 %
    more than a pipe: some 3 % less CPU in all, more the higher the load (issue 35; ``benchmarks/scan.py``).
    A failing git raises :class:`ScanError` with git's first stderr line, as :func:`stream` does."""
    with tempfile.TemporaryDirectory(prefix="homefield-walk-") as folder:
        out = Path(folder) / "log"
        try:
            repo.git.log(f"--output={out}", *args)
        except git.GitCommandError as exc:
            raise ScanError(f"git log failed: {first_error_line(exc)}") from None
        with out.open("rb") as f:
            while chunk := f.read(_SPOOL_CHUNK):
                yield chunk


def first_error_line(exc: git.GitCommandError) -> str:
    """git's first stderr line (gitpython wraps it as ``\\n  stderr: '…'``), else the status."""
    text = str(exc.stderr or "").strip()
    text = text.removeprefix("stderr:").strip().strip("'").strip()
    return text.splitlines()[0] if text else f"exit status {exc.status}"


def _records(
    chunks: Iterator[bytes], header_fields: int, entry_tokens: int
) -> Iterator[tuple[list[bytes], list[bytes]]]:
    """Split a ``-z`` log stream into ``(header fields, entry tokens)`` per commit.

    A commit starts with ``\\x1e`` and has ``header_fields`` NUL-terminated fields; every diff
    entry is ``entry_tokens`` NUL-terminated tokens (2 for ``--raw``: status line, path; 1 for
    ``--numstat``). Counting tokens keeps paths and messages that contain ``\\x1e`` intact.
    """
    header: list[bytes] | None = None
    entries: list[bytes] = []
    want_header = 0
    in_entry = 0
    rest = b""
    for chunk in chunks:
        tokens = (rest + chunk).split(b"\0")
        rest = tokens.pop()
        for tok in tokens:
            if want_header:
                header.append(tok)  # type: ignore[union-attr]
                want_header -= 1
            elif in_entry:
                entries.append(tok)
                in_entry -= 1
            elif tok[:1] == _RS:
                if header is not None:
                    yield header, entries
                header, entries, want_header = [tok[1:]], [], header_fields - 1
            else:
                tok = tok.lstrip(b"\n")
                if tok:
                    entries.append(tok)
                    in_entry = entry_tokens - 1
    if header is not None:
        yield header, entries


def commits_by_tokens(chunks: Iterator[bytes]) -> Iterator[Commit]:
    """:func:`commits` token by token (:func:`_records`): for a stream :data:`_COMMIT_RE` does not fit."""
    for header, entries in _records(chunks, _HEADER_FIELDS, entry_tokens=2):
        sha, parents, authored, committed = (h.decode("ascii") for h in header[:4])
        message = header[4].decode("utf-8", "replace").rstrip("\n") if len(header) > 4 else ""
        yield Commit(sha, parents.split(), authored, committed, message,
                     [e.decode("utf-8", "surrogateescape") for e in entries])


#: One commit of the walk's stream (:data:`LOG_FORMAT`, ``-z --raw``): ``\x1e``, the five NUL-terminated
#: header fields, then its entries (``:<modes> <shas> <status>`` NUL path NUL each, after a newline).
#: Its repeats possessive where the ``re`` module has them (3.11): none of them ever gives back what it took (a
#: ``[^\0]*`` is followed by a NUL), and not keeping the means to saves a fifth of the parsing (issue 35).
_COMMIT_RE = re.compile(
    rb"\x1e([^\0]*\0[^\0]*\0[^\0]*\0[^\0]*)\0([^\0]*)\0\n*((?::[^\0]*\0[^\0]*\0)*)".replace(
        b"*", b"*+" if sys.version_info >= (3, 11) else b"*"))
#: Unparsed bytes after which :func:`commits` hands the rest of the stream to :func:`commits_by_tokens`.
_STALL = 1 << 20


def commits(chunks: Iterator[bytes]) -> Iterator[Commit]:
    """The commits of a walk's ``git log`` stream, in stream order. Each is one :data:`_COMMIT_RE` match
    (one C-level match instead of a Python step per NUL-separated token: the token loop was a third of
    a scan's CPU, issue 35), taken when the next record's ``\x1e`` follows it (a message or path may hold
    ``\x1e``; the match is anchored where the previous commit ended). Output the pattern does not fit
    goes to :func:`commits_by_tokens`, which reads any."""
    match = _COMMIT_RE.match
    buf = b""
    pos = 0
    chunks = iter(chunks)
    for chunk in chunks:
        buf = buf[pos:] + chunk if pos < len(buf) else chunk
        pos, end = 0, len(buf)
        while (m := match(buf, pos)) is not None and m.end() < end and buf[m.end()] == 0x1E:
            yield _commit(m)
            pos = m.end()
        if end - pos > _STALL:  # no commit ends within a megabyte: not the shape expected
            yield from commits_by_tokens(itertools.chain([buf[pos:]], chunks))
            return
    while pos < len(buf) and (m := match(buf, pos)) is not None and (m.end() == len(buf) or buf[m.end()] == 0x1E):
        yield _commit(m)
        pos = m.end()
    if pos < len(buf):
        yield from commits_by_tokens(iter([buf[pos:]]))


def _commit(m: re.Match[bytes]) -> Commit:
    head, message, entries = m.groups()  # the four ASCII header fields are decoded at once
    sha, parents, authored, committed = head.decode("ascii").split("\0")
    return Commit(sha, parents.split(), authored, committed, message.decode("utf-8", "replace").rstrip("\n"),
                   entries.decode("utf-8", "surrogateescape").split("\0")[:-1] if entries else [])


@contextlib.contextmanager
def _sha_file(shas: Sequence[str]) -> Iterator[IO[bytes]]:
    """A temporary file of object names, one a line, rewound: stdin for ``--stdin``/``--batch``."""
    with tempfile.TemporaryFile() as f:
        f.write("".join(f"{sha}\n" for sha in shas).encode("ascii"))
        f.seek(0)
        yield f


def read_blobs(repo: git.Repo, shas: Sequence[str]) -> dict[str, bytes]:
    """Contents of blobs by sha, through one ``git cat-file --batch`` process fed from a file (no
    request/response round trips). Missing objects are left out."""
    blobs: dict[str, bytes] = {}
    with _sha_file(shas) as stdin:
        proc = repo.git.cat_file("--batch", "--buffer", as_process=True, istream=stdin)
        try:
            for _ in shas:
                header = proc.stdout.readline().split()
                if len(header) != 3:  # "<sha> missing"
                    continue
                blobs[header[0].decode("ascii")] = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)
            proc.wait()
        except git.GitCommandError as exc:
            raise ScanError(f"git cat-file failed: {first_error_line(exc)}") from None
    return blobs


def blob_sizes(repo: git.Repo, shas: Sequence[str]) -> dict[str, int]:
    """The size in bytes of each blob of ``shas``, through one ``git cat-file --batch-check`` process fed from a file
    (no blob is read). Missing objects and objects that are no blob (a submodule's commit) are left out."""
    with _sha_file(shas) as stdin:
        try:
            out = str(repo.git.cat_file("--batch-check", "--buffer", istream=stdin))
        except git.GitCommandError as exc:
            raise ScanError(f"git cat-file failed: {first_error_line(exc)}") from None
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            sizes[parts[0]] = int(parts[2])
    return sizes


def diff_lines(repo: git.Repo, shas: list[str], classifier: Classifier) -> dict[str, int]:
    """Filter 11: added + removed lines of non-test files per commit, one ``git log`` process."""
    if not shas:
        return {}
    args = [*COMMON_ARGS, "--no-walk=unsorted", "--stdin", "--numstat", "--diff-merges=first-parent",
            "--format=%x1e%H"]
    counts: dict[str, int] = {}
    with _sha_file(shas) as stdin:
        for header, entries in _records(stream(repo, args, stdin), 1, entry_tokens=1):
            total = 0
            for entry in entries:
                added, removed, path = entry.split(b"\t", 2)
                if classifier.classify(path.decode("utf-8", "surrogateescape")) == TEST:
                    continue
                if added != b"-":
                    total += int(added) + int(removed)
            counts[header[0].decode("ascii")] = total
    return counts


def patch_ids(repo: git.Repo, shas: list[str],
              leave_out: Mapping[str, Collection[str]] | None = None) -> dict[str, str]:
    """Filter 12: each commit's change id (:mod:`pytest_homefield.change_id`: the ``git patch-id --stable`` of its
    diff against its first parent without context lines, ``-U0``, line numbers and white space ignored; the rule a
    run's header asks too), by sha; a commit whose diff is empty has none. ``leave_out`` maps a sha to repository
    paths whose file diffs are no part of its id (a candidate's docs files). Two git processes: ``git log
    --no-walk --stdin -p`` spooled to a file, read by ``git patch-id``."""
    if not shas:
        return {}
    args = ["--no-walk=unsorted", "--stdin", "-p", "--unified=0", "--binary", "--diff-merges=first-parent",
            "--no-renames", "--root", "--no-color", "--no-ext-diff", "--no-show-signature", "--format=commit %H"]
    with tempfile.TemporaryDirectory(prefix="homefield-patch-ids-") as folder, _sha_file(shas) as stdin:
        out = Path(folder) / "log"
        try:
            repo.git.log(f"--output={out}", *args, istream=stdin)
            return log_ids(out, leave_out)
        except git.GitCommandError as exc:
            raise ScanError(f"git patch-id failed: {first_error_line(exc)}") from None
        except ChangeIdError as exc:
            raise ScanError(str(exc)) from None


def open_repo(repo_path: Path) -> git.Repo:
    try:
        return git.Repo(repo_path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ScanError(f"not a git repository: {repo_path}") from None


def resolve_commit(repo: git.Repo, rev: str) -> str:
    try:
        return str(repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}"))
    except git.GitCommandError:
        raise ScanError(f"unknown revision or no commits: {rev}") from None


def tree_paths(repo: git.Repo, head: str) -> list[str]:
    """Every file path of ``head``'s tree (one ``git ls-tree``): tells the classifier which test-named
    folders hold tests (:class:`.classify.Classifier`)."""
    try:
        out: str = repo.git.ls_tree("-r", "-z", "--name-only", "--full-tree", head)
    except git.GitCommandError as exc:
        raise ScanError(f"git ls-tree failed: {first_error_line(exc)}") from None
    return [p for p in out.split("\x00") if p]


def shallow_commits(repo: git.Repo) -> set[str]:
    path = Path(repo.git_dir) / "shallow"
    return set(path.read_text().split()) if path.exists() else set()
