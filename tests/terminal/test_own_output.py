"""exc35: a repository's plugins and conftests print nothing into homefield's session (simonw/llm: its conftest's
``SQLite: 3.40.1`` header, pytest-asyncio's ``asyncio: mode=…``, syrupy's snapshot report summary)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pytest_homefield
from pytest_homefield.terminal.own_output import is_own

#: The folder holding the package under test (the worktree's, whatever the venv installed).
HERE = Path(pytest_homefield.__file__).resolve().parents[1]

#: A repository's conftest: a header line, a line after collection, a summary section, and a hook that writes a file
#: (not a terminal hook: it still runs).
CONFTEST = '''
from pathlib import Path


def pytest_report_header(config):
    return ["REPO-HEADER"]


def pytest_report_collectionfinish(config, start_path, items):
    return ["REPO-COLLECTED"]


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_sep("-", "REPO-SUMMARY")


def pytest_collection_modifyitems(config, items):
    Path("modified").write_text("yes")
'''
#: The session's own plugin (run with ``-p``, by module name): it calls ``own_output`` as homefield's does.
SESSION = '''
from pytest_homefield.terminal.own_output import own_output


def pytest_configure(config):
    own_output(config)
'''


def test_only_pytests_homefields_and_xdists_plugins_write_to_the_sessions_terminal(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "hf_session.py").write_text(SESSION)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"]
    plain = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert all(m in plain.stdout for m in ("REPO-HEADER", "REPO-COLLECTED", "REPO-SUMMARY")), plain.stdout
    (tmp_path / "modified").unlink()
    own = subprocess.run([*cmd[:3], "-p", "hf_session", *cmd[3:]], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": f"{tmp_path}:{HERE}", "PATH": "/usr/bin:/bin"})
    assert own.returncode == 0 and "rootdir: " in own.stdout and "1 passed" in own.stdout, own.stdout + own.stderr
    assert not any(m in own.stdout for m in ("REPO-HEADER", "REPO-COLLECTED", "REPO-SUMMARY")), own.stdout
    assert (tmp_path / "modified").read_text() == "yes"  # its other hooks run


@pytest.mark.parametrize(("plugin", "own"), [(pytest, False), (sys.modules["_pytest.terminal"], True),
                                             (sys.modules["pytest_homefield.terminal.own_output"], True)])
def test_own_plugins_are_pytests_homefields_and_xdists(plugin: object, own: bool) -> None:
    assert is_own(plugin) is own
