"""ops58: editable installs whose ``.pth`` imports a loader that rebuilds in the user's checkout (meson-python's
``_<name>_editable_loader``: its build folder and ninja there; scikit-build-core's ``_<name>_editable``: its modules'
files there). Under ``--sandbox none`` the loader's import line was run as it is in the run's interpreter, so the
tests imported the checkout's files (HEAD's code, whatever the change; measured with a real meson-python install:
``'repository'``). The run's own environment now leaves such a line out (``editable_env.hook_names_repository``):
the copy's files are imported (``PYTHONPATH``), never the checkout's."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers.uv import uv_or_skip

from pytest_homefield.sandbox import protected, testrun
from pytest_homefield.sandbox.editable_env import hook_names_repository, site_plan

#: The shape of meson-python's loader's end (0.18): the build folder and ninja named in a call inside ``init()``.
MESON_LOADER = ("import sys\n\n\nclass MesonpyMetaFinder:\n    def __init__(self, *args):\n"
                "        self.args = args\n\n\n"
                "def install(*args):\n    pass\n\n\n"
                "def init():\n    finder = MesonpyMetaFinder(\n        'mpkg',\n        {{'mpkg'}},\n"
                "        '{build}',\n        ['/usr/bin/ninja'],\n        False,\n    )\n"
                "    sys.meta_path.insert(0, finder)\n")
#: scikit-build-core's: a module-level call with each module's file.
SKBUILD_LOADER = ("def install(*args):\n    pass\n\n\n"
                  "install({{'spkg': '{file}'}}, {{}}, None, False, True, [], [], '')\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(protected, "_PROTECTED", [])
    repo = tmp_path / "repo"
    repo.mkdir()
    protected.protect(repo)
    return repo


@pytest.mark.parametrize("shape", ["meson", "skbuild"])
def test_a_loader_naming_the_checkout_is_left_out(tmp_path: Path, repo: Path, shape: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    module = "_mpkg_editable_loader" if shape == "meson" else "_spkg_editable"
    text = MESON_LOADER.format(build=repo / "build" / "cp311") if shape == "meson" else \
        SKBUILD_LOADER.format(file=repo / "src" / "spkg" / "__init__.py")
    (site / f"{module}.py").write_text(text)
    (site / "pkg-editable.pth").write_text(f"import {module}; {module}.init()\n")
    assert hook_names_repository(str(site / f"{module}.py"))
    plan, named = site_plan([str(site)], tmp_path / "copy")
    assert named and plan == [(str(site), [("pkg-editable.pth", [])])]


def test_a_loader_naming_another_folder_runs_as_it_is(tmp_path: Path, repo: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "_mpkg_editable_loader.py").write_text(MESON_LOADER.format(build=tmp_path / "elsewhere" / "build"))
    (site / "other.py").write_text("ROOT = '/'\nTMP = " + repr(str(tmp_path)) + "\n")  # folders holding the repository
    (site / "pkg-editable.pth").write_text("import _mpkg_editable_loader; _mpkg_editable_loader.init()\n")
    (site / "other.pth").write_text("import other\n")
    assert not hook_names_repository(str(site / "_mpkg_editable_loader.py"))
    assert not hook_names_repository(str(site / "other.py"))
    assert site_plan([str(site)], tmp_path / "copy") == ([(str(site), [("other.pth", None),
                                                                       ("pkg-editable.pth", None)])], False)


@pytest.mark.slow  # a real meson-python build (uv, meson, ninja from uv's cache or the registry): ~20 s
def test_a_meson_python_editable_install_imports_the_copy(tmp_path: Path, repo: Path) -> None:
    uv = uv_or_skip()
    copy = tmp_path / "copy"
    for root, where in ((repo, "repository"), (copy, "copy")):
        (root / "src" / "mpkg").mkdir(parents=True)
        (root / "src" / "mpkg" / "__init__.py").write_text(f"WHERE = {where!r}\n")
        (root / "pyproject.toml").write_text('[build-system]\nbuild-backend = "mesonpy"\nrequires = ["meson-python"]\n'
                                             '\n[project]\nname = "mpkg"\nversion = "0.1"\n')
        (root / "meson.build").write_text("project('mpkg', version: '0.1')\n"
                                          "py = import('python').find_installation(pure: false)\n"
                                          "py.install_sources(['src/mpkg/__init__.py'], subdir: 'mpkg')\n")
    (copy / "tests").mkdir()
    (copy / "tests" / "test_where.py").write_text("import mpkg\n\n\ndef test_where():\n"
                                                  "    assert mpkg.WHERE == 'copy', mpkg.__file__\n")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    for args in (["meson-python", "meson", "ninja"], ["--no-build-isolation", "-e", str(repo)]):
        made = subprocess.run([uv, "pip", "install", "-q", "--python", python, *args], capture_output=True, text=True,
                              timeout=600)
        if made.returncode != 0:
            pytest.skip(f"meson-python could not be installed (uv's cache, the registry): {made.stderr[-500:]}")
    (site,) = venv.glob("lib/python*/site-packages")
    assert (site / "_mpkg_editable_loader.py").is_file()
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # pytest, from this environment
    env = {**os.environ, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = testrun.run_tests(copy, "python -m pytest", ["tests/test_where.py"], out_dir=tmp_path / "out", env=env,
                            sandbox="none", timeout_s=120)
    assert run.outcomes == {"tests/test_where.py::test_where": "passed"}, (run.error,
                                                                          run.log_path.read_text()[-1500:])


def test_a_loader_is_parsed_once_for_the_plan(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_import_step`` parsed each loader twice: as an ``editables`` redirector (``redirector_map``, cached by text)
    and again in ``hook_names_repository`` (its own read and parse). The same plan, one parse."""
    import ast

    from pytest_homefield.sandbox import editable

    site = tmp_path / "site"
    site.mkdir()
    (site / "_mpkg_editable_loader.py").write_text(MESON_LOADER.format(build=repo / "build" / "cp311"))
    (site / "pkg-editable.pth").write_text("import _mpkg_editable_loader; _mpkg_editable_loader.init()\n")
    editable._tree_of.cache_clear()
    parses: list[object] = []
    real = ast.parse

    def counted(*args: object, **kw: object) -> ast.Module:
        parses.append(args[0])
        return real(*args, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(ast, "parse", counted)
    assert site_plan([str(site)], tmp_path / "copy") == ([(str(site), [("pkg-editable.pth", [])])], True)
    assert len(parses) == 1  # before: 2
