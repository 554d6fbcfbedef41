"""The export checked by the real swebench package (issue 33); opt-in: ``-m clients``.

swebench comes from this interpreter when it is installed here, else it is installed into a temporary
environment with uv (the test skips when that fails, e.g. offline). ``swebench dataset check`` and
``dataset build`` read the exported task repository; the exported ``eval.sh`` runs without docker on a
clone (its ``cd /testbed`` pointed at the clone) and swebench's own ``make_test_spec`` and
``get_eval_report`` grade its log: the gold patch resolves every task, the empty patch none, and
neither does a patch adding only a forging ``conftest.py`` (atk11 E1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.e2e_repo import copy_mined, homefield

pytestmark = pytest.mark.clients

#: A patch that only adds a root ``conftest.py`` turning every failed call into a pass (atk11 E1): homefield
#: drops it (``empty_patch``); the exported ``eval.sh`` must undo it too.
FORGE = """diff --git a/conftest.py b/conftest.py
new file mode 100644
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,7 @@
+import pytest
+
+
+@pytest.hookimpl(hookwrapper=True)
+def pytest_runtest_makereport(item, call):
+    rep = (yield).get_result()
+    rep.outcome, rep.longrepr = "passed", None
"""

GRADE = """
import json, sys
from swebench.harness.grading import get_eval_report
from swebench.harness.utils import load_swebench_dataset, make_test_spec
flat, iid, log, which = sys.argv[1:5]
inst = {i["instance_id"]: i for i in load_swebench_dataset(flat)}[iid]
patch = inst["patch"] if which == "gold" else FORGE if which == "forge" else ""
report = get_eval_report(make_test_spec(inst), {"instance_id": iid, "model_name_or_path": which,
                         "model_patch": patch}, log, include_tests_status=False)
print(json.dumps(report[iid]))
""".replace("FORGE", repr(FORGE))


@pytest.fixture(scope="module")
def exported(mined: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A copy of the mined fixture repository and its default ``homefield export`` folder."""
    repo = copy_mined(mined, tmp_path_factory.mktemp("export-clients") / "repo")
    proc = homefield(repo, "export", "--repo-name", "me/calc")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo, repo / ".homefield" / "export" / "swe-bench"


def _swebench(python: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, "-c", "import sys; from swebench.cli.cli import main; sys.exit(main())", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_dataset_check_and_build(swebench_python: str, exported: tuple[Path, Path], tmp_path: Path) -> None:
    _, folder = exported
    check = _swebench(swebench_python, "dataset", "check", str(folder))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().splitlines()[-1] == f"{folder} looks well formed"
    build = _swebench(swebench_python, "dataset", "build", str(folder), "-o", str(tmp_path / "pq"))
    assert build.returncode == 0, build.stdout + build.stderr
    assert (tmp_path / "pq" / "calc-homefield" / "test.parquet").is_file()


def test_eval_script_graded_by_swebench(swebench_python: str, exported: tuple[Path, Path], tmp_path: Path) -> None:
    repo, folder = exported
    flat = folder / "instances" / "test.jsonl"
    rows = [json.loads(line) for line in flat.read_text().splitlines()]
    assert len(rows) >= 3
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "HOMEFIELD_"))}
    verdicts: dict[str, list[bool]] = {"gold": [], "empty": [], "forge": []}
    for row in rows:
        iid = row["instance_id"]
        for which in verdicts:
            clone = tmp_path / f"{iid}-{which}"
            subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
            subprocess.run(["git", "checkout", "-q", row["base_commit"]], cwd=clone, check=True)
            if which != "empty":
                patch = row["patch"] if which == "gold" else FORGE
                subprocess.run(["git", "apply", "-"], cwd=clone, input=patch.encode(), check=True)
            script = (folder / "tasks" / iid / "eval.sh").read_text()
            assert script == row["eval_script"]
            script = script.replace("\ncd /testbed\n", f"\ncd {clone}\n", 1)
            proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=300,
                                  check=False)
            log = tmp_path / f"{iid}-{which}.log"
            log.write_text(proc.stdout + proc.stderr)  # the harness reads both streams, as docker exec gives them
            graded = subprocess.run([swebench_python, "-c", GRADE, str(flat), iid, str(log), which],
                                    capture_output=True, text=True, timeout=120, check=False)
            assert graded.returncode == 0, graded.stderr
            verdicts[which].append(json.loads(graded.stdout.strip().splitlines()[-1])["resolved"])
    assert verdicts["gold"] == [True] * len(rows), verdicts  # the oracle resolves every task
    assert verdicts["empty"] == [False] * len(rows), verdicts  # the empty patch none
    assert verdicts["forge"] == [False] * len(rows), verdicts  # nor a conftest.py forging every report


def test_a_hanging_patch_is_stopped_at_the_grading_bound(swebench_python: str, mined: Path,
                                                         tmp_path: Path) -> None:
    """host30: eval.sh ran the tests with no time limit, so a patch that hangs held swebench's harness without end.
    Exported with ``run_timeout: 5``, eval.sh stops the gold patch made to sleep at import after 5 s, says so in one
    line, and swebench's own grading reads the log as not resolved."""
    repo = copy_mined(mined, tmp_path / "repo")
    with (repo / ".homefield.yml").open("a") as fh:
        fh.write("\nrun_timeout: 5\n")
    proc = homefield(repo, "export", "--repo-name", "me/calc")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = repo / ".homefield" / "export" / "swe-bench"
    flat = folder / "instances" / "test.jsonl"
    row = json.loads(flat.read_text().splitlines()[0])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", row["base_commit"]], cwd=clone, check=True)
    subprocess.run(["git", "apply", "-"], cwd=clone, input=row["patch"].encode(), check=True)
    (clone / "calc" / "__init__.py").write_text("import time\ntime.sleep(300)\n"
                                                + (clone / "calc" / "__init__.py").read_text())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith(("PYTEST_", "HOMEFIELD_"))}
    script = row["eval_script"].replace("\ncd /testbed\n", f"\ncd {clone}\n", 1)
    run = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False)
    log = tmp_path / "hang.log"
    log.write_text(run.stdout + run.stderr)
    assert "homefield: the tests were stopped after 5 s, the bound homefield grades this task with (5 s)" in run.stdout
    graded = subprocess.run([swebench_python, "-c", GRADE, str(flat), row["instance_id"], str(log), "gold"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert graded.returncode == 0, graded.stderr
    assert json.loads(graded.stdout.strip().splitlines()[-1])["resolved"] is False
