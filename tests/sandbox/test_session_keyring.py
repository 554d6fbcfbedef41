"""A sandbox's session keyring is its own (gatk53): a homefield started with a session keyring of its own (a systemd
service's, ``KeyringMode=private`` by default; a login through ``pam_keyinit``) handed it to every sandbox it
started, across user namespaces and host uids, and a key one sandbox added there was read by the next."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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


#: Run as :data:`_UID` (setpriv) by the test below: joins a session keyring of its own and puts a key there (as a
#: homefield with a session keyring), fills the uid's key quota (``kernel.keys.maxkeys``, 200 keys for a user but
#: root) and runs an agent sandbox that searches its own for the key; then frees the quota and runs another.
_FULL_QUOTA = r"""
import ctypes, errno, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from helpers.bwrap import agent_sandbox

libc = ctypes.CDLL(None, use_errno=True)
assert libc.syscall(250, 1, None) > 0
assert libc.syscall(248, b"user", b"hf-session-probe", b"hidden test text", 16, -3) > 0
probe = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
key = libc.syscall(250, 10, -3, b"user", b"hf-session-probe", 0)
buf = ctypes.create_string_buffer(64)
n = libc.syscall(250, 11, key, buf, 64) if key > 0 else -1
print(key, buf.raw[:max(n, 0)].decode() or "-")
'''
root = Path(sys.argv[1])
fill = libc.syscall(248, b"keyring", b"hf-fill", None, 0, -3)
n = 0
while libc.syscall(248, b"user", f"fill-{n}".encode(), b"x" * 64, 64, fill) > 0:
    n += 1
print("filled", n, errno.errorcode[ctypes.get_errno()], flush=True)
(root / "full").mkdir()
try:
    print("full", agent_sandbox(root / "full").says(probe).strip(), flush=True)
except OSError as exc:
    print("full", "refused", exc, flush=True)
libc.syscall(250, 7, fill)  # KEYCTL_CLEAR: the quota is the uid's again once the collector freed them
end, tries = time.time() + 90, 0
while True:  # each try in a folder of its own (a try that failed left its workspace behind)
    tries += 1
    (root / f"free-{tries}").mkdir()
    try:
        print("free", agent_sandbox(root / f"free-{tries}").says(probe).strip(), flush=True)
        break
    except OSError:
        if time.time() > end:  # the key collector frees the cleared keys in seconds, more on a busy machine
            raise
        time.sleep(0.2)
"""
#: The host uid the test runs as: no account's, in the tests' own range.
_UID = 1900000990


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe uses x86_64 system call numbers")
def test_a_sandbox_that_cannot_have_a_session_keyring_of_its_own_does_not_start(tmp_path: Path) -> None:
    """A user's homefield (uid :data:`_UID`, its sandboxes bubblewrap's user namespace alone) with a session keyring
    of its own holding a key: its sandbox starts in a fresh keyring and finds nothing (``free -1 -``). With the uid's
    key quota full (a real ``EDQUOT``: 200 keys; a sandbox of the same uid can fill it, its keys outlive it by
    seconds), the join fails. Before: the reaper ignored that and the sandbox ran in the inherited keyring and read
    the key (``full <id> hidden test text``). Now it does not start, with one line saying why."""
    bwrap_or_skip()
    tools = [shutil.which(n) for n in ("unshare", "setpriv", "mount")]
    if os.geteuid() != 0 or None in tools:
        pytest.skip("needs root, unshare, setpriv and mount")
    # the interpreter must be reachable by the uid: a private mount namespace shows a folder of root's home
    # (pyenv's) through a view of /root others may enter (nothing on the host changes)
    real = [Path(os.path.realpath(sys.executable)), Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    under_root = sorted({p.relative_to("/root").parts[0] for p in real if p.is_relative_to("/root")})
    top = Path(tempfile.mkdtemp(prefix="hf-keyring-", dir="/tmp"))  # tmp_path's parents are root's alone
    try:
        top.chmod(0o755)
        view, home = top / "root-view", top / "home"
        view.mkdir(mode=0o755)
        home.mkdir()
        os.chown(home, _UID, _UID)
        mounts = "".join(f"mkdir {view / n} && mount --bind /root/{n} {view / n} && " for n in under_root)
        if under_root:
            mounts += f"mount --rbind {view} /root && "
        tests = str(Path(__file__).resolve().parents[1])
        package = str(Path(__file__).resolve().parents[2])
        script = (f"{mounts}exec setpriv --reuid {_UID} --regid {_UID} --clear-groups env -i "
                  f"PATH={os.environ['PATH']} HOME={home} PYTHONPATH={package} {sys.executable} -c \"$0\" {home} "
                  f"{tests}")
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, _FULL_QUOTA],
                              capture_output=True, text=True, timeout=120, cwd=home)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    said = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert said["free"].split()[0] == "-1", said
    assert said["filled"].endswith("EDQUOT"), said
    assert said["full"].startswith("refused [Errno 122] the sandbox did not start: no session keyring of its own "
                                   "(keyctl: Disk quota exceeded; the key quota of its uid is full"), said
