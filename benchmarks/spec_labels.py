"""Precision and recall of "vague" (``not well_specified``) against hand-labelled prompts.

``benchmarks/data/spec_labels.jsonl``: 125 candidates of three public repositories (45 merges of
more-itertools/more-itertools since 2023 with ``--first-parent --merges``, 40 commits of simonw/llm
since 2024-06, 40 of python-humanize/humanize), one line each: ``{repo, commit, subject, vague}``.
Labelled by reading the prompt and the names of the hidden tests only, before any score was
computed, with one rule: *vague* when a developer given only the prompt could not tell what to
change or what behaviour is wanted (housekeeping, "Update X", "Concurrent tee", a bare feature noun).

Usage (each clone a local git repository of that project)::

    python benchmarks/spec_labels.py more-itertools/more-itertools=/tmp/mit simonw/llm=/tmp/llm \\
        python-humanize/humanize=/tmp/humanize [--threshold 0.5] [-v]

Prints ``vague: precision P recall R (tp fp fn tn)`` per repository and overall; ``-v`` lists every
disagreement with its score parts. The prompt is rebuilt by the scan itself (merges composed as
mining composes them), the patches by ``git diff parent commit`` split by the scan's file classes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter
from pathlib import Path

from pytest_homefield.mine.message_score import is_well_specified, spec_breakdown, spec_score
from pytest_homefield.mine.scan import ScanOptions, scan

DATA = Path(__file__).parent / "data" / "spec_labels.jsonl"


def _diff(repo: Path, parent: str, commit: str, paths: list[str]) -> str:
    if not paths:
        return ""
    return subprocess.run(["git", "-C", str(repo), "diff", parent, commit, "--", *paths],
                          capture_output=True, text=True, check=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clones", nargs="+", help="OWNER/NAME=PATH of a local clone")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("-v", action="store_true")
    ns = parser.parse_args()
    clones = {k: Path(v) for k, v in (c.split("=", 1) for c in ns.clones)}
    labels = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    counts: dict[str, Counter[str]] = {}
    for repo_name, path in clones.items():
        wanted = {lab["commit"]: lab for lab in labels if lab["repo"] == repo_name}
        merges = any(lab["subject"].startswith("Merge pull request") for lab in wanted.values())
        result = scan(path, ScanOptions(min_message_words=0, first_parent=merges, merges=merges))
        found = {c.commit: c for c in result.candidates if c.commit in wanted}
        tally = counts.setdefault(repo_name, Counter())
        tally["missing"] += len(wanted) - len(found)
        for sha, cand in found.items():
            gold = _diff(path, cand.parent, sha, cand.source_files)
            test = _diff(path, cand.parent, sha, cand.test_files)
            score = spec_score(cand.message, test_patch=test, gold_patch=gold, prompt=cand.prompt,
                               threshold=ns.threshold)
            said = not is_well_specified(score, ns.threshold)
            truth = bool(wanted[sha]["vague"])
            kinds = {(True, True): "tp", (True, False): "fp", (False, True): "fn", (False, False): "tn"}
            tally[kinds[said, truth]] += 1
            if ns.v and said != truth:
                parts = spec_breakdown(cand.message, test_patch=test, gold_patch=gold, prompt=cand.prompt,
                                       threshold=ns.threshold)
                kind = "said vague" if said else "missed vague"
                print(f"{kind:12} {score:.2f} {sha[:12]} {cand.subject[:60]!r} "
                      + " ".join(f"{k}={v:g}" for k, v in parts.items() if v))
    total: Counter[str] = Counter()
    for name, tally in [*counts.items(), ("all", None)]:
        t = total if tally is None else tally
        if tally is not None:
            total.update(tally)
        p = t["tp"] / max(1, t["tp"] + t["fp"])
        r = t["tp"] / max(1, t["tp"] + t["fn"])
        print(f"{name:32} vague: precision {p:.2f} recall {r:.2f}  (tp {t['tp']} fp {t['fp']} fn {t['fn']} "
              f"tn {t['tn']}; not found {t['missing']})")


if __name__ == "__main__":
    main()
