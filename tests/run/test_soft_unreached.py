"""gatk39: test bodies soft statements did not reach (contracts §7 "Soft statements"); soft39 reached both.

Each is twin37's case (``tests/run/test_after_twin.py``): ``test_scaled`` (FAIL_TO_PASS) sets a module's setting,
asserts and puts it back, ``test_negative`` (FAIL_TO_PASS too, after it) relies on it. Where the body is not soft, a
failing twin stops at its site and leaves the setting at 3: a real fix is ``tests_failed`` or even ``forged``.

* A decorator that leaves no ``__wrapped__`` (hypothesis's ``given``, any wrapper not made with ``functools.wraps``):
  only the frame of ``item.obj`` kept any failure (gatk38: the decorator may take what the body raises, hypothesis's
  ``assume``), and the innermost ``__wrapped__``'s an assertion's (gatk39). Found by no ``__wrapped__``, the body
  is not one whose failures may be kept: keeping an assertion there changes a decorator that expects one (hypothesis's
  ``@example(...).xfail()``). Seed 0: ``tests_failed``; seed 1: ``forged``. soft39: the body is found from
  ``item.obj`` by the test's own name (a closure's cell, hypothesis's ``.hypothesis.inner_test``) and keeps an
  assertion's failure, as a ``functools.wraps`` one's; none where hypothesis lists an example expected to fail.
* A test function named by the repository's ``python_functions`` (``check_*``): the softener told a test by its
  ``test`` prefix, not knowing the run's configuration. Seed 1: ``tests_failed``. soft39: the run's test functions
  are those of the configuration pytest reads in the grading copy (``pytest.ini``, ``pyproject.toml``, ``tox.ini``,
  ``setup.cfg``: each file of :data:`CONFIGS`), ``test…`` ones beside.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

import pytest
from helpers.modes_task import TEST, grade_modes

from pytest_homefield.sandbox.canary_soft import softened
from pytest_homefield.sandbox.testrun import run_tests

HFILE = "tests/test_hyp.py"
HCMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

REST = "\n\ndef test_negative():\n    assert compute(-2) == 2\n\n\ndef test_plain():\n    assert compute(2) == 2\n"
SCALED = "def {name}():\n    MODE['scale'] = 3\n    assert compute(2) == 7\n    MODE['scale'] = 1\n"
CASES = {
    # (test file, the setting's function, files of commit 1 beside, seed)
    "bare-decorator": ("from modes import MODE, compute\n\n\ndef logged(f):\n    def run(*a, **k):\n"
                       "        return f(*a, **k)\n    return run\n\n\n@logged\n" + SCALED.format(name="test_scaled")
                       + REST, "test_scaled", {}, 0),
}
CASES["bare-decorator-seed-1"] = (*CASES["bare-decorator"][:3], 1)
CHECKED = "from modes import MODE, compute\n\n\n" + SCALED.format(name="check_scaled") + REST
#: Each way a repository names its ``check_*`` tests (pytest's own files; a prefix or a glob).
CONFIGS = {
    "pytest.ini": {"pytest.ini": "[pytest]\npython_functions = test_* check_*\n"},
    "pyproject": {"pyproject.toml": "[project]\nname = 'modes'\nversion = '0'\n\n[tool.pytest.ini_options]\n"
                                    "python_functions = ['test', 'check']\n"},
    "tox.ini": {"tox.ini": "[tox]\nenvlist = py\n\n[pytest]\npython_functions =\n    test_*\n    check_*\n"},
    "setup.cfg": {"setup.cfg": "[metadata]\nname = modes\n\n[tool:pytest]\npython_functions = test check_\n"},
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_real_fix_is_not_failed_for_what_an_unreached_twin_left(tmp_path: Path, case: str) -> None:
    """soft39: the body a decorator that leaves no ``__wrapped__`` calls (found through the wrapper's closure, by the
    test's name) keeps an assertion's failure and runs on: a real fix is ``solved`` (gatk39: ``tests_failed``)."""
    _graded_solved(tmp_path, *CASES[case])


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_a_python_functions_test_is_soft(tmp_path: Path, config: str) -> None:
    """soft39: a ``check_*`` test the repository's configuration names (each of pytest's files) runs its body to the
    end in a canary run: a real fix is ``solved`` (gatk39's seed 1 was ``tests_failed``)."""
    _graded_solved(tmp_path, CHECKED, "check_scaled", CONFIGS[config], 1)


def _graded_solved(tmp_path: Path, tests: str, name: str, beside: dict[str, str], seed: int) -> None:
    """Grade a real fix of the ``modes`` task whose tests are ``tests`` (``name`` the setting's test, ``beside`` files
    of commit 1 beside the source) with canary seed ``seed``: it must be ``solved``."""
    g = grade_modes(tmp_path, tests, seed, fail_to_pass=[f"{TEST}::{name}", f"{TEST}::test_negative"], beside=beside)
    assert g.outcome == "solved", g


HYPOTHESIS = """import sys

from hypothesis import assume, example, given, settings, strategies as st

MODE = {"scale": 1}
QUIET = settings(database=None, deadline=None, derandomize=True, max_examples=20)


@QUIET
@given(st.integers(0, 10))
def test_scaled(x):
    MODE["scale"] = 3
    assert x * MODE["scale"] == -1
    MODE["scale"] = 1


@QUIET
@given(st.integers(0, 10))
@example(11).xfail(raises=AssertionError)
def test_xfail_example(x):
    assert x != 11


@QUIET
@given(st.integers(0, 10))
def test_assume(x):
    assume(x % 2 == 0)
    assert x % 2 == 0


def test_later():
    assert MODE["scale"] == 1
"""


def _hypothesis_site() -> str:
    """Where hypothesis is importable from (not in the test extra): ``TEST_HYPOTHESIS_SITE`` (a ``pip install
    --target`` folder), else this interpreter's; the test is skipped without it."""
    site = os.environ.get("TEST_HYPOTHESIS_SITE", "")
    if site and (Path(site) / "hypothesis").is_dir():
        return site
    spec = importlib.util.find_spec("hypothesis")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("hypothesis is not installed (set TEST_HYPOTHESIS_SITE to a pip --target folder holding it)")
    return str(Path(next(iter(spec.submodule_search_locations))).parent)


@pytest.mark.slow
def test_a_hypothesis_body_runs_on_past_a_failed_assertion(tmp_path: Path) -> None:
    """soft39, with hypothesis itself (6.170): softened, a ``@given`` test whose assertion fails runs its body to the
    end (its setting put back: ``test_later`` passes; on main it failed) and fails at its site; an explicit example
    expected to fail (``@example(...).xfail()``) and ``assume`` keep their meaning (both pass)."""
    site = _hypothesis_site()
    project = tmp_path / "p"
    (project / "tests").mkdir(parents=True)
    (project / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {site!r})\n", encoding="utf-8")
    (project / HFILE).write_text(softened(HYPOTHESIS), encoding="utf-8")
    run = run_tests(project, HCMD, [HFILE], out_dir=tmp_path / "out", sandbox="none")
    assert run.outcomes == {f"{HFILE}::test_scaled": "failed", f"{HFILE}::test_xfail_example": "passed",
                            f"{HFILE}::test_assume": "passed", f"{HFILE}::test_later": "passed"}, \
        run.log_path.read_text()
    assert "FAILED tests/test_hyp.py::test_scaled - assert (0 * 3) == -1" in run.log_path.read_text(), run
    assert run.stop_lines[f"{HFILE}::test_scaled"] == 4, run  # its site, from the first decorator: 0
