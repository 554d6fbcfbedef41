"""conf42: one reading of pytest's choice of configuration file and rootdir
(:mod:`pytest_homefield.sandbox.pytest_config`), shared by the softener (soft41's ``_run_options``) and the test
runs' pin (hatk41's ``pinned_config``). Each layout is compared with real pytest (this venv's): the configuration
file and rootdir it reports with nothing above the tree, whether a ``pytest.ini`` planted above the tree is what it
reads instead (:attr:`Setup.leaves`), and that the pin keeps its choice while the planted file lies there."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox import testrun
from pytest_homefield.sandbox.pytest_config import setup_for
from pytest_homefield.sandbox.testrun import pinned_config

CMD = f"{shlex.quote(sys.executable)} -m pytest -p no:cacheprovider --co"
TEST = "def test_a():\n    pass\n"

#: name → (files of the tree, the command's options and paths, the targets). The comments say where the two readings
#: of round 41 (soft41 ``canary_soft._run_options``, hatk41 ``testrun.pinned_config``) disagreed with pytest.
CASES: dict[str, tuple[dict[str, str], str, list[str]]] = {
    "root pytest.ini": ({"pytest.ini": "[pytest]\n"}, "", ["tests/test_a.py"]),
    "none": ({}, "", ["tests/test_a.py"]),
    "pyproject without table": ({"pyproject.toml": "[project]\nname = 'x'\n"}, "", ["tests/test_a.py"]),
    "setup.py": ({"setup.py": "", "setup.cfg": "[metadata]\nname = x\n"}, "", ["tests/test_a.py"]),
    # hatk41 looked from the targets only: tests/pytest.ini was "in the tree", nothing pinned, but the command's "."
    # makes pytest look from the tree's top upwards first, and a pytest.ini planted above was read (soft41 right)
    "command path": ({"tests/pytest.ini": "[pytest]\n"}, ".", ["tests/test_a.py"]),
    # hatk41 took a tox.ini naming pytest anywhere for pytest's configuration: nothing pinned, the planted file read
    # (soft41 right)
    "tox.ini without [pytest]": ({"tox.ini": "[tox]\nenvlist = py\n\n[testenv]\ncommands = pytest\n"}, "",
                                 ["tests/test_a.py"]),
    # twin43: a header pytest's reader (iniconfig) cuts at ``#`` or ``;`` and configparser does not (gatk34): the
    # file was passed by, and the pin named none (no-config.ini) where pytest reads it
    "tox.ini header cut at a comment": ({"tox.ini": "[tox]\nenvlist = py\n\n[pytest] #]\npython_functions = check_*\n"},
                                        "", ["tests/test_a.py"]),
    # pytest's search from each path's folder when their common folder has none: hatk41 pinned "no configuration,
    # rootdir the top", so the pinned run read no b/pytest.ini where pytest alone reads it (soft41 right)
    "each folder": ({"b/pytest.ini": "[pytest]\n"}, "", ["a/test_a.py", "b/test_b.py"]),
    # a link among the names is pytest's configuration (it follows it): soft41 skipped it and read the root's
    # pytest.ini, a file pytest did not read (hatk41 right: it counted a link as a configuration)
    "link": ({"pytest.ini": "[pytest]\npython_functions = check_*\n", "conf/real.ini": "[pytest]\n",
              "tests/pytest.ini": "@conf/real.ini"}, "", ["tests/test_a.py"]),
}


def _tree(root: Path, files: dict[str, str], targets: list[str]) -> Path:
    for rel in targets:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TEST)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("@"):
            (root / rel).symlink_to(os.path.relpath(root / text[1:], (root / rel).parent))
        else:
            (root / rel).write_text(text)
    return root


def _pytest(root: Path, words: list[str]) -> tuple[Path, Path | None]:
    """The rootdir and configuration file real pytest reports for ``words`` run in ``root``."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run(words, cwd=root, capture_output=True, text=True, timeout=60, env=env).stdout
    head = dict(line.split(": ", 1) for line in out.splitlines() if line.startswith(("rootdir: ", "configfile: ")))
    assert "rootdir" in head, out
    rootdir = Path(head["rootdir"])
    return rootdir, (Path(os.path.normpath(rootdir / head["configfile"])) if "configfile" in head else None)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_setup_is_the_one_pytest_takes(tmp_path: Path, case: str) -> None:
    """:func:`setup_for` names the configuration file and rootdir pytest reports; ``leaves`` exactly when a
    ``pytest.ini`` planted above the tree is what pytest reads instead; with it planted, the pinned run
    (:func:`pinned_config`, given in every case: hatk42) still takes pytest's own choice (the configuration the run
    reads with nothing above).
    Before: hatk41's pin left three of these cases to the planted file or pinned another configuration, soft41's
    reading named a file pytest did not read in one."""
    files, options, targets = CASES[case]
    top = tmp_path / "up"
    root = _tree(top / "repo", files, targets)
    command = f"{CMD} {options}".strip()
    words = [*shlex.split(command), *targets]
    setup = setup_for(root, command, targets)
    rootdir, config = _pytest(root, words)
    assert setup.rootdir is not None and root / setup.rootdir == rootdir, (setup, rootdir)
    assert (None if setup.config is None else root / setup.config) == config, (setup, config)
    (top / "pytest.ini").write_text("[pytest]\n")
    planted, _ = _pytest(root, words)
    assert (planted == top) == setup.leaves, (setup, planted)
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, command, targets, out)
    assert pin  # every pytest command is pinned (hatk42), whether its search would leave the tree or not
    pinned = _pytest(root, [*words[:-len(targets)], *pin, *targets])
    assert pinned == (rootdir, config if config is not None else out / testrun.NO_CONFIG), (pin, pinned)


def test_a_config_file_the_command_gives_in_a_group_of_flags_is_not_pinned_over(tmp_path: Path) -> None:
    """``-qc FILE`` names the configuration as ``-c FILE`` does: hatk41's pin looked for ``-c`` as a word only and
    appended its own ``-c`` after it (the last wins: the run read an empty configuration, not the command's)."""
    root = _tree(tmp_path / "r", {"conf.ini": "[pytest]\npython_functions = check_*\n"}, ["tests/test_a.py"])
    out = tmp_path / "out"
    out.mkdir()
    command = "python -m pytest -qc conf.ini"
    setup = setup_for(root, command, ["tests/test_a.py"])
    assert (setup.config, setup.rootdir, setup.given, setup.python_functions) == ("conf.ini", ".", True, ("check_*",))
    assert pinned_config(root, command, ["tests/test_a.py"], out) == []
    assert pinned_config(root, "python -m pytest -q", ["tests/test_a.py"], out) != []


def test_a_path_outside_the_tree_leaves_pytest_its_choice(tmp_path: Path) -> None:
    """A target or command path outside the tree: pytest's choice is not read (no rootdir), nothing is pinned."""
    root = _tree(tmp_path / "r", {}, ["tests/test_a.py"])
    out = tmp_path / "out"
    out.mkdir()
    for command, targets in (("python -m pytest", ["../x/test_b.py"]), (f"python -m pytest {tmp_path}", ["t.py"])):
        setup = setup_for(root, command, targets)
        assert setup.rootdir is None and setup.leaves, setup
        assert pinned_config(root, command, targets, out) == []


#: A task's two test files: the root ``pytest.ini`` names ``check_*``; ``tests/tox.ini`` (markers only) names none.
WHOLE = {"pytest.ini": "[pytest]\npython_functions = test_* check_*\n",
         "tests/tox.ini": "[pytest]\nmarkers =\n    slow: a slow test\n",
         "tests/test_a.py": "def check_x():\n    pass\n\n\ndef test_y():\n    pass\n",
         "other/test_b.py": "def test_z():\n    pass\n"}


@pytest.mark.slow
def test_a_run_of_some_files_reads_the_configuration_of_the_whole_run(tmp_path: Path) -> None:
    """A grading's wider run (the task's two test files) reads the root ``pytest.ini``: ``check_x`` is a test. A run
    of ``tests/test_a.py`` alone (a run apart, the rows run, a probe, mining's selector) has pytest find
    ``tests/tox.ini`` first, and ``check_x`` is no test there, and the ids are relative to ``tests/`` (its rootdir
    then: ``test_a.py::test_y``, no id of the task): collection differs between runs of one grading. With
    ``whole`` (the task's test files) the run is pinned to the whole run's configuration and rootdir and collects
    as it does (real pytest, ``run_tests``)."""
    from pytest_homefield.sandbox.testrun import run_tests

    root = tmp_path / "r"
    for rel, text in WHOLE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    whole = ["tests/test_a.py", "other/test_b.py"]
    wide = run_tests(root, cmd, whole, out_dir=tmp_path / "o1", timeout_s=60)
    assert sorted(wide.outcomes) == ["other/test_b.py::test_z", "tests/test_a.py::check_x", "tests/test_a.py::test_y"]
    alone = run_tests(root, cmd, ["tests/test_a.py"], out_dir=tmp_path / "o2", timeout_s=60)
    # what pytest itself reads: no check_x, and ids relative to its rootdir there (tests/), not the task's
    assert alone.outcomes == {"test_a.py::test_y": "passed"}, alone.outcomes
    pinned = run_tests(root, cmd, ["tests/test_a.py"], out_dir=tmp_path / "o3", timeout_s=60, whole=whole)
    assert sorted(pinned.outcomes) == ["tests/test_a.py::check_x", "tests/test_a.py::test_y"], pinned.outcomes
    ids = run_tests(root, cmd, ["tests/test_a.py::check_x"], out_dir=tmp_path / "o4", timeout_s=60, whole=whole)
    assert ids.outcomes == {"tests/test_a.py::check_x": "passed"}, ids.outcomes


@pytest.mark.slow
def test_the_rows_run_reads_the_configuration_of_the_whole_run(tmp_path: Path) -> None:
    """The grading's run of the rows set apart (``twin_grading.rows_run``) selects the functions of its ids only
    (here of ``tests/test_a.py``): pytest found ``tests/tox.ini``, its rootdir ``tests/``, and reported
    ``test_a.py::…``, no id of the task's, so every row was ``error`` and a real fix's PASS_TO_PASS rows failed; and
    ``check_x`` was no test. Given the task's test files (``whole``) the run reads the whole run's configuration."""
    from pytest_homefield.run.twin_grading import rows_run

    gdir = tmp_path / "g"
    for rel, text in WHOLE.items():
        (gdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (gdir / rel).write_text(text)
    (tmp_path / "t").mkdir()
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    ids = ["tests/test_a.py::check_x", "tests/test_a.py::test_y"]
    checked = rows_run(ids, {}, gdir, tmp_path / "t", cmd, tmp_path / "out", timeout_s=60,
                       whole=["tests/test_a.py", "other/test_b.py"])
    assert checked.outcomes == dict.fromkeys(ids, "passed"), checked.run.outcomes


@pytest.mark.slow
def test_mining_targeted_runs_read_the_configuration_of_the_whole_run(tmp_path: Path) -> None:
    """Mining's targeted runs (``verify_candidate``'s later runs select the FAIL_TO_PASS candidates' ids, here all
    in ``tests/test_a.py``) had pytest find ``tests/tox.ini``, where ``check_half`` is no test and the rootdir is
    ``tests/``: pytest stopped at "not found" (exit 4) and each was made again on the whole files (``…-full``: the
    second parent and commit runs and both canary runs, 4 runs more of 8). Given the task's runnable test files
    (``whole``) every run reads the first run's configuration: no targeted run is made again."""
    from helpers.gitrepo import GitRepo

    from pytest_homefield.mine.redgreen import verify_candidate

    repo = GitRepo.init(tmp_path / "r")
    for rel, text in WHOLE.items():
        if rel.startswith(("pytest.ini", "tests/tox.ini")):
            repo.write(rel, text)
    repo.write("calc.py", "def half(n):\n    return n\n")
    repo.write("tests/test_a.py", "from calc import half\n\n\ndef test_zero():\n    assert half(0) == 0\n")
    repo.write("other/test_b.py", "def test_z():\n    pass\n")
    parent = repo.commit("calc")
    repo.write("calc.py", "def half(n):\n    return n // 2\n")
    repo.write("tests/test_a.py", "from calc import half\n\n\ndef test_zero():\n    assert half(0) == 0\n\n\n"
                                  "def check_half():\n    assert half(4) == 2\n")
    commit = repo.commit("calc: half halves")
    cmd = f"{shlex.quote(sys.executable)} -m pytest -p no:homefield -p no:benchmark -p no:hypothesispytest -p no:anyio"
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_a.py"],
                         runnable_tests=["tests/test_a.py", "other/test_b.py"], test_cmd=cmd, setup_cmd=None,
                         stability_runs=2, run_timeout_s=100, env={**os.environ, "PYTHONPATH": "."},
                         log_dir=tmp_path / "logs")
    assert v.reason is None, v
    assert v.FAIL_TO_PASS == ["tests/test_a.py::check_half"], v
    assert sorted(p.name for p in (tmp_path / "logs").iterdir() if p.name.endswith("-full")) == []
