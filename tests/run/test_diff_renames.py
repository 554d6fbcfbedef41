"""An attempt's ``diff.patch`` (:func:`pytest_homefield.run.changes.render_diff`) shows a moved file as a deletion
and an addition, as the task's gold patch does (the scan reads history with ``--no-renames``).

nu39: python-jsonschema 931323043b44 renames ``jsonschema/_validators.py`` to ``_keywords.py``. The oracle's
diff.patch came out as a rename whose ``rename from`` / ``rename to`` lines named the host's temporary folders
(``rename from /dev/shm/hf-…/a/jsonschema/_validators.py``): a patch that applies nowhere, a host path in the
view, and an oracle "diff vs gold" of edit-F1 0.40 on a reference fix applied exactly (398 of the gold's 1,590
lines: the moved files' contents are in the gold patch and not in a rename).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pytest_homefield.run.changes import render_diff, tree_changes

BODY = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(20))


def test_a_moved_file_is_a_deletion_and_an_addition_that_applies(tmp_path: Path) -> None:
    pristine, workspace = tmp_path / "pristine", tmp_path / "workspace"
    (pristine / "pkg").mkdir(parents=True)
    (pristine / "pkg" / "_validators.py").write_text(BODY)
    (pristine / "pkg" / "core.py").write_text("from pkg._validators import f1\n")
    shutil.copytree(pristine, workspace)
    (workspace / "pkg" / "_validators.py").rename(workspace / "pkg" / "_keywords.py")
    (workspace / "pkg" / "core.py").write_text("from pkg._keywords import f1\n")
    changes = tree_changes(pristine, workspace)
    diff = render_diff(pristine, workspace, sorted(changes), changes)
    assert "rename from" not in diff and str(tmp_path.parent) not in diff and "/hf-" not in diff, diff
    assert "diff --git a/pkg/_keywords.py b/pkg/_keywords.py\nnew file mode" in diff
    assert "diff --git a/pkg/_validators.py b/pkg/_validators.py\ndeleted file mode" in diff
    assert diff.count("+def f") == 20  # the moved file's content, as in the gold patch
    copy = tmp_path / "copy"
    shutil.copytree(pristine, copy)
    subprocess.run(["git", "apply", "-"], cwd=copy, input=diff, text=True, check=True, capture_output=True)
    assert tree_changes(copy, workspace) == {}
