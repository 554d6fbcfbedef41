"""A repository's own compiled extension (ops61): every candidate of a repository with a C extension was dropped
``reference_fails`` ("collection errors at the parent and at the commit: … No module named 'pkg._core'") and the
summary sent the user to install a package. The hint now names the module as the repository's own compiled one and
gives the ``setup_cmd`` that builds it in place (measured: the commits kept), and a commit that changes compiled
sources, which that build makes before the change is applied (as grading's), says so in its drop's detail."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.compiled import (
    BUILD_IN_PLACE,
    BUILT_BEFORE,
    WHEEL_BACKENDS,
    build_backend,
    build_recipe,
    compiled_sources,
    own_compiled_module,
)
from pytest_homefield.mine.redgreen import verify_candidate
from pytest_homefield.mine.summary import collection_errors_line, compiled_changes_line, setup_hint


def _broken(n: int, module: str) -> list[dict[str, str]]:
    return [{"reason": "reference_fails", "detail": f"collection errors at the parent and at the commit: "
                                                     f"tests/test_{i}.py (ModuleNotFoundError: No module named "
                                                     f"'{module}')"} for i in range(n)]


def test_own_compiled_module_finds_the_source_a_build_compiles(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "_core.c").write_text("int x;\n")
    (tmp_path / "pkg" / "_speed.py").write_text("")
    (tmp_path / "pkg" / "_speed.pyx").write_text("")
    (tmp_path / "src" / "lib" / "_ext").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "_ext" / "main.cpp").write_text("")
    assert own_compiled_module(tmp_path, "pkg._core") == "pkg/_core.c"
    assert own_compiled_module(tmp_path, "lib._ext") == "src/lib/_ext/main.cpp"
    assert own_compiled_module(tmp_path, "pkg._speed") is None  # there as Python: no build made it
    assert own_compiled_module(tmp_path, "pkg._version") is None
    assert own_compiled_module(tmp_path, "numpy") is None
    assert compiled_sources(["pkg/a.py", "pkg/_core.C", "pkg/b.pyx", "README.md"]) == ["pkg/_core.C", "pkg/b.pyx"]


def test_the_hint_names_the_repositorys_compiled_module_and_the_build_in_place(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "_core.c").write_text("int x;\n")
    compiled = lambda module: own_compiled_module(tmp_path, module)  # noqa: E731
    hint = setup_hint(_broken(3, "pkg._core"), compiled=compiled)
    assert hint is not None and "pkg._core is the repository's own compiled module (pkg/_core.c)" in hint, hint
    assert BUILD_IN_PLACE in hint and "a commit that changes compiled sources stays no task" in hint
    line = collection_errors_line([*_broken(2, "pkg._core"), *[{"reason": None}] * 5], compiled=compiled)
    assert line is not None and BUILD_IN_PLACE in line, line
    # another missing module keeps the general hint
    other = setup_hint(_broken(3, "numpy"), compiled=compiled)
    assert other is not None and BUILD_IN_PLACE not in other and "generate or install" in other
    # a drop whose own compiled sources never reached the tests is no fault of the environment
    built = [{**r, "detail": r["detail"] + BUILT_BEFORE + "pkg/_core.c never reaches the tests"}
             for r in _broken(3, "pkg._core")]
    assert setup_hint(built, compiled=compiled) is None
    line = compiled_changes_line([*built, *_broken(2, "pkg._core")])
    assert line is not None and line.startswith("Compiled changes: 3 candidates (reference fails) change compiled")
    assert compiled_changes_line(_broken(2, "pkg._core")) is None


_C = """#include <Python.h>
static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}
static PyObject *mul(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a * b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "add"},MUL {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, methods};
PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&mod); }
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_c_extension_is_built_in_each_copy_by_the_recipe(tmp_path: Path) -> None:
    """Real ``cc``, setuptools ``ext_modules``. Without ``setup_cmd`` a Python-only commit cannot collect its tests
    (the extension is in no snapshot) and the hint gives the recipe; with the recipe's ``setup_cmd`` it is a task;
    a commit that changes the C source is dropped saying that source never reaches the tests (before: only
    "1 red test(s) do not pass at the commit"). About 40 s on 2 shared cores."""
    repo = GitRepo.init(tmp_path / "r")
    repo.write("setup.py", 'from setuptools import Extension, setup\n\nsetup(name="pkg", version="1.0", '
                           'packages=["pkg"], ext_modules=[Extension("pkg._core", ["pkg/_core.c"])])\n')
    repo.write("pkg/_core.c", _C.replace("MUL", ""))
    repo.write("pkg/__init__.py", "from pkg._core import add\n\n\ndef double(x):\n    return add(x, x)\n")
    repo.write("tests/test_pkg.py", "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
    first = repo.commit("Start the package with a compiled core")
    repo.write("pkg/__init__.py", "from pkg._core import add\n\n\ndef double(x):\n    return add(x, x)\n\n\n"
                                  "def triple(x):\n    return add(double(x), x)\n")
    repo.write("tests/test_triple.py", "from pkg import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n")
    python_only = repo.commit("Add triple, three times a number")
    repo.write("pkg/_core.c", _C.replace("MUL", ' {"mul", mul, METH_VARARGS, "mul"},'))
    repo.write("tests/test_mul.py", "from pkg._core import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n")
    c_change = repo.commit("Add a compiled mul to the core")
    test_cmd = f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}"
    setup_cmd = yaml.safe_load(BUILD_IN_PLACE)["setup_cmd"].replace("python ", f"{shlex.quote(sys.executable)} ", 1)

    def verify(parent: str, commit: str, test: str, setup: str | None):  # type: ignore[no-untyped-def]
        return verify_candidate(repo.path, commit=commit, parent=parent, test_files=[test], runnable_tests=[test],
                                test_cmd=test_cmd, setup_cmd=setup, stability_runs=1, run_timeout_s=120)

    bare = verify(first, python_only, "tests/test_triple.py", None)
    assert bare.reason == "reference_fails" and "No module named 'pkg._core'" in bare.detail, bare
    compiled = lambda module: own_compiled_module(repo.path, module)  # noqa: E731
    hint = setup_hint([{"reason": bare.reason, "detail": bare.detail}], compiled=compiled)
    assert hint is not None and BUILD_IN_PLACE in hint, hint
    built = verify(first, python_only, "tests/test_triple.py", setup_cmd)
    assert built.reason is None and built.FAIL_TO_PASS == ["tests/test_triple.py::test_triple"], built
    changed = verify(python_only, c_change, "tests/test_mul.py", setup_cmd)
    assert changed.reason == "reference_fails", changed
    assert f"{BUILT_BEFORE}pkg/_core.c never reaches the tests" in changed.detail, changed.detail
    # bld62: the summary said only "reference fails 1"; now a line says why and that no setting makes it a task
    records = [{"reason": changed.reason, "detail": changed.detail}, {"reason": None, "detail": built.detail}]
    assert compiled_changes_line(records) == (
        "Compiled changes: 1 candidate (reference fails) changes compiled sources, which setup_cmd builds before a "
        "change is applied and grading never builds: no setting makes such a commit a task (README: Python "
        "environments)")


def test_the_hint_names_the_recipe_of_the_projects_build_backend(tmp_path: Path) -> None:
    """bld62: a meson-python project's hint gave setuptools' ``python setup.py -q build_ext --inplace``, which
    builds nothing there (no setup.py; meson-python has no in-place build). The backend is read from pyproject's
    ``[build-system]``: meson-python and scikit-build-core get the wheel recipe, with what it needs."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "_core.c").write_text("int x;\n")
    compiled = lambda module: own_compiled_module(tmp_path, module)  # noqa: E731
    recipe = lambda module, source: build_recipe(tmp_path, module, source)  # noqa: E731
    assert BUILD_IN_PLACE in (setup_hint(_broken(3, "pkg._core"), compiled=compiled, recipe=recipe) or "")
    for backend, needs in (("mesonpy", "meson-python, meson and ninja"),
                           ("scikit_build_core.build", "scikit-build-core and cmake")):
        (tmp_path / "pyproject.toml").write_text(f'[build-system]\nbuild-backend = "{backend}"\nrequires = []\n')
        assert build_backend(tmp_path) == backend
        hint = setup_hint(_broken(3, "pkg._core"), compiled=compiled, recipe=recipe)
        assert hint is not None and BUILD_IN_PLACE not in hint, hint
        assert ("-w .hf-wheel . && python -m zipfile -e .hf-wheel/*.whl .hf-wheel/x && cp .hf-wheel/x/pkg/_core.*.so "
                "src/pkg/\"") in hint and f"({backend}: no in-place build; {needs} and pip" in hint, hint
    (tmp_path / "pyproject.toml").write_text("[build-system\n")
    assert build_backend(tmp_path) is None


_BACKENDS = {
    "mesonpy": ("mesonpy", "ninja", "meson.build",
                "project('pkg', 'c')\npy = import('python').find_installation(pure: false)\n"
                "py.extension_module('_core', 'src/pkg/_core.c', install: true, subdir: 'pkg')\n"
                "py.install_sources('src/pkg/__init__.py', subdir: 'pkg')\n", ""),
    "scikit_build_core.build": ("scikit_build_core", "cmake", "CMakeLists.txt",
                                "cmake_minimum_required(VERSION 3.15)\nproject(pkg LANGUAGES C)\n"
                                "find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)\n"
                                "Python_add_library(_core MODULE src/pkg/_core.c WITH_SOABI)\n"
                                "install(TARGETS _core DESTINATION pkg)\n",
                                '\n[tool.scikit-build]\nwheel.packages = ["src/pkg"]\n'),
}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("backend", sorted(_BACKENDS))
def test_the_wheel_recipe_builds_the_extension_in_a_copy(tmp_path: Path, backend: str) -> None:
    """Real meson-python (meson, ninja) or scikit-build-core (cmake), skipped where this Python lacks the backend,
    and ``cc``: the recipe the hint gives for such a project, run in a copy of its tree, puts the extension next to
    its package and the tests pass with the copy's ``src`` on ``PYTHONPATH`` (measured: 20 to 50 s on 2 shared
    cores; ``homefield mine`` of a meson-python repository with it kept its Python-only commit, 0 tasks before)."""
    module, tool, build_file, build_text, extra = _BACKENDS[backend]
    pytest.importorskip(module, reason=f"{backend} is not installed in this environment")
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not on PATH")
    root = tmp_path / "p"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(f'[build-system]\nbuild-backend = "{backend}"\nrequires = []\n\n'
                                         f'[project]\nname = "pkg"\nversion = "1.0"\n{extra}')
    (root / build_file).write_text(build_text)
    (root / "src" / "pkg" / "_core.c").write_text(_C.replace("MUL", ""))
    (root / "src" / "pkg" / "__init__.py").write_text("from pkg._core import add\n")
    (root / "tests" / "test_pkg.py").write_text("from pkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    source = own_compiled_module(root, "pkg._core")
    assert source == "src/pkg/_core.c"
    line = build_recipe(root, "pkg._core", source)
    assert line.endswith(f"({backend}: no in-place build; {WHEEL_BACKENDS[backend]} and pip installed where the "
                         "tests run"), line
    cmd = yaml.safe_load(line.split(f" ({backend}", 1)[0])["setup_cmd"]
    cmd = cmd.replace("python ", f"{shlex.quote(sys.executable)} ")
    env = {**os.environ, "PYTHONPATH": "src"}
    built = subprocess.run(cmd, shell=True, cwd=root, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=root, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
