"""Snapshots are the commit's tree byte for byte, in a one-commit repository that says nothing
about the original (contracts §7); copies, patches and setup on top of them."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_homefield.errors import PatchError, SnapshotError
from pytest_homefield.sandbox.snapshot import (
    SNAPSHOT_AUTHOR,
    SNAPSHOT_MESSAGE,
    apply_patch,
    copy_tree,
    make_snapshot,
    run_setup,
    setup_error_line,
)


def _git(repo: Path, *args: str, input: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    out = subprocess.run(["git", *args], cwd=repo, env=env, input=input, capture_output=True, check=True)
    return out.stdout.decode("utf-8", "surrogateescape")


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A", "-f")
    _git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


BINARY = bytes(range(256)) * 4


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A repository whose first commit has every awkward tree entry and a second commit the
    snapshot of the first must know nothing about."""
    root = tmp_path_factory.mktemp("origin")
    _git(root, "init", "-q", "-b", "trunk")
    (root / ".gitattributes").write_text(
        "subst.txt export-subst ident\n"
        "hidden.txt export-ignore\n"
        "crlf.txt -text\n"
        "eol.txt text eol=crlf\n"
        "big.bin filter=lfs diff=lfs merge=lfs -text\n"
    )
    (root / "subst.txt").write_text("$Format:%H$\n$Id$\n")
    (root / "hidden.txt").write_text("not exported by git archive\n")
    (root / "crlf.txt").write_bytes(b"windows\r\nline\r\n")
    (root / "eol.txt").write_bytes(b"stored with lf\n")
    (root / "big.bin").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 3\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "data.bin").write_bytes(BINARY)
    (root / "link").symlink_to("run.sh")
    (root / "pkg" / "dangling").symlink_to("../nowhere")
    (root / "café ünï.txt").write_text("non-ascii name\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "tracked.log").write_text("tracked although ignored\n")
    first = _commit(root, "first: the tree to snapshot")
    (root / "future.txt").write_text("only in the second commit\n")
    (root / "run.sh").write_text("#!/bin/sh\necho changed\n")
    second = _commit(root, "second: the future")
    _git(root, "tag", "v1", first)
    # junk in the working tree that is not in any commit
    for junk in ("__pycache__", ".pytest_cache", "pkg.egg-info", ".homefield"):
        (root / junk).mkdir()
        (root / junk / "x").write_text("junk\n")
    return {"root": root, "first": first, "second": second}


def _tree_entries(repo: Path, commit: str) -> dict[str, tuple[str, str]]:
    """path → (mode, blob sha) of every file in ``commit``."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries = {}
    for rec in out.split("\0"):
        if rec:
            meta, path = rec.split("\t", 1)
            mode, _kind, sha = meta.split()
            entries[path] = (mode, sha)
    return entries


def _files(folder: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) == folder and d == ".git")]
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            out.add(str((Path(dirpath) / name).relative_to(folder)))
    return out


@pytest.fixture(scope="module")
def snap(repo: dict) -> Iterator[Path]:
    """A snapshot at its default place (a random folder under the temp dir)."""
    path = make_snapshot(repo["root"], repo["first"])
    yield path
    shutil.rmtree(path)


def test_tree_is_byte_exact_with_modes_and_symlinks(repo: dict, snap: Path) -> None:
    entries = _tree_entries(repo["root"], repo["first"])
    assert _files(snap) == set(entries)
    for path, (mode, sha) in entries.items():
        blob = subprocess.run(
            ["git", "cat-file", "blob", sha], cwd=repo["root"], capture_output=True, check=True
        ).stdout
        target = snap / path
        if mode == "120000":
            assert target.is_symlink(), path
            assert os.readlink(target).encode() == blob, path
            continue
        assert target.read_bytes() == blob, path
        executable = bool(target.stat().st_mode & stat.S_IXUSR)
        assert executable == (mode == "100755"), path
    # the attribute-sensitive files specifically
    assert (snap / "subst.txt").read_text() == "$Format:%H$\n$Id$\n"
    assert (snap / "hidden.txt").exists()
    assert (snap / "crlf.txt").read_bytes() == b"windows\r\nline\r\n"
    assert (snap / "eol.txt").read_bytes() == b"stored with lf\n"
    assert (snap / "big.bin").read_text().startswith("version https://git-lfs")
    assert (snap / "pkg" / "data.bin").read_bytes() == BINARY
    assert os.readlink(snap / "link") == "run.sh"
    assert (snap / "run.sh").read_text() == "#!/bin/sh\necho hi\n"


def test_working_tree_junk_is_absent(snap: Path) -> None:
    for junk in ("__pycache__", ".pytest_cache", "pkg.egg-info", ".homefield", "future.txt"):
        assert not (snap / junk).exists(), junk


def test_one_commit_repository_with_nothing_else(repo: dict, snap: Path) -> None:
    assert _git(snap, "rev-list", "--all").split() == [_git(snap, "rev-parse", "HEAD").strip()]
    assert _git(snap, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]
    assert _git(snap, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert _git(snap, "tag").strip() == ""
    assert not (snap / ".git" / "logs").exists()  # no reflog
    assert not (snap / ".git" / "hooks").exists()
    assert not (snap / ".git" / "info").exists()
    reachable = {line.split()[0] for line in _git(snap, "rev-list", "--objects", "--all").splitlines()}
    stored = {
        line.split()[0]
        for line in _git(snap, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").splitlines()
    }
    assert stored == reachable
    counts = dict(line.split(": ") for line in _git(snap, "count-objects", "-v").splitlines())
    assert int(counts["count"]) + int(counts["in-pack"]) == len(reachable)
    assert (
        _git(snap, "rev-parse", "HEAD^{tree}").strip()
        == _git(repo["root"], "rev-parse", f"{repo['first']}^{{tree}}").strip()
    )
    assert _git(snap, "status", "--porcelain").strip() == ""


def test_snapshot_commit_says_nothing_about_the_original(repo: dict, snap: Path) -> None:
    raw = _git(snap, "cat-file", "-p", "HEAD")
    name, email = SNAPSHOT_AUTHOR
    assert f"author {name} <{email}> 946684800 +0000" in raw
    assert f"committer {name} <{email}> 946684800 +0000" in raw
    assert raw.rstrip().endswith("\n\n" + SNAPSHOT_MESSAGE)
    assert "parent" not in raw
    for secret in (repo["first"], repo["second"], repo["first"][:7], "Dev", "dev@example.org", "first:"):
        assert secret not in raw
    for secret in (repo["first"], repo["first"][:12], repo["second"][:12]):
        assert secret not in str(snap)
    assert Path(tempfile.gettempdir()) in snap.parents


def test_caller_git_variables_are_not_inherited(repo: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nonexistent"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "index"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Leaky Caller")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2020-02-02T00:00:00Z")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'commit.gpgsign'='true'")
    s = make_snapshot(repo["root"], repo["first"], dest=tmp_path / "s")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    raw = _git(s, "cat-file", "-p", "HEAD")
    assert "Leaky" not in raw and "946684800" in raw and "gpgsig" not in raw
    assert not (tmp_path / "index").exists()


def test_same_tree_gives_the_same_snapshot_commit(repo: dict, snap: Path, tmp_path: Path) -> None:
    again = make_snapshot(repo["root"], repo["first"], dest=tmp_path / "again")
    assert _git(again, "rev-parse", "HEAD") == _git(snap, "rev-parse", "HEAD")


def test_a_snapshot_leaves_no_pipe_open(repo: dict, tmp_path: Path) -> None:
    """Python's development mode reports every file object collected unclosed (``ResourceWarning``):
    making a snapshot reports none (git pack-objects' stderr pipe was left open)."""
    code = ("import gc, sys; from pathlib import Path; from pytest_homefield.sandbox.snapshot import make_snapshot; "
            "make_snapshot(Path(sys.argv[1]), 'HEAD', dest=Path(sys.argv[2])); gc.collect()")
    proc = subprocess.run([sys.executable, "-X", "dev", "-c", code, str(repo["root"]), str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "ResourceWarning" not in proc.stderr, proc.stderr


def test_files_only_snapshot(repo: dict, tmp_path: Path) -> None:
    s = make_snapshot(repo["root"], repo["second"], dest=tmp_path / "plain", init_git=False)
    assert not (s / ".git").exists()
    assert _files(s) == set(_tree_entries(repo["root"], repo["second"]))
    assert (s / "future.txt").exists() and os.readlink(s / "link") == "run.sh"
    assert (s / "subst.txt").read_text() == "$Format:%H$\n$Id$\n"


def test_errors(repo: dict, tmp_path: Path) -> None:
    with pytest.raises(SnapshotError):
        make_snapshot(repo["root"], "no-such-commit", dest=tmp_path / "bad")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(FileExistsError):
        make_snapshot(repo["root"], repo["first"], dest=tmp_path / "full")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # nothing half-made left behind


def test_copy_tree_keeps_symlinks_and_modes(snap: Path, tmp_path: Path) -> None:
    dest = copy_tree(snap, tmp_path / "copy")
    assert os.readlink(dest / "link") == "run.sh"
    assert os.readlink(dest / "pkg" / "dangling") == "../nowhere"
    assert (dest / "run.sh").stat().st_mode & stat.S_IXUSR
    assert _git(dest, "status", "--porcelain").strip() == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert copy_tree(snap, empty) == empty
    with pytest.raises(FileExistsError):
        copy_tree(snap, dest)


def test_apply_patch_binary_modes_deletions_outside_a_repo(repo: dict, tmp_path: Path) -> None:
    patch = _git(repo["root"], "diff", "--binary", "--full-index", repo["first"], repo["second"])
    # the work folder sits inside an unrelated git repository: git must not look above it
    outer = tmp_path / "outer"
    outer.mkdir()
    _git(outer, "init", "-q")
    work = make_snapshot(repo["root"], repo["first"], dest=outer / "nested" / "w", init_git=False)
    apply_patch(work, patch)
    assert (work / "future.txt").read_text() == "only in the second commit\n"
    assert (work / "run.sh").read_text() == "#!/bin/sh\necho changed\n"
    # binary change, mode change and deletion
    edit = tmp_path / "edit"
    copy_tree(work, edit)
    (edit / "pkg" / "data.bin").write_bytes(BINARY[::-1])
    (edit / "crlf.txt").unlink()
    (edit / "hidden.txt").chmod(0o755)
    diff = subprocess.run(
        [
            "git",
            "diff",
            "--no-index",
            "--binary",
            "--full-index",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--",
            str(work),
            str(edit),
        ],
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")
    diff = diff.replace(f"a{work}/", "a/").replace(f"b{edit}/", "b/")
    apply_patch(work, diff)
    assert (work / "pkg" / "data.bin").read_bytes() == BINARY[::-1]
    assert not (work / "crlf.txt").exists()
    assert (work / "hidden.txt").stat().st_mode & stat.S_IXUSR
    apply_patch(work, "")  # empty patch: nothing to do


def test_apply_patch_in_a_snapshot_repository(repo: dict, snap: Path, tmp_path: Path) -> None:
    work = copy_tree(snap, tmp_path / "w")
    apply_patch(work, _git(repo["root"], "diff", "--binary", "--full-index", repo["first"], repo["second"]))
    assert (work / "future.txt").exists()
    assert _git(work, "status", "--porcelain").split() == ["M", "run.sh", "??", "future.txt"]


def test_apply_patch_takes_nothing_from_the_folder(tmp_path: Path) -> None:
    """attacker9's F1 on the grading side: a workspace (or grading copy) whose ``.git/config`` an agent
    wrote defines a clean filter and its ``.gitattributes`` names it for every file; ``git apply`` of the
    hidden tests must neither run the filter nor convert bytes by an attribute of the folder."""
    work = tmp_path / "w"
    work.mkdir()
    _git(work, "init", "-q")
    marker = tmp_path / "filter-ran"
    _git(work, "config", "filter.hf.clean", f"touch {marker}; cat")
    (work / ".gitattributes").write_text("* filter=hf text eol=crlf\n")
    (work / "f.txt").write_text("a\n")
    apply_patch(work, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,2 @@\n a\n+b\n")
    assert not marker.exists()
    assert (work / "f.txt").read_bytes() == b"a\nb\n"  # raw, as the patch says (no eol=crlf)
    with pytest.raises(PatchError, match=r"\.git"):
        apply_patch(work, "--- a/.git/config\n+++ b/.git/config\n@@ -0,0 +1 @@\n+[x]\n")


def test_apply_patch_writes_a_new_file_unconverted_whatever_encoding_the_folder_names(tmp_path: Path) -> None:
    """git66, grading's side of the export's hole: a carried ``.gitattributes`` naming ``working-tree-encoding=UTF-7``
    for ``*.py`` (eval.sh's git wrote ``< (1)`` as ``+ADw (1)`` in a new hidden test file) changes nothing of the
    hidden tests ``apply_patch`` writes (:func:`inert_git_env`: a bare git folder reads no ``.gitattributes``)."""
    work = tmp_path / "w"
    work.mkdir()
    (work / ".gitattributes").write_text("*.py working-tree-encoding=UTF-7\n")
    apply_patch(work, "diff --git a/t.py b/t.py\nnew file mode 100644\n--- /dev/null\n+++ b/t.py\n@@ -0,0 +1 @@\n"
                      "+assert 0 < (1)\n")
    assert (work / "t.py").read_bytes() == b"assert 0 < (1)\n"


def test_apply_patch_failure_is_one_line_and_changes_nothing(repo: dict, tmp_path: Path) -> None:
    work = make_snapshot(repo["root"], repo["second"], dest=tmp_path / "w", init_git=False)
    patch = _git(repo["root"], "diff", "--binary", "--full-index", repo["first"], repo["second"])
    before = (work / "run.sh").read_text()
    with pytest.raises(PatchError) as err:
        apply_patch(work, patch)  # already applied: future.txt exists, run.sh differs
    assert "\n" not in str(err.value) and str(err.value)
    assert (work / "run.sh").read_text() == before


def test_a_failed_setup_says_what_the_tool_said_before_its_help_pointer(tmp_path: Path) -> None:
    """usr46 on python-humanize/humanize: its translation script has no ``#!`` line and uses brace expansion, which
    ``sh`` leaves as it is; msgfmt got no input file and the mine's only words for 11 candidates were "Try 'msgfmt
    --help' for more information.". The same mistake with ``cp``, which every machine has."""
    (tmp_path / "compile.sh").write_text("set -e\ncp messages{.po,.mo}\n")
    (tmp_path / "compile.sh").chmod(0o755)
    log = tmp_path / "setup.log"
    failed = run_setup(tmp_path, "./compile.sh", env=os.environ, timeout_s=10, log_path=log)
    assert failed.exit_code != 0
    line = setup_error_line(log)
    assert line is not None and line.startswith("cp: ") and "messages{.po,.mo}" in line, line
    assert line.endswith("(Try 'cp --help' for more information.)"), line
    log.write_text("building\nerror: no compiler\n")
    assert setup_error_line(log) == "error: no compiler"  # any other last line: as it is


def test_run_setup(tmp_path: Path) -> None:
    assert run_setup(tmp_path, None, env=os.environ, timeout_s=5).exit_code == 0
    log = tmp_path / "setup.log"
    ok = run_setup(tmp_path, "echo out; echo err >&2; touch made", env=os.environ, timeout_s=10, log_path=log)
    assert ok.exit_code == 0 and (tmp_path / "made").exists()
    assert log.read_text().split() == ["out", "err"]
    assert run_setup(tmp_path, "exit 3", env=os.environ, timeout_s=10).exit_code == 3
    slow = run_setup(tmp_path, "sleep 30", env=os.environ, timeout_s=0.5)
    assert slow.timed_out and slow.wall_s < 10
