"""hatk41, ``--sandbox none`` (graded code runs as the user): pytest looks for its configuration from the test
targets upwards, past the grading copy, and a project with none of its own (here a ``pyproject.toml`` without a
pytest section) takes the first one above: a ``pytest.ini`` in ``/tmp`` (here the test's own temp dir, which plays
it) becomes its rootdir and ``confcutdir``, and a ``conftest.py`` beside it is loaded. A grading refuses to start
with such files above its copy (``config_above``, ``infra``), but graded code that left them *during* its grading
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
from pytest_homefield.sandbox import testrun
from pytest_homefield.sandbox.modes import SandboxChoice
from pytest_homefield.sandbox.testrun import build_command, pinned_config

ANYTHING_CALC = CALC_1 + ("\n\nclass _Any:\n    def __eq__(self, other):\n        return True\n\n\n"
                          "def sub(a, b):\n    return _Any()\n")


@pytest.mark.slow
def test_a_conftest_graded_code_leaves_above_the_copies_is_loaded_by_no_later_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The always-equal fix of a task mined before canaries (so its grading also runs the parent check and the
    reference fix's runs) leaves ``pytest.ini`` and a ``conftest.py`` (which marks each process importing it) above
    every copy, at its first import. Before: three later test processes of the same grading loaded it (measured:
    both runs apart and the parent check's run); now none, and the forgery is caught."""
    top = tmp_path / "tmp"
    top.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(top))
    monkeypatch.setenv("TMPDIR", str(top))
    fx = build(tmp_path / "repo")
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
    ({"pytest.ini": ""}, []),
    ({"tests/pytest.ini": "[pytest]\n"}, []),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"}, []),
    ({"tox.ini": "[pytest]\n"}, []),
    ({"setup.cfg": "[tool:pytest]\n"}, []),
    ({"pyproject.toml": "[project]\nname = 'x'\n"}, ["-c", "pyproject.toml", "--confcutdir=."]),
    ({"setup.cfg": "[metadata]\nname = x\n", "setup.py": ""}, ["-c", "<none>", "--rootdir=.", "--confcutdir=."]),
    ({}, ["-c", "<none>", "--rootdir=.", "--confcutdir=."]),
])
def test_pinned_only_where_pytest_would_look_above(tmp_path: Path, files: dict[str, str], want: list[str]) -> None:
    """A configuration the tree holds where pytest's search meets it (the targets' folder up to the tree) is left to
    pytest; otherwise the choice it makes when nothing above holds one is pinned."""
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
