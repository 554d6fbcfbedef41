"""gatk41: a test function named by ``-o python_functions=…`` or by a ``-c`` file given in a group of short flags
(``-qo …``, ``-qopython_functions=…``, ``-qc FILE``), as ``-o=…``, or in a ``PYTEST_ADDOPTS=…`` the task's test command
sets, under soft statements (contracts §7).

pytest's option parser (argparse) reads ``-qo X`` as ``-q -o X``, and ``-qoX`` as ``-q -o X``; soft40's reader of the
command (``canary_soft._all_values``) took only ``-o X``, ``-oX`` and the long forms: the ``check_*`` test pytest
collected was no test function of the softener, a failing twin there stopped at its site and left the setting at 3,
and a real fix was ``tests_failed`` (seed 1), as in ``test_soft_override.py`` before soft40 (whose gradings hold
the ``-qo``, ``-qoX`` and ``-qc`` cases); here, how the command is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.sandbox.canary_soft import function_patterns


@pytest.mark.parametrize(("command", "found"), [
    ("python -m pytest -qo python_functions=check_*", True),
    ("python -m pytest -vvopython_functions=check_*", True),
    ("python -m pytest -qc ci/pytest.ini", True),
    ("python -m pytest -qxc ci/pytest.ini", True),
    ("python -m pytest -o=python_functions=check_*", True),  # argparse splits an option's own = off
    ("PYTEST_ADDOPTS='-qo python_functions=check_*' python -m pytest -x", True),  # read before the command's
    # -k and -m take a value: what follows them in the group is that value, no flag
    ("python -m pytest -kopython_functions=check_*", False),
    ("python -m pytest -mc ci/pytest.ini", False),
    ("python -m pytest -q -- -o python_functions=check_*", False),
    ("python -m pytest -qpo -o python_functions=x", False),  # -p takes o; the -o after it names x
])
def test_the_command_is_read_as_pytest_reads_its_short_flags(tmp_path: Path, command: str, found: bool) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "pytest.ini").write_text("[pytest]\npython_functions = check_*\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    assert ("check_*" in function_patterns(tmp_path, "tests/test_x.py", command)) is found
