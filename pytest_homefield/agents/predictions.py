"""The ``preds:FILE`` agent: replays patches from a SWE-bench predictions file.

Patches produced by another harness (SWE-agent, mini-swe-agent, OpenHands, the SWE-bench harness's
own runs) are graded here exactly like any agent's change: each attempt applies the task's patch to
the snapshot and grading takes it from there (clean copy, hidden tests, every outcome of
docs/contracts.md §8).

Accepted files (UTF-8): JSON lines, a JSON list, or mini-swe-agent's ``preds.json`` object keyed by
instance id; each prediction has ``instance_id``, ``model_name_or_path`` and ``model_patch``. An
instance id is matched to a task by the part after its last ``__`` (:func:`task_id_of`), so the
repository name used at export does not matter. Several predictions for one instance are attempts in
file order: the n-th is attempt n.

Per attempt: no prediction (or an empty ``model_patch``) changes nothing, so grading says
``empty_patch``; a patch ``git apply`` rejects is ``agent_error`` with git's message on one line.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import AgentContext, AgentResult, Capable
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.errors import PatchError, PredictionsError
from pytest_homefield.export.swebench import task_id_of
from pytest_homefield.sandbox.snapshot import apply_patch

__all__ = ["CAPABILITIES", "load_predictions", "PredictionsAgent"]


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PredictionsError(f"predictions file {path}: {exc.strerror or exc}") from None
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON lines start with "{" too
        if isinstance(data, list):
            return [_check(path, i + 1, r) for i, r in enumerate(data)]
        if isinstance(data, dict) and "instance_id" not in data:  # mini-swe-agent: {id: prediction}
            return [_check(path, i + 1, {"instance_id": k, **v} if isinstance(v, dict) else v)
                    for i, (k, v) in enumerate(data.items())]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(_check(path, n, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise PredictionsError(f"predictions file {path}, line {n}: not JSON ({exc.msg})") from None
    return out


def _check(path: Path, n: int, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise PredictionsError(f"predictions file {path}, entry {n}: expected an object")
    for key in ("instance_id", "model_patch"):
        if key not in record:
            raise PredictionsError(f"predictions file {path}, entry {n}: missing {key!r}")
    if not isinstance(record["model_patch"], (str, type(None))):
        raise PredictionsError(f"predictions file {path}, entry {n}: 'model_patch' must be a string")
    return record


def load_predictions(path: Path) -> tuple[dict[str, list[str]], str | None]:
    """``({task id: [patch of attempt 1, attempt 2, …]}, model name or None)`` from a predictions file.
    Raises :class:`PredictionsError` (one line) for an unreadable or malformed file."""
    patches: dict[str, list[str]] = defaultdict(list)
    model: str | None = None
    for record in _records(path):
        patches[task_id_of(str(record["instance_id"]))].append(record["model_patch"] or "")
        model = model or (str(record["model_name_or_path"]) if record.get("model_name_or_path") else None)
    return dict(patches), model


#: In-process (no program to sandbox), edits only.
CAPABILITIES = Capabilities()


class PredictionsAgent(Capable):
    """Replays ``model_patch`` of the prediction for (task, attempt). Cost unknown (``None``)."""

    capabilities = CAPABILITIES

    def __init__(self, *, name: str, spec: str, path: Path) -> None:
        self.name = name
        self.spec = spec
        self.path = path
        self.patches, self.model = load_predictions(path)

    def version(self) -> str | None:
        return self.model

    def run(self, ctx: AgentContext) -> AgentResult:
        attempts = self.patches.get(ctx.task_id, [])
        patch = attempts[ctx.attempt - 1] if ctx.attempt <= len(attempts) else ""
        if not patch.endswith("\n") and patch:
            patch += "\n"  # harnesses often strip the final newline; git apply needs it
        try:
            apply_patch(ctx.workspace, patch)
        except PatchError as exc:
            return AgentResult(outcome="agent_error", exit_code=1, model=self.model,
                               error=f"patch does not apply: {exc}")
        return AgentResult(exit_code=0, model=self.model)
