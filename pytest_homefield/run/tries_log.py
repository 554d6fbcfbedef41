"""The ``tries.jsonl`` log of a run or an ablation (docs/contracts.md §4; atk23 F3): the controller appends a
``start`` line when an attempt item starts and an ``end`` line at its first report. An interrupted session
leaves starts without ends, tries cut short, which the report and the ablation labels count as they count
claimed retries (:func:`pytest_homefield.report.runs.cut_short_by_key`). One writer for both modes."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from pytest_homefield.sandbox.phases import _NOTICE
from pytest_homefield.store import append_jsonl

__all__ = ["TryLog"]


class TryLog:
    """Appends try lines to ``path`` for the attempt items of one session (stamped ``session``, its start)."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = path
        self.session = session
        self._ended: set[str] = set()  # attempt items whose first report arrived
        self._said = False  # whether a refused write was said (once per session)

    def event(self, nodeid: str, event: str, *, variant: bool = False) -> None:
        """Append ``{task_id, agent, attempt, [variant,] event, session}`` for the attempt item ``nodeid``
        (a run's ``<file>::<task>::<agent>[<n>]``; with ``variant``, an ablation's
        ``…::<variant>::<task>::<agent>[<n>]``); ``event``: ``start``, or ``end`` (written once per item).
        Other node ids are ignored. A failed write (a full disk; a ``tries.jsonl`` that is a link, never followed,
        or no regular file: fix45) is said once, one line through the session's notice
        (:func:`~pytest_homefield.sandbox.phases.set_notice`, else stderr); stopping the session is left to the
        results' writes."""
        parts = nodeid.split("::")
        if (len(parts) < 4 if variant else len(parts) != 3) or not nodeid.endswith("]"):
            return
        agent, _, attempt = parts[-1][:-1].rpartition("[")
        if not attempt.isdigit():
            return
        if event == "end":
            if nodeid in self._ended:
                return
            self._ended.add(nodeid)
        line: dict[str, object] = {"task_id": parts[-2], "agent": agent, "attempt": int(attempt)}
        if variant:
            line["variant"] = parts[-3]
        try:  # StoreError is an OSError
            append_jsonl(self.path, {**line, "event": event, "session": self.session})
        except OSError as exc:
            if self._said:
                return
            self._said = True
            reason = " ".join(str(exc).split()) or type(exc).__name__
            said = (f"homefield: {reason if str(self.path) in reason else f'{self.path}: {reason}'}; tries are not "
                    "logged (a try an interruption cuts short is then not counted as one)")
            with contextlib.suppress(OSError, ValueError):
                if _NOTICE:  # the session's terminal, past pytest's capture
                    _NOTICE[0](said)
                else:
                    sys.stderr.write(said + "\n")
                    sys.stderr.flush()
