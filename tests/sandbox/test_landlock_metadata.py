"""``chmod``, ``utime`` and extended attributes under Landlock (atk12 F4, issue 30): Landlock has no right
for metadata, so the launcher's supervisor (``sandbox/_landlock_supervisor.py``) makes them itself, only on
an inode beneath the policy's read-write roots. A host file outside keeps its mode, times and attributes whatever
path reaches it (a symlink, ``/proc/self/fd``, a string or a link swapped by another thread); honest code in its own
folders (``shutil.copy``, ``python -m venv``, ``pip install``) still works. Each check against the host has
its control (``none``): the same code changes the file without the sandbox. Real Landlock, real kernel."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest
from helpers.landlock import SANDBOXES, agent_reach, landlock_abi
from helpers.wheels import write_wheel


@pytest.fixture(scope="module")
def abi() -> int:
    return landlock_abi()


#: 2001-09-09: a host file's times before the agent runs.
BEFORE = 1_000_000_000


def _host_file(tmp_path: Path) -> Path:
    host = tmp_path / "host" / "grading-copy.py"
    host.parent.mkdir()
    host.write_text("x = 1\n")
    host.chmod(0o644)
    os.utime(host, (BEFORE, BEFORE))
    return host


def _unchanged(host: Path) -> bool:
    st = host.stat()
    return (st.st_mode & 0o7777) == 0o644 and st.st_mtime == BEFORE and st.st_atime == BEFORE


#: Every path form of chmod and utime on a host file, then the same in the agent's own folder.
PATH_FORMS = '''
import subprocess
host, machine = sys.argv[1], platform.machine()
AT_FDCWD, AT_EMPTY_PATH = -100, 0x1000
FCHMODAT2, FUTIMESAT = 452, {"x86_64": 261}.get(machine)
class Timeval(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]
def tool(*argv):
    if subprocess.run(argv, stderr=subprocess.DEVNULL).returncode:
        raise OSError("failed")
def forms(tag, path):
    p = path.encode()
    times = (Timeval * 2)(Timeval(86400, 0), Timeval(86400, 0))
    reach(f"chmod-{tag}", lambda: os.chmod(path, 0o600))
    reach(f"chmod-cmd-{tag}", lambda: tool("chmod", "000", path))
    reach(f"fchmodat2-{tag}", lambda: check(libc.syscall(FCHMODAT2, AT_FDCWD, p, 0o640, 0)))
    reach(f"utime-{tag}", lambda: os.utime(path, (0, 0)))
    reach(f"touch-cmd-{tag}", lambda: tool("touch", "-d", "1990-01-01", path))
    reach(f"libc-utime-{tag}", lambda: check(libc.utime(p, None)))
    reach(f"libc-utimes-{tag}", lambda: check(libc.utimes(p, times)))
    if FUTIMESAT:
        reach(f"futimesat-{tag}", lambda: check(libc.syscall(FUTIMESAT, AT_FDCWD, p, times)))
forms("host", host)
open("mine.py", "w").write("x = 2")
forms("ws", "mine.py")
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_chmod_and_utime_of_a_host_file_are_refused(abi: int, tmp_path: Path, sandbox: str) -> None:
    """atk12 F4: an agent ``chmod 000``\\ ed and ``utime``\\ d a host file it could name but not open (a
    rival's grading copy: the oracle then scored 0/4). Every path form is refused under Landlock and the
    file keeps its mode and times; the same calls in the agent's own folder work."""
    host = _host_file(tmp_path)
    out = agent_reach(sandbox, abi, tmp_path, PATH_FORMS, str(host))
    names = {k.removesuffix("-host") for k in out if k.endswith("-host")}
    assert len(names) == (8 if platform.machine() == "x86_64" else 7), out
    assert {k: v for k, v in out.items() if k.endswith("-ws")} == {f"{n}-ws": "yes" for n in names}, out
    confined = sandbox == "landlock"
    assert {k: v for k, v in out.items() if k.endswith("-host")} == {
        f"{n}-host": "no" if confined else "yes" for n in names}, out
    assert _unchanged(host) == confined


#: The ways around a path check: a symlink in the agent's folder to the host file or its folder, the
#: host file's ``O_PATH`` fd through ``/proc/self/fd`` and ``AT_EMPTY_PATH``, ``..`` out of the folder.
DETOURS = '''
host = sys.argv[1]
AT_EMPTY_PATH = 0x1000
os.symlink(host, "to-host")
os.symlink(os.path.dirname(host), "to-host-dir")
open("mine.py", "w").write("x = 2")
os.symlink("mine.py", "to-mine")
fd = os.open(host, os.O_PATH)
up = os.path.relpath(host)
reach("chmod-symlink", lambda: os.chmod("to-host", 0))
reach("utime-symlink", lambda: os.utime("to-host", (0, 0)))
reach("chmod-symlinked-dir", lambda: os.chmod(os.path.join("to-host-dir", os.path.basename(host)), 0))
reach("chmod-proc-self-fd", lambda: os.chmod(f"/proc/self/fd/{fd}", 0))
reach("utime-proc-self-fd", lambda: os.utime(f"/proc/thread-self/fd/{fd}", (0, 0)))
reach("fchmodat2-empty-path", lambda: check(libc.syscall(452, fd, b"", 0, AT_EMPTY_PATH)))
reach("utimensat-empty-path", lambda: check(libc.utimensat(fd, b"", None, AT_EMPTY_PATH)))
reach("chmod-dotdot", lambda: os.chmod(up, 0))
reach("utime-link-itself", lambda: os.utime("to-host", (0, 0), follow_symlinks=False))
reach("chmod-symlink-to-mine", lambda: os.chmod("to-mine", 0o600))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_path_reaches_a_host_file(abi: int, tmp_path: Path, sandbox: str) -> None:
    """The supervisor checks the inode it opened, not the path it was given: a symlink (to the file or to
    its folder), ``/proc/self/fd`` and ``AT_EMPTY_PATH`` on the host file's ``O_PATH`` fd and ``..`` all
    reach the host file and are refused; the symlink itself (``AT_SYMLINK_NOFOLLOW``, in the agent's
    folder) and a symlink to the agent's own file are changed."""
    host = _host_file(tmp_path)
    out = agent_reach(sandbox, abi, tmp_path, DETOURS, str(host))
    ours = {"utime-link-itself", "chmod-symlink-to-mine"}
    assert {k: v for k, v in out.items() if k in ours} == dict.fromkeys(ours, "yes"), out
    confined = sandbox == "landlock"
    assert {k: v for k, v in out.items() if k not in ours} == {
        k: "no" if confined else "yes" for k in out if k not in ours}, out
    assert _unchanged(host) == confined
    assert (tmp_path / "box" / "ws" / "to-host").lstat().st_mtime == 0
    assert (tmp_path / "box" / "ws" / "mine.py").stat().st_mode & 0o777 == 0o600


#: The fd forms: a file of a read-only root opened for reading is enough for ``fchmod`` and ``futimens``
#: (setuid root on a root-owned host interpreter, as root); then fds of the agent's own: a file, a pipe,
#: an ``O_TMPFILE``, a memfd.
FD_FORMS = '''
host = os.open(sys.argv[1], os.O_RDONLY)
reach("fchmod-host", lambda: os.fchmod(host, 0o600))
reach("fchmod-setuid-host", lambda: os.fchmod(host, 0o4755))
reach("futimens-host", lambda: os.utime(host, (0, 0)))
# its own ids (root without capabilities can give no other), yet that clears a setuid bit
reach("fchown-host", lambda: os.fchown(host, os.getuid(), os.getgid()))
mine = os.open("mine.py", os.O_CREAT | os.O_WRONLY, 0o644)
r, w = os.pipe()
unnamed = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
memfd = os.memfd_create("m")
for name, fd in (("mine", mine), ("pipe", r), ("tmpfile", unnamed), ("memfd", memfd)):
    reach(f"fchmod-{name}", lambda: os.fchmod(fd, 0o640))
    reach(f"futimens-{name}", lambda: os.utime(fd, (0, 0)))
    reach(f"fchown-{name}", lambda: os.fchown(fd, -1, os.getgid()))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_fd_forms_reach_no_host_file(abi: int, tmp_path: Path, sandbox: str) -> None:
    """A read-only root's file opened for reading (Landlock allows it) was enough to ``fchmod`` it, setuid
    bit included, and to ``fchown`` it (to its own owner: that clears a setuid bit): the fd forms are
    checked like the path forms (the fd's inode beneath a read-write root, or no host file: a pipe, an
    unnamed file, a memfd)."""
    host = _host_file(tmp_path)
    out = agent_reach(sandbox, abi, tmp_path, FD_FORMS, str(host), ro=[host.parent])
    confined = sandbox == "landlock"
    assert {k: v for k, v in out.items() if k.endswith("-host")} == {
        "fchmod-host": "no" if confined else "yes", "fchmod-setuid-host": "no" if confined else "yes",
        "futimens-host": "no" if confined else "yes", "fchown-host": "no" if confined else "yes"}, out
    ours = ("mine", "pipe", "tmpfile", "memfd")
    assert {k: v for k, v in out.items() if not k.endswith("-host")} == {
        f"{call}-{name}": "yes" for name in ours for call in ("fchmod", "futimens", "fchown")}, out
    assert _unchanged(host) == confined


#: Extended attributes: a POSIX ACL is a mode (``chmod 000`` by another name) and a user attribute of a
#: file the next attempt reads is a channel to it; by path, by fd of a file opened for reading, removed.
XATTRS = '''
host, ro_file = sys.argv[1], sys.argv[2]
ACL_NONE = bytes.fromhex("02000000" "01000000ffffffff" "04000000ffffffff" "20000000ffffffff")  # u::- g::- o::-
open("mine.py", "w").write("x = 2")
for tag, path in (("host", host), ("ws", "mine.py")):
    reach(f"user-attr-{tag}", lambda: os.setxattr(path, "user.hidden_tests", b"def test_x(): ..."))
    reach(f"remove-{tag}", lambda: os.removexattr(path, "user.hidden_tests"))
    reach(f"acl-{tag}", lambda: os.setxattr(path, "system.posix_acl_access", ACL_NONE))
fd = os.open(ro_file, os.O_RDONLY)
reach("user-attr-fd-host", lambda: os.setxattr(fd, "user.hidden_tests", b"def test_x(): ..."))
reach("remove-fd-host", lambda: os.removexattr(fd, "user.left"))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_extended_attributes_of_a_host_file_are_refused(abi: int, tmp_path: Path, sandbox: str) -> None:
    """Landlock has no right for extended attributes either: a POSIX ACL set on a host file took away
    every permission as ``chmod 000`` did, and a user attribute carried data to whoever reads the file
    next. Refused outside the agent's folders (by path and by fd), made inside; without the sandbox, made."""
    host = _host_file(tmp_path)
    ro_file = tmp_path / "ro" / "module.py"
    ro_file.parent.mkdir()
    ro_file.write_text("y = 1\n")
    try:
        os.setxattr(ro_file, "user.left", b"1")
    except OSError as exc:
        pytest.skip(f"no user attributes on {tmp_path}: {exc}")
    out = agent_reach(sandbox, abi, tmp_path, XATTRS, str(host), str(ro_file), ro=[ro_file.parent])
    confined = sandbox == "landlock"
    assert out == {"user-attr-host": "no" if confined else "yes", "acl-host": "no" if confined else "yes",
                   "remove-host": "no" if confined else "yes", "user-attr-ws": "yes", "acl-ws": "yes",
                   "remove-ws": "yes", "user-attr-fd-host": "no" if confined else "yes",
                   "remove-fd-host": "no" if confined else "yes"}, out
    assert _unchanged(host) == confined  # a minimal ACL is stored as the mode: 000
    assert ("user.hidden_tests" in os.listxattr(ro_file)) != confined
    assert ("user.left" in os.listxattr(ro_file)) == confined


#: Two processes sharing memory (threads would take turns on the GIL): one calls chmod/utime on a path its
#: twin keeps rewriting between the agent's file and the host file (the string in shared memory, then a
#: symlink swapped by rename) until both were hit; ``succeeded/failed`` calls.
RACES = '''
import mmap, signal, time
host = sys.argv[1]
open("mine.py", "w").write("x = 2")
mine = os.path.abspath("mine.py")
shared = mmap.mmap(-1, 4096)
path = ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(shared)))
def flip_string():
    one, two = host.encode() + b"\\0", mine.encode() + b"\\0"
    os.write(ready_w, b"1")
    while True:
        shared[:len(one)] = one
        shared[:len(two)] = two
def flip_link():
    if os.path.lexists("next"):  # the last twin was killed between the two calls
        os.unlink("next")
    os.write(ready_w, b"1")
    while True:
        for p in (host, mine):
            os.symlink(p, "next")
            os.replace("next", "link")
ready_r, ready_w = os.pipe()
before = os.stat(host)
def touched():
    now = os.stat(host)
    return (now.st_mode, now.st_mtime_ns) != (before.st_mode, before.st_mtime_ns)
def race(flipper, call):
    pid = os.fork()
    if pid == 0:
        flipper()
    os.read(ready_r, 1)  # the twin runs; calls until both files were hit (the host's: refused or changed)
    done = failed = 0
    end = time.monotonic() + 20
    while time.monotonic() < end and (done < 20 or (failed < 20 and not touched())):
        if call(done + failed) == 0:
            done += 1
        else:
            failed += 1
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return f"{done}/{failed}"
os.symlink(mine, "link")
def ok(fn):
    try:
        fn()
        return 0
    except OSError:
        return -1
print("string-chmod", race(flip_string, lambda i: libc.chmod(path, 0o600 | (i & 0o44))))
print("string-utime", race(flip_string, lambda i: libc.utime(path, None)))
print("link-chmod", race(flip_link, lambda i: ok(lambda: os.chmod("link", 0o600 | (i & 0o44)))))
print("link-utime", race(flip_link, lambda i: ok(lambda: os.utime("link", (i, i)))))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_race_on_the_path_changes_no_host_file(abi: int, tmp_path: Path, sandbox: str) -> None:
    """The supervisor reads the path from the caller's memory once and changes the inode it opened and
    checked: a process rewriting the string in shared memory, or swapping a symlink, between the agent's
    file and the host file gets changes on the agent's file only (some calls land there: the race ran),
    none on the host file; without the sandbox the host file changes."""
    host = _host_file(tmp_path)
    out = agent_reach(sandbox, abi, tmp_path, RACES, str(host), timeout_s=120)
    assert set(out) == {"string-chmod", "string-utime", "link-chmod", "link-utime"}, out
    counts = [tuple(map(int, v.split("/"))) for v in out.values()]
    if sandbox == "landlock":
        assert all(done >= 20 and failed >= 20 for done, failed in counts), out
        assert _unchanged(host)
    else:  # a call may fail here too, on a string read half-rewritten
        assert not _unchanged(host)


#: A second seccomp listener: the most recent one's "continue" would override the supervisor's answers.
SECOND_LISTENER = '''
class Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]
allow = (Filter * 1)(Filter(0x06, 0, 0, 0x7FFF0000))
check(libc.prctl(38, 1, 0, 0, 0))  # no new privileges: a filter needs it
SECCOMP = {"x86_64": 317, "aarch64": 277}[platform.machine()]
reach("second-listener", lambda: check(libc.syscall(SECCOMP, 1, 1 << 3, ctypes.byref(Prog(1, allow)))))
reach("plain-filter", lambda: check(libc.syscall(SECCOMP, 1, 0, ctypes.byref(Prog(1, allow)))))
'''


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_command_cannot_add_a_listener(abi: int, tmp_path: Path, sandbox: str) -> None:
    """seccomp's notifications go to the most recent listener, whose ``CONTINUE`` runs the call: a command
    that added its own would answer for the supervisor. ``seccomp(SECCOMP_SET_MODE_FILTER,
    NEW_LISTENER)`` is refused under Landlock (a filter without a listener may still be added)."""
    out = agent_reach(sandbox, abi, tmp_path, SECOND_LISTENER)
    assert out == {"second-listener": "no" if sandbox == "landlock" else "yes", "plain-filter": "yes"}, out


#: Honest tools in the agent's folder: a venv with pip, a wheel with a console script installed into it,
#: the script run, a tree copied with its modes and times.
TOOLS = '''
import shutil, subprocess
def ok(*argv):
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode:
        raise OSError(proc.stderr[-300:])
reach("venv", lambda: ok(sys.executable, "-m", "venv", "venv"))
reach("pip-install", lambda: ok("venv/bin/python", "-m", "pip", "install", "-q", "--no-index", "--no-cache-dir",
                                sys.argv[1]))
reach("console-script", lambda: ok("venv/bin/tiny-hello"))
reach("copytree", lambda: shutil.copytree("venv/bin", "bin-copy"))
reach("copy-keeps-mode", lambda: None if os.access("bin-copy/tiny-hello", os.X_OK) else check(-1))
'''


@pytest.mark.slow
def test_venv_pip_and_copies_work_under_the_policy(abi: int, tmp_path: Path) -> None:
    """Refusing chmod and utime outright broke ``shutil.copy``, ``python -m venv`` and installers; made by
    the supervisor in the agent's folders they work: a venv with pip, a local wheel with a console script
    installed (pip ``chmod``\\ s the script), the script run, a tree copied with its modes."""
    wheel = write_wheel(tmp_path / "box" / "ws", "tiny-hello", "1.0", {
        "tiny_hello.py": b"def main():\n    print('hello')\n"},
        extra_dist_info={"entry_points.txt": b"[console_scripts]\ntiny-hello = tiny_hello:main\n"})
    out = agent_reach("landlock", abi, tmp_path, TOOLS, str(wheel), timeout_s=300)
    assert out == dict.fromkeys(("venv", "pip-install", "console-script", "copytree", "copy-keeps-mode"), "yes"), \
        out | {"stderr": (tmp_path / "agent.err").read_text()[-1000:]}
