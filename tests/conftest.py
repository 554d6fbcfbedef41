"""Shared fixtures. ``pytester`` is enabled in pyproject's addopts (``-p pytester``)."""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.demo_run import DemoRun, demo_once
from helpers.e2e_repo import UNUSED_PLUGINS, build, homefield
from helpers.shared_repo import built_once
from xdist.scheduler import WorkStealingScheduling

import pytest_homefield


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package under test once (the controller; workers skip it) when this environment
    writes no ``.pyc`` (``PYTHONDONTWRITEBYTECODE``): the suite starts a few hundred Python processes that
    import it (homefield sessions, their xdist workers, test runs loading the reporter), and each would
    otherwise compile its 18k lines from source again (about 0.13 s of CPU). ``py_compile`` writes the
    ``__pycache__`` files that Python reads when they match the source."""
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(pytest_homefield.__file__).parent, quiet=1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in ``clients`` tests are deselected unless ``-m`` names them: deselected items run no fixture,
    so a default run installs no third-party client. Then ``slow`` tests go first."""
    if "clients" not in (config.getoption("markexpr") or ""):
        keep = [item for item in items if item.get_closest_marker("clients") is None]
        if len(keep) != len(items):
            config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("clients")])
            items[:] = keep
    # ``slow`` tests first (otherwise in collection order): under ``-n 2`` the long end-to-end tests
    # then run side by side from the start and the many short ones even out the end, instead of the
    # top-level end-to-end modules, collected last, running one after the other at the end of the run.
    # Every xdist worker sorts the same collection the same way.
    # The tests that use the session's one ``homefield demo`` (``demo_run``) go first of all: the first
    # worker runs the demo at once, instead of a worker that reaches a probe test later waiting idle
    # for the other's demo to finish.
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None,
                                 "demo_run" not in getattr(item, "fixturenames", ())))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> WorkStealingScheduling | None:
    """``-n N`` without ``--dist``: work stealing instead of xdist's default ``load``, which hands each
    worker a block of consecutive tests up front (the first quarter of its share: here every slow test
    to one worker). Work stealing splits the tests in halves and an idle worker takes the back half of
    the other's queue, so the slow tests that come first are shared out while the short ones even out
    the end."""
    if config.getvalue("dist") != "load" or any(a.startswith(("--dist", "-d")) for a in config.invocation_params.args):
        return None
    return WorkStealingScheduling(config, log)


@pytest.fixture(autouse=True)
def _clean_xdist_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not think they are xdist workers of the outer suite."""
    for key in list(os.environ):
        if key.startswith(("PYTEST_XDIST_", "PYTEST_ADDOPTS", "HOMEFIELD_")) and key != "HOMEFIELD_CLAUDE_BIN":
            monkeypatch.delenv(key, raising=False)


@pytest.fixture
def lean_pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """``pytester`` whose ``runpytest_subprocess`` processes (and their xdist workers) get
    ``PYTEST_ADDOPTS`` = :data:`~helpers.e2e_repo.UNUSED_PLUGINS` (set after ``pytester`` removed the
    variable): each skips loading this machine's unused plugins, about 0.45 s of CPU a process. Its
    in-process ``parseconfig`` reads the variable too: there the unused plugins would be imported again
    for every test (``pytester`` restores ``sys.modules`` after each), 0.3 s of CPU a test."""
    monkeypatch.setenv("PYTEST_ADDOPTS", UNUSED_PLUGINS)
    return pytester


@pytest.fixture(scope="session")
def mined(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The fixture repository (:mod:`e2e_repo`), mined once per test session, shared by xdist workers."""

    def make(repo: Path) -> None:
        build(repo)
        proc = homefield(repo, "mine", "--stability-runs", "2", "-n", "2")
        assert proc.returncode == 0, proc.stdout + proc.stderr

    return built_once(tmp_path_factory, testrun_uid, "e2e-mined", make)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> DemoRun:
    """``homefield demo -n 2`` as a user runs it, once per test session, shared by xdist workers
    (:mod:`helpers.demo_run`): the demo's end-to-end test checks it, the probe tests use the sample it mined."""
    return demo_once(tmp_path_factory, testrun_uid)
