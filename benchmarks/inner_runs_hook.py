"""The audit hook of :mod:`benchmarks.inner_runs` (stdlib only: imported at every interpreter start)."""

from __future__ import annotations

import os
import sys
from typing import Any

#: The variable naming the test of the outer suite that is running (set by the plugin; inherited by the
#: ``homefield`` sessions that test starts, their xdist workers and helpers).
TEST_VAR = "SUITE_INNER_TEST"
DIR_VAR = "SUITE_INNER_RUNS_DIR"


def _caller() -> str:
    """The innermost frames of ``pytest_homefield`` above the sandbox's process code: who asked for the run."""
    frame = sys._getframe(2)
    names: list[str] = []
    while frame is not None and len(names) < 3:
        path = frame.f_code.co_filename
        if "pytest_homefield" in path and "/sandbox/" not in path:
            names.append(f"{path.rsplit('pytest_homefield/', 1)[-1]}:{frame.f_code.co_name}")
        frame = frame.f_back  # type: ignore[assignment]
    return " < ".join(names) or "?"


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen":
        return
    argv = [str(a) for a in (args[1] if isinstance(args[1], (list, tuple)) else [args[1]])]
    if not argv or not any(a.endswith("_reaper.py") for a in argv[:4]):
        return  # only what run_process starts: test runs, agents, services, tools
    kind = "tests" if "homefield_reporter" in argv or any("junit" in a for a in argv) else "other"
    folder = os.environ.get(DIR_VAR)
    if not folder:
        return
    line = f"{os.environ.get(TEST_VAR, '?')}\t{kind}\t{_caller()}\n"
    with open(os.path.join(folder, f"runs-{os.getpid()}.tsv"), "a", encoding="utf-8") as fh:
        fh.write(line)


def install() -> None:
    if getattr(sys, "_inner_runs_hook", False):
        return
    sys._inner_runs_hook = True  # type: ignore[attr-defined]
    sys.addaudithook(_hook)
