"""Task and result records (docs/contracts.md §6 and §8) and the outcome vocabulary.

Records are plain dicts on disk (one JSON object per line); these dataclasses give them names and
types in code. ``Task.from_dict`` / ``Result.from_dict`` ignore unknown keys so newer files load.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.store import read_jsonl

__all__ = [
    "SCHEMA_VERSION",
    "OUTCOMES",
    "SCORED_OUTCOMES",
    "UNSCORED_OUTCOMES",
    "Task",
    "Result",
    "load_tasks",
    "tasks_digest",
]

SCHEMA_VERSION = 1

#: Scored outcomes of an attempt (docs/contracts.md §8), in report order.
SCORED_OUTCOMES = (
    "solved",
    "tests_failed",
    "regression",
    "empty_patch",
    "timeout",
    "test_timeout",
    "agent_error",
    "budget_exceeded",
)
#: Outcomes that are not scored: retried on resume, reported apart.
UNSCORED_OUTCOMES = ("infra", "rate_limited")
OUTCOMES = SCORED_OUTCOMES + UNSCORED_OUTCOMES


@dataclass
class Task:
    """One mined task (docs/contracts.md §6). ``id`` is ``commit[:12]`` and is never shown to an agent."""

    id: str
    commit: str
    parent: str
    committed_at: str
    authored_at: str
    mode: str
    subject: str
    message: str
    prompt: str
    source_files: list[str]
    test_files: list[str]
    test_patch: str
    gold_patch: str
    FAIL_TO_PASS: list[str]
    PASS_TO_PASS: list[str]
    excluded: dict[str, str] = field(default_factory=dict)
    test_cmd: str = "python -m pytest"
    setup_cmd: str | None = None
    env_fingerprint: str = ""
    spec_score: float = 0.0
    well_specified: bool = False
    languages: list[str] = field(default_factory=list)
    diff_lines: int = 0
    verify: dict[str, Any] = field(default_factory=dict)
    prompt_sources: dict[str, Any] | None = None
    red_by_import_error: bool = False
    #: with ``--env uv``: the commit's environment (key, how, python, extras, groups), else ``None``
    env: dict[str, Any] | None = None
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Task:
        """Build a task from a record dict; unknown keys are ignored. ``KeyError`` if a required
        field is missing."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        """The record as written to ``tasks.jsonl`` (``schema_version`` first)."""
        d = dataclasses.asdict(self)
        return {"schema_version": d.pop("schema_version"), **d}


@dataclass
class Result:
    """One finished attempt (docs/contracts.md §8). Units: USD, tokens, seconds."""

    run_id: str
    task_id: str
    agent: str
    attempt: int
    outcome: str
    variant: str = "base"
    solved: bool = False
    scored: bool = True
    cost_usd: float | None = None
    cost_partial: bool = False
    exit_code: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    turns: int | None = None
    wall_s: float = 0.0
    test_s: float = 0.0
    model: str | None = None
    agent_version: str | None = None
    touched_tests: bool = False
    suspicious: bool = False
    suspicious_reason: str | None = None
    sandbox: str | None = None
    test_sandbox: str | None = None
    started_at: str = ""
    finished_at: str = ""
    error: str | None = None
    similarity: float | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}; expected one of {', '.join(OUTCOMES)}")
        self.solved = self.outcome == "solved"
        self.scored = self.outcome in SCORED_OUTCOMES

    @property
    def key(self) -> tuple[str, str, int, str]:
        """(task_id, agent, attempt, variant): a repeated key means a retry; the last line wins."""
        return (self.task_id, self.agent, self.attempt, self.variant)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        """Build a result from a record dict; unknown keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_dict(self) -> dict[str, Any]:
        """The record as appended to ``results.jsonl`` (``schema_version`` first)."""
        d = dataclasses.asdict(self)
        return {"schema_version": d.pop("schema_version"), **d}


def load_tasks(path: Path) -> list[Task]:
    """All task records of a ``tasks.jsonl`` file, in file order (newest commit first)."""
    return [Task.from_dict(d) for d in read_jsonl(path)]


def tasks_digest(path: Path) -> str:
    """SHA-256 (first 16 hex digits) of the tasks file's bytes; ``""`` when it does not exist.

    A run's ``meta.json`` stores it so that ``--homefield-resume`` can refuse a changed task set.
    """
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except FileNotFoundError:
        return ""
