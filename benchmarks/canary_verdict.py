"""How the canary verdict (``CanaryPlan.forged``) scales with the ids a test process reports.

Run on demand (not a test)::

    python benchmarks/canary_verdict.py 2000 8000 32000 128000 500000

The ids come from the test process: a forger may report any number of made-up instances of a failing
test (atk13 F3: 60,000 ``<test>[hf<i>]`` events, under the channel's 64 MiB cap, cost 304 s of host CPU
for one attempt when the verdict scanned every id for every passed instance). For each N it builds one
excusable twin whose N made-up instances passed beside a failed original, times ``forged`` (CPU
seconds of this process, median of 3), and prints the time per N and the ratio to the previous N.
Linear means a ratio near N's ratio (4 for the sizes above); quadratic near its square.

Measured on 2 shared cores (2026-12-03): 2,000 → 500,000 instances in 0.002 → 0.82 s, ratios
2.9–6.7 per ×4, noisy at the small sizes (the quadratic version: 2,000 0.17 s, 4,000 0.59 s, 8,000
2.24 s).
"""

from __future__ import annotations

import resource
import statistics
import sys

from pytest_homefield.sandbox.canaries import Canary, CanaryPlan

SOURCE = "tests/test_a.py::test_x"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def time_forged(n: int) -> float:
    """Median CPU seconds of ``forged`` over an outcome map of ``n`` made-up passed twin instances."""
    twin = Canary(node=SOURCE + "@twin1", source=SOURCE, kind="contradiction", how="==", excusable=True)
    plan = CanaryPlan(seed=1, canaries=[twin])
    outcomes = {f"{SOURCE}@twin1[hf{i}]": "passed" for i in range(n)}
    outcomes[SOURCE] = "failed"
    runs = []
    for _ in range(3):
        start = _cpu()
        assert plan.forged(outcomes, [SOURCE]) == []  # excused: the original failed
        runs.append(_cpu() - start)
    return statistics.median(runs)


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [2000, 8000, 32000, 128000, 500000]
    previous: float | None = None
    for n in sizes:
        t = time_forged(n)
        ratio = f"  ×{t / previous:.1f}" if previous else ""
        print(f"{n:>8} instances: {t:.3f} s CPU{ratio}")
        previous = t


if __name__ == "__main__":
    main(sys.argv[1:])
