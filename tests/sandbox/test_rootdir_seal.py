"""Sealable sites of a repository whose pytest configuration lies in its test folder (root47).

With a ``tests/pytest.ini`` the task's ids are relative to ``tests/`` (``test_core.py::test_double``).
``seal_sites.sealable_sites`` groups the FAIL_TO_PASS functions by their id's path and looks that path up among the
task's test files, which are paths from the tree's top (``tests/test_core.py``): it finds none and gives no site, so
no such task has a sealed run (contracts §7 "sealed run"), where the same test with its ids from the tree's top has
one. The planner of the twins reads ids from pytest's rootdir since root47 (``plan_twins``' ``rootdir``); the seal
planner, its callers (grading's ``_sealed_first``, ``sealed_grading.plan_seals``, mining's record of
``sealed_sites``) and its ids were not changed: a strict xfail until seal47 gave ``sealable_sites`` (and
``plan_seals``) the rootdir of the task's whole run, read by mining and grading alike.
"""

from __future__ import annotations

from pathlib import Path

from pytest_homefield.sandbox.seal_sites import sealable_sites

TEST = "tests/test_core.py"
TEXT = "from pkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _tree(tmp_path: Path, config: str) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(TEXT, encoding="utf-8")
    (tmp_path / config).write_text("[pytest]\n", encoding="utf-8")
    return tmp_path


def test_a_site_of_a_repository_configured_at_its_top_is_sealable(tmp_path: Path) -> None:
    """The control: ids from the tree's top, one site."""
    sites = sealable_sites(_tree(tmp_path, "pytest.ini"), [TEST], [f"{TEST}::test_double"], {TEST: None})
    assert [(s.path, s.actual, s.expected) for s in sites] == [(TEST, "double(2)", "4")]


def test_a_site_of_a_repository_configured_in_its_test_folder_is_sealable(tmp_path: Path) -> None:
    """seal47: the ids read from pytest's rootdir (``tests/``) find the site, its path from the tree's top, its
    function and key as pytest reports them."""
    sites = sealable_sites(_tree(tmp_path, "tests/pytest.ini"), [TEST], ["test_core.py::test_double"], {TEST: None},
                           rootdir="tests")
    assert [(s.path, s.function, s.actual, s.expected) for s in sites] == [
        (TEST, "test_core.py::test_double", "double(2)", "4")]
    assert [s.key for s in sites] == ["test_core.py::test_double@5"]


def test_ids_from_the_rootdir_read_from_the_top_find_no_site(tmp_path: Path) -> None:
    """The same ids read from the tree's top (the default ``rootdir``) name no file of the task: no site."""
    assert sealable_sites(_tree(tmp_path, "tests/pytest.ini"), [TEST], ["test_core.py::test_double"],
                          {TEST: None}) == []
