"""hatk41, ``--sandbox none`` (graded code runs as the user): pytest looks for its configuration from the test
targets upwards, past the grading copy, and a project with none of its own (here a ``pyproject.toml`` without a
pytest section) takes the first one above: a ``pytest.ini`` in ``/tmp`` (here the test's own temp dir, which plays
it) becomes its rootdir and ``confcutdir``, and a ``conftest.py`` beside it is loaded. A grading refused to start
with such files above its copy (``config_above``, ``infra``; hatk42: now only for a custom command of another
program, every pytest command being pinned), but graded code that left them *during* its grading
had them loaded by every later test process of that grading: its other runs apart, the parent check's runs (whose
choice of seed is remembered for the repository) and the reference fix's. Now a pytest command on a tree with no
configuration of its own gets pytest's choice pinned (``-c``, ``--rootdir``, ``--confcutdir``:
:func:`~pytest_homefield.sandbox.testrun.pinned_config`): nothing above the copy is read."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from helpers.attack_repo import CALC_1, build, script_agent, task_for

from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox import pytest_config, testrun
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.testrun import build_command, pinned_config

ANYTHING_CALC = CALC_1 + ("\n\nclass _Any:\n    def __eq__(self, other):\n        return True\n\n\n"
                          "def sub(a, b):\n    return _Any()\n")


#: hatk42: a ``tox.ini`` that runs pytest but holds no ``[pytest]`` section (most projects testing with tox): pytest
#: passes it by, hatk41's pin took it for the tree's own configuration and pinned nothing.
TOX_RUNS_PYTEST = "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n"


@pytest.mark.slow
@pytest.mark.parametrize("extra", [{}, {"tox.ini": TOX_RUNS_PYTEST}], ids=["no-config", "tox-ini-runs-pytest"])
def test_a_conftest_graded_code_leaves_above_the_copies_is_loaded_by_no_later_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: dict[str, str]) -> None:
    """The always-equal fix of a task mined before canaries (so its grading also runs the parent check and the
    reference fix's runs) leaves ``pytest.ini`` and a ``conftest.py`` (which marks each process importing it) above
    every copy, at its first import. Before: three later test processes of the same grading loaded it (measured:
    both runs apart and the parent check's run); now none, and the forgery is caught. hatk42: the same where the
    repository has a ``tox.ini`` whose ``commands`` run pytest (no ``[pytest]`` section); before: the later runs
    loaded it (no pin), the forgery was ``resolved``."""
    top = tmp_path / "tmp"
    top.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(top))
    monkeypatch.setenv("TMPDIR", str(top))
    fx = build(tmp_path / "repo", extra)
    task = task_for(fx)
    conftest = f"open({str(top)!r} + '/loaded-' + str(__import__('os').getpid()), 'w').close()\n"
    code = ANYTHING_CALC + (f"\nimport os as _o\nif not _o.path.exists({str(top / 'conftest.py')!r}):\n"
                            f"    open({str(top / 'conftest.py')!r}, 'w').write({conftest!r})\n"
                            f"    open({str(top / 'pytest.ini')!r}, 'w').write('[pytest]\\n')\n")
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task])
        spec = AttemptSpec(task=task, agent=script_agent(tmp_path / "agent", {"src/calc/__init__.py": code}),
                           attempt=1, run_id="r", run_dir=tmp_path / "run", timeout_s=60, run_timeout_s=120,
                           sandbox=SandboxChoice("none", "none"))
        r = run_attempt(spec, cache)
    finally:
        cache.close()
    assert (top / "conftest.py").is_file() and (top / "pytest.ini").is_file()  # it did leave them
    assert sorted(p.name for p in top.glob("loaded-*")) == []
    assert r.outcome == "forged", r


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(("files", "want"), [
    ({"pytest.ini": ""}, ["-c", "pytest.ini", "--confcutdir=."]),
    ({"tests/pytest.ini": "[pytest]\n"}, ["-c", "tests/pytest.ini", "--confcutdir=tests"]),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, ["-c", "pyproject.toml", "--confcutdir=."]),
    ({"tox.ini": "[pytest]\n"}, ["-c", "tox.ini", "--confcutdir=."]),
    ({"setup.cfg": "[tool:pytest]\n"}, ["-c", "setup.cfg", "--confcutdir=."]),
    ({"tox.ini": "[testenv]\ncommands = pytest\n"}, ["-c", "<none>", "--rootdir=.", "--confcutdir=."]),
    ({"pyproject.toml": "a = " + "[" * 5000 + "]" * 5000 + "\n"}, ["-c", "pyproject.toml", "--confcutdir=."]),
    ({"tox.ini": "[pytest\n"}, ["-c", "tox.ini", "--confcutdir=."]),
    ({"pyproject.toml": "[project]\nname = 'x'\n"}, ["-c", "pyproject.toml", "--confcutdir=."]),
    ({"setup.cfg": "[metadata]\nname = x\n", "setup.py": ""}, ["-c", "<none>", "--rootdir=.", "--confcutdir=."]),
    ({}, ["-c", "<none>", "--rootdir=.", "--confcutdir=."]),
])
def test_pinned_only_where_pytest_would_look_above(tmp_path: Path, files: dict[str, str], want: list[str]) -> None:
    """A configuration the tree holds where pytest's search meets it (the targets' folder up to the tree) is named
    (hatk42: it was left to pytest's search, which went on above the tree past a file that only looked like one);
    otherwise the choice pytest makes when nothing above holds one is pinned."""
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n", **files})
    out = tmp_path / "out"
    out.mkdir()
    got = pinned_config(root, "python -m pytest", ["tests/test_a.py::test_a"], out)
    assert got == [str(out / testrun.NO_CONFIG) if w == "<none>" else w for w in want]
    assert pinned_config(root, "python -m pytest -c x.ini", ["tests/test_a.py"], out) == []


def test_every_pytest_command_of_a_tree_without_configuration_reads_nothing_above(tmp_path: Path) -> None:
    """Real pytest on a tree with a ``pyproject.toml`` without a pytest section, a ``pytest.ini`` and a
    ``conftest.py`` (raising at import) in the folder above: with the pinned options the run passes, rootdir the
    tree; without them it fails on the planted files."""
    import subprocess
    import sys

    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:nothing-such\n")
    (tmp_path / "conftest.py").write_text("raise SystemExit('planted conftest loaded')\n")
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n",
                                  "pyproject.toml": "[project]\nname = 'x'\n"})
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, "python -m pytest", ["tests/test_a.py"], out)
    plain = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_a.py"]
    bad = subprocess.run(plain, cwd=root, capture_output=True, text=True)
    assert bad.returncode != 0 and "planted conftest loaded" in bad.stdout + bad.stderr, bad.stdout + bad.stderr
    good = subprocess.run([*plain[:-1], *pin, "tests/test_a.py"], cwd=root, capture_output=True, text=True)
    assert good.returncode == 0 and f"rootdir: {root}" in good.stdout, good.stdout + good.stderr
    argv, _ = build_command("python -m pytest", ["tests/test_a.py"], out_dir=out, pin=pin)
    assert argv[-len(pin) - 1:] == [*pin, "tests/test_a.py"]


def _pytest(root: Path, *args: str) -> tuple[int, str]:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                          cwd=root, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


#: Trees whose files of a pytest configuration's name hold none that pytest takes (hatk42): hatk41's pin counted each
#: as the tree's own configuration by a word in it, its size or its kind, pinned nothing, and pytest, passing them by,
#: took the planted ``pytest.ini`` above the tree and loaded the ``conftest.py`` beside it.
PASSED_BY = {
    "tox-ini-runs-pytest": {"tox.ini": TOX_RUNS_PYTEST},
    "setup-cfg-names-the-section": {"setup.cfg": "[metadata]\nname = x\n# options: see [tool:pytest] in the docs\n"},
    "pyproject-other-tool": {"pyproject.toml": "[project]\nname = 'x'\n\n[tool.pytest-watcher]\nnow = true\n"},
    "pyproject-empty-tool-pytest": {"pyproject.toml": "[project]\nname = 'x'\n\n[tool.pytest]\n"},
    "pyproject-over-the-read-limit": {"pyproject.toml": "[project]\nname = 'x'\n" + "#" * pytest_config.CONFIG_BYTES
                                      + "\n"},
    "dangling-link": {"pyproject.toml": "->/nonexistent-hatk42/pyproject.toml"},
}


@pytest.mark.parametrize("files", PASSED_BY.values(), ids=PASSED_BY.keys())
def test_a_file_pytest_passes_by_lets_nothing_above_the_tree_in(tmp_path: Path, files: dict[str, str]) -> None:
    """Real pytest, a ``pytest.ini`` and a ``conftest.py`` (exiting at import) in the folder above the tree: with the
    pinned options the run passes and its rootdir is the tree. Before (hatk42): no options, the planted conftest ran."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text("raise SystemExit('planted conftest loaded')\n")
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n",
                                  **{k: v for k, v in files.items() if not v.startswith("->")}})
    for rel, text in files.items():
        if text.startswith("->"):
            (root / rel).symlink_to(text[2:])
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, "python -m pytest", ["tests/test_a.py::test_a"], out)
    code, text = _pytest(root, *pin, "tests/test_a.py::test_a")
    assert "planted conftest loaded" not in text and code == 0, (pin, text)
    assert f"rootdir: {root}\n" in text, text


#: Trees with a configuration of their own that pytest finds between the targets and the tree's root (hatk42: now
#: pinned too, as ``-c`` that file, where hatk41 left the search to pytest).
OWN_CONFIG = {
    "pytest-ini-empty": {"pytest.ini": ""},
    "pytest-ini-in-tests": {"tests/pytest.ini": "[pytest]\npython_files = test_*.py\n"},
    "pyproject-ini-options": {"pyproject.toml": "[tool.pytest.ini_options]\npython_files = 'test_*.py'\n"},
    "pyproject-native": {"pyproject.toml": "[tool.pytest]\npython_files = ['test_*.py']\n"},
    "tox-ini-section": {"tox.ini": "[testenv]\ncommands = pytest\n\n[pytest]\npython_files = test_*.py\n"},
    "setup-cfg-section": {"setup.cfg": "[tool:pytest]\npython_files = test_*.py\n"},
    "pytest-toml": {"pytest.toml": "[pytest]\npython_files = ['test_*.py']\n"},
}


@pytest.mark.slow  # two pytest processes: 0.9 s of CPU each case, 6.5 s in all
@pytest.mark.parametrize("files", OWN_CONFIG.values(), ids=OWN_CONFIG.keys())
def test_a_tree_s_own_configuration_is_pinned_as_pytest_finds_it(tmp_path: Path, files: dict[str, str]) -> None:
    """Real pytest, nothing above the tree: the pinned run reads the configuration file and takes the rootdir
    pytest's own search takes; with a ``conftest.py`` and a ``pytest.ini`` planted above, the pinned run is the same."""
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n", **files})
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, "python -m pytest", ["tests/test_a.py"], out)
    assert pin[:1] == ["-c"] and pin[-1].startswith("--confcutdir="), pin
    plain_code, plain = _pytest(root, "tests/test_a.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text("raise SystemExit('planted conftest loaded')\n")
    code, text = _pytest(root, *pin, "tests/test_a.py")
    assert plain_code == code == 0, plain + text
    head = [ln for ln in plain.splitlines() if ln.startswith(("rootdir:", "configfile:"))]
    assert head and head == [ln for ln in text.splitlines() if ln.startswith(("rootdir:", "configfile:"))], (plain,
                                                                                                             text)


@pytest.mark.parametrize("command", ["python -m pytest --junitxml={junit} {files}", "pytest -q --junitxml={junit}",
                                     "env PYTEST_ADDOPTS=-q pytest --junitxml={junit}",
                                     "env HF_X=1 python -m pytest --junitxml={junit} {files}"])
def test_a_junit_pytest_command_reads_nothing_above_the_tree(tmp_path: Path, command: str) -> None:
    """A custom ``{junit}`` command that runs pytest (``run_tests``, ``--sandbox none``, real pytest) on a tree with no
    configuration, a ``pytest.ini`` and a ``conftest.py`` (which leaves a mark) planted above the tree: the planted
    conftest is not loaded and the test's outcome is read. Before (hatk42): a custom command got no pin, the
    planted ``conftest.py`` ran in the test process; twin43: one started by ``env NAME=VALUE …`` (whose pytest
    arguments, ``PYTEST_ADDOPTS`` too, ``pytest_args`` read) got none either (``pytest_words`` read leading words
    only): its planted ``conftest.py`` ran."""
    import os
    import sys

    from pytest_homefield.sandbox.testrun import run_tests

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(f"open({str(tmp_path / 'loaded')!r}, 'w').close()\n")
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n"})
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = run_tests(root, command, ["tests/test_a.py::test_a"], out_dir=tmp_path / "out", env=env, timeout_s=120)
    assert not (tmp_path / "loaded").exists()
    assert list(run.outcomes.values()) == ["passed"], run


@pytest.mark.parametrize("options", ["--rootdir=.", "--rootdir .", "--confcutdir=.", "--rootdir=. --confcutdir ."])
def test_a_command_naming_its_rootdir_or_cut_still_reads_nothing_above_the_tree(tmp_path: Path, options: str) -> None:
    """Real pytest, a ``pytest.ini`` and a ``conftest.py`` (which leaves a mark) above a tree with no configuration,
    a command naming ``--rootdir`` or ``--confcutdir`` (no ``-c``): pytest still looks for a configuration upwards.
    With the pin the planted files are not read and the command's own options stand. Before (hatk42): nothing was
    pinned for such a command; with ``--rootdir`` the planted ``conftest.py`` ran, with ``--confcutdir`` the planted
    ``pytest.ini`` was the run's configuration and its folder the rootdir."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(f"open({str(tmp_path / 'loaded')!r}, 'w').close()\n")
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n"})
    out = tmp_path / "out"
    out.mkdir()
    pin = pinned_config(root, f"python -m pytest {options}", ["tests/test_a.py"], out)
    code, text = _pytest(root, *options.split(), *pin, "tests/test_a.py")
    assert code == 0 and not (tmp_path / "loaded").exists(), (pin, text)
    assert f"rootdir: {root}\n" in text and "configfile: ../pytest.ini" not in text, (pin, text)
    assert not any(w.startswith(tuple(o.split("=")[0] for o in options.split() if o.startswith("--"))) for w in pin)


@pytest.mark.parametrize("command", ["python -m pytest -c ci/pytest.ini", "python -m pytest -qc ci/pytest.ini",
                                     "python -m pytest -qcci/pytest.ini", "pytest --config-file=ci/pytest.ini",
                                     "env PYTEST_ADDOPTS='-c ci/pytest.ini' pytest"])
def test_a_command_naming_its_configuration_gets_no_pin(tmp_path: Path, command: str) -> None:
    """A command that names its configuration file, in a group of short flags too (``-qc FILE``, ``-qcFILE``) or in
    the ``PYTEST_ADDOPTS`` it sets, has pytest look for none: nothing is pinned (a pinned ``-c`` after it would win
    over the command's own)."""
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n", "ci/pytest.ini": "[pytest]\n"})
    assert pinned_config(root, command, ["tests/test_a.py"], tmp_path) == []


#: ops46: ``uv run [uv options] pytest …`` and ``uv run … python -m pytest …`` commands, pinned as ``env A=1 pytest``
UV_COMMANDS = ["uv run pytest --junitxml={junit} {files}",
               "uv run --offline --with pytest pytest -q --junitxml={junit} {files}",
               "uv run --offline -w pytest python -m pytest --junitxml={junit} {files}",
               "uv run --no-project -m pytest --junitxml={junit} {files}"]


@pytest.mark.slow  # uv and pytest processes: about 1.5 s of CPU a case
@pytest.mark.parametrize("command", UV_COMMANDS)
def test_a_uv_run_junit_command_reads_nothing_above_the_tree(tmp_path: Path, command: str) -> None:
    """Real uv and pytest, as :func:`test_a_junit_pytest_command_reads_nothing_above_the_tree`: a ``uv run`` command
    (uv's options read past, ``pytest_config.launched_at``) is pinned right after the words that start pytest, so the
    ``conftest.py`` planted above the tree is not loaded. Before (r36's "left"), in 3 of these 4 (``uv run -m
    pytest`` was read as a Python's ``-m``): no pin, the planted conftest ran (its rootdir the folder above:
    ``w.tests.test_a``), and the grading's refusal of a configuration above the copy made such a task's attempts
    ``infra``."""
    import os
    import shutil
    import sys

    from pytest_homefield.sandbox.testrun import run_tests

    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    if shutil.which("uv", path=path) is None:
        pytest.skip("no uv beside this Python or on PATH")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(f"open({str(tmp_path / 'loaded')!r}, 'w').close()\n")
    root = _tree(tmp_path / "w", {"tests/test_a.py": "def test_a():\n    pass\n"})
    run = run_tests(root, command, ["tests/test_a.py::test_a"], out_dir=tmp_path / "out",
                    env={**os.environ, "PATH": path}, timeout_s=120)
    assert not (tmp_path / "loaded").exists(), run
    assert run.outcomes == {"tests.test_a::test_a": "passed"}, (run.outcomes, run.error)
