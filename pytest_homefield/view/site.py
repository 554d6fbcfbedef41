"""Build the static site of one or more runs, and serve it on 127.0.0.1.

Layout (docs/contracts.md §4), under the site folder (``runs/<run_id>/view/``)::

    index.html, index-2.html …      the run: report tables, per-task grid with filters (run_page)
    tasks/<task_id>.html            one task, every agent's attempts side by side (task_page)
    attempts/<task>--<agent>--<n>.html   one attempt (attempt_page)
    site.css, site.js               the one stylesheet and script (assets); nothing is fetched

The site is built in a fresh sibling folder and put in place with two renames, so a failed build
leaves the previous site as it was. Pages are built task by task: each attempt's files are read once,
for its page and its task's. :func:`build_site` returns :class:`SiteStats` (pages, bytes of the
largest page, seconds of CPU).
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_homefield.records import Task
from pytest_homefield.view.assets import SITE_CSS, SITE_JS
from pytest_homefield.view.attempt_page import AttemptSummary, render_attempt
from pytest_homefield.view.common import Nav, attempt_page_name, task_page_name
from pytest_homefield.view.data import SiteData, load_site
from pytest_homefield.view.run_page import render_run_pages
from pytest_homefield.view.task_page import render_task

__all__ = ["SITE_DIR", "SiteStats", "build_site", "make_server", "site_dir", "serve_site", "view_command"]

#: The site's folder name inside the run folder.
SITE_DIR = "view"


def site_dir(folder: Path) -> Path:
    """``<folder>/view/``: where the site of the runs reported in ``folder`` lives."""
    return folder / SITE_DIR


def view_command(run_ids: Sequence[str]) -> str:
    """The command that builds (and serves) the site of these runs: ``homefield view RUN…``."""
    return "homefield view " + " ".join(run_ids)


@dataclass(frozen=True)
class SiteStats:
    """What a build wrote: ``pages`` (HTML files), ``largest`` (bytes of the largest page, and its
    ``largest_name``), ``total_bytes``, ``cpu_s`` (process CPU seconds of the build) and ``folder``."""

    folder: Path
    pages: int
    largest: int
    largest_name: str
    total_bytes: int
    cpu_s: float


class _Writer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.pages = 0
        self.total = 0
        self.largest = (0, "")
        (root / "tasks").mkdir(parents=True)
        (root / "attempts").mkdir()

    def write(self, name: str, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        fd = os.open(os.path.join(self.root, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:  # no buffered file object (a page is one write)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        self.pages += name.endswith(".html")
        self.total += len(data)
        if len(data) > self.largest[0]:
            self.largest = (len(data), name)


def build_site(run_dirs: Sequence[Path], tasks: Sequence[Task], dest: Path, *,
               progress: Callable[[int, int], None] | None = None, tasks_mtime: float | None = None) -> SiteStats:
    """Write the site of ``run_dirs`` (with the tasks of ``tasks.jsonl``, last changed at ``tasks_mtime``:
    then a fresh saved report of one run is reused, :func:`~.data.saved_report`) to ``dest``
    (replacing a site there). ``progress(done, total)`` is called after each task. Raises
    ``ValueError`` naming the file of a bad record (nothing is replaced then) and ``OSError`` when the
    folder cannot be written."""
    start = time.process_time()
    data = load_site(run_dirs, tasks, tasks_mtime=tasks_mtime)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}-new-", dir=dest.parent))
    try:
        w = _Writer(tmp / "site")
        _write_all(data, w, [Path(d).name for d in run_dirs], progress)
        _swap(tmp / "site", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return SiteStats(dest, w.pages, w.largest[0], w.largest[1], w.total, time.process_time() - start)


def _swap(new: Path, dest: Path) -> None:
    """Put ``new`` at ``dest``: the old site moved aside first and removed after."""
    old = None
    if dest.exists() or dest.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}-old-", dir=dest.parent)) / "site"
        os.rename(dest, old)
    os.rename(new, dest)
    if old is not None:
        shutil.rmtree(old.parent, ignore_errors=True)


def _write_all(data: SiteData, w: _Writer, run_ids: Sequence[str],
               progress: Callable[[int, int], None] | None) -> None:
    w.write("site.css", SITE_CSS)
    w.write("site.js", SITE_JS)
    for name, text in render_run_pages(data, view_command(run_ids)).items():
        w.write(name, text)
    order = list(dict.fromkeys(ref.result.task_id for ref in data.attempts))
    rows = {t.id: t for t in data.report.tasks}
    flat = data.attempts
    index = {ref.key: i for i, ref in enumerate(flat)}
    for n, tid in enumerate(order):
        task = data.tasks.get(tid)
        summaries: dict[tuple[str, str, int], AttemptSummary] = {}
        for refs in data.by_task.get(tid, {}).values():
            for ref in refs:
                i = index[ref.key]
                prev = "../" + attempt_page_name(*flat[i - 1].key) if i > 0 else None
                nxt = "../" + attempt_page_name(*flat[i + 1].key) if i + 1 < len(flat) else None
                nav = Nav("../index.html", prev, nxt, (("../" + task_page_name(tid), f"task {tid}"),))
                html, summaries[ref.key] = render_attempt(ref, task, data.specs.get(ref.result.agent), nav)
                w.write(attempt_page_name(*ref.key), html)
        prev_t = "../" + task_page_name(order[n - 1]) if n > 0 else None
        next_t = "../" + task_page_name(order[n + 1]) if n + 1 < len(order) else None
        w.write(task_page_name(tid), render_task(tid, task, rows.get(tid), data.agents, data.by_task.get(tid, {}),
                                                 summaries, Nav("../index.html", prev_t, next_t), data.specs))
        if progress is not None:
            progress(n + 1, len(order))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """The site's files, to a request that names this server as its host only (``Host: 127.0.0.1:PORT`` or
    ``localhost:PORT``): a web page whose name its DNS points at ``127.0.0.1`` (DNS rebinding) reaches the
    server as the same origin as itself, and read every page of the site (the reference fixes, the hidden
    tests) for its site (hatk35); it names its own host, and is refused (403)."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass

    def send_head(self) -> Any:
        port = self.server.server_address[1]  # type: ignore[index]  # an AF_INET server: (host, port)
        if str(self.headers.get("Host", "")).strip().lower() not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            self.send_error(403, "the site is served to 127.0.0.1 and localhost only")
            return None
        return super().send_head()


def make_server(folder: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of the files of ``folder`` bound to ``127.0.0.1:port`` (0: a free port), not started
    (stdlib ``http.server``: paths outside ``folder`` are not served). Raises ``OSError`` when the
    port cannot be bound."""
    handler = functools.partial(_Quiet, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def serve_site(folder: Path, *, port: int = 0, ready: Callable[[str], None] = print) -> None:
    """Serve ``folder`` on ``127.0.0.1:port`` (0: a free port) until interrupted; ``ready(url)`` is
    called with the URL of its ``index.html`` once the server listens. Raises ``OSError`` when the
    port cannot be bound."""
    with make_server(folder, port) as server:
        ready(f"http://127.0.0.1:{server.server_address[1]}/index.html")
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
