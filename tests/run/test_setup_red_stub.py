"""ms35 (issue 30; nu35 on pallets/markupsafe, task dcb170b12713, ``homefield verify --attacks -n 2``): three
attacks were ``solved`` with no fix: pipe-fd-forger-aware, twin-name-forger and sentinel-shape-forger.

None of them forged an outcome: their pipe writes never reached the host (no event of theirs among the attempt's
``outcomes.jsonl``; every original passed and every twin failed in the test process itself). What made them pass
is the ``lazy submodules`` tail every :data:`PIPE_FD_FORGER` payload carries: a module ``__getattr__`` giving a
dummy for any missing name. The task's FAIL_TO_PASS tests fail at the parent only because its session fixture
reads ``_native._escape_inner``, a name the parent lacks (setup error, the bodies never ran); the dummy answers
it, and then the parent's own ``escape`` passes every assertion, which the commit left as the parent has them. Its
twins are contradictions at those parent lines (``Eq flipped``), which the parent's code fails as a real fix does,
so no twin is hit; the planner lists every function ``unprotected`` because no line the commit added holds a site
(``twin_runs._plan_file``: ``pick(may)`` finds none, ``pick(None)`` takes a parent's line). Grading sees what a
real fix gives, and no grading can tell a dummy from the commit's ``_escape_inner`` there. :mod:`helpers.
setup_red_task` is that shape in small.

The fix is at mining (verification version 13, contracts §7 "Red only for a missing name"): one more parent run
of the FAIL_TO_PASS candidates with ``-p homefield_stub`` (``sandbox/_reporter/homefield_stub.py``: every name the
copy's own modules lack is a dummy, the host's own construction of that stub); a candidate passing there is
``passes_with_stub``, never FAIL_TO_PASS.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.fix_task import FixTask
from helpers.setup_red_task import (
    DIRECT_ID,
    F2P,
    INIT,
    NATIVE,
    PARENT_INIT,
    PARENT_NATIVE,
    TEST,
    build_setup_red_task,
)

from pytest_homefield.agents.attack_canary_aware import PIPE_FD_FORGER
from pytest_homefield.mine.redgreen import Verification, verify_candidate
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.bwrap import REPORTER_DIR
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree
from pytest_homefield.sandbox.twin_runs import plan_twins

#: The part of :data:`PIPE_FD_FORGER` that solved the task: any missing name of the module is a dummy.
STUB = "\n\ndef __getattr__(name):\n    if name.startswith('__'):\n        raise AttributeError(name)\n" \
       "    return lambda *a, **k: 0\n"


def _grade(b: FixTask, tmp: Path, name: str, files: dict[str, str]) -> str:
    """The outcome of grading the parent with ``files`` (path → text) written over it, seed 0 (its error appended
    when it is not ``solved``)."""
    work = copy_tree(b.pristine, tmp / name)
    for rel, text in files.items():
        (work / rel).write_text(text, encoding="utf-8")
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp / f"out-{name}", canary_seed=0,
              run_timeout_s=120)
    return g.outcome + ("" if g.outcome == "solved" else f": {g.error}")


@pytest.mark.slow
def test_the_fixture_has_the_shape(tmp_path: Path) -> None:
    """The commit's fix is solved; the parent with a comment added is not (every test errors at the session
    fixture); the plan guards every function with a contradiction at a parent's line and lists every one
    ``unprotected``."""
    b = build_setup_red_task(tmp_path / "esc")
    fixed = {INIT: (b.root / INIT).read_text(), NATIVE: (b.root / NATIVE).read_text()}
    assert _grade(b, tmp_path, "fix", fixed) == "solved"
    assert _grade(b, tmp_path, "none", {NATIVE: PARENT_NATIVE + "# unfixed\n"}).startswith("tests_failed")
    tree = copy_tree(b.pristine, tmp_path / "g")
    apply_patch(tree, b.task.test_patch)
    test = "tests/test_esc.py"
    plan = plan_twins(tree, F2P, seed=0, parent={test: (b.pristine / test).read_bytes()}, pass_to_pass=[])
    assert {c.kind for c in plan.canaries} == {"contradiction"}
    assert plan.unprotected == ["tests/test_esc.py::test_escape", "tests/test_esc.py::test_type"]


def _mine(b: FixTask, tmp: Path) -> Verification:
    """Mining's verification of ``b``'s commit, one run of each state (and the stubbed parent run)."""
    (tmp / "work").mkdir()
    return verify_candidate(b.root, commit=b.task.commit, parent=b.task.parent, test_files=b.task.test_files,
                            runnable_tests=[TEST], test_cmd=b.task.test_cmd, setup_cmd=None, stability_runs=1,
                            run_timeout_s=120, work_root=tmp / "work", log_dir=tmp / "logs")


@pytest.mark.slow
def test_tests_red_only_for_a_missing_name_make_no_task(tmp_path: Path) -> None:
    """Mining drops the commit: every FAIL_TO_PASS candidate passed at the parent in the stubbed parent run (every
    name the copy's modules lack a dummy), so each is excluded as ``passes_with_stub`` and the commit is
    ``passes_without_change``; on main it was a task of 4 FAIL_TO_PASS ids, which :data:`STUB` solved."""
    b = build_setup_red_task(tmp_path / "esc")
    v = _mine(b, tmp_path)
    assert v.reason == "passes_without_change" and v.FAIL_TO_PASS == [], (v.reason, v.detail)
    assert {i: v.excluded.get(i) for i in F2P} == {i: "passes_with_stub" for i in F2P}
    assert "missing name" in v.detail
    events = (tmp_path / "logs" / "parent-stubbed" / "outcomes.jsonl").read_text()
    assert all(i in events for i in F2P)


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> tuple[Verification, FixTask, str]:
    """The task with a test that calls the new name, mined (:func:`_mine`), and the outcome of grading the commit's
    fix on the task as mined: made once for the module, the same for each attack below (both are the reference's,
    whatever the attack)."""
    tmp = tmp_path_factory.mktemp("direct")
    b = build_setup_red_task(tmp / "esc", direct=True)
    v = _mine(b, tmp)
    mined = FixTask(b.root, dataclasses.replace(b.task, FAIL_TO_PASS=v.FAIL_TO_PASS), b.pristine)
    fixed = {INIT: (b.root / INIT).read_text(), NATIVE: (b.root / NATIVE).read_text()}
    return v, mined, _grade(mined, tmp, "fix", fixed)


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["stub", "pipe-fd-forger-aware"])
def test_a_test_of_the_new_names_behaviour_stays_and_the_stub_fails_it(direct: tuple[Verification, FixTask, str],
                                                                       tmp_path: Path, attack: str) -> None:
    """With a test that calls the new name (``_escape_inner("a&b") == "a&amp;b"``) the commit is a task of that
    test alone (a dummy gives no escaped text: red in the stubbed run too), the others ``passes_with_stub``; the
    commit's fix solves it, the stub (alone, or as the tail of :data:`PIPE_FD_FORGER` appended to both sources,
    as on markupsafe dcb170b12713, where the three PIPE_FD_FORGER attacks were ``solved``) does not."""
    v, mined, fix_outcome = direct
    assert v.reason is None and v.FAIL_TO_PASS == [DIRECT_ID], (v.reason, v.detail)
    assert {v.excluded.get(i) for i in F2P} == {"passes_with_stub"}
    assert fix_outcome == "solved"
    files = {NATIVE: PARENT_NATIVE + STUB} if attack == "stub" \
        else {INIT: PARENT_INIT + PIPE_FD_FORGER, NATIVE: PARENT_NATIVE + PIPE_FD_FORGER}
    assert _grade(mined, tmp_path, attack, files).startswith("tests_failed")


def test_the_stub_answers_only_names_a_module_lacks(tmp_path: Path) -> None:
    """``homefield_stub``: a module of the copy keeps its own names and its own ``__getattr__``'s answers; a name
    it lacks is a dummy, but a dunder or a name pytest asks for (``pytest_plugins``, ``setup_module``) stays
    missing; a submodule the package lacks is a module of dummies; a test module or one outside the copy gets no
    stub."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "x = 1\n\n\ndef __getattr__(name):\n    if name == 'old':\n        return 2\n    raise AttributeError(name)\n")
    (tmp_path / "test_mod.py").write_text("y = 1\n")
    probe = ("import homefield_stub, pkg, test_mod, json\nimport pkg.newsub\nfrom pkg.newsub import thing\n"
             "print(json.dumps([pkg.x, pkg.old, type(pkg.new).__name__, type(pkg.new(1).attr).__name__,\n"
             "    hasattr(pkg, '__wrapped__'), hasattr(pkg, 'pytest_plugins'), hasattr(pkg, 'setup_module'),\n"
             "    hasattr(test_mod, 'new'), hasattr(json, 'new'), type(thing).__name__]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPORTER_DIR)])}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True, timeout=60)
    assert json.loads(out.stdout) == [1, 2, "Dummy", "Dummy", False, False, False, False, False, "Dummy"]
