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

from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run.grading import grade
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
