"""satk43: no sandbox writes the host's kernel settings.

Started by root, bubblewrap maps the sandbox's uid 0 to the host's uid 0 (it maps only the uid that started it),
and a sysctl's write is checked against that uid and the file's mode, not against a capability: with every
capability dropped, an agent (and a graded test run, which runs the agent's code) wrote the host's
``kernel.core_pattern`` (a ``|program`` there is run as the host's root with every capability when any process
dumps core), ``kernel.pid_max``, ``fs.file-max``, ``vm.drop_caches``. bubblewrap left ``/proc/sys`` writable (it
covers it only when ``access(W_OK)`` says so, which the folder never does). Now ``/proc/sys`` (and
``/proc/sysrq-trigger`` where the kernel has it) is bound read-only over itself in every sandbox
(:data:`pytest_homefield.sandbox.bwrap.PROC_READ_ONLY`): a write is ``EROFS``, and what it shows is still the
sandbox's own (its network namespace's interfaces). The probe opens for writing and writes nothing.

Real bubblewrap (skipped with the probe's reason where it cannot create namespaces).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from helpers.bwrap import agent_sandbox, bwrap_or_skip, graded_says

from pytest_homefield.sandbox.bwrap import python_paths

#: Opens each setting for writing (never writes: opening changes nothing) and says how it went; lists the
#: network namespace's interfaces as ``/proc/sys`` shows them.
PROBE = """
import errno, json, os
seen = {}
for name in ("kernel/core_pattern", "kernel/core_uses_pid", "kernel/pid_max", "fs/file-max", "vm/drop_caches",
             "../sysrq-trigger"):
    path = os.path.normpath("/proc/sys/" + name)
    if not os.path.exists(path):
        continue
    try:
        os.close(os.open(path, os.O_WRONLY))
        seen[name] = "writable"
    except OSError as exc:
        seen[name] = errno.errorcode.get(exc.errno, str(exc.errno))
print(json.dumps([seen, sorted(os.listdir("/proc/sys/net/ipv4/conf")), open("/proc/sys/kernel/core_pattern").read()]))
"""

def _check(out: str) -> None:
    seen, interfaces, core_pattern = json.loads(out)
    assert seen and not [k for k, v in seen.items() if v == "writable"], seen
    assert "kernel/core_pattern" in seen
    assert interfaces == ["all", "default", "lo"], interfaces  # its own network namespace, read through the bind
    assert core_pattern == Path("/proc/sys/kernel/core_pattern").read_text()  # readable as before


def test_an_agent_cannot_write_the_hosts_sysctls(tmp_path: Path) -> None:
    _check(agent_sandbox(tmp_path).says(PROBE))


def test_a_graded_test_run_cannot_write_the_hosts_sysctls(tmp_path: Path) -> None:
    _check(graded_says(tmp_path, PROBE)[0])


#: Raises its core limit as far as it may, says the limits, then dies of ``SIGSEGV`` in a child.
CRASH = """
import os, resource, signal
soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
print(resource.getrlimit(resource.RLIMIT_CORE), flush=True)
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGSEGV)
print(os.waitpid(pid, 0)[1] & 0x80, flush=True)
"""


def test_a_crash_in_the_sandbox_leaves_no_core(tmp_path: Path) -> None:
    """A process that crashes in a sandbox gets no core dump (``RLIMIT_CORE`` 0, soft and hard, set by the
    reaper): it raised its soft limit to the hard one (unlimited) and its crash wrote a ``core`` of its memory
    where it ran; under a piped ``kernel.core_pattern`` (systemd-coredump, apport) the kernel starts the host's
    handler outside every namespace and cgroup of the sandbox, as root, which stores the image under ``/var``
    and logs a backtrace per crash. With 0 a file pattern writes nothing and those handlers store nothing."""
    sandbox = agent_sandbox(tmp_path)
    out = sandbox.says(CRASH)
    assert out.splitlines() == ["(0, 0)", "0"], out  # before: (-1, -1) and 128, the child's core dumped
    assert not [p.name for p in sandbox.ws.iterdir() if p.name.startswith("core")], list(sandbox.ws.iterdir())


#: Takes inotify instances until the kernel says no, says how many, and waits for ``release`` (30 s at most).
HOLD_UNTIL = """
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while libc.inotify_init() >= 0 and n < 100000:
    n += 1
print(n, flush=True)
end = time.time() + 30
while not os.path.exists("release") and time.time() < end:
    time.sleep(0.05)
"""

#: Makes one inotify instance and prints its descriptor (-1: refused).
INOTIFY_ONE = "import ctypes; print(ctypes.CDLL(None).inotify_init())"


def test_a_sandbox_under_a_uid_of_its_own_leaves_inotify_to_others(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Root's default, a host uid per sandbox (satk52; its user namespace is that uid's, so the host's level
    charges it): sandbox A takes every inotify instance it can and holds them; sandbox B and the machine's
    root must still get one. Sharing a uid, the other got -1, ``EMFILE``
    (a strict xfail until satk52 made this the default)."""
    import subprocess

    from helpers.bwrap import default_uids

    default_uids(monkeypatch)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    a, b = agent_sandbox(tmp_path / "a"), agent_sandbox(tmp_path / "b")
    with a.holding(HOLD_UNTIL) as (taken, codes):
        code = b.run(INOTIFY_ONE, name="other")
        host = subprocess.run([sys.executable, "-c", INOTIFY_ONE], capture_output=True, text=True, timeout=30)
    assert codes == [0] and int(taken) > 0, (taken, (tmp_path / "a" / "agent.err").read_text())
    assert code == 0 and int((tmp_path / "b" / "other.out").read_text()) >= 0, \
        (tmp_path / "b" / "other.out").read_text() + (tmp_path / "b" / "other.err").read_text()
    assert int(host.stdout) >= 0, host.stdout + host.stderr


#: Adds keys to its user keyring (``add_key(2)``, x86_64's 248, into ``@u``), says so, and holds them.
KEYS = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
print(sum(libc.syscall(248, b"user", f"hf-satk43-{i}".encode(), b"x", 1, -4) > 0 for i in range(40)), flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe uses x86_64 system call numbers")
def test_a_sandbox_cannot_read_another_sandboxs_key_count(tmp_path: Path) -> None:
    """``/proc/key-users`` (the machine's key count per uid) is an empty read-only file in a sandbox: one sandbox
    added 40 keys to its own keyring and another read its uid's count go up by 40, exactly, while both ran."""
    import subprocess

    from pytest_homefield.sandbox.bwrap import Policy, bwrap_argv

    exe = bwrap_or_skip()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keys.py").write_text(KEYS)

    def argv(command: list[str]) -> list[str]:
        return bwrap_argv(command, Policy(cwd=ws, rw=[ws], ro=python_paths([sys.executable])), bwrap=exe)

    def read() -> str:
        return subprocess.run(argv(["cat", "/proc/key-users"]), capture_output=True, text=True, timeout=60).stdout

    before = read()
    holder = subprocess.Popen(argv([sys.executable, "keys.py"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None
        assert int(holder.stdout.readline()) == 40
        during = read()
    finally:
        holder.communicate("", timeout=30)
    assert before == during == "", (before, during)  # before: "0: 9 8/8 …" then "0: 49 48/48 …"
