"""The candidate scan on small real git repositories built by :mod:`gitrepo`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import git
import pytest
from helpers.gitrepo import GitRepo

from pytest_homefield.errors import ScanError
from pytest_homefield.mine import scan_git
from pytest_homefield.mine.scan import (
    REASONS,
    Candidate,
    ScanOptions,
    ScanResult,
    format_reason,
    format_scan,
    scan,
)

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

PYPROJECT = """\
[project]
name = "pkg"
version = "1.0"
dependencies = ["click"]

[tool.ruff]
line-length = 100
"""

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\xff\xfe"


def _test(name: str = "x") -> str:
    return f"def test_{name}():\n    assert True\n"


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One linear history with a commit for every file class, filter and git oddity."""
    repo = GitRepo.init(tmp_path_factory.mktemp("zoo") / "repo")
    w, c = repo.write, repo.commit
    shas: dict[str, str] = {}

    w("pkg/__init__.py", "")
    w("pkg/core.py", "def core():\n    return 1\n")
    w("tests/test_core.py", _test("core"))
    w("tests/test_old.py", _test("old"))
    w("README.md", "# pkg\n")
    shas["root"] = c("Initial import of the package")

    w("README.md", "# pkg\n\nMore words.\n")
    w("docs/index.rst", "Docs\n====\n")
    shas["docs_only"] = c("Document the package in more detail")

    w("pkg/core.py", "def core():\n    return 2\n")
    shas["source_only"] = c("Change what core returns")

    w("pkg/core.py", "def core():\n    return 3\n")
    w("tests/test_core.py", _test("core3"))
    w("CHANGELOG.md", "- core returns 3\n")
    shas["good"] = c("Make core return three instead of two")

    w("tests/test_core.py", _test("core4"))
    shas["tests_only"] = c("Strengthen the test of core")

    w("pkg/core.py", "import click\n")
    w("tests/test_core.py", _test("core5"))
    w("requirements.txt", "click\n")
    shas["requirements"] = c("Use click for the command line")

    w("pyproject.toml", PYPROJECT)
    w("pkg/core.py", "import click  # with a pyproject\n")
    w("tests/test_core.py", _test("core6"))
    shas["pyproject_added"] = c("Add a pyproject with dependencies")

    w("pyproject.toml", PYPROJECT.replace("line-length = 100", "line-length = 120"))
    w("pkg/core.py", "import click  # longer lines\n")
    w("tests/test_core.py", _test("core7"))
    shas["pyproject_outside"] = c("Allow longer lines in the code")

    w("pyproject.toml", PYPROJECT.replace('["click"]', '["click", "rich"]'))
    w("pkg/core.py", "import rich\n")
    w("tests/test_core.py", _test("core8"))
    shas["pyproject_inside"] = c("Print with rich instead of click")

    for i in range(11):
        w(f"pkg/mod{i}.py", f"X = {i}\n")
    w("tests/test_mods.py", _test("mods"))
    shas["too_many"] = c("Add eleven small modules at once")

    w("pkg/core.py", "def core():\n    return 9\n")
    w("tests/test_core.py", _test("core9"))
    shas["short_pr"] = c("Fix core (#12)")

    w("pkg/core.py", "def core():\n    return 10\n")
    w("tests/test_core.py", _test("core10"))
    shas["short_trailers"] = c("Fix core\n\nSigned-off-by: A <a@example.com>\nCo-authored-by: B <b@example.com>")

    repo.mv("pkg/core.py", "pkg/engine.py")
    w("tests/test_core.py", "from pkg.engine import core\n" + _test("engine"))
    shas["rename"] = c("Rename the core module to engine")

    w("pkg/dir with space/ä b.py", "Y = 1\n")
    w("tests/test_ünïcode.py", _test("unicode"))
    shas["unicode"] = c("Support non-ASCII module paths")

    w("pkg/data/logo.png", PNG)
    w("pkg/engine.py", "def core():\n    return 11\n")
    w("tests/test_core.py", _test("logo"))
    shas["binary"] = c("Ship a logo with the package")

    shas["empty"] = c("An empty commit for the record", allow_empty=True)

    repo.rm("tests/test_old.py")
    w("pkg/engine.py", "def core():\n    return 12\n")
    shas["tests_deleted"] = c("Drop the old test and tweak engine")

    w("tests/data/sample.json", "{}\n")
    w("tests/conftest.py", "import pytest\n")
    w("pkg/engine.py", "def core():\n    return 13\n")
    shas["support_only"] = c("Add sample data and a conftest")

    w("tests/data/sample.json", '{"a": 1}\n')
    w("tests/test_sample.py", _test("sample"))
    w("pkg/engine.py", "def core():\n    return 14\n")
    shas["fixture_and_module"] = c("Read the sample data in engine")

    w("pkg/engine.py", "def core():\n    return 15\n")
    w("tests/test_core.py", _test("rebased"))
    shas["old_author"] = c("Old work rebased onto main today", author_date="2020-06-01T12:00:00+00:00")

    w("pkg/big.py", "".join(f"V{i} = {i}\n" for i in range(200)))
    w("tests/test_big.py", _test("big"))
    shas["big"] = c("Add a big table of constants")

    w("web/src/app.ts", "export const a = 1;\n")
    w("web/src/app.test.ts", "test('a', () => {});\n")
    shas["typescript"] = c("Add the web app and its test")

    sub = repo.git("hash-object", "-w", "--stdin", input=b"not really a commit")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/lib")
    w("pkg/engine.py", "def core():\n    return 16\n")
    w("tests/test_core.py", _test("submodule"))
    shas["submodule"] = c("Vendor the lib as a submodule")
    return repo.path, shas


@pytest.fixture(scope="module")
def default_scan(zoo: tuple[Path, dict[str, str]]) -> ScanResult:
    return scan(zoo[0], ScanOptions())


def _by_commit(result: ScanResult) -> dict[str, Candidate | str]:
    out: dict[str, Candidate | str] = {c.commit: c for c in result.candidates}
    out.update({r.commit: r.reason for r in result.rejected})
    return out


EXPECTED = {
    "root": "root_commit",
    "docs_only": "docs_only",
    "source_only": "no_test_change",
    "good": "candidate",
    "tests_only": "no_source_change",
    "requirements": "dependency_change",
    "pyproject_added": "dependency_change",
    "pyproject_outside": "candidate",
    "pyproject_inside": "dependency_change",
    "too_many": "too_many_source_files",
    "short_pr": "message_too_short",
    "short_trailers": "message_too_short",
    "rename": "candidate",
    "unicode": "candidate",
    "binary": "candidate",
    "empty": "no_test_change",
    "tests_deleted": "no_test_change",
    "support_only": "no_test_change",
    "fixture_and_module": "candidate",
    "old_author": "candidate",
    "big": "candidate",
    "typescript": "candidate",
    "submodule": "dependency_change",
}


def test_every_commit_gets_its_verdict(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    _, shas = zoo
    got = _by_commit(default_scan)
    verdicts = {name: "candidate" if isinstance(got[sha], Candidate) else got[sha] for name, sha in shas.items()}
    assert verdicts == EXPECTED
    assert default_scan.examined == len(shas)
    assert not default_scan.capped
    assert sum(default_scan.counts.values()) == len(default_scan.rejected)
    assert list(default_scan.counts) == [r for r in REASONS if r in default_scan.counts]


def test_newest_first(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    order = list(zoo[1].values())[::-1]
    assert [c.commit for c in default_scan.candidates] == [s for s in order if s in
                                                           {c.commit for c in default_scan.candidates}]
    assert default_scan.rejected[0].commit == zoo[1]["submodule"]


def test_root_commit_is_dropped_with_its_reason(zoo: tuple[Path, dict[str, str]],
                                                default_scan: ScanResult) -> None:
    # the first commit starts from an empty tree: there is no code for an agent to change
    assert _by_commit(default_scan)[zoo[1]["root"]] == "root_commit"
    detail = {r.commit: r.detail for r in default_scan.rejected}[zoo[1]["root"]]
    assert detail == "the first commit: no parent state to start from"
    assert "root commit 1" in format_scan(default_scan)


def test_candidate_fields(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    repo, shas = zoo
    good = _by_commit(default_scan)[shas["good"]]
    assert isinstance(good, Candidate)
    assert good.parent == shas["source_only"]
    assert good.subject == "Make core return three instead of two"
    assert good.source_files == ["pkg/core.py"]
    assert good.test_files == good.runnable_tests == ["tests/test_core.py"]
    assert good.docs_files == ["CHANGELOG.md"]
    assert good.dependency_files == good.deleted_files == []
    assert good.diff_lines is None  # only counted when max_diff_lines is set
    assert good.authored_at == good.committed_at == "2024-01-01T04:00:00+00:00"
    assert json.loads(json.dumps(good.to_dict())) == good.to_dict()
    assert Candidate.from_dict({**good.to_dict(), "future": 1}) == good


def test_rename_is_a_delete_plus_an_add(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    cand = _by_commit(default_scan)[zoo[1]["rename"]]
    assert isinstance(cand, Candidate)
    assert sorted(cand.source_files) == ["pkg/core.py", "pkg/engine.py"]
    assert cand.deleted_files == ["pkg/core.py"]


def test_non_ascii_and_spaces(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    cand = _by_commit(default_scan)[zoo[1]["unicode"]]
    assert isinstance(cand, Candidate)
    assert cand.source_files == ["pkg/dir with space/ä b.py"]
    assert cand.runnable_tests == ["tests/test_ünïcode.py"]


def test_binary_file_is_a_source_file(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    cand = _by_commit(default_scan)[zoo[1]["binary"]]
    assert isinstance(cand, Candidate)
    assert sorted(cand.source_files) == ["pkg/data/logo.png", "pkg/engine.py"]


def test_test_support_files_travel_but_do_not_run(zoo: tuple[Path, dict[str, str]],
                                                  default_scan: ScanResult) -> None:
    cand = _by_commit(default_scan)[zoo[1]["fixture_and_module"]]
    assert isinstance(cand, Candidate)
    assert sorted(cand.test_files) == ["tests/data/sample.json", "tests/test_sample.py"]
    assert cand.runnable_tests == ["tests/test_sample.py"]


def test_pyproject_outside_dependency_tables_is_source(zoo: tuple[Path, dict[str, str]],
                                                       default_scan: ScanResult) -> None:
    cand = _by_commit(default_scan)[zoo[1]["pyproject_outside"]]
    assert isinstance(cand, Candidate)
    assert sorted(cand.source_files) == ["pkg/core.py", "pyproject.toml"]
    details = {r.commit: r.detail for r in default_scan.rejected}
    assert details[zoo[1]["pyproject_inside"]] == "pyproject.toml"
    assert details[zoo[1]["requirements"]] == "requirements.txt"
    assert details[zoo[1]["submodule"]] == "vendor/lib"
    assert details[zoo[1]["empty"]] == "empty commit"
    assert details[zoo[1]["too_many"]] == "11 source files > 10"


def test_filter_limits_are_options(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(max_source_files=None, min_message_words=0))
    got = _by_commit(result)
    for name in ("too_many", "short_pr", "short_trailers"):
        assert isinstance(got[shas[name]], Candidate), name
    result = scan(repo, ScanOptions(max_source_files=1, min_message_words=8))
    got = _by_commit(result)
    assert got[shas["rename"]] == "too_many_source_files"
    assert got[shas["good"]] == "message_too_short"  # 7 words


def test_max_diff_lines(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(max_diff_lines=100))
    got = _by_commit(result)
    assert got[shas["big"]] == "diff_too_large"
    assert {r.commit: r.detail for r in result.rejected}[shas["big"]] == "200 lines > 100"
    good = got[shas["good"]]
    assert isinstance(good, Candidate) and good.diff_lines == 3  # core.py -1 +1, CHANGELOG +1; tests not
    binary = got[shas["binary"]]
    assert isinstance(binary, Candidate) and binary.diff_lines == 2  # the png counts 0
    assert got[shas["root"]] == "root_commit"
    # order is kept: the rejection sits where the commit is in history
    assert [r.commit for r in result.rejected][:3] == [shas["submodule"], shas["big"], shas["support_only"]]


def test_dates_use_the_author_date(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(since="2023-01-01"))
    assert _by_commit(result)[shas["old_author"]] == "outside_dates"
    assert result.examined == len(shas)
    # committed before `since`: not walked at all
    result = scan(repo, ScanOptions(since="2024-01-01T19:30:00+00:00"))
    assert result.examined == 4  # the 4 newest commits: committed at 20:00 and later
    assert result.counts == {"outside_dates": 1, "dependency_change": 1}
    good = _by_commit(default_scan)[shas["good"]]
    assert isinstance(good, Candidate)
    result = scan(repo, ScanOptions(until=good.authored_at))
    assert [c.commit for c in result.candidates] == [shas["old_author"], shas["good"]]
    assert result.counts["outside_dates"] == len(shas) - 5  # `until` is inclusive
    result = scan(repo, ScanOptions(until="2023-12-31"))  # a date: the whole day
    assert [r.commit for r in result.rejected if r.reason != "outside_dates"] == []
    assert [c.commit for c in result.candidates] == [shas["old_author"]]
    result = scan(repo, ScanOptions(since="2024-01-01", until="2024-01-01"))
    assert result.examined == len(shas)  # every clock tick is on 2024-01-01 UTC
    assert result.counts.get("outside_dates") == 1  # the rebased commit


def test_max_commits_caps_newest_first(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(max_commits=3))
    assert result.examined == 3 and result.capped
    assert {*(c.commit for c in result.candidates), *(r.commit for r in result.rejected)} == {
        shas["submodule"], shas["typescript"], shas["big"]}
    assert "stopped at max commits" in format_scan(result)


def test_paths(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(paths=["web/"]))
    assert [c.commit for c in result.candidates] == [shas["typescript"]]
    assert result.counts["outside_paths"] == len(shas) - 1
    result = scan(repo, ScanOptions(paths=["**/*.png", "pkg/dir with space"]))
    assert [c.commit for c in result.candidates] == [shas["binary"], shas["unicode"]]


def test_test_globs(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(test_globs=["pkg/big.py"]))
    assert _by_commit(result)[shas["big"]] == "no_source_change"


def test_format_scan(zoo: tuple[Path, dict[str, str]], default_scan: ScanResult) -> None:
    _, shas = zoo
    text = format_scan(default_scan)
    lines = text.splitlines()
    assert len(lines) == len(default_scan.candidates) + 1
    assert lines[0].startswith(shas["typescript"][:12] + " 2024-01-01   1 source   1 test  Add the web app")
    assert lines[-1] == (  # most frequent first, as mining's "Dropped:" line (ties in the scan's order of reasons)
        "9 candidates from 23 commits; rejected: no test change 4, dependency change 4, message too short 2, "
        "docs only 1, no source change 1, too many source files 1, root commit 1"
    )
    verbose = format_scan(default_scan, verbose=True).splitlines()
    assert len(verbose) == len(default_scan.candidates) + len(default_scan.rejected) + 1
    # the candidates last, above the summary that counts them (rejected rows pushed them off the screen)
    assert verbose[-len(default_scan.candidates) - 1:] == lines
    # a rejected row has the date in the date column too, then the reason
    assert f"{shas['too_many'][:12]} 2024-01-01 too many source files  Add eleven small modules at once  " \
           f"[11 source files > 10]" in verbose
    assert format_reason("no_test_change") == "no test change"
    assert format_scan(ScanResult()) == "0 candidates from 0 commits"


def test_errors(tmp_path: Path, zoo: tuple[Path, dict[str, str]]) -> None:
    with pytest.raises(ScanError, match="not a git repository"):
        scan(tmp_path, ScanOptions())
    with pytest.raises(ScanError, match="unknown revision"):
        scan(zoo[0], ScanOptions(rev="no-such-branch"))
    with pytest.raises(ValueError, match="since: not a date"):
        scan(zoo[0], ScanOptions(since="last tuesday"))
    with pytest.raises(ValueError, match="max_commits"):
        scan(zoo[0], ScanOptions(max_commits=-1))
    with pytest.raises(ScanError, match="^git log failed: fatal: unrecognized argument: --bogus$"):
        list(scan_git.stream(git.Repo(zoo[0]), ["--bogus"]))
    empty = GitRepo.init(tmp_path / "empty")
    with pytest.raises(ScanError, match="no commits"):
        scan(empty.path, ScanOptions())


def test_unparsable_manifest_counts_as_a_dependency_change(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("pkg/a.py", "A = 1\n")
    repo.write("setup.py", "from setuptools import setup\nsetup(name='x', install_requires=['a'])\n")
    repo.commit("Start with a manifest file")
    repo.write("pyproject.toml", PYPROJECT.replace('["click"]', '["click"'))
    repo.write("pkg/a.py", "A = 2\n")
    repo.write("tests/test_a.py", _test("a"))
    broken = repo.commit("Break the pyproject file badly")
    repo.write("setup.py", "from setuptools import setup\nsetup(name='y', install_requires=['a'])\n")
    repo.write("pkg/a.py", "A = 3\n")
    repo.write("tests/test_a.py", _test("a3"))
    renamed = repo.commit("Rename the distribution in setup")
    result = scan(repo.path, ScanOptions())
    assert [(r.commit, r.reason, r.detail) for r in result.rejected] == [
        (broken, "dependency_change", "pyproject.toml"),
        (result.rejected[-1].commit, "no_test_change", "no test file changed"),
    ]
    assert [c.commit for c in result.candidates] == [renamed]
    assert sorted(result.candidates[0].source_files) == ["pkg/a.py", "setup.py"]


def test_shallow_boundary_commits_are_skipped(tmp_path: Path, zoo: tuple[Path, dict[str, str]]) -> None:
    src, shas = zoo
    GitRepo(tmp_path).git("clone", "-q", "--depth", "2", f"file://{src}", "shallow")
    result = scan(tmp_path / "shallow", ScanOptions())
    assert result.examined == 1
    assert [r.commit for r in result.rejected] == [shas["submodule"]]


def test_rev_starts_the_walk_elsewhere(zoo: tuple[Path, dict[str, str]]) -> None:
    repo, shas = zoo
    result = scan(repo, ScanOptions(rev=shas["good"]))
    assert result.examined == 4
    assert [c.commit for c in result.candidates] == [shas["good"]]


# --- merges -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def prs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """main: root, PR #1 (merged), a direct commit, a docs commit, PR #2 (synced with main, merged)."""
    repo = GitRepo.init(tmp_path_factory.mktemp("prs") / "repo")
    w, c = repo.write, repo.commit
    s: dict[str, str] = {}
    w("app/core.py", "A = 0\n")
    w("tests/test_core.py", _test("root"))
    s["root"] = c("Start the application with a test")

    repo.branch("feat1")
    w("app/core.py", "A = 1\n")
    s["feat1_source"] = c("Implement the frobnicate feature")
    w("tests/test_core.py", _test("frob"))
    s["feat1_test"] = c("Test the frobnicate feature")
    repo.checkout("main")
    s["merge1"] = repo.merge("feat1", "Merge pull request #1 from user/feat1\n\nAdd the frobnicate feature")

    w("app/core.py", "A = 2\n")
    w("tests/test_core.py", _test("direct"))
    s["direct"] = c("Direct fix on the mainline code")

    repo.branch("feat2")
    w("app/two.py", "B = 2\n")
    w("tests/test_two.py", _test("two"))
    s["feat2"] = c("Add feature two with its tests")
    repo.checkout("main")
    w("docs/index.md", "# docs\n")
    s["docs"] = c("Write the first documentation page")
    repo.checkout("feat2")
    s["sync"] = repo.merge("main", "Merge branch 'main' into feat2")
    repo.checkout("main")
    s["merge2"] = repo.merge("feat2", "Merge pull request #2 from user/feat2\n\nFeature two, tested")
    return repo.path, s


def _walk(result: ScanResult) -> list[str]:
    return [c.commit for c in result.candidates] + [r.commit for r in result.rejected]


def test_default_walk_skips_merges(prs: tuple[Path, dict[str, str]]) -> None:
    repo, s = prs
    result = scan(repo, ScanOptions())
    assert sorted(_walk(result)) == sorted(s[k] for k in ("root", "feat1_source", "feat1_test", "direct",
                                                          "feat2", "docs"))
    assert [c.commit for c in result.candidates] == [s["feat2"], s["direct"]]
    assert result.counts == {"docs_only": 1, "no_test_change": 1, "no_source_change": 1, "root_commit": 1}


def test_first_parent_walks_the_mainline(prs: tuple[Path, dict[str, str]]) -> None:
    repo, s = prs
    result = scan(repo, ScanOptions(first_parent=True))
    assert sorted(_walk(result)) == sorted([s["root"], s["direct"], s["docs"]])


def test_first_parent_merges_one_candidate_per_pr(prs: tuple[Path, dict[str, str]]) -> None:
    repo, s = prs
    result = scan(repo, ScanOptions(first_parent=True, merges=True))
    assert [c.commit for c in result.candidates] == [s["merge2"], s["direct"], s["merge1"]]
    assert [r.commit for r in result.rejected] == [s["docs"], s["root"]]
    merge2, _, merge1 = result.candidates
    assert (merge1.mode, merge1.parent) == ("merge", s["root"])
    assert merge1.source_files == ["app/core.py"] and merge1.runnable_tests == ["tests/test_core.py"]
    assert merge1.subject == "Merge pull request #1 from user/feat1"
    assert (merge2.mode, merge2.parent) == ("merge", s["docs"])
    # diff against the first parent: PR #2's own files, not main's docs that the sync brought in
    assert (merge2.source_files, merge2.test_files, merge2.docs_files) == (
        ["app/two.py"], ["tests/test_two.py"], [])
    counted = scan(repo, ScanOptions(first_parent=True, merges=True, max_diff_lines=1))
    assert [(c.commit, c.diff_lines) for c in counted.candidates] == [(s["merge2"], 1)]
    assert counted.counts["diff_too_large"] == 2  # merge1 and direct change 2 lines each


def test_merges_without_first_parent(prs: tuple[Path, dict[str, str]]) -> None:
    repo, s = prs
    result = scan(repo, ScanOptions(merges=True))
    assert [c.commit for c in result.candidates] == [s["merge2"], s["feat2"], s["direct"], s["merge1"]]
    assert s["sync"] not in _walk(result)  # merges off the mainline are never candidates
    assert result.examined == 8


def test_one_streaming_git_log_per_walk(prs: tuple[Path, dict[str, str]],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    execute: Any = git.cmd.Git.execute

    def spy(self: git.cmd.Git, command: list[str], *args: Any, **kwargs: Any) -> Any:
        calls.append(list(command))
        return execute(self, command, *args, **kwargs)

    monkeypatch.setattr(git.cmd.Git, "execute", spy)
    repo, _ = prs
    # merge candidates add one log for all their branches' commits (merge_prompt.branch_messages); where a
    # mode has two candidates, one more reads their patches for their patch ids (filter 12, duplicate_change)
    for options, n in [(ScanOptions(), 1), (ScanOptions(first_parent=True, merges=True), 2),
                       (ScanOptions(merges=True), 3), (ScanOptions(merges=True, max_diff_lines=5), 4)]:
        calls.clear()
        result = scan(repo, options)
        modes = [c.mode for c in result.candidates]
        patches = int(any(modes.count(m) > 1 for m in modes))
        assert sum(1 for cmd in calls if "log" in cmd) == n + patches, options
        assert sum(1 for cmd in calls if "log" in cmd and "-p" in cmd) == patches, options


def test_env_uv_keeps_python_dependency_changes(zoo: tuple[Path, dict[str, str]]) -> None:
    """With ``env: uv`` each commit is tested in its own environment: a change to a top-level Python
    declaration is a candidate listing it in ``dependency_files``; a submodule still drops it."""
    repo, shas = zoo
    got = _by_commit(scan(repo, ScanOptions(env="uv")))
    for name in ("requirements", "pyproject_added", "pyproject_inside"):
        assert isinstance(got[shas[name]], Candidate), name
    assert got[shas["requirements"]].dependency_files == ["requirements.txt"]  # type: ignore[union-attr]
    assert got[shas["pyproject_inside"]].dependency_files == ["pyproject.toml"]  # type: ignore[union-attr]
    assert got[shas["pyproject_outside"]].dependency_files == []  # type: ignore[union-attr]
    assert got[shas["submodule"]] == "dependency_change"


def test_a_subjects_escape_sequences_are_listed_as_escapes(tmp_path: Path) -> None:
    """host29: ``homefield mine --list-candidates`` printed a commit subject's ESC sequences raw."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pkg/core.py", "def core():\n    return 1\n")
    repo.write("tests/test_core.py", _test("core"))
    repo.commit("Initial import")
    repo.write("pkg/core.py", "def core():\n    return 2\n")
    repo.write("tests/test_core.py", _test("core2"))
    repo.commit("Fix core\x1b[2J\x1b[H: 41 candidates\u202e")
    text = format_scan(scan(repo.path, ScanOptions()), verbose=True)
    assert "Fix core\\x1b[2J\\x1b[H: 41 candidates\\u202e" in text
    assert "\x1b" not in text and "\u202e" not in text
