"""atk46: a ``preds:FILE`` prediction that GNU ``patch`` (SWE-bench's fallback) passes on its dry run and then
applies only in part. ``git apply`` refuses the whole patch (a file beyond a symbolic link the patch itself makes);
``patch --dry-run`` makes no link, so the file beyond it is only a new file there, and the dry run passes; the real
run makes the link, refuses the file beyond it (``Invalid file name``, exit status 1), and has applied the fix and
the link before it. The SWE-bench harness reads that exit status as "patch failed to apply" (unresolved); homefield
ignored it and graded the partial change: the fix alone, ``solved`` (measured below, seed of the session's canary key).
Now a real run that fails after its dry run passed is :class:`PatchError`, ``agent_error`` with patch's message, as
SWE-bench counts it; the partial change is kept in ``diff.patch`` for auditing, not graded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.attack_repo import GOOD_CALC, Fixture, task_for

from pytest_homefield.agents.predictions import PredictionsAgent, apply_like_swebench
from pytest_homefield.errors import PatchError
from pytest_homefield.run.attempt import AttemptSpec, SnapshotCache, run_attempt
from pytest_homefield.sandbox.modes import SandboxChoice

pytestmark = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")


def _link_then_beyond(target: Path) -> str:
    """A git diff making ``lnk`` a symbolic link to ``target`` and then a file ``lnk/beyond.txt`` (beyond it)."""
    return (f"diff --git a/lnk b/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n+{target}\n"
            "\\ No newline at end of file\n"
            "diff --git a/lnk/beyond.txt b/lnk/beyond.txt\nnew file mode 100644\n--- /dev/null\n+++ b/lnk/beyond.txt\n"
            "@@ -0,0 +1 @@\n+BEYOND\n")


def test_a_patch_that_applies_in_part_is_refused_and_nothing_is_written_beyond_its_link(tmp_path: Path) -> None:
    """The real run of ``patch`` failing after its dry run passed: before, ``apply_like_swebench`` returned (the
    edit and the link applied, exit status 1 unread); now :class:`PatchError`. Nothing is written outside either
    way (patch 2.7.6 refuses a path beyond a link)."""
    work, outside = tmp_path / "w", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "f.txt").write_text("a\nb\nc\n")
    edit = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    with pytest.raises(PatchError, match="beyond.txt"):
        apply_like_swebench(work, edit + _link_then_beyond(outside))
    assert list(outside.iterdir()) == []


def test_a_prediction_that_applies_in_part_is_not_graded(fx: Fixture, tmp_path: Path) -> None:
    """The task's fix followed by the link and the file beyond it, as a ``preds:`` prediction, one attempt under
    ``--sandbox none``. Before: ``solved`` (the fix graded; SWE-bench: patch failed to apply). Now: ``agent_error``,
    no test run."""
    task = task_for(fx)
    fix = ("diff --git a/src/calc/__init__.py b/src/calc/__init__.py\n--- a/src/calc/__init__.py\n"
           "+++ b/src/calc/__init__.py\n@@ -1,2 +1,6 @@\n def add(a, b):\n     return a + b\n+\n+\n"
           "+def sub(a, b):\n+    return a - b\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"instance_id": f"calc__{task.id}", "model_name_or_path": "m",
                                 "model_patch": fix + _link_then_beyond(tmp_path / "outside")}) + "\n")
    (tmp_path / "outside").mkdir()
    agent = PredictionsAgent(name="preds", spec=f"preds:{preds}", path=preds)
    cache = SnapshotCache(repo=fx.root)
    try:
        cache.keep([task])
        r = run_attempt(AttemptSpec(task=task, agent=agent, attempt=1, run_id="r", run_dir=tmp_path / "run",
                                    timeout_s=60, run_timeout_s=120, sandbox=SandboxChoice("none", "none")), cache)
    finally:
        cache.close()
    assert GOOD_CALC.endswith("return a - b\n")  # the fix above is the reference fix
    assert r.outcome == "agent_error", r
    assert "beyond.txt" in (r.error or ""), r
    assert list((tmp_path / "outside").iterdir()) == []
