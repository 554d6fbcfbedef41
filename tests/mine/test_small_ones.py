"""Issue 35 item 10's small ones on the mining side: test ids in ``-v`` lines are printed verbatim,
``setup.cfg`` and ``tox.ini`` are not source, a drop where every test was skipped has its own reason
(also when an earlier record of it is reused); a merge refuses a folder mined from another repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.errors import ShardMergeError
from pytest_homefield.layout import write_meta
from pytest_homefield.mine.mine_shards import merge_mines
from pytest_homefield.mine.pipeline import candidates_digest
from pytest_homefield.mine.redgreen import DeadlineReached, root_commits, run_phrase
from pytest_homefield.mine.reuse import reused_record
from pytest_homefield.mine.scan import ScanOptions, scan
from pytest_homefield.records import REJECTED_PREFIX, UNSOLVED_PREFIX
from pytest_homefield.store import write_jsonl_atomic
from pytest_homefield.terminal.hooks import _why


def _skip(message: str) -> pytest.TestReport:
    return pytest.TestReport("t::x", ("t", 0, "x"), {}, "skipped", ("t", 1, f"Skipped: {message}"), "call")


def test_verbose_reasons_keep_test_ids_verbatim() -> None:
    rid = "tests/test_retry.py::test_retry_recovers[a_b]"
    assert _why(_skip(f"{REJECTED_PREFIX}reference fails (1 red test(s) do not pass at the commit, e.g. {rid})")) \
        == f" (reference fails (1 red test(s) do not pass at the commit, e.g. {rid}))"
    assert _why(_skip(f"{UNSOLVED_PREFIX}tests_failed (failed: {rid})")) == f" (tests failed (failed: {rid}))"
    assert _why(_skip("not verified: --stop-after-tasks 1 reached")) == " (not verified: --stop-after-tasks 1 reached)"


def test_setup_cfg_and_tox_ini_are_not_source(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/mod.py", "x = 1\n")
    repo.write("setup.cfg", "[metadata]\nname = pkg\n[options]\ninstall_requires =\n    attrs\n")
    repo.write("tox.ini", "[tox]\nenvlist = py3\n")
    repo.write("tests/test_mod.py", "def test_x():\n    assert True\n")
    repo.commit("Start the package with a module and a test")
    repo.write("setup.cfg", "[metadata]\nname = pkg\n[options]\ninstall_requires =\n    attrs\n[flake8]\n"
                            "max-line-length = 100\n")
    repo.write("tests/test_mod.py", "def test_x():\n    assert True\n\n\ndef test_y():\n    assert 1\n")
    only_cfg = repo.commit("Configure flake8 and add a second test to the suite")
    repo.write("tox.ini", "[tox]\nenvlist = py3,py312\n")
    repo.write("tests/test_mod.py", "def test_x():\n    assert True\n\n\ndef test_z():\n    assert 2\n")
    only_tox = repo.commit("Test on Python 3.12 too and rename the second test")
    result = scan(repo.path, ScanOptions())
    assert not result.candidates
    reasons = {r.commit: r.reason for r in result.rejected}
    assert reasons[only_cfg] == reasons[only_tox] != "dependency_change"


def test_all_skipped_is_its_own_reason_when_reused_too() -> None:
    prior = {"commit": "a" * 40, "id": "a" * 12, "subject": "old", "verify_key": "k", "reason": "passes_without_change",
             "detail": "no test failed in 1 parent run: all 2 were skipped in this environment (e.g. t.py::a)"}
    assert reused_record({"commit": "a" * 40, "subject": "S"}, prior, source="m0")["reason"] == "tests_skipped"
    prior["detail"] = "no test failed in 1 parent run: all 2 passed without the change"
    assert reused_record({"commit": "a" * 40, "subject": "S"}, prior, source="m0")["reason"] == \
        "passes_without_change"


def test_merge_refuses_a_folder_mined_from_another_repository(tmp_path: Path) -> None:
    here, there = GitRepo.init(tmp_path / "here"), GitRepo.init(tmp_path / "there")
    for repo, text in ((here, "a"), (there, "b")):
        repo.write("x.py", text)
        repo.commit(f"Start {text}")
    assert root_commits(here.path) == [here.head()]
    c = "c" * 40
    folder = tmp_path / "in" / "m1"
    folder.mkdir(parents=True)
    write_meta(folder, {"kind": "mine", "mine_id": "m1", "shard": None, "candidate_ids": [c[:12]],
                        "candidates_digest": candidates_digest([c]), "max_tasks": None,
                        "root_commits": root_commits(there.path)})
    write_jsonl_atomic(folder / "candidates.jsonl", [{"commit": c}])
    write_jsonl_atomic(folder / "results.jsonl", [{"commit": c, "id": c[:12], "reason": "flaky"}])
    write_jsonl_atomic(folder / "scan.jsonl", [])
    with pytest.raises(ShardMergeError, match=r"m1 was mined from another repository \(root commit "
                                              rf"{there.head()[:12]}, here {here.head()[:12]}\)"):
        merge_mines([folder], here.path)
    assert not (here.path / ".homefield").exists()  # nothing written
    assert merge_mines([folder], there.path).records  # its own repository takes it


def test_a_run_the_time_budget_cut_is_named_in_words() -> None:
    """ref28 on simonw/llm: a candidate cut by ``--time-budget`` read "time budget 6m reached in
    parent-1-bounded", a log folder's name; the detail says which run in words."""
    assert run_phrase("parent-1") == "parent run 1"
    assert run_phrase("parent-1-bounded") == "parent run 1 (again, bounded by the commit's time)"
    assert run_phrase("commit-2-full") == "commit run 2 (again, whole files)"
    assert run_phrase("parent-1-rest") == "parent run 1 (again, the tests its probe did not reach)"
    assert run_phrase("parent-1-bounded-full") == "parent run 1 (again, bounded by the commit's time, whole files)"
    assert run_phrase("canaries-1-2") == "canary run 2 of commit run 1"
    assert run_phrase("parent-1-again") == "parent run 1 (again, whole files, after its probe)"  # perf46
    assert run_phrase("parent-1-again-rest") == (  # perf47
        "parent run 1 (again, after its probe, the tests its probe did not reach)")
    assert run_phrase("commit-1-capped") == "commit run 1 (capped, to show the parent's bound)"
    assert run_phrase("canaries-1-2-full") == "canary run 2 of commit run 1 (again, whole files)"
    assert str(DeadlineReached(run_phrase("parent-1-bounded"))) == (
        "stopped at the time budget in parent run 1 (again, bounded by the commit's time)")
