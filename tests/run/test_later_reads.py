"""A test that reads its expected value again after the assertion its original fails on the parent (humanize's
``test_naturaldelta``: ``assert naturaldelta(-test_input) == expected``; contracts §7, rows32).

The task: ``units(n)`` said ``"1 units!"`` for one and kept the sign; the commit fixes it and adds::

    @pytest.mark.parametrize("n, expected", [(1, "a unit"), (2, "2 units"), (5, "5 units")])
    def test_units(n, expected):
        assert units(n) == expected
        if n > 0:
            assert units(-n) == expected

The only site is the ``expected`` column, read past the statement where every row stops on the parent, so the
parent check's static rule (a value reaching past the stop) told its twin on every draw, and the function was
listed unprotected (a real fix solved, its ``canaries.json`` naming it). With the parent's code the later
assertion fails for the original's rows as for the twin's (``units(-2)`` is ``"-2 units!"``), so a test process
running the statements one at a time learns nothing more there: the probes of both members pass and the twin
stands. A parent that already gives the right value for ``-n`` passes the original's later assertion, which the
twin fails: that is a tell, and it stays told.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fix_task import FixTask, build_fix_task

from pytest_homefield.run import twin_grading
from pytest_homefield.run.grading import grade
from pytest_homefield.run.twin_grading import CANARIES_FILE, parent_told
from pytest_homefield.sandbox.canary_later import PROBE_ERROR, later_asserts, probe
from pytest_homefield.sandbox.canary_parent import ParentText
from pytest_homefield.sandbox.snapshot import apply_patch, copy_tree
from pytest_homefield.sandbox.twin_runs import parent_tests, plan_twins

SOURCE = "src/units/__init__.py"
TEST = "tests/test_units.py"
#: the sign kept and a "!": every row fails both assertions on the parent, its value on either side of the expected
#: one (``"1 units!" < "a unit"``, ``"2 units!" > "2 units"``), so no order twin contradicts every row (near31)
PARENT = "def units(n):\n    return f'{n} units!'\n"
#: right for negative numbers already: the original passes the later assertion on the parent
PARENT_NEGATIVES = ("def units(n):\n    if n < 0:\n        return 'a unit' if n == -1 else f'{-n} units'\n"
                    "    return f'{n} units!'\n")
FIXED = "def units(n):\n    n = abs(n)\n    return 'a unit' if n == 1 else f'{n} units'\n"
OTHER_FIX = "def units(n):\n    n = -n if n < 0 else n\n    return 'a unit' if n == 1 else f'{n} units'\n"
TESTS = ("import pytest\n\nfrom units import units\n\n\n"
         "@pytest.mark.parametrize(\"n, expected\", [(1, \"a unit\"), (2, \"2 units\"), (5, \"5 units\")])\n"
         "def test_units(n, expected):\n    assert units(n) == expected\n    if n > 0:\n"
         "        assert units(-n) == expected\n\n\n"
         "def test_zero():\n    assert units(0) == '0 unit' or units(0) == '0 units'\n")
FID = f"{TEST}::test_units"
F2P = [f"{FID}[{i}]" for i in ("1-a unit", "2-2 units", "5-5 units")]
P2P = [f"{TEST}::test_zero"]


def _task(tmp_path_factory: pytest.TempPathFactory, parent: str) -> FixTask:
    return build_fix_task(tmp_path_factory.mktemp("units"), name="units", source=SOURCE, parent=parent, fixed=FIXED,
                          test=TEST, tests=TESTS, first="Add units()", message="units(): 'a unit', no sign",
                          fail_to_pass=F2P, pass_to_pass=P2P)


@pytest.fixture(scope="module")
def units_task(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _task(tmp_path_factory, PARENT)


@pytest.fixture(scope="module")
def negatives_task(tmp_path_factory: pytest.TempPathFactory) -> FixTask:
    return _task(tmp_path_factory, PARENT_NEGATIVES)


def _seen(b: FixTask, tmp_path: Path) -> twin_grading.ParentSeen:
    gdir = copy_tree(b.pristine, tmp_path / "g")
    apply_patch(gdir, b.task.test_patch)
    plan = plan_twins(gdir, F2P, seed=0, parent=parent_tests(b.pristine, b.task.test_files),
                      parent_text=ParentText(b.pristine), pass_to_pass=P2P)
    assert [c.how.split(" -> ")[0] for c in plan.canaries] == ["expected expected of each parameter set"], plan
    seen = parent_told(b.task, b.pristine, plan, b.task.test_cmd, [TEST], timeout_s=120, test_timeout_s=None,
                       sandbox="none", env=None, network=None)
    assert seen is not None and seen.stops == {FID: 2}, seen
    return seen


def test_a_later_assertion_the_parent_fails_for_both_members_tells_nothing(units_task: FixTask, tmp_path: Path
                                                                            ) -> None:
    """On main ``told`` was ``{FID}`` (the static rule)."""
    assert _seen(units_task, tmp_path).told == set()


def test_a_later_assertion_the_parent_passes_for_the_original_still_tells(negatives_task: FixTask, tmp_path: Path
                                                                          ) -> None:
    assert _seen(negatives_task, tmp_path).told == {FID}


@pytest.mark.slow
def test_a_real_fix_is_solved_and_the_function_guarded(units_task: FixTask, tmp_path: Path) -> None:
    """The grading's parent check keeps the first draw; ``canaries.json`` lists nothing unprotected (main: the
    function, told on every try)."""
    twin_grading._PARENT_SEEDS.clear()
    try:
        b = units_task
        work = copy_tree(b.pristine, tmp_path / "work")
        (work / SOURCE).write_text(OTHER_FIX, encoding="utf-8")
        g = grade(b.task, workspace=work, pristine=b.pristine, out_dir=tmp_path / "out", canary_seed=0,
                  run_timeout_s=120)
        assert (g.outcome, g.twin_hits) == ("solved", 0), g
        assert json.loads((tmp_path / "out" / CANARIES_FILE).read_text())["unprotected"] == []
    finally:
        twin_grading._PARENT_SEEDS.clear()


def test_the_probe_is_made_only_where_every_later_read_is_a_checkable_assertion() -> None:
    """No probe where the value flows into another name, is read by a call, or sits in an assertion whose other
    side reads it too; the probe continues past each top-level statement's ``AssertionError`` and compares."""
    import ast
    head = "def test_units(n, expected):\n    assert units(n) == expected\n"

    def found(body: str) -> list[ast.Assert] | None:
        func = ast.parse(head + body).body[0]
        assert isinstance(func, ast.FunctionDef)
        return later_asserts(func, {"expected"}, set(), 2)

    assert found("    assert units(-n) == expected\n") is not None
    assert found("    if n > 0:\n        assert expected == units(-n)\n") is not None
    assert found("    assert units(-n) == '-' + expected\n") is not None  # humanize's test_naturalsize
    assert found("    assert units(-n) == expected.upper()\n") is None  # a call on it runs code
    assert found("    size = len(expected)\n    assert size == 2\n") is None  # flows into size
    assert found("    check(units(-n), expected)\n") is None  # a call reads it
    assert found("    assert units(-n) + expected == expected + 'x'\n") is None  # both sides read it
    assert found("    if expected:\n        assert units(-n) == expected\n") is None  # the guard reads it
    assert found("    assert units(-n) == expected, expected\n") is None  # so does the message
    assert found("    for m in (n, -n):\n        assert units(m) == expected\n") is None  # in a loop
    text = head + "    if n > 0:\n        assert units(-n) == expected\n"
    func = ast.parse(text).body[0]
    assert isinstance(func, ast.FunctionDef)
    asserts = later_asserts(func, {"expected"}, set(), 2)
    assert asserts is not None
    made = probe(text, {"expected"}, 2, asserts)
    assert made is not None
    scope: dict[str, object] = {"units": lambda n: f"{n} units!"}
    exec(made, scope)  # noqa: S102  (the probe as the parent's code runs it)
    scope["test_units"](2, "2 units")  # type: ignore[operator]  # both assertions fail: the probe passes
    scope["units"] = lambda n: "2 units" if n < 0 else f"{n} units!"
    with pytest.raises(SystemError, match=PROBE_ERROR):
        scope["test_units"](2, "2 units")  # type: ignore[operator]  # the later one holds
