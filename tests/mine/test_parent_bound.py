"""Mining's slow paths (issue 35): targeted reruns name a module that failed to import as a path (its
ids would make pytest abort the run, exit 4, and cost a full rerun); a parent run after commit run 1 is
bounded by 5× that run's time (with a floor), and the drop says so."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo

from pytest_homefield.mine import redgreen
from pytest_homefield.mine.redgreen import _targets, verify_candidate


def test_targets_name_a_broken_module_as_a_path() -> None:
    select = ["t/test_a.py::x", "t/test_b.py::y", "t/test_a.py::z[1]"]
    assert _targets(select, set()) == select
    assert _targets(select, {"t/test_a.py"}) == ["t/test_a.py", "t/test_b.py::y"]


@pytest.mark.slow
def test_a_parent_that_hangs_is_stopped_at_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "seen"
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "def f():\n    return 1\n")
    repo.write("tests/test_f.py", "from pkg import f\n\n\ndef test_f():\n    assert f() == 1\n")
    parent = repo.commit("Start the package with f")
    repo.write("pkg/__init__.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    # red at once in parent run 1; every later parent run hangs (the bug the commit fixes may be a hang)
    repo.write("tests/test_g.py", f"import os, time\n\nimport pkg\n\n\ndef test_g():\n"
                                  f"    if not hasattr(pkg, 'g'):\n        if os.path.exists({str(marker)!r}):\n"
                                  f"            time.sleep(120)\n        open({str(marker)!r}, 'w').close()\n"
                                  f"    assert pkg.g() == 2\n")
    commit = repo.commit("Add g returning two")
    monkeypatch.setattr(redgreen, "PARENT_FLOOR_S", 1.0)
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_g.py"],
                         runnable_tests=["tests/test_g.py"], test_cmd=f"{shlex.quote(sys.executable)} -m pytest "
                         f"{NO_PLUGINS}", setup_cmd=None, stability_runs=2, run_timeout_s=100)
    assert v.reason == "timeout", v
    assert v.detail.startswith("parent run 2 stopped at ") and "5× commit run 1" in v.detail, v.detail
    assert v.parent_s < 60


@pytest.mark.slow
def test_a_module_that_cannot_import_at_the_parent_keeps_reruns_targeted(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "def f():\n    return 1\n")
    repo.write("tests/test_f.py", "from pkg import f\n\n\ndef test_f():\n    assert f() == 2\n")
    parent = repo.commit("Start the package with f")
    repo.write("pkg/__init__.py", "def f():\n    return 2\n")
    repo.write("pkg/h.py", "def h():\n    return 3\n")
    repo.write("tests/test_h.py", "from pkg.h import h\n\n\ndef test_h():\n    assert h() == 3\n")
    commit = repo.commit("Make f return two and add h")
    tests = ["tests/test_f.py", "tests/test_h.py"]
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=tests, runnable_tests=tests,
                         test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", setup_cmd=None,
                         stability_runs=2, log_dir=tmp_path / "logs")
    assert v.reason is None and v.FAIL_TO_PASS == ["tests/test_f.py::test_f", "tests/test_h.py::test_h"], v
    runs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert "parent-2" in runs and not [r for r in runs if r.endswith("-full")], runs  # no full rerun
