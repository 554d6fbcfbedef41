"""The bubblewrap backend (issue 15): the argv builder as a plain function, and real bubblewrap.

The real-bubblewrap tests need ``bwrap`` (``.ci/run`` installs the Debian package); where it cannot
create namespaces they are skipped with the probe's reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.bwrap import ProcessAgent
from helpers.uv import uv_or_skip

from pytest_homefield.envs.builder import EnvBuildError, Environment, find_uv
from pytest_homefield.sandbox import modes, protected
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend, LandlockBackend, SandboxBackend, TestBox
from pytest_homefield.sandbox.bwrap import (
    BwrapUnavailable,
    Policy,
    bwrap_argv,
    inside_path,
    interpreter_paths,
    probe,
    program_paths,
    python_paths,
)
from pytest_homefield.sandbox.landlock import LandlockUnavailable
from pytest_homefield.sandbox.landlock import probe as landlock_probe
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.procs import run_process
from pytest_homefield.sandbox.testrun import run_tests

#: The test runs' pytest options: no plugin of this machine's environment (the sandbox tests count only the
#: tests' own outcomes).
PLAIN = "-p no:hypothesispytest -p no:xdist -p no:benchmark -p no:cacheprovider -p no:anyio"


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def _pairs(argv: list[str], opt: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == opt]


# -- the argv builder -----------------------------------------------------------------------------

def test_argv_shape(tmp_path: Path) -> None:
    ws, ro, inner = tmp_path / "ws", tmp_path / "ro", tmp_path / "ws" / "deep"
    for d in (ws, ro, inner):
        d.mkdir(parents=True)
    argv = bwrap_argv(["sh", "-c", "true"], Policy(cwd=ws, rw=[ws], ro=[ro, inner, tmp_path / "missing"],
                                                   env={"A": "1", "B": "two words"}), bwrap="BW")
    assert argv[0] == "BW" and argv[-4:] == ["--", "sh", "-c", "true"]
    assert _pairs(argv, "--bind") == [str(ws)]
    assert _pairs(argv, "--ro-bind")[-2:] == [str(ro), str(inner)]   # the missing path is left out
    assert argv.index(str(inner)) > argv.index(str(ws))    # read-only inside the writable folder
    for flag in ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent",
                 "--new-session", "--clearenv"):
        assert flag in argv
    assert _pairs(argv, "--tmpfs") == ["/tmp"]
    assert argv[argv.index("--chdir") + 1] == str(ws)
    i = argv.index("--clearenv")
    assert argv[i + 1:i + 7] == ["--setenv", "A", "1", "--setenv", "B", "two words"]
    # /usr is bound read-only; /bin-style symlinks are recreated as symlinks
    assert "/usr" in _pairs(argv, "--ro-bind")
    if os.path.islink("/bin"):
        assert "--symlink" in argv


def test_network_shared_keeps_the_namespace(tmp_path: Path) -> None:
    argv = bwrap_argv(["true"], Policy(cwd=tmp_path, rw=[tmp_path], network=True))
    assert "--unshare-net" not in argv


def test_binds_are_ordered_by_depth(tmp_path: Path) -> None:
    """A read-write folder inside a read-only one is bound after it, so it stays writable."""
    outer = tmp_path / "a"
    rw = outer / "b" / "c"
    rw.mkdir(parents=True)
    argv = bwrap_argv(["true"], Policy(cwd=rw, rw=[rw], ro=[outer]))
    assert argv.index(str(outer)) < argv.index(str(rw))


def test_python_paths_find_the_venv_and_its_base(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    paths = python_paths([str(venv / "bin" / "python")])
    assert venv in paths
    assert Path(sys.base_prefix) in paths
    assert Path(os.path.realpath(venv / "bin" / "python")).parent.parent in paths


def test_python_paths_follow_pyvenv_cfg_home(tmp_path: Path) -> None:
    # a venv whose bin/python is a copy (relocatable, or a copied interpreter): the base prefix comes
    # from pyvenv.cfg's home, as uv venv and python -m venv write it
    base, venv = tmp_path / "base", tmp_path / "venv"
    (base / "bin").mkdir(parents=True)
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "bin" / "python").chmod(0o755)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\nrelocatable = true\nversion = 3.11.7\n")
    paths = python_paths(["python"], path=str(venv / "bin"))
    assert venv in paths and base not in paths  # a bin/ whose parent is no prefix (a home's ~/bin)
    (base / "lib" / "python3.11").mkdir(parents=True)
    (base / "lib" / "python3.11" / "os.py").write_text("")
    interpreter_paths.cache_clear()
    paths = python_paths(["python"], path=str(venv / "bin"))
    assert venv in paths and base in paths


def _python_in_home(tmp_path: Path) -> tuple[Path, Path]:
    """A home folder with a real Python copied to ``bin/python`` and linked as ``bin/python3``, beside a
    secret key; returns ``(home, secret)``."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / ".ssh").mkdir()
    secret = home / ".ssh" / "id_ed25519"
    secret.write_text("PRIVATE KEY")
    real = os.path.realpath(sys.executable)
    shutil.copy2(real, home / "bin" / "python")
    (home / "bin" / "python3").symlink_to(real)
    return home, secret


def test_python_paths_never_bind_the_home_of_a_python_in_its_bin(tmp_path: Path) -> None:
    """esc30: the folder above the binary was bound, so a Python at ``~/bin/python`` (a copy or a link)
    showed all of ``~`` to the sandbox. Now the binary (as named) and the prefix it reports."""
    home, _ = _python_in_home(tmp_path)
    for name in ("python", "python3"):
        paths = python_paths([str(home / "bin" / name)])
        assert home not in paths and not any(p in paths for p in home.parents), paths
        assert home / "bin" / name in paths
        assert any((p / "lib").is_dir() and p != home for p in paths), paths  # the interpreter's prefix


def test_a_shim_script_binds_its_tool_root_unless_that_is_a_home(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A pyenv-like shim (``<root>/shims/python``, a script that runs ``<root>/libexec/pyenv``) needs its
    root, which holds the prefixes (``versions/X.Y.Z``); never run, and never bound when the root is the
    home folder (a script at ``~/bin/python``)."""
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "versions" / "3.11.7" / "lib" / "python3.11").mkdir(parents=True)
    (root / "versions" / "3.11.7" / "lib" / "python3.11" / "os.py").write_text("")
    shim = root / "shims" / "python"
    shim.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    shim.chmod(0o755)
    interpreter_paths.cache_clear()
    assert root in python_paths([str(shim)]) and not (tmp_path / "ran").exists()
    monkeypatch.setenv("HOME", str(root))
    interpreter_paths.cache_clear()
    paths = python_paths([str(shim)])
    assert root not in paths and shim not in paths and not (tmp_path / "ran").exists()


_SECRET_TEST = """
import os, unittest
class T(unittest.TestCase):
    def test_secret_is_out_of_reach(self):
        with self.assertRaises(OSError):
            open(os.environ["SECRET"]).read()
    def test_stdlib(self):
        import json, sqlite3
        self.assertEqual(json.loads("[1]"), [1])
"""


@pytest.mark.parametrize("kind", ["bwrap", "landlock"])
def test_a_python_copied_into_home_runs_its_tests_without_showing_home(tmp_path: Path, kind: str) -> None:
    """The test command's ``python`` is a copy in ``<home>/bin`` beside ``<home>/.ssh``: the tests run
    (found by name on ``PATH``, its stdlib imported) and the secret cannot be read, under bubblewrap and
    Landlock alike."""
    backend: SandboxBackend
    if kind == "bwrap":
        backend = BwrapBackend(_bwrap())
    else:
        try:
            backend = LandlockBackend(landlock_probe())
        except LandlockUnavailable as exc:
            pytest.skip(str(exc))
    home, secret = _python_in_home(tmp_path)
    work, out = tmp_path / "copy", tmp_path / "out"
    work.mkdir()
    out.mkdir()
    (work / "test_secret.py").write_text(_SECRET_TEST)
    env = {"PATH": f"{home / 'bin'}:/usr/bin:/bin", "SECRET": str(secret), "HOME": str(out)}
    argv = ["python", "-m", "unittest", "test_secret"]
    wrapped = backend.wrap_tests(argv, env, TestBox(workdir=work, out_dir=out, python="python"))
    result = run_process(wrapped.argv, cwd=work, env=env, timeout_s=60, stdout_path=out / "log",
                         stderr_path=out / "err")
    log = (out / "err").read_text()
    assert result.exit_code == 0 and "Ran 2 tests" in log and "OK" in log, log[-2000:]


def test_program_paths_of_a_venv_script_and_an_npm_launcher(tmp_path: Path) -> None:
    # pip/pipx/uv layout: a launcher in ~/.local/bin linking into a venv whose python is elsewhere
    venv, local_bin = tmp_path / "share" / "venvs" / "tool", tmp_path / "local" / "bin"
    (venv / "bin").mkdir(parents=True)
    local_bin.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /x\n")
    (venv / "bin" / "python").symlink_to(sys.executable)
    script = venv / "bin" / "tool"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\n")
    script.chmod(0o755)
    (local_bin / "tool").symlink_to(script)
    paths = program_paths("tool", str(local_bin))
    assert paths[:3] == [local_bin / "tool", script, venv]  # the launcher, not ~/.local/bin whole (satk60)
    assert Path(os.path.realpath(sys.executable)).parent.parent in paths
    # npm layout: node_modules/.bin/cli -> ../@scope/cli/bin/cli.js, `#!/usr/bin/env node`, node elsewhere
    nm = tmp_path / "proj" / "node_modules"
    (nm / ".bin").mkdir(parents=True)
    (nm / "@scope" / "cli" / "bin").mkdir(parents=True)
    js = nm / "@scope" / "cli" / "bin" / "cli.js"
    js.write_text("#!/usr/bin/env node\n")
    js.chmod(0o755)
    (nm / ".bin" / "cli").symlink_to("../@scope/cli/bin/cli.js")
    node = tmp_path / "nodejs" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\n")
    node.chmod(0o755)
    paths = program_paths("cli", f"{nm / '.bin'}:{node.parent}")
    assert paths == [nm / ".bin" / "cli", js, node, nm]  # node's file, not all of the folder above its bin/
    assert program_paths("not-installed-anywhere", str(local_bin)) == []


def test_inside_path_drops_what_is_not_mounted(tmp_path: Path) -> None:
    shims, venv_bin = tmp_path / "shims", tmp_path / "venv" / "bin"
    path = os.pathsep.join([str(shims), str(venv_bin), "/usr/bin"])
    # /opt is no system folder (issue 30): an interpreter's bin under it stays only when it is mounted
    assert inside_path(path, [tmp_path / "venv"], first=[Path("/opt/py/bin")]).split(os.pathsep) == \
        [str(venv_bin), "/usr/bin"]
    assert inside_path(path, [tmp_path / "venv", Path("/opt/py")], first=[Path("/opt/py/bin")]) \
        .split(os.pathsep) == ["/opt/py/bin", str(venv_bin), "/usr/bin"]


@pytest.mark.usefixtures("cli_spelling")
def test_choice_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError, match="--sandbox 'docker'"):
        SandboxChoice("docker")
    with pytest.raises(ValueError, match="--sandbox-network"):
        SandboxChoice("auto", "host")
    with pytest.raises(ValueError, match="--sandbox-network"):
        SandboxChoice("auto", "loopback:")


def test_auto_refuses_shell_agents_only_when_bwrap_does_not_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither bubblewrap nor Landlock here (tests/sandbox/test_landlock.py: with Landlock)."""
    monkeypatch.setattr(SandboxChoice, "available", lambda self: "bubblewrap (bwrap) is not installed: install …")
    monkeypatch.setattr(modes, "landlock_state", lambda: "Landlock is not available here: not built into this kernel")
    auto = SandboxChoice("auto")
    with pytest.raises(BwrapUnavailable, match="agent 'a' can run commands, but bubblewrap.*; and Landlock"):
        auto.for_agent(ProcessAgent(shell=True), allow_shell=False)
    assert auto.for_agent(ProcessAgent(shell=False), allow_shell=False) == "none"   # edit-only claude
    assert auto.for_tests() == "none"
    with pytest.raises(BwrapUnavailable):
        SandboxChoice("bwrap").for_tests()
    assert SandboxChoice("none").for_agent(ProcessAgent(shell=True), allow_shell=True) == "none"


@pytest.mark.usefixtures("cli_spelling")
def test_missing_bwrap_is_one_line_with_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOMEFIELD_BWRAP", "/nonexistent/bwrap")
    probe.cache_clear()
    try:
        with pytest.raises(BwrapUnavailable) as info:
            probe()
    finally:
        probe.cache_clear()
    msg = str(info.value)
    assert "\n" not in msg and "apt-get install bubblewrap" in msg and "--sandbox none" in msg


# -- real bubblewrap ------------------------------------------------------------------------------

def test_inside_only_what_the_policy_binds(tmp_path: Path) -> None:
    exe = _bwrap()
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("gold")
    readme = Path(__file__).resolve().parents[2] / "README.md"  # this checkout: never bound
    script = (f"import os, sys; print(sorted(os.listdir('/'))); print(os.path.exists({str(secret)!r})); "
              "open('out', 'w').write('x'); print(os.getpid()); print(sorted(os.environ)); "
              f"print(os.path.exists({str(readme)!r}))")
    ro = python_paths()
    argv = bwrap_argv([sys.executable, "-c", script], Policy(cwd=ws, rw=[ws], ro=ro, env={"ONLY": "1"}), bwrap=exe)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    listing, exists, pid, env, checkout = proc.stdout.splitlines()
    # /work or /home appear only as the parents of a bound path (the interpreter's virtualenv may live
    # in a checkout under /work, as CI's does): their other contents are not there
    bound = {Path(p).parts[1] for p in [ws, *ro]}
    assert all(top not in eval(listing) or top in bound for top in ("work", "home")), (listing, ro)
    assert exists == "False" and checkout == "False"  # nothing of the host beyond the binds
    assert (ws / "out").read_text() == "x"      # the workspace is writable
    assert int(pid) <= 3                        # its own PID namespace
    # only ours (bwrap sets PWD; Python itself may add LC_CTYPE)
    assert set(eval(env)) - {"PWD", "LC_CTYPE"} == {"ONLY"}


_KEYS = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "add":  # add_key(2) into the user keyring (@u, -4), which needs no capability
    print(libc.syscall(248, b"user", b"hf-sandbox-probe", b"x", 1, -4))
else:  # keyctl(KEYCTL_SEARCH) of it
    print(libc.syscall(250, 10, -4, b"user", b"hf-sandbox-probe", 0))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe uses x86_64 system call numbers")
def test_no_capability_and_no_keyring_shared_between_sandboxes(tmp_path: Path) -> None:
    """Started by root, bubblewrap keeps every capability unless told otherwise: a process inside
    remounted a read-only bind read-write and wrote on the host, and a key it added to root's user
    keyring was read by the next sandbox (this round's attacker: memory across test runs, attempts and
    agents). Inside: no capability, the remount refused, and a key added in one sandbox is not found in
    the next (its own user namespace)."""
    exe = _bwrap()
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "keys.py").write_text(_KEYS)
    ro = [*python_paths(), tmp_path / "keys.py"]

    def inside(*command: str) -> str:
        argv = bwrap_argv(list(command), Policy(cwd=ws, rw=[ws], ro=ro), bwrap=exe)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        return proc.stdout + proc.stderr

    status = inside("sh", "-c", "grep CapEff /proc/self/status; mount -o remount,rw,bind /usr && echo REMOUNTED")
    assert "CapEff:\t0000000000000000" in status and "REMOUNTED" not in status, status
    added = int(inside(sys.executable, str(tmp_path / "keys.py"), "add").split()[-1])
    found = int(inside(sys.executable, str(tmp_path / "keys.py"), "search").split()[-1])
    try:
        assert added > 0 and found == -1, (added, found)
    finally:
        import ctypes
        ctypes.CDLL(None).syscall(250, 21, added)  # KEYCTL_INVALIDATE, had it reached this keyring


def test_test_runs_have_no_network_and_a_read_only_copy(tmp_path: Path) -> None:
    _bwrap()
    work = tmp_path / "w"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_box.py").write_text(
        "import os, socket, pytest\n\n\n"
        "def test_copy_is_read_only():\n"
        "    with pytest.raises(OSError):\n"
        "        open('planted.py', 'w')\n\n\n"
        "def test_tmp_is_writable(tmp_path):\n"
        "    (tmp_path / 'x').write_text('1')\n"
        "    open(os.path.join(os.environ['TMPDIR'], 'y'), 'w').write('1')\n\n\n"
        "def test_no_network():\n"
        "    s = socket.socket()\n"
        "    with pytest.raises(OSError):\n"
        "        s.connect(('127.0.0.1', 9))\n"
        "    assert [n for i, n in socket.if_nameindex()] in ([], ['lo'])\n")
    cmd = f"{sys.executable} -m pytest {PLAIN}"
    run = run_tests(work, cmd, ["tests/test_box.py"], out_dir=tmp_path / "out", sandbox="bwrap")
    assert run.finished and set(run.outcomes.values()) == {"passed"}, run.log_path.read_text()[-3000:]
    assert not (work / "planted.py").exists()


def test_test_runs_use_the_environment_env_names_read_only(tmp_path: Path) -> None:
    # a --env uv environment lives in the user cache, outside the copy: the test run binds it (and the
    # interpreter its python links to) read-only, runs its python, and cannot change it
    _bwrap()
    try:
        uv = find_uv()
    except EnvBuildError as exc:
        pytest.skip(str(exc))
    venv = tmp_path / "cache" / "envs" / "k1"
    subprocess.run([uv, "venv", "--quiet", "--system-site-packages", "--python", sys.executable, str(venv)],
                   check=True, env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", purelib], check=True, capture_output=True,
                               text=True).stdout.strip())
    (site / "hfmarker.py").write_text("WHERE = 'venv'\n")
    work = tmp_path / "w"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "test_env.py").write_text(
        "import os, sys, pytest\n"
        "import hfmarker\n\n\n"
        "def test_runs_the_environments_python():\n"
        f"    assert sys.prefix == {str(venv)!r} and hfmarker.WHERE == 'venv'\n\n\n"
        "def test_environment_is_read_only():\n"
        "    with pytest.raises(OSError):\n"
        f"        open({str(site / 'planted.py')!r}, 'w')\n"
        "    with pytest.raises(OSError):\n"
        "        os.unlink(hfmarker.__file__)\n")
    env = Environment(key="k1", path=venv, python_version="", interpreter="", how="").apply()
    cmd = f"python -m pytest {PLAIN}"
    run = run_tests(work, cmd, ["tests/test_env.py"], out_dir=tmp_path / "out", env=env, sandbox="bwrap")
    assert run.finished and set(run.outcomes.values()) == {"passed"}, run.log_path.read_text()[-3000:]
    assert len(run.outcomes) == 2 and (site / "hfmarker.py").exists() and not (site / "planted.py").exists()


def _opt_entries() -> list[Path]:
    opt = Path("/opt")
    entries = sorted(p for p in opt.iterdir() if p.is_dir() and not p.is_symlink()) if opt.is_dir() else []
    if len(entries) < 2:
        pytest.skip("/opt holds fewer than two folders here: nothing to tell apart")
    return entries


def test_opt_is_bound_only_where_the_run_needs_it(tmp_path: Path) -> None:
    """Issue 30: ``/opt`` was bound whole (other toolchains, vendors' agents and what they keep there).
    Now only the read-only paths under it that the policy names (an interpreter's prefix) are there."""
    exe = _bwrap()
    needed, *others = _opt_entries()
    policy = Policy(cwd=tmp_path, rw=[tmp_path], ro=[*python_paths(), needed])
    argv = bwrap_argv([sys.executable, "-c", "import os, sys; print([os.path.exists(p) for p in sys.argv[1:]])",
                       str(needed), *map(str, others)], policy, bwrap=exe)
    assert "/opt" not in _pairs(argv, "--ro-bind") and str(needed) in _pairs(argv, "--ro-bind")
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str([True] + [False] * len(others))


def test_etc_holds_what_a_toolchain_needs_and_no_secret(tmp_path: Path) -> None:
    """Issue 30: all of ``/etc`` was bound, so an agent running as root read ``/etc/shadow`` and the ssh
    host keys. Only the curated entries are there now (name resolution, certificates, users, git)."""
    exe = _bwrap()
    script = ("import glob, os, ssl, socket\n"
              "for p in ('/etc/shadow', '/etc/gshadow', '/etc/sudoers', *glob.glob('/etc/ssh/*'), "
              "*glob.glob('/etc/ssl/private/*')):\n"
              "    try:\n        open(p, 'rb').read(1); print('READ', p)\n    except OSError:\n        pass\n"
              "print('ssh' in os.listdir('/etc'), os.path.exists('/etc/ssl/private'))\n"
              "print(os.path.isfile('/etc/hosts'), os.path.isfile('/etc/passwd'), socket.getservbyname('http'))\n")
    argv = bwrap_argv([sys.executable, "-c", script], Policy(cwd=tmp_path, rw=[tmp_path], ro=python_paths()),
                      bwrap=exe)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["False False", "True True 80"], proc.stdout
    assert not {"/etc", "/etc/ssh"} & set(_pairs(argv, "--ro-bind"))


def test_a_pythonpath_naming_the_repository_reaches_no_test_run(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """contracts §7 (atk9 F7): with the user's ``PYTHONPATH`` naming the repository, its folder inside
    (``src``) or a folder holding it, a test run in bubblewrap finds none of them on ``sys.path`` nor
    ``.homefield/tasks.jsonl`` anywhere; a folder inside it (``lib``) is taken from the copy under test, an
    unrelated entry is still passed and bound."""
    _bwrap()
    repo = tmp_path / "home" / "repo"
    (repo / ".homefield").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "lib").mkdir()
    (repo / "lib" / "hfcopy.py").write_text("WHERE = 'repository'\n")
    (repo / ".homefield" / "tasks.jsonl").write_text('{"gold_patch": "GOLD"}\n')
    other = tmp_path / "libs"
    other.mkdir()
    (other / "hflib.py").write_text("X = 1\n")
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    work = tmp_path / "w"
    (work / "tests").mkdir(parents=True)
    (work / "lib").mkdir()
    (work / "lib" / "hfcopy.py").write_text("WHERE = 'copy'\n")
    (work / "tests" / "test_peek.py").write_text(
        "import os, sys\nimport hflib, hfcopy\n\n\n"
        "def test_sees_no_answers():\n"
        "    assert hfcopy.WHERE == 'copy'\n"
        f"    assert not os.path.exists({str(repo / '.homefield' / 'tasks.jsonl')!r})\n"
        f"    assert not [p for p in sys.path if p.startswith({str(tmp_path / 'home')!r})], sys.path\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), str(repo / "src"), str(repo / "lib"),
                                                        str(tmp_path / "home"), str(other)])}
    cmd = f"python -m pytest {PLAIN}"
    run = run_tests(work, cmd, ["tests/test_peek.py"], out_dir=tmp_path / "out", env=env, sandbox="bwrap")
    assert run.outcomes == {"tests/test_peek.py::test_sees_no_answers": "passed"}, run.log_path.read_text()[-3000:]


def test_no_bind_shows_a_protected_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only path holding the repository is not bound, and a repository under a system folder
    (here ``/usr/share`` stands for one in ``/usr/local/src``) is hidden by an empty tmpfs, under which
    a bound folder of its own (a ``.venv``, here ``/usr/share/zoneinfo``) is still visible."""
    bw = _bwrap()
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    protected.protect("/usr/share")
    keep = Path("/usr/share/zoneinfo")
    if not keep.is_dir():
        pytest.skip("no /usr/share/zoneinfo here")
    argv = bwrap_argv(["sh", "-c", f"ls -A {tmp_path}; echo ---; ls -A /usr/share; echo ---; ls {keep} | wc -l"],
                      Policy(cwd=Path("/"), ro=[tmp_path, keep]), bwrap=bw)
    assert str(tmp_path) not in _pairs(argv, "--ro-bind")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert out.stdout.split("---\n") == ["", "zoneinfo\n", f"{len(os.listdir(keep))}\n"], out
    assert "No such file or directory" in out.stderr


#: Holds an open file description lock (``F_OFD_SETLK``; ``struct flock``: type, whence, start, len, pid 0) on
#: ``held``: ``/proc/locks`` shows those to every PID namespace (pid ``-1``; a POSIX lock or a ``flock`` is
#: shown only where its holder's pid is), then prints the file's inode and waits for its stdin to close.
_HOLD = """
import fcntl, os, struct, sys
f = open("held", "w")
fcntl.fcntl(f, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
print(os.stat("held").st_ino, flush=True)
sys.stdin.read()
"""


def test_a_sandbox_sees_no_other_sandboxs_locks_or_processes(tmp_path: Path) -> None:
    """chan29: a fresh ``/proc`` lists every lock of the machine in ``/proc/locks`` (holder pid, device and
    inode), so one sandbox read another's locks on files it never sees (lock28's channel without a shared
    file). With an agent's sandbox holding a lock the host sees, an agent's sandbox and a graded test run both
    read nothing there, and neither sees the holder among its processes (its own PID namespace)."""
    exe = _bwrap()
    hold_ws, ws, work = tmp_path / "hold", tmp_path / "ws", tmp_path / "w"
    for d in (hold_ws, ws, work / "tests"):
        d.mkdir(parents=True)
    (hold_ws / "hold.py").write_text(_HOLD)
    holder = subprocess.Popen(bwrap_argv([sys.executable, "hold.py"], Policy(cwd=hold_ws, rw=[hold_ws],
                                                                             ro=python_paths()), bwrap=exe),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        ino = holder.stdout.readline().strip()
        assert ino and f":{ino} " in Path("/proc/locks").read_text()  # the host sees the lock
        look = ("import os; print(repr(open('/proc/locks').read())); "
                "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")
        agent = subprocess.run(bwrap_argv([sys.executable, "-c", look], Policy(cwd=ws, rw=[ws], ro=python_paths()),
                                          bwrap=exe), capture_output=True, text=True, timeout=60)
        locks, pids = agent.stdout.splitlines()
        assert locks == "''" and max(eval(pids)) <= 3, agent.stdout + agent.stderr
        (work / "tests" / "test_proc.py").write_text(
            "import os\n\n\ndef test_no_other_sandbox():\n"
            "    assert open('/proc/locks').read() == ''\n"
            "    assert max(int(p) for p in os.listdir('/proc') if p.isdigit()) <= 3\n")
        cmd = f"{sys.executable} -m pytest {PLAIN}"
        run = run_tests(work, cmd, ["tests/test_proc.py"], out_dir=tmp_path / "out", sandbox="bwrap")
        assert run.finished and set(run.outcomes.values()) == {"passed"}, run.log_path.read_text()[-3000:]
    finally:
        holder.communicate(timeout=30)


#: The root (field 4) and mount point (field 5) of each line of ``/proc/self/mountinfo``; the mount
#: point's file type (field 9 after the `` - `` separator) too.
_MOUNTS = """
import json
rows = []
for line in open('/proc/self/mountinfo'):
    left, right = line.split(' - ', 1)
    fields = left.split()
    rows.append([fields[3], fields[4], right.split()[0]])
print(json.dumps([rows, open('/proc/locks').read()]))
"""


#: The mounts of :data:`_MOUNTS`'s output whose source is not where it is mounted (a folder bound at its own
#: path shows that path, or its tail on a file system of its own such as ``/dev/shm``), on a file system of
#: the host or in a homefield temp folder (``/hf-``; a tmpfs, ``/proc`` and device files are otherwise the
#: sandbox's or the kernel's): a host path the sandbox would not otherwise show. Run inside a graded test too.
_HOST_PATHS = """
def host_paths(out):
    rows, locks = json.loads(out)
    assert locks == "", locks
    return [r for r in rows if not r[1].endswith(r[0].rstrip("/")) and
            (r[2] not in ("tmpfs", "proc", "devtmpfs", "devpts", "mqueue") or "/hf-" in r[0])]
"""


def test_no_mount_names_a_host_path_it_is_not_mounted_at(tmp_path: Path) -> None:
    """r25: ``/proc/self/mountinfo`` in a sandbox showed the host path of the empty file bound over
    ``/proc/locks`` (``/tmp/hf-<pid>.<start>-…/empty``: homefield's pid and start time). An agent's sandbox
    and a graded test run: every mount's source is where it is mounted (the bound folders are at their host
    paths, which the sandbox sees anyway) or the sandbox's own (the mask: bubblewrap's deleted temp file)."""
    exe = _bwrap()
    ws, tmp, home, work = (tmp_path / n for n in ("ws", "tmp", "home", "work"))
    for d in (ws, tmp, home, work / "tests"):
        d.mkdir(parents=True)
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=python_paths([sys.executable]), network=False,
                   agent="a")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(tmp)}
    wrapped = BwrapBackend(exe).wrap_agent([sys.executable, "-c", _MOUNTS], env, box)
    code = run_process(wrapped.argv, cwd=ws, env=env, timeout_s=60, stdout_path=tmp_path / "agent.out",
                       stderr_path=tmp_path / "agent.err").exit_code
    assert code == 0, (tmp_path / "agent.err").read_text()
    scope: dict[str, object] = {}
    exec("import json\n" + _HOST_PATHS, scope)
    assert scope["host_paths"]((tmp_path / "agent.out").read_text()) == []  # type: ignore[operator]
    (work / "tests" / "test_mounts.py").write_text(
        "import json, subprocess, sys\n" + _HOST_PATHS + "\n\ndef test_mounts():\n"
        f"    out = subprocess.run([sys.executable, '-c', {_MOUNTS!r}], capture_output=True, text=True).stdout\n"
        "    assert host_paths(out) == [], out\n")
    run = run_tests(work, f"{sys.executable} -m pytest {PLAIN}", ["tests/test_mounts.py"], out_dir=tmp_path / "out",
                    sandbox="bwrap")
    assert run.finished and set(run.outcomes.values()) == {"passed"}, run.log_path.read_text()[-3000:]


def _editable_project(tmp_path: Path) -> tuple[Path, str, dict[str, str], Path]:
    """A protected repository with ``src/hfpkg`` (``WHERE = 'repository'``), a venv whose ``hfpkg.pth`` names
    that ``src`` (what a flit/hatch editable install writes) and whose ``_hf_deps.pth`` names this process's
    site folder (pytest), and a copy under test (``WHERE = 'copy'``) whose test starts a child with its own
    ``PYTHONPATH`` (werkzeug's dev server): ``(copy, test command, env, repository)``."""
    import sysconfig
    repo = tmp_path / "home" / "repo"
    (repo / ".homefield").mkdir(parents=True)
    (repo / ".homefield" / "tasks.jsonl").write_text('{"gold_patch": "GOLD"}\n')
    (repo / "src" / "hfpkg").mkdir(parents=True)
    (repo / "src" / "hfpkg" / "__init__.py").write_text("WHERE = 'repository'\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = Path(next(iter(venv.glob("lib/python*/site-packages"))))
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "hfpkg.pth").write_text(f"{repo / 'src'}\n")
    protected.protect(repo)
    work = tmp_path / "w"
    (work / "tests").mkdir(parents=True)
    (work / "src" / "hfpkg").mkdir(parents=True)
    (work / "src" / "hfpkg" / "__init__.py").write_text("WHERE = 'copy'\n")
    (work / "tests" / "test_child.py").write_text(
        "import os, subprocess, sys\n\n\n"
        "def test_child_imports_the_copy(tmp_path):\n"
        "    env = {'PATH': os.environ.get('PATH', ''), 'PYTHONPATH': str(tmp_path)}\n"
        "    out = subprocess.run([sys.executable, '-c', 'import hfpkg; print(hfpkg.WHERE)'], env=env,\n"
        "                         cwd=str(tmp_path), capture_output=True, text=True, timeout=60)\n"
        "    assert out.stdout.strip() == 'copy', out.stderr\n"
        f"    assert not os.path.exists({str(repo / '.homefield')!r})\n"
        f"    assert sorted(os.listdir({str(repo)!r})) == ['src']\n")
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    return work, f"{venv / 'bin' / 'python'} -m pytest {PLAIN}", env, repo


def test_an_editable_install_of_the_repository_imports_the_copy_in_a_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """contracts §7 (wz51): an editable install's ``.pth`` names the repository's ``src``; a test run's child
    started with its own ``PYTHONPATH`` (werkzeug's dev server) imports the package from the copy under test
    (never the repository's), and still sees nothing else of the repository; a symlink in the copy's ``src``
    pointing back into the repository binds nothing."""
    _bwrap()
    monkeypatch.setattr(protected, "_PROTECTED", [])
    work, cmd, env, repo = _editable_project(tmp_path)
    run = run_tests(work, cmd, ["tests/test_child.py"], out_dir=tmp_path / "out", env=env, sandbox="bwrap")
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, \
        run.log_path.read_text()[-3000:]
    # the copy's src a symlink back into the repository: not bound (the child finds no hfpkg)
    shutil.rmtree(work / "src")
    (work / "src").symlink_to(repo / "src")
    run = run_tests(work, cmd, ["tests/test_child.py"], out_dir=tmp_path / "out2", env=env, sandbox="bwrap")
    log = run.log_path.read_text()
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "failed"}, log[-3000:]
    assert "No module named 'hfpkg'" in log and "'repository'" not in log, log[-3000:]


def test_an_editable_install_under_landlock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """contracts §7 "Editable installs" (ops54; wz51 left it a strict xfail: Landlock cannot put the copy's ``src``
    at the repository's path, and the child found no package, werkzeug's dev server did not start): the run's own
    environment names the copy's ``src``, so the child of a test run imports the package from the copy under test,
    never the repository's. (The repository's names stay visible under Landlock, its files unreadable: §9.)"""
    try:
        landlock_probe()
    except LandlockUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setattr(protected, "_PROTECTED", [])
    work, cmd, env, _ = _editable_project(tmp_path)
    test = work / "tests" / "test_child.py"  # what bubblewrap hides, Landlock shows by name: not asked here
    test.write_text("\n".join(line for line in test.read_text().splitlines() if "os.path.exists(" not in line
                              and "os.listdir(" not in line) + "\n")
    run = run_tests(work, cmd, ["tests/test_child.py"], out_dir=tmp_path / "out", env=env, sandbox="landlock")
    log = run.log_path.read_text()
    assert "'repository'" not in log, log[-3000:]  # never the repository's (a real failure, not the xfail)
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, log[-3000:]


def test_a_venvs_pytest_script_by_absolute_path_runs_with_its_interpreter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops56: a test command naming a venv's ``pytest`` script by absolute path (``/venv/bin/pytest``), that venv
    neither on ``PATH`` nor ``VIRTUAL_ENV``: the sandbox was shown the command's first word as its Python (no Python:
    nothing of it bound but the script itself), so the script's ``#!`` interpreter was not there and the run did not
    start (exit status 127, every id of the task unreported: mining's and grading's runs alike). Now the sandbox is
    shown the interpreter the command runs (``testrun.run_python``: the script's ``#!`` one), and its child imports
    the copy (the editable install's folder bound as for ``python -m pytest``)."""
    _bwrap()
    monkeypatch.setattr(protected, "_PROTECTED", [])
    work, _, env, _ = _editable_project(tmp_path)
    venv = tmp_path / "venv"
    script = venv / "bin" / "pytest"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom pytest import console_main\n"
                      "sys.exit(console_main())\n")
    script.chmod(0o755)
    env = {k: v for k, v in env.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.environ["PATH"]
    run = run_tests(work, f"{script} {PLAIN}", ["tests/test_child.py"], out_dir=tmp_path / "out", env=env,
                    sandbox="bwrap")
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, \
        (run.exit_code, run.error, run.log_path.read_text()[-3000:])


@pytest.mark.parametrize("sandbox", ["bwrap", "landlock"])
def test_a_uv_run_in_the_active_environment_starts_in_a_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 sandbox: str) -> None:
    """ops56: ``uv run --no-project python -m pytest`` with ``uv`` found on ``PATH`` in a folder the sandbox does not
    show (``~/.local/bin``; here a folder holding a link to the real uv): the command's bare word named no file the
    sandbox binds, so the run did not start (exit status 127) under bubblewrap and Landlock alike. Now the program
    word is the path it is found at (bound as any file the command names), and the sandbox is shown the interpreter
    uv runs (``VIRTUAL_ENV``'s; under Landlock the run's own environment is the active one, which names it): the test
    passes, its child importing the copy."""
    if sandbox == "bwrap":
        _bwrap()
    else:
        try:
            landlock_probe()
        except LandlockUnavailable as exc:
            pytest.skip(str(exc))
    uv = uv_or_skip()
    monkeypatch.setattr(protected, "_PROTECTED", [])
    work, _, env, _ = _editable_project(tmp_path)
    test = work / "tests" / "test_child.py"  # what bubblewrap hides, Landlock shows by name: not asked here
    test.write_text("\n".join(line for line in test.read_text().splitlines() if "os.path.exists(" not in line
                              and "os.listdir(" not in line) + "\n")
    (tmp_path / "local-bin").mkdir()
    (tmp_path / "local-bin" / "uv").symlink_to(uv)
    env["PATH"] = f"{tmp_path / 'local-bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    run = run_tests(work, f"uv run --offline --no-project python -m pytest {PLAIN}", ["tests/test_child.py"],
                    out_dir=tmp_path / "out", env=env, sandbox=sandbox, timeout_s=120)
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, \
        (run.exit_code, run.error, run.log_path.read_text()[-3000:])
