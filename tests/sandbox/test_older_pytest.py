"""conf43: the pin of a test run (:func:`~pytest_homefield.sandbox.testrun.pinned_config`) names the configuration
file the pytest that runs takes, by its version (:func:`~pytest_homefield.sandbox.pytest_config.setup_for`'s
``version``). Before, the pin read every tree as pytest 9 does: pytest 8 (a ``--env uv`` environment, a repository
pinning an older pytest) was given ``-c pytest.toml``, a file it does not know and reads, given so, as an empty
``pyproject.toml``; alone it takes the tree's ``pyproject.toml`` table.

Each case is compared with real pytest: 8.0.2 and 8.4.2 installed with uv into a session folder (from uv's cache or
PyPI; the tests skip, saying why, where neither can be had) and this venv's pytest 9."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo
from helpers.uv import find_uv, uv_or_skip

from pytest_homefield.sandbox import testrun
from pytest_homefield.sandbox.canary_soft import setup_functions, softened_files
from pytest_homefield.sandbox.pytest_config import setup_for
from pytest_homefield.sandbox.testrun import pinned_config, pytest_version, run_python, run_tests

pytestmark = pytest.mark.slow

#: The older pytests compared: before and after pytest 8.1's ``pyproject.toml`` fallback.
OLDER = ("8.0.2", "8.4.2")
TEST = "def test_a():\n    pass\n"

#: name → (files of the tree, the targets): layouts pytest 8 and 9 read apart.
CASES: dict[str, tuple[dict[str, str], list[str]]] = {
    # pytest 9 takes pytest.toml; pytest 8 does not know it and takes the pyproject.toml table (the pin named
    # pytest.toml, which pytest 8 read as an empty pyproject.toml)
    "pytest.toml and a pyproject table": ({"pytest.toml": "[pytest]\n",
                                           "pyproject.toml": "[tool.pytest.ini_options]\n"}, ["tests/test_a.py"]),
    # pytest 9 reads [tool.pytest]; pytest 8 reads [tool.pytest.ini_options] only, and takes tox.ini
    "[tool.pytest] and tox.ini": ({"pyproject.toml": "[tool.pytest]\nminversion = \"8\"\n", "tox.ini": "[pytest]\n"},
                                  ["tests/test_a.py"]),
    # pytest 9 takes any .pytest.ini; pytest 8 only one with a [pytest] section
    ".pytest.ini without a section": ({".pytest.ini": "# nothing\n", "setup.cfg": "[tool:pytest]\n"},
                                      ["tests/test_a.py"]),
    # a .pytest.toml near the tests: pytest 8 looks on, to the root's pytest.ini
    ".pytest.toml in the tests' folder": ({"tests/.pytest.toml": "[pytest]\n", "pytest.ini": "[pytest]\n"},
                                          ["tests/test_a.py"]),
    # pytest < 8.1 takes no pyproject.toml without its table
    "pyproject without table": ({"pyproject.toml": "[project]\nname = 'x'\n"}, ["tests/test_a.py"]),
    "none": ({}, ["tests/test_a.py"]),
}


@pytest.fixture(scope="session")
def pytest_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """The interpreter of a venv holding pytest ``version`` (made once a session), this venv's for ``"9"``."""
    made: dict[str, str] = {"9": sys.executable}

    def get(version: str) -> str:
        if version not in made:
            uv = uv_or_skip("no uv to install an older pytest with")
            venv = tmp_path_factory.mktemp(f"pytest-{version}") / "venv"
            env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
            try:
                subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, env=env,
                               capture_output=True, timeout=120)
                subprocess.run([uv, "pip", "install", "-q", "-p", str(venv / "bin" / "python"), f"pytest=={version}"],
                               check=True, env=env, capture_output=True, timeout=300)
            except (subprocess.SubprocessError, OSError) as exc:
                pytest.skip(f"pytest {version} cannot be installed here (neither uv's cache nor PyPI): {exc}")
            made[version] = str(venv / "bin" / "python")
        return made[version]
    return get


def _tree(root: Path, files: dict[str, str], targets: list[str]) -> Path:
    for rel, text in {**{t: TEST for t in targets}, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _pytest(python: str, root: Path, words: list[str]) -> tuple[Path, Path | None]:
    """The rootdir and configuration file real pytest (of ``python``) reports for ``words`` run in ``root``."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != "PYTHONPATH"},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", "--co", *words], cwd=root,
                         capture_output=True, text=True, timeout=60, env=env).stdout
    head = dict(line.split(": ", 1) for line in out.splitlines() if line.startswith(("rootdir: ", "configfile: ")))
    assert "rootdir" in head, out
    rootdir = Path(head["rootdir"])
    config = head["configfile"].split(" (WARNING")[0] if "configfile" in head else None  # pytest 9 warns after it
    return rootdir, (Path(os.path.normpath(rootdir / config)) if config is not None else None)


@pytest.mark.parametrize("version", [*OLDER, "9"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_pin_names_the_file_the_running_pytest_takes(tmp_path: Path, pytest_of: Callable[[str], str],
                                                         version: str, case: str) -> None:
    """:func:`setup_for` with the running pytest's version (asked: :func:`pytest_version`) names the configuration
    file and rootdir that pytest reports, and the pinned run of that pytest reads the same. Before, the pin read
    every tree as pytest 9: pytest 8 was given a ``pytest.toml``, a ``[tool.pytest]``-only ``pyproject.toml``, a
    ``.pytest.ini`` without its section, a ``.pytest.toml`` (4 of these 6 layouts on 8.4.2, 5 on 8.0.2)."""
    python = pytest_of(version)
    asked = pytest_version(python)
    assert asked is not None and asked[0] == int(version.split(".")[0]), asked
    files, targets = CASES[case]
    root = _tree(tmp_path / "repo", files, targets)
    rootdir, config = _pytest(python, root, targets)
    setup = setup_for(root, "python -m pytest", targets, asked)
    assert setup.rootdir is not None and root / setup.rootdir == rootdir, (setup, rootdir)
    assert (None if setup.config is None else root / setup.config) == config, (setup, config)
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, "python -m pytest", targets, out, version=asked)
    pinned = _pytest(python, root, [*pin, *targets])
    assert pinned == (rootdir, config if config is not None else out / testrun.NO_CONFIG), (pin, pinned)


def test_a_run_in_an_older_pytest_reads_the_configuration_it_reads_alone(tmp_path: Path,
                                                                         pytest_of: Callable[[str], str]) -> None:
    """A repository that keeps its pytest configuration for pytest 9 (``pytest.toml``) and for pytest 8 (its
    ``pyproject.toml`` table), both turning warnings into errors; a test that warns fails under either pytest alone.
    A test run (:func:`run_tests`) whose ``PATH`` starts with a pytest 8.4.2 venv (as a ``--env uv`` environment's
    does) failed it under the pin too; before, the pin gave pytest 8 ``-c pytest.toml``, read as empty: the test
    passed (a fix that warns graded as passing its tests, where the repository's own run fails it)."""
    python = pytest_of("8.4.2")
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pytest.toml", '[pytest]\nfilterwarnings = ["error"]\n')
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                                 'filterwarnings = ["error"]\n')
    repo.write("tests/test_a.py", "import warnings\n\n\ndef test_a():\n    warnings.warn('old', DeprecationWarning)\n")
    repo.commit("A test that warns, warnings as errors")
    bin_dir = str(Path(python).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    assert run_python("python -m pytest", env["PATH"]) == python  # the run's python, not the host's
    alone = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=repo.path,
                           capture_output=True, text=True, timeout=60)
    assert alone.returncode == 1 and "1 failed" in alone.stdout, alone.stdout
    for path in (env["PATH"], os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")):
        run = run_tests(repo.path, "python -m pytest", ["tests/test_a.py"], out_dir=tmp_path / "out",
                        env={**env, "PATH": path}, sandbox="none")
        assert run.outcomes == {"tests/test_a.py::test_a": "failed"}, (path, run.outcomes, run.error)
    # gatk45: a command whose env prefix sets a variable runs the same python; its pytest was not asked (the
    # interpreter read from the first word, env), so pytest 8 was pinned by pytest 9's reading and the test passed
    command = "env PYTHONDONTWRITEBYTECODE=1 python -m pytest"
    assert run_python(command, env["PATH"]) == python
    run = run_tests(repo.path, command, ["tests/test_a.py"], out_dir=tmp_path / "out-env", env=env, sandbox="none")
    assert run.outcomes == {"tests/test_a.py::test_a": "failed"}, (run.outcomes, run.error)
    # gatk45: a program whose Python's -m runs pytest (coverage run -m pytest): its #! line names the python; a
    # script of that venv's that runs a module as coverage's run -m does (coverage itself is not in uv's cache)
    launcher = tmp_path / "bin" / "coverage"
    launcher.parent.mkdir()
    launcher.write_text(f"#!{python}\nimport runpy, sys\n\nsys.argv = sys.argv[3:]\n"
                        "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n")
    launcher.chmod(0o755)
    path = f"{launcher.parent}{os.pathsep}{env['PATH']}"
    assert run_python("coverage run -m pytest", path) == python
    run = run_tests(repo.path, "coverage run -m pytest", ["tests/test_a.py"], out_dir=tmp_path / "out-cov",
                    env={**env, "PATH": path}, sandbox="none")
    assert run.outcomes == {"tests/test_a.py::test_a": "failed"}, (run.outcomes, run.error)


def test_the_softener_reads_the_configuration_the_running_pytest_reads(tmp_path: Path,
                                                                        pytest_of: Callable[[str], str]) -> None:
    """soft44: the softener's reading (:func:`pytest_setup`, whose ``python_functions`` :func:`softened_files`
    takes) is of the pytest the run starts (:func:`run_version`, the run's ``env``), as the pin's is. A repository
    keeps a ``pytest.toml`` for pytest 9 (no ``python_functions``) and a ``pyproject.toml`` table for pytest 8
    naming ``check_*``; a run whose ``PATH`` starts with pytest 8.4.2 collects ``check_a`` and fails it. Before, the
    setup was read by pytest 9's rules (``pytest.toml``): ``check_a`` was no test function of the softener, its
    body left as it is, while the pinned pytest 8 ran it as a test (a group's twin there stops at its site)."""
    python = pytest_of("8.4.2")
    files = {"pytest.toml": "[pytest]\n",
             "pyproject.toml": '[tool.pytest.ini_options]\npython_functions = ["check_*"]\n'}
    check = "def check_a():\n    x = 1\n    assert x == 2\n    assert x == 3\n"
    root = _tree(tmp_path / "repo", {**files, "tests/test_a.py": check}, [])
    env = {**os.environ, "PATH": str(Path(python).parent) + os.pathsep + os.environ.get("PATH", "")}
    assert testrun.run_version(root, "python -m pytest", env) == pytest_version(python)
    setup = testrun.pytest_setup(root, "python -m pytest", ["tests/test_a.py"], env=env)
    assert setup.config == "pyproject.toml" and setup.version == pytest_version(python), setup
    assert "check_*" in setup_functions(setup, "python -m pytest")
    soft = softened_files({"tests/test_a.py": check.encode()}, root, "python -m pytest", ["tests/test_a.py"],
                          setup=setup)
    assert soft["tests/test_a.py"] != check.encode()  # check_a is a test function: softened
    # the pinned run of that pytest collects it, as the softener read
    run = run_tests(root, "python -m pytest", ["tests/test_a.py"], out_dir=tmp_path / "out", env=env,
                    sandbox="none", setup=setup)
    assert run.outcomes == {"tests/test_a.py::check_a": "failed"}, (run.outcomes, run.error)
    # the host's pytest 9 reads pytest.toml: no check_a, nothing softened, and its run collects none
    host = testrun.pytest_setup(root, "python -m pytest", ["tests/test_a.py"])
    assert host.config == "pytest.toml" and "check_*" not in setup_functions(host, "python -m pytest"), host
    assert softened_files({"tests/test_a.py": check.encode()}, root, "python -m pytest", ["tests/test_a.py"],
                          setup=host) == {"tests/test_a.py": check.encode()}
    # a setup read for another pytest is read again for the one that runs (the pin never takes the wrong one)
    run = run_tests(root, "python -m pytest", ["tests/test_a.py"], out_dir=tmp_path / "out2", env=env,
                    sandbox="none", setup=host)
    assert run.outcomes == {"tests/test_a.py::check_a": "failed"}, (run.outcomes, run.error)


def test_a_uv_run_commands_pytest_is_the_one_uv_runs(tmp_path: Path, pytest_of: Callable[[str], str]) -> None:
    """ops48: ``uv run pytest`` in a project whose environment holds pytest 8.4.2 (configuration kept for both pytests,
    warnings as errors, a test that warns): its pytest is asked of the interpreter uv runs it with (``uv python
    find``), 8.4, and the run fails the test as pytest 8.4.2 does alone. Before, the ``uv`` word was asked, unknown,
    pytest 9's reading pinned ``-c pytest.toml`` (empty to pytest 8) and the test passed. ops58: a project's ``uv
    run`` runs in the active environment, unsynced (here the 8.4.2 one; with none set, this process's); a ``--with``
    run stays unknown, and nothing is written in the tree."""
    pytest_of("8.4.2")  # in uv's cache from here on
    uv = find_uv()
    assert uv is not None
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pytest.toml", '[pytest]\nfilterwarnings = ["error"]\n')
    repo.write("pyproject.toml", '[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.8"\n\n'
                                 '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    repo.write("tests/test_a.py", "import warnings\n\n\ndef test_a():\n    warnings.warn('old', DeprecationWarning)\n")
    repo.commit("A test that warns, warnings as errors")
    env = {**os.environ, "PATH": os.path.dirname(uv) + os.pathsep + os.environ.get("PATH", "")}
    env.pop("VIRTUAL_ENV", None)
    command = "uv run --offline --no-sync pytest"
    # ops58: a project's uv run runs in the active environment (testrun.project_run), with none set this process's
    assert testrun.run_version(repo.path, command, env) == pytest_version(sys.executable)
    assert not (repo.path / ".venv").exists()
    v84 = tmp_path / "v84"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(v84)], check=True, timeout=120)
    subprocess.run([uv, "pip", "install", "-q", "--offline", "-p", str(v84 / "bin" / "python"),
                    "pytest==8.4.2"], check=True, timeout=300)
    env = {**env, "VIRTUAL_ENV": str(v84)}
    assert testrun.run_version(repo.path, command, env) == (8, 4)
    assert testrun.run_version(repo.path, "uv run --with pytest pytest", env) is None
    run = run_tests(repo.path, command, ["tests/test_a.py"], out_dir=tmp_path / "out", env=env, sandbox="none")
    assert run.outcomes == {"tests/test_a.py::test_a": "failed"}, (run.outcomes, run.error)
    # --no-project: the active environment's (VIRTUAL_ENV), here this venv's pytest 9
    venv = str(Path(sys.executable).parent.parent)
    assert testrun.run_version(repo.path, "uv run --no-project pytest", {**env, "VIRTUAL_ENV": venv}) == \
        pytest_version(sys.executable)
