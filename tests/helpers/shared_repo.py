"""A fixture repository built once per test session and shared by every xdist worker."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["built_once"]


def built_once(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str, name: str,
               make: Callable[[Path], None]) -> Path:
    """``<session temp>/<name>-<uid>/repo``, made by ``make(repo)`` (which must end by writing
    ``.homefield/tasks.jsonl``) in the first worker that gets there; the others wait on a file lock.
    A half-made folder from a failed attempt is removed and made again."""
    shared = tmp_path_factory.getbasetemp().parent / f"{name}-{testrun_uid}"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        repo = shared / "repo"
        if not (repo / ".homefield" / "tasks.jsonl").exists():
            shutil.rmtree(repo, ignore_errors=True)
            make(repo)
    return repo
