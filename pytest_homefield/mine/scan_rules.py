"""The candidate scan's rules for one commit (:mod:`.scan`, filters 3-9 of its docstring): its changed
files by class (:func:`split_change`), then the first cheap filter it fails (:func:`cheap_reason`), with
the one-line detail ``homefield mine --list-candidates -v`` prints. Pure functions of the commit's
``--raw`` entries and message: no git process, no file read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_homefield.envs.declaration import is_declaration_file
from pytest_homefield.mine.classify import message_words
from pytest_homefield.mine.prompt import names_identifier
from pytest_homefield.mine.scan_git import Commit
from pytest_homefield.paths import CONFIG, CONTENT_CHECKED, DOCS, SOURCE, TEST, Classifier
from pytest_homefield.sandbox.snapshot import HOMEFIELD_DIR
from pytest_homefield.settings import ScanSettings

__all__ = ["Change", "cheap_reason", "no_source_detail", "path_reason", "split_change"]


class Change:
    """A commit's changed files by class, before the content checks: repository paths in git's order,
    deleted ones included; ``checked`` the content-checked manifests as (path, raw diff line) for filter
    10; ``all_paths`` every path but homefield's own records. A plain class: one per commit of the walk,
    and a dataclass's ten list factories were a tenth of :func:`split_change`."""

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


#: Where :func:`split_change` files a path (:func:`_slot`): the lists of its :class:`Change` are indexed by
#: these numbers (two share the test list, two the sources, two the config); from ``_RUNNABLE_TEST`` on,
#: a path goes to one more list (runnable tests, or the manifests filter 10 reads).
_SKIP, _TEST, _SOURCE, _DOCS, _CONFIG, _DEPS, _RUNNABLE_TEST, _CHECKED_CONFIG, _CHECKED_SOURCE = range(9)


def _slot(path: str, classifier: Classifier) -> int:
    """Which lists of a :class:`Change` ``path`` goes to (a submodule aside): worked out once per path
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


def split_change(entries: list[str], classifier: Classifier, slots: dict[str, int] | None = None) -> Change:
    """The commit's ``(raw line, path)`` entries by class; ``slots`` (the scan's :func:`_slot` of each
    path seen) is read and added to. One indexed append per path (a chain of comparisons per path was
    most of this function's cost, issue 35)."""
    change = Change()
    if slots is None:
        slots = {}
    get = slots.get
    paths = entries[1::2]
    deleted_paths, tests, sources, config = change.deleted, change.tests, change.sources, change.config
    lists = (None, tests, sources, change.docs, config, change.deps, tests, config, sources)
    skipped = False
    for raw, path in zip(entries[0::2], paths, strict=True):  # (raw line, path) pairs
        slot = get(path)
        if slot is None:
            slot = slots[path] = _slot(path, classifier)
        if not slot:  # _SKIP
            skipped = True
            continue
        deleted = raw[-1:] == "D"
        if deleted:
            deleted_paths.append(path)
        if "160000" in raw[:15]:  # a submodule pointer: a dependency, not code
            change.deps.append(path)
            change.submodules.append(path)
            continue
        lists[slot].append(path)  # type: ignore[union-attr]  # slot 0 (_SKIP) went on above
        if slot == _RUNNABLE_TEST:
            if not deleted:
                change.runnable.append(path)
        elif slot > _RUNNABLE_TEST:
            change.checked.append((path, raw))
    change.all_paths = [p for p in paths if slots[p]] if skipped else paths
    return change


#: The slots of a commit whose changes are all docs or configuration (filter 4's two reasons).
_CONFIG_SIDE = frozenset({_DOCS, _CONFIG, _CHECKED_CONFIG})
#: Slots that :func:`path_reason` leaves to :func:`split_change`: a test-side file or a ``.homefield/`` path.
_NEEDS_CHANGE = frozenset({_RUNNABLE_TEST, _TEST, _SKIP})


def path_reason(entries: list[str], classifier: Classifier, slots: dict[str, int]) -> tuple[str, str] | None:
    """Filters 4-5 for the commits their paths' slots alone turn down (no ``paths`` globs: filter 3 is the
    caller's): ``docs_only``, ``config_only``, and ``no_test_change`` when no test-side file changed; the
    same ``(reason, detail)`` as :func:`split_change` then :func:`cheap_reason`, without building a
    :class:`Change`. ``None``: the commit needs those two (a runnable or other test file changed, or a
    ``.homefield/`` path or a submodule would change the answer). Most commits of a history are turned down
    here (7,557 of pytest's 13,110 non-merge ones), one set of their slots each; ``slots`` as for
    :func:`split_change`."""
    paths = entries[1::2]
    try:
        found = set(map(slots.__getitem__, paths))
    except KeyError:
        found = {slots[p] if p in slots else slots.setdefault(p, _slot(p, classifier)) for p in paths}
    if not found.isdisjoint(_NEEDS_CHANGE):
        return None
    if found <= _CONFIG_SIDE and paths:
        if any("160000" in raw[:15] for raw in entries[0::2]):  # a submodule is neither docs nor config
            return None
        if len(found) == 1 and _DOCS in found:
            return "docs_only", _files(len(paths), "docs")
        config = [p for p in paths if slots[p] != _DOCS]
        docs = len(paths) - len(config)
        return "config_only", ", ".join(_some(config)) + (f" and {_files(docs, 'docs')}" if docs else "")
    return "no_test_change", "no test file changed" if paths else "empty commit"


def _files(n: int, kind: str) -> str:
    return f"{n} {kind} file{'' if n == 1 else 's'}"


def _some(paths: Sequence[str], n: int = 3) -> list[str]:
    return list(paths[:n]) + ([f"… {len(paths) - n} more"] if len(paths) > n else [])


def no_source_detail(tests: int, docs: int, config: int) -> str:
    """The ``no_source_change`` detail for a commit of that many test, docs and config files:
    ``2 test files, 1 docs file and 1 config file`` (no config part when there is none)."""
    parts = [_files(tests, "test"), _files(docs, "docs")] + ([_files(config, "config")] if config else [])
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _no_test_detail(change: Change, classifier: Classifier) -> str:
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


def cheap_reason(commit: Commit, change: Change, options: ScanSettings,
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
        return "no_source_change", no_source_detail(len(change.tests), len(change.docs), len(change.config))
    limit = options.max_source_files
    if limit is not None and len(change.sources) > limit:
        return "too_many_source_files", f"{len(change.sources)} source files > {limit}"
    if options.min_message_words and len(commit.parents) < 2:  # merges: see scan._compose_prompts
        words = message_words(commit.message)
        if words < options.min_message_words and not names_identifier(commit.message):
            return "message_too_short", f"{words} words < {options.min_message_words}"
    return None
