"""``homefield view [RUN…] [--serve] [--port N]``: build the static site of runs and say where it is.

The site of one run goes to ``.homefield/runs/<run_id>/view/``; of several, to
``.homefield/runs/<id1>+<id2>…/view/`` (as ``homefield report`` saves their report). Without a run id, the run
``homefield report`` takes (the newest one no session is running that holds a result). ``--serve`` then serves it
on ``127.0.0.1`` (``--port``, default a free one) and prints the URL, until Ctrl-C. Exit status: 0 built, 2 for bad
input (no such run, a bad record) with one line on stderr; a site already built is left as it was then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_homefield.layout import HomefieldDir
from pytest_homefield.records import load_tasks
from pytest_homefield.report.which import default_run
from pytest_homefield.view import build_site, serve_site, site_dir

__all__ = ["run_view"]


def run_view(root: Path, ns: argparse.Namespace) -> int:
    """Build (and with ``--serve`` serve) the site; returns the exit status."""
    home = HomefieldDir(root)
    ids = list(ns.run_ids)
    if not ids:
        try:  # the run homefield report takes by default (nu56: never a newer one holding no result)
            newest, lines, _ = default_run(home.runs)
        except ValueError as exc:
            print(f"homefield view: {exc}", file=sys.stderr)
            return 2
        for line in lines:
            print(line, file=sys.stderr)
        ids = [newest] if newest else []
    if not ids:
        print(f"homefield view: no runs in {home.runs}", file=sys.stderr)
        return 2
    for rid in ids:
        if not home.has_run(rid):
            print(f"homefield view: no run {rid!r} in {home.runs}", file=sys.stderr)
            return 2
    if not 0 <= ns.port <= 65535:
        print(f"homefield view: --port {ns.port}: expected 0..65535", file=sys.stderr)
        return 2
    dirs = [home.run_dir(rid) for rid in ids]
    folder = dirs[0] if len(dirs) == 1 else home.runs / ("+".join(ids))[:120]
    try:
        tasks = load_tasks(home.tasks) if home.tasks.exists() else []
        mtime = home.tasks.stat().st_mtime if home.tasks.exists() else 0.0
        stats = build_site(dirs, tasks, site_dir(folder), tasks_mtime=mtime)
    except (ValueError, OSError) as exc:  # RecordError, RunError, StoreError, a folder that cannot be written
        print(f"homefield view: {exc}", file=sys.stderr)
        return 2
    try:
        shown = stats.folder.relative_to(Path.cwd())
    except ValueError:
        shown = stats.folder
    print(f"homefield view: {stats.pages} pages in {shown}/ (largest {stats.largest / 1e6:.2f} MB, "
          f"{stats.cpu_s:.1f} s CPU)")
    print(f"Open: {stats.folder / 'index.html'}")
    if ns.serve:
        try:
            serve_site(stats.folder, port=ns.port, ready=lambda url: print(f"Serving on {url} (Ctrl-C stops)",
                                                                           flush=True))
        except OSError as exc:
            print(f"homefield view: cannot serve on 127.0.0.1:{ns.port}: {exc}", file=sys.stderr)
            return 2
    return 0
