"""Records travel from the worker that made them to the controller, which writes them
(docs/contracts.md §4).

A worker never appends to a shared ``results.jsonl``: whatever it would write is a *message*
(JSON primitives only, so execnet can carry it) put in the item's :class:`Outbox`. The
``pytest_runtest_makereport`` wrapper moves the outbox onto the phase's ``TestReport`` as the
attribute :data:`REPORT_ATTR`; pytest's report serialisation carries unknown attributes to the xdist
controller unchanged (``pytest_report_to_serializable`` copies ``report.__dict__``), and without
xdist the report object is the same. The controller's ``pytest_runtest_logreport`` hands the
messages to :class:`ControllerWriter`, which appends each record the moment the report arrives
(:func:`pytest_homefield.store.append_jsonl`: one ``write()`` under ``flock``, then fsync).

Two kinds of message, both addressed by a POSIX path relative to the controller's ``.homefield/``:

* ``{"append": "runs/<id>/results.jsonl", "record": {...}}``: one JSON line.
* ``{"file": "runs/<id>/attempts/<task>/<agent>/<n>/diff.patch", "text": str, "size": int,
  "truncated": bool}``: an artifact, written atomically. Workers send artifacts only when their
  ``.homefield/`` is not the controller's (a remote xdist worker); each file is capped at
  :data:`ARTIFACT_CAP_BYTES` (UTF-8, undecodable bytes replaced) with a last line saying so, and the
  full file stays in the worker's own clone.

Every mode (mine, run, probe, ablate) uses :func:`post` from its item and gets the controller-side
write for free: a run's and an ablation's result lines (:class:`pytest_homefield.run.runner.AttemptRunner`),
a probe's call records and its rate-limit marker, a mining session's verification records. Crash
safety: SIGKILL of a worker loses only its attempt in flight (its report never arrives); SIGKILL of
the controller loses the reports not yet received. A write
that fails (a full disk: :class:`~pytest_homefield.errors.StoreError`, the file left as it was)
stops the session after the items running now, with one line naming the file and how to go on
(:class:`TransportPlugin`); the records that could not be written are redone by a resume.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from pytest_homefield.errors import StoreError
from pytest_homefield.store import append_jsonl, write_atomic

__all__ = [
    "ARTIFACT_CAP_BYTES",
    "REPORT_ATTR",
    "Message",
    "Outbox",
    "append_message",
    "file_message",
    "artifact_messages",
    "post",
    "ControllerWriter",
    "TransportPlugin",
    "TransportError",
]

#: Largest artifact file sent from a remote worker (bytes); longer files are cut and marked.
ARTIFACT_CAP_BYTES = 1_000_000
#: The ``TestReport`` attribute that carries a phase's messages to the controller.
REPORT_ATTR = "homefield_messages"

Message = dict[str, Any]
_OUTBOX = pytest.StashKey["Outbox"]()


class TransportError(ValueError):
    """A message the controller refuses (a path outside ``.homefield/``, an unknown kind)."""


class Outbox:
    """Messages of one item not yet attached to a report, in the order posted."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def add(self, messages: Iterable[Message]) -> None:
        self.messages.extend(messages)

    def take(self) -> list[Message]:
        """All pending messages, leaving the outbox empty."""
        out, self.messages = self.messages, []
        return out


def append_message(target: str, record: Mapping[str, Any]) -> Message:
    """A message appending ``record`` to ``.homefield/<target>``."""
    return {"append": target, "record": dict(record)}


def file_message(target: str, data: bytes, *, cap: int = ARTIFACT_CAP_BYTES) -> Message:
    """A message writing ``data`` (cut to ``cap`` bytes, marked) to ``.homefield/<target>``."""
    size = len(data)
    truncated = size > cap
    text = data[:cap].decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[homefield: cut at {cap} of {size} bytes; the whole file is on the worker]\n"
    return {"file": target, "text": text, "size": size, "truncated": truncated}


def artifact_messages(folder: Path, homefield_dir: Path, *, cap: int = ARTIFACT_CAP_BYTES) -> list[Message]:
    """A :func:`file_message` for every file under ``folder`` (which lies in ``homefield_dir``), in
    sorted path order."""
    out: list[Message] = []
    if not folder.is_dir():
        return out
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        out.append(file_message(path.relative_to(homefield_dir).as_posix(), path.read_bytes(), cap=cap))
    return out


def post(item: pytest.Item, messages: Iterable[Message]) -> None:
    """Queue ``messages`` on ``item``; they leave with the report of the current phase."""
    box = item.stash.get(_OUTBOX, None)
    if box is None:
        box = item.stash[_OUTBOX] = Outbox()
    box.add(messages)


class ControllerWriter:
    """Writes the messages that arrive with reports into ``homefield_dir`` (the controller's
    ``.homefield/``). Raises :class:`TransportError` for a message it must not follow."""

    def __init__(self, homefield_dir: Path) -> None:
        self.homefield_dir = homefield_dir

    def _path(self, target: Any) -> Path:
        rel = PurePosixPath(str(target))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise TransportError(f"pytest-homefield: a worker sent a path outside .homefield/: {target!r}")
        return self.homefield_dir.joinpath(*rel.parts)

    def deliver(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Apply ``messages`` in order; returns the records appended."""
        appended: list[dict[str, Any]] = []
        for msg in messages:
            if "append" in msg:
                record = dict(msg["record"])
                append_jsonl(self._path(msg["append"]), record)
                appended.append(record)
            elif "file" in msg:
                write_atomic(self._path(msg["file"]), str(msg["text"]))
            else:
                raise TransportError(f"pytest-homefield: unknown message from a worker: {sorted(msg)}")
        return appended


class TransportPlugin:
    """The two hooks: attach an item's outbox to each phase's report (every process), deliver the
    messages of arriving reports (the controller, or the only process without xdist).

    A delivery that fails with :class:`StoreError` (a full disk) is not a crash: :attr:`error` keeps
    its one line, the session stops after the items running now (``session.shouldstop``, and xdist's
    own stop flag under xdist), later reports are not written (their attempts are redone on resume),
    and the terminal summary prints the line and ``resume_hint()`` (the mode's resume command, when
    it has one); the exit status is then non-zero."""

    def __init__(self, writer: ControllerWriter, *, is_worker: bool,
                 resume_hint: Callable[[], str | None] | None = None) -> None:
        self.writer = writer
        self.is_worker = is_worker
        self.resume_hint = resume_hint
        #: the first write that failed on the controller, one line, else ``None``
        self.error: str | None = None
        self._session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        box = item.stash.get(_OUTBOX, None)
        if box is not None and box.messages:
            setattr(report, REPORT_ATTR, box.take())
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        messages = getattr(report, REPORT_ATTR, None) or ()
        if not messages:
            return
        if self.error is not None:
            return  # stopping: nothing more is written after a failed write
        try:
            self.writer.deliver(messages)
        except StoreError as exc:
            self.error = str(exc)
            self._stop(f"homefield: {exc}")

    def _stop(self, why: str) -> None:
        session = self._session
        if session is None:
            return
        session.shouldstop = why
        dsession = session.config.pluginmanager.getplugin("dsession")  # xdist's controller loop
        if dsession is not None:
            dsession.shouldstop = why

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.error is not None and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.error is None or self.is_worker:
            return
        terminalreporter.write_line(f"homefield: a record could not be written, the session stopped: {self.error}",
                                    red=True, bold=True)
        hint = self.resume_hint() if self.resume_hint is not None else None
        if hint:
            terminalreporter.write_line(f"Free space, then continue with: {hint}", yellow=True)
