"""pytest-homefield conftest template: install every snapshot into its own virtualenv.

By default homefield installs nothing: it puts the snapshot (and its ``src/``) first on
``PYTHONPATH`` and runs the tests with the interpreter of ``test_cmd``. That is enough for a pure
Python package whose dependencies are already installed. When your code needs to be *installed*
(entry points, package metadata, compiled extensions, a changing dependency list), copy this file to
your repository root as ``conftest.py`` (or merge it into yours; it need not be committed).

What it does, for every fresh snapshot of a parent commit (``pytest_homefield_setup_command``, run
with ``sh -c`` inside the snapshot before the agent starts):

1. creates a virtualenv **inside the snapshot**, at ``.venv-homefield``. One venv per snapshot, never
   one shared venv: under ``homefield run -n 4`` four workers would ``pip install -e`` different
   trees into it at once and test each other's code. Grading ignores ``.venv-homefield`` when it
   computes the agent's change, and copies it with the snapshot.
2. installs the snapshot into it (``INSTALL``, by default ``pip install -e .``).

and grades with that venv's Python (``pytest_homefield_test_command``: the task's recorded test
command with its interpreter swapped for ``.venv-homefield/bin/python``).

Notes:

* ``SYSTEM_SITE_PACKAGES = True`` lets the venv see what the interpreter running homefield has
  installed (pytest and your test dependencies): quick, and works offline. When homefield itself
  runs in a virtualenv (the usual case), ``venv --system-site-packages`` alone would show only the
  *base* interpreter's packages, so a ``.pth`` file adds that virtualenv's site-packages too, after
  the new venv's own. Set it to ``False`` for
  an isolated venv, and install your test dependencies in ``INSTALL`` (``pip install -e ".[test]"``).
* Setup runs once per task per worker process; its time is not counted against the agent. A
  setup that fails makes the attempt ``infra`` (not scored).
* ``homefield mine`` verifies tasks with ``setup_cmd`` / ``test_cmd`` from ``.homefield.yml``, not
  with these hooks. To verify in the same kind of venv, put the commands that :func:`setup_command`
  and :func:`grading_command` return into ``.homefield.yml`` too.
* POSIX paths (``bin/python``); on Windows use ``Scripts\\python.exe``.
"""

from __future__ import annotations

import shlex
import sys
import sysconfig

import pytest

# --- settings ---------------------------------------------------------------------------------
VENV = ".venv-homefield"  # inside the snapshot; homefield ignores this folder when diffing
BASE_PYTHON = sys.executable  # the interpreter the venvs are made from
SYSTEM_SITE_PACKAGES = True
#: The install step; ``{python}`` is the venv's interpreter.
INSTALL = "{python} -m pip install --quiet --disable-pip-version-check --no-input -e ."


def venv_python() -> str:
    """The venv's interpreter, relative to the snapshot (commands run with the snapshot as cwd)."""
    return f"{VENV}/bin/python"


def parent_site_packages() -> list[str]:
    """The site-packages folders of the environment running homefield (``[]`` when that is the
    base interpreter itself, whose folders ``--system-site-packages`` already shows)."""
    if sys.prefix == sys.base_prefix:
        return []
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def setup_command() -> str:
    """The shell command that builds the venv and installs the snapshot into it."""
    create = [BASE_PYTHON, "-m", "venv", VENV]
    steps = []
    if SYSTEM_SITE_PACKAGES:
        # pip comes from the base interpreter's (or homefield's virtualenv's) site-packages, so the
        # venv needs none of its own
        create[3:3] = ["--system-site-packages", "--without-pip"]
        parent = parent_site_packages()
        if parent:
            code = ("import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], "
                    f"'_homefield_parent.pth').write_text({chr(10).join(parent) + chr(10)!r})")
            steps.append(shlex.join([venv_python(), "-c", code]))
    steps.append(INSTALL.format(python=shlex.quote(venv_python())))
    return " && ".join([shlex.join(create), *steps])


def grading_command(recorded: str | None = None) -> str:
    """``recorded`` (the task's test command, default ``python -m pytest``) run by the venv's Python."""
    argv = shlex.split(recorded or "python -m pytest")
    if argv and "python" in argv[0].rsplit("/", 1)[-1]:
        argv[0] = venv_python()
    else:  # e.g. "pytest -x": run that module with the venv's Python
        argv = [venv_python(), "-m", *argv]
    return shlex.join(argv)


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_setup_command(task: object, config: pytest.Config) -> str:
    return setup_command()


@pytest.hookimpl(optionalhook=True)
def pytest_homefield_test_command(task: object, config: pytest.Config) -> str:
    return grading_command(getattr(task, "test_cmd", None))
