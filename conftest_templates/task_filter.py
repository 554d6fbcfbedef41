"""pytest-homefield conftest template: choose and order the tasks a run uses.

Copy this file to your repository root as ``conftest.py`` (or merge it into yours; it need not be
committed) and edit the settings. ``pytest_homefield_modify_tasks`` receives the mined tasks
(``pytest_homefield.records.Task`` objects from ``.homefield/tasks.jsonl``, newest commit first)
before any run item is collected, and changes the list **in place**.

It is called on the controller and on every xdist worker, and every process must end with the same
list, or xdist stops with "different tests were collected". So: no randomness without a fixed seed,
no clock, no network, nothing that differs between processes. The subset below is "random" through
a hash of the task id, which is the same everywhere.

``--max-tasks N`` is applied after this hook (the first N of the list it leaves). Filtering changes
nothing on disk: ``tasks.jsonl`` keeps every task, so a later run can use another filter. A run
continued with ``--resume`` must see the same tasks as when it started: keep the filter unchanged.

Useful task fields: ``id``, ``subject``, ``prompt``, ``authored_at`` (ISO 8601), ``source_files``,
``test_files``, ``diff_lines`` (lines of the reference fix), ``spec_score``, ``well_specified``,
``languages``, ``FAIL_TO_PASS``.
"""

from __future__ import annotations

import fnmatch
import zlib
from typing import Any

import pytest

# --- settings ---------------------------------------------------------------------------------
ONLY_WELL_SPECIFIED = True  # drop tasks whose commit message says too little (low spec_score)
MAX_DIFF_LINES: int | None = 400  # drop tasks whose reference fix is larger; None: no limit
SINCE: str | None = None  # keep tasks authored on or after this date, e.g. "2024-06-01"
EXCLUDE_GLOBS = ("*migrations/*", "vendor/*", "*/_vendor/*")  # drop tasks whose fix touches these files
SAMPLE_PERCENT = 100  # keep this share of the remaining tasks, chosen by a hash of the task id
SAMPLE_SALT = "homefield"  # change it to draw another (still deterministic) sample
LARGEST_FIRST = True  # start big tasks first: with -n, the run then ends sooner


def keep(task: object) -> bool:
    """Whether a task stays in the run."""
    if ONLY_WELL_SPECIFIED and not getattr(task, "well_specified", True):
        return False
    if MAX_DIFF_LINES is not None and getattr(task, "diff_lines", 0) > MAX_DIFF_LINES:
        return False
    if SINCE is not None and str(getattr(task, "authored_at", ""))[:10] < SINCE:
        return False
    files = list(getattr(task, "source_files", []))
    if any(fnmatch.fnmatch(f, pattern) for f in files for pattern in EXCLUDE_GLOBS):
        return False
    if SAMPLE_PERCENT < 100:
        bucket = zlib.crc32(f"{SAMPLE_SALT}:{getattr(task, 'id', '')}".encode()) % 100
        return bucket < SAMPLE_PERCENT
    return True


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_modify_tasks(tasks: list[Any], config: pytest.Config) -> None:
    tasks[:] = [t for t in tasks if keep(t)]
    if LARGEST_FIRST:
        # sorted() is stable and the key is a pure function of the task: the same order everywhere
        tasks.sort(key=lambda t: (-getattr(t, "diff_lines", 0), getattr(t, "id", "")))
