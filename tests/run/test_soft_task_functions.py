"""gatk41: a group's function is soft whatever names it a test (contracts §7 "Soft statements").

The softener knew a test function by pytest's ``python_functions`` as homefield reads them (``test…``; the patterns
of the configuration file it finds; the test command's ``-o``/``-c``, ``canary_soft.function_patterns``). A
repository whose command is its own script calling ``pytest.main`` with ``-o python_functions=…`` (or a
``conftest.py``, a plugin, a setup script that exports ``PYTEST_ADDOPTS``) names tests homefield does not read: the
``check_*`` test that holds a twin was no soft test, the failing twin stopped at its site and left the setting at 3,
and another group's original after it failed (the ``modes`` task of ``helpers/modes_task.py``): a real fix
``tests_failed`` (seed 1). Now the functions of the task's own test ids (the plan's groups) are soft by their names, in
every run alike, however pytest came to collect them.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.fix_task import build_fix_task
from helpers.modes_task import BEFORE, FIXED, PARENT, REAL_FIX, SOURCE, TEST

from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.canary_soft import softened_files
from pytest_homefield.sandbox.snapshot import copy_tree

CHECKED = ("from modes import MODE, compute\n\n\ndef check_scaled():\n    MODE['scale'] = 3\n"
           "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n"
           "\n\ndef test_plain():\n    assert compute(2) == 2\n")
#: The repository's own test command: a script handing its arguments to ``pytest.main`` after its own option.
RUNTESTS = ("import sys\n\nimport pytest\n\n"
            "sys.exit(pytest.main(['-o', 'python_functions=test_* check_*', *sys.argv[1:]]))\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_group_function_a_script_names_is_soft(tmp_path: Path, seed: int) -> None:
    b = build_fix_task(tmp_path / "modes", name="modes", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=CHECKED, first="modes", message="compute: scaled one more, negatives mirrored",
                       fail_to_pass=[f"{TEST}::check_scaled", f"{TEST}::test_negative"],
                       pass_to_pass=[f"{TEST}::test_plain"], tests_before=BEFORE,
                       parent_data={"runtests.py": RUNTESTS})
    task = dataclasses.replace(b.task, test_cmd=f"{shlex.quote(sys.executable)} runtests.py {NO_PLUGINS}")
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(REAL_FIX, encoding="utf-8")
    g = grade(task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
              run_timeout_s=120)
    assert g.outcome == "solved", g


def test_the_task_functions_are_soft_by_name(tmp_path: Path) -> None:
    """Only the named functions of the file the ids name (a class's method by its own name; a parametrized id's
    function), beside those the patterns name."""
    text = ("def check_a():\n    assert 1\n\n\ndef check_b():\n    assert 1\n\n\nclass TestK:\n"
            "    def verify_c(self):\n        assert 1\n")
    files = {"t/test_x.py": text.encode(), "t/test_y.py": text.encode()}
    out = softened_files(files, tmp_path, "", tests=["t/test_x.py::check_a[1]", "t/test_x.py::TestK::verify_c"])
    soft = {rel: [n for n in ("check_a", "check_b", "verify_c")
                  if f"def {n}(" in data.decode() and "soft()" in data.decode().split(f"def {n}(")[1].split("def ")[0]]
            for rel, data in out.items()}
    assert soft == {"t/test_x.py": ["check_a", "verify_c"], "t/test_y.py": []}
