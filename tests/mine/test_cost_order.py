"""Under ``--time-budget`` a mine verifies its cheapest candidates first (mine29: simonw/llm verified 3 of 78
candidates in 6 minutes newest first, two of them cut at the budget, one of three large test files): the
bytes of each candidate's runnable test files at its commit, read from git, order the items, ties newest
first; without a budget the order stays newest first."""

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

from pytest_homefield.mine.cost_order import bytes_of_tests, cheapest_first
from pytest_homefield.store import read_jsonl


def test_bytes_of_tests_reads_the_sizes_at_the_commit(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("tests/test a.py", "x" * 100)
    repo.write("tests/test_b.py", "y" * 30)
    first = repo.commit("Add two test files")
    repo.write("tests/test a.py", "x" * 7)
    repo.rm("tests/test_b.py")
    second = repo.commit("Shrink one test file and delete the other")
    paths = ["tests/test a.py", "tests/test_b.py"]
    assert bytes_of_tests(repo.path, first, paths) == 130
    assert bytes_of_tests(repo.path, second, paths) == 7  # a deleted file counts 0
    assert bytes_of_tests(repo.path, first, ["tests/*.py"]) == 0  # a path, never a glob
    assert bytes_of_tests(repo.path, first, []) == 0
    assert bytes_of_tests(repo.path, "f" * 40, paths) == 0  # git cannot read the commit


def test_cheapest_first_keeps_scan_order_among_equals() -> None:
    scan = [{"commit": "a", "test_bytes": 50}, {"commit": "b", "test_bytes": 10}, {"commit": "c"},
            {"commit": "d", "test_bytes": 10}, {"commit": "e", "test_bytes": 0}]
    assert [c["commit"] for c in cheapest_first(scan)] == ["e", "b", "d", "a", "c"]


@pytest.fixture(scope="module")
def three_candidates(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """Three candidates, each adding a function and its test; the newest one's test file is 20 KB (a long
    docstring), the other two are small."""
    repo = GitRepo.init(tmp_path_factory.mktemp("order") / "repo")
    repo.write(".homefield.yml", f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    repo.write("pkg/__init__.py", "")
    repo.write("tests/__init__.py", "")
    repo.commit("Start the package with an empty module")
    for n in (1, 2, 3):
        pad = f'"""{"A long explanation of the test. " * 640}"""\n\n' if n == 3 else ""
        repo.write(f"pkg/f{n}.py", f"def f{n}():\n    return {n}\n")
        repo.write(f"tests/test_f{n}.py", f"{pad}from pkg.f{n} import f{n}\n\n\ndef test_f{n}():\n"
                                          f"    assert f{n}() == {n}\n")
        repo.commit(f"Add function f{n} returning the number {n}")
    return repo


@pytest.mark.slow
@pytest.mark.parametrize("bounds", [("--time-budget", "10m"), (), ("--time-budget", "10m", "--stop-after-tasks", "1")],
                         ids=["time-budget", "no-budget", "budget-and-stop"])
def test_a_time_budget_verifies_the_cheapest_candidates_first(three_candidates: GitRepo, tmp_path: Path,
                                                               bounds: tuple[str, ...]) -> None:
    """At ``-n 0`` the records are written in the order the candidates were verified: under a budget the two
    small ones (newest first) before the newest, whose test file is 20 KB; without one, newest first. Given
    both bounds, the order is the budget's and the first bound reached stops: ``--stop-after-tasks 1`` keeps the
    cheapest candidate, not the newest (contracts §3)."""
    repo = tmp_path / "repo"
    shutil.copytree(three_candidates.path, repo, symlinks=True)
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0", "--reverify"]
    proc = homefield(repo, *args, *bounds)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = max((repo / ".homefield" / "mine").iterdir(), key=lambda d: d.name)
    frozen = list(read_jsonl(new / "candidates.jsonl"))
    assert [c["subject"][-1] for c in frozen] == ["3", "2", "1"]  # the file stays in scan order
    assert frozen[0]["test_bytes"] > 20000 > frozen[1]["test_bytes"] == frozen[2]["test_bytes"] > 0
    records = list(read_jsonl(new / "results.jsonl"))
    verified = [r["subject"][-1] for r in records]
    assert verified == (["3", "2", "1"] if not bounds else ["2", "1", "3"]), verified
    if "--stop-after-tasks" in bounds:
        assert [(r["reason"], r.get("stop")) for r in records] == [
            (None, None), ("not_verified", "stop_after_tasks"), ("not_verified", "stop_after_tasks")], records
        assert ("Stopped: --stop-after-tasks 1 reached; 2 of 3 candidates not verified (those with the largest test "
                "files: a time budget verifies the smallest first)") in proc.stdout, proc.stdout
    else:
        assert all(r["reason"] is None for r in records)
