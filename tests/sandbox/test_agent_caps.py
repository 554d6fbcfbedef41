"""Issue 30, caps on side effects in the process layer: ``run_agent`` (pipes, ``RLIMIT_FSIZE``, the
watch) and what bubblewrap gives an agent (options through ``--args FD``, sized ``/tmp`` and
``/dev/shm``, a read-only ``/dev``)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from pytest_homefield.sandbox import host_uids
from pytest_homefield.sandbox.backends import AgentBox, BwrapBackend
from pytest_homefield.sandbox.bwrap import ARGS_MARK, EMPTY_MARK, BwrapUnavailable, Policy, bwrap_argv, probe
from pytest_homefield.sandbox.limits import MIB, WriteLimits
from pytest_homefield.sandbox.proccap import inside_argv, split_mark
from pytest_homefield.sandbox.procs import run_agent

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def _bwrap() -> str:
    try:
        return probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))


def _by_fd(options: list[str]) -> list[str]:
    """``options`` as the reaper gets them: each empty file bound read-only (``--ro-bind FILE T``) becomes
    ``--ro-bind-data EMPTY_MARK T``, the memfd the reaper makes (sbx31); nothing else changes."""
    out = list(options)
    for i, word in enumerate(out[:-2]):
        if word == "--ro-bind" and Path(out[i + 1]).name == "empty" and out[i + 1] != out[i + 2]:
            out[i:i + 2] = ["--ro-bind-data", EMPTY_MARK]
    return out


def test_bwrap_options_can_travel_behind_a_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_uids.ENV, "0")  # one bubblewrap (a host uid of its own: test_host_uids.py)
    policy = Policy(cwd=tmp_path, rw=[tmp_path], env={"X": "--"}, tmpfs_bytes=MIB)
    plain = bwrap_argv(["echo", "hi"], policy, bwrap="bwrap")
    _, marked = split_mark(bwrap_argv(["echo", "hi"], policy, bwrap="bwrap", args_fd=True))  # the pids cgroup's
    command = inside_argv(["echo", "hi"], "bwrap")  # behind prlimit --nproc, where it caps
    n = len(plain) - 2 - len(command)  # bwrap, the options, "--", the command
    assert marked[:3] == ["bwrap", "--args", f"{ARGS_MARK}{n}"]
    assert marked[3:3 + n] == _by_fd(plain[1:1 + n]) and marked[3 + n:] == ["--", *command]
    i = plain.index("/dev/shm")
    assert plain[i - 3:i + 3] == ["--size", str(MIB), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    assert plain[plain.index("/tmp") - 3:plain.index("/tmp")] == ["--size", str(MIB), "--tmpfs"]


def test_run_agent_pipes_caps_and_limits_file_size(tmp_path: Path) -> None:
    limits = WriteLimits(output_bytes=8192, file_bytes=4096)
    script = ("readlink /proc/self/fd/1 >&2; seq 1 5000; head -c 10000 /dev/zero > big; echo \"head $?\" >&2; "
              "echo '{\"cost_usd\": 0.25}'")
    r = run_agent(["sh", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30, artifacts=tmp_path / "art",
                  limits=limits)
    assert r.exit_code == 0 and r.cut_bytes > 0
    err = (tmp_path / "art" / "agent.err").read_text().splitlines()
    assert err[0].startswith("pipe:[") and err[-1] == "head 153"  # 128 + SIGXFSZ
    assert (tmp_path / "big").stat().st_size == 4097
    out = (tmp_path / "art" / "agent.out").read_text()
    assert out.startswith("1\n2\n") and out.endswith('5000\n{"cost_usd": 0.25}\n') and "cut here" in out


def test_a_watch_reason_stops_the_command(tmp_path: Path) -> None:
    calls: list[float] = []

    def watch() -> str | None:
        calls.append(time.monotonic())
        return "too much" if len(calls) >= 2 else None

    started = time.monotonic()
    r = run_agent(["sleep", "30"], cwd=tmp_path, env=ENV, timeout_s=60, artifacts=tmp_path,
                  limits=WriteLimits(poll_s=0.1), watch=watch)
    assert r.stopped == "too much" and r.exit_code is None and not r.timed_out
    assert time.monotonic() - started < 10


def test_inside_bubblewrap_tmp_and_shm_are_sized_dev_is_read_only_and_the_args_fd_closed(tmp_path: Path) -> None:
    exe = _bwrap()
    ws, tmp, home = (tmp_path / n for n in ("ws", "tmp", "home"))
    for d in (ws, tmp, home):
        d.mkdir()
    box = AgentBox(workspace=ws, tmpdir=tmp, home=home, ro_paths=[Path(sys.prefix), Path(sys.base_prefix)],
                   network=False, agent="a", tmpfs_bytes=MIB)
    probe_code = (
        "import json, os\n"
        "def fill(p):\n"
        "    try:\n"
        "        with open(p, 'wb') as f: f.write(b'x' * (2 << 20))\n"
        "    except OSError as e: return e.errno\n"
        "    return 0\n"
        "def size(p):\n"
        "    s = os.statvfs(p); return s.f_blocks * s.f_frsize\n"
        "try:\n"
        "    open('/dev/planted', 'w'); dev = 0\n"
        "except OSError as e: dev = e.errno\n"
        "print(json.dumps({'fds': sorted(os.listdir('/proc/self/fd')), 'tmp': size('/tmp'), 'shm': size('/dev/shm'),\n"
        "                  'fill_tmp': fill('/tmp/x'), 'fill_shm': fill('/dev/shm/x'), 'dev': dev,\n"
        "                  'null': open('/dev/null', 'w').write('ok')}))\n"
    )
    wrapped = BwrapBackend(exe).wrap_agent([sys.executable, "-c", probe_code], ENV, box)
    r = run_agent(wrapped.argv, cwd=ws, env=ENV, timeout_s=60, artifacts=tmp_path / "art")
    assert r.exit_code == 0, (tmp_path / "art" / "agent.err").read_text()
    seen = json.loads((tmp_path / "art" / "agent.out").read_text())
    assert seen["tmp"] == MIB and seen["shm"] == MIB
    assert seen["fill_tmp"] == 28 and seen["fill_shm"] == 28  # ENOSPC
    assert seen["dev"] == 30 and seen["null"] == 2  # EROFS; /dev/null still works
    assert seen["fds"] == ["0", "1", "2", "3"]  # 3: listdir's own; the memfd of the options is closed
