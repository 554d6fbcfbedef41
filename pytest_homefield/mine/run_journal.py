"""The finished test runs of a candidate whose verification was stopped (docs/contracts.md §4, §7; host30).

A ``--time-budget`` (or Ctrl-C) that stops a candidate in flight used to keep nothing of it: the next
``homefield mine`` verified it from zero (on simonw/llm a candidate costs up to 5 min). Each parent or
commit run of :func:`~pytest_homefield.mine.redgreen.verify_candidate` that *finished* is now written to
``.homefield/mine-runs/<verify_key>.json`` as it finishes; the next verification of the same candidate
under the same inputs reads them back instead of running them again, and the file is removed once the
candidate has a verdict.

- **Keyed by the candidate's verify_key** (:func:`~pytest_homefield.mine.reuse.verify_key`): the commit and
  parent, test files, ``test_cmd``/``setup_cmd``, stability runs, timeouts, sandbox, environment, caps,
  :data:`~pytest_homefield.mine.redgreen.VERIFY_VERSION` and the reporter's digest. Any change of them is
  another key, another (empty) journal: nothing measured under other inputs is ever read.
- **Within a key, by the run as the schedule names it**: its name (``parent-1``, ``commit-2``,
  ``parent-1-rest``, ``parent-1-full`` …), the ids it was limited to and its bound (s). Verification is
  deterministic given its runs, so a resumed verification asks for the same runs in the same order and each
  finished one is found; the first one not found runs, and every later one too.
- **Never a half-finished run**: a run is written only after it returned whole (a run cut by the deadline
  raises before that, a run that ended the verification as a drop is no run to keep); the file is
  rewritten whole, atomically, so a kill leaves the previous version. Twin runs (canaries) are never kept:
  their twins are drawn afresh each time.
- **Bounded**: one file per candidate stopped in flight, at most :data:`MAX_RUNS` runs, removed when the
  candidate is verified; a file that does not read whole is ignored (and replaced).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox.testrun import TestRun
from pytest_homefield.store import write_atomic

__all__ = ["RunJournal", "MAX_RUNS", "JOURNAL_VERSION", "RUN_KEY"]

#: Runs one journal holds at most (a verification makes about 2 × stability runs, plus full re-runs).
MAX_RUNS = 64
#: The journal file's own format (a file of another version is ignored).
JOURNAL_VERSION = 1
#: What a ``verify_key`` looks like (24 hex digits): the journal's file name is nothing else.
RUN_KEY = re.compile(r"^[0-9a-f]{24}$")
_FIELDS = {f.name for f in dataclasses.fields(TestRun)}


def _run_key(name: str, select: Sequence[str] | None, bound_s: float | None) -> str:
    """The run's key inside a journal: its name, the ids it was limited to (sorted; ``None``: whole files)
    and its bound (s, to the ms; ``None``: the run timeout)."""
    return json.dumps([name, None if select is None else sorted(select),
                       None if bound_s is None else round(float(bound_s), 3)], separators=(",", ":"))


def _dump(run: TestRun) -> dict[str, Any]:
    """``run`` as JSON: paths as text, ``selected`` sorted, operands as lists."""
    out = dataclasses.asdict(run)
    out["log_path"] = str(run.log_path)
    out["selected"] = None if run.selected is None else sorted(run.selected)
    out["stop_operands"] = {k: list(v) for k, v in run.stop_operands.items()}
    return out


def _load(data: Any) -> TestRun:
    """The :class:`TestRun` of :func:`_dump`'s ``data``; raises ``TypeError``/``ValueError``/``KeyError``
    when it is not one."""
    if not isinstance(data, dict) or not set(data) <= _FIELDS:
        raise ValueError("not a test run")
    data = dict(data)
    data["log_path"] = Path(str(data["log_path"]))
    if data.get("selected") is not None:
        data["selected"] = frozenset(str(i) for i in data["selected"])
    data["stop_operands"] = {str(k): (str(v[0]), str(v[1]), str(v[2]))
                             for k, v in dict(data.get("stop_operands") or {}).items()}
    run = TestRun(**data)
    if not isinstance(run.outcomes, dict) or not isinstance(run.wall_s, int | float):
        raise ValueError("not a test run")
    return run


class RunJournal:
    """The finished runs of one candidate under one ``verify_key``, in ``folder/<verify_key>.json``.
    ``resumed`` counts the runs :meth:`get` gave back (this verification's runs not made again)."""

    def __init__(self, folder: Path, verify_key: str) -> None:
        if not RUN_KEY.match(verify_key):
            raise ValueError(f"not a verify key: {verify_key!r}")
        self.path = Path(folder) / f"{verify_key}.json"
        self.verify_key = verify_key
        self.resumed = 0
        self._runs: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}
        except (OSError, ValueError):
            data = {}
        if (isinstance(data, dict) and data.get("version") == JOURNAL_VERSION
                and data.get("verify_key") == verify_key and isinstance(data.get("runs"), dict)):
            self._runs = {str(k): v for k, v in data["runs"].items()}

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, name: str, select: Sequence[str] | None, bound_s: float | None) -> tuple[TestRun, float] | None:
        """The finished run so named, limited and bounded, and the seconds of its setup; ``None`` (never
        made, or unreadable)."""
        data = self._runs.get(_run_key(name, select, bound_s))
        if not isinstance(data, dict):
            return None
        try:
            run, setup_s = _load(data.get("run")), float(data.get("setup_s") or 0.0)
        except (TypeError, ValueError, KeyError, IndexError):
            return None
        self.resumed += 1
        return run, setup_s

    def put(self, name: str, select: Sequence[str] | None, bound_s: float | None, run: TestRun,
            setup_s: float = 0.0) -> None:
        """Keep ``run`` (finished; its setup took ``setup_s``) and rewrite the file atomically; past
        :data:`MAX_RUNS` nothing more is kept. A file that cannot be written is no error: the run is simply
        made again next time."""
        if len(self._runs) >= MAX_RUNS:
            return
        self._runs[_run_key(name, select, bound_s)] = {"run": _dump(run), "setup_s": round(setup_s, 3)}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps({"version": JOURNAL_VERSION, "verify_key": self.verify_key,
                                                "runs": self._runs}, sort_keys=True))
        except OSError:
            pass

    def remove(self) -> None:
        """Forget every run (the candidate has its verdict)."""
        self._runs = {}
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
