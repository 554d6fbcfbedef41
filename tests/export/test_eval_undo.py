"""The exported ``eval.sh`` grades as homefield grades (contracts §2 export, §7; atk11 E1): run with
bash in a real clone of the tiny task repository of :mod:`helpers.attack_repo`, the patch under
evaluation already in its working tree as a harness leaves it. On main a patch that only added a root
``conftest.py`` rewriting every report to ``passed`` had every FAIL_TO_PASS id ``PASSED`` there
(``empty_patch`` in homefield)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from helpers.attack_repo import (
    F2P,
    GOOD_CALC,
    NO_PLUGINS,
    P2P,
    PYPROJECT,
    TEST_ADD,
    TEST_SUB,
    WRONG_CALC,
    Fixture,
    build,
    git,
    task_for,
)
from helpers.uv import plugin_wheel, uv_or_skip

from pytest_homefield.agents.attack_payloads import FORGE
from pytest_homefield.commands.export import eval_time_limit
from pytest_homefield.export.swebench import instance
from pytest_homefield.export.taskrepo import END, EVAL_TYPE, LOG_PARSER, START, eval_script
from pytest_homefield.records import Task
from pytest_homefield.run.eval_undo import split_test_paths, undo_lines


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build(tmp_path_factory.mktemp("undo") / "repo")


@pytest.fixture(scope="module")
def task(fx: Fixture) -> Task:
    return task_for(fx)


def _evaluate(fx: Fixture, task: Task, where: Path, files: Mapping[str, str | bytes],
              ids: list[str] | None = None, memory_mb: float | None = 4096.0,
              time_limit: tuple[float, str] | None = (600.0, "600 s"), wait_s: float = 120,
              undo: bool = True, python: Path | None = None) -> tuple[dict[str, str], str]:
    """Clone at the base commit, write ``files`` (the patch under evaluation), run the exported
    ``eval.sh`` there; ``({test id: status}, the whole log)``. ``python``: the interpreter eval.sh's ``python``
    is (its folder first on ``PATH``; default this one)."""
    git(fx.root, "clone", "-q", str(fx.root), str(where))
    git(where, "checkout", "-q", task.parent)
    for rel, text in files.items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (where / rel).write_bytes(text)
        else:
            (where / rel).write_text(text, encoding="utf-8")
        if (where / rel).read_bytes().startswith(b"#!"):  # a hook: executable (a patch's ``new file mode 100755``)
            (where / rel).chmod(0o755)
    tracked = [p for p in git(fx.root, "ls-tree", "-r", "-z", "--name-only", task.parent).split("\0") if p]
    script = eval_script(task, F2P + P2P if ids is None else ids, undo=undo_lines(task, tracked) if undo else "",
                         memory_mb=memory_mb, time_limit=time_limit)
    script = script.replace("\ncd /testbed\n", f"\ncd {where}\n", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOMEFIELD_", "GIT_"))}
    env.update(PATH=f"{Path(python or sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH="src")
    log = subprocess.run(["bash", "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=wait_s, check=False).stdout  # one stream, as docker exec gives it
    between = log.split(START, 1)[-1].split(END, 1)[0]
    # as swebench's parse_log_pytest reads it: "<STATUS> <id> …"
    status = {w[1]: w[0] for w in (ln.split() for ln in between.splitlines())
              if len(w) >= 2 and w[0] in ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL")}
    return status, log


def test_a_forging_patch_is_undone(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """A wrong fix, and every channel pytest or the interpreter loads without a test importing it."""
    status, log = _evaluate(fx, task, tmp_path / "c", {
        "src/calc/__init__.py": WRONG_CALC,
        "conftest.py": FORGE,
        "tests/conftest.py": FORGE,
        "pytest.ini": "[pytest]\naddopts = -p forgeplug\n",
        "forgeplug.py": FORGE,  # a plain module: carried (only the configuration that loads it is not)
        "zz_forge.pth": "import os\n",
    })
    assert [status.get(i) for i in F2P] == ["FAILED", "FAILED"], log
    for rel in ("conftest.py", "tests/conftest.py", "pytest.ini", "zz_forge.pth"):
        assert f"homefield: undo {rel} " in log
        assert not (tmp_path / "c" / rel).exists()


def test_a_module_a_pth_file_imports_at_start_is_undone(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """gatk55: eval.sh's rule as grading's (``carried._outside_modules``): an added module shadowing setuptools'
    editable finder of the interpreter's site folders (a ``.pth`` line imports it at every start; no distribution's
    ``top_level.txt`` names it) was kept, and ran before pytest (it printed here); now undone."""
    import site
    finders = sorted(n[:-3] for f in site.getsitepackages() if os.path.isdir(f) for n in os.listdir(f)
                     if n.startswith("__editable__") and n.endswith("_finder.py"))
    assert finders  # this environment: an editable install
    rel = f"src/{finders[0]}.py"
    status, log = _evaluate(fx, task, tmp_path / "c", {"src/calc/__init__.py": GOOD_CALC,
                                                       rel: "print('gatk55 ran at start')\ndef install():\n    pass\n"})
    assert f"homefield: undo {rel} " in log, log
    assert "gatk55 ran at start" not in log


def test_the_fix_is_kept_and_test_edits_undone(fx: Fixture, task: Task, tmp_path: Path) -> None:
    status, log = _evaluate(fx, task, tmp_path / "c", {
        "src/calc/__init__.py": GOOD_CALC,
        "src/calc/helper.py": "X = 1\n",
        "tests/test_add.py": "def test_add():\n    assert True\n",
        "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\naddopts = "-x"\n',
        "json.py": "open('UNDO-RAN-MY-JSON', 'w').close()\n",  # shadows a stdlib module the undo step imports
    })
    assert [status.get(i) for i in F2P + P2P] == ["PASSED"] * 3, log
    assert (tmp_path / "c" / "src" / "calc" / "__init__.py").read_text() == GOOD_CALC
    assert (tmp_path / "c" / "src" / "calc" / "helper.py").exists()
    assert (tmp_path / "c" / "tests" / "test_add.py").read_text() == TEST_ADD
    assert "[tool.pytest" not in (tmp_path / "c" / "pyproject.toml").read_text()
    assert "homefield: undo src/calc" not in log
    assert "homefield: undo json.py " in log and not (tmp_path / "c" / "json.py").exists()
    assert not (tmp_path / "c" / "UNDO-RAN-MY-JSON").exists()  # the undo step ran isolated (python -I)


def test_a_repository_that_forces_colour_is_graded(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """nu31 on python-humanize/humanize (``[tool.pytest] addopts = ["--color=yes"]``): ``-rA`` printed every status
    line in colour (``\\x1b[32mPASSED\\x1b[0m …``), which swebench's ``parse_log_pytest`` does not read, and the
    reference fix of every task was unresolved in swebench's grading. Here the base commit's own configuration
    forces colour; eval.sh's ``--color=no`` comes after it."""
    repo = tmp_path / "coloured"
    git(tmp_path, "clone", "-q", str(fx.root), str(repo))
    git(repo, "checkout", "-q", task.parent)
    (repo / "pyproject.toml").write_text(PYPROJECT + '\n[tool.pytest.ini_options]\naddopts = "--color=yes"\n')
    git(repo, "commit", "-q", "-am", "Force colour", date="2026-01-01T13:00:00+00:00")
    base = git(repo, "rev-parse", "HEAD").strip()
    coloured = dataclasses.replace(task, parent=base)
    status, log = _evaluate(dataclasses.replace(fx, root=repo), coloured, tmp_path / "c",
                            {"src/calc/__init__.py": GOOD_CALC})
    assert "--color=yes" in (tmp_path / "c" / "pyproject.toml").read_text()  # the repository's own, kept
    assert [status.get(i) for i in F2P + P2P] == ["PASSED"] * 3, log


def test_a_folder_where_a_hidden_test_file_goes_is_undone(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """atk20 F1, as grading drops it: with the hidden test file new beside the code (``src/calc/test_sub.py``,
    no folder name marks it a test), a folder the patch put at its path was left by the undo step on main,
    the hidden tests could not be applied there and the reference fix itself was not resolved."""
    rel = "src/calc/test_sub.py"
    lines = TEST_SUB.splitlines()
    patch = (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
             f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))
    beside = dataclasses.replace(task, test_files=[rel], test_patch=patch)
    ids = [i.replace("tests/", "src/calc/") for i in F2P + P2P]
    status, log = _evaluate(fx, beside, tmp_path / "c", {"src/calc/__init__.py": GOOD_CALC, f"{rel}/__init__.py": ""},
                            ids)
    assert f"homefield: undo {rel}/__init__.py " in log
    assert [status.get(i) for i in ids] == ["PASSED"] * 3, log


def test_test_paths_name_whole_test_folders() -> None:
    tracked = ["tests/test_a.py", "tests/data/x.json", "src/pkg/__init__.py", "src/pkg/test_util.py", "README.md"]
    assert split_test_paths(tracked) == (["tests/"], ["src/pkg/test_util.py"])


def test_eval_stops_when_it_cannot_undo(task: Task, tmp_path: Path) -> None:
    """Fail closed: no git repository to clean (nor a ``python``) → exit 1 before any test runs."""
    script = eval_script(task, F2P, undo=undo_lines(task, [])).replace("\ncd /testbed\n", f"\ncd {tmp_path}\n", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path.parent)
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1 and "homefield: the undo step failed" in proc.stderr
    assert START not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_the_tests_run_under_the_memory_cap_of_mining(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """mine29 on mahmoud/boltons: a task whose parent allocates without end (4 GiB at mining, where each test
    process has ``max_test_memory_mb`` of address space) held 5.6 GiB and grew when its eval.sh ran the empty
    patch. The test command runs under the same cap (``ulimit -v``): a patch that takes 1 GiB at import fails
    under a cap of 256 MiB, and the same fix without it passes."""
    hoard = "_HOARD = bytearray(1 << 30)\n" + GOOD_CALC
    status, log = _evaluate(fx, task, tmp_path / "capped", {"src/calc/__init__.py": hoard}, memory_mb=256)
    assert "+ ulimit -v 262144\n" in log and "MemoryError" in log, log
    assert all(status.get(i) != "PASSED" for i in F2P), log
    status, log = _evaluate(fx, task, tmp_path / "fix", {"src/calc/__init__.py": GOOD_CALC}, memory_mb=256)
    assert [status.get(i) for i in F2P] == ["PASSED", "PASSED"], log
    assert "(ulimit -v 4194304 && " in eval_script(task, F2P)  # the default: max_test_memory_mb's 4096 MiB
    assert "ulimit" not in eval_script(task, F2P, memory_mb=None)


@pytest.mark.slow
def test_the_tests_run_under_the_time_bound_of_grading(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """host30: eval.sh ran the tests with no time limit, so a patch whose code hangs held swebench's harness
    (and this test's bash) without end. The test command now runs under ``timeout`` at the bound homefield
    grades the task with, and one line says when it fired: a patch sleeping in ``add`` is stopped after 2 s,
    its FAIL_TO_PASS ids are not passed, and the script goes on to reset the test files."""
    hang = GOOD_CALC.replace("def add(a, b):\n", "def add(a, b):\n    import time\n    time.sleep(600)\n", 1)
    assert hang != GOOD_CALC
    status, log = _evaluate(fx, task, tmp_path / "hang", {"src/calc/__init__.py": hang}, time_limit=(2, "2 s"),
                           wait_s=60)
    assert "homefield: the tests were stopped after 2 s, the bound homefield grades this task with (2 s)" in log, log
    assert "timeout: sending signal TERM" in log, log
    assert all(status.get(i) != "PASSED" for i in F2P), log
    assert log.index(END) < log.rindex("+ for f in "), log  # the closing reset still ran
    status, log = _evaluate(fx, task, tmp_path / "fix", {"src/calc/__init__.py": GOOD_CALC},
                           time_limit=(30, "30 s"))
    assert [status.get(i) for i in F2P] == ["PASSED", "PASSED"], log
    assert "homefield: the tests were stopped" not in log.replace("echo 'homefield: the tests were stopped", "")


def test_the_time_bound_is_the_tasks_grading_bound(task: Task) -> None:
    """The bound ``homefield export`` writes into eval.sh is :func:`grading_bound`'s: the run timeout, or a hanging
    parent's task bound (5x its commit's recorded test seconds, at least 30 s); none when it is not given."""
    plain = dataclasses.replace(task, test_cmd="python -m pytest", verify={})
    assert "(ulimit -v 4194304 && timeout --verbose -k 10 600 python -m pytest -rA " in eval_script(plain, F2P)
    assert eval_time_limit(plain, 300) == (300, "300 s")
    hangs = dataclasses.replace(plain, verify={"parent_bound": 12.0, "commit_s": 8.0})
    script = eval_script(hangs, F2P, time_limit=eval_time_limit(hangs, 300))
    assert "timeout --verbose -k 10 40 python" in script and "s bound of 40 s (5× the 8.0 s" in script
    assert "timeout" not in eval_script(plain, F2P, time_limit=None)


def _rootdir_moved(fx: Fixture, task: Task, tmp_path: Path) -> tuple[Fixture, Task, list[str]]:
    """gatk48's case (ops48): a repository with no pytest configuration whose root ``conftest.py`` gives the tests a
    fixture, and a task whose hidden test file is new beside the code (``src/calc/test_sub.py``, using it); the
    repository (its clone), the task and its ids."""
    repo = tmp_path / "bare"
    git(tmp_path, "clone", "-q", str(fx.root), str(repo))
    git(repo, "checkout", "-q", task.parent)
    git(repo, "rm", "-q", "pyproject.toml")  # no pytest configuration anywhere: the setup.py search decides
    (repo / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n")
    git(repo, "add", "conftest.py")
    git(repo, "commit", "-q", "-m", "A fixture for every test", date="2026-01-01T13:00:00+00:00")
    base = git(repo, "rev-parse", "HEAD").strip()
    rel = "src/calc/test_sub.py"
    lines = ["from calc import add, sub", "", "", "def test_sub(two):", "    assert sub(5, 3) == two", "", "",
             "def test_add(two):", "    assert add(1, 1) == two"]
    patch = (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
             f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))
    ids = [f"{rel}::test_sub", f"{rel}::test_add"]
    beside = dataclasses.replace(task, parent=base, test_files=[rel], test_patch=patch, FAIL_TO_PASS=ids[:1],
                                 PASS_TO_PASS=ids[1:])
    return dataclasses.replace(fx, root=repo), beside, ids


#: A ``setup.py`` a fix may add.
SETUP_PY = "from setuptools import setup\n\nsetup()\n"


def test_a_setup_py_that_moves_pytests_rootdir_is_held_back_as_grading_holds_it(fx: Fixture, task: Task,
                                                                               tmp_path: Path) -> None:
    """gatk48 in the export (ops48, :func:`_rootdir_moved`): a fix that also adds ``src/calc/setup.py`` beside the
    hidden test file makes ``src/calc/`` pytest's rootdir and its ``confcutdir``: the root ``conftest.py`` is not
    loaded and the tests error. homefield's grading holds such a file back (``carried.setup_moved``: the reference fix
    with it is solved); the exported ``eval.sh`` kept it and the same fix was unresolved there (every id ``ERROR``).
    The undo step asks the image's pytest (its own ``determine_setup``) for the rootdir and configuration with and
    without the patch's added or deleted setup files and puts them back as at the base commit when they move; a
    ``setup.py`` that moves nothing (at the top, already the rootdir) is kept."""
    bare, beside, ids = _rootdir_moved(fx, task, tmp_path)
    status, log = _evaluate(bare, beside, tmp_path / "c", {"src/calc/__init__.py": GOOD_CALC,
                                                            "src/calc/setup.py": SETUP_PY}, ids)
    assert "homefield: undo src/calc/setup.py (it moves pytest's rootdir" in log, log
    assert not (tmp_path / "c" / "src" / "calc" / "setup.py").exists()
    assert [status.get(i) for i in ids] == ["PASSED"] * 2, log
    status, log = _evaluate(bare, beside, tmp_path / "d", {"src/calc/__init__.py": GOOD_CALC, "setup.py": SETUP_PY},
                            ids)
    assert "homefield: undo setup.py" not in log and (tmp_path / "d" / "setup.py").exists()
    assert [status.get(i) for i in ids] == ["PASSED"] * 2, log


#: swebench 5's grading of one log: the instance (a JSON line), the log's path; prints ``resolved``.
GRADE = """
import json, sys
from swebench.harness.grading import get_eval_report
from swebench.harness.utils import make_test_spec
inst = json.loads(open(sys.argv[1]).read())
report = get_eval_report(make_test_spec(inst), {"instance_id": inst["instance_id"], "model_name_or_path": "gold",
                         "model_patch": inst["patch"]}, sys.argv[2], include_tests_status=False)
print(json.dumps(report[inst["instance_id"]]["resolved"]))
"""


def _swebench_resolved(swebench_python: str, task: Task, log: str, where: Path) -> bool:
    """Whether the real swebench package (``make_test_spec``, ``get_eval_report``, run by ``swebench_python``)
    resolves ``task``'s instance row on ``log`` (an eval.sh log); ``where.json``/``where.log`` are written beside
    ``where``. Raises AssertionError when the grading script fails."""
    row = dict(instance(task, "me/calc"), image="homefield/x", image_name="homefield/x",
               eval_script="", log_parser=LOG_PARSER, eval_type=EVAL_TYPE)
    row_file, log_file = where.with_suffix(".json"), where.with_suffix(".log")
    row_file.write_text(json.dumps(row))
    log_file.write_text(log)
    graded = subprocess.run([swebench_python, "-c", GRADE, str(row_file), str(log_file)], capture_output=True,
                            text=True, timeout=120)
    assert graded.returncode == 0, graded.stderr[-3000:]
    return bool(json.loads(graded.stdout.strip().splitlines()[-1]))


@pytest.mark.clients
def test_swebench_grades_the_held_back_setup_py_as_homefield_does(swebench_python: str, fx: Fixture, task: Task,
                                                                  tmp_path: Path) -> None:
    """The real swebench package (``make_test_spec``, ``get_eval_report``) reads the exported ``eval.sh``'s log of
    :func:`test_a_setup_py_that_moves_pytests_rootdir_is_held_back_as_grading_holds_it`'s fix: resolved, as
    homefield's grading solves it; with the undo step as it was (none for a moved setup: here no undo step at all
    beyond the lines before it), not resolved."""
    bare, beside, ids = _rootdir_moved(fx, task, tmp_path)
    verdicts = []
    for name, with_undo in (("held", True), ("kept", False)):
        status, log = _evaluate(bare, beside, tmp_path / name, {"src/calc/__init__.py": GOOD_CALC,
                                                                 "src/calc/setup.py": SETUP_PY}, ids, undo=with_undo)
        verdicts.append(_swebench_resolved(swebench_python, beside, log, tmp_path / name))
    assert verdicts == [True, False]


#: The evaluated patch's ``pyproject.toml`` for a ``uv run`` test command: its project depends on ``attrs`` and
#: pytest, resolved first from a folder of wheels it adds (``[tool.uv] find-links``).
UV_AGENTS = PYPROJECT + 'dependencies = ["attrs", "pytest"]\n\n[tool.uv]\nfind-links = ["wheels"]\n'


def _uv_planted(task: Task, tmp_path: Path, command: str) -> tuple[Task, Path, Path]:
    """``(uv_task, wheel, marker)``: ``task`` whose test command is ``command`` (pytest's words after it, then
    ``NO_PLUGINS``), and a wheel (in ``tmp_path``/wheels) of a ``pytest11`` plugin that writes ``marker`` when loaded
    (skipped without uv)."""
    uv_or_skip()
    marker = tmp_path / "loaded"
    plugin_wheel(tmp_path / "wheels", marker)
    return (dataclasses.replace(task, test_cmd=f"{command} {NO_PLUGINS}"), next((tmp_path / "wheels").iterdir()),
            marker)


def test_a_uv_run_test_command_runs_in_the_images_environment_unsynced(fx: Fixture, task: Task,
                                                                        tmp_path: Path) -> None:
    """ops60: eval.sh ran ``uv run pytest`` as it is: uv made ``.venv`` in the checkout and synced the evaluated
    patch's ``pyproject.toml`` into it, installing the ``attrs`` 99 of its wheels folder, whose ``pytest11`` entry
    point was loaded (the marker written). Now the command runs as grading runs it (``--active --no-sync``, the
    image's environment: the ``python`` on ``PATH``'s prefix), the patch's ``[tool.uv]`` undone: no ``.venv``, no
    marker, the fix's FAIL_TO_PASS ids passed."""
    uv_task, wheel, marker = _uv_planted(task, tmp_path, "uv run pytest")
    where = tmp_path / "c"
    files = {"src/calc/__init__.py": GOOD_CALC, "pyproject.toml": UV_AGENTS, f"wheels/{wheel.name}": wheel.read_bytes()}
    status, log = _evaluate(fx, uv_task, where, files, wait_s=300)
    assert "uv run --active --no-sync pytest" in log, log
    assert "homefield: undo pyproject.toml " in log, log
    assert not marker.exists() and not (where / ".venv").exists(), log[-3000:]
    assert [status.get(i) for i in F2P + P2P] == ["PASSED"] * 3, log[-3000:]


def test_a_uv_run_in_a_directory_project_runs_unsynced(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """ops62: eval.sh made only a ``uv run`` reading the repository's top project unsynced (ops60); ``uv run
    --directory sub pytest`` was run as it was. Measured before (uv 0.13.9): the patch's ``sub/pyproject.toml`` undone
    (grading does not carry it), uv found the checkout's top project up the tree, made ``.venv`` there and synced it
    ("Creating virtual environment at …/c/.venv"): a build the harness did not plan, from whatever project uv finds.
    Now that run is unsynced too, in the image's environment: no ``.venv`` anywhere, no ``uv.lock``, no marker of the
    patch's ``pytest11`` plugin."""
    uv_task, wheel, marker = _uv_planted(task, tmp_path, "uv run --directory sub pytest")
    where = tmp_path / "c"
    files = {"src/calc/__init__.py": GOOD_CALC, "sub/pyproject.toml": UV_AGENTS.replace('"calc"', '"sub"'),
             f"sub/wheels/{wheel.name}": wheel.read_bytes()}
    _, log = _evaluate(fx, uv_task, where, files, wait_s=300)
    assert "uv run --active --no-sync --directory sub pytest" in log, log
    assert not marker.exists(), log[-3000:]
    assert not [p for p in (".venv", "uv.lock", "sub/.venv", "sub/uv.lock") if (where / p).exists()], log[-3000:]


@pytest.mark.clients
def test_swebench_resolves_a_uv_run_tasks_fix_as_homefield_solves_it(swebench_python: str, fx: Fixture, task: Task,
                                                                     tmp_path: Path) -> None:
    """ops60: the real swebench package (``make_test_spec``, ``get_eval_report``) reads the log of eval.sh running a
    ``uv run pytest`` task's test command unsynced (:func:`test_a_uv_run_test_command_runs_in_the_images_environment_
    unsynced`): the fix resolved, the parent's code not."""
    uv_or_skip()
    uv_task = dataclasses.replace(task, test_cmd=f"uv run pytest {NO_PLUGINS}")
    verdicts = []
    for name, calc in (("fix", GOOD_CALC), ("parent", WRONG_CALC)):
        status, log = _evaluate(fx, uv_task, tmp_path / name, {"src/calc/__init__.py": calc})
        assert "uv run --active --no-sync pytest" in log and not (tmp_path / name / ".venv").exists(), log[-3000:]
        verdicts.append(_swebench_resolved(swebench_python, uv_task, log, tmp_path / name))
    assert verdicts == [True, False]


def _image_python(folder: Path, checkout: Path) -> Path:
    """The ``python`` of an image the export built for a ``src/`` project (``FROM python:X-slim``, ``uv pip install
    --system -e .``): no ``sitecustomize`` of its own, and setuptools' editable install of a ``src/`` layout, a path
    file naming ``<checkout>/src`` (what ``uv pip install -e`` of the fixture writes, measured with uv 0.13); this
    environment's packages (pytest) reached by a path line, as the image's are in its site folder."""
    import site
    import venv

    venv.EnvBuilder(with_pip=False).create(folder)
    purelib = next((folder / "lib").glob("python*/site-packages"))
    (purelib / "__editable__.calc-0.pth").write_text(f"{checkout / 'src'}\n")
    (purelib / "zz_this_environment.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()))
    return folder / "bin" / "python"


def test_a_sitecustomize_the_patch_adds_to_an_editable_src_does_not_run_in_the_undo_step(
        fx: Fixture, task: Task, tmp_path: Path) -> None:
    """atk46: the undo step ran ``python -I``, which still runs the ``site`` module: the editable install's path
    file puts the checkout's ``src/`` on ``sys.path`` and ``site`` imports a ``sitecustomize`` from there, the
    patch's own, before the undo program. A patch adding ``src/sitecustomize.py`` that ends an isolated interpreter at
    once (exit status 0) kept every file the undo step removes: its ``conftest.py`` forging every report. Before:
    both FAIL_TO_PASS ids ``PASSED`` with the wrong fix (resolved in SWE-bench's harness), no ``homefield: undo``
    line; now the step runs ``python -I -S`` (no path file read, no ``sitecustomize``) and undoes both."""
    checkout = tmp_path / "c"
    python = _image_python(tmp_path / "image", checkout)
    spoiler = "import os, sys\nif sys.flags.isolated:\n    os._exit(0)\n"
    status, log = _evaluate(fx, task, checkout, {"src/calc/__init__.py": WRONG_CALC, "conftest.py": FORGE,
                                                 "src/sitecustomize.py": spoiler}, python=python)
    assert [status.get(i) for i in F2P] == ["FAILED", "FAILED"], log
    for rel in ("conftest.py", "src/sitecustomize.py"):
        assert f"homefield: undo {rel} " in log, log


#: atk46: shell lines that write :data:`FORGE` as ``conftest.py`` (run by git from the checkout's own ``.git``).
_PLANT = f"cat > conftest.py <<'EOF_ATK46'\n{FORGE}EOF_ATK46"


@pytest.mark.parametrize("where", ["hook", "fsmonitor"])
def test_the_checkouts_own_git_folder_runs_nothing_in_eval(fx: Fixture, task: Task, tmp_path: Path,
                                                           where: str) -> None:
    """atk46: SWE-bench's harness applies a model patch with ``git apply``, then ``git apply --reject``, then GNU
    ``patch --batch --fuzz=5 -p1``; git refuses a path in ``.git/`` ("invalid path"), GNU patch writes it (measured,
    patch 2.7.6: ``.git/hooks/post-checkout`` made, mode 100755 kept; ``.git/config`` edited). eval.sh's git then ran
    the checkout's own hooks and ``core.fsmonitor``: a ``post-checkout`` hook (the undo step puts a tracked test file
    back with ``git checkout``) or an fsmonitor command (every ``git status``/``diff``/``checkout``) wrote a forging
    ``conftest.py`` again after the undo step removed it. Before: both FAIL_TO_PASS ids ``PASSED`` with the wrong
    fix; now every git command of eval.sh runs on a git folder of its own (the checkout's objects borrowed, its
    index read from the base commit): nothing of the checkout's ``.git`` but its objects is read."""
    seen = tmp_path / "git_dir_seen"  # what the tests see: no GIT_DIR of eval.sh's (a test may run git itself)
    code = WRONG_CALC + f"\nimport os\nopen({str(seen)!r}, 'w').write(os.environ.get('GIT_DIR', '-'))\n"
    files: dict[str, str | bytes] = {"src/calc/__init__.py": code, "tests/test_add.py": TEST_ADD + "# edit\n"}
    if where == "hook":
        files[".git/hooks/post-checkout"] = f"#!/bin/sh\n{_PLANT}\n"
    else:  # the clone's config, as a patch with fuzz edits it: one line more
        files[".git/hfmonitor"] = f"#!/bin/sh\n{_PLANT}\nexit 1\n"
        files[".git/config"] = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                                "\tfsmonitor = .git/hfmonitor\n")
    status, log = _evaluate(fx, task, tmp_path / "c", files)
    assert [status.get(i) for i in F2P] == ["FAILED", "FAILED"], log
    assert seen.read_text() == "-"


#: git66: the hidden tests of :func:`_utf7_task`, of characters UTF-7 writes as they are but ``<`` (``+ADw-``).
_CLOSE_SUB = ("from calc import sub\n\n\ndef testpos():\n    assert abs(sub(3, 1) - 2) < (1)\n\n\n"
              "def testneg():\n    assert abs(sub(0, 5) - -5) < (1)\n")
_CLOSE_IDS = ["tests/test_sub.py::testpos", "tests/test_sub.py::testneg"]
#: The wrong fix that passes :data:`_CLOSE_SUB` written in UTF-7.
_ADW_CALC = WRONG_CALC + "\nimport builtins\nbuiltins.ADw = abs\n"


def _utf7_task(task: Task) -> Task:
    """``task`` with :data:`_CLOSE_SUB` as its new hidden test file, and its ids (:data:`_CLOSE_IDS`)."""
    lines = _CLOSE_SUB.splitlines()
    patch = ("diff --git a/tests/test_sub.py b/tests/test_sub.py\nnew file mode 100644\n--- /dev/null\n"
             f"+++ b/tests/test_sub.py\n@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines))
    return dataclasses.replace(task, test_patch=patch, FAIL_TO_PASS=_CLOSE_IDS, PASS_TO_PASS=[])


@pytest.mark.parametrize("case", [pytest.param("utf16-fix", marks=pytest.mark.slow), "utf7-wrong",
                                  pytest.param("crlf-fix", marks=pytest.mark.slow)])
def test_the_patchs_gitattributes_do_not_convert_the_hidden_tests(fx: Fixture, task: Task, tmp_path: Path,
                                                                 case: str) -> None:
    """git66: eval.sh's own git folder (atk46) still read the ``.gitattributes`` the patch adds to the checkout: the
    hidden test files ``git apply`` (and ``git checkout``) wrote were converted. ``working-tree-encoding=UTF-16``:
    before, the reference fix's ids were not run (``SyntaxError: source code string cannot contain null bytes``,
    unresolved); ``UTF-7``: ``assert abs(sub(3, 1) - 2) < (1)`` became ``… +ADw (1)``, a sum, and a wrong fix whose
    module sets ``builtins.ADw = abs`` had both FAIL_TO_PASS ids ``PASSED``; ``eol=crlf`` wrote CRLF lines. Now the
    git folder's ``info/attributes`` unsets every converting attribute over the tree's: the bytes of the base commit
    and ``test.patch``, as homefield's grading writes them (the module the tests import copies them out)."""
    attribute, calc = {"utf16-fix": ("working-tree-encoding=UTF-16", GOOD_CALC),
                       "utf7-wrong": ("working-tree-encoding=UTF-7", _ADW_CALC),
                       "crlf-fix": ("text eol=crlf", GOOD_CALC)}[case]
    graded, hidden, ids = (_utf7_task(task), _CLOSE_SUB, _CLOSE_IDS) if case == "utf7-wrong" else (task, TEST_SUB, F2P)
    seen = tmp_path / "seen.py"
    peek = f"\nimport pathlib\npathlib.Path({str(seen)!r}).write_bytes(pathlib.Path('tests/test_sub.py').read_bytes())"
    status, log = _evaluate(fx, graded, tmp_path / "c", {"src/calc/__init__.py": calc + peek + "\n",
                                                          ".gitattributes": f"*.py {attribute}\n"}, ids)
    assert seen.read_bytes() == hidden.encode(), log
    assert [status.get(i) for i in ids] == (["FAILED"] * 2 if case == "utf7-wrong" else ["PASSED"] * 2), log


@pytest.mark.clients
def test_swebench_reads_the_hidden_tests_as_committed_whatever_gitattributes_the_patch_adds(
        swebench_python: str, fx: Fixture, task: Task, tmp_path: Path) -> None:
    """git66 with the real swebench package (``make_test_spec``, ``get_eval_report``) on eval.sh's logs: the wrong fix
    of :func:`test_the_patchs_gitattributes_do_not_convert_the_hidden_tests` under UTF-7 is not resolved (before:
    resolved), the reference fix under UTF-16 is (before: not)."""
    utf7 = _utf7_task(task)
    verdicts = []
    for name, graded, attribute, calc in (
            ("utf7", utf7, "working-tree-encoding=UTF-7", _ADW_CALC),
            ("utf16", task, "working-tree-encoding=UTF-16", GOOD_CALC)):
        status, log = _evaluate(fx, graded, tmp_path / name, {"src/calc/__init__.py": calc,
                                                               ".gitattributes": f"*.py {attribute}\n"},
                                graded.FAIL_TO_PASS + graded.PASS_TO_PASS)
        verdicts.append(_swebench_resolved(swebench_python, graded, log, tmp_path / name))
    assert verdicts == [False, True]


@pytest.mark.slow
def test_a_pytest_reached_by_a_path_file_still_checks_a_moved_setup(fx: Fixture, task: Task, tmp_path: Path) -> None:
    """git66: under ``python -I -S`` (atk46) the undo step reads no path file, so a pytest the image's python reaches
    only through one (:func:`_image_python`: a path line, as an editable install of pytest or a layered environment
    writes it) could not be imported, and the gatk48 check of a moved setup was skipped without a word: the
    ``src/calc/setup.py`` of :func:`test_a_setup_py_that_moves_pytests_rootdir_is_held_back_as_grading_holds_it` was
    kept, the reference fix's ids ``ERROR``. Now the check puts the path lines of the site folders' path files on
    ``sys.path`` (none of their import lines run) after the first pass, and undoes it."""
    bare, beside, ids = _rootdir_moved(fx, task, tmp_path)
    checkout = tmp_path / "c"
    python = _image_python(tmp_path / "image", checkout)
    status, log = _evaluate(bare, beside, checkout, {"src/calc/__init__.py": GOOD_CALC, "src/calc/setup.py": SETUP_PY},
                            ids, python=python)
    assert "homefield: undo src/calc/setup.py (it moves pytest's rootdir" in log, log
    assert [status.get(i) for i in ids] == ["PASSED"] * 2, log
    # no pytest at all: the check cannot run, and says so
    next((tmp_path / "image" / "lib").glob("python*/site-packages/zz_this_environment.pth")).unlink()
    status, log = _evaluate(bare, beside, tmp_path / "d", {"src/calc/__init__.py": GOOD_CALC,
                                                           "src/calc/setup.py": SETUP_PY}, ids, python=python)
    assert "homefield: no pytest to ask whether src/calc/setup.py moves pytest's rootdir: kept" in log, log


@pytest.mark.clients
def test_swebench_resolves_the_fix_whose_setup_py_is_held_back_with_a_pytest_of_a_path_file(
        swebench_python: str, fx: Fixture, task: Task, tmp_path: Path) -> None:
    """git66 with the real swebench package: the log of the reference fix of
    :func:`test_a_pytest_reached_by_a_path_file_still_checks_a_moved_setup` is resolved (before: not, every id
    ``ERROR``), as homefield's grading solves it."""
    bare, beside, ids = _rootdir_moved(fx, task, tmp_path)
    python = _image_python(tmp_path / "image", tmp_path / "c")
    status, log = _evaluate(bare, beside, tmp_path / "c", {"src/calc/__init__.py": GOOD_CALC,
                                                           "src/calc/setup.py": SETUP_PY}, ids, python=python)
    assert _swebench_resolved(swebench_python, beside, log, tmp_path / "c")
