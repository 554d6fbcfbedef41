"""An agent's carried change that moves pytest's rootdir in the grading copy (gatk48, after root47).

Grading reads pytest's rootdir for its runs from the grading copy: the parent's tree, the agent's carried changes and
the hidden tests. The task's ids were mined against the reference's rootdir. Configuration files whose pytest section
changes are held back, but pytest's rootdir search also reads files no test section is needed for: a
``pyproject.toml`` without ``[tool.pytest.ini_options]`` (pytest >= 8.1's fallback configuration, its folder the
rootdir) or a ``setup.py`` (the rootdir when there is no configuration). A real fix that also made the package
``pkg`` a project of its own (a ``pkg/pyproject.toml``) moved the rootdir of ``pkg/tests/test_circles.py`` to
``pkg/``: pytest reported ``tests/test_circles.py::…`` and no id of the task, and the fix was ``tests_failed``
(measured on a141586). Now a carried change that moves pytest's setup (configuration file or rootdir) for the
task's hidden tests is held back, as a test configuration is: the grading copy's rootdir is the parent's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.pytest_config import setup_for
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "pkg/circles.py"
TEST = "pkg/tests/test_circles.py"
PARENT = "def area(r):\n    return 3 * r * r\n"
FIXED = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n"
TESTS = ("import pytest\n\nfrom pkg.circles import area\n\n\n"
         "def test_unit_circle():\n"
         "    assert area(1) == pytest.approx(3.14159, rel=1e-4)\n")
F2P = [f"{TEST}::test_unit_circle"]  # no configuration, no setup.py: the rootdir is the tree's top


@pytest.fixture(scope="module")
def circles(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("rootdir-moved"), name="circles", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="circles", message="Use pi for a circle's area",
                          fail_to_pass=F2P, pass_to_pass=[], parent_data={"pkg/__init__.py": ""}, project=False)


@pytest.mark.slow
@pytest.mark.parametrize("moving", ["pkg/pyproject.toml", "pkg/setup.py"])
def test_a_real_fix_that_adds_a_project_file_is_solved(circles: FixTask, tmp_path: Path, moving: str) -> None:
    work = copy_tree(circles.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    text = '[project]\nname = "pkg"\nversion = "0"\n' if moving.endswith(".toml") else \
        "from setuptools import setup\n\nsetup(name='pkg')\n"
    (work / moving).write_text(text, encoding="utf-8")
    g = grade(circles.task, workspace=work, pristine=circles.pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              canaries=False)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    assert moving in g.dropped and SOURCE in g.carried, g


@pytest.mark.slow
def test_the_parents_own_fix_alone_is_solved(circles: FixTask, tmp_path: Path) -> None:
    """The fixture's control: the same fix with no project file is ``solved`` (the rootdir is the top's)."""
    work = copy_tree(circles.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    g = grade(circles.task, workspace=work, pristine=circles.pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              canaries=False)
    assert g.outcome == "solved", (g.outcome, g.error)
    assert g.dropped == [], g


@pytest.fixture(scope="module")
def in_package(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """The same task, the parent holding a ``pkg/setup.py``: pytest's rootdir is ``pkg/``, the ids relative to it."""
    return build_fix_task(tmp_path_factory.mktemp("rootdir-setup"), name="circles", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="circles", message="Use pi for a circle's area",
                          fail_to_pass=["tests/test_circles.py::test_unit_circle"], pass_to_pass=[],
                          parent_data={"pkg/__init__.py": "", "pkg/setup.py": "from setuptools import setup\n"},
                          project=False)


@pytest.mark.slow
def test_a_real_fix_that_deletes_the_packages_setup_py_is_solved(in_package: FixTask, tmp_path: Path) -> None:
    """Deleting ``pkg/setup.py`` made the tree's top the rootdir (ids ``pkg/tests/…``): ``tests_failed`` before."""
    work = copy_tree(in_package.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    (work / "pkg/setup.py").unlink()
    g = grade(in_package.task, workspace=work, pristine=in_package.pristine, out_dir=tmp_path / "out",
              run_timeout_s=120, canaries=False)
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    assert g.dropped == ["pkg/setup.py"] and g.carried == [SOURCE], g


@pytest.mark.slow
def test_a_change_of_setup_py_alone_is_an_empty_patch(circles: FixTask, tmp_path: Path) -> None:
    """A change whose only file is held back this way grades the parent's tree: an empty patch, as every change
    held back is."""
    work = copy_tree(circles.pristine, tmp_path / "work")
    (work / "pkg/setup.py").write_text("from setuptools import setup\n", encoding="utf-8")
    g = grade(circles.task, workspace=work, pristine=circles.pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              canaries=False)
    assert g.outcome == "empty_patch" and g.dropped == ["pkg/setup.py"] and g.carried == [], g


def test_the_commands_own_rootdir_is_the_setups(tmp_path: Path) -> None:
    """A test command naming ``--rootdir`` (the user's, or in the ``PYTEST_ADDOPTS`` it sets) makes that pytest's
    rootdir, the ids relative to it; the setup read it as the configuration's folder or the tree's top (a141586),
    so grading planned the twins of ``test_a.py::test_x`` from the top while pytest reported them from ``tests/``.
    A ``--rootdir`` in a configuration's ``addopts`` moves nothing (pytest reads the rootdir before them)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_x():\n    assert 1\n")
    read = setup_for(tmp_path, "python -m pytest --rootdir=tests", ["tests/test_a.py"])
    assert read.rootdir == "tests", read
    read = setup_for(tmp_path, "env PYTEST_ADDOPTS='--rootdir tests' python -m pytest", ["tests/test_a.py"])
    assert read.rootdir == "tests", read
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --rootdir=tests\n")
    read = setup_for(tmp_path, "python -m pytest -c pytest.ini --rootdir tests", ["tests/test_a.py"])
    assert (read.config, read.rootdir) == ("pytest.ini", "tests"), read
    read = setup_for(tmp_path, "python -m pytest", ["tests/test_a.py"])
    assert (read.config, read.rootdir) == ("pytest.ini", "."), read


#: A wrong fix whose value equals anything: every assertion comparing it passes, a twin's too.
FORGER = ("class _Any(float):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = float.__hash__\n\n\n"
          "def area(r):\n    return _Any(3 * r * r)\n")


@pytest.fixture(scope="module")
def named_root(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    """A task whose test command names ``--rootdir=tests``: its ids are relative to ``tests/``."""
    b = build_fix_task(tmp_path_factory.mktemp("rootdir-named"), name="circles", source="circles.py", parent=PARENT,
                       fixed=FIXED, test="tests/test_circles.py", tests=TESTS.replace("pkg.circles", "circles"),
                       first="circles", message="Use pi for a circle's area",
                       fail_to_pass=["test_circles.py::test_unit_circle"], pass_to_pass=[])
    b.task = dataclasses.replace(b.task, test_cmd=f"{b.task.test_cmd} --rootdir=tests")
    return b


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(FIXED + "# the same fix, a comment more\n", "solved"),
                                                 (FORGER, "forged")])
def test_a_command_naming_its_rootdir_has_its_twins(named_root: FixTask, tmp_path: Path, source: str,
                                                    outcome: str) -> None:
    """Grading plans the twins from the command's rootdir: a real fix ``solved``, a forger equal to anything
    ``forged`` (on a141586 the planner read ``test_circles.py`` from the tree's top, found none, and planted a
    sentinel: the forger was never met by a twin)."""
    work = copy_tree(named_root.pristine, tmp_path / "work")
    (work / "circles.py").write_text(source, encoding="utf-8")
    g = grade(named_root.task, workspace=work, pristine=named_root.pristine, out_dir=tmp_path / "out",
              run_timeout_s=120, canaries=True, canary_seed=0)
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)
