"""The installed copy of the project under benchmark is masked in every sandbox (atk12 F5): a repository
installed non-editable (CI's ``pip install .``) leaves its HEAD, every task's fix, in ``site-packages``,
which the sandboxes bind read-only with the interpreter. Real git, a real ``uv`` venv with the fixture
installed non-editable, real bubblewrap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.envs.builder import EnvBuildError, find_uv
from pytest_homefield.sandbox import protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, Policy, bwrap_argv, probe
from pytest_homefield.sandbox.project_copies import project_copies, repository_names, site_folders

FIX = "def top(words):\n    return sorted(words)  # the fix, at HEAD only\n"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A project with a package at its root (``textkit``), one under ``src/`` (``srcpkg``), a module
    (``single.py``), a hidden folder and a docs folder; HEAD holds the fix."""
    r = GitRepo.init(tmp_path_factory.mktemp("copies") / "proj")
    r.write("pyproject.toml", '[project]\nname = "textkit"\nversion = "1.0"\n'
                              '[tool.setuptools]\npy-modules = ["single"]\npackages = ["textkit"]\n')
    r.write("textkit/__init__.py", "")
    r.write("textkit/stats.py", "def top(words):\n    return words\n")
    r.write("src/srcpkg/__init__.py", "")
    r.write("single.py", "X = 1\n")
    r.write(".github/workflows/ci.yml", "on: push\n")
    r.write("docs/index.md", "# docs\n")
    r.commit("Add textkit")
    r.write("textkit/stats.py", FIX)
    r.commit("textkit.top sorts its words")
    return r


def test_the_repository_names_are_its_top_level_folders_and_modules(repo: GitRepo) -> None:
    assert repository_names(repo.path) == {"textkit", "src", "srcpkg", "single", "docs"}
    assert repository_names(repo.path.parent) == frozenset()  # no git repository: nothing


def test_a_copy_is_found_by_name_in_a_site_folder_and_nothing_else(repo: GitRepo, tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for folder in ("textkit", "textkit-1.0.dist-info", "requests", "__pycache__"):
        (site / folder).mkdir(parents=True)
    for name in ("single.py", "single.cpython-311-x86_64-linux-gnu.so", "six.py", "__editable__.textkit-1.0.pth",
                 "__editable___textkit_1_0_finder.py", "__pycache__/single.cpython-311.pyc",
                 "__pycache__/six.cpython-311.pyc"):
        (site / name).write_text("")
    assert site_folders([tmp_path / "venv"])[0] == site.resolve()
    found = project_copies([tmp_path / "venv"], repos=[repo.path])
    # the module's bytecode too: a single-module project's HEAD, loadable as it is (atk14 A7)
    assert found == [site / "__pycache__" / "single.cpython-311.pyc", site / "single.cpython-311-x86_64-linux-gnu.so",
                     site / "single.py", site / "textkit"]
    # the site folder itself (a PYTHONPATH entry) is searched too; and nothing without a repository
    assert project_copies([site], repos=[repo.path]) == found
    assert project_copies([tmp_path / "venv"], repos=[]) == []


def _installed(repo: GitRepo, venv: Path, check: tuple[str, str] = ("textkit", "stats.py"),
               compile_bytecode: bool = False) -> Path:
    """``venv`` made by the real uv with ``repo`` installed non-editable (a user's ``pip install .``);
    its site-packages, where ``check`` (a folder and file) holds HEAD's fix."""
    try:
        uv = find_uv()
    except EnvBuildError as exc:
        pytest.skip(str(exc))
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, capture_output=True)
    subprocess.run([uv, "pip", "install", "-q", "--no-deps", "--python", str(venv / "bin" / "python"),
                    *(["--compile-bytecode"] if compile_bytecode else []), str(repo.path)],
                   check=True, capture_output=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    assert (site / check[0] / check[1]).read_text() == FIX
    return site


@pytest.mark.slow
def test_bubblewrap_shows_an_empty_folder_in_place_of_the_installed_copy(
        repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        exe = probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    site = _installed(repo, tmp_path / "venv")
    ws = tmp_path / "ws"
    ws.mkdir()
    read = (f"import os; print(sorted(os.listdir({str(site / 'textkit')!r}))); "
            f"print(repr(open({str(site / 'single.py')!r}).read())); "
            f"print(os.path.isdir({str(site / 'textkit-1.0.dist-info')!r}))")
    policy = Policy(cwd=ws, rw=[ws], ro=[Path(sys.prefix), Path(sys.base_prefix), tmp_path / "venv"])

    def inside() -> list[str]:
        proc = subprocess.run(bwrap_argv([sys.executable, "-c", read], policy, bwrap=exe), capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    # the control: with no repository under benchmark, the copy (HEAD's fix) is readable inside
    monkeypatch.setattr(protected, "_PROTECTED", [])
    listing, single, metadata = inside()
    assert "stats.py" in listing and single == repr("X = 1\n") and metadata == "True"
    monkeypatch.setattr(protected, "_PROTECTED", [repo.path.resolve()])
    assert inside() == ["[]", "''", "True"]  # masked: an empty folder, an empty file; the rest as it was
    assert (site / "textkit" / "stats.py").read_text() == FIX  # on the host, nothing changed


@pytest.fixture(scope="module")
def lib_repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A project whose package lives in ``lib/`` and installs as ``libkit`` (``package-dir``), distribution
    ``Lib_Kit``; HEAD holds the fix (atk14 A3: its copy was not masked, 5 of 8 demo tasks solved)."""
    r = GitRepo.init(tmp_path_factory.mktemp("libcopies") / "proj")
    r.write("pyproject.toml", '[project]\nname = "Lib_Kit"\nversion = "1.0"\n'
                              '[tool.setuptools]\npackage-dir = {"" = "lib"}\npackages = ["libkit"]\n')
    r.write("lib/libkit/__init__.py", "")
    r.write("lib/libkit/stats.py", "def top(words):\n    return words\n")
    r.commit("Add libkit")
    r.write("lib/libkit/stats.py", FIX)
    r.commit("libkit.top sorts its words")
    return r


def test_a_copy_is_found_through_the_projects_own_distribution(lib_repo: GitRepo, tmp_path: Path) -> None:
    """Named as the project (PEP 503: ``lib-kit``), or installed from the repository's folder
    (``direct_url.json``): every top-level entry its ``RECORD`` lists. Another distribution is left alone."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    files = {"libkit/__init__.py": "", "lib_kit-1.0.dist-info/RECORD": "libkit/__init__.py,,\nlibkit/stats.py,,\n"
             "../../../bin/libkit,,\nlib_kit-1.0.dist-info/METADATA,,\n",
             "renamed-2.0.dist-info/RECORD": "renamedmod.py,,\n__pycache__/renamedmod.cpython-311.pyc,,\n",
             "renamed-2.0.dist-info/direct_url.json": f'{{"url": "file://{lib_repo.path}", "dir_info": {{}}}}',
             "renamedmod.py": "", "__pycache__/renamedmod.cpython-311.pyc": "",
             "requests-2.0.dist-info/RECORD": "requests/__init__.py,,\n", "requests/__init__.py": "",
             "other-1.0.dist-info/direct_url.json": '{"url": "file:///elsewhere"}',
             "other-1.0.dist-info/RECORD": "othermod.py,,\n", "othermod.py": "",
             # an editable install of the project lists its hooks, which share a stem with every other one
             "lib_kit-0.9.dist-info/RECORD": "__editable__.lib_kit-0.9.pth,,\n__editable___lib_kit_0_9_finder.py,,\n",
             "__editable__.lib_kit-0.9.pth": "", "__editable___lib_kit_0_9_finder.py": "",
             "__editable__.dep-1.0.pth": "", "__editable___dep_1_0_finder.py": ""}
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    assert project_copies([tmp_path], repos=[lib_repo.path]) == [
        site / "__pycache__" / "renamedmod.cpython-311.pyc", site / "libkit", site / "renamedmod.py"]


@pytest.mark.slow
def test_a_real_install_from_another_folder_is_masked(lib_repo: GitRepo, tmp_path: Path) -> None:
    """The real uv installs the ``lib/`` layout non-editable as ``libkit``: found, with its bytecode."""
    site = _installed(lib_repo, tmp_path / "venv", check=("libkit", "stats.py"), compile_bytecode=True)
    found = project_copies([tmp_path / "venv"], repos=[lib_repo.path])
    assert site / "libkit" in found, found
