"""Variants, which file each agent reads, and the agent wrapper that shows it the variant."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_homefield.ablate.rules import split_rules
from pytest_homefield.ablate.variants import RulesFileAgent, rule_variants, rules_path_for, slim_variant
from pytest_homefield.agents.base import AgentContext, AgentResult
from pytest_homefield.agents.recipes import recipe_agents

TEXT = "# R\n\n- one\n- two\n- three\n"


def test_base_and_one_variant_per_rule() -> None:
    rs = split_rules(TEXT)
    vs = rule_variants(rs)
    assert [v.name for v in vs] == ["base", "rule-1", "rule-2", "rule-3"]
    assert vs[0].text == TEXT and vs[2].text == "# R\n\n- one\n- three\n" and vs[2].removed == (2,)
    assert len({v.digest for v in vs}) == 4


def test_slim_variant_removes_every_rule_not_kept() -> None:
    rs = split_rules(TEXT)
    slim = slim_variant(rs, keep={2})
    assert slim is not None and slim.removed == (1, 3) and slim.text == "# R\n\n- two\n"
    assert slim_variant(rs, keep={1, 2, 3}) is None


@pytest.mark.parametrize(("spec", "path"), [
    ("claude", "CLAUDE.md"), ("claude:claude-sonnet-4-5", "CLAUDE.md"), ("fast=claude:claude-haiku-4-5", "CLAUDE.md"),
    ("codex", "AGENTS.md"), ("gemini", "GEMINI.md"), ("mine", "CLAUDE.md"),
    ("cmd:my-agent --go", "docs/RULES.md"), ("oracle", "docs/RULES.md"), ("sim:0.5", "docs/RULES.md"),
    ("aider", "docs/RULES.md"),
])
def test_the_rules_file_follows_the_agent(spec: str, path: str) -> None:
    named = {**recipe_agents(), "mine": {"spec": "claude:claude-opus-4-1"}}
    assert rules_path_for(spec, "docs/RULES.md", named) == path


class Recorder:
    """An agent that records what it saw at ``rel`` and optionally writes ``edit`` there."""

    name, spec, simulated, hinted = "rec", "rec", False, False

    def __init__(self, rel: str, edit: str | None = None) -> None:
        self.rel, self.edit, self.seen = rel, edit, None

    def version(self) -> str | None:
        return "1"

    def run(self, ctx: AgentContext) -> AgentResult:
        p = ctx.workspace / self.rel
        self.seen = p.read_text()
        if self.edit is not None:
            p.write_text(self.edit)
        return AgentResult()


def _ctx(ws: Path) -> AgentContext:
    return AgentContext(workspace=ws, prompt="p", env={}, timeout_s=5, artifacts=ws.parent / "art")


def test_the_agent_sees_the_variant_and_the_snapshot_gets_its_own_file_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "CLAUDE.md").write_text("historical rules\n")
    os.chmod(ws / "CLAUDE.md", 0o640)
    inner = Recorder("CLAUDE.md")
    agent = RulesFileAgent(inner, "CLAUDE.md", "variant text\n")
    agent.run(_ctx(ws))
    assert inner.seen == "variant text\n"
    assert (ws / "CLAUDE.md").read_text() == "historical rules\n"
    assert (ws / "CLAUDE.md").stat().st_mode & 0o777 == 0o640
    assert agent.name == "rec" and agent.simulated is False and agent.version() == "1"


def test_a_file_the_snapshot_lacked_is_removed_with_its_new_folders(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    inner = Recorder("docs/deep/RULES.md")
    RulesFileAgent(inner, "docs/deep/RULES.md", "v\n").run(_ctx(ws))
    assert inner.seen == "v\n" and not (ws / "docs").exists()


def test_a_file_the_agent_edited_stays_as_the_agent_left_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    RulesFileAgent(Recorder("AGENTS.md", edit="agent's edit\n"), "AGENTS.md", "v\n").run(_ctx(ws))
    assert (ws / "AGENTS.md").read_text() == "agent's edit\n"


def test_the_ablated_file_is_replaced_too_when_the_agent_reads_another(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("- removed rule\n- kept rule\n")
    inner = Recorder("AGENTS.md")
    RulesFileAgent(inner, "CLAUDE.md", "- kept rule\n", also=["AGENTS.md"]).run(_ctx(ws))
    assert inner.seen == "- kept rule\n"  # the removed rule cannot be read from the snapshot's copy
    assert (ws / "AGENTS.md").read_text() == "- removed rule\n- kept rule\n" and not (ws / "CLAUDE.md").exists()


def test_paths_outside_the_workspace_are_refused() -> None:
    with pytest.raises(ValueError, match="inside it"):
        RulesFileAgent(Recorder("x"), "../CLAUDE.md", "v")


class LinkSwapper:
    """An agent that replaces the workspace folder ``folder`` with a symlink to ``target`` (a folder of
    the user's repository, whose path an agent can learn or guess), as the attack of issue 30 did."""

    name, spec, simulated, hinted = "swap", "swap", False, False

    def __init__(self, folder: str, target: Path) -> None:
        self.folder, self.target = folder, target

    def version(self) -> str | None:
        return "1"

    def run(self, ctx: AgentContext) -> AgentResult:
        victim = ctx.workspace / self.folder
        for p in sorted(victim.rglob("*"), reverse=True):
            p.unlink() if not p.is_dir() else p.rmdir()
        victim.rmdir()
        victim.symlink_to(self.target)
        return AgentResult()


def test_the_restore_never_follows_a_folder_the_agent_swapped_for_a_link(tmp_path: Path) -> None:
    """Issue 30: the user's untracked rules file (the snapshot had none) and a committed file with
    uncommitted edits, each holding exactly the variant's text, survive a folder of the workspace
    replaced by a symlink to the user's folder; the workspace keeps the agent's link."""
    user = tmp_path / "user" / "docs"
    user.mkdir(parents=True)
    (user / "RULES.md").write_text("- one\n- two\n")  # untracked: the snapshot has no docs/RULES.md
    (user / "AGENTS.md").write_text("- edited, not committed\n")  # committed text: "- committed\n"
    for rel, text in (("docs/RULES.md", "- one\n- two\n"), ("docs/AGENTS.md", "- edited, not committed\n")):
        ws = tmp_path / rel.replace("/", "-")
        (ws / "docs").mkdir(parents=True)
        (ws / "docs" / "AGENTS.md").write_text("- committed\n")
        RulesFileAgent(LinkSwapper("docs", user), rel, text).run(_ctx(ws))
        assert os.readlink(ws / "docs") == str(user)
    assert (user / "RULES.md").read_text() == "- one\n- two\n"
    assert (user / "AGENTS.md").read_text() == "- edited, not committed\n"
    assert sorted(p.name for p in user.iterdir()) == ["AGENTS.md", "RULES.md"]


def test_a_snapshot_rules_file_under_a_symlink_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (ws / "docs").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RuntimeError, match="under a symlink"):
        RulesFileAgent(Recorder("docs/RULES.md"), "docs/RULES.md", "v\n").run(_ctx(ws))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_user_files_say_what_the_comparison_found(tmp_path: Path) -> None:
    import hashlib

    from pytest_homefield.ablate.variants import UserFiles

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "RULES.md").write_text("- one\n")
    files = UserFiles.take(tmp_path, ["docs/RULES.md", "CLAUDE.md", "docs/RULES.md"])
    sha = hashlib.sha256(b"- one\n").hexdigest()[:16]
    assert files.check() == ([f"docs/RULES.md: unchanged (sha256 {sha})", "CLAUDE.md: unchanged (absent)"], [])
    (tmp_path / "docs" / "RULES.md").unlink()
    (tmp_path / "CLAUDE.md").write_text("x\n")
    new = hashlib.sha256(b"x\n").hexdigest()[:16]
    assert files.check()[1] == [f"docs/RULES.md: sha256 {sha} before, absent after",
                                f"CLAUDE.md: absent before, sha256 {new} after"]


#: Run by :func:`test_a_rules_file_under_a_folder_the_agent_made_unreadable_gets_its_snapshot_back` as uid 1000.
LOCKED_CHILD = r'''
import os, sys
from pathlib import Path
from pytest_homefield.ablate.variants import RulesFileAgent
from pytest_homefield.agents.base import AgentContext, AgentResult

class Locker:
    name, spec, simulated, hinted = "lock", "lock", False, False
    def version(self): return "1"
    def run(self, ctx):
        os.chmod(ctx.workspace / "docs", 0)
        return AgentResult()

ws = Path(sys.argv[1])
RulesFileAgent(Locker(), "docs/RULES.md", "variant\n").run(
    AgentContext(workspace=ws, prompt="p", env={}, timeout_s=5, artifacts=ws.parent / "art"))
print((ws / "docs" / "RULES.md").read_text(), end="")
'''


def test_a_rules_file_under_a_folder_the_agent_made_unreadable_gets_its_snapshot_back(tmp_path: Path) -> None:
    """atk19, as any user but root (uid 1000 of a user namespace, where the permission bits bind): the agent
    made the rules file's folder unreadable (``chmod 000 docs``); putting the snapshot's file back failed
    quietly and the variant stayed in the agent's change. The owner's access is given back first."""
    import subprocess
    import sys

    from helpers.userns import as_user_1000

    as_user = as_user_1000()
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "RULES.md").write_text("historical rules\n")
    proc = subprocess.run([*as_user, sys.executable, "-c", LOCKED_CHILD, str(ws)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout == "historical rules\n", proc.stdout + proc.stderr[-2000:]


class GitReader:
    """An agent that asks the workspace's git what the rules file was, as an agent does with ``git status``,
    ``git diff`` and ``git show`` (Claude Code puts ``git status`` in its own context when it starts), and
    reads every object git holds (``git cat-file --batch-all-objects``), as an attacker's agent would."""

    name, spec, simulated, hinted = "git", "git", False, False

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def version(self) -> str | None:
        return "1"

    def run(self, ctx: AgentContext) -> AgentResult:
        import subprocess

        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
        for key, argv in (("status", ["status", "--porcelain"]), ("diff", ["diff", "HEAD"]),
                          ("head", ["show", "HEAD:CLAUDE.md"]),
                          ("objects", ["cat-file", "--batch-all-objects", "--batch"])):
            self.seen[key] = subprocess.run(["git", *argv], cwd=ctx.workspace, env=env, capture_output=True,
                                            check=False).stdout.decode("utf-8", "replace")
        return AgentResult()


def test_the_workspace_git_shows_the_variant_and_holds_no_removed_rule(tmp_path: Path) -> None:
    """aatk49: the snapshot is a one-commit git repository whose commit holds the rules file as the task's
    commit has it; the variant was written over it, so in a ``rule-2`` attempt ``git status`` showed
    ``M CLAUDE.md``, ``git diff`` the removed rule as a ``-`` line and ``git show HEAD:CLAUDE.md`` the whole
    file: the removed rule was one ``git diff`` away. Now the snapshot's commit holds the variant and its
    repository no object of the file it replaced; the snapshot's own file is still what is put back."""
    from helpers.gitrepo import GitRepo

    from pytest_homefield.sandbox.snapshot import make_snapshot

    repo = GitRepo.init(tmp_path / "r")
    repo.write("CLAUDE.md", "# R\n\n- keep tabs\n- SECRET-RULE-two\n- three\n")
    repo.write("docs/AGENTS.md", "- SECRET-RULE-two too\n")
    repo.write("pkg/mod.py", "x = 1\n")
    sha = repo.commit("c")
    ws = make_snapshot(repo.path, sha, dest=tmp_path / "ws", init_git=True)
    inner = GitReader()
    RulesFileAgent(inner, "CLAUDE.md", "# R\n\n- keep tabs\n- three\n", also=["docs/AGENTS.md"]).run(_ctx(ws))
    assert inner.seen["status"] == "", inner.seen["status"]
    assert inner.seen["diff"] == "", inner.seen["diff"]
    assert inner.seen["head"] == "# R\n\n- keep tabs\n- three\n"
    assert "keep tabs" in inner.seen["objects"] and "SECRET-RULE" not in inner.seen["objects"]
    assert (ws / "CLAUDE.md").read_text() == "# R\n\n- keep tabs\n- SECRET-RULE-two\n- three\n"
    assert (ws / "docs" / "AGENTS.md").read_text() == "- SECRET-RULE-two too\n"
