"""A tiny real git repository for end-to-end mine/run tests: three tasks and some non-tasks."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pytest_homefield.sandbox.phases import PHASE_DIR_VAR

ENV = {
    "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
}

CALC_1 = "def add(a, b):\n    return a + b\n"
CALC_2 = CALC_1 + "\n\ndef mul(a, b):\n    return a * b\n"
CALC_3 = CALC_2 + "\n\ndef sub(a, b):\n    return a - b\n"
CALC_4 = CALC_3 + "\n\ndef neg(a):\n    return -a\n"

COMMITS: list[tuple[str, dict[str, str | None]]] = [
    ("Initial calculator with add", {"calc/__init__.py": CALC_1,
                                     "tests/test_add.py": "from calc import add\n\n\ndef test_add():\n"
                                                          "    assert add(1, 2) == 3\n"}),
    ("Add mul() to multiply two numbers", {"calc/__init__.py": CALC_2,
                                           "tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n"
                                                                "    assert mul(2, 3) == 6\n"}),
    ("Document the calculator in a README", {"README.md": "# calc\n"}),
    ("Add sub() that subtracts b from a", {
        "calc/__init__.py": CALC_3,
        "tests/test_sub.py": "import pytest\n\nfrom calc import sub\n\n\n"
                             "@pytest.mark.parametrize('a,b,c', [(3, 1, 2), (0, 5, -5)],\n"
                             "                         ids=['pos ✓', 'neg[FAILED]'])\n"
                             "def test_sub(a, b, c):\n    assert sub(a, b) == c\n\n\n"
                             "def test_add_still_works():\n    from calc import add\n    assert add(2, 2) == 4\n"}),
    ("Add neg() returning the negation of a", {"calc/__init__.py": CALC_4,
                                               "tests/test_neg.py": "import calc\n\n\ndef test_neg():\n"
                                                                    "    assert calc.neg(3) == -3\n\n\n"
                                                                    "def test_add_unchanged():\n"
                                                                    "    assert calc.add(1, 1) == 2\n"}),
]


def git(cwd: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, **ENV}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def build(dest: Path) -> Path:
    """Create the repository in ``dest`` (must not exist); returns it."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    for i, (msg, files) in enumerate(COMMITS):
        for rel, text in files.items():
            path = dest / rel
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        git(dest, "add", "-A")
        git(dest, "commit", "-q", "-m", msg, date=f"2026-01-{i + 1:02d}T12:00:00+00:00")
    # untracked, like a user's local config: a lean test command (no third-party plugins) keeps runs fast
    (dest / ".homefield.yml").write_text(f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n')
    return dest


#: pytest plugins installed on this machine that no homefield session uses: blocked in the homefield
#: sessions the tests start (controller and xdist workers), each of which would otherwise spend about
#: 0.35 s of CPU loading them; a no-op where they are not installed. The demo test keeps a user's full
#: set (tests/commands/test_demo.py).
UNUSED_PLUGINS = "-p no:hypothesispytest -p no:benchmark -p no:anyio"


#: ``--stability-runs`` of the session's mined fixture (tests/conftest.py ``mined``): a test that mines its
#: copy again passes the same, so that every verification of the fixture is reused (the verification key
#: holds it, docs/contracts.md §7) and only what the test adds is verified.
MINED_STABILITY = "1"


def copy_mined(mined: Path, dest: Path) -> Path:
    """A copy of the mined fixture repository at ``dest`` (symlinks kept) without its ``.homefield/runs``:
    its tasks, a fresh place to run them."""
    shutil.copytree(mined, dest, symlinks=True)
    shutil.rmtree(dest / ".homefield" / "runs", ignore_errors=True)
    return dest


#: A ``cmd:`` agent whose change is not the reference fix (a comment after each task's parent code): its
#: grading plants canary twins, so each task's parent check is made (:func:`warm_parent_checks`).
WARM_AGENT = "warm=cmd:printf '\\n# warm\\n' >> calc/__init__.py"


def warm_parent_checks(repo: Path) -> None:
    """Give the mined fixture ``repo`` a canary key and each task's parent check (``.homefield/canary.key``
    and ``parent-checks.jsonl``, docs/contracts.md §7), made once by a throwaway run of :data:`WARM_AGENT`
    on a copy. Every copy (:func:`copy_mined`) then has the same key and the same commits, so its gradings
    of a change that is not the reference fix plant the twins the check chose without running the untouched
    parent again: as a user's second run of the same tasks, whose repository remembers its checks. Raises
    ``AssertionError`` when the run fails or leaves either file unmade."""
    scratch = copy_mined(repo, repo.parent / "warm-parent-checks")
    try:
        proc = homefield(scratch, "run", "--agent", WARM_AGENT, "--attempts", "1", "--sandbox", "none", "-n", "0")
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        for name in ("canary.key", "parent-checks.jsonl"):
            made = scratch / ".homefield" / name
            assert made.is_file(), f"{name} not made:\n{proc.stdout}{proc.stderr}"
            shutil.copy2(made, repo / ".homefield" / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def cli_env() -> dict[str, str]:
    """The environment for a ``homefield`` CLI process a test starts: this one without ``PYTEST_*`` and
    ``HOMEFIELD_*`` (but the test's ``HOMEFIELD_PHASE_DIR``) and ``CI``, with :data:`UNUSED_PLUGINS` in
    ``PYTEST_ADDOPTS`` (homefield scrubs it from the repository's test runs and agents)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HOMEFIELD_")) or k == PHASE_DIR_VAR}  # the test's own phase lock
    env["PYTEST_ADDOPTS"] = UNUSED_PLUGINS
    env.pop("CI", None)  # on a CI host the progress line is printed, not redrawn: a test sets CI itself (ops40)
    return env


def homefield(repo: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the ``homefield`` CLI in ``repo`` as a subprocess (pytest.main once per process), in :func:`cli_env`."""
    env = cli_env()
    return subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=timeout)


#: The commands that start no pytest session (:func:`pytest_homefield.cli.main` answers them itself), and the
#: ``--merge`` of the others (:mod:`pytest_homefield.commands.merge`): what :func:`homefield_in_process` runs.
NO_SESSION = ("report", "plan", "status", "export", "tasks")


def homefield_in_process(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """What :func:`homefield` gives (exit status, stdout, stderr), from :func:`pytest_homefield.cli.main` called in
    this process in ``repo`` with :func:`cli_env` as its environment: for a command that starts no pytest session
    (:data:`NO_SESSION`, or ``--merge``), whose own process costs about 0.4 s of CPU and checks nothing more once
    the suite has a real process of that command. argparse's refusals (``SystemExit``) give their status. Raises
    ``ValueError`` for a command that would start a session here (``run``, ``mine`` without ``--merge``, …)."""
    if not args or (args[0] not in NO_SESSION and "--merge" not in args):
        raise ValueError(f"homefield {' '.join(args)} starts a pytest session: run it with homefield()")
    from pytest_homefield.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(cli_env())
    try:
        os.chdir(repo)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["homefield", *args], code, out.getvalue(), err.getvalue())
