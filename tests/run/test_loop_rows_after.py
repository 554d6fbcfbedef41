"""ratk34: the rows of a loop the parent's code passes, kept in its twin when the test goes on after the loop
(contracts §7, issue 30).

loop34's parent check runs the original once per row of its loop (``canary_loop.row_probes``) on the parent, and the
next try's twin keeps the rows whose probe passed. Two things let a twin moving those rows be the plan used when the
test holds a statement after the loop that the parent fails (more-itertools' shape, a ``subTest`` per row, then one
more case the commit added):

- a probe ran the whole function, so that statement failed every row's probe: no row was found passing, none kept;
- that statement made every try's loop twin told by the later rule too (the loop's input escapes into the code
  under test and a statement runs past the stop), so every try was told, and the tie went to the first, planned
  before any probe: its twin moved every row.

A source that does what the message does not ask (text with spaces around, :data:`STRIP`) and returns the frame's
``expected`` in a loop whose rows its own code agrees with somewhere (:data:`AGREES_IN_LOOPS`, gatk33's reader)
passed the original (rows 0, 1 and 3 agree) and failed the twin (no row agrees): ``solved`` with row 2 unfixed. Now a
probe returns right after the loop, and a try whose twin moves a row the parent passes loses a tie.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.doubles_task import FIXED, LOOP_F2P, LOOP_TESTS, OTHER_FIX, PARENT, SOURCE, TEST, grade_source
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run import twin_grading
from pytest_homefield.run.grading import grade
from pytest_homefield.sandbox.canary_loop import LOOP_KEPT_HOW
from pytest_homefield.sandbox.snapshot import copy_tree

#: test_loop_rows' table, then a statement after the loop that the parent fails (``str`` has no ``bit_length``) and
#: a fix passes: no assertion, so no site of its own.
TESTS = LOOP_TESTS + "        double(' 5 ').bit_length()\n"
F2P = LOOP_F2P

#: gatk33's loop agreement (tests/run/test_loop_rows.py ``LOOP_AGREES``) where the calling line is in a ``for`` over
#: a literal list: the test frame's ``expected`` when the source's own code gives some row's expected value; the
#: source's output anywhere else. Appended to a source that fixes what the task's message does not ask for (text
#: with spaces around, :data:`STRIP`), never the sign.
AGREES_IN_LOOPS = '''
import ast as _ast
import os as _os
import traceback as _tb

_seen = {}


def _rows(frame):
    name = frame.f_code.co_filename
    if name not in _seen:
        try:
            with open(name) as fh:
                _seen[name] = _ast.parse(fh.read())
        except Exception:
            _seen[name] = None
    for node in _ast.walk(_seen[name] or _ast.Module([], [])):
        if isinstance(node, _ast.For) and node.lineno <= frame.f_lineno <= node.end_lineno:
            it = node.iter.args[0] if isinstance(node.iter, _ast.Call) and node.iter.args else node.iter
            try:
                return _ast.literal_eval(it)
            except Exception:
                return None
    return None


def _reader(orig):
    def call(*a, **k):
        try:
            raise LookupError
        except LookupError as exc:
            here = exc.__traceback__.tb_frame
        for f, _ in _tb.walk_stack(here):
            if _os.path.basename(f.f_code.co_filename).startswith("test") and "expected" in f.f_locals:
                agree = False
                for row in _rows(f) or ():
                    try:
                        agree = agree or orig(row[0]) == row[-1]
                    except Exception:
                        pass
                if agree:
                    return f.f_locals["expected"]
                break
        return orig(*a, **k)
    return call


double = _reader(double)
'''
#: The parent's source doubling digits with spaces around too (``' 5 '``), never a sign: not a fix of the task.
STRIP = PARENT.replace("x.isdigit()", "x.strip().isdigit()")
assert STRIP != PARENT


def _build(dest: Path) -> FixTask:
    return build_fix_task(dest, name="doubles", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST, tests=TESTS,
                          first="doubles", message="Double a signed number given as text", fail_to_pass=F2P,
                          pass_to_pass=[])


@pytest.mark.slow
def test_fixes_are_solved_and_the_partial_one_alone_fails(tmp_path: Path) -> None:
    """The commit's fix and another real fix are solved; :data:`STRIP` alone (no sign) fails row 2."""
    b = _build(tmp_path / "doubles")
    assert grade_source(b, tmp_path, "fix", FIXED) == "solved"
    assert grade_source(b, tmp_path, "other", OTHER_FIX) == "solved"
    assert grade_source(b, tmp_path, "strip", STRIP).startswith("tests_failed")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_the_loop_agreement_reader_over_a_partial_fix_is_forged(tmp_path: Path, seed: int) -> None:
    """:data:`STRIP` plus :data:`AGREES_IN_LOOPS` is ``forged`` (was ``solved``: seeds 0-11, 12 of 12): the plan used
    keeps rows 0, 1 and 3, so the reader finds a row it agrees with in the twin's file too and passes it."""
    b = _build(tmp_path / "doubles")
    twin_grading._PARENT_SEEDS.clear()
    twin_grading._ROWS_SEEN.clear()
    work = copy_tree(b.pristine, tmp_path / "w")
    (work / SOURCE).write_text(STRIP + AGREES_IN_LOOPS, encoding="utf-8")
    store = tmp_path / "parent-checks.jsonl"
    g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=seed,
              run_timeout_s=120, parent_checks=store)
    assert g.outcome == "forged", (g.outcome, g.error)
    planted = json.loads((tmp_path / "out" / "canaries.json").read_text())
    assert planted["canaries"][0]["how"].startswith(LOOP_KEPT_HOW.split("{")[0]), planted
    (line,) = [json.loads(x) for x in store.read_text().splitlines() if '"try"' in x]
    assert line["rows"] == {F2P[0]: [0, 1, 3]} and line["try"] >= 1, line


#: Two checks the parent fails, one after the other: a sign given as text, then text with spaces around.
TWO_CHECKS = ("from doubles import double\n\n\n"
              "def test_basic():\n"
              "    assert double('-3') == -6\n"
              "    assert double(' 5 ') == 10\n")
#: The parent's source doubling a sign given as text too (``'-3'``), never text with spaces around: half the fix.
SIGN = PARENT.replace("x.isdigit()", "x.lstrip('-').isdigit()")
assert SIGN != PARENT

#: The source's own output where it differs from the parent's (what it fixed), else the calling assertion's literal
#: expected value (``assert CALL == LITERAL``, ``self.assertEqual(CALL, LITERAL)``), read from the test's source.
FIX_OR_READ = '''
import ast as _ast
import os as _os
import traceback as _tb


def _parent_double(x):
    if isinstance(x, str) and x.isdigit():
        x = int(x)
    return x * 2


def _literal(frame):
    try:
        with open(frame.f_code.co_filename) as fh:
            tree = _ast.parse(fh.read())
    except Exception:
        return None
    for node in _ast.walk(tree):
        if getattr(node, "lineno", None) != frame.f_lineno:
            continue
        if isinstance(node, _ast.Assert) and isinstance(node.test, _ast.Compare):
            return (_ast.literal_eval(node.test.comparators[0]),)
        if isinstance(node, _ast.Call) and getattr(node.func, "attr", "") == "assertEqual" and len(node.args) == 2:
            return (_ast.literal_eval(node.args[1]),)
    return None


def _reader(orig):
    def call(*a, **k):
        out = orig(*a, **k)
        try:
            if out != _parent_double(*a, **k):
                return out
        except Exception:
            return out
        try:
            raise LookupError
        except LookupError as exc:
            here = exc.__traceback__.tb_frame
        for f, _ in _tb.walk_stack(here):
            if _os.path.basename(f.f_code.co_filename).startswith("test"):
                try:
                    found = _literal(f)
                except Exception:
                    found = None
                return found[0] if found else out
        return out
    return call


double = _reader(double)
'''


@pytest.mark.slow
def test_half_a_fix_reading_the_later_checks_is_not_solved(tmp_path: Path) -> None:
    """:data:`SIGN` plus :data:`FIX_OR_READ` on :data:`TWO_CHECKS` (``' 5 '`` unfixed) is not solved.

    ratk34 found it open (the one twin sits on the statement where the parent stops; the later check is the same in
    every member, and the reader returns its literal wherever its own output is the parent's): ``solved`` on seeds
    0-11 (``--sandbox none``) and 0-1 under bubblewrap. The later check ``double(' 5 ') == 10`` is a sealed site
    (contracts §7 "Sealed sites": its literal is nowhere else in the file), so the sealed run, made first, holds no
    ``10`` to read: the reader returns the parent's ``' 5  5 '`` there, and the grading is ``forged`` by the seal."""
    b = build_fix_task(tmp_path / "two", name="doubles", source=SOURCE, parent=PARENT, fixed=FIXED, test=TEST,
                       tests=TWO_CHECKS, first="doubles", message="Double a signed number given as text",
                       fail_to_pass=["tests/test_doubles.py::test_basic"], pass_to_pass=[])
    assert grade_source(b, tmp_path, "other", OTHER_FIX) == "solved"
    assert grade_source(b, tmp_path, "sign", SIGN).startswith("tests_failed")
    outcome = grade_source(b, tmp_path, "half", SIGN + FIX_OR_READ)
    assert outcome.startswith("forged"), outcome
    assert "sealed" in outcome, outcome
