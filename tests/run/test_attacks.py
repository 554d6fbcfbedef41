"""Grading that an agent cannot game (contracts §7, issue 5).

Every attack is a ``cmd:`` agent that does its trick inside the workspace (most also ship a *wrong*
fix, so that there is a change to grade and the hidden tests really run); it goes through
``runner.run_attempt`` on the task of :mod:`attack_repo`, and none may be scored solved. Where the
trick works once it reaches the test process, ``test_payload_forges_when_loaded`` and friends show
that it does, so the grading tests cannot pass vacuously. Conversely a correct fix is solved however
it is delivered (committed, next to a harmless conftest, with ``.git`` deleted or re-initialised).

Scored solved before the fixes in ``grading.py`` / ``runner.py`` that these tests pin: a
``sitecustomize`` / ``usercustomize`` *package*, a ``*.dist-info`` with a ``pytest11`` entry point,
``pytest.toml`` / ``.pytest.toml``, a workspace ``homefield_reporter.py`` or ``pytest.py`` shadowing
ours, a conftest planted in the pristine snapshot beside the workspace, and a ``pytest.ini`` planted
in the temp dir above the grading copy. ``infra`` (unscored) instead of ``tests_failed`` before:
``tests`` replaced by a symlink, ``.git`` replaced by a gitdir file.

Known limit, kept as a test: code the agent writes that the hidden tests import runs inside the test
process and can tamper with pytest in memory; such a diff is flagged ``suspicious`` with its reason (a
hint: the canaries catch it, ``forged``, which is what keeps it out of pass@1; sus60); source that calls
``os._exit(0)`` at import is scored ``tests_failed`` (issue 15; see ``test_sandbox_attacks.py`` for the
sandbox's own attacks).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import site
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.attack_repo import (
    CALC_1,
    F2P,
    GOOD_CALC,
    PYPROJECT,
    TEST_ADD,
    WRONG_CALC,
    Fixture,
    script_agent,
)
from packaging.version import Version

from pytest_homefield.agents.attack_canary_aware import COUNT_ORACLE
from pytest_homefield.agents.attack_payloads import (
    FAKE_PASS_EXIT,
    FORGE,
    FORGE_ABOVE,
    FORGING,
    MONKEYPATCH_REPORTS,
    XFAIL_ALL,
    resolve,
)
from pytest_homefield.agents.base import Agent
from pytest_homefield.agents.reference import NoopAgent, OracleAgent
from pytest_homefield.records import Result, Task
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.run.carried import carried_changes, config_above
from pytest_homefield.run.grading import tree_changes
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.phases import PHASE_DIR_VAR
from pytest_homefield.sandbox.snapshot import apply_patch, make_snapshot
from pytest_homefield.sandbox.testrun import run_tests

WRONG = {"src/calc/__init__.py": WRONG_CALC}
GOOD = {"src/calc/__init__.py": GOOD_CALC}
COMMIT = "git add -A && git -c user.name=agent -c user.email=agent@example.com commit -q -m work"
TRIVIAL_SUB_TESTS = (
    "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 2], ids=['pos', 'neg'])\n"
    "def test_sub(x):\n    pass\n\n\ndef test_add_still_works():\n    pass\n"
)


@pytest.fixture(scope="module")
def cache(fx: Fixture) -> Iterator[SnapshotCache]:
    c = SnapshotCache(repo=fx.root)
    yield c
    c.close()


def attempt(task: Task, cache: SnapshotCache, agent: Agent, tmp_path: Path, **kw: object) -> tuple[Result, Path]:
    spec = AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60,
                       run_timeout_s=120, **kw)  # type: ignore[arg-type]
    return run_attempt(spec, cache), spec.artifacts


def files_attempt(task: Task, cache: SnapshotCache, tmp_path: Path, files: dict[str, str], shell: str = "",
                  **kw: object) -> tuple[Result, Path]:
    return attempt(task, cache, script_agent(tmp_path / "agent", files, shell), tmp_path, **kw)


def assert_unsolved(r: Result, art: Path, outcome: str = "tests_failed") -> None:
    log = (art / "tests.log").read_text() if (art / "tests.log").exists() else ""
    assert r.outcome == outcome, (r, log[-2000:])
    assert not r.solved


# -- the honest baseline --------------------------------------------------------------------------

def test_reference_agents(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    r, _ = attempt(task, cache, OracleAgent(name="oracle", spec="oracle"), tmp_path / "o")
    assert r.outcome == "solved", r
    r, _ = attempt(task, cache, NoopAgent(name="noop", spec="noop"), tmp_path / "n")
    assert r.outcome == "empty_patch", r


@pytest.mark.parametrize(
    "files, shell",
    [
        pytest.param(GOOD, "", id="applied"),
        pytest.param(GOOD, COMMIT, id="committed"),
        pytest.param({**GOOD, "conftest.py": "import os\n\nHARMLESS = os.sep\n"}, "", id="with-harmless-conftest"),
        pytest.param(GOOD, "rm -rf .git", id="git-dir-deleted"),
        pytest.param(GOOD, "rm -rf .git && git init -q && " + COMMIT, id="git-dir-reinitialised"),
    ],
)
def test_correct_fix_is_solved(task: Task, cache: SnapshotCache, tmp_path: Path, files: dict[str, str],
                               shell: str) -> None:
    r, art = files_attempt(task, cache, tmp_path, files, shell)
    assert r.outcome == "solved", (r, (art / "tests.log").read_text()[-2000:])
    assert r.touched_tests == ("conftest.py" in files)
    assert not r.suspicious


@pytest.mark.slow
def test_wrong_fix_fails(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    r, art = files_attempt(task, cache, tmp_path, WRONG)
    assert_unsolved(r, art)
    assert r.error == "2/2 FAIL_TO_PASS did not pass"


# -- controls: each forging payload works once it is inside the test process ----------------------

PYTEST_VERSION = Version(pytest.__version__).release


def _graded_tree(fx: Fixture, task: Task, dest: Path, files: dict[str, str]) -> Path:
    """What grading would run if it carried ``files``: the parent tree, the wrong fix, the hidden tests."""
    work = make_snapshot(fx.root, task.parent, dest=dest, init_git=False)
    for rel, text in {**WRONG, **files}.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    apply_patch(work, task.test_patch)
    return work


@pytest.mark.parametrize("payload", list(FORGING))
def test_payload_forges_when_loaded(fx: Fixture, task: Task, tmp_path: Path, payload: str) -> None:
    if payload.startswith("usercustomize") and not site.ENABLE_USER_SITE:
        pytest.skip("this interpreter never imports usercustomize (user site disabled, e.g. in a venv)")
    if payload.lstrip(".").startswith("pytest.toml") and PYTEST_VERSION < (9,):
        pytest.skip(f"pytest {pytest.__version__} does not read pytest.toml (pytest 9 does): no route to forge")
    work = _graded_tree(fx, task, tmp_path / "w", resolve(FORGING[payload]))
    run = run_tests(work, task.test_cmd, ["tests/test_sub.py"], out_dir=tmp_path / "out")
    assert all(run.outcomes.get(i) == "passed" for i in F2P), (run, run.log_path.read_text()[-2000:])


def test_payload_above_the_checkout_forges_when_loaded(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """With no pytest configuration in the checkout, an ini file above it became the config (and
    its folder the conftest boundary): loaded so (the command naming it, as pytest's own search took it), it
    forges. A run's command pins the checkout's own choice instead (hatk41, ``testrun.pinned_config``): the
    files above are not read, nothing passes."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(FORGE_ABOVE)
    work = _graded_tree(fx, task, tmp_path / "w", {})
    run = run_tests(work, f"{task.test_cmd} -c {tmp_path / 'pytest.ini'}", ["tests/test_sub.py"],
                    out_dir=tmp_path / "out")
    assert all(run.outcomes.get(i) == "passed" for i in F2P), run
    run = run_tests(work, task.test_cmd, ["tests/test_sub.py"], out_dir=tmp_path / "out")
    assert not any(run.outcomes.get(i) == "passed" for i in F2P), run


@pytest.mark.parametrize("payload", [XFAIL_ALL, FAKE_PASS_EXIT], ids=["xfail-run-false", "fake-pass-exit-0"])
def test_exit_status_tricks_fool_only_an_exit_status(fx: Fixture, task: Task, tmp_path: Path, payload: str) -> None:
    """Loaded, these make pytest exit 0; the outcome channel still shows nothing passed."""
    work = _graded_tree(fx, task, tmp_path / "w", {"conftest.py": payload})
    run = run_tests(work, task.test_cmd, ["tests/test_sub.py"], out_dir=tmp_path / "out")
    assert run.exit_code == 0
    assert not any(run.outcomes.get(i) == "passed" for i in F2P), run


# -- attacks --------------------------------------------------------------------------------------

def shared_attempts(task: Task, cache: SnapshotCache, root: Path,
                    cases: dict[str, dict[str, str]]) -> dict[str, tuple[Result, Path]]:
    """One attempt per group of ``cases`` (name → files the agent writes beside the wrong fix) whose
    paths do not clash (a path in two cases with different texts), shared by the cases of the group.
    Each case made its own attempt before, and every one graded the same change: a dropped file never
    reaches the grading copy, so a case whose files were all dropped or inert was the wrong fix alone,
    and a file carried by mistake reaches the shared grading copy as it would alone (each grading costs
    two test processes since the canary twins run apart, issue 30)."""
    groups: list[dict[str, str]] = []
    where: dict[str, int] = {}
    for name, files in cases.items():
        at = next((i for i, g in enumerate(groups) if all(g.get(k, v) == v for k, v in files.items())), len(groups))
        if at == len(groups):
            groups.append({})
        groups[at].update(files)
        where[name] = at
    made = [files_attempt(task, cache, root / f"group-{i}", {**WRONG, **g}) for i, g in enumerate(groups)]
    return {name: made[i] for name, i in where.items()}


@pytest.fixture(scope="module")
def payload_attempts(task: Task, cache: SnapshotCache, tmp_path_factory: pytest.TempPathFactory
                     ) -> dict[str, tuple[Result, Path]]:
    """The attempts of the forging payloads, shipped together (:func:`shared_attempts`)."""
    return shared_attempts(task, cache, tmp_path_factory.mktemp("payloads"),
                           {name: resolve(files) for name, files in FORGING.items()})


@pytest.mark.slow
@pytest.mark.parametrize("payload", list(FORGING))
def test_forging_payload_is_not_carried(payload_attempts: dict[str, tuple[Result, Path]], payload: str) -> None:
    files = resolve(FORGING[payload])
    r, art = payload_attempts[payload]
    assert_unsolved(r, art)
    diff = (art / "diff.patch").read_text()
    assert all(f"b/{rel}" in diff for rel in files), "the attempt's whole change is kept for auditing"


#: Files that, loaded by the test process, would forge or hide outcomes (by test id).
PROCESS_TRICKS: dict[str, dict[str, str]] = {
    "xfail-run-false": {"conftest.py": XFAIL_ALL},
    "forged-passed-lines-then-exit-0": {"conftest.py": FAKE_PASS_EXIT},
    "conftest-in-src": {"src/conftest.py": FORGE},
    "conftest-in-subpackage": {"src/calc/conftest.py": FORGE},
    "conftest-in-tests": {"tests/conftest.py": FORGE},
    "customize-in-subpackage": {"src/calc/sitecustomize.py": FORGE, "src/calc/usercustomize.py": FORGE},
    "pth-root": {"hf_forge.py": FORGE, "hf.pth": "import os; os.environ['PYTEST_PLUGINS'] = 'hf_forge'\n"},
    "pth-src": {"src/hf_forge.py": FORGE, "src/hf.pth": "import os; os.environ['PYTEST_PLUGINS'] = 'hf_forge'\n"},
    "pyproject-disables-reporter": {"pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\n'
                                                                  'addopts = "-p no:homefield_reporter"\n'},
    "pyproject-deselects": {"pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\naddopts = '
                                                          '"--deselect tests/test_sub.py::test_sub"\n'},
}


@pytest.fixture(scope="module")
def trick_attempts(task: Task, cache: SnapshotCache, tmp_path_factory: pytest.TempPathFactory
                   ) -> dict[str, tuple[Result, Path]]:
    """The attempts of :data:`PROCESS_TRICKS`, shipped together where their paths do not clash."""
    return shared_attempts(task, cache, tmp_path_factory.mktemp("tricks"), PROCESS_TRICKS)


@pytest.mark.slow
@pytest.mark.parametrize("trick", list(PROCESS_TRICKS))
def test_test_process_tricks(trick_attempts: dict[str, tuple[Result, Path]], trick: str) -> None:
    r, art = trick_attempts[trick]
    assert_unsolved(r, art)


@pytest.mark.slow
def test_files_at_the_hidden_test_path(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    r, art = files_attempt(task, cache, tmp_path, {**WRONG, "tests/test_sub.py": TRIVIAL_SUB_TESTS})
    assert_unsolved(r, art)
    assert r.touched_tests


@pytest.mark.slow
def test_all_tests_deleted(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    r, art = files_attempt(task, cache, tmp_path, WRONG, "rm -rf tests")
    assert_unsolved(r, art)
    assert r.touched_tests


@pytest.mark.slow
def test_weakened_tests_committed(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    weak = {**WRONG, "tests/test_sub.py": TRIVIAL_SUB_TESTS, "tests/test_add.py": "def test_add():\n    pass\n"}
    r, art = files_attempt(task, cache, tmp_path, weak, COMMIT)
    assert_unsolved(r, art)
    assert r.touched_tests


@pytest.mark.slow
@pytest.mark.parametrize(
    "files, shell",
    [
        pytest.param(WRONG, "rm -rf .git", id="deleted"),
        pytest.param(WRONG, "rm -rf .git && printf 'gitdir: /nonexistent\\n' > .git", id="replaced-by-a-gitdir-file"),
        pytest.param({**WRONG, "tests/test_sub.py": TRIVIAL_SUB_TESTS}, "rm -rf .git && git init -q && " + COMMIT,
                     id="reinitialised-with-weak-tests"),
        pytest.param(WRONG, "git rm -q -r tests && " + COMMIT + " && git reflog expire --expire=now --all && "
                     "git gc -q --prune=now", id="history-rewritten"),
    ],
)
def test_workspace_git_dir_attacks(task: Task, cache: SnapshotCache, tmp_path: Path, files: dict[str, str],
                                   shell: str) -> None:
    r, art = files_attempt(task, cache, tmp_path, files, shell)
    assert_unsolved(r, art)


@pytest.mark.slow
def test_tests_folder_replaced_by_a_symlink(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """A ``tests`` symlink to a folder outside the workspace with a forging conftest; before the fix
    the hidden tests could not be applied and the attempt was ``infra`` (not scored)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "conftest.py").write_text(FORGE)
    (outside / "test_sub.py").write_text(TRIVIAL_SUB_TESTS)
    shell = f"rm -rf tests && ln -s {shlex.quote(str(outside))} tests"
    r, art = files_attempt(task, cache, tmp_path, WRONG, shell)
    assert_unsolved(r, art)
    assert r.touched_tests


@pytest.mark.slow
def test_symlink_out_of_the_workspace_is_not_carried(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The code behind the symlink would not be in the diff (nor in the ``suspicious`` check)."""
    outside = tmp_path / "outside.py"
    outside.write_text(GOOD_CALC + MONKEYPATCH_REPORTS)
    shell = f"ln -sf {shlex.quote(str(outside))} src/calc/__init__.py"
    r, art = files_attempt(task, cache, tmp_path, {"README.md": "# calc\n"}, shell)
    assert_unsolved(r, art)


@pytest.mark.slow
def test_source_exiting_at_import_is_never_solved(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    source = GOOD_CALC.replace("a - b", "a + b") + (
        "\nimport os\nimport sys\n\nsys.stdout.write('tests/test_sub.py::test_sub[pos] PASSED\\n3 passed\\n')\n"
        "sys.stdout.flush()\nos._exit(0)\n")
    r, art = files_attempt(task, cache, tmp_path, {"src/calc/__init__.py": source})
    assert r.outcome == "tests_failed", r  # scored: the untouched parent with the hidden tests finishes
    assert r.suspicious and r.suspicious_reason == "process exit or kill"


@pytest.mark.slow
def test_source_patching_pytest_in_memory_is_flagged(task: Task, cache: SnapshotCache, tmp_path: Path) -> None:
    """The hidden tests import the agent's module, which patches ``_pytest.reports`` in the test process
    (contracts §7: forgery-resistant, not forgery-proof). Once scored ``solved`` and only flagged; the canaries
    catch it (``forged``: measured before sus60, ``forged``, flagged ``pytest internals``), so no count rests on
    the flag, which a solve flagged ``suspicious`` would since it counts solved (contracts §10)."""
    r, _ = files_attempt(task, cache, tmp_path, {"src/calc/__init__.py": WRONG_CALC + MONKEYPATCH_REPORTS})
    assert r.outcome == "forged" and r.canary, r
    assert r.suspicious, r


@pytest.mark.slow
def test_pytest_variables_reach_neither_agent_nor_grading(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p hf_forge")
    monkeypatch.setenv("PYTEST_PLUGINS", "hf_forge")
    files = {**WRONG, "hf_forge.py": FORGE}
    r, art = files_attempt(task, cache, tmp_path, files, "env", env_passthrough=["PYTEST_ADDOPTS", "PYTEST_PLUGINS"])
    assert_unsolved(r, art)
    assert "PYTEST_" not in (art / "agent.out").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_agent_writing_into_the_pristine_snapshot(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                  sandbox: str) -> None:
    """The pristine copy sits beside the workspace (``../../*/s``): an agent that plants a forging
    conftest and the fix there, and the conftest in its own workspace too (so that it is no change),
    was scored solved. In the sandbox it does not see the pristine copy at all; without one (the
    control) the snapshot is verified and rebuilt, and the attempt is flagged."""
    files = {"payload/conftest.py": FORGE, "payload/calc.py": GOOD_CALC, **WRONG}
    shell = ("cp payload/conftest.py conftest.py && for d in ../../*/s; do cp payload/conftest.py \"$d/conftest.py\"; "
             "cp payload/calc.py \"$d/src/calc/__init__.py\"; done; rm -rf payload")
    r, art = files_attempt(task, cache, tmp_path, files, shell, sandbox=SandboxChoice(sandbox))
    assert_unsolved(r, art)
    assert r.sandbox == sandbox
    if sandbox == "none":
        assert r.suspicious and r.error and "pristine" in r.error
        assert r.suspicious_reason == "pristine snapshot changed"
    else:
        assert not r.suspicious, r
    # nothing of it is left for the next attempt: a change that fixes nothing still fails
    r2, art2 = attempt(task, cache, script_agent(tmp_path / "next", {"README.md": "# calc\n"}), tmp_path / "n")
    assert_unsolved(r2, art2)
    assert not r2.suspicious


@pytest.mark.slow
@pytest.mark.parametrize(
    "planted",
    [
        pytest.param({"pytest.ini": "[pytest]\n", "conftest.py": FORGE_ABOVE}, id="ini-and-conftest"),
        pytest.param({"pytest.ini": "[pytest]\naddopts = -p hf_forge\n"}, id="ini-addopts"),
    ],
)
def test_config_planted_above_the_grading_copy_in_the_sandbox(task: Task, cache: SnapshotCache, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              planted: dict[str, str]) -> None:
    """In the sandbox the shared temp dir is not there to write to: nothing is planted."""
    shared_tmp = tmp_path / "shared-tmp"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    shell = " ; ".join(f"printf '%s' {shlex.quote(text)} > {shlex.quote(str(shared_tmp / name))}"
                       for name, text in planted.items())
    r, art = files_attempt(task, cache, tmp_path, {**WRONG, "hf_forge.py": FORGE_ABOVE}, shell)
    assert_unsolved(r, art)
    assert not any((shared_tmp / name).exists() for name in planted)


@pytest.mark.parametrize(
    "planted",
    [
        pytest.param({"pytest.ini": "[pytest]\n", "conftest.py": FORGE_ABOVE}, id="ini-and-conftest"),
        pytest.param({"pytest.ini": "[pytest]\naddopts = -p hf_forge\n"}, id="ini-addopts"),
    ],
)
def test_config_planted_above_the_grading_copy(task: Task, cache: SnapshotCache, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, planted: dict[str, str]) -> None:
    """The repository has no pytest configuration, so pytest searches the folders above the grading
    copy (in the temp dir, where any process can write); the ini file found there moves the rootdir
    and the conftest boundary up (the forging plugin strips the id prefix that this adds). Was
    scored solved; then grading refused to run: ``infra``, which took the wrong fix out of the scores (hatk42); now
    every pytest command's configuration is pinned (``testrun.pinned_config``), nothing above is read, and the wrong
    fix is graded as one: ``tests_failed``."""
    shared_tmp = tmp_path / "shared-tmp"
    shared_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    shell = " && ".join(f"printf '%s' {shlex.quote(text)} > {shlex.quote(str(shared_tmp / name))}"
                        for name, text in planted.items())
    r, art = files_attempt(task, cache, tmp_path, {**WRONG, "hf_forge.py": FORGE_ABOVE}, shell,
                           sandbox=SandboxChoice("none"))
    assert_unsolved(r, art, "tests_failed")
    assert all((shared_tmp / name).is_file() for name in planted)  # it did plant them
    for name in planted:
        (shared_tmp / name).unlink()
    assert config_above(shared_tmp / "x" / "w") is None


# -- what is carried, path by path ----------------------------------------------------------------

def test_carried_changes_by_path(task: Task, tmp_path: Path) -> None:
    pristine, work = tmp_path / "p", tmp_path / "w"
    base = {"src/calc/__init__.py": CALC_1, "tests/test_add.py": TEST_ADD, "pyproject.toml": PYPROJECT,
            "README.md": "# calc\n"}
    for root in (pristine, work):
        for rel, text in base.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    (work / ".git").write_text("gitdir: /elsewhere\n")  # never a change
    dropped = {
        "conftest.py", "src/conftest.py", "src/calc/conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml",
        ".pytest.toml", "tox.ini", "sitecustomize.py", "src/sitecustomize.py", "sitecustomize/__init__.py",
        "src/usercustomize/__init__.py", "hf.pth", "src/hf.pth", "evil-1.0.dist-info/entry_points.txt",
        "src/evil-1.0.dist-info/entry_points.txt", "homefield_reporter.py", "src/homefield_reporter.py",
        "homefield_seal.py", "src/homefield_seal/__init__.py",
        "pytest.py", "_pytest/__init__.py", "pluggy/__init__.py", "json.py", "src/json/__init__.py",
        "tests/test_sub.py", "tests/test_new.py", "tests/helpers.py",
    }
    carried = {"src/calc/__init__.py", "src/calc/json.py", "src/calc/sub/__init__.py", "README.md",
               "src/newpkg/__init__.py", "newmod.py", "docs/usage.md", "sitecustomize/helper.py"}
    for rel in dropped | carried:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("x = 1\n")
    (work / "pyproject.toml").write_text(PYPROJECT.replace('version = "0"', 'version = "1"'))
    carried.add("pyproject.toml")
    os.symlink("/etc/hostname", work / "abs_link.py")
    os.symlink("../../../outside.py", work / "src" / "calc" / "escape.py")
    os.symlink("__init__.py", work / "src" / "calc" / "inside.py")
    os.symlink("src/calc", work / "pytest_link")
    os.symlink("src/calc", work / "xdist")  # a symlink to a folder is a package for import
    dropped |= {"abs_link.py", "src/calc/escape.py", "xdist"}
    carried |= {"src/calc/inside.py", "pytest_link"}
    changes = tree_changes(pristine, work)
    assert ".git" not in changes
    got_carried, got_dropped, touched = carried_changes(changes, task, pristine, work)
    assert set(got_carried) == carried
    assert set(got_dropped) == dropped
    assert touched
    # replacing the folder that holds the hidden tests counts as touching them
    other = tmp_path / "w2"
    (other / "src" / "calc").mkdir(parents=True)
    (other / "src" / "calc" / "__init__.py").write_text(CALC_1)
    (other / "README.md").write_text("# calc\n")
    (other / "pyproject.toml").write_text(PYPROJECT)
    (other / "tests").write_text("not a folder\n")
    ch = tree_changes(pristine, other)
    assert ch["tests"] == "added" and ch["tests/test_add.py"] == "deleted"
    c, d, t = carried_changes(ch, task, pristine, other)
    assert c == [] and set(d) == {"tests", "tests/test_add.py"} and t
    # a top-level module that the reference fix adds too is the task, not a shadow (for instance a new
    # package of the repository that the user's environment has installed from a later checkout)
    (other / "tests").unlink()
    (other / "src" / "packaging").mkdir()
    (other / "src" / "packaging" / "__init__.py").write_text("x = 1\n")
    ch = tree_changes(pristine, other)
    own = dataclasses.replace(task, source_files=[*task.source_files, "src/packaging/__init__.py"])
    assert "src/packaging/__init__.py" in carried_changes(ch, own, pristine, other)[0]
    assert "src/packaging/__init__.py" in carried_changes(ch, task, pristine, other)[1]


# -- through the command line ---------------------------------------------------------------------

@pytest.mark.slow
def test_cli_run_scores_attack_unsolved_and_committed_fix_solved(fx: Fixture, task: Task, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--no-local", str(fx.root), str(repo)], check=True, capture_output=True)
    (repo / ".homefield").mkdir()
    (repo / ".homefield" / "tasks.jsonl").write_text(json.dumps(task.to_dict()) + "\n")
    forge = script_agent(tmp_path / "agents", {**WRONG, "conftest.py": FORGE, "sitecustomize/__init__.py":
                                               resolve(FORGING["sitecustomize-package"])["sitecustomize/__init__.py"]},
                         COMMIT, name="forge")
    fix = script_agent(tmp_path / "agents", GOOD, COMMIT, name="fix")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HOMEFIELD_")) or k == PHASE_DIR_VAR}  # the test's own phase lock
    argv = [sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", f"forge={forge.spec}", "--agent",
            f"fix={fix.spec}", "--attempts", "1", "--run-id", "r1", "-n", "0",
            "--", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:anyio"]
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = [json.loads(x) for x in (repo / ".homefield" / "runs" / "r1" / "results.jsonl").read_text().splitlines()]
    outcomes = {r["agent"]: r["outcome"] for r in results}
    assert outcomes == {"forge": "tests_failed", "fix": "solved"}, results



# -- issue 30, A3: a forger that counts the asserted value in the test's file --------------------------

TWO_SITES = ("from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 2) == 3\n    assert sub(9, 1) == 8\n\n\n"
             "def test_add_still_works():\n    from calc import add\n    assert add(2, 2) == 4\n")


@pytest.mark.slow
def test_a_forger_counting_the_asserted_value_passes_a_swapped_twin(task: Task, cache: SnapshotCache,
                                                                    tmp_path: Path) -> None:
    """Round 6's A3: the asserted value returned unless it occurs elsewhere in the test's file. A twin
    that borrowed another assertion's value (3 -> 8) was told apart and the attempt solved; the twin
    now swaps its function's own values (3 <-> 8), so the file counts alike in both runs and the twin
    passes: ``forged``."""
    lines = TWO_SITES.splitlines(keepends=True)
    patch = ("diff --git a/tests/test_sub.py b/tests/test_sub.py\nnew file mode 100644\n--- /dev/null\n"
             f"+++ b/tests/test_sub.py\n@@ -0,0 +1,{len(lines)} @@\n" + "".join("+" + x for x in lines))
    two = dataclasses.replace(task, test_patch=patch, FAIL_TO_PASS=["tests/test_sub.py::test_sub"],
                              PASS_TO_PASS=["tests/test_sub.py::test_add_still_works"], canaries=1)
    r, art = files_attempt(two, cache, tmp_path, {"src/calc/__init__.py": WRONG_CALC + COUNT_ORACLE},
                           sandbox=SandboxChoice("none"))
    assert r.outcome == "forged", (r, (art / "tests.log").read_text()[-1500:])
    assert r.canary == "tests/test_sub.py::test_sub@twin1", r
