"""Candidate scan: which commits of a repository's history could become tasks.

One streaming pass over history reads ``git log -z --raw --no-renames`` incrementally (gitpython,
``as_process=True``): one process for the whole walk, never one per commit. Renames arrive as a
delete plus an add; paths are raw bytes (non-ASCII and spaces are safe); binary files, empty
commits need nothing special; the root commit is dropped (``root_commit``).

The walk (``rev``, default ``HEAD``):

- default: every non-merge commit reachable from ``rev``; its change is the diff to its parent.
- ``first_parent``: only the mainline (the first-parent chain from ``rev``).
- ``merges``: also every merge commit *on the first-parent chain* as one candidate (mode
  ``"merge"``) whose change is its diff against its first parent: a whole merged pull request.
  Merges off the mainline (e.g. syncing main into a feature branch) are never candidates.
  With ``first_parent`` that is one process; without it, a second streaming process walks the
  mainline merges and the two streams are merged newest first by committer date.

Filters, in the order they are applied; the first that fails names the reason (docs/contracts.md §7):

1. ``outside_dates``: the AUTHOR date is before ``since`` or after ``until``. Commits whose
   COMMITTER date is before ``since`` are not walked at all (git stops there; a commit is
   committed after it was authored, so they cannot be authored after ``since``) and are not counted.
2. ``max_commits`` then stops the walk: it caps the commits inside the date window, newest first.
3. ``outside_paths``: no changed file matches any ``paths`` glob (:mod:`.classify` glob rules).
4. ``docs_only``: the commit changed files and all of them are docs; ``config_only``: all of them are
   tooling configuration (CI, ``.gitignore``, linters; :mod:`.classify`) or docs, at least one config.
5. ``no_test_change``: no runnable test module was added or modified. A commit that only deletes
   tests, or only changes test support files (fixtures, data, helpers, ``conftest.py``), has no
   test of its own to verify. Empty commits land here.
6. ``dependency_change``: a dependency manifest or lock file changed that is not one of the
   content-checked manifests (``requirements*.txt``, ``uv.lock``, ``go.sum``, …), or a submodule
   pointer moved. With ``env`` ``uv`` (each commit tested in its own environment) the top-level
   Python declarations (:func:`pytest_homefield.envs.declaration.is_declaration_file`) go to the
   candidate's ``dependency_files`` instead; other manifests and submodules still drop it.
7. ``no_source_change``: no source file changed (content-checked manifests count as source here).
8. ``too_many_source_files``: more than ``max_source_files`` source files (deleted ones count).
9. ``message_too_short``: fewer than ``min_message_words`` words in the prompt: the cleaned message
   (:func:`.classify.message_words`), or for a merge the prompt composed from the PR title and the
   merged branch's commits (:mod:`.merge_prompt`; one ``git log`` per merge that passed 1-8). A prompt
   that names an identifier (:func:`.prompt.names_identifier`: "Add subfactorial()") is long enough.
   ``root_commit``: a commit that passed 3-9 but has no parent (the repository's first commit)
   starts from an empty tree: there is no prior state of the code for an agent to change.
10. ``dependency_change`` again, only for commits that passed 1-9 and touched a content-checked
    manifest (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``package.json``, ``Cargo.toml``,
    ``composer.json``): both versions are read (one ``git cat-file --batch`` process for the whole
    scan) and their dependency tables compared; if unchanged, the manifest is a source file. With
    ``env`` ``uv`` a changed one is kept as a candidate and listed in ``dependency_files``.
11. ``diff_too_large``: more than ``max_diff_lines`` added + removed lines in the non-test files
    (the gold patch; binary files count 0). Counted only when ``max_diff_lines`` is set, for the
    commits that passed 1-10, by one more ``git log --no-walk --stdin --numstat`` process.

A shallow clone's boundary commits are skipped (their parents are missing): they are counted in
``ScanResult.shallow_skipped`` and the summary says so (``git fetch --unshallow`` to mine them).
Paths under ``.homefield/`` (homefield's own records, if committed) are not part of any change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import itertools
import re
import tempfile
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

import git

from pytest_homefield.envs.declaration import is_declaration_file
from pytest_homefield.errors import ScanError
from pytest_homefield.mine.classify import dependency_tables, message_words
from pytest_homefield.mine.merge_prompt import branch_messages, compose_merge_prompt
from pytest_homefield.mine.prompt import clean_prompt, count_words, names_identifier
from pytest_homefield.paths import CONFIG, CONTENT_CHECKED, DOCS, SOURCE, TEST, Classifier, compile_globs
from pytest_homefield.sandbox.snapshot import HOMEFIELD_DIR
from pytest_homefield.settings import ScanSettings, join_flags

__all__ = [
    "REASONS",
    "ScanOptions",
    "Candidate",
    "Rejected",
    "ScanResult",
    "scan",
    "format_reason",
    "format_scan",
]

#: The scan's reasons (docs/contracts.md §7), in the order the filters apply.
REASONS = (
    "outside_dates",
    "outside_paths",
    "docs_only",
    "config_only",
    "no_test_change",
    "dependency_change",
    "no_source_change",
    "too_many_source_files",
    "message_too_short",
    "root_commit",
    "diff_too_large",
)

_RS = b"\x1e"
# sha, parents, author date, committer date, raw message: five NUL-terminated header fields.
_LOG_FORMAT = "%x1e%H%x00%P%x00%aI%x00%cI%x00%B"
_HEADER_FIELDS = 5
_COMMON = ["-z", "--no-renames", "--root", "--no-color", "--no-show-signature", "--no-ext-diff",
           "--encoding=UTF-8"]


@dataclass(kw_only=True)
class ScanOptions(ScanSettings):
    """What to walk and which filters to apply: the filters of
    :class:`pytest_homefield.settings.ScanSettings` (their fields, types and defaults are declared
    there, once) plus ``rev``, where the walk starts. Keyword arguments only."""

    rev: str = "HEAD"

    @classmethod
    def from_settings(cls, settings: ScanSettings, *, rev: str = "HEAD") -> ScanOptions:
        """Every :class:`ScanSettings` field of ``settings`` (e.g. the resolved
        :class:`pytest_homefield.settings.Settings`); ``paths`` entries are split at commas."""
        values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(ScanSettings)}
        values["paths"] = join_flags(values["paths"])
        values["test_globs"] = list(values["test_globs"])
        return cls(**values, rev=rev)


@dataclass
class Candidate:
    """A commit that passed every scan filter: to be verified by running its tests.

    ``parent`` is the first parent (the empty tree's id for a root commit). ``mode`` is
    ``"commit"`` or ``"merge"``. Dates are ISO 8601 with offset. File lists hold repository paths
    by class (:mod:`.classify`), each including deleted files: ``test_files`` every test-side file
    (modules, fixtures, helpers, conftest); ``runnable_tests`` the test modules added or modified,
    i.e. the files whose tests verification runs; ``dependency_files`` the manifests whose
    dependency tables changed (empty unless ``env`` is ``uv``: otherwise such a commit is rejected);
    ``deleted_files`` every deleted path of any class. ``diff_lines``: added + removed lines of the
    non-test files, ``None`` unless ``max_diff_lines`` was set. ``prompt``: the task prompt the agent
    would get (:func:`~pytest_homefield.mine.prompt.clean_prompt`, or for a merge
    :func:`~pytest_homefield.mine.merge_prompt.compose_merge_prompt`), with ``prompt_sources``
    (merges only, else ``None``).
    """

    commit: str
    parent: str
    mode: str
    authored_at: str
    committed_at: str
    subject: str
    message: str
    source_files: list[str] = field(default_factory=list)
    test_files: list[str] = field(default_factory=list)
    runnable_tests: list[str] = field(default_factory=list)
    docs_files: list[str] = field(default_factory=list)
    config_files: list[str] = field(default_factory=list)
    dependency_files: list[str] = field(default_factory=list)
    deleted_files: list[str] = field(default_factory=list)
    diff_lines: int | None = None
    prompt: str = ""
    prompt_sources: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON primitives only, one line of ``candidates.jsonl``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Candidate:
        """Inverse of :meth:`to_dict`; unknown keys are ignored, ``KeyError`` on a missing field."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class Rejected:
    """A commit a filter turned down: ``reason`` is one of :data:`REASONS`, ``detail`` one line."""

    commit: str
    subject: str
    authored_at: str
    reason: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON primitives only."""
        return dataclasses.asdict(self)


@dataclass
class ScanResult:
    """Outcome of :func:`scan`. ``candidates`` and ``rejected`` are newest first (walk order);
    ``counts`` maps each reason that occurred to its number of commits, in :data:`REASONS` order;
    ``examined`` is how many commits were classified (candidates + rejected); ``capped`` says the
    walk stopped at ``max_commits``."""

    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    examined: int = 0
    capped: bool = False
    shallow_skipped: int = 0
    #: when the date window held no commit: the newest commit's author date (ISO 8601), to say so
    newest_authored: str | None = None


# --- the walk ----------------------------------------------------------------------------------

@dataclass
class _Commit:
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


def _stream(
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
        raise ScanError(f"git log failed: {_first_error_line(exc)}") from None
    finally:
        if not finished:
            proc.proc.terminate()
            proc.stdout.close()
            proc.stderr.close()
            proc.proc.wait()


def _first_error_line(exc: git.GitCommandError) -> str:
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


def _commits_by_tokens(chunks: Iterator[bytes]) -> Iterator[_Commit]:
    """:func:`_commits` token by token (:func:`_records`): for a stream :data:`_COMMIT_RE` does not fit."""
    for header, entries in _records(chunks, _HEADER_FIELDS, entry_tokens=2):
        sha, parents, authored, committed = (h.decode("ascii") for h in header[:4])
        message = header[4].decode("utf-8", "replace").rstrip("\n") if len(header) > 4 else ""
        yield _Commit(sha, parents.split(), authored, committed, message,
                      [e.decode("utf-8", "surrogateescape") for e in entries])


#: One commit of the walk's stream (:data:`_LOG_FORMAT`, ``-z --raw``): ``\x1e``, the five NUL-terminated
#: header fields, then its entries (``:<modes> <shas> <status>`` NUL path NUL each, after a newline).
_COMMIT_RE = re.compile(rb"\x1e([^\0]*)\0([^\0]*)\0([^\0]*)\0([^\0]*)\0([^\0]*)\0\n*((?::[^\0]*\0[^\0]*\0)*)")
#: Unparsed bytes after which :func:`_commits` hands the rest of the stream to :func:`_commits_by_tokens`.
_STALL = 1 << 20


def _commits(chunks: Iterator[bytes]) -> Iterator[_Commit]:
    """The commits of a walk's ``git log`` stream, in stream order. Each is one :data:`_COMMIT_RE` match
    (one C-level match instead of a Python step per NUL-separated token: the token loop was a third of
    a scan's CPU, issue 35), taken when the next record's ``\x1e`` follows it (a message or path may hold
    ``\x1e``; the match is anchored where the previous commit ended). Output the pattern does not fit
    goes to :func:`_commits_by_tokens`, which reads any."""
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
            yield from _commits_by_tokens(itertools.chain([buf[pos:]], chunks))
            return
    while pos < len(buf) and (m := match(buf, pos)) is not None and (m.end() == len(buf) or buf[m.end()] == 0x1E):
        yield _commit(m)
        pos = m.end()
    if pos < len(buf):
        yield from _commits_by_tokens(iter([buf[pos:]]))


def _commit(m: re.Match[bytes]) -> _Commit:
    sha, parents, authored, committed, message, entries = m.groups()
    return _Commit(sha.decode("ascii"), parents.decode("ascii").split(), authored.decode("ascii"),
                   committed.decode("ascii"), message.decode("utf-8", "replace").rstrip("\n"),
                   entries.decode("utf-8", "surrogateescape").split("\0")[:-1] if entries else [])


def _walk_args(head: str, options: ScanOptions, since: datetime | None) -> list[list[str]]:
    """``git log`` argument lists, one per streaming process."""
    base = [*_COMMON, "--raw", "--no-abbrev", f"--format={_LOG_FORMAT}"]
    if since is not None:
        base.append(f"--since={since.isoformat()}")
    if options.first_parent:
        walk = ["--first-parent", "--diff-merges=first-parent"] if options.merges else [
            "--first-parent", "--no-merges"]
        return [[*base, *walk, head, "--"]]
    streams = [[*base, "--no-merges", head, "--"]]
    if options.merges:
        streams.append([*base, "--first-parent", "--merges", "--diff-merges=first-parent", head, "--"])
    return streams


def _committed_ts(commit: _Commit) -> float:
    return datetime.fromisoformat(commit.committed_at).timestamp()


# --- options -----------------------------------------------------------------------------------

def _parse_when(name: str, value: str, end: bool) -> tuple[datetime, bool]:
    """``(instant, inclusive)``; a date-only ``until`` means before the next day starts."""
    text = value.strip()
    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return (day + timedelta(days=1), False) if end else (day, True)
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name}: not a date (YYYY-MM-DD) or ISO 8601 time: {value!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when, True


def _check_options(options: ScanOptions) -> None:
    for name in ("max_commits", "max_source_files", "max_diff_lines"):
        value = getattr(options, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise ValueError(f"{name}: expected a non-negative integer or none, got {value!r}")
    words = options.min_message_words
    if not isinstance(words, int) or isinstance(words, bool) or words < 0:
        raise ValueError(f"min_message_words: expected a non-negative integer, got {words!r}")


# --- one commit --------------------------------------------------------------------------------

class _Change:
    """A commit's changed files by class, before the content checks (a plain class: one per commit
    of the walk, and a dataclass's ten list factories were a tenth of :func:`_split_change`)."""

    __slots__ = ("tests", "runnable", "sources", "docs", "config", "deps", "submodules", "checked", "deleted",
                 "all_paths")

    def __init__(self) -> None:
        self.tests: list[str] = []
        self.runnable: list[str] = []
        self.sources: list[str] = []
        self.docs: list[str] = []
        self.config: list[str] = []
        self.deps: list[str] = []
        self.submodules: list[str] = []
        self.checked: list[tuple[str, str]] = []  # (path, raw diff line)
        self.deleted: list[str] = []
        self.all_paths: list[str] = []


#: Where :func:`_split_change` files a path (:func:`_slot`).
_SKIP, _RUNNABLE_TEST, _TEST, _SOURCE, _DOCS, _CONFIG, _CHECKED_CONFIG, _CHECKED_SOURCE, _DEPS = range(9)


def _slot(path: str, classifier: Classifier) -> int:
    """Which lists of a :class:`_Change` ``path`` goes to (a submodule aside): worked out once per path
    of a scan, since most paths recur (45,170 changed files, 4,696 paths in pytest's history)."""
    if path.startswith(HOMEFIELD_DIR) and (path == HOMEFIELD_DIR or path.startswith(HOMEFIELD_DIR + "/")):
        return _SKIP  # homefield's own records, committed by mistake: never part of a candidate
    cls, runnable = classifier.info(path)
    if cls == TEST:
        return _RUNNABLE_TEST if runnable else _TEST
    if cls == SOURCE:
        return _SOURCE
    if cls == DOCS:
        return _DOCS
    if cls == CONFIG:
        return _CONFIG
    name = path.rsplit("/", 1)[-1]
    if name in CONTENT_CHECKED:
        # provisionally; filter 10 decides. setup.cfg's other sections configure tools (flake8,
        # pytest, coverage): never source (issue 35)
        return _CHECKED_CONFIG if name == "setup.cfg" else _CHECKED_SOURCE
    return _DEPS


def _split_change(entries: list[str], classifier: Classifier, slots: dict[str, int] | None = None) -> _Change:
    """The commit's ``(raw line, path)`` entries by class; ``slots`` (the scan's :func:`_slot` of each
    path seen) is read and added to."""
    change = _Change()
    if slots is None:
        slots = {}
    all_paths, deleted_paths = change.all_paths, change.deleted
    for raw, path in zip(entries[0:-1:2], entries[1::2], strict=True):  # (raw line, path) pairs
        slot = slots.get(path)
        if slot is None:
            slot = slots[path] = _slot(path, classifier)
        if slot == _SKIP:
            continue
        all_paths.append(path)
        deleted = raw[-1:] == "D"
        if deleted:
            deleted_paths.append(path)
        if "160000" in raw[:15]:  # a submodule pointer: a dependency, not code
            change.deps.append(path)
            change.submodules.append(path)
        elif slot == _RUNNABLE_TEST:
            change.tests.append(path)
            if not deleted:
                change.runnable.append(path)
        elif slot == _SOURCE:
            change.sources.append(path)
        elif slot == _DOCS:
            change.docs.append(path)
        elif slot == _TEST:
            change.tests.append(path)
        elif slot == _CONFIG:
            change.config.append(path)
        elif slot == _DEPS:
            change.deps.append(path)
        else:
            change.checked.append((path, raw))
            (change.config if slot == _CHECKED_CONFIG else change.sources).append(path)
    return change


def _files(n: int, kind: str) -> str:
    return f"{n} {kind} file{'' if n == 1 else 's'}"


def _some(paths: Sequence[str], n: int = 3) -> list[str]:
    return list(paths[:n]) + ([f"… {len(paths) - n} more"] if len(paths) > n else [])


def _no_test_detail(change: _Change, classifier: Classifier) -> str:
    """Why no runnable test module is among the changes, in words that do not contradict the counts."""
    if not change.all_paths:
        return "empty commit"
    if not change.tests:
        return "no test file changed"
    deleted = [p for p in change.tests if p in change.deleted and classifier.is_test_module(p)]
    support = [p for p in change.tests if p not in deleted]
    parts = []
    if support:
        parts.append(f"only test support changed ({', '.join(_some(support))}), which names no tests")
    if deleted:
        parts.append(f"test modules only deleted ({', '.join(_some(deleted))})")
    return "; ".join(parts)


def _cheap_reason(commit: _Commit, change: _Change, options: ScanOptions,
                  in_paths: Any, classifier: Classifier) -> tuple[str, str] | None:
    """Filters 3-9 of the module docstring: ``(reason, detail)`` or ``None``."""
    if options.paths and not any(in_paths(p) for p in change.all_paths):
        return "outside_paths", f"none of {len(change.all_paths)} changed files matches paths"
    if change.all_paths and len(change.docs) == len(change.all_paths):
        return "docs_only", _files(len(change.docs), "docs")
    if change.config and len(change.docs) + len(change.config) == len(change.all_paths):
        return "config_only", ", ".join(_some(change.config)) + (
            f" and {_files(len(change.docs), 'docs')}" if change.docs else "")
    if not change.runnable:
        return "no_test_change", _no_test_detail(change, classifier)
    # with uv, only the top-level Python declarations are installed: other manifests still block
    blocking = [d for d in change.deps if d in change.submodules or not is_declaration_file(d)] \
        if options.env == "uv" else change.deps
    if blocking:
        return "dependency_change", ", ".join(blocking[:5]) + (" …" if len(blocking) > 5 else "")
    if not change.sources:
        parts = [_files(len(change.tests), "test"), _files(len(change.docs), "docs")]
        if change.config:
            parts.append(_files(len(change.config), "config"))
        return "no_source_change", ", ".join(parts[:-1]) + " and " + parts[-1]
    limit = options.max_source_files
    if limit is not None and len(change.sources) > limit:
        return "too_many_source_files", f"{len(change.sources)} source files > {limit}"
    if options.min_message_words and len(commit.parents) < 2:  # merges: see _compose_merge_prompts
        words = message_words(commit.message)
        if words < options.min_message_words and not names_identifier(commit.message):
            return "message_too_short", f"{words} words < {options.min_message_words}"
    return None


@contextlib.contextmanager
def _sha_file(shas: Sequence[str]) -> Iterator[IO[bytes]]:
    """A temporary file of object names, one a line, rewound: stdin for ``--stdin``/``--batch``."""
    with tempfile.TemporaryFile() as f:
        f.write("".join(f"{sha}\n" for sha in shas).encode("ascii"))
        f.seek(0)
        yield f


def _read_blobs(repo: git.Repo, shas: Sequence[str]) -> dict[str, bytes]:
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
            raise ScanError(f"git cat-file failed: {_first_error_line(exc)}") from None
    return blobs


_UNREADABLE = object()


def _manifests_changed(repo: git.Repo, checks: list[list[tuple[str, str]]]) -> list[list[str]]:
    """Filter 10 for several commits at once: for each commit's content-checked manifests (path,
    raw diff line), the paths whose dependency tables differ. Each blob is read and parsed once (a
    blob is usually the new side of one commit and the old side of the next); an unreadable or
    unparsable version counts as a change (the safe answer)."""
    commits = [[(path, *raw.split()[2:4]) for path, raw in check]
               for check in checks]
    wanted = sorted({sha for files in commits for _, *shas in files for sha in shas if sha.strip("0")})
    blobs = _read_blobs(repo, wanted) if wanted else {}
    tables: dict[tuple[str, str], Any] = {}
    memo: dict[Any, Any] = {}  # pyproject tables by the text of the part read, setup.py statements by chunk

    def tables_of(path: str, sha: str) -> Any:
        key = (path.rsplit("/", 1)[-1], sha)
        if key not in tables:
            present = not sha.strip("0") or sha in blobs
            try:
                tables[key] = dependency_tables(path, blobs.get(sha), memo=memo) if present else _UNREADABLE
            except ValueError:
                tables[key] = _UNREADABLE
        return tables[key]

    result = []
    for files in commits:
        changed = []
        for path, old, new in files:
            before, after = tables_of(path, old), tables_of(path, new)
            if before is _UNREADABLE or after is _UNREADABLE or before != after:
                changed.append(path)
        result.append(changed)
    return result


def _diff_lines(repo: git.Repo, shas: list[str], classifier: Classifier) -> dict[str, int]:
    """Filter 11: added + removed lines of non-test files per commit, one ``git log`` process."""
    if not shas:
        return {}
    args = [*_COMMON, "--no-walk=unsorted", "--stdin", "--numstat", "--diff-merges=first-parent",
            "--format=%x1e%H"]
    counts: dict[str, int] = {}
    with _sha_file(shas) as stdin:
        for header, entries in _records(_stream(repo, args, stdin), 1, entry_tokens=1):
            total = 0
            for entry in entries:
                added, removed, path = entry.split(b"\t", 2)
                if classifier.classify(path.decode("utf-8", "surrogateescape")) == TEST:
                    continue
                if added != b"-":
                    total += int(added) + int(removed)
            counts[header[0].decode("ascii")] = total
    return counts


# --- entry point -------------------------------------------------------------------------------

def _open_repo(repo_path: Path) -> git.Repo:
    try:
        return git.Repo(repo_path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise ScanError(f"not a git repository: {repo_path}") from None


def _resolve(repo: git.Repo, rev: str) -> str:
    try:
        return str(repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}"))
    except git.GitCommandError:
        raise ScanError(f"unknown revision or no commits: {rev}") from None


def _tree_paths(repo: git.Repo, head: str) -> list[str]:
    """Every file path of ``head``'s tree (one ``git ls-tree``): tells the classifier which test-named
    folders hold tests (:class:`.classify.Classifier`)."""
    try:
        out: str = repo.git.ls_tree("-r", "-z", "--name-only", "--full-tree", head)
    except git.GitCommandError as exc:
        raise ScanError(f"git ls-tree failed: {_first_error_line(exc)}") from None
    return [p for p in out.split("\x00") if p]


def _shallow(repo: git.Repo) -> set[str]:
    path = Path(repo.git_dir) / "shallow"
    return set(path.read_text().split()) if path.exists() else set()


def scan(repo_path: Path, options: ScanOptions) -> ScanResult:
    """Walk the history of the repository at ``repo_path`` and sort its commits into candidates
    and rejected commits (module docstring: walk, filters and their order).

    Git processes: the streaming walk (two with ``merges`` and no ``first_parent``), then, only if
    some surviving commit needs them, one ``cat-file --batch`` for the manifest contents and, with
    ``max_diff_lines``, one ``log --no-walk --stdin --numstat``; never one per commit.
    Raises ``ValueError`` (one line naming the option) for a bad option value and
    :class:`ScanError` for a path that is not a git repository, an unknown ``rev`` or a git failure.
    """
    _check_options(options)
    since = _parse_when("since", options.since, end=False)[0] if options.since else None
    until = _parse_when("until", options.until, end=True) if options.until else None
    in_paths = compile_globs(options.paths)
    repo = _open_repo(Path(repo_path))
    try:
        head = _resolve(repo, options.rev)
        classifier = Classifier(options.test_globs, tree=_tree_paths(repo, head))
        outcomes: list[Candidate | Rejected] = []
        checks: dict[int, list[tuple[str, str]]] = {}  # outcome index -> manifests to read
        capped = False
        in_window = 0
        shallow = _shallow(repo)
        shallow_skipped = 0
        slots: dict[str, int] = {}  # _split_change's class of each path seen
        with contextlib.ExitStack() as stack:
            streams = [_commits(stack.enter_context(contextlib.closing(_stream(repo, args))))
                       for args in _walk_args(head, options, since)]
            walk = streams[0] if len(streams) == 1 else heapq.merge(
                *streams, key=_committed_ts, reverse=True)
            for commit in walk:
                if not commit.parents and commit.sha in shallow:
                    shallow_skipped += 1
                    continue
                detail = _outside_dates(commit, options, since, until)
                if detail:
                    outcomes.append(Rejected(commit.sha, commit.subject, commit.authored_at,
                                             "outside_dates", detail))
                    continue
                if options.max_commits is not None and in_window >= options.max_commits:
                    capped = True
                    break
                in_window += 1
                outcome, checked = _judge(commit, classifier, options, in_paths, slots)
                if checked:
                    checks[len(outcomes)] = checked
                outcomes.append(outcome)
        _compose_prompts(repo, head, outcomes, checks, options.min_message_words)
        _filter_manifests(repo, outcomes, checks, keep=options.env == "uv")
        if options.max_diff_lines is not None:
            _filter_diff_lines(repo, outcomes, classifier, options.max_diff_lines)
        newest = str(repo.git.log("-1", "--format=%aI", head)).strip() if not outcomes and since else None
    finally:
        repo.close()
    result = ScanResult(examined=len(outcomes), capped=capped, shallow_skipped=shallow_skipped,
                        newest_authored=newest or None)
    for outcome in outcomes:
        if isinstance(outcome, Candidate):
            result.candidates.append(outcome)
        else:
            result.rejected.append(outcome)
            result.counts[outcome.reason] = result.counts.get(outcome.reason, 0) + 1
    result.counts = {r: result.counts[r] for r in REASONS if r in result.counts}
    return result


def _outside_dates(commit: _Commit, options: ScanOptions, since: datetime | None,
                   until: tuple[datetime, bool] | None) -> str:
    """Filter 1: why the author date is outside the window, or ``""``."""
    if since is None and until is None:
        return ""
    authored = datetime.fromisoformat(commit.authored_at)
    if since is not None and authored < since:
        return f"authored {commit.authored_at}, before since {options.since}"
    if until is not None and (authored > until[0] if until[1] else authored >= until[0]):
        return f"authored {commit.authored_at}, after until {options.until}"
    return ""


def _judge(commit: _Commit, classifier: Classifier, options: ScanOptions, in_paths: Any,
           slots: dict[str, int] | None = None) -> tuple[Candidate | Rejected, list[tuple[str, str]]]:
    """Filters 3-9 for one commit; a candidate comes with the manifests filter 10 must read. ``slots``:
    see :func:`_split_change`."""
    change = _split_change(commit.entries, classifier, slots)
    verdict = _cheap_reason(commit, change, options, in_paths, classifier)
    if verdict is not None:
        return Rejected(commit.sha, commit.subject, commit.authored_at, *verdict), []
    if not commit.parents:
        return Rejected(commit.sha, commit.subject, commit.authored_at, "root_commit",
                        "the first commit: no parent state to start from"), []
    parent = commit.parents[0]
    candidate = Candidate(
        commit=commit.sha,
        parent=parent,
        mode="merge" if len(commit.parents) > 1 else "commit",
        authored_at=commit.authored_at,
        committed_at=commit.committed_at,
        subject=commit.subject,
        message=commit.message,
        source_files=change.sources,
        test_files=change.tests,
        runnable_tests=change.runnable,
        docs_files=change.docs,
        config_files=change.config,
        dependency_files=list(change.deps),
        deleted_files=change.deleted,
    )
    return candidate, change.checked


def _compose_prompts(repo: git.Repo, head: str, outcomes: list[Candidate | Rejected],
                     checks: dict[int, list[tuple[str, str]]], min_words: int) -> None:
    """Filter 9 for merges, in place: every candidate gets its prompt; a merge candidate's is composed
    from the PR title and its branch's commits (one ``git log`` for all of them), and it is rejected as
    ``message_too_short`` (its manifest check dropped) when that prompt has fewer than ``min_words``
    words."""
    merges = [(o.commit, o.parent) for o in outcomes if isinstance(o, Candidate) and o.mode == "merge"]
    try:
        brought = branch_messages(repo.git, head, merges)
    except git.GitCommandError as exc:
        raise ScanError(f"git log failed: {_first_error_line(exc)}") from None
    for i, outcome in enumerate(outcomes):
        if not isinstance(outcome, Candidate):
            continue
        if outcome.mode != "merge":
            outcome.prompt = clean_prompt(outcome.message)
            continue
        messages = brought[outcome.commit]
        composed = compose_merge_prompt(outcome.message, messages)
        outcome.prompt, outcome.prompt_sources = composed.text, composed.sources
        words = count_words(composed.text)
        if min_words and words < min_words and not names_identifier(composed.text):
            checks.pop(i, None)
            outcomes[i] = Rejected(outcome.commit, outcome.subject, outcome.authored_at, "message_too_short",
                                   f"{words} words < {min_words} (title, {len(messages)} branch commits)")


def _filter_manifests(repo: git.Repo, outcomes: list[Candidate | Rejected],
                      checks: dict[int, list[tuple[str, str]]], *, keep: bool = False) -> None:
    """Filter 10, in place: candidates whose content-checked manifests changed dependencies are
    rejected, or with ``keep`` (``env`` ``uv``) given those manifests as ``dependency_files``."""
    if not checks:
        return
    for i, changed in zip(checks, _manifests_changed(repo, list(checks.values())), strict=True):
        if changed:
            c = outcomes[i]
            if keep and isinstance(c, Candidate) and all(is_declaration_file(p) for p in changed):
                c.dependency_files = sorted({*c.dependency_files, *changed})
                continue
            outcomes[i] = Rejected(c.commit, c.subject, c.authored_at, "dependency_change", ", ".join(changed))


def _filter_diff_lines(repo: git.Repo, outcomes: list[Candidate | Rejected], classifier: Classifier,
                       limit: int) -> None:
    """Filter 11, in place: sets ``diff_lines`` on candidates and rejects those over ``limit``."""
    lines = _diff_lines(repo, [o.commit for o in outcomes if isinstance(o, Candidate)], classifier)
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, Candidate):
            outcome.diff_lines = lines.get(outcome.commit, 0)
            if outcome.diff_lines > limit:
                outcomes[i] = Rejected(outcome.commit, outcome.subject, outcome.authored_at,
                                       "diff_too_large", f"{outcome.diff_lines} lines > {limit}")


# --- rendering ---------------------------------------------------------------------------------

def shallow_note(n: int) -> str:
    """The note for ``n`` skipped shallow-clone boundary commits."""
    return (f"{n} shallow-clone boundary commit{'s' if n != 1 else ''} skipped (the parent is not in this clone; "
            "git fetch --unshallow to mine it)")


def format_reason(reason: str) -> str:
    """A reason as printed: underscores become spaces (``no_test_change`` → ``no test change``)."""
    return reason.replace("_", " ")


def format_scan(result: ScanResult, verbose: bool = False) -> str:
    """The ``--list-candidates`` text: one line per candidate (12-character sha, author date,
    source and test file counts, subject), with ``verbose`` one line per rejected commit too (sha,
    author date, reason, subject, detail), then a summary line such as ``12 candidates from 340 commits;
    rejected: no test change 200, docs only 40``. No trailing newline."""
    lines = [
        f"{c.commit[:12]} {c.authored_at[:10]} {len(c.source_files):>3} source "
        f"{len(c.test_files):>3} test  {c.subject}"
        for c in result.candidates
    ]
    if verbose:
        width = max((len(format_reason(r.reason)) for r in result.rejected), default=0)
        lines += [
            f"{r.commit[:12]} {r.authored_at[:10]} {format_reason(r.reason):<{width}}  {r.subject}"
            + (f"  [{r.detail}]" if r.detail else "")
            for r in result.rejected
        ]
    n = len(result.candidates)
    summary = f"{n} candidate{'s' if n != 1 else ''} from {result.examined} commit"
    summary += "s" if result.examined != 1 else ""
    if result.counts:
        summary += "; rejected: " + ", ".join(f"{format_reason(r)} {k}" for r, k in result.counts.items())
    if result.capped:
        summary += "; stopped at max commits"
    if result.shallow_skipped:
        summary += f"; {shallow_note(result.shallow_skipped)}"
    if result.newest_authored:
        summary += (f"; the newest commit was authored on {result.newest_authored[:10]}, before --since "
                    "(give an earlier date)")
    lines.append(summary)
    return "\n".join(lines)
