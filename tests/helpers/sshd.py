"""A real OpenSSH server on 127.0.0.1 for a test (Debian ``openssh-server``): its own host key, a
generated client key in its ``authorized_keys``, foreground (``-D``) on a free port, stopped by pid.

:func:`start_sshd` returns an :class:`Sshd` or raises ``pytest.skip.Exception`` saying why it cannot
start here (no ``sshd`` binary, a login that fails), never a silent pass.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

HOST_ALIAS = "homefield-test"


@dataclass
class Sshd:
    """A running sshd: ``config`` is an ssh client config naming it ``HOST_ALIAS``."""

    proc: subprocess.Popen[bytes]
    port: int
    config: Path

    def ssh(self, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ssh", "-F", str(self.config), HOST_ALIAS, *cmd], capture_output=True, text=True,
                              timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sshd(folder: Path) -> Sshd:
    """Start sshd with everything under ``folder``; skip (with the reason) when it cannot run."""
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
    if sshd is None or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("no OpenSSH server here: install it with `apt-get install -y openssh-server` (see .ci/run)")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    auth = folder / "authorized_keys"
    shutil.copy(folder / "client_key.pub", auth)
    auth.chmod(0o600)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    port = _free_port()
    cmd = [sshd, "-D", "-e", "-f", "/dev/null", "-p", str(port), "-h", str(folder / "host_key"),
           "-o", "ListenAddress=127.0.0.1", "-o", f"AuthorizedKeysFile={auth}", "-o", "PasswordAuthentication=no",
           "-o", "KbdInteractiveAuthentication=no", "-o", "UsePAM=no", "-o", "StrictModes=no",
           "-o", "PermitRootLogin=prohibit-password", "-o", "PidFile=none", "-o", "MaxStartups=50",
           "-o", "MaxSessions=50", "-o", "LogLevel=ERROR"]
    log = open(folder / "sshd.log", "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    config = folder / "ssh_config"
    config.write_text(f"Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
                      f"  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n  BatchMode yes\n"
                      "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
    config.chmod(0o600)
    server = Sshd(proc, port, config)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    if proc.poll() is None and server.ssh("true").returncode == 0:
        return server
    server.stop()
    pytest.skip(f"sshd could not start or log in here: {(folder / 'sshd.log').read_text(errors='replace')[-300:]}")
