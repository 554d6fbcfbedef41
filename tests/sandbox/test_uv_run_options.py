"""ops48: a ``uv run`` test command read as uv reads it (:func:`pytest_homefield.sandbox.pytest_config.uv_run`).

Its options are those of the newest uv the ``env`` extra allows (``UV_OPTIONS_OF``), hidden ones and other names of
one included (r37's lists were uv 0.13's ``--help``: ``--python-preference only-system`` was an unknown option, the
run read as another program's and a ``{junit}`` command left unpinned); an option that is none of uv's is one clear
error when the settings are read, never a run read past it. The ``PYTEST_ADDOPTS`` of a ``uv run --env-file`` is
read as uv reads the file (by uv itself) for the setup pytest takes, the softener's and the pin's reading."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from pytest_homefield.envs.builder import find_uv
from pytest_homefield.errors import ConfigError
from pytest_homefield.sandbox import pytest_config
from pytest_homefield.sandbox.canary_soft import setup_functions
from pytest_homefield.sandbox.pytest_config import (
    UV_OPTIONS_OF,
    UV_RUN_ASIDE,
    UV_RUN_FLAGS,
    UV_RUN_VALUED,
    command_problem,
    env_file_addopts,
    parse_command,
    setup_for,
    uv_run,
)
from pytest_homefield.sandbox.testrun import pinned_config, pytest_words
from pytest_homefield.settings import resolve_settings


def _uv() -> str:
    uv = find_uv()
    version = subprocess.run([uv, "--version"], capture_output=True, text=True, check=True).stdout.split()[1]
    if version != UV_OPTIONS_OF:
        pytest.skip(f"uv {version} here, the option lists are {UV_OPTIONS_OF}'s")
    return uv


def test_the_help_of_uv_run_names_no_option_not_read() -> None:
    """Every option ``uv run --help`` lists is read, as taking a value exactly when the help names one."""
    text = subprocess.run([_uv(), "run", "--help"], capture_output=True, text=True, check=True).stdout
    seen = 0
    for line in text.splitlines():
        found = re.match(r"\s+(?:-\w, )?(--[a-z][a-z-]*)( <)?", line)
        if found is None:
            continue
        seen += 1
        name, valued = found[1], bool(found[2])
        if name in UV_RUN_ASIDE:
            continue
        assert name in (UV_RUN_VALUED if valued else UV_RUN_FLAGS), name
    assert seen > 80


#: options uv 0.13.9 has but its ``--help`` does not list (hidden, or another name of one), with a value or without
HIDDEN = {"--python-preference only-system": 2, "--trusted-host h": 2, "--preview-features x": 2,
          "--python-fetch never": 2, "--max-recursion-depth 9": 2, "--config-settings a=b": 2, "--native-tls": 1,
          "--preview": 1, "--pre": 1, "--no-installer-metadata": 1, "--force-reinstall": 1, "--no-exact": 1,
          "--show-settings": 0, "--no-system-certs": 1, "--compile": 1, "--no-upgrade": 1}


@pytest.mark.parametrize("option", sorted(HIDDEN))
def test_an_option_hidden_from_the_help_is_read(option: str, tmp_path: Path) -> None:
    """``uv run OPTION pytest -q --junitxml={junit}``: pytest is the program started (the pin goes before ``-q``) and
    the command is no problem (r37: each was unknown, the command not launched, a ``{junit}`` run got no pin)."""
    command = f"uv run {option} pytest -q --junitxml={{junit}}"
    words = shlex.split(option)
    parsed = parse_command(command)
    assert parsed.launched and parsed.at == 3 + len(words)
    assert parsed.args == ["-q", "--junitxml={junit}"]
    assert pytest_words(command) == 3 + len(words)
    assert command_problem(command) is None


@pytest.mark.slow
def test_each_option_read_is_the_binarys(tmp_path: Path) -> None:
    """Real uv: every option of the lists is one of ``uv run``'s (``--NAME=x`` is refused as a value of a flag, and
    taken by one that has a value), and a made-up one is refused as unknown: the lists are uv's, not a guess."""
    uv = _uv()
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_NO_CONFIG": "1"}
    env.pop("VIRTUAL_ENV", None)

    def said(name: str) -> str:
        out = subprocess.run([uv, "run", "--offline", f"{name}=zzqq"], capture_output=True, text=True, cwd=tmp_path,
                             env=env, stdin=subprocess.DEVNULL, timeout=30)
        return out.stderr + out.stdout

    assert "unexpected argument '--no-such-option'" in said("--no-such-option")
    for name in sorted(UV_RUN_FLAGS):
        assert "no more were expected" in said(name), name
    for name in sorted(UV_RUN_VALUED - {"--with", "--with-editable", "--with-requirements", "--env-file"}):
        text = said(name)
        assert "unexpected argument" not in text and "no more were expected" not in text, name


def test_an_option_that_is_none_of_uvs_is_one_clear_error(tmp_path: Path) -> None:
    """A ``test_cmd`` whose ``uv run`` names an option uv has not: the settings are refused with one line naming it
    (r37: read on, pytest's words taken from the first word naming pytest, a value of the option's among them)."""
    (tmp_path / ".homefield.yml").write_text("test_cmd: uv run --python-preferred system pytest\n")
    with pytest.raises(ConfigError, match=r"test_cmd: .*--python-preferred is no option of uv run"):
        resolve_settings(tmp_path, {})
    (tmp_path / ".homefield.yml").write_text("test_cmd: uv run --python-preference system pytest\n")
    assert resolve_settings(tmp_path, {}).test_cmd == "uv run --python-preference system pytest"
    found = uv_run(shlex.split("env A=1 uv run -qXy pytest"))
    assert found is not None and found.unknown == "-X" and not found.read


def test_the_env_files_are_read_in_order_and_no_env_file_drops_them() -> None:
    """``--env-file`` values in order (``--env-file=F`` too); none after ``--no-env-file``; none of another program."""
    found = uv_run(shlex.split("uv run --env-file a.env --env-file=b.env -q pytest"))
    assert found is not None and found.env_files == ("a.env", "b.env") and found.program == 6
    found = uv_run(shlex.split("uv run --env-file a.env --no-env-file pytest"))
    assert found is not None and found.env_files == ()
    assert uv_run(shlex.split("tox --env-file a.env pytest")) is None


def _tree(tmp_path: Path, env_text: str) -> Path:
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_a.py").write_text("def check_a():\n    assert True\n")
    (tree / ".env").write_text(env_text)
    return tree


def test_an_env_files_pytest_addopts_is_read_as_uv_reads_it(tmp_path: Path) -> None:
    """Real uv parses the file: ``export``, double quotes, a comment after; a later file over an earlier; the
    softener's functions take its ``-o python_functions=…`` (r37: ``test`` only, and a ``check_*`` test's twin was
    not soft)."""
    _uv()
    tree = _tree(tmp_path, 'export PYTEST_ADDOPTS="-o python_functions=check_*"  # ours\nOTHER=1\n')
    command = "uv run --env-file .env pytest"
    assert env_file_addopts(tree, command) == ("-o", "python_functions=check_*")
    setup = setup_for(tree, command, ["tests/test_a.py"])
    assert setup.env_addopts == ("-o", "python_functions=check_*")
    assert "check_*" in setup_functions(setup, command)
    (tree / "later.env").write_text("PYTEST_ADDOPTS='-o python_functions=verify_*'\n")
    assert env_file_addopts(tree, "uv run --env-file .env --env-file later.env pytest") == (
        "-o", "python_functions=verify_*")
    # the words before uv set it: uv keeps its own environment's
    assert env_file_addopts(tree, "env PYTEST_ADDOPTS=-q uv run --env-file .env pytest") == ()
    assert env_file_addopts(tree, "uv run --no-env-file --env-file .env pytest") == ()


def test_an_env_files_config_file_is_the_runs_and_nothing_is_pinned_over_it(tmp_path: Path) -> None:
    """``PYTEST_ADDOPTS=-c tests/pytest.ini`` in the env file: the setup is that file (given), and the pin names no
    other ``-c`` (r37: the tree's top was read as the rootdir, and ``-c`` of another file pinned over the command's)."""
    _uv()
    tree = _tree(tmp_path, "PYTEST_ADDOPTS=-c tests/pytest.ini\n")  # uv refuses the line: no space unquoted
    assert env_file_addopts(tree, "uv run --env-file .env pytest") == ()
    (tree / ".env").write_text("PYTEST_ADDOPTS='-c tests/pytest.ini'\n")
    (tree / "tests" / "pytest.ini").write_text("[pytest]\npython_functions = check_*\n")
    (tree / "pytest.ini").write_text("[pytest]\n")
    command = "uv run --env-file .env pytest"
    setup = setup_for(tree, command, ["tests/test_a.py"])
    assert (setup.config, setup.rootdir, setup.given) == ("tests/pytest.ini", "tests", True)
    assert pinned_config(tree, command, ["tests/test_a.py"], tmp_path / "out", setup=setup) == []


def test_a_linked_env_file_is_not_followed(tmp_path: Path) -> None:
    """An env file that is a link (to a file outside the tree) is not read here."""
    _uv()
    tree = _tree(tmp_path, "")
    (tree / ".env").unlink()
    (tmp_path / "outside.env").write_text("PYTEST_ADDOPTS=-c /etc/passwd\n")
    (tree / ".env").symlink_to(tmp_path / "outside.env")
    assert env_file_addopts(tree, "uv run --env-file .env pytest") == ()
    assert env_file_addopts(tree, f"uv run --env-file {tmp_path / 'outside.env'} pytest") == ()
    assert pytest_config.uv_dotenv_addopts((b"PYTEST_ADDOPTS=-x\n",)) == "-x"


def test_the_callers_uv_env_file_never_reaches_a_run(tmp_path: Path) -> None:
    """``UV_ENV_FILE`` in the caller's environment names env files a ``uv run`` reads, unseen by the setup's reading
    (it reads the command's ``--env-file`` only): a test run never gets it (r37: it was passed on)."""
    from pytest_homefield.sandbox.testrun import scrubbed_env

    env = scrubbed_env(tmp_path, {"PATH": "/usr/bin", "UV_ENV_FILE": ".env", "UV_OFFLINE": "1"})
    assert "UV_ENV_FILE" not in env and env["UV_OFFLINE"] == "1"


def test_another_venv_on_path_is_not_a_projects_own(tmp_path: Path) -> None:
    """``uv run pytest`` in a project with no ``.venv`` (uv would make one and sync it: its pytest unknown) while a
    ``.venv`` of another folder leads ``PATH`` (a user's own, or CI's checkout ``.venv``): ``uv python find`` answers
    that one, and any interpreter in a folder named ``.venv`` was taken for the project's (the final CI of r38: a
    project without one was read as the CI venv's pytest 9.2). Only the project's own ``.venv`` counts; with one, it
    is the answer."""
    import sys

    from pytest_homefield.sandbox.testrun import uv_run_python

    uv = _uv()
    other = tmp_path / "elsewhere" / ".venv"
    subprocess.run([uv, "venv", "--no-cache", "--offline", "--python", sys.executable, str(other)], check=True,
                   capture_output=True, timeout=60)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    path = f"{other / 'bin'}{os.pathsep}{os.path.dirname(uv)}{os.pathsep}{os.environ.get('PATH', '')}"
    assert uv_run_python(project, "uv run --offline --no-sync pytest", path) is None
    own = project / ".venv"
    subprocess.run([uv, "venv", "--no-cache", "--offline", "--python", sys.executable, str(own)], check=True,
                   capture_output=True, timeout=60)
    found = uv_run_python(project, "uv run --offline --no-sync pytest", path)
    assert found is not None and Path(found).parent.parent == own


@pytest.mark.parametrize("command", ["make test", "env CI=1 tox -e py", "/usr/bin/make -C . test", "tox -e py --",
                                     "hatch run test"])
def test_a_make_or_tox_pytest_command_is_one_clear_error(tmp_path: Path, command: str) -> None:
    """ops56: a pytest ``test_cmd`` (no ``{junit}``) run by ``make`` or ``tox`` was taken as pytest's, and
    homefield's options and test files went to that program (measured, ``--sandbox none``: ``make: unrecognized
    option '--continue-on-collection-errors'``; ``tox -e py``: ``-p homefield_reporter`` read as its
    ``--parallel``; ``tox -e py --``: pytest in tox's environment, ``Error importing plugin "homefield_reporter"``;
    ``hatch run test``: its tests ran in hatch's environment, ``no outcome was written``; under bubblewrap none
    started), so every run of mining and grading failed. Now the settings are refused with one
    line saying what to name instead; a ``{junit}`` command of theirs, and a word naming them elsewhere, are not."""
    (tmp_path / ".homefield.yml").write_text(f"test_cmd: {command}\n")
    with pytest.raises(ConfigError, match=r"test_cmd: .* does not run pytest as homefield runs it"):
        resolve_settings(tmp_path, {})
    for fine in (f"{command} --junitxml={{junit}}", "python -m pytest -k make", "./make-tests"):
        (tmp_path / ".homefield.yml").write_text(f"test_cmd: {fine}\n")
        assert resolve_settings(tmp_path, {}).test_cmd == fine
