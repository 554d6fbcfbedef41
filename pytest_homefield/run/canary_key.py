"""A task's canary seed (docs/contracts.md §7, atk12 F1c): the same for every grading of the task.

Twins drawn afresh per grading let any memory that outlives a grading (a leak of the hidden tests to
the next attempt, one agent's notes to another) intersect two captured gradings: the version of a test
seen in both *is* the original. With one seed per task every grading shows the same original and the
same twins in the same order, and a second capture adds nothing to the first. The seed is
``HMAC-SHA256(key, task id + commit)``'s first 32 bits, the key 32 random bytes in
``.homefield/canary.key`` (0600; made by the first grading; in the repository, which no sandbox shows:
§9): an agent that knows the task cannot know its twins. Delete the key to draw every task's twins
afresh. A run over ssh workers sends the controller's key to every worker with its tasks (the
session's ``canary_key``), so a task's twins are the same on every machine, whatever key a host has.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from pytest_homefield.layout import HomefieldDir, read_own_file
from pytest_homefield.records import Task

__all__ = ["canary_key", "task_seed", "KEY_BYTES"]

#: The key's length.
KEY_BYTES = 32


def canary_key(root: Path) -> bytes:
    """The key of the repository at ``root`` (``.homefield/canary.key``), made on first use: written to
    a temp file and linked into place, so concurrent workers agree on one key; read without following a link or
    opening a fifo or device. Raises ``OSError`` when it cannot be read or made, ``ValueError`` for a key of
    another length or one that is not a regular file."""
    path = HomefieldDir(root).canary_key
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another worker made it first: use that one
        finally:
            tmp.unlink()
    # never through a link, and never blocking on a fifo or a device (hatk40: under --sandbox none graded code can
    # swap the key for one, and a plain open of a fifo hung the host)
    try:
        key = read_own_file(path, limit=KEY_BYTES + 1)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path}: not a canary key (a symlink): delete it") from None
        if exc.errno == errno.EINVAL:
            raise ValueError(f"{path}: not a canary key (not a regular file): delete it") from None
        if exc.errno == errno.EFBIG:  # more than KEY_BYTES + 1: said as before, of the bytes looked at
            raise ValueError(f"{path}: not a canary key ({KEY_BYTES + 1} bytes, expected {KEY_BYTES}): "
                             "delete it") from None
        raise
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path}: not a canary key ({len(key)} bytes, expected {KEY_BYTES}): delete it")
    return key


def task_seed(key: bytes, task: Task) -> int:
    """The canary seed of ``task`` under ``key`` (:func:`canary_key`; module docstring): 32 bits."""
    digest = hmac.new(key, f"{task.id}\0{task.commit}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:4], "big")
