"""Abstract Unix sockets kept to the sandbox when it shares the host's network (``--sandbox-network shared``
under bubblewrap; docs/contracts.md §9). Stdlib only: run inside the sandbox as ``python -I -S _scope.py --
COMMAND…`` (:func:`scoped_argv`).

An abstract Unix socket's name lives in the network namespace: a sandbox that keeps the host's network reached
every one a host process listens on, as the host's uid (an X server's ``@/tmp/.X11-unix/X0``, which admits its
user's local clients by uid, and whose keyboard reaches the user's terminals; satk43). bubblewrap cannot keep the
network and leave those out. Landlock can (ABI 6, Linux 6.12: ``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET``): a
process of a domain so scoped connects to no abstract socket made outside it, while the sandbox's own still work.
This script makes a domain that handles nothing else (no file or port right: files and network stay as
bubblewrap set them), restricts itself and ``exec``\\ s the command, which inherits the domain with every process
it starts. It exits 126 with one line when the domain cannot be made (the host checked the ABI first,
:func:`available`: a command never runs unscoped where scoping was asked for).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Sequence

__all__ = ["available", "scoped_argv", "main", "MIN_ABI"]

SYS_CREATE_RULESET, SYS_RESTRICT_SELF = 444, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
PR_SET_NO_NEW_PRIVS = 38
#: The Landlock ABI that scopes abstract Unix sockets.
MIN_ABI = 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _abi(libc: ctypes.CDLL) -> int:
    return int(libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)))


@functools.cache
def available() -> bool:
    """Whether this kernel scopes abstract Unix sockets (Landlock ABI ≥ :data:`MIN_ABI`); asked once per process."""
    try:
        return _abi(ctypes.CDLL(None, use_errno=True)) >= MIN_ABI
    except (OSError, AttributeError):
        return False


def scoped_argv(python: str, command: Sequence[str]) -> list[str]:
    """``command`` behind this script, run by ``python`` (an interpreter the sandbox binds)."""
    return [python, "-I", "-S", os.path.abspath(__file__), "--", *command]


def main(argv: Sequence[str]) -> int:
    """Scope this process, then ``exec`` the command after ``--``. Returns 2 on a usage error, 126 when the
    domain cannot be made, 127 when the command cannot start (never returns otherwise)."""
    if len(argv) < 2 or argv[0] != "--":
        print("usage: _scope.py -- COMMAND ...", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    version = _abi(libc)
    if version < MIN_ABI:
        print(f"homefield scope: Landlock ABI {version} cannot scope abstract Unix sockets (needs {MIN_ABI})",
              file=sys.stderr)
        return 126
    attr = _RulesetAttr(0, 0, SCOPE_ABSTRACT_UNIX_SOCKET)
    ruleset = int(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0))
    if ruleset < 0:
        print(f"homefield scope: landlock_create_ruleset: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 126
    try:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0:
            print(f"homefield scope: landlock_restrict_self: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
            return 126
    finally:
        os.close(ruleset)
    try:
        os.execvp(argv[1], list(argv[1:]))
    except OSError as exc:
        print(f"homefield scope: cannot start {argv[1]}: {exc.strerror or exc}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
