"""gatk56: a repository whose configuration selects its tests by keyword (``addopts = -k total``, the hidden test
``test_total`` in ``tests/test_sums.py``, a module name without the word). Mining keeps the commit (its canaries run
apart, each member under its function's own name, which ``-k`` selects). At grading every real fix's originals pass
apart beside failing twins, so the confirmation run lays every member of the group side by side (``twin_together``),
one under the function's name and the others under fresh names drawn from the file's words; ``-k total`` deselects
those without the word, the original among them when it drew a fresh name: "1 FAIL_TO_PASS passed apart but not in
the confirmation run holding every member (…: not reported there)", and the real fix is ``tests_failed`` (seeds 0
and 1, ``--sandbox none``, measured on 6d4a018). A confirmation run now drops the configuration's ``-k``
(``-p homefield_keyword``): it selects its members by node id.

The teardown canaries' names are drawn alike: one without the word is deselected in every run (never run, never
``forged``), and with both so a change swallowing every teardown error was ``solved`` with no fix (seeds 5 to 7 of 0
to 9, measured on e19657b). Here the spied fixture is in a teardown twin's reach (tdtwin56: its check contradicted
in a run apart, where the configuration's ``-k`` selects the original's name), so it is ``forged``; where no twin
reaches the check the hole stayed (gatk56's strict xfail in ``tests/run/test_teardown_canary_marks.py``), closed by
mark58: every run holding canaries (the runs apart, the plain run, the sealed run, the confirmation and probe runs,
mining's canary runs) drops the configuration's ``-k`` and ``-m``.

The sealed run (seal56) lays the members of a group without sealed sites side by side too, under drawn names: there
``-k total`` deselected a member (seeds 1 and 3 of 0 to 3 of :data:`TWO`, "2 passed, 1 deselected", measured on
1db51c0). The verdict did not change (``solved``: the sealed run judges the sealed FAIL_TO_PASS ids alone, which run
under their own names, selected as at mining), but the run held fewer tests than its files: it drops the
configuration's ``-k`` now, as every run holding canaries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_canary_marks import ALIASED
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TESTS
from run.test_teardown_error import TEST as TOTALS

from pytest_homefield.sandbox.bwrap import REPORTER_DIR
from pytest_homefield.sandbox.testrun import SELECTION_PLUGIN

TEST = "tests/test_sums.py"
SELECTS = {"pytest.ini": "[pytest]\naddopts = -k total\n"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("keyed"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[], project=False, parent_data=SELECTS)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_real_fix_is_solved_where_the_configuration_selects_by_keyword(keyed: FixTask, tmp_path: Path,
                                                                         seed: int) -> None:
    g = grade_source(keyed, tmp_path, SOURCE, FIXED + "# the fix, a comment more\n", canaries=True,
                     canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
def test_a_real_fix_is_solved_where_the_configuration_selects_by_keyword_in_bubblewrap(keyed: FixTask,
                                                                                       tmp_path: Path) -> None:
    """The confirmation run's plugin is shipped beside the reporter, in the folder bubblewrap binds."""
    bwrap_or_skip()
    g = grade_source(keyed, tmp_path, SOURCE, FIXED + "# the fix, a comment more\n", canaries=True, canary_seed=0,
                     sandbox="bwrap")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 6])
def test_a_change_swallowing_teardown_errors_is_forged_where_the_configuration_selects_by_keyword(
        keyed: FixTask, tmp_path: Path, seed: int) -> None:
    """Seeds 0 to 9 measured on e19657b: 5, 6 and 7 draw two names without ``total`` (``solved`` then), the others
    one with it (``forged``); the teardown twin makes 5 and 6 ``forged`` too (the lead's rehearsal CI of 547efbc:
    XPASS(strict))."""
    g = grade_source(keyed, tmp_path, SOURCE, QUIET_FINISH + HACK, canaries=True, canary_seed=seed, sandbox="none")
    assert g.outcome == "forged", (g.outcome, g.error, g.failing_f2p)


#: A sealed function (``== 4``) and one without a sealed site (``> 3``), both named with the word: in the sealed run
#: the second's members lie side by side, one under a drawn name.
TWO = ("import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n\n\n"
       "def test_total_more():\n    assert totals.total() > 3\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 3])
def test_no_run_deselects_a_member_where_the_configuration_selects_by_keyword(tmp_path: Path, seed: int) -> None:
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TWO, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{TEST}::test_total", f"{TEST}::test_total_more"], pass_to_pass=[], project=False,
                       parent_data=SELECTS)
    g = grade_source(b, tmp_path / "g", SOURCE, FIXED + "# the fix, a comment more\n", canaries=True,
                     canary_seed=seed, sandbox="none")
    assert g.outcome == "solved", (g.outcome, g.error, g.failing_f2p)
    logs = sorted((tmp_path / "g" / "out").glob("*.log"))
    assert "sealed.log" in [p.name for p in logs]
    assert [p.name for p in logs if "deselected" in p.read_text(errors="replace")] == []


#: ``--deselect`` takes node id prefixes: this one leaves out ``test_fetch`` and every test drawn ``test_f…``.
PREFIX = {"pytest.ini": f"[pytest]\naddopts = --deselect {TOTALS}::test_f\n"}


@pytest.mark.slow
@pytest.mark.parametrize(("source", "outcome"), [(QUIET_FINISH + HACK, "forged"),
                                                 (FIXED + "# the fix, a comment more\n", "solved")],
                         ids=["quiet", "fix"])
def test_no_run_deselects_by_a_prefix_of_the_configuration(tmp_path: Path, source: str, outcome: str) -> None:
    """mark58: seed 3 draws both teardown canaries ``test_fetch_…``, and the confirmation run a member so: deselected,
    the original among them, "not reported there", and the real fix (and the swallowing change) ``tests_failed``
    (measured on 6032655). Every run holding canaries drops the configuration's ``--deselect`` too."""
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TOTALS,
                       tests=ALIASED, first="totals", message="Count both fetches",
                       fail_to_pass=[f"{TOTALS}::test_total"], pass_to_pass=[], project=False, parent_data=PREFIX)
    g = grade_source(b, tmp_path / "g", SOURCE, source, canaries=True, canary_seed=3, sandbox="none")
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


@pytest.mark.slow
def test_the_selection_plugin_drops_every_selection_of_the_configuration(tmp_path: Path) -> None:
    """mark58: ``-p homefield_keyword`` (every run holding canaries) runs every test of its targets whatever the
    configuration's ``-k``, ``-m`` and ``--deselect`` leave out; without it pytest runs one of the three."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -m unit -k total --deselect test_x.py::test_total_b\n"
                                         "markers =\n    unit: fast\n")
    (tmp_path / "test_x.py").write_text("import pytest\n\n\n@pytest.mark.unit\ndef test_total_a():\n    pass\n\n\n"
                                        "@pytest.mark.unit\ndef test_total_b():\n    pass\n\n\n"
                                        "def test_other():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(REPORTER_DIR)}
    runs = [subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                            *plugin, "test_x.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=60)
            for plugin in ([], ["-p", SELECTION_PLUGIN])]
    assert [r.returncode for r in runs] == [0, 0], [r.stdout[-500:] for r in runs]
    assert "1 passed, 2 deselected" in runs[0].stdout, runs[0].stdout[-500:]
    assert "3 passed" in runs[1].stdout and "deselected" not in runs[1].stdout, runs[1].stdout[-500:]
