"""Variants of a rules file and how an attempt sees one (issue 14; docs/contracts.md §4, §8).

A variant is the rules file with some rules removed: ``base`` (nothing removed, the file exactly),
``rule-N`` (rule N removed) and, once the per-rule results are in, ``slim`` (every rule that is not
load-bearing for any agent removed). The variant's text replaces the rules file in the attempt's
snapshot, at the path the agent reads (:func:`rules_path_for`) and at the ablated file's own path;
the user's file is never written.
:class:`RulesFileAgent` does that around any agent and puts the snapshot's own file back afterwards
when the agent left it as given, so neither the diff nor grading sees the variant.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_homefield.ablate.rules import RuleSet
from pytest_homefield.agents.base import Agent, AgentContext, AgentResult
from pytest_homefield.agents.recipes import RECIPE_SANDBOX
from pytest_homefield.agents.registry import KINDS, parse_spec
from pytest_homefield.capabilities import Capabilities, capabilities_of
from pytest_homefield.errors import AgentSpecError
from pytest_homefield.settings import Settings

__all__ = ["Variant", "BASE", "SLIM", "rule_variants", "slim_variant", "rules_path_for", "agent_rows",
           "RulesFileAgent"]

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
        raise ValueError("no agent given: add --agent SPEC (e.g. claude:claude-sonnet-4-5)")
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
    otherwise a removed rule could still be read from the snapshot's copy of that file).

    Afterwards, each file that still holds exactly ``text`` gets the snapshot's own version back (or
    is removed, with the folders made for it, when the snapshot had none), so the change graded is
    the agent's alone. A file the agent edited is left as the agent left it. Attribute reads fall
    through to ``inner``. Raises ``ValueError`` for a path that is absolute or leaves the workspace."""

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
        placed = [self._place(Path(ctx.workspace, *rel.parts), rel, data) for rel in self.paths]
        try:
            return self.inner.run(ctx)
        finally:
            for target, before, mode, made in placed:
                _restore(target, data, before, mode, made)

    @staticmethod
    def _place(target: Path, rel: PurePosixPath, data: bytes) -> tuple[Path, bytes | None, int | None, list[Path]]:
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise RuntimeError(f"the snapshot's {rel} is not a regular file: cannot replace it")
        before = target.read_bytes() if target.exists() else None
        mode = target.stat().st_mode if before is not None else None
        made: list[Path] = []
        parent = target.parent
        while not parent.exists():
            made.append(parent)
            parent = parent.parent
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return target, before, mode, made


def _restore(target: Path, data: bytes, before: bytes | None, mode: int | None, made: list[Path]) -> None:
    try:
        if not (target.is_file() and not target.is_symlink() and target.read_bytes() == data):
            return  # the agent changed it: its change stands
        if before is None:
            target.unlink()
            for d in made:  # folders created for the file, innermost first
                try:
                    d.rmdir()
                except OSError:
                    break
        else:
            target.write_bytes(before)
            if mode is not None:
                os.chmod(target, mode & 0o7777)
    except OSError:
        pass
