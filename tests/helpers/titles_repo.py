"""A tiny real repository whose one task fixes ``titlecase()`` after an apostrophe (atk27), for the tests of a
canary twin whose value is the parent's own output (tests/run/test_parent_twin_hits.py, test_parent_tell.py).

The parent's ``titlecase`` is ``s.title()``, which makes ``"don't look back"`` ``"Don'T Look Back"``; the
commit fixes it and adds ``tests/test_titles.py`` (one FAIL_TO_PASS function, one PASS_TO_PASS). With the canary
seed :data:`PARENTS_OUTPUT` the twin of ``"Don't Look Back"`` is the parent's ``"Don'T Look Back"``, with
:data:`OTHER_VALUE` ``"don't look back"``.
"""

from __future__ import annotations

from pathlib import Path

from helpers.fix_task import FixTask, build_fix_task

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


#: The repository's root, its task and the parent's snapshot (:class:`helpers.fix_task.FixTask`).
Titles = FixTask


def build(dest: Path) -> Titles:
    """The repository in ``dest``/repo, its task and the parent's snapshot in ``dest``/pristine."""
    return build_fix_task(dest, name="titles", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="Add titlecase()", fail_to_pass=F2P, pass_to_pass=P2P,
                          message="titlecase(): a word after an apostrophe is no new word (\"don't\" became \"Don'T\")")
