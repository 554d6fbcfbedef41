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
in a run apart, where the configuration's ``-k`` selects the original's name), so it is ``forged`` now; where no
twin reaches the check the hole stays (the strict xfail in ``tests/run/test_teardown_canary_marks.py``). Closing it:
the configuration's ``-k`` dropped in every run selecting by node id (mining's and grading's: the ids select), or
names drawn only among those pytest's own ``-k`` reading (``_pytest.mark.expression``) selects as it selects the
function."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.fix_task import FixTask, build_fix_task, grade_source
from helpers.quiet_teardown import QUIET_FINISH
from run.test_teardown_error import FIXED, HACK, PARENT, SOURCE, TESTS

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
