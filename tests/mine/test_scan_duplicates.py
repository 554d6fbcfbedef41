"""Filter 12 of the scan, ``duplicate_change`` (nu46): one change applied twice in history is one candidate.

simonw/llm's history holds commits rebased beside their originals, both reachable (``bd645da55193`` and
``1b99533ff83a``, "llm tools now displays dynamic toolboxes usefully, closes #1580": the same patch id):
both were candidates, so one fix would have been two tasks, weighing double in every rate and paired test.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.e2e_repo import homefield
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.mine.scan import ScanOptions, format_scan, scan
from pytest_homefield.records import Task
from pytest_homefield.run.one_change import one_change_groups
from pytest_homefield.store import read_jsonl, write_jsonl_atomic

TEST = "from pkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def _history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """base; the fix of ``double`` with its test; a revert of it; the same fix again (as a cherry-pick
    writes it, another date); a fix of ``triple`` whose message repeats the first one's (another change)."""
    repo = GitRepo.init(tmp_path / "repo")
    shas: dict[str, str] = {}
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", "def double(x):\n    return x\n")
    repo.write("tests/test_old.py", "def test_old():\n    pass\n")
    repo.commit("Start the package")
    repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    shas["original"] = repo.commit("Fix double() to return twice its argument")
    repo.write("pkg/core.py", "def double(x):\n    return x\n")
    repo.rm("tests/test_core.py")
    repo.commit("Revert the fix of double() for the release")
    repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    shas["again"] = repo.commit("Fix double() to return twice its argument (picked again)")
    repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n")
    repo.write("tests/test_triple.py",
               "from pkg.core import triple\n\n\ndef test_triple():\n    assert triple(1) == 3\n")
    shas["other"] = repo.commit("Fix double() to return twice its argument")
    return repo.path, shas


def test_a_change_applied_twice_is_one_candidate_the_newest(tmp_path: Path) -> None:
    path, shas = _history(tmp_path)
    result = scan(path, ScanOptions())
    assert [c.commit for c in result.candidates] == [shas["other"], shas["again"]]
    (dup,) = [r for r in result.rejected if r.reason == "duplicate_change"]
    assert (dup.commit, dup.detail) == (shas["original"], f"the same change as {shas['again'][:12]}")
    assert result.counts["duplicate_change"] == 1
    assert "duplicate change 1" in format_scan(result)


def test_the_filter_holds_for_merges_of_the_first_parent_walk(tmp_path: Path) -> None:
    """``--first-parent --merges`` (more-itertools' mode): a merge's change is its diff against its first
    parent, and two merged branches making the same change are one candidate too."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", "def double(x):\n    return x\n")
    repo.write("tests/test_old.py", "def test_old():\n    pass\n")
    repo.commit("Start the package")
    merges = []
    for n in (1, 2):
        repo.git("checkout", "-q", "-b", f"fix{n}")
        repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n")
        repo.write("tests/test_core.py", TEST)
        repo.commit(f"Fix double() to return twice its argument, take {n}")
        repo.git("checkout", "-q", "main")
        repo.git("-c", "user.name=Dev", "-c", "user.email=dev@example.org", "merge", "-q", "--no-ff",
                 "-m", f"Merge pull request #{n} from dev/fix{n}", f"fix{n}")
        merges.append(repo.head())
        if n == 1:  # undone on main before the second branch is merged
            repo.write("pkg/core.py", "def double(x):\n    return x\n")
            repo.rm("tests/test_core.py")
            repo.commit("Revert the fix of double() for the release")
    result = scan(repo.path, ScanOptions(first_parent=True, merges=True))
    assert [c.commit for c in result.candidates] == [merges[1]]
    assert [(r.commit, r.reason) for r in result.rejected if r.reason == "duplicate_change"] == [
        (merges[0], "duplicate_change")]


@pytest.mark.slow
def test_a_new_mine_removes_the_older_copy_an_earlier_mine_kept(tmp_path: Path) -> None:
    """A ``tasks.jsonl`` mined before filter 12 may hold both copies of one fix (the original and its rebased or
    picked copy): the next mine's scan sets the older aside as ``duplicate_change``, and before it left that task in
    ``tasks.jsonl`` (only this mine's dropped candidates were removed), so the fix went on counting twice. Now the
    mine removes it and says so. The older copy's record is the newer one's under the older commit, as a mine before
    the filter wrote it (the same change, the same tests). A run over the file before that mine says the two are one
    change in its header (it runs the file as it is)."""
    path, shas = _history(tmp_path)
    (path / ".homefield.yml").write_text(
        f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0"]
    first = homefield(path, *args)
    assert first.returncode == 0, first.stdout + first.stderr
    tasks_path = path / ".homefield" / "tasks.jsonl"
    tasks = list(read_jsonl(tasks_path))
    again = next(t for t in tasks if t["id"] == shas["again"][:12])
    old = {**again, "id": shas["original"][:12], "commit": shas["original"],
           "parent": subprocess.run(["git", "rev-parse", f"{shas['original']}^"], cwd=path, capture_output=True,
                                    text=True, check=True).stdout.strip()}
    write_jsonl_atomic(tasks_path, [*tasks, old])
    # a run over the file as it is says so in its header (noop: nothing graded)
    run = homefield(path, "run", "--agent", "noop", "--attempts", "1", "-n", "0", "--sandbox", "none")
    pair = ", ".join(t["id"] for t in read_jsonl(tasks_path) if t["id"] in (old["id"], again["id"]))
    assert run.returncode in (0, 1) and (f"homefield: tasks.jsonl holds one change as 2 tasks ({pair}: the same patch, "
                                         "a commit rebased or picked beside its original)") in run.stdout, run.stdout
    second = homefield(path, *args)
    assert second.returncode == 0, second.stdout + second.stderr
    ids = [t["id"] for t in read_jsonl(tasks_path)]
    assert shas["original"][:12] not in ids and shas["again"][:12] in ids, ids
    assert (f"Removed from tasks.jsonl: 1 task ({shas['original'][:12]}) that an earlier mine kept, whose change a "
            "newer commit repeats") in second.stdout, second.stdout


@pytest.mark.slow
def test_an_older_copy_stays_while_its_newer_copy_is_no_task(tmp_path: Path) -> None:
    """gatk50: the older copy of a change is removed from ``tasks.jsonl`` only once its newer copy is a task there. A
    mine that verifies not the newer copy (a ``-k`` mine of another candidate here; a time budget, ``--max-tasks``, a
    Ctrl-C, or the newer copy dropped by its own verification likewise) removed the older, a task an earlier mine
    verified (mined before the fix was reverted and picked again), and kept nothing of that fix: one good task lost.
    The next mine that keeps the newer copy removes the older."""
    path, shas = _history(tmp_path)
    (path / ".homefield.yml").write_text(
        f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    args = ["mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0"]
    tasks_path = path / ".homefield" / "tasks.jsonl"
    # the earlier mine, when history ended at the original fix: it verified and kept it
    subprocess.run(["git", "checkout", "-q", shas["original"]], cwd=path, check=True)
    first = homefield(path, *args)
    assert first.returncode == 0, first.stdout + first.stderr
    assert [t["id"] for t in read_jsonl(tasks_path)] == [shas["original"][:12]]
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True)
    second = homefield(path, *args, "-k", shas["other"][:12])
    assert second.returncode == 0, second.stdout + second.stderr
    ids = [t["id"] for t in read_jsonl(tasks_path)]
    assert ids == [shas["other"][:12], shas["original"][:12]], (ids, second.stdout)
    assert "Removed from tasks.jsonl" not in second.stdout, second.stdout
    third = homefield(path, *args)
    assert third.returncode == 0, third.stdout + third.stderr
    ids = [t["id"] for t in read_jsonl(tasks_path)]
    assert ids == [shas["other"][:12], shas["again"][:12]], (ids, third.stdout)
    assert f"Removed from tasks.jsonl: 1 task ({shas['original'][:12]})" in third.stdout, third.stdout


def _scan_keeps_the_newer(repo: GitRepo, original: str, again: str) -> None:
    """The scan of ``repo`` keeps ``again`` alone and sets ``original`` aside as the same change."""
    result = scan(repo.path, ScanOptions())
    assert [c.commit for c in result.candidates] == [again]
    assert [(r.commit, r.detail) for r in result.rejected if r.reason == "duplicate_change"] == [
        (original, f"the same change as {again[:12]}")]


def test_a_backport_whose_changelog_entry_differs_is_the_same_change(tmp_path: Path) -> None:
    """pallets/werkzeug (nu48): "always set accept-ranges header" is on main twice, 664deb6a58c8 on the stable
    branch (merged back) and b913d68db589 on main: the same source and test change, but each writes its
    ``CHANGES.rst`` entry under another release's heading, so the whole diffs' patch ids differed and one fix
    was two candidates. Docs files are no part of a task's change (the scan classifies them apart), so the
    patch id is taken without them."""
    _scan_keeps_the_newer(*_changelog_backport(tmp_path))


def _changelog_backport(tmp_path: Path) -> tuple[GitRepo, str, str]:
    """(repo, original, again): one fix twice, each with its changelog entry under another release's heading."""
    repo = GitRepo.init(tmp_path / "repo")
    changes = "Version 1.1\n-----------\n\nUnreleased\n\n\nVersion 1.0\n-----------\n\nReleased\n"
    repo.write("CHANGES.rst", changes)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", "def double(x):\n    return x\n")
    repo.write("tests/test_old.py", "def test_old():\n    pass\n")
    repo.commit("Start the package")
    repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    repo.write("CHANGES.rst", changes.replace("Released\n", "Released\n\n-   Fix double().\n"))
    original = repo.commit("Fix double() to return twice its argument")
    repo.write("pkg/core.py", "def double(x):\n    return x\n")
    repo.rm("tests/test_core.py")
    repo.write("CHANGES.rst", changes)
    repo.commit("Revert the fix of double() on main, to pick it again")
    repo.write("pkg/core.py", "def double(x):\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    repo.write("CHANGES.rst", changes.replace("Unreleased\n", "Unreleased\n\n-   Fix double().\n"))
    again = repo.commit("Fix double() to return twice its argument (picked)")
    return repo, original, again


def test_a_backport_onto_other_surrounding_code_is_the_same_change(tmp_path: Path) -> None:
    """pallets/werkzeug (nu48): "validate host characters" is on main twice, de546be7144c (stable) and
    d3d3df56c98b (main), both kept as tasks (FAIL_TO_PASS 6, PASS_TO_PASS 23 each): the same lines added and
    removed, but one hunk's context differs (the line above the change is another on each branch), and the
    patch id counts context. It is taken of the changed lines only (``-U0``)."""
    _scan_keeps_the_newer(*_context_backport(tmp_path))


def _context_backport(tmp_path: Path) -> tuple[GitRepo, str, str]:
    """(repo, original, again): one fix twice, the line above its change another each time."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/core.py", "def double(x):\n    # on os\n    return x\n")
    repo.write("tests/test_old.py", "def test_old():\n    pass\n")
    repo.commit("Start the package")
    repo.write("pkg/core.py", "def double(x):\n    # on os\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    original = repo.commit("Fix double() to return twice its argument")
    repo.write("pkg/core.py", "def double(x):\n    # on sys\n    return x\n")
    repo.rm("tests/test_core.py")
    repo.commit("Revert the fix of double() on main, and say sys instead of os")
    repo.write("pkg/core.py", "def double(x):\n    # on sys\n    return 2 * x\n")
    repo.write("tests/test_core.py", TEST)
    again = repo.commit("Fix double() to return twice its argument (picked)")
    return repo, original, again


def _task(repo: GitRepo, sha: str, mode: str = "commit") -> Task:
    """The task of ``sha`` as mining writes its patches (``tests/test_core.py`` its test file)."""
    parent = repo.git("rev-parse", f"{sha}^").strip()
    tests = ["tests/test_core.py"]
    return Task(id=sha[:12], commit=sha, parent=parent, committed_at="", authored_at="", mode=mode, subject="s",
                message="m", prompt="p", source_files=["pkg/core.py"], test_files=tests,
                test_patch=make_test_patch(repo.path, parent, sha, tests),
                gold_patch=make_gold_patch(repo.path, parent, sha, tests), FAIL_TO_PASS=[], PASS_TO_PASS=[],
                test_cmd="pytest")


@pytest.mark.parametrize("history", [_changelog_backport, _context_backport], ids=["changelog", "context"])
def test_a_runs_header_takes_for_one_change_what_the_scan_does(tmp_path: Path, history: Any) -> None:
    """link52: the run header's warning (``one_change_groups``) and filter 12 are one rule. Before, the header took
    the patch id of the whole stored patches (three lines of context, the docs files): the scan set the backport
    aside as the same change, and a ``tasks.jsonl`` mined before filter 12 holding both got no warning ([]). Now
    both ask ``change_id``; and a merge task is never one change with a commit task (the scan compares within a
    mode only)."""
    repo, original, again = history(tmp_path)
    result = scan(repo.path, ScanOptions())
    assert [(r.commit, r.same_as) for r in result.rejected if r.reason == "duplicate_change"] == [(original, again)]
    tasks = [_task(repo, again), _task(repo, original)]
    assert one_change_groups(tasks) == [[again[:12], original[:12]]]
    assert one_change_groups([_task(repo, again), _task(repo, original, mode="merge")]) == []


@pytest.mark.slow
def test_a_merge_of_mining_shards_removes_the_older_copy_as_one_mine_does(tmp_path: Path) -> None:
    """link52: ``homefield mine --merge`` of ``--shard 1/2`` and ``2/2`` did not pass the scan's ``same_as`` to
    ``merge_tasks``: a ``tasks.jsonl`` holding the older copy of a fix (a mine before filter 12) kept it beside the
    newer copy the shards verified, where one unsharded mine removes it. Now the merge removes it and says so."""
    path, shas = _history(tmp_path)
    (path / ".homefield.yml").write_text(
        f"test_cmd: {json.dumps(f'{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}')}\n")
    subprocess.run(["git", "add", ".homefield.yml"], cwd=path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "Configure homefield"],
                   cwd=path, check=True)
    machines = []
    for k in (1, 2):
        machine = tmp_path / f"machine{k}"
        subprocess.run(["git", "clone", "-q", str(path), str(machine)], check=True)
        (machine / ".homefield.yml").write_text((path / ".homefield.yml").read_text())
        proc = homefield(machine, "mine", "--stability-runs", "1", "--sandbox", "none", "-n", "0", "--shard", f"{k}/2")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        machines.append(machine)
    shard_tasks = [t for m in machines for t in read_jsonl(m / ".homefield" / "tasks.jsonl")]
    again = next(t for t in shard_tasks if t["id"] == shas["again"][:12])
    old = {**again, "id": shas["original"][:12], "commit": shas["original"],
           "parent": subprocess.run(["git", "rev-parse", f"{shas['original']}^"], cwd=path, capture_output=True,
                                    text=True, check=True).stdout.strip()}
    tasks_path = path / ".homefield" / "tasks.jsonl"
    tasks_path.parent.mkdir()
    write_jsonl_atomic(tasks_path, [old])  # what a mine before filter 12 kept
    merged = homefield(path, "mine", "--merge", *map(str, machines))
    assert merged.returncode == 0, merged.stdout + merged.stderr
    ids = [t["id"] for t in read_jsonl(tasks_path)]
    assert ids == [shas["other"][:12], shas["again"][:12]], (ids, merged.stdout)  # before: the older copy kept too
    assert (f"Removed from tasks.jsonl: 1 task ({shas['original'][:12]}) that an earlier mine kept, whose change a "
            "newer commit repeats") in merged.stdout, merged.stdout
