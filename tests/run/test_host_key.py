"""hatk40, ``--sandbox none`` (graded code runs as the user): graded code that spoils the canary key in the user's
``.homefield/`` (``canary.key``, read at every grading) no longer makes the attempts after it ``infra`` or hangs the
host. Before: a key of the wrong length made every later grading raise ``ValueError`` (``infra`` "grading failed",
retried by ``--resume`` and never scored, in this session and every later one until the user deleted it), and a
key swapped for a fifo blocked the host's ``open`` for ever. Now the key is read once per process, before the
session's first attempt (:meth:`SnapshotCache.key`, called from :meth:`SnapshotCache.keep`), and never through a
link, a fifo or a device (``O_NOFOLLOW | O_NONBLOCK``, a regular file or ``ValueError``)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    GOOD_CALC,
    WRONG_CALC,
    Fixture,
    build,
    task_for,
    unsandboxed_attempt,
    writes_calc,
)

from pytest_homefield.layout import HomefieldDir
from pytest_homefield.run.attempt import SnapshotCache
from pytest_homefield.run.canary_key import canary_key


@pytest.fixture
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    """A repository of this test alone (its key is spoiled)."""
    yield build(tmp_path_factory.mktemp("key") / "repo")


def _writes(fix: str, code: str = "") -> str:
    """A ``cmd:`` agent's command writing ``fix`` followed by ``code`` (run at import, in the test process)."""
    return writes_calc(fix + "\n\nimport os\n" + code)


@pytest.mark.slow
def test_graded_code_that_spoils_the_canary_key_leaves_later_attempts_scored(own: Fixture, tmp_path: Path) -> None:
    """Attempt 1, a wrong fix, writes a 33-byte ``canary.key`` at import: scored ``tests_failed``. Before: attempt 2
    (the reference fix) was ``infra`` "grading failed: ValueError ..."; now ``solved``, with the key read before
    the first attempt."""
    task = task_for(own)
    key = HomefieldDir(own.root).canary_key
    spoil = f"p = {str(key)!r}\nif os.path.exists(p):\n    os.unlink(p)\n    open(p, 'wb').write(b'x' * 33)\n"
    cache = SnapshotCache(repo=own.root)
    try:
        cache.keep([task])  # what the runner does before the first attempt of the session
        first = unsandboxed_attempt(task, cache, _writes(WRONG_CALC, spoil), 1, tmp_path / "run")
        assert first[0] == "tests_failed", first
        assert key.stat().st_size == 33  # the key is spoiled on disk
        second = unsandboxed_attempt(task, cache, _writes(GOOD_CALC), 2, tmp_path / "run")
        assert second[0] == "solved", second
    finally:
        cache.close()


def test_a_key_swapped_for_a_fifo_is_refused_without_blocking(own: Fixture) -> None:
    """Before: ``open`` of the fifo blocked until a writer came (here a thread after 5 s; for ever in a run). Now
    ``ValueError`` at once, naming the file; a link to a file is refused too (never followed)."""
    key = HomefieldDir(own.root).canary_key
    key.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(key)

    def unblock() -> None:  # the writer a blocked open waits for, so a failing test ends
        time.sleep(5)
        with open(key, "wb") as f:
            f.write(b"y" * 32)

    writer = threading.Thread(target=unblock, daemon=True)
    writer.start()
    start = time.monotonic()
    with pytest.raises(ValueError, match="canary.key"):
        canary_key(own.root)
    assert time.monotonic() - start < 3
    os.unlink(key)
    target = own.root / "elsewhere"
    target.write_bytes(b"z" * 32)
    os.symlink(target, key)
    with pytest.raises(ValueError, match="canary.key"):
        canary_key(own.root)
    writer.join(10)
