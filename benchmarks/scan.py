"""How much the candidate scan costs over the bare ``git log`` of the same walk.

Run on demand (not a test), on a clone with a long history, e.g. pytest-dev/pytest (≥ 10,000
commits)::

    git clone https://github.com/pytest-dev/pytest /tmp/pytest
    python benchmarks/scan.py /tmp/pytest --runs 7

For each walk it measures, alternately, ``git log <walk> --name-status`` (its whole output read
through a pipe) and :func:`pytest_homefield.mine.scan.scan` with the same walk and the default cheap
filters (no ``max_diff_lines``; each scan with an empty prompt cache, as a first scan), after one
warm-up of each; it prints both medians and the median of
the per-run ratios scan / git log. CPU seconds, not wall time (the machines are shared): user + system
time of this process and of the children it waited for (``resource.getrusage``), so the scan's own
git processes count. Target (issue 35): ≤ 1.3× for all history and for the first-parent walk.

Measured on pytest (17,666 commits; 2 shared cores at load 2-8, so ±10 % from run to run). The floor,
load-proof (callgrind instructions): ``git log --name-status`` costs 1,365M first-parent and 2,947M all
history; the walk's own git 1,014M (0.74×) and 2,497M (0.85×), of which ``--raw`` (every blob id, for the
submodule modes and filter 10) is only 51M and 124M and the ISO dates ``%aI``/``%cI`` 81M; the rest is reading
and diffing trees (zlib's inflate alone 44 %), which git log pays too (``-c core.deltaBaseCacheLimit=1g``
changes nothing: 1,014M either way). The scan's other git processes (rev-parse, ls-tree, cat-file) cost ~2 ms
of CPU each to start. Since issue 35's third round the walk is spooled (git writes it to a temporary file and
exits, then it is parsed: some 3 % less CPU than parsing while git walks, more the higher the load); its
fourth (branch i-scan44) turned most commits down by their paths' classes without a ``Change`` and tested the
inline prechecks once per message, -1.7 % first-parent and -3.4 % all history of the Python side.

Issue 35's fifth round (branch i-scan47). Where main's Python side went (callgrind, a fresh process, imports not
counted), all history: parsing 365M, filters 3-8 553M, filter 9's cleaning of the 2,853 messages that reach it
695M, filter 10 448M; first-parent 934M, of which the cleaning 310M (1,099 messages, 282k instructions
each). No cost moved elsewhere: every candidate's prompt is still cleaned in the scan (``candidates.jsonl``
holds it), once; what changed is how much each cleaning, parse and manifest read costs. Each rule now runs only
where it can match: steps 1-3 of :func:`~pytest_homefield.mine.prompt.clean_prompt` are skipped for a message
none of whose lines starts with a rule's token, a separator or a merge subject (2,608 of 2,853; 1,837 need no
step at all); the reference
and sha patterns (tried at every character) search only the tokens holding their anchors, the sentinel rules
start where a match can; hex runs are sought in ASCII bytes; ``count_words`` of ASCII text is one bytes pass
(:mod:`~pytest_homefield.mine.prompt_inline`). Cleaning first-parent: 310M -> 178M. The walk's pattern
repeats possessively (Python 3.11+): parsing first-parent 136M -> 107M. pyproject headers are sought after
newlines (pyproject versions, all history: 173M -> 103M); a path's name meets the fourteen test-module patterns
only when it holds one of their marks. Tried and dropped: cutting each record with ``bytes.find``/``split``
instead of the pattern (145M against the pattern's 136M). Same results throughout (``scan_same.py`` on
pytest, more-itertools and llm, all four walks; every commit message of the three and itsdangerous, and 300k
fuzzed ones, through both ``clean_prompt``). Python side, this / main: first-parent 934M -> 761M (-19 %), all
history 2,111M -> 1,708M (-19 %); by phase, all history: parsing 365M -> 338M, filters 3-8 553M -> 543M,
cleaning 695M -> 407M, filter 10 448M -> 385M.

``--baseline`` (main), median of the pairs per walk: this / main total (and its Python side alone), then the
ratio to git log of this and of main; load averages before/after:

- 11 pairs, load 4.4/5.4 (without the possessive pattern): first-parent 0.95, Python 0.87 (1.20x, 1.25x);
  all history 0.94, Python 0.88 (1.21x, 1.26x); first-parent + merges 0.92, Python 0.87 (1.94x, 2.11x);
- 11 pairs, load 4.8/7.7, later: first-parent 0.95, Python 0.87 (1.15x, 1.21x); all history 0.97, Python 0.90
  (1.18x, 1.23x); first-parent + merges 0.92, Python 0.86 (1.88x, 2.06x);
- 9 pairs, load 4.2/2.6, later still: first-parent 0.90, Python 0.86 (1.11x, 1.18x); all history 0.91, Python
  0.85 (1.13x, 1.21x); first-parent + merges 0.94, Python 0.87 (1.72x, 1.87x).

So the scan holds 1.3x in both walks with a margin at these loads (1.11-1.21x, main 1.18-1.26x); 1.2x with
room to spare it does not: all history the scan's git is ~0.7x git log's CPU and its Python side still
~0.47x. The rest is spread thin: filters 3-8 (per commit, ~40k instructions) are now the largest part, then
filter 10's ``setup.py`` versions (229M all history), then parsing.

Before this round, ``--baseline`` run from this checkout's folder compared the checkout with itself: ``python
-c`` puts the working folder first on ``sys.path``, ahead of ``PYTHONPATH``, so the baseline's child imported
this checkout (and ``scan_same.py`` said "same" for any change). Each child now runs from the folder of the
checkout it measures. The fourth round's side-by-side figures (0.95-1.12 first-parent, 0.99-1.04 all
history, "within the noise") are of that kind if they were taken as the usage line above runs it.

``--baseline DIR`` (a checkout of the package, e.g. ``git archive <commit> pytest_homefield | tar -x -C
DIR``) times both versions side by side instead: each run measures git log, then this checkout's scan
and the baseline's (taking turns first), each as the first scan of a fresh Python process (imports not
counted), and prints both ratios, this / baseline, and the Python side's CPU apart from the scan's git
processes' (``RUSAGE_SELF``, which the load moves less). ``benchmarks/scan_same.py`` checks, with the same
baseline, that the faster scan gives the same result.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.scan import ScanOptions, format_scan, scan

HERE = Path(__file__).resolve().parent.parent

WALKS = {
    "first-parent": (["--first-parent", "--no-merges"], ScanOptions(first_parent=True)),
    "all non-merges": (["--no-merges"], ScanOptions()),
    "first-parent + merges": (["--first-parent", "--diff-merges=first-parent"],
                              ScanOptions(first_parent=True, merges=True)),
}


def _cpu() -> float:
    """CPU seconds so far (user + system) of this process and of its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _time_git(repo: Path, walk: list[str]) -> float:
    start = _cpu()
    subprocess.run(["git", "-C", str(repo), "log", *walk, "--name-status", "HEAD"],
                   stdout=subprocess.PIPE, check=True)
    return _cpu() - start


def _time_scan(repo: Path, options: ScanOptions) -> tuple[float, str]:
    """CPU seconds of one scan in this process, as if it were the first: the prompt-cleaning cache is
    emptied first (a ``homefield mine`` scans once; reusing the cache left out the cleaning, a fifth to a
    third of the Python side)."""
    clean_prompt.cache_clear()
    start = _cpu()
    result = scan(repo, options)
    return _cpu() - start, format_scan(result).splitlines()[-1]


_CHILD = """
import resource, sys
from pathlib import Path
from pytest_homefield.mine.scan import ScanOptions, scan
def cpu(who):
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime
options = ScanOptions(first_parent=sys.argv[2] == "1", merges=sys.argv[3] == "1")
own, kids = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
scan(Path(sys.argv[1]), options)
print(cpu(resource.RUSAGE_SELF) - own, cpu(resource.RUSAGE_CHILDREN) - kids)
"""


def _time_scan_in(code: Path, repo: Path, options: ScanOptions) -> tuple[float, float]:
    """CPU seconds of one scan in a fresh Python process with ``code`` first on ``PYTHONPATH``: its
    imports done, no earlier scan (a ``homefield mine`` scans once; a second scan in one process reuses
    the prompt-cleaning cache). ``(Python, git)``: the process's own and its git children's."""
    env = os.environ | {"PYTHONPATH": str(code)}
    # run from code's folder: "python -c" puts the working folder first on sys.path, before PYTHONPATH, and run
    # from this checkout the baseline's child imported this checkout (the side-by-side compared it with itself)
    out = subprocess.run([sys.executable, "-c", _CHILD, str(repo.resolve()), str(int(options.first_parent)),
                          str(int(options.merges))], env=env, cwd=code, capture_output=True, text=True, check=True)
    own, kids = out.stdout.split()
    return float(own), float(kids)


def _side_by_side(repo: Path, baseline: Path, runs: int, walks: list[str]) -> None:
    """One block per walk: git log, then this checkout's scan and the baseline's, in turns first."""
    for name in walks:
        walk, options = WALKS[name]
        git_s: list[float] = []
        this_py: list[float] = []
        this_git: list[float] = []
        base_py: list[float] = []
        base_git: list[float] = []
        for i in range(runs):
            git_s.append(_time_git(repo, walk))
            # which scan goes first alternates: the one right after git log ran on warmer (or colder) caches
            first, second = (this_py, this_git, HERE), (base_py, base_git, baseline)
            for py, kids, code in (first, second) if i % 2 == 0 else (second, first):
                own, children = _time_scan_in(code, repo, options)
                py.append(own)
                kids.append(children)
        this_s = [p + g for p, g in zip(this_py, this_git, strict=True)]
        base_s = [p + g for p, g in zip(base_py, base_git, strict=True)]
        med = statistics.median
        print(f"\n[{name}] git log {' '.join(walk)} --name-status")
        print(f"  CPU medians: git log {med(git_s):.3f} s, this scan {med(this_s):.3f} s, baseline scan "
              f"{med(base_s):.3f} s")
        print(f"  of which Python (the scan's git processes aside): this {med(this_py):.3f} s, baseline "
              f"{med(base_py):.3f} s; this / baseline {med(t / b for t, b in zip(this_py, base_py, strict=True)):.2f}x")
        print(f"  ratio scan / git log: this {med(t / g for t, g in zip(this_s, git_s, strict=True)):.2f}x, "
              f"baseline {med(b / g for b, g in zip(base_s, git_s, strict=True)):.2f}x; this / baseline "
              f"{med(t / b for t, b in zip(this_s, base_s, strict=True)):.2f}x")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print one block per walk; exit status 0."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a git clone with a long history")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per walk (default 7)")
    parser.add_argument("--walk", choices=[*WALKS, "all"], default="all")
    parser.add_argument("--baseline", type=Path, help="a checkout of the package to compare with, side by side")
    args = parser.parse_args(argv)

    commits = subprocess.run(["git", "-C", str(args.repo), "rev-list", "--count", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    print(f"{args.repo}: {commits} commits reachable from HEAD; {args.runs} runs per walk; "
          f"python {sys.version.split()[0]}")
    if args.baseline:
        _side_by_side(args.repo, args.baseline.resolve(), args.runs, [w for w in WALKS if args.walk in ("all", w)])
        return 0
    for name, (walk, options) in WALKS.items():
        if args.walk not in ("all", name):
            continue
        _time_git(args.repo, walk)
        _, summary = _time_scan(args.repo, options)
        git_s: list[float] = []
        scan_s: list[float] = []
        for _ in range(args.runs):
            git_s.append(_time_git(args.repo, walk))
            scan_s.append(_time_scan(args.repo, options)[0])
        ratios = [s / g for s, g in zip(scan_s, git_s, strict=True)]
        print(f"\n[{name}] git log {' '.join(walk)} --name-status")
        print(f"  {summary}")
        print(f"  CPU: git log median {statistics.median(git_s):.3f} s, scan median {statistics.median(scan_s):.3f} s")
        print(f"  ratio scan / git log: median {statistics.median(ratios):.2f}x "
              f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
