"""col35: sealable parametrize columns (contracts §7 "Sealed sites", "Sealed columns"): which rows of a column are
sites (:func:`~pytest_homefield.sandbox.seal_sites.sealable_sites`), the sealed file
(:func:`~pytest_homefield.sandbox.seal_sites.sealed_files`), the row call (``homefield_seal.__hf_seal_row__``), the
channel taking a row's reports from any id of its function (:class:`~pytest_homefield.sandbox.outcomes.EventTally`
``seal_functions``) and which rows a reference run passes
(:func:`~pytest_homefield.sandbox.seal_sites.passing_sites`), in a real test process too."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_homefield.sandbox.outcomes import EventTally, SealScope
from pytest_homefield.sandbox.seal_sites import (
    ROW_ID,
    SEAL_CALL,
    SEAL_ROW_CALL,
    passing_sites,
    sealable_sites,
    sealed_files,
)
from pytest_homefield.sandbox.testrun import run_tests

TEST = "tests/test_c.py"
#: A hidden test file of columns: test_col (rows 1, 3 and 4 sealable; row 0's value is a part of row 3's, row 2's
#: is row 3's id), test_flip, test_lone and test_names are sealable columns; the rest are not.
HIDDEN = '''import pytest
from pytest import mark

from pkg import f


@pytest.mark.parametrize("n, expected", [
    (1, "alpha-one"),
    (2, "bravo-two"),
    (3, "spelled-in-an-id"),
    pytest.param(4, "alpha-one-and-more", id="spelled-in-an-id"),
    (5,
     "charlie"
     "-three"),
])
def test_col(n, expected):
    got = f(n)
    assert got == expected  # the column's one use
    assert f(0) == "a-plain-site-of-a-column-function"


@mark.parametrize(("n", "want"), [(6, "delta-four"), (7, "echo-five")])
def test_flip(n, want):
    assert want == f(n)


@pytest.mark.parametrize("expected", ["foxtrot-six"])
def test_lone(expected):
    assert f(8) == expected


@pytest.mark.parametrize(["n", "expected"], [(9, "golf-seven")], ids=["g7"])
def test_names(n, expected):
    assert f(n) == expected


@pytest.mark.parametrize("n, expected", [(10, "used-twice")])
def test_twice(n, expected):
    assert f(n) == expected
    assert len(expected) > 0


@pytest.mark.parametrize("n, expected", [(11, "not-in-an-assert")])
def test_not_assert(n, expected):
    want = expected
    assert f(n) == want


@pytest.mark.parametrize("n, expected", [(12, "inside-an-if")])
def test_in_if(n, expected):
    if n:
        assert f(n) == expected


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("expected", ["two-decorators"])
def test_two(n, expected):
    assert f(n) == expected


@pytest.mark.parametrize("n, expected", [(13, "hotel-marked"), pytest.param(14, "india", marks=mark.xfail)])
def test_marks(n, expected):
    assert f(n) == expected


@pytest.mark.parametrize("n, expected", [(15, "juliet-indirect")], indirect=["n"])
def test_indirect(n, expected):
    assert f(n) == expected


@pytest.mark.parametrize("n, expected", [(16, "kilo-id-shaped"), (17, "hf0123456789abcdef01234567")])
def test_id_shaped(n, expected):
    assert f(n) == expected


@pytest.mark.parametrize("n, expected", [(18, "lima-" + "computed")])
def test_computed(n, expected):
    assert f(n) == expected


def test_plain():
    assert f(19) == "zulu-plain"
'''
NAMES = ["col", "flip", "lone", "names", "twice", "not_assert", "in_if", "two", "marks", "indirect", "id_shaped",
         "computed", "plain"]
F2P = [f"{TEST}::test_{n}" for n in NAMES]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(HIDDEN)
    return tmp_path


def test_sealable_columns(tree: Path) -> None:
    """The rows of a column used once, as one side of a top-level assertion, whose value is readable nowhere else
    (not in another row's cell, not its id), each a site keyed by its index; the plain site of a function with a column
    is not one (its items' ids change); the plain site of another function is. Not sealed: a column used twice or
    in a non-assert place, two ``parametrize`` decorators, a row with ``marks=``, an
    ``indirect=``, an unsealed cell of the site id's form, a cell that is no literal."""
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    got = {s.key: (s.column, s.row, s.actual, s.expected, s.flipped) for s in sites}
    assert got == {
        f"{TEST}::test_col@18#1": ("expected", 1, "got", '"bravo-two"', False),
        f"{TEST}::test_col@18#3": ("expected", 3, "got", '"alpha-one-and-more"', False),
        f"{TEST}::test_col@18#4": ("expected", 4, "got", '"charlie"\n     "-three"', False),
        f"{TEST}::test_flip@24#0": ("want", 0, "f(n)", '"delta-four"', True),
        f"{TEST}::test_flip@24#1": ("want", 1, "f(n)", '"echo-five"', True),
        f"{TEST}::test_lone@29#0": ("expected", 0, "f(8)", '"foxtrot-six"', False),
        f"{TEST}::test_names@34#0": ("expected", 0, "f(n)", '"golf-seven"', False),
        f"{TEST}::test_in_if@52#0": ("expected", 0, "f(n)", '"inside-an-if"', False),  # loop36: under an ``if``
        f"{TEST}::test_plain@82": (None, None, "f(19)", '"zulu-plain"', False),
    }


def test_the_sealed_file_holds_no_row_value(tree: Path) -> None:
    """Each sealed row's cell is its site id (a multi-line cell padded: every line in place), each column's
    statement one row call, the other rows as they were; no sealed value is in the file."""
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    files, ids = sealed_files(tree, sites, [TEST])
    text = files[TEST].decode()
    ast.parse(text)
    for s in sites:
        assert str(s.value()) not in text, s
    assert all(ROW_ID.fullmatch(sid) and text.count(repr(sid)) == 1 for sid, s in ids.items() if s.column)
    old, new = HIDDEN.splitlines(), text.splitlines()
    assert len(new) == len(old) + 1
    assert new[-1] == (f"from homefield_seal import {SEAL_CALL}, {SEAL_ROW_CALL}  # homefield: a sealed run "
                       "(docs/contracts.md §7)")
    assert new[17] == f"    {SEAL_ROW_CALL}(expected, (got), None, False)"
    assert new[23] == f"    {SEAL_ROW_CALL}(want, (f(n)), None, True)"
    assert new[7] == old[7] and new[9] == old[9]  # rows left as they are
    assert new[10].endswith(', id="spelled-in-an-id"),') and "alpha" not in new[10]
    assert new[18] == old[18]  # the plain site of a column function stays
    changed = {n for n, (a, b) in enumerate(zip(old, new[:-1], strict=True)) if a != b}
    assert new[51] == f"        {SEAL_ROW_CALL}(expected, (f(n)), None, False)"  # loop36: under an ``if``
    assert changed == {8, 10, 12, 13, 17, 21, 23, 26, 28, 31, 33, 48, 51, 81}, changed


def test_the_row_call_seals_a_site_id_and_asserts_any_other_row(seal_module: ModuleType) -> None:
    """A cell of the site id's form (an exact ``str``) is sealed: its value kept for the report, nothing raised
    whatever it is; any other cell is compared in the process as written (its side first when ``flipped``)."""
    row = seal_module.__hf_seal_row__
    sid = "hf" + "0" * 24
    row(sid, "anything")
    row(sid, object())
    assert seal_module.take() == [[sid, "'anything'"], [sid, None]]
    row("kept-row", "kept-row")
    with pytest.raises(AssertionError):
        row("kept-row", "other")
    order: list[str] = []

    class Side:
        def __init__(self, name: str) -> None:
            self.name = name

        def __eq__(self, other: object) -> bool:
            order.append(self.name)
            return True

    row(Side("cell"), Side("value"), None, True)
    row(Side("cell"), Side("value"), None, False)
    assert order == ["cell", "value"]

    class Id(str):
        pass

    with pytest.raises(AssertionError):  # a str subclass of the id's form is no site id
        row(Id(sid), "x")
    assert seal_module.take() == []


def _phase(nodeid: str, seals: list[list[object]], outcome: str = "passed") -> str:
    return json.dumps({"event": "phase", "nodeid": nodeid, "when": "call", "outcome": outcome, "xfail": False,
                       "duration": 0.0, "message": None, "subtest": False, "timeout": False, "line": None,
                       "operands": None, "seals": seals, "pid": 7})


def test_the_channel_takes_a_rows_reports_from_any_id_of_its_function_twice_at_most() -> None:
    """``seal_functions``: a row's report counts from any id of its function (ids the host cannot know
    beforehand), and is parsed twice at most in all however many ids send it (a flood of made-up ids costs the host
    two parses); a row reported from another function's id, or a plain site from a column function's id, is passed
    over; ``seal_tests`` works as before beside it."""
    tally = EventTally(seals=SealScope({"r1": "alpha", "r2": "beta", "p1": "plain"}, {"t::p": ["p1"]},
                                         {"t::c": ["r1", "r2"]}))
    lines = [json.dumps({"event": "start", "pid": 7}),
             _phase("t::c[1-hfaa]", [["r1", "'alpha'"]]),
             _phase("t::c[2-hfbb]", [["r2", "'gamma'"], ["p1", "'plain'"]]),
             *(_phase(f"t::c[made-up-{k}]", [["r2", "'x'"]]) for k in range(50)),
             _phase("t::other", [["r1", "'alpha'"]]),
             _phase("t::p", [["p1", "'plain'"], ["r1", "'alpha'"]]),
             json.dumps({"event": "finish", "exitstatus": 0, "pid": 7})]
    tally.feed(("\n".join(lines) + "\n").encode())
    parsed, _ = tally.result()
    assert parsed.seal_reports == {"t::c[1-hfaa]": {"r1": ["equal"]}, "t::c[2-hfbb]": {"r2": ["unequal"]},
                                   "t::c[made-up-0]": {"r2": ["unequal"]}, "t::p": {"p1": ["equal"]}}


def test_the_channel_parses_a_row_reported_per_item_as_often_as_told() -> None:
    """loop38 ``seal_repeats``: a loop's row beside a sealed column (every item of its function reports it once) is
    parsed from any id of its function as many times in all as given (twice its items), no more: a flood of made-up
    ids costs the host that many parses; another row of the function keeps its two."""
    tally = EventTally(seals=SealScope({"l1": "alpha", "r1": "beta"}, {}, {"t::c": ["l1", "r1"]}, {"l1": 4}))
    lines = [json.dumps({"event": "start", "pid": 7}),
             *(_phase(f"t::c[{k}]", [["l1", "'alpha'"], ["r1", "'beta'"]]) for k in range(3)),
             *(_phase(f"t::c[made-up-{k}]", [["l1", "'x'"]]) for k in range(50)),
             json.dumps({"event": "finish", "exitstatus": 0, "pid": 7})]
    tally.feed(("\n".join(lines) + "\n").encode())
    parsed, _ = tally.result()
    assert parsed.seal_reports == {"t::c[0]": {"l1": ["equal"], "r1": ["equal"]},
                                   "t::c[1]": {"l1": ["equal"], "r1": ["equal"]}, "t::c[2]": {"l1": ["equal"]},
                                   "t::c[made-up-0]": {"l1": ["unequal"]}}


def test_a_loop_row_beside_a_sealed_column_is_judged_per_item(tmp_path: Path) -> None:
    """loop38: a loop's row in a function with a sealed column (judged by function, its items' ids changed) passes
    only when every item of the function in the sealed run reported it exactly once, equal: one item reporting it
    twice and another not (once per item on average) fails every id, as does one unequal (named)."""
    from pytest_homefield.run.sealed_grading import SealPlan, judge_sealed
    from pytest_homefield.sandbox.seal_sites import SealSite
    from pytest_homefield.sandbox.testrun import TestRun

    fid = f"{TEST}::test_c"
    col = SealSite(f"{fid}@8#0", TEST, fid, 8, 8, "f(n)", "'alpha-one'", column="expected", row=0,
                   cell=(6, 0, 6, 1), decorated=True)
    loop = SealSite(f"{fid}@10#0", TEST, fid, 10, 10, "f(m)", "'loop-row'", column="want", row=0,
                    cell=(9, 0, 9, 1), items=2)
    plan = SealPlan({}, {"hfa": col, "hfl": loop})
    assert plan.columns == {fid: ["hfa", "hfl"]}
    f2p = [f"{fid}[1-alpha-one]", f"{fid}[2-kept]"]
    items = {f"{fid}[1-hfa]": "passed", f"{fid}[2-kept]": "passed"}

    def judged(reports: dict[str, dict[str, list[str]]]) -> tuple[set[str], set[str], list[str]]:
        made = TestRun(items, 0, False, False, 2, 0.1, tmp_path / "log", finished=True, seal_reports=reports)
        c = judge_sealed(plan, f2p, made)
        return set(c.outcomes.values()), set(c.unequal.values()), passing_sites(plan.ids, f2p, items, reports)

    good = {f"{fid}[1-hfa]": {"hfa": ["equal"], "hfl": ["equal"]}, f"{fid}[2-kept]": {"hfl": ["equal"]}}
    assert judged(good) == ({"passed"}, set(), [f"{fid}@10#0", f"{fid}@8#0"])
    skewed = {f"{fid}[1-hfa]": {"hfa": ["equal"], "hfl": ["equal", "equal"]}, f"{fid}[2-kept]": {}}
    assert judged(skewed) == ({"failed"}, set(), [f"{fid}@8#0"])
    wrong = {**good, f"{fid}[2-kept]": {"hfl": ["unequal"]}}
    assert judged(wrong) == ({"failed"}, {f"{fid}@10#0"}, [f"{fid}@8#0"])


def test_a_real_sealed_column_run(tmp_path: Path) -> None:
    """A real test process of a sealed file: the sealed rows' items run under ids holding their site ids, report
    once each; a row left as it is is compared in the process (a wrong value fails there). The reference check
    passes the rows only when every item of the function passed and each row was reported exactly once, equal."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg.py").write_text("def f(n):\n    return {1: 'alpha-one', 2: 'bravo-two'}.get(n, 'kept')\n")
    text = ('import pytest\n\nfrom pkg import f\n\n\n'
            '@pytest.mark.parametrize("n, expected", [(1, "alpha-one"), (2, "bravo-two"), (3, "kept"), (4, "kept")])\n'
            'def test_c(n, expected):\n    assert f(n) == expected\n')
    (tmp_path / TEST).write_text(text)
    fid = f"{TEST}::test_c"
    sites = sealable_sites(tmp_path, [TEST], [f"{fid}[1-alpha-one]"], {TEST: None})
    assert [s.key for s in sites] == [f"{fid}@8#0", f"{fid}@8#1"]
    files, ids = sealed_files(tmp_path, sites, [TEST])
    (tmp_path / TEST).write_bytes(files[TEST])
    run = run_tests(tmp_path, f"{sys.executable} -m pytest -p no:randomly -p no:cacheprovider", [fid],
                    out_dir=tmp_path / "out", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}, {}, {fid: list(ids)}))
    by_row = {s.row: sid for sid, s in ids.items()}
    assert run.outcomes == {f"{fid}[1-{by_row[0]}]": "passed", f"{fid}[2-{by_row[1]}]": "passed",
                            f"{fid}[3-kept]": "passed", f"{fid}[4-kept]": "passed"}, run.error
    assert run.seal_reports == {f"{fid}[1-{by_row[0]}]": {by_row[0]: ["equal"]},
                                f"{fid}[2-{by_row[1]}]": {by_row[1]: ["equal"]}}
    f2p = [f"{fid}[1-alpha-one]", f"{fid}[2-bravo-two]"]
    assert passing_sites(ids, f2p, run.outcomes, run.seal_reports) == [f"{fid}@8#0", f"{fid}@8#1"]
    failed = {**run.outcomes, f"{fid}[4-kept]": "failed"}
    assert passing_sites(ids, f2p, failed, run.seal_reports) == []
    twice = {**run.seal_reports, "elsewhere": {by_row[0]: ["equal"]}}
    assert passing_sites(ids, f2p, run.outcomes, twice) == [f"{fid}@8#1"]
    # a row left as it is is compared in the process: a wrong value there fails its item
    (tmp_path / "pkg.py").write_text("def f(n):\n    return {1: 'alpha-one', 2: 'bravo-two'}.get(n, 'wrong')\n")
    run = run_tests(tmp_path, f"{sys.executable} -m pytest -p no:randomly -p no:cacheprovider", [fid],
                    out_dir=tmp_path / "out2", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}, {}, {fid: list(ids)}))
    assert run.outcomes[f"{fid}[3-kept]"] == "failed" and run.outcomes[f"{fid}[1-{by_row[0]}]"] == "passed"


def test_a_sealed_column_is_judged_by_function(tmp_path: Path) -> None:
    """:func:`~pytest_homefield.run.sealed_grading.judge_sealed` of a column: the FAIL_TO_PASS ids (the original
    ids, which the sealed run never ran under) pass only when every item of the function passed and each row was
    reported once, equal; an item failed (a row left as it is), a row reported twice or unequal, no item run: each
    id fails. A row unequal is forged only when the other runs passed every id of the function."""
    from pytest_homefield.run.sealed_grading import SealPlan, judge_sealed, sealed_forged
    from pytest_homefield.sandbox.seal_sites import SealSite
    from pytest_homefield.sandbox.testrun import TestRun

    fid = f"{TEST}::test_c"
    site = {k: SealSite(f"{fid}@8#{k}", TEST, fid, 8, 8, "f(n)", repr(v), column="expected", row=k,
                        cell=(6, 0, 6, 1), decorated=True) for k, v in ((0, "alpha-one"), (1, "bravo-two"))}
    plan = SealPlan({}, {"hfa": site[0], "hfb": site[1]})
    f2p = [f"{fid}[1-alpha-one]", f"{fid}[2-bravo-two]"]
    items = {f"{fid}[1-hfa]": "passed", f"{fid}[2-hfb]": "passed", f"{fid}[3-kept]": "passed"}

    def judged(outcomes: dict[str, str], reports: dict[str, dict[str, list[str]]]) -> tuple[set[str], set[str]]:
        made = TestRun(outcomes, 0, False, False, len(outcomes), 0.1, tmp_path / "log", finished=True,
                       seal_reports=reports)
        c = judge_sealed(plan, f2p, made)
        assert set(c.outcomes) == set(f2p) == set(c.columns)
        return set(c.outcomes.values()), set(c.unequal.values())

    good = {f"{fid}[1-hfa]": {"hfa": ["equal"]}, f"{fid}[2-hfb]": {"hfb": ["equal"]}}
    assert judged(items, good) == ({"passed"}, set())
    assert judged({**items, f"{fid}[3-kept]": "failed"}, good) == ({"failed"}, set())
    assert judged({}, good) == ({"error"}, set())
    assert judged(items, {**good, "x": {"hfa": ["equal"]}}) == ({"failed"}, set())
    assert judged(items, {**good, f"{fid}[2-hfb]": {"hfb": ["unequal"]}}) == ({"failed"}, {f"{fid}@8#1"})
    made = TestRun(items, 0, False, False, 3, 0.1, tmp_path / "log", finished=True,
                   seal_reports={**good, f"{fid}[2-hfb]": {"hfb": ["unequal"]}})
    checked = judge_sealed(plan, f2p, made)
    assert sealed_forged(checked, {i: "passed" for i in f2p}) is not None
    assert sealed_forged(checked, {f2p[0]: "passed", f2p[1]: "failed"}) is None  # a wrong fix, not a forger
