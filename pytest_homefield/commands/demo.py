"""``homefield demo``: build the bundled sample repository, mine it, run the reference agents, report.

The sample (``examples/sample-project/build_history.py``, beside the package in a source checkout or
an editable install) is a 16-commit history of a small text library that shows every mining outcome.
The demo then runs, each in its own process with the sample as working directory::

    homefield mine -v -n N --sandbox none   # its flaky test counts runs outside the snapshot
    homefield run --agent oracle --agent sim:0.7 --agent sim:0.5 --agent noop --attempts 3 -n N

streaming their output, and ends with a short summary and the path of ``report.html``. Nothing is
sent anywhere and no model is called: ``oracle`` applies the real fix, ``noop`` changes nothing and
``sim:P`` applies the real fix with probability P.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from pytest_homefield.layout import HomefieldDir, candidates_path, results_path, scan_path
from pytest_homefield.mine.pipeline import dropped_line
from pytest_homefield.sandbox.testrun import TEST_ENV_VAR
from pytest_homefield.settings_table import option
from pytest_homefield.store import read_jsonl
from pytest_homefield.terminal.progress import plural

__all__ = ["run_demo", "find_build_history", "load_build_history", "DEMO_AGENTS", "DEMO_ATTEMPTS"]

DEMO_AGENTS = ("oracle", "sim:0.7", "sim:0.5", "noop")
DEMO_ATTEMPTS = 3
_SAMPLE = Path("examples") / "sample-project" / "build_history.py"


def find_build_history() -> Path | None:
    """``build_history.py`` of the sample: inside the package (if it was shipped there), else in the
    repository the package is installed from (editable install or source checkout)."""
    package = Path(__file__).resolve().parent.parent
    for base in (package, package.parent):
        path = base / _SAMPLE
        if path.is_file():
            return path
    return None


def load_build_history(path: Path | None = None) -> ModuleType:
    """``build_history.py`` imported as a module (default: :func:`find_build_history`). Raises
    ``FileNotFoundError`` when there is none."""
    path = path or find_build_history()
    if path is None:
        raise FileNotFoundError(f"cannot find {_SAMPLE.as_posix()} next to the pytest_homefield package")
    spec = importlib.util.spec_from_file_location("homefield_sample_build_history", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def _say(text: str) -> None:
    print(f"homefield demo: {text}", flush=True)


def _env(repo: Path, flaky_env: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST_", "HOMEFIELD_"))}
    env.pop("PYTEST_CURRENT_TEST", None)
    # the sample's deliberately flaky test counts its runs here: fresh for every demo repository
    env[flaky_env] = str(repo / ".git" / "textkit-flaky-counter")
    # a test run gets only the host variables it is given (sandbox/testrun.py TEST_ENV_NAMES): name the counter's,
    # as a user names a variable their suite reads (without it the counter went to each run's fresh TMPDIR, the
    # flaky commit passed every run and was kept as a task)
    env[TEST_ENV_VAR] = flaky_env
    return env


def _step(args: list[str], repo: Path, env: dict[str, str]) -> tuple[int, float]:
    """Run ``homefield ARGS`` in ``repo`` as a child process (its output goes straight to ours)."""
    cmd = [sys.executable, "-m", "pytest_homefield.cli", *args]
    _say("$ homefield " + " ".join(args))
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    try:
        code = subprocess.call(cmd, cwd=repo, env=env)
    except KeyboardInterrupt:  # the child got the same Ctrl-C and stops on its own
        code = 130
    return code, time.monotonic() - start


def _mine_summary(repo: Path) -> list[str]:
    home = HomefieldDir(repo)
    tasks = list(read_jsonl(home.tasks))
    mine_dirs = home.mine_dirs()
    verified: dict[str, str | None] = {}  # the last record per candidate wins, as in the mine's summary
    scanned: list[str | None] = []
    n_cand = 0
    if mine_dirs:
        n_cand = sum(1 for _ in read_jsonl(candidates_path(mine_dirs[-1])))
        verified = {str(r.get("commit")): r.get("reason") for r in read_jsonl(results_path(mine_dirs[-1]))}
        scanned = [r.get("reason") for r in read_jsonl(scan_path(mine_dirs[-1]))]
    vague = sum(1 for t in tasks if not t.get("well_specified", True))
    lines = [f"mined:  {plural(len(tasks), 'task')} from {plural(n_cand, 'candidate')} ({vague} not well specified)"]
    dropped = dropped_line(list(verified.values()), scanned)
    if dropped:
        lines.append(f"        dropped: {dropped}")
    return lines


def _run_summary(run_dir: Path) -> list[str]:
    try:
        report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"run:    {run_dir.name} (no report.json)"]
    lines = [f"run:    {run_dir.name}"]
    for name, a in (report.get("agents") or {}).items():
        p1 = a.get("pass_at_1")
        rate = "n/a" if p1 is None else f"{100 * p1:.0f}%"
        sim = " (simulated)" if a.get("simulated") else ""
        lines.append(f"        {name:<8} solved {a.get('solved', 0):>2}/{a.get('scored', 0):<2} pass@1 {rate:>4}{sim}")
    return lines


def run_demo(ns: argparse.Namespace) -> int:
    """The ``demo`` subcommand; ``ns.dir`` (where to build, default a new temp folder) and
    ``ns.numprocesses`` (xdist workers, default ``auto``). Returns the exit status: 0, the first
    failing step's status, or 2 when the sample cannot be found or built."""
    script = find_build_history()
    if script is None:
        print(f"homefield demo: cannot find {_SAMPLE.as_posix()} next to the pytest_homefield package "
              "(the demo needs a source checkout or an editable install: pip install -e .)", file=sys.stderr)
        return 2
    started = time.monotonic()
    numprocesses = str(getattr(ns, "numprocesses", None) or "auto")
    if getattr(ns, "dir", None):
        repo = Path(ns.dir).expanduser().resolve()
        if repo.exists() and (not repo.is_dir() or any(repo.iterdir())):
            print(f"homefield demo: {repo} exists and is not an empty folder; pick another --dir", file=sys.stderr)
            return 2
    else:
        repo = Path(tempfile.mkdtemp(prefix="homefield-demo-")).resolve()
    try:
        sample = load_build_history(script)
        shas = sample.build(repo)
    except Exception as exc:  # git missing, unwritable folder, …: one line
        print(f"homefield demo: cannot build the sample repository in {repo}: {exc}", file=sys.stderr)
        return 2
    _say(f"built the sample repository `textkit` ({len(shas)} commits) in {repo}")
    env = _env(repo, sample.FLAKY_ENV)
    # the sample's deliberately flaky test keeps its run counter outside the snapshot (in .git), which a
    # sandboxed test run cannot see (it would then fail every run, not every other): mine this bundled
    # history without the sandbox; the agents' attempts below are graded in it as usual
    code, mine_s = _step(["mine", "-v", "-n", numprocesses, "--sandbox", "none"], repo, env)
    if code != 0:
        what = "interrupted" if code == 130 else f"failed (exit status {code})"
        _say(f"mining {what}; the repository and its records are kept in {repo}")
        return code
    agents = [x for spec in DEMO_AGENTS for x in ["--agent", spec]]  # argv: a list (tests/test_spelling.py)
    code, run_s = _step(["run", *agents, "--attempts", str(DEMO_ATTEMPTS), "-n", numprocesses], repo, env)
    home = HomefieldDir(repo)
    run_id = home.newest_run()
    run_dir = home.run_dir(run_id) if run_id else None
    html = run_dir / "report.html" if run_dir is not None else None
    total = time.monotonic() - started
    lines = ["", "homefield demo summary", f"repo:   {repo} ({len(shas)} commits)", *_mine_summary(repo)]
    if run_dir is not None:
        lines += _run_summary(run_dir)
    if html is not None and html.is_file():
        lines.append(f"report: {html}")
    else:
        lines.append("report: none written (see the run output above)")
    if code != 0:
        lines.append(f"run:    exit status {code}; continue it with: cd {repo} && homefield run "
                     f"{option('resume', 'cli')} " + " ".join(agents) + f" {option('attempts', 'cli')} {DEMO_ATTEMPTS}")
    lines.append(f"time:   {total:.0f} s (mine {mine_s:.0f} s, run {run_s:.0f} s, -n {numprocesses})")
    lines.append(f"next:   cd {repo} && homefield report  (or open report.html in a browser)")
    lines.append(f"see:    cd {repo} && homefield view --serve  (each attempt: transcript, diff, hidden tests)")
    print("\n".join(lines), flush=True)
    return code
