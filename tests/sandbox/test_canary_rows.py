"""Twins of ``parametrize`` tables whose rows hold computed cells (canary_rows, rows31: python-humanize/humanize).

humanize's tables hold rows such as ``([1024**2 - 1, True], "1.0 MiB")`` and ``([math.inf], "+Inf")``: on main
every row went through ``ast.literal_eval``, so such a function got the sentinel (unprotected) and always-equal,
read-expected and twin-name-oracle were solved on 12 of its 17 tasks. Pure planning, no test process.
"""

from __future__ import annotations

import ast
import math
import time
from pathlib import Path

import pytest
from helpers.attack_repo import _write

from pytest_homefield.sandbox.canary_rows import NOT_ROWS, _cell, _Opaque, row_ids
from pytest_homefield.sandbox.twin_runs import plan_twins

TEST = "tests/test_size.py"
HEAD = "import math\n\nimport pytest\n\nfrom m import size\n\n\n"
OLD_ROWS = ('        ([300, True], "300 Bytes"),\n'
            '        ([1024**1 * 31, True], "31.0 KiB"),\n'
            '        ([1.123456789 * 10**3, False, True], "1.1K"),\n')
NEW_ROWS = ('        ([999999], "1.0 MB"),\n'
            '        ([1024**2 - 1, True], "1.0 MiB"),\n'
            '        ([1024**2 - 1, False, True], "1.0M"),\n')


def _table(rows: str, tail: str = "") -> str:
    return (HEAD + '@pytest.mark.parametrize(\n    "test_args, expected",\n    [\n' + rows + f"    ],{tail}\n)\n"
            "def test_size(test_args, expected):\n    assert size(*test_args) == expected\n")


def _twin_rows(plan_runs: list[dict[str, bytes]], run: int) -> list[ast.expr]:
    tree = ast.parse(plan_runs[run][TEST])
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    table = fn.decorator_list[0].args[1]  # type: ignore[attr-defined]
    return list(table.elts)


def test_a_humanize_table_gets_a_twin_changing_only_the_new_rows_expected(tmp_path: Path) -> None:
    """The three rows the commit adds (FAIL_TO_PASS) have their expected strings deranged among them; every
    other cell, computed ones included, stays as its source text (on main: a sentinel, unprotected)."""
    _write(tmp_path, {TEST: _table(OLD_ROWS + NEW_ROWS), "m.py": "def size(*a):\n    return ''\n"})
    fid = f"{TEST}::test_size"
    f2p = [f"{fid}[test_args3-1.0 MB]", f"{fid}[test_args4-1.0 MiB]", f"{fid}[test_args5-1.0M]"]
    p2p = [f"{fid}[test_args0-300 Bytes]", f"{fid}[test_args1-31.0 KiB]", f"{fid}[test_args2-1.1K]"]
    original = [ast.unparse(r) for r in _twin_rows([{TEST: _table(OLD_ROWS).encode()}], 0)]
    for seed in range(6):
        plan = plan_twins(tmp_path, f2p, seed=seed, parent={TEST: _table(OLD_ROWS).encode()}, pass_to_pass=p2p)
        assert [c.kind for c in plan.canaries] == ["contradiction"] and not plan.unprotected, plan.canaries
        rows = _twin_rows(plan.runs, plan.placement[fid].index(1))
        assert [ast.unparse(r) for r in rows[:3]] == original
        assert [ast.unparse(r.elts[0]) for r in rows[3:]] == \
            ["[999999]", "[1024 ** 2 - 1, True]", "[1024 ** 2 - 1, False, True]"]  # type: ignore[attr-defined]
        expected = [ast.literal_eval(r.elts[1]) for r in rows[3:]]  # type: ignore[attr-defined]
        assert sorted(expected) == sorted(["1.0 MB", "1.0 MiB", "1.0M"]) and expected[0] != "1.0 MB", expected


def test_math_constants_and_ids_str_are_told(tmp_path: Path) -> None:
    """humanize's test_metric: ``ids=str`` and ``[math.inf]`` rows; the task's ids are pytest's for the real values."""
    rows = ('        ([math.inf], "+Inf"),\n        ([-math.inf], "-Inf"),\n        ([1e3 * 2, "V"], "2.00 kV"),\n'
            '        ([999.9, "V"], "1.00 kV"),\n        ([0.0009999, "V"], "1.00 mV"),\n')
    _write(tmp_path, {TEST: _table(rows, tail="\n    ids=str,"), "m.py": "def size(*a):\n    return ''\n"})
    real = row_ids(["test_args", "expected"], [([math.inf], "+Inf"), ([-math.inf], "-Inf"), ([2000.0, "V"], "2.00 kV"),
                                               ([999.9, "V"], "1.00 kV"), ([0.0009999, "V"], "1.00 mV")], idfn=str)
    assert real is not None and real[0] == "[inf]-+Inf"
    fid = f"{TEST}::test_size"
    ids = [f"{fid}[{i}]" for i in real]
    plan = plan_twins(tmp_path, ids[3:], seed=0, parent={TEST: None}, pass_to_pass=ids[:3])
    assert [c.kind for c in plan.canaries] == ["contradiction"] and not plan.unprotected, plan.canaries
    twin = _twin_rows(plan.runs, plan.placement[fid].index(1))
    assert [ast.unparse(r.elts[1]) for r in twin] == \
        ["'+Inf'", "'-Inf'", "'2.00 kV'", "'1.00 mV'", "'1.00 kV'"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("cell", ["[1, 2]", "6", "'x'"])
def test_an_opaque_cell_is_read_from_the_task_id_it_leaves(tmp_path: Path, cell: str) -> None:
    """``CELL`` is a name (no literal, no constant expression): the planner guesses pytest's ``argnameN``.
    Bound to a list, pytest's ids are that guess. Bound to a number or a text, pytest ids it by its value: the ids
    made were not the task's and the function got the sentinel; reach46 reads the one row's one opaque cell from the
    one task id the other rows leave (``canary_rows._resolved``): a twin of the FAIL_TO_PASS rows in each case."""
    text = (f"import pytest\n\nfrom m import f\n\nCELL = {cell}\n\n\n"
            "@pytest.mark.parametrize('a, want', [(CELL, 'p'), ([3], 'q'), ([4], 'r'), ([5], 's')])\n"
            "def test_f(a, want):\n    assert f(a) == want\n")
    _write(tmp_path, {TEST: text, "m.py": "def f(a):\n    return a\n"})
    real = row_ids(["a", "want"], [(ast.literal_eval(cell), "p"), ([3], "q"), ([4], "r"), ([5], "s")])
    assert real is not None
    fid = f"{TEST}::test_f"
    ids = [f"{fid}[{i}]" for i in real]
    plan = plan_twins(tmp_path, ids[2:], seed=0, parent={TEST: None}, pass_to_pass=ids[:2])
    assert [c.kind for c in plan.canaries] == ["contradiction"] and not plan.unprotected
    rows = _twin_rows(plan.runs, plan.placement[fid].index(1))
    assert [ast.unparse(r) for r in rows] == ["(CELL, 'p')", "([3], 'q')", "([4], 's')", "([5], 'r')"]
    wrong = plan_twins(tmp_path, ids[2:], seed=0, parent={TEST: None}, pass_to_pass=[f"{fid}[{real[0]}x]", ids[1]])
    assert [(c.kind, c.how) for c in wrong.canaries] == [("sentinel", NOT_ROWS)] and wrong.unprotected == [fid]


@pytest.mark.parametrize(("text", "value"), [
    ("1024**2 - 1", 1024**2 - 1), ("1.123456789 * 10**3", 1.123456789 * 10**3), ("-7 // 2 % 3", -7 // 2 % 3),
    ("[10**26 * 30, True, 'x']", [10**26 * 30, True, "x"]), ("(2 ** -1, -math.inf)", (0.5, -math.inf)),
    ("10**100000", None), ("9**9**9", None), ("2**4095 * 4", None), ("1 / 0", None), ("'a' * 3", None),
    ("1 << 3", None), ("x + 1", None), ("math.floor", None), ("float('inf')", None)])
def test_the_folder_is_small_and_bounded(text: str, value: object) -> None:
    """Numbers with + - * / // % ** and unary minus, within 4096 bits, as Python computes them; anything
    else (past the bounds too, at once) is opaque."""
    start = time.process_time()
    got, literal = _cell(ast.parse(text, mode="eval").body)
    assert time.process_time() - start < 1 and not literal
    if value is None:
        assert isinstance(got, _Opaque)
    else:
        assert got == value and type(got) is type(value)


def test_one_new_row_expecting_an_empty_text_takes_another_rows_value(tmp_path: Path) -> None:
    """humanize's ``([[]], "")`` (0a06a3d4a121): no value is made up for ``""`` and one row has none to be
    deranged with; the twin takes another row's expected value (a real output of another input), the other rows
    as they are (on main: a sentinel, and always-equal was solved)."""
    text = ("import pytest\n\nfrom m import natural_list\n\n\n"
            "@pytest.mark.parametrize('test_args, expected', [([['one', 'two']], 'one and two'), ([['one']], 'one'),\n"
            "                                                ([[]], ''), ([['']], '')])\n"
            "def test_natural_list(test_args, expected):\n    assert natural_list(*test_args) == expected\n")
    _write(tmp_path, {TEST: text, "m.py": "def natural_list(items):\n    return items[0]\n"})
    fid = f"{TEST}::test_natural_list"
    p2p = [f"{fid}[test_args0-one and two]", f"{fid}[test_args1-one]", f"{fid}[test_args3-]"]
    taken = set()
    for seed in range(6):
        plan = plan_twins(tmp_path, [f"{fid}[test_args2-]"], seed=seed, parent={TEST: None}, pass_to_pass=p2p)
        assert [c.kind for c in plan.canaries] == ["contradiction"] and not plan.unprotected, plan.canaries
        rows = [ast.unparse(r) for r in _twin_rows(plan.runs, plan.placement[fid].index(1))]
        assert rows[:2] == ["([['one', 'two']], 'one and two')", "([['one']], 'one')"] and rows[3] == "([['']], '')"
        assert rows[2] in ("([[]], 'one and two')", "([[]], 'one')"), rows
        taken.add(rows[2])
    assert len(taken) == 2  # both other values are drawn


#: rows32: a table whose *expected* column holds computed cells on the rows the commit adds
SIZES = ("import pytest\n\nfrom m import parse\n\n\n"
         "@pytest.mark.parametrize('text, expected', [('1', 1), ('1K', 1024), ('1M', 1024**2), ('1G', 1024**3),\n"
         "                                            ('2M', 2 * 1024**2)])\n"
         "def test_parse(text, expected):\n    assert parse(text) == expected\n")
#: the reference fix; the parent knew K only
PARSE = ("def parse(text):\n    units = {'K': 1, 'M': 2, 'G': 3}\n"
         "    return int(text[:-1]) * 1024 ** units[text[-1]] if text[-1] in units else int(text)\n")


def test_computed_expected_cells_are_deranged_as_source_text(tmp_path: Path) -> None:
    """The FAIL_TO_PASS rows' computed expected cells move among them as their source text (every run's file
    holds the same cells), the PASS_TO_PASS rows as they are; the reference fix passes the original and fails
    every changed row of the twin (run by pytest). On main: a sentinel, the function unprotected."""
    import os
    import subprocess
    import sys
    _write(tmp_path, {TEST: SIZES, "m.py": PARSE})
    fid = f"{TEST}::test_parse"
    p2p = [f"{fid}[1-1]", f"{fid}[1K-1024]"]
    f2p = [f"{fid}[1M-1048576]", f"{fid}[1G-1073741824]", f"{fid}[2M-2097152]"]
    cells = sorted(["1024 ** 2", "1024 ** 3", "2 * 1024 ** 2"])
    for seed in range(4):
        plan = plan_twins(tmp_path, f2p, seed=seed, parent={TEST: None}, pass_to_pass=p2p)
        assert [c.kind for c in plan.canaries] == ["contradiction"] and not plan.unprotected, plan.canaries
        rows = _twin_rows(plan.runs, plan.placement[fid].index(1))
        assert [ast.unparse(r) for r in rows[:2]] == ["('1', 1)", "('1K', 1024)"]
        moved = [ast.unparse(r.elts[1]) for r in rows[2:]]  # type: ignore[attr-defined]
        assert sorted(moved) == cells and all(m != c for m, c in zip(moved, ["1024 ** 2", "1024 ** 3",
                                                                          "2 * 1024 ** 2"], strict=True)), moved
    for member, want in ((0, {"passed": 5}), (1, {"passed": 2, "failed": 3})):
        (tmp_path / TEST).write_bytes(plan.runs[plan.placement[fid].index(member)][TEST])
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONPATH": str(tmp_path)}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", TEST],
                              cwd=tmp_path, env=env, capture_output=True, text=True)
        got = {o: done.stdout.count(f"{o.upper()} {TEST}") for o in ("passed", "failed")}
        assert {o: n for o, n in got.items() if n} == want, done.stdout


def test_a_computed_expected_cell_with_nothing_to_derange_or_explicit_ids_keeps_the_sentinel(tmp_path: Path
                                                                                             ) -> None:
    """One computed FAIL_TO_PASS cell (no derangement: a made-up literal among ``1024 ** k`` would tell the twin),
    or ``ids=`` given (the ids no longer checked the fold): the sentinel, as before."""
    _write(tmp_path, {TEST: SIZES, "m.py": PARSE})
    fid = f"{TEST}::test_parse"
    ids = [f"{fid}[{i}]" for i in ("1-1", "1K-1024", "1M-1048576", "1G-1073741824", "2M-2097152")]
    plan = plan_twins(tmp_path, ids[2:3], seed=0, parent={TEST: None}, pass_to_pass=[*ids[:2], *ids[3:]])
    assert [c.how for c in plan.canaries] == [NOT_ROWS] and plan.unprotected == [fid]
    _write(tmp_path, {TEST: SIZES.replace("2 * 1024**2)])", "2 * 1024**2)], ids=['a', 'b', 'c', 'd', 'e'])")})
    named = [f"{fid}[{i}]" for i in "abcde"]
    plan = plan_twins(tmp_path, named[2:], seed=0, parent={TEST: None}, pass_to_pass=named[:2])
    assert [c.how for c in plan.canaries] == [NOT_ROWS] and plan.unprotected == [fid]
