"""A pytest plugin of every run holding canaries (docs/contracts.md §7), loaded with ``-p homefield_keyword`` beside
the reporter: the configuration's selection by name and by mark (``-k``, ``-m`` and ``--deselect``, in ``addopts``
or the command) is dropped before pytest reads it.

A canary is planted under a name drawn from the file's words (the teardown canaries; a member laid side by side
with its group in the confirmation run and the sealed run), so a ``-k`` reads a name the hidden test does not have,
and a ``-m`` reads the marks the canary's text carries, never all those pytest gives the hidden test (a mark of a
base class another module defines, one a ``conftest.py`` hook adds): either deselected the canaries, never run,
never ``forged`` (gatk54, gatk56, mark58: ``addopts = -m unit`` or ``-k 'test_total or test_fetch'``, and a change
swallowing every teardown error was ``solved`` with no fix). ``--deselect`` takes node id *prefixes*: ``--deselect
tests/test_totals.py::test_f`` deselected every member and canary drawn ``test_fetch_…`` (mark58: the confirmation
run's original among them, "not reported there", a real fix ``tests_failed``, seed 3). Dropped, no canary is
deselected whatever marks or names it; what the run selects is its targets (node ids, or the hidden test files
whole, every test of them: a test the configuration deselects runs there too, and counts for nothing, being no
FAIL_TO_PASS or PASS_TO_PASS id, which the configuration selected when the task was mined). The runs holding no
canary (mining's runs deciding the FAIL_TO_PASS ids, grading's control and originals runs, a sealed run with no
group or member laid side by side: canaries off, the reference fix's sealed check; ops60) keep the configuration's
selection."""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "keyword", ""):
        config.option.keyword = ""
    if getattr(config.option, "markexpr", ""):
        config.option.markexpr = ""
    if getattr(config.option, "deselect", None):
        config.option.deselect = None
