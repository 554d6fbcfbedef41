"""twin43: one parse of a test command (:func:`pytest_homefield.sandbox.pytest_config.parse_command`) answers both
questions asked of it: the arguments it gives pytest (``pytest_config.pytest_args``: the softener's and the pin's
reading of ``-c``, ``-o``, paths) and where a ``{junit}`` command's pin goes (``testrun.pytest_words``). Before, each
found pytest by its own rule (anywhere after an ``env`` prefix, vs. the leading words only), and a ``{junit}``
command started by ``env NAME=VALUE`` had its arguments read as pytest's but no pin (its real-pytest run:
``tests/run/test_planted_conftest.py::test_a_junit_pytest_command_reads_nothing_above_the_tree``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_homefield.sandbox.pytest_config import parse_command, pytest_args
from pytest_homefield.sandbox.testrun import build_command, pytest_words

PIN = ["-c", "pytest.ini", "--confcutdir=."]

#: command → (the words before pytest's arguments when pytest is the program started, else None; pytest's arguments).
CASES: dict[str, tuple[int | None, list[str]]] = {
    "pytest -q --junitxml={junit}": (1, ["-q", "--junitxml={junit}"]),
    "python3.12 -m pytest --junitxml={junit}": (3, ["--junitxml={junit}"]),
    ".venv/bin/python -m pytest --junitxml={junit}": (3, ["--junitxml={junit}"]),
    # twin43: pytest_words found none here, pytest_args read them as pytest's
    "env PYTEST_ADDOPTS=-x pytest --junitxml={junit}": (3, ["-x", "--junitxml={junit}"]),
    "env A=1 B=2 python -m pytest --junitxml={junit}": (6, ["--junitxml={junit}"]),
    "/usr/bin/env python3 -m pytest --junitxml={junit}": (4, ["--junitxml={junit}"]),
    # gatk43: a Python's -m running pytest starts it wherever it is, its flags read as Python reads them
    "coverage run -m pytest --junitxml={junit}": (4, ["--junitxml={junit}"]),
    "python -I -mpytest --junitxml={junit}": (3, ["--junitxml={junit}"]),
    # ops46: uv run and its options start the program after them
    "uv run pytest -o python_functions=check_* --junitxml={junit}": (3, ["-o", "python_functions=check_*",
                                                                           "--junitxml={junit}"]),
    "uv run --with pytest python -m pytest --junitxml={junit}": (7, ["--junitxml={junit}"]),
    "uv run --with pytest pytest -q --junitxml={junit}": (5, ["-q", "--junitxml={junit}"]),
    "uv run --frozen -p 3.12 --with=pytest-xdist pytest -x --junitxml={junit}": (7, ["-x", "--junitxml={junit}"]),
    "uv run -qwpytest -m pytest --junitxml={junit}": (5, ["--junitxml={junit}"]),
    "uv run -- pytest --junitxml={junit}": (4, ["--junitxml={junit}"]),
    "env A=1 uv run pytest --junitxml={junit}": (5, ["--junitxml={junit}"]),
    # another program first: its options read as pytest's (the widest reading), no word put in for it; so a uv run
    # whose options are not all read (one uv 0.13 has not, --directory moving the run, --script)
    "uv run --directory sub pytest -q --junitxml={junit}": (None, ["-q", "--junitxml={junit}"]),
    "uv run --no-such-option pytest --junitxml={junit}": (None, ["--junitxml={junit}"]),
    "uv run -s pytest --junitxml={junit}": (None, ["--junitxml={junit}"]),
    "tox -e pytest --junitxml={junit}": (None, ["--junitxml={junit}"]),
    "env -i pytest --junitxml={junit}": (None, ["--junitxml={junit}"]),
    "sh -c 'pytest --junitxml={junit}'": (None, []),
    "tool --junit {junit}": (None, []),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_one_parse_answers_both(command: str, tmp_path: Path) -> None:
    """Each command: ``pytest_args`` is the parse's ``args``; the pin goes right before pytest's own words (those
    ``pytest_args`` reads after the ``PYTEST_ADDOPTS`` words) exactly when pytest is the program started, and a
    custom command of another program gets none."""
    at, args = CASES[command]
    parsed = parse_command(command)
    assert pytest_args(command) == parsed.args == args
    assert pytest_words(command) == (at or 0)
    argv, _ = build_command(command, [], out_dir=tmp_path, pin=PIN)
    junit = str(tmp_path / "junit.xml")
    plain = [w.replace("{junit}", junit) for w in parsed.words]
    if at is None:
        assert argv == plain
    else:
        assert argv == [*plain[:at], *PIN, *plain[at:]]
        assert plain[at:] == [w.replace("{junit}", junit) for w in args[len(parsed.addopts):]]


def test_a_command_without_junit_is_always_pinned() -> None:
    """A command without ``{junit}`` is a pytest command whatever starts it (its pin and the reporter's options go at
    its end): as before."""
    assert pytest_words("uv run pytest") == 3 and pytest_words("uv run --directory d pytest") == 1
    assert pytest_words("") == 3 and pytest_words("'unclosed") == 0
