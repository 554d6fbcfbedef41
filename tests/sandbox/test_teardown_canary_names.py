"""The teardown canary's fixture name (gatk51 on tcan50's ``plant_teardown``): drawn from the file's words, it must not
be a name pytest resolves elsewhere for the file's tests. A module-level fixture of a conftest fixture's name overrides
it for every test of the module (an autouse one: every test then gets the canary's failing teardown), and a fixture
named ``request`` fails the module's import ("'request' is a reserved word for fixtures"): either way an honest fix's
FAIL_TO_PASS tests are ``error``, the real fix ``tests_failed``. Measured before: seeds 0 and 17 of this tree (of 40:
11 named it ``request`` or ``reset``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS

from pytest_homefield.sandbox.twin_runs import plan_twins, teardown_nodes

SRC = '''def value():
    return 1


def test_request_value():
    assert value() == 1


def test_reset_value():
    assert value() == 1
'''
CONFTEST = '''import pytest


@pytest.fixture(autouse=True)
def reset():
    yield
'''
F2P = ["tests/test_rows.py::test_request_value", "tests/test_rows.py::test_reset_value"]


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir(parents=True)
    (tmp_path / "tests" / "test_rows.py").write_text(SRC, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return tmp_path


def _fixture(text: str) -> str:
    found = re.search(r"fixture\ndef (\w+)\(", text)
    assert found, text
    return found.group(1)


def test_the_canary_fixture_is_never_reserved_nor_a_conftest_name(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    names = {_fixture(plan_twins(root, F2P, seed=s, teardown=True).runs[0]["tests/test_rows.py"].decode())
             for s in range(40)}
    assert not names & {"request", "reset"}, names
    assert len(names) >= 3, names  # still drawn from the file's words


@pytest.mark.parametrize("seed", [0, 17])  # ``request`` and ``reset`` before
def test_an_honest_module_errs_only_at_the_canary(tmp_path: Path, seed: int) -> None:
    root = _tree(tmp_path)
    plan = plan_twins(root, F2P, seed=seed, teardown=True)
    nodes = sorted(teardown_nodes(plan))  # two (can52)
    test_file = root / "tests" / "test_rows.py"
    original = test_file.read_bytes()
    for r, files in enumerate(plan.runs):
        test_file.write_bytes(files.get("tests/test_rows.py", original))
        done = subprocess.run([sys.executable, "-m", "pytest", *NO_PLUGINS.split(), "-rA", "-q", "-p",
                               "no:cacheprovider", "-p", "no:randomly", "tests/test_rows.py"], cwd=root,
                              capture_output=True, text=True, timeout=60)
        errors = re.findall(r"^ERROR (\S+)", done.stdout, re.M)
        assert sorted(errors) == nodes and len(nodes) == 2, (r, done.stdout + done.stderr)


PARAMETRIZED = '''import pytest

pytestmark = pytest.mark.parametrize("n", [1, 2])


def value(n):
    return n


def test_value_of_rows(n):
    assert value(n) == n


def test_value_twice(n):
    assert value(n) * 2 == 2 * n
'''
PLAIN = '''def test_plain_value():
    assert 1 == 1
'''


def test_a_module_parametrizing_every_test_gets_canaries_taking_its_names(tmp_path: Path) -> None:
    """A module whose ``pytestmark`` parametrizes its every test: the canary, taking no argument, failed the module's
    collection ("function uses no argument 'n'"), every test of it ``error`` (seed 3 alone there, gatk51, which then
    planted none there). gatk54: the canaries take the names ``pytestmark`` parametrizes (``module_params``), so such
    a module is guarded too: each run's errors are the canaries' instances, one per row, none of the module's tests."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_rows.py").write_text(PARAMETRIZED, encoding="utf-8")
    (tmp_path / "tests" / "test_plain.py").write_text(PLAIN, encoding="utf-8")
    f2p = ["tests/test_rows.py::test_value_of_rows[1]", "tests/test_rows.py::test_value_twice[2]",
           "tests/test_plain.py::test_plain_value"]
    homes = {teardown_nodes(plan_twins(tmp_path, f2p, seed=s, teardown=True))[0].split("::")[0] for s in range(8)}
    assert homes == {"tests/test_plain.py", "tests/test_rows.py"}, homes
    alone = plan_twins(tmp_path, f2p[:2], seed=3, teardown=True)
    nodes = teardown_nodes(alone)
    assert len(nodes) == 2, nodes
    original = (tmp_path / "tests" / "test_rows.py").read_bytes()
    for files in alone.runs:
        (tmp_path / "tests" / "test_rows.py").write_bytes(files.get("tests/test_rows.py", original))
        done = subprocess.run([sys.executable, "-m", "pytest", *NO_PLUGINS.split(), "-rA", "-q", "-p",
                               "no:cacheprovider", "-p", "no:randomly", "tests/test_rows.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        errors = re.findall(r"^ERROR (\S+)", done.stdout, re.M)
        assert sorted(errors) == sorted(f"{n}[{k}]" for n in nodes for k in (1, 2)), done.stdout + done.stderr


def test_the_canary_is_collected_where_tests_are_named_by_a_suffix(tmp_path: Path) -> None:
    """``python_functions = *_test``: the canary was named ``value_value`` (the prefix of ``value_of_rows_test``), never
    collected, and a run selecting it by node id (mining's check) ran nothing: ``ERROR: not found``, exit 4."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_functions = *_test\n", encoding="utf-8")
    (tmp_path / "tests" / "test_rows.py").write_text(
        "def value():\n    return 1\n\n\ndef value_of_rows_test():\n    assert value() == 1\n\n\n"
        "def value_twice_test():\n    assert value() * 2 == 2\n", encoding="utf-8")
    f2p = ["tests/test_rows.py::value_of_rows_test", "tests/test_rows.py::value_twice_test"]
    plan = plan_twins(tmp_path, f2p, seed=3, teardown=True)
    nodes = [plan.target(s) for s in [*plan.selectors(), *teardown_nodes(plan)]]
    (tmp_path / "tests" / "test_rows.py").write_bytes(plan.runs[0]["tests/test_rows.py"])
    done = subprocess.run([sys.executable, "-m", "pytest", *NO_PLUGINS.split(), "-rA", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", *nodes], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert sorted(re.findall(r"^ERROR (\S+)", done.stdout, re.M)) == sorted(teardown_nodes(plan)), \
        done.stdout + done.stderr
