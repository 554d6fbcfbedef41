"""A candidate stopped by ``--time-budget`` keeps the test runs it finished (host30, mine/run_journal.py).

On main a candidate cut mid-verification kept nothing: the next ``homefield mine`` verified it from zero
(on simonw/llm up to 5 min a candidate). Here one candidate's third run (parent run 2) sleeps while a gate
file exists; the first mine's budget cuts it there. The second mine reads parent run 1 and commit run 1 back
from ``.homefield/mine-runs/<verify_key>.json`` and makes only the rest, two test runs fewer than an
uninterrupted mine of the same repository (every run appends a line to a counter file), and keeps the same
task. The journal is gone once the candidate has its verdict."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.run_journal import RunJournal
from pytest_homefield.sandbox.testrun import TestRun
from pytest_homefield.store import read_jsonl

pytestmark = pytest.mark.slow


def _repo(path: Path, counter: Path, gate: Path) -> GitRepo:
    """One candidate: ``f`` returned 1, the commit makes it 2. Its test module appends its run's number to
    ``counter`` at import and, as the third run while ``gate`` exists, sleeps 120 s."""
    repo = GitRepo.init(path)
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/f.py", "def f():\n    return 1\n")
    repo.write("tests/__init__.py", "")
    repo.commit("Start the package with f")
    repo.write("pkg/f.py", "def f():\n    return 2\n")
    repo.write("tests/test_f.py", f"""import pathlib
import time

_counter = pathlib.Path({str(counter)!r})
_n = len(_counter.read_text().splitlines()) + 1 if _counter.exists() else 1
with _counter.open("a") as fh:
    fh.write(f"{{_n}}\\n")
if _n == 3 and pathlib.Path({str(gate)!r}).exists():
    time.sleep(120)

from pkg.f import f


def test_f():
    assert f() == 2


def test_other():
    assert 1 + 1 == 2
""")
    repo.commit("Make f return 2 as the docs say")
    return repo


def _runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


def _record(repo: Path) -> dict[str, object]:
    new = max((repo / ".homefield" / "mine").iterdir(), key=lambda d: d.name)
    (record,) = read_jsonl(new / "results.jsonl")
    return record


def test_a_stopped_candidate_resumes_from_its_finished_runs(tmp_path: Path) -> None:
    counter, gate = tmp_path / "runs.txt", tmp_path / "gate"
    repo = _repo(tmp_path / "repo", counter, gate).path
    shutil.copytree(repo, tmp_path / "whole", symlinks=True)
    args = ("mine", "--stability-runs", "2", "--sandbox", "none", "-n", "0")
    gate.touch()
    first = homefield(repo, *args, "--time-budget", "20s", timeout=180)
    gate.unlink()
    assert "Stopped mid-verification at the time budget (1, " in first.stdout, first.stdout + first.stderr
    stopped = _record(repo)
    assert stopped["reason"] == "not_verified" and stopped.get("in_flight"), stopped
    assert "in parent run 2" in str(stopped["detail"]) and stopped["runs_kept"] == 2, stopped
    # the line that goes on counts them: they are reused as the verified are (it said "the 0 verified are reused")
    assert "(the 0 verified are reused, not run again; so are the 2 finished test runs of the 1 stopped in flight)" \
        in first.stdout, first.stdout
    assert _runs(counter) == 3  # parent run 1, commit run 1, and parent run 2 cut at the budget
    new = max((repo / ".homefield" / "mine").iterdir(), key=lambda d: d.name)
    (candidate,) = read_jsonl(new / "candidates.jsonl")
    journal = repo / ".homefield" / "mine-runs" / f"{candidate['verify_key']}.json"
    assert journal.is_file() and len(json.loads(journal.read_text())["runs"]) == 2  # the two finished runs only

    before = _runs(counter)
    second = homefield(repo, *args, timeout=180)
    assert second.returncode == 0, second.stdout + second.stderr
    resumed, resumed_runs = _record(repo), _runs(counter) - before
    assert resumed["reason"] is None and resumed["resumed_runs"] == 2, resumed
    assert not journal.exists()  # a verdict: nothing kept for it any more

    before = _runs(counter)
    whole = homefield(tmp_path / "whole", *args, timeout=180)  # the same repository, never stopped
    assert whole.returncode == 0, whole.stdout + whole.stderr
    uninterrupted, whole_runs = _record(tmp_path / "whole"), _runs(counter) - before
    assert "resumed_runs" not in uninterrupted
    assert resumed_runs == whole_runs - 2, (resumed_runs, whole_runs)
    task, same = resumed["task"], uninterrupted["task"]
    assert isinstance(task, dict) and isinstance(same, dict)
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS", "excluded"):
        assert task[name] == same[name], name
    assert task["FAIL_TO_PASS"] == ["tests/test_f.py::test_f"]


def _run(outcomes: dict[str, str]) -> TestRun:
    return TestRun(outcomes=outcomes, exit_code=1, timed_out=False, collection_error=False, collected=len(outcomes),
                   wall_s=1.5, log_path=Path("/nowhere/tests.log"), selected=frozenset(outcomes),
                   stop_operands={"t.py::a": ("==", "1", "2")})


def test_the_journal_holds_finished_runs_under_their_key_only(tmp_path: Path) -> None:
    """A run comes back as it was put, under its name, selection and bound only; another verify key (another
    test command, environment or verification version) reads nothing; a torn file reads as empty."""
    key, other = "a" * 24, "b" * 24
    j = RunJournal(tmp_path, key)
    run = _run({"t.py::a": "failed", "t.py::b": "passed"})
    j.put("parent-2", ["t.py::b", "t.py::a"], 30.0, run, setup_s=0.25)
    again = RunJournal(tmp_path, key)
    assert again.get("parent-2", ["t.py::a", "t.py::b"], 30.0) == (run, 0.25) and again.resumed == 1
    assert again.get("parent-2", ["t.py::a"], 30.0) is None and again.get("parent-2", None, 30.0) is None
    assert again.get("parent-2", ["t.py::a", "t.py::b"], 60.0) is None and again.get("commit-2", None, None) is None
    assert len(RunJournal(tmp_path, other)) == 0
    (tmp_path / f"{key}.json").write_text((tmp_path / f"{key}.json").read_text()[:-7])
    assert len(RunJournal(tmp_path, key)) == 0
    with pytest.raises(ValueError):
        RunJournal(tmp_path, "../" + key[3:])
