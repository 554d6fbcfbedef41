"""gatk56: a ``uv run`` test command installed the grading copy's own project into the environment it made (``uv
run`` syncs the project, editable, from the copy's ``pyproject.toml``) before pytest started; grading carries an agent's
``pyproject.toml`` whole unless its pytest table changed (``carried._section_of``). So an agent's
``[project.entry-points.pytest11]`` (with ``[tool.setuptools] py-modules`` naming its module) was installed and pytest
autoloaded the agent's module as a plugin, beside the reporter, in every run of the grading. ops58: a ``uv run`` in a
project runs in the run's active environment, never synced (``testrun.project_run``: ``--active --no-sync``): the
user's environment, whose project was installed from the user's checkout, its editable install the copy's in the run
(the run's own environment); nothing of the tree's packaging metadata is installed."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task
from helpers.uv import plugin_wheel, uv_or_skip

from pytest_homefield.run.grading import Grade, grade
from pytest_homefield.sandbox import protected, testrun
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "totals.py"
TEST = "tests/test_totals.py"
PARENT = "def total():\n    return 3\n"
FIXED = "def total():\n    return 4\n"
TESTS = "import totals\n\n\ndef test_total():\n    assert totals.total() == 4\n"
PROJECT = ('[project]\nname = "totals"\nversion = "0"\nrequires-python = ">=3.10"\n\n'
           '[dependency-groups]\ndev = ["pytest"]\n\n[tool.uv]\npackage = true\n\n'
           '[tool.setuptools]\npy-modules = ["totals"]\n')
#: The agent's project: its module a pytest plugin, installed by the sync ``uv run`` makes.
AGENTS = PROJECT.replace('py-modules = ["totals"]', 'py-modules = ["totals", "totals_extra"]') + (
    '\n[project.entry-points.pytest11]\nextra = "totals_extra"\n')


def _users_environment(tmp_path: Path, uv: str, checkout: Path) -> Path:
    """The user's environment of ``checkout`` (its ``uv run`` one): a venv with the project installed editable from the
    checkout (setuptools, built offline from uv's cache) and this process's pytest (a ``.pth`` naming its site
    folder)."""
    import sysconfig
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "_hf_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    made = subprocess.run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "--no-deps", "-e",
                           str(checkout)], capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        pytest.skip(f"the project could not be installed (uv's cache, the registry): {made.stderr[-500:]}")
    return venv


@dataclass
class Carried:
    """A task of :data:`SOURCE` run by a ``uv`` command (:func:`_carried`): the task, ``venv`` (the
    environment homefield runs in, ``VIRTUAL_ENV``) and ``work``, the agent's copy of the parent holding the real
    fix."""

    fix: FixTask
    venv: Path
    work: Path

    def grade(self, tmp_path: Path, sandbox: str = "none") -> Grade:
        """The grading of :attr:`work` (no canaries, ``tmp_path/out``)."""
        return grade(self.fix.task, workspace=self.work, pristine=self.fix.pristine, out_dir=tmp_path / "out",
                     run_timeout_s=300, canaries=False, sandbox=sandbox,
                     env={**os.environ, "VIRTUAL_ENV": str(self.venv)})


def _carried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test_cmd: str, parent_data: dict[str, str], *,
             sync: bool = False) -> Carried:
    """The totals task (no project of its own: ``parent_data``'s files, a ``pyproject.toml`` among them) whose test
    command is ``test_cmd`` (``{uv}``: uv's path), its checkout protected, and its user's environment
    (:func:`_users_environment`; ``sync``: ``uv sync`` in the checkout, its ``.venv``); skipped without uv or what
    it installs."""
    uv = uv_or_skip()
    b = build_fix_task(tmp_path / "task", name="totals", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TESTS, first="totals", message="Count to four", fail_to_pass=[f"{TEST}::test_total"],
                       pass_to_pass=[], project=False, parent_data=parent_data)
    b.task.test_cmd = test_cmd.format(uv=uv)
    monkeypatch.setattr(protected, "_PROTECTED", [])
    protected.protect(b.root)
    if sync:
        synced = subprocess.run([uv, "sync", "-q", "--python", sys.executable], cwd=b.root, capture_output=True,
                                text=True, timeout=300)
        if synced.returncode != 0:
            pytest.skip(f"uv sync failed (uv's cache, the registry): {synced.stderr[-500:]}")
        venv = b.root / ".venv"
    else:
        venv = _users_environment(tmp_path, uv, b.root)
    work = copy_tree(b.pristine, tmp_path / "work")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    return Carried(b, venv, work)


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap", "landlock"])
def test_an_agents_entry_point_is_not_loaded_by_a_uv_run_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 sandbox: str) -> None:
    """Measured before ops58: the marker the agent's plugin module writes was there after the grading (uv synced the
    copy's project, with the agent's entry point, into ``.venv`` in the copy). Now the run is in the user's
    environment, unsynced: no marker, and the agent's real fix is ``solved`` (the copy's ``totals`` imported)."""
    c = _carried(tmp_path, monkeypatch, "{uv} run pytest", {"pyproject.toml": PROJECT})
    marker = tmp_path / "loaded"
    (c.work / "pyproject.toml").write_text(AGENTS, encoding="utf-8")  # the agent's plugin beside the real fix
    (c.work / "totals_extra.py").write_text(f"open({str(marker)!r}, 'a').close()\n", encoding="utf-8")
    g = c.grade(tmp_path, sandbox)
    assert "pyproject.toml" in g.carried, (g.carried, g.dropped)
    assert not marker.exists(), (g.outcome, g.error)
    assert g.outcome == "solved", (g.outcome, g.error, (tmp_path / "out" / "tests.log").read_text()[-2000:])
    assert not (c.work / ".venv").exists()


@pytest.mark.parametrize(("command", "project", "expected"), [
    ("uv run pytest", True, "uv run --active --no-sync pytest"),
    ("env CI=1 uv run -q --frozen pytest -x", True, "env CI=1 uv run --active --no-sync -q --frozen pytest -x"),
    ("uv run --active pytest", True, "uv run --no-sync --active pytest"),
    ("uv run --no-sync --active python -m pytest", True, "uv run --no-sync --active python -m pytest"),
    ("uv run --no-project pytest", True, "uv run --no-project pytest"),
    ("uv run pytest", False, "uv run pytest"),
    ("uv run --project sub pytest", False, "uv run --active --no-sync --project sub pytest"),
    ("uv run --directory sub pytest", True, "uv run --directory sub pytest"),  # no project in sub
    ("uv run --script run.py", True, "uv run --script run.py"),
    ("uv run --bogus pytest", True, "uv run --bogus pytest"),  # refused by the settings
    ("python -m pytest", True, "python -m pytest"),
    ("uv run --directory deep pytest", False, "uv run --active --no-sync --directory deep pytest"),
])
def test_a_uv_run_in_a_project_runs_in_the_active_environment_unsynced(tmp_path: Path, command: str, project: bool,
                                                                       expected: str) -> None:
    """ops58: what :func:`testrun.project_run` makes of a command, and the active environment it names when the run
    has none (this process's own venv)."""
    if project:
        (tmp_path / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "pyproject.toml").write_text(PROJECT, encoding="utf-8")
    run_env: dict[str, str] = {}
    assert testrun.project_run(tmp_path, command, run_env) == expected
    changed = expected != command
    assert run_env == ({"VIRTUAL_ENV": sys.prefix} if changed and sys.prefix != sys.base_prefix else {})
    venv = {"VIRTUAL_ENV": "/elsewhere/venv"}
    testrun.project_run(tmp_path, command, venv)
    assert venv == {"VIRTUAL_ENV": "/elsewhere/venv"}


def test_a_uv_run_with_no_active_environment_does_not_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops58: with no ``VIRTUAL_ENV`` and homefield in no virtual environment, ``uv run pytest`` in a project would
    run in a ``.venv`` uv makes in the copy (synced from the tree's ``pyproject.toml`` before ops58, empty with
    ``--active --no-sync``; under bubblewrap and Landlock not at all, ``infra`` with uv's 'failed to create
    directory'). It does not start, and says what to do; nothing is written in the tree."""
    uv = uv_or_skip()
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "pyproject.toml").write_text(PROJECT.replace('dev = ["pytest"]', "dev = []"), encoding="utf-8")
    (work / SOURCE).write_text(FIXED, encoding="utf-8")
    (work / TEST).write_text(TESTS, encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["PATH"] = os.path.dirname(uv) + os.pathsep + env.get("PATH", "")
    run = testrun.run_tests(work, f"{uv} run --offline pytest", [TEST], out_dir=tmp_path / "out", env=env,
                            sandbox="none", timeout_s=120)
    assert run.exit_code == 127 and run.error is not None and testrun.NO_ACTIVE_ENV in run.error, run.error
    assert sorted(p.name for p in work.iterdir()) == ["pyproject.toml", "tests", "totals.py"]


@pytest.mark.slow
def test_an_env_file_the_uv_run_reads_is_the_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops58: ``uv run --env-file .env pytest`` reads ``.env`` of the grading copy; an agent's ``.env`` setting
    ``PYTEST_PLUGINS`` had its module loaded as a pytest plugin in every run (the marker written; scrubbed_env drops
    the variable from the caller's environment only). The command's env files are the test configuration the user
    wrote: the parent's is put back (``dropped``), and the real fix beside it is ``solved``."""
    c = _carried(tmp_path, monkeypatch, "{uv} run --env-file .env pytest",
                 {"pyproject.toml": PROJECT, ".env": "TOTALS=1\n"})
    marker = tmp_path / "loaded"
    (c.work / ".env").write_text("TOTALS=1\nPYTEST_PLUGINS=totals_extra\n", encoding="utf-8")
    (c.work / "totals_extra.py").write_text(f"open({str(marker)!r}, 'a').close()\n", encoding="utf-8")
    g = c.grade(tmp_path)
    assert not marker.exists(), (g.outcome, g.error, g.carried, g.dropped)
    assert ".env" in g.dropped and g.outcome == "solved", (g.outcome, g.error, g.carried, g.dropped)


@pytest.mark.parametrize(("command", "expected"), [
    ("uv run --env-file .env --env-file=conf/./test.env pytest", {".env", "conf/test.env"}),
    ("env A=1 uv run --env-file ../outside.env --env-file /elsewhere/x.env pytest", set()),
    ("uv run pytest --env-file .env", set()),  # pytest's word, not uv's
    ("python -m pytest", set()),
])
def test_the_env_files_a_uv_run_reads(tmp_path: Path, command: str, expected: set[str]) -> None:
    """ops58: the tree's files a ``uv run`` command reads as env files (grading keeps the parent's)."""
    from pytest_homefield.sandbox.pytest_config import env_files_of
    assert env_files_of(tmp_path, command) == expected


@pytest.mark.parametrize(("command", "named"), [
    ("uv run --with-editable . pytest", "--with-editable ."),
    ("uv run --with-requirements=requirements-test.txt pytest", "--with-requirements requirements-test.txt"),
    ("uv run -w pytest-cov,./plugins/hf pytest", "--with pytest-cov,./plugins/hf"),
    ("uv run --with 'hfplug @ file:///REPO/plug' pytest", "--with hfplug @ file:///REPO/plug"),
    ("uv run --find-links wheels --with pytest-cov pytest", "--find-links wheels"),
    ("uv run --index local=file:///REPO/idx pytest", "--index local=file:///REPO/idx"),
    ("uv run --with pytest-cov>=5 --with 'x @ https://example.org/x.whl' pytest", None),
    ("uv run --find-links /opt/wheels --index-url https://pypi.org/simple pytest", None),
    ("uv run --with 'hfplug @ file:///opt/plug' pytest", None),
    ("uv run pytest", None),
])
def test_a_uv_run_installing_from_the_tree_is_refused(tmp_path: Path, command: str, named: str | None) -> None:
    """ops58: a ``uv run`` option that has uv install from the tree under test (measured: ``uv run --active --no-sync
    --with-editable .`` installed the copy's project, an agent's entry points with it, into uv's overlay
    environment) is one ``ConfigError`` line at the start; a registry's requirement, a URL or a folder outside the
    repository is none."""
    from pytest_homefield.sandbox.pytest_config import command_problem
    command = command.replace("/REPO", str(tmp_path))
    problem = command_problem(command, tmp_path)
    if named is None:
        assert problem is None
    else:
        assert problem is not None and f"uv run {named.replace('/REPO', str(tmp_path))} installs" in problem, problem


@pytest.mark.slow
def test_the_uv_configuration_a_uv_run_reads_is_the_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops58: ``uv run --with attrs python -m pytest`` resolves ``attrs`` with the graded copy's uv configuration; an
    agent's ``[tool.uv] find-links`` naming a folder of wheels it added had its wheel installed in uv's overlay and
    its ``pytest11`` entry point loaded in every run (the marker written). The ``[tool.uv]`` table and ``uv.toml``
    are the command's configuration: the parent's stays (``pyproject.toml`` in ``dropped``), the real fix beside
    it is ``solved``."""
    c = _carried(tmp_path, monkeypatch, "{uv} run --with attrs python -m pytest", {"pyproject.toml": PROJECT})
    marker = tmp_path / "loaded"
    agents = PROJECT.replace("package = true\n", 'package = true\nfind-links = ["wheels"]\n')
    (c.work / "pyproject.toml").write_text(agents, encoding="utf-8")
    plugin_wheel(c.work / "wheels", marker)
    g = c.grade(tmp_path)
    log = tmp_path / "out" / "tests.log"
    if g.outcome == "infra":  # no registry and attrs not in uv's cache: the parent's run could not start either
        pytest.skip(f"uv could not resolve attrs: {g.error}")
    assert not marker.exists(), (g.outcome, g.error, g.carried, g.dropped, log.read_text()[-1500:])
    assert "pyproject.toml" in g.dropped and g.outcome == "solved", (g.outcome, g.error, g.carried, g.dropped)


def test_which_changes_move_the_uv_configuration(tmp_path: Path) -> None:
    """ops58: ``carried.uv_held_back`` (no uv run files): the top's ``uv.toml``, or ``pyproject.toml`` whose
    ``[tool.uv]`` table changed (parsed: a comment or another table is no change)."""
    from pytest_homefield.run.carried import _two_texts, uv_held_back

    def held(parent: Path, agent: Path, rel: str) -> bool:
        return uv_held_back(rel, frozenset(), functools.partial(_two_texts, parent, agent, rel))

    parent, agent = tmp_path / "p", tmp_path / "a"
    for root in (parent, agent):
        (root / "sub").mkdir(parents=True)
        (root / "pyproject.toml").write_text(PROJECT)
    (agent / "sub" / "pyproject.toml").write_text(PROJECT + '\n[tool.uv.sources]\nx = { path = "x" }\n')
    assert held(parent, agent, "uv.toml")
    assert not held(parent, agent, "sub/uv.toml")
    assert not held(parent, agent, "sub/pyproject.toml")
    (agent / "pyproject.toml").write_text("# a comment\n" + PROJECT.replace('version = "0"', 'version = "1"'))
    assert not held(parent, agent, "pyproject.toml")
    (agent / "pyproject.toml").write_text(PROJECT.replace("package = true", "package = false"))
    assert held(parent, agent, "pyproject.toml")
    (agent / "pyproject.toml").unlink()
    assert held(parent, agent, "pyproject.toml")  # deleted: the parent's table gone


@pytest.mark.slow
def test_a_uv_run_in_the_checkouts_own_environment_runs_in_bubblewrap(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """ops58, r41's left item: a uv user's flow, ``uv sync`` in the checkout (its ``.venv`` inside the repository) and
    homefield under ``uv run`` (``VIRTUAL_ENV`` that ``.venv``), ``test_cmd`` ``uv run pytest``, under bubblewrap: the
    copy had no ``.venv`` and uv could not make one there (read-only, offline): ``infra``. Now the run is in the
    checkout's environment, its editable install the copy's: the real fix is ``solved``."""
    c = _carried(tmp_path, monkeypatch, "{uv} run pytest", {"pyproject.toml": PROJECT}, sync=True)
    g = c.grade(tmp_path, "bwrap")
    assert g.outcome == "solved" and g.test_sandbox == "bwrap", (g.outcome, g.error)


#: A runner script the test command's ``uv run`` runs: pytest with the words given after it.
RUNNER = "import sys\n\nimport pytest\n\nsys.exit(pytest.main(sys.argv[1:]))\n"
#: The agent's inline metadata (PEP 723) on top of it: a dependency resolved from a folder of wheels it adds.
INLINE = '# /// script\n# dependencies = ["attrs"]\n# [tool.uv]\n# find-links = ["wheels"]\n# ///\n'


@pytest.mark.slow
def test_a_uv_run_scripts_inline_metadata_is_the_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops60: ``uv run runner.py`` (a runner script of the tree, pytest's words after it) reads the script's inline
    metadata (PEP 723, ``# /// script``). An agent's block naming a dependency and a ``find-links`` folder of wheels
    it added had uv install its ``attrs`` 99 into the run's active environment (uv: ``--no-sync`` is a no-op for a
    script with inline metadata; ``--active`` installs there) and its ``pytest11`` entry point was loaded (the
    marker written). The block is the command's configuration: the parent's script stays (``dropped``), the real fix
    beside it is ``solved``, and the user's environment is not changed."""
    c = _carried(tmp_path, monkeypatch, "{uv} run runner.py", {"pyproject.toml": PROJECT, "runner.py": RUNNER})
    site = next(c.venv.glob("lib/python*/site-packages"))
    before = sorted(p.name for p in site.iterdir() if p.name != "__pycache__")
    marker = tmp_path / "loaded"
    (c.work / "runner.py").write_text(INLINE + RUNNER, encoding="utf-8")
    plugin_wheel(c.work / "wheels", marker)
    g = c.grade(tmp_path)
    log = tmp_path / "out" / "tests.log"
    assert not marker.exists(), (g.outcome, g.error, g.carried, g.dropped, log.read_text()[-1500:])
    assert sorted(p.name for p in site.iterdir() if p.name != "__pycache__") == before
    assert "runner.py" in g.dropped and g.outcome == "solved", (g.outcome, g.error, g.carried, g.dropped)


@pytest.mark.parametrize(("command", "expected"), [
    ("uv run runner.py -q", {"runner.py"}),
    ("env A=1 uv run --active tools/./run.pyw", {"tools/run.pyw"}),
    ("uv run --script tools/runner -q", {"tools/runner"}),
    ("uv run -qs tools/runner", {"tools/runner"}),
    ("uv run -- runner.py", {"runner.py"}),
    ("uv run pytest", set()),  # a program of the environment, no file read
    ("uv run python runner.py", set()),  # python runs it; uv reads no metadata of it
    ("uv run ../elsewhere.py", set()),
    ("uv run /opt/runner.py", set()),
    ("uv run --directory sub runner.py", set()),  # read in sub, not here
    ("python runner.py", set()),
])
def test_the_script_a_uv_run_runs(tmp_path: Path, command: str, expected: set[str]) -> None:
    """ops60: the tree's file a ``uv run`` command runs as a script (its inline metadata read by uv)."""
    from pytest_homefield.sandbox.pytest_config import uv_script_of
    assert uv_script_of(tmp_path, command) == expected


def test_a_uv_run_commands_own_files_are_dropped_in_the_changes_order(tmp_path: Path) -> None:
    """ops60: ``carried_changes``' ``command`` holds back what a ``uv run`` command reads (its env files, its script,
    the top's ``[tool.uv]``), in the changes' order with the rest; without a command, or for another command, it is
    carried (mining's ``_apply_as_graded`` and grading call it alike)."""
    from pytest_homefield.run.carried import carried_changes
    parent, agent = tmp_path / "p", tmp_path / "a"
    for root in (parent, agent):
        root.mkdir()
        (root / "pyproject.toml").write_text(PROJECT)
        (root / "runner.py").write_text(RUNNER)
        (root / ".env").write_text("A=1\n")
        (root / SOURCE).write_text(PARENT)
    (agent / "runner.py").write_text(INLINE + RUNNER)
    (agent / ".env").write_text("A=2\n")
    (agent / "pyproject.toml").write_text(PROJECT.replace("package = true", "package = false"))
    (agent / SOURCE).write_text(FIXED)
    changes = {"runner.py": "modified", SOURCE: "modified", ".env": "modified", "pyproject.toml": "modified"}

    class Files:
        test_files = [TEST]
        source_files = [SOURCE]
    uv = "uv run --env-file .env runner.py"
    assert carried_changes(changes, Files(), parent, agent, command=uv) == (
        [SOURCE], ["runner.py", ".env", "pyproject.toml"], False)
    for command in (None, "python runner.py"):
        assert carried_changes(changes, Files(), parent, agent, command=command) == (list(changes), [], False)


#: A project with no uv configuration of its own (no ``[tool.uv]`` table, no ``uv.toml``): uv's discovery goes on above.
BARE_PROJECT = '[project]\nname = "totals"\nversion = "0"\nrequires-python = ">=3.10"\n'


@pytest.mark.slow
def test_a_uv_toml_above_the_grading_copy_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ops60, measured: ``uv run --with attrs python -m pytest`` in a copy whose tree holds no uv configuration reads
    the nearest ``uv.toml`` above the copy (uv 0.13.9: a ``pyproject.toml`` without ``[tool.uv]`` does not stop the
    search; one with it, or a ``uv.toml`` at the top, does). The copy is made in the temp folder, where under
    ``--sandbox none`` code another attempt's tests ran may write: its ``find-links`` had its ``attrs`` 99 installed
    in uv's overlay and its ``pytest11`` module loaded in this grading (the marker written), the fix still
    ``solved``. Neither the agent's file nor the user's (what a user expects is the run their checkout makes, which
    no copy elsewhere reproduces by its place): the run's ``UV_CONFIG_FILE`` is an empty file of its own
    (``testrun.uv_config_pin``), so nothing above the copy is read; the fix ``solved``."""
    c = _carried(tmp_path, monkeypatch, "{uv} run --with attrs python -m pytest", {"pyproject.toml": BARE_PROJECT})
    marker = tmp_path / "loaded"
    temp = tmp_path / "temp"  # the folder every grading copy is made in: another attempt's code wrote there
    plugin_wheel(temp / "wheels", marker)
    (temp / "uv.toml").write_text(f'find-links = ["{temp / "wheels"}"]\n', encoding="utf-8")
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    g = c.grade(tmp_path)
    if g.outcome == "infra":  # no registry and attrs not in uv's cache
        pytest.skip(f"uv could not resolve attrs: {g.error}")
    assert not marker.exists(), (g.outcome, g.error)
    assert g.outcome == "solved", (g.outcome, g.error)


@pytest.mark.parametrize(("command", "top", "env", "pinned"), [
    ("uv run pytest", BARE_PROJECT, {}, True),
    ("uv run pytest", PROJECT, {}, False),  # the tree's [tool.uv]: uv stops there
    ("uv run pytest", None, {}, True),  # no project at all: uv still looks above
    ("uv run --config-file ci/uv.toml pytest", BARE_PROJECT, {}, False),
    ("uv run --no-config pytest", BARE_PROJECT, {}, False),
    ("uv run --directory sub pytest", BARE_PROJECT, {}, False),
    ("uv run pytest", BARE_PROJECT, {"UV_NO_CONFIG": "1"}, False),
    ("python -m pytest", BARE_PROJECT, {}, False),
])
def test_where_a_uv_run_reads_its_configuration(tmp_path: Path, command: str, top: str | None, env: dict[str, str],
                                                 pinned: bool) -> None:
    """ops60: :func:`testrun.uv_config_pin` names an empty configuration file of the run's where uv's discovery would
    go above the tree, and nothing where the tree, the command or the caller chose it."""
    tree, out = tmp_path / "tree", tmp_path / "out"
    tree.mkdir()
    out.mkdir()
    if top is not None:
        (tree / "pyproject.toml").write_text(top, encoding="utf-8")
    run_env = dict(env)
    testrun.uv_config_pin(tree, command, run_env, out)
    if pinned:
        assert run_env == {**env, "UV_CONFIG_FILE": str(out / testrun.NO_UV_CONFIG)}
        assert (out / testrun.NO_UV_CONFIG).read_bytes() == b""
    else:
        assert run_env == env and not (out / testrun.NO_UV_CONFIG).exists()
    (tree / "uv.toml").write_text("", encoding="utf-8")
    run_env = dict(env)
    testrun.uv_config_pin(tree, command, run_env, out)
    assert "UV_CONFIG_FILE" not in run_env  # a uv.toml at the top: uv stops there


@pytest.mark.slow
def test_the_oracle_of_a_uv_run_task_whose_fix_changes_its_runner_is_graded_without_twins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ref60: a reference fix changing the runner script a ``uv run`` command runs (held back: ``uv_held_back``, the
    parent's script kept) beside its source fix. ``grading.is_reference_fix`` compared the script too, so the oracle's
    change was no reference fix and its grading planted canary twins (measured before: ``canaries.json`` in the
    attempt folder). Now it compares what grading carries: ``solved``, no twins."""
    from pytest_homefield.run.changes import render_diff, tree_changes

    c = _carried(tmp_path, monkeypatch, "{uv} run runner.py", {"pyproject.toml": PROJECT, "runner.py": RUNNER})
    (c.work / "runner.py").write_text("# the runner\n" + RUNNER, encoding="utf-8")  # the reference fix's own change
    changes = tree_changes(c.fix.pristine, c.work)
    c.fix.task.gold_patch = render_diff(c.fix.pristine, c.work, sorted(changes), changes)
    assert "diff --git a/runner.py b/runner.py" in c.fix.task.gold_patch
    g = grade(c.fix.task, workspace=c.work, pristine=c.fix.pristine, out_dir=tmp_path / "out", run_timeout_s=300,
              env={**os.environ, "VIRTUAL_ENV": str(c.venv)})
    assert g.dropped == ["runner.py"] and g.outcome == "solved", (g.outcome, g.error, g.carried, g.dropped)
    assert not (tmp_path / "out" / "canaries.json").exists()
