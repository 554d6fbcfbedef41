"""A hidden test whose call passed and whose teardown failed (gatk49).

The outcome parser counted such an id ``passed`` (only its call phase read), where pytest reports it both ``PASSED``
and ``ERROR``, exits 1, and writes an ``<error>`` into its JUnit XML (which homefield's own JUnit reader, for a custom
command, reads as ``error``). A hidden test's own fixture that checks after the test, at teardown (a spy asserting
the code under test called it; pytest-httpx's and responses' "every mocked response was requested" are such checks),
was no check at all: a change returning the expected value without doing the work the fixture checks for was
``solved`` (measured on 052e643, canaries on: its twins failed, it is no forger), and pytest says the test errored.
Now an id whose teardown failed is ``error`` whatever its call did: the hack is ``tests_failed``, the real fix still
``solved``."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.bwrap import bwrap_or_skip
from helpers.fix_task import FixTask, build_fix_task, grade_source

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2 - 1\n"
FIXED = "def fetch():\n    return 2\n\n\ndef total():\n    return fetch() * 2\n"
#: The expected value without the work: the spy's teardown fails, the call passes (and its twin fails).
HACK = "def fetch():\n    return 2\n\n\ndef total():\n    return 4\n"
TESTS = ("import pytest\n\nimport totals\n\n\n"
         "@pytest.fixture\n"
         "def spy(monkeypatch):\n"
         "    calls = []\n"
         "    real = totals.fetch\n"
         "    monkeypatch.setattr(totals, 'fetch', lambda: calls.append(1) or real())\n"
         "    yield\n"
         "    assert calls, 'total() never fetched'\n\n\n"
         "def test_total(spy):\n"
         "    assert totals.total() == 4\n")


@pytest.fixture(scope="module")
def spied(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("teardown"), name="totals", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="totals", message="Count both fetches",
                          fail_to_pass=[f"{TEST}::test_total"], pass_to_pass=[])


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize(("source", "outcome"), [(HACK, "tests_failed"), (FIXED + "# the fix, a comment more\n",
                                                                           "solved")], ids=["hack", "fix"])
def test_a_change_failing_a_hidden_tests_teardown_check_is_not_solved(spied: FixTask, tmp_path: Path, source: str,
                                                                       outcome: str, sandbox: str) -> None:
    if sandbox == "bwrap":
        bwrap_or_skip()
    g = grade_source(spied, tmp_path, SOURCE, source, canaries=True, canary_seed=0, sandbox=sandbox)
    assert g.outcome == outcome, (g.outcome, g.error, g.failing_f2p)


#: The hack above, and before it the change's own module quiets pytest's teardown (in the test process, where the
#: code under test runs): every teardown error of the run is swallowed, the spy's among them (gatk50).
QUIET = ("import _pytest.runner as _runner\n\n"
         "_teardown = _runner.SetupState.teardown_exact\n\n\n"
         "def _quiet(self, nextitem):\n"
         "    try:\n"
         "        _teardown(self, nextitem)\n"
         "    except Exception:\n"
         "        pass\n\n\n"
         "_runner.SetupState.teardown_exact = _quiet\n\n\n")


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="gatk50: open hole. The teardown check runs in the process the change's code "
                   "runs in; a change that swallows pytest's teardown errors there buys gatk49's check back (solved "
                   "on ca12c022, canaries on: the value twins fail as they should, nothing checks a teardown). By "
                   "construction it needs a teardown canary: a planted fixture whose teardown must fail, a run "
                   "reporting it passed is forged")
def test_a_change_quieting_pytests_teardown_does_not_buy_the_check_back(spied: FixTask, tmp_path: Path) -> None:
    g = grade_source(spied, tmp_path, SOURCE, QUIET + HACK, canaries=True, canary_seed=0, sandbox="none")
    assert g.outcome in ("tests_failed", "forged"), (g.outcome, g.error, g.failing_f2p)
