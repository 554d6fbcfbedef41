"""conf43: the parent check's own test processes (``twin_grading._together_run``, ``_probe_later``, ``_probe_rows``)
read the configuration and rootdir of the grading's whole run (``run_tests(whole=)``), as its runs apart, the
grading's runs and the rows run do (conf42).

The task: atk27's ``lines()`` (tests/run/test_assert_tell.py), its test's assertions so that the original stops on the
parent at its first; a twin at the second is told by its site (a statement at a time, the parent's code passes the
original's second assertion and fails the twin's). The repository has a root ``pytest.ini`` and a ``tests/tox.ini``
(markers only), and a second hidden test file in ``other/``: the grading's whole run (both files) reads the root's,
its rootdir the top. The parent check's one process selected the members' ids in ``tests/`` alone: pytest took
``tests/tox.ini``, rootdir ``tests/``, and reported ids of no member (``test_blank.py::…``): no stop was read, the
twin was not told, and the plan that the parent's code tells kept (a missed forgery: ``assert-tell``'s reader)."""

from __future__ import annotations

from pathlib import Path

import pytest
from run.test_assert_tell import F2P, P2P, TEST, blank_task

from pytest_homefield.run.twin_grading import parent_told
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins

OTHER = "other/test_b.py"
TESTS = ("from blank import lines\n\n\n"
         "def test_blank_text_gives_no_lines():\n    assert lines(\"  \\n \") == []\n    assert lines(\"\") == []\n\n\n"
         "def test_two_lines():\n    assert lines(\"a\\nb\") == [\"a\", \"b\"]\n")
#: the root's configuration, and one in the tests' folder the whole run does not read
CONFIG = {"pytest.ini": "[pytest]\n", "tests/tox.ini": "[pytest]\nmarkers =\n    slow: a slow test\n"}


@pytest.mark.slow
def test_the_parent_checks_process_reads_the_configuration_of_the_whole_run(tmp_path: Path) -> None:
    """The twin past the statement where its original stops on the parent is told (``told``, its stop read: line 1
    from the ``def``), as on the same task without ``tests/tox.ini`` (tests/run/test_assert_tell.py). Before: no stop
    was read (``stops`` empty) and the twin was not told."""
    b = blank_task(tmp_path / "task", TESTS, parent_data=CONFIG, data={OTHER: "def test_z():\n    pass\n"})
    gdir = copy_tree(b.pristine, tmp_path / "g")
    apply_patch(gdir, b.task.test_patch)
    plan = plan_twins(gdir, F2P, seed=0, parent=parent_tests(b.pristine, b.task.test_files),
                      parent_text=ParentText(b.pristine), pass_to_pass=P2P, stops={F2P[0]: 2})
    twin = next(t for r in plan.runs for t in [r[TEST].decode()] if "['']" in t)
    assert twin.splitlines()[5].endswith("== ['']"), twin  # the twin at the second assertion
    seen = parent_told(b.task, b.pristine, plan, b.task.test_cmd, [TEST, OTHER], timeout_s=120,
                       test_timeout_s=None, sandbox="none", env=None, network=None)
    assert seen is not None and (seen.told - seen.farther, seen.stops) == ({F2P[0]}, {F2P[0]: 1}), seen
