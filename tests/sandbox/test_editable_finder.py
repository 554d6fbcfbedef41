"""setuptools' editable install of a flat layout, seen from a test run's child (contracts §7, ops52).

``pip install -e .`` of a setuptools project whose packages sit at the repository's root writes no path line:
``__editable__.<name>.pth`` imports ``__editable___<name>_finder``, whose ``MAPPING`` names each top-level
package's (and module's) folder in the repository. The sandbox never shows the repository, so a child a test
starts with its own ``PYTHONPATH`` (werkzeug's dev server) imported nothing; without a sandbox it imported the
user's checkout, until the run got an environment of its own (ops54; a src layout's path line too). Real pip and
setuptools (pip's build isolation), a real venv, real bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.sandbox import protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.editable import (
    editable_binds,
    editable_entries,
    finder_mapping,
    finder_paths,
)
from pytest_homefield.sandbox.testrun import run_tests
from pytest_homefield.store import read_jsonl

PLAIN = "-p no:hypothesispytest -p no:xdist -p no:benchmark -p no:cacheprovider -p no:anyio"

CHILD_TEST = (
    "import os, subprocess, sys\n\n\n"
    "def test_child_imports_the_copy(tmp_path):\n"
    "    env = {'PATH': os.environ.get('PATH', ''), 'PYTHONPATH': str(tmp_path)}\n"
    "    code = ('import hfpkg, hfpkg.sub, hfmod, hfns.inner; '\n"
    "            'print(hfpkg.WHERE, hfpkg.sub.WHERE, hfmod.WHERE, hfns.inner.WHERE)')\n"
    "    out = subprocess.run([sys.executable, '-c', code], env=env,\n"
    "                         cwd=str(tmp_path), capture_output=True, text=True, timeout=60)\n"
    "    assert out.stdout.split() == ['copy', 'copy', 'copy', 'copy'], out.stderr\n"
    "    out = subprocess.run(['hfwhere'], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60)\n"
    "    assert out.stdout.split() == ['copy'], out.stderr\n")


def _write_tree(root: Path, where: str) -> None:
    (root / "hfpkg").mkdir(parents=True)
    (root / "hfpkg" / "__init__.py").write_text(f"WHERE = {where!r}\n\n\ndef main():\n    print(WHERE)\n")
    (root / "hfpkg" / "sub.py").write_text(f"WHERE = {where!r}\n")
    (root / "hfmod.py").write_text(f"WHERE = {where!r}\n")
    (root / "hfns" / "inner").mkdir(parents=True)  # a namespace package (no __init__.py): the finder's NAMESPACES
    (root / "hfns" / "inner" / "__init__.py").write_text(f"WHERE = {where!r}\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """``(repository, venv, site folder)``: a setuptools project with a flat layout (package ``hfpkg``,
    module ``hfmod`` and namespace package ``hfns`` at the repository's root, ``WHERE = 'repository'``; its entry
    point ``hfwhere`` prints ``hfpkg.WHERE``)
    installed ``pip install -e`` (real pip, setuptools from pip's build isolation) into a fresh venv whose
    ``_hf_deps.pth`` names this process's site folder (pytest)."""
    base = tmp_path_factory.mktemp("flat")
    repo = base / "home" / "repo"
    _write_tree(repo, "repository")
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "hfpkg"\nversion = "0.1"\n'
        '[project.scripts]\nhfwhere = "hfpkg:main"\n'
        '[tool.setuptools]\npackages = ["hfpkg", "hfns", "hfns.inner"]\npy-modules = ["hfmod"]\n')
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--no-deps", "--disable-pip-version-check", "-e", str(repo)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = Path(next(iter(venv.glob("lib/python*/site-packages"))))
    # what setuptools wrote: an import hook, no path line
    (pth,) = site.glob("__editable__.hfpkg-*.pth")
    assert pth.read_text().startswith("import __editable___hfpkg_"), pth.read_text()
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return repo, venv, site


def _copy(tmp_path: Path) -> Path:
    work = tmp_path / "w"
    _write_tree(work, "copy")
    (work / "tests").mkdir()
    (work / "tests" / "test_child.py").write_text(CHILD_TEST)
    return work


def _env(venv: Path) -> dict[str, str]:
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    return env


@pytest.mark.slow
def test_the_finders_mapping_is_read_as_data(installed: tuple[Path, Path, Path]) -> None:
    """The finder module's ``MAPPING``, parsed (never imported): the package's folder and the module's path
    (without its suffix, as setuptools writes it)."""
    repo, _, site = installed
    (finder,) = site.glob("__editable___hfpkg_*_finder.py")
    assert finder_mapping(str(finder)) == {"hfpkg": str(repo / "hfpkg"), "hfmod": str(repo / "hfmod"),
                                           "hfns": str(repo / "hfns")}
    assert sorted(finder_paths(str(finder))) == [str(repo / "hfmod"), str(repo / "hfns"), str(repo / "hfpkg")]


@pytest.mark.slow
def test_a_flat_layout_editable_install_binds_the_copys_folders(
        installed: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder (and module file) the finder maps inside the repository: the copy's at that path; a
    copy whose ``hfpkg`` links back into the repository binds nothing of it."""
    repo, venv, _ = installed
    monkeypatch.setattr(protected, "_PROTECTED", [repo.resolve()])
    work = _copy(tmp_path)
    assert sorted(editable_binds([venv], work)) == [(work / "hfmod.py", repo / "hfmod.py"),
                                                     (work / "hfns", repo / "hfns"), (work / "hfpkg", repo / "hfpkg")]
    shutil.rmtree(work / "hfpkg")
    (work / "hfpkg").symlink_to(repo / "hfpkg")
    (work / "hfmod.py").unlink()
    (work / "hfmod.py").symlink_to(repo / "hfmod.py")
    shutil.rmtree(work / "hfns")
    assert editable_binds([venv], work) == []


def _child_run(installed: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               sandbox: str) -> str:
    """A test run of a copy of the installed repository (protected, as the user's checkout is) with the venv's
    interpreter under ``sandbox``, which must pass its one test, whose child imports the package from the copy:
    the run's log."""
    repo, venv, _ = installed
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    run = run_tests(_copy(tmp_path), f"{venv / 'bin' / 'python'} -m pytest {PLAIN}", ["tests/test_child.py"],
                    out_dir=tmp_path / "out", env=_env(venv), sandbox=sandbox)
    log = run.log_path.read_text()
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, log[-3000:]
    return log


@pytest.mark.slow
def test_a_flat_layout_editable_install_imports_the_copy_in_a_child(
        installed: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """contracts §7: a test run's child started with its own ``PYTHONPATH`` imports the package, its
    submodule, the module and a namespace package's package from the copy under test through setuptools'
    finder (it imported nothing), and never the repository's files."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    log = _child_run(installed, tmp_path, monkeypatch, "bwrap")
    assert "repository" not in log, log[-3000:]


def test_a_finder_that_is_not_plain_data_is_never_run(tmp_path: Path) -> None:
    """A finder module whose ``MAPPING`` is not a literal of strings maps nothing, and reading it runs none
    of its code."""
    marker = tmp_path / "ran"
    finder = tmp_path / "__editable___x_finder.py"
    finder.write_text(f"open({str(marker)!r}, 'w').close()\nMAPPING = dict(x={str(tmp_path)!r})\n")
    assert finder_mapping(str(finder)) == {}
    finder.write_text("MAPPING: dict[str, str] = {'x': 1, 'y': '/a'}\n")
    assert finder_mapping(str(finder)) == {"y": "/a"}
    finder.write_text("MAPPING = {'x': '/a'}\nMAPPING = {'x': '/b'}\n")  # the last assignment, as Python's
    assert finder_mapping(str(finder)) == {"x": "/b"}
    finder.write_text("MAPPING = {'x': '/a', 'y': 'rel'}\nNAMESPACES: dict = {'n': ['/b', 3, '/a'], 'm': '/c'}\n")
    assert finder_paths(str(finder)) == ["/a", "/b"]  # absolute strings, once each; a relative path is none
    finder.write_text("MAPPING = {'x': \n")  # not Python
    assert finder_mapping(str(finder)) == {}
    os.symlink(finder, tmp_path / "link_finder.py")
    finder.write_text("MAPPING = {'x': '/a'}\n")
    assert finder_mapping(str(tmp_path / "link_finder.py")) == {}  # a link: never read
    assert not marker.exists()


@pytest.mark.slow
def test_a_flat_layout_editable_install_under_no_sandbox(
        installed: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """contracts §7 "Editable installs" (ops54; ops52 left it a strict xfail): without a sandbox the run has an
    environment of its own whose finder maps the copy, so the child imports the package, its submodule, the module
    and the namespace package's package from the copy under test, never the user's checkout (HEAD's files)."""
    log = _child_run(installed, tmp_path, monkeypatch, "none")
    assert "repository" not in log, log[-3000:]


@pytest.mark.slow
def test_the_entries(installed: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """What the editable installs of an environment name inside the repository (each finder path, a module's
    without its suffix); none for a repository the environment does not name."""
    repo, venv, _ = installed
    monkeypatch.setattr(protected, "_PROTECTED", [repo.resolve()])
    assert sorted(editable_entries([venv])) == [(str(repo / name), True) for name in ("hfmod", "hfns", "hfpkg")]
    monkeypatch.setattr(protected, "_PROTECTED", [])
    assert editable_entries([venv]) == []


#: The project under benchmark in each editable layout: setuptools' flat layout (its ``.pth`` imports a finder whose
#: ``MAPPING`` names ``/repo/calc``) and a src layout (its ``.pth`` is a path line naming ``/repo/src``).
LAYOUTS = {
    "flat": ('[tool.setuptools]\npackages = ["calc"]\n', "calc"),
    "src": ('[tool.setuptools.packages.find]\nwhere = ["src"]\n', "src/calc"),
}


@pytest.mark.slow
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_editable_project_mines_and_grades_without_a_sandbox(layout: str, tmp_path: Path) -> None:
    """The real ``homefield mine`` and ``homefield run`` (the oracle, a ``cmd:`` agent) with ``--sandbox none`` on a
    project installed ``pip install -e`` (real pip, setuptools), whose new test imports the package in a child
    started with its own ``PYTHONPATH``. ops52: the child imported the user's checkout (HEAD's fix), so mining
    dropped the commit as ``passes without change 1`` and said so in a header line. Now (ops54) the test runs have
    an environment of their own naming the copy under test: the task is mined, the oracle solves it and an agent
    appending a comment does not, and no header line warns of it (it was the only hole it named)."""
    setup, where = LAYOUTS[layout]
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pyproject.toml", '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = '
                                 '"setuptools.build_meta"\n[project]\nname = "calc"\nversion = "0.1"\n' + setup)
    repo.write(f"{where}/__init__.py", "")
    repo.write(f"{where}/ops.py", "def add(a, b):\n    return a - b\n")
    child = ("import subprocess, sys\n\n\ndef _child(code, tmp_path):\n"
             "    out = subprocess.run([sys.executable, '-c', code], env={'PYTHONPATH': str(tmp_path)},\n"
             "                         cwd=str(tmp_path), capture_output=True, text=True, timeout=60)\n"
             "    return out.stdout.strip()\n\n\n"
             "def test_zero(tmp_path):\n"
             "    assert _child('from calc.ops import add; print(add(0, 0))', tmp_path) == '0'\n")
    repo.write("tests/test_ops.py", child)
    repo.commit("calc", committer_date="2026-01-01T12:00:00+00:00")
    repo.write(f"{where}/ops.py", "def add(a, b):\n    return a + b\n")
    repo.write("tests/test_ops.py", child + "\n\ndef test_add(tmp_path):\n"
               "    assert _child('from calc.ops import add; print(add(2, 3))', tmp_path) == '5'\n")
    repo.commit("Fix add: it subtracted its arguments instead of adding them",
                committer_date="2026-01-02T12:00:00+00:00")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--no-deps", "--disable-pip-version-check", "-e", str(repo.path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (site,) = venv.glob("lib/python*/site-packages")
    (pth,) = site.glob("__editable__.calc-*.pth")  # what setuptools wrote: a finder's import, or a path line
    assert pth.read_text().startswith("import __editable___calc_" if layout == "flat" else str(repo.path / "src"))
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (repo.path / ".homefield.yml").write_text(f'test_cmd: "{venv / "bin" / "python"} -m pytest {PLAIN}"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and "__editable__" not in p)}

    def homefield(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", *args, "--sandbox", "none"],
                             cwd=repo.path, env=env, capture_output=True, text=True, timeout=600)
        said = out.stdout + out.stderr
        assert out.returncode == 0, said[-3000:]
        assert "editable install" not in said, said[-3000:]
        return said

    said = homefield("mine", "--since", "2025-12-01")
    assert "Mined 1 task from 1 candidate" in said, said[-3000:]
    # the agent of ops52: a comment appended, no fix (the noop agent's empty patch is never graded)
    homefield("run", "--agent", "oracle", "--agent", f"comment=cmd:echo '# look' >> {where}/ops.py", "--attempts",
              "1", "-n", "0")
    (runs,) = (repo.path / ".homefield" / "runs").iterdir()
    results = list(read_jsonl(runs / "results.jsonl"))
    assert {(r["agent"], r["outcome"], r["test_sandbox"]) for r in results} == {
        ("oracle", "solved", "none"), ("comment", "tests_failed", "none")}, results
