"""hatchling's editable install through the ``editables`` redirector, seen from a test run's child (contracts §7
"Editable installs", ops56).

``pip install -e .`` of a hatchling project with ``dev-mode-exact = true`` writes no path line: its ``.pth`` runs
``import _editable_impl_<name>``, whose module installs ``editables``' ``RedirectingFinder`` and maps each package to
its ``__init__.py`` in the repository (``F.map_module('hfh', '/repo/src/hfh/__init__.py')``). A test's child started
with its own ``PYTHONPATH`` imported the repository's package without a sandbox (HEAD's fix; measured:
``'repository'``), and none under bubblewrap (the hook module, listed in the distribution's ``RECORD``, was masked
empty as a copy of the project: measured ``No module named 'hfh'``). Real pip, hatchling and editables from the
package index (pip's build isolation), a real venv, real bubblewrap."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from pytest_homefield.sandbox import protected
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.editable import editable_entries, redirector_map
from pytest_homefield.sandbox.testrun import run_tests

PLAIN = "-p no:hypothesispytest -p no:xdist -p no:benchmark -p no:cacheprovider -p no:anyio"

CHILD_TEST = (
    "import os, subprocess, sys\n\n\n"
    "def test_child_imports_the_copy(tmp_path):\n"
    "    env = {'PATH': os.environ.get('PATH', ''), 'PYTHONPATH': str(tmp_path)}\n"
    "    out = subprocess.run([sys.executable, '-c', 'import hfh, hfh.sub; print(hfh.WHERE, hfh.sub.WHERE)'],\n"
    "                         env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60)\n"
    "    assert out.stdout.split() == ['copy', 'copy'], out.stderr\n")


def _write_tree(root: Path, where: str) -> None:
    (root / "src" / "hfh").mkdir(parents=True)
    (root / "src" / "hfh" / "__init__.py").write_text(f"WHERE = {where!r}\n")
    (root / "src" / "hfh" / "sub.py").write_text(f"WHERE = {where!r}\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """``(repository, venv, site folder)``: a hatchling project (``src/hfh``, ``WHERE = 'repository'``) with
    ``dev-mode-exact``, installed ``pip install -e`` into a fresh venv (``editables`` with it) whose
    ``_hf_deps.pth`` names this process's site folder (pytest)."""
    base = tmp_path_factory.mktemp("hatch")
    repo = base / "home" / "repo"
    _write_tree(repo, "repository")
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
        '[project]\nname = "hfh"\nversion = "0.1"\n'
        '[tool.hatch.build.targets.wheel]\ndev-mode-exact = true\n')
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                           "--disable-pip-version-check", "-e", str(repo)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"pip install -e of a hatchling project failed here: {proc.stderr[-500:]}")
    site = Path(next(iter(venv.glob("lib/python*/site-packages"))))
    (pth,) = site.glob("_editable_impl_hfh.pth")  # what hatchling wrote: an import of the redirector module
    assert pth.read_text().startswith("import _editable_impl_hfh"), pth.read_text()
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return repo, venv, site


def _child_run(installed: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               sandbox: str) -> str:
    """A test run of a copy (``WHERE = 'copy'``) of the installed, protected repository with the venv's interpreter
    under ``sandbox``, which must pass its one test (the child imports the package from the copy): its log."""
    repo, venv, _ = installed
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(repo)
    work = tmp_path / "w"
    _write_tree(work, "copy")
    (work / "tests").mkdir()
    (work / "tests" / "test_child.py").write_text(CHILD_TEST)
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    run = run_tests(work, f"{venv / 'bin' / 'python'} -m pytest {PLAIN}", ["tests/test_child.py"],
                    out_dir=tmp_path / "out", env=env, sandbox=sandbox)
    log = run.log_path.read_text()
    assert run.outcomes == {"tests/test_child.py::test_child_imports_the_copy": "passed"}, log[-3000:]
    assert "'repository'" not in log, log[-3000:]
    return log


@pytest.mark.slow
def test_the_redirectors_map_is_read_as_data(installed: tuple[Path, Path, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The redirector module's ``map_module`` calls, parsed (never imported); the entry a sandbox binds is the
    package's folder."""
    repo, venv, site = installed
    assert redirector_map(str(site / "_editable_impl_hfh.py")) == [("hfh", str(repo / "src" / "hfh" / "__init__.py"))]
    monkeypatch.setattr(protected, "_PROTECTED", [repo.resolve()])
    assert editable_entries([venv]) == [(str(repo / "src" / "hfh"), True)]


@pytest.mark.slow
def test_a_hatchling_editable_install_under_no_sandbox(installed: tuple[Path, Path, Path], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a sandbox the run's own environment installs the redirector with the copy's files: the child
    imports the package and its submodule from the copy (before: the user's checkout's, ``'repository'``)."""
    _child_run(installed, tmp_path, monkeypatch, "none")


@pytest.mark.slow
def test_a_hatchling_editable_install_under_bubblewrap(installed: tuple[Path, Path, Path], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Under bubblewrap the copy's package folder is bound at the repository's, and the redirector module is not
    masked (it holds no code of the project): the child imports the copy's (before: no module at all)."""
    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    _child_run(installed, tmp_path, monkeypatch, "bwrap")
