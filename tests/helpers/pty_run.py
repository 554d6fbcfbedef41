"""Run a command on a pseudo-terminal (``pty``) and collect everything it wrote, as a user's screen sees it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def run_on_pty(argv: Sequence[str], cwd: Path, *, env: Mapping[str, str], columns: int = 120,
               timeout: float = 300) -> tuple[int, str]:
    """``(exit status, output)`` of ``argv`` run with stdin, stdout and stderr on one pseudo-terminal
    ``columns`` wide. Output is decoded as UTF-8 with replacement; carriage returns are kept."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(list(argv), cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                            env={**env, "COLUMNS": str(columns)}, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
    finally:
        os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")
