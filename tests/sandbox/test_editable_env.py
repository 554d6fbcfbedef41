"""A test run's own Python environment without a sandbox (contracts §7 "Editable installs", ops54).

A real venv (``python -m venv``) whose site folder holds ``.pth`` files as editable installs and other packages
write them, a protected repository, a copy under test; the run's own environment is made and its real interpreter
started, and a child of it with an environment of its own. (Real pip and setuptools, their finder included: the
slow tests of ``test_editable_finder.py``.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.uv import uv_or_skip

from pytest_homefield.sandbox import protected, testrun
from pytest_homefield.sandbox.editable_env import own_environment, rewritten_script, site_plan
from pytest_homefield.sandbox.testrun import own_environment_argv

#: Printed by the interpreter under test, and by a child it starts with nothing but ``PYTHONPATH=/``: where
#: ``hfsrc`` and ``hfdep`` come from, what the ``.pth`` import lines saw as ``sitedir``, and ``sys.path``.
PROBE = ("import json, sys, hfsrc, hfdep\n"
         "print(json.dumps([hfsrc.WHERE, hfdep.WHERE, getattr(sys, 'hf_ns', None), getattr(sys, 'hf_mixed', None),\n"
         "                  sys.executable, sys.path]))\n")
CHILD = PROBE + ("import subprocess\n"
                 f"print(subprocess.run([sys.executable, '-c', {PROBE!r}], env={{'PYTHONPATH': '/'}},\n"
                 "                     capture_output=True, text=True, cwd='/').stdout, end='')\n")


@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path, Path]:
    """``(venv, site folder, repository, copy)``: the repository protected, holding ``src/hfsrc`` (``WHERE =
    'repository'``), the copy the same with ``'copy'``; the venv's site folder: ``hfsrc.pth`` a path line naming the
    repository's ``src`` (flit, hatchling, setuptools' src layout), ``aa_rel.pth`` a relative path line naming a
    folder of another package (``hfdep``), ``zz_ns.pth`` an ``import`` line reading ``sitedir`` as setuptools'
    ``-nspkg.pth`` lines do, ``mixed.pth`` a path line naming the repository's ``lib`` and such an import line,
    ``.hidden.pth`` one :mod:`site` skips, and ``_hf_deps.pth`` naming this process's site folder."""
    monkeypatch.setattr(protected, "_PROTECTED", [])
    repo, copy, venv = tmp_path / "repo", tmp_path / "copy", tmp_path / "venv"
    for root, where in ((repo, "repository"), (copy, "copy")):
        (root / "src" / "hfsrc").mkdir(parents=True)
        (root / "src" / "hfsrc" / "__init__.py").write_text(f"WHERE = {where!r}\n")
        (root / "lib").mkdir()
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "hfdep.py").write_text("WHERE = 'deps'\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "hfsrc.pth").write_text(f"# an editable install\n\n{repo / 'src'}\n")
    (site / "aa_rel.pth").write_text(os.path.relpath(tmp_path / "deps", site) + "\n")
    sitedir = "sys._getframe(1).f_locals['sitedir']"
    (site / "zz_ns.pth").write_text(f"import sys; sys.hf_ns = {sitedir}\n")
    (site / "mixed.pth").write_text(f"{repo / 'lib'}\nimport sys; sys.hf_mixed = {sitedir}\n")
    (site / ".hidden.pth").write_text("import sys; sys.hf_hidden = 1\n")
    protected.protect(repo)
    return venv, site, repo, copy


def _run(python: str, code: str) -> list[list[object]]:
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, cwd="/",
                         env={"PATH": os.defpath})
    assert out.returncode == 0 and not out.stderr, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_the_runs_own_environment_takes_the_copy_where_the_site_folder_names_the_repository(
        venv: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    """ops52: the venv's interpreter, and a child started as ``sys.executable`` with its own ``PYTHONPATH``,
    imported the repository's ``hfsrc``. The run's own environment's interpreter and its child import the copy's;
    every other ``.pth`` line is taken as :mod:`site` takes it (the relative path, ``sitedir`` the venv's site
    folder, the hidden file skipped), and no entry of ``sys.path`` lies in the repository."""
    env, site, repo, copy = venv
    python = str(env / "bin" / "python")
    assert [r[:4] for r in _run(python, CHILD)] == [["repository", "deps", str(site), str(site)]] * 2  # before
    own = own_environment(python, copy, tmp_path / "py")
    assert own is not None and own.python == str(tmp_path / "py" / "bin" / "python")
    rows = _run(own.python, CHILD)
    assert [r[:5] for r in rows] == [["copy", "deps", str(site), str(site), own.python]] * 2, rows
    for row in rows:
        paths = [str(p) for p in row[5]]  # type: ignore[union-attr]
        assert str(copy / "src") in paths and not any(p.startswith(str(repo)) for p in paths), paths
        assert paths.index(str(site)) < paths.index(str(copy / "src"))  # the site folder first, as site adds it
    assert "hf_hidden" not in _run(own.python, "import json, sys; print(json.dumps([dir(sys)]))")[0][0]
    # its hook's bytecode, made by that interpreter, is what it imports (test runs write none: compiled at each start)
    verbose = subprocess.run([own.python, "-v", "-c", "pass"], capture_output=True, text=True, timeout=60,
                             env={"PATH": os.defpath, "PYTHONDONTWRITEBYTECODE": "1"}).stderr
    assert "_homefield_editable_site.py\n" in verbose and " matches " in verbose.split(
        "_homefield_editable_site.py\n")[0].splitlines()[-1], verbose[-2000:]


def test_nothing_is_made_for_an_environment_that_names_no_protected_folder(
        venv: tuple[Path, Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No editable install of the repository: no environment, and the plan takes every file as it is."""
    env, site, _, copy = venv
    monkeypatch.setattr(protected, "_PROTECTED", [])
    assert own_environment(str(env / "bin" / "python"), copy, tmp_path / "py") is None
    assert not (tmp_path / "py").exists()
    plan, named = site_plan([str(site)], copy)
    assert not named and plan == [(str(site), [(n, None) for n in ("aa_rel.pth", "hfsrc.pth", "mixed.pth",
                                                                     "zz_ns.pth")])]


def test_the_plan_of_a_file_naming_the_repository(venv: tuple[Path, Path, Path, Path]) -> None:
    """A file naming the repository is read as :mod:`site` reads it (comments and empty lines nothing), its
    repository paths taken from the copy; a repository path with no counterpart in the copy (a link back into the
    repository) is left out, never kept."""
    _, site, repo, copy = venv
    plan, named = site_plan([str(site)], copy)
    files = dict(plan[0][1])
    assert named and files["hfsrc.pth"] == [("path", str(copy / "src"))] and files["aa_rel.pth"] is None
    assert files["mixed.pth"] == [("path", str(copy / "lib")),
                                  ("exec", "import sys; sys.hf_mixed = sys._getframe(1).f_locals['sitedir']")]
    (copy / "lib").rmdir()
    (copy / "lib").symlink_to(repo / "lib")
    again = dict(site_plan([str(site)], copy)[0][0][1])
    assert again["mixed.pth"] == [files["mixed.pth"][1]], again


def test_the_command_runs_the_runs_own_interpreter(venv: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    """The command's Python (named by path, or found on ``PATH`` past an ``env`` prefix) is the run's own; a
    ``pytest`` script whose ``#!`` names the venv's Python runs with it; the run's own ``bin`` goes on ``PATH``
    just before the venv's, holding the venv's scripts with its interpreter; another command is left as it is."""
    env, _, _, copy = venv
    python, bin_dir = str(env / "bin" / "python"), str(env / "bin")
    (env / "bin" / "pytest").write_text(f"#!{python}\nimport sys\nfrom pytest import console_main\n")
    (env / "bin" / "pytest").chmod(0o755)
    run_env = {"PATH": f"/usr/bin{os.pathsep}{bin_dir}"}
    out = tmp_path / "out"
    out.mkdir()
    own = str(out / "py" / "bin" / "python")
    assert own_environment_argv([python, "-m", "pytest", "-q"], run_env, copy, out) == [own, "-m", "pytest", "-q"]
    assert run_env["PATH"] == os.pathsep.join(["/usr/bin", str(out / "py" / "bin"), bin_dir])
    assert (out / "py" / "bin" / "pytest").read_text().startswith(f"#!{own}\n")
    for n, (argv, want) in enumerate([
            (["env", "A=1", "python", "-m", "pytest"], ["env", "A=1", "OWN", "-m", "pytest"]),
            (["pytest", "-q"], ["OWN", str(env / "bin" / "pytest"), "-q"]),
            (["uv", "run", "pytest"], ["uv", "run", "pytest"])]):
        (tmp_path / f"out{n}").mkdir()
        got = own_environment_argv(argv, {"PATH": bin_dir}, copy, tmp_path / f"out{n}")
        assert got == [str(tmp_path / f"out{n}" / "py" / "bin" / "python") if w == "OWN" else w for w in want]


def test_a_script_gets_the_runs_interpreter() -> None:
    """An entry point's ``#!`` line (with its options), and pip's ``/bin/sh`` launcher for a long path; nothing for
    a script of another interpreter, a shell script or a file without ``#!``."""
    body = b"import sys\nfrom hfpkg import main\nsys.exit(main())\n"
    assert rewritten_script(b"#!/v/bin/python3\n" + body, "/v/bin", "/run/py/bin/python") == \
        b"#!/run/py/bin/python\n" + body
    assert rewritten_script(b"#!/v/bin/python -E\n" + body, "/v/bin", "/r") == b"#!/r -E\n" + body
    launcher = b"#!/bin/sh\n'''exec' \"/v/bin/python3.12\" \"$0\" \"$@\"\n' '''\n" + body
    assert rewritten_script(launcher, "/v/bin", "/r") == b"#!/bin/sh\n'''exec' \"/r\" \"$0\" \"$@\"\n' '''\n" + body
    for other in (b"#!/usr/bin/python3\n" + body, b"#!/bin/sh\necho hi\n", b"# activate\n", b"\x7fELF"):
        assert rewritten_script(other, "/v/bin", "/r") is None


def test_a_run_whose_own_environment_cannot_be_made_did_not_start(venv: tuple[Path, Path, Path, Path],
                                                                  tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's own environment is made in its output folder; where that fails (a full disk, here an ``OSError`` of
    the making), the run is one that did not start (exit status 127, its error naming why), as any other start
    failure: before, the ``OSError`` went out of :func:`run_tests` (the review of r40)."""
    env, _, _, copy = venv

    def refused(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(testrun, "own_environment", refused)
    out = tmp_path / "out"
    run = testrun.run_tests(copy, f"{env / 'bin' / 'python'} -m pytest", [], out_dir=out, sandbox="none",
                            timeout_s=60)
    assert run.exit_code == 127 and not run.finished, run
    assert run.error is not None and "No space left on device" in run.error, run.error


@pytest.mark.slow  # uv's python find and run, and pytest: about 5 s a case here
@pytest.mark.parametrize("uv_options", ["--no-project", "--active --no-sync"])
def test_a_uv_run_in_the_active_environment_runs_in_the_runs_own(venv: tuple[Path, Path, Path, Path],
                                                                  tmp_path: Path, uv_options: str) -> None:
    """ops56: ``uv run --no-project`` (or ``--active``) runs its program in ``VIRTUAL_ENV``'s environment; under
    ``--sandbox none`` the command was left as it was (its program is no Python), so a test's child started as
    ``sys.executable`` with its own ``PYTHONPATH`` imported the repository's ``hfsrc`` (HEAD's fix): measured,
    the child printed ``'repository'`` for both commands. Now the run's own environment is the active one uv runs
    in: the child imports the copy's, and the user's environment is not written."""
    import sysconfig
    env, site, _, copy = venv
    uv = uv_or_skip()
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # pytest, from this environment
    (copy / "tests").mkdir()
    (copy / "tests" / "test_child.py").write_text(
        "import subprocess, sys\n\n\ndef test_child():\n"
        "    out = subprocess.run([sys.executable, '-c', 'import hfsrc; print(hfsrc.WHERE)'], cwd='/',\n"
        "                         env={'PYTHONPATH': '/'}, capture_output=True, text=True, timeout=60)\n"
        "    assert out.stdout.strip() == 'copy', (out.stdout, out.stderr)\n")
    before = sorted((p.name, p.read_bytes()) for p in site.iterdir() if p.is_file())
    run_env = {"PATH": f"{os.path.dirname(uv)}{os.pathsep}/usr/bin{os.pathsep}/bin", "VIRTUAL_ENV": str(env)}
    run = testrun.run_tests(copy, f"uv run --offline {uv_options} python -m pytest", ["tests/test_child.py"],
                            out_dir=tmp_path / "out", sandbox="none", timeout_s=120, env=run_env)
    assert run.outcomes == {"tests/test_child.py::test_child": "passed"}, (run.error, run.log_path.read_text()[-2000:])
    assert sorted((p.name, p.read_bytes()) for p in site.iterdir() if p.is_file()) == before


def test_the_environments_data_files_are_under_the_runs_prefix(venv: tuple[Path, Path, Path, Path],
                                                               tmp_path: Path) -> None:
    """ops56: the run's own environment is the interpreter's ``sys.prefix``, so a project reading its data files
    under its environment's prefix (``sysconfig.get_path('data')``, ``sys.prefix + '/share/…'``, where a wheel's
    data scheme puts them) found none under ``--sandbox none`` (measured: ``FileNotFoundError``, passed under
    bubblewrap). Each other entry of the prefix is linked there now; the environment's own stay its own."""
    env, _, _, copy = venv
    (env / "share" / "hfdata").mkdir(parents=True)
    (env / "share" / "hfdata" / "x.txt").write_text("data\n")
    own = own_environment(str(env / "bin" / "python"), copy, tmp_path / "py")
    assert own is not None
    code = ("import json, os, sys, sysconfig\n"
            "print(json.dumps([sys.prefix, open(os.path.join(sysconfig.get_path('data'), 'share', 'hfdata',"
            " 'x.txt')).read()]))\n")
    assert _run(own.python, code) == [[str(tmp_path / "py"), "data\n"]]
    assert sorted(p.name for p in (tmp_path / "py").iterdir() if p.is_symlink()) == \
        sorted(p.name for p in env.iterdir() if p.name not in ("bin", "lib", "lib64", "pyvenv.cfg"))
    assert (tmp_path / "py" / "pyvenv.cfg").read_text() != (env / "pyvenv.cfg").read_text()
