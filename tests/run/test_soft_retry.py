"""soft40: a ``functools.wraps`` decorator that itself catches an ``AssertionError`` (a retry wrapper) under soft
statements (contracts §7).

The body a ``functools.wraps`` decorator wraps keeps an assertion's failure and runs on (gatk39: ``mock.patch``'s body
must put back what it set); a retry wrapper (``for _ in range(3): try: return f() except AssertionError: …``) then
never sees the failure: it does not call the body again, and the call phase fails with the first attempt's failure.
A test whose first attempt fails and whose retry passes (a cold cache, a warm-up) passed as given and failed in every
canary run, with any fix: a real fix ``forged`` (seed 0) and ``tests_failed`` (seed 1). Now the kept failure is raised
when the body returns (the reporter's ``_at_return``), so the decorator meets it after the rest of the body ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import TEST, grade_modes

RETRIED = """import functools

from modes import MODE, compute

TRIES = []


def retried(f):
    @functools.wraps(f)
    def run(*a, **k):
        for attempt in range(3):
            try:
                return f(*a, **k)
            except AssertionError:
                if attempt == 2:
                    raise
    return run


@retried
def test_scaled():
    TRIES.append(1)
    assert len(TRIES) > 1
    MODE['scale'] = 3
    assert compute(2) == 7
    MODE['scale'] = 1


def test_negative():
    assert compute(-2) == 2


def test_plain():
    assert compute(2) == 2
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_of_a_retried_test_is_solved(tmp_path: Path, seed: int) -> None:
    """soft40: ``test_scaled``'s first attempt fails (``len(TRIES) > 1``), its retry passes: a real fix is ``solved``
    (before: ``forged`` on seed 0, ``tests_failed`` on seed 1)."""
    g = grade_modes(tmp_path, RETRIED, seed, fail_to_pass=[f"{TEST}::test_scaled", f"{TEST}::test_negative"])
    assert g.outcome == "solved", g


WRAPPERS = '''import functools
import warnings

import pytest

MODE = {"scale": 1}
TRIES = {"warm": 0, "always": 0, "returns": 0}


def retried(f):
    @functools.wraps(f)
    def run(*a, **k):
        for attempt in range(3):
            try:
                return f(*a, **k)
            except AssertionError:
                if attempt == 2:
                    raise
    return run


def known_bug(f):
    @functools.wraps(f)
    def run(*a, **k):
        try:
            f(*a, **k)
        except AssertionError:
            pytest.xfail("known bug")
    return run


@retried
def test_warm():
    TRIES["warm"] += 1
    assert TRIES["warm"] > 1
    MODE["scale"] = 1


@retried
def test_returns():
    TRIES["returns"] += 1
    with warnings.catch_warnings():
        assert TRIES["returns"] > 1
        return


@retried
def test_always():
    TRIES["always"] += 1
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


@known_bug
def test_known():
    MODE["scale"] = 3
    assert MODE["scale"] == 2
    MODE["scale"] = 1


def test_later():
    assert MODE["scale"] == 1
    assert TRIES == {"warm": 2, "always": 3, "returns": 2}
'''
FILE = "tests/test_soft.py"


@pytest.mark.slow  # a test process: some 1.5 s of CPU
def test_a_decorator_meets_its_bodys_failure_when_the_body_returns(tmp_path: Path) -> None:
    """soft40, softened: the failure a wrapped body's statement kept is raised when the body returns, so a retry
    wrapper calls it again (``test_warm`` passes on its second attempt, as given; before, it failed: the wrapper met
    no failure and the call phase failed with the first attempt's; so does ``test_returns``, whose ``with`` body a
    ``return`` leaves) and a wrapper turning a failure into an ``xfail``
    does so (``test_known``); each body ran to its end (the setting is back for ``test_later``), and a test failing
    on every attempt fails at its site's line."""
    import shlex
    import sys

    from pytest_homefield.sandbox.canary_soft import softened
    from pytest_homefield.sandbox.testrun import run_tests

    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(softened(WRAPPERS), encoding="utf-8")
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    run = run_tests(tmp_path / "p", cmd, [FILE], out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == {f"{FILE}::test_warm": "passed", f"{FILE}::test_returns": "passed",
                            f"{FILE}::test_always": "failed",
                            f"{FILE}::test_known": "xfailed", f"{FILE}::test_later": "passed"}, run.log_path.read_text()
    assert run.stop_lines[f"{FILE}::test_always"] == 4, run  # from the decorator: 0
    assert run.stop_operands[f"{FILE}::test_always"] == ("==", "3", "2"), run


#: soft41: a ``mock.patch``ed body whose bare call raises a real fix's exception (the plain run's ``raises`` body):
#: kept and raised when the body returns, so the body puts the setting back.
BARE = '''from unittest import mock

MODE = {"scale": 1}


def boom():
    raise ValueError("negative")


@mock.patch("os.sep", "/")
def test_bare():
    MODE["scale"] = 3
    boom()
    MODE["scale"] = 1


def test_bare_later():
    assert MODE["scale"] == 1
'''


def _python_with_pytest(version: str, folder: Path) -> str:
    """A Python ``version`` (``3.12``) with pytest, made in ``folder``: the interpreter ``uv python find`` names (or
    ``pythonX.Y`` on ``PATH``, or pyenv's, ``$PYENV_ROOT/versions/X.Y.*``), a venv of it and pytest installed there
    (``uv pip``, else ``pip``, from the package index); the test is skipped without one. CI: the machine's pyenv
    holds 3.12 and 3.13; elsewhere ``uv python install 3.12 3.13``."""
    import glob
    import os
    import shutil
    import subprocess
    import sys

    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    found: list[str] = []
    try:
        made = subprocess.run([uv, "python", "find", version], capture_output=True, text=True, timeout=60)
        if made.returncode == 0:
            found.append(made.stdout.strip())
    except OSError:
        pass
    found += [p for p in [shutil.which(f"python{version}")] if p]
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    found += sorted(glob.glob(f"{root}/versions/{version}.*/bin/python{version}"))
    probe = "import sys; print('%d.%d' % sys.version_info[:2])"
    for python in found:
        try:
            ok = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        if ok.returncode != 0 or ok.stdout.strip() != version:
            continue
        venv = folder / f"v{version}"
        if subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], capture_output=True,
                          timeout=120).returncode != 0:
            continue
        target = str(venv / "bin" / "python")
        install = [uv, "pip", "install", "-q", "--python", target, "pytest"] if Path(uv).exists() else \
            [target, "-m", "ensurepip", "-q"]
        if subprocess.run(install, capture_output=True, timeout=300).returncode == 0 and (
                Path(uv).exists() or subprocess.run([target, "-m", "pip", "install", "-q", "pytest"],
                                                    capture_output=True, timeout=300).returncode == 0):
            return target
    pytest.skip(f"no Python {version} with pytest here (uv python install {version})")


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_a_decorator_meets_its_bodys_failure_on_newer_pythons(tmp_path_factory: pytest.TempPathFactory,
                                                              tmp_path: Path, version: str) -> None:
    """soft41: soft40's retry fix (the failure a wrapped body kept raised at its return by a profile function) and
    soft41's kept exception in a ``mock.patch``ed body, with the test process on Python 3.12 and 3.13, where
    ``sys.setprofile`` runs over ``sys.monitoring`` (PEP 669): the same outcomes as on 3.11."""
    import shlex

    from pytest_homefield.sandbox.canary_soft import softened
    from pytest_homefield.sandbox.testrun import run_tests

    python = _python_with_pytest(version, tmp_path_factory.mktemp("pythons"))
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(softened(WRAPPERS), encoding="utf-8")
    (tmp_path / "p" / "tests" / "test_bare.py").write_text(softened(BARE), encoding="utf-8")
    bare = "tests/test_bare.py"
    run = run_tests(tmp_path / "p", f"{shlex.quote(python)} -m pytest", [FILE, bare], out_dir=tmp_path / "out",
                    sandbox="none")
    assert run.outcomes == {f"{FILE}::test_warm": "passed", f"{FILE}::test_returns": "passed",
                            f"{FILE}::test_always": "failed", f"{FILE}::test_known": "xfailed",
                            f"{FILE}::test_later": "passed", f"{bare}::test_bare": "failed",
                            f"{bare}::test_bare_later": "passed"}, run.log_path.read_text()
    assert f"Python {version}." in run.log_path.read_text()  # pytest's header: the test process's Python
    assert run.stop_lines[f"{FILE}::test_always"] == 4, run
    assert "ValueError" in run.log_path.read_text()
