"""soft41: the configuration pytest reads for a canary run is the one it finds from the common folder of the run's
targets, not each test file's nearest (contracts §7 "Soft statements").

pytest reads one configuration per session: from the common folder of the paths it is given, then each folder above.
The softener (``canary_soft.function_patterns``) looked for one from each test file's own folder: ``tests/tox.ini``
(a ``[pytest]`` section naming markers only) for ``tests/test_modes.py``, where pytest, given that file and
``other/test_more.py`` (the task's two test files), read the root ``pytest.ini``, which names ``check_*`` too.
``check_scaled`` was a test to pytest and no test function to the softener: a failing twin there stopped at its site
and left the setting at 3 (twin37's case, the ``modes`` task of ``helpers/modes_task.py``), and a real fix was
``tests_failed`` (seed 1: ``test_negative`` after the twin).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fix_task import build_fix_task
from helpers.modes_task import BEFORE, FIXED, PARENT, REAL_FIX, SOURCE, TEST

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.snapshot import copy_tree

CHECKED = ("from modes import MODE, compute\n\n\ndef check_scaled():\n    MODE['scale'] = 3\n"
           "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n"
           "\n\ndef test_plain():\n    assert compute(2) == 2\n")
MORE = "other/test_more.py"
MIRRORED = "from modes import compute\n\n\ndef test_mirrored():\n    assert compute(-3) == 3\n"
#: The parent's configurations: the root's names ``check_*``; the one beside the test file names none.
CONFIGS = {"pytest.ini": "[pytest]\npython_functions = test_* check_*\n",
           "tests/tox.ini": "[pytest]\nmarkers =\n    slow: a slow test\n"}


@pytest.mark.slow
def test_the_runs_configuration_is_the_one_pytest_reads(tmp_path: Path) -> None:
    """The commit's fix with a comment: ``solved`` (before: ``tests_failed``, ``check_scaled`` not soft)."""
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=CHECKED, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{TEST}::check_scaled", f"{TEST}::test_negative", f"{MORE}::test_mirrored"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE, parent_data=CONFIGS,
                       data={MORE: MIRRORED})
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(REAL_FIX, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=1,
              run_timeout_s=120)
    assert g.outcome == "solved", g
