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

import datetime as _dt
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from pytest_homefield.errors import StoreError
from pytest_homefield.pins import folder_below
from pytest_homefield.spelling import spell
from pytest_homefield.store import append_jsonl, write_atomic

__all__ = [
    "ARTIFACT_CAP_BYTES",
    "REPORT_ATTR",
    "Message",
    "Outbox",
    "REFUSED_ATTR",
    "REFUSED_FILE",
    "Scope",
    "given_order",
    "given_to",
    "not_running",
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

#: The ``TestReport`` attribute the controller sets on a report whose messages it refused: the one line.
REFUSED_ATTR = "homefield_refused"
#: The controller's record of refused reports, relative to ``.homefield/`` (docs/contracts.md §4).
REFUSED_FILE = "refused.jsonl"

Message = dict[str, Any]
_OUTBOX = pytest.StashKey["Outbox"]()


class TransportError(ValueError):
    """A message the controller refuses (a path outside ``.homefield/``, an unknown kind, a record or
    file outside its item's :class:`Scope`)."""


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b  # 1 is not True, "1" is not 1


@dataclass(frozen=True)
class Scope:
    """What the messages of one item may write on the controller (hatk36; docs/contracts.md §4), made by
    the mode from the item's node id and its own plan, never from the message.

    ``appends``: target (a POSIX path relative to ``.homefield/``) → the fields every record appended
    there must hold with exactly these values (the item's key: a run's ``task_id``, ``agent``,
    ``attempt``, ``run_id``); ``folder``: the one folder (relative to ``.homefield/``) whose files the
    item may write (its attempt's artifacts), ``None``: no file."""

    appends: Mapping[str, Mapping[str, object]]
    folder: str | None = None
    #: the item's key in words, for the refusal line
    label: str = field(default="", compare=False)

    def why_not(self, msg: Mapping[str, Any]) -> str | None:
        """Why ``msg`` is outside this scope (one phrase), else ``None``."""
        if "append" in msg:
            target = str(msg["append"])
            want = self.appends.get(target)
            if want is None:
                return f"an append to {target!r}, which is not its item's"
            record = msg.get("record")
            if not isinstance(record, Mapping):
                return f"an append to {target!r} that is not a record"
            for name, value in want.items():
                if not _same(record.get(name), value):
                    return f"a record of {target!r} with {name} {record.get(name)!r}, not its item's {value!r}"
            return None
        if "file" in msg:
            parts = PurePosixPath(str(msg["file"])).parts
            top = PurePosixPath(self.folder).parts if self.folder is not None else None
            if top is None or len(parts) <= len(top) or parts[: len(top)] != top or ".." in parts:
                return f"a file {str(msg['file'])!r} outside its item's folder"
            return None
        return f"an unknown message {sorted(msg)}"


def _given(config: pytest.Config, node: Any) -> Iterator[str] | None:
    """The node ids the xdist controller has given the worker ``node`` and not yet seen finished, lazily, in the
    order it sent them (:func:`given_order`), ``None`` when the scheduler keeps no such record."""
    dsession = config.pluginmanager.getplugin("dsession")
    sched = getattr(dsession, "sched", None)
    pending = getattr(sched, "node2pending", None)
    if isinstance(pending, dict) and node in pending:
        collection = getattr(sched, "collection", None)
        if collection is None:  # each: one collection per node
            collection = getattr(sched, "node2collection", {}).get(node)
        if collection is None:
            return None
        return (collection[i] for i in pending[node] if 0 <= i < len(collection))
    work = getattr(sched, "assigned_work", None)
    if isinstance(work, dict) and node in work:
        return (nodeid for unit in work[node].values() for nodeid, done in unit.items() if not done)
    return None


def given_order(config: pytest.Config, node: Any) -> list[str] | None:
    """The node ids the xdist controller has given the worker ``node`` and not yet seen finished, in the order
    it sent them, which is the order the worker runs them (its scheduler's pending items: ``node2pending`` with
    ``collection`` of load, worksteal and each; ``assigned_work`` of loadscope, loadfile and loadgroup), ``None``
    when the scheduler keeps neither (then nothing it sends is taken). A report of an item arrives before its
    ``runtest_protocol_complete``, which is when the scheduler drops it, so the item it reports is still among
    them, and first: xdist itself takes the first pending item as the one a crashed worker was running."""
    given = _given(config, node)
    return None if given is None else list(given)


def given_to(config: pytest.Config, node: Any) -> Collection[str] | None:
    """:func:`given_order` as a set."""
    order = given_order(config, node)
    return None if order is None else set(order)


def not_running(config: pytest.Config, node: Any, nodeid: str) -> str | None:
    """Why the worker ``node`` cannot be running the item ``nodeid`` now (one phrase), else ``None`` (hatk37): the
    item must be the first of :func:`given_order`, the one it runs (a worker runs its items one at a time, in the
    order given, and the controller reads its events in the order sent)."""
    if _first_given(config, node) == nodeid:  # the common case, without listing every pending item
        return None
    order = given_order(config, node)
    if order is None:
        return "this session's xdist scheduler does not say which items it gave that worker"
    if nodeid not in order:
        return "that worker was not given this item (or it had finished)"
    if order[0] != nodeid:
        return f"that worker was given this item but runs {order[0]} first"
    return None


def _first_given(config: pytest.Config, node: Any) -> str | None:
    """The first of :func:`given_order` (``None``: none, or the scheduler does not say), read without building
    the list (a report or event arrives per phase of every item; a worker of load scheduling may hold thousands)."""
    given = _given(config, node)
    return None if given is None else next(given, None)


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
    """A :func:`file_message` for every regular file at or below ``folder`` (which lies in ``homefield_dir``), in
    sorted path order. No link is followed (link52): ``folder`` is reached from ``homefield_dir`` one folder at a
    time (:func:`~pytest_homefield.pins.folder_below`), the folders below it by :func:`os.fwalk` (which checks each
    folder it enters is the one it listed), each file opened ``O_NOFOLLOW | O_NONBLOCK`` from its folder's
    descriptor; a link, fifo, socket or device is passed over, and so is the whole folder when a link or no folder
    is on the way to it (nothing sent)."""
    try:
        top = folder_below(homefield_dir, folder)
    except (OSError, ValueError):
        return []
    base = folder.relative_to(homefield_dir).parts
    found: list[tuple[tuple[str, ...], bytes]] = []
    try:
        for where, _, names, dfd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            parts = base + PurePosixPath(where).parts  # pathlib drops the leading '.'
            for name in names:
                data = _regular_bytes(name, dfd)
                if data is not None:
                    found.append(((*parts, name), data))
    finally:
        os.close(top)
    return [file_message("/".join(parts), data, cap=cap) for parts, data in sorted(found)]


def _regular_bytes(name: str, dir_fd: int) -> bytes | None:
    """The content of ``name`` in the folder ``dir_fd`` when it is a regular file (never followed, never
    blocking), else ``None``."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:  # a link (ELOOP), a fifo without a writer (ENXIO), gone
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


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

    def check(self, messages: Iterable[Mapping[str, Any]], scope: Scope) -> None:
        """Raise :class:`TransportError` (one line) unless every message of ``messages`` lies within
        ``scope`` and ``.homefield/``; writes nothing."""
        for msg in messages:
            if not isinstance(msg, Mapping):
                raise TransportError(f"pytest-homefield: a worker sent a message that is not an object: {msg!r:.80}")
            why = scope.why_not(msg)
            if why is not None:
                raise TransportError(why)
            self._path(msg.get("append", msg.get("file")))

    def deliver(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Apply ``messages`` in order (already :meth:`check`-ed against their item's scope); returns
        the records appended."""
        appended: list[dict[str, Any]] = []
        for msg in messages:
            if "append" in msg:
                record = dict(msg["record"])
                append_jsonl(self._path(msg["append"]), record)
                appended.append(record)
            elif "file" in msg:
                # never through a link among .homefield/'s folders (link52): made and entered from it
                write_atomic(self._path(msg["file"]), str(msg["text"]), below=self.homefield_dir)
            else:
                raise TransportError(f"pytest-homefield: unknown message from a worker: {sorted(msg)}")
        return appended


def report_refused() -> str:
    """How a refused report's line ends (its messages are not written, so its attempt is not recorded), with
    ``--resume`` spelled for the front end in use (:func:`~pytest_homefield.spelling.spell`)."""
    return (f"none of it written (the worker's fault: that attempt stays unrecorded and {spell('resume')} makes it "
            "again)")
#: How a refused ``logstart``/``logfinish`` event's line ends: the event's hooks are never called (no start or end
#: line of the item is written for it); the item's own report is judged apart.
EVENT_REFUSED = "not taken (the worker's fault: no start or end line is written for it)"


class TransportPlugin:
    """The two hooks: attach an item's outbox to each phase's report (every process), deliver the
    messages of arriving reports (the controller, or the only process without xdist).

    The controller takes a report's messages only when they are its item's (hatk36): from an xdist worker,
    the item that worker runs now (:func:`not_running`: the first the controller gave it and has not seen
    finished), and every message within the item's :class:`Scope` (its own records and artifact folder, by
    its key). A report without messages, and a worker's ``logstart``/``logfinish`` events (:meth:`_bind_events`),
    are taken by the same rule (hatk37: a run's ``tries.jsonl`` is made of them). Else none of the
    report's messages is written (its attempt stays unrecorded: ``--resume`` makes it again), the report
    gets :data:`REFUSED_ATTR` (the modes pass over it), the line is printed at once and in the summary,
    appended to ``.homefield/refused.jsonl`` (:data:`REFUSED_FILE`), and the exit status is non-zero.

    A delivery that fails with :class:`StoreError` (a full disk) is not a crash: :attr:`error` keeps
    its one line, the session stops after the items running now (``session.shouldstop``, and xdist's
    own stop flag under xdist), later reports are not written (their attempts are redone on resume),
    and the terminal summary prints the line and ``resume_hint()`` (the mode's resume command, when
    it has one); the exit status is then non-zero."""

    def __init__(self, writer: ControllerWriter, *, is_worker: bool, scope: Callable[[str], Scope | None],
                 resume_hint: Callable[[], str | None] | None = None) -> None:
        self.writer = writer
        self.is_worker = is_worker
        #: the mode's :class:`Scope` of an item by node id (``None``: no item of this session)
        self.scope = scope
        self.resume_hint = resume_hint
        #: the first write that failed on the controller, one line, else ``None``
        self.error: str | None = None
        #: the reports whose messages were refused, one line each (:meth:`refusal`)
        self.refused: list[str] = []
        self._session: pytest.Session | None = None
        #: the reports xdist's controller made for crashed items (:meth:`pytest_handlecrashitem`)
        self._crash_reports: list[Any] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session
        dsession = session.config.pluginmanager.getplugin("dsession")  # xdist's controller loop
        if not self.is_worker and dsession is not None:
            self._bind_events(dsession)

    def _bind_events(self, dsession: Any) -> None:
        """hatk37: xdist's controller hands a worker's ``logstart`` and ``logfinish`` events to
        ``pytest_runtest_logstart``/``logfinish`` without saying which worker sent them, so a changed worker
        could start any item (a ``tries.jsonl`` start, a try cut short the report counts against that
        item's agent). The controller's own handlers of the two events, which are told the worker, are
        wrapped: an event of an item that worker is not running (:func:`not_running`) is refused
        (:meth:`_refuse`), its hook never called."""
        for event in ("logstart", "logfinish"):
            original = getattr(dsession, f"worker_{event}", None)
            if original is None:
                continue

            def bound(node: Any, nodeid: str, location: Any, *, _original: Any = original,
                      _event: str = event) -> None:
                why = not_running(self._session.config, node, nodeid) if self._session is not None else None
                if why is not None:
                    self._refuse(nodeid, node, f"a {_event[3:]} event: {why}", what=EVENT_REFUSED)
                    return
                _original(node=node, nodeid=nodeid, location=location)

            setattr(dsession, f"worker_{event}", bound)  # loop_once calls getattr(dsession, "worker_" + event)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: Any, sched: Any) -> None:
        """xdist, on the controller: the report it makes itself for the item a dead worker was running (which
        its scheduler no longer counts as that worker's); taken as it stands (:meth:`pytest_runtest_logreport`)."""
        self._crash_reports.append(report)

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
        if not messages:  # still the worker's item, or refused (hatk37: its end line in tries.jsonl)
            why = self.sender_refusal(report)
            if why is not None:
                self._refuse_report(report, why)
            return
        if self.error is not None:
            return  # stopping: nothing more is written after a failed write
        why = self.refusal(report, messages)
        if why is not None:
            self._refuse_report(report, why)
            return
        try:
            self.writer.deliver(messages)
        except StoreError as exc:
            self.error = str(exc)
            self._stop(f"homefield: {exc}")

    def refusal(self, report: pytest.TestReport, messages: Any) -> str | None:
        """Why the messages that came with ``report`` are not its item's to send (one phrase), else ``None``."""
        why = self.sender_refusal(report)
        if why is not None:
            return why
        if not isinstance(messages, list):
            return "its messages are not a list"
        scope = self.scope(report.nodeid)
        if scope is None:
            return "it is no item of this session"
        try:
            self.writer.check(messages, scope)
        except TransportError as exc:
            return str(exc).removeprefix("pytest-homefield: ")
        return None

    def sender_refusal(self, report: pytest.TestReport) -> str | None:
        """Why the worker ``report`` came from (xdist's ``report.node``) is not running its item now
        (:func:`not_running`), else ``None``: also ``None`` without xdist and for the report xdist's controller
        made itself for a crashed worker's item (:meth:`pytest_handlecrashitem`)."""
        node = getattr(report, "node", None)  # set by xdist's controller: the worker the report came from
        if node is None or any(report is r for r in self._crash_reports) or self._session is None:
            return None
        return not_running(self._session.config, node, report.nodeid)

    def _refuse_report(self, report: pytest.TestReport, why: str) -> None:
        line = self._refuse(report.nodeid, getattr(report, "node", None), why)
        setattr(report, REFUSED_ATTR, line)
        setattr(report, REPORT_ATTR, [])

    def _refuse(self, nodeid: str, node: Any, why: str, *, what: str | None = None) -> str:
        """Record and print the refusal of what ``node`` (an xdist worker, ``None``: this process) sent for the
        item ``nodeid``; ``what``: what became of it (:func:`report_refused` when ``None``,
        :data:`EVENT_REFUSED`). Returns the line."""
        worker = str(getattr(getattr(node, "gateway", None), "id", "") or "this process")
        line = (f"homefield: refused what {'worker ' + worker if node is not None else worker} sent with "
                f"{nodeid}: {why}; {report_refused() if what is None else what}")
        self.refused.append(line)
        try:  # the record of it; a full disk does not hide it: the line is printed and the exit is non-zero
            append_jsonl(self.writer.homefield_dir / REFUSED_FILE, {
                "worker": worker, "nodeid": nodeid, "why": why,
                "at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")})
        except OSError:
            pass
        tr = self._session.config.pluginmanager.get_plugin("terminalreporter") if self._session else None
        if tr is not None:
            tr.ensure_newline()
            tr.write_line(line, red=True, bold=True)
        return line

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
        elif self.refused and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker:
            return
        for line in self.refused[:10]:
            terminalreporter.write_line(line, red=True, bold=True)
        if len(self.refused) > 10:
            terminalreporter.write_line(f"homefield: and {len(self.refused) - 10} more refused; every one is in "
                                        f".homefield/{REFUSED_FILE}", red=True)
        if self.error is None:
            return
        terminalreporter.write_line(f"homefield: a record could not be written, the session stopped: {self.error}",
                                    red=True, bold=True)
        hint = self.resume_hint() if self.resume_hint is not None else None
        if hint:
            terminalreporter.write_line(f"Free space, then continue with: {hint}", yellow=True)
