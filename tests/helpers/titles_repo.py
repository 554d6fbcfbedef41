"""A tiny real repository whose one task fixes ``titlecase()`` after an apostrophe (atk27), for the tests of a
canary twin whose value is the parent's own output (tests/run/test_parent_twin_hits.py, test_parent_tell.py).

The parent's ``titlecase`` is ``s.title()``, which makes ``"don't look back"`` ``"Don'T Look Back"``; the
commit fixes it and adds ``tests/test_titles.py`` (one FAIL_TO_PASS function, one PASS_TO_PASS). With the canary
seed :data:`PARENTS_OUTPUT` the twin of ``"Don't Look Back"`` is the parent's ``"Don'T Look Back"``, with
:data:`OTHER_VALUE` ``"don't look back"``.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from helpers.attack_repo import NO_PLUGINS
from helpers.gitrepo import GitRepo
from pytest_homefield.mine.prompt import clean_prompt
from pytest_homefield.mine.redgreen import make_gold_patch, make_test_patch
from pytest_homefield.records import Task
from pytest_homefield.sandbox.snapshot import make_snapshot

__all__ = ["SOURCE", "TEST", "PARENT", "FIXED", "TESTS", "F2P", "P2P", "PARENTS_OUTPUT", "OTHER_VALUE", "Titles",
           "build"]

SOURCE = "src/titles/__init__.py"
TEST = "tests/test_titles.py"
PARENT = "def titlecase(s):\n    return s.title()\n"
FIXED = "def titlecase(s):\n    return ' '.join(w[:1].upper() + w[1:] for w in s.split(' '))\n"
TESTS = ("from titles import titlecase\n\n\n"
         "def test_apostrophes_do_not_start_a_word():\n"
         "    assert titlecase(\"don't look back\") == \"Don't Look Back\"\n\n\n"
         "def test_plain_words():\n    assert titlecase(\"look back\") == \"Look Back\"\n")
F2P = [f"{TEST}::test_apostrophes_do_not_start_a_word"]
P2P = [f"{TEST}::test_plain_words"]
PARENTS_OUTPUT, OTHER_VALUE = 4, 0  # seeds


@dataclass
class Titles:
    root: Path
    task: Task
    pristine: Path


def build(dest: Path) -> Titles:
    """The repository in ``dest``/repo, its task and the parent's snapshot in ``dest``/pristine."""
    repo = GitRepo.init(dest / "repo")
    for rel, text in {SOURCE: PARENT, "tests/test_other.py": "def test_ok():\n    assert True\n",
                      "pyproject.toml": '[project]\nname = "titles"\nversion = "0"\n'}.items():
        repo.write(rel, text)
    c1 = repo.commit("Add titlecase()", committer_date="2026-01-01T12:00:00+00:00")
    message = "titlecase(): a word after an apostrophe is no new word (\"don't\" became \"Don'T\")"
    repo.write(SOURCE, FIXED)
    repo.write(TEST, TESTS)
    c2 = repo.commit(message, committer_date="2026-01-02T12:00:00+00:00")
    root = repo.path
    task = Task(id=c2[:12], commit=c2, parent=c1, committed_at="2026-01-02T12:00:00+00:00",
                authored_at="2026-01-02T12:00:00+00:00", mode="commit", subject=message, message=message,
                prompt=clean_prompt(message), source_files=[SOURCE], test_files=[TEST],
                test_patch=make_test_patch(root, c1, c2, [TEST]), gold_patch=make_gold_patch(root, c1, c2, [TEST]),
                FAIL_TO_PASS=list(F2P), PASS_TO_PASS=list(P2P),
                test_cmd=f"{shlex.quote(sys.executable)} -m pytest {NO_PLUGINS}", canaries=1)
    return Titles(root, task, make_snapshot(root, c1, dest=dest / "pristine", init_git=True))
