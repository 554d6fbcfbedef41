"""What homefield's own pytest entry point costs a pytest run that does not use it, side by side.

Run on demand (not a test)::

    python benchmarks/entry_point.py --runs 15
    python benchmarks/entry_point.py --runs 15 --tree before=/tmp/old-checkout --tree after=.

pytest-homefield is installed into the user's own test environment, so pytest autoloads its entry
point (``pytest11: homefield``) in every run there, plain ``pytest`` with no homefield option too.
It is inert without a mode option and imports only the option table (issue lazy29,
tests/test_plugin_inert.py). Every test run homefield makes itself (mining's, grading's, ``verify``'s)
blocks it (``-p no:homefield``, :func:`pytest_homefield.sandbox.testrun.build_command`).

This times ``python -m pytest -q`` over a file of two trivial tests in a fresh folder, with the entry
point loaded and blocked, for each source tree given (``--tree LABEL=PATH``: that checkout's
``pytest_homefield`` first on ``PYTHONPATH``; default: the tree this script is in). All variants run
interleaved, round by round, after one warm-up each, so the machine's load weighs on them alike. It
prints the median CPU seconds (user + system, ``getrusage`` of the child) of each, the entry point's
cost (loaded - blocked) and the ratio loaded / blocked.

Measured on the 2-core machine shared with other jobs (load 7-8), 15 rounds, two sessions, ``before`` the
base of lazy29 (its entry point imported the settings resolution: the agents, the sandbox) and ``after``:

    tree         loaded  blocked    cost  ratio
    before        0.564    0.401   0.163   1.41
    after         0.446    0.401   0.045   1.11
    before        0.469    0.330   0.139   1.42
    after         0.383    0.338   0.045   1.13

What is left (about 45 ms) is the option table itself (``settings_table``: its dataclasses, about 17 ms),
``layout`` with ``records`` (about 6 ms) and registering the options.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def _child_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one child process ``argv``, which must exit 0."""
    start = _child_cpu()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return _child_cpu() - start


def _tree_env(tree: Path) -> dict[str, str]:
    """This environment with ``tree`` first on ``PYTHONPATH`` and no ``PYTEST_*`` variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _parse_tree(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    if not sep or not label or not (Path(path) / "pytest_homefield" / "plugin.py").is_file():
        raise argparse.ArgumentTypeError(f"{text!r}: expected LABEL=PATH of a checkout with pytest_homefield/")
    return label, Path(path).resolve()


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="rounds (each runs every variant once; default 15)")
    ap.add_argument("--tree", type=_parse_tree, action="append", default=[], metavar="LABEL=PATH",
                    help="a source tree to time (repeatable; default: this checkout)")
    args = ap.parse_args()
    trees: list[tuple[str, Path]] = args.tree or [("this", Path(__file__).resolve().parent.parent)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "test_x.py").write_text("def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_x.py"]
        variants = {(label, mode): (argv, _tree_env(tree)) for label, tree in trees
                    for mode, argv in (("loaded", base), ("blocked", [*base, "-p", "no:homefield"]))}
        times: dict[tuple[str, str], list[float]] = {k: [] for k in variants}
        for argv, env in variants.values():
            _run(argv, root, env)  # warm-up (and .pyc files written)
        for _ in range(args.runs):
            for k, (argv, env) in variants.items():
                times[k].append(_run(argv, root, env))
    print(f"python -m pytest -q, two trivial tests: median CPU s (user+sys) of {args.runs} interleaved rounds")
    print(f"{'tree':<10} {'loaded':>8} {'blocked':>8} {'cost':>7} {'ratio':>6}")
    for label, _ in trees:
        loaded, blocked = (statistics.median(times[(label, m)]) for m in ("loaded", "blocked"))
        print(f"{label:<10} {loaded:>8.3f} {blocked:>8.3f} {loaded - blocked:>7.3f} {loaded / blocked:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
