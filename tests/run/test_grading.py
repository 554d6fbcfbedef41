"""run/grading.py on its own (contracts §7): what counts as a change, what is carried into grading,
the config-above check and :func:`grade` on the tiny real task of
:mod:`helpers.attack_repo` (tests/run/test_attacks.py drives the same through whole attempts)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import F2P, GOOD_CALC, P2P, PYPROJECT, WRONG_CALC, Fixture
from helpers.bwrap import skip_without_memory_cgroup_bwrap

from pytest_homefield.records import Task
from pytest_homefield.run.carried import SECTION_MAX_LINE, carried_changes, config_above
from pytest_homefield.run.grading import grade, render_diff, tree_changes
from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree, make_snapshot

CALC = "src/calc/__init__.py"


@pytest.fixture(scope="module")
def pristine(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_snapshot(fx.root, fx.c1, dest=tmp_path_factory.mktemp("pristine") / "s", init_git=True)


@pytest.fixture
def workspace(pristine: Path, tmp_path: Path) -> Path:
    return copy_tree(pristine, tmp_path / "work")


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


# -- tree_changes --------------------------------------------------------------------------------

def test_tree_changes_added_modified_deleted(pristine: Path, workspace: Path) -> None:
    assert tree_changes(pristine, workspace) == {}
    _write(workspace, CALC, GOOD_CALC)
    _write(workspace, "src/calc/extra.py", "X = 1\n")
    (workspace / "tests" / "test_add.py").unlink()
    assert tree_changes(pristine, workspace) == {
        CALC: "modified", "src/calc/extra.py": "added", "tests/test_add.py": "deleted"}


def test_tree_changes_ignore_git_and_caches(pristine: Path, workspace: Path) -> None:
    _write(workspace, ".git/HEAD2", "x")
    _write(workspace, "src/calc/__pycache__/m.cpython-311.pyc", "x")
    _write(workspace, "src/calc/stale.pyc", "x")
    _write(workspace, ".pytest_cache/v/x", "x")
    _write(workspace, "src/calc.egg-info/PKG-INFO", "x")
    assert tree_changes(pristine, workspace) == {}


def test_tree_changes_see_mode_and_symlink_targets(pristine: Path, workspace: Path) -> None:
    os.chmod(workspace / CALC, 0o755)
    os.symlink("calc/__init__.py", workspace / "src" / "link.py")
    assert tree_changes(pristine, workspace) == {CALC: "modified", "src/link.py": "added"}


# -- carried_changes -----------------------------------------------------------------------------

def _carry(task: Task, pristine: Path, workspace: Path, files: dict[str, str],
           globs: tuple[str, ...] = ()) -> tuple[list[str], list[str], bool]:
    for rel, text in files.items():
        _write(workspace, rel, text)
    return carried_changes(tree_changes(pristine, workspace), task, pristine, workspace, globs)


def test_source_is_carried_and_tests_are_dropped(task: Task, pristine: Path, workspace: Path) -> None:
    carried, dropped, touched = _carry(task, pristine, workspace, {
        CALC: GOOD_CALC, "tests/test_sub.py": "def test_sub(): pass\n", "tests/helpers.py": "X = 1\n"})
    assert carried == [CALC]
    assert sorted(dropped) == ["tests/helpers.py", "tests/test_sub.py"]
    assert touched


@pytest.mark.parametrize("rel", ["conftest.py", "src/conftest.py", "pytest.ini", "tox.ini", "sitecustomize.py",
                                 "src/usercustomize.py", "evil.pth", "src/x.dist-info/entry_points.txt",
                                 "pytest.py", "src/json.py", "sitecustomize/__init__.py",
                                 # importlib.metadata lower-cases names before matching (attacker8's F5)
                                 "zzhf.DIST-INFO/entry_points.txt", "src/y.Dist-Info/entry_points.txt"])
def test_blocked_entries_are_dropped(task: Task, pristine: Path, workspace: Path, rel: str) -> None:
    carried, dropped, _ = _carry(task, pristine, workspace, {CALC: GOOD_CALC, rel: "X = 1\n"})
    assert (carried, dropped) == ([CALC], [rel])


def _pth_imports() -> list[str]:
    """The modules an ``import`` line of a ``.pth`` file of this interpreter's site folders names (setuptools'
    editable finder ``__editable___<dist>_finder``, ``_distutils_hack``): the interpreter imports each at its start."""
    import site
    folders = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    found: set[str] = set()
    for folder in (f for f in folders if os.path.isdir(f)):
        for name in (n for n in os.listdir(folder) if n.endswith(".pth")):
            for line in Path(folder, name).read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith(("import ", "import\t")):
                    found.add(line.split()[1].rstrip(";").split(".")[0])
    return sorted(found)


def test_a_module_a_pth_file_imports_at_start_is_not_carried(task: Task, pristine: Path, workspace: Path) -> None:
    """gatk55: an added module shadowing one that a site folder's ``.pth`` file imports at every interpreter's start
    (setuptools' editable finder, ``__editable___<dist>_<version>_finder``: its distribution's ``top_level.txt``
    names the package only, so ``importlib.metadata.packages_distributions`` missed it) was carried: the test
    command's ``PYTHONPATH`` puts the copy's root and ``src/`` before the site folders, so the agent's module ran at
    the start of every interpreter of the run, before pytest and its reporter, as a ``sitecustomize.py`` would (a
    blocked name). Measured with this environment's editable install of homefield: ``carried`` held the finder's
    path. Now it is dropped as any other shadow of an outside module."""
    names = _pth_imports()
    assert any(n.startswith("__editable__") for n in names), names  # this environment: an editable install
    for name in names:
        for rel in (f"{name}.py", f"src/{name}/__init__.py"):
            carried, dropped, _ = _carry(task, pristine, workspace, {CALC: GOOD_CALC, rel: "X = 1\n"})
            assert (carried, dropped) == ([CALC], [rel]), name
            (workspace / rel).unlink()


def test_a_module_another_venvs_pth_file_imports_at_start_is_not_carried(task: Task, pristine: Path, workspace: Path,
                                                                          tmp_path: Path) -> None:
    """ops56: the test command runs another venv's Python (not homefield's), whose site folder holds setuptools'
    editable finder of the project (``__editable___hfother_0_1_finder``, imported by that venv's ``.pth`` at every
    interpreter's start). gatk55's rule read only homefield's interpreter's site folders, so an agent's
    ``__editable___hfother_0_1_finder.py`` at the copy's root was carried (measured: ``carried`` held it) and ran
    before pytest in every interpreter of the run. Now grading reads the site folders of the interpreter the command
    runs (``testrun.command_python``) too: dropped, so nothing is left to grade."""
    venv = tmp_path / "venv2"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    (site,) = venv.glob("lib/python*/site-packages")
    finder = "__editable___hfother_0_1_finder"
    (site / f"{finder}.py").write_text("MAPPING = {}\ndef install():\n    pass\n")
    (site / "__editable__.hfother-0.1.pth").write_text(f"import {finder}; {finder}.install()\n")
    rel = f"{finder}.py"
    _write(workspace, rel, "import sys; sys.stderr.write('ran first')\n")
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              test_cmd=f"{venv / 'bin' / 'python'} -m pytest")
    assert (g.carried, g.dropped, g.outcome) == ([], [rel], "empty_patch"), g


def test_a_module_the_fix_defines_may_shadow(task: Task, pristine: Path, workspace: Path) -> None:
    own = dataclasses.replace(task, source_files=[CALC, "src/json.py"])
    carried, dropped, _ = _carry(own, pristine, workspace, {"src/json.py": "X = 1\n"})
    assert (carried, dropped) == (["src/json.py"], [])


def test_pyproject_is_dropped_only_when_its_pytest_section_changes(task: Task, pristine: Path,
                                                                   workspace: Path) -> None:
    carried, dropped, _ = _carry(task, pristine, workspace, {"pyproject.toml": PYPROJECT + 'description = "x"\n'})
    assert (carried, dropped) == (["pyproject.toml"], [])
    carried, dropped, _ = _carry(task, pristine, workspace,
                                 {"pyproject.toml": PYPROJECT + "\n[tool.pytest.ini_options]\naddopts = '-x'\n"})
    assert (carried, dropped) == ([], ["pyproject.toml"])


def test_a_config_line_past_the_bounds_is_compared_not_parsed(task: Task, pristine: Path, workspace: Path) -> None:
    """atk11 R1's kind in carried_changes: configparser is quadratic in a line's length (main: an added
    setup.cfg with a 20,000-character line took 2.6 s of CPU on the host, 40,000 took 11 s)."""
    start = time.process_time()
    carried, dropped, _ = _carry(task, pristine, workspace, {"setup.cfg": "[tool:pytest]\nx" + " " * 20_000 + "y\n"})
    assert time.process_time() - start < 1.0
    assert (carried, dropped) == ([], ["setup.cfg"])
    long_ok = PYPROJECT + 'description = "' + "d" * (SECTION_MAX_LINE + 1) + '"\n'  # no pytest section, but long
    carried, dropped, _ = _carry(task, pristine, workspace, {"pyproject.toml": long_ok})
    assert (carried, dropped) == ([], ["pyproject.toml", "setup.cfg"])  # compared whole: any change counts


def test_escaping_symlink_is_dropped(task: Task, pristine: Path, workspace: Path) -> None:
    os.symlink("../../../etc/passwd", workspace / "src" / "data.txt")
    os.symlink("/etc/hostname", workspace / "src" / "abs.txt")
    carried, dropped, _ = carried_changes(tree_changes(pristine, workspace), task, pristine, workspace)
    assert (carried, sorted(dropped)) == ([], ["src/abs.txt", "src/data.txt"])


def test_a_chain_of_links_leading_out_is_dropped(task: Task, pristine: Path, workspace: Path) -> None:
    """Each link read alone stays inside (``here -> .``; ``out -> here/..`` reads as ``.``), but the second
    resolves through the first to the folder above the tree: resolved through the tree's own links, it
    is dropped."""
    os.symlink(".", workspace / "src" / "here")
    os.symlink("here/../..", workspace / "src" / "out")
    os.symlink("here/calc/__init__.py", workspace / "src" / "calc.py")
    carried, dropped, _ = carried_changes(tree_changes(pristine, workspace), task, pristine, workspace)
    assert (carried, dropped) == (["src/calc.py", "src/here"], ["src/out"])


def test_an_entry_replacing_a_hidden_test_folder_counts_as_touching(task: Task, pristine: Path,
                                                                     workspace: Path) -> None:
    hidden = dataclasses.replace(task, test_files=["checks/test_sub.py"])
    carried, dropped, touched = _carry(hidden, pristine, workspace, {"checks": "not a folder\n"})
    assert (carried, dropped, touched) == ([], ["checks"], True)


def test_test_globs_mark_more_tests(task: Task, pristine: Path, workspace: Path) -> None:
    carried, dropped, touched = _carry(task, pristine, workspace, {"qa/check.py": "X = 1\n"}, ("qa/",))
    assert (carried, dropped, touched) == ([], ["qa/check.py"], True)


# -- config_above, render_diff ------------------------------------------------------------------

def test_config_above(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b" / "copy"
    inner.mkdir(parents=True)

    def found() -> Path | None:
        hit = config_above(inner)
        return hit if hit is not None and hit.is_relative_to(tmp_path.resolve()) else None

    assert found() is None
    (tmp_path / "a" / "tox.ini").write_text("[tox]\nenvlist = py\n")
    (tmp_path / "a" / "setup.cfg").write_text("[metadata]\nname = x\n")
    assert found() is None  # no pytest section: pytest does not read them
    (tmp_path / "a" / "tox.ini").write_text("[pytest]\naddopts = -p evil\n")
    assert found() == (tmp_path / "a" / "tox.ini").resolve()
    (tmp_path / "a" / "b" / "conftest.py").write_text("")
    assert found() == (tmp_path / "a" / "b" / "conftest.py").resolve()  # the nearest folder first


#: twin43: files above a copy that ``config_above`` read by its own rule (any ``tool.pytest*`` table, ``[pytest]`` or
#: ``[tool:pytest]`` in any ini file, a link never) → whether pytest reads it as its configuration.
K = "-k nosuchtest"  # an option whose effect pytest's output shows (the test deselected)
ABOVE: dict[str, tuple[str, str, bool]] = {
    "pyproject other tool.pytest table": ("pyproject.toml", f"[tool.pytest_cov]\naddopts = '{K}'\n", False),
    "pyproject empty tool.pytest": ("pyproject.toml", "[tool.pytest]\n", False),
    "tox.ini tool:pytest": ("tox.ini", f"[tool:pytest]\naddopts = {K}\n", False),
    "linked setup.cfg": ("setup.cfg", f"@[tool:pytest]\naddopts = {K}\n", True),
    "linked pyproject": ("pyproject.toml", f"@[tool.pytest.ini_options]\naddopts = '{K}'\n", True),
    "pyproject ini_options": ("pyproject.toml", f"[tool.pytest.ini_options]\naddopts = '{K}'\n", True),
}


@pytest.mark.parametrize("case", sorted(ABOVE))
def test_config_above_reads_as_pytest_does(tmp_path: Path, case: str) -> None:
    """Each file above a copy is reported exactly when real pytest, run in the copy (no configuration of its own),
    reads its options from it (:data:`K`); ``@`` marks a file linked to one elsewhere holding the text (pytest follows
    the link). Before (twin43): the three files pytest passes by were reported (a grading refused for nothing) and
    the two links passed by (pytest read them)."""
    name, text, read = ABOVE[case]
    top = tmp_path / "top"
    copy = top / "copy"
    (copy / "tests").mkdir(parents=True)
    (copy / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    if text.startswith("@"):
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / name).write_text(text[1:])
        (top / name).symlink_to(tmp_path / "real" / name)
    else:
        (top / name).write_text(text)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run([sys.executable, "-m", "pytest", "--co", "-p", "no:cacheprovider", "tests"], cwd=copy,
                         capture_output=True, text=True, timeout=60, env=env).stdout
    assert ("1 deselected" in out) == read, out
    assert (config_above(copy) == top.resolve() / name) == read


def test_render_diff_names_paths_relative(pristine: Path, workspace: Path) -> None:
    _write(workspace, CALC, GOOD_CALC)
    _write(workspace, "src/calc/new.py", "N = 1\n")
    (workspace / "tests" / "test_add.py").unlink()
    changes = tree_changes(pristine, workspace)
    diff = render_diff(pristine, workspace, sorted(changes), changes)
    assert f"diff --git a/{CALC} b/{CALC}\n" in diff
    assert "+def sub(a, b):\n" in diff
    assert "diff --git a/src/calc/new.py b/src/calc/new.py\nnew file mode" in diff
    assert "diff --git a/tests/test_add.py b/tests/test_add.py\ndeleted file mode" in diff
    assert str(pristine) not in diff and str(workspace) not in diff


def test_render_diff_takes_no_git_configuration_from_around_it(pristine: Path, workspace: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """attacker9's F1, the diff side: a git repository above the temp folder (an agent under ``--sandbox
    none`` can make ``/tmp/.git``) whose config names an external diff program must not run it."""
    import subprocess
    import tempfile

    marker = tmp_path / "ext-diff-ran"
    above = tmp_path / "tmp"
    above.mkdir()
    subprocess.run(["git", "init", "-q", str(above)], check=True)
    subprocess.run(["git", "-C", str(above), "config", "diff.external", f"sh -c 'touch {marker}'"], check=True)
    monkeypatch.setattr(tempfile, "tempdir", str(above))
    _write(workspace, CALC, GOOD_CALC)
    changes = tree_changes(pristine, workspace)
    assert "+def sub(a, b):\n" in render_diff(pristine, workspace, sorted(changes), changes)
    assert not marker.exists()


def test_render_diff_is_one_git_process_however_many_files(pristine: Path, workspace: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Attacker8's F6: one ``git diff`` per path made an attempt that left 20,000 empty files take 9 min
    48 s instead of ~5 s (about 8 hours at a million). One process compares every path."""
    import subprocess

    from pytest_homefield.run import changes as changes_module

    for k in range(300):
        (workspace / f"empty-{k}.txt").write_bytes(b"")
    calls: list[object] = []
    real = subprocess.Popen

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(changes_module.subprocess, "Popen", counting)
    changes = tree_changes(pristine, workspace)
    diff = render_diff(pristine, workspace, sorted(changes), changes)
    assert len(calls) == 1 and diff.count("diff --git a/empty-") == 300, len(calls)
    assert "diff --git a/empty-7.txt b/empty-7.txt\nnew file mode" in diff


# -- grade on the real snapshot ------------------------------------------------------------------

@pytest.mark.slow
def test_grade_outcomes(task: Task, pristine: Path, tmp_path: Path) -> None:
    broken_add = GOOD_CALC.replace("return a + b", "return a + b + 1")
    cases = {
        "solved": (GOOD_CALC, None),
        "tests_failed": (WRONG_CALC, f"{len(F2P)}/{len(F2P)} FAIL_TO_PASS did not pass"),
        "regression": (broken_add, f"{len(P2P)}/{len(P2P)} PASS_TO_PASS broke"),
        "empty_patch": (None, None),
    }
    for expected, (calc, error) in cases.items():
        work = copy_tree(pristine, tmp_path / expected / "work")
        if calc is not None:
            _write(work, CALC, calc)
        out = tmp_path / expected / "out"
        g = grade(task, workspace=work, pristine=pristine, out_dir=out, run_timeout_s=120)
        log = (out / "tests.log").read_text()[-2000:] if (out / "tests.log").exists() else ""
        assert (g.outcome, g.error) == (expected, error), log
        assert (out / "diff.patch").exists()
        assert g.carried == ([CALC] if calc is not None else [])


@pytest.mark.slow
def test_a_change_that_fixes_nothing_and_breaks_existing_tests_says_both(task: Task, pristine: Path,
                                                                         tmp_path: Path) -> None:
    """Issue 35: ``tests_failed`` with PASS_TO_PASS ids failing too names them, so the report tells "broke
    existing tests" from "did not fix" (:func:`pytest_homefield.report.kinds.failure_kind`)."""
    work = copy_tree(pristine, tmp_path / "work")
    _write(work, CALC, WRONG_CALC.replace("return a + b", "return a + b + 1", 1))  # add broken, sub wrong
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert (g.outcome, g.error) == ("tests_failed", f"{len(F2P)}/{len(F2P)} FAIL_TO_PASS did not pass; "
                                                    f"{len(P2P)}/{len(P2P)} PASS_TO_PASS broke")


@pytest.mark.slow
def test_flaky_pass_to_pass_ids_are_left_out_of_the_regression_check(task: Task, pristine: Path,
                                                                     tmp_path: Path) -> None:
    work = copy_tree(pristine, tmp_path / "work")
    _write(work, CALC, GOOD_CALC.replace("return a + b", "return a + b + 1"))  # breaks every PASS_TO_PASS id
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120, flaky=set(P2P))
    assert (g.outcome, g.failing_p2p) == ("solved", [])


def test_grade_hidden_tests_that_do_not_apply_is_infra(task: Task, pristine: Path, tmp_path: Path) -> None:
    # a pristine tree that already holds the hidden test file: the test patch (a new file) cannot apply
    blocked = copy_tree(pristine, tmp_path / "pristine")
    _write(blocked, "tests/test_sub.py", "in the way\n")
    work = copy_tree(blocked, tmp_path / "work")
    _write(work, CALC, GOOD_CALC)
    g = grade(task, workspace=work, pristine=blocked, out_dir=tmp_path / "out")
    assert g.outcome == "infra"
    assert g.error is not None and g.error.startswith("hidden tests could not be applied: ")


#: A hidden test file beside the code (a path no folder name marks as a test) and its own test ids.
BESIDE = "src/calc/test_sub.py"
BESIDE_TEST = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"


def _beside(task: Task) -> Task:
    """``task`` with its hidden test file new in the commit at :data:`BESIDE`."""
    return dataclasses.replace(task, test_files=[BESIDE], test_patch=_new_file_patch(BESIDE, BESIDE_TEST),
                               FAIL_TO_PASS=[f"{BESIDE}::test_sub"], PASS_TO_PASS=[], canaries=None)


@pytest.mark.slow
def test_a_folder_planted_at_a_hidden_test_files_path_is_dropped_not_infra(task: Task, pristine: Path,
                                                                          workspace: Path, tmp_path: Path) -> None:
    """atk20 F1. Measured on main: a wrong fix plus a folder at the path where the hidden test patch writes
    a new file (``src/calc/test_sub.py/__init__.py``: "source", carried) kept the patch from applying, and
    the attempt was ``infra``, unscored and, as homefield's own fault, never retried: the attempts an
    agent guessed to fail (names of hidden test files are guessable) dropped out of its pass@1."""
    beside = _beside(task)
    _write(workspace, CALC, WRONG_CALC)
    _write(workspace, f"{BESIDE}/__init__.py", "")
    carried, dropped, touched = carried_changes(tree_changes(pristine, workspace), beside, pristine, workspace)
    assert (carried, dropped, touched) == ([CALC], [f"{BESIDE}/__init__.py"], True)
    g = grade(beside, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert (g.outcome, g.error) == ("tests_failed", "1/1 FAIL_TO_PASS did not pass"), g


def test_hidden_tests_the_change_keeps_out_are_its_failure_not_infra(task: Task, pristine: Path, workspace: Path,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever carried entry keeps the hidden tests from applying (here the carry rules are bypassed to
    plant one), the same patch applies to the untouched parent: the change's fault, ``tests_failed``
    (scored), never ``infra``. A parent they do not apply to stays ``infra``
    (:func:`test_grade_hidden_tests_that_do_not_apply_is_infra`)."""
    import pytest_homefield.run.grading as grading

    beside = _beside(task)
    _write(workspace, CALC, GOOD_CALC)
    _write(workspace, f"{BESIDE}/__init__.py", "")
    monkeypatch.setattr(grading, "carried_changes", lambda changes, *a, **k: (sorted(changes), [], False))
    g = grade(beside, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "tests_failed" and g.failing_f2p == beside.FAIL_TO_PASS, g
    assert g.error is not None and g.error.startswith(
        "the hidden tests could not be applied with this change (they apply to the parent): "), g.error


def test_only_test_changes_are_an_empty_patch(task: Task, pristine: Path, workspace: Path, tmp_path: Path) -> None:
    _write(workspace, "tests/test_sub.py", "def test_sub():\n    pass\n")
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out")
    assert (g.outcome, g.touched_tests, g.carried, g.dropped) == ("empty_patch", True, [], ["tests/test_sub.py"])
    assert "tests/test_sub.py" in (tmp_path / "out" / "diff.patch").read_text()  # kept for auditing


# -- the agent's links are never followed (issue 30) --------------------------------------------

def _host_folder(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A host folder an agent might link to, and its content: a ``null`` file too, which ``git diff
    --no-index /dev/null LINK`` reads when LINK is a link to a folder."""
    host = tmp_path / "host"
    host.mkdir()
    for name, text in (("__init__.py", "SECRET = 'host-secret-1'\n"), ("null", "host-secret-2\n")):
        (host / name).write_text(text)
    return host, {p.name: p.read_bytes() for p in host.iterdir()}


def _swap_for_link(folder: Path, target: Path) -> None:
    for p in sorted(folder.rglob("*"), reverse=True):
        p.unlink() if not p.is_dir() or p.is_symlink() else p.rmdir()
    folder.rmdir()
    folder.symlink_to(target)


@pytest.mark.slow
def test_a_folder_swapped_for_a_link_to_a_host_folder_is_graded_without_reading_or_writing_it(
        task: Task, pristine: Path, workspace: Path, tmp_path: Path) -> None:
    host, content = _host_folder(tmp_path)
    _swap_for_link(workspace / "src" / "calc", host)
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    diff = (tmp_path / "out" / "diff.patch").read_text()
    assert "host-secret" not in diff
    assert "diff --git a/src/calc b/src/calc\nnew file mode 120000" in diff  # the link, as a link
    assert "src/calc" in g.dropped and g.outcome == "tests_failed"  # its old files are gone: scored, not infra
    assert {p.name: p.read_bytes() for p in host.iterdir()} == content


def test_a_folder_swapped_for_a_link_after_the_walk_is_never_followed(pristine: Path, workspace: Path,
                                                                      tmp_path: Path) -> None:
    """TOCTOU: the change is listed, then (an agent's process still running) its folder becomes a link to a
    host folder: the diff reads nothing there, and nothing is copied from or deleted in it."""
    from pytest_homefield.run.changes import apply_change

    host, content = _host_folder(tmp_path)
    _write(workspace, CALC, GOOD_CALC)
    changes = tree_changes(pristine, workspace)
    assert changes == {CALC: "modified"}
    _swap_for_link(workspace / "src" / "calc", host)
    assert "host-secret" not in render_diff(pristine, workspace, list(changes), changes)
    gdir = copy_tree(pristine, tmp_path / "g")
    assert apply_change(workspace, gdir, CALC, "modified") is False
    assert (gdir / CALC).read_bytes() == (pristine / CALC).read_bytes()
    _swap_for_link(gdir / "src" / "calc", host)  # a link in the grading copy: a deletion stops there
    assert apply_change(workspace, gdir, CALC, "deleted") is False
    assert {p.name: p.read_bytes() for p in host.iterdir()} == content


def test_a_folder_flipping_to_a_link_and_back_while_the_host_reads_reads_nothing_outside(
        pristine: Path, workspace: Path, tmp_path: Path) -> None:
    """TOCTOU, live: a thread (an agent's process left running) flips ``src/calc`` between the agent's
    folder and a link to a host folder while the change is walked, diffed and carried, for about a
    second: no walk fails, no diff holds the host's text, the grading copy gets none of it, and the
    host folder is unchanged."""
    import threading
    import time

    from pytest_homefield.run.changes import apply_change

    host, content = _host_folder(tmp_path)
    calc = workspace / "src" / "calc"
    _write(workspace, CALC, GOOD_CALC)
    aside, link = workspace / "src" / "calc.dir", workspace / "src" / "calc.link"
    link.symlink_to(host)
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            calc.rename(aside)
            link.rename(calc)
            calc.rename(link)
            aside.rename(calc)

    gdir = copy_tree(pristine, tmp_path / "g")
    flipper = threading.Thread(target=flip)
    flipper.start()
    rounds = 0
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline or rounds < 3:
            changes = tree_changes(pristine, workspace)
            assert "host-secret" not in render_diff(pristine, workspace, list(changes), changes)
            for rel, change in changes.items():
                if not rel.startswith("src/calc."):
                    apply_change(workspace, gdir, rel, change)
            rounds += 1
    finally:
        stop.set()
        flipper.join()
    assert not any(b"host-secret" in p.read_bytes() for p in gdir.rglob("*") if p.is_file() and not p.is_symlink())
    assert {p.name: p.read_bytes() for p in host.iterdir()} == content


@pytest.mark.slow
def test_a_link_the_hidden_tests_plant_in_the_output_folder_is_not_read(task: Task, pristine: Path, workspace: Path,
                                                                         tmp_path: Path) -> None:
    """The agent's code, imported by the hidden tests in the sandbox, replaces the run's ``tests.log`` (its
    output folder is read-write) by a link to a host file and stops before any test: the host's look
    for pytest's last error line in the log must not read that file into the result's error."""
    from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe

    try:
        probe()
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    secret = tmp_path / "host.txt"
    secret.write_text("ERROR: host-secret-3 outside every sandbox\n")
    # the writable folder is found from pytest's -o cache_dir=... (no outcome path is in the environment)
    payload = ("import os, sys\n_c = [a for a in sys.argv if a.startswith('cache_dir=')]\nif _c:\n"
               "    _log = os.path.join(os.path.dirname(_c[0].split('=', 1)[1]), 'tests.log')\n"
               f"    os.unlink(_log); os.symlink({str(secret)!r}, _log); os._exit(3)\n")
    _write(workspace, CALC, payload + GOOD_CALC)
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", sandbox="bwrap",
              run_timeout_s=120)
    assert g.outcome == "tests_failed" and "host-secret" not in (g.error or ""), g.error


#: Imported by the hidden tests: ends the reported session at once (a ``finish`` on every write-only pipe
#: of the process, the outcome channel among them), so no test outcome is ever reported.
SILENCE = '''import fcntl, json, os
for _n in os.listdir("/proc/self/fd"):
    try:
        _fd = int(_n)
        if _fd > 2 and os.readlink("/proc/self/fd/" + _n).startswith("pipe:") \\
                and fcntl.fcntl(_fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            os.write(_fd, (json.dumps({"event": "finish", "exitstatus": 0, "pid": os.getpid()}) + "\\n").encode())
    except (OSError, ValueError):
        pass
'''


@pytest.mark.slow
def test_silencing_the_reporter_is_the_changes_failure_not_infra(task: Task, pristine: Path, workspace: Path,
                                                                  tmp_path: Path) -> None:
    """Issue 30 (found by the attacker): an agent that ends the reported session before any test, on the
    attempts it cannot solve, made them ``infra`` — unscored, retried for ever. The untouched parent
    reports its tests, so the silence is the change's: ``tests_failed``, scored."""
    _write(workspace, CALC, SILENCE + WRONG_CALC)
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "tests_failed", g.error
    assert "untouched parent" in (g.error or "") and g.failing_f2p == list(task.FAIL_TO_PASS)


#: The parent of a task that fixes a hang: its ``sub`` never returns (burning no CPU).
HANGING_SUB = "def sub(a, b):\n    import time\n    while True:\n        time.sleep(0.05)\n"
#: The parent of a task that fixes a crash: its ``sub`` ends the test process (mined, its first row is a
#: FAIL_TO_PASS ``error``: the test the parent's run died in; the rows it never reached are ``unfinished``).
CRASHING_SUB = "def sub(a, b):\n    import os\n    os.abort()\n"
#: Imported by the hidden tests: the test process ends at once, before any test (no ``finish`` event).
EXIT_AT_IMPORT = "import os as _o\n_o._exit(0)\n"


@pytest.mark.slow
@pytest.mark.parametrize("parent_sub, payload, said", [
    pytest.param(HANGING_SUB, EXIT_AT_IMPORT, "hangs there as mined", id="hang-exit-at-import"),
    pytest.param(HANGING_SUB, SILENCE, "hangs there as mined", id="hang-reporter-silenced"),
    pytest.param(CRASHING_SUB, EXIT_AT_IMPORT, "ended on the way too", id="crash-exit-at-import"),
    pytest.param(CRASHING_SUB, "", "ended on the way too", id="crash-honest-wrong-fix"),
])
def test_a_change_that_stops_the_tests_of_a_task_whose_parent_stops_them_is_scored(
        task: Task, pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parent_sub: str, payload: str,
        said: str) -> None:
    """atk30: on a task mined from a commit that fixes a hang (``verify.parent_bound``) or a crash of the test
    process, a change whose code ended the test process at import, or the reported session before any test
    (or an honest wrong fix that crashes as the parent does) sent grading to its control run on the untouched
    parent, which hangs or dies there as mining saw it: ``infra`` (unscored, never redone once its retries
    were spent), so an agent could keep every failed attempt of such a task out of its score. The control
    judges the environment: the parent's run stopped at the task's bound, or ended by the parent's own code
    after its tests ran, is the task's bug; the attempt is ``tests_failed``."""
    from pytest_homefield.run import hang_bound

    # the floor is 30 s; 4 s keeps the test short and still lets the change's own runs end on a loaded machine
    monkeypatch.setattr(hang_bound, "HANG_FLOOR_S", 4.0)
    if parent_sub is HANGING_SUB:
        mined = dataclasses.replace(task, verify={"stability_runs": 1, "parent_s": 60.0, "commit_s": 0.2,
                                                  "parent_bound": "parent run 1 stopped at 60 s, past the bound"})
    else:  # the rows after the crash never ran at the parent: unfinished, in neither list
        mined = dataclasses.replace(task, FAIL_TO_PASS=[F2P[0]], PASS_TO_PASS=[])
    parent = copy_tree(pristine, tmp_path / "parent")
    _write(parent, CALC, (parent / CALC).read_text() + "\n\n" + parent_sub)
    work = copy_tree(parent, tmp_path / "work")
    _write(work, CALC, payload + (WRONG_CALC if payload else (parent / CALC).read_text() + "# tried\n"))
    g = grade(mined, workspace=work, pristine=parent, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "tests_failed", g.error
    assert g.error is not None and said in g.error and g.failing_f2p == list(mined.FAIL_TO_PASS), g.error


@pytest.mark.slow
def test_a_folder_planted_where_the_canaries_record_goes_is_tampering_not_infra(task: Task, pristine: Path,
                                                                                  workspace: Path,
                                                                                  tmp_path: Path) -> None:
    """Issue 30 (found by the attacker): the hidden tests' process put a folder at ``canaries.json`` in its
    output folder, so the host's write failed and grading crashed to ``infra`` (unscored). The name did not
    exist before the tests ran. Since every test run writes a private folder (the attempt's folder is out
    of its reach), the planted folder is the process's own: the attempt is graded as any other.
    Should the host's write fail anyway, the attempt is ``forged`` (scored), never ``infra``."""
    payload = ("import os, sys\n_c = [a.split('=', 1)[1] for a in sys.argv if a.startswith('cache_dir=')]\n"
               "if _c:\n    os.makedirs(os.path.join(os.path.dirname(_c[0]), 'canaries.json', 'x'), exist_ok=True)\n")
    _write(workspace, CALC, payload + WRONG_CALC)
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "tests_failed", (g.outcome, g.error)
    assert (tmp_path / "out" / "canaries.json").is_file()


# -- a task mined before canaries ------------------------------------------------------------------

#: A test the reference fix passes before it reaches its assertion: the rewrite of that assertion (the
#: canary) is passed by the real fix too. Mining's check would have made it a sentinel (the task's
#: ``canary_sentinels``); a task mined before canaries never had that check.
EARLY_RETURN = ("from calc import sub\n\n\ndef test_sub():\n    if sub(3, 1) == 2:\n        return\n"
                "    assert sub(3, 1) == 2\n\n\ndef test_add_still_works():\n    from calc import add\n"
                "    assert add(2, 2) == 4\n")


def _new_file_patch(rel: str, text: str) -> str:
    lines = text.splitlines()
    return (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))


@pytest.mark.slow
def test_a_task_mined_before_canaries_checks_a_passing_twin_against_the_reference(
        task: Task, pristine: Path, workspace: Path, tmp_path: Path) -> None:
    """``Task.canaries`` null: the rewrites were never checked against the reference fix. They are planted
    all the same (sentinels alone are told apart by their shape, attacker8's F1); this real fix passes
    the unchecked rewrite, and so do the reference fix's runs of the same twins, so it is excused:
    ``solved``, not ``forged``."""
    early = dataclasses.replace(task, test_patch=_new_file_patch("tests/test_sub.py", EARLY_RETURN),
                                FAIL_TO_PASS=["tests/test_sub.py::test_sub"], canaries=None, canary_sentinels=[])
    _write(workspace, CALC, GOOD_CALC + "# not the reference fix byte for byte: canaries are planted\n")
    g = grade(early, workspace=workspace, pristine=pristine, out_dir=tmp_path / "old", canary_seed=5)
    assert g.outcome == "solved" and g.canaries == 3, g  # a twin and the two teardown canaries (tcan50, can52)
    planted = json.loads((tmp_path / "old" / "canaries.json").read_text())["canaries"]
    assert [c["kind"] for c in planted] == ["contradiction", "teardown", "teardown"], planted
    # the same task as if its rewrite had been checked: the rewrite is planted, and this fix passes it
    checked = dataclasses.replace(early, canaries=1)
    g = grade(checked, workspace=workspace, pristine=pristine, out_dir=tmp_path / "new", canary_seed=5)
    assert g.outcome == "forged", g


#: A test expecting a custom exception, and a reference fix whose exception is a ``ValueError``: a twin
#: expecting ``ValueError`` instead (drawn per seed) is passed by the real fix too.
RAISES_TEST = ("import pytest\n\nimport calc\n\n\ndef test_sub():\n    with pytest.raises(calc.BadInput):\n"
               "        calc.sub('a', 1)\n\n\ndef test_add_still_works():\n    assert calc.add(2, 2) == 4\n")
LOOKUP = "\n\ndef lookup(d, k):\n    if k not in d:\n        raise KeyError(k)\n    return d[k]\n"
RAISES_CALC = ("def add(a, b):\n    return a + b\n\n\nclass BadInput(ValueError):\n    pass\n\n\n"
               "def sub(a, b):\n    if not isinstance(a, int):\n        raise BadInput(a)\n    return a - b\n")


@pytest.mark.slow
def test_a_twin_expecting_a_base_of_the_raised_exception_is_excused(task: Task, pristine: Path, tmp_path: Path) -> None:
    """The twin of an expected exception names another one the parent's code raises by name, drawn per
    seed (attacker8's F4: an unwrapped ``raises`` was told apart by its shape), one the parent raises not, as
    it raises not the original's (xatk32). Mining's check covers one seed only, and a real fix raising
    ``BadInput(ValueError)``, a class new in the commit, passes a twin expecting ``ValueError``: such a twin
    that passed is checked against the reference fix, which passes it too, so the honest fix is ``solved``,
    not forged."""
    from pytest_homefield.sandbox.canary_parent import ParentText
    from pytest_homefield.sandbox.twin_runs import plan_twins

    parent = copy_tree(pristine, tmp_path / "parent")
    _write(parent, CALC, (pristine / CALC).read_text() + LOOKUP)
    workspace = copy_tree(parent, tmp_path / "work")
    gold = "diff --git a/src/calc/__init__.py b/src/calc/__init__.py\n" + "".join(difflib.unified_diff(
        (parent / CALC).read_text().splitlines(True), (RAISES_CALC + LOOKUP).splitlines(True),
        "a/" + CALC, "b/" + CALC))
    raises = dataclasses.replace(task, test_patch=_new_file_patch("tests/test_sub.py", RAISES_TEST), gold_patch=gold,
                                 FAIL_TO_PASS=["tests/test_sub.py::test_sub"], canaries=1, canary_sentinels=[])
    tree = copy_tree(parent, tmp_path / "plan")
    apply_patch(tree, raises.test_patch)
    seed = next(s for s in range(200) if plan_twins(tree, raises.FAIL_TO_PASS, seed=s, parent_text=ParentText(parent))
                .canaries[0].how.endswith("-> ValueError"))
    _write(workspace, CALC, RAISES_CALC + LOOKUP + "# the reference fix, a comment more\n")
    g = grade(raises, workspace=workspace, pristine=parent, out_dir=tmp_path / "out", canary_seed=seed)
    assert g.outcome == "solved" and g.canary is None, g
    twins = {e["nodeid"]: e["outcome"] for e in map(json.loads, (tmp_path / "out" / "outcomes.jsonl").read_text()
                                                     .splitlines()) if e.get("event") == "phase"
             and e["when"] == "call" and "@twin" in e["nodeid"]}
    assert set(twins.values()) == {"passed"}, twins  # it did pass: excused by the reference check


@pytest.mark.slow
def test_an_original_that_failed_does_not_stop_the_runs(task: Task, pristine: Path, workspace: Path,
                                                        tmp_path: Path) -> None:
    """The twins run apart in two runs of the hidden test files (sandbox/twin_runs.py). A FAIL_TO_PASS
    original failing in the first does not spare the second: only grading knows it failed, and a test
    process that can tell the runs apart would learn from a second run being made that the first held
    only twins (fail everything in the first run, pass everything in the second: solved, never caught;
    the attacker's A1 of this round). The seed is one whose first run holds the original."""
    from pytest_homefield.sandbox.twin_runs import plan_twins

    tree = copy_tree(pristine, tmp_path / "plan")
    apply_patch(tree, task.test_patch)
    from pytest_homefield.run.twin_grading import twin_options

    seed = next(s for s in range(64) if plan_twins(tree, F2P, seed=s, **twin_options(task))
                .placement["tests/test_sub.py::test_sub"][0] == 0)
    _write(workspace, CALC, WRONG_CALC)
    g = grade(task, workspace=workspace, pristine=pristine, out_dir=tmp_path / "out", canary_seed=seed)
    assert (g.outcome, g.error) == ("tests_failed", f"{len(F2P)}/{len(F2P)} FAIL_TO_PASS did not pass"), g
    assert sorted(p.name for p in (tmp_path / "out").glob("twin-*.log")) == ["twin-1.log", "twin-2.log"]
    log = (tmp_path / "out" / "tests.log").read_text()
    assert "===== homefield: test run 1 of 2" in log and "===== homefield: test run 2 of 2" in log, log[:300]
    assert json.loads((tmp_path / "out" / "canaries.json").read_text())["placement"] == {
        "tests/test_sub.py::test_sub": [0, 1]}


def test_twin_options_honour_what_mining_checked(task: Task) -> None:
    """A task mined before canaries (``canaries`` null) gets contradiction twins (checked against the
    reference fix when one passes); one mined at verification
    version 4 (``canary_order`` null) had its canaries checked on its first 10 functions only: that
    limit, the first in sorted order; later ones the task's ``canary_sentinels`` and the current limit (512: past
    it a subset drawn per seed). Plain options, no test run."""
    from pytest_homefield.run.twin_grading import twin_options

    assert twin_options(dataclasses.replace(task, canaries=None)) == {}  # contradictions, checked when one passes
    v4 = dataclasses.replace(task, canaries=3, canary_sentinels=["a.py::t"], canary_order=None)
    assert twin_options(v4) == {"sentinel_for": ["a.py::t"], "limit": 10, "first": True}
    v7 = dataclasses.replace(task, canaries=3, canary_sentinels=[], canary_order={})
    assert twin_options(v7) == {"sentinel_for": [], "limit": 512}


@pytest.mark.slow
def test_a_wrong_fix_of_a_task_whose_parent_hangs_stops_at_the_tasks_bound(
        task: Task, pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task mined from a commit that fixes a hang (``verify.parent_bound``): a change that hangs as the
    parent did is stopped at the task's bound (5× its commit's recorded seconds, at least the floor), not at
    ``run_timeout``, and is ``test_timeout`` (scored), never ``infra``. Other tasks keep the run timeout."""
    from pytest_homefield.run import hang_bound

    monkeypatch.setattr(hang_bound, "HANG_FLOOR_S", 2.0)  # the floor is 30 s; 2 s keeps the test short
    hangs = dataclasses.replace(task, verify={"stability_runs": 1, "parent_s": 60.0, "commit_s": 0.2,
                                              "parent_bound": "parent run 1 stopped at 60 s, past the bound"})
    bound = hang_bound.grading_bound(hangs, 120)
    assert bound.seconds == 2.0 and "the task's bound of 2 s (5× the 0.2 s" in bound.why
    assert hang_bound.grading_bound(task, 120).seconds == 120  # no parent_bound: the run timeout
    assert hang_bound.grading_bound(dataclasses.replace(hangs, verify={**hangs.verify, "commit_s": 30}),
                                    120).seconds == 120  # never above it
    work = copy_tree(pristine, tmp_path / "work")
    hang = "def sub(a, b):\n    import time\n    while True:\n        time.sleep(0.05)"  # hangs, burning no CPU
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", hang))
    g = grade(hangs, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120)
    assert g.outcome == "test_timeout" and g.error is not None and "the task's bound of 2 s" in g.error, g.error
    assert g.test_s is not None and g.test_s < 20


@pytest.mark.slow
def test_a_change_that_grows_past_the_memory_cap_fails_and_says_why(task: Task, pristine: Path,
                                                                    tmp_path: Path) -> None:
    """``max_test_memory_mb``: a change that grows a list without limit fails its tests (MemoryError) at
    the cap instead of taking the machine's memory, and the grade's error names the cap (bubblewrap's
    test run inherits the cap, RLIMIT_AS set by the reaper)."""
    work = copy_tree(pristine, tmp_path / "work")
    grow = "def sub(a, b):\n    held = []\n    while True:\n        held.append(bytearray(2**25))"
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", grow))
    try:
        probe()
        sandbox = "bwrap"  # the cap holds inside bubblewrap too
    except BwrapUnavailable:
        sandbox = "none"
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120, memory_mb=160,
              sandbox=sandbox)
    assert g.outcome == "tests_failed" and g.test_sandbox == sandbox, g.error
    assert g.error == (f"{len(F2P)}/{len(F2P)} FAIL_TO_PASS did not pass; a test process went over the memory cap "
                       "of 160 MiB (max_test_memory_mb)")


@pytest.mark.slow
def test_a_change_that_holds_memory_outside_its_address_space_is_killed_inside_its_sandbox(
        task: Task, pristine: Path, tmp_path: Path) -> None:
    """atk20's F3: memory held in memfd files is no address space, so ``RLIMIT_AS`` never saw it (5000 MiB past a
    4096 MiB cap), and the OOM killer could pick homefield's own worker (``infra``). The test run's memory cgroup
    holds it: the kernel kills the test process inside, and the grade of this right fix that holds 600 MiB is
    ``tests_failed`` naming the cap. Before: ``solved``."""
    from pytest_homefield.sandbox import proccap

    if proccap.memory_root() is None:
        pytest.skip("needs a writable memory cgroup")
    probe()
    work = copy_tree(pristine, tmp_path / "work")
    hog = ("def sub(a, b):\n    import os\n    fds = [os.memfd_create('hog') for _ in range(20)]\n"
           "    for fd in fds:\n        for _ in range(30):\n            os.write(fd, b'x' * 2**20)\n    return a - b")
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", hog))
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120, memory_mb=256,
              sandbox="bwrap")
    assert g.outcome == "tests_failed" and g.test_sandbox == "bwrap", g.error
    assert g.error is not None and g.error.endswith(
        "its sandbox went over its memory cap of 256 MiB (max_test_memory_mb)"), g.error


@pytest.mark.slow
def test_an_attacks_grading_stops_at_a_multiple_of_the_reference_grading(
        task: Task, pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pypa/packaging: four attacks of a ``verify --attacks`` each held a worker for the whole ``--run-timeout``
    (600 s; 40 of 51 minutes). An attack's grading stops at 5× the task's reference grading (at least 60 s,
    never above the run timeout, nor above a hanging parent's bound) and is ``test_timeout``: scored, not solved."""
    from pytest_homefield.run import hang_bound

    ref = (3.0, "oracle's 3.0 s grading of this task")
    assert hang_bound.grading_bound(task, 600, ref).seconds == 60.0  # the floor
    bound = hang_bound.grading_bound(task, 600, (40.0, "x"))
    assert bound.seconds == 200.0 and bound.why.startswith(f"{hang_bound.ATTACK_BOUND} of 200 s (5× x")
    assert hang_bound.grading_bound(task, 150, (40.0, "x")).why == "150 s"  # never above the run timeout
    assert hang_bound.grading_bound(task, 600, None).seconds == 600 == hang_bound.grading_bound(task, 600).seconds
    monkeypatch.setattr(hang_bound, "HANG_FLOOR_S", 2.0)
    hangs = dataclasses.replace(task, verify={"commit_s": 0.2, "parent_bound": "parent run 1 stopped"})
    assert hang_bound.grading_bound(hangs, 600, (40.0, "x")).seconds == 2.0  # the task's own bound is lower
    monkeypatch.setattr(hang_bound, "ATTACK_FLOOR_S", 2.0)  # 60 s; 2 s keeps the test short
    work = copy_tree(pristine, tmp_path / "work")
    hang = "def sub(a, b):\n    import time\n    while True:\n        time.sleep(0.05)"
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", hang))
    g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              reference=(0.2, "oracle's 0.2 s grading of this task"))
    assert g.outcome == "test_timeout" and g.error is not None, g.error
    assert "hidden tests exceeded the attack bound of 2 s (5× oracle's 0.2 s grading of this task" in g.error, g.error
    assert g.test_s is not None and g.test_s < 20


def test_the_reference_of_an_attack_is_oracles_grading_else_the_mined_seconds(task: Task, tmp_path: Path) -> None:
    from pytest_homefield.agents.attacks import attack_agent
    from pytest_homefield.agents.reference import OracleAgent
    from pytest_homefield.run.hang_bound import attack_reference
    from pytest_homefield.run.runner import AttemptRunner
    from pytest_homefield.settings import Settings
    from pytest_homefield.store import append_jsonl

    results = tmp_path / "results.jsonl"
    mined = dataclasses.replace(task, verify={"stability_runs": 2, "parent_s": 1.0, "commit_s": 12.5})
    assert attack_reference(task, results) is None
    assert attack_reference(mined, results) == (12.5, "the 12.5 s of its commit's tests when mined")
    append_jsonl(results, {"task_id": task.id, "agent": "attack-x", "outcome": "solved", "test_s": 99.0})
    append_jsonl(results, {"task_id": "other", "agent": "oracle", "outcome": "solved", "test_s": 99.0})
    append_jsonl(results, {"task_id": task.id, "agent": "oracle", "outcome": "solved", "test_s": 4.25})
    assert attack_reference(mined, results) == (4.25, "oracle's 4.2 s grading of this task")
    attack = attack_agent("delete-tests")
    oracle = OracleAgent(name="oracle", spec="oracle")
    runner = AttemptRunner(Settings(root=tmp_path, sandbox="none"), [oracle, attack], run_id="r", results=results,
                           folder=lambda variant: tmp_path, session_start="2026-01-01T00:00:00+00:00", budget_usd=None)
    assert runner.spec(task, attack, 1).grading_reference == (4.25, "oracle's 4.2 s grading of this task")
    assert runner.spec(task, oracle, 1).grading_reference is None  # only an attack's grading has the bound


def test_a_change_carried_whole_is_diffed_once(task: Task, pristine: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole change (``diff.patch``) and the carried one (scanned for suspicious code) are the same
    diff when every change is carried: one ``git diff`` process, not two; a dropped test file still gets a
    diff of its own without it. Without the sealed run and the canary twins (``sealed=False``, ``canaries=False``):
    they make no diff, and this test is not about them (speed36: 4.3 s of CPU with them)."""
    import subprocess

    from pytest_homefield.run import changes as changes_module

    calls: list[object] = []
    real = subprocess.Popen

    def counting(*args: object, **kwargs: object) -> object:
        argv = args[0] if args else kwargs.get("args")
        if isinstance(argv, list) and argv[:3] == ["git", "diff", "--no-index"]:
            calls.append(argv)
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(changes_module.subprocess, "Popen", counting)  # the module's: every Popen of the test
    flagged = WRONG_CALC + "\nimport _pytest.reports  # noqa\n"
    cases = {"source": {CALC: flagged}, "and-tests": {CALC: flagged, "tests/test_sub.py": "x = 1\n"}}
    for name, files in cases.items():
        calls.clear()
        work = copy_tree(pristine, tmp_path / name / "work")
        for rel, text in files.items():
            _write(work, rel, text)
        g = grade(task, workspace=work, pristine=pristine, out_dir=tmp_path / name / "out", run_timeout_s=120,
                  sealed=False, canaries=False)
        assert g.outcome == "tests_failed" and g.carried == [CALC] and g.suspicious, (name, g)
        assert g.suspicious_reason == "pytest internals", g.suspicious_reason
        patch = (tmp_path / name / "out" / "diff.patch").read_text()
        assert all(f"diff --git a/{rel} b/{rel}" in patch for rel in files), patch
        assert len(calls) == (1 if name == "source" else 2), (name, calls)


@pytest.mark.slow
def test_a_measured_tasks_grading_reserves_its_cap_not_the_ceiling(task: Task, pristine: Path,
                                                                   tmp_path: Path) -> None:
    """mem27: every grading's test run reserved ``max_test_memory_mb`` (4096 MiB) of the machine's memory budget,
    so a 16 GB machine graded one attempt at a time. A task whose reference fix's runs peaked at 100 MiB
    (``verify.peak_mb``) gets a cap of max(512, 2 × 100) = 512 MiB and reserves that; one without a peak keeps the
    ceiling. Seen from another process's view of the budget while the change's run sleeps. Before: 4096."""
    import threading

    from pytest_homefield.sandbox import memory_budget
    from pytest_homefield.sandbox.memory_budget import MemoryBudget

    skip_without_memory_cgroup_bwrap()
    work = copy_tree(pristine, tmp_path / "work")
    slow = "def sub(a, b):\n    import time\n    time.sleep(0.2)\n    return a - b"  # right, and slow to see
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", slow))
    before = memory_budget._BUDGET[0], memory_budget._FLOOR[0]
    memory_budget.configure(100_000)
    held: dict[str, int] = {}
    try:
        for name, verify in (("measured", {**task.verify, "peak_mb": 100.0}), ("unmeasured", {})):
            graded = dataclasses.replace(task, verify=verify)
            seen = [0]
            done = threading.Event()

            def watch(seen: list[int], done: threading.Event) -> None:
                while not done.is_set():
                    seen[0] = max(seen[0], MemoryBudget().held_mb())
                    time.sleep(0.02)

            watcher = threading.Thread(target=watch, args=(seen, done))
            watcher.start()
            try:
                g = grade(graded, workspace=work, pristine=pristine, out_dir=tmp_path / name, run_timeout_s=120,
                          sandbox="bwrap", canaries=False)
            finally:
                done.set()
                watcher.join()
            assert g.outcome == "solved", g.error
            held[name] = seen[0]
    finally:
        memory_budget._BUDGET[0], memory_budget._FLOOR[0] = before
    assert held == {"measured": 512, "unmeasured": 4096}, held


@pytest.mark.slow
def test_a_change_over_its_tasks_memory_cap_fails_its_tests_and_says_why(task: Task, pristine: Path,
                                                                         tmp_path: Path) -> None:
    """The task's cap binds (contracts §7: a change may hold 2x the reference fix's peak, at least 512 MiB): a
    right fix that holds 600 MiB in memfds is killed by the kernel in its sandbox at 512 MiB, ``tests_failed``
    (scored, never ``infra``: the control run on the untouched parent finishes), naming the task's cap. Under
    ``max_test_memory_mb`` (4096) alone it was ``solved``."""
    skip_without_memory_cgroup_bwrap()
    work = copy_tree(pristine, tmp_path / "work")
    hog = ("def sub(a, b):\n    import os\n    fds = [os.memfd_create('hog') for _ in range(20)]\n"
           "    for fd in fds:\n        for _ in range(30):\n            os.write(fd, b'x' * 2**20)\n    return a - b")
    _write(work, CALC, WRONG_CALC.replace("def sub(a, b):\n    return a + b", hog))
    measured = dataclasses.replace(task, verify={**task.verify, "peak_mb": 100.0})
    g = grade(measured, workspace=work, pristine=pristine, out_dir=tmp_path / "out", run_timeout_s=120,
              sandbox="bwrap")
    assert g.outcome == "tests_failed" and g.test_sandbox == "bwrap", g.error
    assert g.error is not None and g.error.endswith(
        "its sandbox went over its memory cap of 512 MiB (the task's cap: 2x the reference fix's peak, at least "
        "512 MiB, max_test_memory_mb at most)"), g.error


def _calc_fix(tmp_path: Path, before: Mapping[str, str], after: Mapping[str, str], source_files: list[str], *,
              head: str = "", mode: int = 0o644, **task: Any) -> tuple[Task, Path]:
    """A repository at ``tmp_path``/repo of two commits: the parent's :data:`CALC` an unfixed ``clamp`` (``head`` before
    it, file mode ``mode``) beside ``before`` (path: text), the commit's the fixed one with ``after`` written over
    them; ``(task, pristine)``: the commit's task (its diff the gold patch, ``source_files``, ``task``: more of
    :class:`Task`'s fields) and the parent's snapshot at ``tmp_path``/pristine."""
    repo = tmp_path / "repo"
    (repo / "src" / "calc").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    for message, files in (("one", {CALC: head + "def clamp(x, lo, hi):\n    return x\n", **before}),
                           ("two", {CALC: head + "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n", **after})):
        for name, text in files.items():
            (repo / name).write_text(text)
        (repo / CALC).chmod(mode)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", message], check=True)
    gold = subprocess.run([*git, "diff", "HEAD~1", "HEAD"], check=True, capture_output=True, text=True).stdout
    parent = subprocess.run([*git, "rev-parse", "HEAD~1"], check=True, capture_output=True, text=True).stdout.strip()
    return Task(id="t" * 12, commit="c" * 40, parent=parent, committed_at="", authored_at="", mode="commit",
                subject="s", message="", prompt="", source_files=source_files, test_files=[], test_patch="",
                gold_patch=gold, FAIL_TO_PASS=["t::a"], PASS_TO_PASS=[], **task), \
        make_snapshot(repo, parent, dest=tmp_path / "pristine")


def test_a_reference_fix_that_changes_tox_ini_is_still_the_reference_fix(tmp_path: Path) -> None:
    """nu54, jquast/wcwidth: its pytest section is in ``tox.ini``, which 3 of 27 reference fixes changed; grading
    carries no change of ``tox.ini`` (by its name), so the oracle's grading copy held the parent's, which
    :func:`is_reference_fix` compared with the patched one: not the reference, and each oracle attempt paid the
    sealed run, the twins and the parent's check of them (75–85 s of host time). A path no grading carries is now
    left out of the comparison; the carried files still must match byte for byte."""
    from pytest_homefield.run.grading import is_reference_fix

    task, pristine = _calc_fix(tmp_path, {"tox.ini": "[pytest]\naddopts = -q\n"},
                               {"tox.ini": "[pytest]\naddopts = -q\nfilterwarnings = error\n"}, [CALC])
    gold = task.gold_patch
    assert "diff --git a/tox.ini b/tox.ini" in gold
    workspace = copy_tree(pristine, tmp_path / "work")
    apply_patch(workspace, gold)  # the oracle's change
    changes = tree_changes(pristine, workspace)
    carried, dropped, _ = carried_changes(changes, task, pristine, workspace)
    assert (carried, dropped) == ([CALC], ["tox.ini"])
    gdir = copy_tree(pristine, tmp_path / "grading")
    (gdir / CALC).write_bytes((workspace / CALC).read_bytes())  # what grading carries
    assert is_reference_fix(task, pristine, gdir, carried)
    (gdir / CALC).write_text("def clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n")  # another fix
    assert not is_reference_fix(task, pristine, gdir, carried)


def test_a_reference_fix_of_an_executable_file_is_still_the_reference_fix(tmp_path: Path) -> None:
    """mend64: the reference copy :func:`is_reference_fix` patches is made of the patch's files without their mode, so
    the comparison is of kinds and bytes, not of the execute bit (``nofollow.same_entry(..., mode=False)``): the
    oracle's change of an executable module is the reference fix's; another fix of it is not."""
    from pytest_homefield.run.grading import is_reference_fix

    task, pristine = _calc_fix(tmp_path, {}, {}, [CALC], head="#!/usr/bin/env python\n", mode=0o755)
    gold = task.gold_patch
    gdir = copy_tree(pristine, tmp_path / "grading")
    apply_patch(gdir, gold)  # the oracle's change, carried
    assert os.stat(gdir / CALC).st_mode & 0o100
    assert is_reference_fix(task, pristine, gdir, [CALC])
    (gdir / CALC).write_text("#!/usr/bin/env python\ndef clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n")
    assert not is_reference_fix(task, pristine, gdir, [CALC])


@pytest.mark.parametrize("rel, before, after, held_back", [
    ("setup.cfg", "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n",
     "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\nfilterwarnings =\n    ignore::DeprecationWarning\n",
     True),
    ("pyproject.toml", "[project]\nname = 'calc'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n",
     "[project]\nname = 'calc'\n\n[tool.pytest.ini_options]\naddopts = '-q'\nfilterwarnings = ['error']\n", True),
    ("setup.cfg", "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n",
     "[metadata]\nname = calc\nversion = 2\n\n[tool:pytest]\naddopts = -q\n", False),
], ids=["setup.cfg pytest section", "pyproject.toml pytest section", "setup.cfg metadata"])
def test_a_reference_fix_that_changes_a_config_files_pytest_section_is_still_the_reference_fix(
        tmp_path: Path, rel: str, before: str, after: str, held_back: bool) -> None:
    """nub60, python-semver's 5b8bb16cbd12 adds a ``filterwarnings`` line to the ``[tool:pytest]`` section of its
    ``setup.cfg``: grading carries no such change (by its content), so the oracle's grading copy held the parent's
    ``setup.cfg`` and :func:`is_reference_fix`, which left out only the files blocked by name (``tox.ini``), read it
    as no reference fix: the oracle attempt was graded with canary twins, 20.1 s against 0.8–3.0 s for the other 19
    tasks' oracle attempts. A change outside the pytest section is carried, and still compared byte for byte."""
    from pytest_homefield.run.grading import is_reference_fix

    task, pristine = _calc_fix(tmp_path, {rel: before}, {rel: after}, [CALC, rel])
    gold = task.gold_patch
    workspace = copy_tree(pristine, tmp_path / "work")
    apply_patch(workspace, gold)  # the oracle's change
    carried, dropped, _ = carried_changes(tree_changes(pristine, workspace), task, pristine, workspace)
    assert (sorted(carried), dropped) == (([CALC], [rel]) if held_back else (sorted([CALC, rel]), []))
    gdir = copy_tree(pristine, tmp_path / "grading")
    for path in carried:  # what grading carries
        (gdir / path).write_bytes((workspace / path).read_bytes())
    assert is_reference_fix(task, pristine, gdir, carried)
    (gdir / CALC).write_text("def clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n")  # another fix
    assert not is_reference_fix(task, pristine, gdir, carried)


#: ref60's ``uv run`` task: a runner script of the tree (pytest's words after it), an env file, a ``[tool.uv]`` table.
_UV_PROJECT = '[project]\nname = "calc"\nversion = "0"\n\n[tool.uv]\npackage = true\n'
_UV_RUNNER = "import sys\n\nimport pytest\n\nsys.exit(pytest.main(sys.argv[1:]))\n"


@pytest.mark.parametrize("rel, before, after", [
    ("pyproject.toml", _UV_PROJECT, _UV_PROJECT.replace("package = true", "package = false")),
    ("uv.toml", None, "native-tls = true\n"),
    (".env", "A=1\n", "A=2\n"),
    ("runner.py", _UV_RUNNER, "# /// script\n# dependencies = []\n# ///\n" + _UV_RUNNER),
], ids=["tool.uv table", "uv.toml added", "env file", "runner script"])
def test_a_reference_fix_that_changes_what_a_uv_run_reads_is_still_the_reference_fix(
        tmp_path: Path, rel: str, before: str | None, after: str) -> None:
    """ref60: under a ``uv run`` test command grading holds back a change to the files the command reads as its
    configuration (``carried.uv_held_back``: the top's ``[tool.uv]`` table, ``uv.toml``, its env files, its runner
    script; ops58, ops60), the reference fix's too; :func:`is_reference_fix` left out only the files blocked by name
    and the pytest sections (a second list), so a reference fix changing one beside its source fix was read as no
    reference fix (measured before: ``False`` for each of the four), and its oracle attempt was graded with the sealed
    run and the canary twins. It now compares exactly what :func:`carried_changes` carries of the reference fix. A
    change to the carried source still counts (another fix is not the reference)."""
    from pytest_homefield.run.grading import is_reference_fix

    files = {"pyproject.toml": _UV_PROJECT, "runner.py": _UV_RUNNER, ".env": "A=1\n"}
    task, pristine = _calc_fix(tmp_path, {**files, **({rel: before} if before is not None else {})}, {rel: after},
                               [CALC, rel], test_cmd="uv run --env-file .env runner.py -q")
    gold = task.gold_patch
    workspace = copy_tree(pristine, tmp_path / "work")
    apply_patch(workspace, gold)  # the oracle's change
    carried, dropped, _ = carried_changes(tree_changes(pristine, workspace), task, pristine, workspace,
                                          command=task.test_cmd)
    assert (carried, dropped) == ([CALC], [rel])
    gdir = copy_tree(pristine, tmp_path / "grading")
    (gdir / CALC).write_bytes((workspace / CALC).read_bytes())  # what grading carries
    assert is_reference_fix(task, pristine, gdir, carried)
    (gdir / CALC).write_text("def clamp(x, lo, hi):\n    return min(max(x, lo), hi)\n")  # another fix
    assert not is_reference_fix(task, pristine, gdir, carried)
