"""Bounds of a mining session and how it says it stopped early (issue 35, docs/contracts.md §4, §7).

A mine verifies its candidates newest first (under ``--time-budget`` cheapest first,
:mod:`pytest_homefield.mine.cost_order`). Three bounds leave candidates unverified on purpose:
``--stop-after-tasks N`` (no verification starts once N tasks are kept), ``--time-budget DURATION``
(none starts after the deadline, a wall-clock time shared by every xdist worker) and fail-fast
(:class:`FailFast`: the first K verified candidates all failed on the same collection error, so the
environment is broken and every other candidate would fail the same way). A Ctrl-C stops one
without warning. Each case is a :class:`Stop`; :func:`stop_lines` says it in the summary (how many
candidates were not verified, that ``tasks.jsonl`` is partial, the command that goes on) and
:func:`stop_meta` is what ``meta.json`` records under ``stopped``. Going on is the same command
again (after ``--stop-after-tasks`` with the bound raised, :func:`with_task_bound`): the candidates
already verified are reused (:mod:`pytest_homefield.mine.reuse`).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_homefield.records import one_line
from pytest_homefield.settings_table import option
from pytest_homefield.terminal.progress import fmt_duration, plural

__all__ = ["NOT_VERIFIED", "Stop", "FailFast", "failure_signature", "stop_lines", "stop_meta",
           "continue_command", "with_task_bound", "in_flight_line", "INTERRUPTED", "STOP_AFTER_TASKS",
           "TIME_BUDGET", "FAIL_FAST", "SETUP_BROKEN", "setup_broken_stop", "flag_in", "unfoldered"]

#: ``reason`` of the verification record of a candidate a bound left unverified (never reused, never merged).
NOT_VERIFIED = "not_verified"

INTERRUPTED = "interrupted"
STOP_AFTER_TASKS = "stop_after_tasks"
TIME_BUDGET = "time_budget"
FAIL_FAST = "fail_fast"
#: Setup failed on a candidate that is a task of ``tasks.jsonl``: the environment broke, not the commit (keep66).
SETUP_BROKEN = "setup_broken"


@dataclass(frozen=True)
class Stop:
    """Why a mine ended before verifying every candidate: ``why`` is one of :data:`INTERRUPTED`,
    :data:`STOP_AFTER_TASKS`, :data:`TIME_BUDGET`, :data:`FAIL_FAST`; ``detail`` one phrase for people
    (``"time budget 20m reached"``)."""

    why: str
    detail: str


def setup_broken_stop(record: Mapping[str, Any], *, setup_cmd: str | None, test_cmd: str) -> Stop:
    """The :data:`SETUP_BROKEN` stop for ``record``, a ``setup_failed`` verification record of a candidate that
    ``tasks.jsonl`` holds as a task (an earlier mine set it up and ran its tests): its detail names the failing
    command as configured (``setup_cmd``, or ``test_cmd`` when the test command produced no outcomes) and the
    failure's output as the record quotes it (keep66, usr46: a typo in ``setup_cmd`` dropped 6 of 11 tasks)."""
    detail = str(record.get("detail") or "setup failed")
    for name, cmd in (("setup_cmd", setup_cmd), ("the test command", test_cmd)):
        if cmd and detail.startswith(name):
            detail = f"{name} {shlex.quote(cmd)}{detail[len(name):]}"
            break
    return Stop(SETUP_BROKEN, f"setup failed on {record.get('id')}, a task an earlier mine verified in tasks.jsonl: "
                              f"{detail}")


def budget_detail(why: str, settings: Any) -> str:
    """The phrase of a bound's :class:`Stop` (``settings``: a :class:`~pytest_homefield.settings.Settings`)."""
    if why == STOP_AFTER_TASKS:
        # a record's detail: the CLI's spelling, whatever front end made it
        return f"{option('stop-after-tasks', 'cli')} {settings.stop_after_tasks} reached"
    if why == TIME_BUDGET:
        return f"time budget {settings.time_budget} reached"
    return why.replace("_", " ")


_IN_PARENS = re.compile(r"\(([^()]*(?:Error|error|No module)[^()]*)\)")

#: An absolute path in quotes: group 1 its last part.
_QUOTED_PATH = re.compile(r"'/[^'\n]*/([^'/\n]+)'")


def unfoldered(detail: str) -> str:
    """``detail`` with each absolute path it quotes cut to its last part, ``'…/.coverage'``: what two records of
    the same failure share where each run's folder is its own (nu52, arrow-py/arrow: 13 candidates dropped by the
    same ``[Errno 30] Read-only file system: '/dev/shm/hf-…/tmpab12/.coverage'``, one path per run, read
    ``Setup failed (1 candidate): …; 12 other candidates failed otherwise``)."""
    return _QUOTED_PATH.sub(r"'…/\1'", detail) if "'/" in detail else detail


def failure_signature(record: Mapping[str, Any]) -> str | None:
    """What a dropped candidate's failure has in common with others failing for the same broken
    environment, or ``None`` when it did not fail to collect or set up: the modules it could not import
    (``missing_modules``), else a ``setup_failed`` detail, else the error quoted in a ``reference_fails``
    detail about collection errors (file paths left out), each with the folders of the paths it quotes left out
    (:func:`unfoldered`): each candidate's runs have folders of their own, so the same failure quoting a file of
    the snapshot read as 8 different ones and fail-fast never stopped (nu54; nu52's arrow-py/arrow mine went on
    through 13 alike ``setup_failed`` drops)."""
    reason = record.get("reason")
    if reason not in ("reference_fails", "setup_failed"):
        return None
    if record.get("missing_modules"):
        return "No module named " + ", ".join(repr(str(m)) for m in record["missing_modules"])
    detail = str(record.get("detail") or "")
    if reason == "setup_failed":
        return unfoldered(detail) or None
    if "collection error" not in detail:
        return None
    # "collection errors at the parent and at the commit: PATHS (MESSAGE)": the message, whose own
    # parentheses (a file path in an ImportError) stay
    _, sep, message = detail.partition(" (")
    if sep and detail.endswith(")"):
        return unfoldered(message[:-1])
    m = _IN_PARENS.search(detail)
    return unfoldered(m.group(1)) if m else None


@dataclass
class FailFast:
    """Watches the first ``k`` verification records (in the order they finish, reused ones too): when
    all ``k`` failed with the same :func:`failure_signature`, :meth:`add` returns a :class:`Stop`.
    ``k == 0`` never stops."""

    k: int
    seen: list[str | None] = field(default_factory=list)
    fired: bool = False

    def add(self, record: Mapping[str, Any]) -> Stop | None:
        """Note one finished candidate's record; the :class:`Stop` when the first ``k`` agree."""
        if self.fired or self.k <= 0 or len(self.seen) >= self.k or record.get("reason") in (NOT_VERIFIED,
                                                                                              "max_tasks"):
            return None
        self.seen.append(failure_signature(record))
        first = self.seen[0]
        if len(self.seen) == self.k and first is not None and all(s == first for s in self.seen):
            self.fired = True
            return Stop(FAIL_FAST, f"the first {plural(self.k, 'candidate')} all failed on the same error ({first})")
        return None


def continue_command(argv: Sequence[str] | None = None, pytest_args: Sequence[str] = ()) -> str:
    """The command that goes on with a stopped mine: the same command again (``homefield mine …`` as it
    was typed, from ``argv``, default ``sys.argv``), else ``pytest`` with ``pytest_args``."""
    argv = list(sys.argv if argv is None else argv)
    if argv and (Path(argv[0]).name == "homefield" or argv[0].endswith("pytest_homefield/cli.py")):
        return shlex.join(["homefield", *argv[1:]])
    return shlex.join(["pytest", *pytest_args])


#: The task bound as ``homefield mine`` and as pytest spell it.
_TASK_BOUND_FLAGS = (option("stop-after-tasks", "cli"), option("stop-after-tasks", "pytest"))


def with_task_bound(command: str, total: int) -> str:
    """``command`` (a :func:`continue_command`) with its task bound raised to ``total``: a mine stopped by
    ``--stop-after-tasks N`` kept N tasks, which the same command reuses and stops at again, so going on
    needs a higher bound. The bound given (``--stop-after-tasks N``, ``=N``, pytest's
    ``--homefield-stop-after-tasks``) is left out and ``--stop-after-tasks TOTAL`` (for ``pytest …``,
    ``--homefield-stop-after-tasks TOTAL``) put before a ``--`` or at the end: the last one given wins, so
    it overrides a bound set in ``.homefield.yml`` too."""
    words = shlex.split(command)
    end = words.index("--") if "--" in words else len(words)
    kept: list[str] = []
    i = 0
    while i < end:
        if words[i] in _TASK_BOUND_FLAGS:
            i += 2  # the flag and its value
            continue
        if not words[i].startswith(tuple(f + "=" for f in _TASK_BOUND_FLAGS)):
            kept.append(words[i])
        i += 1
    flag = _TASK_BOUND_FLAGS[1] if words[:1] == ["pytest"] else _TASK_BOUND_FLAGS[0]
    return shlex.join([*kept, flag, str(total), *words[end:]])


def flag_in(command: str, name: str) -> str:
    """The flag ``name`` (``reverify``) as ``command`` (a :func:`continue_command`) spells it: ``--reverify``
    for ``homefield mine …``, ``--homefield-reverify`` for ``pytest …`` (which has no ``--reverify``)."""
    return option(name, "pytest" if shlex.split(command)[:1] == ["pytest"] else "cli")


def stop_lines(stop: Stop | None, *, n_candidates: int, n_verified: int, n_not_verified: int,
               kept: int, command: str, earlier: int = 0, reverify: bool = False,
               setup_failed: int = 0, resumable: Sequence[int] = (), cheapest: bool = False) -> list[str]:
    """The summary lines of a mine that ended early (``[]`` when it verified every candidate it was
    meant to): how many of ``n_candidates`` were not verified and why, that ``tasks.jsonl`` holds a
    partial task set (``kept`` tasks from the ``n_verified`` verified, and ``earlier`` tasks that earlier
    mines left in it), and the ``command`` that goes on: it reuses the ``n_verified`` already verified,
    unless the mine was a ``--reverify`` one (``reverify``), which reuses nothing when run again, less the
    ``setup_failed`` of them dropped as ``setup_failed`` (never reused:
    :data:`~pytest_homefield.mine.reuse.NOT_SETTLED`), and the finished test runs of the candidates the time
    budget stopped in flight that the command reads back (``resumable``: one count of runs per candidate stopped
    in flight, 0 for one that holds none, ``mine-runs/``; a ``--reverify`` mine makes them again). ``cheapest``: the
    candidates were verified cheapest first (``--time-budget``, :mod:`~pytest_homefield.mine.cost_order`): those not
    verified are the ones with the largest test files, not the oldest, and the line says so (mine48: a budget mine's
    summary named no order, and newer candidates left unverified beside older ones kept read as a fault)."""
    if stop is None or n_not_verified <= 0 and stop.why != FAIL_FAST:
        return []
    head = {INTERRUPTED: "Interrupted", FAIL_FAST: "Stopped (fail-fast)"}.get(stop.why, "Stopped")
    older = f", {earlier} kept from earlier mines" if earlier else ""
    order = (" (those with the largest test files: a time budget verifies the smallest first)" if cheapest
             and stop.why != FAIL_FAST else "")
    lines = [f"{head}: {stop.detail}; {n_not_verified} of {plural(n_candidates, 'candidate')} not verified{order}: "
             f"tasks.jsonl is partial ({kept} task{'s' if kept != 1 else ''} from the {n_verified} verified{older})."]
    if stop.why == FAIL_FAST:
        lines.append("Fix the test environment for that error (a Hint, Setup failed or Missing modules line below "
                     f"says how) and mine again, or mine on with {flag_in(command, 'no-fail-fast')}.")
    elif reverify:
        lines.append(f"Continue with: {command}  ({flag_in(command, 'reverify')} runs all {n_candidates} again; "
                     "without it the "
                     f"{n_verified} verified now are reused, and so are earlier records of the other "
                     f"{n_candidates - n_verified})")
    else:
        again = f"; the {setup_failed} dropped as setup failed are verified again" if setup_failed else ""
        reused = n_verified - setup_failed
        held = [n for n in resumable if n > 0]
        # of the candidates stopped in flight, those that hold runs: "of 1 of the 2" (nu39, simonw/llm: "of the 1
        # stopped in flight" right below "Stopped mid-verification at the time budget (2, …)" read as a miscount)
        some = f"{len(held)} of the {len(resumable)}" if len(held) < len(resumable) else f"the {len(held)}"
        runs = (f"; so are the {plural(sum(held), 'finished test run')} of {some} stopped in flight"
                if held else "")
        lines.append(f"Continue with: {command}  (the {reused} verified "
                     f"{'is' if reused == 1 else 'are'} reused, not run again{runs}{again})")
    return lines


def stop_meta(stop: Stop | None, *, n_candidates: int, n_not_verified: int, command: str,
              elapsed_s: float, in_flight: Sequence[str] = ()) -> dict[str, Any] | None:
    """``meta.json``'s ``stopped`` (docs/contracts.md §4): ``why``, ``detail``, ``candidates``,
    ``not_verified``, ``continue`` (the command), ``elapsed`` (for people, e.g. ``'3m05s'``) and, when
    the time budget stopped verifications mid-way, ``in_flight`` (their ids); ``None`` for a mine
    that verified every candidate it was meant to."""
    if stop is None or n_not_verified <= 0 and stop.why not in (FAIL_FAST, SETUP_BROKEN):
        return None
    meta = {"why": stop.why, "detail": stop.detail, "candidates": n_candidates, "not_verified": n_not_verified,
            "continue": command, "elapsed": fmt_duration(elapsed_s)}
    if in_flight:
        meta["in_flight"] = list(in_flight)
    return meta


def _clip(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, its last one ``…`` when it was cut."""
    return text if len(text) <= n else text[: n - 1] + "…"


def in_flight_line(records: Sequence[Mapping[str, Any]], *, limit: int = 5, first: str | None = None) -> str | None:
    """``'Stopped mid-verification at the time budget (2, their test runs killed): 3e9983db7b59 iterutils:
    unify …; …'`` for the verification records marked ``in_flight`` (the budget cut their runs: they
    count as not verified), at most ``limit`` named; ``None`` when there are none. ``first``: why the mine stopped
    starting candidates (:class:`Stop`'s ``why``); when it was not the time budget (``--stop-after-tasks`` was
    reached, and the budget then cut the candidates still in flight) the line says so: ``'Then, at the time
    budget, stopped mid-verification (1, …)'`` (nu39: the two "Stopped" lines in one summary read as a
    contradiction)."""
    cut = [r for r in records if r.get("in_flight")]
    if not cut:
        return None

    def killed(r: Mapping[str, Any]) -> str:
        """`` (commit run 1 killed after 7m52s)`` for a record that says which run the budget cut and how
        long it had run, else ``""``."""
        ran = r.get("ran_s")
        if not isinstance(ran, (int, float)) or isinstance(ran, bool):
            return ""
        return f" ({r.get('cut_in') or 'its run'} killed after {fmt_duration(float(ran))})"

    named = "; ".join(f"{r.get('id')} {_clip(one_line(str(r.get('subject') or '')), 60)}".strip() + killed(r)
                      for r in cut[:limit])
    more = f"; and {len(cut) - limit} more" if len(cut) > limit else ""
    head = "Stopped mid-verification at the time budget" if first in (None, TIME_BUDGET) \
        else "Then, at the time budget, stopped mid-verification"
    longest = max((float(r["ran_s"]) for r in cut if isinstance(r.get("ran_s"), (int, float))), default=0.0)
    hang = (f". A test run killed after {fmt_duration(longest)} may hang in this environment (an older commit under "
            f"newer packages): nothing but run_timeout bounds it (600 s unless {option('run-timeout')} or "
            ".homefield.yml sets it); a lower run_timeout stops such a run sooner and leaves the budget to the other "
            "candidates") \
        if longest >= LONG_CUT_S else ""
    return f"{head} ({len(cut)}, their test runs killed; not verified): {named}{more}{hang}"


#: Seconds a run the time budget killed had been going for the in-flight line to say it may hang: the
#: suites homefield mines commonly run in seconds to a minute or two per candidate run (nu43: tabulate's two
#: hanging commit runs held both workers for the whole 8 minutes of the budget).
LONG_CUT_S = 180.0
