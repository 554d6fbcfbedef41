"""gatk43: a test command whose Python runs pytest through a group of its own short flags (``python -mpytest``,
``python -Bm pytest``, ``python -I -mpytest``): the options after it are pytest's (contracts §7 "Soft statements",
``pytest_config.pytest_args``; the test-run pin, ``testrun.pinned_config`` and ``pytest_words``).

``pytest_args`` found where pytest's arguments start by a word naming pytest or the two words ``-m pytest``: Python's
``-mpytest`` (the module glued to its flag, as Python's own parser reads a group of short flags) or ``-Bm pytest``
(``-m`` the last flag of a group) named none, so the command's options were not read at all: a ``check_*`` test its
``-o python_functions=…`` names was no soft test, a failing twin there stopped at its site and left the setting at 3
(twin37's case, ``helpers/modes_task.py``), and a real fix was ``tests_failed`` on seed 1; and its ``-c FILE`` was
not seen, so the pin's own ``-c`` (pytest takes the last) replaced the configuration the command names. Now Python's
short flags are read as Python reads them (``cmWX`` take a value: the rest of the group, else the next word), and
``-m`` naming ``pytest`` starts pytest's arguments after it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox import pytest_config, testrun

CHECKED = ("from modes import MODE, compute\n\n\ndef check_scaled():\n    MODE['scale'] = 3\n"
           "    assert compute(2) == 7\n    MODE['scale'] = 1\n\n\ndef test_negative():\n    assert compute(-2) == 2\n"
           "\n\ndef test_plain():\n    assert compute(2) == 2\n")
PY = shlex.quote(sys.executable)


@pytest.mark.parametrize(("command", "args"), [
    ("python -mpytest -q -o x=1", ["-q", "-o", "x=1"]),
    ("python -Bm pytest -q", ["-q"]),
    ("python3.12 -I -mpytest tests", ["tests"]),
    ("python -W error -X dev -Bmpytest -k a", ["-k", "a"]),
    ("python -Werror -mpy.test -x", ["-x"]),
    ("python -m pytest -q", ["-q"]),  # as before
    ("python -mother -q", []),  # another module: no pytest
    ("env PYTEST_ADDOPTS=-v python -Bm pytest -q", ["-v", "-q"]),
])
def test_python_short_flags_start_pytest(command: str, args: list[str]) -> None:
    assert pytest_config.pytest_args(command) == args


@pytest.mark.parametrize(("command", "words"), [
    ("python -mpytest --junitxml={junit}", 2), ("python -Bm pytest --junitxml={junit}", 3),
    ("python3 -I -m pytest --junitxml={junit}", 4), ("python -W error -mpytest --junitxml={junit}", 4),
    ("python -m pytest --junitxml={junit}", 3), ("pytest --junitxml={junit}", 1),
    ("python -c 'import pytest' --junitxml={junit}", 0), ("python -m other --junitxml={junit}", 0),
    ("coverage run -m pytest --junitxml={junit}", 4), ("uv run pytest --junitxml={junit}", 3),  # ops46: 0 before
    ("uv run --with pytest python -m pytest --junitxml={junit}", 7),
    ("uv run --directory d pytest --junitxml={junit}", 0),
    ("env A=1 pytest --junitxml={junit}", 3), ("make test OUT={junit}", 0),
    ("sh -c 'pytest --junitxml={junit}'", 0)])
def test_a_custom_command_is_pinned_after_python_s_flags(command: str, words: int) -> None:
    """The pin goes right after the words that start pytest (``-c`` right after ``python`` is Python's own)."""
    assert testrun.pytest_words(command) == words


def test_the_command_s_own_config_file_is_not_pinned_over(tmp_path: Path) -> None:
    """``python -mpytest -c ci/pytest.ini``: no pin (before, the pin's ``-c`` came after the command's and won)."""
    (tmp_path / "w" / "tests").mkdir(parents=True)
    (tmp_path / "w" / "ci").mkdir()
    (tmp_path / "w" / "ci" / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    for command in ("python -mpytest -c ci/pytest.ini", "python -Bm pytest -qc ci/pytest.ini"):
        assert testrun.pinned_config(tmp_path / "w", command, ["tests"], tmp_path / "out") == [], command


@pytest.mark.parametrize("command", ["python -mpytest --junitxml={junit} {files}",
                                     "python -Bm pytest --junitxml={junit} {files}",
                                     "python -W error -m pytest --junitxml={junit} {files}",
                                     "env A=1 python -m pytest --junitxml={junit} {files}"])
def test_a_junit_command_through_python_s_flags_reads_nothing_above_the_tree(tmp_path: Path, command: str) -> None:
    """A custom ``{junit}`` command running pytest through Python's flags (``run_tests``, ``--sandbox none``, real
    pytest) on a tree with no configuration, a ``pytest.ini`` and a ``conftest.py`` (which leaves a mark) planted
    above it (where graded code unconfined can write, hatk41's ``/tmp``): the planted conftest is not loaded (it was:
    such a command got no pin, as hatk42's custom commands before theirs, and the grading's refusal of a
    configuration above the copy made the attempt, and each later one, ``infra``)."""
    import os

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(f"open({str(tmp_path / 'loaded')!r}, 'w').close()\n")
    root = tmp_path / "w"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = testrun.run_tests(root, command, ["tests/test_a.py::test_a"], out_dir=tmp_path / "out", env=env,
                            timeout_s=120)
    assert not (tmp_path / "loaded").exists()
    assert list(run.outcomes.values()) == ["passed"], run
