"""What ``homefield mine`` costs on a real repository, side by side with a baseline checkout of the
package, back to back in one session; and what a re-mine of the unchanged repository costs.

Run on demand (not a test)::

    git -C /work/main worktree add --detach /tmp/hf-base <commit before the change>
    python benchmarks/mine.py /work/repos/more-itertools+more-itertools --baseline /tmp/hf-base \\
        --python /work/venvs/mit/bin -- --first-parent --merges --since 2026-03-01 -n 2

For each of ``--rounds`` rounds it clones the repository twice into ``--work`` (default a temporary
folder), mines one clone with the baseline first on ``PYTHONPATH`` and then the other with this
checkout (alternating which goes first from round to round), each with the arguments after ``--``
and ``--python``'s folder first on ``PATH`` (the repository's venv). It prints each mine's wall
seconds and CPU seconds (user+sys of the descendants that were waited for: the xdist workers' test
runs are not all counted, so compare wall times) and summary, the ratios this / baseline, and
whether both kept the same task ids with the same FAIL_TO_PASS sets. ``--remine`` then mines this
checkout's clone once more with the same arguments (nothing changed: every candidate is reused) and
prints its time. Targets (issue 18): wall ≤ 0.45× the baseline's on more-itertools, identical task
ids and FAIL_TO_PASS sets.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _mine(code: Path, repo: Path, args: list[str], python_bin: Path | None) -> tuple[float, float, str]:
    """One ``homefield mine`` in ``repo`` with ``code`` first on PYTHONPATH: wall s, CPU s, the lines
    of its summary section."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HOMEFIELD_"))}
    env["PYTHONPATH"] = str(code)
    if python_bin is not None:
        env["PATH"] = f"{python_bin}{os.pathsep}{env.get('PATH', '')}"
    exe = str(python_bin / "python") if python_bin is not None else sys.executable
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([exe, "-m", "pytest_homefield.cli", "mine", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.splitlines()
    at = next((i for i, ln in enumerate(lines) if "homefield mine" in ln and ln.startswith("=")), None)
    summary = [ln for ln in lines[at + 1:] if not ln.startswith("=")] if at is not None else lines[-5:]
    if proc.returncode != 0:
        summary.append(f"exit status {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}")
    return wall, cpu, "\n".join(summary)


def _tasks(repo: Path) -> dict[str, list[str]]:
    """task id -> sorted FAIL_TO_PASS of ``repo``'s tasks.jsonl."""
    path = repo / ".homefield" / "tasks.jsonl"
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        t = json.loads(line)
        out[t["id"]] = sorted(t["FAIL_TO_PASS"])
    return out


def _clone(src: Path, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(src), str(dest)], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="the repository to mine (cloned, never modified)")
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of the package to compare with")
    parser.add_argument("--python", type=Path, help="the venv's bin folder (put first on PATH)")
    parser.add_argument("--rounds", type=int, default=1, help="baseline/this pairs (default 1)")
    parser.add_argument("--work", type=Path, help="where the clones go (default: a temporary folder, removed)")
    parser.add_argument("--remine", action="store_true", help="then mine this checkout's clone again")
    parser.epilog = "Arguments after -- go to homefield mine."
    argv = list(sys.argv[1:] if argv is None else argv)
    args = argv[argv.index("--") + 1:] if "--" in argv else []
    ns = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    work = ns.work or Path(tempfile.mkdtemp(prefix="hf-mine-bench-"))
    codes = {"baseline": ns.baseline.resolve(), "this": HERE}
    print(f"homefield mine {' '.join(args)} on {ns.repo}; {ns.rounds} round(s); python {ns.python or sys.executable}")
    ratios_wall, ratios_cpu = [], []
    try:
        for k in range(ns.rounds):
            order = ["baseline", "this"] if k % 2 == 0 else ["this", "baseline"]
            got: dict[str, tuple[float, float, dict[str, list[str]]]] = {}
            for name in order:
                clone = work / f"{name}-{k}"
                _clone(ns.repo, clone)
                wall, cpu, summary = _mine(codes[name], clone, args, ns.python)
                got[name] = (wall, cpu, _tasks(clone))
                print(f"round {k + 1} {name:<8}: wall {wall:7.1f} s  cpu {cpu:7.1f} s")
                print("    " + summary.replace("\n", "\n    "))
            rw, rc = got["this"][0] / got["baseline"][0], got["this"][1] / got["baseline"][1]
            ratios_wall.append(rw)
            ratios_cpu.append(rc)
            same = got["this"][2] == got["baseline"][2]
            print(f"round {k + 1} ratio this/baseline: wall {rw:.2f}x, cpu {rc:.2f}x; "
                  f"{len(got['this'][2])} vs {len(got['baseline'][2])} tasks, task ids and FAIL_TO_PASS sets "
                  f"{'identical' if same else 'DIFFER'}")
            if not same:
                a, b = got["this"][2], got["baseline"][2]
                for tid in sorted(set(a) | set(b)):
                    if a.get(tid) != b.get(tid):
                        print(f"    {tid}: this {a.get(tid)} baseline {b.get(tid)}")
        if ns.rounds > 1:
            ratios_wall.sort()
            ratios_cpu.sort()
            print(f"median ratio: wall {ratios_wall[len(ratios_wall) // 2]:.2f}x, "
                  f"cpu {ratios_cpu[len(ratios_cpu) // 2]:.2f}x")
        if ns.remine:
            clone = work / f"this-{ns.rounds - 1}"
            wall, cpu, summary = _mine(HERE, clone, args, ns.python)
            print(f"re-mine (unchanged repository) this: wall {wall:.1f} s  cpu {cpu:.1f} s")
            print("    " + summary.replace("\n", "\n    "))
    finally:
        if ns.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
