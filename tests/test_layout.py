"""The ``.homefield/`` layout: paths, ids, ``meta.json`` and the newest run."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pytest_homefield.layout import (
    HomefieldDir,
    attempt_dir,
    candidates_path,
    meta_path,
    new_id,
    new_verify_id,
    read_meta,
    results_path,
    scan_path,
    write_meta,
)


def test_paths_are_under_dot_homefield(tmp_path: Path) -> None:
    home = HomefieldDir(tmp_path)
    hf = tmp_path / ".homefield"
    assert home.path == hf
    assert home.tasks == hf / "tasks.jsonl"
    assert home.run_dir("r1") == hf / "runs" / "r1"
    assert home.mine_dir("m1") == hf / "mine" / "m1"
    assert home.env_file("abc") == hf / "envs" / "abc.json"
    assert (home.probe, home.ablate) == (hf / "probe", hf / "ablate")
    assert not hf.exists()  # building paths touches nothing
    run = home.run_dir("r1")
    assert meta_path(run) == run / "meta.json"
    assert results_path(run) == run / "results.jsonl"
    assert attempt_dir(run, "abc123", "oracle", 2) == run / "attempts" / "abc123" / "oracle" / "2"
    mine = home.mine_dir("m1")
    assert (candidates_path(mine), scan_path(mine)) == (mine / "candidates.jsonl", mine / "scan.jsonl")


def test_ids_are_utc_stamps_with_a_random_suffix() -> None:
    ids = {new_id() for _ in range(50)}
    assert all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", i) for i in ids)
    assert len(ids) > 1
    assert re.fullmatch(r"verify-\d{8}-\d{6}-[0-9a-f]{4}", new_verify_id())


def test_meta_round_trip_absent_and_bad(tmp_path: Path) -> None:
    run = tmp_path / "r"
    assert read_meta(run) == {}
    write_meta(run, {"run_id": "r", "note": "ünïcode"})
    assert read_meta(run) == {"run_id": "r", "note": "ünïcode"}
    assert "ünïcode" in meta_path(run).read_text(encoding="utf-8")  # readable, indented
    assert meta_path(run).read_text(encoding="utf-8").startswith('{\n  "run_id"')
    meta_path(run).write_text("{not json")
    with pytest.raises(ValueError, match=r"meta\.json: not valid JSON"):
        read_meta(run)
    meta_path(run).write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object"):
        read_meta(run)


def test_newest_run_uses_created_at_and_skips_verify_runs(tmp_path: Path) -> None:
    home = HomefieldDir(tmp_path)
    assert home.newest_run() is None
    write_meta(home.run_dir("zzz-named"), {"created_at": "2026-01-01T00:00:00+00:00"})
    write_meta(home.run_dir("aaa"), {"created_at": "2026-02-01T00:00:00+00:00"})
    write_meta(home.run_dir("verify-x"), {"created_at": "2027-01-01T00:00:00+00:00"})
    (home.runs / "no-meta").mkdir()
    assert home.newest_run() == "aaa"
    assert home.has_run("aaa") and home.has_run("verify-x") and not home.has_run("no-meta")


def test_ensure_creates_the_folder_and_excludes_it_once(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = HomefieldDir(tmp_path)
    assert home.ensure() == tmp_path / ".homefield"
    home.ensure()
    exclude = (tmp_path / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count("/.homefield/") == 1


def test_ensure_follows_a_worktree_gitdir_file(tmp_path: Path) -> None:
    real = tmp_path / "gitdir"
    (real / "info").mkdir(parents=True)
    (real / "info" / "exclude").write_text("*.pyc")  # no trailing newline
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {os.path.relpath(real, work)}\n")
    HomefieldDir(work).ensure()
    assert (real / "info" / "exclude").read_text() == "*.pyc\n/.homefield/\n"


def test_new_mine_dirs_are_listed_oldest_first(tmp_path: Path) -> None:
    home = HomefieldDir(tmp_path)
    assert home.mine_dirs() == []
    first = home.new_mine_dir()
    second = home.new_mine_dir()
    os.utime(first, (1, 1))
    assert first.parent == home.mine and first.is_dir()
    assert home.mine_dirs() == [first, second]


def test_new_id_is_utc_time_and_a_random_suffix() -> None:
    a, b = new_id(), new_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", a)
    assert a != b or a[:-4] == b[:-4]


@pytest.mark.parametrize("where", ["exclude", "info"])
def test_ensure_never_appends_through_a_link_in_the_git_folder(tmp_path: Path, where: str) -> None:
    """link48: under ``--sandbox none`` graded code can write in the repository's ``.git``. Before, a link at
    ``.git/info/exclude`` (or ``.git/info``) made ``ensure`` append ``/.homefield/`` to the user's file it named.
    Now the link is never followed (nothing listed); the folder is made as before."""
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    user = tmp_path / "user"
    user.mkdir()
    (user / "exclude").write_text("the user's own lines\n")
    info = tmp_path / "repo" / ".git" / "info"
    if where == "exclude":
        (info / "exclude").unlink()
        (info / "exclude").symlink_to(user / "exclude")
    else:
        for f in info.iterdir():
            f.unlink()
        info.rmdir()
        info.symlink_to(user)
    assert HomefieldDir(tmp_path / "repo").ensure() == tmp_path / "repo" / ".homefield"
    assert (user / "exclude").read_text() == "the user's own lines\n"
    assert (tmp_path / "repo" / ".homefield").is_dir()
