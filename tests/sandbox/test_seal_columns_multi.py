"""multi35: a parametrize column used by several statements (contracts §7 "Sealed columns"): each use the side
``L`` of a top-level statement of a site's form, the bare name or an expression of it the host computes
(:func:`~pytest_homefield.sandbox.seal_sites.derived_value`); one site per row and statement, sealed only all
together (:func:`~pytest_homefield.sandbox.seal_sites.sealed_files`), in a real test process too."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_homefield.sandbox.outcomes import SealScope
from pytest_homefield.sandbox.seal_sites import derived_value, passing_sites, sealable_sites, sealed_files
from pytest_homefield.sandbox.testrun import run_tests

TEST = "tests/test_m.py"
HIDDEN = '''import pytest

from pkg import f, g


@pytest.mark.parametrize("n, expected", [(1, "alpha-one"), (2, "bravo-two"), (3, "kept")])
def test_neg(n, expected):
    assert f(n) == expected
    m = -n
    assert g(m) == "-" + expected


@pytest.mark.parametrize("n, expected", [(4, "charlie-four")])
def test_two(n, expected):
    assert f(n) == expected
    assert expected == g(n)


@pytest.mark.parametrize("n, expected", [(5, "delta-five"), (6, "echo-six")])
def test_told(n, expected):
    assert f(n) == expected
    assert g(n) == expected + "!"


def test_told_elsewhere():
    assert g(0) == "echo-six!"


@pytest.mark.parametrize("n, expected", [(7, "foxtrot-seven")])
def test_len(n, expected):
    size = len(expected)
    assert f(n) == expected
    assert size > 0


@pytest.mark.parametrize("n, expected", [(8, "golf-eight")])
def test_neg_str(n, expected):
    assert f(n) == expected
    assert g(n) == -expected


@pytest.mark.parametrize("n, expected", [(9, "hotel-nine")])
def test_in_a(n, expected):
    assert f(n) == expected
    assert g(expected) == "x"
'''
NAMES = ["neg", "two", "told", "told_elsewhere", "len", "neg_str", "in_a"]
F2P = [f"{TEST}::test_{n}" for n in NAMES]


def test_columns_used_by_several_statements(tmp_path: Path) -> None:
    """Each row readable nowhere else is a site per statement (``statement``, ``statements``, ``derived``: the
    side's text when it is an expression of the column); the row whose computed value is in the file
    (``"echo-six!"``), a column used in a non-site statement (``len``), an expression failing on the row's value
    (``-`` of a string) or a column inside ``A`` are not sealed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / TEST).write_text(HIDDEN)
    sites = sealable_sites(tmp_path, [TEST], F2P, {TEST: None})
    got = {s.key: (s.row, s.statement, s.statements, s.derived, s.flipped, s.expectation()) for s in sites}
    fid = f"{TEST}::test_"
    assert got == {
        f"{fid}neg@8#0": (0, 0, 2, "", False, "alpha-one"),
        f"{fid}neg@10#0": (0, 1, 2, '"-" + expected', False, "-alpha-one"),
        f"{fid}neg@8#1": (1, 0, 2, "", False, "bravo-two"),
        f"{fid}neg@10#1": (1, 1, 2, '"-" + expected', False, "-bravo-two"),
        f"{fid}neg@8#2": (2, 0, 2, "", False, "kept"),
        f"{fid}neg@10#2": (2, 1, 2, '"-" + expected', False, "-kept"),
        f"{fid}two@15#0": (0, 0, 2, "", False, "charlie-four"),
        f"{fid}two@16#0": (0, 1, 2, "", True, "charlie-four"),
        f"{fid}told@21#0": (0, 0, 2, "", False, "delta-five"),
        f"{fid}told@22#0": (0, 1, 2, 'expected + "!"', False, "delta-five!"),
        f"{fid}told_elsewhere@26": (None, 0, 1, "", False, "echo-six!"),
    }


@pytest.mark.parametrize(("text", "value", "want"), [
    ("x", "a", "a"), ('"-" + x', "a", "-a"), ('x + "!" ', "a", "a!"), ("-x", 3, -3), ("1 - x", 3, -2),
    ("-(x + 1.5)", 1, -2.5), ("x + (1, 2)", (0,), (0, 1, 2)),
])
def test_derived_value(text: str, value: object, want: object) -> None:
    assert derived_value(ast.parse(text, mode="eval").body, "x", value) == want


@pytest.mark.parametrize(("text", "value"), [
    ("-x", "a"), ('x + "a"', 1), ("x + True", 1), ("x * 2", "a"), ("x + x", "a"), ("len(x)", "a"), ("y", 1),
    ("x[0]", "ab"), ("-" * 6 + "x", 1), ("x + 1", True),
])
def test_derived_value_refuses(text: str, value: object) -> None:
    """Another form, two uses, an operand of another type, a bool, a call, too deep: no value (``ValueError``)."""
    with pytest.raises(ValueError):
        derived_value(ast.parse(text, mode="eval").body, "x", value)


def test_the_row_call_reports_each_statement_and_makes_an_unsealed_row_as_written(seal_module: ModuleType) -> None:
    """A sealed cell: statement ``k`` after the first reports the id with ``:k``, its ``written`` side never
    called (it would compute on the id); an unsealed row: ``written()`` is the side compared."""
    row = seal_module.__hf_seal_row__
    sid = "hf" + "1" * 24

    def never() -> str:
        raise RuntimeError("called")

    row(sid, "-x", None, False, 1, never)
    row(sid, "x")
    assert seal_module.take() == [[f"{sid}:1", "'-x'"], [sid, "'x'"]]
    row("kept", "-kept", None, False, 1, lambda: "-" + "kept")
    with pytest.raises(AssertionError):
        row("kept", "kept", None, False, 1, lambda: "-" + "kept")
    assert seal_module.take() == []


def test_a_real_run_of_a_column_used_twice(tmp_path: Path) -> None:
    """A real test process: a fix passes every row (each statement reported once, equal); a fix right at one
    statement only is not passed there; a row whose sites are not all given stays as it is (its cell in the file,
    both statements made as written)."""
    (tmp_path / "tests").mkdir()
    fix = "def f(n):\n    return NAMES.get(n, 'kept')\n\n\ndef g(m):\n    return '-' + f(-m)\n\n\n" \
          "NAMES = {1: 'alpha-one', 2: 'bravo-two'}\n"
    (tmp_path / "pkg.py").write_text(fix)
    text = ('import pytest\n\nfrom pkg import f, g\n\n\n'
            '@pytest.mark.parametrize("n, expected", [(1, "alpha-one"), (2, "bravo-two"), (3, "kept")])\n'
            'def test_c(n, expected):\n    assert f(n) == expected\n    m = -n\n'
            '    assert g(m) == "-" + expected\n')
    (tmp_path / TEST).write_text(text)
    fid = f"{TEST}::test_c"
    sites = sealable_sites(tmp_path, [TEST], [f"{fid}[1-alpha-one]"], {TEST: None})
    assert [s.key for s in sites] == [f"{fid}@8#0", f"{fid}@10#0", f"{fid}@8#1", f"{fid}@10#1",
                                      f"{fid}@8#2", f"{fid}@10#2"]
    # row 2 given with its first statement only: not sealed (its second statement would check nothing)
    given = [s for s in sites if s.key != f"{fid}@10#2"]
    files, ids = sealed_files(tmp_path, given, [TEST])
    assert sorted(s.key for s in ids.values()) == sorted(k for k in (s.key for s in given) if not k.endswith("#2"))
    sealed = files[TEST].decode()
    assert "alpha-one" not in sealed and "bravo-two" not in sealed and '"kept"' in sealed
    assert sealed.count("\n") == text.count("\n") + 1
    (tmp_path / TEST).write_bytes(files[TEST])
    seals = {sid: s.expectation() for sid, s in ids.items()}
    f2p = [f"{fid}[1-alpha-one]", f"{fid}[2-bravo-two]"]

    def run(name: str) -> tuple[dict[str, str], dict[str, dict[str, list[str]]]]:
        r = run_tests(tmp_path, f"{sys.executable} -m pytest -p no:randomly -p no:cacheprovider", [fid],
                      out_dir=tmp_path / name, timeout_s=120, seals=SealScope(seals, {}, {fid: list(ids)}))
        return r.outcomes, {k: {s: list(v) for s, v in d.items()} for k, d in r.seal_reports.items()}

    outcomes, reports = run("fixed")
    assert len(outcomes) == 3 and set(outcomes.values()) == {"passed"}, outcomes
    assert sorted(v for d in reports.values() for v in d.values()) == [["equal"]] * 4
    assert passing_sites(ids, f2p, outcomes, reports) == sorted(s.key for s in given if s.row != 2)
    # a fix right for f only: the second statement's sites are reported unequal, not passed
    (tmp_path / "pkg.py").write_text(fix.replace("return '-' + f(-m)", "return f(-m)"))
    outcomes, reports = run("half")
    assert passing_sites(ids, f2p, outcomes, reports) == []
    assert sorted(v for d in reports.values() for v in d.values()) == [["equal"]] * 2 + [["unequal"]] * 2
    # the unsealed row is made as written in the process: wrong there, its item fails
    assert outcomes[f"{fid}[3-kept]"] == "failed"
