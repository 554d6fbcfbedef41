"""A drop caused by the sandbox's read-only tree says so (nu48): pyparsing b9d10de6bda5's example parser writes its
railroad diagram into the working folder when imported; every sandboxed test run keeps the tree read-only, so the
commit's test module failed to collect and the candidate was dropped as ``reference_fails`` with no word of why."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from helpers.attack_repo import NO_PLUGINS
from helpers.bwrap import bwrap_works
from helpers.gitrepo import GitRepo

from pytest_homefield.mine.redgreen import verify_candidate
from pytest_homefield.sandbox.nethint import read_only_hint

LOG = """==================================== ERRORS ====================================
______________ ERROR collecting examples/tiny/tests/test_tiny.py _______________
pyparsing/core.py:2582: in create_diagram
    with open(output_html, "w", encoding="utf-8") as diag_file:
E   OSError: [Errno 30] Read-only file system: 'tiny_parser_diagram.html'
"""


def test_the_hint_names_the_write_the_read_only_tree_refused(tmp_path: Path) -> None:
    (tmp_path / "tests.log").write_text(LOG)
    (tmp_path / "other.log").write_text("E   assert 1 == 2\n")
    hint = read_only_hint([tmp_path / "other.log", tmp_path / "tests.log", tmp_path / "missing.log"])
    assert hint is not None and "[Errno 30] Read-only file system: 'tiny_parser_diagram.html'" in hint, hint
    assert "read-only" in hint and "sandbox" in hint
    assert read_only_hint([tmp_path / "other.log"]) is None


@pytest.mark.slow
@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is needed")
def test_a_commit_whose_tests_write_into_the_tree_is_dropped_with_the_reason(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/diagram.py", "def size():\n    return 1\n")
    repo.write("tests/test_diagram.py", "from pkg.diagram import size\n\n\ndef test_size():\n    assert size() == 1\n")
    parent = repo.commit("Start the package")
    # as pyparsing's: the module now draws its diagram into the working folder when imported, and the fix
    repo.write("pkg/diagram.py", "with open('diagram.html', 'w') as f:\n    f.write('<html></html>')\n\n\n"
                                 "def size():\n    return 2\n")
    repo.write("tests/test_diagram.py", "from pkg.diagram import size\n\n\ndef test_size():\n    assert size() == 2\n")
    commit = repo.commit("Draw the diagram when the module is imported, and size it 2")
    v = verify_candidate(repo.path, commit=commit, parent=parent, test_files=["tests/test_diagram.py"],
                         runnable_tests=["tests/test_diagram.py"], test_cmd=f"{shlex.quote(sys.executable)} -m pytest "
                         f"{NO_PLUGINS}", setup_cmd=None, stability_runs=1, sandbox="bwrap")
    assert v.reason == "reference_fails", v
    assert "Read-only file system: 'diagram.html'" in v.detail, v.detail  # before: nothing said why
    assert "keeps read-only" in v.detail
    assert v.network_hint is None  # the mine summary's Network: line would call it a connection error
