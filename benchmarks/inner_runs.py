"""How many test runs (the fixture repositories' own ``pytest``, started inside the sandbox by grading,
mining and verify) each test of the suite starts, and who asked for them. Load as a plugin:

    SUITE_INNER_RUNS_DIR=/tmp/inner-runs python -m pytest -n 2 -p no:randomly -p benchmarks.inner_runs
    python benchmarks/inner_runs.py [/tmp/inner-runs]      # the tests and files that start the most

The plugin puts ``benchmarks/inner_runs_site`` on ``PYTHONPATH`` (its ``sitecustomize`` installs an audit
hook, :mod:`benchmarks.inner_runs_hook`, in every Python process started after it: ``homefield``
sessions, their xdist workers) and names the running test in ``SUITE_INNER_TEST``. Each process that
starts a command through :func:`pytest_homefield.sandbox.procs.run_process` (the reaper) appends ``test
kind caller`` to a file of its own: ``kind`` is ``tests`` for a test run (its argv loads the reporter or
names a JUnit file), ``other`` for the rest (agents, services). The product is not changed. A session
fixture's runs land on the test that first asked for it; the background demo's on the test running when it
started.
"""

from __future__ import annotations

import os
import sys
from collections import Counter, defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import inner_runs_hook  # noqa: E402

del sys.path[0]

OUT = Path(os.environ.get(inner_runs_hook.DIR_VAR, "/tmp/inner-runs"))
SITE = Path(__file__).parent / "inner_runs_site"


def pytest_configure(config: pytest.Config) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    os.environ[inner_runs_hook.DIR_VAR] = str(OUT)
    if str(SITE) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(SITE), os.environ.get("PYTHONPATH")) if p)
    inner_runs_hook.install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    os.environ[inner_runs_hook.TEST_VAR] = item.nodeid
    try:
        return (yield)
    finally:
        os.environ[inner_runs_hook.TEST_VAR] = "(between tests)"


def summary(folder: Path, top: int = 40) -> list[str]:
    """The tests and files of the records in ``folder`` that start the most test runs, and their callers."""
    tests: Counter[str] = Counter()
    other: Counter[str] = Counter()
    callers: dict[str, Counter[str]] = defaultdict(Counter)
    for path in folder.glob("runs-*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, kind, caller = line.split("\t")
            if kind == "tests":
                tests[nodeid] += 1
                callers[nodeid][caller.split(" < ")[0]] += 1
            else:
                other[nodeid] += 1
    files: Counter[str] = Counter()
    for nodeid, n in tests.items():
        files[nodeid.split("::", 1)[0]] += n
    out = [f"{sum(tests.values())} test runs, {sum(other.values())} other sandboxed commands", "",
           " runs  file"]
    out += [f"{n:5d}  {name}" for name, n in files.most_common(top)]
    out += ["", " runs  test  (callers)"]
    out += [f"{n:5d}  {nodeid}  ({', '.join(f'{c} x{k}' for c, k in callers[nodeid].most_common(3))})"
            for nodeid, n in tests.most_common(top)]
    return out


if __name__ == "__main__":
    print("\n".join(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)))
