"""Running a test's child process as a user other than root: CI runs as root, which ignores permission bits,
so attacks that work only against a user (``chmod 000`` of a folder) need a user namespace to bite there."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def as_user_1000() -> list[str]:
    """The argv prefix that runs a command as uid/gid 1000 of a new user namespace (``unshare --map-user=1000
    --map-group=1000``), where the permission bits bind as they do for a user; skips the test where that
    cannot be made."""
    unshare = shutil.which("unshare")
    prefix = [unshare or "unshare", "--map-user=1000", "--map-group=1000"]
    if unshare is None or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("no unshare --map-user (user namespaces)")
    return prefix
