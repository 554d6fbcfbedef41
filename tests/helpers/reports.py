"""Comparing report JSON of two runs of the same seeds (shards against one run, CI jobs against one run)."""

from __future__ import annotations

from typing import Any

#: Keys that differ between two runs of the same seeds: run ids, folders, creation times, and homefield's own
#: seconds per attempt (``host_s``'s percentiles; the other times are caught by :func:`mask`'s name rules).
VOLATILE = ("run_ids", "runs", "created_at", "host_s_p50", "host_s_p95")


def mask(report: Any) -> Any:
    """The report without what differs between two runs of the same seeds: run ids and times."""
    if isinstance(report, dict):
        return {k: mask(v) for k, v in report.items()
                if k not in VOLATILE and "wall" not in k and not k.endswith("_s")}
    if isinstance(report, list):
        return [mask(v) for v in report]
    return report
