"""The mine controller's SIGINT and SIGTERM (docs/contracts.md §4 "An interrupted mine").

The first of either ends the mine as a Ctrl-C does: ``KeyboardInterrupt`` is raised where the controller
is (an item's test run at ``-n 0``, xdist's loop), the running test runs and the workers are stopped, and
the session ends: the verification records finished so far stay in ``results.jsonl``, ``tasks.jsonl`` is
written atomically with the tasks kept, the summary ends the output, and the exit status is 2. Before,
SIGTERM took the every-mode stop handler (:func:`~pytest_homefield.sandbox.procs.install_stop_handler`):
exit 143 at once, no summary, no ``tasks.jsonl``.

Every later SIGINT or SIGTERM raises nothing: the session end is never cut (mint46: a second Ctrl-C during
it, as ``pkill -INT`` then ``timeout`` send, printed a traceback and wrote no ``tasks.jsonl``). Each kills
the xdist workers at once (SIGKILL; their reapers die with them and kill their test runs' trees), what may
still hold the end up. At ``-n 0`` the first signal's ``KeyboardInterrupt`` already stops the test run in
flight (:func:`~pytest_homefield.sandbox.procs.run_process`); the handler takes no lock, so it never
waits on the code it interrupted.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence

from pytest_homefield.sandbox.procs import signal_processes

__all__ = ["StopSignals", "signal_name"]

#: What a mine's summary and ``meta.json``'s ``stopped.detail`` call each signal.
_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


def signal_name(signum: int | None) -> str:
    """``"Ctrl-C"`` for SIGINT (and ``None``: a ``KeyboardInterrupt`` no handler of ours saw), ``"SIGTERM"`` for
    SIGTERM, ``"Ctrl-C"`` for any other signal. Raises ``ValueError`` for a number that is no signal's."""
    return _NAMES.get(signal.Signals(signum), "Ctrl-C") if signum is not None else "Ctrl-C"


class StopSignals:
    """The handler of SIGINT and SIGTERM in a mine's controller. ``worker_pids()``: the pids of the xdist workers
    (none at ``-n 0``). ``first``: the first signal's number (``None`` until one came); ``late``: how many came
    after it."""

    def __init__(self, worker_pids: Callable[[], Sequence[int]]) -> None:
        self._worker_pids = worker_pids
        self.first: int | None = None
        self.late = 0

    @property
    def detail(self) -> str:
        """The first signal as the summary names it (:func:`signal_name`)."""
        return signal_name(self.first)

    def install(self) -> Callable[[], None]:
        """Handle SIGINT and SIGTERM in this process; returns the function putting the previous handlers back,
        unless a signal came: then the process is ending, and the function makes both ignored instead (Python's
        finalization resets a handler of its own to the default, whose SIGINT killed the process before it flushed
        the summary; an ignored signal stays ignored). Outside the main thread (where Python installs no handler)
        it does nothing."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, old in previous.items():
                signal.signal(sig, old if self.first is None else signal.SIG_IGN)

        return restore

    def _handle(self, signum: int, frame: object) -> None:
        """The first signal: record it in :attr:`first` and raise ``KeyboardInterrupt``; each later one: count it in
        :attr:`late` and SIGKILL the xdist workers, raising nothing (the session end it lands in is never cut)."""
        if self.first is None:
            self.first = signum
            raise KeyboardInterrupt
        self.late += 1
        signal_processes(self._worker_pids(), signal.SIGKILL)
