"""What finding the project's copies by content costs per process (docs/contracts.md §9,
sandbox/copies_by_content.py), side by side with the search by name.

Run on demand (not a test)::

    python benchmarks/copies.py --repo /path/to/a/repository --runs 5

Each run is a fresh interpreter (the walk is cached per process, so every sandboxed session pays it
once): it registers ``--repo`` as protected and measures, in CPU seconds of that process and its
children (``getrusage``), the leak (``git log``/``ls-tree``/``cat-file`` of ``--repo``), the first
:func:`~pytest_homefield.sandbox.copies_by_content.content_copies` over the roots a bubblewrap agent
sandbox shows here (the system folders, the interpreter's prefixes, this package: ``/usr`` whole), the
same call again (warm: one sandbox per attempt and per test run after the first), a call for another
set of repositories (the walk is reused, only the matching runs again: a test suite's many fixtures) and,
for comparison,
:func:`~pytest_homefield.sandbox.project_copies.project_copies` (by name, what main did). Prints the
median of each and how many files the walk saw.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, os, resource, sys
from pathlib import Path
from pytest_homefield.sandbox import copies_by_content as c
from pytest_homefield.sandbox.bwrap import SYSTEM_DIRS, package_paths, python_paths
from pytest_homefield.sandbox.project_copies import project_copies

def cpu():
    s, k = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + k.ru_utime + k.ru_stime

repo = Path(sys.argv[1]).resolve()
roots = [d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)]
roots += [str(p) for p in [*python_paths([sys.executable]), *package_paths()]]
t0 = cpu(); lk = c.leak(repo); t1 = cpu()
found = c.content_copies(roots, [repo]); t2 = cpu()
c.content_copies(roots, [repo]); t3 = cpu()
project_copies(roots, [repo]); t4 = cpu()
c.content_copies(roots, [repo, repo]); t5 = cpu()  # another set of repositories: the walk is reused
print(json.dumps({"leak": t1 - t0, "cold": t2 - t1, "warm": t3 - t2, "by_name": t4 - t3, "other": t5 - t4,
                  "blobs": len(lk.blobs), "found": len(found)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for _ in range(args.runs):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(args.repo)], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        rows.append(json.loads(proc.stdout))
    print(f"repository {args.repo}: {rows[0]['blobs']} leak blobs, {rows[0]['found']} copies found; "
          f"median of {args.runs} fresh processes, CPU seconds:")
    for key, label in (("leak", "leak (git)"), ("cold", "walk by content, first sandbox"),
                       ("warm", "walk by content, each later sandbox"),
                       ("other", "another repository, same process"), ("by_name", "search by name (main)")):
        print(f"  {label:38s} {statistics.median(r[key] for r in rows):.4f}")


if __name__ == "__main__":
    main()
