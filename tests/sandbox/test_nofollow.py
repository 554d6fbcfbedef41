"""sandbox/nofollow.py: file work under a root an agent controlled never follows its links (issue 30)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pytest_homefield.sandbox import nofollow


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """``(root, host)``: a root whose ``docs`` is a link to the host folder, whose ``x.md`` the host owns."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "x.md").write_text("host's\n")
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "docs").symlink_to(host)
    (root / "leaf.md").symlink_to(host / "x.md")
    return root, host


def test_no_read_write_or_delete_goes_through_a_link(trees: tuple[Path, Path]) -> None:
    root, host = trees
    for rel in ("docs/x.md", "leaf.md"):
        with pytest.raises(nofollow.LinkInTheWay):
            nofollow.read_bytes(root, rel)
    with pytest.raises(nofollow.LinkInTheWay):
        nofollow.write_bytes(root, "docs/x.md", b"agent's")
    assert nofollow.lstat(root, "docs/x.md") is None and nofollow.remove(root, "docs/x.md") is False
    assert not nofollow.rmdir(root, "docs")
    assert (host / "x.md").read_text() == "host's\n"
    # a write or a removal at a link replaces or removes the link itself
    nofollow.write_bytes(root, "leaf.md", b"mine\n", mode=0o600)
    assert not (root / "leaf.md").is_symlink() and (root / "leaf.md").read_text() == "mine\n"
    assert stat.S_IMODE((root / "leaf.md").stat().st_mode) == 0o600
    assert nofollow.remove(root, "docs") is True and not os.path.lexists(root / "docs")
    assert (host / "x.md").read_text() == "host's\n"


def test_bad_relative_paths_are_refused(trees: tuple[Path, Path]) -> None:
    root, _ = trees
    for rel in ("../host/x.md", "/etc/passwd", "src/../../host/x.md"):
        with pytest.raises(ValueError, match="inside its folder"):
            nofollow.read_bytes(root, rel)


def test_walk_lists_links_as_entries_and_never_enters_them(trees: tuple[Path, Path]) -> None:
    root, _ = trees
    os.mkfifo(root / "pipe")
    entries = nofollow.walk(root)
    assert {rel: e.kind for rel, e in entries.items()} == {"src/a.py": "file", "docs": "link", "leaf.md": "link",
                                                           "pipe": "other"}
    with pytest.raises(OSError, match="not a regular file"):  # never opened for reading: no block
        nofollow.read_bytes(root, "pipe")


def test_same_entry_and_copy_entry(trees: tuple[Path, Path], tmp_path: Path) -> None:
    root, host = trees
    other = tmp_path / "other"
    other.mkdir()
    nofollow.copy_entry(root, "src/a.py", other)
    nofollow.copy_entry(root, "leaf.md", other)
    assert os.readlink(other / "leaf.md") == str(host / "x.md")
    assert nofollow.same_entry(root, other, "src/a.py") and nofollow.same_entry(root, other, "leaf.md")
    (other / "src" / "a.py").write_text("a = 2\n")
    assert not nofollow.same_entry(root, other, "src/a.py")
    with pytest.raises(nofollow.LinkInTheWay):
        nofollow.copy_entry(root, "docs/x.md", other)


def test_copy_tree_keeps_links_and_modes_and_refuses_special_files(trees: tuple[Path, Path], tmp_path: Path) -> None:
    root, host = trees
    os.chmod(root / "src" / "a.py", 0o755)
    dest = nofollow.copy_tree(root, tmp_path / "copy")
    assert os.readlink(dest / "docs") == str(host) and (dest / "src" / "a.py").read_text() == "a = 1\n"
    assert stat.S_IMODE((dest / "src" / "a.py").stat().st_mode) == 0o755
    with pytest.raises(FileExistsError):
        nofollow.copy_tree(root, dest)
    os.mkfifo(root / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        nofollow.copy_tree(root, tmp_path / "copy2")


def test_removing_a_workspace_with_the_agents_links_leaves_their_targets(trees: tuple[Path, Path]) -> None:
    """Cleanup stays ``shutil.rmtree``, which walks by descriptor on this platform and unlinks links."""
    import shutil

    root, host = trees
    assert shutil.rmtree.avoids_symlink_attacks
    shutil.rmtree(root)
    assert not root.exists() and (host / "x.md").read_text() == "host's\n"


def test_a_folder_nested_too_deep_is_one_entry_not_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nofollow, "MAX_DEPTH", 3)
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    (deep / "f.py").write_text("x\n")
    (tmp_path / "a" / "top.py").write_text("y\n")
    assert {rel: e.kind for rel, e in nofollow.walk(tmp_path).items()} == {"a/top.py": "file", "a/b/c/d": "other"}


def test_read_tail_reads_a_regular_file_only(tmp_path: Path, trees: tuple[Path, Path]) -> None:
    root, _ = trees
    (root / "log").write_bytes(b"x" * 10 + b"END\n")
    assert nofollow.read_tail(root / "log", 4) == b"END\n"
    with pytest.raises(nofollow.LinkInTheWay):
        nofollow.read_tail(root / "leaf.md", 100)
    os.mkfifo(root / "pipe")
    with pytest.raises(OSError, match="not a regular file"):
        nofollow.read_tail(root / "pipe", 100)


def test_restore_access_gives_the_owner_back_its_folders_and_files_never_through_a_link(tmp_path: Path) -> None:
    """atk19: what an agent made unreadable is given back (``u+rwx`` on folders, ``u+r`` on files, other bits
    kept) at any depth and on the root itself; a symlink to an outside folder is neither followed nor changed."""
    from pytest_homefield.sandbox.nofollow import restore_access

    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b" / "f.py").write_text("x")
    (root / "g.txt").write_text("y")
    (root / "link").symlink_to(outside)
    os.chmod(outside, 0o050)
    os.chmod(root / "a" / "b" / "f.py", 0o040)
    os.chmod(root / "g.txt", 0o200)
    os.chmod(root / "a" / "b", 0o300)
    os.chmod(root / "a", 0)
    os.chmod(root, 0o100)
    changed = restore_access(root)
    assert sorted(changed) == [".", "a", "a/b", "a/b/f.py", "g.txt"]
    mode = {p: stat.S_IMODE(os.lstat(root / p).st_mode) for p in ("", "a", "a/b", "a/b/f.py", "g.txt")}
    assert mode == {"": 0o700, "a": 0o700, "a/b": 0o700, "a/b/f.py": 0o440, "g.txt": 0o600}
    assert stat.S_IMODE(os.stat(outside).st_mode) == 0o050  # through the link: untouched
    assert restore_access(root) == []


def test_remove_tree_removes_any_depth_and_never_follows_a_link(tmp_path: Path) -> None:
    """atk25: ``shutil.rmtree`` raised ``RecursionError`` (past ``ignore_errors``) on 3,000 nested folders an
    agent left; :func:`nofollow.remove_tree` holds one descriptor, no recursion. A link inside (to a folder and to
    a file outside) goes as a link, what it points at stays; a link as the tree itself is left."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    tree = tmp_path / "tree"
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for i in range(3000):  # each level relative to the one before: the whole path is past PATH_MAX
            os.mkdir("tree" if i == 0 else "a", dir_fd=fd)
            sub = os.open("tree" if i == 0 else "a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = sub
            if i % 500 == 0:
                os.symlink(str(outside), "link", dir_fd=fd)
                os.symlink(str(outside / "keep.txt"), "flink", dir_fd=fd)
                os.close(os.open("file", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    finally:
        os.close(fd)
    for i in range(50):
        (tree / f"w{i}" / "x").mkdir(parents=True)
    nofollow.remove_tree(tree)
    assert not os.path.lexists(tree) and (outside / "keep.txt").read_text() == "mine"
    (tmp_path / "alink").symlink_to(outside, target_is_directory=True)
    nofollow.remove_tree(tmp_path / "alink")
    nofollow.remove_tree(tmp_path / "absent")
    assert (tmp_path / "alink").is_symlink() and (outside / "keep.txt").exists()



def test_copy_trees_makes_every_copy_at_once_so_none_is_older(tmp_path: Path) -> None:
    """The canary twin runs' copies (issue 30): each entry is made in every copy before the next entry, in a
    random order of the copies, so no copy got all its entries first. Made one after the other, the second
    copy took over 2 s on pypa/packaging under load, and a test process that passed everything where its
    files were older than 2 s was solved without a fix (verify's run-order attack). The order shows in the
    entries' change times and, where the filesystem numbers inodes as it makes them (ext4 here), in their
    inode numbers."""
    n = 200
    src = tmp_path / "src"
    (src / "pkg" / "sub").mkdir(parents=True)
    for i in range(n):
        (src / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    (src / "pkg" / "sub" / "run.sh").write_text("echo hi\n")
    (src / "pkg" / "sub" / "run.sh").chmod(0o755)
    (src / "pkg" / "alias.py").symlink_to("m0.py")
    os.utime(src / "pkg" / "m1.py", ns=(1_000_000_000, 2_000_000_000))
    copies = nofollow.copy_trees(src, [tmp_path / "a", tmp_path / "b", tmp_path / "c"], atime_is_mtime=True)
    assert copies == [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    entries = sorted(str(p.relative_to(src)) for p in src.rglob("*"))
    stats = [{k: os.lstat(c / k) for k in entries} for c in copies]
    for c in copies:
        assert (c / "pkg" / "m7.py").read_text() == "x = 7\n" and os.readlink(c / "pkg" / "alias.py") == "m0.py"
        assert stat.S_IMODE((c / "pkg" / "sub" / "run.sh").stat().st_mode) == 0o755
        st = os.stat(c / "pkg" / "m1.py")
        assert st.st_mtime_ns == 2_000_000_000 and st.st_atime_ns == 2_000_000_000
    files = [f"pkg/m{i}.py" for i in range(n)]
    ticks = len({s[k].st_ctime_ns for s in stats for k in files})
    numbered = [os.lstat(src / f).st_ino for f in files]
    if ticks < 3 and numbered != sorted(numbered):
        pytest.skip("this filesystem's change times are too coarse and its inode numbers not in order")
    for i, j in ((0, 1), (1, 2), (0, 2)):
        a, b = stats[i], stats[j]
        if ticks >= 3:  # made one after the other, every entry of the second is at least as new as the first's
            assert min(b[k].st_ctime_ns for k in files) < max(a[k].st_ctime_ns for k in files)
            assert min(a[k].st_ctime_ns for k in files) < max(b[k].st_ctime_ns for k in files)
        if numbered == sorted(numbered):  # made one after the other: one copy's inodes all below the other's
            lower = sum(a[k].st_ino < b[k].st_ino for k in files)
            assert 0.2 * n < lower < 0.8 * n, (i, j, lower)  # a coin toss per entry


def test_an_entry_copier_reaches_each_folder_once_and_copies_as_copy_entry(
        trees: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """host30: copying 100,000 files one :func:`copy_entry` at a time opened every folder on each path again
    from both roots. :class:`EntryCopier` keeps the last folder's two descriptors: 200 files in two folders are
    copied with 2 folder walks per side (4), not 200 per side, into the same tree ``copy_entry`` makes; a link
    on the way is still refused and a link is copied as a link; after :meth:`forget` (a removal in between) a
    folder replaced by a link is seen."""
    root, host = trees
    for d in ("p", "q"):
        (root / d).mkdir()
        for i in range(100):
            (root / d / f"f{i:03d}").write_text(f"{d}{i}\n")
    rels = [f"{d}/f{i:03d}" for d in ("p", "q") for i in range(100)] + ["leaf.md", "src/a.py"]
    walks: list[str] = []
    real = nofollow._open_dir

    def counted(r: Path | str, rel: str = "", **kw: object) -> int:
        walks.append(str(rel))
        return real(r, rel, **kw)  # type: ignore[arg-type]

    (tmp_path / "fast").mkdir()
    (tmp_path / "slow").mkdir()
    monkeypatch.setattr(nofollow, "_open_dir", counted)
    with nofollow.EntryCopier(root, tmp_path / "fast") as copier:
        for rel in rels:
            copier.copy(rel)
        with pytest.raises(nofollow.LinkInTheWay):
            copier.copy("docs/x.md")
    assert sorted(walks) == sorted(["p", "p", "q", "q", "", "", "src", "src", "docs"])  # docs: the source refused
    monkeypatch.setattr(nofollow, "_open_dir", real)
    for rel in rels:
        nofollow.copy_entry(root, rel, tmp_path / "slow")
    fast, slow = nofollow.walk(tmp_path / "fast"), nofollow.walk(tmp_path / "slow")
    assert fast == slow and fast["leaf.md"].kind == "link" and len(fast) == 202
    assert all(nofollow.same_entry(tmp_path / "fast", tmp_path / "slow", rel) for rel in rels)
    assert (host / "x.md").read_text() == "host's\n"
    dest = tmp_path / "fast"
    with nofollow.EntryCopier(root, dest) as copier:
        copier.copy("p/f000")
        copier.forget()
        nofollow.remove(dest, "p")
        (dest / "p").symlink_to(host)
        with pytest.raises(nofollow.LinkInTheWay):
            copier.copy("p/f001")
    assert not (host / "f001").exists()
