"""How honest is the mine's ETA over a whole mine? (eta46; ops64 measured it up to 1.96× high in scan order.)

Run on demand (not a test)::

    PYTHONPATH=$PWD python benchmarks/mine_eta.py

Replays recorded mines, two candidates at a time as ``mine -n 2`` verifies them, on a scripted clock, through
:class:`~pytest_homefield.terminal.progress.Progress` (the progress line's ETA): usr63's xmltodict (43 candidates,
the rows of ``tests/terminal/test_progress.py``) and r45's humanize (29, ``benchmarks/data/mine_eta_rows.json``),
each in scan order and cheapest first (``--time-budget``'s order). After each candidate ends it compares the ETA with
the seconds that were truly left and prints, per mine and order, the ratio predicted / actual over every point with
an ETA: its median, geometric mean, least and most, and the share of points within 0.67-1.5×.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE / "tests"), str(HERE / "tests" / "terminal")]

from test_progress import XMLTODICT, _mine_etas_two_at_once  # noqa: E402  (the replay, written once there)


def mines() -> dict[str, list[tuple[int, float, int]]]:
    """Mine name → ``(test_bytes, seconds, kept)`` per candidate in scan order."""
    data = json.loads((HERE / "benchmarks" / "data" / "mine_eta_rows.json").read_text())
    return {"xmltodict": XMLTODICT, **{k: [tuple(r) for r in v] for k, v in data.items() if not k.startswith("_")}}


def ratios(rows: list[tuple[int, float, int]]) -> list[float]:
    """Predicted / actual seconds left after each candidate that ended with some left and an ETA said."""
    etas = _mine_etas_two_at_once(rows, sized=True)
    return [eta / left for left, eta in etas.values() if eta is not None and left > 0]


def main() -> int:
    print(f"{'mine':<10} {'order':<9} {'points':>6} {'median':>7} {'geomean':>7} {'least':>6} {'most':>6} "
          f"{'0.67-1.5x':>9}")
    for name, rows in mines().items():
        for order, ordered in (("scan", rows), ("cheapest", sorted(rows, key=lambda r: r[0]))):
            r = ratios(list(ordered))
            geo = math.exp(statistics.fmean(math.log(x) for x in r))
            within = sum(1 for x in r if 0.67 <= x <= 1.5) / len(r)
            print(f"{name:<10} {order:<9} {len(r):>6} {statistics.median(r):>7.2f} {geo:>7.2f} {min(r):>6.2f} "
                  f"{max(r):>6.2f} {within:>9.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
