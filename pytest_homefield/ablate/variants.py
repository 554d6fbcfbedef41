"""Variants of a rules file and how an attempt sees one (issue 14; docs/contracts.md §4, §8).

A variant is the rules file with some rules removed: ``base`` (nothing removed, the file exactly),
``rule-N`` (rule N removed) and, once the per-rule results are in, ``slim`` (every rule that is not
load-bearing for any agent removed). The variant's text replaces the rules file in the attempt's
snapshot, at the path the agent reads (:func:`rules_path_for`) and at the ablated file's own path;
the user's file is never written. The snapshot's git commit then holds the variant too, and its repository
no object of the file replaced (:func:`~pytest_homefield.sandbox.snapshot.commit_files`): ``git diff`` showed
the removed rule and ``git show HEAD:CLAUDE.md`` the whole file (aatk49).
:class:`RulesFileAgent` does that around any agent and puts the snapshot's own file back afterwards
when the agent left it as given, so neither the diff nor grading sees the variant. Both steps go
through :mod:`pytest_homefield.sandbox.nofollow`: a folder of the workspace the agent replaced by a
symlink (to the user's repository, say) is never followed (issue 30). :class:`UserFiles` hashes the
user's files at those paths before and after a session: "was not changed" is what it found.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.agents.base import Agent, AgentContext, AgentResult
from pytest_homefield.agents.recipes import RECIPE_SANDBOX
from pytest_homefield.agents.registry import KINDS, parse_spec
from pytest_homefield.capabilities import Capabilities, capabilities_of
from pytest_homefield.errors import AgentSpecError, SnapshotError
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.snapshot import commit_files
from pytest_homefield.settings import Settings
from pytest_homefield.settings_table import option

__all__ = ["Variant", "BASE", "SLIM", "rule_variants", "slim_variant", "rules_path_for", "agent_rows",
           "RulesFileAgent", "UserFiles", "file_digest"]

BASE = "base"
SLIM = "slim"

@dataclass(frozen=True)
class Variant:
    """``name`` (``base``, ``rule-3``, ``slim``), the rule numbers it ``removed`` (sorted) and its ``text``."""

    name: str
    removed: tuple[int, ...]
    text: str

    @property
    def digest(self) -> str:
        """SHA-256 of the text (hex, first 16 digits)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "removed": list(self.removed), "digest": self.digest}


def rule_variants(rules: RuleSet) -> list[Variant]:
    """``base`` then ``rule-N`` for every rule, in rule order."""
    out = [Variant(BASE, (), rules.render())]
    out += [Variant(f"rule-{r.number}", (r.number,), rules.render([r.number])) for r in rules.rules]
    return out


def slim_variant(rules: RuleSet, keep: Iterable[int]) -> Variant | None:
    """The file with every rule not in ``keep`` removed, or ``None`` when that removes nothing."""
    keep_set = set(keep)
    removed = tuple(n for n in rules.numbers() if n not in keep_set)
    if not removed:
        return None
    return Variant(SLIM, removed, rules.render(removed))


def rules_path_for(spec_text: str, user_path: str, named: Mapping[str, Mapping[str, Any]],
                   registered: Sequence[str] = ()) -> str:
    """Where in the snapshot the agent given by ``--agent spec_text`` reads its rules: the ``rules_file``
    of a recipe's client when it names one (``AGENTS.md`` for codex, ``GEMINI.md`` for gemini), else of
    its kind's capabilities (``CLAUDE.md`` for ``claude[:MODEL]`` and named agents whose spec is one),
    else ``user_path`` (the rules file relative to the repository root, POSIX). Raises
    :class:`pytest_homefield.agents.registry.AgentSpecError` for a bad spec."""
    p = parse_spec(spec_text, named=named, registered=list(registered))
    kind = p.kind
    if p.kind == "named" and p.arg:
        client = RECIPE_SANDBOX.get(p.arg)
        if client is not None and client.rules_file:
            return client.rules_file
        kind = parse_spec(str(named[p.arg]["spec"]), named={}, registered=list(registered)).kind
    row = KINDS.get(kind)
    return (row.capabilities.rules_file if row else None) or user_path


def agent_rows(settings: Settings, rel: str, agents: Sequence[tuple[str, str]] | None = None,
               registered: Sequence[str] = ()) -> list[tuple[str, str, str]]:
    """``(name, spec, rules path in the snapshot)`` per ``--agent``. ``agents``: built ``(name, spec)``
    pairs in ``--agent`` order, when known; else names and specs come from parsing the specs. Raises
    ``ValueError`` when no agent is given or a spec is bad."""
    if not settings.agents:
        raise ValueError(f"no agent given: add {option('agent')} SPEC (e.g. claude:claude-sonnet-4-5)")
    rows = []
    for i, text in enumerate(settings.agents):
        try:
            p = parse_spec(text, named=settings.agent_defs, registered=list(registered))
            path = rules_path_for(text, rel, settings.agent_defs, registered)
        except AgentSpecError as exc:
            raise ValueError(str(exc)) from None
        spec = str(settings.agent_defs[p.arg]["spec"]) if p.kind == "named" and p.arg else p.spec
        name = agents[i][0] if agents else p.name
        rows.append((name, agents[i][1] if agents else spec, path))
    names = [r[0] for r in rows]
    if len(set(names)) != len(names):
        raise ValueError("two agents share a name: rename one with NAME=SPEC")
    return rows


def _safe_relpath(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ValueError(f"rules file path {rel!r} must be relative to the repository and inside it")
    return p


class RulesFileAgent:
    """``inner`` with the variant's ``text`` written, before it runs, to ``relpath`` in the workspace
    (the file the agent reads) and to each of ``also`` (the ablated file's own path when it differs:
    otherwise a removed rule could still be read from the snapshot's copy of that file), and committed in
    the workspace's git repository when it has one (:func:`~pytest_homefield.sandbox.snapshot.commit_files`:
    git shows the variant as the commit, and holds no object of the file it replaced).

    Afterwards, each file that still holds exactly ``text`` gets the snapshot's own version back (or
    is removed, with the folders made for it, when the snapshot had none), so the change graded is
    the agent's alone. A file the agent edited, or moved behind a symlink, is left as the agent left
    it; nothing is read, written or deleted through a link. Attribute reads fall through to ``inner``.
    Raises ``ValueError`` for a path that is absolute or leaves the workspace; :meth:`run` raises
    ``RuntimeError`` when the snapshot's file is not a regular file or lies under a symlink, or git could not
    commit the variant (the snapshot's files are put back first)."""

    def __init__(self, inner: Agent, relpath: str, text: str, also: Sequence[str] = ()) -> None:
        self.inner = inner
        self.relpath = _safe_relpath(relpath)
        self.paths = list(dict.fromkeys([self.relpath, *(_safe_relpath(p) for p in also)]))
        self.text = text

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def capabilities(self) -> Capabilities:
        """The inner agent's."""
        return capabilities_of(self.inner)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def spec(self) -> str:
        return self.inner.spec

    def version(self) -> str | None:
        return self.inner.version()

    def run(self, ctx: AgentContext) -> AgentResult:
        data = self.text.encode("utf-8")
        placed = [self._place(Path(ctx.workspace), rel, data) for rel in self.paths]
        git_dir = nofollow.lstat(Path(ctx.workspace), ".git")
        if git_dir is not None and stat.S_ISDIR(git_dir.st_mode):  # the snapshot's repository (none: files only)
            try:
                commit_files(Path(ctx.workspace), [str(rel) for rel in self.paths])
            except SnapshotError as exc:
                for rel, before, mode, made in placed:
                    _restore(Path(ctx.workspace), rel, data, before, mode, made)
                raise RuntimeError(f"the variant could not be committed in the snapshot: {exc}") from None
        try:
            return self.inner.run(ctx)
        finally:
            # the folders the agent made unreadable are given back first (as any user but root, a rules file
            # under a chmod 000 folder could not be put back: the variant stayed in the agent's change)
            with contextlib.suppress(OSError):
                nofollow.restore_access(Path(ctx.workspace))
            for rel, before, mode, made in placed:
                _restore(Path(ctx.workspace), rel, data, before, mode, made)

    @staticmethod
    def _place(workspace: Path, rel: PurePosixPath, data: bytes) -> tuple[PurePosixPath, bytes | None, int, list[str]]:
        """Write ``data`` at ``rel`` in ``workspace`` (:mod:`pytest_homefield.sandbox.nofollow`: no symlink
        followed); returns what :func:`_restore` needs: the path, the snapshot's bytes (``None``: it had
        none), their mode, and the folders made (outermost first)."""
        st = nofollow.lstat(workspace, rel)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise RuntimeError(f"the snapshot's {rel} is not a regular file: cannot replace it")
        try:
            before = nofollow.read_bytes(workspace, rel) if st is not None else None
            mode = st.st_mode if st is not None else 0o644
            made = nofollow.write_bytes(workspace, rel, data, mode=mode, make_parents=True)
        except nofollow.LinkInTheWay as exc:
            raise RuntimeError(f"the snapshot's {rel} lies under a symlink ({exc.strerror}): "
                               "cannot replace it") from None
        return rel, before, mode, made


def _restore(workspace: Path, rel: PurePosixPath, data: bytes, before: bytes | None, mode: int,
             made: list[str]) -> None:
    """Put the snapshot's own ``rel`` back when the workspace's still holds exactly the variant's
    ``data`` (removed, with the folders ``made`` for it, when the snapshot had none). Every step goes
    through :mod:`pytest_homefield.sandbox.nofollow`: a folder the agent replaced by a symlink (to
    the user's repository, say) is never followed, so nothing outside the workspace is read, written
    or deleted; the agent's change then stands as it left it."""
    try:
        st = nofollow.lstat(workspace, rel)
        if st is None or not stat.S_ISREG(st.st_mode) or nofollow.read_bytes(workspace, rel) != data:
            return  # the agent changed it (or moved it behind a link): its change stands
        if before is None:
            nofollow.remove(workspace, rel)
            for d in reversed(made):  # folders created for the file, innermost first
                if not nofollow.rmdir(workspace, d):
                    break
        else:
            nofollow.write_bytes(workspace, rel, before, mode=mode)
    except OSError:
        pass


def file_digest(path: Path) -> str | None:
    """SHA-256 (hex) of the file at ``path`` (read in 1 MiB chunks), ``None`` when there is none;
    ``"<folder>"`` / ``"<other>"`` for an entry that is not a file."""
    try:
        if path.is_dir():
            return "<folder>"
        if not path.is_file():
            return None if not os.path.lexists(path) else "<other>"
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError as exc:
        return f"<unreadable: {exc.strerror}>"


def _shown(digest: str | None) -> str:
    if digest is None:
        return "absent"
    return digest if digest.startswith("<") else f"sha256 {digest[:16]}"


@dataclass
class UserFiles:
    """The user's files an ablation could touch (the rules file and each path an agent reads its rules
    from, relative to the repository ``root``), hashed when the session starts (:meth:`take`) and
    compared when it ends (:meth:`check`): "was not changed" is what the comparison found."""

    root: Path
    before: dict[str, str | None]

    @classmethod
    def take(cls, root: Path, rels: Iterable[str]) -> UserFiles:
        """Hash each of ``rels`` (duplicates once, in order) under ``root`` now."""
        return cls(Path(root), {rel: file_digest(Path(root, rel)) for rel in dict.fromkeys(rels)})

    def check(self) -> tuple[list[str], list[str]]:
        """``(unchanged, changed)``: one phrase per file, in order, each saying what was found, e.g.
        ``"CLAUDE.md: unchanged (sha256 0123456789abcdef)"`` or ``"CLAUDE.md: sha256 … before, absent
        after"``."""
        same: list[str] = []
        changed: list[str] = []
        for rel, old in self.before.items():
            new = file_digest(self.root / rel)
            if new == old:
                same.append(f"{rel}: unchanged ({_shown(old)})")
            else:
                changed.append(f"{rel}: {_shown(old)} before, {_shown(new)} after")
        return same, changed
