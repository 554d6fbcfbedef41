"""Candidate scan: which commits of a repository's history could become tasks.

One pass over history reads ``git log -z --raw --no-renames``: one process for the whole walk, never one
per commit. It is read once git has written it all to a temporary file (:func:`.scan_git.spooled`: less CPU
than parsing while git walks), or with ``max_commits`` incrementally as git writes it, so that git stops
at the cap. Renames arrive as a delete plus an add; paths are raw bytes (non-ASCII and spaces are safe);
binary files, empty commits need nothing special; the root commit is dropped (``root_commit``).

The walk (``rev``, default ``HEAD``):

- default: every non-merge commit reachable from ``rev``; its change is the diff to its parent.
- ``first_parent``: only the mainline (the first-parent chain from ``rev``).
- ``merges``: also every merge commit *on the first-parent chain* as one candidate (mode
  ``"merge"``) whose change is its diff against its first parent: a whole merged pull request.
  Merges off the mainline (e.g. syncing main into a feature branch) are never candidates.
  With ``first_parent`` that is one process; without it, a second process walks the
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
    ``env`` ``uv`` a changed one is kept as a candidate and listed in ``dependency_files``. Then
    ``no_source_change`` for a candidate whose only source files are ``pyproject.toml`` files changed in
    tool settings alone (:func:`.classify.tool_settings_changed`: ``[tool.ruff]`` is configuration,
    ``[tool.pytest.ini_options]`` or a build backend's table is not); only those files are parsed whole.
    And ``no_source_change`` for a candidate whose every source file is test configuration that grading
    carries from no change (:func:`_filter_test_configuration`: ``pytest.ini``, ``noxfile.py``, a
    ``pyproject.toml`` whose pytest tables changed, …).
11. ``diff_too_large``: more than ``max_diff_lines`` added + removed lines in the non-test files
    (the gold patch; binary files count 0). Counted only when ``max_diff_lines`` is set, for the
    commits that passed 1-10, by one more ``git log --no-walk --stdin --numstat`` process.
12. ``duplicate_change``: a candidate whose change without its docs files has the ``git patch-id --stable`` of
    a newer candidate's of the same mode, taken without context lines (a commit rebased or cherry-picked beside
    its original, both reachable; a backport beside other lines, or whose changelog entry sits under another
    release's heading): one fix would be two tasks.
    The newest stays. One ``git log --no-walk --stdin -p`` and one ``git patch-id``
    process, for the candidates that passed 1-11, when a mode has two of them.
13. ``too_large``: a candidate whose task record could not be one line of ``tasks.jsonl``: its patches (the test
    patch holds every test-side file, fixtures too, which filter 11 does not count) and message come to more than
    :data:`~pytest_homefield.store.MAX_LINE_BYTES` characters as JSON, which no writer writes (big60: a commit adding
    a 65 MiB text fixture beside its fix was mined, and ``tasks.jsonl`` was then unreadable). One ``git cat-file
    --batch-check`` for the sizes of every candidate's blobs, both sides; only a candidate those sizes do not show
    to fit (:data:`QUICK_FACTOR`) has its patches made (as verification makes them) and measured.

A shallow clone's boundary commits are skipped (their parents are missing): they are counted in
``ScanResult.shallow_skipped`` and the summary says so (``git fetch --unshallow`` to mine them).
Paths under ``.homefield/`` (homefield's own records, if committed) are not part of any change.

This module holds the records, the walk and filters 1, 2 and 9-13; the git processes and the parsing of
their output are :mod:`.scan_git`'s, filters 3-9 for one commit :mod:`.scan_rules`'.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import heapq
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import git

from pytest_homefield.envs.declaration import is_declaration_file
from pytest_homefield.errors import ScanError
from pytest_homefield.mine.classify import changed_manifests, tool_settings_changed
from pytest_homefield.mine.merge_prompt import branch_messages, compose_merge_prompt
from pytest_homefield.mine.prompt import clean_prompt, count_words, names_identifier
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.mine.scan_git import (
    COMMON_ARGS,
    LOG_FORMAT,
    Commit,
    blob_sizes,
    commits,
    diff_lines,
    first_error_line,
    open_repo,
    patch_ids,
    read_blobs,
    resolve_commit,
    shallow_commits,
    spooled,
    stream,
    tree_paths,
)
from pytest_homefield.mine.scan_rules import cheap_reason, no_source_detail, path_reason, split_change
from pytest_homefield.paths import Classifier, compile_globs
from pytest_homefield.records import one_line
from pytest_homefield.run.carried import blocked_name, in_metadata, pytest_section_changed, uv_held_back
from pytest_homefield.sandbox.pytest_config import uv_run_files
from pytest_homefield.settings import ScanSettings, join_flags, option
from pytest_homefield.store import MAX_LINE_BYTES, dumps

__all__ = [
    "REASONS",
    "TOO_LARGE",
    "QUICK_FACTOR",
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
    "duplicate_change",
    "too_large",
)

#: The scan's and verification's reason for a candidate whose task record no line may hold (filter 13).
TOO_LARGE = "too_large"
#: Filter 13's bound: a candidate whose record (its ``candidates.jsonl`` line) plus this many characters per byte of
#: its changed blobs, both sides, plus per file its header, is within :data:`~pytest_homefield.store.MAX_LINE_BYTES`
#: fits, unmeasured (a JSON escape is at most 6 characters a byte: ``\u0001``); what a degenerate diff would still
#: take past it verification sets aside (``too_large`` too), never the scan.
QUICK_FACTOR = 6

@dataclass(kw_only=True)
class ScanOptions(ScanSettings):
    """What to walk and which filters to apply: the filters of
    :class:`pytest_homefield.settings.ScanSettings` (their fields, types and defaults are declared
    there, once) plus ``rev``, where the walk starts, and ``test_cmd``, the test command verification will run
    (``None``: not known; for a ``uv run`` one, the files it reads as its configuration are test configuration,
    :func:`_held_back`). Keyword arguments only."""

    rev: str = "HEAD"
    test_cmd: str | None = None

    @classmethod
    def from_settings(cls, settings: ScanSettings, *, rev: str = "HEAD") -> ScanOptions:
        """Every :class:`ScanSettings` field of ``settings`` (e.g. the resolved
        :class:`pytest_homefield.settings.Settings`, whose ``test_cmd`` is taken too); ``paths`` entries are split
        at commas."""
        values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(ScanSettings)}
        values["paths"] = join_flags(values["paths"])
        values["test_globs"] = list(values["test_globs"])
        test_cmd = getattr(settings, "test_cmd", None)
        return cls(**values, rev=rev, test_cmd=test_cmd if isinstance(test_cmd, str) else None)


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
    """A commit a filter turned down: ``reason`` is one of :data:`REASONS`, ``detail`` one line; ``same_as``, for a
    ``duplicate_change`` only, the full sha of the newer candidate whose change it repeats (else ``""``)."""

    commit: str
    subject: str
    authored_at: str
    reason: str
    detail: str = ""
    same_as: str = ""

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


def _walk_args(head: str, options: ScanOptions, since: datetime | None) -> list[list[str]]:
    """``git log`` argument lists, one per walk process."""
    base = [*COMMON_ARGS, "--raw", "--no-abbrev", f"--format={LOG_FORMAT}"]
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


def _committed_ts(commit: Commit) -> float:
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


def _manifests_changed(repo: git.Repo, checks: list[list[tuple[str, str]]]
                       ) -> tuple[list[list[str]], dict[str, bytes]]:
    """Filter 10 for several commits at once: for each commit's content-checked manifests (path, raw diff
    line), the paths whose dependency tables differ (:func:`.classify.changed_manifests`), every blob read
    by one ``git cat-file --batch``; and the blobs read, by id."""
    versions = [[(path, raw.split()[2], raw.split()[3]) for path, raw in check] for check in checks]
    wanted = sorted({sha for files in versions for _, *shas in files for sha in shas if sha.strip("0")})
    blobs = read_blobs(repo, wanted) if wanted else {}
    return changed_manifests(versions, blobs), blobs


def _tool_settings_only(candidate: Candidate, checked: list[tuple[str, str]],
                        blobs: dict[str, bytes]) -> str:
    """Filter 10's second question, for a candidate whose manifests kept their dependency tables: when its
    only non-test files besides docs and configuration are ``pyproject.toml`` files changed in tool settings
    alone (:func:`.classify.tool_settings_changed`: ``[tool.ruff]``, not ``[tool.pytest.ini_options]``),
    those count as configuration and the commit changed no source: the ``no_source_change`` detail, else
    ``""``. Parses only those candidates' pyproject files (a candidate with another source file is not
    asked)."""
    raws = dict(checked)
    if not candidate.source_files or any(p.rsplit("/", 1)[-1] != "pyproject.toml" or p not in raws
                                         for p in candidate.source_files):
        return ""
    tables: set[str] = set()
    for path in candidate.source_files:
        old, new = raws[path].split()[2:4]
        changed = tool_settings_changed(blobs.get(old) if old.strip("0") else None,
                                        blobs.get(new) if new.strip("0") else None)
        if changed is None:
            return ""
        tables.update(changed)
    what = ", ".join(f"[tool.{t}]" for t in sorted(tables)) or "comments or formatting"
    counts = no_source_detail(len(candidate.test_files), len(candidate.docs_files),
                              len(candidate.config_files) + len(candidate.source_files))
    return f"{counts} ({', '.join(candidate.source_files)}: only {what})"


# --- entry point -------------------------------------------------------------------------------

def scan(repo_path: Path, options: ScanOptions) -> ScanResult:
    """Walk the history of the repository at ``repo_path`` and sort its commits into candidates
    and rejected commits (module docstring: walk, filters and their order).

    Git processes: the walk (two with ``merges`` and no ``first_parent``), then, only if
    some surviving commit needs them, one ``cat-file --batch`` for the manifest contents and, with
    ``max_diff_lines``, one ``log --no-walk --stdin --numstat``; never one per commit.
    Raises ``ValueError`` (one line naming the option) for a bad option value and
    :class:`ScanError` for a path that is not a git repository, an unknown ``rev`` or a git failure.
    """
    _check_options(options)
    collecting = gc.isenabled()
    # the walk's records die by reference counting: the cyclic collector's passes over the thousands alive
    # are waste (issue 35: 2.4 % of a first-parent scan of pytest's Python instructions)
    gc.disable()
    try:
        return _scan(Path(repo_path), options)
    finally:
        if collecting:
            gc.enable()


def _scan(repo_path: Path, options: ScanOptions) -> ScanResult:
    since = _parse_when("since", options.since, end=False)[0] if options.since else None
    until = _parse_when("until", options.until, end=True) if options.until else None
    in_paths = compile_globs(options.paths)
    repo = open_repo(repo_path)
    try:
        head = resolve_commit(repo, options.rev)
        classifier = Classifier(options.test_globs, tree=tree_paths(repo, head))
        outcomes: list[Candidate | Rejected] = []
        checks: dict[int, list[tuple[str, str]]] = {}  # outcome index -> manifests to read
        capped = False
        in_window = 0
        shallow = shallow_commits(repo)
        shallow_skipped = 0
        slots: dict[str, int] = {}  # split_change's class of each path seen
        changed: dict[str, list[str]] = {}  # a candidate's --raw entries, by sha: filter 13's blobs
        dated = since is not None or until is not None
        with contextlib.ExitStack() as stack:
            # a walk read to its end is spooled (less CPU); one that max_commits may cut streams, so that git stops
            source = stream if options.max_commits is not None else spooled
            streams = [commits(stack.enter_context(contextlib.closing(source(repo, args))))
                       for args in _walk_args(head, options, since)]
            walk = streams[0] if len(streams) == 1 else heapq.merge(
                *streams, key=_committed_ts, reverse=True)
            for commit in walk:
                if not commit.parents and commit.sha in shallow:
                    shallow_skipped += 1
                    continue
                detail = _outside_dates(commit, options, since, until) if dated else ""
                if detail:
                    outcomes.append(Rejected(commit.sha, commit.subject, commit.authored_at,
                                             "outside_dates", detail))
                    continue
                if options.max_commits is not None and in_window >= options.max_commits:
                    capped = True
                    break
                in_window += 1
                # most commits are turned down by their paths' classes alone, without a Change (issue 35)
                quick = None if options.paths else path_reason(commit.entries, classifier, slots)
                if quick is not None:
                    outcomes.append(Rejected(commit.sha, commit.subject, commit.authored_at, *quick))
                    continue
                outcome, checked = _judge(commit, classifier, options, in_paths, slots)
                if checked:
                    checks[len(outcomes)] = checked
                if isinstance(outcome, Candidate):
                    changed[outcome.commit] = commit.entries
                outcomes.append(outcome)
        _compose_prompts(repo, head, outcomes, checks, options.min_message_words)
        blobs = _filter_manifests(repo, outcomes, checks, keep=options.env == "uv")
        uv_files = uv_run_files(Path(repo_path), options.test_cmd) if options.test_cmd else None
        _filter_test_configuration(outcomes, checks, blobs, uv_files)
        if options.max_diff_lines is not None:
            _filter_diff_lines(repo, outcomes, classifier, options.max_diff_lines)
        _filter_duplicates(repo, outcomes)
        _filter_too_large(repo, Path(repo_path), outcomes, changed)
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


def _outside_dates(commit: Commit, options: ScanOptions, since: datetime | None,
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


def _judge(commit: Commit, classifier: Classifier, options: ScanOptions, in_paths: Any,
           slots: dict[str, int] | None = None) -> tuple[Candidate | Rejected, list[tuple[str, str]]]:
    """Filters 3-9 for one commit; a candidate comes with the manifests filter 10 must read. ``slots``:
    see :func:`split_change`."""
    change = split_change(commit.entries, classifier, slots)
    verdict = cheap_reason(commit, change, options, in_paths, classifier)
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
        raise ScanError(f"git log failed: {first_error_line(exc)}") from None
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
                      checks: dict[int, list[tuple[str, str]]], *, keep: bool = False) -> dict[str, bytes]:
    """Filter 10, in place: candidates whose content-checked manifests changed dependencies are
    rejected, or with ``keep`` (``env`` ``uv``) given those manifests as ``dependency_files``. Returns the
    manifests' versions read, by blob id."""
    if not checks:
        return {}
    results, blobs = _manifests_changed(repo, list(checks.values()))
    for (i, checked), changed in zip(checks.items(), results, strict=True):
        c = outcomes[i]
        if changed:
            if keep and isinstance(c, Candidate) and all(is_declaration_file(p) for p in changed):
                c.dependency_files = sorted({*c.dependency_files, *changed})
                continue
            outcomes[i] = Rejected(c.commit, c.subject, c.authored_at, "dependency_change", ", ".join(changed))
        elif isinstance(c, Candidate) and (detail := _tool_settings_only(c, checked, blobs)):
            outcomes[i] = Rejected(c.commit, c.subject, c.authored_at, "no_source_change", detail)
    return blobs


def _filter_test_configuration(outcomes: list[Candidate | Rejected], checks: dict[int, list[tuple[str, str]]],
                               blobs: dict[str, bytes], uv_files: frozenset[str] | None = None) -> None:
    """Filter 10's third question, in place: a candidate every one of whose source files is one that grading
    never carries from any change, the reference fix's included (:func:`_held_back`: test configuration such as
    ``pytest.ini``, ``noxfile.py``, a ``pyproject.toml`` whose pytest tables changed), is ``no_source_change``:
    graded, its reference fix is no change at all (nu39: verification dropped such commits only after their
    test runs, as ``reference_fails`` with the detail of :data:`~pytest_homefield.mine.redgreen.HELD_BACK`).
    ``blobs``: the manifests' versions by blob id, as filter 10 read them. ``uv_files``: for a ``uv run`` test
    command, the files it reads as its configuration (:func:`~pytest_homefield.sandbox.pytest_config.uv_run_files`),
    else ``None``."""
    for i, c in enumerate(outcomes):
        if not isinstance(c, Candidate) or not c.source_files or c.dependency_files:
            continue
        raws = dict(checks.get(i, ()))
        if all(_held_back(path, raws.get(path), blobs, uv_files) for path in c.source_files):
            counts = no_source_detail(len(c.test_files), len(c.docs_files),
                                      len(c.config_files) + len(c.source_files))
            outcomes[i] = Rejected(c.commit, c.subject, c.authored_at, "no_source_change",
                                   f"{counts} ({', '.join(c.source_files)}: test configuration, which grading "
                                   "carries from no change, the reference fix's neither)")


def _held_back(path: str, raw: str | None, blobs: dict[str, bytes], uv_files: frozenset[str] | None = None) -> bool:
    """Whether grading leaves a change to the source file ``path`` out of every grading copy, by the rules of
    :func:`~pytest_homefield.run.carried.carried_changes` that the commit's paths and manifest versions decide:
    a blocked name (``pytest.ini``, ``noxfile.py``, ``sitecustomize.py`` …), a ``.pth`` file, a file inside
    distribution metadata, or a ``pyproject.toml`` / ``setup.cfg`` whose pytest section differs between its two
    versions (``raw``: its ``--raw`` diff line; an absent side counts as ``None``, as grading reads it); with
    ``uv_files`` (a ``uv run`` test command's files, ops61), what :func:`~pytest_homefield.run.carried.uv_held_back`
    holds back too (those files, ``uv.toml``, the top ``pyproject.toml`` whose ``[tool.uv]`` table differs). A
    manifest whose versions were not read is carried (the safe answer: verification decides)."""
    if blocked_name(path) or in_metadata(path):
        return True
    texts = _texts(raw, blobs)
    if uv_files is not None and uv_held_back(path, uv_files, lambda: texts or (None, None)) and (
            path != "pyproject.toml" or texts is not None):
        return True
    return texts is not None and pytest_section_changed(path, lambda: texts)


def _texts(raw: str | None, blobs: dict[str, bytes]) -> tuple[str | None, str | None] | None:
    """A manifest's two versions' texts (before, after; ``None``: absent) from its ``--raw`` diff line ``raw`` and
    the blobs read, by id; ``None`` when a version was not read (or ``raw`` is ``None``)."""
    if raw is None:
        return None
    texts: list[str | None] = []
    for sha in raw.split()[2:4]:
        if not sha.strip("0"):
            texts.append(None)
        elif sha not in blobs:
            return None
        else:
            texts.append(blobs[sha].decode("utf-8", errors="replace"))
    return texts[0], texts[1]


def _filter_diff_lines(repo: git.Repo, outcomes: list[Candidate | Rejected], classifier: Classifier,
                       limit: int) -> None:
    """Filter 11, in place: sets ``diff_lines`` on candidates and rejects those over ``limit``."""
    lines = diff_lines(repo, [o.commit for o in outcomes if isinstance(o, Candidate)], classifier)
    for i, outcome in enumerate(outcomes):
        if isinstance(outcome, Candidate):
            outcome.diff_lines = lines.get(outcome.commit, 0)
            if outcome.diff_lines > limit:
                outcomes[i] = Rejected(outcome.commit, outcome.subject, outcome.authored_at,
                                       "diff_too_large", f"{outcome.diff_lines} lines > {limit}")


def _filter_too_large(repo: git.Repo, root: Path, outcomes: list[Candidate | Rejected],
                      changed: dict[str, list[str]]) -> None:
    """Filter 13, in place: a candidate whose task record's patches and message, as JSON, are longer than
    :data:`~pytest_homefield.store.MAX_LINE_BYTES` characters is ``too_large`` (no writer writes that line, no
    reader would read it). ``changed``: each candidate's ``--raw`` entries (raw line, path, alternating), by sha.
    One ``git cat-file --batch-check`` for every candidate's blob sizes; a candidate they do not show to fit
    (:data:`QUICK_FACTOR`) has its test and gold patches made as verification makes them (two ``git diff``) and its
    record measured: never set aside on a bound."""
    shas = sorted({sha for o in outcomes if isinstance(o, Candidate) for raw in changed.get(o.commit, [])[0::2]
                   for sha in raw.split()[2:4] if sha.strip("0")})
    sizes = blob_sizes(repo, shas) if shas else {}
    for i, o in enumerate(outcomes):
        if not isinstance(o, Candidate):
            continue
        entries = changed.get(o.commit, [])
        blobs = sum(sizes.get(sha, 0) for raw in entries[0::2] for sha in raw.split()[2:4])
        headers = sum(4 * len(path) + 200 for path in entries[1::2])
        if len(dumps(o.to_dict())) + QUICK_FACTOR * (blobs + headers) <= MAX_LINE_BYTES:
            continue
        chars = len(dumps({**o.to_dict(), "test_patch": make_test_patch(root, o.parent, o.commit, o.test_files),
                           "gold_patch": make_gold_patch(root, o.parent, o.commit, o.test_files)}))
        if chars > MAX_LINE_BYTES:
            outcomes[i] = Rejected(o.commit, o.subject, o.authored_at, TOO_LARGE,
                                   f"its patches and message are {chars:,} characters as a task record, over the "
                                   f"{MAX_LINE_BYTES:,} a line of tasks.jsonl holds ({blobs:,} bytes of files changed)")


def _filter_duplicates(repo: git.Repo, outcomes: list[Candidate | Rejected]) -> None:
    """Filter 12, in place: a candidate whose change is a newer candidate's of the same mode (the same ``git
    patch-id --stable`` of the change without its docs files and context lines: a commit rebased or
    cherry-picked beside its original, both in history; two merges of one change; a backport whose changelog
    entry sits under another release's heading or whose changes sit beside other lines, nu48: pallets/werkzeug
    664deb6a58c8 and b913d68db589, de546be7144c and d3d3df56c98b) is ``duplicate_change``; the newest stays.
    Two such tasks are one fix counted twice: its
    outcome weighs double in every rate and paired test, whose tasks must be independent (nu46: simonw/llm
    since 2026-01 lists 3 such pairs among its candidates). A merge and a commit it merges are compared with
    neither: ``merges`` without ``first_parent`` offers both on purpose. No git process unless some mode has
    two candidates."""
    modes: dict[str, list[str]] = {}
    docs: dict[str, list[str]] = {}
    for o in outcomes:
        if isinstance(o, Candidate):
            modes.setdefault(o.mode, []).append(o.commit)
            docs[o.commit] = o.docs_files
    shas = [sha for group in modes.values() if len(group) > 1 for sha in group]
    ids = patch_ids(repo, shas, docs) if shas else {}
    first: dict[tuple[str, str], str] = {}
    for i, outcome in enumerate(outcomes):  # newest first
        if not isinstance(outcome, Candidate) or outcome.commit not in ids:
            continue
        kept = first.setdefault((outcome.mode, ids[outcome.commit]), outcome.commit)
        if kept != outcome.commit:
            outcomes[i] = Rejected(outcome.commit, outcome.subject, outcome.authored_at, "duplicate_change",
                                   f"the same change as {kept[:12]}", same_as=kept)


# --- rendering ---------------------------------------------------------------------------------

def shallow_note(n: int) -> str:
    """The note for ``n`` skipped shallow-clone boundary commits."""
    return (f"{n} shallow-clone boundary commit{'s' if n != 1 else ''} skipped (the parent is not in this clone; "
            "git fetch --unshallow to mine it)")


def format_reason(reason: str) -> str:
    """A reason as printed: underscores become spaces (``no_test_change`` → ``no test change``)."""
    return reason.replace("_", " ")


def format_scan(result: ScanResult, verbose: bool = False) -> str:
    """The ``--list-candidates`` text: with ``verbose`` one line per rejected commit (sha, author date,
    reason, subject, detail), then one line per candidate (12-character sha, author date, source and
    test file counts, subject), each newest first, then a summary line such as ``12 candidates from 340
    commits; rejected: no test change 200, docs only 40`` (most frequent first, as mining's ``Dropped:``
    line). The candidates come last, above the summary that counts them: listed first, the tens or
    hundreds of rejected rows after them pushed them off the screen (structlog since 2025: 41 candidates,
    196 rejected rows). No trailing newline."""
    lines = []
    if verbose:
        width = max((len(format_reason(r.reason)) for r in result.rejected), default=0)
        lines += [
            f"{r.commit[:12]} {r.authored_at[:10]} {format_reason(r.reason):<{width}}  {r.subject}"
            + (f"  [{r.detail}]" if r.detail else "")
            for r in result.rejected
        ]
    lines += [
        f"{c.commit[:12]} {c.authored_at[:10]} {len(c.source_files):>3} source "
        f"{len(c.test_files):>3} test  {c.subject}"
        for c in result.candidates
    ]
    n = len(result.candidates)
    summary = f"{n} candidate{'s' if n != 1 else ''} from {result.examined} commit"
    summary += "s" if result.examined != 1 else ""
    if result.counts:  # ties in REASONS order
        ranked = sorted(result.counts.items(), key=lambda rk: -rk[1])
        summary += "; rejected: " + ", ".join(f"{format_reason(r)} {k}" for r, k in ranked)
    if result.capped:
        summary += "; stopped at max commits"
    if result.shallow_skipped:
        summary += f"; {shallow_note(result.shallow_skipped)}"
    if result.newest_authored:
        summary += (f"; the newest commit was authored on {result.newest_authored[:10]}, before {option('since')} "
                    "(give an earlier date)")
    lines.append(summary)
    return "\n".join(one_line(line) for line in lines)  # a subject's control characters as escapes (host29)
