"""A sandbox's session keyring is its own (gatk53): a homefield started with a session keyring of its own (a systemd
service's, ``KeyringMode=private`` by default; a login through ``pam_keyinit``) handed it to every sandbox it
started, across user namespaces and host uids, and a key one sandbox added there was read by the next."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip

#: Run by the test in a process of its own, which first joins a session keyring of its own (as a homefield under
#: systemd has one), then runs two agent sandboxes one after the other: the first adds a key to its session keyring
#: (``@s``), the second searches its own for it and reads it; then this process searches its own.
_TWO_SANDBOXES = r"""
import ctypes, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from helpers.bwrap import agent_sandbox

libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(250, 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING, anonymous: this process's own
probe = '''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "add":  # add_key(2) into the session keyring (@s, -3)
    print(libc.syscall(248, b"user", b"hf-session-probe", b"hidden test text", 16, -3))
else:  # keyctl(KEYCTL_SEARCH) of @s, then KEYCTL_READ of what it found
    key = libc.syscall(250, 10, -3, b"user", b"hf-session-probe", 0)
    buf = ctypes.create_string_buffer(64)
    n = libc.syscall(250, 11, key, buf, 64) if key > 0 else -1
    print(key, buf.raw[:max(n, 0)].decode() or "-")
'''
root = Path(sys.argv[1])
boxes = []
for name in ("first", "second"):
    (root / name).mkdir()
    boxes.append(agent_sandbox(root / name))
print("added", boxes[0].says(probe, "add").strip())
print("found", boxes[1].says(probe, "search").strip())
print("host", libc.syscall(250, 10, -3, b"user", b"hf-session-probe", 0))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe uses x86_64 system call numbers")
@pytest.mark.parametrize("uids", ["", "0"], ids=["uid-pool-default", "uid-pool-off"])
def test_a_key_one_sandbox_adds_to_its_session_keyring_never_reaches_another(tmp_path: Path, uids: str) -> None:
    """Before: ``found <id> hidden test text`` (the second sandbox read the first's key, with the default uid pool
    and without it) and the host's session keyring held it. Now each sandbox's bubblewrap starts in a fresh session
    keyring (the reaper): the key dies with the sandbox that added it."""
    bwrap_or_skip()
    env = {k: v for k, v in os.environ.items() if k != "HOMEFIELD_SANDBOX_UIDS"}
    if uids:
        env["HOMEFIELD_SANDBOX_UIDS"] = uids
    tests = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", _TWO_SANDBOXES, str(tmp_path), tests], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert int(said["added"]) > 0, said  # the sandbox may add keys: to a keyring of its own
    assert said["found"].split()[0] == "-1" and said["host"] == "-1", said
