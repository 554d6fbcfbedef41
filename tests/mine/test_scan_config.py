"""Tooling configuration (CI, .gitignore, linters) is neither docs nor source in the scan, and the
no-test-change detail says what did change."""

from __future__ import annotations

from pathlib import Path

from helpers.gitrepo import GitRepo

from pytest_homefield.mine.scan import Candidate, ScanOptions, scan


def test_config_files_are_their_own_class(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 1\n")
    repo.commit("Initial import of the package")
    repo.write(".github/workflows/ci.yml", "on: push\n")
    repo.write(".gitignore", "*.pyc\n")
    ci = repo.commit("Run the tests on every push")
    repo.write("mypy.ini", "[mypy]\nstrict = True\n")
    repo.write("README.md", "# pkg\n")
    typing = repo.commit("Check types strictly and say so")
    repo.write("pkg/core.py", "def core():\n    return 2\n")
    repo.write("mypy.ini", "[mypy]\nstrict = False\n")
    repo.write("tests/test_core.py", "from pkg.core import core\n\ndef test_core():\n    assert core() == 2\n")
    fix = repo.commit("Make core return two instead of one")
    repo.write("tests/conftest.py", "import pytest\n")
    repo.write("pkg/core.py", "def core():\n    return 3\n")
    support = repo.commit("Add a conftest and change core again")
    repo.git("rm", "-q", "tests/test_core.py")
    repo.write("pkg/core.py", "def core():\n    return 4\n")
    deleted = repo.commit("Drop the old test and change core")
    result = scan(repo.path, ScanOptions())
    rejected = {r.commit: (r.reason, r.detail) for r in result.rejected}
    assert rejected[ci] == ("config_only", ".github/workflows/ci.yml, .gitignore")
    assert rejected[typing] == ("config_only", "mypy.ini and 1 docs file")
    assert rejected[support] == ("no_test_change", "only test support changed (tests/conftest.py), "
                                                   "which names no tests")
    assert rejected[deleted] == ("no_test_change", "test modules only deleted (tests/test_core.py)")
    (cand,) = [c for c in result.candidates if c.commit == fix]
    assert isinstance(cand, Candidate)
    # mypy.ini is not source: the task's languages come from pkg/core.py alone
    assert cand.source_files == ["pkg/core.py"] and cand.config_files == ["mypy.ini"]


PYPROJECT = """\
[project]
name = "pkg"
version = "1.0"
dependencies = ["click"]

[tool.ruff]
line-length = 100

[tool.pytest.ini_options]
addopts = "-q"
"""


def test_pyproject_tool_settings_alone_are_configuration(tmp_path: Path) -> None:
    """A candidate whose one non-test change is a pyproject.toml changed only in a linter's table has no
    source change (pypa/packaging: a dependabot ruff bump cost 430 s of verification); pytest's table, a
    build backend's, the project's own, or a change beside another source file keep it a candidate."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", "def test_core():\n    assert True\n")
    repo.commit("Initial import of the package")
    steps = {
        "ruff": ('line-length = 100', 'line-length = 120\nselect = ["E", "W"]'),
        "comment": ('[tool.ruff]', '# linting\n[tool.ruff]'),
        "pytest": ('addopts = "-q"', 'addopts = "-q -p no:cacheprovider"'),
        "setuptools": ('[tool.ruff]', '[tool.setuptools_scm]\nversion_file = "pkg/_v.py"\n\n[tool.ruff]'),
        "own": ('[tool.ruff]', '[tool.pkg]\nmode = "strict"\n\n[tool.ruff]'),
        "version": ('version = "1.0"', 'version = "1.1"'),
    }
    shas, text = {}, PYPROJECT
    for i, (name, (old, new)) in enumerate(steps.items()):  # each step changes the one before
        text = text.replace(old, new, 1)
        repo.write("pyproject.toml", text)
        repo.write("tests/test_core.py", f"def test_core{i}():\n    assert True\n")
        shas[name] = repo.commit(f"Change the {name} settings of the project")
    repo.write("pyproject.toml", text.replace('line-length = 120', 'line-length = 88'))
    repo.write("pkg/core.py", "def core():\n    return 2\n")
    repo.write("tests/test_core.py", "def test_core():\n    assert 2\n")
    shas["beside_source"] = repo.commit("Make core return two with shorter lines")
    result = scan(repo.path, ScanOptions())
    rejected = {r.commit: (r.reason, r.detail) for r in result.rejected}
    assert rejected[shas["ruff"]] == ("no_source_change", "1 test file, 0 docs files and 1 config file "
                                                          "(pyproject.toml: only [tool.ruff])")
    assert rejected[shas["comment"]] == ("no_source_change", "1 test file, 0 docs files and 1 config file "
                                                             "(pyproject.toml: only comments or formatting)")
    # pytest's table is test configuration: grading carries no change to it (test below)
    assert rejected[shas["pytest"]][0] == "no_source_change"
    candidates = {c.commit: c.source_files for c in result.candidates}
    for name in ("setuptools", "own", "version"):
        assert candidates[shas[name]] == ["pyproject.toml"], name
    assert sorted(candidates[shas["beside_source"]]) == ["pkg/core.py", "pyproject.toml"]


def _commit_steps(repo: GitRepo, steps: dict[str, dict[str, str]]) -> dict[str, str]:
    """One commit a step, in order: the step's files ``{path: text}`` written, and ``tests/test_core.py`` given a
    new test (so no commit is dropped for lacking a test change); ``{step name: commit sha}``."""
    shas = {}
    for i, (name, files) in enumerate(steps.items()):
        for path, text in files.items():
            repo.write(path, text)
        repo.write("tests/test_core.py", f"def test_core{i}():\n    assert True\n")
        shas[name] = repo.commit(f"Change the {name} part of the project")
    return shas


def test_test_configuration_alone_is_no_source_change(tmp_path: Path) -> None:
    """A candidate whose every source file is one grading never carries from any change (test configuration:
    ``pytest.ini``, ``noxfile.py``, a ``pyproject.toml`` whose pytest tables changed, whatever else changed in it)
    is ``no_source_change`` at the scan: its reference fix, graded, is no change (nu39: verification dropped such
    a commit only after its test runs). Beside a real source file, or with its pytest tables unchanged, it stays."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", "def test_core():\n    assert True\n")
    repo.commit("Initial import of the package")
    steps: dict[str, dict[str, str]] = {
        "pytest_ini": {"pytest.ini": "[pytest]\nmarkers = slow\n"},
        "noxfile": {"noxfile.py": "import nox\n"},
        "pth_and_ini": {"pkg.pth": "/x\n", "pytest.ini": "[pytest]\nmarkers = slow fast\n"},
        "pytest_and_version": {"pyproject.toml": PYPROJECT.replace('version = "1.0"', 'version = "1.1"')
                               .replace('addopts = "-q"', 'addopts = "-q -m slow"')},
        "version": {"pyproject.toml": PYPROJECT.replace('version = "1.0"', 'version = "1.2"')
                    .replace('addopts = "-q"', 'addopts = "-q -m slow"')},
        "beside_source": {"pytest.ini": "[pytest]\nmarkers = other\n", "pkg/core.py": "def core():\n    return 2\n"},
    }
    shas = _commit_steps(repo, steps)
    result = scan(repo.path, ScanOptions())
    rejected = {r.commit: (r.reason, r.detail) for r in result.rejected}
    assert rejected[shas["pytest_ini"]] == (
        "no_source_change", "1 test file, 0 docs files and 1 config file (pytest.ini: test configuration, which "
                            "grading carries from no change, the reference fix's neither)")
    assert rejected[shas["noxfile"]][0] == "no_source_change"
    assert rejected[shas["pth_and_ini"]][0] == "no_source_change"
    assert "2 config files (pkg.pth, pytest.ini: test configuration" in rejected[shas["pth_and_ini"]][1]
    assert rejected[shas["pytest_and_version"]][0] == "no_source_change"
    candidates = {c.commit: sorted(c.source_files) for c in result.candidates}
    # the pytest tables are as the commit before left them: the version change is carried
    assert candidates[shas["version"]] == ["pyproject.toml"]
    assert candidates[shas["beside_source"]] == ["pkg/core.py", "pytest.ini"]


def test_a_uv_run_commands_own_configuration_alone_is_no_source_change(tmp_path: Path) -> None:
    """ops61: for a ``uv run`` test command, grading holds back a change to the files that command reads as its
    configuration (:func:`pytest_homefield.run.carried.uv_held_back`: its env files, its script, ``uv.toml``, the
    top ``pyproject.toml``'s ``[tool.uv]`` table). A commit whose only source change is one of them was kept by the
    scan and dropped by verification as ``reference_fails``; the scan now drops it as ``no_source_change``, by the
    same rule. With another test command those files are carried, and the commits stay candidates."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", PYPROJECT + '\n[tool.uv]\nfind-links = ["wheels"]\n')
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("scripts/check.py", "import pytest\n\npytest.main()\n")
    repo.write(".env.test", "A=1\n")
    repo.write("tests/test_core.py", "def test_core():\n    assert True\n")
    repo.commit("Initial import of the package")
    steps: dict[str, dict[str, str]] = {
        "uv_table": {"pyproject.toml": PYPROJECT + '\n[tool.uv]\nfind-links = ["other"]\n'},
        "uv_toml": {"uv.toml": 'find-links = ["x"]\n'},
        "script": {"scripts/check.py": "import sys\nimport pytest\n\nsys.exit(pytest.main())\n"},
        "env_file": {".env.test": "A=2\n"},
        "version": {"pyproject.toml": PYPROJECT.replace('version = "1.0"', 'version = "1.1"')
                    + '\n[tool.uv]\nfind-links = ["other"]\n'},
        "beside_source": {"uv.toml": 'find-links = ["y"]\n', "pkg/core.py": "def core():\n    return 2\n"},
    }
    shas = _commit_steps(repo, steps)
    held = {"uv_table", "uv_toml", "script", "env_file"}
    for command in ("uv run --env-file .env.test scripts/check.py", "uv run --env-file=.env.test python -m pytest"):
        result = scan(repo.path, ScanOptions(test_cmd=command))
        rejected = {r.commit: (r.reason, r.detail) for r in result.rejected}
        candidates = {c.commit: sorted(c.source_files) for c in result.candidates}
        runs_script = "check.py" in command
        for name in held - ({"script"} if not runs_script else set()):
            assert rejected[shas[name]][0] == "no_source_change", (command, name)
            assert "test configuration, which grading carries from no change" in rejected[shas[name]][1]
        if not runs_script:
            assert candidates[shas["script"]] == ["scripts/check.py"]
        # the [tool.uv] table is as the commit before left it: the version change is carried
        assert candidates[shas["version"]] == ["pyproject.toml"]
        assert candidates[shas["beside_source"]] == ["pkg/core.py", "uv.toml"]
    plain = {c.commit for c in scan(repo.path, ScanOptions(test_cmd="python -m pytest")).candidates}
    assert plain >= {shas[name] for name in held}
