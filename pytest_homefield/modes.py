"""The contract of a mode (mine, run, probe, ablate) with pytest (docs/contracts.md §4, §5).

Each mode has a *session* (:class:`ModeSession`: one process's view of it, without pytest; the
controller builds it with the mode's ``start`` before workers start, an xdist worker with ``join``
from :meth:`ModeSession.workerinput`) and a *plugin* (a :class:`ModePlugin`: the pytest hooks over
the session, one instance per process, registered by :mod:`pytest_homefield.plugin`).

:class:`ModePlugin` holds the hooks every mode repeats, each a few lines over template methods the
mode fills in: collecting the items from the session's :attr:`~ModeSession.collect_path` with the
mode's :attr:`~ModePlugin.collector`, handing each report that reaches the controller to
:meth:`~ModePlugin.on_report` (the records themselves travel and are written by
:mod:`pytest_homefield.transport`, the one writer), closing the session and finishing it on the
controller (:meth:`~ModePlugin.finish`), and the terminal summary (:meth:`~ModePlugin.write_summary`).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any, ClassVar, Protocol

import pytest

from pytest_homefield.collect import collected_index, is_worker
from pytest_homefield.sandbox.services import close_pools
from pytest_homefield.settings import Settings
from pytest_homefield.transport import REFUSED_ATTR, Scope

__all__ = ["ModeSession", "ModePlugin", "ModeFile"]


class ModeSession(Protocol):
    """One process's view of a mode's session (mine, run, probe, ablate), without pytest.

    ``settings`` are the resolved settings; :attr:`collect_path` is the frozen file the mode's items
    are collected from (``tasks.jsonl``, ``candidates.jsonl``, ``plan.json``); :meth:`workerinput`
    is what a worker needs to join the controller's session (JSON-able); :meth:`close` frees what
    this process made (snapshots)."""

    settings: Settings

    @property
    def collect_path(self) -> Path:
        """The file the mode's items are collected from (docs/contracts.md §5)."""
        ...

    def workerinput(self) -> dict[str, Any]:
        """What an xdist worker needs to join this session (JSON-able)."""
        ...

    def close(self) -> None:
        """Free what this process made for the session."""
        ...


class ModeFile(pytest.File):
    """The collector of a mode's :attr:`ModeSession.collect_path`; ``plugin`` is the mode's plugin."""

    def __init__(self, *, plugin: ModePlugin, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin


class ModePlugin:
    """The pytest hooks every mode's plugin repeats, over the session :meth:`active` returns. A mode
    sets :attr:`collector` and fills in :meth:`active`, and where it has something to do
    :meth:`on_report`, :meth:`status`, :meth:`finish`, :meth:`write_summary` and :meth:`resume_hint`."""

    #: the collector class of :attr:`ModeSession.collect_path`
    collector: ClassVar[type[ModeFile]]

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings

    @property
    def is_worker(self) -> bool:
        """True in an xdist worker."""
        return is_worker(self.config)

    # -- what a mode fills in ---------------------------------------------------------------------
    def active(self) -> ModeSession | None:
        """This process's session, ``None`` while there is none (an ablation that only plans)."""
        raise NotImplementedError

    def on_report(self, report: pytest.TestReport) -> None:
        """A report that reached the controller (or the only process), after the transport wrote its
        records. Nothing by default."""

    def message_scope(self, nodeid: str) -> Scope | None:
        """On the controller: what the item ``nodeid`` of this session may have written
        (:class:`~pytest_homefield.transport.Scope`, from the mode's own plan, hatk36), ``None`` when it is
        no item this session would run. ``None`` by default: a mode sends nothing unless it says what."""
        return None

    def status(self, report: pytest.TestReport) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        """``pytest_report_teststatus`` of an item of this mode, ``None`` for pytest's own."""
        return None

    def finish(self, session: pytest.Session) -> None:
        """The controller's end of the pytest session (after :meth:`ModeSession.close`). Nothing by default."""

    def write_summary(self, terminalreporter: Any) -> None:
        """The controller's terminal summary. Nothing by default."""

    def resume_hint(self) -> str | None:
        """The command continuing this session after it stopped (a full disk), or ``None``."""
        return None

    def workerinput(self) -> dict[str, Any]:
        """What the controller sends each xdist worker (:meth:`ModeSession.workerinput`; ``{}`` without a session)."""
        session = self.active()
        return session.workerinput() if session is not None else {}

    def on_interrupt(self) -> bool:
        """A Ctrl-C (SIGINT) ended the test loop on the controller (:meth:`pytest_runtestloop`): note it as the
        mode's own stop and return ``True`` to end the session as usual (its summary, exit status 2, no
        ``KeyboardInterrupt`` banner or traceback), ``False`` to let it go on as pytest's interruption (the
        default; mine's fail-fast, whose own stop ends the loop this way too)."""
        return False

    def item_order(self, item: pytest.Item) -> tuple[int, ...]:
        """A mode's own order of its items, before their collection order (``--adaptive``'s rounds). ``()``
        by default: the collection order alone."""
        return ()

    # -- the hooks --------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, None, None]:
        """After every other plugin (the outermost wrapper): homefield's items back in the mode's order
        (:meth:`item_order`, then the collection order), stable and the same in every xdist worker. The
        order is the product's (mining verifies newest first, so ``--stop-after-tasks`` keeps the newest;
        an ablation runs a task's variants together; ``--adaptive`` runs in rounds), yet pytest-randomly,
        installed beside many repositories' tests, shuffled homefield's items too (structlog: a mine at
        ``-n 0`` verified its newest candidate third)."""
        result = yield
        if all(collected_index(i) is not None for i in items):
            items.sort(key=lambda i: (self.item_order(i), collected_index(i)))
        return result

    #: set when :meth:`pytest_runtestloop` caught a Ctrl-C the mode took as its own stop (:meth:`on_interrupt`)
    stopped_by_ctrl_c: bool = False

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """A Ctrl-C (at ``-n 0`` in an item, under xdist in the controller's loop) ends the loop here on the
        controller when the mode takes it (:meth:`on_interrupt`): the session then finishes as usual, the
        mode's summary the last thing it prints, with exit status 2 (``INTERRUPTED``, set before
        :meth:`finish`, which may set another) and none of pytest's ``!!! KeyboardInterrupt !!!`` banner or
        its traceback line, which pytest prints only for an interruption that leaves the session. One
        mechanism for every mode (lbl35: ``homefield verify`` printed them, ``homefield mine`` did not)."""
        try:
            return (yield)
        except KeyboardInterrupt:
            if self.is_worker or not self.on_interrupt():
                raise
            self.stopped_by_ctrl_c = True
            xdist = self.config.pluginmanager.getplugin("homefield-xdist")
            if xdist is not None:  # the workers stopped now, as pytest's interruption stops them
                xdist.pytest_keyboard_interrupt(None)
            return True

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        session = self.active()
        if session is not None and file_path.resolve() == session.collect_path.resolve():
            return self.collector.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        return self.status(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.is_worker and not getattr(report, REFUSED_ATTR, None):  # a refused report is not its item's
            self.on_report(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        active = self.active()
        if active is not None:
            active.close()
        close_pools()  # this process's service instances (docs/contracts.md §7 "Services")
        if not self.is_worker:
            if self.stopped_by_ctrl_c:
                session.exitstatus = pytest.ExitCode.INTERRUPTED
            self.finish(session)

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if not self.is_worker:
            self.write_summary(terminalreporter)
