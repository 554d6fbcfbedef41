"""What one attempt's artifacts folder says, read for a page (docs/contracts.md §4, §7).

The folder (``runs/<run_id>/attempts/<task_id>/<agent>/<attempt>/``) holds ``prompt.txt`` (the prompt
as sent; absent in runs made before ``homefield view``), ``agent.out`` / ``agent.err``,
``diff.patch``, ``tests.log`` (the hidden tests' log, its last 4 MiB), ``outcomes.jsonl`` (the
reporter's events, §7), ``canaries.json``, ``proxy.log``, and a grading's separate test runs, each as its
process saw it: ``twin-N.log`` / ``twin-N.outcomes.jsonl`` (the twin runs) and ``confirm.log`` /
``confirm.outcomes.jsonl`` (the confirmation run of the groups whose members disagreed, §7), ``confirm-parent.*``
(its run on the parent), ``rows.log`` / ``rows.outcomes.jsonl`` (the run of the PASS_TO_PASS rows set apart
with the task's test files unmodified, §7), ``originals.log`` / ``originals.outcomes.jsonl`` (the hidden test files as
written, no twin, when no twin run was free of twins: §7 "The originals run") and ``sealed.log`` /
``sealed.outcomes.jsonl`` (the sealed run, made first, §7 "Sealed sites"). Every file is
read with a byte cap (:data:`READ_CAP`) and never through a link (the agent's folders are not read here, but a link in
the artifacts folder is not followed either: ``O_NOFOLLOW``). Nothing here raises for a missing or
unreadable file: it is ``None``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pytest_homefield.sandbox.outcomes import spread_torn, within_scope
from pytest_homefield.store import open_own

__all__ = ["AttemptFiles", "GradingRun", "IdStatus", "READ_CAP", "json_lines", "read_capped", "id_statuses",
           "failure_sections", "headline_of"]

#: Bytes read of any one artifact file (agent.out is itself capped at --max-output-mb, 5 MiB).
READ_CAP = 2 * 1024 * 1024


def read_capped(path: Path, limit: int = READ_CAP) -> tuple[str, int] | None:
    """``(text of the first limit bytes, whole size in bytes)`` of the regular file ``path`` (UTF-8,
    bad bytes replaced), opened without following a link; ``None`` when it is absent, a link or not
    a regular file."""
    try:
        fd = open_own(path, os.O_RDONLY, blocking=False)  # the one opener of homefield's own files (link46)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        want = min(limit, st.st_size)  # os.read(n) allocates n bytes first: never more than the file
        chunks: list[bytes] = []
        while want > 0:  # no buffered file object: one read a file, most of the time
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            want -= len(chunk)
        data = b"".join(chunks)  # one chunk: itself, not a copy
        return data.decode("utf-8", errors="replace"), st.st_size
    except OSError:
        return None
    finally:
        os.close(fd)


class IdStatus(NamedTuple):
    """One test id in one grading run: ``status`` (``passed``, ``failed``, ``error`` (setup or
    teardown failed), ``skipped``, ``xfailed``, ``not run``), the reporter's one-line ``message``,
    its ``duration`` (s, the call phase) and ``timeout`` (pytest-timeout failed it)."""

    nodeid: str
    status: str
    message: str | None = None
    duration: float | None = None
    timeout: bool = False


def id_statuses(events_text: str) -> tuple[dict[str, IdStatus], list[tuple[str, str]], bool]:
    """``(status per node id, collection errors as (node id or path, message), finished)`` from the
    text of ``outcomes.jsonl`` (the reporter's events, written for people after the run: one JSON
    object per line; other lines skipped). A test passes iff its call phase passed and its teardown did not fail, nor
    that of a scope around it (a failed teardown's ``torn``, gatk50: as grading reads it, §7)."""
    phases: dict[str, dict[str, dict[str, Any]]] = {}
    torn: set[str] = set()
    collect: list[tuple[str, str]] = []
    finished = False
    for ev in json_lines(events_text):
        kind = ev.get("event")
        if kind == "phase" and isinstance(ev.get("nodeid"), str):
            when = str(ev.get("when"))
            slot = phases.setdefault(ev["nodeid"], {})
            if when == "call" and when in slot and slot[when].get("outcome") == "failed":
                continue  # a subtest failed: keep the failure
            slot[when] = ev
            scopes = ev.get("torn")
            if when == "teardown" and ev.get("outcome") == "failed" and isinstance(scopes, list):
                torn.update(n for n in scopes if isinstance(n, str) and n != ev["nodeid"]
                            and within_scope(ev["nodeid"], n))
        elif kind == "collect_error":
            collect.append((str(ev.get("nodeid") or ev.get("path") or ""), str(ev.get("message") or "")))
        elif kind == "finish":
            finished = True
    out: dict[str, IdStatus] = {}
    for nodeid, slot in phases.items():
        call = slot.get("call")
        bad = next((slot[w] for w in ("setup", "call", "teardown") if w in slot and slot[w].get("outcome") == "failed"),
                   None)
        if bad is not None:
            status = "failed" if bad.get("when") == "call" else "error"
            out[nodeid] = IdStatus(nodeid, status, bad.get("message"), _dur(call), bool(bad.get("timeout")))
        elif call is not None and call.get("outcome") == "passed":
            out[nodeid] = IdStatus(nodeid, "xfailed" if call.get("xfail") else "passed", None, _dur(call))
        else:
            skip = next((slot[w] for w in ("setup", "call") if w in slot and slot[w].get("outcome") == "skipped"), None)
            if skip is not None:
                out[nodeid] = IdStatus(nodeid, "xfailed" if skip.get("xfail") else "skipped", skip.get("message"))
            else:
                out[nodeid] = IdStatus(nodeid, "not run")
    if torn:  # a scope's failed teardown is every one of its ids' (gatk50)
        passing = {n: "passed" for n, st in out.items() if st.status == "passed"}
        spread_torn(passing, torn)
        for nodeid, status in passing.items():
            if status == "error":
                out[nodeid] = out[nodeid]._replace(status="error", message="the teardown of its scope failed")
    return out, collect, finished


def json_lines(text: str | list[str], skip: str | None = None) -> list[dict[str, Any]]:
    """The JSON objects of ``text`` (or of its lines, already split), one a line (other lines, and
    lines starting with ``skip``, left out). All lines are decoded in one call as one array when that
    gives one value a line (the common case: a fraction of the cost of one call a line), else line by
    line. The output is the agent's own: lines crafted to decode differently joined only change what
    its page shows."""
    split = text.splitlines() if isinstance(text, str) else text
    lines = [ln for ln in split if ln.strip() and not (skip and ln.startswith(skip))]
    try:
        values = json.loads("[" + ",".join(lines) + "]")
        if len(values) != len(lines):  # lines that only parse joined (a torn line and its neighbour)
            raise ValueError("not one value a line")
    except (ValueError, RecursionError):  # RecursionError: a line nested deeper than the decoder goes (atk19)
        values = []
        for ln in lines:
            try:
                values.append(json.loads(ln))
            except (ValueError, RecursionError):
                continue
    return [v for v in values if isinstance(v, dict)]


def _dur(ev: dict[str, Any] | None) -> float | None:
    value = ev.get("duration") if ev else None
    return float(value) if isinstance(value, (int, float)) else None


_SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.M)
_SECTION_END = re.compile(r"^={5,} .* ={5,}$", re.M)


def headline_of(nodeid: str) -> str:
    """The headline pytest prints above a test's failure: the node id without its file, ``::`` as
    ``.`` (``tests/t.py::TestX::test_y[1]`` → ``TestX.test_y[1]``)."""
    parts = nodeid.split("::")
    return ".".join(parts[1:]) if len(parts) > 1 else nodeid


def failure_sections(log: str) -> dict[str, str]:
    """The failure (and error) sections of a pytest log, by headline (``TestX.test_y[1]``; an error
    section ``ERROR at setup of test_y`` by ``test_y``): the text between a ``____ NAME ____`` line
    and the next such line or ``==== … ====`` line."""
    out: dict[str, str] = {}
    heads = list(_SECTION.finditer(log))
    for i, m in enumerate(heads):
        start = m.end() + 1
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(log)
        end = _SECTION_END.search(log, start, stop)
        name = m.group(1)
        for prefix in ("ERROR at setup of ", "ERROR at teardown of "):
            if name.startswith(prefix):
                name = name[len(prefix):]
        out.setdefault(name, log[start: end.start() if end else stop].rstrip("\n"))
    return out


#: A grading's separate test run's files: ``twin-<N>.log``, ``twin-<N>.outcomes.jsonl``, ``confirm.log``, … (§4).
_RUN_FILE = re.compile(r"(twin-[0-9]{1,4}|originals|confirm|confirm-parent|rows|sealed)\.(log|outcomes\.jsonl)")
#: The runs other than the twin runs, in the order a grading makes them (after the twin runs).
_LATER_RUNS = ("originals", "confirm", "confirm-parent", "rows")
#: The run a grading makes before the twin runs (§7 "Sealed sites").
_FIRST_RUNS = ("sealed",)


@dataclass
class GradingRun:
    """One test run of a grading kept apart (``name``: ``sealed``, ``twin-1``, …, ``confirm``, ``confirm-parent``,
    ``rows``): its
    log's text and its events' text (``None`` when absent), each read with :data:`READ_CAP`."""

    name: str
    log: str | None = None
    outcomes: str | None = None


@dataclass
class AttemptFiles:
    """The texts of one attempt's artifacts (``None`` when absent), each read with :data:`READ_CAP`;
    ``sizes`` the whole size (bytes) of each file read, by name; ``others`` the names of other entries
    (the carried-change lists of grading, a ``grading.err``); ``runs`` the grading's separate test runs, the sealed
    run first (§7 "Sealed sites"), then the twin runs in their order, then the originals run (gatk37), then the
    confirmation run, then its run on the
    parent (§7, atk27), then the run of the rows set apart (§7)."""

    folder: Path
    prompt: str | None = None
    agent_out: str | None = None
    agent_err: str | None = None
    diff: str | None = None
    tests_log: str | None = None
    outcomes: str | None = None
    canaries: dict[str, Any] | None = None
    proxy_log: str | None = None
    grading_err: str | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    runs: list[GradingRun] = field(default_factory=list)

    KNOWN = {"prompt.txt": "prompt", "agent.out": "agent_out", "agent.err": "agent_err", "diff.patch": "diff",
             "tests.log": "tests_log", "outcomes.jsonl": "outcomes", "proxy.log": "proxy_log",
             "grading.err": "grading_err"}

    @classmethod
    def read(cls, folder: Path) -> AttemptFiles:
        """Everything of ``folder`` the pages show."""
        files = cls(folder)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return files
        for name in names:
            attr = cls.KNOWN.get(name)
            if attr is not None:
                got = read_capped(folder / name)
                if got is not None:
                    setattr(files, attr, got[0])
                    files.sizes[name] = got[1]
            elif name == "canaries.json":
                got = read_capped(folder / name)
                try:
                    value = json.loads(got[0]) if got else None
                except ValueError:
                    value = None
                files.canaries = value if isinstance(value, dict) else None
            elif (m := _RUN_FILE.fullmatch(name)) is not None:
                files._add_run(m[1], m[2], folder / name)
            elif not name.startswith("."):
                files.others.append(name)
        files.runs.sort(key=lambda r: (_LATER_RUNS.index(r.name) + 1, 0) if r.name in _LATER_RUNS
                        else (-1, _FIRST_RUNS.index(r.name)) if r.name in _FIRST_RUNS else (0, int(r.name[5:])))
        return files

    def _add_run(self, name: str, kind: str, path: Path) -> None:
        run = next((r for r in self.runs if r.name == name), None)
        if run is None:
            run = GradingRun(name)
            self.runs.append(run)
        got = read_capped(path)
        if got is not None:
            setattr(run, "log" if kind == "log" else "outcomes", got[0])
            self.sizes[path.name] = got[1]
