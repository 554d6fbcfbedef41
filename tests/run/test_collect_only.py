"""pytest's ``--collect-only`` with ``--homefield`` lists the attempts a run would make and makes no run: no run
folder, no ``meta.json``, no report (rev58; nu56 on Suor/funcy: each ``pytest --homefield -k … --collect-only``, to
see what ``-k`` selects, left a run folder holding no result, which ``homefield report`` and ``view`` then took for
the newest run). A real pytest run of the plugin in a fresh repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_homefield.records import Task
from pytest_homefield.store import write_jsonl_atomic


def test_collect_only_makes_no_run_folder(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    task = Task(id="0" * 12, commit="0" * 40, parent="0" * 40, committed_at="", authored_at="", mode="commit",
                subject="t", message="", prompt="p", source_files=[], test_files=[], test_patch="", gold_patch="",
                FAIL_TO_PASS=["t.py::test_a"], PASS_TO_PASS=[])
    write_jsonl_atomic(tmp_path / ".homefield" / "tasks.jsonl", [task.to_dict()])
    proc = subprocess.run([sys.executable, "-m", "pytest", "--homefield", "--homefield-agent=noop", "--collect-only",
                           "-q", "-p", "no:randomly", "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ".homefield/tasks.jsonl::000000000000::noop[3]" in proc.stdout
    assert "--collect-only: no run made, nothing recorded" in proc.stdout
    assert sorted(p.name for p in (tmp_path / ".homefield").iterdir()) == ["tasks.jsonl"]  # before: runs/<id>/
