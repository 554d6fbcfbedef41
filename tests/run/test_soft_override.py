"""soft40: a test function named by ``-o python_functions=…`` in the task's test command, or by the configuration file
its ``-c`` names, under soft statements (contracts §7).

soft39 read the ``python_functions`` of the configuration pytest finds (``canary_soft.function_patterns``), not the
command's ``-o``, which pytest puts before it, nor the ``-c`` file pytest reads in its place: a ``check_*`` test was
no test function, a failing twin there stopped at its site and left the setting at 3 (twin37's case, the ``modes``
task of ``helpers/modes_task.py``), and a real fix was ``tests_failed`` (seed 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.modes_task import TEST, grade_modes

CHECKED = ("from modes import MODE, compute\n\n\ndef check_scaled():\n    MODE['scale'] = 3\n"
           "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n"
           "\n\ndef test_plain():\n    assert compute(2) == 2\n")
#: (the test command's options, files of commit 1 beside): each way the command names the ``check_*`` tests.
CASES = {
    "-o": ("-o 'python_functions=test_* check_*'", {"pytest.ini": "[pytest]\npython_functions = test_*\n"}),
    "-c": ("-c ci/pytest.ini --rootdir .", {"ci/pytest.ini": "[pytest]\npython_functions = test_* check_*\n"}),
    # gatk41: in a group of short flags (read as pytest's parser reads them: tests/run/test_soft_short_flags.py)
    "-qo": ("-qo 'python_functions=test_* check_*'", {"pytest.ini": "[pytest]\npython_functions = test_*\n"}),
    "-qoX": ("'-qopython_functions=test_* check_*'", {"pytest.ini": "[pytest]\npython_functions = test_*\n"}),
    "-qc": ("-qc ci/pytest.ini --rootdir .", {"ci/pytest.ini": "[pytest]\npython_functions = test_* check_*\n"}),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_test_the_command_names_is_soft(tmp_path: Path, case: str) -> None:
    options, beside = CASES[case]
    g = grade_modes(tmp_path, CHECKED, 1, fail_to_pass=[f"{TEST}::check_scaled", f"{TEST}::test_negative"],
                    beside=beside, options=options)
    assert g.outcome == "solved", g
