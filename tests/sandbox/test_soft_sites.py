"""Soft statements (twin37, contracts §7): a canary run's test body runs to its end after a failed statement and fails
there with the first failure, at that statement's line, whatever the rest of the body does."""

from __future__ import annotations

import importlib
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_soft import (
    BLOCK,
    BLOCK_TAKING,
    JUMP,
    NESTED,
    SOFT,
    _named,
    function_patterns,
    softened,
    softened_files,
)
from pytest_homefield.sandbox.testrun import REPORTER_DIR, TestRun, run_tests

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"

#: Each test sets the module's setting, fails a comparison (a twin's contradicted site, line 2 of its function), runs
#: what a forger could put after it, then puts the setting back; ``test_later`` relies on it being back.
TESTS = '''import sys

import pytest

MODE = {"scale": 1}


def test_reset():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1


def test_raises_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    raise RuntimeError("a forger raising after the site")


def test_skips_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    pytest.skip("a forger skipping after the site")


def test_xfails_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    pytest.xfail("a forger marking it xfail after the site")


def test_exits_after():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    sys.exit(0)


def test_later_assert_fails_too():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    assert MODE["scale"] == 5


def test_not_raised():
    MODE["scale"] = 3
    with pytest.raises(ValueError):
        int("3")
    MODE["scale"] = 1


def test_then_fails_in_try():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 7
    MODE["scale"] = 1
    try:
        assert MODE["scale"] == 9
    finally:
        pass


def test_in_loop():
    for n in (1, 2, 3):
        MODE["scale"] = n
        assert n != 2
    MODE["scale"] = 1


def test_skipped_first():
    pytest.skip("skipped before anything failed")


def test_later():
    assert MODE["scale"] == 1


def test_passes():
    MODE["scale"] = 3
    assert MODE["scale"] * 2 == 6
    MODE["scale"] = 1
'''

FILE = "tests/test_soft.py"


def _run(tmp_path: Path, text: str, extra: str = "") -> TestRun:
    (tmp_path / "p" / "tests").mkdir(parents=True)
    (tmp_path / "p" / FILE).write_text(text, encoding="utf-8")
    return run_tests(tmp_path / "p", CMD + extra, [FILE], out_dir=tmp_path / "out", sandbox="none")


def test_softened_keeps_every_line_and_softens_every_test_body_alike() -> None:
    """Every line stays where it was; the soft statements are those of test functions' bodies (under ``if``/``for``
    too; nested inside a ``try``, ``with`` or ``while``: twin38), a ``unittest.TestCase``'s methods' (twin38), never a
    fixture's, a helper's, a docstring, one sharing its line, a ``with`` whose header is parenthesized (nor its
    body)."""
    text = ('import unittest\n\nimport pytest\n\n\n@pytest.fixture\ndef test_data():\n    x = 1\n    return x\n\n\n'
            'def helper():\n    assert 1\n\n\n'
            'def test_a(test_data):\n    """Doc."""\n    x = test_data\n    x += 1\n    y: int = 2\n'
            '    assert (x ==\n            2)\n    print(x); print(y)\n'
            '    if x:\n        helper()\n    for i in range(2):\n        assert i < 2  # a comment\n'
            '    try:\n        assert x\n    finally:\n        pass\n'
            '    with pytest.raises(ValueError) as e:\n        int("x")\n'
            '    with (open(__file__)) as f:\n        f.read()\n    while x:\n        x = 0\n'
            '\n\nclass TestPlain:\n    def test_m(self):\n        assert 1\n\n\n'
            'class TestUnit(unittest.TestCase):\n    def test_u(self):\n        self.assertEqual(1, 1)\n')
    out = softened(text)
    assert out.count("\n") == text.count("\n")
    soft = [n for n, line in enumerate(out.splitlines(), 1) if SOFT in line]
    nested = [n for n, line in enumerate(out.splitlines(), 1) if NESTED.format("") in line]
    assert (soft, nested) == ([18, 19, 20, 21, 25, 27, 32, 42, 47], [29, 33, 37]), out
    assert f"    with {SOFT}, pytest.raises(ValueError) as e, {BLOCK}:\n" in out
    assert "        with " + SOFT + ": assert i < 2  # a comment\n" in out
    assert softened(out.replace("def ", "def (")) == out.replace("def ", "def (")  # what does not parse: as it is
    compile(out, "t.py", "exec")


def test_nested_statements_are_soft_where_the_block_keeps_its_meaning() -> None:
    """A ``try`` body's statements name its ``except`` types (and the enclosing ``try``'s), its handlers and
    ``finally`` none; no soft statement under a bare ``except:`` or in a ``try``/``except*``'s, and a ``with``
    header continued past its last item keeps its body as it is. soft40: a ``with`` body a ``return``, ``break`` or
    ``continue`` may leave is soft, each such jump (a ``break`` of a loop inside it is none, a ``continue`` in that
    loop's ``else`` is one) given ``soft_jump(n)`` before it; an ``async with``'s body is soft too. gatk40: the body
    of a ``with`` at the top expecting no exception (``with c():``: 7 to 11, a ``for`` body being at the top) holds
    top soft statements."""
    text = ('async def test_a(x):\n'
            '    try:\n        try:\n            x = 1\n        except (KeyError, ValueError):\n            x = 2\n'
            '    except self.failureException as e:\n        x = 3\n    finally:\n        x = 4\n'
            '    try:\n        x = 5\n    except:\n        x = 6\n'
            '    for i in x:\n        with c():\n            x = 7\n            if x:\n                break\n'
            '    for j in x:\n        with c():\n            x = 8\n            for i in x:\n                break\n'
            '            else:\n                continue\n'
            '    with c():\n        x = 9\n        while x:\n            break\n'
            '    async with c():\n        x = 10\n'
            '    with c():\n        def f():\n            return 1\n        x = 11\n'
            '    with c() as (\n            y):\n        x = 12\n'
            '    with c() \\\n            :\n        x = 13\n')
    out = softened(text)
    assert out.count("\n") == text.count("\n")
    compile(out, "t.py", "exec")
    lines = out.splitlines()
    got = {int(line.split("= ")[-1]): line.split("): ")[0].split("soft(")[-1] for line in lines
           if line.strip().startswith("with __import") and " = " in line}
    assert got == {1: "lambda: (self.failureException, (KeyError, ValueError), )",
                   2: "lambda: (self.failureException, )", 3: "lambda: ()", 4: "lambda: ()", 7: "", 8: "", 9: "",
                   10: "", 11: ""}, out
    assert [n for n, line in enumerate(lines, 1) if BLOCK in line or BLOCK_TAKING.format("c, ", 1) in line] == \
        [16, 21, 27, 31, 33], out
    assert [(n, line.strip()) for n, line in enumerate(lines, 1) if "soft_jump" in line] == [
        (19, JUMP.format(1) + "break"), (26, JUMP.format(1) + "continue")], out


@pytest.mark.parametrize("xdist", [False, True])
def test_a_soft_failure_runs_the_body_to_its_end_and_fails_there_at_its_site(tmp_path: Path, xdist: bool) -> None:
    """The first failure is what the test reports, at its line (2: the comparison) with its operands, whatever came
    after it (a raise, a skip, an ``xfail``, ``sys.exit``, another failed assertion, a failure inside a ``try``);
    the line putting the setting back ran each time, so ``test_later`` passes (on main, without soft statements, it
    failed: the setting left at 3). A ``raises`` that took nothing fails at its ``with``; a loop's first failed row
    is what a loop reports; a test that passes passes, one skipped before any failure is skipped."""
    if xdist:
        pytest.importorskip("xdist")
    run = _run(tmp_path, softened(TESTS), " -n 1" if xdist else "")
    ids = {n: f"{FILE}::test_{n}" for n in ("reset", "raises_after", "skips_after", "xfails_after", "exits_after",
                                             "later_assert_fails_too", "then_fails_in_try", "not_raised", "in_loop",
                                             "skipped_first", "passes", "later")}
    assert run.outcomes == {**{i: "failed" for i in ids.values()}, ids["skipped_first"]: "skipped",
                            ids["passes"]: "passed", ids["later"]: "passed"}, run.log_path.read_text()
    site = {n for n in ids if n not in ("skipped_first", "passes", "later", "in_loop")}
    assert run.stop_lines == {**{ids[n]: 2 for n in site}, ids["in_loop"]: 3}, run
    assert run.stop_operands == {**{ids[n]: ("==", "6", "7") for n in site if n != "not_raised"},
                                 ids["in_loop"]: ("!=", "2", "2")}, run


#: twin38: ``unittest`` methods and nested statements. Each failing test sets the setting, fails, and puts it back
#: after its failure (in a ``unittest`` method, a ``while``, a ``try``, a ``with``); ``test_later`` and
#: ``TestV::test_later_unit`` rely on it being back. The rest keep what ``unittest`` and the blocks make of a failure:
#: a ``subTest`` reports it, ``assertRaises``/``raises`` take it, an ``except`` clause catches it, ``skipTest`` skips,
#: ``expectedFailure`` is an xfail; a ``break`` in a ``with`` body (not soft) still ends the loop.
NESTED_TESTS = """import unittest, pytest
from contextlib import suppress
MODE = {"scale": 1}

class TestU(unittest.TestCase):
    def test_1(self):
        MODE["scale"] = 3
        self.assertEqual(MODE["scale"] * 2, 7)
        MODE["scale"] = 1
    def test_2(self):
        self.assertEqual(MODE["scale"], 1)
    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)
                MODE["x"] = i
        self.assertEqual(MODE["x"], 2)
    def test_raises(self):
        with self.assertRaises(AssertionError):
            self.assertEqual(1, 2)
            MODE["y"] = 1
        with self.assertRaises(ValueError):
            int("x")
    def test_skip(self):
        self.skipTest("no")
    @unittest.expectedFailure
    def test_xf(self):
        self.assertEqual(1, 2)

def test_while():
    n = 0
    while n < 3:
        MODE["scale"] = n
        assert n != 1
        n += 1
    MODE["scale"] = 1

def test_try():
    try:
        assert MODE["scale"] == 5
        MODE["z"] = 1
        d = {}["k"]
    except KeyError:
        MODE["z"] = 2
    assert MODE["z"] == 2

def test_try_catch_assert():
    try:
        assert 1 == 2
        MODE["never"] = 1
    except AssertionError:
        pass
    assert "never" not in MODE

def test_with():
    with suppress(KeyError):
        MODE["scale"] = 3
        assert MODE["scale"] == 4
        MODE["scale"] = 1
    assert MODE["scale"] == 1

def test_with_raises_assert():
    with pytest.raises(AssertionError):
        assert 1 == 2
    for i in range(3):
        with suppress(ValueError):
            if i == 1:
                break
            assert i != 0

def test_with_return():
    with suppress(KeyError):
        MODE["scale"] = 3
        assert MODE["scale"] == 4
        MODE["scale"] = 1
        return
    MODE["scale"] = 9

def test_with_break():
    for i in range(3):
        with suppress(KeyError):
            MODE["scale"] = 3
            assert MODE["scale"] == 4
            MODE["scale"] = 1
            break
        MODE["scale"] = 9

def test_later():
    assert MODE["scale"] == 1

class TestV(unittest.TestCase):
    def test_skip_after(self):
        self.assertEqual(1, 2)
        raise unittest.SkipTest("after")
    def test_raise_after(self):
        self.assertEqual(1, 2)
        raise RuntimeError("after")
    def test_later_unit(self):
        self.assertEqual(MODE["scale"], 1)
"""


@pytest.mark.slow
def test_unittest_methods_and_nested_statements_run_on_and_keep_their_blocks_meaning(tmp_path: Path) -> None:
    """Softened (twin38), every failing test fails at its site's line (a ``unittest`` method's too: what it raised
    or skipped after the site does not replace it) and the setting is back for the later tests (on main, the
    ``unittest`` method and the ``while``/``try``/``with`` bodies not soft, both later tests failed, as they do in
    the file as given); what passes or skips or xfails as given does so softened."""
    ids = {n: f"{FILE}::{n}" for n in (
        "TestU::test_1", "TestU::test_2", "TestU::test_raises", "TestU::test_skip", "TestU::test_sub", "TestU::test_xf",
        "test_while", "test_try", "test_try_catch_assert", "test_with", "test_with_raises_assert", "test_with_return",
        "test_with_break", "test_later",
        "TestV::test_skip_after", "TestV::test_raise_after", "TestV::test_later_unit")}
    given = _run(tmp_path / "given", NESTED_TESTS)
    assert (given.outcomes[ids["test_later"]], given.outcomes[ids["TestV::test_later_unit"]]) == ("failed", "failed")
    run = _run(tmp_path / "soft", softened(NESTED_TESTS))
    failed = {"TestU::test_1": 2, "TestU::test_sub": 3, "test_while": 4, "test_try": 2, "test_with": 3,
              "test_with_raises_assert": 7, "test_with_return": 3, "test_with_break": 4, "TestV::test_skip_after": 1,
              "TestV::test_raise_after": 1}
    assert run.outcomes == {**{i: "passed" for i in ids.values()}, **{ids[n]: "failed" for n in failed},
                            ids["TestU::test_skip"]: "skipped", ids["TestU::test_xf"]: "xfailed"}, run
    assert run.stop_lines == {ids[n]: line for n, line in failed.items()}, run
    assert run.stop_operands == {ids["test_while"]: ("!=", "1", "1"), ids["test_try"]: ("==", "1", "5"),
                                 ids["test_with"]: ("==", "3", "4"), ids["test_with_raises_assert"]: ("!=", "0", "0"),
                                 ids["test_with_return"]: ("==", "3", "4"), ids["test_with_break"]: ("==", "3", "4")}


def test_without_soft_statements_the_left_setting_fails_a_later_test(tmp_path: Path) -> None:
    """The same file as given (no soft statement): every test stops at its site, and ``test_later`` fails on the
    setting they left (what a failing twin did to the tests after it)."""
    run = _run(tmp_path, TESTS)
    assert run.outcomes[f"{FILE}::test_later"] == "failed", run
    assert run.stop_lines[f"{FILE}::test_reset"] == 2


def test_a_soft_statement_outside_a_call_phase_of_the_reporter_changes_nothing() -> None:
    """Where the reporter is imported but no call phase of its hook runs (not loaded as a plugin, or in a fixture),
    a soft statement's failure goes through as without it: never a failure swallowed."""
    sys.path.insert(0, str(REPORTER_DIR))
    try:
        reporter = importlib.import_module("homefield_reporter")
    finally:
        sys.path.remove(str(REPORTER_DIR))
    with pytest.raises(ValueError), reporter.soft():
        raise ValueError("goes through")
    assert not reporter._soft_first


def test_every_target_file_of_a_canary_run_is_softened_alike(tmp_path: Path) -> None:
    """A canary run's copy holds every test file it targets softened, a group's (the run's files) or not, so a soft
    statement tells no group's file; a link at a target is not followed (written as the copy has it); the sealed
    run's copy (``soft=False``) holds its files as they are."""
    from pytest_homefield.run.twin_grading import _fresh_copies

    gdir = tmp_path / "g"
    (gdir / "tests").mkdir(parents=True)
    body = "def test_x():\n    assert 1 == 1\n"
    (gdir / "tests" / "test_other.py").write_text(body, encoding="utf-8")
    (tmp_path / "outside.py").write_text(body, encoding="utf-8")
    (gdir / "tests" / "test_link.py").symlink_to(tmp_path / "outside.py")
    targets = ["tests/test_group.py::test_x", "tests/test_other.py", "tests/test_link.py"]
    run = {"tests/test_group.py": body.encode()}
    soft_copy, = _fresh_copies(gdir, tmp_path, [run], targets=targets)
    assert (soft_copy / "tests" / "test_group.py").read_text() == softened(body) != body
    assert (soft_copy / "tests" / "test_other.py").read_text() == softened(body)
    assert (soft_copy / "tests" / "test_link.py").is_symlink() and (tmp_path / "outside.py").read_text() == body
    sealed, = _fresh_copies(gdir, tmp_path, [run], targets=targets, soft=False)
    assert (sealed / "tests" / "test_group.py").read_text() == body
    assert (sealed / "tests" / "test_other.py").read_text() == body


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_functions_a_repository_configuration_names_are_test_functions(tmp_path: Path) -> None:
    """soft39: a ``check_*`` test the repository's ``python_functions`` names is soft (a prefix or a glob, as pytest
    reads them), ``test…`` ones beside; the configuration is the one pytest reads: the first of its files in the test
    file's folder or the nearest folder above holding one (``pytest.ini`` before ``pyproject.toml``, a ``tox.ini``
    without ``[pytest]`` or a ``pyproject.toml`` without pytest's table none), no link followed (a link is pytest's
    configuration setting nothing known)."""
    text = "def check_a():\n    assert 1\n\n\ndef test_b():\n    assert 1\n\n\ndef helper():\n    assert 1\n"
    root = _tree(tmp_path / "r", {
        "pytest.ini": "[pytest]\npython_functions = test_* check_*\n",
        "pyproject.toml": "[tool.pytest.ini_options]\npython_functions = 'nothing'\n",
        "a/tox.ini": "[tox]\nenvlist = py\n",  # no [pytest]: not pytest's, the folder above's wins
        "b/pyproject.toml": "[tool.pytest]\npython_functions = ['helper']\n",  # toml mode: a list
        "c/setup.cfg": "[tool:pytest]\npython_functions = 'chec[k]_*'\n",
        "d/pyproject.toml": "[project]\nname = 'x'\n",  # no pytest table: the folder above's wins
        "e/pytest.ini": "# pytest's, even with no section\n",
    })
    assert function_patterns(root, "t.py") == ("test", "test_*", "check_*")
    assert function_patterns(root, "a/t.py") == ("test", "test_*", "check_*")
    assert function_patterns(root, "b/t.py") == ("test", "helper")
    assert function_patterns(root, "c/deep/t.py") == ("test", "chec[k]_*")
    assert function_patterns(root, "d/t.py") == ("test", "test_*", "check_*")
    assert function_patterns(root, "e/t.py") == ("test",)
    (root / "f").mkdir()
    # conf42: pytest follows the link and reads f/pytest.ini (tests/sandbox/test_pytest_config.py); it is not
    # followed here, so what it sets is not known: ``test`` only (soft41 read the root's instead)
    (root / "f" / "pytest.ini").symlink_to(root / "b" / "pyproject.toml")
    assert function_patterns(root, "f/t.py") == ("test",)

    def soft_lines(out: dict[str, bytes]) -> dict[str, list[int]]:
        return {rel: [n for n, line in enumerate(data.decode().splitlines(), 1) if SOFT in line]
                for rel, data in out.items()}

    # soft41: one configuration for the run, pytest's from the files' common folder (the root's here)
    out = softened_files({"t.py": text.encode(), "b/t.py": text.encode(), "e/t.py": text.encode()}, root)
    assert soft_lines(out) == {"t.py": [2, 6], "b/t.py": [2, 6], "e/t.py": [2, 6]}
    assert soft_lines(softened_files({"b/t.py": text.encode()}, root)) == {"b/t.py": [6, 10]}
    assert soft_lines(softened_files({"b/t.py": text.encode()}, root, "", ["b/t.py", "e/t.py::x"])) == \
        {"b/t.py": [2, 6]}
    assert softened_files({"t.py": text.encode()}) == {"t.py": softened(text).encode()}
    assert [n for n, line in enumerate(softened(text).splitlines(), 1) if SOFT in line] == [6]


def test_the_test_commands_overrides_and_config_file_name_test_functions(tmp_path: Path) -> None:
    """soft40: as pytest reads them, the last ``-o python_functions=…`` (of the configuration's ``addopts``, then of
    the command) replaces the configuration's value, and the command's ``-c FILE`` is the configuration, read by its
    suffix (no file looked for); a command's words before pytest's (``sh -c '…'``) are not read, nor a ``-c`` file
    that cannot be read."""
    root = _tree(tmp_path / "r", {
        "pytest.ini": "[pytest]\npython_functions = check_*\n",
        "a/pytest.ini": "[pytest]\naddopts = -p no:x -o 'python_functions=added_* more_*'\n",
        "ci/conf.cfg": "[tool:pytest]\npython_functions = cfg_*\n",
        "ci/conf.toml": "[tool.pytest.ini_options]\npython_functions = ['toml_']\n",
        "ci/other.ini": "[other]\nx = 1\n",
    })
    py = "python -m pytest -q"
    assert function_patterns(root, "t.py", py) == ("test", "check_*")
    assert function_patterns(root, "t.py", f"{py} -o python_functions=o_* -p no:y") == ("test", "o_*")
    assert function_patterns(root, "t.py", f"{py} -opython_functions=a -o python_functions=b") == ("test", "b")
    assert function_patterns(root, "t.py", f"{py} --override-ini='python_functions=c d'") == ("test", "c", "d")
    assert function_patterns(root, "t.py", f"{py} --override-ini python_functions=e -o xfail_strict=1") == \
        ("test", "e")
    assert function_patterns(root, "t.py", f"{py} -- -o python_functions=e") == ("test", "check_*")
    assert function_patterns(root, "a/t.py", py) == ("test", "added_*", "more_*")
    assert function_patterns(root, "a/t.py", f"{py} -o python_functions=mine") == ("test", "mine")
    assert function_patterns(root, "t.py", f"{py} -c ci/conf.cfg") == ("test", "cfg_*")
    assert function_patterns(root, "a/t.py", f"{py} --config-file=ci/conf.toml") == ("test", "toml_")
    assert function_patterns(root, "t.py", f"{py} -cci/other.ini") == ("test",)
    assert function_patterns(root, "t.py", f"{py} -c ci/missing.ini") == ("test",)  # soft41: pytest looks for none
    assert function_patterns(root, "t.py", "sh -c 'cd . && pytest -o python_functions=x'") == ("test", "check_*")
    assert function_patterns(root, "t.py", "/venv/bin/pytest -o python_functions=x") == ("test", "x")


#: (the parent's files, the command's options after ``pytest``, the run's targets): layouts where the configuration
#: pytest reads for the run is not the nearest to each file (soft41), each checked against pytest's own choice.
ROOTDIR_CASES = {
    "common folder": ({"pytest.ini": "[pytest]\npython_functions = check_*\n", "a/tox.ini": "[pytest]\n"},
                      "", ["a/t.py::check_b", "b/t.py"]),
    "one folder": ({"pytest.ini": "[pytest]\npython_functions = check_*\n", "a/tox.ini": "[pytest]\n"},
                   "", ["a/t.py"]),
    "the command's folder": ({"pytest.ini": "[pytest]\npython_functions = check_*\n", "a/tox.ini": "[pytest]\n"},
                             "b", ["a/t.py"]),
    "an option's value": ({"pytest.ini": "[pytest]\npython_functions = check_*\n", "a/tox.ini": "[pytest]\n"},
                          "--ignore b -k 'a or b or c'", ["a/t.py"]),
    "setup.py stops": ({"setup.py": "", "a/pytest.ini": "[pytest]\npython_functions = check_*\n"},
                       "", ["a/t.py", "b/t.py"]),
    "each folder": ({"a/pytest.ini": "[pytest]\npython_functions = check_*\n",
                     "b/setup.cfg": "[tool:pytest]\npython_functions = spec_*\n"}, "", ["b/t.py", "a/t.py"]),
    "PYTEST_ADDOPTS": ({"pytest.ini": "[pytest]\naddopts = -o python_functions=check_*\n"},
                       "", ["a/t.py"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(ROOTDIR_CASES))
def test_the_configuration_is_the_one_pytest_reads_for_the_run(tmp_path: Path, case: str) -> None:
    """soft41: the test functions :func:`function_patterns` names for a run are those pytest itself collects there
    (``--collect-only``, this venv's pytest): the configuration it finds from the common folder of the run's paths
    (the command's and the targets'), ``setup.py`` stopping the search, each path's folder then; and an
    ``env PYTEST_ADDOPTS=…`` before the command, read after the configuration's ``addopts`` and before the command's
    options. Before, the nearest configuration to each file was read, and ``PYTEST_ADDOPTS`` not at all: 5 of the 7
    cases differed from pytest."""
    files, options, targets = ROOTDIR_CASES[case]
    test = "def test_a():\n    pass\n\n\ndef check_b():\n    pass\n\n\ndef spec_c():\n    pass\n"
    root = _tree(tmp_path / "r", {**files, "a/t.py": test, "b/t.py": test})
    env_words = "env 'PYTEST_ADDOPTS=-o python_functions=spec_*' " if case == "PYTEST_ADDOPTS" else ""
    command = f"{env_words}{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider --co -q {options}"
    made = subprocess.run([*shlex.split(command), *targets], cwd=root, capture_output=True, text=True, timeout=60,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    collected = {line.rsplit("::", 1)[1] for line in made.stdout.splitlines() if "::" in line}
    assert collected, made.stdout + made.stderr
    patterns = function_patterns(root, targets, command)
    # ``test…`` is a test function of every run besides (a function pytest does not call is softened for nothing)
    assert {n for n in ("test_a", "check_b", "spec_c") if _named(n, patterns)} == collected | {"test_a"}, \
        (patterns, made.stdout)
