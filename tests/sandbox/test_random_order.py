"""Every test run of a task in the same order with the same random numbers, whatever pytest-randomly
(the real plugin, from the package index) would do to them (nu20, hynek/structlog)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_homefield.sandbox.testrun import run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

#: Eight tests that pass only in the order they are written (one order of 8! = 40,320), and one that
#: writes the random number it draws into the tree (an unconfined run may write it).
ORDERED = textwrap.dedent("""
    import random
    from pathlib import Path

    SEEN = []

    def _step(n):
        SEEN.append(n)
        assert SEEN == list(range(1, n + 1)), SEEN

    def test_1(): _step(1)
    def test_2(): _step(2)
    def test_3(): _step(3)
    def test_4(): _step(4)
    def test_5(): _step(5)
    def test_6(): _step(6)
    def test_7(): _step(7)
    def test_8(): _step(8)

    def test_draw():
        with open(Path(__file__).parent.parent / "draws.txt", "a") as fh:
            fh.write(repr(random.random()) + "\\n")
""")


@pytest.fixture(scope="module")
def randomly(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the real pytest-randomly (and its ``dist-info``, so pytest autoloads it from
    ``PYTHONPATH``), installed from the package index once per module."""
    where = tmp_path_factory.mktemp("randomly")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--target", str(where), "pytest-randomly"],
                          capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        pytest.skip(f"pytest-randomly could not be installed: {proc.stderr.strip()[-300:]}")
    return where


@pytest.mark.slow
def test_pytest_randomly_neither_reorders_nor_reseeds_a_test_run(randomly: Path, tmp_path: Path) -> None:
    """On main each run had a new order and a new seed: the order-dependent tests failed in almost every
    run, and the draws differed."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_ordered.py").write_text(ORDERED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(randomly), os.environ.get("PYTHONPATH")]))}
    runs = [run_tests(repo, CMD, ["tests/test_ordered.py"], out_dir=tmp_path / f"out{i}", env=env) for i in range(3)]
    for run in runs:
        assert run.outcomes and set(run.outcomes.values()) == {"passed"}, (run.outcomes, run.log_path.read_text())
        assert "Using --randomly-seed=0" in run.log_path.read_text()  # the plugin was loaded: it said so
    draws = (repo / "draws.txt").read_text().split()
    assert len(draws) == 3 and len(set(draws)) == 1, draws


def test_a_seed_the_command_gives_is_kept(randomly: Path, tmp_path: Path) -> None:
    """A test command that names its seed keeps it (and still no reordering)."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_ordered.py").write_text(ORDERED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(randomly), os.environ.get("PYTHONPATH")]))}
    run = run_tests(repo, f"{CMD} --randomly-seed=1234", ["tests/test_ordered.py"], out_dir=tmp_path / "o",
                    env=env)
    assert set(run.outcomes.values()) == {"passed"}, run.outcomes
    assert "Using --randomly-seed=1234" in run.log_path.read_text()
