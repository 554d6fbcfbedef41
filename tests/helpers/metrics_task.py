"""The metrics task (gatk36): a FAIL_TO_PASS test whose body registers a metric by name in a process-wide registry,
which refuses a name twice (as ``prometheus_client``'s default registry, SQLAlchemy's table metadata or a plugin
registry do). Run once per process, as in every run apart, it passes with a real fix; a second run of that body in
the same process (the confirmation run lays the original and its twin side by side) fails at the registration,
whatever the code computes."""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

__all__ = ["METRICS_SOURCE", "METRICS_TEST", "METRICS_PARENT", "METRICS_FIXED", "METRICS_F2P", "build_metrics"]

METRICS_SOURCE = "src/metrics/__init__.py"
METRICS_TEST = "tests/test_metrics.py"
METRICS_PARENT = ("_REGISTRY = {}\n\n\nclass Counter:\n    def __init__(self, name):\n"
                  "        if name in _REGISTRY:\n            raise ValueError(f'duplicate metric {name}')\n"
                  "        _REGISTRY[name] = self\n        self.value = 0\n\n"
                  "    def inc(self, n=1):\n        self.value += 1\n")
METRICS_FIXED = METRICS_PARENT.replace("        self.value += 1\n", "        self.value += n\n")
METRICS_TESTS = ("from metrics import Counter\n\n\ndef test_inc_by():\n    c = Counter('requests')\n    c.inc(5)\n"
                 "    assert c.value == 5\n")
METRICS_F2P = [f"{METRICS_TEST}::test_inc_by"]


def build_metrics(dest: Path) -> FixTask:
    """The metrics repository and task in ``dest``."""
    return build_fix_task(dest, name="metrics", source=METRICS_SOURCE, parent=METRICS_PARENT, fixed=METRICS_FIXED,
                          test=METRICS_TEST, tests=METRICS_TESTS, first="metrics", message="Counter.inc: by n",
                          fail_to_pass=METRICS_F2P, pass_to_pass=[])
