"""envs/declaration: which files declare the environment, the content key, the interpreter choice."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers.env_repo import build_env_repo, pyproject

from pytest_homefield.envs.declaration import (
    Declaration,
    Interpreter,
    NoPythonError,
    choose_python,
    declaration_at,
    env_key,
    installed_pythons,
    is_declaration_file,
    read_declaration,
)
from pytest_homefield.envs.stage import as_of_date

PY311 = Interpreter("/usr/bin/python3.11", "3.11.7")
PY313 = Interpreter("/opt/py/bin/python3.13", "3.13.0")


def test_declaration_files_are_top_level_manifests() -> None:
    assert is_declaration_file("pyproject.toml") and is_declaration_file("requirements-dev.txt")
    assert is_declaration_file("uv.lock") and is_declaration_file("setup.cfg")
    assert not is_declaration_file("sub/pyproject.toml") and not is_declaration_file("package.json")
    # a requirements/ folder's test requirements (pallets: requirements/tests.txt), not its docs or typing ones
    assert is_declaration_file("requirements/tests.txt") and is_declaration_file("requirements/test.txt")
    assert not is_declaration_file("requirements/docs.txt") and not is_declaration_file("requirements/tests.in")
    assert not is_declaration_file("requirements/x/tests.txt") and not is_declaration_file("docs/requirements.txt")


def test_read_declaration_and_defaults(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject(["hfdep>=1.0"]))
    (tmp_path / "requirements-test.txt").write_text("pytest\n")
    (tmp_path / "README.md").write_text("not part of it\n")
    decl = read_declaration(tmp_path)
    assert sorted(decl.files) == ["pyproject.toml", "requirements-test.txt"]
    assert decl.requires_python == "==3.11.*" and decl.has_project
    assert decl.default_groups() == ["test"] and decl.default_extras() == []
    assert decl.requirements == ["requirements-test.txt"]
    (tmp_path / "requirements").mkdir()
    for name in ("tests.txt", "tests.in", "docs.txt"):
        (tmp_path / "requirements" / name).write_text("pytest-asyncio==0.23.6\n")
    decl = read_declaration(tmp_path)
    assert decl.requirements == ["requirements-test.txt", "requirements/tests.txt"]
    assert sorted(decl.files) == ["pyproject.toml", "requirements-test.txt", "requirements/tests.txt"]


def test_declaration_at_reads_each_commit_without_a_checkout(tmp_path: Path) -> None:
    repo = build_env_repo(tmp_path / "r")
    first, second = repo.git("rev-list", "--reverse", "HEAD").split()[:2]
    a, b = declaration_at(repo.path, first), declaration_at(repo.path, second)
    assert list(a.files) == ["pyproject.toml"] and b"hfdep" in b.files["pyproject.toml"]
    assert env_key(a, PY311, extras=[], groups=["test"]) != env_key(b, PY311, extras=[], groups=["test"])
    repo.write("requirements/tests.txt", "pytest\n")
    repo.write("requirements/docs.txt", "sphinx\n")
    repo.commit("Pin the test tools")
    c = declaration_at(repo.path, repo.git("rev-parse", "HEAD").strip())
    assert c.files["requirements/tests.txt"] == b"pytest\n" and "requirements/docs.txt" not in c.files


def test_key_depends_on_files_python_extras_and_groups() -> None:
    decl = Declaration({"pyproject.toml": b"[project]\nname='x'\n"})
    key = env_key(decl, PY311, extras=["test"], groups=[])
    assert key == env_key(Declaration(dict(decl.files)), PY311, extras=["test"], groups=[])
    assert len(key) == 16
    assert key != env_key(decl, PY313, extras=["test"], groups=[])
    assert key != env_key(decl, PY311, extras=[], groups=[])
    assert key != env_key(decl, PY311, extras=["test"], groups=["dev"])
    assert key != env_key(Declaration({"pyproject.toml": b"[project]\nname='y'\n"}), PY311, extras=["test"],
                          groups=[])


def test_choose_python_takes_the_newest_that_fits() -> None:
    assert choose_python(None, [PY311, PY313]) == PY313
    assert choose_python(">=3.10,<3.12", [PY311, PY313]) == PY311
    with pytest.raises(NoPythonError, match=r"no installed Python satisfies requires-python >=3.14; found: 3.11.7"):
        choose_python(">=3.14", [PY311, PY313])


def test_installed_pythons_finds_this_interpreter() -> None:
    found = installed_pythons(os.path.dirname(sys.executable))
    here = ".".join(str(n) for n in sys.version_info[:3])
    assert here in {i.version for i in found}
    assert len({i.path for i in found}) == len(found)  # each interpreter once


def test_pyenv_shims_are_not_run_their_versions_are_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pyenv shim (a script that starts pyenv: ~0.2 s of CPU each) on PATH is never run; the
    versions of its pyenv root stand in for it."""
    root = tmp_path / "pyenv"
    (root / "shims").mkdir(parents=True)
    ran = tmp_path / "ran"
    for name in ("python3", "python3.11"):
        shim = root / "shims" / name
        shim.write_text(f"#!/bin/sh\necho {name} >> {ran}\nexec {sys.executable} \"$@\"\n")
        shim.chmod(0o755)
    (root / "versions" / "9.9" / "bin").mkdir(parents=True)
    (root / "versions" / "9.9" / "bin" / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "elsewhere"))
    found = installed_pythons.__wrapped__(str(root / "shims"))
    assert not ran.exists(), ran.read_text()
    assert [i.path for i in found] == [os.path.realpath(sys.executable)]


def test_as_of_is_part_of_the_key_and_is_the_end_of_the_commit_day(tmp_path: Path) -> None:
    decl = Declaration({"pyproject.toml": b"[project]\nname='x'\n"})
    plain = env_key(decl, PY311, extras=[], groups=[])
    assert plain == env_key(decl, PY311, extras=[], groups=[], as_of=None)
    assert plain != env_key(decl, PY311, extras=[], groups=[], as_of="2026-06-01T23:59:59Z")
    repo = build_env_repo(tmp_path / "r")
    first = repo.git("rev-list", "--reverse", "HEAD").split()[0]
    assert as_of_date(repo.path, first) == "2024-01-01T23:59:59Z"  # committed 2024-01-01 01:00 UTC
