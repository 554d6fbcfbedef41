"""link52 (issue 30, contracts §9 "host-side file work never follows the agent's links"): the twin, sealed and
softened files of a grading's runs are written into fresh copies of the grading copy (``twin_grading.
_fresh_copies``), which copy a link as the link it is. Under ``--sandbox none`` a test process of an earlier run can
reach the grading copy (``../../w`` from its own) and swap a folder holding hidden tests, or a hidden test file, for
a link: before, every later copy's write (``Path.write_bytes`` by path) went through it into the folder or file the
link named, outside every copy. Now each write is reached from the copy one folder at a time, the file itself
no-follow, written in place (its inode kept, as before): a link on the way is :class:`~.nofollow.LinkInTheWay`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.attack_repo import GOOD_CALC, build, one_unsandboxed_attempt, writes_calc

from pytest_homefield.run.twin_grading import _fresh_copies
from pytest_homefield.sandbox import nofollow


def _grading_copy(tmp_path: Path) -> tuple[Path, Path]:
    """``(gdir, outside)``: a grading copy holding ``tests/test_x.py`` and ``src/m.py``; ``outside`` a folder of the
    user's holding ``test_x.py``."""
    gdir, outside = tmp_path / "g" / "w", tmp_path / "outside"
    (gdir / "tests").mkdir(parents=True)
    (gdir / "src").mkdir()
    (gdir / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n")
    (gdir / "src" / "m.py").write_text("X = 1\n")
    outside.mkdir()
    (outside / "test_x.py").write_text("the user's own file\n")
    return gdir, outside


def test_a_folder_of_hidden_tests_swapped_for_a_link_is_never_written_through(tmp_path: Path) -> None:
    """``tests/`` of the grading copy is a link to the user's folder. Before: each run's ``tests/test_x.py`` was
    written there (the user's file held the last run's twin file). Now: ``LinkInTheWay``, the user's file as it
    was."""
    gdir, outside = _grading_copy(tmp_path)
    os.rename(gdir / "tests", tmp_path / "away")
    (gdir / "tests").symlink_to(outside)
    runs = [{"tests/test_x.py": b"def test_x():\n    assert 1\n"}, {"tests/test_x.py": b"def test_x():\n    pass\n"}]
    with pytest.raises(nofollow.LinkInTheWay):
        _fresh_copies(gdir, tmp_path, runs, soft=False)
    assert (outside / "test_x.py").read_text() == "the user's own file\n"
    assert sorted(os.listdir(outside)) == ["test_x.py"]


def test_a_hidden_test_file_swapped_for_a_link_is_never_written_through(tmp_path: Path) -> None:
    """``tests/test_x.py`` itself is a link to the user's file. Before: the run's file was written into it."""
    gdir, outside = _grading_copy(tmp_path)
    (gdir / "tests" / "test_x.py").unlink()
    (gdir / "tests" / "test_x.py").symlink_to(outside / "test_x.py")
    with pytest.raises(nofollow.LinkInTheWay):
        _fresh_copies(gdir, tmp_path, [{"tests/test_x.py": b"def test_x():\n    assert 1\n"}], soft=False)
    assert (outside / "test_x.py").read_text() == "the user's own file\n"


def test_the_runs_files_are_written_in_place_with_the_times_of_the_file_they_replace(tmp_path: Path) -> None:
    """No link: each copy's file holds its run's bytes, and has the grading copy's file's modification time; a file
    of the runs alone is made."""
    gdir, _ = _grading_copy(tmp_path)
    os.utime(gdir / "tests" / "test_x.py", ns=(10**18, 10**18))
    runs = [{"tests/test_x.py": b"one\n", "tests/test_new.py": b"new\n"}, {"tests/test_x.py": b"two\n"}]
    folders = _fresh_copies(gdir, tmp_path, runs, soft=False)
    for f in folders:  # before any read (a read sets the access time)
        st = os.stat(f / "tests" / "test_x.py")
        assert st.st_mtime_ns == st.st_atime_ns == 10**18 and st.st_nlink == 1
    assert [(f / "tests" / "test_x.py").read_bytes() for f in folders] == [b"one\n", b"two\n"]
    assert (folders[0] / "tests" / "test_new.py").read_bytes() == b"new\n"
    assert not (folders[1] / "tests" / "test_new.py").exists()


@pytest.mark.slow
def test_graded_code_that_links_the_grading_copys_tests_elsewhere_gets_no_write_there(tmp_path: Path) -> None:
    """A real fix whose import, in the first runs apart (``--sandbox none``), copies the grading copy's ``tests/`` to
    a folder of its choosing and puts a link to it in its place. Before: the later runs' copies wrote their softened
    test files into that folder (``test_sub.py`` held ``homefield_reporter``'s soft statements) and every copy
    collected it: ``forged``. Now nothing of homefield's is written there and the attempt is ``agent_error``
    (never ``infra``: unscored, which graded code could choose)."""
    repo, outside = build(tmp_path / "repo"), tmp_path / "outside"
    swap = ("\n\nimport os as _os, shutil as _sh\n"
            "_g = _os.path.join(_os.path.dirname(_os.path.dirname(_os.getcwd())), 'w')\n"
            "_t = _os.path.join(_g, 'tests')\n"
            "if _os.path.isdir(_os.path.join(_g, 'src')) and _os.path.isdir(_t) and not _os.path.islink(_t):\n"
            f"    _sh.copytree(_t, {str(outside)!r})\n"
            "    _os.rename(_t, _t + '.away')\n"
            f"    _os.symlink({str(outside)!r}, _t)\n")
    outcome, error = one_unsandboxed_attempt(repo, tmp_path / "run", writes_calc(GOOD_CALC + swap))
    assert (outside / "test_sub.py").is_file(), "the swap was not made: nothing tested"
    assert b"homefield_reporter" not in (outside / "test_sub.py").read_bytes()
    assert outcome == "agent_error" and error is not None and error.startswith("hidden tests: LinkInTheWay"), error
