"""satk48: each sandbox under a host uid of its own (``HOMEFIELD_SANDBOX_UIDS``, :mod:`pytest_homefield.sandbox.
host_uids`): what the sandbox sees, what the host finds after it, and the pool's lease.

What each quota gains is in ``test_host_quotas.py`` and ``test_proc_sys.py``. Real bubblewrap, run as root
(skipped with the reason elsewhere).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from helpers.bwrap import agent_sandbox, own_uids

from pytest_homefield.sandbox import host_uids

#: Says what the sandbox is (its uid, its workspace's owner and the owner of ``/usr`` as it sees them), then
#: leaves what the host must undo: a folder with a file, a set-user-ID file and a link to ``argv[1]``.
LEAVES = """
import os, sys
print(os.getuid(), os.stat(".").st_uid, os.stat("/usr").st_uid)
os.makedirs("made/deeper")
open("made/deeper/f", "w").write("x")
open("suid", "w").write("#!/bin/sh\\n")
os.chmod("suid", 0o4755)
os.symlink(sys.argv[1], "link")
"""


def test_the_sandbox_is_root_inside_and_the_host_gets_its_folders_back(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside: uid 0, its workspace its own, the host's root files 65534. After: every entry of the workspace
    the folder's owner's again (root's), the set-user-ID bit gone, a link's target untouched (outside, owned by
    4242: ``lchown``, no link followed)."""
    own_uids(monkeypatch)
    target = Path(tempfile.mkdtemp(dir="/tmp")) / "target"
    target.write_text("mine")
    os.chown(target, 4242, 4242)
    try:
        sandbox = agent_sandbox(tmp_path)
        assert sandbox.says(LEAVES, str(target)).split() == ["0", "0", "65534"]
        owners = {str(p.relative_to(sandbox.ws)): (p.lstat().st_uid, p.lstat().st_gid)
                  for p in sandbox.ws.rglob("*")}
        assert owners == {n: (0, 0) for n in ("made", "made/deeper", "made/deeper/f", "suid", "link")}, owners
        assert (sandbox.ws.stat().st_uid, sandbox.box.home.stat().st_uid, sandbox.box.tmpdir.stat().st_uid) == \
            (0, 0, 0)
        assert not (sandbox.ws / "suid").stat().st_mode & stat.S_ISUID  # before the hand back: 04755, uid 19…
        assert (target.stat().st_uid, target.stat().st_gid) == (4242, 4242)
    finally:
        target.unlink()
        target.parent.rmdir()


def test_no_sandbox_starts_when_every_uid_of_the_pool_is_leased(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one uid: while sandbox A holds it, sandbox B does not start (``EAGAIN``), never under A's uid;
    once A is done, B starts."""
    own_uids(monkeypatch)
    monkeypatch.setenv(host_uids.ENV, "1900000500:1")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    a, b = agent_sandbox(tmp_path / "a"), agent_sandbox(tmp_path / "b")
    hold = ("import os, time\nprint('held', flush=True)\nend = time.time() + 30\n"
            "while not os.path.exists('release') and time.time() < end:\n    time.sleep(0.05)\n")
    with a.holding(hold) as (held, codes):
        assert held == "held"
        with pytest.raises(OSError) as refused:
            b.run("print('ran')", name="other")
    assert refused.value.errno == errno.EAGAIN and codes == [0]
    assert b.says("print('ran')").strip() == "ran"


def test_the_pool_is_off_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset, empty or ``0``: no pool; a setting that is no ``BASE:COUNT`` of uids is refused."""
    for value in ("", "0"):
        monkeypatch.setenv(host_uids.ENV, value)
        assert host_uids.pool() is None
    monkeypatch.delenv(host_uids.ENV)
    assert host_uids.pool() is None
    if os.geteuid() == 0 and shutil.which("setpriv"):
        monkeypatch.setenv(host_uids.ENV, "0:5")
        with pytest.raises(ValueError):
            host_uids.pool()
