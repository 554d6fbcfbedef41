"""The user's files survive an agent that swaps a workspace folder for a link to them (issue 30: data loss
in the user's repository), and "your file was not changed" is what a comparison of hashes found.

The attack, through the real ablation path (``homefield ablate``, a ``cmd:`` agent in the default
sandbox): the agent replaces the folder ``docs/`` of its workspace with a symlink to the user's own
``docs/`` (a path it can learn, e.g. the repository it was mined from). Before the fix the restore of
the rules file followed the link: it deleted the user's untracked rules file and reverted a committed
one's uncommitted edit, and the report still said the file "was not changed"."""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.ablate_repo import write_tasks
from helpers.e2e_repo import git, homefield

from pytest_homefield.sandbox.bwrap import BwrapUnavailable, probe

pytestmark = pytest.mark.slow

COMMITTED = "- A committed rule.\n"
EDITED = "- A rule edited, not committed yet.\n"
UNTRACKED = "- A rule in a file git does not know.\n"


def _repo(dest: Path) -> Path:
    """One task ("Add f1() returning 1 times two") whose parent has ``docs/RULES.md`` committed; the
    user then edits that file (uncommitted) and adds an untracked ``docs/NEW.md``."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    (dest / "calc").mkdir()
    (dest / "calc" / "__init__.py").write_text("")
    (dest / "docs").mkdir()
    (dest / "docs" / "RULES.md").write_text(COMMITTED)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "Start the calc package docs", date="2026-01-01T12:00:00+00:00")
    (dest / "calc" / "f1.py").write_text("def f1():\n    return 2\n")
    (dest / "tests").mkdir()
    (dest / "tests" / "test_f1.py").write_text("from calc.f1 import f1\n\n\ndef test_f1():\n    assert f1() == 2\n")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "Add f1() returning 1 times two", date="2026-01-02T12:00:00+00:00")
    write_tasks(dest)
    (dest / ".homefield.yml").write_text(f'test_cmd: "{sys.executable} -m pytest --disable-plugin-autoload"\n')
    (dest / "docs" / "RULES.md").write_text(EDITED)
    (dest / "docs" / "NEW.md").write_text(UNTRACKED)
    return dest


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_a_folder_swapped_for_a_link_to_the_users_folder_changes_none_of_the_users_files(tmp_path: Path) -> None:
    try:
        probe()  # the attack runs in the default sandbox, as an agent's would
    except BwrapUnavailable as exc:
        pytest.skip(str(exc))
    repo = _repo(tmp_path / "repo")
    user_docs = shlex.quote(str(repo / "docs"))
    attack = "cmd:sh -c " + shlex.quote(f"rm -rf docs && ln -s {user_docs} docs")
    for rules, text, run_id in (("docs/RULES.md", EDITED, "committed"), ("docs/NEW.md", UNTRACKED, "untracked")):
        proc = homefield(repo, "ablate", rules, "--sandbox", "bwrap", "--agent", attack, "--attempts", "1", "--yes",
                         "--run-id", run_id, "-n", "0")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        assert f"your {Path(rules).name} was not changed: {rules}: unchanged (sha256 {_sha(text)})" in proc.stdout
        patches = list((repo / ".homefield" / "ablate" / run_id / "variants").glob("*/attempts/*/*/1/diff.patch"))
        assert len(patches) == 2 and all("diff --git a/docs b/docs\nnew file mode 120000" in p.read_text()
                                         for p in patches)  # the attack happened: the agent's link, kept
    assert (repo / "docs" / "RULES.md").read_text() == EDITED  # the uncommitted edit is kept
    assert (repo / "docs" / "NEW.md").read_text() == UNTRACKED  # the untracked file is still there
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert sorted(status.splitlines()) == [" M docs/RULES.md", "?? .homefield.yml", "?? docs/NEW.md"]


def test_a_user_file_changed_during_the_session_is_reported_as_changed(tmp_path: Path) -> None:
    """The comparison, not a promise: an agent outside the sandbox (``--sandbox none``, the user's choice)
    that appends to the user's rules file makes the session say CHANGED, with both hashes, and exit 3."""
    repo = _repo(tmp_path / "repo")
    target = repo / "docs" / "NEW.md"
    writer = "cmd:sh -c " + shlex.quote(f"echo more >> {shlex.quote(str(target))}")
    proc = homefield(repo, "ablate", "docs/NEW.md", "--sandbox", "none", "--agent", writer, "--attempts", "1",
                     "--yes", "--run-id", "w", "-n", "0")
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-2000:]
    after = target.read_text()
    assert after == UNTRACKED + "more\nmore\n"  # base and rule-1: one attempt each
    assert (f"CHANGED: docs/NEW.md: sha256 {_sha(UNTRACKED)} before, sha256 {_sha(after)} after"
            in proc.stdout)
    assert "was not changed" not in proc.stdout


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_variant_s_attempt_cannot_read_the_removed_rule_from_the_snapshot_s_git(mode: str, tmp_path: Path) -> None:
    """aatk49, through ``homefield ablate`` with a ``cmd:`` agent in the default sandbox: the snapshot is a
    one-commit git repository whose commit held the rules file as the task's parent has it, and the variant
    was written over it, so the ``rule-1`` attempt's ``git diff`` showed the removed rule (``-- A committed
    rule.``) and ``git status`` ``M docs/RULES.md``. The agent writes what git tells it into its change
    (``seen.txt``, in its ``diff.patch``): now git shows the variant as the commit and holds no other text of
    the file. The same with ``--sandbox none``: the workspace's git is the snapshot's there too."""
    if mode == "bwrap":
        try:
            probe()
        except BwrapUnavailable as exc:
            pytest.skip(str(exc))
    repo = _repo(tmp_path / "repo")
    (repo / "docs" / "RULES.md").write_text(COMMITTED + "\n- A second rule, kept.\n")
    asks = ("git status --porcelain > seen.txt; git diff HEAD >> seen.txt; "
            "git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' | "
            "while read t o; do [ $t = blob ] && git cat-file -p $o >> seen.txt; done; true")
    proc = homefield(repo, "ablate", "docs/RULES.md", "--sandbox", mode, "--agent", "cmd:sh -c " + shlex.quote(asks),
                     "--attempts", "1", "--yes", "--run-id", "git", "-n", "0")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    variants = repo / ".homefield" / "ablate" / "git" / "variants"
    seen = {p.parts[-6]: p.read_text() for p in variants.glob("*/attempts/*/*/1/diff.patch")}
    assert {"base", "rule-1", "rule-2"} <= set(seen), seen
    assert "A second rule, kept." in seen["rule-1"]  # the agent read git's objects: the variant it was shown
    assert "A committed rule." not in seen["rule-1"] and "docs/RULES.md" not in seen["rule-1"], seen["rule-1"]
    assert "A second rule, kept." not in seen["rule-2"], seen["rule-2"]
