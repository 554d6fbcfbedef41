"""The pytest side of :mod:`pytest_homefield.terminal.progress`: hooks that feed a :class:`Progress` from the
controller's reports and draw its line through pytest's terminal reporter (see that module), put
subjects beside ``-v`` lines and give JUnit XML a readable ``name``."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _pytest.junitxml import xml_key  # the stash key record_xml_attribute uses; pytest has no public one

from pytest_homefield.records import REJECTED_PREFIX, UNSOLVED_PREFIX, counts_solved, flagged_solve, one_line
from pytest_homefield.terminal.progress import HEARTBEAT_S, Progress, display_width, plural

__all__ = ["Heartbeat", "InertReasons", "ProgressHooks", "end_open_line", "heartbeat_s", "heartbeat_while", "on_ci",
           "run_family"]

#: The environment variable setting the seconds between heartbeat lines (:data:`HEARTBEAT_S`).
HEARTBEAT_VAR = "HOMEFIELD_HEARTBEAT_S"


def heartbeat_s(environ: Any = None) -> float:
    """The seconds between heartbeat lines: ``HOMEFIELD_HEARTBEAT_S`` (a number of seconds; ``0``: none), else
    :data:`HEARTBEAT_S`. Raises :class:`pytest.UsageError` (one line) for a value that is no number of seconds."""
    text = (os.environ if environ is None else environ).get(HEARTBEAT_VAR, "").strip()
    if not text:
        return HEARTBEAT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise pytest.UsageError(f"{HEARTBEAT_VAR}={text!r}: expected the seconds between heartbeat lines, e.g. 60 "
                                "(0: none)")
    return value


def on_ci(environ: Any = None) -> bool:
    """Whether the session runs on a CI host (``CI`` set and not ``false`` or ``0``, as GitHub Actions, GitLab
    and most others set it): its log is read as a file, even where the job's output is a terminal."""
    return str((os.environ if environ is None else environ).get("CI", "")).strip().lower() not in ("", "false", "0")


#: What a mine's heartbeat names while it reads history, before it has candidates (:func:`heartbeat_while`).
SCAN_LABEL = "scan of history (listing candidates)"


@contextlib.contextmanager
def heartbeat_while(config: pytest.Config, kind: str, label: str, *,
                    clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """While the block runs, in a log (no live line: :class:`ProgressHooks`' rule), a daemon thread writes a heartbeat
    line ``homefield <kind> 0/? · 1m05s · ETA ? · running <label> for 1m05s`` to stdout once no line was written
    for ``HOMEFIELD_HEARTBEAT_S`` seconds (:func:`heartbeat_s`), never more often: the shape of
    :class:`ProgressHooks`' heartbeat, for the work before a session has items (ops41: a mine's scan of history,
    minutes on a big repository, was silent, and CI hosts kill a job silent for 10 minutes). Nothing on a terminal
    that redraws the line, with ``-q`` or ``HOMEFIELD_HEARTBEAT_S=0``. The thread is stopped and joined when the
    block ends, also by an exception. Raises :class:`pytest.UsageError` for a bad ``HOMEFIELD_HEARTBEAT_S``."""
    every = heartbeat_s()
    tr = config.pluginmanager.get_plugin("terminalreporter")
    tty = bool(getattr(tr, "isatty", False)) if tr is not None else sys.stdout.isatty()
    if not every or (tty and config.get_verbosity() == 0 and not on_ci()) or config.get_verbosity() < 0:
        yield
        return
    try:  # no capture holds stdout while pytest configures (a session's items run under it: ProgressHooks)
        sys.stdout.flush()
        out = os.dup(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file behind stdout (an in-process session of a test)
        yield
        return
    progress = Progress(kind, clock=clock)
    progress.start(kind, label)
    beat = Heartbeat(progress, every, out, writer=lambda: getattr(tr, "_tw", None))
    thread = threading.Thread(target=beat.run, name="homefield-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        beat.stop.set()
        thread.join(timeout=5)
        os.close(out)


class Heartbeat:
    """The loop of a heartbeat thread, one for :class:`ProgressHooks` (while items run) and :func:`heartbeat_while`
    (before a session has items): every ``min(1, every / 2)`` seconds until :attr:`stop` is set, when
    ``progress`` says a heartbeat is due (:meth:`Progress.heartbeat_due`: an item in flight and no line for ``every``
    seconds), it writes ``homefield <progress line> for 6m30s`` and a newline to the file descriptor ``out`` (a copy
    of stdout: in-process items run under pytest's output capture). ``writer()``: pytest's terminal writer, or
    ``None``; ``flush``: whether what it holds is written first (nothing captures stdout: the xdist controller, ``-s``,
    pytest's configuring). A line that writer left open (progress letters) is ended first, once: the writer does
    not see this line, so it counts its line as open until it writes again. ``lock``: held around each check and
    write (the owner's lock of ``progress``, which is not thread-safe). The loop ends at :attr:`stop` (``stop``: the
    owner's event, else a new one), or when ``out`` is gone (a closed pipe: nothing to keep alive)."""

    def __init__(self, progress: Progress, every: float, out: int, *, writer: Callable[[], Any] = lambda: None,
                 flush: Callable[[], bool] = lambda: True, lock: threading.RLock | None = None,
                 stop: threading.Event | None = None) -> None:
        self.progress, self.every, self.out = progress, every, out
        self.writer, self.flush = writer, flush
        self.lock = lock or threading.RLock()
        self.stop = stop or threading.Event()
        self._ended_width: int | None = None

    def run(self) -> None:
        while not self.stop.wait(min(1.0, self.every / 2)):
            with self.lock:
                if self.stop.is_set() or not self.progress.heartbeat_due(self.every):
                    continue
                tw: Any = self.writer()
                if tw is not None and self.flush():  # what pytest wrote goes first
                    tw.flush()
                open_width = int(getattr(tw, "width_of_current_line", 0) or 0) if tw is not None else 0
                start = "\n" if open_width != 0 and open_width != self._ended_width else ""
                self._ended_width = open_width
                text = f"{start}homefield {self.progress.line(how_long=True)}\n"
                try:
                    os.write(self.out, text.encode("utf-8", "replace"))
                except OSError:  # the log is gone (a closed pipe): nothing to keep alive
                    return


def end_open_line(tr: Any) -> None:
    """End a line pytest or xdist left open on the terminal reporter ``tr`` (progress letters, a status being
    rewritten), so that the next line starts a line of its own."""
    tw: Any = getattr(tr, "_tw", None)
    # -1 (wcswidth of a line holding "\r", as xdist's status rewrites leave it) is an open line too
    if tw is not None and int(getattr(tw, "width_of_current_line", 0) or 0) != 0:
        tw.line()


def _result(report: pytest.TestReport) -> dict[str, Any] | None:
    """The attempt's result record an item of a run or an ablation carries (its ``homefield.result`` property, a
    ``results.jsonl`` line's dict), or ``None``."""
    for key, value in report.user_properties:
        if key == "homefield.result":
            try:
                record = json.loads(str(value))
            except ValueError:
                return None
            return record if isinstance(record, dict) else None
    return None


def _status(kind: str, report: pytest.TestReport) -> str | None:
    """An item's status from one of its reports, or ``None`` when this report does not decide it. A run's attempt
    is ``solved`` when the report will count it solved (``records.counts_solved``, the one rule: a solve flagged
    ``suspicious`` too, whose item, a pass/fail line, is unsolved; cnt62), else ``unsolved`` when its item is."""
    if report.when == "setup":
        if report.failed:
            return "error" if kind == "mine" else "infra"
        if report.skipped:
            return "dropped" if kind == "mine" else "skipped"
        return None
    if report.when == "call":
        if report.passed:
            return "kept" if kind == "mine" else "solved"
        if report.failed:
            return "error"
        if kind == "run" and hasattr(report, "wasxfail"):
            record = _result(report)
            return "solved" if record is not None and counts_solved(record) else "unsolved"
        if kind == "mine":  # a candidate a bound left unverified is skipped, not dropped
            why = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
            return "dropped" if REJECTED_PREFIX in why else "skipped"
        return "skipped"
    if report.failed:  # a teardown error
        return "error"
    return None


def _junit_key() -> Any:
    """pytest's stash key of its JUnit XML writer (what the ``record_xml_attribute`` fixture uses)."""
    return xml_key


def _why(report: pytest.TestReport) -> str:
    """`` (empty patch)``: why an item did not pass, from its skip or xfail reason."""
    reason = getattr(report, "wasxfail", None)
    if reason is None and report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
    if not reason:
        return ""
    reason = str(reason)
    if reason.startswith((UNSOLVED_PREFIX, REJECTED_PREFIX)):
        reason = reason.split(": ", 1)[-1]
    # only the reason's code reads with spaces (tests_failed -> tests failed); its detail keeps test ids
    # and paths verbatim, so that they can be copied (issue 35)
    code, sep, detail = reason.partition(" (")
    if " " in code or ":" in code:
        return f" ({reason})"
    return f" ({code.replace('_', ' ')}{sep}{detail})"


class InertReasons:
    """One pytest hook on the controller, in every mode: a homefield item's skip or xfail reason is made
    :func:`~pytest_homefield.records.one_line` before pytest's terminal summary, its ``-v`` line, JUnit XML
    or any other plugin reads it. A reason can quote a commit's words (a setup log's line, a patch's
    path, a test id) or an agent's; whichever raised it, no ESC sequence, carriage return or U+202E of
    theirs reaches the terminal (host29)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "homefield" not in report.keywords:
            return
        reason = getattr(report, "wasxfail", None)
        if isinstance(reason, str):
            report.wasxfail = one_line(reason)
        if report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
            path, lineno, text = report.longrepr
            report.longrepr = (path, lineno, one_line(str(text)))


def run_family(nodeid: str) -> str:
    """The ETA's family of a run item (``<file>::<task>::<agent>[<n>]``, an ablation's ``…::<variant>::<task>::…``):
    its agent, the last ``::`` part without ``[<n>]``; ``""`` for another node id."""
    name, bracket, _ = nodeid.rpartition("::")[2].partition("[")
    return name if bracket else ""


class ProgressHooks:
    """pytest hooks that feed a :class:`Progress` from the controller's reports and draw it.

    ``label_for(nodeid)`` names an item for people (id and subject); ``subject_for(nodeid)`` gives its
    subject alone (``""`` when unknown); ``size_for(nodeid)`` its size for the ETA (:class:`Progress` ``size``: a
    mine's candidate's test bytes), ``None`` when unknown. Register only on the controller.

    The live line is also redrawn every ``tick_s`` seconds by a daemon thread, so elapsed time moves
    while long items run (the xdist controller waits on its workers without calling any hook); only
    under xdist or ``-s`` (see :meth:`_may_tick`). Our draws hold a lock; pytest's own writes happen
    between items, and a letter that lands inside the line is overwritten at the next redraw. The
    thread stops before pytest prints its summary.

    Without the live line (a log) a second daemon thread writes a heartbeat line (``homefield <line> · running
    ITEM for 6m30s``) when no line was written for ``HOMEFIELD_HEARTBEAT_S`` seconds (:func:`heartbeat_s`)
    while an item runs, never more often (ops40: a log stayed silent 6.5 min while one candidate was verified,
    and CI hosts kill a job silent for 10). It writes to a copy of the session's stdout taken at its start
    (``os.dup``): in-process items run under pytest's output capture, which would swallow a line written
    to stdout while they run.
    """

    tick_s = 1.0

    def __init__(self, config: pytest.Config, kind: str, *, label_for: Callable[[str], str],
                 subject_for: Callable[[str], str], budget_usd: float | None = None,
                 full_total: int | None = None, clock: Callable[[], float] = time.monotonic,
                 selected_line: Callable[[list[str]], str] | None = None, name: str | None = None,
                 goal: tuple[str, int] | None = None, budget_s: float | None = None,
                 size_for: Callable[[str], float | None] | None = None) -> None:
        self.config = config
        self.kind = kind
        self.label_for = label_for
        self.subject_for = subject_for
        #: the line saying what the collected items will run (``homefield verify``: its header counts none)
        self.selected_line = selected_line
        # a run's items of one task (its agents and attempts) take about as long as each other: the ETA's groups
        # (its families: its agents, nu43: noop's second said nothing of the oracle's grading)
        group = (lambda nodeid: nodeid.rsplit("::", 1)[0]) if kind == "run" else None
        self.progress = Progress(kind, budget_usd=budget_usd, clock=clock, name=name, goal=goal, budget_s=budget_s,
                                 group=group, family=run_family if kind == "run" else None, size=size_for)
        self._status: dict[str, str] = {}
        self._cost: dict[str, float] = {}
        self._reused: set[str] = set()
        #: items whose solve is flagged ``suspicious`` (counted solved, said apart: ``solved N (K flagged)``)
        self._flagged: set[str] = set()
        self._drawn = False
        self._announced = False
        self._subject_shown: set[str] = set()
        self.full_total = full_total
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.heartbeat_s = heartbeat_s()
        self._heartbeat: threading.Thread | None = None
        self._out_fd: int | None = None

    def eta_s(self) -> float | None:
        """The seconds left the line's ``ETA`` says (:meth:`Progress.eta_s`), ``None`` for ``ETA ?``."""
        with self._lock:
            return self.progress.eta_s()

    # -- where and how to draw ----------------------------------------------------------------
    @property
    def tr(self) -> Any:
        return self.config.pluginmanager.get_plugin("terminalreporter")

    @property
    def live(self) -> bool:
        """A line redrawn in place: on a terminal, at verbosity 0, not on a CI host (:func:`on_ci`)."""
        tr = self.tr
        return bool(tr is not None and getattr(tr, "isatty", False) and self.config.get_verbosity() == 0
                    and not on_ci())

    def _width(self) -> int:
        tw = getattr(self.tr, "_tw", None)
        return int(getattr(tw, "fullwidth", 80) or 80)

    def _padded(self) -> str:
        """The line cut to the terminal's width and padded with spaces to one column short of it, counted
        in columns: pytest's own ``erase`` pads by characters, so a line with wide characters (CJK, emoji)
        would wrap and each redraw would leave a stale copy above it."""
        width = self._width()
        line = self.progress.line(width)
        return line + " " * max(0, width - 1 - display_width(line))

    def _draw(self) -> None:
        tr = self.tr
        if tr is None or not self.live:
            return
        with self._lock:
            if self._stop.is_set() and self._ticker is not None:
                return
            tr.rewrite(self._padded(), erase=False)
            tr.flush()
            self._drawn = True
        if self._ticker is None and self._may_tick():
            self._ticker = threading.Thread(target=self._tick, name="homefield-progress", daemon=True)
            self._ticker.start()

    def _may_tick(self) -> bool:
        """Ticks only where nothing captures the terminal while an item runs: on the xdist controller
        (items run in workers) or with ``-s``. In-process items run under pytest's output capture,
        which would swallow the line (and show it as the item's captured output)."""
        return bool(self.config.pluginmanager.get_plugin("dsession") is not None
                    or self.config.getoption("capture", "fd") == "no")

    def _tick(self) -> None:
        while not self._stop.wait(self.tick_s):
            with self._lock:
                if self._stop.is_set():
                    return
                tr = self.tr
                if tr is not None:
                    tr.rewrite(self._padded(), erase=False)
                    tr.flush()

    def _stop_ticker(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        if self._heartbeat is not None:
            self._heartbeat.join(timeout=5)
        with self._lock:
            if self._out_fd is not None:
                os.close(self._out_fd)
                self._out_fd = None

    def _start_heartbeat(self) -> None:
        """Start the heartbeat thread (class docstring) once, where a line is written as plain lines."""
        if (self._heartbeat is not None or self._out_fd is None or not self.heartbeat_s or self.live
                or self.config.get_verbosity() < 0 or self._stop.is_set()):
            return
        beat = Heartbeat(self.progress, self.heartbeat_s, self._out_fd, writer=lambda: getattr(self.tr, "_tw", None),
                         flush=self._may_tick, lock=self._lock, stop=self._stop)  # one stop: :meth:`_stop_ticker`
        self._heartbeat = threading.Thread(target=beat.run, name="homefield-heartbeat", daemon=True)
        self._heartbeat.start()

    def _newline_if_needed(self) -> None:
        end_open_line(self.tr)

    def _plain(self) -> None:
        tr = self.tr
        if tr is None or self.config.get_verbosity() < 0:
            return
        self._newline_if_needed()  # after pytest's progress letters
        tr.write_line(f"homefield {self.progress.line()}")

    # -- hooks --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        tr = self.tr
        if tr is not None and self.live and hasattr(tr, "_show_progress_info"):
            tr._show_progress_info = False  # our line carries the count; pytest's would break it
        if tr is not None and not self.live and self.heartbeat_s and self._out_fd is None:
            try:  # stdout itself, as no capture holds it between pytest's phases (class docstring)
                tr.flush()
                self._out_fd = os.dup(sys.stdout.fileno())
            except (OSError, ValueError, AttributeError):  # no file behind stdout (a test's in-process session)
                self._out_fd = None

    def _set_total(self, n: int, full: int | None, ids: list[str] | None = None) -> None:
        self.progress.set_total(n, ids)
        tr = self.tr
        if self.selected_line is not None and ids is not None:
            if not self._announced and tr is not None:
                self._announced = True
                self._newline_if_needed()
                tr.write_line(self.selected_line(ids))
            return
        if full is not None and n < full and not self._announced and tr is not None:
            self._announced = True
            noun = "candidate" if self.kind == "mine" else "attempt"
            self._newline_if_needed()
            tr.write_line(f"homefield: {n} of {plural(full, noun)} selected (-k, -m, --lf or node ids)")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._set_total(len(session.items), self.full_total, [i.nodeid for i in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._set_total(len(ids), self.full_total, list(ids))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        with self._lock:
            self.progress.start(nodeid, self.label_for(nodeid))
        self._draw()
        self._start_heartbeat()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Before JUnit XML records the item: its ``name`` attribute says what the item is, in
        words (``noop[1]: Add neg() returning the negation of a``); ``classname`` keeps the ids."""
        if "homefield" not in report.keywords or report.when != "setup":
            return
        xml = self.config.stash.get(_junit_key(), None)
        subject = self.subject_for(report.nodeid)
        if xml is None or not subject:
            return
        last = report.nodeid.rsplit("::", 1)[-1]
        xml.node_reporter(report).add_attribute("name", f"{last}: {subject}")

    @pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_count(self, report: pytest.TestReport) -> None:
        if "homefield" not in report.keywords:
            return
        status = _status(self.kind, report)
        if status is not None and (report.nodeid not in self._status or status == "error"):
            self._status[report.nodeid] = status
            record = _result(report) if status == "solved" and self.kind == "run" else None
            if record is not None and flagged_solve(record):
                self._flagged.add(report.nodeid)
        for key, value in report.user_properties:
            if key == "homefield.cost_usd" and value is not None:
                self._cost[report.nodeid] = float(value)  # type: ignore[arg-type]
            if key == "homefield.reused" and value:
                self._reused.add(report.nodeid)
        if status is not None and self.config.get_verbosity() > 0 and self.tr is not None:
            self._subject_after_line(report)

    def _subject_after_line(self, report: pytest.TestReport) -> None:
        """With ``-v``: the subject beside pytest's line for the item (same line under xdist, where
        the line ends with the node id; the next line otherwise, where it ends with the count)."""
        subject = one_line(self.subject_for(report.nodeid))  # a commit's ESC sequences shown, not played
        if not subject or report.nodeid in self._subject_shown:
            return
        self._subject_shown.add(report.nodeid)
        tr = self.tr
        if hasattr(report, "node"):  # xdist: pytest's line ends with the node id, and shows no reason
            tr.write(f" {subject}{_why(report)}")
        else:  # pytest's line ends with the reason and the count
            tr.write(f"\n    {subject}")

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        status = self._status.pop(nodeid, None)
        self._subject_shown.discard(nodeid)
        if status is None:
            self._flagged.discard(nodeid)
            with self._lock:
                self.progress.drop(nodeid)
            return
        reused = nodeid in self._reused
        self._reused.discard(nodeid)
        flagged = nodeid in self._flagged and status == "solved"
        self._flagged.discard(nodeid)
        stopped = self.kind == "mine" and status == "skipped"  # a bound left this candidate unverified
        with self._lock:
            self.progress.finish(nodeid, status, self._cost.pop(nodeid, None), fresh=not reused and not stopped,
                                 stopped=stopped, flagged=flagged)
            if self.live:
                self._draw()
            elif self.progress.periodic_due():
                self._plain()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        tr = self.tr
        if tr is None:
            return
        self._stop_ticker()
        if self._drawn:
            self.progress.in_flight.clear()
            tr.rewrite(self._padded(), erase=False)
            tr.write("\n")
            tr.currentfspath = None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._stop_ticker()
