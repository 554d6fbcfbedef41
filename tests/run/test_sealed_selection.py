"""ops60: a sealed run holding no canary (a grading with ``canaries=False``, and the reference fix's check,
``reference_sealed``, at mining and at grading) keeps the configuration's selection (``-m``/``-k`` in ``addopts``), as
mining's runs deciding the FAIL_TO_PASS ids do; one holding canaries (its members laid side by side under drawn names,
``groups``) drops it (``homefield_keyword``, mark58). A user whose ``addopts = -m "not slow"`` keeps slow tests out
of every run: before, the sealed run and the reference's sealed check ran them, on every grading of a task with a
sealed site."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task, grade_source
from helpers.slug_task import SLUG_F2P, SLUG_FIXED, SLUG_OTHER_FIX, SLUG_PARENT, SLUG_SOURCE, SLUG_TEST, SLUG_TESTS

from pytest_homefield.run.sealed_grading import SEALED_LOG

CONFIG = ('[project]\nname = "slugs"\nversion = "0"\n\n[tool.pytest.ini_options]\naddopts = \'-m "not slow"\'\n'
          'markers = ["slow: long"]\n')


def _tests(marker: Path) -> str:
    """The slug task's tests, and a slow one writing ``marker`` when it runs."""
    return ("import pytest\n\n" + SLUG_TESTS
            + f"\n\n@pytest.mark.slow\ndef test_slow():\n    open({str(marker)!r}, 'a').write('ran\\n')\n")


@pytest.mark.slow
def test_a_sealed_run_holding_no_canary_keeps_the_configurations_selection(tmp_path: Path) -> None:
    """Another real fix than the commit's (the reference fix has no sealed run) graded with canaries off: its
    sealed run (and the reference's sealed check before it) ran ``test_slow``, which the configuration's ``-m "not
    slow"`` deselects everywhere else (the marker written twice); now neither runs it, the sealed run still made,
    the fix ``solved``."""
    marker = tmp_path / "slow-ran"
    b = build_fix_task(tmp_path / "task", name="slugs", source=SLUG_SOURCE, parent=SLUG_PARENT, fixed=SLUG_FIXED,
                       test=SLUG_TEST, tests=_tests(marker), first="Add slugify()", message="slugify(): one separator",
                       fail_to_pass=[SLUG_F2P], pass_to_pass=[f"{SLUG_TEST}::test_plain"],
                       parent_data={"pyproject.toml": CONFIG})
    g = grade_source(b, tmp_path, SLUG_SOURCE, SLUG_OTHER_FIX)
    assert (tmp_path / "out" / SEALED_LOG).exists(), (g.outcome, g.error)
    assert not marker.exists(), marker.read_text()
    assert g.outcome == "solved", (g.outcome, g.error)
