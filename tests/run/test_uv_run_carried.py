"""gatk56: a ``uv run`` test command installs the grading copy's own project into the environment it makes (``uv
run`` syncs the project, editable, from the copy's ``pyproject.toml``) before pytest starts; grading carries an agent's
``pyproject.toml`` whole unless its pytest table changed (``carried._section_of``). So an agent's
``[project.entry-points.pytest11]`` (with ``[tool.setuptools] py-modules`` naming its module) is installed and pytest
autoloads the agent's module as a plugin, beside the reporter, in every run of the grading: hooks before collection,
whatever the hidden tests import. Left (strict xfail): closing it by construction means running a ``uv run``
command in an environment synced from the parent's project, not the change's (``--no-sync`` on an environment made
before the change is applied), not a list of ``pyproject.toml`` tables."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n"
PROJECT = ('[project]\nname = "totals"\nversion = "0"\nrequires-python = ">=3.10"\n\n'
           '[dependency-groups]\ndev = ["pytest"]\n\n[tool.uv]\npackage = true\n\n'
           '[tool.setuptools]\npy-modules = ["totals"]\n')
#: The agent's project: its module a pytest plugin, installed by the sync ``uv run`` makes.
AGENTS = PROJECT.replace('py-modules = ["totals"]', 'py-modules = ["totals", "totals_extra"]') + (
    '\n[project.entry-points.pytest11]\nextra = "totals_extra"\n')


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk56: an agent's [project.entry-points.pytest11] in pyproject.toml is "
                   "carried, and a uv run test command installs it: its module is loaded as a pytest plugin in "
                   "every run of the grading")
def test_an_agents_entry_point_is_not_loaded_by_a_uv_run_command(tmp_path: Path) -> None:
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    if uv is None:
        pytest.skip("no uv beside this Python or on PATH")
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="totals", message="Count to four", fail_to_pass=[f"{TEST}::test_total"],
                       pass_to_pass=[], project=False,
                       parent_data={"pyproject.toml": PROJECT})
    b.task.test_cmd = f"{uv} run pytest"
    marker = tmp_path / "loaded"
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / "pyproject.toml").write_text(AGENTS, encoding="utf-8")
    (work / "totals_extra.py").write_text(f"open({str(marker)!r}, 'a').close()\n", encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", run_timeout_s=300,
              canaries=False, sandbox="none")
    log = tmp_path / "out" / "tests.log"
    if not log.exists() or b"test session starts" not in log.read_bytes():  # uv made no environment (offline)
        pytest.skip(f"the uv run command ran no test: {g.outcome} {g.error}")
    assert "pyproject.toml" in g.carried, (g.carried, g.dropped)
    assert not marker.exists(), (g.outcome, g.error)
