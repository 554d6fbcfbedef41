"""What a test run reported (:mod:`~pytest_homefield.sandbox.testrun`): the outcome channel the reporter
writes into (:class:`OutcomeChannel`), the events that count on it (:func:`parse_events`: the reporter's
``start`` to its first ``finish``, one pid), the ``outcomes.jsonl`` written for people
(:func:`write_counted`, :func:`read_outcomes`) and the JUnit XML of a ``{junit}`` command
(:func:`parse_junit`, :func:`read_junit`), each read into a :class:`Parsed`."""

from __future__ import annotations

import json
import os
import select
import threading
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.sandbox import nofollow

__all__ = ["OutcomeChannel", "Parsed", "parse_events", "parse_junit", "read_junit", "read_outcomes", "write_counted",
           "MAX_EVENT_BYTES", "CHANNEL_DRAIN_S"]

#: Bytes of events kept from one run's channel (about 200 per test phase); more is read and dropped.
MAX_EVENT_BYTES = 64 * 2**20
#: Seconds to wait for the channel's end of file once the command has ended.
CHANNEL_DRAIN_S = 5.0


class OutcomeChannel:
    """The outcome channel of one test run: a pipe whose write end (:attr:`write_fd`) the test command
    inherits (``pass_fds``) and whose read end a daemon thread drains as the run goes, so the reporter
    never blocks on a full pipe buffer (64 KiB on Linux).

    :meth:`close` closes this process's write end, waits up to ``drain_s`` seconds for the end of file
    (every copy of the write end closed: the command's processes are gone once
    :func:`~pytest_homefield.sandbox.procs.run_process` returns) and returns the bytes read, at most
    ``cap`` bytes (more is read and dropped, counted in :attr:`dropped`). :attr:`eof` says whether the
    end of file was reached. ``OSError`` from ``os.pipe`` (no descriptors left) propagates."""

    def __init__(self, *, cap: int = MAX_EVENT_BYTES, drain_s: float = CHANNEL_DRAIN_S) -> None:
        self._rfd, self.write_fd = os.pipe()  # both non-inheritable: only pass_fds hands on the write end
        self._cap, self._drain_s = cap, drain_s
        self._chunks: list[bytes] = []
        self._size = 0
        self.dropped = 0
        self.eof = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="homefield-outcomes", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self._rfd, select.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(100):
                continue
            chunk = os.read(self._rfd, 1 << 16)
            if not chunk:
                self.eof = True
                return
            if self._size + len(chunk) <= self._cap:
                self._chunks.append(chunk)
                self._size += len(chunk)
            else:
                self.dropped += len(chunk)

    def close(self) -> bytes:
        """Close the write end, drain to the end of file (at most ``drain_s`` s), close the read end;
        the bytes read. Idempotent in effect: a second call returns the same bytes."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1
        if self._thread.is_alive() or self._rfd >= 0:
            self._thread.join(self._drain_s)
            self._stop.set()
            self._thread.join()
            if self._rfd >= 0:
                os.close(self._rfd)
                self._rfd = -1
        return b"".join(self._chunks)


def write_counted(path: Path, lines: Sequence[str]) -> None:
    """Write the events that counted to ``path`` for people to read. The test command could write its
    folder, so what is at ``path`` now is removed first and the file is created afresh without
    following a link (``O_EXCL | O_NOFOLLOW``); a failure to write it is ignored (it is never read
    back for grading)."""
    try:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)


@dataclass
class Parsed:
    """What one run reported, read from its events or JUnit XML (the fields are :class:`TestRun`'s
    sources; ``found``, ``started``, ``finished``, ``ignored`` as commented)."""

    outcomes: dict[str, str]
    collection_errors: dict[str, str]
    collected: int | None
    test_timeouts: list[str]
    found: bool  # the outcome file / XML existed and was readable
    started: bool  # the reporter's start event (reporter mode) / any testcase (JUnit)
    skip_reasons: dict[str, str] = field(default_factory=dict)
    finished: bool = False  # the reporter's finish event / the XML was written
    ignored: int = 0  # channel lines that did not count (parse_events)


def read_outcomes(path: Path) -> Parsed:
    """:func:`parse_events` of a file (an ``outcomes.jsonl`` written by :func:`run_tests`). A missing
    file gives ``found=False``."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Parsed({}, {}, None, [], found=False, started=False)
    return parse_events(text)[0]


#: the fields of the reporter's events by type (``homefield_reporter``'s docstring); ``message`` may be null
_TEXT_FIELDS = ("event", "nodeid", "when", "outcome", "path")
_FLAGS = ("xfail", "subtest", "timeout")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def well_formed(ev: Mapping[str, Any]) -> bool:
    """Whether ``ev`` has the field types the reporter writes: text fields strings, ``message`` a
    string or null, the flags booleans, ``count`` and ``exitstatus`` non-negative ints, ``duration`` a
    number. Anything else was written by code inside the test process (the reporter never writes it),
    so it does not count: one such line made grading raise on the host, an ``infra`` blamed on homefield
    and retried for ever (atk13 F2)."""
    if any(k in ev and not isinstance(ev[k], str) for k in _TEXT_FIELDS):
        return False
    if ev.get("message") is not None and not isinstance(ev["message"], str):
        return False
    if any(k in ev and not isinstance(ev[k], bool) for k in _FLAGS):
        return False
    if any(k in ev and not (_is_int(ev[k]) and ev[k] >= 0) for k in ("count", "exitstatus")):
        return False
    return "duration" not in ev or (isinstance(ev["duration"], (int, float)) and not isinstance(ev["duration"], bool))


def _utf8(text: str) -> bool:
    return text.isascii() or text.isprintable() or _encodes(text)


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, from a JSON escape such as \ud800
        return False
    return True


def decode_event(line: str) -> dict[str, Any] | None:
    """One line of the outcome channel as the JSON object it holds, or ``None``: not JSON, nested deeper
    than the decoder goes (``RecursionError``: ``"[" * 200000`` made grading raise on the host, an
    ``infra`` blamed on homefield, atk14 A2), not an object, or with a key or text value that is not
    UTF-8 text (a lone surrogate: the id of a made-up test ``f[\ud800]`` became a record no worker
    could send, and the session died, atk14 A5). Never raises."""
    try:
        ev = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(ev, dict):
        return None
    if not all(_utf8(k) and (not isinstance(v, str) or _utf8(v)) for k, v in ev.items()):
        return None
    return ev


def _counted(lines: Sequence[str]) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """The lines of the outcome channel that count, each with its event, and how many did not: from the
    first ``start`` event (its ``pid`` an int) to the first ``finish``, only events carrying that same
    ``pid`` with the reporter's field types (:func:`well_formed`). Lines before ``start``, after
    ``finish``, from another pid, malformed ones and lines that are not a JSON object are ignored (blank
    lines are not counted as ignored)."""
    counted: list[tuple[str, dict[str, Any]]] = []
    ignored = 0
    pid: int | None = None
    done = False
    for line in lines:
        if not line.strip():
            continue
        ev = decode_event(line)
        if done or ev is None or not well_formed(ev):
            ignored += 1
            continue
        if pid is None:
            if ev.get("event") == "start" and isinstance(ev.get("pid"), int) and not isinstance(ev["pid"], bool):
                pid = ev["pid"]
                counted.append((line, ev))
            else:
                ignored += 1
            continue
        if ev.get("pid") != pid or ev.get("event") == "start":
            ignored += 1
            continue
        counted.append((line, ev))
        done = ev.get("event") == "finish"
    return counted, ignored


def parse_events(text: str) -> tuple[Parsed, list[str]]:
    """Parse the reporter's JSON lines (see ``homefield_reporter``) into per-id outcomes, and the lines
    that counted (:func:`_counted`: ``start`` to the first ``finish`` of one pid; the rest is counted in
    ``ignored``).

    A phase may be reported more than once: subtests report each ``call`` of the test (pytest ≥ 9
    ``subtests`` and ``unittest`` ``subTest``), re-run plugins report intermediate ``rerun``
    outcomes (ignored). The last report of a phase wins, except that a failed ``call`` stays
    failed. A torn last line is ignored. ``found`` is true when any line arrived.
    """
    counted, ignored = _counted(text.splitlines())
    if not counted and not ignored:
        return Parsed({}, {}, None, [], found=False, started=False), []
    phases: dict[str, dict[str, dict[str, Any]]] = {}
    collection_errors: dict[str, str] = {}
    collected: int | None = None
    started = finished = False
    for _, ev in counted:
        kind = ev.get("event")
        if kind == "start":
            started = True
        elif kind == "finish":
            finished = True
        elif kind == "phase" and ev.get("outcome") in ("passed", "failed", "skipped"):
            ph = phases.setdefault(str(ev.get("nodeid")), {})
            when = str(ev.get("when"))
            # a failed call report (a failed subtest) is not undone by a later passing one
            if not (when == "call" and ph.get(when, {}).get("outcome") == "failed"):
                ph[when] = ev
        elif kind == "collect_error":
            key = str(ev.get("path") or ev.get("nodeid") or "")
            collection_errors[key] = str(ev.get("message") or "collection failed")
        elif kind == "collected":
            collected = max(collected or 0, int(ev.get("count") or 0))
    outcomes = {nodeid: _outcome(ph) for nodeid, ph in phases.items()}
    timeouts = [n for n, ph in phases.items() if any(e.get("timeout") for e in ph.values())]
    skips = {n: str(ev["message"]).removeprefix("Skipped: ") for n, ph in phases.items() if outcomes[n] == "skipped"
             for ev in ph.values() if ev.get("outcome") == "skipped" and ev.get("message")}
    return Parsed(outcomes, collection_errors, collected, timeouts, found=True, started=started,
                   skip_reasons=skips, finished=finished, ignored=ignored), [line for line, _ in counted]


def _outcome(ph: Mapping[str, Mapping[str, Any]]) -> str:
    """One id's outcome from its phase events (``setup``/``call``/``teardown``)."""
    call = ph.get("call")
    if call is not None:
        outcome, xfail = call.get("outcome"), bool(call.get("xfail"))
        if outcome == "passed":
            return "xpassed" if xfail else "passed"
        if outcome == "skipped":
            return "xfailed" if xfail else "skipped"
        return "failed"
    setup = ph.get("setup")
    if setup is not None and setup.get("outcome") == "skipped":
        return "xfailed" if setup.get("xfail") else "skipped"
    # setup failed, or setup passed and the call never reported (interrupted), or teardown only
    return "error"


def read_junit(path: Path) -> Parsed:
    """:func:`parse_junit` of the file ``path``, read without following a link (a missing, unreadable
    or special file gives ``found=False``)."""
    p = Path(path)
    try:
        data = nofollow.read_bytes(p.parent, p.name, limit=MAX_EVENT_BYTES)
    except OSError:
        return Parsed({}, {}, None, [], found=False, started=False)
    return parse_junit(data)


def parse_junit(data: bytes | None) -> Parsed:
    """Parse JUnit XML (``None``: none was written): id = ``classname::name`` (``name`` when there is
    no classname).

    ``<failure>`` → failed, ``<error>`` → error, ``<skipped type="pytest.xfail">`` → xfailed,
    other ``<skipped>`` → skipped, else passed. A pytest-style collection failure (a testcase
    whose ``<error message="collection failure">``) is a collection error keyed by its name.
    """
    if data is None:
        return Parsed({}, {}, None, [], found=False, started=False)
    try:
        root = ET.fromstring(data)
    except (ET.ParseError, LookupError, ValueError):  # the test process can write this file (atk19): an
        # unknown encoding (LookupError) or a multi-byte one (ValueError) in its XML declaration raised on the host
        return Parsed({}, {}, None, [], found=False, started=False)
    outcomes: dict[str, str] = {}
    collection_errors: dict[str, str] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        test_id = f"{classname}::{name}" if classname else name
        failure, error, skipped = case.find("failure"), case.find("error"), case.find("skipped")
        if error is not None and (error.get("message") or "") == "collection failure":
            # its last line; a blank text (the test process can write this file: atk19) is no IndexError
            lines = (error.text or "").strip().splitlines()
            collection_errors[name] = (lines[-1] if lines else "collection failure")[:500]
            continue
        if failure is not None:
            outcomes[test_id] = "failed"
        elif error is not None:
            outcomes[test_id] = "error"
        elif skipped is not None:
            outcomes[test_id] = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            outcomes[test_id] = "passed"
    return Parsed(outcomes, collection_errors, len(outcomes), [], found=True, started=True, finished=True)
