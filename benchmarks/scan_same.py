"""Does this checkout's candidate scan give exactly what another checkout's gives? (issue 35: speed work
on the scan must not change its result.)

Run on demand (not a test), with clones that have long histories and a baseline checkout of the
package (e.g. ``git archive main pytest_homefield | tar -x -C /tmp/base``)::

    python benchmarks/scan_same.py --baseline /tmp/base /tmp/pytest /tmp/more-itertools

For each repository and walk (all history, first-parent, first-parent with merges; ``env`` ``pip`` and
``uv``) both checkouts scan in fresh Python processes and print a digest of their result: every
candidate's and rejected commit's record (``to_dict``), the counts, and the text of
``format_scan(verbose=True)`` (what ``homefield mine --list-candidates`` prints). One line per scan says
``same`` or ``DIFFERENT`` with both digests; the exit status is 1 if any differs, else 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

#: name -> ScanOptions keyword arguments, as Python source for the child.
WALKS = {
    "all": "",
    "first-parent": "first_parent=True",
    "first-parent + merges": "first_parent=True, merges=True",
    "all + merges, uv": "merges=True, env='uv'",
}

_CHILD = """
import dataclasses, hashlib, json, sys
from pathlib import Path
from pytest_homefield.mine.scan import ScanOptions, format_scan, scan
result = scan(Path(sys.argv[1]), ScanOptions({options}))
digest = hashlib.sha256()
for record in (*result.candidates, *result.rejected):
    digest.update(json.dumps(record.to_dict(), sort_keys=True).encode())
digest.update(json.dumps([result.counts, result.examined, result.capped, result.shallow_skipped,
                          result.newest_authored]).encode())
digest.update(format_scan(result, verbose=True).encode())
print(digest.hexdigest()[:16], format_scan(result).splitlines()[-1])
"""


def _digest(code: Path, repo: Path, options: str) -> str:
    """The child's line: a digest of the scan's whole result, and its summary line."""
    env = os.environ | {"PYTHONPATH": str(code)}
    # from code's folder: "python -c" puts the working folder first on sys.path, before PYTHONPATH (run from
    # this checkout, the baseline's child imported this checkout and every scan was "same")
    out = subprocess.run([sys.executable, "-c", _CHILD.format(options=options), str(repo.resolve())], env=env,
                         cwd=code, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    """Scan each repository with both checkouts; exit status 1 if any result differs."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", type=Path, nargs="+", help="git clones")
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the package to compare with")
    args = parser.parse_args(argv)
    differ = 0
    for repo in args.repos:
        for name, options in WALKS.items():
            this, base = _digest(HERE, repo, options), _digest(args.baseline.resolve(), repo, options)
            same = this.split()[0] == base.split()[0]
            differ += not same
            print(f"{repo.name} [{name}]: {'same' if same else 'DIFFERENT'} {this}"
                  + ("" if same else f"\n  baseline: {base}"))
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
