"""``--homefield-mine``: one pytest item per frozen candidate commit (docs/contracts.md §4, §5, §7).

The controller scans history and freezes ``.homefield/mine/<mine_id>/candidates.jsonl`` before
workers start; every worker collects the same items from it. Each item verifies its candidate
(:func:`pytest_homefield.mine.pipeline.verify_and_record`), or reuses the record of an earlier
session made under the same verification inputs (:mod:`pytest_homefield.mine.reuse`, no test run);
its record travels with the report
and the controller appends it to ``mine/<mine_id>/results.jsonl`` (:mod:`pytest_homefield.transport`).
Kept → passed; dropped → skipped, shown as ``REJECTED``; harness failure → error. Only the
controller writes ``tasks.jsonl``, at the end of the session.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from pytest_homefield.collect import is_worker, mark_item, redirect_collection
from pytest_homefield.errors import RecordError, ScanError, StoreError
from pytest_homefield.mine.bounds import FAIL_FAST, INTERRUPTED, SETUP_BROKEN, Stop, continue_command
from pytest_homefield.mine.cost_order import cheapest_first
from pytest_homefield.mine.pipeline import MineSession, other_python_note, test_sandbox
from pytest_homefield.mine.stop_signals import StopSignals
from pytest_homefield.modes import ModeFile, ModePlugin
from pytest_homefield.records import REJECTED_PREFIX, one_line
from pytest_homefield.sandbox.bwrap import BwrapUnavailable
from pytest_homefield.sandbox.proccap import no_cap_note, no_cpu_share_note, no_memory_cap_note
from pytest_homefield.settings import Settings
from pytest_homefield.store import FolderLocked, read_jsonl
from pytest_homefield.terminal.hooks import SCAN_LABEL, heartbeat_while
from pytest_homefield.terminal.progress import plural
from pytest_homefield.transport import Scope, post

__all__ = ["MinePlugin", "CandidatesFile", "CandidateItem"]


class CandidatesFile(ModeFile):
    """``candidates.jsonl`` as a collector: one :class:`CandidateItem` per line, in file order (newest
    first); under ``--time-budget`` (without ``--max-tasks``, which keeps the newest N) cheapest first
    (:func:`~pytest_homefield.mine.cost_order.cheapest_first`)."""

    plugin: MinePlugin

    def collect(self) -> Any:
        rel = self.nodeid
        candidates = list(read_jsonl(self.path))
        settings = self.plugin.settings
        if settings.time_budget is not None and settings.mine_max_tasks is None:
            candidates = [dict(c) for c in cheapest_first(candidates)]
        for cand in candidates:
            name = cand["commit"][:12]
            item = CandidateItem.from_parent(self, name=name, nodeid=f"{rel}::{name}", candidate=cand)
            mark_item(item)
            yield item


class MinePlugin(ModePlugin):
    """The mine mode's pytest hooks over one :class:`MineSession`; one instance per process, created
    in ``pytest_configure``."""

    collector = CandidatesFile

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        super().__init__(config, settings)
        self.summary: list[str] = []
        #: why the session stops before its end (fail-fast, Ctrl-C); ``None`` while it goes on
        self.stop: Stop | None = None
        #: the node ids of the candidate items collection kept (``-k``, ``-m``, node ids; under xdist, from the
        #: workers' collections), ``None`` until known; and those that started: a ``-k`` mine's summary counts both
        self._collected: list[str] | None = None
        self._reached: set[str] = set()
        try:  # --sandbox bwrap where bubblewrap does not work: one line, before any work
            test_sandbox(settings)
        except BwrapUnavailable as exc:
            raise pytest.UsageError(f"pytest-homefield: {exc}") from None
        #: the controller's SIGINT / SIGTERM: the first ends the mine as a Ctrl-C, later ones never cut its end
        self.signals = StopSignals(self._worker_pids)
        if is_worker(config):
            self.session = MineSession.join(settings, config.workerinput)  # type: ignore[attr-defined]
        else:
            config.add_cleanup(self.signals.install())  # after guard_session's SIGTERM handler: it replaces it
            try:
                with heartbeat_while(config, "mine", SCAN_LABEL):  # a long scan of history says it works (ops41)
                    self.session = MineSession.start(settings)
            except FolderLocked as exc:  # another session mines this repository: exit 2, one line
                pytest.exit(str(exc), returncode=2)
            except KeyboardInterrupt:  # during the scan: nothing frozen, nothing verified
                pytest.exit(f"homefield mine: interrupted ({self.signals.detail}) during the scan of history: "
                            "nothing was verified and tasks.jsonl is unchanged; run the same command to start "
                            "again", returncode=2)
            except (RecordError, StoreError, ScanError, ValueError, OSError) as exc:
                raise pytest.UsageError(f"pytest-homefield: {exc}") from None
        if settings.list_candidates:
            config.args[:] = []
            return
        redirect_collection(config, self.session.collect_path)

    def active(self) -> MineSession:
        return self.session

    def _worker_pids(self) -> list[int]:
        """The pids of this controller's local xdist workers (``[]`` at ``-n 0``)."""
        xdist = self.config.pluginmanager.getplugin("homefield-xdist")
        return list(getattr(xdist, "worker_pids", ()))

    # -- names for people (progress line, verbose lines) ---------------------------------------
    def _subjects(self) -> dict[str, str]:
        if not hasattr(self, "_subject_by_id"):
            self._subject_by_id = {c["commit"][:12]: c["subject"] for c in read_jsonl(self.session.candidates_path)}
        return self._subject_by_id

    def message_scope(self, nodeid: str) -> Scope | None:
        """The candidate item ``nodeid`` (``<candidates.jsonl>::<commit[:12]>``) of this session's frozen
        candidates: its one verification record in ``mine/<id>/results.jsonl``, by ``id`` and full ``commit``
        (what ``tasks.jsonl`` is made from at the end); else ``None``."""
        if not hasattr(self, "_commit_by_id"):
            self._commit_by_id: dict[str, str] = {}
            for c in self.session.candidates():
                self._commit_by_id.setdefault(str(c["commit"])[:12], str(c["commit"]))
        name = nodeid.rsplit("::", 1)[-1]
        commit = self._commit_by_id.get(name) if nodeid.count("::") == 1 else None
        if commit is None:
            return None
        target = self.session.results_path.relative_to(self.session.home.path).as_posix()
        return Scope(appends={target: {"id": name, "commit": commit}}, label=f"candidate {name}")

    def item_subject(self, nodeid: str) -> str:
        """The commit subject of the candidate item ``nodeid`` (``""`` when unknown)."""
        return self._subjects().get(nodeid.rsplit("::", 1)[-1], "")

    def item_size(self, nodeid: str) -> float | None:
        """The bytes of the runnable test files of the candidate item ``nodeid`` (``candidates.jsonl``
        ``test_bytes``, what ``--time-budget`` orders by): the ETA weighs each candidate left by them
        (:meth:`~pytest_homefield.terminal.progress.Progress.pace`); ``None`` when unknown."""
        if not hasattr(self, "_bytes_by_id"):
            self._bytes_by_id: dict[str, float] = {
                str(c["commit"])[:12]: float(c["test_bytes"]) for c in read_jsonl(self.session.candidates_path)
                if isinstance(c.get("test_bytes"), (int, float)) and not isinstance(c.get("test_bytes"), bool)}
        return self._bytes_by_id.get(nodeid.rsplit("::", 1)[-1])

    def item_label(self, nodeid: str) -> str:
        """``<commit[:12]> <subject>`` for the progress line."""
        cid = nodeid.rsplit("::", 1)[-1]
        return f"{cid} {self._subjects().get(cid, '')}".strip()  # one_line'd by Progress.start

    def expected_items(self) -> int:
        """Items collected without -k/-m/node ids: one per frozen candidate."""
        return len(self._subjects())

    # -- collection ---------------------------------------------------------------------------
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if self.settings.list_candidates:
            return True  # collect nothing: --list-candidates runs no tests
        return None

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.session
        lines = [f"homefield mine: {plural(s.n_candidates, 'candidate')} frozen in "
                 f"{s.mine_dir.relative_to(self.settings.root)}"]
        boxed = {"test runs": test_sandbox(self.settings)}
        other = None if is_worker(config) else other_python_note(self.settings.test_cmd, env=self.settings.env)
        # no pids cgroup and no RLIMIT_NPROC way; no memory cgroup; no cpu cgroup
        return lines + [n for n in (other, no_cap_note(boxed), no_memory_cap_note(boxed),
                                    no_cpu_share_note(boxed)) if n]

    def status(self, report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        if report.when == "call" and report.skipped and "homefield" in report.keywords:
            msg = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""
            if REJECTED_PREFIX in msg:
                return "rejected", "r", ("REJECTED", {"yellow": True})
        return None

    # -- what a selection kept and reached (controller only) ------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items or self._collected is None:  # an xdist controller collects nothing itself
            self._collected = [i.nodeid for i in session.items]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self._collected:
            self._collected = list(ids)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self._reached.add(nodeid)

    # -- stopping early (controller only) -----------------------------------------------------
    def on_report(self, report: pytest.TestReport) -> None:
        if report.when != "call" or self.stop is not None or "homefield" not in report.keywords:
            return
        stop = self.session.check_fail_fast()
        if stop is not None:
            self.stop = stop
            self._stop_session(f"homefield mine: {'fail-fast: ' if stop.why == FAIL_FAST else ''}{stop.detail}")

    def _stop_session(self, why: str) -> None:
        """Run no more items: pytest's ``shouldstop`` (and xdist's controller loop's)."""
        session = getattr(self, "_pytest_session", None)
        if session is not None:
            session.shouldstop = why
        dsession = self.config.pluginmanager.getplugin("dsession")
        if dsession is not None:
            dsession.shouldstop = why

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._pytest_session = session

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        if self.stop is None:  # a Ctrl-C or SIGTERM (our own shouldstop ends the loop this way too)
            self.stop = Stop(INTERRUPTED, self.signals.detail)

    def on_interrupt(self) -> bool:
        """A Ctrl-C (or SIGTERM: :class:`~pytest_homefield.mine.stop_signals.StopSignals`) ends the loop as mine's
        own stop (:meth:`ModePlugin.pytest_runtestloop`); fail-fast's own stop goes on as pytest's interruption."""
        if self.stop is not None and self.stop.why != INTERRUPTED:
            return False
        self.stop = Stop(INTERRUPTED, self.signals.detail)
        return True

    # -- end of session (controller only) -----------------------------------------------------
    def finish(self, session: pytest.Session) -> None:
        try:
            self._finish(session)
        finally:
            if self.session.lock is not None:
                self.session.lock.release()

    def _finish(self, session: pytest.Session) -> None:
        if self.settings.list_candidates:
            self.summary = self.session.list_summary()
            session.exitstatus = pytest.ExitCode.OK
            return
        command = continue_command(pytest_args=self.config.invocation_params.args)
        opt = self.config.option
        selection = " ".join(f"{flag} {shlex.quote(expr)}" for flag, expr in
                             (("-k", str(getattr(opt, "keyword", "") or "")),
                              ("-m", str(getattr(opt, "markexpr", "") or ""))) if expr)
        self.summary = self.session.finish(verbose=self.config.get_verbosity() > 0, stop=self.stop, command=command,
                                           selection=selection, reached=len(self._reached),
                                           collected=None if self._collected is None else len(self._collected))
        if self.session.tasks_error is not None:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        if self.stop is not None and self.stop.why == INTERRUPTED:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
            return
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and self.session.n_candidates == 0:
            session.exitstatus = pytest.ExitCode.OK
        if self.stop is not None and self.stop.why in (FAIL_FAST, SETUP_BROKEN):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif (session.exitstatus == pytest.ExitCode.OK and self.session.n_candidates and not self.session.kept
              and self.settings.shard is None):
            if selection and self.session.n_tasks:
                # a -k / -m mine was asked for a verdict on the candidates it selects, and gave it; the task set
                # is whole (nu41: one dropped candidate said "No task kept: the exit status is 1" over 7 tasks)
                self.summary.append(f"No task kept by this mine ({plural(self.session.selected or 0, 'candidate')} "
                                    f"selected by {selection}); tasks.jsonl holds "
                                    f"{plural(self.session.n_tasks, 'task')}: the exit status is 0.")
                return
            # a mine that keeps nothing did not do what it was asked (a shard may hold no task)
            self.summary.append("No task kept: the exit status is 1.")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def write_summary(self, terminalreporter: Any) -> None:
        if not self.summary:
            return
        if self.stop is not None and self.stop.why == INTERRUPTED:
            self._deferred = terminalreporter  # after pytest's last line: the summary ends the output
            return
        self._write(terminalreporter)

    def _write(self, terminalreporter: Any) -> None:
        terminalreporter.section("homefield mine", sep="=", bold=True)
        for line in self.summary:
            terminalreporter.write_line(line)

    _deferred: Any = None

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """An interrupted mine's summary, the last lines printed (:meth:`write_summary` kept it)."""
        if self._deferred is not None:
            tr, self._deferred = self._deferred, None
            self._write(tr)


class CandidateItem(pytest.Item):
    """Verifies one candidate. A plain ``pytest.Item``: the repository's fixtures never wrap it."""

    def __init__(self, *, candidate: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.extra_keyword_matches.update({candidate["commit"][:12], "homefield"})

    @property
    def plugin(self) -> MinePlugin:
        return self.parent.plugin  # type: ignore[union-attr,no-any-return]

    def runtest(self) -> None:
        session = self.plugin.session
        verdict = session.verify(self.candidate, self.name)
        post(self, session.messages(verdict))
        if not verdict.verified:  # a bound, not a verdict on the commit: skipped, never "rejected"
            raise pytest.skip.Exception(f"not verified: {verdict.record.get('detail') or verdict.rejected}")
        if verdict.verified:
            self.user_properties.append(("homefield.subject", self.candidate["subject"]))
            self.user_properties.append(("homefield.reason", verdict.record["reason"] or "task"))
            self.user_properties.append(("homefield.fail_to_pass", verdict.record["FAIL_TO_PASS"]))
            self.user_properties.append(("homefield.reused", verdict.reused))
        if verdict.rejected is not None:
            raise pytest.skip.Exception(f"{REJECTED_PREFIX}{verdict.rejected}")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"homefield mine: {self.name} {one_line(self.candidate['subject'], 60)}"
