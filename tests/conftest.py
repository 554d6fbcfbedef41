"""Shared fixtures. ``pytester`` is enabled in pyproject's addopts (``-p pytester``)."""

from __future__ import annotations

import compileall
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.ablate_repo import build as build_ablate_repo
from helpers.ablate_repo import write_tasks as write_ablate_tasks
from helpers.demo_run import BackgroundDemo, DemoRun, demo_once
from helpers.durations import DEFAULT_SLOW_S, IDLE_S, KNOWN_S
from helpers.e2e_repo import MINED_STABILITY, UNUSED_PLUGINS, build, homefield, warm_parent_checks
from helpers.rewrite_ahead import plugin_targets, rewrite_ahead, rewrite_targets
from helpers.shared_repo import built_once
from helpers.verify_attacks_run import VerifyAttacksRun, verify_attacks_once
from xdist.scheduler import LoadScheduling

import pytest_homefield
from pytest_homefield.sandbox.phases import PHASE_DIR_VAR


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package under test once (the controller; workers skip it) when this environment
    writes no ``.pyc`` (``PYTHONDONTWRITEBYTECODE``): the suite starts a few hundred Python processes that
    import it (homefield sessions, their xdist workers, test runs loading the reporter), and each would
    otherwise compile its 18k lines from source again (about 0.13 s of CPU). ``py_compile`` writes the
    ``__pycache__`` files that Python reads when they match the source. Likewise pytest's rewritten
    asserts of the test modules and the package, which each xdist worker would otherwise rewrite again,
    and of the plugins every ``homefield`` session loads (:mod:`helpers.rewrite_ahead`)."""
    if sys.dont_write_bytecode and not hasattr(config, "workerinput"):
        package = Path(pytest_homefield.__file__).parent
        compileall.compile_dir(package, quiet=1)
        rewrite_ahead(config, rewrite_targets(Path(__file__).parent, package) + plugin_targets())
    _temp_in_memory(config)


#: Where the suite's temporary files go when ``TMPDIR`` is not set: a RAM-backed tmpfs, when the machine
#: has one with room (:func:`_temp_in_memory`).
MEMORY_TEMP = Path("/dev/shm")
MEMORY_TEMP_MIN_FREE = 4 << 30  # bytes: a whole session's temporary files are ~0.3 GB


def _temp_in_memory(config: pytest.Config) -> None:
    """The suite's temporary files (``tmp_path``, and every workspace, snapshot and run folder of the
    homefield sessions it starts: they inherit ``TMPDIR``) on a tmpfs instead of the disk. The suite
    creates and deletes some hundred thousand small files; on a disk mounted with ``discard`` (this
    machine's ext4) each delete costs a synchronous TRIM: 300 small folders made and removed took 8.6 s
    of wall and 1.3 s of CPU in ``/tmp``, 0.5 s and 0.1 s on ``/dev/shm``. Only the controller decides
    (xdist workers inherit its environment and its ``--basetemp``), and never over the user's own
    ``TMPDIR`` or ``--basetemp``."""
    if hasattr(config, "workerinput") or os.environ.get("TMPDIR") or config.option.basetemp:
        return
    try:
        stat = os.statvfs(MEMORY_TEMP)
    except OSError:
        return
    if (stat.f_bavail * stat.f_frsize < MEMORY_TEMP_MIN_FREE or stat.f_flag & os.ST_NOEXEC
            or not os.access(MEMORY_TEMP, os.W_OK | os.X_OK)):
        return  # scripts and virtualenvs in temporary folders must be executable
    os.environ["TMPDIR"] = str(MEMORY_TEMP)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


#: Markers whose tests are deselected unless ``-m`` names them (deselected items run no fixture): ``clients``
#: (a default run installs no third-party client) and ``slow`` (the long end-to-end tier, which CI runs as a
#: second command: ``.ci/run``), so README command 2 fits its 5 minutes on 2 cores.
OPT_IN_MARKERS = ("clients", "slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of an :data:`OPT_IN_MARKERS` marker are deselected unless ``-m`` names it (``-m slow`` runs the
    slow tier alone, ``-m "slow or not slow"`` everything but ``clients``). Then the longest tests go first."""
    markexpr = config.getoption("markexpr") or ""
    for marker in OPT_IN_MARKERS:
        if marker not in markexpr:
            gone = [item for item in items if item.get_closest_marker(marker) is not None]
            if gone:
                config.hook.pytest_deselected(items=gone)
                items[:] = [item for item in items if item.get_closest_marker(marker) is None]
    where = _order(items)
    items.sort(key=lambda item: where.get(item.nodeid, (2, 0)))


def _order(items: list[pytest.Item]) -> dict[str, tuple[int, int]]:
    """Where each of ``items`` runs, by node id (a stable sort keeps collection order within a key; every
    xdist worker sorts the same collection the same way). First the tests that mostly wait
    (:data:`helpers.durations.IDLE_S`: hangs until a timeout, sleeps before a kill, time budgets; most
    waiting first): they run while the demo runs in the background (:func:`_demo_in_background`), which
    then has the cores they leave, instead of a core standing idle later. Then the ``slow`` and
    known-long tests, longest first (:data:`~helpers.durations.KNOWN_S`), so that under ``-n 2``
    (:func:`pytest_xdist_make_scheduler`) the long end-to-end tests run side by side and the many short
    ones even out the end. The tests of the session's one ``homefield demo`` (``demo_run``) come after
    them: the demo is done by then, so no worker waits for it. Then the rest, in collection order."""
    long: list[tuple[float, str]] = []
    idle: list[tuple[float, str]] = []
    for item in items:
        if "demo_run" in getattr(item, "fixturenames", ()):
            continue
        if item.nodeid in IDLE_S:
            idle.append((-IDLE_S[item.nodeid], item.nodeid))
            continue
        known = KNOWN_S.get(item.nodeid)
        if known is None and item.get_closest_marker("slow") is not None:
            known = DEFAULT_SLOW_S
        if known is not None:
            long.append((-known, item.nodeid))
    ranked = sorted(idle, key=lambda x: x[0]) + sorted(long, key=lambda x: x[0])
    where = {nodeid: (0, rank) for rank, (_, nodeid) in enumerate(ranked)}
    where.update({item.nodeid: (1, 0) for item in items if "demo_run" in getattr(item, "fixturenames", ())})
    return where


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScheduling | None:
    """``-n N`` without ``--dist``: xdist's ``load`` scheduling one test at a time (``--maxschedchunk 1``)
    instead of its default, which hands each worker a block of consecutive tests up front (the first
    quarter of its share: here every long test to one worker). Each worker then gets the next test of
    the sorted list whenever it is down to one queued test: the longest remaining first."""
    if config.getvalue("dist") != "load" or any(a.startswith(("--dist", "-d")) for a in config.invocation_params.args):
        return None
    if config.getoption("maxschedchunk") is None:
        config.option.maxschedchunk = 1
    return LoadScheduling(config, log)


@pytest.fixture(scope="session")
def _phase_dirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("phases")
    folder.chmod(0o700)
    return folder


@pytest.fixture(autouse=True)
def _clean_xdist_env(monkeypatch: pytest.MonkeyPatch, _phase_dirs: Path, request: pytest.FixtureRequest) -> None:
    """Inner pytest runs must not think they are xdist workers of the outer suite. Each test gets a phase
    lock of its own (``HOMEFIELD_PHASE_DIR``, contracts §9): on one shared lock, the suite's tests with
    untrusted agents waited for each other's phases (an ssh test's 15 s became 170 s)."""
    for key in list(os.environ):
        if key.startswith(("PYTEST_XDIST_", "PYTEST_ADDOPTS", "HOMEFIELD_")) and key != "HOMEFIELD_CLAUDE_BIN":
            monkeypatch.delenv(key, raising=False)
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:16]
    monkeypatch.setenv(PHASE_DIR_VAR, str(_phase_dirs / digest))


@pytest.fixture
def cli_spelling() -> Iterator[None]:
    """Messages name options as the ``homefield`` script does (``--attempts``, not pytest's ``--homefield-attempts``:
    :func:`pytest_homefield.spelling.spelled_for`), for a test of a text the script prints (opt46)."""
    from pytest_homefield.spelling import spelled_for

    with spelled_for("cli"):
        yield


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
    """The fixture repository (:mod:`e2e_repo`), mined once per test session, shared by xdist workers.
    One stability run (:data:`MINED_STABILITY`): no test of it is about stability runs (their rule is
    tested in tests/mine/test_redgreen.py), and each more would be two more test runs per candidate, here
    and in every test that mines it again with the same settings to reuse its verifications. With a canary key
    and every task's parent check made (:func:`~helpers.e2e_repo.warm_parent_checks`): no test of it is about
    the parent check (tests/run/test_parent_*.py test it), and each copy graded a change that is not the
    reference fix would otherwise check every task's parent again in each of its sessions' processes."""

    def make(repo: Path) -> None:
        build(repo)
        proc = homefield(repo, "mine", "--stability-runs", MINED_STABILITY, "-n", "2")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        warm_parent_checks(repo)

    return built_once(tmp_path_factory, testrun_uid, "e2e-mined", make)


@pytest.fixture(scope="session")
def ablate_repo(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> Path:
    """The eight-task repository of :mod:`helpers.ablate_repo` with its tasks written (not mined), once per
    test session, shared by xdist workers: the ablation tests' repository, and the probe's cheapest."""

    def make(repo: Path) -> None:
        build_ablate_repo(repo)
        write_ablate_tasks(repo)

    return built_once(tmp_path_factory, testrun_uid, "ablate-repo", make)


@pytest.fixture(scope="session")
def verify_attacks_run(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> VerifyAttacksRun:
    """``homefield verify --attacks -n 2`` on the attack fixture's one task, once per test session, shared by
    xdist workers (:mod:`helpers.verify_attacks_run`): the command's test checks it, the escape-family tests
    read the attacks' records and artifacts."""
    return verify_attacks_once(tmp_path_factory, testrun_uid)


@pytest.fixture(scope="session", autouse=True)
def _demo_in_background(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """When any selected test uses ``demo_run``: the demo starts now, at this worker's first test, in a
    thread (:class:`helpers.demo_run.BackgroundDemo`); the session waits for it at its end. Each xdist
    worker starts one, and the file lock lets only the first run the demo. (``testrun_uid`` is asked
    for only then: a session without xdist, ``-p no:xdist``, and without the demo's tests runs.)"""
    if not any("demo_run" in getattr(item, "fixturenames", ()) for item in request.session.items):
        yield
        return
    demo = BackgroundDemo(tmp_path_factory, request.getfixturevalue("testrun_uid")).start()
    yield
    demo.join()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, testrun_uid: str) -> DemoRun:
    """``homefield demo -n 2`` as a user runs it, once per test session, shared by xdist workers
    (:mod:`helpers.demo_run`): the demo's end-to-end test checks it, the probe tests use the sample it mined."""
    return demo_once(tmp_path_factory, testrun_uid)
