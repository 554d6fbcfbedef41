"""link48 (issue 30, contracts §9 "host-side file work never follows the agent's links"): a FAIL_TO_PASS id of a file
that is not Python gets its sentinels in a new module beside it (``canaries._sentinel_module``), written into the
grading copy, which holds the agent's change (and, at mining, the commit's tree). Before, the module was written with
``Path.write_text`` after ``mkdir(parents=True)``: a link on the way (the folder of the id's file) was followed and
the module made in the folder it named, outside the copy. Now it is written by folder descriptors
(:func:`~pytest_homefield.sandbox.nofollow.write_bytes`): the link is refused, nothing is made where it points."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_homefield.sandbox.nofollow import LinkInTheWay
from pytest_homefield.sandbox.twin_runs import plan_twins


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    """``(root, outside)``: a grading copy whose ``docs`` is a link to the folder ``outside``."""
    root, outside = tmp_path / "copy", tmp_path / "outside"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_x.py").write_text("def test_x():\n    assert 1 + 1 == 2\n")
    outside.mkdir()
    (outside / "guide.rst").write_text("a guide\n")
    (root / "docs").symlink_to(outside)
    return root, outside


def test_a_sentinel_module_is_never_written_through_a_link_on_its_way(tmp_path: Path) -> None:
    root, outside = _copy(tmp_path)
    with pytest.raises(LinkInTheWay):
        plan_twins(root, ["docs/guide.rst::guide"], seed=1)
    assert os.listdir(outside) == ["guide.rst"]  # before: a test_*.py sentinel module was made here


def test_a_sentinel_module_below_a_linked_rootdir_is_refused_too(tmp_path: Path) -> None:
    """The ids relative to pytest's rootdir (``tests/`` here, root47): the rootdir's own folders are reached without
    following a link either (before: ``root / rootdir`` was opened as a path)."""
    root, outside = _copy(tmp_path)
    (root / "sub").mkdir()
    (root / "sub" / "docs").symlink_to(outside)
    with pytest.raises(LinkInTheWay):
        plan_twins(root, ["docs/guide.rst::guide"], seed=1, rootdir="sub")
    assert os.listdir(outside) == ["guide.rst"]


def test_a_sentinel_module_is_made_beside_a_file_that_is_not_python(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "guide.rst").write_text("a guide\n")
    plan = plan_twins(root, ["docs/guide.rst::guide"], seed=1)
    [module] = plan.targets
    assert module.startswith("docs/test_") and (root / module).is_file() and not (root / module).is_symlink()
    assert "raise AssertionError" in (root / module).read_text()
