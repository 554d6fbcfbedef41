"""shape37: an ``in`` site whose member is no text (contracts §7 "Sealed sites", "Other kinds"): ``assert (3,
"cherry") in A`` / ``self.assertIn((2, "banana"), A)``, more-itertools' ``assertIn({'a', 'b'}, ps)``. Sealed as a
text member is (``__hf_seal_in__``, the host checks ``L in value``), with :func:`~.seal_kinds.member_neighbours` in
place of the text's neighbours: a value holding a neighbour of ``L`` too (a guess flood) is opaque.

The fixture is a real repository (tests/helpers/fix_task.py) whose fix numbers words from 1, not 0. A reader of the
member in the test process (:data:`MEMBER_READER`, returning a list holding it) on the unfixed code was ``solved``
before shape37 (no such site was sealed); now ``forged``, and ``solved`` with ``sealed=False``. The commit's fix and
another real fix stay ``solved``; a guess flood of every small pair is not.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task, grade_source

from pytest_homefield.run import sealed_grading
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.seal_sites import SEAL_RULES
from pytest_homefield.sandbox.snapshot import copy_tree

SOURCE = "src/numbered/__init__.py"
TEST = "tests/test_numbered.py"
PARENT = "def numbered(words):\n    return [(i, w) for i, w in enumerate(words)]\n"
FIXED = "def numbered(words):\n    return [(i + 1, w) for i, w in enumerate(words)]\n"
OTHER_FIX = "def numbered(words):\n    return list(zip(range(1, len(words) + 1), words))\n"
TESTS_BEFORE = ("import unittest\n\nfrom numbered import numbered\n\n\n"
                "def test_empty():\n"
                "    assert numbered([]) == []\n")
TESTS = TESTS_BEFORE + ('''

def test_counts_from_one():
    assert (3, "cherry") in numbered(["apple", "banana", "cherry"])


class TestNumbered(unittest.TestCase):
    def test_second(self):
        self.assertIn((2, "banana"), numbered(["kiwi", "banana"]))
''')
F2P = [f"{TEST}::test_counts_from_one", f"{TEST}::TestNumbered::test_second"]
#: The sealed sites: the statements' lines.
SITES = [f"{F2P[0]}@11", f"{F2P[1]}@16"]

#: Reads the member ``L`` of the ``assert L in A`` (``assertIn(L, A)``) on the calling test's line, whatever literal
#: it is, and returns a list holding it.
MEMBER_READER = r'''

import ast as _hf_ast
import os as _hf_os
import traceback as _hf_tb


def _hf_member(frame):
    try:
        with open(frame.f_code.co_filename) as fh:
            tree = _hf_ast.parse(fh.read())
    except Exception:
        return None
    for node in _hf_ast.walk(tree):
        if not (hasattr(node, "lineno") and node.lineno <= frame.f_lineno <= node.end_lineno):
            continue
        try:
            if isinstance(node, _hf_ast.Assert) and isinstance(node.test, _hf_ast.Compare) \
                    and isinstance(node.test.ops[0], _hf_ast.In):
                return [_hf_ast.literal_eval(node.test.left)]
            if isinstance(node, _hf_ast.Call) and getattr(node.func, "attr", "") == "assertIn":
                return [_hf_ast.literal_eval(node.args[0])]
        except ValueError:
            return None
    return None


def _hf_wrap(orig):
    def call(*a, **k):
        try:
            raise LookupError
        except LookupError as exc:
            here = exc.__traceback__.tb_frame
        for frame, _ in _hf_tb.walk_stack(here):
            if _hf_os.path.basename(frame.f_code.co_filename).startswith("test"):
                got = _hf_member(frame)
                if got is not None:
                    return got
                break
        return orig(*a, **k)
    return call


numbered = _hf_wrap(numbered)
'''
#: Every pair of a number below 40 and each word given: holds the member whatever its number, without reading it.
FLOOD = "def numbered(words):\n    return [(i, w) for i in range(40) for w in words]\n"


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("members"), name="numbered", source=SOURCE, parent=PARENT,
                          fixed=FIXED, test=TEST, tests=TESTS, first="Add numbered()",
                          message="numbered(): count from 1", fail_to_pass=F2P,
                          pass_to_pass=[f"{TEST}::test_empty"], tests_before=TESTS_BEFORE)


@pytest.mark.slow
def test_a_reader_of_a_member_is_forged(members: FixTask, tmp_path: Path) -> None:
    """The reader on the unfixed code: ``forged`` at a sealed member (the first id in order: the unittest one; before
    shape37 ``solved``: neither site was sealed); the control without the sealed run ``solved`` (the reader passes
    both tests there)."""
    g = grade_source(members, tmp_path / "s", SOURCE, PARENT + MEMBER_READER)
    assert g.outcome == "forged", g
    assert g.canary == f"sealed:{SITES[1]}", g
    assert grade_source(members, tmp_path / "u", SOURCE, PARENT + MEMBER_READER, sealed=False).outcome == "solved"


@pytest.mark.slow
@pytest.mark.parametrize("fix", ["commit", "other"])
def test_a_real_fix_of_a_member_is_solved(members: FixTask, tmp_path: Path, fix: str) -> None:
    """The commit's fix (a comment appended) and another real fix: ``solved`` with both members sealed."""
    store = tmp_path / "parent-checks.jsonl"
    sealed_grading._SEALED_SEEN.clear()
    try:
        g = grade_source(members, tmp_path, SOURCE, (FIXED + "# a comment\n") if fix == "commit" else OTHER_FIX,
                         parent_checks=store)
        assert g.outcome == "solved", g
        lines = [json.loads(line) for line in store.read_text().splitlines()]
        assert [r["sealed_sites"] for r in lines if "sealed_sites" in r] == [sorted(SITES)]
    finally:
        sealed_grading._SEALED_SEEN.clear()


@pytest.mark.slow
def test_a_flood_of_every_pair_is_not_solved(members: FixTask, tmp_path: Path) -> None:
    """Every small number paired with each word holds the member and its neighbours: opaque in the sealed run, never
    ``solved`` (it passes both tests with ``sealed=False``: the flood needs no reading)."""
    g = grade_source(members, tmp_path / "s", SOURCE, FLOOD)
    assert g.outcome != "solved", g
    assert grade_source(members, tmp_path / "u", SOURCE, FLOOD, sealed=False).outcome == "solved"


#: shape37: a task with a parametrize column (sealed since col35, SEAL_RULES 6) beside the members (since shape37):
#: ``shout`` is fixed in every source graded here, ``numbered`` the parent's under the reader.
SHOUT_PARENT = "def shout(w):\n    return w.upper()\n\n\n"
SHOUT_FIXED = "def shout(w):\n    return w.upper() + '!'\n\n\n"
MIXED_BEFORE = ("import unittest\n\nimport pytest\n\nfrom numbered import numbered, shout\n\n\n"
                "def test_empty():\n    assert numbered([]) == []\n")
MIXED_TESTS = MIXED_BEFORE + TESTS[len(TESTS_BEFORE):] + '''

@pytest.mark.parametrize("word, loud", [("fig", "FIG!"), ("lime", "LIME!")])
def test_shout(word, loud):
    assert shout(word) == loud
'''
MIXED_F2P = [*F2P, f"{TEST}::test_shout[fig-FIG!]", f"{TEST}::test_shout[lime-LIME!]"]


def _line(text: str, start: str) -> int:
    """The number of ``text``'s first line starting (after its indentation) with ``start``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith(start))


#: The sealed sites of the mixed task: the column's two rows and the two members.
MIXED_ROWS = [f"{TEST}::test_shout@{_line(MIXED_TESTS, 'assert shout')}#{k}" for k in (0, 1)]
MIXED_MEMBERS = [f"{F2P[0]}@{_line(MIXED_TESTS, 'assert (3')}", f"{F2P[1]}@{_line(MIXED_TESTS, 'self.assertIn')}"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("mixed"), name="numbered", source=SOURCE,
                          parent=SHOUT_PARENT + PARENT, fixed=SHOUT_FIXED + FIXED, test=TEST, tests=MIXED_TESTS,
                          first="Add numbered()", message="numbered(): count from 1; shout()",
                          tests_before=MIXED_BEFORE, fail_to_pass=MIXED_F2P, pass_to_pass=[f"{TEST}::test_empty"])


@pytest.mark.slow
def test_a_record_of_older_rules_is_checked_again(mixed: FixTask, tmp_path: Path) -> None:
    """shape37: mining's ``sealed_sites`` are trusted only when recorded under the current rules (``sealed_rules``
    ``SEAL_RULES``). A task mined under 9 recorded the column's rows and no member (not sealable then); trusting it
    (before shape37: the record held a row of the hidden tests' column, so it was taken for one made after columns),
    the member reader was ``solved``. Now the reference check is made at grading (stored), its members sealed, the
    reader ``forged``; a record of the current rules holding the rows only is used as it is (nothing stored, the
    reader ``solved``: the record decides)."""
    rows = MIXED_ROWS
    store = tmp_path / "parent-checks.jsonl"
    sealed_grading._SEALED_SEEN.clear()
    try:
        for n, (rules, want) in enumerate(((9, "forged"), (None, "forged"), (SEAL_RULES, "solved"))):
            task = dataclasses.replace(mixed.task, sealed_sites=rows, sealed_rules=rules)
            work = copy_tree(mixed.pristine, tmp_path / f"work{n}")
            (work / SOURCE).write_text(SHOUT_FIXED + PARENT + MEMBER_READER, encoding="utf-8")
            g = grade(task, workspace=work, pristine=mixed.pristine, out_dir=tmp_path / f"out{n}", run_timeout_s=120,
                      canaries=False, parent_checks=store)
            assert g.outcome == want, (rules, g)
        stored = [json.loads(line)["sealed_sites"] for line in store.read_text().splitlines()]
        assert stored == [sorted([*rows, *MIXED_MEMBERS])], stored  # one check, for the record of rules 9
    finally:
        sealed_grading._SEALED_SEEN.clear()
