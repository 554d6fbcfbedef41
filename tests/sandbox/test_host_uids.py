"""satk48: each sandbox under a host uid of its own (``HOMEFIELD_SANDBOX_UIDS``, :mod:`pytest_homefield.sandbox.
host_uids`): what the sandbox sees, what the host finds after it, and the pool's lease.

What each quota gains is in ``test_host_quotas.py`` and ``test_proc_sys.py``. Real bubblewrap, run as root
(skipped with the reason elsewhere).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers.bwrap import AgentSandbox, agent_sandbox, bwrap_or_skip, own_uids

from pytest_homefield.sandbox import _reaper, host_uids, proccap
from pytest_homefield.sandbox.testrun import run_tests

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


def _two_sandboxes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, uid: int) -> tuple[AgentSandbox, AgentSandbox]:
    """Sandboxes ``a`` and ``b`` in folders of those names below ``tmp_path``, every sandbox of the calling test
    under a host uid of its own from a pool of one, ``uid`` (skips where that cannot be: :func:`own_uids`)."""
    own_uids(monkeypatch)
    monkeypatch.setenv(host_uids.ENV, f"{uid}:1")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    return agent_sandbox(tmp_path / "a"), agent_sandbox(tmp_path / "b")


def test_no_sandbox_starts_when_every_uid_of_the_pool_is_leased(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one uid: while sandbox A holds it, sandbox B does not start (``EAGAIN``), never under A's uid, and
    a graded test run's error says so; once A is done, B starts."""
    a, b = _two_sandboxes(tmp_path, monkeypatch, 1900000500)
    hold = ("import os, time\nprint('held', flush=True)\nend = time.time() + 30\n"
            "while not os.path.exists('release') and time.time() < end:\n    time.sleep(0.05)\n")
    with a.holding(hold) as (held, codes):
        assert held == "held"
        with pytest.raises(OSError) as refused:
            b.run("print('ran')", name="other")
        work = tmp_path / "w"
        (work / "tests").mkdir(parents=True)
        (work / "tests" / "test_t.py").write_text("def test_t():\n    pass\n")
        graded = run_tests(work, f"{sys.executable} -m pytest", ["tests/test_t.py"], out_dir=tmp_path / "out",
                           sandbox="bwrap")
    assert refused.value.errno == errno.EAGAIN and codes == [0]
    # the graded run's error says why it could not run (before: "exit status 127: not found or not executable")
    assert graded.exit_code == 127 and not graded.outcomes, graded
    assert graded.error is not None and graded.error.startswith("the test command could not be run: cannot start ")
    assert graded.error.endswith(f"[Errno {errno.EAGAIN}] {os.strerror(errno.EAGAIN)}: '{bwrap_or_skip()}'"), graded
    assert b.says("print('ran')").strip() == "ran"


def test_the_pool_is_roots_default_and_off_when_set_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """As root with ``setpriv`` (the machine's accounts holding none of its uids): unset or empty, the default pool;
    ``0`` or ``off``: none; a setting that is no ``BASE:COUNT`` of uids is refused. Not root: none, whatever the
    setting (before satk52: unset was off)."""
    for value in ("0", "off"):
        monkeypatch.setenv(host_uids.ENV, value)
        assert host_uids.pool() is None
    root = os.geteuid() == 0 and shutil.which("setpriv") is not None
    for value in ("", None):
        if value is None:
            monkeypatch.delenv(host_uids.ENV)
        else:
            monkeypatch.setenv(host_uids.ENV, value)
        assert host_uids.pool() == (host_uids.DEFAULT_POOL if root and host_uids.pool_is_free(*host_uids.DEFAULT_POOL)
                                    else None)
    if root:
        monkeypatch.setenv(host_uids.ENV, "0:5")
        with pytest.raises(ValueError):
            host_uids.pool()


def test_a_pool_an_account_or_group_holds_is_not_free() -> None:
    """The machine's root account (uid and gid 0) and the account ``nobody`` (65534) hold an id of a pool that
    covers them: not free; the ranges around them are."""
    assert not host_uids.pool_is_free(0, 1)
    assert not host_uids.pool_is_free(65530, 10)


def test_a_pool_the_user_namespace_does_not_map_is_not_free() -> None:
    """Root of a user namespace that maps its own uid alone (``unshare --map-root-user``, as a container that maps
    65,536 uids): the default pool is not free there (``setpriv`` to one of its uids would fail: no sandbox would
    start), so a root homefield there keeps one uid for its sandboxes."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare")
    ask = "from pytest_homefield.sandbox import host_uids as h; print(h.pool_is_free(*h.DEFAULT_POOL))"
    inside = subprocess.run([unshare, "--user", "--map-root-user", sys.executable, "-c", ask], capture_output=True,
                            text=True, timeout=60)
    if inside.returncode != 0 and "unshare" in inside.stderr:
        pytest.skip(f"no user namespace here: {inside.stderr.strip()[-200:]}")
    assert inside.stdout.strip() == "False", inside.stdout + inside.stderr


def uid_runs(uid: int) -> bool:
    """Whether a process runs with ``uid`` as its real, effective, saved or file system uid."""
    for pid in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{pid}/status").read_bytes()
        except OSError:
            continue
        if any(line.startswith(b"Uid:") and str(uid).encode() in line.split() for line in status.splitlines()):
            return True
    return False


def reaper_below(me: int) -> int:
    """The pid of the reaper (``_reaper.py``) process ``me`` started, waited for 30 s at most."""
    end = time.time() + 30
    while time.time() < end:
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except (OSError, ValueError, IndexError):
                continue
            if ppid == me and b"_reaper.py" in cmdline:
                return int(pid)
        time.sleep(0.05)
    raise AssertionError("no reaper")


def _reaper_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: int,
                   make: str) -> tuple[AgentSandbox, AgentSandbox]:
    """Sandboxes A and B of a pool of one uid, ``base`` (:func:`_two_sandboxes`): A runs ``make`` (Python making
    ``made`` in its workspace, ``os`` imported), prints the owner of ``made`` it sees (root's, checked) and sleeps,
    and its reaper is killed outright (``SIGKILL``, no handler runs) meanwhile; returned once A ended, its
    workspace's ``release`` removed."""
    a, b = _two_sandboxes(tmp_path, monkeypatch, base)
    hold = f"import os, time\n{make}\nprint(os.stat('made').st_uid, flush=True)\ntime.sleep(60)\n"
    with a.holding(hold) as (held, codes):
        assert held == "0", (tmp_path / "a" / "agent.err").read_text()
        os.kill(reaper_below(os.getpid()), signal.SIGKILL)
        end = time.time() + 30
        while not codes and time.time() < end:
            time.sleep(0.05)
    (a.ws / "release").unlink()
    return a, b


def _gone_with_its_reaper(uid: int) -> None:
    """Waits (30 s at most) until no process runs under ``uid``, a sandbox's whose reaper was killed (they die with
    it, by parent death signals, not at once), fails when one still does, then sweeps the killed reaper's cgroups,
    empty now, as a session's start does (none left to other tests)."""
    end = time.time() + 30
    while uid_runs(uid) and time.time() < end:
        time.sleep(0.05)
    assert not uid_runs(uid), "the sandbox outlived its reaper"
    proccap.sweep_cgroups()


def test_what_a_reaper_killed_outright_handed_over_the_next_lease_takes_back(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one uid: sandbox A's reaper is killed outright (``SIGKILL``, no handler runs) while A runs; A's
    workspace and what A made there are left the leased uid's (before satk52: for good, the uid's to whatever
    sandbox leased it next), and A dies with its reaper (before satk52, A's inner bubblewrap lived on, init's
    child, under a uid no lease held). The next lease (sandbox B) takes them back, the folder's owner's again,
    then runs under that uid; B's own folders are back to root after it."""
    base = 1900000600
    a, b = _reaper_killed(tmp_path, monkeypatch, base,
                          "os.makedirs('made/deeper')\nopen('made/deeper/f', 'w').write('x')")
    left = {str(p.relative_to(a.ws)): p.lstat().st_uid for p in [a.ws, *a.ws.rglob("*")]}
    assert left == {n: base for n in (".", "made", "made/deeper", "made/deeper/f")}, left
    _gone_with_its_reaper(base)  # before satk52: its inner bubblewrap outlived it, for good
    assert b.says("import os; print(os.getuid(), os.stat('.').st_uid)").split() == ["0", "0"]
    back = {str(p.relative_to(a.ws)): (p.lstat().st_uid, p.lstat().st_gid) for p in [a.ws, *a.ws.rglob("*")]}
    assert back == {n: (0, 0) for n in (".", "made", "made/deeper", "made/deeper/f")}, back
    assert (b.ws.stat().st_uid, b.box.home.stat().st_uid) == (0, 0)


def journal_of(folder: Path, uid: int, paths: list[Path]) -> int:
    """A lock file for ``uid`` in ``folder``, locked by this process, whose journal names ``paths`` (root's, as
    the reaper writes it before it hands them over): its descriptor."""
    import fcntl

    fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _reaper.journal(fd, [str(p) for p in paths], [_reaper.owner(str(p)) for p in paths])
    return fd


def test_the_take_back_waits_for_the_uids_processes_and_leaves_another_folder_alone(tmp_path: Path) -> None:
    """A journal naming two folders handed to a uid: while a process of that uid runs (``setpriv``), nothing is
    taken back (``False``); once it is gone, the folder still the uid's with the written inode is back to root,
    entry by entry, a link's target untouched; the other, removed and made again at its path (another inode),
    is left the uid's; the journal is wiped."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv")
    uid = 1900000700
    kept, swapped, locks = tmp_path / "kept", tmp_path / "swapped", tmp_path / "locks"
    for d in (kept, swapped, locks, kept / "sub"):
        d.mkdir()
    (kept / "sub" / "f").write_text("x")
    target = tmp_path / "target"
    target.write_text("mine")
    os.chown(target, 4242, 4242)
    (kept / "link").symlink_to(target)
    fd = journal_of(locks, uid, [kept, swapped])
    _reaper.hand_over([str(kept), str(swapped)], uid, uid)
    swapped.rmdir()
    swapped.mkdir()
    os.chown(swapped, uid, uid)
    proc = subprocess.Popen([setpriv, "--reuid", str(uid), "--regid", str(uid), "--clear-groups", "sleep", "30"])
    try:
        end = time.time() + 10
        while not uid_runs(uid) and time.time() < end:
            time.sleep(0.01)
        assert _reaper.take_back(fd, uid) is False
        assert kept.stat().st_uid == uid and os.fstat(fd).st_size > 0
    finally:
        proc.kill()
        proc.wait()
    assert _reaper.take_back(fd, uid) is True
    owners = {str(p.relative_to(tmp_path)): p.lstat().st_uid for p in [kept, *kept.rglob("*"), swapped]}
    assert owners == {"kept": 0, "kept/sub": 0, "kept/sub/f": 0, "kept/link": 0, "swapped": uid}, owners
    assert target.stat().st_uid == 4242 and os.fstat(fd).st_size == 0
    os.close(fd)


def test_a_lease_skips_a_uid_a_process_runs_under_and_takes_back_another_uids_leftovers(tmp_path: Path) -> None:
    """A pool of three: a process runs under the first (``setpriv``: a stranger's, or a sandbox that outlived its
    reaper), a killed reaper's journal names a folder handed to the third. The lease is the second uid; on the way
    it takes the third's folder back to root and wipes its journal (unlocked: no reaper holds it)."""
    import fcntl

    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv")
    base = 1900000800
    locks, left = tmp_path / "locks", tmp_path / "left"
    locks.mkdir()
    (left / "sub").mkdir(parents=True)
    fd = journal_of(locks, base + 2, [left])
    _reaper.hand_over([str(left)], base + 2, base + 2)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    proc = subprocess.Popen([setpriv, "--reuid", str(base), "--regid", str(base), "--clear-groups", "sleep", "30"])
    try:
        end = time.time() + 10
        while not uid_runs(base) and time.time() < end:
            time.sleep(0.01)
        leased = _reaper.lease(base, 3, str(locks))
    finally:
        proc.kill()
        proc.wait()
    assert leased is not None and leased[0] == base + 1
    os.close(leased[1])
    assert (left.stat().st_uid, (left / "sub").stat().st_uid) == (0, 0)
    assert (locks / str(base + 2)).stat().st_size == 0



#: Makes a chain of ``argv[1]`` folders named ``d`` (by descriptor: no path grows) and, at its bottom, a set-user-ID
#: program; prints ``made``.
CHAIN = """
import os, sys
fd = os.open(".", os.O_RDONLY)
for _ in range(int(sys.argv[1])):
    os.mkdir("d", dir_fd=fd)
    below = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = below
f = os.open("suid", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fd)
os.write(f, b"#!/bin/sh\\nid\\n")
os.fchmod(f, 0o4755)
print("made")
"""


def chain_owners(top: Path) -> tuple[int, set[int], os.stat_result]:
    """``(depth, the owners of its folders, the lstat of its bottom's suid)`` of a :data:`CHAIN` made in ``top``."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    depth, owners = 0, set()
    while True:
        try:
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            break
        os.close(fd)
        fd = below
        depth += 1
        owners.add(os.fstat(fd).st_uid)
    try:
        return depth, owners, os.stat("suid", dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def test_a_tree_deeper_than_the_reapers_descriptors_is_all_handed_back(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """satk54: the sandbox leaves a chain of 300 folders, a set-user-ID program at its bottom, while the reaper may
    hold 128 descriptors (``RLIMIT_NOFILE``: 1,024 is a login's and a systemd service's default). All of it is root's
    again after, the bit gone. Before: the walk held a descriptor a level, and below the 120th level or so nothing
    was handed back: the program stayed the leased uid's, set-user-ID (``04755``), on the host's disk: any user who
    reached it ran as that uid, which owns every later sandbox of the uid (their user namespace)."""
    import resource

    own_uids(monkeypatch)
    sandbox = agent_sandbox(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))  # the reaper inherits it
    try:
        said = sandbox.says(CHAIN, "300")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert said.strip() == "made"
    depth, owners, suid = chain_owners(sandbox.ws)
    assert (depth, owners, suid.st_uid, stat.S_IMODE(suid.st_mode) & stat.S_ISUID) == (300, {0}, 0, 0), \
        (owners, suid.st_uid, oct(suid.st_mode))


def test_the_hand_over_walks_any_tree_with_few_descriptors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of branches at every depth (40 levels, three folders and a file each, a link out at the bottom) is
    handed over entry by entry while :func:`~pytest_homefield.sandbox._reaper.hand_over` holds 4 descriptors at
    most (closed levels opened again through ``..``); the link's target keeps its owner and no descriptor is left
    open."""
    if os.geteuid() != 0:
        pytest.skip("needs root (lchown to another uid)")
    monkeypatch.setattr(_reaper, "HAND_OVER_FDS", 4)
    target = tmp_path / "target"
    target.write_text("mine")
    top = tmp_path / "top"
    level = top
    for _ in range(40):
        for side in ("a", "b"):
            (level / side / "x").mkdir(parents=True)
            (level / side / "x" / "f").write_text("")
        (level / "f").write_text("")
        level = level / "c"
    level.mkdir()
    (level / "link").symlink_to(target)
    before = len(os.listdir("/proc/self/fd"))
    _reaper.hand_over([str(top)], 4242, 4343)
    assert len(os.listdir("/proc/self/fd")) == before
    entries = [top, *top.rglob("*")]
    assert len(entries) == 1 + 40 * 8 + 1  # the top, 8 a level (its c the next), the link
    assert {(p.lstat().st_uid, p.lstat().st_gid) for p in entries} == {(4242, 4343)}
    assert target.stat().st_uid == 0


def test_what_a_killed_reaper_handed_over_is_taken_back_after_a_reboot(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of one uid: sandbox A's reaper is killed outright while A runs, then the machine reboots, which clears
    ``/run`` (a tmpfs): simulated by removing the uid's lock file there, the one file of it this test's pool has.
    The next lease (sandbox B) still takes A's workspace back to its owner (before: the journal was the lock file in
    ``/run/homefield-uids``, gone with it, and A's folder stayed the leased uid's, every later sandbox of the uid
    its owner)."""
    base = 1900000650
    a, b = _reaper_killed(tmp_path, monkeypatch, base, "os.makedirs('made')")
    assert {p.lstat().st_uid for p in [a.ws, *a.ws.rglob("*")]} == {base}
    _gone_with_its_reaper(base)
    (host_uids.LOCK_DIR / str(base)).unlink()  # the reboot: /run's files are gone
    assert b.says("import os; print(os.getuid(), os.stat('.').st_uid)").split() == ["0", "0"]
    back = {str(p.relative_to(a.ws)): p.lstat().st_uid for p in [a.ws, *a.ws.rglob("*")]}
    assert back == {".": 0, "made": 0}, back


def test_a_lease_takes_back_what_the_journals_and_an_earlier_versions_lock_file_name(tmp_path: Path) -> None:
    """A pool of three, a lock folder emptied as a reboot empties ``/run``: a journal in the journal folder names a
    folder handed to the second uid, an earlier version's journal in the third's lock file another. The lease is
    the first uid; on the way both folders are back to root and both journals wiped."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    base = 1900000850
    locks, journals, new, old = (tmp_path / n for n in ("locks", "journals", "new", "old"))
    for d in (locks, journals, new, old):
        d.mkdir()
    fd = os.open(journals / f"{base + 1}.journal", os.O_RDWR | os.O_CREAT, 0o600)
    _reaper.journal(fd, [str(new)], [_reaper.owner(str(new))])
    os.close(fd)
    st = old.lstat()  # an earlier version's line: no file system id
    (locks / str(base + 2)).write_text(f"{os.fsencode(str(old)).hex()} 0 0 {st.st_dev} {st.st_ino}\n")
    _reaper.hand_over([str(new)], base + 1, base + 1)
    _reaper.hand_over([str(old)], base + 2, base + 2)
    leased = _reaper.lease(base, 3, str(locks), str(journals))
    assert leased is not None and leased[0] == base
    for fd in leased[1:]:
        os.close(fd)
    assert (new.stat().st_uid, old.stat().st_uid) == (0, 0)
    assert (journals / f"{base + 1}.journal").stat().st_size == 0 and (locks / str(base + 2)).stat().st_size == 0


def test_the_take_back_knows_a_folder_by_its_file_system_when_a_reboot_renumbered_its_device(tmp_path: Path) -> None:
    """A journal written before a reboot that numbered the folders' device anew (an anonymous device: btrfs,
    overlayfs): the folder with the written inode and file system id (``statfs``' ``f_fsid``) is back to root; one
    whose file system id is another too is left the uid's (before: the device alone decided, and both were left)."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    uid = 1900000750
    moved, other = tmp_path / "moved", tmp_path / "other"
    for d in (moved, other, moved / "sub"):
        d.mkdir()
    lines = []
    for d, fs_shift in ((moved, 0), (other, 1)):
        st = d.lstat()
        fs = _reaper.fsid(str(d))
        assert fs != 0
        lines.append(f"{os.fsencode(str(d)).hex()} 0 0 {st.st_dev + 1} {st.st_ino} {fs + fs_shift}\n")
    _reaper.hand_over([str(moved), str(other)], uid, uid)
    fd = os.open(tmp_path / "journal", os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, "".join(lines).encode())
    assert _reaper.take_back(fd, uid) is True
    os.close(fd)
    owners = {p.name: p.lstat().st_uid for p in (moved, moved / "sub", other)}
    assert owners == {"moved": 0, "sub": 0, "other": uid}, owners


def test_the_journal_folder_is_roots_alone_or_the_lock_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal folder is made ``0700`` (its parent too) and used; one open to others, or a link, is refused as the
    lock folder's would be; where it cannot be made (a read-only or missing ``/var/lib``), the lock folder holds the
    journals."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the folders must be root's")
    made = tmp_path / "lib" / "homefield" / "uids"
    (tmp_path / "lib").mkdir()
    monkeypatch.setattr(host_uids, "JOURNAL_DIR", made)
    assert host_uids.journal_dir() == made
    assert (stat.S_IMODE(made.stat().st_mode), stat.S_IMODE(made.parent.stat().st_mode)) == (0o700, 0o700)
    made.chmod(0o777)
    with pytest.raises(PermissionError):
        host_uids.journal_dir()
    made.rmdir()
    made.symlink_to(tmp_path)
    with pytest.raises(PermissionError):
        host_uids.journal_dir()
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(host_uids, "JOURNAL_DIR", tmp_path / "file" / "homefield" / "uids")
    assert host_uids.journal_dir() == host_uids.lock_dir()


def test_two_homefields_of_one_journal_folder_and_two_lock_folders_lease_two_uids(tmp_path: Path) -> None:
    """satk56: two root homefields whose ``/run`` differs (a private tmpfs of one, a service's own ``/run``) but
    whose ``/var/lib`` is one: homefield A leases the pool's first uid and hands it a folder (its journal written,
    its sandbox not started yet: no process of that uid for :func:`~._reaper.running_uids` to see); homefield B's
    lease, in a process of its own, took that same uid (its lock file another, in its own lock folder), and on the
    way took A's folder back to root (A's journal, unlocked to B, read as a killed reaper's): A's sandbox would
    start on a workspace it cannot write, or two sandboxes run under one uid. The lease now locks the journal file
    too: B leases the second uid and leaves A's folder and journal alone."""
    if os.geteuid() != 0:
        pytest.skip("needs root (chown)")
    base = 1900000900
    run_a, run_b, journals, folder = (tmp_path / n for n in ("run-a", "run-b", "journals", "ws"))
    for d in (run_a, run_b, journals, folder):
        d.mkdir()
    leased = _reaper.lease(base, 2, str(run_a), str(journals))
    assert leased is not None and leased[0] == base
    try:
        _reaper.journal(leased[2], [str(folder)], [_reaper.owner(str(folder))])
        _reaper.hand_over([str(folder)], base, base)
        code = ("import sys; from pytest_homefield.sandbox import _reaper; "
                f"got = _reaper.lease({base}, 2, {str(run_b)!r}, {str(journals)!r}); print(got and got[0])")
        other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert other.stdout.strip() == str(base + 1), other.stdout + other.stderr
        assert folder.stat().st_uid == base and os.fstat(leased[2]).st_size > 0
    finally:
        for fd in leased[1:]:
            os.close(fd)


@pytest.mark.xfail(strict=True, reason="satk56: two root homefields that share no lock folder, no journal folder and "
                                       "no PID namespace (two containers of their own on one kernel, the host's "
                                       "uids unmapped by no user namespace) lease the same uid: neither lock "
                                       "is the other's and the other's sandbox process is not in its /proc. Their "
                                       "sandboxes then share the uid's host quotas (pipe buffers, epoll watches, "
                                       "descriptors in flight, inotify and fanotify: the satk46 xfail above), "
                                       "each still in a PID namespace of its own, with its own binds. "
                                       "No kernel object both containers see marks a uid taken")
def test_a_homefield_of_another_pid_namespace_and_folders_leases_another_uid(tmp_path: Path) -> None:
    """Homefield A's sandbox runs under the pool's first uid (``setpriv``, A's lock folder and journals); homefield
    B, in a PID namespace of its own (``unshare --pid --mount-proc``: another container) with folders of its own,
    must lease another uid."""
    setpriv, unshare = shutil.which("setpriv"), shutil.which("unshare")
    if os.geteuid() != 0 or setpriv is None or unshare is None:
        pytest.skip("needs root, setpriv and unshare")
    base = 1900000950
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    leased = _reaper.lease(base, 2, str(tmp_path / "a"))
    assert leased is not None and leased[0] == base
    proc = subprocess.Popen([setpriv, "--reuid", str(base), "--regid", str(base), "--clear-groups", "sleep", "30"])
    try:
        end = time.time() + 10
        while not uid_runs(base) and time.time() < end:
            time.sleep(0.01)
        code = ("from pytest_homefield.sandbox import _reaper; "
                f"got = _reaper.lease({base}, 2, {str(tmp_path / 'b')!r}); print(got and got[0])")
        other = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
                               capture_output=True, text=True, timeout=60,
                               env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    finally:
        proc.kill()
        proc.wait()
        for fd in leased[1:]:
            os.close(fd)
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == str(base + 1), other.stdout
