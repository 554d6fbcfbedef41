"""loop36: sealed loop tables (contracts §7 "Sealed columns"): a ``for`` loop over a literal list of rows
(``for n, expected in [(1, "one"), …]:``, ``enumerate(…)`` too, a unittest ``with self.subTest(…):`` around the
check), more-itertools' commonest shape, is a table whose column is sealed as a parametrize column's is; a column's
statement may be under an ``if`` (python-humanize's ``test_naturaldelta``). Which rows are sites
(:func:`~pytest_homefield.sandbox.seal_sites.sealable_sites`), the sealed file, and a real test process."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from pytest_homefield.sandbox.outcomes import SealScope
from pytest_homefield.sandbox.seal_sites import SEAL_ROW_CALL, passing_sites, sealable_sites, sealed_files
from pytest_homefield.sandbox.testrun import run_tests

TEST = "tests/test_l.py"
HIDDEN = '''import unittest

from pkg import f


class LoopTests(unittest.TestCase):
    def test_sub(self):
        for n, expected in [
            (1, "alpha-one"),
            (2, "bravo-two"),
            (3, "kept-value"),
        ]:
            with self.subTest(n=n):
                self.assertEqual(f(n), expected)

    def test_enum(self):
        for i, (n, want) in enumerate([(4, "charlie-four"), (5, ["delta", 5])]):
            assert f(n) == want

    def test_two_loops(self):
        for n, expected in [(6, "echo-six")]:
            assert f(n) == expected
        for n, wanted in [(7, "foxtrot-seven")]:
            assert f(n) == wanted

    def test_same_name(self):
        for n, expected in [(18, "papa-eighteen")]:
            assert f(n) == expected
        for n, expected in [(19, "quebec-nineteen")]:
            assert f(n) == expected

    def test_after(self):
        for n, expected in [(8, "golf-eight")]:
            assert f(n) == expected
        print(expected)

    def test_break(self):
        for n, expected in [(9, "hotel-nine")]:
            assert f(n) == expected
            break

    def test_try(self):
        for n, expected in [(10, "india-ten")]:
            try:
                assert f(n) == expected
            except AssertionError:
                pass

    def test_subtest_reads(self):
        for n, expected in [(11, "juliet-eleven")]:
            with self.subTest(expected=expected):
                assert f(n) == expected

    def test_computed(self):
        for n, expected in [(12, "kilo-" + str(12))]:
            assert f(n) == expected

    def test_nested(self):
        for k in range(2):
            for n, expected in [(13, "lima-thirteen")]:
                assert f(n) == expected

    def test_else(self):
        for n, expected in [(14, "mike-fourteen")]:
            assert f(n) == expected
        else:
            pass

    def test_derived(self):
        for n, expected in [(15, "november"), (16, "kept-value")]:
            if n:
                assert f(n) == expected
            assert f(-n) == "-" + expected

    def test_other_with(self):
        for n, expected in [(17, "oscar-seventeen")]:
            with open(__file__):
                assert f(n) == expected

    def test_plain_beside(self):
        assert f(20) == "romeo-plain"
        for n, expected in [(21, "sierra-row")]:
            assert f(n) == expected

    def test_assigned(self):
        actual = f(22)
        expected = ["uniform", 22]
        self.assertEqual(actual, expected)

    def test_assigned_twice(self):
        expected = "whiskey-one"
        assert f(23) == expected
        expected = "xray-two"
        assert f(24) == expected

    def test_folded(self):
        for n, expected in [(25, "yankee-row"), (26, "z" + "0" * 3)]:
            assert f(n) == expected


@pytest.mark.parametrize("k", [1, 2])
def test_parametrized(k):
    assert f(27) == "zulu-plain"
    for n, expected in [(28, "alpha-again")]:
        assert f(n) == expected
'''
NAMES = ["sub", "enum", "two_loops", "same_name", "after", "break", "try", "subtest_reads", "computed", "nested",
         "else", "derived", "other_with", "plain_beside", "assigned", "assigned_twice",
         "folded"]
F2P = [f"{TEST}::LoopTests::test_{n}" for n in NAMES] + [f"{TEST}::test_parametrized[1]"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(HIDDEN)
    return tmp_path


def test_sealable_loop_rows(tree: Path) -> None:
    """The rows of a loop's column whose every use is one side of a check in the loop's body (under a ``subTest``
    or an ``if`` too), their values readable nowhere else, each a site keyed by the check's line and the row's
    index; two loops of a function each. Not sealed: two loops binding one name, a column read after the loop or
    in the ``subTest``'s arguments, a loop with ``break`` or ``else``, a check under ``try`` or another ``with``, a
    loop in a loop, a cell that is no literal, a row whose value another row holds (``kept-value``)."""
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    got = {s.key: (s.column, s.row, s.actual, s.expected, s.case, s.statement, s.derived) for s in sites}
    c = f"{TEST}::LoopTests::test_"
    assert got == {
        f"{c}sub@14#0": ("expected", 0, "f(n)", '"alpha-one"', True, 0, ""),
        f"{c}sub@14#1": ("expected", 1, "f(n)", '"bravo-two"', True, 0, ""),
        f"{c}enum@18#0": ("want", 0, "f(n)", '"charlie-four"', False, 0, ""),
        f"{c}enum@18#1": ("want", 1, "f(n)", '["delta", 5]', False, 0, ""),
        f"{c}two_loops@22#0": ("expected", 0, "f(n)", '"echo-six"', False, 0, ""),
        f"{c}two_loops@24#0": ("wanted", 0, "f(n)", '"foxtrot-seven"', False, 0, ""),
        f"{c}derived@72#0": ("expected", 0, "f(n)", '"november"', False, 0, ""),
        f"{c}derived@73#0": ("expected", 0, "f(-n)", '"november"', False, 1, '"-" + expected'),
        f"{c}plain_beside@81": (None, None, "f(20)", '"romeo-plain"', False, 0, ""),  # kept beside a loop's rows
        f"{c}plain_beside@83#0": ("expected", 0, "f(n)", '"sierra-row"', False, 0, ""),
        f"{c}assigned@88#0": ("expected", 0, "actual", '["uniform", 22]', True, 0, ""),  # a name assigned once
        f"{c}folded@98#0": ("expected", 0, "f(n)", '"yankee-row"', False, 0, ""),  # beside a folded cell, kept
        # a parametrized function whose decorator's column is no table: its items keep their ids, so its loop's
        # rows are sealed beside its plain site (loop38: each judged per id, each item reporting each row once)
        f"{TEST}::test_parametrized@103": (None, None, "f(27)", '"zulu-plain"', False, 0, ""),
        f"{TEST}::test_parametrized@105#0": ("expected", 0, "f(n)", '"alpha-again"', False, 0, ""),
    }


def test_the_sealed_file_holds_no_row_value(tree: Path) -> None:
    """Each sealed row's cell is its site id and each check a row call at its line (indented as it was, under the
    ``subTest`` and the ``if``); no line moves; no sealed value is in the file; two loops' rows 0 have two ids."""
    sites = sealable_sites(tree, [TEST], F2P, {TEST: None})
    files, ids = sealed_files(tree, sites, [TEST])
    text = files[TEST].decode()
    ast.parse(text)
    for s in sites:
        assert repr(s.value())[1:-1] not in text, s
    old, new = HIDDEN.splitlines(), text.splitlines()
    assert len(new) == len(old) + 1
    assert new[13] == f"                {SEAL_ROW_CALL}(expected, (f(n)), self, False)"
    assert new[71] == f"                {SEAL_ROW_CALL}(expected, (f(n)), None, False)"
    assert new[72] == f'            {SEAL_ROW_CALL}(expected, (f(-n)), None, False, 1, lambda: ("-" + expected))'
    assert new[10] == old[10]  # a row left as it is
    assert len({sid for sid, s in ids.items() if s.function.endswith("two_loops")}) == 2


@pytest.mark.slow
def test_a_real_sealed_loop_run(tmp_path: Path) -> None:
    """A real test process of a sealed file: the unittest method's sealed rows (under ``subTest``) report once
    each, from the method's own id; a row left as it is is compared in the process; the reference check passes the
    rows only when the method passed and each was reported exactly once, equal; a plain site beside the loop is
    judged as its rows are, per id (loop38: the channel takes a loop's rows from the ids it names, as a plain
    site's, ``seal_tests``)."""
    (tmp_path / "tests").mkdir()
    pkg = "def f(n):\n    return {{1: 'alpha-one', 2: {two!r}, 7: 'tango-plain'}}.get(n, {other!r})\n"
    (tmp_path / "pkg.py").write_text(pkg.format(two="bravo-two", other="kept-value"))
    (tmp_path / TEST).write_text(HIDDEN.split("    def test_enum")[0].rstrip("\n")
                                 + "\n        assert f(7) == 'tango-plain'\n# kept-value: readable here\n")
    fid = f"{TEST}::LoopTests::test_sub"
    sites = sealable_sites(tmp_path, [TEST], [fid], {TEST: None})
    assert [s.key for s in sites] == [f"{fid}@14#0", f"{fid}@14#1", f"{fid}@15"]
    files, ids = sealed_files(tmp_path, sites, [TEST])
    (tmp_path / TEST).write_bytes(files[TEST])
    cmd = f"{sys.executable} -m pytest -p no:randomly -p no:cacheprovider"
    run = run_tests(tmp_path, cmd, [fid], out_dir=tmp_path / "out", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}, {fid: list(ids)}))
    by_row = {s.row: sid for sid, s in ids.items()}
    assert run.outcomes == {fid: "passed"}, run.error
    assert run.seal_reports == {fid: {by_row[0]: ["equal"], by_row[1]: ["equal"], by_row[None]: ["equal"]}}
    assert passing_sites(ids, [fid], run.outcomes, run.seal_reports) == [f"{fid}@14#0", f"{fid}@14#1", f"{fid}@15"]
    # a wrong value: a sealed row reports it unequal (the method passes in pytest), a row left as it is fails
    (tmp_path / "pkg.py").write_text(pkg.format(two="wrong", other="kept-value"))
    run = run_tests(tmp_path, cmd, [fid], out_dir=tmp_path / "out2", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}, {fid: list(ids)}))
    assert run.seal_reports.get(fid, {}).get(by_row[1]) == ["unequal"], run.seal_reports
    assert passing_sites(ids, [fid], run.outcomes, run.seal_reports) == [f"{fid}@14#0", f"{fid}@15"]
    (tmp_path / "pkg.py").write_text(pkg.format(two="bravo-two", other="wrong"))
    run = run_tests(tmp_path, cmd, [fid], out_dir=tmp_path / "out3", timeout_s=120,
                    seals=SealScope({sid: s.value() for sid, s in ids.items()}, {fid: list(ids)}))
    assert run.outcomes == {fid: "failed"}, run.outcomes


def test_a_loop_row_is_judged_per_id(tree: Path, tmp_path: Path) -> None:
    """loop38: a loop's row of a function run once per item (its decorator's column no table: its items keep their
    ids) is judged per id, as its plain site: each FAIL_TO_PASS id passes only when it reported the row exactly once,
    equal (the reference check keeps it only then); the row reported twice by one id and not by the other (once per
    id on average, as judging in all counted) fails both; unequal in one id names the row for that id. Nothing of the
    function is judged by function (``SealPlan.columns``)."""
    from pytest_homefield.run.sealed_grading import SealPlan, judge_sealed
    from pytest_homefield.sandbox.testrun import TestRun

    fid = f"{TEST}::test_parametrized"
    f2p = [f"{fid}[1]", f"{fid}[2]"]
    sites = [s for s in sealable_sites(tree, [TEST], f2p, {TEST: None}) if s.function == fid]
    assert sorted(s.key for s in sites) == [f"{fid}@103", f"{fid}@105#0"] and not any(s.decorated for s in sites)
    files, ids = sealed_files(tree, sites, [TEST])
    plan = SealPlan(files, ids)
    assert plan.columns == {}
    row = next(i for i, s in ids.items() if s.column is not None)
    plain = next(i for i, s in ids.items() if s.column is None)

    def judged(reports: dict[str, dict[str, list[str]]]) -> tuple[dict[str, str], dict[str, str], list[str]]:
        outcomes = {i: "passed" for i in f2p}
        made = TestRun(outcomes, 0, False, False, 2, 0.1, tmp_path / "log", finished=True, seal_reports=reports)
        c = judge_sealed(plan, f2p, made)
        assert c.columns == frozenset()
        return c.outcomes, c.unequal, passing_sites(ids, f2p, outcomes, reports)

    each = {i: {row: ["equal"], plain: ["equal"]} for i in f2p}
    assert judged(each) == ({i: "passed" for i in f2p}, {}, [f"{fid}@103", f"{fid}@105#0"])
    skewed = {f2p[0]: {row: ["equal", "equal"], plain: ["equal"]}, f2p[1]: {plain: ["equal"]}}
    assert judged(skewed) == ({i: "failed" for i in f2p}, {}, [f"{fid}@103"])
    wrong = {**each, f2p[1]: {row: ["unequal"], plain: ["equal"]}}
    assert judged(wrong) == ({f2p[0]: "passed", f2p[1]: "failed"}, {f2p[1]: f"{fid}@105#0"}, [f"{fid}@103"])
