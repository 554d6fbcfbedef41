"""A log that processes forked by one test append to at once: one ``write()`` per line on an ``O_APPEND``
descriptor, so lines of concurrent writers never interleave (the memory budget's and the phase lock's tests
read back who held what, and when)."""

from __future__ import annotations

import os

__all__ = ["append_line"]


def append_line(path: str, line: str) -> None:
    """Append ``line`` and a newline to ``path`` (made 0600 when missing) in one ``write()``."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)
