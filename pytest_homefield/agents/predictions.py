"""The ``preds:FILE`` agent: replays patches from a SWE-bench predictions file.

Patches produced by another harness (SWE-agent, mini-swe-agent, OpenHands, the SWE-bench harness's
own runs) are graded here exactly like any agent's change: each attempt applies the task's patch to
the snapshot and grading takes it from there (clean copy, hidden tests, every outcome of
docs/contracts.md §8).

Accepted files (UTF-8): JSON lines, a JSON list, or mini-swe-agent's ``preds.json`` object keyed by
instance id; each prediction has ``instance_id``, ``model_name_or_path`` and ``model_patch``. An
instance id is matched to a task by the part after its last ``__`` (:func:`task_id_of`), so the
repository name used at export does not matter.

Strict, as the SWE-bench harness is (:func:`check_predictions`, before anything runs): an id that
matches no task of ``tasks.jsonl`` is an error unless ``--preds-partial``; one summary line says how
many predictions matched, were unknown, are missing and are duplicated. Several predictions for one
instance follow ``--preds-policy`` (:data:`POLICIES`): ``last`` (SWE-bench's: SWE-agent 0.x appends
re-runs, the last line wins), ``first``, or ``attempts`` (the n-th prediction is attempt n). With
``first``/``last`` every attempt replays the one kept patch.

Per attempt: a task with no prediction (or, with ``attempts``, fewer predictions than the attempt's
number) is ``missing``, its own outcome; an empty or null ``model_patch`` changes nothing, so grading
says ``empty_patch``. The patch is applied as the SWE-bench harness tries (:func:`apply_like_swebench`):
``git apply``, then GNU ``patch --fuzz=5`` (on a copy of the workspace's ``.git``, discarded after: git66); a patch
neither applies is ``agent_error`` with git's message on one line. A patch with no final newline is taken as it is
(the harness does not add one).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.agents.base import AgentContext, AgentResult, Capable
from pytest_homefield.capabilities import Capabilities
from pytest_homefield.errors import PatchError, PredictionsError, PredictionsSpecError
from pytest_homefield.export.swebench import task_id_of
from pytest_homefield.sandbox import nofollow
from pytest_homefield.sandbox.snapshot import apply_patch, patch_bytes
from pytest_homefield.spelling import spell

__all__ = ["CAPABILITIES", "POLICIES", "Predictions", "PredsMatch", "load_predictions", "read_predictions",
           "apply_like_swebench", "check_predictions", "PredictionsAgent"]

#: ``--preds-policy`` values; the first is the default (SWE-bench's).
POLICIES = ("last", "first", "attempts")


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PredictionsError(f"predictions file {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PredictionsError(f"predictions file {path}: not UTF-8 text (byte {exc.start}): expected JSON lines, "
                               "a JSON list or a JSON object") from None
    if "\0" in text:
        raise PredictionsError(f"predictions file {path}: binary data (a NUL byte at character {text.index(chr(0))})"
                               ": expected JSON lines, a JSON list or a JSON object")
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSON lines start with "{" too
        except RecursionError:
            raise PredictionsError(f"predictions file {path}: JSON nested too deeply") from None
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
        except RecursionError:
            raise PredictionsError(f"predictions file {path}, line {n}: JSON nested too deeply") from None
    return out


def _check(path: Path, n: int, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise PredictionsError(f"predictions file {path}, entry {n}: expected an object")
    for key in ("instance_id", "model_patch"):
        if key not in record:
            raise PredictionsError(f"predictions file {path}, entry {n}: missing {key!r}")
    if not isinstance(record["instance_id"], str) or not record["instance_id"]:
        raise PredictionsError(f"predictions file {path}, entry {n}: 'instance_id' must be a non-empty string")
    if not isinstance(record["model_patch"], (str, type(None))):
        raise PredictionsError(f"predictions file {path}, entry {n}: 'model_patch' must be a string")
    return record


@dataclass(frozen=True)
class Predictions:
    """A predictions file read whole: ``patches`` {task id: [model_patch of each prediction, file
    order]} (``""`` for a null patch), ``instances`` {task id: the instance id as written}, ``model``
    (the first ``model_name_or_path``, or ``None``)."""

    patches: dict[str, list[str]]
    instances: dict[str, str]
    model: str | None


def read_predictions(path: Path) -> Predictions:
    """Read ``path``. Raises :class:`PredictionsError` (one line) for an unreadable, binary, not-UTF-8
    or malformed file."""
    patches: dict[str, list[str]] = {}
    ids: dict[str, str] = {}
    model: str | None = None
    for record in _records(path):
        task = task_id_of(record["instance_id"])
        patches.setdefault(task, []).append(record["model_patch"] or "")
        ids.setdefault(task, record["instance_id"])
        model = model or (str(record["model_name_or_path"]) if record.get("model_name_or_path") else None)
    return Predictions(patches, ids, model)


def load_predictions(path: Path) -> tuple[dict[str, list[str]], str | None]:
    """``({task id: [patch of each prediction, file order]}, model name or None)`` from a predictions
    file (:func:`read_predictions`). Raises :class:`PredictionsError` (one line)."""
    preds = read_predictions(path)
    return preds.patches, preds.model


def pick(patches: Sequence[str], attempt: int, policy: str) -> str | None:
    """The patch of ``attempt`` (from 1) among one instance's ``patches`` under ``policy``; ``None``
    when there is none (``missing``)."""
    if not patches:
        return None
    if policy == "first":
        return patches[0]
    if policy == "attempts":
        return patches[attempt - 1] if attempt <= len(patches) else None
    return patches[-1]


@dataclass(frozen=True)
class PredsMatch:
    """How a predictions file meets the tasks (:func:`check_predictions`): ``matched`` (selected tasks
    with a prediction), ``unknown`` (instance ids matching no task), ``missing`` (selected tasks with
    none), ``duplicated`` ({task id: its number of predictions}, when over 1)."""

    matched: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)

    def line(self, agent: str, path: Path, policy: str, attempts: int) -> str:
        """``homefield preds NAME (FILE): 8 matched, 0 unknown, 1 missing, 2 duplicated (…)``."""
        kept = {"last": "the last prediction of an instance kept, as SWE-bench",
                "first": "the first prediction of an instance kept",
                "attempts": "the n-th prediction of an instance is attempt n"}[policy]
        text = (f"homefield preds {agent} ({path}): {len(self.matched)} matched, {len(self.unknown)} unknown, "
                f"{len(self.missing)} missing, {len(self.duplicated)} duplicated ({kept}: {spell('preds-policy')} "
                f"{policy})")
        if self.unknown:
            text += f"; unknown ids ignored ({spell('preds-partial')}): {', '.join(self.unknown[:3])}"
            text += " …" if len(self.unknown) > 3 else ""
        if attempts > 1 and policy != "attempts":
            text += f"; each of the {attempts} attempts replays the same patch"
        return text


def check_predictions(agents: Sequence[Any], known_ids: Callable[[], Collection[str]], selected: Sequence[str], *,
                      partial: bool, attempts: int) -> list[str]:
    """The summary line of each ``preds:`` agent among ``agents`` (:meth:`PredsMatch.line`),
    ``known_ids()`` returning every task id of ``tasks.jsonl`` (called only when there is a ``preds:``
    agent) and ``selected`` being the run's. Raises
    :class:`PredictionsSpecError` (one line, the first ids) when a prediction matches no known task
    and ``partial`` is false."""
    lines = []
    known: Collection[str] | None = None
    for agent in agents:
        if not isinstance(agent, PredictionsAgent):
            continue
        known = known_ids() if known is None else known
        preds = agent.predictions
        unknown = [preds.instances[t] for t in preds.patches if t not in known]
        if unknown and not partial:
            raise PredictionsSpecError(
                f"preds {agent.name} ({agent.path}): {len(unknown)} instance id(s) match no task of tasks.jsonl: "
                f"{', '.join(unknown[:3])}{' …' if len(unknown) > 3 else ''} (SWE-bench refuses them too; "
                f"{spell('preds-partial')} ignores them)")
        match = PredsMatch(
            matched=[t for t in selected if t in preds.patches],
            unknown=unknown,
            missing=[t for t in selected if t not in preds.patches],
            duplicated={t: len(p) for t, p in preds.patches.items() if len(p) > 1},
        )
        lines.append(match.line(agent.name, agent.path, agent.policy, attempts))
    return lines


def apply_like_swebench(workdir: Path, patch: str) -> None:
    """Apply ``patch`` as the SWE-bench harness does (``swebench.harness.run_evaluation``): ``git apply``,
    and when that fails GNU ``patch --batch --forward --fuzz=5 -p1`` (its last fallback; skipped when
    ``patch`` is not installed), the text as given (no newline added). Raises :class:`PatchError` with
    git's message when neither applies; a failed ``patch`` leaves no file changed (it is run on a
    ``--dry-run`` first). A real run that fails after its dry run passed (atk46: a file beyond a symbolic link the
    patch itself makes, which the dry run does not make) raises :class:`PatchError` too, as the SWE-bench harness
    reads patch's exit status: the part applied before the failure stays in ``workdir``, and is not graded.
    ``patch`` writes what git refuses, ``.git/`` too (``.git/hooks/*``, ``.git/config``): it runs on a copy of
    ``workdir``'s ``.git`` (:func:`_git_folder_kept`), so ``workdir``'s own is as it was after either (git66)."""
    try:
        apply_patch(workdir, patch)
        return
    except PatchError as exc:
        first = exc
    exe = shutil.which("patch")
    if exe is None:
        raise first
    args = [exe, "--batch", "--forward", "--fuzz=5", "-p1", "--no-backup-if-mismatch", "--reject-file=-",
            "--silent"]
    data = patch_bytes(patch)
    with _git_folder_kept(Path(workdir)):
        dry = subprocess.run([*args, "--dry-run"], cwd=workdir, input=data, capture_output=True, check=False)
        if dry.returncode != 0:
            raise first
        real = subprocess.run(args, cwd=workdir, input=data, capture_output=True, check=False)
    if real.returncode != 0:  # atk46: the dry run makes no link, so a file beyond one the patch makes passes it
        lines = [ln.strip() for ln in (real.stdout + real.stderr).decode("utf-8", "replace").splitlines()
                 if ln.strip()]
        raise PatchError(f"patch applied only in part (exit status {real.returncode}): "
                         + "; ".join(lines)[:400])


@contextlib.contextmanager
def _git_folder_kept(workdir: Path) -> Iterator[None]:
    """While it runs, ``workdir/.git`` (a folder, not a link) is moved to a new folder beside ``workdir`` and a copy of
    it (:func:`~pytest_homefield.sandbox.nofollow.copy_tree`) stands in its place; on the way out whatever is then at
    ``workdir/.git`` is removed (never through a link) and the folder moved back. GNU ``patch`` writes into the copy as
    it would into a checkout's ``.git`` (SWE-bench's harness: the tree's change is the same), never into the folder
    git and grading read (git66: ``apply_patch`` says git never writes there; the fallback did). Without a ``.git``
    folder, nothing is done. Raises ``OSError`` when the folder cannot be moved or copied (nothing changed then)."""
    own = workdir / ".git"
    if not own.is_dir() or own.is_symlink():
        yield
        return
    held = Path(tempfile.mkdtemp(prefix=".hf-git-", dir=workdir.parent))
    os.rename(own, held / ".git")
    try:
        nofollow.copy_tree(held / ".git", own)
        yield
    finally:
        if own.is_dir() and not own.is_symlink():
            nofollow.remove_tree(own)
        if os.path.lexists(own):  # a file or link patch made there, or what remove_tree could not remove
            with contextlib.suppress(OSError):
                own.unlink()
        os.rename(held / ".git", own)
        held.rmdir()


#: In-process (no program to sandbox), edits only.
CAPABILITIES = Capabilities()


class PredictionsAgent(Capable):
    """Replays ``model_patch`` of the prediction for (task, attempt) under ``policy`` (:data:`POLICIES`).
    Cost unknown (``None``)."""

    capabilities = CAPABILITIES

    def __init__(self, *, name: str, spec: str, path: Path, policy: str = "last") -> None:
        if policy not in POLICIES:
            raise PredictionsSpecError(f"{spell('preds-policy')} {policy!r}: use one of {', '.join(POLICIES)}")
        self.name = name
        self.spec = spec
        self.path = path
        self.policy = policy
        self.predictions = read_predictions(path)
        self.patches, self.model = self.predictions.patches, self.predictions.model

    def version(self) -> str | None:
        return self.model

    def run(self, ctx: AgentContext) -> AgentResult:
        attempts = self.patches.get(ctx.task_id, [])
        patch = pick(attempts, ctx.attempt, self.policy)
        if patch is None:
            why = (f"no prediction for attempt {ctx.attempt} ({len(attempts)} in the file, "
                   f"{spell('preds-policy')} attempts)"
                   if attempts else "no prediction for this task in the file")
            return AgentResult(outcome="missing", model=self.model, error=why)
        try:
            apply_like_swebench(ctx.workspace, patch)
        except PatchError as exc:
            return AgentResult(outcome="agent_error", exit_code=1, model=self.model,
                               error=f"patch does not apply: {exc}")
        return AgentResult(exit_code=0, model=self.model)
